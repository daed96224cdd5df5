//! MIB modules served by ibsnmpd, as typed tables over one immutable view.
//!
//! Every module implements `snmp::mib::MibObject<View, Change>`: reads come
//! from [`View`] (the fabric snapshot, the rows derived from it, the agent
//! state), Sets turn into [`Change`] values (of the module's own types)
//! whose [`plan`] the daemon's one control path executes; what a module
//! persists is its own serde type ([`crate::core::state::PersistedState`]).
//!
//! Layout: [`core`] (view, publishing, persisted parts, columns, the
//! RowStatus adapter, helpers) names no module; [`modules`] holds the MIB
//! modules; this root names them all in typed lists: [`Derived`],
//! [`ModuleStates`], [`Change`], [`REGISTRY`].

#![forbid(unsafe_code)]

use std::sync::Arc;

use snmp::mib::MibObject;

pub mod core;
pub mod modules;

pub use crate::core::view::SysOrEntry;

use crate::modules::admin::{AdminChange, SpinLockChange};

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use ib::model::Snapshot;
use snmp::agent::SnmpStats;
use snmp::oid::Oid;
use snmp::table::RowSet;

use crate::core::state::{Persisted, PersistedState, Unreadable};

/// One registrable MIB object of ibsnmpd.
pub type Object = Arc<dyn MibObject<View, Change>>;

/// A column of a table over rows `R` of the view ([`core::column`]).
pub type Col<R> = snmp::table::Column<View, Change, R>;

/// A MIB module as served: its objects and its sysORTable row.
pub struct Module {
    /// The module name (e.g. "SNMPv2-MIB").
    pub name: &'static str,
    /// sysORTable row (`None` for modules not listed there).
    pub or_entry: Option<SysOrEntry>,
    pub objects: Vec<Object>,
}

/// How a module plugs in: each module exports one `DEF`.
pub struct ModuleDef {
    /// The module name (e.g. "SNMPv2-MIB").
    pub name: &'static str,
    /// Its sysORTable row, if listed there.
    pub or_entry: fn() -> Option<SysOrEntry>,
    /// Its objects with the daemon's settings (which of its columns are
    /// writable, ...), ready for `Dispatcher::register_all`.
    pub objects: fn(&Options) -> Vec<Object>,
    /// Columns of served tables deliberately not served, with the reason
    /// (checked against the MIB files by tests/coverage.rs).
    pub omitted: &'static [(&'static [u32], &'static str)],
}

impl ModuleDef {
    /// A module of objects only: no omitted columns (set those with `..`
    /// on top of it).
    pub const fn plain(
        name: &'static str,
        or_entry: fn() -> Option<SysOrEntry>,
        objects: fn(&Options) -> Vec<Object>,
    ) -> Self {
        ModuleDef {
            name,
            or_entry,
            objects,
            omitted: &[],
        }
    }
}

/// Daemon settings the modules read: given to their objects when they are
/// built ([`ModuleDef::objects`]) and to their derivations
/// ([`Deriver::new`]), each module reading its own fields; never carried
/// in a snapshot or read at request time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// IF-MIB: added to every ifIndex (AgentX mode with IF-MIB rows, where the
    /// master's own interfaces share the ifIndex space; docs/agentx.md).
    pub if_index_offset: u32,
    /// IB-SM-MIB: the daemon steers an OpenSM (`[opensm]` in its
    /// configuration), so ibSmConfigTable's SM settings are writable.
    pub sm_control: bool,
    /// IB-SM-MIB: `port_writes` lets managers set ibSmPortInfoTable's safe
    /// columns (Set(PortInfo) SMPs).
    pub port_writes: bool,
    /// IB-SM-MIB: the opensm.conf ibSmConfigTable reads its settings from
    /// (config `opensm_conf`, else `[opensm] conf`), at every publish.
    pub opensm_conf: Option<std::path::PathBuf>,
}

/// The registry: every module ibsnmpd serves, in sysORTable order. Adding
/// a module is one line here.
pub const REGISTRY: &[&ModuleDef] = &[
    &modules::snmpv2::DEF,
    &modules::snmp_mpd::DEF,
    &modules::snmp_target::DEF,
    &modules::snmp_notification::DEF,
    &modules::snmp_usm::DEF,
    &modules::snmp_vacm::DEF,
    &modules::if_mib::DEF,
    &modules::ib_if_mib::DEF,
    &modules::ib_pm_mib::DEF,
    &modules::ib_sm_mib::DEF,
    &modules::ib_sm_req::DEF,
    &modules::disman_event::DEF,
];

