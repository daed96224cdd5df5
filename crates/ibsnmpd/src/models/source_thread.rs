//! The source thread: sweeps the fabric every interval and publishes each
//! snapshot, and runs control operations (the fabric side of Sets, operator
//! commands) in between sweeps, so sweeps and Sets never race: the one
//! control path.
//!
//! The thread owns the one publication: the [`Publisher`] that derives what
//! the MIB modules need and the published snapshot (an atomic pointer swap
//! that requests, /metrics and the control socket read, see
//! [`FabricHandle::published`]). Each new snapshot is diffed once against
//! the previous one ([`ib::model::compare`]); the events are logged and
//! counted, and handed with the attribute changes and the new publication to
//! the notification layer ([`FabricHandle::next_update`]); so are the
//! derived findings' changes ([`crate::models::findings`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use arc_swap::ArcSwap;
use ib::model::{
    AttributeChange, CounterHistory, FabricEvent, FabricEventKind, Snapshot, SnapshotBuilder,
    SweepInfo,
};
use ib::source::{ControlOp, ControlReply, Source};
use ib::types::{Guid, PortNum};

/// What the daemon derives from each snapshot beside the MIB modules' rows
/// (None: not derived, as in tests of the fabric thread alone).
#[derive(Clone, Default)]
pub struct Extras {
    pub health: Option<Arc<crate::models::fabric_health::HealthReport>>,
    pub topology: Option<Arc<crate::models::cabling_plan::Published>>,
    pub routes: Option<Arc<crate::models::route_check::Published>>,
}

/// A published snapshot with the modules' rows and the daemon's extras.
pub type Published = mibs::Published<Extras>;
/// The fabric thread's publisher.
pub type Publisher = mibs::Publisher<Extras>;
use tokio::sync::oneshot;
use tracing::{debug, info, warn};

/// A snapshot with no nodes (before the first sweep succeeds).
pub fn empty_snapshot(source: &str, number: u64) -> Snapshot {
    SnapshotBuilder::new(DEFAULT_SUBNET_PREFIX).build(
        SweepInfo {
            number,
            time: SystemTime::now(),
            duration: Duration::ZERO,
            source: source.to_string(),
            cost: Default::default(),
        },
        &mut CounterHistory::new(),
    )
}

/// IBA's default GID prefix fe80::/64.
const DEFAULT_SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// Events kept for a subscriber that is behind; older ones are dropped
/// (and counted in [`Update::missed`]).
pub const PENDING_EVENTS: usize = 1024;

enum Msg {
    Control(ControlOp, oneshot::Sender<Result<ControlReply, String>>),
    /// Sweep now; answers the new snapshot's sweep number.
    Sweep(oneshot::Sender<Result<u64, String>>),
    /// Publish the last snapshot again: what the modules derive from
    /// outside the fabric (opensm.conf) changed, the fabric did not.
    Republish(oneshot::Sender<()>),
    Stop,
}

/// What changed between two publications: the events and attribute changes
/// between them and the publication after. Updates a subscriber has not
/// taken yet merge (last `next`, changes in order), so one that falls behind
/// holds one publication, never a queue of them.
pub struct Update {
    pub next: Arc<Published>,
    pub events: Vec<FabricEvent>,
    /// The attribute changes between them, from the same comparison.
    pub changes: Vec<AttributeChange>,
    /// Events (and attribute changes) dropped because more than
    /// [`PENDING_EVENTS`] were waiting.
    pub missed: u64,
}

/// Drops the oldest entries beyond [`PENDING_EVENTS`]; how many.
fn drop_oldest<T>(pending: &mut Vec<T>) -> u64 {
    let over = pending.len().saturating_sub(PENDING_EVENTS);
    pending.drain(..over);
    over as u64
}

/// The one subscriber's mailbox (the notification layer); filled only once
/// someone subscribed, so an agent without sinks keeps no old snapshot.
#[derive(Default)]
struct Mailbox {
    subscribed: std::sync::atomic::AtomicBool,
    slot: Mutex<Option<Update>>,
    ready: tokio::sync::Notify,
}

