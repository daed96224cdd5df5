//! The notification originator (RFC 3416 section 4.2.6/4.2.7, RFC 3584
//! section 3): SNMPv2-Trap and InformRequest PDUs with sysUpTime.0 and
//! snmpTrapOID.0 first, SNMPv1 Trap-PDUs by the RFC 3584 section 3.2
//! translation, informs retried per sink until a Response with the same
//! request-id comes back.
//!
//! Producers call [`Notifier::notify`], which never blocks: notifications
//! go through a bounded channel to one tokio task that owns its own UDP
//! socket(s); a full channel drops the notification and counts it. The task
//! also applies storm control: at most `max_per_interval` notifications per
//! interval for one source object, the rest counted and logged.
//!
//! SNMPv3 joins through [`SinkKind::Wrapped`]: a [`MessageWrapper`] turns the
//! PDU into a whole message (USM, scoped PDU) and recognises its answers.

// Datagrams from the network are parsed here: never panic on them.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::message::{Message, Version};
use crate::oid::Oid;
use crate::pdu::{Pdu, PduBody, TrapV1};
use crate::value::{Value, VarBind};

/// sysUpTime.0 (SNMPv2-MIB).
pub const SYS_UP_TIME_0: &[u32] = &[1, 3, 6, 1, 2, 1, 1, 3, 0];
/// snmpTrapOID.0 (SNMPv2-MIB).
pub const SNMP_TRAP_OID_0: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0];
/// snmpTrapEnterprise.0 (SNMPv2-MIB).
pub const SNMP_TRAP_ENTERPRISE_0: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 4, 3, 0];
/// snmpTrapAddress.0 (RFC 3584's SNMP-COMMUNITY-MIB).
pub const SNMP_TRAP_ADDRESS_0: &[u32] = &[1, 3, 6, 1, 6, 3, 18, 1, 3, 0];
/// snmpTraps: the parent of the six generic traps (coldStart .1 ... egpNeighborLoss .6).
pub const SNMP_TRAPS: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5];

/// SNMPv1 generic-trap enterpriseSpecific(6).
pub const ENTERPRISE_SPECIFIC: i32 = 6;

/// One notification: its NOTIFICATION-TYPE OID and OBJECTS, without the
/// leading sysUpTime.0 and snmpTrapOID.0 (added when it is sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    pub trap_oid: Oid,
    pub varbinds: Vec<VarBind>,
    /// The object it is about (e.g. `0x0002c90300000001:1`), for storm
    /// control; None: never rate-limited.
    pub source: Option<String>,
    /// The state of its source it reports (e.g. `"link"` for linkUp and
    /// linkDown): of a source's notifications with one state, the last
    /// supersedes the others. When storm control held some back, the last
    /// one goes out as the window ends, unless the manager already has it
    /// (a suppressed state change never leaves a manager with a stale
    /// state). None: an event, only counted when suppressed.
    pub state: Option<&'static str>,
}

impl Notification {
    pub fn new(trap_oid: &[u32], varbinds: Vec<VarBind>) -> Self {
        Notification {
            trap_oid: Oid::from_slice(trap_oid),
            varbinds,
            source: None,
            state: None,
        }
    }

    /// The same notification, rate-limited as coming from `source`.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// The same notification, reporting state `state` of its source.
    pub fn with_state(mut self, state: &'static str) -> Self {
        self.state = Some(state);
        self
    }

    /// The SNMPv2-Trap/InformRequest variable bindings: sysUpTime.0,
    /// snmpTrapOID.0, then the OBJECTS (RFC 3416 section 4.2.6).
    pub fn v2_varbinds(&self, up_time: u32) -> Vec<VarBind> {
        let mut v = Vec::with_capacity(self.varbinds.len() + 2);
        v.push(VarBind::new(
            Oid::from_slice(SYS_UP_TIME_0),
            Value::TimeTicks(up_time),
        ));
        v.push(VarBind::new(
            Oid::from_slice(SNMP_TRAP_OID_0),
            Value::ObjectId(self.trap_oid.clone()),
        ));
        v.extend(self.varbinds.iter().cloned());
        v
    }

    /// The SNMPv1 Trap-PDU for this notification (RFC 3584 section 3.2):
    /// a generic trap under snmpTraps keeps its number - 1 as generic-trap
    /// and snmpTrapEnterprise.0 (or snmpTraps) as enterprise; any other is
    /// enterpriseSpecific(6) with the last sub-identifier as specific-trap
    /// and the rest (without a next-to-last 0) as enterprise. Counter64
    /// bindings are removed (SNMPv1 has no such type).
    pub fn to_v1(&self, up_time: u32, agent_addr: Ipv4Addr) -> TrapV1 {
        let oid = self.trap_oid.as_slice();
        let last = oid.last().copied().unwrap_or(0);
        let parent = oid.get(..oid.len().saturating_sub(1)).unwrap_or(&[]);
        let given_enterprise = self.varbinds.iter().find_map(|vb| {
            match (vb.oid.as_slice() == SNMP_TRAP_ENTERPRISE_0, &vb.value) {
                (true, Value::ObjectId(o)) => Some(o.clone()),
                _ => None,
            }
        });
        let (enterprise, generic, specific) = if parent == SNMP_TRAPS && (1..=6).contains(&last) {
            let e = given_enterprise.unwrap_or_else(|| Oid::from_slice(SNMP_TRAPS));
            (e, last as i32 - 1, 0)
        } else {
            let e = match parent.split_last() {
                Some((0, rest)) => Oid::from_slice(rest),
                _ => Oid::from_slice(parent),
            };
            (e, ENTERPRISE_SPECIFIC, last as i32)
        };
        let addr = self
            .varbinds
            .iter()
            .find_map(
                |vb| match (vb.oid.as_slice() == SNMP_TRAP_ADDRESS_0, &vb.value) {
                    (true, Value::IpAddress(a)) => Some(*a),
                    _ => None,
                },
            )
            .unwrap_or(agent_addr.octets());
        TrapV1 {
            enterprise,
            agent_addr: addr,
            generic_trap: generic,
            specific_trap: specific,
            time_stamp: up_time,
            varbinds: self
                .varbinds
                .iter()
                .filter(|vb| !matches!(vb.value, Value::Counter64(_)))
                .cloned()
                .collect(),
        }
    }
}

