//! `UmadSource`: one sweep = DR-SMP discovery, SA queries, PMA polling, assembled into a
//! snapshot whose counters continue from the previous one (events come from
//! diffing them, by whoever publishes them). Steady sweeps reuse the last
//! topology until [`super::watch`] sees a sign of change; the first sweep
//! leaves details and tables to the second (`quick_start`).
//!
//! Failure policy:
//! - an incomplete discovery (SMPs unanswered after retries) never becomes the
//!   topology: a partial one would report nodes as removed that are only unreachable
//!   for a moment. The sweep polls the PMAs of the last complete topology instead, so
//!   counters stay fresh for everything still reachable (a lossy local link must not
//!   freeze the whole fabric); with no topology yet, the sweep fails;
//! - SA failures (dead or busy SM) keep the last good SA answers (groups, services,
//!   partitions, GUIDs), counted and logged once, and the SM's return is logged once;
//!   the SMs themselves are then asked for SMInfo at their ports (LID-routed SMP): one
//!   that does not answer reads notActive, its ActCount not current
//!   ([`crate::model::SmRecord::answering`]);
//! - PMA failures make those ports' counters absent from the snapshot (their
//!   last reading cannot be current; the totals go on when the PMA answers
//!   again), counted per node and attribute and logged per distinct cause
//!   ([`super::faults`]).

mod control;

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use super::assemble;
use super::discover::{discover, DiscoverOptions, Discovered};
use super::faults::PmaFaults;
use super::ffi::{self, PortAttrs, UmadError};
use super::pma::{self, PmaCaps, PmaOptions};
use super::sa::{self, SaView};
use super::spread::{self, Slice};
use super::transport::{Transport, TransportConfig, TransportStats, TxError};
use super::verify;
use super::watch::{self, Trigger};
use crate::mad::pma::PortSamplesControl;
use crate::mad::sa::SmInfoRecord;
use crate::model::{CounterHistory, Snapshot};
use crate::types::{Gid, Guid};
use control::Addresses;

/// Options of the umad source (all have working defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct UmadOptions {
    pub transport: TransportConfig,
    /// SM_Key presented to the SA to read partition tables as a trusted requester
    /// (OpenSM's default is 0x1). None: partitions are not read.
    pub sm_key: Option<u64>,
    /// M_Key carried by the SMPs that set attributes (Set(PortInfo)); 0 by
    /// default, which ports without M_Key protection accept.
    pub m_key: u64,
    pub pma: PmaOptions,
    /// Read switch linear forwarding tables.
    pub lft: bool,
    /// Subscribe to traps (InformInfo) at the SM. Reports are acknowledged, logged and
    /// make the next sweep rediscover; events still come from diffing sweeps (ibsim
    /// accepts the subscription but never delivers Reports). Off by default.
    pub subscribe_traps: bool,
    /// Every node's part of the topology is checked again once every Nth
    /// sweep, a slice of the nodes each sweep ([`super::verify`]), for what
    /// nothing else shows. Sweeps poll the PMAs of the last topology and
    /// discover only when something says it changed (a slice's check,
    /// [`super::watch`]: a watched PortInfo, LinkDownedCounter, a PMA that
    /// does not answer, SA Reports), in the same sweep. 1 discovers every
    /// sweep.
    pub topology_every: u32,
    /// The first sweep publishes as soon as the topology and every port's
    /// PortCounters(Extended) are in; detail attributes of other nodes' ports,
    /// forwarding tables and per-port SA tables follow in the next sweep
    /// (absent until then). Default true; one-shot dumps turn it off.
    pub quick_start: bool,
    /// Switch forwarding tables and P_Key tables are read again, all of them,
    /// when a discovery sees a changed subnet (nodes, ports, LIDs, links, port
    /// states, the master SM's LID) or our own partitions change; and each
    /// one once every `tables_every` sweeps (default 30, like
    /// `topology_every`: an SM's rerouting or partition change that nothing
    /// else shows), a `tables_every`-th of the switches and end ports each
    /// sweep ([`super::spread`]). 1 reads them every sweep.
    pub tables_every: u32,
    /// Where the sysfs libibumad reads is mounted, as the agent reads it to
    /// say what is missing when the source cannot open (libibumad itself
    /// always reads /sys): `/` but in tests.
    pub sysfs_root: std::path::PathBuf,
}

impl Default for UmadOptions {
    fn default() -> Self {
        UmadOptions {
            transport: TransportConfig {
                retries: 3,
                ..TransportConfig::default()
            },
            sm_key: Some(0x1),
            m_key: 0,
            pma: PmaOptions::default(),
            lft: true,
            subscribe_traps: false,
            topology_every: 30,
            quick_start: true,
            tables_every: 30,
            sysfs_root: std::path::PathBuf::from("/"),
        }
    }
}

