//! PDU processing over registered MIB objects (RFC 3416 section 4.2), with
//! the SNMPv1 rules of RFC 3584 section 4.4.
//!
//! The dispatcher is pure: it turns a request PDU and a view into a response
//! PDU (or, for a Set that passed phase 1, the changes to apply). Message
//! processing, security, access control and counters live in
//! [`crate::engine`], transports in [`crate::agent`] (UDP) and
//! [`crate::agentx`].

use std::sync::Arc;

use crate::ber;
use crate::message::Version;
pub use crate::mib::Clearance;
use crate::mib::{MibObject, SetError, SetItem, VarBindSink};
use crate::oid::Oid;
use crate::pdu::{BulkBody, ErrorStatus, Pdu, PduBody};
use crate::response::{Collect, ResponseList};
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

/// What one request may read and write (e.g. a VACM view pair).
pub trait AccessCheck {
    fn readable(&self, oid: &[u32]) -> bool;
    fn writable(&self, oid: &[u32]) -> bool;
    /// For an unreadable `oid`: where a GetNext may resume without
    /// stepping over anything readable (`oid` itself steps one instance).
    fn resume_after(&self, oid: &[u32]) -> Oid {
        Oid::from_slice(oid)
    }
    /// Some(readable) when everything under `prefix` is equally readable,
    /// so a walk checks a column once rather than each instance; None
    /// when it may differ inside (then each instance is asked).
    fn uniform(&self, prefix: &[u32]) -> Option<bool> {
        let _ = prefix;
        None
    }
}

/// No restriction (community and user shorthands without a view).
pub struct FullAccess;

impl AccessCheck for FullAccess {
    fn readable(&self, _: &[u32]) -> bool {
        true
    }
    fn writable(&self, _: &[u32]) -> bool {
        true
    }
    fn uniform(&self, _: &[u32]) -> Option<bool> {
        Some(true)
    }
}

impl AccessCheck for crate::vacm::Views<'_> {
    fn readable(&self, oid: &[u32]) -> bool {
        self.read.is_some_and(|v| v.contains(oid))
    }
    fn uniform(&self, prefix: &[u32]) -> Option<bool> {
        match self.read {
            Some(v) => v.uniform(prefix),
            None => Some(false),
        }
    }
    fn writable(&self, oid: &[u32]) -> bool {
        self.write.is_some_and(|v| v.contains(oid))
    }
    fn resume_after(&self, oid: &[u32]) -> Oid {
        match self.read {
            Some(v) => v.resume_after(oid),
            None => Oid::new(vec![u32::MAX]),
        }
    }
}

/// An access check with the secret subtrees hidden unless cleared.
struct Guarded<'a> {
    inner: &'a dyn AccessCheck,
    secrets: &'a [Oid],
    /// Secret to read; writable only when cleared (notWritable below).
    hidden: &'a [Oid],
    /// Readable as any other object; writable only when cleared.
    admin: &'a [Oid],
    clearance: Clearance,
}

impl Guarded<'_> {
    /// The secret subtree (to read) holding `oid`, unless cleared.
    fn secret(&self, oid: &[u32]) -> Option<&Oid> {
        if self.clearance == Clearance::Secret {
            return None;
        }
        self.secrets
            .iter()
            .chain(self.hidden)
            .find(|s| oid.starts_with(s.as_slice()))
    }

    fn write_secret(&self, oid: &[u32]) -> bool {
        self.clearance != Clearance::Secret
            && self.secrets.iter().any(|s| oid.starts_with(s.as_slice()))
    }

    /// Whether `oid` is writable only at authPriv and this request is not:
    /// the administrative subtrees, and the hidden ones (whoever could
    /// write a hidden value could also learn whether one exists).
    fn write_protected(&self, oid: &[u32]) -> bool {
        self.clearance != Clearance::Secret
            && self
                .admin
                .iter()
                .chain(self.hidden)
                .any(|s| oid.starts_with(s.as_slice()))
    }
}

impl AccessCheck for Guarded<'_> {
    fn readable(&self, oid: &[u32]) -> bool {
        self.secret(oid).is_none() && self.inner.readable(oid)
    }
    fn writable(&self, oid: &[u32]) -> bool {
        !self.write_secret(oid) && !self.write_protected(oid) && self.inner.writable(oid)
    }
    fn resume_after(&self, oid: &[u32]) -> Oid {
        match self.secret(oid) {
            Some(s) => s.join(&[u32::MAX]),
            None => self.inner.resume_after(oid),
        }
    }
    fn uniform(&self, prefix: &[u32]) -> Option<bool> {
        if self.secret(prefix).is_some() {
            return Some(false);
        }
        let secret_inside = self.clearance != Clearance::Secret
            && self
                .secrets
                .iter()
                .chain(self.hidden)
                .any(|s| s.starts_with(prefix));
        if secret_inside {
            return None;
        }
        self.inner.uniform(prefix)
    }
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

