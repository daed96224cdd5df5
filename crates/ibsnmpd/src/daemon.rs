//! The agent: settings in, sockets served until SIGTERM/SIGINT. [`run`]
//! assembles the services: the SNMP engine ([`engine`]), the source thread,
//! the notification layer, the agent's sockets, the control socket, the
//! metrics endpoint, AgentX and reload; [`services::Services`] owns what
//! runs and stops it.

mod engine;
mod serve;
mod services;

use std::sync::Arc;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use ib::source::Source;
use snmp::agent::{Agent, AgentConfig, SnmpStats};
use tracing::info;

use crate::config::{ConfigError, Settings};
use crate::controller::Controller;
use crate::fabric::FabricThread;
use crate::nodemap::{NodeNameMap, SharedNodeNameMap};
use engine::Engine;
use services::Services;

/// The node-name-map of the settings (empty without one); a bad map at
/// startup is a configuration error.
fn load_node_name_map(settings: &Settings) -> Result<SharedNodeNameMap> {
    let map = match &settings.node_name_map {
        Some(p) => {
            let m = NodeNameMap::load(p).map_err(ConfigError)?;
            info!(path = %p.display(), names = m.len(), "node-name-map loaded");
            m
        }
        None => NodeNameMap::default(),
    };
    Ok(Arc::new(ArcSwap::from_pointee(map)))
}

/// What the agent's requests read.
struct Reads<F> {
    dispatcher: Arc<snmp::dispatch::Dispatcher<mibs::View, mibs::Change>>,
    view: Arc<F>,
    system: Arc<ArcSwap<mibs::SystemState>>,
    stats: Arc<SnmpStats>,
}

/// The source thread, paused: it waits for the sockets (bound next, so a
/// busy port fails at once); the agent answers after the first sweep. It
/// derives what the modules need from each snapshot and swaps it in:
/// readers never block a sweep, a sweep never blocks readers.
fn start_source(
    settings: &Settings,
    source: Box<dyn Source>,
    derived: &engine::Derived,
    names: &SharedNodeNameMap,
) -> Result<(FabricThread, std::sync::mpsc::Receiver<()>)> {
    FabricThread::start_paused(
        source,
        engine::publisher(settings, derived),
        settings.sweep_interval,
        Some(Arc::clone(names)),
        &settings.source,
    )
    .context("cannot start the source thread")
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

/// The agent's sockets, bound now: a bad or busy address fails at once,
/// not after a sweep.
fn bind_agent(
    services: &Services,
    settings: &Settings,
    reads: &Reads<impl Fn() -> mibs::View + Send + Sync + 'static>,
    controller: Arc<dyn snmp::agent::SetController<mibs::Change>>,
    usm: &Arc<snmp::usm::Usm>,
    traps: Option<&crate::traps::Traps>,
    contexts: Option<Arc<crate::contexts::NodeContexts>>,
) -> Result<Agent<mibs::View, mibs::Change>> {
    let view = Arc::clone(&reads.view);
    let agent = services
        .runtime()
        .block_on(Agent::bind(
            AgentConfig {
                listen: settings.listen.clone(),
                communities: crate::config::agent_communities(&settings.communities),
                ..AgentConfig::default()
            },
            Arc::clone(&reads.dispatcher),
            move || view(),
            controller,
            Arc::clone(&reads.stats),
        ))
        .map_err(|e| -> anyhow::Error {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                PortInUse::new(&e).into()
            } else {
                e.into()
            }
        })?
        .with_usm(Arc::clone(usm))
        .with_vacm(Arc::new(settings.vacm.clone()))
        .with_user_hook(Box::new(|v: &mut mibs::View, user: &[u8]| {
            v.user = Some(user.to_vec())
        }))
        .with_managed_vacm(crate::vacm_tables::managed(Arc::clone(&reads.system)))
        .with_shorthand_context(settings.node_contexts.shorthand_context());
    let agent = match contexts {
        Some(c) => agent.with_contexts(c),
        None => agent,
    };
    Ok(match traps {
        Some(t) => agent.with_auth_failure_hook(t.auth_failure_hook(Arc::clone(&reads.system))),
        None => agent,
    })
}

/// The DISMAN-EVENT-MIB triggers' task: it reads the same MIB the same way
/// as requests do.
fn start_monitors<F>(
    services: &Services,
    dispatcher: Arc<snmp::dispatch::Dispatcher<mibs::View, mibs::Change>>,
    view: Arc<F>,
    traps: Option<crate::traps::Traps>,
    system: &mibs::SystemState,
    contexts: Option<Arc<crate::contexts::NodeContexts>>,
) -> crate::monitor::MonitorTask
where
    F: Fn() -> mibs::View + Send + Sync + 'static,
{
    let handle = services.runtime().handle().clone();
    crate::monitor::MonitorTask::start(
        Box::new(move |m| {
            crate::monitor::start(
                &handle,
                m,
                Arc::clone(&dispatcher),
                Arc::clone(&view),
                traps.clone(),
                contexts.clone(),
            )
        }),
        system.monitors.clone(),
    )
}

