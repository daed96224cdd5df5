//! What a validated Set varbind becomes.
//!
//! Phase 1 of a Set (every module's `check_set`) turns each varbind into a
//! [`Change`]; only when all varbinds pass does the daemon's one control
//! path apply the list (phase 2). Changes to the agent's own state are
//! applied to a copy of [`SystemState`] and persisted before the response is
//! sent; changes that must reach the fabric become source control
//! operations, sent to the source thread and awaited.
//!
//! To add a writable object: add a variant here and its arm in
//! [`Change::apply`] (agent state) or [`Change::effect`] (fabric).

use crate::view::SystemState;

/// A validated change to one object instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// sysContact.0 (DisplayString, already checked).
    SysContact(String),
    /// sysName.0.
    SysName(String),
    /// sysLocation.0.
    SysLocation(String),
    /// snmpEnableAuthenTraps.0: true = enabled(1), false = disabled(2).
    SnmpEnableAuthenTraps(bool),
    /// A module-owned writable object stored by persistence key in
    /// `SystemState::extra` (e.g. key `ifAlias.3`): no new variant needed
    /// for simple persisted strings.
    Stored { key: String, value: String },
    /// IB-PM-MIB: clear the counters `select` (PortCounters:CounterSelect
    /// bits) of port `port` (255 = all) of a node's PMA.
    PmClearCounter {
        node: ib::types::Guid,
        port: u8,
        select: u16,
    },
    /// IB-PM-MIB: one written component of a node's PortSamplesControl;
    /// `base` is the node's control as the request saw it. All of a request's
    /// components for one node become one PMA Set.
    PmSampleControl {
        node: ib::types::Guid,
        base: Box<ib::mad::pma::PortSamplesControl>,
        field: crate::ib_pm_mib::SampleField,
    },
    /// IB-SM-MIB request tables: a checked Set of request rows (session
    /// runtime state, not persisted; see [`crate::ib_sm_req`]).
    SmRequest(crate::ib_sm_req::RequestChange),
}

/// Where a change takes effect.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// The agent's own state (applied by [`Change::apply`], then persisted).
    Agent,
    /// A source control operation (PMA Set, ...), run on the source thread
    /// between sweeps; the Set fails with commitFailed when it fails.
    Fabric(ib::source::ControlOp),
    /// A fabric operation built from several changes of one request
    /// together (one PMA Set per node): see [`grouped_fabric_ops`].
    Grouped,
}

/// The fabric operations of a request's [`Effect::Grouped`] changes, each
/// with the index of the first change it came from.
pub fn grouped_fabric_ops(changes: &[Change]) -> Vec<(usize, ib::source::ControlOp)> {
    let mut ops: Vec<_> = crate::REGISTRY
        .iter()
        .filter_map(|d| d.fabric_ops)
        .flat_map(|f| f(changes))
        .collect();
    ops.sort_by_key(|(i, _)| *i);
    ops
}

/// Checks a source's answer to a fabric operation: Err(reason) when the
/// operation "succeeded" without taking effect (commitFailed).
pub fn check_reply(
    op: &ib::source::ControlOp,
    reply: &ib::source::ControlReply,
) -> Result<(), String> {
    crate::REGISTRY
        .iter()
        .filter_map(|d| d.check_reply)
        .try_for_each(|f| f(op, reply))
}

impl Change {
    /// Where this change takes effect.
    pub fn effect(&self) -> Effect {
        match self {
            Change::SysContact(_)
            | Change::SysName(_)
            | Change::SysLocation(_)
            | Change::SnmpEnableAuthenTraps(_)
            | Change::Stored { .. }
            | Change::SmRequest(_) => Effect::Agent,
            Change::PmClearCounter { .. } | Change::PmSampleControl { .. } => Effect::Grouped,
        }
    }

    /// The persistence key and value of an [`Effect::Agent`] change (what
    /// the daemon writes to its state file before acknowledging the Set).
    pub fn persisted(&self) -> Option<(String, String)> {
        use crate::view::keys;
        let kv = |k: &str, v: &str| Some((k.to_string(), v.to_string()));
        match self {
            Change::SysContact(s) => kv(keys::SYS_CONTACT, s),
            Change::SysName(s) => kv(keys::SYS_NAME, s),
            Change::SysLocation(s) => kv(keys::SYS_LOCATION, s),
            Change::SnmpEnableAuthenTraps(b) => {
                kv(keys::SNMP_ENABLE_AUTHEN_TRAPS, if *b { "1" } else { "2" })
            }
            Change::Stored { key, value } => kv(key, value),
            Change::PmClearCounter { .. }
            | Change::PmSampleControl { .. }
            | Change::SmRequest(_) => None,
        }
    }

    /// Applies an [`Effect::Agent`] change to `state`; other changes leave
    /// it untouched. Cannot fail: every check happened in phase 1.
    pub fn apply(&self, state: &mut SystemState) {
        match self {
            Change::SysContact(s) => state.contact = s.clone(),
            Change::SysName(s) => state.name = s.clone(),
            Change::SysLocation(s) => state.location = s.clone(),
            Change::SnmpEnableAuthenTraps(b) => state.enable_authen_traps = *b,
            Change::Stored { key, value } => {
                state.extra.insert(key.clone(), value.clone());
            }
            Change::SmRequest(r) => r.apply(),
            Change::PmClearCounter { .. } | Change::PmSampleControl { .. } => {}
        }
    }
}