/// Every module ibsnmpd serves, in sysORTable order, built with `opts`.
pub fn modules(opts: &Options) -> Vec<Module> {
    REGISTRY
        .iter()
        .map(|d| Module {
            name: d.name,
            or_entry: (d.or_entry)(),
            objects: (d.objects)(opts),
        })
        .collect()
}

// ------------------------------------------------------------ changes

/// What a validated Set varbind becomes: phase 1 of a Set (every object's
/// check) turns each varbind into one, of the checking module's own type;
/// only when all pass does the daemon's one control path execute the
/// request's [`plan`] (phase 2).
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// SNMPv2-MIB's writable system objects (agent state, persisted).
    System(modules::snmpv2::SystemSet),
    /// IF-MIB's ifAlias, ifLinkUpDownTrapEnable (agent state, persisted).
    If(modules::if_mib::IfSet),
    /// IB-PM-MIB: PortSelect (agent state) or a PMA Set (fabric, one per
    /// node for the request).
    Pm(modules::ib_pm_mib::PmSet),
    /// IB-SM-MIB's ibSmPortInfoTable: Set(PortInfo), one per port.
    SmPort(modules::ib_sm_mib::PortInfoSet),
    /// IB-SM-MIB's ibSmConfigTable: an operation on the steered OpenSM.
    Sm(ib::opensm::SmOp),
    /// IB-SM-MIB's request tables (runtime agent state).
    Req(modules::ib_sm_req::RequestChange),
    /// The administrative tables (agent state, persisted).
    Admin(AdminSet),
}

/// Declares [`AdminSet`]: one variant per administrative table (and spin
/// lock), each applied by the generic RowStatus adapter ([`admin`]).
macro_rules! admin_sets {
    ($($variant:ident($ty:ty),)*) => {
        /// A checked Set of an administrative table or spin lock.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AdminSet {
            $($variant($ty),)*
        }

        $(impl modules::admin::IntoChange for $ty {
            fn into_change(self) -> Change {
                Change::Admin(AdminSet::$variant(self))
            }
        })*

        impl AdminSet {
            fn apply(&self, state: &mut SystemState) {
                match self {
                    $(AdminSet::$variant(c) => c.apply(state),)*
                }
            }
        }
    };
}

admin_sets! {
    TargetAddr(AdminChange<modules::snmp_target::TargetAddr>),
    TargetParams(AdminChange<modules::snmp_target::TargetParams>),
    TargetSpinLock(SpinLockChange<modules::snmp_target::TargetState>),
    Notify(AdminChange<modules::snmp_notification::NotifyEntry>),
    FilterProfile(AdminChange<modules::snmp_notification::FilterProfile>),
    Filter(AdminChange<modules::snmp_notification::Filter>),
    UsmUser(AdminChange<modules::snmp_usm::UsmUser>),
    UsmSpinLock(SpinLockChange<modules::snmp_usm::UsmState>),
    VacmGroup(AdminChange<modules::snmp_vacm::GroupRow>),
    VacmAccess(AdminChange<modules::snmp_vacm::AccessRow>),
    VacmView(AdminChange<modules::snmp_vacm::FamilyRow>),
    VacmSpinLock(SpinLockChange<modules::snmp_vacm::VacmState>),
}

impl Change {
    /// Applies an agent change (see [`Plan::agent`]) to `state`; fabric and
    /// SM changes leave it be.
    pub fn apply(&self, state: &mut SystemState) {
        match self {
            Change::System(s) => s.apply(state),
            Change::If(s) => s.apply(state),
            Change::Pm(s) => s.apply(state),
            Change::Req(r) => r.apply_to(state),
            Change::Admin(a) => a.apply(state),
            Change::SmPort(_) | Change::Sm(_) => {}
        }
    }
}

