//! MIB modules served by ibsnmpd, as typed tables over one immutable view.
//!
//! Every module implements `snmp::mib::MibObject<View, Change>`: reads come
//! from [`view::View`] (the fabric snapshot plus agent state), Sets turn into
//! [`change::Change`] values (of the module's own types) that the daemon's
//! one control path applies; what a module persists is its own serde type
//! ([`state::PersistedState`]).
//! [`modules`] lists what the daemon registers and what sysORTable shows.

#![forbid(unsafe_code)]

use std::sync::Arc;

use snmp::mib::MibObject;

pub mod change;
pub mod core;
pub mod modules;
pub mod oids;
pub mod publish;
pub mod state;
pub mod view;

// The modules' paths as they were before `modules/` (mibs::if_mib, ...).
pub use crate::core::admin;
pub use modules::{
    disman_event, ib_if_mib, ib_pm_mib, ib_sm_mib, ib_sm_req, if_mib, notifications, snmp_mpd,
    snmp_notification, snmp_target, snmp_usm, snmp_vacm, snmpv2,
};

pub use change::Change;
pub use publish::{Published, Publisher};
pub use view::{SysOrEntry, SystemState, View};

/// One registrable MIB object of ibsnmpd.
pub type Object = Arc<dyn MibObject<View, Change>>;

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
    /// Its objects, ready for `Dispatcher::register_all`.
    pub objects: fn() -> Vec<Object>,
    /// Its per-snapshot derivation (rows derived once at publish time, with
    /// the module's own history), if it has one.
    pub derive: Option<DeriveFn>,
    /// Columns of served tables deliberately not served, with the reason
    /// (checked against the MIB files by tests/coverage.rs).
    pub omitted: &'static [(&'static [u32], &'static str)],
    /// The fabric operations this module builds from a request's
    /// [`change::Effect::Grouped`] changes (each with the index of the first
    /// change it came from).
    pub fabric_ops: Option<FabricOpsFn>,
    /// Checks a source's answer to a fabric operation: Err(reason) when it
    /// "succeeded" without taking effect. Ok for operations not its own.
    pub check_reply: Option<CheckReplyFn>,
    /// Its persisted state (values set over SNMP), if it keeps any.
    pub state: Option<state::StateCodec>,
}

impl ModuleDef {
    /// A module of objects only: no derivation, omitted columns, fabric
    /// operations or persisted state (set those with `..` on top of it).
    pub const fn plain(
        name: &'static str,
        or_entry: fn() -> Option<SysOrEntry>,
        objects: fn() -> Vec<Object>,
    ) -> Self {
        ModuleDef {
            name,
            or_entry,
            objects,
            derive: None,
            omitted: &[],
            fabric_ops: None,
            check_reply: None,
            state: None,
        }
    }
}

/// Daemon settings that modules' derivations read; the registry hands the
/// same value to every deriver, each module reads its own fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeriveOptions {
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

/// See [`ModuleDef::derive`].
pub type DeriveFn = fn(&DeriveOptions) -> Box<dyn publish::Derive>;
/// See [`ModuleDef::fabric_ops`].
pub type FabricOpsFn = fn(&[Change]) -> Vec<(usize, ib::source::ControlOp)>;
/// See [`ModuleDef::check_reply`].
pub type CheckReplyFn = fn(&ib::source::ControlOp, &ib::source::ControlReply) -> Result<(), String>;

/// The registry: every module ibsnmpd serves, in sysORTable order. Adding
/// a module is one line here.
pub const REGISTRY: &[&ModuleDef] = &[
    &snmpv2::DEF,
    &snmp_mpd::DEF,
    &snmp_target::DEF,
    &snmp_notification::DEF,
    &snmp_usm::DEF,
    &snmp_vacm::DEF,
    &if_mib::DEF,
    &ib_if_mib::DEF,
    &ib_pm_mib::DEF,
    &ib_sm_mib::DEF,
    &ib_sm_req::DEF,
    &disman_event::DEF,
];

/// Every module ibsnmpd serves, in sysORTable order, built.
pub fn modules() -> Vec<Module> {
    REGISTRY
        .iter()
        .map(|d| Module {
            name: d.name,
            or_entry: (d.or_entry)(),
            objects: (d.objects)(),
        })
        .collect()
}

/// A fresh deriver of every module that derives rows (one publisher's).
pub(crate) fn derivers(opts: &DeriveOptions) -> Vec<Box<dyn publish::Derive>> {
    REGISTRY
        .iter()
        .filter_map(|d| d.derive.map(|f| f(opts)))
        .collect()
}
