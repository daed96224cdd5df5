//! PMA polling of every port, pipelined: ClassPortInfo once per node (cached across
//! sweeps) to learn whether PortCountersExtended is there and which of its fields are
//! filled, then PortCounters, plus PortCountersExtended and the detail attributes, for
//! each port, each through the LID of the PMA that owns it ([`Target`]). Counters are
//! never reset here unless `reset_threshold` asks for it on PMAs without extended
//! counters.
//!
//! A switch whose PMA sums all its ports (AllPortSelect) is first asked for that sum:
//! when no error counter of the sum moved since the last sweep, no port's did (they
//! only grow, and a sum that stops at all ones is never trusted), so the ports'
//! PortCounters of the last sweep still hold and only PortCountersExtended (data and
//! packets, 64-bit) is read per port. One MAD per switch instead of one per port on
//! a quiet fabric; any movement reads the switch's ports in full in the same sweep.
//! The 32-bit data and packet counters of those ports are then the fresh 64-bit
//! ones saturated at 2^32 - 1, as a PMA's PortCounters shows them ([`narrow_data`]),
//! on every sweep alike: never last sweep's PortCounters beside this sweep's
//! PortCountersExtended.
//!
//! A switch's ports without a link ([`Target::idle`]) are read too (its PMA
//! answers for them; errors from before the link went down stay there): when
//! first seen, on full sweeps, and when the switch's sum moved. Between, their
//! last reading stands, sent no MAD: nothing but a PMA Set or a link coming
//! back moves them, and the sum, where asked, says no error counter did.
//!
//! Detail attributes are read for the ports someone serves them for: the local
//! node's (IF-MIB, IB-IF-MIB) and, in `remote_details`, the others'. Those that
//! break down a PortCounters counter ([`detail::FOLLOW_SUMMARY`]) are read when
//! it moved or stands at its maximum: otherwise they did not move either and the
//! last reading is this sweep's value. The traffic ones ([`detail::TRAFFIC`]),
//! which nothing summarises, are read every sweep. Every `detail_every`-th sweep
//! reads all of them, and every port's PortCounters, regardless.

use std::collections::HashMap;

use super::req::{self, GET, SET};
use super::spread::Slice;
use super::transport::{Request, Transport, TxError};
use crate::mad::header::{status as header_status, status_text};
use crate::mad::pma::{
    attr, cap, counter_select, ClassPortInfo, PortCounters, PortCountersExtended,
    PortFlowCtlCounters, PortRcvErrorDetails, PortVlOpData, PortVlOpPackets,
    PortVlXmitWaitCounters, PortXmitDiscardDetails,
};
use crate::mad::port_counters::PORT_COUNTERS;
use crate::model::{ExtendedFields, PortReadings};
use crate::types::Guid;

/// Detail attributes polled besides PortCounters(Extended), as bits of a
/// mask (the model's: a port's counter state says which are current).
pub use crate::model::counters::detail;

const DETAILS: [(u8, u16); 6] = [
    (detail::RCV_ERROR_DETAILS, attr::PORT_RCV_ERROR_DETAILS),
    (
        detail::XMIT_DISCARD_DETAILS,
        attr::PORT_XMIT_DISCARD_DETAILS,
    ),
    (detail::FLOW_CTL, attr::PORT_FLOW_CTL_COUNTERS),
    (detail::VL_OP_PACKETS, attr::PORT_VL_OP_PACKETS),
    (detail::VL_OP_DATA, attr::PORT_VL_OP_DATA),
    (detail::VL_XMIT_WAIT, attr::PORT_VL_XMIT_WAIT_COUNTERS),
];

/// PMA polling options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PmaOptions {
    /// Detail attributes to poll (mask of [`detail`] bits); 0 polls only the
    /// counters. All of them are wanted for the local node's ports (IF-MIB and
    /// IB-IF-MIB serve them), read as below.
    pub details: u8,
    /// Which of `details` are read for the other nodes' ports: only what a
    /// consumer serves for them (the daemon's opt-in metrics families `detail`
    /// and `vl`; dumps read all). Default none. Those in
    /// [`detail::FOLLOW_SUMMARY`] are read when their summary counter moved or
    /// stands at its maximum, those in [`detail::TRAFFIC`] every sweep.
    pub remote_details: u8,
    /// Every `detail_every`-th sweep reads every port in full: PortCounters of
    /// each port (no switch sum standing for them) and every wanted detail
    /// attribute (the local node's, `remote_details` for the others), moved or
    /// not (a PMA whose details move without their summary). 1: every sweep.
    pub detail_every: u32,
    /// Read PortCountersExtended where the PMA has it (default true); false halves the
    /// MADs and leaves the 64-bit totals to the accumulation of the 32-bit counters.
    pub extended: bool,
    /// Reset a PMA's 32-bit data/packet counters once one passes this fraction of its
    /// range (e.g. 0.75) - only on PMAs without PortCountersExtended. None: never reset.
    pub reset_threshold: Option<f64>,
    /// Ask switches with AllPortSelect for the sum of their ports first and read
    /// their ports' PortCounters only when an error counter of the sum moved (see
    /// the module docs). Default true.
    pub switch_sums: bool,
}

