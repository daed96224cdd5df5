//! The SNMP engine and its MIB: the agent state (defaults, then what was
//! persisted), the USM engine, the dispatcher with every module registered,
//! and the publisher that derives the modules' tables from each snapshot.
//! The daemon's calls into `mibs` are here.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use mibs::core::state::Persisted;
use mibs::{SystemState, View};

use crate::models::source_thread::Publisher;
use snmp::dispatch::Dispatcher;
use snmp::oid::Oid;
use tracing::{info, warn};

use crate::config::{Access, Settings};
use crate::models::state::StateStore;
use crate::services::contexts::ViewFn;

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
    <mibs::modules::snmp_usm::UsmState as mibs::core::state::PersistedState>::MODULE,
    <mibs::modules::snmp_vacm::VacmState as mibs::core::state::PersistedState>::MODULE,
];

/// The state directory and what it held, for the controller to persist.
pub(super) struct Persistence {
    pub store: StateStore,
    pub stored: Persisted,
}

/// What the agent answers from: built once the (paused) source thread
/// exists, before any socket is bound.
pub(super) struct Engine {
    pub system: Arc<ArcSwap<SystemState>>,
    pub usm: Arc<snmp::usm::Usm>,
    pub dispatcher: Arc<Dispatcher<View, mibs::Change>>,
    /// What a request reads: the published tables and the agent state.
    pub view: ViewFn,
    pub stats: Arc<snmp::agent::SnmpStats>,
    /// The modules an AgentX master is offered.
    pub agentx_modules: Vec<crate::services::agentx::Module>,
    /// Every node as a context (None: `node_contexts = "off"`).
    pub contexts: Option<Arc<crate::services::contexts::NodeContexts>>,
}

/// What the engine's requests read of the running source.
pub(super) struct FabricReads {
    pub fabric: crate::models::source_thread::FabricHandle,
    /// The source's, where it reads other nodes' detail attributes for
    /// the node contexts polled.
    pub demand: Option<Arc<ib::source::demand::Demand>>,
}

impl Engine {
    /// The state directory read, snmpEngineBoots counted (durably, before
    /// the first answer), every module registered.
    pub fn build(settings: &Settings, reads: FabricReads) -> Result<(Engine, Persistence)> {
        let (store, stored) = open_state(settings)?;
        if !stored.is_empty() {
            info!(path = %store.path().display(), modules = stored.len(), "loaded persisted state");
        }
        let mut system = initial_state(settings, &stored, store.path())?;
        let stored = restore_nodes(&store, &mut system, stored)?;
        for w in &settings.warnings {
            warn!("{w}");
        }
        let usm = start_usm(settings)?;
        crate::services::usm_users::start(&mut system, &usm);
        crate::services::vacm_tables::add_configured(&mut system, settings, &usm);
        let with_contexts = settings.agent.node_contexts != crate::config::NodeContexts::Off;
        let mut modules = mibs::modules(&module_options(settings));
        let (or_entries, agentx_modules) = offered(&mut modules, with_contexts);
        system.set_or_table(or_entries);
        let system = Arc::new(ArcSwap::from_pointee(system));
        usm.set_managed(Arc::new(crate::services::usm_users::StateUsers(
            Arc::clone(&system),
        )));
        let stats = snmp::agent::SnmpStats::new();
        let view = view(reads.fabric, Arc::clone(&system), Arc::clone(&stats));
        let contexts = with_contexts
            .then(|| node_contexts(settings, &usm, Arc::clone(&view), reads.demand))
            .transpose()?;
        let dispatcher = register(settings, modules, contexts.as_ref(), &usm)?;
        let engine = Engine {
            system,
            usm,
            dispatcher: Arc::new(dispatcher),
            view,
            stats,
            agentx_modules,
            contexts,
        };
        Ok((engine, Persistence { store, stored }))
    }
}