/// The message processing of a sink other than SNMPv1/v2c: SNMPv3 plugs in
/// here (the PDU wrapped in a scoped PDU with USM security parameters).
pub trait MessageWrapper: Send + Sync {
    /// The whole datagram carrying `pdu` (an SNMPv2-Trap or InformRequest).
    fn wrap(&self, pdu: &Pdu) -> Result<Vec<u8>, String>;
    /// The PDU of an answer datagram, if it is one of this wrapper's
    /// messages and authentic (a Response to an inform); None otherwise.
    fn unwrap_response(&self, datagram: &[u8]) -> Option<Pdu>;
    /// Called when an inform to the sink went unanswered or the sink
    /// answered with something that is no acknowledgement: work that
    /// brings `wrap` up to date (an SNMPv3 receiver discovered again), run
    /// on its own task; None when there is nothing to do (the default) or
    /// it is already under way. Retries are wrapped anew.
    fn refresh(self: Arc<Self>) -> Option<RefreshFuture> {
        None
    }
}

/// What [`MessageWrapper::refresh`] runs.
pub type RefreshFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// How a sink is sent to.
#[derive(Clone)]
pub enum SinkKind {
    /// SNMPv1 Trap-PDU (snmpd.conf `trapsink`).
    TrapV1 { community: Vec<u8> },
    /// SNMPv2c SNMPv2-Trap (`trap2sink`).
    TrapV2c { community: Vec<u8> },
    /// SNMPv2c InformRequest (`informsink`), sent again after `timeout`
    /// up to `retries` times until acknowledged.
    InformV2c {
        community: Vec<u8>,
        timeout: Duration,
        retries: u32,
    },
    /// A message wrapped by another message processing model (SNMPv3);
    /// `confirm`: send InformRequests with (timeout, retries).
    Wrapped {
        wrapper: Arc<dyn MessageWrapper>,
        confirm: Option<(Duration, u32)>,
    },
}

impl fmt::Debug for SinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SinkKind::TrapV1 { .. } => f.write_str("trapsink"),
            SinkKind::TrapV2c { .. } => f.write_str("trap2sink"),
            SinkKind::InformV2c { .. } => f.write_str("informsink"),
            SinkKind::Wrapped { .. } => f.write_str("wrapped"),
        }
    }
}

/// A notification receiver.
#[derive(Clone, Debug)]
pub struct Sink {
    pub addr: SocketAddr,
    pub kind: SinkKind,
}

impl Sink {
    /// The same receiver sent to the same way (a wrapper is the same one),
    /// so informs to it share one queue.
    fn same(&self, other: &Sink) -> bool {
        self.addr == other.addr
            && match (&self.kind, &other.kind) {
                (SinkKind::TrapV1 { community: a }, SinkKind::TrapV1 { community: b })
                | (SinkKind::TrapV2c { community: a }, SinkKind::TrapV2c { community: b }) => {
                    a == b
                }
                (
                    SinkKind::InformV2c {
                        community: a,
                        timeout: ta,
                        retries: ra,
                    },
                    SinkKind::InformV2c {
                        community: b,
                        timeout: tb,
                        retries: rb,
                    },
                ) => a == b && ta == tb && ra == rb,
                (
                    SinkKind::Wrapped {
                        wrapper: a,
                        confirm: ca,
                    },
                    SinkKind::Wrapped {
                        wrapper: b,
                        confirm: cb,
                    },
                ) => Arc::ptr_eq(a, b) && ca == cb,
                _ => false,
            }
    }
}

/// Receivers chosen when each notification is sent, beside the fixed
/// sinks: SNMP-TARGET-MIB rows managed over SNMP, read at that moment.
pub trait SinkSource: Send + Sync + fmt::Debug {
    /// Where `n` goes now, besides the fixed sinks. A receiver informs go
    /// to should come back as the same [`Sink`] (the same wrapper) while it
    /// is unchanged: its unacknowledged informs are kept with it.
    fn sinks(&self, n: &Notification) -> Vec<Sink>;
}

/// Storm control: at most `max_per_interval` notifications per `interval`
/// for one source object (0: no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StormControl {
    pub max_per_interval: u32,
    pub interval: Duration,
    /// A source with states held back that has sent nothing for this long
    /// gets them at once, not at the interval's end (the agent's sweep
    /// interval: a sweep without news means the burst is over). Zero: only
    /// at the interval's end.
    pub quiet: Duration,
}

impl Default for StormControl {
    fn default() -> Self {
        StormControl {
            max_per_interval: 10,
            interval: Duration::from_secs(60),
            quiet: Duration::ZERO,
        }
    }
}

/// Default [`OriginatorConfig::max_outstanding_informs`].
pub const DEFAULT_MAX_OUTSTANDING_INFORMS: usize = 1024;
/// Default [`OriginatorConfig::max_datagrams_per_notification`].
pub const DEFAULT_MAX_DATAGRAMS_PER_NOTIFICATION: usize = 64;

/// Originator settings.
#[derive(Clone, Debug)]
pub struct OriginatorConfig {
    pub sinks: Vec<Sink>,
    /// Notifications that may wait for the task before new ones are dropped.
    pub queue: usize,
    /// agent-addr of SNMPv1 traps.
    pub agent_addr: Ipv4Addr,
    pub storm: StormControl,
    /// Unacknowledged informs kept per sink; beyond, the oldest is dropped.
    pub max_pending_informs: usize,
    /// Unacknowledged informs kept in all; beyond, a new inform is not sent
    /// (counted in `capped`): many targets cannot hold many retries each.
    pub max_outstanding_informs: usize,
    /// Datagrams one notification may cause, first sends and inform retries
    /// together: receivers past it get nothing (counted in `capped`), an
    /// inform's retries are cut to what is left. Bounds what one spoofed
    /// datagram (an authenticationFailure) can make the agent send.
    pub max_datagrams_per_notification: usize,
    /// Also hand every notification that passes storm control, as SNMPv2
    /// varbinds (sysUpTime.0, snmpTrapOID.0, objects), to another transport:
    /// the AgentX session's Notify-PDUs, which the master sends to its sinks.
    pub forward: Option<tokio::sync::mpsc::Sender<Vec<VarBind>>>,
    /// Receivers chosen per notification, beside `sinks`.
    pub targets: Option<Arc<dyn SinkSource>>,
}

impl Default for OriginatorConfig {
    fn default() -> Self {
        OriginatorConfig {
            sinks: Vec::new(),
            queue: 1024,
            agent_addr: Ipv4Addr::UNSPECIFIED,
            storm: StormControl::default(),
            max_pending_informs: 256,
            max_outstanding_informs: DEFAULT_MAX_OUTSTANDING_INFORMS,
            max_datagrams_per_notification: DEFAULT_MAX_DATAGRAMS_PER_NOTIFICATION,
            forward: None,
            targets: None,
        }
    }
}