impl Default for PmaOptions {
    fn default() -> Self {
        PmaOptions {
            details: detail::ALL,
            remote_details: 0,
            detail_every: 30,
            extended: true,
            reset_threshold: None,
            switch_sums: true,
        }
    }
}

/// What a node's PMA supports, from its ClassPortInfo (cached across sweeps) and
/// from "method/attribute not supported" answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PmaCaps {
    pub class_port_info: Option<ClassPortInfo>,
    pub capability_mask: u16,
    pub extended: bool,
    /// Which PortCountersExtended fields the PMA fills.
    pub extended_fields: ExtendedFields,
    /// Detail attributes the PMA said it does not support (MAD status
    /// "method not supported" or "method/attribute not supported"): not asked
    /// again. Any other error is about that one request and changes nothing here.
    pub unsupported: u8,
}

impl PmaCaps {
    fn from_class_port_info(cpi: ClassPortInfo) -> Self {
        PmaCaps {
            capability_mask: cpi.capability_mask,
            extended: cpi.supports_extended_counters(),
            extended_fields: ExtendedFields::from_caps(cpi.capability_mask, cpi.capability_mask2),
            unsupported: 0,
            class_port_info: Some(cpi),
        }
    }
}

/// Whether a MAD status says the attribute itself is not implemented by this agent
/// (IBA 13.4.7: invalid-field codes 2 and 3), as opposed to a bad value in one request.
pub fn status_means_unsupported(status: u16) -> bool {
    matches!(
        status & header_status::INVALID_FIELD_MASK,
        header_status::METHOD_NOT_SUPPORTED | header_status::METHOD_ATTRIBUTE_NOT_SUPPORTED
    )
}

/// One PMA to poll: the LID its MADs go to and the ports asked through it. A switch
/// has one PMA for all its ports (port 0's LID); an HCA port's PMA is reached through
/// that port's own LID (as perfquery does): a PortSelect of another port sent there
/// fails, or on some HCAs answers for the wrong port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub node: Guid,
    pub lid: u16,
    pub ports: Vec<u8>,
    /// A switch's ports without a link: its PMA answers for them (errors from
    /// before the link went down stay there), but nothing moves their
    /// counters but a PMA Set or a link coming back. Read on full sweeps
    /// (`detail_every`), when first seen, and when the switch's sum moved;
    /// between, their last reading stands ([`Schedule::idle`]).
    pub idle: Vec<u8>,
}

impl Target {
    /// Every port asked through this target, linked or not.
    pub fn all_ports(&self) -> impl Iterator<Item = u8> + '_ {
        self.ports.iter().chain(&self.idle).copied()
    }
}

/// One port's raw readings of this sweep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PortSample {
    /// What the PMA answered; `readings.counters` is meaningful only when
    /// `counters_read` (PortCounters is mandatory, but its query may fail).
    pub readings: PortReadings,
    /// PortCounters answered and decoded this sweep.
    pub counters_read: bool,
    /// This sweep reset the 32-bit counters after reading them (reset_threshold).
    pub reset_after_read: bool,
}

impl PortSample {
    /// The readings, when PortCounters was read.
    pub fn readings(&self) -> Option<&PortReadings> {
        self.counters_read.then_some(&self.readings)
    }
}

/// One PMA query that failed for good this sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmaFailure {
    pub node: Guid,
    pub lid: u16,
    /// The port asked for (None: ClassPortInfo).
    pub port: Option<u8>,
    pub attr: u16,
    pub error: TxError,
}

impl PmaFailure {
    /// What distinguishes one cause from another in logs: the attribute and the
    /// kind of error, not the node (one cause often hits many nodes).
    pub fn cause(&self) -> String {
        let kind = match &self.error {
            TxError::Status(s) => format!("status {s:#06x} ({})", status_text(*s)),
            TxError::Timeout(_) => "no answer".to_string(),
            TxError::Send(e) => format!("send failed: {e}"),
        };
        format!("{}: {kind}", attr_name(self.attr))
    }
}