impl Mailbox {
    fn put(&self, u: Update) {
        if !self.subscribed.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut slot) = self.slot.lock() else {
            return;
        };
        match slot.as_mut() {
            None => *slot = Some(u),
            Some(pending) => {
                pending.next = u.next;
                pending.events.extend(u.events);
                pending.changes.extend(u.changes);
                pending.missed += u.missed;
            }
        }
        if let Some(p) = slot.as_mut() {
            p.missed += drop_oldest(&mut p.events) + drop_oldest(&mut p.changes);
        }
        drop(slot);
        self.ready.notify_one();
    }

    fn take(&self) -> Option<Update> {
        self.slot.lock().ok().and_then(|mut s| s.take())
    }
}

/// Sends control operations to the source thread and reads what it
/// publishes (the published snapshot, its updates); cheap to clone.
#[derive(Clone)]
pub struct FabricHandle {
    tx: mpsc::Sender<Msg>,
    published: Arc<ArcSwap<Published>>,
    /// The sweep number of each publication, for any number of watchers.
    publications: Arc<tokio::sync::watch::Sender<u64>>,
    updates: Arc<Mailbox>,
    events_total: Arc<AtomicU64>,
}

impl FabricHandle {
    /// Runs `op` on the source thread (between sweeps) and waits for it.
    pub async fn control(&self, op: ControlOp) -> Result<ControlReply, String> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Msg::Control(op, tx))
            .map_err(|_| "source thread has stopped".to_string())?;
        rx.await
            .map_err(|_| "source thread dropped the request".to_string())?
    }

    /// Sweeps now (between other operations) and waits for the new snapshot
    /// to be published; returns its sweep number.
    pub async fn sweep_now(&self) -> Result<u64, String> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Msg::Sweep(tx))
            .map_err(|_| "source thread has stopped".to_string())?;
        rx.await
            .map_err(|_| "source thread dropped the request".to_string())?
    }

    /// Publishes the last snapshot again and waits until it is (after an
    /// SM Set: ibSmConfigTable derives from opensm.conf at publish).
    pub async fn republish(&self) -> Result<(), String> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Msg::Republish(tx))
            .map_err(|_| "source thread has stopped".to_string())?;
        rx.await
            .map_err(|_| "source thread dropped the request".to_string())
    }

    /// What is published now: the snapshot (empty before the first
    /// successful sweep) and what the modules derived from it.
    pub fn published(&self) -> arc_swap::Guard<Arc<Published>> {
        self.published.load()
    }

    /// Changes at each publication (its value: the sweep number), so that
    /// what is derived from a snapshot can be made once it is published
    /// rather than by the first request that needs it.
    pub fn publications(&self) -> tokio::sync::watch::Receiver<u64> {
        self.publications.subscribe()
    }

    /// The snapshot published now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.published.load().snapshot)
    }

    /// Subscribes to [`Update`]s (one subscriber: the notification layer);
    /// updates from the next publication on.
    pub fn subscribe(&self) {
        self.updates.subscribed.store(true, Ordering::Relaxed);
    }

    /// The next update after [`FabricHandle::subscribe`]: every publication
    /// since the last one taken, merged.
    pub async fn next_update(&self) -> Update {
        loop {
            let ready = self.updates.ready.notified();
            if let Some(u) = self.updates.take() {
                return u;
            }
            ready.await;
        }
    }

    /// Events seen since start.
    pub fn events_total(&self) -> u64 {
        self.events_total.load(Ordering::Relaxed)
    }
}

/// The running source thread.
pub struct FabricThread {
    handle: FabricHandle,
    join: Option<JoinHandle<()>>,
    /// Held until [`FabricThread::begin`]; dropping it unswept ends the thread.
    begin: Option<mpsc::Sender<()>>,
}

impl FabricThread {
    /// Starts sweeping `source`: once at once, then every `interval`,
    /// publishing each snapshot. The receiver gets a message when the first
    /// sweep is over (published or failed).
    #[cfg(test)]
    pub fn start(
        source: Box<dyn Source>,
        publisher: Publisher,
        interval: Duration,
    ) -> std::io::Result<(Self, mpsc::Receiver<()>)> {
        let (mut t, first) = Self::start_paused(source, publisher, interval, None, "test")?;
        t.begin();
        Ok((t, first))
    }

