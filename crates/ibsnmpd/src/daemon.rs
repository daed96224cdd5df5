//! The agent: settings in, sockets served until SIGTERM/SIGINT. [`run`]
//! builds the services in phases, each from what the one before made and
//! nothing filled in later: the source thread (paused) and the runtime,
//! the SNMP engine ([`engine`]), the control path (Sets, requests), the
//! notification layer, the agent's sockets, the control socket and the
//! metrics endpoint, the first sweep, the triggers, then the serving loop
//! with its reload ([`serve`]). [`running::Services`] owns what runs and
//! stops it.

mod engine;
pub mod reload;
mod running;
mod serve;

use std::sync::Arc;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use snmp::agent::{Agent, AgentConfig, SetController};
use snmp::agentx::Subagent;
use tracing::info;

use crate::config::{ConfigError, Settings};
use crate::metrics::AgentCounters;
use crate::models::nodemap::{NodeNameMap, SharedNodeNameMap};
use crate::services::controller::Controller;
use crate::services::sources::{Capabilities, Opened};
use crate::services::traps::Traps;
use engine::{Derived, Engine, FabricReads};
use running::Services;

/// Runs the agent until a termination signal.
/// `load` reads the settings again on SIGHUP (see [`crate::daemon::reload`]).
pub fn run(
    settings: Settings,
    source: Opened,
    load: crate::daemon::reload::LoadSettings,
) -> Result<()> {
    let can = source.can;
    let (mut services, sourced) = start_source(&settings, source)?;
    let (engine, persistence) = Engine::build(
        &settings,
        FabricReads {
            fabric: services.fabric(),
            demand: sourced.demand.clone(),
        },
    )?;
    let controller = start_control(&settings, &services, &engine, persistence, can);
    let (subagent, traps) = start_notifications(&settings, &services, &engine, &controller)?;
    let agent = bind_agent(&services, &settings, &engine, &controller, traps.as_ref())?;
    let counters = start_endpoints(&mut services, &settings, &engine, traps.as_ref())?;
    sweep_first(&mut services, &sourced, traps.as_ref());
    let reloader = crate::daemon::reload::Reloader {
        load,
        current: settings.clone(),
        communities: agent.communities(),
        names: sourced.names,
        fabric: services.fabric(),
        counters,
        monitors: start_monitors(&services, &engine, traps.clone()),
        traps: traps.clone(),
        controller,
        usm: Arc::clone(&engine.usm),
        health: sourced.derived.health,
        plan: sourced.derived.plan,
        routes_max_spread: sourced.derived.routes_max_spread,
    };
    let result = services.runtime().block_on(serve::serve(
        agent,
        subagent,
        reloader,
        &settings.source.spec,
        serve::shutdown_signal(),
    ));
    if let Some(t) = &traps {
        t.log_stats();
    }
    drop(services);
    result
}

type AgentxSubagent = Subagent<mibs::View, mibs::Change>;

/// What the source thread was started with, for the later phases.
struct Sourced {
    /// The health checks', the plan's and the route check's settings,
    /// which a reload changes.
    derived: Derived,
    names: SharedNodeNameMap,
    /// Gets a message when the first sweep is over.
    first_sweep: std::sync::mpsc::Receiver<()>,
    demand: Option<Arc<ib::source::demand::Demand>>,
}

/// Phase 1: the source thread, paused: it waits for the sockets (bound
/// later, so a busy port fails at once); the agent answers after the first
/// sweep. It derives what the modules need from each snapshot and swaps it
/// in: readers never block a sweep, a sweep never blocks readers. Then the
/// async runtime.
fn start_source(settings: &Settings, source: Opened) -> Result<(Services, Sourced)> {
    // The health checks, the cabling plan, the route check.
    let derived = Derived::new(settings)?;
    let names = load_node_name_map(settings)?;
    let demand = source.source.demand();
    let (fabric, first_sweep) = crate::models::source_thread::FabricThread::start_paused(
        source.source,
        engine::publisher(settings, &derived),
        settings.source.sweep_interval,
        Some(Arc::clone(&names)),
        &settings.source.spec,
    )
    .context("cannot start the source thread")?;
    let services = Services::start(fabric)?;
    Ok((
        services,
        Sourced {
            derived,
            names,
            first_sweep,
            demand,
        },
    ))
}