/// The result of one PMA sweep.
#[derive(Debug, Clone, Default)]
pub struct PmaSweep {
    pub samples: HashMap<(Guid, u8), PortSample>,
    /// Every query that failed for good, in the order seen.
    pub failed: Vec<PmaFailure>,
    /// MADs answered.
    pub answered: u64,
    /// Each switch's PortCounters summed over its ports (PortSelect 0xFF), where asked.
    pub sums: HashMap<Guid, PortCounters>,
    /// Ports whose PortCounters this sweep took from the last sweep, the switch's sum
    /// having shown no change.
    pub unchanged_ports: u64,
    /// The ports of this sweep without a link ([`Target::idle`]), read or standing.
    pub idle: std::collections::HashSet<(Guid, u8)>,
}

impl PmaSweep {
    /// Adds another pass of the same sweep (ports the first did not ask).
    pub fn merge(&mut self, other: PmaSweep) {
        self.samples.extend(other.samples);
        self.failed.extend(other.failed);
        self.answered += other.answered;
        self.sums.extend(other.sums);
        self.unchanged_ports += other.unchanged_ports;
        self.idle.extend(other.idle);
    }

    pub fn failures(&self) -> u64 {
        self.failed.len() as u64
    }

    /// Ports asked for whose PortCounters did not come back this sweep.
    pub fn unreached_ports(&self) -> impl Iterator<Item = (Guid, u8)> + '_ {
        self.failed
            .iter()
            .filter(|f| f.attr == attr::PORT_COUNTERS || f.attr == attr::CLASS_PORT_INFO)
            .filter_map(|f| f.port.map(|p| (f.node, p)))
    }

    /// [`PmaSweep::unreached_ports`] that have a link: a PMA that does not
    /// answer for them says something about the topology; one that refuses a
    /// port without a link does not.
    pub fn unreached_linked(&self) -> impl Iterator<Item = (Guid, u8)> + '_ {
        self.unreached_ports().filter(|k| !self.idle.contains(k))
    }
}

/// The IBA name of a PMA attribute, for logs and counts.
pub fn attr_name(a: u16) -> &'static str {
    match a {
        attr::CLASS_PORT_INFO => "ClassPortInfo",
        attr::PORT_COUNTERS => "PortCounters",
        attr::PORT_COUNTERS_EXTENDED => "PortCountersExtended",
        attr::PORT_RCV_ERROR_DETAILS => "PortRcvErrorDetails",
        attr::PORT_XMIT_DISCARD_DETAILS => "PortXmitDiscardDetails",
        attr::PORT_FLOW_CTL_COUNTERS => "PortFlowCtlCounters",
        attr::PORT_VL_OP_PACKETS => "PortVLOpPackets",
        attr::PORT_VL_OP_DATA => "PortVLOpData",
        attr::PORT_VL_XMIT_WAIT_COUNTERS => "PortVLXmitWaitCounters",
        attr::PORT_SAMPLES_CONTROL => "PortSamplesControl",
        attr::PORT_SAMPLES_RESULT => "PortSamplesResult",
        _ => "PMA attribute",
    }
}

#[derive(Debug, Clone, Copy)]
enum Q {
    ClassPortInfo(usize),
    /// PortCounters summed over all ports of a switch (PortSelect 0xFF); `decide`:
    /// the ports' PortCounters wait for it, else it is only kept for the next sweep.
    Sum {
        target: usize,
        decide: bool,
    },
    Attr {
        target: usize,
        port: u8,
        attr: u16,
    },
    Reset,
}

/// The PortSelect-carrying data of a PMA Get for `port`.
fn select(port: u8) -> [u8; 4] {
    [0, port, 0, 0]
}