/// Originator counters (monotonic).
#[derive(Debug, Default)]
pub struct NotifyStats {
    /// Notifications accepted into the queue.
    pub queued: AtomicU64,
    /// Dropped because the queue was full.
    pub queue_drops: AtomicU64,
    /// Held back by storm control.
    pub suppressed: AtomicU64,
    /// Trap messages sent (one per sink).
    pub traps_sent: AtomicU64,
    /// InformRequests sent the first time.
    pub informs_sent: AtomicU64,
    /// InformRequests sent again after a timeout.
    pub inform_retries: AtomicU64,
    /// InformRequests acknowledged.
    pub informs_acked: AtomicU64,
    /// InformRequests given up (retries exhausted or too many pending).
    pub informs_dropped: AtomicU64,
    /// Datagrams the socket refused.
    pub send_errors: AtomicU64,
    /// Receivers a notification did not go to: past the per-notification
    /// datagram cap, or informs past the global outstanding cap.
    pub capped: AtomicU64,
}

impl NotifyStats {
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

fn inc(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// sysUpTime in centiseconds, from the application.
pub type UpTime = Arc<dyn Fn() -> u32 + Send + Sync>;

/// The producers' side of the originator; cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    tx: mpsc::Sender<Notification>,
    stats: Arc<NotifyStats>,
}

impl Notifier {
    /// Queues `n` for every sink; never blocks. False when the queue is
    /// full or the task has stopped (the notification is dropped and counted).
    pub fn notify(&self, n: Notification) -> bool {
        match self.tx.try_send(n) {
            Ok(()) => {
                inc(&self.stats.queued);
                true
            }
            Err(e) => {
                let total = self.stats.queue_drops.fetch_add(1, Ordering::Relaxed) + 1;
                let why = match e {
                    mpsc::error::TrySendError::Full(_) => "queue full",
                    mpsc::error::TrySendError::Closed(_) => "originator stopped",
                };
                debug!(why, total, "notification dropped");
                false
            }
        }
    }

    pub fn stats(&self) -> &Arc<NotifyStats> {
        &self.stats
    }

    /// A notifier whose task is not running (every notification is
    /// dropped and counted): for agents without sinks.
    pub fn disconnected() -> Notifier {
        let (tx, _) = mpsc::channel(1);
        Notifier {
            tx,
            stats: Arc::new(NotifyStats::default()),
        }
    }
}

/// Starts the originator task on the current tokio runtime: binds its own
/// socket(s) (one per address family the sinks use), then serves the queue.
pub async fn start(
    config: OriginatorConfig,
    up_time: UpTime,
) -> io::Result<(Notifier, JoinHandle<()>)> {
    let v4 = UdpSocket::bind(SocketAddr::from(([0, 0, 0, 0], 0))).await?;
    let v6 = if config.sinks.iter().any(|s| s.addr.is_ipv6()) {
        Some(UdpSocket::bind(SocketAddr::from(([0u16; 8], 0))).await?)
    } else if config.targets.is_some() {
        // Targets may name IPv6 receivers later; a host without IPv6 only
        // cannot send to them.
        match UdpSocket::bind(SocketAddr::from(([0u16; 8], 0))).await {
            Ok(s) => Some(s),
            Err(e) => {
                debug!(error = %e, "no IPv6 notification socket");
                None
            }
        }
    } else {
        None
    };
    let (tx, rx) = mpsc::channel(config.queue.max(1));
    let (refreshed, refreshed_rx) = mpsc::unbounded_channel();
    let stats = Arc::new(NotifyStats::default());
    let task = Task {
        pending: config
            .sinks
            .iter()
            .map(|s| Queue {
                sink: s.clone(),
                informs: VecDeque::new(),
            })
            .collect(),
        config,
        up_time,
        stats: Arc::clone(&stats),
        v4,
        v6,
        next_request_id: initial_request_id(),
        windows: HashMap::new(),
        last_state: HashMap::new(),
        refreshed,
    };
    let handle = tokio::spawn(task.run(rx, refreshed_rx));
    Ok((Notifier { tx, stats }, handle))
}

/// A request-id start that differs between runs, so a receiver does not
/// take a restarted agent's informs for duplicates.
fn initial_request_id() -> i32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or(1);
    (nanos & 0x3fff_ffff) as i32 + 1
}

/// Which wrapper a refresh was for (its address while the sink holds it).
fn wrapper_key(wrapper: &Arc<dyn MessageWrapper>) -> usize {
    Arc::as_ptr(wrapper).cast::<()>() as usize
}

/// Runs a wrapper's refresh, if it has one to run, on its own task, and
/// says on `done` when it is over.
fn refresh(wrapper: &Arc<dyn MessageWrapper>, done: &mpsc::UnboundedSender<usize>) {
    if let Some(f) = Arc::clone(wrapper).refresh() {
        let (done, key) = (done.clone(), wrapper_key(wrapper));
        tokio::spawn(async move {
            f.await;
            let _ = done.send(key);
        });
    }
}

/// An InformRequest waiting for its Response.
struct PendingInform {
    request_id: i32,
    datagram: Vec<u8>,
    /// For a wrapped (SNMPv3) sink: the InformRequest, wrapped anew for
    /// each retry (the receiver may have been discovered again since).
    pdu: Option<Pdu>,
    tries_left: u32,
    timeout: Duration,
    deadline: Instant,
    trap_oid: Oid,
}

/// One receiver's unacknowledged informs, oldest first.
struct Queue {
    sink: Sink,
    informs: VecDeque<PendingInform>,
}

/// Storm control state of one source object.
struct Window {
    start: Instant,
    /// The source's last notification, sent or held back.
    last: Instant,
    sent: u32,
    suppressed: u32,
    /// Per state: the last notification held back, sent as the window ends
    /// unless it is what the manager last received.
    held: Vec<Notification>,
}

impl Window {
    fn new(start: Instant) -> Self {
        Window {
            start,
            last: start,
            sent: 0,
            suppressed: 0,
            held: Vec::new(),
        }
    }
}