/// Why a sweep produced no snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    #[error("discovery incomplete: {failures} SMP queries failed (first: {first})")]
    Discovery { failures: u64, first: String },
    #[error(transparent)]
    Umad(#[from] UmadError),
}

/// Counters of what the source did, for logs and the daemon's health view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UmadStats {
    pub sweeps: u64,
    pub failed_sweeps: u64,
    pub smp_failures: u64,
    pub sa_failures: u64,
    pub pma_failures: u64,
    /// Sweeps that reused the previous SA answers because the SM did not answer.
    pub sa_stale_sweeps: u64,
    /// SA Reports (traps) received through the subscription.
    pub reports: u64,
    /// Sweeps whose discovery was incomplete and that polled the PMAs of the last
    /// complete topology instead.
    pub discovery_fallbacks: u64,
    /// Ports whose PortCounters could not be read in the last sweep.
    pub unreached_ports: u64,
    /// Complete discoveries made (the other sweeps reused the last topology).
    pub discoveries: u64,
    /// SMPs sent by the periodic checks of the topology, a slice a sweep
    /// ([`super::verify`]), and the discoveries a check triggered.
    pub check_smps: u64,
    pub check_triggers: u64,
    /// Partition table refreshes answered by one whole-fabric GetTable, and
    /// those asked per port because that answer was cut short or refused
    /// ([`sa::PKeyRead`]).
    pub pkey_whole_fabric: u64,
    pub pkey_fallbacks: u64,
    pub transport: TransportStats,
}

/// A PMA change requested through the control path.
#[derive(Debug, Clone, PartialEq)]
pub enum PmaControl {
    /// Set(PortCounters) with this CounterSelect mask: clears those counters.
    ClearCounters { mask: u16 },
    /// Set(PortSamplesControl): start/stop the PMA's sampling engine.
    SamplesControl(Box<PortSamplesControl>),
}

/// Why a control operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    #[error("node {0} is not in the last snapshot (or has no LID)")]
    UnknownNode(Guid),
    #[error("PMA did not accept the change: {0}")]
    Tx(#[from] TxError),
}

/// The real-fabric source.
pub struct UmadSource {
    port: PortAttrs,
    spec: String,
    opts: UmadOptions,
    tr: Transport,
    caps: HashMap<Guid, PmaCaps>,
    last_sa: Option<SaView>,
    /// The SMs as last seen: the SA's SMInfoRecords, or while the SA does not
    /// answer, each SM's own SMInfo; with whether it answered.
    sms: Vec<(SmInfoRecord, bool)>,
    /// The last complete discovery: reused by steady sweeps, and the
    /// fallback when a discovery is incomplete.
    last_disc: Option<Discovered>,
    /// Why the next sweep discovers, known before it starts (an incomplete
    /// discovery, Reports that came after this sweep's discovery).
    next_trigger: Option<Trigger>,
    /// The SM stopped answering (SMInfoRecord): its return is logged once.
    sa_down: bool,
    pma_faults: PmaFaults,
    /// PortCounters as the last sweep read them: detail attributes follow the
    /// summary counters that moved ([`pma::details_due`]).
    prev_counters: HashMap<(Guid, u8), crate::mad::pma::PortCounters>,
    /// Each switch's PortCounters summed over its ports at the last sweep.
    prev_sums: HashMap<Guid, crate::mad::pma::PortCounters>,
    /// The last readings of switch ports without a link ([`pma::Target::idle`]).
    prev_idle: HashMap<(Guid, u8), crate::model::PortReadings>,
    /// The subnet the last discovery saw ([`super::discover::signature`]) and its
    /// master SM's LID.
    last_signature: Option<(u64, u16)>,
    /// Every forwarding and P_Key table is due: the first sweep left them
    /// out, or a discovery saw a changed subnet.
    tables_pending: bool,
    /// This sweep's cost so far.
    cost: crate::model::SweepCost,
    /// SA answers cut short since start, and the attributes whose cut was
    /// logged (once each).
    sa_cut: u64,
    sa_cut_logged: std::collections::HashSet<&'static str>,
    /// This SA path was seen to cut a multi-packet answer (no RMPP
    /// reassembly, as under umad2sim): long tables go to the SMAs at once.
    sa_cuts_multi_packet: bool,
    /// Where the control path sends MADs, as the last sweep found them
    /// (the snapshot itself belongs to whoever publishes it).
    addresses: Addresses,
    history: CounterHistory,
    sweep_no: u64,
    stats: UmadStats,
    subscribed: bool,
    /// What consumers read of other nodes now ([`Source::demand`]).
    pub(super) demand: std::sync::Arc<crate::source::demand::Demand>,
}