/// The first requests for a target: the switch sum when [`sum_first`] says so (then
/// PortCountersExtended per port), else PortCounters (and Extended) per port.
fn port_requests(
    t: &Target,
    i: usize,
    caps: &PmaCaps,
    opts: &PmaOptions,
    schedule: &Schedule<'_>,
) -> Vec<(Q, Request)> {
    let extended = caps.extended && opts.extended;
    let sum = sum_first(t, caps, opts, schedule);
    let mut v = Vec::new();
    if sums_usable(t, caps, opts) {
        let q = Q::Sum {
            target: i,
            decide: sum,
        };
        v.push((
            q,
            req::pma(GET, attr::PORT_COUNTERS, 0, t.lid, &select(ALL_PORTS)),
        ));
    }
    for &p in &t.ports {
        if !sum {
            v.push(attr_request(t, i, p, attr::PORT_COUNTERS));
        }
        if extended {
            v.push(attr_request(t, i, p, attr::PORT_COUNTERS_EXTENDED));
        }
    }
    let standing = idle_standing(t, schedule);
    for &p in t.idle.iter().filter(|p| !standing.contains(p)) {
        v.extend(idle_read(t, i, p, extended));
    }
    v
}

/// After a switch's sum moved (or failed): PortCounters of its linked ports
/// (their PortCountersExtended is asked already), and of the ports without a
/// link whose last reading waited for the sum, with their PortCountersExtended.
fn read_ports_in_full(
    t: &Target,
    i: usize,
    caps: Option<&PmaCaps>,
    schedule: &Schedule<'_>,
) -> Vec<(Q, Request)> {
    let extended = caps.is_some_and(|c| c.extended);
    let mut v: Vec<(Q, Request)> = t
        .ports
        .iter()
        .map(|&p| attr_request(t, i, p, attr::PORT_COUNTERS))
        .collect();
    for p in idle_standing(t, schedule) {
        v.extend(idle_read(t, i, p, extended));
    }
    v
}

/// [`port_requests`], and the last readings of the ports without a link that
/// stand without waiting for a sum.
fn first_requests(
    out: &mut PmaSweep,
    t: &Target,
    i: usize,
    caps: &PmaCaps,
    opts: &PmaOptions,
    schedule: &Schedule<'_>,
) -> Vec<(Q, Request)> {
    if !sum_first(t, caps, opts, schedule) {
        stand_idle(out, t, &idle_standing(t, schedule), schedule);
    }
    port_requests(t, i, caps, opts, schedule)
}

/// The requests that read a port without a link: PortCounters and, where the PMA
/// has it, PortCountersExtended.
fn idle_read(t: &Target, i: usize, port: u8, extended: bool) -> Vec<(Q, Request)> {
    let mut v = vec![attr_request(t, i, port, attr::PORT_COUNTERS)];
    if extended {
        v.push(attr_request(t, i, port, attr::PORT_COUNTERS_EXTENDED));
    }
    v
}

/// The ports of `t` without a link whose last reading may stand this sweep: not a
/// full sweep, and read before. Whether it does stands or falls with the
/// switch's sum where that is asked first ([`sum_first`]); else it stands.
fn idle_standing(t: &Target, schedule: &Schedule<'_>) -> Vec<u8> {
    if schedule.full_for(t.node) {
        return Vec::new();
    }
    let Some(last) = schedule.idle else {
        return Vec::new();
    };
    t.idle
        .iter()
        .copied()
        .filter(|&p| last.contains_key(&(t.node, p)))
        .collect()
}

/// Stands the last readings of `ports` (ports without a link, see [`Target::idle`]).
fn stand_idle(out: &mut PmaSweep, t: &Target, ports: &[u8], schedule: &Schedule<'_>) {
    let Some(last) = schedule.idle else {
        return;
    };
    for &p in ports {
        if let Some(r) = last.get(&(t.node, p)) {
            out.samples.insert(
                (t.node, p),
                PortSample {
                    readings: r.clone(),
                    counters_read: true,
                    reset_after_read: false,
                },
            );
        }
    }
}

/// PortSelect that sums all ports (PMAs with AllPortSelect).
const ALL_PORTS: u8 = 0xFF;

/// Whether a target's sum can stand for its ports: a switch (several ports) whose PMA
/// has AllPortSelect and 64-bit data counters (the 32-bit ones in PortCounters would
/// go stale), with no counter resets of our own.
fn sums_usable(t: &Target, caps: &PmaCaps, opts: &PmaOptions) -> bool {
    opts.switch_sums
        && t.ports.len() > 1
        && caps.capability_mask & cap::ALL_PORT_SELECT != 0
        && caps.extended
        && opts.extended
        && opts.reset_threshold.is_none()
}

/// Whether the ports' PortCounters wait for the sum this sweep: usable, the target
/// not read in full this sweep, last sweep's sum and every port's last PortCounters
/// at hand.
fn sum_first(t: &Target, caps: &PmaCaps, opts: &PmaOptions, schedule: &Schedule<'_>) -> bool {
    sums_usable(t, caps, opts)
        && !schedule.full_for(t.node)
        && schedule.prev_sums.is_some_and(|m| m.contains_key(&t.node))
        && schedule
            .prev
            .is_some_and(|m| t.ports.iter().all(|&p| m.contains_key(&(t.node, p))))
}

