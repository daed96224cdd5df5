//! An AgentX subagent session (RFC 2741): connects to a master agent (net-snmp's
//! snmpd with `master agentx`), registers the application's subtrees and answers
//! the master's requests from the same [`Dispatcher`], views and Set controller
//! the UDP transport uses.
//!
//! One task owns the connection. Reads are answered inline from a view obtained
//! per request (never waiting on a sweep), so the master's agentXTimeout (1 s
//! by default) is never at risk. Sets follow the master's four phases: TestSet
//! runs phase 1 over the whole varbind list and keeps the changes; CommitSet
//! hands them to the controller (the one control path: nothing reaches the
//! fabric before it); UndoSet after a successful commit asks the controller to
//! take the commit back (agent state can be; a change that reached the fabric
//! cannot, and the answer is undoFailed); CleanupSet drops what TestSet kept. The session reconnects with backoff when the master
//! goes away or is not there yet, re-registering everything; logs say what
//! happened once per state change, not per retry.

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tracing::{debug, info, warn};

use super::pdu::{self, Body, CloseReason, Header, Pdu, Region, SearchRange, HEADER_LEN};
use crate::agent::{ApplyErrorKind, SetController};
use crate::context::Contexts;
use crate::dispatch::Dispatcher;
use crate::mib::SetError;
use crate::oid::Oid;
use crate::pdu::ErrorStatus;
use crate::value::{Value, VarBind};

/// Where the master listens, in snmpd.conf's `agentXSocket` syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MasterAddress {
    /// A Unix stream socket (the default, `/var/agentx/master`).
    Unix(PathBuf),
    /// `tcp:HOST:PORT`.
    Tcp(String),
}

/// net-snmp's default master socket.
pub const DEFAULT_SOCKET: &str = "/var/agentx/master";

impl std::str::FromStr for MasterAddress {
    type Err = String;

    /// `PATH`, `unix:PATH`, `tcp:HOST:PORT` (IPv6 hosts in brackets) or
    /// `HOST:PORT`-less forms net-snmp does not accept are refused.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(MasterAddress::Unix(PathBuf::from(DEFAULT_SOCKET)));
        }
        if let Some(rest) = s.strip_prefix("tcp:") {
            let ok = rest
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
            return if ok {
                Ok(MasterAddress::Tcp(rest.to_string()))
            } else {
                Err(format!("{s:?}: expected tcp:HOST:PORT"))
            };
        }
        let path = s.strip_prefix("unix:").unwrap_or(s);
        if path.starts_with('/') {
            Ok(MasterAddress::Unix(PathBuf::from(path)))
        } else {
            Err(format!(
                "{s:?}: expected a Unix socket path (/var/agentx/master) or tcp:HOST:PORT"
            ))
        }
    }
}

impl std::fmt::Display for MasterAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MasterAddress::Unix(p) => write!(f, "{}", p.display()),
            MasterAddress::Tcp(a) => write!(f, "tcp:{a}"),
        }
    }
}

/// One registration: a subtree, or with `range`, the OIDs whose sub-identifier
/// number `range.0` (1-based) runs from the subtree's up to `range.1` (RFC 2741
/// 6.2.3), e.g. every column of one table row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    pub subtree: Oid,
    pub range: Option<(u8, u32)>,
}

impl Registration {
    pub fn subtree(subtree: Oid) -> Self {
        Registration {
            subtree,
            range: None,
        }
    }

    /// Columns `first..=last` of the row `index` of the table entry `entry`.
    pub fn row(entry: &Oid, first: u32, last: u32, index: &[u32]) -> Self {
        let mut subtree = entry.join(&[first]);
        subtree.extend_from_slice(index);
        Registration {
            range: u8::try_from(entry.len() + 1).ok().map(|at| (at, last)),
            subtree,
        }
    }
}

/// Registrations computed when a session opens (rows that exist then).
pub type RegistrationsFn = Arc<dyn Fn() -> Vec<Registration> + Send + Sync>;