/// Parses `umad[:CA[:PORT]]` into (CA, port).
pub fn parse_spec(spec: &str) -> Result<(Option<String>, Option<u8>), UmadError> {
    let mut it = spec.split(':');
    if it.next() != Some("umad") {
        return Err(UmadError::Invalid(format!(
            "{spec:?}: expected umad[:CA[:PORT]]"
        )));
    }
    let ca = it.next().filter(|s| !s.is_empty()).map(str::to_string);
    let port = match it.next().filter(|s| !s.is_empty()) {
        Some(p) => Some(p.parse::<u8>().map_err(|_| {
            UmadError::Invalid(format!("{spec:?}: port {p:?} is not a number 0-255"))
        })?),
        None => None,
    };
    if it.next().is_some() {
        return Err(UmadError::Invalid(format!(
            "{spec:?}: expected umad[:CA[:PORT]]"
        )));
    }
    Ok((ca, port))
}

/// Measures one phase of a sweep from the transport's counters.
struct Phase {
    started: Instant,
    before: TransportStats,
}

impl Phase {
    fn start(tr: &Transport) -> Phase {
        Phase {
            started: Instant::now(),
            before: tr.stats(),
        }
    }

    /// Adds this phase's cost to `total` (a phase may run in several parts).
    fn add_to(self, tr: &Transport, total: &mut crate::model::PhaseCost) {
        let now = tr.stats();
        total.duration += self.started.elapsed();
        total.sent += now.sent - self.before.sent;
        total.failed += now.failed - self.before.failed;
        total.timeouts += now.timeouts - self.before.timeouts;
    }
}

impl UmadSource {
    /// Opens the CA port (`ca`/`port`, or the first active one) and registers the agents.
    /// Fails clearly when libibumad, the CA or the port is missing.
    pub fn open(ca: Option<&str>, port: Option<u8>, opts: UmadOptions) -> Result<Self, UmadError> {
        let lib = ffi::library()?;
        let pa = lib.resolve(ca, port)?;
        let tr = Transport::open(&pa.ca, pa.port, opts.transport)?;
        tracing::info!(
            ca = %pa.ca,
            port = pa.port,
            window = tr.config().window,
            "umad source opened"
        );
        Ok(UmadSource {
            spec: format!("umad:{}:{}", pa.ca, pa.port),
            port: pa,
            opts,
            tr,
            caps: HashMap::new(),
            last_sa: None,
            sms: Vec::new(),
            last_disc: None,
            next_trigger: None,
            sa_down: false,
            pma_faults: PmaFaults::default(),
            prev_counters: HashMap::new(),
            prev_sums: HashMap::new(),
            prev_idle: HashMap::new(),
            last_signature: None,
            tables_pending: false,
            cost: crate::model::SweepCost::default(),
            sa_cut: 0,
            sa_cut_logged: std::collections::HashSet::new(),
            sa_cuts_multi_packet: false,
            addresses: Addresses::default(),
            history: CounterHistory::new(),
            sweep_no: 0,
            stats: UmadStats::default(),
            subscribed: false,
            demand: std::sync::Arc::default(),
        })
    }

    /// Opens from a `umad[:CA[:PORT]]` spec.
    pub fn open_spec(spec: &str, opts: UmadOptions) -> Result<Self, UmadError> {
        let (ca, port) = parse_spec(spec)?;
        Self::open(ca.as_deref(), port, opts)
    }

    /// `umad:CA:PORT` of the opened port.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The local port as sysfs describes it.
    pub fn local_port(&self) -> &PortAttrs {
        &self.port
    }

    pub fn stats(&self) -> UmadStats {
        let mut s = self.stats;
        s.transport = self.tr.stats();
        s
    }

    /// True once the SM accepted our trap subscriptions (`subscribe_traps`).
    pub fn is_subscribed(&self) -> bool {
        self.subscribed
    }

    /// The last snapshot was a quick first sweep's: the next sweep completes it
    /// (details, forwarding and P_Key tables).
    pub fn completing(&self) -> bool {
        self.sweep_no == 1 && self.opts.quick_start
    }

    /// PMA failures since start, per node and attribute.
    pub fn pma_faults(&self) -> &PmaFaults {
        &self.pma_faults
    }

    /// One sweep. On error no snapshot is produced and the previous one stands.
    ///
    /// A steady sweep polls the PMAs of the last topology and discovers again
    /// only when something says the topology changed ([`super::watch`]), or
    /// every `topology_every` sweeps. The first sweep (`quick_start`) reads
    /// the topology and every port's PortCounters(Extended) only; details,
    /// forwarding tables and per-port SA tables follow in the next.
    pub fn sweep(&mut self) -> Result<Snapshot, SweepError> {
        let started = Instant::now();
        let time = SystemTime::now();
        self.stats.sweeps += 1;
        self.cost = crate::model::SweepCost::default();
        let cold = self.sweep_no == 0 && self.opts.quick_start;
        let mut known = self.last_disc.take();
        let why = self.why_discover(&mut known);
        let attempted = why.is_some();
        let d = self.topology(known, why)?;
        let (mut d, pma) = self.poll_pmas(d, attempted, cold)?;
        self.keep_pma(&pma);
        self.read_tables(&mut d, cold);
        Ok(self.finish_sweep(d, &pma, started, time))
    }