/// Whether no error counter moved between two sums of a switch's ports: every
/// PortCounters field but data and packets (read 64-bit per port), plus QP1Dropped,
/// equal, and none at its maximum (a saturated sum hides movement).
pub fn sum_unchanged(prev: &PortCounters, now: &PortCounters) -> bool {
    PORT_COUNTERS
        .iter()
        .filter(|f| !f.extended)
        .all(|f| (f.get)(prev) == (f.get)(now) && (f.get)(now) < f.max())
        && prev.qp1_dropped == now.qp1_dropped
        && now.qp1_dropped < u16::MAX
}

fn attr_request(t: &Target, i: usize, port: u8, a: u16) -> (Q, Request) {
    (
        Q::Attr {
            target: i,
            port,
            attr: a,
        },
        req::pma(GET, a, 0, t.lid, &select(port)),
    )
}

/// Which detail attributes (mask of [`detail`] bits) may have moved for a port
/// after its PortCounters answer: all of them when `every` (the periodic full
/// read) or for a port seen for the first time, else the traffic ones
/// and those whose summary counter moved or stands at its maximum (where it
/// no longer shows movement). The caller masks what it wants.
pub fn details_due(prev: Option<&PortCounters>, now: &PortCounters, every: bool) -> u8 {
    match prev.filter(|_| !every) {
        Some(p) => crate::model::counters::details_moved(p, now),
        None => detail::ALL,
    }
}

/// The detail attributes wanted for the ports of `node` (see [`PmaOptions`]),
/// those consumers ask for included ([`Schedule::asked`]).
fn wanted(opts: &PmaOptions, schedule: &Schedule<'_>, node: Guid) -> u8 {
    if schedule.local == Some(node) {
        opts.details
    } else if schedule.counters_only {
        0
    } else {
        opts.details & (opts.remote_details | schedule.asked_of(node))
    }
}

/// The detail attributes read every sweep for the ports of `node`,
/// whatever their summary counters did: the traffic ones, and those a
/// consumer asks for now (it serves them only when current, and a reading
/// is current from the sweep that reads it; a few nodes at a time).
fn always_due(schedule: &Schedule<'_>, node: Guid) -> u8 {
    detail::TRAFFIC | schedule.asked_of(node)
}

/// Requests for the detail attributes of `due` the node's PMA has not refused.
fn detail_requests(t: &Target, i: usize, port: u8, due: u8, unsupported: u8) -> Vec<(Q, Request)> {
    DETAILS
        .iter()
        .filter(|(bit, _)| due & bit != 0 && unsupported & bit == 0)
        .map(|&(_, a)| attr_request(t, i, port, a))
        .collect()
}

/// What the previous sweep read, for deciding which detail attributes are due.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schedule<'a> {
    /// The detail attributes consumers ask of nodes' ports now
    /// ([`crate::source::demand::Demand::live`]).
    pub asked: Option<&'a HashMap<Guid, u8>>,
    /// PortCounters of each port at the previous sweep.
    pub prev: Option<&'a HashMap<(Guid, u8), PortCounters>>,
    /// The local node: every detail attribute of `details` is wanted for
    /// its ports (IF-MIB and IB-IF-MIB serve them), from the first sweep on.
    pub local: Option<Guid>,
    /// This sweep reads every port in full (the sweep after a quick start).
    pub full: bool,
    /// The nodes whose ports this sweep reads in full (`detail_every`: each
    /// node's turn comes once every `detail_every` sweeps, a slice a sweep).
    pub full_slice: Option<Slice>,
    /// Each switch's PortCounters sum at the previous sweep ([`PmaSweep::sums`]).
    pub prev_sums: Option<&'a HashMap<Guid, PortCounters>>,
    /// No detail attribute for ports other than the local node's this sweep
    /// (the cold first sweep: counters first, details in the next).
    pub counters_only: bool,
    /// The last readings of the switch ports without a link ([`Target::idle`]):
    /// they stand on a sweep that is not full, unless the switch's sum moved.
    pub idle: Option<&'a HashMap<(Guid, u8), PortReadings>>,
}

