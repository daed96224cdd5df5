//! The per-port families: each one's name (after `infiniband_<type>_port_`),
//! help and value, by group.

use ib::model::accum::{PortTotals, VlCounts};
use ib::model::counters::PortReadings;
use ib::model::health::PortHealth;
use ib::model::{Port, Snapshot};
use ib::types::data_rate_mbps;

use super::Group;

pub(super) type CounterFn = fn(&PortTotals) -> u64;
/// Per-port counters: name after `infiniband_<type>_port_`, help, value.
/// Data counters are octets (PortXmitData/PortRcvData count 4-octet words).
pub(super) type CounterFamily = (&'static str, &'static str, CounterFn);

pub(super) const DATA_COUNTERS: &[CounterFamily] = &[
    (
        "transmit_data_bytes_total",
        "Octets transmitted (PortXmitData x 4)",
        |t| t.port_xmit_data.wrapping_mul(4),
    ),
    (
        "receive_data_bytes_total",
        "Octets received (PortRcvData x 4)",
        |t| t.port_rcv_data.wrapping_mul(4),
    ),
    (
        "transmit_packets_total",
        "Packets transmitted (PortXmitPkts)",
        |t| t.port_xmit_pkts,
    ),
    (
        "receive_packets_total",
        "Packets received (PortRcvPkts)",
        |t| t.port_rcv_pkts,
    ),
];

/// Unicast and multicast packets (PortCountersExtended): opt-in (`casts`),
/// no shipped rule or panel reads them.
pub(super) const CAST_COUNTERS: &[CounterFamily] = &[
    (
        "unicast_transmit_packets_total",
        "Unicast packets transmitted (PortUnicastXmitPkts)",
        |t| t.port_unicast_xmit_pkts,
    ),
    (
        "unicast_receive_packets_total",
        "Unicast packets received (PortUnicastRcvPkts)",
        |t| t.port_unicast_rcv_pkts,
    ),
    (
        "multicast_transmit_packets_total",
        "Multicast packets transmitted (PortMulticastXmitPkts)",
        |t| t.port_multicast_xmit_pkts,
    ),
    (
        "multicast_receive_packets_total",
        "Multicast packets received (PortMulticastRcvPkts)",
        |t| t.port_multicast_rcv_pkts,
    ),
];

/// The counter families of the three groups, data, casts then errors (the
/// index of each is its column in [`super::Rows`]).
pub(super) fn counters() -> impl Iterator<Item = (Group, &'static CounterFamily)> {
    let data = DATA_COUNTERS.iter().map(|c| (Group::Data, c));
    let casts = CAST_COUNTERS.iter().map(|c| (Group::Casts, c));
    data.chain(casts)
        .chain(ERROR_COUNTERS.iter().map(|c| (Group::Errors, c)))
}

pub(super) const ERROR_COUNTERS: &[CounterFamily] = &[
    (
        "symbol_error_total",
        "Minor link errors (SymbolErrorCounter)",
        |t| t.symbol_error_counter,
    ),
    (
        "link_error_recovery_total",
        "Successful link error recoveries (LinkErrorRecoveryCounter)",
        |t| t.link_error_recovery_counter,
    ),
    (
        "link_downed_total",
        "Failed link error recoveries that downed the link (LinkDownedCounter)",
        |t| t.link_downed_counter,
    ),
    (
        "receive_errors_total",
        "Packets received with errors (PortRcvErrors)",
        |t| t.port_rcv_errors,
    ),
    (
        "receive_remote_physical_errors_total",
        "Packets received marked with EBP (PortRcvRemotePhysicalErrors)",
        |t| t.port_rcv_remote_physical_errors,
    ),
    (
        "receive_switch_relay_errors_total",
        "Packets the switch could not relay (PortRcvSwitchRelayErrors)",
        |t| t.port_rcv_switch_relay_errors,
    ),
    (
        "transmit_discards_total",
        "Outbound packets discarded (PortXmitDiscards)",
        |t| t.port_xmit_discards,
    ),
    (
        "transmit_constraint_errors_total",
        "Packets not transmitted: partition or raw constraint (PortXmitConstraintErrors)",
        |t| t.port_xmit_constraint_errors,
    ),
    (
        "receive_constraint_errors_total",
        "Packets received and discarded: partition or raw constraint (PortRcvConstraintErrors)",
        |t| t.port_rcv_constraint_errors,
    ),
    (
        "local_link_integrity_errors_total",
        "Local physical errors past the threshold (LocalLinkIntegrityErrors)",
        |t| t.local_link_integrity_errors,
    ),
    (
        "excessive_buffer_overrun_errors_total",
        "Consecutive flow control update overruns (ExcessiveBufferOverrunErrors)",
        |t| t.excessive_buffer_overrun_errors,
    ),
    (
        "vl15_dropped_total",
        "Incoming VL15 packets dropped (VL15Dropped)",
        |t| t.vl15_dropped,
    ),
    (
        "transmit_wait_total",
        "Ticks with data to send and no credit (PortXmitWait)",
        |t| t.port_xmit_wait,
    ),
    ("qp1_dropped_total", "QP1 MADs dropped (QP1Dropped)", |t| {
        t.qp1_dropped
    }),
];

