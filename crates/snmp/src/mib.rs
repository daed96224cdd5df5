//! The seam every MIB module plugs into.
//!
//! The agent is generic over two types chosen by the application:
//! - `V`, the *view*: one consistent, immutable state a whole request is
//!   answered from (for ibsnmpd: an `Arc` of the current fabric snapshot plus
//!   agent state). The agent obtains one view per request and never blocks.
//! - `K`, the *change*: what a validated Set varbind turns into. Phase 1 of a
//!   Set (RFC 3416 4.2.5) calls [`MibObject::check_set`] on every varbind;
//!   only when all pass does the application's one control path apply the
//!   resulting `Vec<K>` (phase 2), with undo on failure.

use crate::oid::Oid;
use crate::pdu::ErrorStatus;
use crate::value::{Value, VarBind};

/// Where a walk's instances go as they are found: a response being
/// encoded, or a list of varbinds.
pub trait VarBindSink {
    /// Takes one instance; false when it wants no more (the walk stops).
    fn push(&mut self, oid: &[u32], value: &Value) -> bool;

    /// [`VarBindSink::push`], with the caller's word that the first `same`
    /// sub-identifiers of `oid` are those of the OID it pushed last into
    /// this sink (a table's instances in one column share entry and
    /// column), so a sink may skip comparing them. 0 says nothing; only
    /// the caller that made the last push may say more.
    fn push_after(&mut self, same: usize, oid: &[u32], value: &Value) -> bool {
        let _ = same;
        self.push(oid, value)
    }
}

/// Whether a request may reach the secret subtrees
/// (`Dispatcher::set_secret_subtrees`). Only the SNMP engine grants
/// [`Clearance::Secret`], to SNMPv3 authPriv requests; every other way in
/// (AgentX, whose master never says how its manager authenticated, and
/// the plain `Dispatcher::get`/`Dispatcher::next`) is public.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clearance {
    Public,
    Secret,
}

/// Why a Set varbind was refused in phase 1 (RFC 3416 error-status names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetError {
    NoAccess,
    NotWritable,
    WrongType,
    WrongLength,
    WrongEncoding,
    WrongValue,
    NoCreation,
    InconsistentValue,
    ResourceUnavailable,
    InconsistentName,
}

/// One varbind of a Set PDU, as [`MibObject::check_set_batch`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct SetItem<'a> {
    /// Position in the PDU (0-based).
    pub position: usize,
    pub oid: &'a [u32],
    pub value: &'a Value,
    /// The request's clearance: a table may refuse, below authPriv, a Set
    /// that would send a hidden value somewhere (a target row using a
    /// community's parameters).
    pub clearance: Clearance,
}

/// One registered MIB subtree: a scalar, a table, or a group of them.
///
/// Registrations must not overlap. OIDs passed in are full OIDs.
pub trait MibObject<V, K>: Send + Sync {
    /// The subtree this object answers for (for a table, its entry OID; for
    /// a scalar, the object OID without the `.0` instance).
    fn root(&self) -> &Oid;

    /// Exact-match read of `oid` (which starts with `root()`). Returns
    /// `Value::NoSuchObject` or `Value::NoSuchInstance` when absent.
    fn get(&self, view: &V, oid: &[u32]) -> Value;

    /// The first instance in this subtree strictly after `oid` in
    /// lexicographic order. `oid` may lie before the subtree (then the first
    /// instance is returned) or inside it.
    fn next(&self, view: &V, oid: &[u32]) -> Option<VarBind>;

    /// The instances of this subtree after `oid`, in order, handed to
    /// `sink` until it says stop or the subtree ends. This is a walk's
    /// step (GetBulk repeaters, GetNext): a table finds its place once and
    /// steps on from there, writing each instance straight into the sink;
    /// the default asks [`MibObject::next`] anew for each instance.
    fn next_into(&self, view: &V, oid: &[u32], sink: &mut dyn VarBindSink) {
        let mut found = self.next(view, oid);
        while let Some(VarBind { oid, value }) = found {
            if !sink.push(oid.as_slice(), &value) {
                return;
            }
            found = self.next(view, oid.as_slice());
        }
    }

