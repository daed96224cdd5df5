//! Raw PMA readings of one port, and the one place IBA's 4-octet data units
//! become octets.
//!
//! The conversions follow draft-ietf-ipoib-ibif-mib section 2.4: every packet
//! carries POH = 4 octets of framing (START, END, 2 VCRC) that PortXmitData /
//! PortRcvData do not count, and every link-level flow-control packet is
//! SLP = 8 octets. The functions take 64-bit totals (see [`super::accum`]) so
//! IF-MIB can serve ifHC* directly and the 32-bit objects as their low bits.

use crate::mad::pma::{
    PortCounters, PortCountersExtended, PortFlowCtlCounters, PortRcvErrorDetails, PortVlOpData,
    PortVlOpPackets, PortVlXmitWaitCounters, PortXmitDiscardDetails,
};
use serde::{Deserialize, Serialize};

/// Packet overhead: 1 START + 1 END + 2 VCRC octets per packet.
pub const POH: u64 = 4;
/// Size of a link flow-control packet: 1 START + 1 END + 6 octets.
pub const SLP: u64 = 8;
/// PortXmitData/PortRcvData/PortVLOpData count 4-octet words.
pub const DATA_UNIT_OCTETS: u64 = 4;

/// Which fields of PortCountersExtended a PMA fills (PMA ClassPortInfo:
/// CapabilityMask bits 9 and 10, CapabilityMask2 bit 1). The others are
/// reserved: a source zeroes them ([`ExtendedFields::sanitize`]) rather than
/// serve whatever the reserved octets hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtendedFields {
    /// The four 64-bit data and packet counters only (IsExtendedWidthSupportedNoIETF).
    #[default]
    Basic,
    /// Plus the unicast and multicast packet counters (IsExtendedWidthSupported).
    Ietf,
    /// Plus 64-bit copies of the error counters, PortXmitWait and QP1Dropped
    /// (IsAdditionalPortCountersExtendedSupported).
    All,
}

impl ExtendedFields {
    /// From a PMA's ClassPortInfo CapabilityMask and CapabilityMask2.
    pub fn from_caps(cap_mask: u16, cap_mask2: u32) -> Self {
        use crate::mad::pma::cap;
        const ADDITIONAL_PORT_COUNTERS_EXTENDED: u32 = 1 << 1;
        if cap_mask & cap::IS_EXTENDED_WIDTH_SUPPORTED == 0 {
            ExtendedFields::Basic
        } else if cap_mask2 & ADDITIONAL_PORT_COUNTERS_EXTENDED == 0 {
            ExtendedFields::Ietf
        } else {
            ExtendedFields::All
        }
    }

    /// Zeroes the fields this PMA does not fill.
    pub fn sanitize(self, e: &mut PortCountersExtended) {
        if self < ExtendedFields::Ietf {
            e.port_unicast_xmit_pkts = 0;
            e.port_unicast_rcv_pkts = 0;
            e.port_multicast_xmit_pkts = 0;
            e.port_multicast_rcv_pkts = 0;
        }
        if self < ExtendedFields::All {
            *e = PortCountersExtended {
                port_select: e.port_select,
                counter_select: e.counter_select,
                port_xmit_data: e.port_xmit_data,
                port_rcv_data: e.port_rcv_data,
                port_xmit_pkts: e.port_xmit_pkts,
                port_rcv_pkts: e.port_rcv_pkts,
                port_unicast_xmit_pkts: e.port_unicast_xmit_pkts,
                port_unicast_rcv_pkts: e.port_unicast_rcv_pkts,
                port_multicast_xmit_pkts: e.port_multicast_xmit_pkts,
                port_multicast_rcv_pkts: e.port_multicast_rcv_pkts,
                ..PortCountersExtended::default()
            };
        }
    }
}

