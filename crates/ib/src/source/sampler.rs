//! PortSamplesControl / PortSamplesResult in software (IBA 16.1.3.2-16.1.3.4).
//!
//! Many PMAs (ibsim's, most current HCAs') do not implement the sampling
//! attributes: the MAD fails. For those the agent runs the same state machine
//! itself over PortCounters / PortCountersExtended readings:
//!
//! - a Set is accepted while SampleStatus is 0 (sampling complete), or from
//!   the run's owner (same Tag: a restart); otherwise it is ignored and the
//!   answer carries the current values, so the requester sees someone else's
//!   Tag (IBA's Tag collision rule);
//! - an accepted Set zeroes the result counters, sets SampleStatus 1 and
//!   loads the SampleStart timer; when it expires the selected quantities are
//!   read (the baseline), SampleStatus becomes 2 and the SampleInterval timer
//!   runs; when that expires they are read again, each ResultCounter becomes
//!   the difference and SampleStatus returns to 0;
//! - timers count Ticks: Tick 0xFF (2,560 link transfer periods of a 2.5 Gb/s
//!   lane, 400 ps each: 1.024 us), so SampleStart/SampleInterval are in units
//!   of 1.024 us; CounterWidth is 32 bits.
//!
//! The state machine is pure: the owner (a source) passes the time and a
//! function reading the current quantities of a port, and calls
//! [`Sampler::advance`] at [`Sampler::deadline`] (reading late only stretches
//! the interval: the readings carry when they were taken).
//!
//! Quantities implemented: the mandatory ones, CounterSelect 0x0001
//! PortXmitData, 0x0002 PortRcvData, 0x0003 PortXmitPkts, 0x0004 PortRcvPkts,
//! 0x0005 PortXmitWait. Any other selection reads as zero (as IBA prescribes
//! for an unimplemented quantity).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use tracing::{debug, info};

use crate::mad::pma::{sample_select, sample_status, PortSamplesControl, PortSamplesResult};
use crate::model::{PortReadings, Sampling, Snapshot};
use crate::source::sample_run::SampleRun;
use crate::source::{ControlOp, ControlReply, Source, SourceError};
use crate::types::{Guid, PortNum};

/// The Tick a software sampler reports: 0xFF = 2,560 link transfer periods.
pub const SOFTWARE_TICK: u8 = 0xFF;
/// CounterWidth encoding 4 = 32-bit SampleStart, SampleInterval and results.
pub const COUNTER_WIDTH_32: u8 = 4;
/// CounterMask bit 0: all mandatory quantities supported.
const MASK_MANDATORY: u8 = 1;

/// Length of one Tick: (Tick + 1) x 10 link transfer periods of a 2.5 Gb/s
/// lane (400 ps), i.e. (Tick + 1) x 4 ns.
pub fn tick_duration(tick: u8) -> Duration {
    Duration::from_nanos((u64::from(tick) + 1) * 4)
}

/// `ticks` Ticks of length `tick`.
pub fn ticks(tick: u8, ticks: u32) -> Duration {
    Duration::from_nanos((u64::from(tick) + 1) * 4 * u64::from(ticks))
}

/// The mandatory sample quantities of one port (or of all ports added up)
/// at one instant, as cumulative counts (data in 4-octet words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Quantities {
    pub xmit_data: u64,
    pub rcv_data: u64,
    pub xmit_pkts: u64,
    pub rcv_pkts: u64,
    pub xmit_wait: u64,
}

impl Quantities {
    /// From one PMA reading: the 64-bit PortCountersExtended where the PMA
    /// has them, else the 32-bit PortCounters.
    pub fn from_readings(r: &PortReadings) -> Self {
        let c = &r.counters;
        match &r.extended {
            Some(x) => Quantities {
                xmit_data: x.port_xmit_data,
                rcv_data: x.port_rcv_data,
                xmit_pkts: x.port_xmit_pkts,
                rcv_pkts: x.port_rcv_pkts,
                // PortXmitWait of the extended attribute is valid only with
                // IsExtendedWidthSupported; the 32-bit one always is.
                xmit_wait: u64::from(c.port_xmit_wait).max(x.port_xmit_wait),
            },
            None => Quantities {
                xmit_data: u64::from(c.port_xmit_data),
                rcv_data: u64::from(c.port_rcv_data),
                xmit_pkts: u64::from(c.port_xmit_pkts),
                rcv_pkts: u64::from(c.port_rcv_pkts),
                xmit_wait: u64::from(c.port_xmit_wait),
            },
        }
    }

