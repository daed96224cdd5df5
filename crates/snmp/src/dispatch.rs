//! PDU processing over registered MIB objects (RFC 3416 section 4.2), with
//! the SNMPv1 rules of RFC 3584 section 4.4.
//!
//! The dispatcher is pure: it turns a request PDU and a view into a response
//! PDU (or, for a Set that passed phase 1, the changes to apply). Message
//! processing, security, access control and counters live in
//! [`crate::engine`], transports in [`crate::agent`] (UDP) and
//! [`crate::agentx`].

use std::sync::Arc;

mod access;
mod reply;
mod set;
mod walk;

use access::Guarded;
pub use access::{AccessCheck, FullAccess};
pub use reply::error_response;
use reply::finish;

use crate::message::Version;
pub use crate::mib::Clearance;
use crate::mib::MibObject;
use crate::oid::Oid;
use crate::pdu::{ErrorStatus, Pdu, PduBody};
use crate::response::Collect;
use crate::value::{Value, VarBind};

/// Default cap on GetBulk max-repetitions.
pub const DEFAULT_MAX_REPETITIONS: u32 = 1000;

/// A registration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    #[error("MIB object {new} overlaps the registered {existing}")]
    // Boxed: an Oid keeps its sub-identifiers in place (136 octets).
    Overlap { new: Box<Oid>, existing: Box<Oid> },
}

/// What the agent should do with a request.
#[derive(Debug)]
pub enum Outcome<K> {
    /// Send this Response PDU.
    Response(Pdu),
    /// A SetRequest passed phase 1: apply `changes` (phase 2), then send
    /// `response`, or on failure the same PDU with commitFailed/undoFailed.
    Set { changes: Vec<K>, response: PduBody },
    /// Even a tooBig response with an empty varbind list does not fit:
    /// drop (count snmpSilentDrops).
    SilentDrop,
    /// Not a request an agent answers (Response, Trap, Report, Inform).
    Ignore,
}

/// Get/GetNext/GetBulk/Set over a set of non-overlapping MIB objects.
pub struct Dispatcher<V, K> {
    roots: Vec<Oid>,
    objects: Vec<Arc<dyn MibObject<V, K>>>,
    max_repetitions: u32,
    max_bulk_varbinds: usize,
    /// Subtrees (e.g. SM_Key and M_Key columns) only a [`Clearance::Secret`]
    /// request may read or write; the rule lives here so that every
    /// transport passes it.
    secrets: Vec<Oid>,
    /// Subtrees only a cleared request may read or Set
    /// ([`Dispatcher::set_hidden_subtrees`]).
    hidden: Vec<Oid>,
    /// Subtrees any request may read (as its view allows), only a cleared
    /// one may Set ([`Dispatcher::set_admin_subtrees`]).
    admin: Vec<Oid>,
}

/// Default cap on the varbinds of one GetBulk response (net-snmp's
/// maxGetbulkResponses): bounds the response/request amplification.
pub const DEFAULT_MAX_BULK_VARBINDS: usize = 100;

impl<V, K> Default for Dispatcher<V, K> {
    fn default() -> Self {
        Self::new()
    }
}

pub(super) fn is_owner(root: &[u32], oid: &[u32]) -> bool {
    oid.starts_with(root)
}

impl<V, K> Dispatcher<V, K> {
    pub fn new() -> Self {
        Dispatcher {
            roots: Vec::new(),
            objects: Vec::new(),
            max_repetitions: DEFAULT_MAX_REPETITIONS,
            max_bulk_varbinds: DEFAULT_MAX_BULK_VARBINDS,
            secrets: Vec::new(),
            hidden: Vec::new(),
            admin: Vec::new(),
        }
    }

    /// Subtrees readable and writable only with [`Clearance::Secret`]:
    /// absent from every other request (walks pass them by, Sets get
    /// noAccess or notWritable).
    pub fn set_secret_subtrees(&mut self, secrets: Vec<Oid>) {
        self.secrets = secrets;
    }

    /// Subtrees readable and writable only with [`Clearance::Secret`]:
    /// values no principal below authPriv may learn (community strings).
    /// Unlike the secrets, a Set below authPriv answers notWritable, as for
    /// the administrative subtrees.
    pub fn set_hidden_subtrees(&mut self, hidden: Vec<Oid>) {
        self.hidden = hidden;
    }

    /// Subtrees writable only with [`Clearance::Secret`], whatever the
    /// view (the tables that grant access: whoever writes them can grant
    /// themselves the secrets). A Set below answers notWritable (v1:
    /// noSuchName), before the view is asked, so the answer says nothing of
    /// what exists.
    pub fn set_admin_subtrees(&mut self, admin: Vec<Oid>) {
        self.admin = admin;
    }

    fn guard<'a>(&'a self, inner: &'a dyn AccessCheck, clearance: Clearance) -> Guarded<'a> {
        Guarded {
            inner,
            secrets: &self.secrets,
            hidden: &self.hidden,
            admin: &self.admin,
            clearance,
        }
    }

    /// Caps GetBulk max-repetitions (on top of the response size bound).
    pub fn set_max_repetitions(&mut self, cap: u32) {
        self.max_repetitions = cap;
    }