/// The node-name-map of the settings (empty without one); a bad map at
/// startup is a configuration error.
fn load_node_name_map(settings: &Settings) -> Result<SharedNodeNameMap> {
    let map = match &settings.checks.node_name_map {
        Some(p) => {
            let m = NodeNameMap::load(p).map_err(ConfigError)?;
            info!(path = %p.display(), names = m.len(), "node-name-map loaded");
            m
        }
        None => NodeNameMap::default(),
    };
    Ok(Arc::new(ArcSwap::from_pointee(map)))
}

/// Phase 3: the one control path (Sets, the request sessions' jobs,
/// OpenSM's steering), persisting into the state directory.
fn start_control(
    settings: &Settings,
    services: &Services,
    engine: &Engine,
    persistence: engine::Persistence,
    can: Capabilities,
) -> Arc<Controller> {
    let opensm = settings.sm.opensm.clone().map(|o| {
        info!(conf = %o.conf.display(), console = ?o.console, "steering OpenSM ([opensm])");
        Arc::new(crate::models::opensm::OpenSmControl::new(o))
    });
    let (jobs_tx, jobs_rx) = tokio::sync::mpsc::unbounded_channel();
    let controller = Arc::new(Controller::new(
        Arc::clone(&engine.system),
        persistence.stored,
        persistence.store,
        services.fabric(),
        opensm,
        Some(jobs_tx),
    ));
    crate::services::requests::start(
        services.runtime(),
        services.fabric(),
        Arc::clone(&controller),
        can.subnet_administrator,
        settings.requests.session_timeout,
        jobs_rx,
    );
    controller
}

/// Phase 4: the AgentX subagent (in AgentX mode), then the notification
/// layer (docs/notifications.md), which in AgentX mode also sends through
/// the master's own sinks, as Notify-PDUs.
fn start_notifications(
    settings: &Settings,
    services: &Services,
    engine: &Engine,
    controller: &Arc<Controller>,
) -> Result<(Option<AgentxSubagent>, Option<Traps>)> {
    let mut subagent = subagent(settings, engine, controller);
    let forward = subagent.as_mut().map(|s| s.notification_channel(256));
    let traps = services.start_traps(settings, &engine.system, forward, Arc::clone(&engine.usm))?;
    Ok((subagent, traps))
}

/// The AgentX subagent, in AgentX mode: the same objects, views and Set
/// path as the agent's own port.
fn subagent(
    settings: &Settings,
    engine: &Engine,
    controller: &Arc<Controller>,
) -> Option<AgentxSubagent> {
    let master = settings.agentx.master.clone()?;
    let (view, system) = (Arc::clone(&engine.view), Arc::clone(&engine.system));
    Some(crate::services::agentx::subagent(
        master,
        &engine.agentx_modules,
        Arc::clone(&engine.dispatcher),
        move || view(),
        Arc::clone(controller) as Arc<dyn SetController<mibs::Change>>,
        move || system.load().up_time(),
        settings.agentx.if_mib,
        engine
            .contexts
            .clone()
            .filter(|_| settings.agentx.node_contexts),
    ))
}