    /// Why this sweep discovers the subnet, if it does: the first sweep,
    /// a trigger the last one left, every sweep when `topology_every` is 1,
    /// else what probing the known subnet and this sweep's slice of its
    /// periodic check find.
    fn why_discover(&mut self, known: &mut Option<Discovered>) -> Option<Trigger> {
        let mut why = self.next_trigger.take();
        if known.is_none() {
            why = Some(Trigger::First);
        } else if why.is_none() && self.opts.topology_every <= 1 {
            why = Some(Trigger::Periodic);
        }
        if let (None, Some(k)) = (&why, known.as_mut()) {
            let phase = Phase::start(&self.tr);
            why = watch::probe(&mut self.tr, k);
            if why.is_none() {
                // This sweep's slice of the periodic check of the topology.
                let slice = Slice::new(self.sweep_no, self.opts.topology_every);
                let checked = verify::check(&mut self.tr, k, slice);
                self.stats.check_smps += checked.sent;
                if checked.trigger.is_some() {
                    self.stats.check_triggers += 1;
                }
                why = checked.trigger;
            }
            phase.add_to(&self.tr, &mut self.cost.discovery);
        }
        why
    }

    /// Polls the PMAs of `d`; when the counters or the SA's Reports say the
    /// subnet changed and this sweep has not discovered it yet, discovers
    /// again and polls the ports that adds.
    fn poll_pmas(
        &mut self,
        mut d: Discovered,
        attempted: bool,
        cold: bool,
    ) -> Result<(Discovered, pma::PmaSweep), SweepError> {
        let targets = assemble::pma_targets(&d);
        let mut pma = self.poll(&targets, d.local, cold);
        let reports = self.tr.take_reports();
        let mut after = watch::after_pma(&pma, &self.prev_counters);
        if !reports.is_empty() {
            // A trap (port state change, GID in/out of service...): look again.
            tracing::info!(count = reports.len(), "SA Reports received");
            self.stats.reports += reports.len() as u64;
            after = after.or(Some(Trigger::Reports(reports.len())));
        }
        match after {
            // Reports may postdate this sweep's discovery: the next one looks again.
            Some(t @ Trigger::Reports(_)) if attempted => self.next_trigger = Some(t),
            Some(_) if attempted => {}
            Some(t) => {
                d = self.topology(Some(d), Some(t))?;
                // Ports the new topology has that this sweep did not ask yet.
                let more: Vec<pma::Target> = assemble::pma_targets(&d)
                    .into_iter()
                    .filter_map(|mut t| {
                        let asked = |p: &u8| {
                            targets
                                .iter()
                                .any(|o| o.node == t.node && o.all_ports().any(|q| q == *p))
                        };
                        t.ports.retain(|p| !asked(p));
                        t.idle.retain(|p| !asked(p));
                        (!t.ports.is_empty() || !t.idle.is_empty()).then_some(t)
                    })
                    .collect();
                if !more.is_empty() {
                    let extra = self.poll(&more, d.local, cold);
                    pma.merge(extra);
                }
            }
            None => {}
        }
        Ok((d, pma))
    }

    /// What the next sweep compares this one's PMA readings with, and the
    /// failures counted.
    fn keep_pma(&mut self, pma: &pma::PmaSweep) {
        self.prev_sums.clone_from(&pma.sums);
        for (k, s) in &pma.samples {
            if let Some(r) = s.readings() {
                self.prev_counters.insert(*k, r.counters.clone());
            }
        }
        // Ports without a link: what this sweep read or let stand; one that
        // failed has no reading to stand next sweep.
        self.prev_idle = pma
            .idle
            .iter()
            .filter_map(|k| Some((*k, pma.samples.get(k)?.readings()?.clone())))
            .collect();
        for k in pma.unreached_ports() {
            self.prev_idle.remove(&k);
        }
        self.stats.pma_failures += pma.failures();
        self.stats.unreached_ports = pma.unreached_ports().count() as u64;
        self.pma_faults.record(pma, Instant::now());
    }

