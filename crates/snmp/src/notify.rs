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
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

mod inform;
mod notification;
mod sink;
mod storm;
mod v1;

pub use notification::{Notification, SNMP_TRAP_OID_0, SYS_UP_TIME_0};
pub use sink::{MessageWrapper, RefreshFuture, Sink, SinkKind, SinkSource};
pub use storm::StormControl;
pub use v1::{ENTERPRISE_SPECIFIC, SNMP_TRAPS, SNMP_TRAP_ADDRESS_0, SNMP_TRAP_ENTERPRISE_0};

use crate::oid::Oid;
use crate::value::VarBind;
use inform::{PendingInform, Queue};
use sink::refresh;
use storm::Window;

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

pub(super) fn inc(c: &AtomicU64) {
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

pub(super) struct Task {
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
        self.forward(&n, up);
        let fixed = self.config.sinks.iter().cloned().enumerate();
        let all: Vec<(Option<usize>, Sink)> = fixed
            .map(|(i, s)| (Some(i), s))
            .chain(targets.into_iter().map(|s| (None, s)))
            .collect();
        let mut budget = self.config.max_datagrams_per_notification.max(1);
        let mut outstanding: usize = self.pending.iter().map(|q| q.informs.len()).sum();
        let mut capped = 0u64;
        for (fixed_index, sink) in all {
            let inform = sink.kind.informs();
            // The caps, before anything is built or sent (or discovered).
            if budget == 0 || (inform && outstanding >= self.config.max_outstanding_informs) {
                capped += 1;
                continue;
            }
            if self.send_to(fixed_index, &sink, &n, up, &mut budget).await {
                outstanding += usize::from(inform);
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

    /// Hands `n` to the other transport, if any (AgentX Notify-PDUs).
    fn forward(&self, n: &Notification, up: u32) {
        if let Some(tx) = &self.config.forward {
            if tx.try_send(n.v2_varbinds(up)).is_ok() {
                inc(&self.stats.traps_sent);
            } else {
                inc(&self.stats.send_errors);
            }
        }
    }

    /// Sends `n` to `sink` (the fixed sink `fixed_index`, or a target),
    /// taking its datagrams from `budget`: an inform's retries are cut to
    /// what is left. False when nothing could be built to send.
    async fn send_to(
        &mut self,
        fixed_index: Option<usize>,
        sink: &Sink,
        n: &Notification,
        up: u32,
        budget: &mut usize,
    ) -> bool {
        let agent_addr = self.config.agent_addr;
        let e = sink.kind.encode(n, up, agent_addr, || self.request_id());
        let datagram = match (e.datagram, e.confirm) {
            (Ok(d), _) => d,
            // An inform whose receiver is not discovered yet waits for its
            // retries like a lost one.
            (Err(err), Some(_)) => {
                debug!(sink = %sink.addr, error = %err, "inform not wrapped yet");
                if let Some(w) = sink.kind.wrapper() {
                    refresh(w, &self.refreshed);
                }
                Vec::new()
            }
            (Err(err), None) => {
                warn!(sink = %sink.addr, error = %err, "cannot wrap notification");
                inc(&self.stats.send_errors);
                return false;
            }
        };
        let Some((request_id, timeout, retries)) = e.confirm else {
            *budget -= 1;
            if !datagram.is_empty() && self.send(sink.addr, &datagram).await {
                inc(&self.stats.traps_sent);
            }
            return true;
        };
        let retries = retries.min(u32::try_from(*budget - 1).unwrap_or(u32::MAX));
        *budget -= 1 + retries as usize;
        if !datagram.is_empty() {
            // A failed send is retried like a lost one.
            self.send(sink.addr, &datagram).await;
        }
        inc(&self.stats.informs_sent);
        let queue = match fixed_index {
            Some(i) => i,
            None => self.queue_for(sink),
        };
        self.track(
            queue,
            PendingInform {
                request_id,
                datagram,
                pdu: e.pdu,
                tries_left: retries,
                timeout,
                deadline: Instant::now() + timeout,
                trap_oid: n.trap_oid.clone(),
                context: n.context.clone(),
            },
        );
        true
    }
}

async fn sleep_until_opt(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