/// Phase 5: the agent's sockets, bound now: a bad or busy address fails
/// at once, not after a sweep.
fn bind_agent(
    services: &Services,
    settings: &Settings,
    engine: &Engine,
    controller: &Arc<Controller>,
    traps: Option<&Traps>,
) -> Result<Agent<mibs::View, mibs::Change>> {
    let view = Arc::clone(&engine.view);
    let agent = services
        .runtime()
        .block_on(Agent::bind(
            AgentConfig {
                listen: settings.agent.listen.clone(),
                communities: crate::config::agent_communities(&settings.communities),
                ..AgentConfig::default()
            },
            Arc::clone(&engine.dispatcher),
            move || view(),
            Arc::clone(controller) as Arc<dyn SetController<mibs::Change>>,
            Arc::clone(&engine.stats),
        ))
        .map_err(|e| -> anyhow::Error {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                PortInUse::new(&e).into()
            } else {
                e.into()
            }
        })?
        .with_usm(Arc::clone(&engine.usm))
        .with_vacm(Arc::new(settings.agent.vacm.clone()))
        .with_user_hook(Box::new(|v: &mut mibs::View, user: &[u8]| {
            v.user = Some(user.to_vec())
        }))
        .with_managed_vacm(crate::services::vacm_tables::managed(Arc::clone(
            &engine.system,
        )))
        .with_shorthand_context(settings.agent.node_contexts.shorthand_context());
    let agent = match &engine.contexts {
        Some(c) => agent.with_contexts(c.clone()),
        None => agent,
    };
    Ok(match traps {
        Some(t) => agent.with_auth_failure_hook(t.auth_failure_hook(Arc::clone(&engine.system))),
        None => agent,
    })
}

/// Phase 6: the control socket and the metrics endpoint, with the agent's
/// own counters the metrics show.
fn start_endpoints(
    services: &mut Services,
    settings: &Settings,
    engine: &Engine,
    traps: Option<&Traps>,
) -> Result<Arc<AgentCounters>> {
    if let Some(path) = settings.daemon.control_socket.as_deref() {
        services.start_control(path)?;
    }
    let counters = Arc::new(AgentCounters {
        notifications: traps.map(Traps::stats),
        ..AgentCounters::default()
    });
    services.start_metrics(settings, Arc::clone(&engine.stats), Arc::clone(&counters))?;
    Ok(counters)
}

/// Phase 7: sockets bound, the first sweep (the sockets queue requests
/// meanwhile), then coldStart.
fn sweep_first(services: &mut Services, sourced: &Sourced, traps: Option<&Traps>) {
    services.begin_sweeping();
    let _ = sourced.first_sweep.recv();
    if let Some(t) = traps {
        t.cold_start();
    }
}

/// Phase 8: the DISMAN-EVENT-MIB triggers' task: it reads the same MIB the
/// same way as requests do.
fn start_monitors(
    services: &Services,
    engine: &Engine,
    traps: Option<Traps>,
) -> crate::services::triggers::MonitorTask {
    let handle = services.runtime().handle().clone();
    let (dispatcher, view) = (Arc::clone(&engine.dispatcher), Arc::clone(&engine.view));
    let contexts = engine.contexts.clone();
    crate::services::triggers::MonitorTask::start(
        Box::new(move |m| {
            crate::services::triggers::start(
                &handle,
                m,
                Arc::clone(&dispatcher),
                Arc::clone(&view),
                traps.clone(),
                contexts.clone(),
            )
        }),
        engine.system.load().monitors.clone(),
    )
}

/// Exit status of a UDP port another agent holds (sysexits' EX_CONFIG): the
/// unit lists it in RestartPreventExitStatus=, since restarting cannot free
/// the port.
pub const EXIT_PORT_IN_USE: u8 = 78;

/// A listen address another process holds: most often net-snmp's snmpd on
/// 161. Exit [`EXIT_PORT_IN_USE`], with what to do instead.
#[derive(Debug)]
pub struct PortInUse(pub String);

impl std::fmt::Display for PortInUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PortInUse {}

impl PortInUse {
    /// The message for `err` (Agent::bind's, naming the address).
    fn new(err: &std::io::Error) -> PortInUse {
        PortInUse(format!(
            "{err}: another process holds it (net-snmp's snmpd? `ss -ulpn` names it); \
             to serve beside snmpd, make ibsnmpd its AgentX subagent \
             (`agentx = \"/var/agentx/master\"` in the configuration file, \
             `master agentx` in snmpd.conf, no agentaddress) or give agentaddress \
             a free port (docs/install.md, \"Beside snmpd\")"
        ))
    }
}