/// Where a request's changes take effect, executed by the daemon's control
/// path in this order: the agent's state (persisted first), the SM, the
/// fabric. Each entry carries the index of the (first) change it came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Changes applied to a copy of the agent's state ([`Change::apply`]).
    pub agent: Vec<usize>,
    /// Source control operations (PMA Sets one per node, Set(PortInfo) one
    /// per port), in varbind order. Cannot be taken back once done.
    pub fabric: Vec<(usize, ib::source::ControlOp)>,
    /// Operations on the steered Subnet Manager (can be undone).
    pub sm: Vec<(usize, ib::opensm::SmOp)>,
}

/// The plan of a request's changes.
pub fn plan(changes: &[Change]) -> Plan {
    let mut plan = Plan::default();
    let mut pm = Vec::new();
    let mut ports = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        match c {
            Change::System(_) | Change::If(_) | Change::Req(_) | Change::Admin(_) => {
                plan.agent.push(i)
            }
            Change::Pm(s) => {
                if s.is_agent() {
                    plan.agent.push(i);
                }
                pm.push((i, s));
            }
            Change::SmPort(s) => ports.push((i, s)),
            Change::Sm(op) => plan.sm.push((i, op.clone())),
        }
    }
    plan.fabric = modules::ib_pm_mib::fabric_ops(&pm);
    plan.fabric.extend(modules::ib_sm_mib::fabric_ops(&ports));
    plan.fabric.sort_by_key(|(i, _)| *i);
    plan
}

/// Checks a source's answer to a fabric operation: Err(reason) when the
/// operation "succeeded" without taking effect (commitFailed).
pub fn check_reply(
    op: &ib::source::ControlOp,
    reply: &ib::source::ControlReply,
) -> Result<(), String> {
    modules::ib_pm_mib::check_reply(op, reply)
}

// ------------------------------------------------------------ derivation

/// What the modules derive from one snapshot for one context: what every
/// context serves, and what only the default context or a node context
/// has ([`Scope`]).
#[derive(Debug)]
pub struct Derived {
    /// IF-MIB's interfaces (ifIndex, counters' discontinuities): the
    /// fabric's, or the node context's.
    pub if_mib: modules::if_mib::Interfaces,
    /// The node context names of the snapshot, indexed on first use and
    /// shared with the node contexts' rows (one index per snapshot).
    pub context_names: Arc<crate::core::node::ContextNames>,
    pub scope: Scope,
}

/// Whose rows a [`Derived`] holds.
#[derive(Debug)]
pub enum Scope {
    /// The default context's: the whole fabric, published once per
    /// snapshot (boxed: far bigger than a node's).
    Fabric(Box<FabricRows>),
    /// A node context's, derived on request ([`modules::node_context::view`]):
    /// the node (or host) they are about. Such a context serves neither
    /// IB-PM-MIB nor IB-SM-MIB, so it has no rows of theirs.
    Node(crate::core::node::NodeContext),
}

/// The rows only the default context has: one typed field per module that
/// derives rows there (a module without its field does not compile), and
/// the node contexts' rows it keeps.
#[derive(Debug, Default)]
pub struct FabricRows {
    /// IB-PM-MIB's node rows.
    pub pm: modules::ib_pm_mib::PmRows,
    /// IB-SM-MIB's rows.
    pub sm: modules::ib_sm_mib::SmRows,
    /// The rows of the last node contexts asked (a cache, behind a lock:
    /// [`modules::node_context::Recent`]).
    pub recent: modules::node_context::Recent,
}

impl Derived {
    /// The node a node context's rows are about (None: the default context).
    pub fn node(&self) -> Option<&crate::core::node::NodeContext> {
        match &self.scope {
            Scope::Node(n) => Some(n),
            Scope::Fabric(_) => None,
        }
    }

    /// The default context's own rows (None: a node context).
    pub fn fabric(&self) -> Option<&FabricRows> {
        match &self.scope {
            Scope::Fabric(f) => Some(f),
            Scope::Node(_) => None,
        }
    }
}

/// Every module's derivation with the history it keeps, owned by one
/// publisher.
#[derive(Debug)]
pub struct Deriver {
    if_mib: modules::if_mib::IfHistory,
    sm: modules::ib_sm_mib::SmHistory,
    /// The node context names whose clash was logged (once, not every
    /// snapshot).
    names_reported: crate::core::node::Reported,
}

impl Deriver {
    /// The derivation with the daemon's settings, each module given its own.
    pub fn new(opts: &Options) -> Self {
        Deriver {
            if_mib: modules::if_mib::IfHistory::with_if_index_offset(opts.if_index_offset),
            sm: modules::ib_sm_mib::SmHistory::new(opts),
            names_reported: crate::core::node::Reported::default(),
        }
    }
}