/// The sysORTable rows and the subtrees an AgentX master is offered, taken
/// from `modules` (their objects stay, to be registered).
fn offered(
    modules: &mut [mibs::Module],
    with_contexts: bool,
) -> (Vec<mibs::SysOrEntry>, Vec<crate::services::agentx::Module>) {
    let mut or_entries = Vec::new();
    let mut agentx_modules = Vec::new();
    for m in modules.iter_mut() {
        if crate::services::agentx::serves(m.name) {
            agentx_modules.push(crate::services::agentx::Module::of(m));
        }
        or_entries.extend(m.or_entry.take());
    }
    if with_contexts {
        let or = mibs::modules::entity_mib::or_entry();
        // Through an AgentX master too: it is how managers find the
        // node contexts the subagent registers there.
        agentx_modules.push(crate::services::agentx::Module {
            subtree: Oid::from_slice(mibs::modules::entity_mib::ENT_LOGICAL_ENTRY),
            caps: Some((or.id.clone(), or.descr.clone())),
        });
        or_entries.push(or);
    }
    (or_entries, agentx_modules)
}

/// The dispatcher with every module's objects registered.
fn register(
    settings: &Settings,
    modules: Vec<mibs::Module>,
    contexts: Option<&Arc<crate::services::contexts::NodeContexts>>,
    usm: &Arc<snmp::usm::Usm>,
) -> Result<Dispatcher<View, mibs::Change>> {
    let mut dispatcher = dispatcher(settings);
    for mut m in modules {
        if contexts.is_some() {
            // vacmContextTable lists the node contexts too.
            let entry = Oid::from_slice(snmp::context::VACM_CONTEXT_ENTRY);
            m.objects.retain(|o| *o.root() != entry);
        }
        dispatcher
            .register_all(m.objects)
            .with_context(|| format!("registering {}", m.name))?;
        if let (Some(c), "SNMP-VIEW-BASED-ACM-MIB") = (contexts, m.name) {
            let c: Arc<dyn snmp::context::Contexts<View, mibs::Change>> = c.clone();
            dispatcher
                .register(Arc::new(snmp::context::ContextTable::new(Some(c))))
                .context("registering vacmContextTable")?;
        }
    }
    if contexts.is_some() {
        // ENTITY-MIB's entLogicalTable: how managers discover them.
        dispatcher
            .register(Arc::new(mibs::modules::entity_mib::EntLogicalTable::new(
                usm.engine.id.clone(),
            )))
            .context("registering entLogicalTable")?;
    }
    dispatcher
        .register_all(snmp::usm::mib_objects(usm))
        .context("registering usmStats and snmpEngine")?;
    Ok(dispatcher)
}

/// The node contexts' resolver and their object set: the node's system
/// group, IF-MIB and IB-IF-MIB rows, and the engine's snmpEngine group
/// (with usmStats: the engine's own, in any context).
fn node_contexts(
    settings: &Settings,
    usm: &Arc<snmp::usm::Usm>,
    view: ViewFn,
    demand: Option<Arc<ib::source::demand::Demand>>,
) -> Result<Arc<crate::services::contexts::NodeContexts>> {
    let mut d = dispatcher(settings);
    d.register_all(mibs::modules::node_context::objects(&module_options(
        settings,
    )))
    .context("registering the node contexts' objects")?;
    d.register_all(snmp::usm::mib_objects(usm))
        .context("registering snmpEngine in node contexts")?;
    Ok(Arc::new(crate::services::contexts::NodeContexts::new(
        d, view, demand,
    )))
}

/// What the modules read of the settings (writable columns, ifIndex offset,
/// opensm.conf), given to their objects and derivations.
fn module_options(settings: &Settings) -> mibs::Options {
    mibs::Options {
        if_index_offset: settings.agentx.if_index_offset,
        sm_control: settings.sm.opensm.is_some(),
        port_writes: settings.sm.port_writes,
        opensm_conf: settings.sm.opensm_conf.clone(),
    }
}

/// What the source thread's derivers read and a reload changes.
pub(super) struct Derived {
    /// The health checks' settings (`[health]`).
    pub health: crate::models::fabric_health::SharedHealthConfig,
    /// The cabling plan (`[topology] expected`): a bad file stops the start.
    pub plan: crate::models::cabling_plan::SharedPlan,
    /// The route check's `[routes] max_spread`.
    pub routes_max_spread: crate::models::route_check::SharedSpread,
}