fn is_owner(root: &[u32], oid: &[u32]) -> bool {
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

    /// Up to `max` successive instances after `oid` that the request may
    /// read (RFC 3415 3.2: a walk passes by what the view excludes; SNMPv1
    /// never sees Counter64, RFC 3584 4.4), pushed into `out` as the
    /// objects find them. Returns how many `out` took, and whether it
    /// refused one (full): then the walk stopped there.
    fn next_run(
        &self,
        view: &V,
        version: Version,
        oid: &[u32],
        max: usize,
        acc: &dyn AccessCheck,
        out: &mut dyn VarBindSink,
    ) -> (usize, bool) {
        if max == 0 {
            return (0, false);
        }
        let mut run = Run {
            acc,
            v1: version == Version::V1,
            depth: 0,
            column: None,
            left: max,
            out,
            stop: Stop::Walking,
        };
        let mut from = Oid::from_slice(oid);
        'resume: loop {
            // Objects whose whole subtree lies before `from` form a prefix;
            // each object after the one that ends is walked from its start.
            let start = self.roots.partition_point(|r| {
                r.as_slice() < from.as_slice() && !is_owner(r.as_slice(), from.as_slice())
            });
            for o in self.objects.get(start..).unwrap_or(&[]) {
                // The depth of a column of this object: its root and one
                // more sub-identifier.
                run.depth = o.root().len() + 1;
                o.next_into(view, from.as_slice(), &mut run);
                match std::mem::replace(&mut run.stop, Stop::Walking) {
                    Stop::Walking if run.left > 0 => {}
                    Stop::Walking => return (max, false),
                    Stop::Full => return (max - run.left, true),
                    Stop::Denied(at) => {
                        // Resume where the view lets us, always moving forward.
                        let resume = acc.resume_after(at.as_slice());
                        from = if resume > at { resume } else { at };
                        continue 'resume;
                    }
                }
            }
            return (max - run.left, false); // the end of the MIB
        }
    }

    /// Phase 1 of a Set for one varbind (secrets are notWritable).
    pub fn check_set(&self, view: &V, oid: &[u32], value: &Value) -> Result<K, SetError> {
        if !self.guard(&FullAccess, Clearance::Public).writable(oid) {
            return Err(SetError::NotWritable);
        }
        match self.owner(oid) {
            Some(o) => o.check_set(view, oid, value),
            None => Err(SetError::NotWritable),
        }
    }

    /// Phase 1 of a Set for every varbind of a PDU: each object sees all of
    /// its own varbinds together ([`MibObject::check_set_batch`]). The
    /// changes come back in PDU order; on refusal, the varbind's position
    /// (0-based) and the error. Varbinds no object owns, and secrets, are
    /// notWritable.
    pub fn check_set_all(
        &self,
        view: &V,
        varbinds: &[VarBind],
    ) -> Result<Vec<K>, (usize, SetError)> {
        let public = self.guard(&FullAccess, Clearance::Public);
        if let Some(i) = varbinds
            .iter()
            .position(|vb| !public.writable(vb.oid.as_slice()))
        {
            return Err((i, SetError::NotWritable));
        }
        self.check_set_any(view, varbinds, Clearance::Public)
    }

    fn check_set_any(
        &self,
        view: &V,
        varbinds: &[VarBind],
        clearance: Clearance,
    ) -> Result<Vec<K>, (usize, SetError)> {
        // Group by owner, owners in order of their first varbind.
        let mut groups: Vec<(usize, Vec<SetItem<'_>>)> = Vec::new();
        for (i, vb) in varbinds.iter().enumerate() {
            let oid = vb.oid.as_slice();
            let owner = self.owner_index(oid).ok_or((i, SetError::NotWritable))?;
            let item = SetItem {
                position: i,
                oid,
                value: &vb.value,
                clearance,
            };
            match groups.iter_mut().find(|(o, _)| *o == owner) {
                Some((_, items)) => items.push(item),
                None => groups.push((owner, vec![item])),
            }
        }
        let mut changes = Vec::with_capacity(varbinds.len());
        for (owner, items) in &groups {
            let Some(obj) = self.objects.get(*owner) else {
                let pos = items.first().map_or(0, |s| s.position);
                return Err((pos, SetError::NotWritable));
            };
            changes.extend(obj.check_set_batch(view, items)?);
        }
        changes.sort_by_key(|(i, _)| *i);
        Ok(changes.into_iter().map(|(_, k)| k).collect())
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

    fn get_next_request(
        &self,
        view: &V,
        version: Version,
        req: &PduBody,
        budget: usize,
        acc: &dyn AccessCheck,
    ) -> Outcome<K> {
        let mut out = Collect::new(budget, req.varbinds.len());
        match self.get_next_into(view, version, req, acc, &mut out) {
            Answer::Done => response(req.request_id, ErrorStatus::NoError, out.varbinds),
            Answer::TooBig => too_big(version, req, budget),
            Answer::Error(status, index) => error_response(version, req, status, index, budget),
        }
    }

    /// GetNext (RFC 3416 4.2.2) into `out`.
    fn get_next_into(
        &self,
        view: &V,
        version: Version,
        req: &PduBody,
        acc: &dyn AccessCheck,
        out: &mut dyn ResponseList,
    ) -> Answer {
        // A response too big is tooBig, unless a later varbind makes it an
        // SNMPv1 noSuchName: keep walking (a full list takes nothing more).
        let mut too_big = false;
        for (i, vb) in req.varbinds.iter().enumerate() {
            let (got, full) = self.next_run(view, version, vb.oid.as_slice(), 1, acc, out);
            too_big |= full;
            if got == 0 && !full {
                if version == Version::V1 {
                    return Answer::Error(ErrorStatus::NoSuchName, i + 1);
                }
                too_big |= !out.push(vb.oid.as_slice(), &Value::EndOfMibView);
            }
        }
        if too_big {
            Answer::TooBig
        } else {
            Answer::Done
        }
    }

    fn get_bulk_request(
        &self,
        view: &V,
        req: &BulkBody,
        budget: usize,
        acc: &dyn AccessCheck,
    ) -> Outcome<K> {
        let cap = req.varbinds.len() * 16;
        let mut out = Collect::new(budget, cap.min(self.max_bulk_varbinds));
        let status = match self.get_bulk_into(view, req, acc, &mut out) {
            Answer::Done => ErrorStatus::NoError,
            _ => ErrorStatus::TooBig,
        };
        response(req.request_id, status, out.varbinds)
    }

    /// GetBulk (RFC 3416 4.2.3) into `out`: Done or TooBig.
    fn get_bulk_into(
        &self,
        view: &V,
        req: &BulkBody,
        acc: &dyn AccessCheck,
        out: &mut dyn ResponseList,
    ) -> Answer {
        let l = req.varbinds.len();
        let n = usize::try_from(req.non_repeaters.max(0))
            .unwrap_or(0)
            .min(l);
        let m = usize::try_from(req.max_repetitions.max(0))
            .unwrap_or(0)
            .min(self.max_repetitions as usize);
        let (non_rep, rep) = req.varbinds.split_at(n);
        let r = rep.len();
        // RFC 3416 4.2.3: a response that would be too large carries the
        // longest prefix of its varbinds that fits (non-repeaters included),
        // never tooBig. Only when not even the first varbind fits is there
        // nothing to send: then tooBig, as net-snmp does, because an empty
        // noError list would read as the end of a walk.
        let requested = n > 0 || (r > 0 && m > 0);
        let mut full = false;
        for vb in non_rep {
            let from = vb.oid.as_slice();
            let (got, f) = self.next_run(view, Version::V2c, from, 1, acc, out);
            full = f || (got == 0 && !out.push(from, &Value::EndOfMibView));
            if full {
                break;
            }
        }
        // Repetitions the varbind cap leaves room for.
        let limit = self.max_bulk_varbinds.max(n + r);
        let m = match (full, r) {
            (true, _) | (_, 0) => 0,
            _ => m.min(limit.saturating_sub(out.count()) / r),
        };
        if m > 0 && r == 1 {
            // One repeater (a walk): its run is the answer, walked straight
            // into it and cut at the budget.
            let (from, ended) = match rep.first() {
                Some(v) => (v.oid.as_slice(), v.value == Value::EndOfMibView),
                None => (&[][..], true),
            };
            let (got, full) = match ended {
                true => (0, false),
                false => self.next_run(view, Version::V2c, from, m, acc, out),
            };
            // Past its end it repeats endOfMibView at the last instance.
            if !full && got < m {
                if got > 0 {
                    out.end_after_last();
                } else {
                    out.push(from, &Value::EndOfMibView);
                }
            }
        } else if m > 0 {
            // Each repeater's successors are independent of the others':
            // walk each one's run at once (a table finds its place once),
            // then lay them out repetition by repetition.
            let mut runs = Vec::with_capacity(r);
            let mut longest = 0;
            for vb in rep {
                // (Sized for a typical answer: m may be large and the size
                // budget cut the answer far sooner.)
                let mut run = Collect::new(usize::MAX, m.min(64));
                if vb.value != Value::EndOfMibView {
                    self.next_run(view, Version::V2c, vb.oid.as_slice(), m, acc, &mut run);
                }
                longest = longest.max(run.varbinds.len());
                // Past its end a repeater repeats endOfMibView at the last
                // instance it reached.
                let end = run.varbinds.last().map_or(&vb.oid, |v| &v.oid).clone();
                runs.push((run.varbinds.into_iter(), end));
            }
            // The repetition where every repeater is past its end is the
            // last one sent.
            let reps = m.min(longest + 1);
            'reps: for _ in 0..reps {
                for (run, end) in runs.iter_mut() {
                    let taken = match run.next() {
                        Some(vb) => out.push(vb.oid.as_slice(), &vb.value),
                        None => out.push(end.as_slice(), &Value::EndOfMibView),
                    };
                    if !taken {
                        break 'reps;
                    }
                }
            }
        }
        if out.count() == 0 && requested {
            Answer::TooBig
        } else {
            Answer::Done
        }
    }

    /// A walk's request (GetNext, GetBulk) answered straight into `out`
    /// (a [`crate::response::Direct`] list inside the response message):
    /// true when the answer is a noError response carrying what `out`
    /// took. False for every other request and answer (errors, tooBig):
    /// then answer with [`Dispatcher::process_with`], which gives the same
    /// response.
    pub fn walk_into(
        &self,
        view: &V,
        version: Version,
        pdu: &Pdu,
        acc: &dyn AccessCheck,
        clearance: Clearance,
        out: &mut dyn ResponseList,
    ) -> bool {
        let guarded = self.guard(acc, clearance);
        let answer = match pdu {
            Pdu::GetNextRequest(b) => self.get_next_into(view, version, b, &guarded, out),
            Pdu::GetBulkRequest(b) if version == Version::V2c => {
                self.get_bulk_into(view, b, &guarded, out)
            }
            _ => return false,
        };
        matches!(answer, Answer::Done)
    }

    fn set_request(
        &self,
        view: &V,
        version: Version,
        req: &PduBody,
        budget: usize,
        acc: &Guarded<'_>,
    ) -> Outcome<K> {
        // notWritable for the authPriv-only subtrees comes first, whatever
        // the view: the same answer for every instance, existing or not.
        if let Some(i) = (req.varbinds.iter()).position(|vb| acc.write_protected(vb.oid.as_slice()))
        {
            return error_response(version, req, ErrorStatus::NotWritable, i + 1, budget);
        }
        for (i, vb) in req.varbinds.iter().enumerate() {
            if !acc.writable(vb.oid.as_slice()) {
                return error_response(version, req, ErrorStatus::NoAccess, i + 1, budget);
            }
        }
        let changes = match self.check_set_any(view, &req.varbinds, acc.clearance) {
            Ok(c) => c,
            Err((i, e)) => return error_response(version, req, e.into(), i + 1, budget),
        };
        // The response echoes the request; if it cannot fit, tooBig now.
        if list_len(&req.varbinds) > budget {
            return finish(version, req, req.varbinds.clone(), budget);
        }
        Outcome::Set {
            changes,
            response: PduBody {
                request_id: req.request_id,
                error_status: ErrorStatus::NoError,
                error_index: 0,
                varbinds: req.varbinds.clone(),
            },
        }
    }
}