    /// The quantity a CounterSelect value names (None: not implemented).
    pub fn get(&self, select: u16) -> Option<u64> {
        match select {
            sample_select::PORT_XMIT_DATA => Some(self.xmit_data),
            sample_select::PORT_RCV_DATA => Some(self.rcv_data),
            sample_select::PORT_XMIT_PKTS => Some(self.xmit_pkts),
            sample_select::PORT_RCV_PKTS => Some(self.rcv_pkts),
            sample_select::PORT_XMIT_WAIT => Some(self.xmit_wait),
            _ => None,
        }
    }
}

/// Sum over several ports (PortSelect 0xFF).
impl std::ops::Add for Quantities {
    type Output = Quantities;
    fn add(self, o: Quantities) -> Quantities {
        Quantities {
            xmit_data: self.xmit_data.wrapping_add(o.xmit_data),
            rcv_data: self.rcv_data.wrapping_add(o.rcv_data),
            xmit_pkts: self.xmit_pkts.wrapping_add(o.xmit_pkts),
            rcv_pkts: self.rcv_pkts.wrapping_add(o.rcv_pkts),
            xmit_wait: self.xmit_wait.wrapping_add(o.xmit_wait),
        }
    }
}

/// What a completed run measured (for the log).
#[derive(Debug, Clone, PartialEq)]
pub struct Completed {
    /// The interval actually covered by the two readings.
    pub measured: Duration,
    /// The interval the requester asked for.
    pub requested: Duration,
}

/// One PMA's software sampling mechanism.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampler {
    run: SampleRun<Instant>,
    result: PortSamplesResult,
    /// A run whose results are still to be read.
    pending: bool,
    /// The baseline: when it was read and what (once the start timer ran out).
    base: Option<(Instant, Option<Quantities>)>,
}

impl Default for Sampler {
    fn default() -> Self {
        Self::new()
    }
}

impl Sampler {
    /// An idle sampler: SampleStatus 0, Tick 0xFF, 32-bit counters, the
    /// mandatory quantities on all 15 counters, one mechanism.
    pub fn new() -> Self {
        let mut control = PortSamplesControl {
            tick: SOFTWARE_TICK,
            counter_width: COUNTER_WIDTH_32,
            sample_status: sample_status::DONE,
            port_select: 1,
            ..PortSamplesControl::default()
        };
        for i in 0..15 {
            control.set_counter_mask(i, MASK_MANDATORY);
        }
        Sampler {
            run: SampleRun::new(control),
            result: PortSamplesResult::default(),
            pending: false,
            base: None,
        }
    }

    pub fn control(&self) -> &PortSamplesControl {
        self.run.control()
    }

    pub fn result(&self) -> &PortSamplesResult {
        &self.result
    }

    /// The state as the snapshot carries it.
    pub fn sampling(&self) -> Sampling {
        Sampling {
            control: self.control().clone(),
            result: self.result.clone(),
        }
    }

    /// SampleStatus now (0, 1 or 2).
    pub fn status(&self) -> u8 {
        self.control().sample_status
    }

    /// When [`Sampler::advance`] must next run (None: nothing pending).
    pub fn deadline(&self) -> Option<Instant> {
        let (start, end) = self.run.window().filter(|_| self.pending)?;
        Some(if self.base.is_none() { start } else { end })
    }

    /// Set(PortSamplesControl). Returns the answer (the attribute after the
    /// Set) and whether the Set was accepted: while a run with another Tag
    /// is in progress (SampleStatus 1 or 2) it is ignored and the answer
    /// shows the current run, Tag included. `read` gives the port's quantities now; it is
    /// called when SampleStart is 0 (sampling starts at once).
    pub fn set<F>(
        &mut self,
        req: &PortSamplesControl,
        now: Instant,
        read: F,
    ) -> (PortSamplesControl, bool)
    where
        F: FnMut(u8) -> Option<Quantities>,
    {
        self.advance(now, read_none);
        let tick = self.control().tick;
        if !self.run.set(req, now, |t, n| t + ticks(tick, n)) {
            return (self.control().clone(), false);
        }
        self.result = PortSamplesResult {
            tag: req.tag,
            ..PortSamplesResult::default()
        };
        self.pending = true;
        self.base = None;
        self.set_status(sample_status::STARTED);
        self.advance(now, read);
        (self.control().clone(), true)
    }

    fn set_status(&mut self, s: u8) {
        self.run.control_mut().sample_status = s;
        self.result.sample_status = s;
    }