type ReadFn = fn(&PortReadings) -> bool;
/// Detail counters: a port has a sample once its PMA answered the attribute.
pub(super) const DETAIL_COUNTERS: &[(CounterFamily, ReadFn)] = &[
    (
        (
            "local_physical_errors_total",
            "Receive errors from the physical layer (PortRcvErrorDetails PortLocalPhysicalErrors)",
            |t| t.port_local_physical_errors,
        ),
        |r| r.rcv_error_details.is_some(),
    ),
    (
        (
            "malformed_packet_errors_total",
            "Malformed packets received (PortRcvErrorDetails PortMalformedPacketErrors)",
            |t| t.port_malformed_packet_errors,
        ),
        |r| r.rcv_error_details.is_some(),
    ),
    (
        (
            "buffer_overrun_errors_total",
            "Packets received into a full buffer (PortRcvErrorDetails PortBufferOverrunErrors)",
            |t| t.port_buffer_overrun_errors,
        ),
        |r| r.rcv_error_details.is_some(),
    ),
    (
        (
            "dlid_mapping_errors_total",
            "Packets with a DLID the switch cannot route (PortRcvErrorDetails PortDLIDMappingErrors)",
            |t| t.port_dlid_mapping_errors,
        ),
        |r| r.rcv_error_details.is_some(),
    ),
    (
        (
            "vl_mapping_errors_total",
            "Packets dropped by SL to VL mapping (PortRcvErrorDetails PortVLMappingErrors)",
            |t| t.port_vl_mapping_errors,
        ),
        |r| r.rcv_error_details.is_some(),
    ),
    (
        (
            "looping_errors_total",
            "Packets that would loop back out of their input port (PortRcvErrorDetails PortLoopingErrors)",
            |t| t.port_looping_errors,
        ),
        |r| r.rcv_error_details.is_some(),
    ),
    (
        (
            "inactive_discards_total",
            "Packets discarded on an inactive port (PortXmitDiscardDetails PortInactiveDiscards)",
            |t| t.port_inactive_discards,
        ),
        |r| r.xmit_discard_details.is_some(),
    ),
    (
        (
            "neighbor_mtu_discards_total",
            "Packets longer than the neighbour's MTU (PortXmitDiscardDetails PortNeighborMTUDiscards)",
            |t| t.port_neighbor_mtu_discards,
        ),
        |r| r.xmit_discard_details.is_some(),
    ),
    (
        (
            "sw_lifetime_limit_discards_total",
            "Packets past the switch lifetime limit (PortXmitDiscardDetails PortSwLifetimeLimitDiscards)",
            |t| t.port_sw_lifetime_limit_discards,
        ),
        |r| r.xmit_discard_details.is_some(),
    ),
    (
        (
            "sw_hoq_lifetime_limit_discards_total",
            "Packets past the head-of-queue lifetime limit (PortXmitDiscardDetails PortSwHOQLifetimeLimitDiscards)",
            |t| t.port_sw_hoq_lifetime_limit_discards,
        ),
        |r| r.xmit_discard_details.is_some(),
    ),
    (
        (
            "transmit_flow_packets_total",
            "Flow control packets transmitted (PortFlowCtlCounters PortXmitFlowPkts)",
            |t| t.port_xmit_flow_pkts,
        ),
        |r| r.flow_ctl.is_some(),
    ),
    (
        (
            "receive_flow_packets_total",
            "Flow control packets received (PortFlowCtlCounters PortRcvFlowPkts)",
            |t| t.port_rcv_flow_pkts,
        ),
        |r| r.flow_ctl.is_some(),
    ),
];

