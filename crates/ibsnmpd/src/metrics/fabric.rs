//! The fabric part of /metrics, encoded while the body is sent: a cursor
//! over the published snapshot writes the next chunk of samples each time
//! the connection takes more. A scrape of a 289k-port fabric holds one
//! chunk, never the whole text, and a slow reader pins nothing else.
//!
//! Which families are written is the operator's choice (`metrics_families`):
//! a 48k-host fabric has millions of port samples per family.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use ib::model::accum::{PortTotals, VlCounts};
use ib::model::counters::PortReadings;
use ib::model::health::{Degraded, PortHealth};
use ib::model::{Node, Port, Snapshot};
use ib::types::{data_rate_mbps, Guid, NodeType, PortNum};

use super::{header, Family};
use crate::health::HealthReport;

/// A set of per-port families a scrape carries (`metrics_families`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Data and packet counters (octets, packets, unicast, multicast).
    Data,
    /// The PortCounters error counters and PortXmitWait.
    Errors,
    /// Node info, port state, physical state, width, rate.
    State,
    /// The health gauges (docs/health.md) and their thresholds.
    Health,
    /// PortRcvErrorDetails, PortXmitDiscardDetails, PortFlowCtlCounters.
    Detail,
    /// Per-VL packets, data and transmit wait (a `vl` label: 16 samples a port).
    Vl,
}

impl Group {
    /// Every group by its configuration name.
    pub const NAMES: [(&'static str, Group); 6] = [
        ("data", Group::Data),
        ("errors", Group::Errors),
        ("state", Group::State),
        ("health", Group::Health),
        ("detail", Group::Detail),
        ("vl", Group::Vl),
    ];

    pub fn parse(name: &str) -> Option<Group> {
        Self::NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, g)| g)
    }
}

/// The groups a scrape carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Families(u8);

impl Families {
    /// What the shipped alert rules and dashboard read; `detail` and `vl`
    /// are opt-in (they multiply a large fabric's scrape).
    pub const DEFAULT: Families = Families(
        1 << Group::Data as u8
            | 1 << Group::Errors as u8
            | 1 << Group::State as u8
            | 1 << Group::Health as u8,
    );

    pub fn of(groups: impl IntoIterator<Item = Group>) -> Families {
        Families(groups.into_iter().fold(0, |m, g| m | 1 << g as u8))
    }

    pub fn has(self, g: Group) -> bool {
        self.0 & (1 << g as u8) != 0
    }

    /// The PMA detail attributes these families serve for every port (the
    /// umad source reads other nodes' only for them: `PmaOptions::remote_details`).
    pub fn pma_details(self) -> u8 {
        use ib::source::umad::pma::detail;
        let mut m = 0;
        if self.has(Group::Detail) {
            m |= detail::RCV_ERROR_DETAILS | detail::XMIT_DISCARD_DETAILS | detail::FLOW_CTL;
        }
        if self.has(Group::Vl) {
            m |= detail::VL_OP_PACKETS | detail::VL_OP_DATA | detail::VL_XMIT_WAIT;
        }
        m
    }
}

impl Default for Families {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Node types, in the order the exposition lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Switch,
    Hca,
}

impl Kind {
    const BOTH: [Kind; 2] = [Kind::Switch, Kind::Hca];
    fn of(n: &Node) -> Kind {
        if n.info.node_type == NodeType::Switch as u8 {
            Kind::Switch
        } else {
            Kind::Hca
        }
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Switch => "switch",
            Kind::Hca => "hca",
        }
    }
}

type CounterFn = fn(&PortTotals) -> u64;
/// Per-port counters: name after `infiniband_<type>_port_`, help, value.
/// Data counters are octets (PortXmitData/PortRcvData count 4-octet words).
type CounterFamily = (&'static str, &'static str, CounterFn);

