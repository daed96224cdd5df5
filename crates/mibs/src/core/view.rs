//! The per-request view every MIB module reads.
//!
//! A [`View`] is a few `Arc`s: the fabric snapshot, the agent's own state
//! (writable system objects, sysORTable, start time, what was set over
//! SNMP), the SNMP engine's counters, and what the modules derived from the
//! snapshot when it was published (see [`crate::core::publish`]). The daemon builds one per request, so
//! a request is answered from one consistent state and nothing on the
//! request path waits for a sweep or a Set.

use std::sync::Arc;

use snmp::agent::SnmpStats;
use snmp::oid::Oid;

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

/// What one request is answered from: the agent's state `S`, the rows `D`
/// the modules derived from the snapshot (the crate root's
/// [`crate::View`] names both).
pub struct View<S, D> {
    pub snapshot: Arc<Snapshot>,
    pub system: Arc<S>,
    pub stats: Arc<SnmpStats>,
    /// What the modules derived from `snapshot` when it was published (see
    /// [`crate::core::publish`]): each module reads its own field.
    pub derived: Arc<D>,
    /// Whether this request may read secrets (SM_Key, M_Key columns); they
    /// read as zeros otherwise. From the `secrets` config switch
    /// ([`crate::SystemState::secrets`]); a per-request security context (SNMPv3
    /// VACM) narrows it by setting this field on the request's view.
    pub secrets: bool,
    /// The USM user of an SNMPv3 request (None otherwise): who may set the
    /// objects only a user itself may set (usmUserOwnAuthKeyChange).
    pub user: Option<Vec<u8>>,
}

impl<S, D> Clone for View<S, D> {
    fn clone(&self) -> Self {
        View {
            snapshot: Arc::clone(&self.snapshot),
            system: Arc::clone(&self.system),
            stats: Arc::clone(&self.stats),
            derived: Arc::clone(&self.derived),
            secrets: self.secrets,
            user: self.user.clone(),
        }
    }
}