    /// Caps the total varbinds of a GetBulk response. The non-repeaters
    /// and the first repetition are always answered (they are bounded by
    /// the request itself); further repetitions stop at the cap.
    pub fn set_max_bulk_varbinds(&mut self, cap: usize) {
        self.max_bulk_varbinds = cap.max(1);
    }

    pub fn max_repetitions(&self) -> u32 {
        self.max_repetitions
    }

    /// Registers an object; its subtree must not overlap any other.
    pub fn register(&mut self, obj: Arc<dyn MibObject<V, K>>) -> Result<(), RegisterError> {
        let root = obj.root().clone();
        let pos = self.roots.partition_point(|r| r < &root);
        for r in [pos.checked_sub(1), Some(pos)].into_iter().flatten() {
            if let Some(existing) = self.roots.get(r) {
                if root.starts_with(existing.as_slice()) || existing.starts_with(root.as_slice()) {
                    return Err(RegisterError::Overlap {
                        new: Box::new(root),
                        existing: Box::new(existing.clone()),
                    });
                }
            }
        }
        self.roots.insert(pos, root);
        self.objects.insert(pos, obj);
        Ok(())
    }

    /// Registers several objects (e.g. [`crate::table::Scalars::into_objects`]).
    pub fn register_all<I>(&mut self, objs: I) -> Result<(), RegisterError>
    where
        I: IntoIterator<Item = Arc<dyn MibObject<V, K>>>,
    {
        objs.into_iter().try_for_each(|o| self.register(o))
    }

    /// The registered roots in order.
    pub fn roots(&self) -> &[Oid] {
        &self.roots
    }

    fn owner(&self, oid: &[u32]) -> Option<&Arc<dyn MibObject<V, K>>> {
        self.objects.get(self.owner_index(oid)?)
    }

    fn owner_index(&self, oid: &[u32]) -> Option<usize> {
        let i = self.roots.partition_point(|r| r.as_slice() <= oid);
        let i = i.checked_sub(1)?;
        match self.roots.get(i) {
            Some(r) if is_owner(r.as_slice(), oid) => Some(i),
            _ => None,
        }
    }

    /// Exact read (v2 semantics: exceptions as values), secrets absent.
    pub fn get(&self, view: &V, oid: &[u32]) -> Value {
        if self.guard(&FullAccess, Clearance::Public).readable(oid) {
            self.get_any(view, oid)
        } else {
            Value::NoSuchObject
        }
    }

    /// The first instance after `oid` (v2 semantics), secrets passed by.
    pub fn next(&self, view: &V, oid: &[u32]) -> Option<VarBind> {
        let mut out = Collect::new(usize::MAX, 1);
        let acc = self.guard(&FullAccess, Clearance::Public);
        self.next_run(view, Version::V2c, oid, 1, &acc, &mut out);
        out.varbinds.pop()
    }

    fn get_any(&self, view: &V, oid: &[u32]) -> Value {
        match self.owner(oid) {
            Some(o) => o.get(view, oid),
            None => Value::NoSuchObject,
        }
    }

    /// Processes a request PDU. `budget` is the most octets the response's
    /// VarBindList content may take (the maximum message size minus
    /// [`crate::message::response_overhead`]).
    pub fn process(&self, view: &V, version: Version, pdu: &Pdu, budget: usize) -> Outcome<K> {
        self.process_with(view, version, pdu, budget, &FullAccess, Clearance::Public)
    }

    /// [`Dispatcher::process`] limited to what `acc` allows: reads outside
    /// its read view are absent (walks skip them), Sets outside its write
    /// view get noAccess (RFC 3415 3.2, RFC 3416 4.2.5). The secret
    /// subtrees count as outside both views unless `clearance` is Secret.
    pub fn process_with(
        &self,
        view: &V,
        version: Version,
        pdu: &Pdu,
        budget: usize,
        acc: &dyn AccessCheck,
        clearance: Clearance,
    ) -> Outcome<K> {
        let guarded = self.guard(acc, clearance);
        let acc: &dyn AccessCheck = &guarded;
        match pdu {
            Pdu::GetRequest(b) => self.get_request(view, version, b, budget, acc),
            Pdu::GetNextRequest(b) => self.get_next_request(view, version, b, budget, acc),
            Pdu::GetBulkRequest(b) => self.get_bulk_request(view, b, budget, acc),
            Pdu::SetRequest(b) => self.set_request(view, version, b, budget, &guarded),
            _ => Outcome::Ignore,
        }
    }

    fn get_request(
        &self,
        view: &V,
        version: Version,
        req: &PduBody,
        budget: usize,
        acc: &dyn AccessCheck,
    ) -> Outcome<K> {
        let mut out = Vec::with_capacity(req.varbinds.len());
        for (i, vb) in req.varbinds.iter().enumerate() {
            let value = if acc.readable(vb.oid.as_slice()) {
                self.get_any(view, vb.oid.as_slice())
            } else {
                Value::NoSuchObject
            };
            if version == Version::V1
                && (value.is_exception() || matches!(value, Value::Counter64(_)))
            {
                return error_response(version, req, ErrorStatus::NoSuchName, i + 1, budget);
            }
            out.push(VarBind::new(vb.oid.clone(), value));
        }
        finish(version, req, out, budget)
    }
}

#[cfg(test)]
mod tests;