    /// Reads the tables this sweep is due (forwarding tables, then the SA's
    /// view and the SMs' ports).
    fn read_tables(&mut self, d: &mut Discovered, cold: bool) {
        // Forwarding and P_Key tables: all after the first sweep and when a
        // discovery saw a changed subnet; else each switch's and end port's
        // periodic re-read (an SM's partition changes show nowhere else) in
        // its own sweep, a `tables_every`-th of them a sweep.
        let tables = self.tables_pending && !cold;
        let slice = (!tables && !cold).then(|| Slice::new(self.sweep_no, self.opts.tables_every));
        if self.opts.lft && (tables || slice.is_some()) {
            let phase = Phase::start(&self.tr);
            let due = |g: Guid| slice.is_none_or(|s| s.covers(g.0));
            super::discover::fetch_lfts(&mut self.tr, d, due);
            phase.add_to(&self.tr, &mut self.cost.discovery);
        }
        let mut sm_lids: Vec<u16> = self.sms.iter().map(|(r, _)| r.lid.0).collect();
        self.ask_sa(d, tables, slice);
        self.refresh_sm_ports(d, &mut sm_lids);
        if tables {
            self.tables_pending = false;
        }
    }

    /// The snapshot of this sweep; `d` becomes the known subnet.
    fn finish_sweep(
        &mut self,
        d: Discovered,
        pma: &pma::PmaSweep,
        started: Instant,
        time: SystemTime,
    ) -> Snapshot {
        let mut builder = assemble::build(&d, self.last_sa.as_ref(), Some(pma), &self.caps);
        builder.sms = assemble::sm_records(&builder, &self.sms);
        // The CA we opened is the local node (assemble::build marks it).
        if builder.local_node.is_some() {
            builder.local_ca = Some(self.port.ca.clone());
        }
        self.last_disc = Some(d);
        self.sweep_no += 1;
        self.cost.sa_answers_cut = self.sa_cut;
        let mut snap = builder.build(
            crate::model::SweepInfo {
                number: self.sweep_no,
                time,
                duration: started.elapsed(),
                source: self.spec.clone(),
                cost: self.cost,
            },
            &mut self.history,
        );
        // A port this sweep has no reading of (its PMA did not answer, or none
        // can be reached: an HCA port without a link) has no current counters:
        // absent from this snapshot, never its last reading as if live (the
        // history keeps it, so totals go on when the PMA answers again).
        let read = |g: Guid, p: u8| pma.samples.get(&(g, p)).is_some_and(|s| s.counters_read);
        let guids: Vec<Guid> = snap.nodes.iter().map(|n| n.info.node_guid).collect();
        for p in snap.ports.iter_mut() {
            let g = guids.get(p.node as usize).copied().unwrap_or(Guid(0));
            if !read(g, p.num.0) {
                p.counters = None;
            }
        }
        self.addresses = Addresses::of(&snap);
        snap
    }

    /// The topology a sweep works on: discovered now when there is a reason
    /// (`why`), else the last one. An incomplete discovery falls back on the
    /// last complete one and the next sweep discovers again; with none, the
    /// sweep fails.
    fn topology(
        &mut self,
        known: Option<Discovered>,
        why: Option<Trigger>,
    ) -> Result<Discovered, SweepError> {
        let (known, why) = match (known, why) {
            (Some(d), None) => return Ok(d),
            (known, why) => (known, why.unwrap_or(Trigger::First)),
        };
        tracing::debug!(%why, "discovering the subnet");
        match self.discover_subnet(known.as_ref()) {
            Ok(d) => {
                self.stats.discoveries += 1;
                Ok(d)
            }
            Err(e) => {
                let Some(d) = known else {
                    self.stats.failed_sweeps += 1;
                    tracing::warn!("umad sweep failed: {e}");
                    return Err(e);
                };
                // Keep counters fresh for what is still reachable; discover again
                // next sweep.
                self.stats.discovery_fallbacks += 1;
                tracing::warn!("{e}: polling the PMAs of the last complete topology");
                self.next_trigger = Some(Trigger::Incomplete);
                Ok(d)
            }
        }
    }

    /// One PMA pass over `targets` with this sweep's schedule.
    fn poll(&mut self, targets: &[pma::Target], local: Guid, cold: bool) -> pma::PmaSweep {
        let n = self.sweep_no;
        let asked = self.demand.live();
        if !asked.is_empty() {
            tracing::debug!(
                nodes = asked.len(),
                "PMA sweep: detail attributes asked by consumers"
            );
        }
        let schedule = pma::Schedule {
            asked: Some(&asked),
            prev: Some(&self.prev_counters),
            local: Some(local),
            // The first sweep reads all; the sweep after a quick start reads
            // the details it left out.
            full: n == 0 || (n == 1 && self.opts.quick_start),
            // Then each node's periodic full read in its own sweep.
            full_slice: Some(Slice::new(n, self.opts.pma.detail_every)),
            prev_sums: Some(&self.prev_sums),
            counters_only: cold,
            idle: Some(&self.prev_idle),
        };
        let phase = Phase::start(&self.tr);
        let out = pma::sweep(
            &mut self.tr,
            targets,
            &mut self.caps,
            self.opts.pma,
            schedule,
        );
        phase.add_to(&self.tr, &mut self.cost.pma);
        out
    }

