//! Per-port 64-bit monotonic totals built from successive PMA readings.
//!
//! IBA counters are narrow and saturate (4, 8, 16, 32 bits), or are 64 bits and
//! wrap; other managers may reset them at any time. SNMP counters must never go
//! backwards except at a discontinuity. So each sweep adds to a 64-bit total the
//! increase since the previous reading:
//! - 64-bit counters: the difference modulo 2^64 (a wrap), unless the reading
//!   went down by more than a wrap could explain: then someone reset it;
//! - narrower (saturating) counters: the difference when the reading grew; when it
//!   went down someone reset it, and the new reading is all that is known to have
//!   happened since (a saturated counter that stays saturated adds nothing).
//!
//! A reset by someone else is not a discontinuity: totals carry on. The
//! discontinuity time moves only when the totals restart: the first sighting of
//! a port, or its return after being absent from the previous sweep (which also
//! covers a node replaced by one with another GUID).

use super::counters::{self, IfCounters, PortReadings};
use crate::mad::port_counters::{PcField, PORT_COUNTERS};
use crate::types::{Guid, PortNum};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

/// The counter state of every port seen in the previous sweep, keyed by (node
/// GUID, port number), in that sweep's port order. A source keeps one and
/// passes it to each [`super::SnapshotBuilder::build`]; the states are shared
/// with the snapshots. When a sweep lists the same ports in the same order
/// (the usual case) states are matched by position, without hashing.
#[derive(Debug, Default)]
pub struct CounterHistory {
    pub(crate) keys: Vec<(Guid, PortNum)>,
    pub(crate) states: Vec<Option<Arc<PortCounterState>>>,
}

impl CounterHistory {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn get(&self, node: Guid, port: PortNum) -> Option<&Arc<PortCounterState>> {
        let i = self.keys.iter().position(|k| *k == (node, port))?;
        self.states.get(i)?.as_ref()
    }
    /// Ports with a counter state.
    pub fn len(&self) -> usize {
        self.states.iter().filter(|s| s.is_some()).count()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The previous states aligned with `keys` (None where a port is new or
    /// was absent), taking them out of the history.
    pub(crate) fn take_aligned(
        &mut self,
        keys: &[(Guid, PortNum)],
    ) -> Vec<Option<Arc<PortCounterState>>> {
        let states = std::mem::take(&mut self.states);
        if self.keys.as_slice() == keys {
            return states;
        }
        let mut by_key: HashMap<(Guid, PortNum), Arc<PortCounterState>> = self
            .keys
            .iter()
            .copied()
            .zip(states)
            .filter_map(|(k, s)| Some((k, s?)))
            .collect();
        keys.iter().map(|k| by_key.remove(k)).collect()
    }
}

/// How a raw counter behaves at its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterWidth {
    /// IBA's narrow counters: stop at all ones.
    Saturating(u8),
    /// 64-bit counters: wrap modulo 2^64.
    Wrapping64,
}

/// A drop in a 64-bit reading is a wrap only if the implied increase is below
/// this (2^62 four-octet words is decades at any IBA rate); otherwise a reset.
const MAX_PLAUSIBLE_WRAP_DELTA: u64 = 1 << 62;

/// Increase of a counter between two readings (see the module docs).
pub fn delta(prev: u64, new: u64, width: CounterWidth) -> u64 {
    match width {
        CounterWidth::Wrapping64 => {
            let d = new.wrapping_sub(prev);
            if new >= prev || d < MAX_PLAUSIBLE_WRAP_DELTA {
                d
            } else {
                new
            }
        }
        CounterWidth::Saturating(bits) => {
            let max = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let (p, n) = (prev.min(max), new.min(max));
            if n >= p {
                n - p
            } else {
                n
            }
        }
    }
}

macro_rules! totals {
    ($($name:literal $f:ident : $t:ty = $bits:literal $(, $ext:ident)?);* $(;)?) => {
        /// Each PortCounters counter's 64-bit total, in
        /// [`PORT_COUNTERS`] order.
        const TOTALS: [fn(&mut PortTotals) -> &mut u64; PORT_COUNTERS.len()] =
            [$(|t| &mut t.$f),*];
    };
}
crate::mad::port_counters::with_port_counters!(totals);

/// 64-bit totals of every PMA counter of a port, in the counters' own units
/// (data in 4-octet words: convert with [`super::counters`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PortTotals {
    /// The unicast/multicast totals below count what their names say (the
    /// PMA has them: [`super::counters::ExtendedFields::Ietf`] or more).
    pub unicast_counters: bool,
    pub port_xmit_data: u64,
    pub port_rcv_data: u64,
    pub port_xmit_pkts: u64,
    pub port_rcv_pkts: u64,
    pub port_unicast_xmit_pkts: u64,
    pub port_unicast_rcv_pkts: u64,
    pub port_multicast_xmit_pkts: u64,
    pub port_multicast_rcv_pkts: u64,
    pub symbol_error_counter: u64,
    pub link_error_recovery_counter: u64,
    pub link_downed_counter: u64,
    pub port_rcv_errors: u64,
    pub port_rcv_remote_physical_errors: u64,
    pub port_rcv_switch_relay_errors: u64,
    pub port_xmit_discards: u64,
    pub port_xmit_constraint_errors: u64,
    pub port_rcv_constraint_errors: u64,
    pub local_link_integrity_errors: u64,
    pub excessive_buffer_overrun_errors: u64,
    pub vl15_dropped: u64,
    pub qp1_dropped: u64,
    pub port_xmit_wait: u64,
    pub port_local_physical_errors: u64,
    pub port_malformed_packet_errors: u64,
    pub port_buffer_overrun_errors: u64,
    pub port_dlid_mapping_errors: u64,
    pub port_vl_mapping_errors: u64,
    pub port_looping_errors: u64,
    pub port_inactive_discards: u64,
    pub port_neighbor_mtu_discards: u64,
    pub port_sw_lifetime_limit_discards: u64,
    pub port_sw_hoq_lifetime_limit_discards: u64,
    pub port_xmit_flow_pkts: u64,
    pub port_rcv_flow_pkts: u64,
    /// Per VL 0..15 (PortVLOpPackets, PortVLOpData in 4-octet words, PortVLXmitWait).
    pub vl_op_packets: VlCounts,
    pub vl_op_data: VlCounts,
    pub vl_xmit_wait: VlCounts,
}