    /// Runs the timers up to `now`: takes the baseline when SampleStart
    /// expires and the results when SampleInterval does. Returns the run
    /// that completed, if one did.
    pub fn advance<F>(&mut self, now: Instant, mut read: F) -> Option<Completed>
    where
        F: FnMut(u8) -> Option<Quantities>,
    {
        if !self.pending || self.run.status(now) == sample_status::STARTED {
            return None;
        }
        let port_select = self.control().port_select;
        let (started, base) = *self.base.get_or_insert_with(|| (now, read(port_select)));
        self.set_status(sample_status::RUNNING);
        if self.run.status(now) == sample_status::RUNNING {
            return None;
        }
        let end = read(port_select);
        let selects = self.control().counter_select;
        for (i, sel) in selects.iter().enumerate() {
            let v = match (base, end) {
                (Some(b), Some(e)) => match (b.get(*sel), e.get(*sel)) {
                    (Some(b), Some(e)) => e.saturating_sub(b),
                    _ => 0,
                },
                _ => 0,
            };
            if let Some(slot) = self.result.counter.get_mut(i) {
                *slot = u32::try_from(v).unwrap_or(u32::MAX);
            }
        }
        self.pending = false;
        self.set_status(sample_status::DONE);
        let requested = ticks(self.control().tick, self.control().sample_interval);
        Some(Completed {
            measured: now.saturating_duration_since(started),
            requested,
        })
    }
}

fn read_none(_: u8) -> Option<Quantities> {
    None
}

/// Software samplers of every node whose PMA lacks PortSamplesControl,
/// keyed by node GUID: what a source keeps between sweeps.
#[derive(Debug, Clone, Default)]
pub struct Samplers {
    by_node: HashMap<Guid, Sampler>,
}

impl Samplers {
    pub fn new() -> Self {
        Self::default()
    }

    /// The node's sampler, created idle on first use.
    pub fn node(&mut self, g: Guid) -> &mut Sampler {
        self.by_node.entry(g).or_default()
    }

    /// The node's sampling state for the snapshot (idle when never used).
    pub fn sampling(&self, g: Guid) -> Sampling {
        self.by_node
            .get(&g)
            .map(Sampler::sampling)
            .unwrap_or_else(|| Sampler::new().sampling())
    }

    /// The earliest deadline of any node.
    pub fn deadline(&self) -> Option<Instant> {
        self.by_node.values().filter_map(Sampler::deadline).min()
    }

    /// Advances every node due by `now`; `read(node, port_select)` reads
    /// quantities. Returns the nodes whose state changed (to republish),
    /// with the completed runs.
    pub fn advance<F>(&mut self, now: Instant, mut read: F) -> Vec<(Guid, Option<Completed>)>
    where
        F: FnMut(Guid, u8) -> Option<Quantities>,
    {
        let mut changed = Vec::new();
        for (g, s) in self.by_node.iter_mut() {
            if s.deadline().is_some_and(|d| d <= now) {
                let before = s.status();
                let done = s.advance(now, |p| read(*g, p));
                if s.status() != before {
                    changed.push((*g, done));
                }
            }
        }
        changed
    }

    /// Drops nodes no longer in the fabric.
    pub fn retain(&mut self, mut keep: impl FnMut(Guid) -> bool) {
        self.by_node.retain(|g, _| keep(*g));
    }
}

/// A source whose PMAs may lack PortSamplesControl: Set(PortSamplesControl)
/// goes to the PMA first; when the PMA refuses it (an error status: the
/// attribute is not implemented, as on ibsim and many HCAs) the node is
/// sampled in software from then on, over live Get(PortCounters) of the
/// selected port, and its snapshot rows show the software sampler's state.
pub struct SoftSampling<S> {
    inner: S,
    samplers: Samplers,
    soft: HashSet<Guid>,
}

impl<S: Source> SoftSampling<S> {
    pub fn new(inner: S) -> Self {
        SoftSampling {
            inner,
            samplers: Samplers::new(),
            soft: HashSet::new(),
        }
    }

    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Whether `g` is sampled in software.
    pub fn is_soft(&self, g: Guid) -> bool {
        self.soft.contains(&g)
    }

    fn read(inner: &mut S, node: Guid, port: u8) -> Option<Quantities> {
        match inner.control(ControlOp::GetPortCounters {
            node,
            port: PortNum(port),
        }) {
            Ok(ControlReply::PortCounters(c)) => Some(Quantities::from_readings(&PortReadings {
                counters: c,
                ..PortReadings::default()
            })),
            Ok(_) => None,
            Err(e) => {
                debug!(node = %node, port, error = %e, "software sampling: PortCounters read failed; zeros");
                None
            }
        }
    }