/// What one sweep read from a port's PMA. `counters` is mandatory in IBA; the
/// others are present when the PMA answered them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PortReadings {
    pub counters: PortCounters,
    pub extended: Option<PortCountersExtended>,
    /// Which fields of `extended` the PMA fills (the rest read 0).
    #[serde(default)]
    pub extended_fields: ExtendedFields,
    pub rcv_error_details: Option<PortRcvErrorDetails>,
    pub xmit_discard_details: Option<PortXmitDiscardDetails>,
    pub flow_ctl: Option<PortFlowCtlCounters>,
    pub vl_op_packets: Option<PortVlOpPackets>,
    pub vl_op_data: Option<PortVlOpData>,
    pub vl_xmit_wait: Option<PortVlXmitWaitCounters>,
    /// The detail attributes (mask of [`detail`] bits) this port's PMA
    /// said it does not have: never read, and not waited for.
    #[serde(default)]
    pub lacking: u8,
}

/// The detail attributes a PMA is asked for besides PortCounters(Extended),
/// as bits of a mask.
pub mod detail {
    pub const RCV_ERROR_DETAILS: u8 = 1 << 0;
    pub const XMIT_DISCARD_DETAILS: u8 = 1 << 1;
    pub const FLOW_CTL: u8 = 1 << 2;
    pub const VL_OP_PACKETS: u8 = 1 << 3;
    pub const VL_OP_DATA: u8 = 1 << 4;
    pub const VL_XMIT_WAIT: u8 = 1 << 5;
    pub const ALL: u8 = 0x3f;
    /// Attributes that break down a PortCounters counter (PortRcvErrors,
    /// PortXmitDiscards, PortXmitWait): while that counter stands still and
    /// below its maximum, so do they, and their last reading is current.
    pub const FOLLOW_SUMMARY: u8 = RCV_ERROR_DETAILS | XMIT_DISCARD_DETAILS | VL_XMIT_WAIT;
    /// Attributes nothing summarises that move with traffic (flow control
    /// packets, per-VL packets and data): current only when read this sweep.
    pub const TRAFFIC: u8 = FLOW_CTL | VL_OP_PACKETS | VL_OP_DATA;
}

/// The detail attributes whose readings may have moved since `prev` was
/// read: those nothing summarises ([`detail::TRAFFIC`]), and those whose
/// summary counter moved or stands at its maximum (where it no longer
/// shows movement). The others' last readings are still current.
pub fn details_moved(prev: &PortCounters, now: &PortCounters) -> u8 {
    let mut m = detail::TRAFFIC;
    if prev.port_rcv_errors != now.port_rcv_errors || now.port_rcv_errors == u16::MAX {
        m |= detail::RCV_ERROR_DETAILS;
    }
    if prev.port_xmit_discards != now.port_xmit_discards || now.port_xmit_discards == u16::MAX {
        m |= detail::XMIT_DISCARD_DETAILS;
    }
    if prev.port_xmit_wait != now.port_xmit_wait || now.port_xmit_wait == u32::MAX {
        m |= detail::VL_XMIT_WAIT;
    }
    m
}

impl PortReadings {
    /// The detail attributes these readings hold (mask of [`detail`] bits).
    pub fn details_held(&self) -> u8 {
        [
            (self.rcv_error_details.is_some(), detail::RCV_ERROR_DETAILS),
            (
                self.xmit_discard_details.is_some(),
                detail::XMIT_DISCARD_DETAILS,
            ),
            (self.flow_ctl.is_some(), detail::FLOW_CTL),
            (self.vl_op_packets.is_some(), detail::VL_OP_PACKETS),
            (self.vl_op_data.is_some(), detail::VL_OP_DATA),
            (self.vl_xmit_wait.is_some(), detail::VL_XMIT_WAIT),
        ]
        .iter()
        .filter(|(held, _)| *held)
        .fold(0, |m, (_, bit)| m | bit)
    }
}

/// Data words (4-octet units) to octets.
pub const fn data_octets(words: u64) -> u64 {
    words.wrapping_mul(DATA_UNIT_OCTETS)
}

