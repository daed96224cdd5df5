//! The UDP transport over the [`crate::engine`]: sockets, receive loops,
//! and the hand-off of Sets to phase 2 on tokio tasks.
//!
//! Each worker is an OS thread in a blocking receive on a socket of its own
//! (SO_REUSEPORT: the kernel spreads peers over the sockets, and a datagram
//! wakes one thread only) that answers reads inline, from a view obtained
//! per request: a datagram costs one receive and one send, with no event
//! loop or task wake-up between them. Nothing on that path waits on
//! anything else. A Set that passes phase 1 is finished
//! on a task of the runtime [`Agent::run`] was called on, so reads never
//! wait for it.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tracing::debug;

use crate::context::Contexts;
use crate::dispatch::Dispatcher;
use crate::usm::Usm;
use crate::vacm::{ContextMatch, Vacm};

pub use crate::engine::{
    escape_wire, Action, ApplyError, ApplyErrorKind, ApplyFuture, AuthFailure, AuthFailureHook,
    Community, CommunityAccess, CommunityTable, Engine, EngineConfig, SetController, SnmpStats,
    MAX_UDP_PAYLOAD,
};

/// Agent settings.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// Addresses to bind (IPv4 and/or IPv6).
    pub listen: Vec<SocketAddr>,
    pub communities: Vec<Community>,
    /// Largest response message the agent sends (at most 65507).
    pub max_message_size: usize,
    /// Receive threads (each with its own SO_REUSEPORT socket) per listen
    /// address (0: one per available core).
    pub workers_per_socket: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], 1161))],
            communities: vec![Community::new("public", CommunityAccess::ReadOnly)],
            max_message_size: MAX_UDP_PAYLOAD,
            workers_per_socket: 0,
        }
    }
}

/// The SNMP agent bound to its sockets. The engine is built at
/// [`Agent::run`], from what the `with_*` calls added.
pub struct Agent<V, K> {
    /// Per listen address, one socket per worker.
    sockets: Vec<Vec<UdpSocket>>,
    engine: EngineConfig<V, K>,
    communities: CommunityTable,
}

impl<V: 'static, K: Send + 'static> Agent<V, K> {
    /// Binds every listen address. `view` is called once per request and
    /// must not block (e.g. an `ArcSwap::load_full`).
    pub async fn bind<F>(
        config: AgentConfig,
        dispatcher: Arc<Dispatcher<V, K>>,
        view: F,
        controller: Arc<dyn SetController<K>>,
        stats: Arc<SnmpStats>,
    ) -> io::Result<Self>
    where
        F: Fn() -> V + Send + Sync + 'static,
    {
        let workers = match config.workers_per_socket {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let mut sockets = Vec::with_capacity(config.listen.len());
        for addr in &config.listen {
            let cannot =
                |e: io::Error| io::Error::new(e.kind(), format!("cannot bind UDP {addr}: {e}"));
            // A plain bind first: it fails when anyone holds the port, also
            // another agent's SO_REUSEPORT group, which the group below would
            // otherwise silently join. It also picks the port for port 0.
            let bound = UdpSocket::bind(addr).map_err(cannot)?.local_addr()?;
            let group = (0..workers)
                .map(|_| reuse_port_socket(bound).map_err(cannot))
                .collect::<io::Result<Vec<_>>>()?;
            sockets.push(group);
        }
        Ok(Agent {
            sockets,
            communities: Arc::new(arc_swap::ArcSwap::from_pointee(config.communities.clone())),
            engine: EngineConfig {
                communities: config.communities,
                max_message_size: config.max_message_size,
                ..EngineConfig::new(dispatcher, Box::new(view), controller, stats)
            },
        })
    }

    /// Calls `hook` on every authentication failure (the seam for
    /// authenticationFailure notifications).
    pub fn with_auth_failure_hook(mut self, hook: AuthFailureHook) -> Self {
        self.engine.auth_hook = Some(hook);
        self
    }

    /// Answers SNMPv3 messages with this USM.
    pub fn with_usm(mut self, usm: Arc<Usm>) -> Self {
        self.engine.usm = Some(usm);
        self
    }

    /// The configured VACM tables (RFC 3415); the community and user
    /// shorthands are added to them.
    pub fn with_vacm(mut self, vacm: Arc<Vacm>) -> Self {
        self.engine.vacm = Some(vacm);
        self
    }

    /// VACM rows managed over SNMP (the VACM tables), read at each request
    /// and added to the configured ones.
    pub fn with_managed_vacm(mut self, managed: crate::engine::ManagedVacm) -> Self {
        self.engine.managed_vacm = Some(managed);
        self
    }

    /// Serves the contexts `contexts` resolves besides the default one
    /// (SNMPv3 contextName, SNMPv1/v2c `community@context`).
    pub fn with_contexts(mut self, contexts: Arc<dyn Contexts<V, K>>) -> Self {
        self.engine.contexts = Some(contexts);
        self
    }

    /// The contexts the community and user shorthands (`rocommunity`,
    /// `rouser` ...) give access to: exact "" (the default context only,
    /// the default) or `ContextMatch::all()` (every context, with the same
    /// views as in the default one).
    pub fn with_shorthand_context(mut self, contexts: ContextMatch) -> Self {
        self.engine.shorthand_context = contexts;
        self
    }

    /// Tells each SNMPv3 request's view which USM user asks.
    pub fn with_user_hook(mut self, hook: crate::engine::UserHook<V>) -> Self {
        self.engine.user_hook = Some(hook);
        self
    }

    /// The community table, to replace it at run time.
    pub fn communities(&self) -> CommunityTable {
        Arc::clone(&self.communities)
    }

    /// The bound addresses (useful with port 0).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.sockets
            .iter()
            .filter_map(|g| g.first()?.local_addr().ok())
            .collect()
    }