    /// Discovery by SMPs; fails when incomplete. Forwarding tables are kept
    /// from `prev` for an unchanged subnet; a changed one (nodes, ports, LIDs,
    /// links, port states, the master SM's LID) makes them and the P_Key tables
    /// due (`tables_pending`).
    fn discover_subnet(&mut self, prev: Option<&Discovered>) -> Result<Discovered, SweepError> {
        let phase = Phase::start(&self.tr);
        let mut d = discover(&mut self.tr, DiscoverOptions { lft: false });
        self.stats.smp_failures += d.failures;
        if d.failures > 0 || d.nodes.is_empty() {
            phase.add_to(&self.tr, &mut self.cost.discovery);
            let first = d
                .errors
                .first()
                .cloned()
                .unwrap_or_else(|| "no answer".into());
            return Err(SweepError::Discovery {
                failures: d.failures.max(1),
                first,
            });
        }
        let sm_lid = d
            .local_port
            .as_ref()
            .map(|p| p.master_sm_lid.0)
            .unwrap_or(0);
        let sig = (super::discover::signature(&d), sm_lid);
        if prev.is_none() || self.last_sa.is_none() || self.last_signature != Some(sig) {
            self.tables_pending = true;
        }
        self.last_signature = Some(sig);
        if let (true, Some(p)) = (self.opts.lft, prev) {
            for (g, n) in d.nodes.iter_mut() {
                let Some(si) = n.switch_info.as_ref().filter(|si| si.linear_fdb_top > 0) else {
                    continue;
                };
                let len = usize::from(si.linear_fdb_top) + 1;
                match p.nodes.get(g).filter(|o| o.lft.len() == len) {
                    Some(old) => n.lft.clone_from(&old.lft),
                    None => self.tables_pending = true,
                }
            }
        }
        phase.add_to(&self.tr, &mut self.cost.discovery);
        Ok(d)
    }

    /// The SA's view, every sweep: SMs, multicast groups, services, and the
    /// local node's P_Key tables and GUIDInfo; every end port's when `tables`,
    /// else those of this sweep's `slice` too.
    /// Failed queries keep the last answers.
    fn ask_sa(&mut self, d: &Discovered, tables: bool, slice: Option<Slice>) {
        let phase = Phase::start(&self.tr);
        let sm_lid = d
            .local_port
            .as_ref()
            .map(|p| p.master_sm_lid.0)
            .unwrap_or(0);
        let sa_view = if sm_lid == 0 {
            tracing::debug!("no master SM LID known: SA not queried");
            None
        } else {
            Some(self.query_sa(d, sm_lid, tables, slice))
        };
        // A dead SM (SMInfoRecord unanswered) keeps the last good SA answers, but
        // the SMs say for themselves whether they still run (their SMInfo SMPs
        // count as SA cost: what it takes to know the SMs).
        let sa_ok = sa_view
            .as_ref()
            .is_some_and(|v| v.errors.iter().all(|e| !e.starts_with("SMInfoRecord")));
        match sa_view.as_ref().filter(|_| sa_ok) {
            Some(v) => self.sms = v.sms.iter().map(|r| (r.clone(), true)).collect(),
            None => self.sms = self.probe_sms(sm_lid),
        }
        phase.add_to(&self.tr, &mut self.cost.sa);
        self.settle_sa(sm_lid, sa_view, sa_ok);
    }