/// How a GetNext or GetBulk answer came out.
enum Answer {
    Done,
    TooBig,
    /// An error-status and its varbind's (1-based) index.
    Error(ErrorStatus, usize),
}

/// Why a [`Run`] stopped the object it walks.
enum Stop {
    /// It did not: the object ran out (or `left` reached 0).
    Walking,
    /// The response refused an instance.
    Full,
    /// An instance the request may not read.
    Denied(Oid),
}

/// A walk between the objects and the response: passes on the instances
/// the request may read, at most `left` of them. An object is walked column
/// by column (`depth`: its root and a column number): each column is asked
/// once whether it is readable throughout (a view rarely splits a column),
/// its instances one by one only where it is not.
struct Run<'a> {
    acc: &'a dyn AccessCheck,
    v1: bool,
    depth: usize,
    column: Option<(Oid, Option<bool>)>,
    left: usize,
    out: &'a mut dyn VarBindSink,
    stop: Stop,
}

impl Run<'_> {
    fn readable(&mut self, oid: &[u32]) -> bool {
        let col = oid.get(..self.depth).unwrap_or(oid);
        let uniform = match &self.column {
            Some((c, u)) if c.as_slice() == col => *u,
            _ => {
                let u = self.acc.uniform(col);
                self.column = Some((Oid::from_slice(col), u));
                u
            }
        };
        uniform.unwrap_or_else(|| self.acc.readable(oid))
    }
}