    /// Like [`FabricThread::start`], but the first sweep waits for
    /// [`FabricThread::begin`]: the daemon binds its sockets first, so a busy
    /// port fails at once instead of after a long sweep.
    /// `names` (the node-name-map) renames nodes in each snapshot before it
    /// is published or compared. Until the first sweep, an empty snapshot
    /// of `source_name` is published.
    pub fn start_paused(
        mut source: Box<dyn Source>,
        publisher: Publisher,
        interval: Duration,
        names: Option<crate::models::nodemap::SharedNodeNameMap>,
        source_name: &str,
    ) -> std::io::Result<(Self, mpsc::Receiver<()>)> {
        let (begin_tx, begin_rx) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel::<Msg>();
        let (first_tx, first_rx) = mpsc::channel::<()>();
        let published = Arc::new(ArcSwap::from_pointee(Published::new(Arc::new(
            empty_snapshot(source_name, 0),
        ))));
        let updates = Arc::new(Mailbox::default());
        let events_total = Arc::new(AtomicU64::new(0));
        let publications = Arc::new(tokio::sync::watch::Sender::new(0));
        let mut sweeper = Sweeper {
            publisher,
            published: Arc::clone(&published),
            publications: Arc::clone(&publications),
            updates: Arc::clone(&updates),
            events_total: Arc::clone(&events_total),
            have_prev: false,
            names,
            findings: crate::models::findings::Tracker::default(),
        };
        let join = std::thread::Builder::new()
            .name("ibsnmpd-source".into())
            .spawn(move || {
                // Requests never wait on a sweep: on a busy machine the
                // sweep is what gives way (its snapshot is a little later,
                // no answer is).
                if let Err(e) = thread_priority::set_current_thread_priority(
                    thread_priority::ThreadPriority::Min,
                ) {
                    debug!(error = ?e, "cannot lower the source thread's priority");
                }
                if begin_rx.recv().is_err() {
                    return; // stopped before the first sweep
                }
                sweeper.sweep(source.as_mut());
                let _ = first_tx.send(());
                sweeper.serve(source.as_mut(), &rx, interval);
                debug!("source thread stopped");
            })?;
        Ok((
            FabricThread {
                handle: FabricHandle {
                    tx,
                    published,
                    publications,
                    updates,
                    events_total,
                },
                join: Some(join),
                begin: Some(begin_tx),
            },
            first_rx,
        ))
    }

    pub fn handle(&self) -> FabricHandle {
        self.handle.clone()
    }

    /// Lets a paused thread take its first sweep.
    pub fn begin(&mut self) {
        if let Some(b) = self.begin.take() {
            let _ = b.send(());
        }
    }