/// 64-bit totals for VL0..VL15, allocated only for ports whose PMA reports
/// per-VL counters (most switch PMAs do not); reads as zeros otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VlCounts(Option<Box<[u64; 16]>>);

impl VlCounts {
    /// The total of VL `vl` (0 when the PMA has no per-VL counters); None past VL15.
    pub fn get(&self, vl: usize) -> Option<&u64> {
        match &self.0 {
            Some(a) => a.get(vl),
            None => (vl < 16).then_some(&0),
        }
    }
    pub fn to_array(&self) -> [u64; 16] {
        self.0.as_deref().copied().unwrap_or([0; 16])
    }
    /// Whether the PMA ever reported these counters.
    pub fn is_present(&self) -> bool {
        self.0.is_some()
    }
    fn slots(&mut self) -> &mut [u64; 16] {
        self.0.get_or_insert_with(|| Box::new([0; 16]))
    }
}

impl Serialize for VlCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.to_array())
    }
}

/// A port's counters as the snapshot carries them: the last readings, when they
/// were taken, the totals, and when the totals last restarted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortCounterState {
    pub readings: PortReadings,
    pub read_at: SystemTime,
    pub totals: PortTotals,
    pub discontinuity: SystemTime,
    /// The detail attributes (mask of [`super::counters::detail`] bits)
    /// whose readings are current: read this time, or read before and
    /// their summary counter has not moved since. The others' readings
    /// (kept to count from) are not current, nor is what they add to
    /// the totals.
    pub current: u8,
}

impl PortCounterState {
    /// Whether every detail attribute of `mask` is current.
    pub fn is_current(&self, mask: u8) -> bool {
        self.current & mask == mask
    }

    /// Whether every detail attribute of `mask` is current or one the PMA
    /// does not have (what it would add is not known, and never will be:
    /// nothing to wait for).
    pub fn is_settled(&self, mask: u8) -> bool {
        (self.current | self.readings.lacking) & mask == mask
    }
}