struct Task {
    config: OriginatorConfig,
    up_time: UpTime,
    stats: Arc<NotifyStats>,
    v4: UdpSocket,
    v6: Option<UdpSocket>,
    next_request_id: i32,
    /// Unacknowledged informs per receiver: first the fixed sinks' (same
    /// index as `config.sinks`), then those of targets while they have any.
    pending: Vec<Queue>,
    windows: HashMap<String, Window>,
    /// Per (source, state): the trap OID of the last one sent.
    last_state: HashMap<(String, &'static str), Oid>,
    /// Where a wrapper's refresh says it is over ([`Task::on_refreshed`]).
    refreshed: mpsc::UnboundedSender<usize>,
}

async fn recv_opt(sock: Option<&UdpSocket>, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
    match sock {
        Some(s) => s.recv_from(buf).await,
        None => std::future::pending().await,
    }
}

impl Task {
    async fn run(
        mut self,
        mut rx: mpsc::Receiver<Notification>,
        mut refreshed: mpsc::UnboundedReceiver<usize>,
    ) {
        let mut buf4 = vec![0u8; 65536];
        let mut buf6 = vec![0u8; 65536];
        loop {
            let deadline = self
                .pending
                .iter()
                .flat_map(|q| &q.informs)
                .map(|p| p.deadline)
                .min();
            // The next storm window to end (at once, not a tick later).
            let window_end = self.next_window_end();
            tokio::select! {
                n = rx.recv() => match n {
                    Some(n) => self.originate(n).await,
                    None => break,
                },
                r = self.v4.recv_from(&mut buf4) => {
                    if let Ok((len, src)) = r {
                        self.on_datagram(src, buf4.get(..len).unwrap_or(&[]));
                    }
                }
                r = recv_opt(self.v6.as_ref(), &mut buf6) => {
                    if let Ok((len, src)) = r {
                        self.on_datagram(src, buf6.get(..len).unwrap_or(&[]));
                    }
                }
                Some(key) = refreshed.recv() => self.on_refreshed(key).await,
                _ = sleep_until_opt(deadline) => self.expire().await,
                _ = sleep_until_opt(window_end) => {
                    let now = Instant::now();
                    self.close_windows(now).await;
                    self.send_when_quiet(now).await;
                }
            }
        }
        self.close_windows(Instant::now() + self.config.storm.interval)
            .await;
        debug!("notification originator stopped");
    }

    /// When the first storm window with something held back ends, or the
    /// first source holding states back has been quiet long enough.
    fn next_window_end(&self) -> Option<Instant> {
        let storm = self.config.storm;
        self.windows
            .values()
            .filter(|w| w.suppressed > 0)
            .map(|w| {
                let end = w.start + storm.interval;
                match w.held.is_empty() || storm.quiet.is_zero() {
                    true => end,
                    false => end.min(w.last + storm.quiet),
                }
            })
            .min()
    }

    /// Storm control: true when `n` may go out now.
    fn admit(&mut self, n: &Notification) -> bool {
        let storm = self.config.storm;
        let Some(key) = &n.source else {
            return true;
        };
        if storm.max_per_interval == 0 {
            return true;
        }
        let now = Instant::now();
        let w = self
            .windows
            .entry(key.clone())
            .or_insert_with(|| Window::new(now));
        if now.duration_since(w.start) >= storm.interval {
            if w.suppressed > 0 {
                log_suppressed(key, w.suppressed, NotifyStats::get(&self.stats.suppressed));
            }
            *w = Window::new(now);
        }
        w.last = now;
        if w.sent < storm.max_per_interval {
            w.sent += 1;
            // A newer state than any held back: nothing to send later.
            if let Some(state) = n.state {
                w.held.retain(|h| h.state != Some(state));
            }
            return true;
        }
        w.suppressed += 1;
        if n.state.is_some() {
            w.held.retain(|h| h.state != n.state);
            w.held.push(n.clone());
        }
        let total = self.stats.suppressed.fetch_add(1, Ordering::Relaxed) + 1;
        if w.suppressed == 1 {
            warn!(
                source = %key,
                limit = storm.max_per_interval,
                interval_s = storm.interval.as_secs_f64(),
                total_suppressed = total,
                "notification storm: suppressing notifications from this source for the rest of the interval"
            );
        }
        debug!(source = %key, trap = %n.trap_oid, total_suppressed = total, "notification suppressed");
        false
    }

    /// Ends the windows that are over: logs them, sends each source's
    /// held-back states the manager does not have, and forgets them (keeps
    /// the map small).
    async fn close_windows(&mut self, now: Instant) {
        let interval = self.config.storm.interval;
        let total = NotifyStats::get(&self.stats.suppressed);
        let mut catch_up = Vec::new();
        self.windows.retain(|key, w| {
            if now.duration_since(w.start) < interval {
                return true;
            }
            if w.suppressed > 0 {
                log_suppressed(key, w.suppressed, total);
            }
            catch_up.append(&mut w.held);
            false
        });
        for n in catch_up {
            if self.is_news(&n) {
                info!(source = ?n.source, trap = %n.trap_oid, "notification storm over: sending the state held back");
                self.originate(n).await;
            }
        }
    }

    /// Sends the held-back states of sources quiet for `storm.quiet`
    /// (their burst is over) at once; their windows go on, so the limit
    /// still holds for the rest of the interval.
    async fn send_when_quiet(&mut self, now: Instant) {
        let quiet = self.config.storm.quiet;
        if quiet.is_zero() {
            return;
        }
        let mut catch_up = Vec::new();
        for w in self.windows.values_mut() {
            if now.duration_since(w.last) >= quiet {
                catch_up.append(&mut w.held);
            }
        }
        for n in catch_up {
            if self.is_news(&n) {
                info!(source = ?n.source, trap = %n.trap_oid, "notification source quiet: sending the state held back");
                self.deliver(n).await;
            }
        }
    }

    /// Whether a held-back state is not what the manager last received.
    fn is_news(&self, n: &Notification) -> bool {
        let (Some(source), Some(state)) = (&n.source, n.state) else {
            return false;
        };
        self.last_state.get(&(source.clone(), state)) != Some(&n.trap_oid)
    }

    fn request_id(&mut self) -> i32 {
        let id = self.next_request_id;
        self.next_request_id = if id >= i32::MAX - 1 { 1 } else { id + 1 };
        id
    }

    fn socket_for(&self, addr: SocketAddr) -> &UdpSocket {
        match (&self.v6, addr.is_ipv6()) {
            (Some(s), true) => s,
            _ => &self.v4,
        }
    }

    async fn send(&self, addr: SocketAddr, datagram: &[u8]) -> bool {
        match self.socket_for(addr).send_to(datagram, addr).await {
            Ok(_) => true,
            Err(e) => {
                inc(&self.stats.send_errors);
                debug!(%addr, error = %e, "notification send failed");
                false
            }
        }
    }

    async fn originate(&mut self, n: Notification) {
        if self.admit(&n) {
            self.deliver(n).await;
        }
    }