impl crate::core::publish::Derive for Deriver {
    type Rows = Derived;

    fn derive(&mut self, s: &Arc<Snapshot>) -> Derived {
        Derived {
            if_mib: self.if_mib.derive(s),
            context_names: Arc::new(crate::core::node::ContextNames::new(Arc::clone(
                &self.names_reported,
            ))),
            scope: Scope::Fabric(Box::new(FabricRows {
                pm: modules::ib_pm_mib::PmRows(modules::ib_pm_mib::node_rows(s)),
                sm: self.sm.rows(s),
                recent: modules::node_context::Recent::default(),
            })),
        }
    }
}

/// A snapshot with what the modules derived from it, and the publisher's
/// owner's extra `X` (see [`publish`]).
pub type Published<X = ()> = crate::core::publish::Published<Derived, X>;
/// Turns each snapshot of one source into a [`Published`].
pub type Publisher<X = ()> = crate::core::publish::Publisher<Deriver, X>;

impl Publisher {
    /// A publisher of every module's rows with default settings.
    pub fn new() -> Self {
        Publisher::with_options(&Options::default())
    }

    /// A publisher whose modules derive with `opts`.
    pub fn with_options(opts: &Options) -> Self {
        crate::core::publish::Publisher::of(Deriver::new(opts))
    }
}

impl Default for Publisher {
    fn default() -> Self {
        Self::new()
    }
}

impl<X: Default> Published<X> {
    /// `snapshot` derived on its own, with no history (as an agent's first
    /// snapshot): the placeholder before the first sweep, tests. Successive
    /// snapshots of a source go through one [`Publisher`].
    pub fn new(snapshot: Arc<Snapshot>) -> Self {
        let p = Publisher::new().publish(snapshot);
        crate::core::publish::Published {
            snapshot: p.snapshot,
            derived: p.derived,
            extra: X::default(),
        }
    }
}

// ------------------------------------------------------------ agent state

/// Declares [`ModuleStates`]: one typed field per module that keeps values
/// set over SNMP, and its reading and writing as one state file.
macro_rules! module_states {
    ($($field:ident: $ty:ty,)*) => {
        /// Every module's values set over SNMP, one typed field each
        /// (persisted; serde per field, keyed by module name in the state
        /// file). Cheap to clone (one `Arc` per module), so a Set copies
        /// it, changes its module's value and publishes the copy.
        #[derive(Clone, Debug, Default)]
        pub struct ModuleStates {
            $(pub $field: Arc<$ty>,)*
            /// Modules whose stored part could not be read: their part of
            /// the file is kept as it was, never rewritten from memory.
            unreadable: Arc<BTreeSet<String>>,
        }

        $(impl StateOf for $ty {
            fn of(s: &ModuleStates) -> &Arc<Self> {
                &s.$field
            }
            fn of_mut(s: &mut ModuleStates) -> &mut Arc<Self> {
                &mut s.$field
            }
        })*

        impl PartialEq for ModuleStates {
            fn eq(&self, other: &Self) -> bool {
                true $(&& self.$field == other.$field)*
            }
        }

        impl ModuleStates {
            /// The names the state file knows.
            const MODULES: &'static [&'static str] = &[$(<$ty as PersistedState>::MODULE,)*];

            /// What the state file holds for these states (modules with
            /// nothing set are left out).
            pub fn persisted(&self) -> Result<Persisted, String> {
                let mut p = Persisted::new();
                self.persist_into_unless(&BTreeSet::new(), &mut p)?;
                Ok(p)
            }

            fn persist_into_unless(&self, keep: &BTreeSet<String>, kv: &mut Persisted) -> Result<(), String> {
                $(crate::core::state::store(&*self.$field, keep, kv)?;)*
                Ok(())
            }

            /// The states a state file holds. A module's value that does not
            /// parse is left at its default, named in the returned problems,
            /// and marked unreadable (its part of the file is kept as it
            /// was, [`ModuleStates::changed_unreadable`]); a module this
            /// agent does not know is named too.
            pub fn restore(p: &Persisted) -> (ModuleStates, Vec<Unreadable>) {
                let mut problems = Vec::new();
                let mut states = ModuleStates {
                    $($field: crate::core::state::load(p, &mut problems),)*
                    unreadable: Arc::default(),
                };
                for name in p.keys().filter(|k| !Self::MODULES.contains(&k.as_str())) {
                    problems.push(Unreadable {
                        module: name.clone(),
                        error: "no such module".to_string(),
                    });
                }
                states.unreadable = Arc::new(problems.iter().map(|u| u.module.clone()).collect());
                (states, problems)
            }

            /// The first module whose stored part could not be read and
            /// whose state differs from `before`'s: a change that could not
            /// be persisted (its part is kept as it was), so a Set of it
            /// must fail.
            pub fn changed_unreadable(&self, before: &ModuleStates) -> Option<&'static str> {
                let unreadable = |m: &str| self.unreadable.contains(m);
                $(if unreadable(<$ty as PersistedState>::MODULE) && self.$field != before.$field {
                    return Some(<$ty as PersistedState>::MODULE);
                })*
                None
            }

            /// These states with what the step `before` -> `after` changed
            /// taken back, module by module; Err(the module) when a module
            /// that step changed has changed since (another manager's Set):
            /// nothing is taken back then.
            pub fn undo(&self, before: &ModuleStates, after: &ModuleStates) -> Result<ModuleStates, &'static str> {
                let mut out = self.clone();
                $(if before.$field != after.$field {
                    if self.$field != after.$field {
                        return Err(<$ty as PersistedState>::MODULE);
                    }
                    out.$field = Arc::clone(&before.$field);
                })*
                Ok(out)
            }

            /// The states of a version 1 state file (flat keys).
            pub fn from_v1(kv: &BTreeMap<String, String>) -> ModuleStates {
                ModuleStates {
                    $($field: Arc::new(<$ty as PersistedState>::from_v1(kv)),)*
                    unreadable: Arc::default(),
                }
            }
        }
    };
}