    /// One sweep's SA queries: the end ports' tables due (see [`sa_end_ports`]),
    /// what failed kept from the last answers, and what the answers say
    /// about this SA path noted.
    fn query_sa(
        &mut self,
        d: &Discovered,
        sm_lid: u16,
        tables: bool,
        slice: Option<Slice>,
    ) -> sa::SaView {
        let end_ports = sa_end_ports(d, tables, slice);
        let blocks = assemble::table_blocks(d);
        let wanted = sa::Tables {
            end_ports: &end_ports,
            whole_fabric: tables,
            blocks: &blocks,
            cuts_multi_packet: self.sa_cuts_multi_packet,
        };
        let mut v = sa::query(&mut self.tr, sm_lid, self.opts.sm_key, &wanted);
        if let Some(last) = &self.last_sa {
            // A query that failed reads as the SA's last answer, not as
            // nothing (groups vanishing for a sweep would read as deleted).
            v.keep_failed_from(last);
            // Our own partitions changed: the others' may have too (a
            // partition added or removed), read them all in this sweep so
            // the subnet's partitions and our view of the groups agree.
            let moved = |k: &(u16, u8)| v.pkeys.get(k) != last.pkeys.get(k);
            if !tables && end_ports.iter().any(moved) {
                tracing::debug!("local partitions changed: reading every partition table");
                let all = assemble::end_ports(d);
                let wanted = sa::Tables {
                    end_ports: &all,
                    whole_fabric: true,
                    ..wanted
                };
                sa::tables(&mut self.tr, sm_lid, self.opts.sm_key, &wanted, &mut v);
                v.keep_failed_from(last);
            } else if !tables {
                for (k, keys) in &last.pkeys {
                    v.pkeys.entry(*k).or_insert_with(|| keys.clone());
                }
                for (lid, g) in &last.guids {
                    v.guids.entry(*lid).or_insert_with(|| g.clone());
                }
            }
        }
        self.note_sa_answer(&mut v, sm_lid);
        if self.opts.subscribe_traps && !self.subscribed && v.failures == 0 {
            let gid = Gid::new(
                d.local_port.as_ref().map(|p| p.gid_prefix).unwrap_or(0),
                Guid(self.port.port_guid),
            );
            self.subscribed = sa::subscribe(&mut self.tr, sm_lid, gid) > 0;
        }
        v
    }

    /// What one sweep's SA answers say: whether this SA path cuts
    /// multi-packet answers (umad2sim: no RMPP), how the partition tables
    /// were read, and the failures (counted, and logged).
    fn note_sa_answer(&mut self, v: &mut sa::SaView, sm_lid: u16) {
        match v.pkey_read {
            Some(sa::PKeyRead::WholeFabric) => self.sa_cuts_multi_packet = false,
            Some(sa::PKeyRead::Cut) => self.sa_cuts_multi_packet = true,
            _ if !v.cut.is_empty() => self.sa_cuts_multi_packet = true,
            _ => {}
        }
        for what in std::mem::take(&mut v.cut) {
            self.note_cut(what);
        }
        self.note_pkey_read(v.pkey_read);
        self.stats.sa_failures += v.failures;
        if v.errors.iter().any(|e| e.starts_with("SMInfoRecord")) {
            // Logged once in settle_sa ("SA not answering"), not every sweep.
            tracing::debug!(sm_lid, "SA silent this sweep");
        } else if v.failures > 0 {
            tracing::warn!(
                failures = v.failures,
                sm_lid,
                "SA queries failed: {}",
                v.errors.first().map(String::as_str).unwrap_or("")
            );
        }
    }

    /// Keeps this sweep's SA view when the SA answered (`sa_ok`), else the
    /// last one, logging once when the SA stops and starts answering.
    fn settle_sa(&mut self, sm_lid: u16, sa_view: Option<sa::SaView>, sa_ok: bool) {
        if sa_ok {
            if self.sa_down {
                tracing::info!(
                    sm_lid,
                    "SA answers again: SM information is current from this sweep on"
                );
                self.sa_down = false;
            }
            self.last_sa = sa_view;
        } else if let Some(v) = &sa_view {
            if !self.sa_down {
                let silent: Vec<u16> = self
                    .sms
                    .iter()
                    .filter(|(_, answering)| !answering)
                    .map(|(r, _)| r.lid.0)
                    .collect();
                tracing::warn!(
                    sm_lid,
                    not_answering = ?silent,
                    "SA not answering ({}): SMs that do not answer SMInfo read notActive; \
                     groups, services and partitions are its last answers",
                    v.errors.first().map_or("", String::as_str)
                );
                self.sa_down = true;
            }
            self.stats.sa_stale_sweeps += 1;
            self.subscribed = false;
        }
    }

    /// Counts how the partition tables were read; the first fallback is
    /// logged (under umad2sim every refresh falls back: ibsim does no RMPP).
    fn note_pkey_read(&mut self, read: Option<sa::PKeyRead>) {
        match read {
            Some(sa::PKeyRead::WholeFabric) => self.stats.pkey_whole_fabric += 1,
            Some(sa::PKeyRead::Cut | sa::PKeyRead::Refused) => {
                if self.stats.pkey_fallbacks == 0 {
                    tracing::info!(
                        "whole-fabric PKeyTableRecord answer cut short or refused: \
                         partition tables are asked per port (counted in pkey_fallbacks)"
                    );
                }
                self.stats.pkey_fallbacks += 1;
            }
            Some(sa::PKeyRead::PerPort) | None => {}
        }
    }

    /// Counts an SA answer cut short (an RMPP transfer that did not complete)
    /// and logs the first of each attribute: it is never served as the whole
    /// table (docs/umad.md "Failure handling").
    fn note_cut(&mut self, what: &'static str) {
        self.sa_cut += 1;
        if self.sa_cut_logged.insert(what) {
            tracing::warn!(
                attribute = what,
                "SA answer cut short (RMPP transfer incomplete): the last whole answer stands; \
                 counted in ibsnmpd_sa_answers_cut_total, logged once per attribute"
            );
        }
    }