/// What the subagent registers and how it keeps the session alive.
#[derive(Clone)]
pub struct SubagentConfig {
    pub master: MasterAddress,
    /// The subtrees served (each registered at `priority`).
    pub regions: Vec<Registration>,
    /// More registrations, computed at each (re)connection.
    pub dynamic_regions: Option<RegistrationsFn>,
    /// Registration priority (lower wins; 127 is the RFC's default).
    pub priority: u8,
    /// Open-PDU id and description (the subagent's identity in the master).
    pub id: Oid,
    pub descr: String,
    /// sysORTable rows the master should show (AddAgentCaps).
    pub agent_caps: Vec<(Oid, String)>,
    /// How often the master is pinged to notice a silent loss of the session.
    pub ping_interval: Duration,
    /// How long an answer from the master may take.
    pub response_timeout: Duration,
    /// Longest wait between reconnection attempts.
    pub max_backoff: Duration,
}

impl SubagentConfig {
    pub fn new(master: MasterAddress, regions: Vec<Registration>) -> Self {
        SubagentConfig {
            master,
            regions,
            dynamic_regions: None,
            priority: 127,
            id: Oid::new(vec![]),
            descr: "ibsnmpd".to_string(),
            agent_caps: Vec::new(),
            ping_interval: Duration::from_secs(15),
            response_timeout: Duration::from_secs(5),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// The non-default contexts a subagent serves (RFC 2741 6.1.1: a
/// registration in a non-default context carries the context): which names
/// exist now, the subtrees each registers, and the resolver that answers
/// the master's requests in them.
pub struct ContextRegistrations<V, K> {
    /// Answers a request in a context (its view and objects).
    pub resolver: Arc<dyn Contexts<V, K>>,
    /// The subtrees registered in every context.
    pub subtrees: Vec<Oid>,
    /// How often the names are compared with what is registered (contexts
    /// come and go with the fabric's nodes): new ones are registered, gone
    /// ones unregistered.
    pub refresh: Duration,
    /// How many registration requests may wait for the master's answer at
    /// once (the session keeps answering the master meanwhile).
    pub window: usize,
}

impl<V, K> ContextRegistrations<V, K> {
    /// Every context name the resolver lists, in its order.
    fn names(&self) -> Vec<Vec<u8>> {
        let mut names = Vec::new();
        let mut after = Vec::new();
        while let Some(n) = self.resolver.next_name(&after) {
            names.push(n.clone());
            after = n;
        }
        names
    }
}

/// A notification for the master to send to its sinks (snmpTrapOID.0 and the
/// objects; the master adds sysUpTime.0).
pub type Notification = Vec<VarBind>;

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// The subagent: one session at a time, reconnecting for ever.
pub struct Subagent<V, K> {
    config: SubagentConfig,
    /// Non-default contexts served over the session ([`Subagent::with_contexts`]).
    contexts: Option<ContextRegistrations<V, K>>,
    dispatcher: Arc<Dispatcher<V, K>>,
    view: Box<dyn Fn() -> V + Send + Sync>,
    controller: Arc<dyn SetController<K>>,
    /// sysUpTime in centiseconds, for Response-PDUs.
    up_time: Box<dyn Fn() -> u32 + Send + Sync>,
    notifications: Option<mpsc::Receiver<Notification>>,
}

/// Why a session ended.
#[derive(Debug)]
enum End {
    /// The connection failed or closed.
    Io(io::Error),
    /// The master refused us or broke the protocol.
    Protocol(String),
}

impl From<io::Error> for End {
    fn from(e: io::Error) -> Self {
        End::Io(e)
    }
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Io(e) => write!(f, "{e}"),
            End::Protocol(s) => write!(f, "{s}"),
        }
    }
}

impl<V: 'static, K: Send + 'static> Subagent<V, K> {
    pub fn new<F, U>(
        config: SubagentConfig,
        dispatcher: Arc<Dispatcher<V, K>>,
        view: F,
        controller: Arc<dyn SetController<K>>,
        up_time: U,
    ) -> Self
    where
        F: Fn() -> V + Send + Sync + 'static,
        U: Fn() -> u32 + Send + Sync + 'static,
    {
        Subagent {
            config,
            contexts: None,
            dispatcher,
            view: Box::new(view),
            controller,
            up_time: Box::new(up_time),
            notifications: None,
        }
    }

    /// Serves `contexts` too: each name the resolver lists is registered with
    /// `contexts.subtrees` in that context when the session opens and kept
    /// in step every `contexts.refresh`; the master's requests in a context
    /// are answered from the resolver's view and objects.
    pub fn with_contexts(mut self, contexts: ContextRegistrations<V, K>) -> Self {
        self.contexts = Some(contexts);
        self
    }

