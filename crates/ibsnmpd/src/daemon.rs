//! The agent: settings in, sockets served until SIGTERM/SIGINT.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use ib::source::Source;
use mibs::{Publisher, SystemState, View};
use snmp::agent::{Agent, AgentConfig, SnmpStats};
use snmp::dispatch::Dispatcher;
use snmp::oid::Oid;
use tracing::{info, warn};

use crate::config::{Access, ConfigError, Settings};
use crate::controller::Controller;
use crate::fabric::FabricThread;
use crate::nodemap::{NodeNameMap, SharedNodeNameMap};
use crate::state::StateStore;
use mibs::state::Persisted;

/// sysDescr: what, which version, on which platform.
fn sys_descr(source: &str) -> String {
    format!(
        "ibsnmpd {} - SNMP agent for InfiniBand fabrics ({} {}, source {})",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
        source
    )
}

/// The parts of the state file that grant access: one that cannot be read
/// stops the agent (security state never fails open: an exclusion added
/// over SNMP must not vanish with it).
const SECURITY_PARTS: [&str; 2] = [
    <mibs::snmp_usm::UsmState as mibs::state::PersistedState>::MODULE,
    <mibs::snmp_vacm::VacmState as mibs::state::PersistedState>::MODULE,
];

/// The initial agent state: defaults from settings, then what was persisted.
/// Another part that cannot be read keeps its defaults in memory and its
/// text in the file, and refuses Sets (commitFailed) until repaired.
fn initial_state(settings: &Settings, stored: &Persisted, file: &Path) -> Result<SystemState> {
    let mut st = SystemState::new(
        sys_descr(&settings.source),
        Oid::from_slice(mibs::snmpv2::IBSNMPD_OBJECT_ID),
    );
    st.contact = settings.sys_contact.clone();
    st.name = settings.sys_name.clone();
    st.location = settings.sys_location.clone();
    st.enable_authen_traps = settings.notify.auth_traps;
    st.secrets = settings.secrets;
    st.requests = Arc::new(
        mibs::ib_sm_req::Sessions::new(
            settings.request_session_timeout,
            settings.request_sessions_max,
        )
        .with_max_result_rows(settings.request_result_rows_max),
    );
    st.monitors = Arc::new(mibs::disman_event::Monitors::new(settings.monitors.clone()));
    for problem in st.restore(stored) {
        if SECURITY_PARTS.contains(&problem.module.as_str()) {
            anyhow::bail!(
                "{}: the {} part cannot be read ({}); the agent does not start \
                 without its users and access rules: repair that part, or \
                 remove it to start from the configuration alone",
                file.display(),
                problem.module,
                problem.error
            );
        }
        warn!(file = %file.display(), part = %problem.module, error = %problem.error,
              "a part of the state file cannot be read: its defaults are in force, the part is kept as it is in the file and its Sets fail until it is repaired");
    }
    crate::targets::show_configured(&mut st, &settings.notify.sinks);
    Ok(st)
}

/// The state directory. An agent with no write community never persists, so
/// a directory it cannot create is no reason to stop it: said once, then run
/// (the SNMPv3 engine ID and boots then live in memory when no user needs them).
fn open_state(settings: &Settings) -> Result<(StateStore, Persisted)> {
    match StateStore::open(&settings.state_dir) {
        Ok(s) => {
            let stored = s.load()?;
            // Said, since a default under $HOME may surprise.
            info!(
                dir = %settings.state_dir.display(),
                "state directory: the SNMPv3 engine ID and boots, and values Set over SNMP, are kept here"
            );
            Ok((s, stored))
        }
        Err(e)
            if !settings
                .communities
                .iter()
                .any(|c| c.access == Access::ReadWrite) =>
        {
            warn!(
                error = %format!("{e:#}"),
                "no writable state directory; running read-only without persisted state"
            );
            Ok((
                StateStore::unwritable(&settings.state_dir),
                Persisted::new(),
            ))
        }
        Err(e) => Err(e),
    }
}

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