    /// A control query's SA answer cut short: part of an answer is no answer
    /// (counted and logged as [`UmadSource::note_cut`]).
    fn cut_answer(
        &mut self,
        sm: u16,
        what: &'static str,
        whole: usize,
    ) -> crate::source::SourceError {
        self.note_cut(what);
        crate::source::SourceError::Fabric(format!(
            "SA (LID {sm}) {what} answer cut short: {whole} whole records arrived"
        ))
    }

    /// The PortInfo of the ports of every SM this sweep knows (`lids`: those
    /// known before the SA answered; the SA's and the ports with IsSM
    /// added), read again after the SA pass: an SM that starts, stops or
    /// changes state shows in its port's CapabilityMask (IsSM) in the same
    /// sweep, not at the next discovery.
    fn refresh_sm_ports(&mut self, d: &mut Discovered, lids: &mut Vec<u16>) {
        lids.extend(self.sms.iter().map(|(r, _)| r.lid.0));
        lids.extend(watch::is_sm_lids(d));
        lids.sort_unstable();
        lids.dedup();
        let phase = Phase::start(&self.tr);
        let r = watch::refresh_sm_ports(&mut self.tr, d, lids);
        phase.add_to(&self.tr, &mut self.cost.discovery);
        if !r.capability_mask.is_empty() {
            tracing::debug!(ports = ?r.capability_mask, "SM ports' CapabilityMask changed");
        }
        if let (Some(t), None) = (r.state, &self.next_trigger) {
            self.next_trigger = Some(t);
        }
    }

    /// Each SM known (and the port's master SM LID) asked for its SMInfo at its
    /// port: an answer is current; one that does not answer keeps its last record,
    /// flagged (read notActive). An SM never seen that does not answer is left out.
    fn probe_sms(&mut self, sm_lid: u16) -> Vec<(SmInfoRecord, bool)> {
        let mut lids: Vec<u16> = self.sms.iter().map(|(r, _)| r.lid.0).collect();
        if sm_lid != 0 && !lids.contains(&sm_lid) {
            lids.push(sm_lid);
        }
        let mut out = Vec::with_capacity(lids.len());
        for (lid, answer) in sa::sm_info(&mut self.tr, &lids) {
            let last = self.sms.iter().find(|(r, _)| r.lid.0 == lid);
            match (answer, last) {
                (Some(sm_info), _) => out.push((
                    SmInfoRecord {
                        lid: crate::types::Lid(lid),
                        sm_info,
                    },
                    true,
                )),
                (None, Some((r, _))) => out.push((r.clone(), false)),
                (None, None) => {}
            }
        }
        out
    }

    /// Sleeps the rest of `interval` after a sweep that took `took` (helper for loops).
    pub fn pause(interval: Duration, took: Duration) {
        if let Some(rest) = interval.checked_sub(took) {
            std::thread::sleep(rest);
        }
    }
}

/// The end ports whose partition tables and GUIDInfo a sweep reads: all
/// when `tables`, else the local node's (its partitions decide which
/// multicast groups the SA shows us, read in the same sweep) and this
/// sweep's `slice` of the periodic re-read.
fn sa_end_ports(d: &Discovered, tables: bool, slice: Option<Slice>) -> Vec<(u16, u8)> {
    if tables {
        return assemble::end_ports(d);
    }
    let mut ports = assemble::local_end_ports(d);
    if let Some(slice) = slice {
        let due = |&(lid, port): &(u16, u8)| slice.covers(spread::port_key(lid, port));
        ports.extend(assemble::end_ports(d).into_iter().filter(due));
        ports.sort_unstable();
        ports.dedup();
    }
    ports
}

impl From<UmadError> for crate::source::SourceError {
    fn from(e: UmadError) -> Self {
        crate::source::SourceError::Fabric(e.to_string())
    }
}

impl From<SweepError> for crate::source::SourceError {
    fn from(e: SweepError) -> Self {
        crate::source::SourceError::Fabric(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(parse_spec("umad").unwrap(), (None, None));
        assert_eq!(
            parse_spec("umad:mlx5_0").unwrap(),
            (Some("mlx5_0".into()), None)
        );
        assert_eq!(
            parse_spec("umad:mlx5_0:2").unwrap(),
            (Some("mlx5_0".into()), Some(2))
        );
        assert!(parse_spec("umad:mlx5_0:x").is_err());
        assert!(parse_spec("sim").is_err());
        assert!(parse_spec("umad:a:1:2").is_err());
    }
}