    /// Notifications sent through this channel go out as Notify-PDUs (the
    /// master forwards them to its trap sinks). Returns the sender.
    pub fn notification_channel(&mut self, depth: usize) -> mpsc::Sender<Notification> {
        let (tx, rx) = mpsc::channel(depth.max(1));
        self.notifications = Some(rx);
        tx
    }

    /// Runs sessions until `shutdown` completes, then closes the session cleanly.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut backoff = Duration::from_millis(500);
        let mut was_down = false;
        let mut session = 0u64;
        loop {
            let stream = tokio::select! {
                _ = &mut shutdown => return,
                s = connect(&self.config.master) => s,
            };
            let mut stream = match stream {
                Ok(s) => s,
                Err(e) => {
                    if !was_down {
                        warn!(
                            master = %self.config.master,
                            "AgentX master not reachable ({e}); retrying in the background"
                        );
                        was_down = true;
                    }
                    tokio::select! {
                        _ = &mut shutdown => return,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(self.config.max_backoff);
                    continue;
                }
            };
            backoff = Duration::from_millis(500);
            session += 1;
            let mut s = Session {
                stream: &mut stream,
                session_id: 0,
                packet_id: 0,
                pending_set: None,
                committed: false,
                ctx: ContextSync::default(),
            };
            let r = tokio::select! {
                _ = &mut shutdown => None,
                r = s.serve(&mut self, session > 1) => Some(r),
            };
            let Some(r) = r else {
                s.close(CloseReason::Shutdown).await;
                info!(master = %self.config.master, "AgentX session closed (shutdown)");
                return;
            };
            was_down = true;
            match r {
                End::Io(e) => warn!(
                    master = %self.config.master,
                    "AgentX session lost ({e}); reconnecting"
                ),
                End::Protocol(e) => warn!(
                    master = %self.config.master,
                    "AgentX session ended: {e}; reconnecting"
                ),
            }
            tokio::time::sleep(backoff).await;
        }
    }
}

async fn connect(addr: &MasterAddress) -> io::Result<Box<dyn Stream>> {
    Ok(match addr {
        #[cfg(unix)]
        MasterAddress::Unix(p) => Box::new(tokio::net::UnixStream::connect(p).await?),
        #[cfg(not(unix))]
        MasterAddress::Unix(_) => {
            return Err(io::Error::other("Unix sockets are not available here"))
        }
        MasterAddress::Tcp(a) => {
            let s = tokio::net::TcpStream::connect(a.as_str()).await?;
            s.set_nodelay(true)?;
            Box::new(s)
        }
    })
}

/// Reads one whole PDU.
async fn read_pdu(s: &mut (impl AsyncRead + Unpin + ?Sized)) -> Result<Pdu, End> {
    let mut head = [0u8; HEADER_LEN];
    s.read_exact(&mut head).await?;
    let len = pdu::payload_len(&head).unwrap_or(0);
    // The largest PDU net-snmp sends is far below this; a bigger length is a
    // broken stream, not a reason to allocate.
    if len > 1 << 20 {
        return Err(End::Protocol(format!("PDU payload of {len} octets")));
    }
    let mut buf = vec![0u8; HEADER_LEN + len];
    if let Some(h) = buf.get_mut(..HEADER_LEN) {
        h.copy_from_slice(&head);
    }
    if let Some(p) = buf.get_mut(HEADER_LEN..) {
        s.read_exact(p).await?;
    }
    Pdu::decode(&buf).map_err(|e| End::Protocol(format!("undecodable PDU from the master: {e}")))
}

/// One session with the master; `K` is what a Set's varbinds become
/// (the dispatcher's change type).
struct Session<'a, K> {
    stream: &'a mut Box<dyn Stream>,
    session_id: u32,
    packet_id: u32,
    /// TestSet's changes, waiting for CommitSet (transaction id, changes).
    pending_set: Option<(u32, Vec<K>)>,
    /// The pending set was committed (an UndoSet cannot take it back).
    committed: bool,
    /// Context registrations: what is registered, what is still to send.
    ctx: ContextSync,
}