    /// Stops the thread after its current sweep or operation.
    pub fn stop(mut self) {
        self.begin = None;
        let _ = self.handle.tx.send(Msg::Stop);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

/// The source thread's publishing side: derives and publishes each
/// snapshot, diffs it against the one before, and hands the update on.
struct Sweeper {
    publisher: Publisher,
    published: Arc<ArcSwap<Published>>,
    publications: Arc<tokio::sync::watch::Sender<u64>>,
    updates: Arc<Mailbox>,
    events_total: Arc<AtomicU64>,
    /// Whether a swept snapshot is published (the first sweep has nothing
    /// to compare against: the fabric as found is not a change).
    have_prev: bool,
    /// The node-name-map in force (swapped on SIGHUP).
    names: Option<crate::models::nodemap::SharedNodeNameMap>,
    /// The derived findings logged so far (the plan's, the routes').
    findings: crate::models::findings::Tracker,
}

impl Sweeper {
    /// The thread's life after the first sweep: a sweep every `interval`
    /// (earlier for the source's own timers), control operations in
    /// between, until stopped.
    fn serve(&mut self, source: &mut dyn Source, rx: &mpsc::Receiver<Msg>, interval: Duration) {
        let mut next = Instant::now() + interval;
        loop {
            // Wake for the next sweep, or earlier for the source's own
            // timers (software sampling).
            let until = match source.wake_at() {
                Some(w) if w < next => w,
                _ => next,
            };
            let wait = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Ok(msg) => self.handle(source, msg),
                Err(RecvTimeoutError::Timeout) if Instant::now() < next => {
                    if source.wake() {
                        self.sweep(source);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.sweep(source);
                    next += interval;
                    let now = Instant::now();
                    if next < now {
                        // A sweep longer than the interval: skip the
                        // missed ticks instead of sweeping back to back.
                        next = now + interval;
                    }
                }
            }
        }
    }

    /// One message other than Stop.
    fn handle(&mut self, source: &mut dyn Source, msg: Msg) {
        match msg {
            Msg::Control(op, reply) => {
                let changes = op.changes_fabric();
                let r = source.control(op).map_err(|e| e.to_string());
                // Show the effect of the Set to the next reader: publish
                // before answering, so a Get right after the Set's
                // response sees it (queries: no need).
                if r.is_ok() && changes {
                    self.sweep(source);
                }
                let _ = reply.send(r);
            }
            Msg::Sweep(reply) => {
                let r = if self.sweep(source) {
                    Ok(self.published.load().snapshot.sweep.number)
                } else {
                    Err("sweep failed; serving the previous snapshot".to_string())
                };
                let _ = reply.send(r);
            }
            Msg::Republish(reply) => {
                let snap = Arc::clone(&self.published.load().snapshot);
                self.publish(snap);
                let _ = reply.send(());
            }
            Msg::Stop => {}
        }
    }

    /// One sweep, published on success; on failure the last snapshot stays
    /// (a failed sweep is no evidence of change, so it makes no events).
    fn sweep(&mut self, source: &mut dyn Source) -> bool {
        let t = Instant::now();
        let snap = match source.sweep() {
            Ok(mut snap) => {
                if let Some(names) = &self.names {
                    names.load().apply(&mut snap);
                }
                Arc::new(snap)
            }
            Err(e) => {
                if self.published.load().snapshot.sweep.number == 0 {
                    // Nothing was ever read (e.g. a host with no HCA).
                    warn!(error = %e, "sweep failed; no fabric to serve until a sweep succeeds (the IB tables are empty)");
                } else {
                    warn!(error = %e, "sweep failed; serving the previous snapshot");
                }
                return false;
            }
        };
        debug!(
            nodes = snap.nodes.len(),
            ports = snap.port_count(),
            ms = t.elapsed().as_millis() as u64,
            "sweep"
        );
        if snap.sweep.number == 1 {
            info!(
                nodes = snap.nodes.len(),
                ports = snap.port_count(),
                "first sweep done (ports: switch port 0 not counted)"
            );
        }
        let prev = self.published.load_full();
        self.publish(Arc::clone(&snap));
        if std::mem::replace(&mut self.have_prev, true) {
            let next = self.published.load_full();
            let ib::model::Diff { events, changes } = ib::model::compare(&prev.snapshot, &snap);
            for ev in &events {
                log_event(ev, &prev.snapshot, &snap);
            }
            self.events_total
                .fetch_add(events.len() as u64, Ordering::Relaxed);
            self.updates.put(Update {
                next,
                events,
                changes,
                missed: 0,
            });
        }
        true
    }

    /// Derives what the modules need from `snap` and swaps it in.
    fn publish(&mut self, snap: Arc<Snapshot>) {
        let t0 = Instant::now();
        let published = self.publisher.publish(snap);
        debug!(
            derive_ms = t0.elapsed().as_secs_f64() * 1e3,
            "derived the modules' rows"
        );
        // Logged here as fabric events are; notified by the notification
        // layer from the same publications.
        for c in self.findings.update(
            published.extra.topology.as_deref(),
            published.extra.routes.as_deref(),
        ) {
            c.log();
        }
        let number = published.snapshot.sweep.number;
        self.published.store(Arc::new(published));
        self.publications.send_replace(number);
    }
}

/// A node's description for log lines, from whichever snapshot has it.
fn node_name(g: Guid, prev: &Snapshot, next: &Snapshot) -> String {
    [next, prev]
        .iter()
        .find_map(|s| s.node_by_guid(g).and_then(|i| s.node(i)))
        .map(|n| n.description.clone())
        .unwrap_or_default()
}

/// A port state for log lines (`unknown` for values IBA reserves).
fn state<T: std::fmt::Debug>(s: &Option<T>) -> String {
    s.as_ref()
        .map_or_else(|| "unknown".to_string(), |v| format!("{v:?}"))
}

/// One info line per event: what, which node (description and GUID), which port.
fn log_event(ev: &FabricEvent, prev: &Snapshot, next: &Snapshot) {
    let port_of = |p: PortNum| p.0;
    match &ev.kind {
        FabricEventKind::NodeAdded {
            node_guid,
            description,
        } => info!(node = ?description, guid = %node_guid, "fabric event: node added"),
        FabricEventKind::NodeRemoved {
            node_guid,
            description,
        } => info!(node = ?description, guid = %node_guid, "fabric event: node removed"),
        FabricEventKind::PortInService {
            node_guid,
            port,
            port_guid,
            lid,
        }
        | FabricEventKind::PortOutOfService {
            node_guid,
            port,
            port_guid,
            lid,
        } => {
            let what = match ev.kind {
                FabricEventKind::PortInService { .. } => "in",
                _ => "out of",
            };
            info!(
                node = ?node_name(*node_guid, prev, next),
                guid = %node_guid,
                port = port_of(*port),
                port_guid = %port_guid,
                lid = lid.0,
                "fabric event: port {what} service"
            )
        }
        FabricEventKind::LinkStateChange {
            node_guid,
            port,
            from,
            to,
            phys_from,
            phys_to,
        } => info!(
            node = ?node_name(*node_guid, prev, next),
            guid = %node_guid,
            port = port_of(*port),
            from = %state(from),
            to = %state(to),
            phys_from = %state(phys_from),
            phys_to = %state(phys_to),
            "fabric event: link state change"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ib::source::sim::{SimConfig, SimSource};

    /// A flap through the control path makes out-of-service and link state
    /// events, handed to the subscriber with the snapshots they came from
    /// (merged while it does not look); the link comes back with in-service
    /// events.
    #[test]
    fn link_flap_events_reach_the_subscriber() {
        let source = SimSource::default_fabric(SimConfig::default()).unwrap();
        let (thread, first) = FabricThread::start(
            Box::new(source),
            mibs::Publisher::new().with_extra(|_| Extras::default()),
            Duration::from_secs(3600),
        )
        .unwrap();
        first.recv().unwrap();
        let handle = thread.handle();
        handle.subscribe();
        let snap = handle.snapshot();
        let first_sweep = snap.sweep.number;
        let node = snap.nodes[0].info.node_guid;
        assert_eq!(handle.events_total(), 0, "the first sweep is no change");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let kinds = rt.block_on(async {
            handle
                .control(ControlOp::SimLinkFlap {
                    node,
                    port: PortNum(1),
                    down_for: Duration::from_millis(200),
                })
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
            let last = handle.sweep_now().await.unwrap();
            // Two publications (after the flap, then now), one update.
            let u = handle.next_update().await;
            assert!(first_sweep < last);
            assert_eq!(u.next.snapshot.sweep.number, last);
            assert_eq!(u.missed, 0);
            assert!(Arc::ptr_eq(&u.next.snapshot, &handle.snapshot()));
            u.events.into_iter().map(|e| e.kind).collect::<Vec<_>>()
        });
        let out = kinds
            .iter()
            .position(|k| matches!(k, FabricEventKind::PortOutOfService { node_guid, port, .. } if *node_guid == node && port.0 == 1));
        let back = kinds
            .iter()
            .position(|k| matches!(k, FabricEventKind::PortInService { node_guid, port, .. } if *node_guid == node && port.0 == 1));
        assert!(
            matches!((out, back), (Some(o), Some(b)) if o < b),
            "{kinds:#?}"
        );
        // Both ends of the link changed state, twice.
        let changes = kinds
            .iter()
            .filter(|k| matches!(k, FabricEventKind::LinkStateChange { .. }))
            .count();
        assert_eq!(changes, 4, "{kinds:#?}");
        assert_eq!(handle.events_total(), kinds.len() as u64);
        thread.stop();
    }
}