impl Schedule<'_> {
    /// What consumers ask of `node`'s ports now.
    pub fn asked_of(&self, node: Guid) -> u8 {
        self.asked.and_then(|a| a.get(&node)).copied().unwrap_or(0)
    }

    /// Whether `node`'s ports are read in full this sweep.
    pub fn full_for(&self, node: Guid) -> bool {
        self.full || self.full_slice.is_some_and(|s| s.covers(node.0))
    }
}

/// Polls every target port. `caps` is the per-node cache kept by the source.
pub fn sweep(
    tr: &mut Transport,
    targets: &[Target],
    caps: &mut HashMap<Guid, PmaCaps>,
    opts: PmaOptions,
    schedule: Schedule<'_>,
) -> PmaSweep {
    let mut poll = Poll {
        targets,
        caps,
        opts,
        schedule,
        out: PmaSweep::default(),
        resets: Vec::new(),
    };
    let initial = poll.initial();
    tr.pipeline(initial, |q, r| poll.answer(q, r));
    poll.narrow_summed_ports();
    let Poll {
        mut out,
        resets,
        caps,
        ..
    } = poll;
    // What each PMA said it does not have goes with its ports' readings:
    // a consumer then knows such a value is missing for good, not stale.
    for ((node, _), s) in &mut out.samples {
        s.readings.lacking = caps.get(node).map_or(0, |c| c.unsupported);
    }
    if !resets.is_empty() {
        let reqs = resets
            .into_iter()
            .map(|(lid, port, mask)| (Q::Reset, counter_reset(lid, port, mask)));
        tr.pipeline(reqs, |_, r| {
            if let Err(e) = r {
                tracing::warn!("PMA counter reset failed: {e}");
            }
            Vec::new()
        });
    }
    out
}

/// One sweep's PMA polling: each answer decides the next requests.
struct Poll<'a, 's> {
    targets: &'a [Target],
    caps: &'a mut HashMap<Guid, PmaCaps>,
    opts: PmaOptions,
    schedule: Schedule<'s>,
    out: PmaSweep,
    /// Counter resets (LID, port, CounterSelect) sent after the polling.
    resets: Vec<(u16, u8, u16)>,
}

impl Poll<'_, '_> {
    /// ClassPortInfo for a PMA not met before, else its first requests.
    fn initial(&mut self) -> Vec<(Q, Request)> {
        let mut initial = Vec::new();
        for (i, t) in self.targets.iter().enumerate() {
            if t.lid == 0 || (t.ports.is_empty() && t.idle.is_empty()) {
                continue;
            }
            self.out.idle.extend(t.idle.iter().map(|&p| (t.node, p)));
            match self.caps.get(&t.node) {
                Some(c) => initial.extend(first_requests(
                    &mut self.out,
                    t,
                    i,
                    c,
                    &self.opts,
                    &self.schedule,
                )),
                None => initial.push((
                    Q::ClassPortInfo(i),
                    req::pma(GET, attr::CLASS_PORT_INFO, 0, t.lid, &[]),
                )),
            }
        }
        initial
    }

    fn answer(&mut self, q: Q, r: Result<Vec<u8>, TxError>) -> Vec<(Q, Request)> {
        match (q, r) {
            (Q::ClassPortInfo(i), Ok(mad)) => self.on_class_port_info(i, &mad),
            (Q::ClassPortInfo(i), Err(e)) => {
                self.on_class_port_info_failed(i, e);
                Vec::new()
            }
            (Q::Sum { target, decide }, Ok(mad)) => self.on_sum(target, decide, &mad),
            (Q::Sum { decide: false, .. }, Err(_)) => Vec::new(),
            (Q::Sum { target, .. }, Err(e)) => {
                // Not a failure of any port: read them one by one.
                tracing::debug!("PMA PortCounters sum failed: {e}");
                self.targets.get(target).map_or_else(Vec::new, |t| {
                    read_ports_in_full(t, target, self.caps.get(&t.node), &self.schedule)
                })
            }
            (Q::Attr { target, port, attr }, Ok(mad)) => self.on_attr(target, port, attr, &mad),
            (Q::Attr { target, port, attr }, Err(e)) => {
                self.on_attr_failed(target, port, attr, e);
                Vec::new()
            }
            (Q::Reset, Ok(_)) => {
                self.out.answered += 1;
                Vec::new()
            }
            (Q::Reset, Err(e)) => {
                tracing::warn!("PMA counter reset failed: {e}");
                Vec::new()
            }
        }
    }