const S16: CounterWidth = CounterWidth::Saturating(16);
const S32: CounterWidth = CounterWidth::Saturating(32);
const W64: CounterWidth = CounterWidth::Wrapping64;

/// Adds the increase of one counter; a counter first seen adds its reading.
fn acc(total: &mut u64, prev: Option<u64>, new: Option<u64>, w: CounterWidth) {
    let d = match (prev, new) {
        (Some(p), Some(n)) => delta(p, n, w),
        (None, Some(n)) => delta(0, n, w),
        (_, None) => 0,
    };
    *total = total.wrapping_add(d);
}

/// The next counter state of a port from its previous state (None: first
/// sighting, or back after an absence) and this sweep's readings.
pub fn advance(
    prev: Option<&PortCounterState>,
    mut new: PortReadings,
    read_at: SystemTime,
) -> PortCounterState {
    let (mut totals, discontinuity) = match prev {
        Some(p) => (p.totals.clone(), p.discontinuity),
        None => (PortTotals::default(), read_at),
    };
    let pr = prev.map(|p| &p.readings);
    let read_now = new.details_held();
    let current = read_now
        | prev.map_or(0, |p| {
            p.current & !super::counters::details_moved(&p.readings.counters, &new.counters)
        });
    // Optional attributes missing this time keep their last reading, so the next
    // reading is compared with it rather than counted again from zero.
    if let Some(p) = pr {
        macro_rules! keep {
            ($($f:ident),*) => {$(
                if new.$f.is_none() {
                    new.$f = p.$f.clone();
                }
            )*};
        }
        keep!(
            extended,
            rcv_error_details,
            xmit_discard_details,
            flow_ctl,
            vl_op_packets,
            vl_op_data,
            vl_xmit_wait
        );
    }
    let t = &mut totals;
    t.unicast_counters =
        new.extended.is_some() && new.extended_fields >= super::counters::ExtendedFields::Ietf;
    let pc = pr.map(|p| &p.counters);
    let nc = &new.counters;
    // PortCounters' narrow counters, data and packets aside (below).
    let narrow = |f: &&PcField| !f.extended;
    for (f, total) in PORT_COUNTERS.iter().zip(TOTALS).filter(|(f, _)| narrow(f)) {
        let w = CounterWidth::Saturating(f.bits);
        acc(total(t), pc.map(f.get), Some((f.get)(nc)), w);
    }
    // QP1Dropped is PortCounters' one counter CounterSelect does not name.
    acc(
        &mut t.qp1_dropped,
        pc.map(|c| u64::from(c.qp1_dropped)),
        Some(u64::from(nc.qp1_dropped)),
        S16,
    );

    // Data and packets: 64-bit extended counters when both readings have them,
    // else PortCounters' 32-bit ones.
    let pe = pr.and_then(|p| p.extended.as_ref());
    match (&new.extended, pe) {
        // Both readings extended, or a first reading (the totals start at it).
        (Some(ne), pe) if pe.is_some() || pr.is_none() => {
            macro_rules! ext_acc {
                ($($f:ident),*) => {$(
                    acc(&mut t.$f, pe.map(|p| p.$f), Some(ne.$f), W64);
                )*};
            }
            ext_acc!(
                port_xmit_data,
                port_rcv_data,
                port_xmit_pkts,
                port_rcv_pkts,
                port_unicast_xmit_pkts,
                port_unicast_rcv_pkts,
                port_multicast_xmit_pkts,
                port_multicast_rcv_pkts
            );
        }
        _ => {
            for (f, total) in PORT_COUNTERS.iter().zip(TOTALS).filter(|(f, _)| f.extended) {
                let w = CounterWidth::Saturating(f.bits);
                acc(total(t), pc.map(f.get), Some((f.get)(nc)), w);
            }
        }
    }

    macro_rules! opt_acc {
        ($attr:ident { $($f:ident : $w:expr),* }) => {{
            let p = pr.and_then(|p| p.$attr.as_ref());
            if let Some(n) = &new.$attr {
                $( acc(&mut t.$f, p.map(|a| u64::from(a.$f)), Some(u64::from(n.$f)), $w); )*
            }
        }};
    }
    opt_acc!(rcv_error_details {
        port_local_physical_errors: S16,
        port_malformed_packet_errors: S16,
        port_buffer_overrun_errors: S16,
        port_dlid_mapping_errors: S16,
        port_vl_mapping_errors: S16,
        port_looping_errors: S16
    });
    opt_acc!(xmit_discard_details {
        port_inactive_discards: S16,
        port_neighbor_mtu_discards: S16,
        port_sw_lifetime_limit_discards: S16,
        port_sw_hoq_lifetime_limit_discards: S16
    });
    opt_acc!(flow_ctl {
        port_xmit_flow_pkts: S32,
        port_rcv_flow_pkts: S32
    });

    macro_rules! vl_acc {
        ($attr:ident . $arr:ident => $tot:ident, $w:expr) => {{
            let p = pr.and_then(|p| p.$attr.as_ref());
            if let Some(n) = &new.$attr {
                for (i, (tot, nv)) in t.$tot.slots().iter_mut().zip(n.$arr.iter()).enumerate() {
                    let pv = p.and_then(|a| a.$arr.get(i)).map(|v| u64::from(*v));
                    acc(tot, pv, Some(u64::from(*nv)), $w);
                }
            }
        }};
    }
    vl_acc!(vl_op_packets.port_vl_op_packets => vl_op_packets, S16);
    vl_acc!(vl_op_data.port_vl_op_data => vl_op_data, S32);
    vl_acc!(vl_xmit_wait.port_vl_xmit_wait => vl_xmit_wait, S16);

    PortCounterState {
        readings: new,
        read_at,
        totals,
        discontinuity,
        current,
    }
}