type VlFn = fn(&PortTotals) -> &VlCounts;
/// Per-VL counters: name, help, the totals, and the multiplier to the unit
/// the name says (data: 4-octet words to octets).
pub(super) const VL_COUNTERS: &[(&str, &str, VlFn, u64)] = &[
    (
        "vl_transmit_packets_total",
        "Packets transmitted per VL (PortVLOpPackets)",
        |t| &t.vl_op_packets,
        1,
    ),
    (
        "vl_transmit_data_bytes_total",
        "Octets transmitted per VL (PortVLOpData x 4)",
        |t| &t.vl_op_data,
        4,
    ),
    (
        "vl_transmit_wait_total",
        "Ticks with data to send on the VL and no credit (PortVLXmitWaitCounters)",
        |t| &t.vl_xmit_wait,
        1,
    ),
];

type GaugeFn = fn(&Snapshot, &Port) -> u64;
pub(super) const STATE_GAUGES: &[(&str, &str, GaugeFn)] = &[
    ("state_id", "PortState: 1 down, 2 init, 3 armed, 4 active", |_, p| {
        u64::from(p.info.port_state)
    }),
    (
        "physical_state_id",
        "PortPhysicalState: 1 sleep, 2 polling, 3 disabled, 4 training, 5 linkup, 6 error recovery, 7 phy test",
        |_, p| u64::from(p.info.port_physical_state),
    ),
    // A port without a link (Down) keeps PortInfo width/speed fields that
    // describe no link: 0, as iblinkinfo prints nothing there.
    ("width_lanes", "Active link width in lanes (0: no link)", |_, p| {
        match p.info.link_width() {
            Some(w) if p.info.has_link() => u64::from(w.lanes()),
            _ => 0,
        }
    }),
    (
        "rate_bytes_per_second",
        "Effective data rate of the link in octets/s (line coding removed; 0: no link)",
        |s, p| match (p.info.link_width(), s.port_speed(p)) {
            (Some(w), Some(sp)) if p.info.has_link() => data_rate_mbps(w, sp) * 1_000_000 / 8,
            _ => 0,
        },
    ),
];

type HealthFn = fn(&PortHealth) -> Option<f64>;
/// Per-port health gauges (docs/health.md): name after
/// `infiniband_<type>_port_`, help, value (None: no sample).
pub(super) const HEALTH_GAUGES: &[(&str, &str, HealthFn)] = &[
    (
        "down_after_up",
        "1: the port was active in an earlier sweep and is not now (never-cabled ports stay 0)",
        |h| Some(f64::from(u8::from(h.down_after_up))),
    ),
    (
        "symbol_error_ratio",
        "Symbol errors per received bit over the health window (BER)",
        |h| h.symbol_ber,
    ),
    (
        "link_recoveries_per_hour",
        "LinkErrorRecovery events per hour over the health window",
        |h| h.link_recovery_per_hour,
    ),
    (
        "link_downed_in_window",
        "Link downs within the health window: the larger of the LinkDowned increase and the down transitions the sweeps saw (flapping at flap_count)",
        |h| Some(h.link_downed as f64),
    ),
    (
        "down_transitions_in_window",
        "Active to Down transitions the agent's sweeps saw within the health window",
        |h| Some(h.down_transitions as f64),
    ),
    (
        "xmit_wait_ratio",
        "Share of transmit time spent waiting for credits over the health window: PortXmitWait / (PortXmitWait + PortXmitData)",
        |h| h.xmit_wait_ratio,
    ),
    (
        "counters_cleared",
        "1: a counter read lower than in the sweep before (cleared by another manager or perfquery -R)",
        |h| Some(f64::from(u8::from(h.counters_cleared))),
    ),
];