    fn on_class_port_info(&mut self, i: usize, mad: &[u8]) -> Vec<(Q, Request)> {
        self.out.answered += 1;
        let Some(t) = self.targets.get(i) else {
            return Vec::new();
        };
        // Every PMA of a node (one per HCA port) is the same implementation:
        // the first answer stands for all.
        let c = self.caps.entry(t.node).or_insert_with(|| {
            ClassPortInfo::decode(req::pma_data(mad))
                .map(PmaCaps::from_class_port_info)
                .unwrap_or_default()
        });
        first_requests(&mut self.out, t, i, c, &self.opts, &self.schedule)
    }

    /// No ClassPortInfo: none of this PMA's ports is read this sweep.
    fn on_class_port_info_failed(&mut self, i: usize, e: TxError) {
        let Some(t) = self.targets.get(i) else {
            return;
        };
        for p in t.all_ports() {
            self.out.failed.push(PmaFailure {
                node: t.node,
                lid: t.lid,
                port: Some(p),
                attr: attr::CLASS_PORT_INFO,
                error: e.clone(),
            });
        }
    }

    fn on_sum(&mut self, i: usize, decide: bool, mad: &[u8]) -> Vec<(Q, Request)> {
        self.out.answered += 1;
        let Some(t) = self.targets.get(i) else {
            return Vec::new();
        };
        let now = PortCounters::decode(req::pma_data(mad)).ok();
        if !decide {
            self.out.sums.extend(now.map(|c| (t.node, c)));
            return Vec::new();
        }
        let prev = self.schedule.prev_sums.and_then(|m| m.get(&t.node));
        match (now, prev) {
            (Some(now), Some(prev)) if sum_unchanged(prev, &now) => {
                self.out.sums.insert(t.node, now);
                self.stand_ports(t, i)
            }
            (now, _) => {
                if let Some(now) = now {
                    self.out.sums.insert(t.node, now);
                }
                read_ports_in_full(t, i, self.caps.get(&t.node), &self.schedule)
            }
        }
    }

    /// No port's counters moved: last sweep's readings stand, and the details
    /// that follow them; traffic ones are read.
    fn stand_ports(&mut self, t: &Target, i: usize) -> Vec<(Q, Request)> {
        let due = wanted(&self.opts, &self.schedule, t.node) & always_due(&self.schedule, t.node);
        let unsupported = self.caps.get(&t.node).map_or(0, |c| c.unsupported);
        let mut next = Vec::new();
        for &p in &t.ports {
            if let Some(c) = self.schedule.prev.and_then(|m| m.get(&(t.node, p))) {
                let s = self.out.samples.entry((t.node, p)).or_default();
                s.readings.counters = c.clone();
                s.counters_read = true;
                self.out.unchanged_ports += 1;
                next.extend(detail_requests(t, i, p, due, unsupported));
            } else {
                next.push(attr_request(t, i, p, attr::PORT_COUNTERS));
            }
        }
        // The sum covers the ports without a link too.
        stand_idle(
            &mut self.out,
            t,
            &idle_standing(t, &self.schedule),
            &self.schedule,
        );
        next
    }

    fn on_attr(&mut self, target: usize, port: u8, a: u16, mad: &[u8]) -> Vec<(Q, Request)> {
        self.out.answered += 1;
        let Some(t) = self.targets.get(target) else {
            return Vec::new();
        };
        let caps = self.caps.get(&t.node);
        let fields = caps.map(|c| c.extended_fields).unwrap_or_default();
        let s = self.out.samples.entry((t.node, port)).or_default();
        store(s, a, req::pma_data(mad), fields);
        if a != attr::PORT_COUNTERS {
            return Vec::new();
        }
        let Some(r) = s.readings() else {
            return Vec::new();
        };
        let prev = self.schedule.prev.and_then(|m| m.get(&(t.node, port)));
        let due = (details_due(prev, &r.counters, self.schedule.full_for(t.node))
            | always_due(&self.schedule, t.node))
            & wanted(&self.opts, &self.schedule, t.node);
        let unsupported = caps.map_or(0, |c| c.unsupported);
        let next = detail_requests(t, target, port, due, unsupported);
        if let Some(th) = self.opts.reset_threshold {
            let extended = caps.is_some_and(|c| c.extended);
            let mask = saturating_mask(&r.counters, th);
            if !extended && mask != 0 {
                s.reset_after_read = true;
                self.resets.push((t.lid, port, mask));
            }
        }
        next
    }