/// The context registrations of one session.
#[derive(Default)]
struct ContextSync {
    /// The contexts registered (or asked for) in this session.
    registered: std::collections::BTreeSet<Vec<u8>>,
    /// Register (true) or unregister (false) requests not sent yet.
    queue: std::collections::VecDeque<(Vec<u8>, Oid, bool)>,
    /// Packet ids of registration requests waiting for an answer.
    outstanding: std::collections::HashSet<u32>,
    /// Registrations the master refused this session (logged once).
    refused: u64,
    /// When the requests now queued or in flight were planned, and how many.
    batch: Option<(tokio::time::Instant, usize)>,
}

impl ContextSync {
    /// Queues what makes the registered contexts `names`.
    fn plan(&mut self, names: Vec<Vec<u8>>, subtrees: &[Oid]) -> (usize, usize) {
        let want: std::collections::BTreeSet<Vec<u8>> = names.into_iter().collect();
        let gone: Vec<Vec<u8>> = self.registered.difference(&want).cloned().collect();
        let new: Vec<Vec<u8>> = want.difference(&self.registered).cloned().collect();
        for c in &gone {
            for t in subtrees {
                self.queue.push_back((c.clone(), t.clone(), false));
            }
        }
        for c in &new {
            for t in subtrees {
                self.queue.push_back((c.clone(), t.clone(), true));
            }
        }
        self.registered = want;
        if !self.queue.is_empty() && self.batch.is_none() {
            self.batch = Some((tokio::time::Instant::now(), 0));
        }
        (new.len(), gone.len())
    }

    /// A registration request answered: logs the batch's end once the
    /// queue is drained (what registering the contexts took).
    fn answered(&mut self) {
        if let Some((_, n)) = self.batch.as_mut() {
            *n += 1;
        }
        if self.queue.is_empty() && self.outstanding.is_empty() {
            if let Some((since, n)) = self.batch.take() {
                info!(
                    requests = n,
                    contexts = self.registered.len(),
                    seconds = since.elapsed().as_secs_f64(),
                    "AgentX: context registrations answered"
                );
            }
        }
    }
}

impl<K: Send + 'static> Session<'_, K> {
    fn next_packet(&mut self) -> u32 {
        self.packet_id = self.packet_id.wrapping_add(1);
        self.packet_id
    }

    async fn send(&mut self, p: &Pdu) -> io::Result<()> {
        self.stream.write_all(&p.encode()).await
    }