    /// Sends `n` to every sink (storm control passed).
    async fn deliver(&mut self, n: Notification) {
        if let (Some(source), Some(state)) = (&n.source, n.state) {
            self.last_state
                .insert((source.clone(), state), n.trap_oid.clone());
        }
        let up = (self.up_time)();
        let targets = match &self.config.targets {
            Some(t) => t.sinks(&n),
            None => Vec::new(),
        };
        debug!(trap = %n.trap_oid, sinks = self.config.sinks.len(), targets = targets.len(), "notification");
        if let Some(tx) = &self.config.forward {
            if tx.try_send(n.v2_varbinds(up)).is_ok() {
                inc(&self.stats.traps_sent);
            } else {
                inc(&self.stats.send_errors);
            }
        }
        let fixed = self.config.sinks.iter().cloned().enumerate();
        let all: Vec<(Option<usize>, Sink)> = fixed
            .map(|(i, s)| (Some(i), s))
            .chain(targets.into_iter().map(|s| (None, s)))
            .collect();
        let mut budget = self.config.max_datagrams_per_notification.max(1);
        let mut outstanding: usize = self.pending.iter().map(|q| q.informs.len()).sum();
        let mut capped = 0u64;
        for (fixed_index, sink) in all {
            let inform = matches!(
                &sink.kind,
                SinkKind::InformV2c { .. }
                    | SinkKind::Wrapped {
                        confirm: Some(_),
                        ..
                    }
            );
            // The caps, before anything is built or sent (or discovered).
            if budget == 0 || (inform && outstanding >= self.config.max_outstanding_informs) {
                capped += 1;
                continue;
            }
            let (datagram, confirm, pdu) = match &sink.kind {
                SinkKind::TrapV1 { community } => {
                    let m = Message {
                        version: Version::V1,
                        community: community.clone(),
                        pdu: Pdu::TrapV1(n.to_v1(up, self.config.agent_addr)),
                    };
                    (m.to_bytes(), None, None)
                }
                SinkKind::TrapV2c { community } => {
                    let body = PduBody::request(self.request_id(), n.v2_varbinds(up));
                    let m = Message {
                        version: Version::V2c,
                        community: community.clone(),
                        pdu: Pdu::SnmpV2Trap(body),
                    };
                    (m.to_bytes(), None, None)
                }
                SinkKind::InformV2c {
                    community,
                    timeout,
                    retries,
                } => {
                    let rid = self.request_id();
                    let m = Message {
                        version: Version::V2c,
                        community: community.clone(),
                        pdu: Pdu::InformRequest(PduBody::request(rid, n.v2_varbinds(up))),
                    };
                    (m.to_bytes(), Some((rid, *timeout, *retries)), None)
                }
                SinkKind::Wrapped { wrapper, confirm } => {
                    let rid = self.request_id();
                    let body = PduBody::request(rid, n.v2_varbinds(up));
                    let pdu = match confirm {
                        Some(_) => Pdu::InformRequest(body),
                        None => Pdu::SnmpV2Trap(body),
                    };
                    let confirm = confirm.map(|(t, r)| (rid, t, r));
                    match (wrapper.wrap(&pdu), confirm) {
                        (Ok(d), _) => (d, confirm, Some(pdu)),
                        // An inform whose receiver is not discovered yet
                        // waits for its retries like a lost one.
                        (Err(e), Some(_)) => {
                            debug!(sink = %sink.addr, error = %e, "inform not wrapped yet");
                            refresh(wrapper, &self.refreshed);
                            (Vec::new(), confirm, Some(pdu))
                        }
                        (Err(e), None) => {
                            warn!(sink = %sink.addr, error = %e, "cannot wrap notification");
                            inc(&self.stats.send_errors);
                            continue;
                        }
                    }
                }
            };
            // An inform's retries within what is left of the budget.
            let confirm = match confirm {
                Some((rid, timeout, retries)) => {
                    let left = u32::try_from(budget - 1).unwrap_or(u32::MAX);
                    let retries = retries.min(left);
                    budget -= 1 + retries as usize;
                    outstanding += 1;
                    Some((rid, timeout, retries))
                }
                None => {
                    budget -= 1;
                    None
                }
            };
            let sent = !datagram.is_empty() && self.send(sink.addr, &datagram).await;
            match confirm {
                None => {
                    if sent {
                        inc(&self.stats.traps_sent);
                    }
                }
                Some((request_id, timeout, retries)) => {
                    inc(&self.stats.informs_sent);
                    let queue = match fixed_index {
                        Some(i) => i,
                        None => self.queue_for(&sink),
                    };
                    // A failed send is retried like a lost one.
                    self.track(
                        queue,
                        PendingInform {
                            request_id,
                            datagram,
                            pdu,
                            tries_left: retries,
                            timeout,
                            deadline: Instant::now() + timeout,
                            trap_oid: n.trap_oid.clone(),
                        },
                    );
                }
            }
        }
        if capped > 0 {
            let total = self.stats.capped.fetch_add(capped, Ordering::Relaxed) + capped;
            warn!(trap = %n.trap_oid, receivers_left_out = capped, total_capped = total,
                  max_datagrams = self.config.max_datagrams_per_notification,
                  max_outstanding_informs = self.config.max_outstanding_informs,
                  "notification not sent to every receiver: datagram or outstanding-inform cap");
        }
    }

    /// The queue of a target's informs (a new one for a new target).
    fn queue_for(&mut self, sink: &Sink) -> usize {
        let fixed = self.config.sinks.len();
        match self
            .pending
            .iter()
            .skip(fixed)
            .position(|q| q.sink.same(sink))
        {
            Some(i) => fixed + i,
            None => {
                self.pending.push(Queue {
                    sink: sink.clone(),
                    informs: VecDeque::new(),
                });
                self.pending.len() - 1
            }
        }
    }

    /// Forgets the queues of targets with nothing left to acknowledge.
    fn prune(&mut self) {
        let fixed = self.config.sinks.len();
        let mut i = 0;
        self.pending.retain(|q| {
            i += 1;
            i <= fixed || !q.informs.is_empty()
        });
    }

    fn track(&mut self, queue: usize, p: PendingInform) {
        let max = self.config.max_pending_informs.max(1);
        let Some(Queue { sink, informs: q }) = self.pending.get_mut(queue) else {
            return;
        };
        let addr = sink.addr;
        while q.len() >= max {
            if let Some(old) = q.pop_front() {
                let total = self.stats.informs_dropped.fetch_add(1, Ordering::Relaxed) + 1;
                warn!(sink = %addr, trap = %old.trap_oid, total_dropped = total,
                      "inform dropped: too many unacknowledged informs to this sink");
            }
        }
        q.push_back(p);
    }