    /// Runs the software samplers due by now; true when one changed state.
    fn run_due(&mut self) -> bool {
        let now = Instant::now();
        let inner = &mut self.inner;
        let changed = self.samplers.advance(now, |g, p| Self::read(inner, g, p));
        for (g, done) in &changed {
            if let Some(c) = done {
                info!(
                    node = %g,
                    requested_ms = c.requested.as_millis() as u64,
                    measured_ms = c.measured.as_millis() as u64,
                    "software sampling run complete"
                );
            }
        }
        !changed.is_empty()
    }

    fn set_soft(&mut self, node: Guid, control: &PortSamplesControl) -> ControlReply {
        let inner = &mut self.inner;
        let (answer, accepted) = self
            .samplers
            .node(node)
            .set(control, Instant::now(), |p| Self::read(inner, node, p));
        if accepted {
            info!(
                node = %node,
                tag = control.tag,
                port = control.port_select,
                start_ticks = control.sample_start,
                interval_ticks = control.sample_interval,
                "software sampling run started"
            );
        }
        ControlReply::PortSamplesControl(answer)
    }
}

impl<S: Source> Source for SoftSampling<S> {
    fn sweep(&mut self) -> Result<Snapshot, SourceError> {
        self.run_due();
        let mut snap = self.inner.sweep()?;
        if !self.soft.is_empty() {
            let present: HashSet<Guid> = snap.nodes.iter().map(|n| n.info.node_guid).collect();
            self.soft.retain(|g| present.contains(g));
            self.samplers.retain(|g| present.contains(&g));
            for n in snap.nodes.iter_mut() {
                if self.soft.contains(&n.info.node_guid) {
                    n.sampling = Some(Box::new(self.samplers.sampling(n.info.node_guid)));
                }
            }
        }
        Ok(snap)
    }

    fn control(&mut self, op: ControlOp) -> Result<ControlReply, SourceError> {
        match op {
            ControlOp::SetPortSamplesControl { node, control } if self.soft.contains(&node) => {
                Ok(self.set_soft(node, &control))
            }
            ControlOp::SetPortSamplesControl { node, control } => {
                let op = ControlOp::SetPortSamplesControl {
                    node,
                    control: control.clone(),
                };
                match self.inner.control(op) {
                    // The PMA answered with an error status, or did not
                    // answer this attribute while it answers PortCounters
                    // (ibsim drops it): no sampling there.
                    Err(SourceError::Unsupported(reason)) => {
                        Ok(self.fall_back(node, &control, &reason))
                    }
                    Err(SourceError::Fabric(reason))
                        if Self::read(&mut self.inner, node, control.port_select).is_some()
                            || Self::read(&mut self.inner, node, 1).is_some() =>
                    {
                        Ok(self.fall_back(node, &control, &reason))
                    }
                    other => other,
                }
            }
            other => self.inner.control(other),
        }
    }