    fn on_attr_failed(&mut self, target: usize, port: u8, a: u16, e: TxError) {
        let Some(t) = self.targets.get(target) else {
            return;
        };
        if let TxError::Status(st) = e {
            let bit = DETAILS.iter().find(|(_, x)| *x == a).map(|(b, _)| *b);
            if let (Some(bit), true) = (bit, status_means_unsupported(st)) {
                self.caps.entry(t.node).or_default().unsupported |= bit;
            }
        }
        self.out.failed.push(PmaFailure {
            node: t.node,
            lid: t.lid,
            port: Some(port),
            attr: a,
            error: e,
        });
    }

    /// Ports of switches read through sums: 32-bit data and packets from the 64-bit.
    fn narrow_summed_ports(&mut self) {
        for t in self.targets {
            if !self
                .caps
                .get(&t.node)
                .is_some_and(|c| sums_usable(t, c, &self.opts))
            {
                continue;
            }
            for p in t.all_ports() {
                if let Some(s) = self.out.samples.get_mut(&(t.node, p)) {
                    narrow_data(&mut s.readings);
                }
            }
        }
    }
}

/// PortCounters' 32-bit PortXmitData, PortRcvData, PortXmitPkts and PortRcvPkts from
/// the same readings' PortCountersExtended (when read), each saturated at
/// 0xFFFFFFFF as a PMA's 32-bit counter stops there.
pub fn narrow_data(r: &mut PortReadings) {
    let Some(e) = &r.extended else {
        return;
    };
    let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let c = &mut r.counters;
    c.port_xmit_data = sat(e.port_xmit_data);
    c.port_rcv_data = sat(e.port_rcv_data);
    c.port_xmit_pkts = sat(e.port_xmit_pkts);
    c.port_rcv_pkts = sat(e.port_rcv_pkts);
}

fn store(s: &mut PortSample, a: u16, data: &[u8], fields: ExtendedFields) {
    let r = &mut s.readings;
    match a {
        attr::PORT_COUNTERS => match PortCounters::decode(data) {
            Ok(c) => {
                r.counters = c;
                s.counters_read = true;
            }
            Err(_) => s.counters_read = false,
        },
        attr::PORT_COUNTERS_EXTENDED => {
            r.extended = PortCountersExtended::decode(data).ok().map(|mut e| {
                fields.sanitize(&mut e);
                e
            });
            r.extended_fields = fields;
        }
        attr::PORT_RCV_ERROR_DETAILS => {
            r.rcv_error_details = PortRcvErrorDetails::decode(data).ok()
        }
        attr::PORT_XMIT_DISCARD_DETAILS => {
            r.xmit_discard_details = PortXmitDiscardDetails::decode(data).ok()
        }
        attr::PORT_FLOW_CTL_COUNTERS => r.flow_ctl = PortFlowCtlCounters::decode(data).ok(),
        attr::PORT_VL_OP_PACKETS => r.vl_op_packets = PortVlOpPackets::decode(data).ok(),
        attr::PORT_VL_OP_DATA => r.vl_op_data = PortVlOpData::decode(data).ok(),
        attr::PORT_VL_XMIT_WAIT_COUNTERS => {
            r.vl_xmit_wait = PortVlXmitWaitCounters::decode(data).ok()
        }
        _ => {}
    }
}

/// CounterSelect bits of the 32-bit data/packet counters past `threshold` of their range.
fn saturating_mask(pc: &PortCounters, threshold: f64) -> u16 {
    let limit = (f64::from(u32::MAX) * threshold.clamp(0.0, 1.0)) as u64;
    let mut m = 0;
    for (v, bit) in [
        (pc.port_xmit_data, counter_select::PORT_XMIT_DATA),
        (pc.port_rcv_data, counter_select::PORT_RCV_DATA),
        (pc.port_xmit_pkts, counter_select::PORT_XMIT_PKTS),
        (pc.port_rcv_pkts, counter_select::PORT_RCV_PKTS),
    ] {
        if u64::from(v) >= limit {
            m |= bit;
        }
    }
    m
}

/// A PMA Set(PortCounters) that clears the counters selected by `mask` on `port`.
pub fn counter_reset(lid: u16, port: u8, mask: u16) -> Request {
    let pc = PortCounters {
        port_select: port,
        counter_select: mask,
        ..PortCounters::default()
    };
    let mut data = [0u8; PortCounters::LEN];
    let _ = pc.encode(&mut data);
    req::pma(SET, attr::PORT_COUNTERS, 0, lid, &data)
}

#[cfg(test)]
mod tests;