    /// Sends a request of ours and waits for its Response, answering nothing
    /// else meanwhile (used only while opening, before any registration).
    async fn call(&mut self, body: Body, timeout: Duration) -> Result<Pdu, End> {
        let id = self.next_packet();
        let p = self.request(id, body);
        self.send(&p).await?;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let r = tokio::time::timeout_at(deadline, read_pdu(&mut **self.stream))
                .await
                .map_err(|_| End::Protocol("the master did not answer in time".into()))??;
            if matches!(r.body, Body::Response { .. }) && r.header.packet_id == id {
                return Ok(r);
            }
            debug!(?r, "AgentX: PDU ignored while waiting for a response");
        }
    }

    async fn close(&mut self, reason: CloseReason) {
        let id = self.next_packet();
        let p = self.request(id, Body::Close(reason));
        let _ = self.send(&p).await;
        let _ = self.stream.flush().await;
    }

    /// Opens the session, registers, then answers requests until the session ends.
    async fn serve<V: 'static>(&mut self, a: &mut Subagent<V, K>, reconnected: bool) -> End {
        match self.open_and_register(a).await {
            Ok(()) => {}
            Err(e) => return e,
        }
        if reconnected {
            info!(master = %a.config.master, session = self.session_id, "AgentX session re-established, subtrees registered again");
        } else {
            info!(master = %a.config.master, session = self.session_id, regions = a.config.regions.len(), "AgentX session open, subtrees registered");
        }
        let mut ping = tokio::time::interval(a.config.ping_interval);
        ping.tick().await;
        let mut ping_outstanding: Option<(u32, tokio::time::Instant)> = None;
        let refresh = a
            .contexts
            .as_ref()
            .map_or(Duration::from_secs(3600), |c| c.refresh);
        // The first tick is at once: the contexts are registered as the
        // session opens, while it already answers the master.
        let mut refresh = tokio::time::interval(refresh.max(Duration::from_millis(100)));
        loop {
            if let Err(e) = self.send_registrations(a).await {
                return End::Io(e);
            }
            let notification = async {
                match a.notifications.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = read_pdu(&mut **self.stream) => {
                    let p = match r {
                        Ok(p) => p,
                        Err(e) => return e,
                    };
                    match p.body {
                        Body::Response { error, .. } => {
                            if ping_outstanding.is_some_and(|(id, _)| id == p.header.packet_id) {
                                ping_outstanding = None;
                            } else if self.ctx.outstanding.remove(&p.header.packet_id) {
                                self.ctx.answered();
                                if error != pdu::error::NO_AGENTX_ERROR {
                                    self.ctx.refused += 1;
                                    if self.ctx.refused == 1 {
                                        warn!(error, "AgentX: the master refused a context registration (logged once a session)");
                                    }
                                }
                            } else if error != pdu::error::NO_AGENTX_ERROR {
                                warn!(error, "AgentX: the master refused a request of ours");
                            }
                        }
                        Body::Close(reason) => {
                            return End::Protocol(format!("the master closed the session ({reason:?})"));
                        }
                        _ => {
                            if let Some(resp) = self.answer(a, p).await {
                                if let Err(e) = self.send(&resp).await {
                                    return End::Io(e);
                                }
                            }
                        }
                    }
                }
                _ = refresh.tick(), if a.contexts.is_some() => {
                    if let Some(c) = &a.contexts {
                        let (new, gone) = self.ctx.plan(c.names(), &c.subtrees);
                        if new + gone > 0 {
                            info!(new, gone, contexts = self.ctx.registered.len(), "AgentX: node contexts registered with the master");
                        }
                    }
                }
                _ = ping.tick() => {
                    if let Some((_, since)) = ping_outstanding {
                        if since.elapsed() > a.config.response_timeout {
                            return End::Protocol("the master stopped answering pings".into());
                        }
                        continue;
                    }
                    let id = self.next_packet();
                    let p = self.request(id, Body::Ping);
                    if let Err(e) = self.send(&p).await {
                        return End::Io(e);
                    }
                    ping_outstanding = Some((id, tokio::time::Instant::now()));
                }
                n = notification => {
                    let Some(vbs) = n else {
                        a.notifications = None;
                        continue;
                    };
                    let id = self.next_packet();
                    let p = self.request(id, Body::Notify(vbs));
                    if let Err(e) = self.send(&p).await {
                        return End::Io(e);
                    }
                }
            }
        }
    }

    /// Sends queued context registrations while fewer than the window wait
    /// for an answer.
    async fn send_registrations<V>(&mut self, a: &Subagent<V, K>) -> io::Result<()> {
        let Some(c) = &a.contexts else {
            return Ok(());
        };
        while self.ctx.outstanding.len() < c.window.max(1) {
            let Some((context, subtree, register)) = self.ctx.queue.pop_front() else {
                break;
            };
            let region = Region {
                timeout: 0,
                priority: a.config.priority,
                range_subid: 0,
                subtree,
                upper_bound: None,
            };
            let id = self.next_packet();
            let mut p = self.request(
                id,
                if register {
                    Body::Register(region)
                } else {
                    Body::Unregister(region)
                },
            );
            p.context = Some(context);
            self.send(&p).await?;
            self.ctx.outstanding.insert(id);
        }
        Ok(())
    }

    fn request(&self, packet_id: u32, body: Body) -> Pdu {
        Pdu {
            header: Header {
                flags: 0,
                session_id: self.session_id,
                transaction_id: 0,
                packet_id,
            },
            context: None,
            body,
        }
    }

    async fn open_and_register<V: 'static>(&mut self, a: &Subagent<V, K>) -> Result<(), End> {
        let t = a.config.response_timeout;
        let r = self
            .call(
                Body::Open {
                    timeout: 0,
                    id: a.config.id.clone(),
                    descr: a.config.descr.clone().into_bytes(),
                },
                t,
            )
            .await?;
        if let Body::Response { error, .. } = r.body {
            if error != pdu::error::NO_AGENTX_ERROR {
                return Err(End::Protocol(format!("Open refused (error {error})")));
            }
        }
        self.session_id = r.header.session_id;
        let mut regions = a.config.regions.clone();
        if let Some(f) = &a.config.dynamic_regions {
            regions.extend(f());
        }
        for g in regions {
            let r = self
                .call(
                    Body::Register(Region {
                        timeout: 0,
                        priority: a.config.priority,
                        range_subid: g.range.map_or(0, |r| r.0),
                        subtree: g.subtree.clone(),
                        upper_bound: g.range.map(|r| r.1),
                    }),
                    t,
                )
                .await?;
            if let Body::Response { error, .. } = r.body {
                if error != pdu::error::NO_AGENTX_ERROR {
                    // Another subagent holds it at this priority: the rest still serve.
                    warn!(subtree = %g.subtree, error, "AgentX: registration refused");
                }
            }
        }
        for (id, descr) in &a.config.agent_caps {
            let r = self
                .call(
                    Body::AddAgentCaps {
                        id: id.clone(),
                        descr: descr.clone().into_bytes(),
                    },
                    t,
                )
                .await?;
            if let Body::Response { error, .. } = r.body {
                if error != pdu::error::NO_AGENTX_ERROR {
                    debug!(%id, error, "AgentX: AddAgentCaps refused");
                }
            }
        }
        Ok(())
    }

    /// TestSet of transaction `tid` whose varbinds were `checked`: the
    /// changes kept for CommitSet when all pass. The Response's error and
    /// index.
    fn test_set(&mut self, tid: u32, checked: Result<Vec<K>, (usize, SetError)>) -> (u16, u16) {
        match checked {
            Ok(changes) => {
                self.pending_set = Some((tid, changes));
                self.committed = false;
                (pdu::error::NO_AGENTX_ERROR, 0)
            }
            Err((i, e)) => (
                ErrorStatus::from(e).as_i32() as u16,
                u16::try_from(i + 1).unwrap_or(u16::MAX),
            ),
        }
    }

    /// CommitSet of transaction `tid`: what its TestSet kept, applied.
    /// The Response's error and index.
    async fn commit_set<V>(&mut self, a: &Subagent<V, K>, tid: u32) -> (u16, u16) {
        let changes = self.pending_set.take().filter(|(t, _)| *t == tid);
        let Some((_, changes)) = changes else {
            return (pdu::error::COMMIT_FAILED, 0);
        };
        match a.controller.apply(changes).await {
            Ok(()) => {
                self.committed = true;
                (pdu::error::NO_AGENTX_ERROR, 0)
            }
            Err(e) => {
                warn!("AgentX Set failed: {}", e.reason);
                let error = match e.kind {
                    ApplyErrorKind::CommitFailed => pdu::error::COMMIT_FAILED,
                    ApplyErrorKind::UndoFailed => pdu::error::UNDO_FAILED,
                };
                (error, u16::try_from(e.index + 1).unwrap_or(u16::MAX))
            }
        }
    }

    /// UndoSet: the Response's error.
    async fn undo_set<V>(&mut self, a: &Subagent<V, K>) -> u16 {
        let mut error = pdu::error::NO_AGENTX_ERROR;
        if std::mem::take(&mut self.committed) {
            // Another subagent's commit failed after ours: take ours
            // back where it can be (agent state), else say so.
            if let Err(e) = a.controller.undo_last().await {
                warn!("AgentX UndoSet: not undone: {}", e.reason);
                error = pdu::error::UNDO_FAILED;
            }
        }
        self.pending_set = None;
        error
    }

    /// The Response to one of the master's requests (None: no answer is due).
    async fn answer<V: 'static>(&mut self, a: &Subagent<V, K>, p: Pdu) -> Option<Pdu> {
        let mut error = pdu::error::NO_AGENTX_ERROR;
        let mut index = 0u16;
        // The view and objects of the request's context: the default one,
        // or a registered context the resolver knows now.
        let context = match &p.context {
            None => Some(((a.view)(), Arc::clone(&a.dispatcher))),
            Some(name) => a
                .contexts
                .as_ref()
                .and_then(|c| c.resolver.resolve(name))
                .map(|cv| (cv.view, cv.dispatcher)),
        };
        let reads = matches!(
            p.body,
            Body::Get(_) | Body::GetNext(_) | Body::GetBulk { .. } | Body::TestSet(_)
        );
        let varbinds = if let (None, true) = (&context, reads) {
            error = pdu::error::UNSUPPORTED_CONTEXT;
            Vec::new()
        } else {
            let ctx = context.as_ref();
            match p.body {
                Body::Get(ranges) => match ctx {
                    Some((view, d)) => ranges
                        .into_iter()
                        .map(|r| {
                            let value = d.get(view, r.start.as_slice());
                            VarBind::new(r.start, value)
                        })
                        .collect(),
                    None => Vec::new(),
                },
                Body::GetNext(ranges) => match ctx {
                    Some((view, d)) => ranges.iter().map(|r| next_in_range(d, view, r)).collect(),
                    None => Vec::new(),
                },
                Body::GetBulk {
                    non_repeaters,
                    max_repetitions,
                    ranges,
                } => match ctx {
                    Some((view, d)) => bulk(d, view, non_repeaters, max_repetitions, &ranges),
                    None => Vec::new(),
                },
                Body::TestSet(vbs) => {
                    let checked = match ctx {
                        Some((view, d)) => d.check_set_all(view, &vbs),
                        None => Ok(Vec::new()),
                    };
                    (error, index) = self.test_set(p.header.transaction_id, checked);
                    Vec::new()
                }
                Body::CommitSet => {
                    (error, index) = self.commit_set(a, p.header.transaction_id).await;
                    Vec::new()
                }
                Body::UndoSet => {
                    error = self.undo_set(a).await;
                    Vec::new()
                }
                Body::CleanupSet => {
                    self.pending_set = None;
                    self.committed = false;
                    return None;
                }
                Body::Ping => Vec::new(),
                other => {
                    debug!(?other, "AgentX: unexpected PDU from the master");
                    error = pdu::error::PROCESSING_ERROR;
                    Vec::new()
                }
            }
        };
        Some(Pdu {
            header: p.header,
            context: None,
            body: Body::Response {
                sys_up_time: (a.up_time)(),
                error,
                index,
                varbinds,
            },
        })
    }
}