module_states! {
    system: modules::snmpv2::SystemGroup,
    if_mib: modules::if_mib::IfMibState,
    pm: modules::ib_pm_mib::PmState,
    target: modules::snmp_target::TargetState,
    notify: modules::snmp_notification::NotifyState,
    usm: modules::snmp_usm::UsmState,
    vacm: modules::snmp_vacm::VacmState,
}

/// A module's field of [`ModuleStates`], for code generic over the module
/// (the admin tables' adapter).
pub trait StateOf: PersistedState {
    fn of(s: &ModuleStates) -> &Arc<Self>;
    fn of_mut(s: &mut ModuleStates) -> &mut Arc<Self>;
}

impl ModuleStates {
    /// Module `T`'s state (its default when nothing was set).
    pub fn get<T: StateOf>(&self) -> &T {
        T::of(self)
    }

    /// Changes module `T`'s state.
    pub fn update<T: StateOf>(&mut self, f: impl FnOnce(&mut T)) {
        f(Arc::make_mut(T::of_mut(self)));
    }

    /// Writes these states over what a state file held: each module's value,
    /// a module set back to its default taken out; a stored value this agent
    /// could not read left as it was.
    pub fn persist_into(&self, kv: &mut Persisted) -> Result<(), String> {
        self.persist_into_unless(&self.unreadable, kv)
    }
}

/// The agent's own state: what the system group shows, what Sets change,
/// and the runtime tables of requests and monitors.
///
/// Immutable once published; a Set produces a new `SystemState` (see
/// [`Change::apply`]). The first fields are what was
/// configured; values set over SNMP live in `modules`, each module's in its
/// own typed field, and only those are stored on disk
/// ([`SystemState::restore`] at start).
#[derive(Clone, Debug)]
pub struct SystemState {
    /// sysDescr.
    pub descr: String,
    /// sysObjectID.
    pub object_id: Oid,
    pub contact: String,
    pub name: String,
    pub location: String,
    /// snmpEnableAuthenTraps: true = enabled(1).
    pub enable_authen_traps: bool,
    /// When the agent started: sysUpTime counts from here.
    pub started: Instant,
    /// sysORTable rows by sysORIndex; set with [`SystemState::set_or_table`].
    pub or_rows: RowSet<SysOrEntry>,
    /// sysORLastChange (centiseconds of sysUpTime).
    pub or_last_change: u32,
    /// Each module's values set over SNMP (typed, persisted). Defaults
    /// above stay what was configured.
    pub modules: ModuleStates,
    /// Whether secrets (SM_Key, M_Key) may be read at all (config switch
    /// `secrets`, default off: they read as zeros).
    pub secrets: bool,
    /// IB-SM-MIB's request sessions (runtime, never persisted): read in
    /// place by requests, changed by Sets and by answers coming in.
    pub requests: Arc<modules::ib_sm_req::Sessions>,
    /// DISMAN-EVENT-MIB's configured triggers and their counters (the
    /// daemon's monitor task samples them).
    pub monitors: Arc<modules::disman_event::Monitors>,
}

