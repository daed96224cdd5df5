//! The per-request view every MIB module reads.
//!
//! A [`View`] is a few `Arc`s: the fabric snapshot, the agent's own state
//! (writable system objects, sysORTable, start time), the SNMP engine's
//! counters, and what the modules derived from the snapshot when it was
//! published (see [`crate::publish`]). The daemon builds one per request, so
//! a request is answered from one consistent state and nothing on the
//! request path waits for a sweep or a Set.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use snmp::agent::SnmpStats;
use snmp::oid::Oid;
use snmp::table::RowSet;

pub use crate::publish::Published;
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
/// [`crate::change::Change::apply`]). Only values set over SNMP are stored
/// on disk ([`crate::change::Change::persisted`]); [`SystemState::restore`]
/// overlays them on the configured defaults at start.
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
    /// Writable objects of other modules, by persistence key (e.g.
    /// `ifAlias.3`); modules keep their typed values here so that one
    /// generic store persists them all.
    pub extra: BTreeMap<String, String>,
    /// Whether secrets (SM_Key, M_Key) may be read at all (config switch
    /// `secrets`, default off: they read as zeros).
    pub secrets: bool,
}

/// Persistence keys of the writable system objects.
pub mod keys {
    pub const SYS_CONTACT: &str = "sysContact";
    pub const SYS_NAME: &str = "sysName";
    pub const SYS_LOCATION: &str = "sysLocation";
    pub const SNMP_ENABLE_AUTHEN_TRAPS: &str = "snmpEnableAuthenTraps";
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
            extra: BTreeMap::new(),
            secrets: false,
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

    /// Overlays stored values (keys and values from
    /// [`crate::change::Change::persisted`]) on the defaults. Unknown keys are kept in `extra` for the module that owns
    /// them; malformed values are ignored with the default kept.
    pub fn restore(&mut self, kv: &BTreeMap<String, String>) {
        for (k, v) in kv {
            match k.as_str() {
                keys::SYS_CONTACT => self.contact = v.clone(),
                keys::SYS_NAME => self.name = v.clone(),
                keys::SYS_LOCATION => self.location = v.clone(),
                keys::SNMP_ENABLE_AUTHEN_TRAPS => match v.as_str() {
                    "1" => self.enable_authen_traps = true,
                    "2" => self.enable_authen_traps = false,
                    _ => tracing::warn!(key = %k, value = %v, "ignoring malformed stored value"),
                },
                _ => {
                    self.extra.insert(k.clone(), v.clone());
                }
            }
        }
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
}

impl View {
    /// The per-request view from a published snapshot (no derivation).
    pub fn from_published(p: &Published, system: Arc<SystemState>, stats: Arc<SnmpStats>) -> Self {
        View {
            snapshot: Arc::clone(&p.snapshot),
            derived: Arc::clone(&p.derived),
            secrets: system.secrets,
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

    #[test]
    fn persisted_round_trip() {
        let changes = [
            Change::SysContact("c".into()),
            Change::SnmpEnableAuthenTraps(true),
            Change::Stored {
                key: "ifAlias.1".into(),
                value: "up".into(),
            },
        ];
        let mut s = SystemState::new("d".into(), Oid::new(vec![1, 3]));
        let mut kv = BTreeMap::new();
        for c in &changes {
            c.apply(&mut s);
            kv.extend(c.persisted());
        }
        let mut t = SystemState::new("d".into(), Oid::new(vec![1, 3]));
        t.name = "default".into();
        t.restore(&kv);
        assert_eq!(t.contact, "c");
        assert_eq!(t.name, "default");
        assert!(t.enable_authen_traps);
        assert_eq!(t.extra.get("ifAlias.1").map(String::as_str), Some("up"));
    }
}