impl VarBindSink for Run<'_> {
    fn push(&mut self, oid: &[u32], value: &Value) -> bool {
        if self.v1 && matches!(value, Value::Counter64(_)) {
            return true;
        }
        if !self.readable(oid) {
            self.stop = Stop::Denied(Oid::from_slice(oid));
            return false;
        }
        if !self.out.push(oid, value) {
            self.stop = Stop::Full;
            return false;
        }
        self.left -= 1;
        self.left > 0
    }
}

/// A Response PDU.
fn response<K>(request_id: i32, status: ErrorStatus, varbinds: Vec<VarBind>) -> Outcome<K> {
    Outcome::Response(Pdu::Response(PduBody {
        request_id,
        error_status: status,
        error_index: 0,
        varbinds,
    }))
}

fn list_len(vbs: &[VarBind]) -> usize {
    vbs.iter().map(ber::varbind_len).sum()
}

/// An error response echoing the request's varbinds (RFC 3416 4.2.1), with
/// the status mapped for v1. `index` is 1-based.
pub fn error_response<K>(
    version: Version,
    req: &PduBody,
    status: ErrorStatus,
    index: usize,
    budget: usize,
) -> Outcome<K> {
    let status = match version {
        Version::V1 => status.to_v1(),
        Version::V2c => status,
    };
    if list_len(&req.varbinds) > budget {
        return too_big(version, req, budget);
    }
    Outcome::Response(Pdu::Response(PduBody {
        request_id: req.request_id,
        error_status: status,
        error_index: i32::try_from(index).unwrap_or(i32::MAX),
        varbinds: req.varbinds.clone(),
    }))
}

/// tooBig: v2 sends an empty varbind list (RFC 3416 4.2.1); v1 echoes the
/// request (RFC 1157 4.1.2), dropping silently when even that cannot fit.
fn too_big<K>(version: Version, req: &PduBody, budget: usize) -> Outcome<K> {
    let varbinds = match version {
        Version::V2c => Vec::new(),
        Version::V1 if list_len(&req.varbinds) <= budget => req.varbinds.clone(),
        Version::V1 => return Outcome::SilentDrop,
    };
    Outcome::Response(Pdu::Response(PduBody {
        request_id: req.request_id,
        error_status: ErrorStatus::TooBig,
        error_index: 0,
        varbinds,
    }))
}