/// GetNext within a search range (RFC 2741 7.2.3.2): the first instance at or
/// after `start` (at only with `include`), before `end` when `end` is set;
/// endOfMibView named by `start` otherwise.
fn next_in_range<V, K>(d: &Dispatcher<V, K>, view: &V, r: &SearchRange) -> VarBind {
    let found = if r.include {
        match d.get(view, r.start.as_slice()) {
            v if !v.is_exception() => Some(VarBind::new(r.start.clone(), v)),
            _ => d.next(view, r.start.as_slice()),
        }
    } else {
        d.next(view, r.start.as_slice())
    };
    match found {
        Some(vb) if r.end.is_empty() || vb.oid.as_slice() < r.end.as_slice() => vb,
        _ => VarBind::new(r.start.clone(), Value::EndOfMibView),
    }
}

/// GetBulk over search ranges (RFC 2741 7.2.3.3).
fn bulk<V, K>(
    d: &Dispatcher<V, K>,
    view: &V,
    non_repeaters: u16,
    max_repetitions: u16,
    ranges: &[SearchRange],
) -> Vec<VarBind> {
    let n = usize::from(non_repeaters).min(ranges.len());
    let (first, rest) = ranges.split_at(n);
    let mut out: Vec<VarBind> = first.iter().map(|r| next_in_range(d, view, r)).collect();
    let mut cursors: Vec<SearchRange> = rest.to_vec();
    // Bounded by the dispatcher's own cap, so a master cannot make one answer huge.
    let reps = u32::from(max_repetitions).min(d.max_repetitions());
    for _ in 0..reps {
        if cursors.is_empty() {
            break;
        }
        let mut all_done = true;
        for c in cursors.iter_mut() {
            let vb = next_in_range(d, view, c);
            if vb.value != Value::EndOfMibView {
                all_done = false;
                c.start = vb.oid.clone();
                c.include = false;
            }
            out.push(vb);
        }
        if all_done {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn master_addresses_parse_like_agentx_socket() {
        assert_eq!(
            "".parse::<MasterAddress>().unwrap(),
            MasterAddress::Unix(DEFAULT_SOCKET.into())
        );
        assert_eq!(
            "/tmp/x/master".parse::<MasterAddress>().unwrap(),
            MasterAddress::Unix("/tmp/x/master".into())
        );
        assert_eq!(
            "unix:/tmp/m".parse::<MasterAddress>().unwrap(),
            MasterAddress::Unix("/tmp/m".into())
        );
        assert_eq!(
            "tcp:localhost:705".parse::<MasterAddress>().unwrap(),
            MasterAddress::Tcp("localhost:705".into())
        );
        assert!("tcp:localhost".parse::<MasterAddress>().is_err());
        assert!("relative/path".parse::<MasterAddress>().is_err());
    }
}