impl SystemState {
    /// This state with exactly what the Set `before` -> `after` changed
    /// taken back (AgentX's UndoSet): the modules, request sessions and
    /// monitors that Set changed go back to `before`'s, and nothing else:
    /// what other managers, answers and reloads changed since stays.
    /// Err(why) when something that Set changed has changed since: then
    /// it cannot be taken back alone, and nothing is.
    pub fn undo(&self, before: &SystemState, after: &SystemState) -> Result<SystemState, String> {
        let mut out = self.clone();
        out.modules = self
            .modules
            .undo(&before.modules, &after.modules)
            .map_err(|m| format!("{m} was changed again since"))?;
        if !Arc::ptr_eq(&before.requests, &after.requests) {
            if !Arc::ptr_eq(&self.requests, &after.requests) {
                return Err("IB-SM-MIB's request sessions changed since".into());
            }
            out.requests = Arc::clone(&before.requests);
        }
        if !Arc::ptr_eq(&before.monitors, &after.monitors) {
            if !Arc::ptr_eq(&self.monitors, &after.monitors) {
                return Err("DISMAN-EVENT-MIB's triggers changed since".into());
            }
            out.monitors = Arc::clone(&before.monitors);
        }
        Ok(out)
    }

    /// A fresh state with the given defaults and no sysORTable rows.
    pub fn new(descr: String, object_id: Oid) -> Self {
        SystemState {
            descr,
            object_id,
            contact: String::new(),
            name: String::new(),
            location: String::new(),
            enable_authen_traps: false,
            started: Instant::now(),
            or_rows: RowSet::new(),
            or_last_change: 0,
            modules: ModuleStates::default(),
            secrets: false,
            requests: Arc::default(),
            monitors: Arc::default(),
        }
    }

    /// Replaces sysORTable: `entries` get sysORIndex 1, 2, ... in order.
    pub fn set_or_table(&mut self, entries: Vec<SysOrEntry>) {
        self.or_rows = RowSet::from_pairs(
            entries
                .into_iter()
                .enumerate()
                .map(|(i, e)| (vec![u32::try_from(i + 1).unwrap_or(u32::MAX)], e)),
        );
    }

    /// sysUpTime now, in centiseconds (wraps like TimeTicks).
    pub fn up_time(&self) -> u32 {
        let cs = self.started.elapsed().as_millis() / 10;
        (cs % (u32::MAX as u128 + 1)) as u32
    }

    /// Puts back what the state file holds; returns what could not be read
    /// (each such module keeps its defaults).
    pub fn restore(&mut self, p: &Persisted) -> Vec<Unreadable> {
        let (modules, problems) = ModuleStates::restore(p);
        self.modules = modules;
        problems
    }
}

// ------------------------------------------------------------ the view

/// What one request is answered from: the published snapshot and rows,
/// the agent's state, the engine's counters.
pub type View = crate::core::view::View<SystemState, Derived>;

impl View {
    /// The per-request view from a published snapshot (no derivation).
    pub fn from_published<X>(
        p: &Published<X>,
        system: Arc<SystemState>,
        stats: Arc<SnmpStats>,
    ) -> Self {
        crate::core::view::View {
            snapshot: Arc::clone(&p.snapshot),
            derived: Arc::clone(&p.derived),
            secrets: system.secrets,
            user: None,
            system,
            stats,
        }
    }

    /// A view deriving the per-snapshot parts now, with no history (tests,
    /// one-off uses; see [`Published::new`]).
    pub fn new(snapshot: Arc<Snapshot>, system: Arc<SystemState>, stats: Arc<SnmpStats>) -> Self {
        View::from_published(&Published::<()>::new(snapshot), system, stats)
    }
}

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