fn finish<K>(version: Version, req: &PduBody, out: Vec<VarBind>, budget: usize) -> Outcome<K> {
    if list_len(&out) > budget {
        return too_big(version, req, budget);
    }
    Outcome::Response(Pdu::Response(PduBody {
        request_id: req.request_id,
        error_status: ErrorStatus::NoError,
        error_index: 0,
        varbinds: out,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexCodec, Unsigned32};
    use crate::table::{check, RowSet, Scalars, Table};

    struct View {
        rows: RowSet<u32>,
        name: String,
    }

    #[derive(Debug, PartialEq)]
    enum Change {
        Name(String),
        Row(u32, i32),
    }

    fn oid(s: &str) -> Oid {
        s.parse().unwrap()
    }

    fn dispatcher() -> Dispatcher<View, Change> {
        let mut d = Dispatcher::new();
        let sys = Scalars::<View, Change>::new(oid("1.3.6.1.2.1.1"))
            .read_only(1, |_| Value::OctetString(b"descr".to_vec()))
            .read_write(
                5,
                |v| Value::OctetString(v.name.clone().into_bytes()),
                |_, val| Ok(Change::Name(check::display_string(val, 255)?)),
            );
        d.register_all(sys.into_objects()).unwrap();
        let t: Table<View, Change, u32> = Table::new(
            oid("1.3.6.1.2.1.2.2.1"),
            |v: &View| &v.rows,
            |_, r, c| match c {
                1 => Some(Value::Integer(*r as i32)),
                2 => Some(Value::Counter64(u64::from(*r) << 40)),
                3 => Some(Value::Gauge32(*r)),
                _ => None,
            },
        )
        .read_only(&[1, 2])
        .read_write(3, |_, r, _, v| Ok(Change::Row(*r, check::integer(v)?)));
        d.register(Arc::new(t)).unwrap();
        d
    }

    fn view() -> View {
        View {
            rows: RowSet::from_rows(1..=3u32, Unsigned32::encode),
            name: "n".into(),
        }
    }

    fn body(oids: &[&str]) -> PduBody {
        PduBody::request(
            7,
            oids.iter()
                .map(|o| VarBind::new(oid(o), Value::Null))
                .collect(),
        )
    }

    fn response(o: Outcome<Change>) -> PduBody {
        match o {
            Outcome::Response(Pdu::Response(b)) => b,
            other => panic!("unexpected {other:?}"),
        }
    }

    /// An object that judges all of its varbinds of a PDU together: one
    /// change per PDU holding every value (sums them), as a RowStatus table
    /// does with the columns of one row.
    struct Batch(Oid);

    impl MibObject<View, Change> for Batch {
        fn root(&self) -> &Oid {
            &self.0
        }
        fn get(&self, _: &View, _: &[u32]) -> Value {
            Value::NoSuchInstance
        }
        fn next(&self, _: &View, _: &[u32]) -> Option<VarBind> {
            None
        }
        fn check_set_batch(
            &self,
            _: &View,
            sets: &[SetItem<'_>],
        ) -> Result<Vec<(usize, Change)>, (usize, SetError)> {
            let mut sum = 0;
            for s in sets {
                match s.value {
                    Value::Integer(i) => sum += i,
                    _ => return Err((s.position, SetError::WrongType)),
                }
            }
            let first = sets.first().map_or(0, |s| s.position);
            Ok(vec![(first, Change::Row(sets.len() as u32, sum))])
        }
    }

    #[test]
    fn an_object_sees_all_its_varbinds_of_a_pdu_together() {
        let mut d = dispatcher();
        d.register(Arc::new(Batch(oid("1.3.6.1.9")))).unwrap();
        let v = view();
        let vb = |o: &str, val: Value| VarBind::new(oid(o), val);
        let vbs = [
            vb("1.3.6.1.9.1", Value::Integer(2)),
            vb("1.3.6.1.2.1.1.5.0", Value::OctetString(b"x".to_vec())),
            vb("1.3.6.1.9.2", Value::Integer(3)),
        ];
        // One change for the two Batch varbinds (at the first one's place),
        // the scalar's in PDU order.
        assert_eq!(
            d.check_set_all(&v, &vbs).unwrap(),
            vec![Change::Row(2, 5), Change::Name("x".into())]
        );
        // The error names the varbind's position in the PDU.
        let bad = [
            vbs[1].clone(),
            vbs[0].clone(),
            vb("1.3.6.1.9.3", Value::Null),
        ];
        assert_eq!(d.check_set_all(&v, &bad), Err((2, SetError::WrongType)));
        let unowned = [vbs[0].clone(), vb("1.3.6.1.8.1", Value::Integer(1))];
        assert_eq!(
            d.check_set_all(&v, &unowned),
            Err((1, SetError::NotWritable))
        );
    }

    #[test]
    fn overlap_rejected() {
        let mut d = dispatcher();
        let s: Scalars<View, Change> = Scalars::new(oid("1.3.6.1.2.1.1"));
        assert!(d.register(Arc::new(s)).is_err());
        let s: Scalars<View, Change> = Scalars::new(oid("1.3.6.1.2.1.2.2.1.5"));
        assert!(d.register(Arc::new(s)).is_err());
    }

    #[test]
    fn get_v2_and_v1() {
        let d = dispatcher();
        let v = view();
        let req = Pdu::GetRequest(body(&[
            "1.3.6.1.2.1.1.1.0",
            "1.3.6.1.2.1.1.2.0",
            "1.3.6.1.2.1.1.1.1",
            "1.3.6.1.2.1.2.2.1.2.1",
        ]));
        let r = response(d.process(&v, Version::V2c, &req, 65000));
        let vals: Vec<_> = r.varbinds.iter().map(|x| x.value.clone()).collect();
        assert_eq!(
            vals,
            [
                Value::OctetString(b"descr".to_vec()),
                Value::NoSuchObject,
                Value::NoSuchInstance,
                Value::Counter64(1 << 40)
            ]
        );
        let r = response(d.process(&v, Version::V1, &req, 65000));
        assert_eq!(r.error_status, ErrorStatus::NoSuchName);
        assert_eq!(r.error_index, 2);
        let req = Pdu::GetRequest(body(&["1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.2.2.1.2.1"]));
        let r = response(d.process(&v, Version::V1, &req, 65000));
        assert_eq!(
            (r.error_status, r.error_index),
            (ErrorStatus::NoSuchName, 2)
        );
    }

    fn walk(d: &Dispatcher<View, Change>, version: Version) -> Vec<String> {
        let v = view();
        let mut cur = oid("0.0");
        let mut seen = Vec::new();
        loop {
            let req = Pdu::GetNextRequest(PduBody::request(
                1,
                vec![VarBind::new(cur.clone(), Value::Null)],
            ));
            let r = response(d.process(&v, version, &req, 65000));
            if r.error_status != ErrorStatus::NoError {
                assert_eq!(version, Version::V1);
                assert_eq!(r.error_status, ErrorStatus::NoSuchName);
                break;
            }
            let vb = &r.varbinds[0];
            if vb.value == Value::EndOfMibView {
                break;
            }
            assert!(vb.oid > cur);
            cur = vb.oid.clone();
            seen.push(cur.to_string());
        }
        seen
    }

    #[test]
    fn walks() {
        let d = dispatcher();
        let v2 = walk(&d, Version::V2c);
        assert_eq!(v2.len(), 2 + 9);
        let v1 = walk(&d, Version::V1);
        assert_eq!(v1.len(), 2 + 6);
        assert!(!v1.iter().any(|o| o.starts_with("1.3.6.1.2.1.2.2.1.2.")));
    }

    #[test]
    fn bulk() {
        let d = dispatcher();
        let v = view();
        let req = Pdu::GetBulkRequest(BulkBody {
            request_id: 3,
            non_repeaters: 1,
            max_repetitions: 4,
            varbinds: vec![
                VarBind::new(oid("1.3.6.1.2.1.1"), Value::Null),
                VarBind::new(oid("1.3.6.1.2.1.2.2.1.3"), Value::Null),
                VarBind::new(oid("1.3.6.1.2.1.2.2.1.1.2"), Value::Null),
            ],
        });
        let r = response(d.process(&v, Version::V2c, &req, 65000));
        let got: Vec<String> = r
            .varbinds
            .iter()
            .map(|x| format!("{}={}", x.oid, matches!(x.value, Value::EndOfMibView)))
            .collect();
        assert_eq!(
            got,
            [
                "1.3.6.1.2.1.1.1.0=false",
                "1.3.6.1.2.1.2.2.1.3.1=false",
                "1.3.6.1.2.1.2.2.1.1.3=false",
                "1.3.6.1.2.1.2.2.1.3.2=false",
                "1.3.6.1.2.1.2.2.1.2.1=false",
                "1.3.6.1.2.1.2.2.1.3.3=false",
                "1.3.6.1.2.1.2.2.1.2.2=false",
                "1.3.6.1.2.1.2.2.1.3.3=true",
                "1.3.6.1.2.1.2.2.1.2.3=false",
            ]
        );
        // Size bound: the response is cut, never tooBig, once non-repeaters fit.
        let r = response(d.process(&v, Version::V2c, &req, 60));
        assert_eq!(r.error_status, ErrorStatus::NoError);
        assert!(list_len(&r.varbinds) <= 60);
        assert!(r.varbinds.len() >= 2);
        let r = response(d.process(&v, Version::V2c, &req, 5));
        assert_eq!(r.error_status, ErrorStatus::TooBig);
        assert!(r.varbinds.is_empty());
    }

    /// RFC 3416 4.2.3: when even the non-repeaters overflow the budget, the
    /// response is the longest prefix that fits (noError), cut inside the
    /// non-repeaters, with no repetitions after it; tooBig only when not even
    /// the first varbind fits. Get and GetNext keep tooBig (4.2.1, 4.2.2).
    #[test]
    fn bulk_total_is_capped() {
        let mut d = dispatcher();
        d.set_max_bulk_varbinds(10);
        let req = Pdu::GetBulkRequest(BulkBody {
            request_id: 1,
            non_repeaters: 0,
            max_repetitions: 50,
            varbinds: vec![VarBind::new(vec![1, 3].into(), Value::Null); 3],
        });
        let b = response(d.process(&view(), Version::V2c, &req, 60000));
        assert!(
            b.varbinds.len() <= 10 && b.varbinds.len() >= 3,
            "{}",
            b.varbinds.len()
        );
        assert_eq!(b.varbinds.len() % 3, 0);
    }

    #[test]
    fn bulk_cut_inside_the_non_repeaters() {
        let d = dispatcher();
        let v = view();
        let oids = [
            "1.3.6.1.2.1.1",
            "1.3.6.1.2.1.2.2.1.1",
            "1.3.6.1.2.1.2.2.1.2",
            "1.3.6.1.2.1.2.2.1.3",
        ];
        let req = |non_repeaters| {
            Pdu::GetBulkRequest(BulkBody {
                request_id: 9,
                non_repeaters,
                max_repetitions: 5,
                varbinds: oids
                    .iter()
                    .map(|o| VarBind::new(oid(o), Value::Null))
                    .collect(),
            })
        };
        let full = response(d.process(&v, Version::V2c, &req(3), 65000));
        assert_eq!(full.error_status, ErrorStatus::NoError);
        assert!(full.varbinds.len() > 3);
        let two = list_len(&full.varbinds[..2]);
        let three = list_len(&full.varbinds[..3]);
        for budget in [two, three - 1] {
            let r = response(d.process(&v, Version::V2c, &req(3), budget));
            assert_eq!(r.error_status, ErrorStatus::NoError, "budget {budget}");
            assert_eq!(r.varbinds, full.varbinds[..2], "budget {budget}");
        }
        // All non-repeaters fit but no repetition: exactly the non-repeaters.
        let r = response(d.process(&v, Version::V2c, &req(3), three));
        assert_eq!(r.error_status, ErrorStatus::NoError);
        assert_eq!(r.varbinds, full.varbinds[..3]);
        // Not even the first: tooBig with an empty list (as net-snmp).
        let first = list_len(&full.varbinds[..1]);
        let r = response(d.process(&v, Version::V2c, &req(3), first - 1));
        assert_eq!(r.error_status, ErrorStatus::TooBig);
        assert!(r.varbinds.is_empty());
        // Nothing requested (max-repetitions 0, no non-repeaters): an empty
        // noError response, whatever the budget.
        let none = Pdu::GetBulkRequest(BulkBody {
            request_id: 10,
            non_repeaters: 0,
            max_repetitions: 0,
            varbinds: vec![VarBind::new(oid(oids[0]), Value::Null)],
        });
        let r = response(d.process(&v, Version::V2c, &none, 0));
        assert_eq!(r.error_status, ErrorStatus::NoError);
        assert!(r.varbinds.is_empty());
        // GetNext over the same varbinds with the same small budget: tooBig.
        let next = Pdu::GetNextRequest(body(&oids[..3]));
        let r = response(d.process(&v, Version::V2c, &next, two));
        assert_eq!(r.error_status, ErrorStatus::TooBig);
        assert!(r.varbinds.is_empty());
        let get = Pdu::GetRequest(body(&["1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.1.1.0"]));
        let r = response(d.process(&v, Version::V2c, &get, first));
        assert_eq!(r.error_status, ErrorStatus::TooBig);
    }

    #[test]
    fn sets() {
        let d = dispatcher();
        let v = view();
        let mut b = body(&["1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.2.2.1.3.2"]);
        b.varbinds[0].value = Value::OctetString(b"x".to_vec());
        b.varbinds[1].value = Value::Integer(9);
        match d.process(&v, Version::V2c, &Pdu::SetRequest(b.clone()), 65000) {
            Outcome::Set { changes, response } => {
                assert_eq!(changes, [Change::Name("x".into()), Change::Row(2, 9)]);
                assert_eq!(response.varbinds, b.varbinds);
            }
            o => panic!("{o:?}"),
        }
        let mut bad = b.clone();
        bad.varbinds[1].value = Value::Null;
        let r = response(d.process(&v, Version::V2c, &Pdu::SetRequest(bad.clone()), 65000));
        assert_eq!((r.error_status, r.error_index), (ErrorStatus::WrongType, 2));
        let r = response(d.process(&v, Version::V1, &Pdu::SetRequest(bad), 65000));
        assert_eq!((r.error_status, r.error_index), (ErrorStatus::BadValue, 2));
        let mut ro = b.clone();
        ro.varbinds[0].oid = oid("1.3.6.1.2.1.1.1.0");
        let r = response(d.process(&v, Version::V2c, &Pdu::SetRequest(ro.clone()), 65000));
        assert_eq!(
            (r.error_status, r.error_index),
            (ErrorStatus::NotWritable, 1)
        );
        let r = response(d.process(&v, Version::V1, &Pdu::SetRequest(ro), 65000));
        assert_eq!(
            (r.error_status, r.error_index),
            (ErrorStatus::NoSuchName, 1)
        );
        let mut nc = b;
        nc.varbinds[1].oid = oid("1.3.6.1.2.1.2.2.1.3.99");
        let r = response(d.process(&v, Version::V2c, &Pdu::SetRequest(nc), 65000));
        assert_eq!(
            (r.error_status, r.error_index),
            (ErrorStatus::NoCreation, 2)
        );
    }

    /// Hidden subtrees: read and written only with clearance (notWritable
    /// below).
    #[test]
    fn hidden_subtrees_are_secret_to_read_only() {
        let mut d = dispatcher();
        let column = oid("1.3.6.1.2.1.2.2.1.3");
        d.set_hidden_subtrees(vec![column.clone()]);
        let v = view();
        let cell = oid("1.3.6.1.2.1.2.2.1.3.1");
        let run =
            |c: Clearance, pdu: &Pdu| d.process_with(&v, Version::V2c, pdu, 65000, &FullAccess, c);
        let get = Pdu::GetRequest(PduBody::request(
            1,
            vec![VarBind::new(cell.clone(), Value::Null)],
        ));
        assert_eq!(
            response(run(Clearance::Public, &get)).varbinds[0].value,
            Value::NoSuchObject
        );
        assert_eq!(
            response(run(Clearance::Secret, &get)).varbinds[0].value,
            Value::Gauge32(1)
        );
        let set = Pdu::SetRequest(PduBody::request(
            1,
            vec![VarBind::new(cell, Value::Integer(7))],
        ));
        assert_eq!(
            response(run(Clearance::Public, &set)).error_status,
            ErrorStatus::NotWritable
        );
        assert!(matches!(run(Clearance::Secret, &set), Outcome::Set { .. }));
    }

    /// Administrative subtrees: readable as the view says, writable only
    /// with clearance; below, notWritable (v1: noSuchName) whatever the
    /// view and whether or not the instance exists, on every way in.
    #[test]
    fn admin_subtrees_are_writable_only_with_clearance() {
        let mut d = dispatcher();
        d.set_admin_subtrees(vec![oid("1.3.6.1.2.1.2.2.1.3")]);
        let v = view();
        let cell = oid("1.3.6.1.2.1.2.2.1.3.1");
        let get = Pdu::GetRequest(PduBody::request(
            1,
            vec![VarBind::new(cell.clone(), Value::Null)],
        ));
        let run = |c: Clearance, ver: Version, pdu: &Pdu, acc: &dyn AccessCheck| {
            d.process_with(&v, ver, pdu, 65000, acc, c)
        };
        assert_eq!(
            response(run(Clearance::Public, Version::V2c, &get, &FullAccess)).varbinds[0].value,
            Value::Gauge32(1)
        );
        for instance in [cell.clone(), oid("1.3.6.1.2.1.2.2.1.3.99")] {
            let set = Pdu::SetRequest(PduBody::request(
                1,
                vec![VarBind::new(instance, Value::Integer(7))],
            ));
            let r = response(run(Clearance::Public, Version::V2c, &set, &FullAccess));
            assert_eq!(
                (r.error_status, r.error_index),
                (ErrorStatus::NotWritable, 1)
            );
            let r = response(run(Clearance::Public, Version::V1, &set, &FullAccess));
            assert_eq!(r.error_status, ErrorStatus::NoSuchName);
        }
        let set = [VarBind::new(cell.clone(), Value::Integer(7))];
        assert!(matches!(
            d.check_set_all(&v, &set),
            Err((0, SetError::NotWritable))
        ));
        let setp = Pdu::SetRequest(PduBody::request(1, set.to_vec()));
        assert!(matches!(
            run(Clearance::Secret, Version::V2c, &setp, &FullAccess),
            Outcome::Set { .. }
        ));
    }

    /// The secret rule holds on every way in: the engine's requests without
    /// clearance and the plain reads and set checks AgentX uses.
    #[test]
    fn secrets_need_clearance_on_every_entry_point() {
        let mut d = dispatcher();
        let column = oid("1.3.6.1.2.1.2.2.1.3");
        d.set_secret_subtrees(vec![column.clone()]);
        let v = view();
        let cell = oid("1.3.6.1.2.1.2.2.1.3.1");
        let last_public = oid("1.3.6.1.2.1.2.2.1.2.3");
        // Plain reads: absent, walked past.
        assert_eq!(d.get(&v, cell.as_slice()), Value::NoSuchObject);
        assert!(d.next(&v, last_public.as_slice()).is_none());
        // Set checks: notWritable.
        let set = [VarBind::new(cell.clone(), Value::Integer(7))];
        assert!(matches!(
            d.check_set_all(&v, &set),
            Err((0, SetError::NotWritable))
        ));
        assert!(d
            .check_set(&v, cell.as_slice(), &Value::Integer(7))
            .is_err());
        // Requests: public ones see nothing, cleared ones everything.
        let get = Pdu::GetRequest(PduBody::request(
            1,
            vec![VarBind::new(cell.clone(), Value::Null)],
        ));
        let run = |c: Clearance, pdu: &Pdu| {
            response(d.process_with(&v, Version::V2c, pdu, 65000, &FullAccess, c))
        };
        assert_eq!(
            run(Clearance::Public, &get).varbinds[0].value,
            Value::NoSuchObject
        );
        assert_eq!(
            run(Clearance::Secret, &get).varbinds[0].value,
            Value::Gauge32(1)
        );
        let bulk = Pdu::GetBulkRequest(BulkBody {
            request_id: 1,
            non_repeaters: 0,
            max_repetitions: 10,
            varbinds: vec![VarBind::new(last_public, Value::Null)],
        });
        let public = run(Clearance::Public, &bulk);
        assert!(public
            .varbinds
            .iter()
            .all(|vb| !vb.oid.starts_with(column.as_slice())));
        let cleared = run(Clearance::Secret, &bulk);
        assert_eq!(cleared.varbinds[0].oid, cell);
        let setp = Pdu::SetRequest(PduBody::request(1, set.to_vec()));
        assert_eq!(
            run(Clearance::Public, &setp).error_status,
            ErrorStatus::NoAccess
        );
        assert!(matches!(
            d.process_with(
                &v,
                Version::V2c,
                &setp,
                65000,
                &FullAccess,
                Clearance::Secret
            ),
            Outcome::Set { .. }
        ));
        // The rest of the table is untouched.
        assert_eq!(
            d.get(&v, &[1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 2]),
            Value::Integer(2)
        );
    }
}