/// ifInOctets / ifHCInOctets = PortRcvData * 4 + PortRcvPkts * POH + PortRcvFlowPkts * SLP.
pub const fn if_in_octets(rcv_data: u64, rcv_pkts: u64, rcv_flow_pkts: u64) -> u64 {
    data_octets(rcv_data)
        .wrapping_add(rcv_pkts.wrapping_mul(POH))
        .wrapping_add(rcv_flow_pkts.wrapping_mul(SLP))
}

/// ifOutOctets / ifHCOutOctets = PortXmitData * 4 + PortXmitPkts * POH + PortXmitFlowPkts * SLP.
pub const fn if_out_octets(xmit_data: u64, xmit_pkts: u64, xmit_flow_pkts: u64) -> u64 {
    data_octets(xmit_data)
        .wrapping_add(xmit_pkts.wrapping_mul(POH))
        .wrapping_add(xmit_flow_pkts.wrapping_mul(SLP))
}

/// ifInUcastPkts = PortRcvPkts (002 section 2.4), or PortUnicastRcvPkts
/// where the PMA has it: PortRcvPkts counts multicast too, which
/// ifInMulticastPkts already reports.
pub const fn if_in_ucast_pkts(rcv_pkts: u64) -> u64 {
    rcv_pkts
}

/// ifOutUcastPkts = PortXmitPkts + PortXmitDiscards + PortXmitConstraintErrors
/// (002 section 2.4), with PortUnicastXmitPkts for PortXmitPkts where the PMA
/// has it, for the same reason as [`if_in_ucast_pkts`].
pub const fn if_out_ucast_pkts(xmit_pkts: u64, xmit_discards: u64, xmit_constraint: u64) -> u64 {
    xmit_pkts
        .wrapping_add(xmit_discards)
        .wrapping_add(xmit_constraint)
}

/// ifInDiscards = PortRcvConstraintErrors + VL15Dropped.
pub const fn if_in_discards(rcv_constraint: u64, vl15_dropped: u64) -> u64 {
    rcv_constraint.wrapping_add(vl15_dropped)
}

/// ifInErrors = PortRcvRemotePhysicalErrors + PortRcvErrors.
pub const fn if_in_errors(rcv_remote_physical: u64, rcv_errors: u64) -> u64 {
    rcv_remote_physical.wrapping_add(rcv_errors)
}

/// ifOutDiscards = PortXmitDiscards + PortXmitConstraintErrors.
pub const fn if_out_discards(xmit_discards: u64, xmit_constraint: u64) -> u64 {
    xmit_discards.wrapping_add(xmit_constraint)
}

/// ibIfVLInOctets / ibIfVLOutOctets = data words * 4 + packets * POH.
pub const fn vl_octets(data_words: u64, pkts: u64) -> u64 {
    data_octets(data_words).wrapping_add(pkts.wrapping_mul(POH))
}

/// The IF-MIB octet and packet counters of a port from its accumulated totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct IfCounters {
    pub in_octets: u64,
    pub in_ucast_pkts: u64,
    pub in_multicast_pkts: u64,
    pub in_discards: u64,
    pub in_errors: u64,
    pub out_octets: u64,
    pub out_ucast_pkts: u64,
    pub out_multicast_pkts: u64,
    pub out_discards: u64,
    pub out_errors: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas() {
        assert_eq!(if_in_octets(10, 2, 1), 40 + 8 + 8);
        assert_eq!(if_out_octets(0, 0, 0), 0);
        assert_eq!(if_out_octets(1 << 40, 3, 2), (1 << 42) + 12 + 16);
        assert_eq!(if_out_ucast_pkts(5, 1, 2), 8);
        assert_eq!(if_in_discards(1, 2), 3);
        assert_eq!(if_in_errors(4, 5), 9);
        assert_eq!(vl_octets(2, 1), 12);
        // Wraps modulo 2^64 like the Counter64 it feeds.
        assert_eq!(if_in_octets(u64::MAX / 4 + 1, 0, 0), 0);
    }
}