/// The AgentX subagent, in AgentX mode: the same objects, views and Set
/// path as the agent's own port.
fn subagent<F>(
    settings: &Settings,
    (modules, system, contexts): (
        &[crate::agentx::Module],
        &Arc<ArcSwap<mibs::SystemState>>,
        Option<Arc<crate::contexts::NodeContexts>>,
    ),
    dispatcher: &Arc<snmp::dispatch::Dispatcher<mibs::View, mibs::Change>>,
    view: &Arc<F>,
    controller: &Arc<dyn snmp::agent::SetController<mibs::Change>>,
) -> Option<snmp::agentx::Subagent<mibs::View, mibs::Change>>
where
    F: Fn() -> mibs::View + Send + Sync + 'static,
{
    let master = settings.agentx.clone()?;
    let (view, system) = (Arc::clone(view), Arc::clone(system));
    Some(crate::agentx::subagent(
        master,
        modules,
        Arc::clone(dispatcher),
        move || view(),
        Arc::clone(controller),
        move || system.load().up_time(),
        settings.agentx_if_mib,
        contexts.filter(|_| settings.agentx_node_contexts),
    ))
}

/// Runs the agent until a termination signal.
/// `load` reads the settings again on SIGHUP (see [`crate::reload`]).
pub fn run(
    settings: Settings,
    source: Box<dyn Source>,
    load: crate::reload::LoadSettings,
) -> Result<()> {
    let engine = Engine::build(&settings)?;

    // The health checks, the cabling plan, the route check.
    let derived = engine::Derived::new(&settings)?;
    let names = load_node_name_map(&settings)?;
    let demand = source.demand();
    let (fabric, first_sweep) = start_source(&settings, source, &derived, &names)?;
    let mut services = Services::start(fabric)?;

    let stats = SnmpStats::new();
    let opensm = settings.opensm.clone().map(|o| {
        info!(conf = %o.conf.display(), console = ?o.console, "steering OpenSM ([opensm])");
        Arc::new(crate::opensm::OpenSmControl::new(o))
    });
    let (jobs_tx, jobs_rx) = tokio::sync::mpsc::unbounded_channel();
    let controller = Arc::new(Controller::new(
        Arc::clone(&engine.system),
        engine.stored,
        engine.store,
        services.fabric(),
        opensm,
        Some(jobs_tx),
    ));
    crate::requests::start(
        services.runtime(),
        services.fabric(),
        Arc::clone(&controller),
        settings.source.starts_with("umad"),
        settings.request_session_timeout,
        jobs_rx,
    );
    let view = Arc::new(engine::view(
        services.fabric(),
        Arc::clone(&engine.system),
        Arc::clone(&stats),
    ));
    let dispatcher = Arc::new(engine.dispatcher);
    if let Some(c) = &engine.contexts {
        let v = Arc::clone(&view);
        c.serve_from(Arc::new(move || v()), demand);
    }
    let set_controller =
        Arc::clone(&controller) as Arc<dyn snmp::agent::SetController<mibs::Change>>;
    let mut subagent = subagent(
        &settings,
        (
            &engine.agentx_modules,
            &engine.system,
            engine.contexts.clone(),
        ),
        &dispatcher,
        &view,
        &set_controller,
    );
    // In AgentX mode notifications also go out as Notify-PDUs, through the
    // master's own sinks.
    let forward = subagent.as_mut().map(|s| s.notification_channel(256));
    let traps =
        services.start_traps(&settings, &engine.system, forward, Arc::clone(&engine.usm))?;
    let agent = bind_agent(
        &services,
        &settings,
        &Reads {
            dispatcher: Arc::clone(&dispatcher),
            view: Arc::clone(&view),
            system: Arc::clone(&engine.system),
            stats: Arc::clone(&stats),
        },
        set_controller,
        &engine.usm,
        traps.as_ref(),
        engine.contexts.clone(),
    )?;
    if let Some(path) = settings.control_socket.as_deref() {
        services.start_control(path)?;
    }
    let agent_counters = Arc::new(crate::metrics::AgentCounters::default());
    if let Some(t) = &traps {
        let _ = agent_counters.notifications.set(t.stats());
    }
    services.start_metrics(&settings, Arc::clone(&stats), Arc::clone(&agent_counters))?;
    // Sockets bound: sweep. The sockets queue requests meanwhile.
    services.begin_sweeping();
    let _ = first_sweep.recv();
    if let Some(t) = &traps {
        t.cold_start();
        let t = t.clone();
        let _ = derived.traps.set(Box::new(move |n| {
            t.notify(n);
        }));
    }
    let monitors = start_monitors(
        &services,
        Arc::clone(&dispatcher),
        Arc::clone(&view),
        traps.clone(),
        &engine.system.load(),
        engine.contexts.clone(),
    );
    let reloader = crate::reload::Reloader {
        load,
        current: settings.clone(),
        communities: agent.communities(),
        names,
        fabric: services.fabric(),
        counters: agent_counters,
        // warmStart (RFC 3418) after each applied reload.
        after_reload: traps.clone().map(|t| {
            let hook: Box<dyn Fn() + Send + Sync> = Box::new(move || t.warm_start());
            hook
        }),
        communities_changed: Some(crate::vacm_tables::on_reload(
            &settings,
            &engine.usm,
            &controller,
        )),
        traps: traps.clone(),
        controller,
        health: derived.health,
        monitors,
        plan: Some(derived.plan),
        routes_max_spread: Some(derived.routes_max_spread),
    };
    let result =
        services
            .runtime()
            .block_on(serve::serve(agent, subagent, reloader, &settings.source));
    if let Some(t) = &traps {
        t.log_stats();
    }
    drop(services);
    result
}