impl Derived {
    pub(super) fn new(settings: &Settings) -> Result<Derived> {
        Ok(Derived {
            health: Arc::new(ArcSwap::from_pointee(settings.checks.health.clone())),
            plan: crate::models::cabling_plan::shared_plan(
                settings.checks.topology_expected.as_deref(),
            )
            .map_err(crate::config::ConfigError)?,
            routes_max_spread: crate::models::route_check::SharedSpread::new(
                settings.checks.routes_max_spread,
            ),
        })
    }
}

/// The publisher of the modules' tables, with the daemon's own derivations
/// (health, topology) beside them.
pub(super) fn publisher(settings: &Settings, shared: &Derived) -> Publisher {
    let mut health = crate::models::fabric_health::deriver(Arc::clone(&shared.health));
    let mut topology = crate::models::cabling_plan::deriver(Arc::clone(&shared.plan));
    let mut routes = crate::models::route_check::deriver(shared.routes_max_spread.clone());
    mibs::Publisher::with_options(&module_options(settings)).with_extra(move |s| {
        crate::models::source_thread::Extras {
            health: Some(health(s)),
            topology: Some(topology(s)),
            routes: Some(routes(s)),
        }
    })
}

/// What a request reads: the published tables and the agent state of now.
fn view(
    fabric: crate::models::source_thread::FabricHandle,
    system: Arc<ArcSwap<SystemState>>,
    stats: Arc<snmp::agent::SnmpStats>,
) -> ViewFn {
    Arc::new(move || {
        View::from_published(&fabric.published(), system.load_full(), Arc::clone(&stats))
    })
}

/// The USM engine: snmpEngineID and snmpEngineBoots, then the users.
fn start_usm(settings: &Settings) -> Result<Arc<snmp::usm::Usm>> {
    let (engine_id, boots) = match crate::models::engine_state::start(
        &settings.daemon.state_dir,
        settings.agent.engine_id.clone(),
    ) {
        Ok(e) => e,
        // Without SNMPv3 users nothing depends on snmpEngineBoots surviving a
        // restart: a read-only agent runs with an engine of this run only.
        Err(e) if settings.agent.users.is_empty() => {
            warn!(error = %format!("{e:#}"), "snmpEngineID/Boots not persisted (no SNMPv3 users)");
            crate::models::engine_state::ephemeral(settings.agent.engine_id.clone())
        }
        Err(e) => return Err(e),
    };
    let usm = Arc::new(
        snmp::usm::Usm::new(
            snmp::usm::Engine::new(engine_id, boots),
            &settings.agent.users,
        )
        .context("SNMPv3 users")?,
    );
    info!(
        boots,
        users = settings.agent.users.len(),
        "SNMPv3 engine ready"
    );
    Ok(usm)
}

/// The dispatcher's limits and the subtrees it guards.
fn dispatcher(settings: &Settings) -> Dispatcher<View, mibs::Change> {
    let mut dispatcher: Dispatcher<View, mibs::Change> = Dispatcher::new();
    dispatcher.set_max_repetitions(settings.agent.max_repetitions);
    dispatcher.set_max_bulk_varbinds(settings.agent.max_getbulk_responses);
    // SM_Key and M_Key: SNMPv3 authPriv only, on every transport (AgentX
    // never: its master does not say how the manager authenticated).
    dispatcher.set_secret_subtrees(oids(&[
        mibs::core::oids::ib_sm_mib::IB_SM_CONFIG_SM_KEY,
        mibs::core::oids::ib_sm_mib::IB_SM_SM_INFO_SM_KEY,
        mibs::core::oids::ib_sm_mib::IB_SM_PORT_INFO_M_KEY,
    ]));
    // Community strings in the administrative tables: hidden below authPriv,
    // still configurable by whoever may write there.
    dispatcher.set_hidden_subtrees(
        crate::services::vacm_tables::hidden_subtrees()
            .into_iter()
            .chain(crate::services::targets::hidden_subtrees())
            .collect(),
    );
    // The tables that grant access: written only at authPriv (notWritable
    // below, on every transport) unless the configuration opens them.
    if settings.agent.admin_writable_below_authpriv {
        warn!("admin_writable_below_authpriv: users, access and targets writable below authPriv");
    } else {
        dispatcher.set_admin_subtrees(admin_subtrees());
    }
    dispatcher
}