/// Runs the agent until a termination signal.
/// `load` reads the settings again on SIGHUP (see [`crate::reload`]).
pub fn run(
    settings: Settings,
    source: Box<dyn Source>,
    load: crate::reload::LoadSettings,
) -> Result<()> {
    let (store, stored) = open_state(&settings)?;
    if !stored.is_empty() {
        info!(path = %store.path().display(), modules = stored.len(), "loaded persisted state");
    }
    let mut system = initial_state(&settings, &stored, store.path())?;
    for w in &settings.warnings {
        warn!("{w}");
    }
    // snmpEngineBoots is counted (durably) before the first answer.
    let (engine_id, boots) = match crate::engine_state::start(
        &settings.state_dir,
        settings.engine_id.clone(),
    ) {
        Ok(e) => e,
        // Without SNMPv3 users nothing depends on snmpEngineBoots surviving a
        // restart: a read-only agent runs with an engine of this run only.
        Err(e) if settings.users.is_empty() => {
            warn!(error = %format!("{e:#}"), "snmpEngineID/Boots not persisted (no SNMPv3 users)");
            crate::engine_state::ephemeral(settings.engine_id.clone())
        }
        Err(e) => return Err(e),
    };
    let usm = Arc::new(
        snmp::usm::Usm::new(snmp::usm::Engine::new(engine_id, boots), &settings.users)
            .context("SNMPv3 users")?,
    );
    info!(boots, users = settings.users.len(), "SNMPv3 engine ready");
    crate::usm_users::start(&mut system, &usm);
    crate::vacm_tables::add_configured(&mut system, &settings, &usm);

    let mut dispatcher: Dispatcher<View, mibs::Change> = Dispatcher::new();
    dispatcher.set_max_repetitions(settings.max_repetitions);
    dispatcher.set_max_bulk_varbinds(settings.max_getbulk_responses);
    // SM_Key and M_Key: SNMPv3 authPriv only, on every transport (AgentX
    // never: its master does not say how the manager authenticated).
    dispatcher.set_secret_subtrees(
        [
            mibs::oids::ib_sm_mib::IB_SM_CONFIG_SM_KEY,
            mibs::oids::ib_sm_mib::IB_SM_SM_INFO_SM_KEY,
            mibs::oids::ib_sm_mib::IB_SM_PORT_INFO_M_KEY,
        ]
        .iter()
        .map(|o| Oid::from_slice(o))
        .collect(),
    );
    // Community strings in the administrative tables: hidden below authPriv,
    // still configurable by whoever may write there.
    dispatcher.set_hidden_subtrees(
        crate::vacm_tables::hidden_subtrees()
            .into_iter()
            .chain(crate::targets::hidden_subtrees())
            .collect(),
    );
    // The tables that grant access: written only at authPriv (notWritable
    // below, on every transport) unless the configuration opens them.
    if settings.admin_writable_below_authpriv {
        warn!("admin_writable_below_authpriv: users, access and targets writable below authPriv");
    } else {
        dispatcher.set_admin_subtrees(admin_subtrees());
    }
    let mut or_entries = Vec::new();
    let mut agentx_modules = Vec::new();
    // What the modules read of the settings (writable columns, ifIndex
    // offset, opensm.conf), given to their objects and derivations.
    let module_options = mibs::Options {
        if_index_offset: settings.agentx_if_index_offset,
        sm_control: settings.opensm.is_some(),
        port_writes: settings.port_writes,
        opensm_conf: settings.opensm_conf.clone(),
    };
    for m in mibs::modules(&module_options) {
        if crate::agentx::serves(m.name) {
            agentx_modules.push(crate::agentx::Module::of(&m));
        }
        dispatcher
            .register_all(m.objects)
            .with_context(|| format!("registering {}", m.name))?;
        or_entries.extend(m.or_entry);
    }
    dispatcher
        .register_all(snmp::usm::mib_objects(&usm))
        .context("registering usmStats and snmpEngine")?;
    system.set_or_table(or_entries);
    let system = Arc::new(ArcSwap::from_pointee(system));
    usm.set_managed(Arc::new(crate::usm_users::StateUsers(Arc::clone(&system))));

    // The source thread derives what the modules need from each snapshot
    // and swaps it in: readers never block a sweep, a sweep never blocks
    // readers.
    let health_config = Arc::new(ArcSwap::from_pointee(settings.health.clone()));
    // The cabling plan ([topology] expected): a bad file stops the start.
    let plan = crate::topology::shared_plan(settings.topology_expected.as_deref())
        .map_err(crate::config::ConfigError)?;
    // Notifications of topology findings, once the layer is up.
    let plan_traps = Arc::new(std::sync::OnceLock::new());
    let publisher = Publisher::with_options(&module_options).with_extra({
        let mut health = crate::health::deriver(Arc::clone(&health_config));
        let mut topology = crate::topology::deriver(Arc::clone(&plan), Arc::clone(&plan_traps));
        move |s| crate::fabric::Extras {
            health: Some(health(s)),
            topology: Some(topology(s)),
        }
    });
    // The source thread waits for the sockets (bound below, so a busy port
    // fails at once); the agent answers after the first sweep.
    let names = load_node_name_map(&settings)?;
    let (mut fabric, first_sweep) = FabricThread::start_paused(
        source,
        publisher,
        settings.sweep_interval,
        Some(Arc::clone(&names)),
        &settings.source,
    )
    .context("cannot start the source thread")?;

    let stats = SnmpStats::new();
    let opensm = settings.opensm.clone().map(|o| {
        info!(conf = %o.conf.display(), console = ?o.console, "steering OpenSM ([opensm])");
        Arc::new(crate::opensm::OpenSmControl::new(o))
    });
    let (jobs_tx, jobs_rx) = tokio::sync::mpsc::unbounded_channel();
    let controller = Arc::new(Controller::new(
        Arc::clone(&system),
        stored,
        store,
        fabric.handle(),
        opensm,
        Some(jobs_tx),
    ));
    let vacm_reload = crate::vacm_tables::on_reload(&settings, &usm, &controller);
    let reload_controller = Arc::clone(&controller);

    let config = AgentConfig {
        listen: settings.listen.clone(),
        communities: crate::config::agent_communities(&settings.communities),
        ..AgentConfig::default()
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("ibsnmpd-agent")
        .build()
        .context("cannot start the async runtime")?;
    crate::requests::start(
        &runtime,
        fabric.handle(),
        Arc::clone(&controller),
        settings.source.starts_with("umad"),
        settings.request_session_timeout,
        jobs_rx,
    );
    let view_stats = Arc::clone(&stats);
    let view_system = Arc::clone(&system);
    let view_fabric = fabric.handle();
    let view = move || {
        View::from_published(
            &view_fabric.published(),
            view_system.load_full(),
            Arc::clone(&view_stats),
        )
    };
    let dispatcher = Arc::new(dispatcher);
    let controller = controller as Arc<dyn snmp::agent::SetController<mibs::Change>>;
    let view = Arc::new(view);
    // The monitor task reads the same MIB the same way (started after the
    // first sweep).
    let monitor_reads = (Arc::clone(&dispatcher), Arc::clone(&view));
    let mut subagent = settings.agentx.clone().map(|master| {
        let view = Arc::clone(&view);
        let system = Arc::clone(&system);
        crate::agentx::subagent(
            master,
            &agentx_modules,
            Arc::clone(&dispatcher),
            move || view(),
            Arc::clone(&controller),
            move || system.load().up_time(),
            settings.agentx_if_mib,
        )
    });
    let udp = !config.listen.is_empty();
    // In AgentX mode notifications also go out as Notify-PDUs, through the
    // master's own sinks.
    let forward = subagent.as_mut().map(|s| s.notification_channel(256));
    let traps = match runtime.block_on(start_traps(
        &settings,
        &system,
        &fabric,
        forward,
        Arc::clone(&usm),
    )) {
        Ok(t) => t,
        Err(e) => {
            fabric.stop();
            return Err(e);
        }
    };
    // Bind first: a bad or busy address fails at once, not after a sweep.
    let agent = match runtime.block_on(Agent::bind(
        config,
        dispatcher,
        move || view(),
        controller,
        Arc::clone(&stats),
    )) {
        Ok(a) => a
            .with_usm(usm)
            .with_vacm(Arc::new(settings.vacm.clone()))
            .with_user_hook(Box::new(|v: &mut View, user: &[u8]| {
                v.user = Some(user.to_vec())
            })),
        Err(e) => {
            fabric.stop();
            return Err(e.into());
        }
    };
    let agent = agent.with_managed_vacm(crate::vacm_tables::managed(Arc::clone(&system)));
    let agent = match &traps {
        Some(t) => agent.with_auth_failure_hook(t.auth_failure_hook(Arc::clone(&system))),
        None => agent,
    };
    // The operator control socket (docs/usage.md), when configured;
    // removed again when `control` drops at the end of run().
    let control = match settings.control_socket.as_deref().map(|p| {
        let _rt = runtime.enter();
        crate::ctl::ControlSocket::start(p, fabric.handle())
    }) {
        Some(Err(e)) => {
            fabric.stop();
            return Err(e);
        }
        c => c.and_then(Result::ok),
    };
    let agent_counters = Arc::new(crate::metrics::AgentCounters::default());
    if let Some(t) = &traps {
        let _ = agent_counters.notifications.set(t.stats());
    }
    if let Some(addr) = settings.metrics_listen {
        let metrics_fabric = fabric.handle();
        let sources = crate::metrics::Sources {
            published: Box::new(move || arc_swap::Guard::into_inner(metrics_fabric.published())),
            snmp: Arc::clone(&stats),
            agent: Arc::clone(&agent_counters),
            started: std::time::Instant::now(),
            families: settings.metrics_families,
        };
        if let Err(e) = start_metrics(&runtime, addr, sources, settings.metrics_limits.clone()) {
            fabric.stop();
            return Err(e);
        }
    }
    // Sockets bound: sweep. The sockets queue requests meanwhile.
    fabric.begin();
    let _ = first_sweep.recv();
    if let Some(t) = &traps {
        t.cold_start();
        let _ = plan_traps.set(t.clone());
    }
    let monitors = {
        let (dispatcher, view, traps) = (monitor_reads.0, monitor_reads.1, traps.clone());
        let handle = runtime.handle().clone();
        crate::monitor::MonitorTask::start(
            Box::new(move |m| {
                crate::monitor::start(
                    &handle,
                    m,
                    Arc::clone(&dispatcher),
                    Arc::clone(&view),
                    traps.clone(),
                )
            }),
            system.load().monitors.clone(),
        )
    };
    let mut reloader = crate::reload::Reloader {
        load,
        current: settings.clone(),
        communities: agent.communities(),
        names: Arc::clone(&names),
        fabric: fabric.handle(),
        counters: Arc::clone(&agent_counters),
        // warmStart (RFC 3418) after each applied reload.
        after_reload: traps.clone().map(|t| {
            let hook: Box<dyn Fn() + Send + Sync> = Box::new(move || t.warm_start());
            hook
        }),
        communities_changed: Some(vacm_reload),
        traps: traps.clone(),
        controller: Arc::clone(&reload_controller),
        health: health_config,
        monitors,
        plan: Some(plan),
    };
    let result = runtime.block_on(async {
        let addrs = agent.local_addrs();
        if udp {
            info!(?addrs, source = %settings.source, "ibsnmpd listening");
        }
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let subagent = subagent.map(|s| {
            let mut stop = stop_rx.clone();
            tokio::spawn(s.run(async move {
                let _ = stop.wait_for(|v| *v).await;
            }))
        });
        let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .context("SIGHUP handler")?;
        let shutdown = shutdown_signal();
        tokio::pin!(shutdown);
        let serve = async {
            if udp {
                agent.run().await
            } else {
                std::future::pending().await
            }
        };
        tokio::pin!(serve);
        let r = loop {
            tokio::select! {
                r = &mut serve => break r.context("agent stopped"),
                s = &mut shutdown => {
                    let name = s?;
                    info!(signal = name, "shutting down");
                    break Ok(());
                }
                _ = hup.recv() => reloader.reload().await,
            }
        };
        // The subagent closes its session with the master before we go.
        let _ = stop_tx.send(true);
        if let Some(t) = subagent {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), t).await;
        }
        r
    });
    if let Some(t) = &traps {
        t.log_stats();
    }
    // Any Set in flight was persisted before its response; nothing to flush.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    drop(control);
    fabric.stop();
    result
}

