//! The PortCounters fields as one descriptor table (IBA 16.1.3.5): name,
//! width and accessors, in CounterSelect bit order (bit 0 SymbolErrorCounter
//! ... bit 15 PortRcvPkts; PortXmitWait is CounterSelect2-era and last).
//! Everything that walks PortCounters field by field (saturating sums for
//! PortSelect 255, the simulator's readings, IB-PM-MIB's columns, the 64-bit
//! totals of the model, through [`with_port_counters`]) reads it here instead of repeating the
//! list.

use super::pma::PortCounters;

/// One PortCounters counter.
#[derive(Clone, Copy)]
pub struct PcField {
    /// The IBA name, e.g. "SymbolErrorCounter".
    pub name: &'static str,
    /// Width in bits (the counter stops at all ones).
    pub bits: u8,
    pub get: fn(&PortCounters) -> u64,
    /// Stores `v` (already within `bits`).
    pub set: fn(&mut PortCounters, u64),
    /// Data and packet counters: PortCountersExtended has them at 64 bits,
    /// which the totals prefer where the PMA answers it.
    pub extended: bool,
}

impl PcField {
    /// The largest value the counter holds.
    pub const fn max(&self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }
}

impl std::fmt::Debug for PcField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({} bits)", self.name, self.bits)
    }
}

macro_rules! fields {
    ($($name:literal $f:ident : $t:ty = $bits:literal $(, $ext:ident)?);* $(;)?) => {
        /// Every counter, in CounterSelect bit order (index = bit), then
        /// PortXmitWait (index 16).
        pub const PORT_COUNTERS: [PcField; 17] = [$(PcField {
            name: $name,
            bits: $bits,
            get: |c| u64::from(c.$f),
            // Callers clamp to `bits`; the cast keeps the low bits.
            set: |c, v| c.$f = v as $t,
            extended: fields!(@ext $($ext)?),
        }),*];
    };
    (@ext extended) => { true };
    (@ext) => { false };
}

/// Calls macro `$m` with the counter list (`"IBAName" field: type = bits[,
/// extended]; ...`), so tables over other structs with the same field
/// names (the model's 64-bit totals) follow the one list.
macro_rules! with_port_counters {
    ($m:ident) => {
        $m! {
        "SymbolErrorCounter" symbol_error_counter: u16 = 16;
        "LinkErrorRecoveryCounter" link_error_recovery_counter: u8 = 8;
        "LinkDownedCounter" link_downed_counter: u8 = 8;
        "PortRcvErrors" port_rcv_errors: u16 = 16;
        "PortRcvRemotePhysicalErrors" port_rcv_remote_physical_errors: u16 = 16;
        "PortRcvSwitchRelayErrors" port_rcv_switch_relay_errors: u16 = 16;
        "PortXmitDiscards" port_xmit_discards: u16 = 16;
        "PortXmitConstraintErrors" port_xmit_constraint_errors: u8 = 8;
        "PortRcvConstraintErrors" port_rcv_constraint_errors: u8 = 8;
        "LocalLinkIntegrityErrors" local_link_integrity_errors: u8 = 4;
        "ExcessiveBufferOverrunErrors" excessive_buffer_overrun_errors: u8 = 4;
        "VL15Dropped" vl15_dropped: u16 = 16;
        "PortXmitData" port_xmit_data: u32 = 32, extended;
        "PortRcvData" port_rcv_data: u32 = 32, extended;
        "PortXmitPkts" port_xmit_pkts: u32 = 32, extended;
        "PortRcvPkts" port_rcv_pkts: u32 = 32, extended;
        "PortXmitWait" port_xmit_wait: u32 = 32;
        }
    };
}
pub(crate) use with_port_counters;

with_port_counters!(fields);

/// Field-wise sum at IBA's widths, each counter stopping at all ones (what
/// a PMA reports for PortSelect 255); QP1Dropped too; other fields from `a`.
pub fn add_saturating(a: &PortCounters, b: &PortCounters) -> PortCounters {
    let mut out = a.clone();
    for f in &PORT_COUNTERS {
        (f.set)(&mut out, (f.get)(a).saturating_add((f.get)(b)).min(f.max()));
    }
    out.qp1_dropped = a.qp1_dropped.saturating_add(b.qp1_dropped);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_order_follow_the_attribute() {
        let mut c = PortCounters::default();
        for (i, f) in PORT_COUNTERS.iter().enumerate() {
            (f.set)(&mut c, f.max());
            assert_eq!((f.get)(&c), f.max(), "{}", f.name);
            (f.set)(&mut c, i as u64);
        }
        assert_eq!(c.symbol_error_counter, 0);
        assert_eq!(c.vl15_dropped, 11);
        assert_eq!(c.port_xmit_wait, 16);
        // The encoded attribute round-trips every field's maximum.
        let mut m = PortCounters::default();
        for f in &PORT_COUNTERS {
            (f.set)(&mut m, f.max());
        }
        let mut buf = [0u8; 44];
        m.encode(&mut buf).unwrap();
        assert_eq!(PortCounters::decode(&buf).unwrap(), m);
    }

    #[test]
    fn sums_saturate() {
        let a = PortCounters {
            symbol_error_counter: 0xFFF0,
            local_link_integrity_errors: 0xE,
            port_xmit_data: 5,
            ..PortCounters::default()
        };
        let s = add_saturating(&a, &a);
        assert_eq!(s.symbol_error_counter, 0xFFFF);
        assert_eq!(s.local_link_integrity_errors, 0xF);
        assert_eq!(s.port_xmit_data, 10);
    }
}