const DATA_COUNTERS: &[CounterFamily] = &[
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

const ERROR_COUNTERS: &[CounterFamily] = &[
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
const DETAIL_COUNTERS: &[(CounterFamily, ReadFn)] = &[
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
const VL_COUNTERS: &[(&str, &str, VlFn, u64)] = &[
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
const STATE_GAUGES: &[(&str, &str, GaugeFn)] = &[
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
const HEALTH_GAUGES: &[(&str, &str, HealthFn)] = &[
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

/// One shown port: where it is in the snapshot, its labels (written once
/// per snapshot, shared by every family and scrape) and its health entry.
struct Row {
    port: usize,
    labels: Box<str>,
    health: Option<u32>,
}

/// The shown ports of one published snapshot, by node type.
pub struct Rows {
    /// The snapshot they were made from (its address and sweep number).
    key: (usize, u64),
    by_kind: [Vec<Row>; 2],
}

impl Rows {
    /// Whether these rows belong to `published`'s snapshot.
    pub fn of_same(&self, published: &crate::fabric::Published) -> bool {
        self.key == key(&published.snapshot)
    }

    fn kind(&self, k: Kind) -> &[Row] {
        &self.by_kind[k as usize]
    }
}

fn key(snap: &Arc<Snapshot>) -> (usize, u64) {
    (Arc::as_ptr(snap) as usize, snap.sweep.number)
}

/// Every external port (switch port 0 is the management port and has no
/// link) with its labels, once per snapshot.
pub fn rows(published: &crate::fabric::Published) -> Rows {
    let snap = &published.snapshot;
    let health: HashMap<(Guid, u8), u32> = published
        .extra
        .health
        .as_deref()
        .map(|r| {
            r.ports
                .iter()
                .enumerate()
                .map(|(i, h)| ((h.guid, h.port), i as u32))
                .collect()
        })
        .unwrap_or_default();
    let mut by_kind: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
    for node in &snap.nodes {
        let range = node.ports.start as usize..node.ports.end as usize;
        for (i, p) in snap
            .ports
            .get(range.clone())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            if p.num == PortNum(0) {
                continue;
            }
            by_kind[Kind::of(node) as usize].push(Row {
                port: range.start + i,
                labels: port_labels(snap, node, p).into_boxed_str(),
                health: health.get(&(node.info.node_guid, p.num.0)).copied(),
            });
        }
    }
    Rows {
        key: key(snap),
        by_kind,
    }
}

/// The labels of one port: its node, number, and the far end of its link.
fn port_labels(snap: &Snapshot, node: &Node, p: &Port) -> String {
    let kind = Kind::of(node).name();
    let mut l = format!(
        "guid=\"{}\",{kind}=\"{}\",port=\"{}\"",
        node.info.node_guid,
        esc(&node.description),
        p.num.0
    );
    if let Some(r) = p.remote.and_then(|r| snap.port(r)) {
        if let Some(rn) = snap.node(r.node) {
            let _ = write!(
                l,
                ",uplink=\"{}\",uplink_guid=\"{}\",uplink_port=\"{}\",uplink_type=\"{}\"",
                esc(&rn.description),
                rn.info.node_guid,
                r.num.0,
                match Kind::of(rn) {
                    Kind::Switch => "SW",
                    Kind::Hca => "CA",
                }
            );
        }
    }
    l
}

/// A label value escaped as the text format requires.
pub(crate) fn esc(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// One family of the fabric part.
#[derive(Debug, Clone, Copy)]
enum Step {
    Info(Kind),
    Counter(Kind, &'static CounterFamily),
    Detail(Kind, usize),
    Vl(Kind, usize),
    State(Kind, usize),
    /// `link_degraded` (false) or `link_limited` (true).
    Link(Kind, bool),
    Health(Kind, usize),
    HealthSettings,
    Sms,
}

/// The families of one scrape, in exposition order.
fn plan(families: Families, health: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    for k in Kind::BOTH {
        if families.has(Group::State) {
            steps.push(Step::Info(k));
        }
        for (g, list) in [
            (Group::Data, DATA_COUNTERS),
            (Group::Errors, ERROR_COUNTERS),
        ] {
            if families.has(g) {
                steps.extend(list.iter().map(|c| Step::Counter(k, c)));
            }
        }
        if families.has(Group::Detail) {
            steps.extend((0..DETAIL_COUNTERS.len()).map(|i| Step::Detail(k, i)));
        }
        if families.has(Group::Vl) {
            steps.extend((0..VL_COUNTERS.len()).map(|i| Step::Vl(k, i)));
        }
        if families.has(Group::State) {
            steps.extend((0..STATE_GAUGES.len()).map(|i| Step::State(k, i)));
        }
        if health && families.has(Group::Health) {
            steps.push(Step::Link(k, false));
            steps.push(Step::Link(k, true));
            steps.extend((0..HEALTH_GAUGES.len()).map(|i| Step::Health(k, i)));
        }
    }
    if health && families.has(Group::Health) {
        steps.push(Step::HealthSettings);
    }
    steps.push(Step::Sms);
    steps
}

/// A cursor over the fabric part of one scrape.
pub struct Exposition {
    published: Arc<crate::fabric::Published>,
    rows: Arc<Rows>,
    steps: Vec<Step>,
    step: usize,
    /// The next row (or node, or SM) of the current step.
    pos: usize,
    /// Whether the current step's HELP and TYPE are written.
    started: bool,
    /// The current family's metric name.
    name: String,
}

impl Exposition {
    /// `rows` must be [`rows`] of `published`.
    pub fn new(
        published: Arc<crate::fabric::Published>,
        rows: Arc<Rows>,
        families: Families,
    ) -> Self {
        let health = published.extra.health.is_some();
        Exposition {
            published,
            rows,
            steps: plan(families, health),
            step: 0,
            pos: 0,
            started: false,
            name: String::new(),
        }
    }

    /// Appends samples to `out` until it holds at least `want` octets or
    /// the fabric part ends; false once it has ended.
    pub fn fill(&mut self, out: &mut String, want: usize) -> bool {
        let published = Arc::clone(&self.published);
        let rows = Arc::clone(&self.rows);
        let snap = &published.snapshot;
        let report = published.extra.health.as_deref();
        while let Some(&step) = self.steps.get(self.step) {
            if !self.started {
                self.begin(out, step);
                self.started = true;
            }
            let done = match step {
                Step::Info(k) => self.each(out, want, &snap.nodes, |out, name, n| {
                    if Kind::of(n) == k {
                        info(out, name, k, snap, n);
                    }
                }),
                Step::Counter(k, &(_, _, value)) => {
                    self.each(out, want, rows.kind(k), |out, name, r| {
                        if let Some(c) = snap.ports.get(r.port).and_then(|p| p.counters.as_ref()) {
                            sample(out, name, &r.labels, value(&c.totals));
                        }
                    })
                }
                Step::Detail(k, i) => {
                    let Some(&((_, _, value), read)) = DETAIL_COUNTERS.get(i) else {
                        break;
                    };
                    self.each(out, want, rows.kind(k), |out, name, r| {
                        if let Some(c) = snap.ports.get(r.port).and_then(|p| p.counters.as_ref()) {
                            if read(&c.readings) {
                                sample(out, name, &r.labels, value(&c.totals));
                            }
                        }
                    })
                }
                Step::Vl(k, i) => {
                    let Some(&(_, _, vls, unit)) = VL_COUNTERS.get(i) else {
                        break;
                    };
                    self.each(out, want, rows.kind(k), |out, name, r| {
                        let Some(c) = snap.ports.get(r.port).and_then(|p| p.counters.as_ref())
                        else {
                            return;
                        };
                        let counts = vls(&c.totals);
                        if counts.is_present() {
                            for (vl, v) in counts.to_array().iter().enumerate() {
                                sample_vl(out, name, &r.labels, vl, v.wrapping_mul(unit));
                            }
                        }
                    })
                }
                Step::State(k, i) => {
                    let Some(&(_, _, value)) = STATE_GAUGES.get(i) else {
                        break;
                    };
                    self.each(out, want, rows.kind(k), |out, name, r| {
                        if let Some(p) = snap.ports.get(r.port) {
                            sample(out, name, &r.labels, value(snap, p));
                        }
                    })
                }
                Step::Link(k, limited) => self.each(out, want, rows.kind(k), |out, name, r| {
                    if let Some(h) = health_of(report, r).filter(|h| h.active) {
                        let finding = if limited { &h.limited } else { &h.degraded };
                        below(out, name, &r.labels, finding.as_ref());
                    }
                }),
                Step::Health(k, i) => {
                    let Some(&(_, _, value)) = HEALTH_GAUGES.get(i) else {
                        break;
                    };
                    self.each(out, want, rows.kind(k), |out, name, r| {
                        if let Some(v) = health_of(report, r).and_then(value) {
                            let _ = writeln!(out, "{name}{{{}}} {v}", r.labels);
                        }
                    })
                }
                Step::HealthSettings => {
                    if let Some(r) = report {
                        health_settings(out, r);
                    }
                    true
                }
                Step::Sms => self.each(out, want, &snap.sms, |out, name, sm| {
                    let node = sm
                        .port
                        .and_then(|p| snap.port(p))
                        .and_then(|p| snap.node(p.node));
                    let _ = writeln!(
                        out,
                        "{name}{{guid=\"{}\",lid=\"{}\",node=\"{}\",priority=\"{}\"}} {}",
                        sm.info.guid,
                        sm.lid.0,
                        esc(node.map_or("", |n| n.description.as_str())),
                        sm.info.priority,
                        sm.info.sm_state
                    );
                }),
            };
            if done {
                self.step += 1;
                self.pos = 0;
                self.started = false;
            }
            if out.len() >= want {
                return self.step < self.steps.len();
            }
        }
        false
    }

    /// Writes a step's HELP and TYPE and remembers its metric name.
    fn begin(&mut self, out: &mut String, step: Step) {
        self.name.clear();
        let Some((name, help, counter)) = describe(step) else {
            // HealthSettings: two families of their own, written whole.
            return;
        };
        let family = if counter {
            Family::counter(&name, help)
        } else {
            Family::gauge(&name, help)
        };
        header(out, &family);
        self.name = name;
    }

    /// Writes `items` from the cursor on until `out` is full; true when the
    /// step has no more.
    fn each<T>(
        &mut self,
        out: &mut String,
        want: usize,
        items: &[T],
        mut write: impl FnMut(&mut String, &str, &T),
    ) -> bool {
        let name = std::mem::take(&mut self.name);
        while let Some(item) = items.get(self.pos) {
            if out.len() >= want {
                break;
            }
            write(out, &name, item);
            self.pos += 1;
        }
        self.name = name;
        self.pos >= items.len()
    }
}

/// A step's metric name, help and whether it is a counter.
fn describe(step: Step) -> Option<(String, &'static str, bool)> {
    let port = |k: Kind, suffix: &str| format!("infiniband_{}_port_{suffix}", k.name());
    Some(match step {
        Step::Info(k) => (
            format!("infiniband_{}_info", k.name()),
            match k {
                Kind::Switch => "Each switch in the fabric (value 1)",
                Kind::Hca => "Each hca in the fabric (value 1)",
            },
            false,
        ),
        Step::Counter(k, &(suffix, help, _)) => (port(k, suffix), help, true),
        Step::Detail(k, i) => {
            let ((suffix, help, _), _) = DETAIL_COUNTERS.get(i)?;
            (port(k, suffix), *help, true)
        }
        Step::Vl(k, i) => {
            let (suffix, help, _, _) = VL_COUNTERS.get(i)?;
            (port(k, suffix), *help, true)
        }
        Step::State(k, i) => {
            let (suffix, help, _) = STATE_GAUGES.get(i)?;
            (port(k, suffix), *help, false)
        }
        Step::Link(k, false) => (
            port(k, "link_degraded"),
            "1: the active link trained below the width or speed both ends support and enable, a fault (labels: actual and expected)",
            false,
        ),
        Step::Link(k, true) => (
            port(k, "link_limited"),
            "1: both ends enable less width or speed than both support and the active link runs below that, a configuration as iblinkinfo's Could be (labels: actual and supported)",
            false,
        ),
        Step::Health(k, i) => {
            let (suffix, help, _) = HEALTH_GAUGES.get(i)?;
            (port(k, suffix), *help, false)
        }
        Step::HealthSettings => return None,
        Step::Sms => (
            "infiniband_sm_state".into(),
            "SMState of each Subnet Manager: 0 notActive (not answering), 1 discovering, 2 standby, 3 master",
            false,
        ),
    })
}

/// One sample, `name{labels} value`, written piece by piece: at millions
/// of samples a scrape, `write!`'s formatting machinery cost more than the
/// text itself.
fn sample(out: &mut String, name: &str, labels: &str, value: u64) {
    out.push_str(name);
    out.push('{');
    out.push_str(labels);
    out.push_str("} ");
    out.push_str(itoa::Buffer::new().format(value));
    out.push('\n');
}

/// One sample of a per-VL family: the port's labels and `vl`.
fn sample_vl(out: &mut String, name: &str, labels: &str, vl: usize, value: u64) {
    out.push_str(name);
    out.push('{');
    out.push_str(labels);
    out.push_str(",vl=\"");
    out.push_str(itoa::Buffer::new().format(vl));
    out.push_str("\"} ");
    out.push_str(itoa::Buffer::new().format(value));
    out.push('\n');
}

fn health_of<'a>(report: Option<&'a HealthReport>, r: &Row) -> Option<&'a PortHealth> {
    report?.ports.get(r.health? as usize)
}

/// `infiniband_<kind>_info` of one node: a switch's LID is port 0's, a
/// CA's its first port's with a LID.
fn info(out: &mut String, name: &str, k: Kind, snap: &Snapshot, node: &Node) {
    let lid = snap
        .ports
        .get(node.ports.start as usize..node.ports.end as usize)
        .unwrap_or(&[])
        .iter()
        .map(|p| p.info.lid.0)
        .find(|&l| l != 0)
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "{name}{{guid=\"{}\",{}=\"{}\",lid=\"{lid}\"}} 1",
        node.info.node_guid,
        k.name(),
        esc(&node.description)
    );
}

/// A `link_degraded` or `link_limited` sample: 1 with the actual and
/// expected width and speed as labels, else 0.
fn below(out: &mut String, name: &str, labels: &str, finding: Option<&Degraded>) {
    match finding {
        Some(d) => {
            let _ = writeln!(
                out,
                "{name}{{{labels},width=\"{}\",expected_width=\"{}\",speed=\"{}\",expected_speed=\"{}\"}} 1",
                d.width, d.expected_width, d.speed, d.expected_speed
            );
        }
        None => {
            let _ = writeln!(out, "{name}{{{labels}}} 0");
        }
    }
}

/// The health window and thresholds in force, so alert rules compare with
/// the agent's own settings (`[health]`), and the fabric-wide finding
/// NO_MASTER_SM.
fn health_settings(out: &mut String, r: &HealthReport) {
    let c = &r.config;
    header(
        out,
        &Family::gauge(
            "infiniband_health_window_seconds",
            "The window health rates and flap counts are taken over ([health] window)",
        ),
    );
    let _ = writeln!(
        out,
        "infiniband_health_window_seconds {}",
        c.window.as_secs_f64()
    );
    header(
        out,
        &Family::gauge(
            "infiniband_health_no_master_sm",
            "1: no master Subnet Manager answers (NO_MASTER_SM)",
        ),
    );
    let _ = writeln!(
        out,
        "infiniband_health_no_master_sm {}",
        u8::from(r.no_master_sm)
    );
    header(out, &Family::gauge("infiniband_health_threshold", "The [health] thresholds: above max_symbol_ber, max_link_recovery_per_hour or max_xmit_wait_ratio, or at flap_count, a port is unhealthy"));
    for (check, v) in [
        ("max_symbol_ber", c.max_symbol_ber),
        ("max_link_recovery_per_hour", c.max_link_recovery_per_hour),
        ("flap_count", c.flap_count as f64),
        ("max_xmit_wait_ratio", c.max_xmit_wait_ratio),
    ] {
        let _ = writeln!(out, "infiniband_health_threshold{{check=\"{check}\"}} {v}");
    }
}