/// The notification layer (docs/notifications.md), None with nothing to
/// send to.
async fn start_traps(
    settings: &Settings,
    system: &Arc<ArcSwap<SystemState>>,
    fabric: &FabricThread,
    forward: Option<tokio::sync::mpsc::Sender<Vec<snmp::value::VarBind>>>,
    usm: Arc<snmp::usm::Usm>,
) -> Result<Option<crate::traps::Traps>> {
    // SNMPv1's agent-addr: the first IPv4 listen address that names one.
    let agent_addr = settings
        .listen
        .iter()
        .find_map(|a| match a.ip() {
            std::net::IpAddr::V4(v4) if !v4.is_unspecified() => Some(v4),
            _ => None,
        })
        .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED);
    // Targets may be added over SNMP whenever managers can reach us.
    let targets = (!settings.listen.is_empty()).then(|| {
        crate::targets::source(Arc::clone(system), Arc::clone(&usm), settings.users.clone())
    });
    crate::traps::Traps::start(
        &settings.notify,
        agent_addr,
        Arc::clone(system),
        fabric.handle(),
        forward,
        Some(usm),
        targets,
    )
    .await
}

/// Binds the metrics endpoint now (a busy port fails before any sweep) and
/// serves it on the runtime.
fn start_metrics(
    runtime: &tokio::runtime::Runtime,
    addr: std::net::SocketAddr,
    sources: crate::metrics::Sources,
    limits: crate::metrics::Limits,
) -> Result<()> {
    let std_listener = std::net::TcpListener::bind(addr)
        .with_context(|| format!("cannot bind metrics TCP {addr}"))?;
    std_listener.set_nonblocking(true)?;
    let local = std_listener.local_addr()?;
    let _rt = runtime.enter();
    let listener = tokio::net::TcpListener::from_std(std_listener)?;
    runtime.spawn(crate::metrics::serve(listener, sources, limits));
    info!(addr = %local, "metrics endpoint listening (GET /metrics)");
    Ok(())
}

async fn shutdown_signal() -> Result<&'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("SIGINT handler")?;
    Ok(tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    })
}

/// SNMP-USER-BASED-SM-MIB, SNMP-VIEW-BASED-ACM-MIB, SNMP-TARGET-MIB and
/// SNMP-NOTIFICATION-MIB: whoever writes them decides who reads what and
/// where notifications (and their communities) go.
fn admin_subtrees() -> Vec<Oid> {
    use mibs::oids::*;
    [
        snmp_user_based_sm_mib::SNMP_USM_MIB,
        snmp_view_based_acm_mib::SNMP_VACM_MIB,
        snmp_target_mib::SNMP_TARGET_MIB,
        snmp_notification_mib::SNMP_NOTIFICATION_MIB,
    ]
    .iter()
    .map(|o| Oid::from_slice(o))
    .collect()
}
