//! The per-request view every MIB module reads.
//!
//! A [`View`] is a few `Arc`s: the fabric snapshot, the agent's own state
//! (writable system objects, sysORTable, start time), the SNMP engine's
//! counters, and what the modules derived from the snapshot when it was
//! published (see [`crate::publish`]). The daemon builds one per request, so
//! a request is answered from one consistent state and nothing on the
//! request path waits for a sweep or a Set.

use std::sync::Arc;
use std::time::Instant;

use snmp::agent::SnmpStats;
use snmp::oid::Oid;
use snmp::table::RowSet;

pub use crate::publish::Published;
use crate::state::{ModuleStates, Persisted};
pub use ib::model::Snapshot;

/// One row of sysORTable (RFC 3418): a module this agent implements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysOrEntry {
    /// sysORID: the module's MODULE-IDENTITY (or a capabilities statement).
    pub id: Oid,
    /// sysORDescr.
    pub descr: String,
    /// sysORUpTime: sysUpTime (centiseconds) when the entry appeared.
    pub up_time: u32,
}

impl SysOrEntry {
    /// A module's row, there since the agent started (sysORUpTime 0).
    pub fn new(id: &[u32], descr: &str) -> Self {
        Self {
            id: Oid::from_slice(id),
            descr: descr.to_string(),
            up_time: 0,
        }
    }
}

/// The agent's own state: what the system group shows and what Sets change.
///
/// Immutable once published; a Set produces a new `SystemState` (see
/// [`crate::change::Change::apply`]). The fields are what was configured;
/// values set over SNMP live in `modules`, each module's in its own type, and
/// only those are stored on disk ([`SystemState::restore`] at start).
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
    /// Each module's values set over SNMP (typed, persisted; see
    /// [`crate::state`]). Defaults above stay what was configured.
    pub modules: ModuleStates,
    /// Whether secrets (SM_Key, M_Key) may be read at all (config switch
    /// `secrets`, default off: they read as zeros).
    pub secrets: bool,
    /// IB-SM-MIB's request sessions (runtime, never persisted): read in
    /// place by requests, changed by Sets and by answers coming in.
    pub requests: Arc<crate::ib_sm_req::Sessions>,
    /// DISMAN-EVENT-MIB's configured triggers and their counters (the
    /// daemon's monitor task samples them).
    pub monitors: Arc<crate::disman_event::Monitors>,
}

impl SystemState {
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
    pub fn restore(&mut self, p: &Persisted) -> Vec<crate::state::Unreadable> {
        let (modules, problems) = ModuleStates::restore(p);
        self.modules = modules;
        problems
    }
}

/// What one request is answered from.
#[derive(Clone)]
pub struct View {
    pub snapshot: Arc<Snapshot>,
    pub system: Arc<SystemState>,
    pub stats: Arc<SnmpStats>,
    /// What the modules derived from `snapshot` when it was published (see
    /// [`crate::publish`]); a module reads its own with [`View::get`].
    pub derived: Arc<[crate::publish::Derived]>,
    /// Whether this request may read secrets (SM_Key, M_Key columns); they
    /// read as zeros otherwise. From the `secrets` config switch
    /// ([`SystemState::secrets`]); a per-request security context (SNMPv3
    /// VACM) narrows it by setting this field on the request's view.
    pub secrets: bool,
    /// The USM user of an SNMPv3 request (None otherwise): who may set the
    /// objects only a user itself may set (usmUserOwnAuthKeyChange).
    pub user: Option<Vec<u8>>,
}

impl View {
    /// The per-request view from a published snapshot (no derivation).
    pub fn from_published(p: &Published, system: Arc<SystemState>, stats: Arc<SnmpStats>) -> Self {
        View {
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
        View::from_published(&Published::new(snapshot), system, stats)
    }

    /// The rows of type `T` a module derived from this view's snapshot.
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        crate::publish::find(&self.derived)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::Change;
    use crate::if_mib::IfSet;
    use crate::snmpv2::{self, SystemSet};

    #[test]
    fn persisted_round_trip() {
        let changes = [
            Change::new(SystemSet::SysContact("c".into())),
            Change::new(SystemSet::SnmpEnableAuthenTraps(true)),
            Change::new(IfSet::Alias {
                if_index: 1,
                alias: "up".into(),
            }),
        ];
        let mut s = SystemState::new("d".into(), Oid::new(vec![1, 3]));
        for c in &changes {
            c.apply(&mut s);
        }
        let p = s.modules.persisted().unwrap();
        let mut t = SystemState::new("d".into(), Oid::new(vec![1, 3]));
        t.name = "default".into();
        assert!(t.restore(&p).is_empty());
        assert_eq!(snmpv2::sys_contact(&t), "c");
        assert_eq!(snmpv2::sys_name(&t), "default");
        assert!(snmpv2::authen_traps_enabled(&t));
        assert_eq!(
            t.modules
                .get::<crate::if_mib::IfMibState>()
                .unwrap()
                .if_alias[&1],
            "up"
        );
    }
}