    /// Phase 1 of Set: validate `value` for `oid` against `view` and return
    /// the change to apply. Nothing may be changed here.
    fn check_set(&self, view: &V, oid: &[u32], value: &Value) -> Result<K, SetError> {
        let _ = (view, value);
        if self.get_is_instance(oid) {
            Err(SetError::NotWritable)
        } else {
            Err(SetError::NoCreation)
        }
    }

    /// Phase 1 for every varbind of one PDU this object owns, together:
    /// `sets` holds (position in the PDU, OID, value) in PDU order. A table
    /// whose rows are created and filled by several varbinds at once
    /// (RowStatus, RFC 2579) judges the row as the whole PDU leaves it
    /// here. Returns the changes with the position of the varbind each one
    /// stands for, or the position and error of the first refusal. By
    /// default each varbind is checked alone with [`MibObject::check_set`].
    fn check_set_batch(
        &self,
        view: &V,
        sets: &[SetItem<'_>],
    ) -> Result<Vec<(usize, K)>, (usize, SetError)> {
        sets.iter()
            .map(|s| {
                self.check_set(view, s.oid, s.value)
                    .map(|k| (s.position, k))
                    .map_err(|e| (s.position, e))
            })
            .collect()
    }

    /// Helper for the default `check_set`: does `oid` name an instance the
    /// object could hold? Defaults to "yes", giving notWritable.
    fn get_is_instance(&self, oid: &[u32]) -> bool {
        let _ = oid;
        true
    }

    /// For a table: its declared columns (column number, MAX-ACCESS as
    /// served), so a MIB crate can check them against the MIB file. Empty
    /// for other objects.
    fn declared_columns(&self) -> Vec<(u32, Access)> {
        Vec::new()
    }
}

/// [`MibObject::check_set`] for an object that judges Sets in batches
/// (RowStatus tables): the batch of one.
pub fn check_one<V, K>(
    object: &(impl MibObject<V, K> + ?Sized),
    view: &V,
    oid: &[u32],
    value: &Value,
) -> Result<K, SetError> {
    let item = SetItem {
        position: 0,
        oid,
        value,
        clearance: Clearance::Public,
    };
    let mut c = object.check_set_batch(view, &[item]).map_err(|(_, e)| e)?;
    c.pop().map(|(_, k)| k).ok_or(SetError::NotWritable)
}

/// MAX-ACCESS of an object (RFC 2578 section 7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    NotAccessible,
    AccessibleForNotify,
    ReadOnly,
    ReadWrite,
    ReadCreate,
}

impl Access {
    pub fn readable(self) -> bool {
        matches!(
            self,
            Access::ReadOnly | Access::ReadWrite | Access::ReadCreate
        )
    }
    pub fn writable(self) -> bool {
        matches!(self, Access::ReadWrite | Access::ReadCreate)
    }
}

impl From<SetError> for ErrorStatus {
    fn from(e: SetError) -> Self {
        use SetError as S;
        match e {
            S::NoAccess => ErrorStatus::NoAccess,
            S::NotWritable => ErrorStatus::NotWritable,
            S::WrongType => ErrorStatus::WrongType,
            S::WrongLength => ErrorStatus::WrongLength,
            S::WrongEncoding => ErrorStatus::WrongEncoding,
            S::WrongValue => ErrorStatus::WrongValue,
            S::NoCreation => ErrorStatus::NoCreation,
            S::InconsistentValue => ErrorStatus::InconsistentValue,
            S::ResourceUnavailable => ErrorStatus::ResourceUnavailable,
            S::InconsistentName => ErrorStatus::InconsistentName,
        }
    }
}
