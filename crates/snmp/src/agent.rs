//! The UDP transport over the [`crate::engine`]: sockets, one receive loop
//! per worker, and the hand-off of Sets to phase 2 on their own tasks.
//!
//! Reads are answered inline on the receiving task from a view obtained per
//! request; nothing on that path blocks. A Set that passes phase 1 is
//! finished on a spawned task, so reads never wait for it.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::UdpSocket;
use tokio::task::JoinSet;
use tracing::debug;

use crate::dispatch::Dispatcher;
use crate::oid::Oid;
use crate::usm::Usm;
use crate::vacm::Vacm;

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
    /// Receive tasks per socket (0: one per available core).
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
    sockets: Vec<Arc<UdpSocket>>,
    workers: usize,
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
        let mut sockets = Vec::with_capacity(config.listen.len());
        for addr in &config.listen {
            let s = UdpSocket::bind(addr)
                .await
                .map_err(|e| io::Error::new(e.kind(), format!("cannot bind UDP {addr}: {e}")))?;
            sockets.push(Arc::new(s));
        }
        let workers = match config.workers_per_socket {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Ok(Agent {
            sockets,
            workers,
            communities: Arc::new(arc_swap::ArcSwap::from_pointee(config.communities.clone())),
            engine: EngineConfig {
                dispatcher,
                view: Box::new(view),
                controller,
                stats,
                communities: config.communities,
                max_message_size: config.max_message_size,
                auth_hook: None,
                usm: None,
                vacm: None,
                secrets: Vec::new(),
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

    /// Subtrees (e.g. IB-SM-MIB's SM_Key and M_Key columns) that only
    /// authPriv requests whose view includes them may read or write.
    pub fn with_secret_subtrees(mut self, secrets: Vec<Oid>) -> Self {
        self.engine.secrets = secrets;
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
            .filter_map(|s| s.local_addr().ok())
            .collect()
    }

    /// Serves requests until a socket fails. Dropping the future stops all
    /// receive tasks.
    pub async fn run(self) -> io::Result<()> {
        let engine = Arc::new(Engine::with_communities(self.engine, self.communities));
        let mut tasks = JoinSet::new();
        for sock in &self.sockets {
            for _ in 0..self.workers {
                let sock = Arc::clone(sock);
                let engine = Arc::clone(&engine);
                tasks.spawn(async move { serve(sock, engine).await });
            }
        }
        while let Some(r) = tasks.join_next().await {
            match r {
                Ok(Err(e)) => return Err(e),
                Ok(Ok(())) => {}
                Err(e) => return Err(io::Error::other(e)),
            }
        }
        Ok(())
    }
}

async fn serve<V: 'static, K: Send + 'static>(
    sock: Arc<UdpSocket>,
    engine: Arc<Engine<V, K>>,
) -> io::Result<()> {
    let mut buf = vec![0u8; 65536];
    let mut out = Vec::with_capacity(MAX_UDP_PAYLOAD);
    loop {
        let (n, src) = match sock.recv_from(&mut buf).await {
            Ok(x) => x,
            // ICMP errors from earlier sends surface here on some systems.
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => continue,
            Err(e) => return Err(e),
        };
        let data = buf.get(..n).unwrap_or(&[]);
        match engine.process(src, data, &mut out) {
            Action::None => {}
            Action::Send => send(&sock, engine.stats(), &out, src).await,
            Action::Set(p) => {
                let sock = Arc::clone(&sock);
                let engine = Arc::clone(&engine);
                tokio::spawn(async move {
                    let answer = engine.finish_set(p, src).await;
                    send(&sock, engine.stats(), &answer, src).await;
                });
            }
        }
    }
}

async fn send(sock: &UdpSocket, stats: &SnmpStats, out: &[u8], dst: SocketAddr) {
    match sock.send_to(out, dst).await {
        Ok(_) => crate::engine::inc(&stats.out_pkts),
        Err(e) => debug!(%dst, error = %e, "send failed"),
    }
}