    fn wake_at(&self) -> Option<Instant> {
        match (self.samplers.deadline(), self.inner.wake_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn wake(&mut self) -> bool {
        // Both run: neither's timers wait on the other's.
        let ours = self.run_due();
        self.inner.wake() || ours
    }

    fn demand(&self) -> Option<std::sync::Arc<crate::source::demand::Demand>> {
        self.inner.demand()
    }
}

impl<S: Source> SoftSampling<S> {
    fn fall_back(
        &mut self,
        node: Guid,
        control: &PortSamplesControl,
        reason: &str,
    ) -> ControlReply {
        info!(
            node = %node,
            %reason,
            "PMA does not implement PortSamplesControl: sampling this node in \
             software over PortCounters (IB-PM-MIB pmPortSampleCntrlTable)"
        );
        self.soft.insert(node);
        self.set_soft(node, control)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(x: u64) -> Quantities {
        Quantities {
            xmit_data: 10 * x,
            rcv_data: 20 * x,
            xmit_pkts: x,
            rcv_pkts: 2 * x,
            xmit_wait: 3 * x,
        }
    }

    fn req(start: u32, interval: u32, tag: u16) -> PortSamplesControl {
        let mut c = PortSamplesControl {
            port_select: 1,
            sample_start: start,
            sample_interval: interval,
            tag,
            ..PortSamplesControl::default()
        };
        c.counter_select[0] = sample_select::PORT_XMIT_DATA;
        c.counter_select[1] = sample_select::PORT_RCV_DATA;
        c.counter_select[2] = sample_select::PORT_XMIT_PKTS;
        c.counter_select[3] = sample_select::PORT_RCV_PKTS;
        c.counter_select[4] = sample_select::PORT_XMIT_WAIT;
        c.counter_select[5] = 0x0123; // not implemented: reads 0
        c
    }

    #[test]
    fn tick_lengths() {
        assert_eq!(tick_duration(0), Duration::from_nanos(4));
        assert_eq!(tick_duration(0xFF), Duration::from_nanos(1024));
        assert_eq!(ticks(0xFF, 1_000_000), Duration::from_micros(1_024_000));
    }

    #[test]
    fn status_1_2_0_and_deltas() {
        let t0 = Instant::now();
        let mut s = Sampler::new();
        assert_eq!(s.status(), 0);
        assert_eq!(s.control().tick, SOFTWARE_TICK);
        assert_eq!(s.control().counter_mask(14), 1);
        // Start after 1000 ticks, sample for 10,000.
        let (ans, ok) = s.set(&req(1000, 10_000, 0xBEEF), t0, |_| Some(q(1)));
        assert!(ok);
        assert_eq!(ans.sample_status, 1);
        assert_eq!(ans.tag, 0xBEEF);
        assert_eq!(s.result().tag, 0xBEEF);
        let start_at = t0 + ticks(0xFF, 1000);
        assert_eq!(s.deadline(), Some(start_at));
        assert!(s
            .advance(start_at - Duration::from_nanos(1), |_| Some(q(2)))
            .is_none());
        assert_eq!(s.status(), 1);
        assert!(s.advance(start_at, |_| Some(q(5))).is_none());
        assert_eq!(s.status(), 2);
        assert_eq!(s.result().sample_status, 2);
        let end_at = start_at + ticks(0xFF, 10_000);
        assert_eq!(s.deadline(), Some(end_at));
        let done = s.advance(end_at, |p| {
            assert_eq!(p, 1);
            Some(q(12))
        });
        assert!(done.is_some());
        assert_eq!(s.status(), 0);
        assert_eq!(s.result().sample_status, 0);
        assert_eq!(&s.result().counter[..6], &[70, 140, 7, 14, 21, 0]);
        assert_eq!(s.deadline(), None);
    }

    #[test]
    fn tag_collision_rule() {
        let t0 = Instant::now();
        let mut s = Sampler::new();
        let (_, ok) = s.set(&req(0, 1_000_000, 1), t0, |_| Some(q(1)));
        assert!(ok);
        assert_eq!(s.status(), 2, "SampleStart 0 starts at once");
        // Another application's Set while sampling: ignored, shows tag 1.
        let (ans, ok) = s.set(&req(0, 5, 2), t0 + Duration::from_millis(1), |_| Some(q(1)));
        assert!(!ok);
        assert_eq!(ans.tag, 1);
        assert_eq!(ans.sample_interval, 1_000_000);
        // The owner (same Tag) may restart its run.
        let (ans, ok) = s.set(&req(0, 1_000_000, 1), t0 + Duration::from_millis(2), |_| {
            Some(q(1))
        });
        assert!(ok);
        assert_eq!(ans.sample_status, 2);
        // After completion a new Set is accepted.
        let later = t0 + Duration::from_secs(2);
        s.advance(later, |_| Some(q(3)));
        assert_eq!(s.status(), 0);
        let (ans, ok) = s.set(&req(0, 5, 2), later, |_| Some(q(3)));
        assert!(ok);
        assert_eq!(ans.tag, 2);
    }

    #[test]
    fn missing_port_gives_zeros_and_saturates() {
        let t0 = Instant::now();
        let mut s = Sampler::new();
        s.set(&req(0, 1, 7), t0, |_| None);
        s.advance(t0 + Duration::from_secs(1), |_| Some(q(9)));
        assert_eq!(s.status(), 0);
        assert!(s.result().counter.iter().all(|&c| c == 0));
        let mut s = Sampler::new();
        s.set(&req(0, 1, 7), t0, |_| Some(q(0)));
        s.advance(t0 + Duration::from_secs(1), |_| Some(q(1 << 40)));
        assert_eq!(s.result().counter[0], u32::MAX);
    }

    #[test]
    fn samplers_by_node() {
        let t0 = Instant::now();
        let mut all = Samplers::new();
        let g = Guid(0x10);
        assert_eq!(all.sampling(g).control.sample_status, 0);
        all.node(g).set(&req(10, 10, 3), t0, |_| Some(q(0)));
        assert!(all.deadline().is_some());
        let changed = all.advance(t0 + Duration::from_secs(1), |_, _| Some(q(1)));
        // Both timers expired in one late call: a run of zero length.
        assert_eq!(changed.len(), 1);
        assert_eq!(all.sampling(g).control.sample_status, 0);
        assert!(all.deadline().is_none());
    }
}