    /// A datagram on the originator's socket: a Response acknowledges the
    /// inform with its request-id, from the sink it was sent to.
    fn on_datagram(&mut self, src: SocketAddr, data: &[u8]) {
        for Queue { sink, informs: q } in &mut self.pending {
            if !same_endpoint(sink.addr, src) {
                continue;
            }
            let pdu = match &sink.kind {
                SinkKind::InformV2c { community, .. } => match Message::decode(data) {
                    Ok(m) if m.version == Version::V2c && &m.community == community => m.pdu,
                    _ => continue,
                },
                SinkKind::Wrapped { wrapper, .. } => match wrapper.unwrap_response(data) {
                    Some(p) => p,
                    None => {
                        // E.g. a Report from a receiver that restarted.
                        refresh(wrapper, &self.refreshed);
                        continue;
                    }
                },
                _ => continue,
            };
            let Pdu::Response(body) = pdu else { continue };
            if let Some(pos) = q.iter().position(|p| p.request_id == body.request_id) {
                q.remove(pos);
                inc(&self.stats.informs_acked);
                debug!(sink = %src, request_id = body.request_id, "inform acknowledged");
                self.prune();
                return;
            }
        }
        debug!(%src, len = data.len(), "unexpected datagram on the notification socket");
    }

    /// A wrapper's refresh is over (an SNMPv3 receiver discovered): the
    /// informs to it that could not be wrapped yet go out now rather than at
    /// their next retry (a receiver of a new target is discovered with its
    /// first inform), their timeout starting again.
    async fn on_refreshed(&mut self, key: usize) {
        let now = Instant::now();
        let mut send = Vec::new();
        for Queue { sink, informs } in &mut self.pending {
            let SinkKind::Wrapped { wrapper, .. } = &sink.kind else {
                continue;
            };
            if wrapper_key(wrapper) != key {
                continue;
            }
            for p in informs.iter_mut().filter(|p| p.datagram.is_empty()) {
                let Some(Ok(d)) = p.pdu.as_ref().map(|pdu| wrapper.wrap(pdu)) else {
                    continue;
                };
                p.datagram = d;
                p.deadline = now + p.timeout;
                send.push((sink.addr, p.datagram.clone()));
            }
        }
        for (addr, d) in send {
            self.send(addr, &d).await;
        }
    }

