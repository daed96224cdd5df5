//! The running services and their one owner: [`Services`] holds what was
//! started and stops it in reverse order when dropped, so an error while
//! starting the next service leaks none of the earlier ones.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use mibs::SystemState;
use tokio::runtime::Runtime;
use tracing::info;

use crate::config::Settings;
use crate::models::source_thread::{FabricHandle, FabricThread};
use crate::services::control_socket::ControlSocket;
use crate::services::traps::Traps;

/// How long the runtime's tasks get to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The source thread, the async runtime (the agent, AgentX, notifications,
/// metrics, requests and monitors run on it) and the control socket.
pub(super) struct Services {
    fabric: Option<FabricThread>,
    runtime: Option<Runtime>,
    control: Option<ControlSocket>,
}

impl Services {
    /// Takes the (paused) source thread and starts the runtime.
    pub fn start(fabric: FabricThread) -> Result<Self> {
        let mut services = Services {
            fabric: Some(fabric),
            runtime: None,
            control: None,
        };
        services.runtime = Some(
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("ibsnmpd-agent")
                .build()
                .context("cannot start the async runtime")?,
        );
        Ok(services)
    }

    pub fn fabric(&self) -> FabricHandle {
        self.fabric.as_ref().expect("started").handle()
    }

    pub fn runtime(&self) -> &Runtime {
        self.runtime.as_ref().expect("started")
    }

    /// Lets the source thread take its first sweep.
    pub fn begin_sweeping(&mut self) {
        if let Some(f) = &mut self.fabric {
            f.begin();
        }
    }

    /// The notification layer (docs/notifications.md), None with nothing to
    /// send to. In AgentX mode notifications also go to `forward`.
    pub fn start_traps(
        &self,
        settings: &Settings,
        system: &Arc<ArcSwap<SystemState>>,
        forward: Option<tokio::sync::mpsc::Sender<Vec<snmp::value::VarBind>>>,
        usm: Arc<snmp::usm::Usm>,
    ) -> Result<Option<Traps>> {
        // SNMPv1's agent-addr: the first IPv4 listen address that names one.
        let agent_addr = settings
            .agent
            .listen
            .iter()
            .find_map(|a| match a.ip() {
                std::net::IpAddr::V4(v4) if !v4.is_unspecified() => Some(v4),
                _ => None,
            })
            .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED);
        // Targets may be added over SNMP whenever managers can reach us.
        let targets = (!settings.agent.listen.is_empty()).then(|| {
            crate::services::targets::source(
                Arc::clone(system),
                Arc::clone(&usm),
                settings.agent.users.clone(),
            )
        });
        self.runtime().block_on(Traps::start(
            &settings.notify,
            agent_addr,
            Arc::clone(system),
            self.fabric(),
            forward,
            Some(usm),
            targets,
        ))
    }

    /// The operator control socket (docs/usage.md); its file is removed
    /// when the services stop.
    pub fn start_control(&mut self, path: &std::path::Path) -> Result<()> {
        let socket = {
            let _rt = self.runtime().enter();
            ControlSocket::start(path, self.fabric())?
        };
        self.control = Some(socket);
        Ok(())
    }

    /// The metrics endpoint, when configured: bound now (a busy port fails
    /// before any sweep) and served on the runtime.
    pub fn start_metrics(
        &self,
        settings: &Settings,
        snmp: Arc<snmp::agent::SnmpStats>,
        agent: Arc<crate::metrics::AgentCounters>,
    ) -> Result<()> {
        let Some(addr) = settings.metrics.listen else {
            return Ok(());
        };
        let fabric = self.fabric();
        let sources = crate::metrics::Sources {
            publications: fabric.publications(),
            published: Box::new(move || arc_swap::Guard::into_inner(fabric.published())),
            snmp,
            agent,
            started: std::time::Instant::now(),
            families: settings.metrics.families,
        };
        let std_listener = std::net::TcpListener::bind(addr)
            .with_context(|| format!("cannot bind metrics TCP {addr}"))?;
        std_listener.set_nonblocking(true)?;
        let local = std_listener.local_addr()?;
        let runtime = self.runtime();
        let _rt = runtime.enter();
        let listener = tokio::net::TcpListener::from_std(std_listener)?;
        runtime.spawn(crate::metrics::serve(
            listener,
            sources,
            settings.metrics.limits.clone(),
        ));
        info!(addr = %local, "metrics endpoint listening (GET /metrics)");
        Ok(())
    }
}

impl Drop for Services {
    /// Reverse order of start. Any Set in flight was persisted before its
    /// response: nothing to flush.
    fn drop(&mut self) {
        self.control = None;
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(SHUTDOWN_GRACE);
        }
        if let Some(f) = self.fabric.take() {
            f.stop();
        }
    }
}
