//! Phase 1 of a Set (RFC 3416 4.2.5): every varbind checked by its object
//! before anything is applied.

use super::access::{FullAccess, Guarded};
use super::reply::{error_response, finish, list_len};
use super::{AccessCheck, Clearance, Dispatcher, Outcome};
use crate::message::Version;
use crate::mib::{SetError, SetItem};
use crate::pdu::{ErrorStatus, PduBody};
use crate::value::{Value, VarBind};

impl<V, K> Dispatcher<V, K> {
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

    pub(super) fn check_set_any(
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

    pub(super) fn set_request(
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