// IfCounters are computed here, from the totals this module keeps, so that
// counters.rs (the formulas) does not depend on accum.rs.
impl IfCounters {
    /// Section 2.4 over 64-bit totals. Where the PMA has unicast and
    /// multicast counters (PortCountersExtended, IsExtendedWidthSupported),
    /// ifXxUcastPkts count unicast only and ifXxMulticastPkts multicast, so
    /// their sum is every packet once; elsewhere the unicast objects count
    /// every packet (PortXmitPkts/PortRcvPkts) and the multicast ones 0.
    pub fn from_totals(t: &PortTotals) -> Self {
        let (rcv_ucast, xmit_ucast) = if t.unicast_counters {
            (t.port_unicast_rcv_pkts, t.port_unicast_xmit_pkts)
        } else {
            (t.port_rcv_pkts, t.port_xmit_pkts)
        };
        Self {
            in_octets: counters::if_in_octets(
                t.port_rcv_data,
                t.port_rcv_pkts,
                t.port_rcv_flow_pkts,
            ),
            in_ucast_pkts: counters::if_in_ucast_pkts(rcv_ucast),
            in_multicast_pkts: t.port_multicast_rcv_pkts,
            in_discards: counters::if_in_discards(t.port_rcv_constraint_errors, t.vl15_dropped),
            in_errors: counters::if_in_errors(t.port_rcv_remote_physical_errors, t.port_rcv_errors),
            out_octets: counters::if_out_octets(
                t.port_xmit_data,
                t.port_xmit_pkts,
                t.port_xmit_flow_pkts,
            ),
            out_ucast_pkts: counters::if_out_ucast_pkts(
                xmit_ucast,
                t.port_xmit_discards,
                t.port_xmit_constraint_errors,
            ),
            out_multicast_pkts: t.port_multicast_xmit_pkts,
            out_discards: counters::if_out_discards(
                t.port_xmit_discards,
                t.port_xmit_constraint_errors,
            ),
            out_errors: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas() {
        assert_eq!(delta(5, 9, S16), 4);
        assert_eq!(delta(9, 5, S16), 5, "reset by someone else");
        assert_eq!(delta(0xFFFF, 0xFFFF, S16), 0, "stays saturated");
        assert_eq!(delta(0xFFF0, 0xFFFF, S16), 0xF);
        assert_eq!(delta(u64::MAX - 1, 3, W64), 5, "64-bit wrap");
        assert_eq!(delta(1000, 10, W64), 10, "64-bit reset");
        assert_eq!(
            delta(15, 20, CounterWidth::Saturating(4)),
            0,
            "beyond the width reads as saturated"
        );
    }
}