fn oids(list: &[&[u32]]) -> Vec<Oid> {
    list.iter().map(|o| Oid::from_slice(o)).collect()
}

/// SNMP-USER-BASED-SM-MIB, SNMP-VIEW-BASED-ACM-MIB, SNMP-TARGET-MIB and
/// SNMP-NOTIFICATION-MIB: whoever writes them decides who reads what and
/// where notifications (and their communities) go.
fn admin_subtrees() -> Vec<Oid> {
    use mibs::core::oids::*;
    oids(&[
        snmp_user_based_sm_mib::SNMP_USM_MIB,
        snmp_view_based_acm_mib::SNMP_VACM_MIB,
        snmp_target_mib::SNMP_TARGET_MIB,
        snmp_notification_mib::SNMP_NOTIFICATION_MIB,
    ])
}

/// The initial agent state: defaults from settings, then what was persisted.
/// Another part that cannot be read keeps its defaults in memory and its
/// text in the file, and refuses Sets (commitFailed) until repaired.
fn initial_state(settings: &Settings, stored: &Persisted, file: &Path) -> Result<SystemState> {
    let mut st = SystemState::new(
        sys_descr(&settings.source.spec),
        Oid::from_slice(mibs::modules::snmpv2::IBSNMPD_OBJECT_ID),
    );
    st.contact = settings.system.contact.clone();
    st.name = settings.system.name.clone();
    st.location = settings.system.location.clone();
    st.enable_authen_traps = settings.notify.auth_traps;
    st.secrets = settings.agent.secrets;
    st.requests = Arc::new(
        mibs::modules::ib_sm_req::Sessions::new(
            settings.requests.session_timeout,
            settings.requests.sessions_max,
        )
        .with_max_result_rows(settings.requests.result_rows_max),
    );
    st.monitors = Arc::new(mibs::modules::disman_event::Monitors::new(
        settings.checks.monitors.clone(),
    ));
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
    crate::services::targets::show_configured(&mut st, &settings.notify.sinks);
    Ok(st)
}

/// The node contexts' values (`node-contexts.json` and `.log`), with those
/// a state.json of an earlier version held, which are moved out of it
/// (written beside it first, then the file rewritten without them).
/// Returns what state.json holds now.
fn restore_nodes(
    store: &StateStore,
    system: &mut SystemState,
    mut stored: Persisted,
) -> Result<Persisted> {
    use mibs::modules::if_mib::IfMibState;
    let kept = store.nodes().load()?;
    let mut nodes = system.modules.get::<IfMibState>().nodes.clone();
    let moved = !nodes.is_empty();
    nodes.extend(kept);
    if !nodes.is_empty() {
        info!(nodes = nodes.len(), "loaded the node contexts' values");
    }
    if moved && store.writable() {
        store
            .nodes()
            .compact(&nodes)
            .with_context(|| format!("cannot write beside {}", store.path().display()))?;
    }
    system.modules.update::<IfMibState>(|m| m.nodes = nodes);
    if moved && store.writable() {
        system
            .modules
            .persist_into(&mut stored)
            .map_err(anyhow::Error::msg)?;
        store
            .save(&stored)
            .with_context(|| format!("cannot write {}", store.path().display()))?;
        info!(path = %store.path().display(), "moved the node contexts' values out of the state file");
    }
    Ok(stored)
}

/// The state directory. An agent with no write community never persists, so
/// a directory it cannot create is no reason to stop it: said once, then run
/// (the SNMPv3 engine ID and boots then live in memory when no user needs them).
fn open_state(settings: &Settings) -> Result<(StateStore, Persisted)> {
    match StateStore::open(&settings.daemon.state_dir) {
        Ok(s) => {
            let stored = s.load()?;
            // Said, since a default under $HOME may surprise.
            info!(
                dir = %settings.daemon.state_dir.display(),
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
                StateStore::unwritable(&settings.daemon.state_dir),
                Persisted::new(),
            ))
        }
        Err(e) => Err(e),
    }
}