    /// Resends or gives up the informs whose timeout passed.
    async fn expire(&mut self) {
        let now = Instant::now();
        let mut resend = Vec::new();
        for Queue { sink, informs: q } in &mut self.pending {
            let addr = sink.addr;
            let wrapper = match &sink.kind {
                SinkKind::Wrapped { wrapper, .. } => Some(wrapper),
                _ => None,
            };
            q.retain_mut(|p| {
                if p.deadline > now {
                    return true;
                }
                if p.tries_left == 0 {
                    let total = self.stats.informs_dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    warn!(sink = %addr, trap = %p.trap_oid, request_id = p.request_id,
                          total_dropped = total,
                          "inform not acknowledged after its retries; dropped");
                    return false;
                }
                p.tries_left -= 1;
                p.deadline = now + p.timeout;
                debug!(sink = %addr, request_id = p.request_id, tries_left = p.tries_left, "inform retry");
                if let (Some(w), Some(pdu)) = (wrapper, &p.pdu) {
                    // Unanswered: the receiver may have restarted.
                    refresh(w, &self.refreshed);
                    match w.wrap(pdu) {
                        Ok(d) => p.datagram = d,
                        Err(e) => debug!(sink = %addr, error = %e, "inform not wrapped yet"),
                    }
                }
                if !p.datagram.is_empty() {
                    resend.push((addr, p.datagram.clone()));
                }
                true
            });
        }
        self.prune();
        for (addr, d) in resend {
            inc(&self.stats.inform_retries);
            self.send(addr, &d).await;
        }
    }
}

fn log_suppressed(key: &str, n: u32, total: u64) {
    info!(source = %key, suppressed = n, total_suppressed = total, "notification storm over: notifications suppressed in the interval");
}

/// Same address and port, IPv4-mapped IPv6 equal to IPv4.
fn same_endpoint(a: SocketAddr, b: SocketAddr) -> bool {
    let canon = |s: SocketAddr| match s {
        SocketAddr::V6(v6) => v6
            .ip()
            .to_ipv4_mapped()
            .map_or(s, |v4| SocketAddr::from((v4, v6.port()))),
        v4 => v4,
    };
    canon(a) == canon(b)
}

async fn sleep_until_opt(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLD_START: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5, 1];
    const LINK_DOWN: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5, 3];
    const LINK_UP: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5, 4];
    /// ibSmTrapOutOfService = ibSmGenericTrapsPrefix(.. ibSmGenericTraps 0) 2.
    const OUT_OF_SERVICE: &[u32] = &[1, 3, 6, 1, 3, 117, 7, 3, 1, 0, 2];

    #[test]
    fn v2_varbinds_start_with_uptime_and_trap_oid() {
        let n = Notification::new(
            LINK_DOWN,
            vec![VarBind::new(
                Oid::from_slice(&[1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 3]),
                Value::Integer(3),
            )],
        );
        let v = n.v2_varbinds(42);
        assert_eq!(v[0].oid.as_slice(), SYS_UP_TIME_0);
        assert_eq!(v[0].value, Value::TimeTicks(42));
        assert_eq!(v[1].oid.as_slice(), SNMP_TRAP_OID_0);
        assert_eq!(v[1].value, Value::ObjectId(Oid::from_slice(LINK_DOWN)));
        assert_eq!(v.len(), 3);
    }

    #[test]
    fn rfc3584_translation() {
        let ip = Ipv4Addr::new(10, 0, 0, 1);
        let t = Notification::new(COLD_START, vec![]).to_v1(7, ip);
        assert_eq!(t.enterprise.as_slice(), SNMP_TRAPS);
        assert_eq!((t.generic_trap, t.specific_trap, t.time_stamp), (0, 0, 7));
        assert_eq!(t.agent_addr, [10, 0, 0, 1]);
        let t = Notification::new(LINK_DOWN, vec![]).to_v1(7, ip);
        assert_eq!(t.generic_trap, 2);
        // Next-to-last 0 is dropped with the last sub-identifier.
        let vbs = vec![
            VarBind::new(Oid::from_slice(&[1, 3, 6, 1, 4, 1, 1]), Value::Integer(1)),
            VarBind::new(Oid::from_slice(&[1, 3, 6, 1, 4, 1, 2]), Value::Counter64(1)),
        ];
        let t = Notification::new(OUT_OF_SERVICE, vbs).to_v1(7, ip);
        assert_eq!(t.enterprise.as_slice(), &[1, 3, 6, 1, 3, 117, 7, 3, 1]);
        assert_eq!((t.generic_trap, t.specific_trap), (6, 2));
        assert_eq!(t.varbinds.len(), 1, "Counter64 removed");
        // Without the 0 only the last is removed.
        let t = Notification::new(&[1, 3, 6, 1, 4, 1, 9, 5], vec![]).to_v1(0, ip);
        assert_eq!(t.enterprise.as_slice(), &[1, 3, 6, 1, 4, 1, 9]);
        assert_eq!(t.specific_trap, 5);
        // snmpTrapEnterprise.0 names a generic trap's enterprise.
        let e = Oid::from_slice(&[1, 3, 6, 1, 4, 1, 99]);
        let vb = VarBind::new(
            Oid::from_slice(SNMP_TRAP_ENTERPRISE_0),
            Value::ObjectId(e.clone()),
        );
        let t = Notification::new(COLD_START, vec![vb]).to_v1(0, ip);
        assert_eq!(t.enterprise, e);
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Answers `m`, an SNMPv2c InformRequest for `trap`, as a receiver.
    async fn acknowledge(rx: &UdpSocket, m: Message, from: SocketAddr, trap: &[u32]) {
        let Pdu::InformRequest(body) = m.pdu else {
            panic!("not an inform")
        };
        assert_eq!(
            body.varbinds[1].value,
            Value::ObjectId(Oid::from_slice(trap))
        );
        let resp = Message {
            version: Version::V2c,
            community: m.community,
            pdu: Pdu::Response(body),
        };
        rx.send_to(&resp.to_bytes(), from).await.unwrap();
    }

    /// An inform is retried until answered; a trap is sent once; a
    /// receiver that never answers gets retries then the inform is dropped.
    #[test]
    fn informs_retry_until_acknowledged() {
        rt().block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let dead = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let cfg = OriginatorConfig {
                sinks: vec![
                    Sink {
                        addr: rx.local_addr().unwrap(),
                        kind: SinkKind::InformV2c {
                            community: b"public".to_vec(),
                            timeout: Duration::from_millis(200),
                            retries: 3,
                        },
                    },
                    Sink {
                        addr: dead.local_addr().unwrap(),
                        kind: SinkKind::InformV2c {
                            community: b"public".to_vec(),
                            timeout: Duration::from_millis(20),
                            retries: 2,
                        },
                    },
                ],
                ..OriginatorConfig::default()
            };
            let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
            assert!(n.notify(Notification::new(COLD_START, vec![])));
            let mut buf = vec![0u8; 2000];
            // Ignore the first copy: the originator must send it again.
            let (len, _) = rx.recv_from(&mut buf).await.unwrap();
            let first = Message::decode(&buf[..len]).unwrap();
            let (len, from) = rx.recv_from(&mut buf).await.unwrap();
            let again = Message::decode(&buf[..len]).unwrap();
            assert_eq!(first, again);
            acknowledge(&rx, again, from, COLD_START).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            let s = n.stats();
            assert_eq!(NotifyStats::get(&s.informs_sent), 2);
            assert_eq!(NotifyStats::get(&s.informs_acked), 1);
            assert_eq!(NotifyStats::get(&s.informs_dropped), 1);
            assert!(NotifyStats::get(&s.inform_retries) >= 3);
        });
    }

    /// Sends `notifications` coldStarts to 20 receivers of one socket,
    /// each an inform of (`timeout`, `retries`), under `cfg`'s caps: the
    /// datagrams received until 500 ms pass without one, and the
    /// receivers counted as capped.
    fn capped_run(
        cfg: OriginatorConfig,
        timeout: Duration,
        retries: u32,
        notifications: usize,
    ) -> (usize, u64) {
        rt().block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let inform = Sink {
                addr: rx.local_addr().unwrap(),
                kind: SinkKind::InformV2c {
                    community: b"public".to_vec(),
                    timeout,
                    retries,
                },
            };
            let cfg = OriginatorConfig {
                sinks: vec![inform; 20],
                ..cfg
            };
            let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
            for _ in 0..notifications {
                assert!(n.notify(Notification::new(COLD_START, vec![])));
            }
            let mut buf = vec![0u8; 2000];
            let mut received = 0;
            while let Ok(Ok(_)) =
                tokio::time::timeout(Duration::from_millis(500), rx.recv_from(&mut buf)).await
            {
                received += 1;
            }
            (received, NotifyStats::get(&n.stats().capped))
        })
    }

    /// One notification causes at most `max_datagrams_per_notification`
    /// datagrams, first sends and retries together; informs past
    /// `max_outstanding_informs` are not sent. Both counted in `capped`.
    #[test]
    fn datagrams_per_notification_and_outstanding_informs_are_capped() {
        let cfg = OriginatorConfig {
            max_datagrams_per_notification: 30,
            max_outstanding_informs: 25,
            ..OriginatorConfig::default()
        };
        // The first inform takes all 30 (1 + 29 retries), the other 19
        // receivers get nothing.
        let run = capped_run(cfg.clone(), Duration::from_millis(10), 255, 1);
        assert_eq!(run, (30, 19));
        // Two notifications of 20 informs each: 25 outstanding in all.
        let cfg = OriginatorConfig {
            max_datagrams_per_notification: DEFAULT_MAX_DATAGRAMS_PER_NOTIFICATION,
            ..cfg
        };
        let run = capped_run(cfg, Duration::from_secs(60), 0, 2);
        assert_eq!(run, (25, 15));
    }

    /// Receivers chosen per notification: each gets what the source names
    /// at that moment; an inform to one is acknowledged through the queue
    /// kept for it.
    #[test]
    fn targets_are_chosen_per_notification() {
        /// The sink for linkDown only.
        #[derive(Debug)]
        struct Chosen(Sink);
        impl SinkSource for Chosen {
            fn sinks(&self, n: &Notification) -> Vec<Sink> {
                match n.trap_oid.as_slice() {
                    LINK_DOWN => vec![self.0.clone()],
                    _ => Vec::new(),
                }
            }
        }
        rt().block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let inform = Sink {
                addr: rx.local_addr().unwrap(),
                kind: SinkKind::InformV2c {
                    community: b"public".to_vec(),
                    timeout: Duration::from_secs(30),
                    retries: 1,
                },
            };
            let cfg = OriginatorConfig {
                targets: Some(Arc::new(Chosen(inform))),
                ..OriginatorConfig::default()
            };
            let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
            // Nowhere to go: nothing sent.
            n.notify(Notification::new(COLD_START, vec![]));
            n.notify(Notification::new(LINK_DOWN, vec![]));
            let mut buf = vec![0u8; 2000];
            let (len, from) = rx.recv_from(&mut buf).await.unwrap();
            let m = Message::decode(&buf[..len]).unwrap();
            acknowledge(&rx, m, from, LINK_DOWN).await;
            let s = n.stats();
            while NotifyStats::get(&s.informs_acked) == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert_eq!(NotifyStats::get(&s.informs_sent), 1);
            assert_eq!(NotifyStats::get(&s.traps_sent), 0);
        });
    }

    #[test]
    fn storm_control_counts_suppressed() {
        rt().block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let cfg = OriginatorConfig {
                sinks: vec![Sink {
                    addr: rx.local_addr().unwrap(),
                    kind: SinkKind::TrapV1 {
                        community: b"public".to_vec(),
                    },
                }],
                storm: StormControl {
                    max_per_interval: 3,
                    interval: Duration::from_secs(60),
                    ..StormControl::default()
                },
                ..OriginatorConfig::default()
            };
            let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
            for _ in 0..10 {
                n.notify(Notification::new(LINK_DOWN, vec![]).with_source("a"));
            }
            n.notify(Notification::new(LINK_DOWN, vec![]).with_source("b"));
            n.notify(Notification::new(COLD_START, vec![]));
            let mut buf = vec![0u8; 2000];
            for _ in 0..5 {
                let (len, _) = rx.recv_from(&mut buf).await.unwrap();
                let m = Message::decode(&buf[..len]).unwrap();
                assert!(matches!(m.pdu, Pdu::TrapV1(_)));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(NotifyStats::get(&n.stats().suppressed), 7);
            assert_eq!(NotifyStats::get(&n.stats().traps_sent), 5);
        });
    }

    /// An SNMPv2c trap sink at `rx`.
    fn v2c_sink(rx: &UdpSocket) -> Sink {
        Sink {
            addr: rx.local_addr().unwrap(),
            kind: SinkKind::TrapV2c {
                community: b"public".to_vec(),
            },
        }
    }

    /// A burst that ends with the link up, then a quiet source: the held
    /// linkUp goes out once the source has been quiet for `quiet`, long
    /// before the hour-long interval ends, and the interval's limit still
    /// holds for a second burst (whose final state goes out the same way).
    #[test]
    fn storm_control_sends_the_state_held_back_once_the_source_is_quiet() {
        rt().block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let cfg = OriginatorConfig {
                sinks: vec![v2c_sink(&rx)],
                storm: StormControl {
                    max_per_interval: 2,
                    interval: Duration::from_secs(3600),
                    quiet: Duration::from_millis(100),
                },
                ..OriginatorConfig::default()
            };
            let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
            let link = |up: bool| {
                let oid = if up { LINK_UP } else { LINK_DOWN };
                Notification::new(oid, vec![])
                    .with_source("a")
                    .with_state("link")
            };
            let mut buf = vec![0u8; 2000];
            let mut next = async || {
                // A safety net for a broken build, not a timing assertion:
                // the interval is an hour.
                let (len, _) =
                    tokio::time::timeout(Duration::from_secs(600), rx.recv_from(&mut buf))
                        .await
                        .expect("the held-back state before the interval's end")
                        .unwrap();
                let m = Message::decode(&buf[..len]).unwrap();
                let Pdu::SnmpV2Trap(b) = m.pdu else { panic!() };
                b.varbinds[1].value.clone()
            };
            let up = Value::ObjectId(Oid::from_slice(LINK_UP));
            let down = Value::ObjectId(Oid::from_slice(LINK_DOWN));
            // down, up (sent), then 19 more flaps ending up (held).
            for i in 0..40 {
                n.notify(link(i % 2 == 1));
            }
            assert_eq!(next().await, down);
            assert_eq!(next().await, up);
            // The manager's last word was up and the burst ended up: the
            // held linkUp is what it has, so nothing more. A burst ending
            // down then: its linkDown once quiet.
            for i in 0..5 {
                n.notify(link(i % 2 == 1));
            }
            assert_eq!(next().await, down, "the final state, held back");
            assert_eq!(NotifyStats::get(&n.stats().suppressed), 38 + 5);
            // Up again, still within the interval: held, then sent.
            n.notify(link(true));
            assert_eq!(next().await, up);
            assert_eq!(NotifyStats::get(&n.stats().traps_sent), 4);
        });
    }

    /// A storm that ends with the link up: the manager's last word is
    /// linkUp, sent as the window ends; a source whose last held-back state
    /// is what the manager already has gets nothing more; events are only
    /// counted.
    #[test]
    fn storm_control_sends_the_state_held_back_when_the_window_ends() {
        rt().block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let cfg = OriginatorConfig {
                sinks: vec![v2c_sink(&rx)],
                storm: StormControl {
                    max_per_interval: 2,
                    interval: Duration::from_millis(600),
                    ..StormControl::default()
                },
                ..OriginatorConfig::default()
            };
            let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
            let link = |up: bool, source: &str| {
                let oid = if up { LINK_UP } else { LINK_DOWN };
                Notification::new(oid, vec![])
                    .with_source(source)
                    .with_state("link")
            };
            // "a": up, down (sent), up, down, up (held): it ends up, the
            // manager's last word was down.
            for i in 0..5 {
                n.notify(link(i % 2 == 0, "a"));
            }
            // "b": down (sent), up (sent), down (held), up (held): the
            // manager's last is up, nothing more to send.
            for i in 0..4 {
                n.notify(link(i % 2 == 1, "b"));
            }
            // An event with no state, held back: only counted.
            for _ in 0..3 {
                n.notify(Notification::new(COLD_START, vec![]).with_source("c"));
            }
            let mut got = Vec::new();
            let mut buf = vec![0u8; 2000];
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            while let Ok(Ok((len, _))) =
                tokio::time::timeout_at(deadline, rx.recv_from(&mut buf)).await
            {
                let m = Message::decode(&buf[..len]).unwrap();
                let Pdu::SnmpV2Trap(b) = m.pdu else { panic!() };
                got.push(b.varbinds[1].value.clone());
            }
            let up = Value::ObjectId(Oid::from_slice(LINK_UP));
            let down = Value::ObjectId(Oid::from_slice(LINK_DOWN));
            let cold = Value::ObjectId(Oid::from_slice(COLD_START));
            // 2 + 2 + 2 within the windows, then a's linkUp.
            assert_eq!(got.len(), 7, "{got:?}");
            assert_eq!(got.last(), Some(&up));
            assert_eq!(got.iter().filter(|v| **v == cold).count(), 2);
            assert_eq!(got.iter().filter(|v| **v == down).count(), 2);
            assert_eq!(NotifyStats::get(&n.stats().suppressed), 6);
        });
    }
}