    /// Serves requests until a socket fails. Dropping the future stops the
    /// receive threads (within [`STOP_POLL`]).
    pub async fn run(self) -> io::Result<()>
    where
        V: Send + Sync,
        K: Sync,
    {
        let engine = Arc::new(Engine::with_communities(self.engine, self.communities));
        let runtime = tokio::runtime::Handle::current();
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let (done_tx, mut done_rx) = tokio::sync::mpsc::channel::<io::Result<()>>(1);
        for sock in self.sockets.into_iter().flatten() {
            // Shared with the Set tasks: no descriptor per request.
            let sock = Arc::new(sock);
            {
                let engine = Arc::clone(&engine);
                let runtime = runtime.clone();
                let stop = Arc::clone(&stop.0);
                let done = done_tx.clone();
                std::thread::Builder::new()
                    .name("snmp-udp".into())
                    .spawn(move || {
                        let r = serve(&sock, &engine, &runtime, &stop);
                        let _ = done.blocking_send(r);
                    })?;
            }
        }
        drop(done_tx);
        let result = done_rx.recv().await.unwrap_or(Ok(()));
        drop(stop);
        result
    }
}

/// A UDP socket bound to `addr` with SO_REUSEPORT (several workers share
/// the address) and a read timeout (to look at the stop flag).
fn reuse_port_socket(addr: SocketAddr) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_port(true)?;
    s.bind(&addr.into())?;
    s.set_read_timeout(Some(STOP_POLL))?;
    Ok(s.into())
}

/// How often a receive loop looks at its stop flag when no datagram comes.
pub const STOP_POLL: Duration = Duration::from_millis(250);

/// Raises the stop flag when `run`'s future ends or is dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

// Never inlined: scripts/bench-walk.sh counts the instructions of the
// request path by this function's name (callgrind --toggle-collect).
#[inline(never)]
fn serve<V: Send + Sync + 'static, K: Send + Sync + 'static>(
    sock: &Arc<UdpSocket>,
    engine: &Arc<Engine<V, K>>,
    runtime: &tokio::runtime::Handle,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut buf = vec![0u8; 65536];
    let mut out = Vec::with_capacity(MAX_UDP_PAYLOAD);
    while !stop.load(Ordering::Relaxed) {
        let (n, src) = match sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            // ICMP errors from earlier sends surface here on some systems.
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let data = buf.get(..n).unwrap_or(&[]);
        match engine.process(src, data, &mut out) {
            Action::None => {}
            Action::Send => send(sock, engine.stats(), &out, src),
            Action::Set(p) => {
                // (try_clone here once made a Set fail the whole loop when
                // descriptors ran out: a shared socket needs none.)
                let sock = Arc::clone(sock);
                let engine = Arc::clone(engine);
                runtime.spawn(async move {
                    let answer = engine.finish_set(p, src).await;
                    send(&sock, engine.stats(), &answer, src);
                });
            }
        }
    }
    Ok(())
}

fn send(sock: &UdpSocket, stats: &SnmpStats, out: &[u8], dst: SocketAddr) {
    match sock.send_to(out, dst) {
        Ok(_) => crate::engine::inc(&stats.out_pkts),
        Err(e) => debug!(%dst, error = %e, "send failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn agent(listen: SocketAddr) -> io::Result<Agent<(), ()>> {
        let controller: Arc<dyn SetController<()>> =
            Arc::new(|_: Vec<()>| async { Ok::<(), ApplyError>(()) });
        let config = AgentConfig {
            listen: vec![listen],
            workers_per_socket: 2,
            ..AgentConfig::default()
        };
        Agent::bind(
            config,
            Arc::new(Dispatcher::new()),
            || (),
            controller,
            SnmpStats::new(),
        )
        .await
    }

    #[tokio::test]
    async fn a_port_in_use_is_refused_even_by_a_reuse_port_group() {
        let a = agent(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
        let addr = a.local_addrs()[0];
        let e = agent(addr)
            .await
            .err()
            .expect("second agent on the same port");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse, "{e}");
        // The group's sockets all share the one port.
        assert!(a.sockets[0].iter().all(|s| s.local_addr().unwrap() == addr));
        assert_eq!(a.sockets[0].len(), 2);
    }
}
