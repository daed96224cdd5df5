//! The SNMPv3 path of the agent: USM (RFC 3414), then the user's access
//! (VACM, RFC 3415, or the rouser/rwuser shorthands), then dispatch; and
//! the secret-subtree guard every path applies.

use std::net::SocketAddr;

use tracing::debug;

use super::{inc, Action, Inner, Reply};
use crate::dispatch::{AccessCheck, FullAccess, Outcome};
use crate::message::{response_overhead, Version};
use crate::oid::Oid;
use crate::pdu::{ErrorStatus, Pdu, PduBody};
use crate::usm::{Incoming, MpdDrop, SecurityLevel, Usm};
use crate::vacm::SecurityModel;
use crate::value::{Value, VarBind};

/// An access check that also hides `secrets` below authPriv.
pub(super) struct Guarded<'a> {
    inner: &'a dyn AccessCheck,
    secrets: &'a [Oid],
    privileged: bool,
}

impl Guarded<'_> {
    fn secret(&self, oid: &[u32]) -> Option<&Oid> {
        if self.privileged {
            return None;
        }
        self.secrets.iter().find(|s| oid.starts_with(s.as_slice()))
    }
}

impl AccessCheck for Guarded<'_> {
    fn readable(&self, oid: &[u32]) -> bool {
        self.secret(oid).is_none() && self.inner.readable(oid)
    }
    fn writable(&self, oid: &[u32]) -> bool {
        self.secret(oid).is_none() && self.inner.writable(oid)
    }
    fn resume_after(&self, oid: &[u32]) -> Oid {
        match self.secret(oid) {
            Some(s) => s.join(&[u32::MAX]),
            None => self.inner.resume_after(oid),
        }
    }
}

impl<V, K> Inner<V, K> {
    /// An SNMPv3 message: USM, then the user's access, then dispatch.
    pub(super) fn handle_v3(
        &self,
        usm: &Usm,
        src: SocketAddr,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Action<K> {
        let (ctx, pdu) = match usm.incoming(data) {
            Incoming::Drop {
                parse_error,
                auth_failure,
                mpd,
            } => {
                if parse_error {
                    inc(&self.stats.in_asn_parse_errs);
                }
                match mpd {
                    Some(MpdDrop::UnknownSecurityModel) => inc(&self.stats.unknown_security_models),
                    Some(MpdDrop::InvalidMsg) => inc(&self.stats.invalid_msgs),
                    None => {}
                }
                if auth_failure {
                    self.auth_failure(src, b"", false);
                }
                debug!(%src, "dropped SNMPv3 message");
                return Action::None;
            }
            Incoming::Report { msg, auth_failure } => {
                if auth_failure {
                    self.auth_failure(src, b"", false);
                }
                debug!(%src, "SNMPv3 report");
                out.extend_from_slice(&msg);
                return Action::Send;
            }
            Incoming::Request { ctx, pdu } => (ctx, pdu),
        };
        debug!(%src, pdu = pdu.tag(), "v3 request");
        self.count_request(&pdu);
        let rid = pdu.request_id().unwrap_or(0);
        let budget = self
            .max_message_size
            .min(ctx.max_size)
            .saturating_sub(usm.response_overhead(&ctx) + response_overhead(0, rid));
        let denied = |index: usize| match &pdu {
            Pdu::GetRequest(b) | Pdu::GetNextRequest(b) | Pdu::SetRequest(b) => {
                Some(crate::dispatch::error_response(
                    Version::V2c,
                    b,
                    ErrorStatus::AuthorizationError,
                    index,
                    budget,
                ))
            }
            Pdu::GetBulkRequest(b) => Some(crate::dispatch::error_response(
                Version::V2c,
                &PduBody {
                    request_id: b.request_id,
                    error_status: ErrorStatus::NoError,
                    error_index: 0,
                    varbinds: b.varbinds.clone(),
                },
                ErrorStatus::AuthorizationError,
                index,
                budget,
            )),
            _ => None,
        };
        // RFC 3415 3.2: no access entry for the user at this level gives
        // authorizationError, as net-snmp answers.
        let vacm = self
            .vacm
            .as_ref()
            .and_then(|v| v.views(SecurityModel::Usm, &ctx.user.name, ctx.level));
        let outcome = match (vacm, ctx.user.access.clone()) {
            (Some(Err(_)), _) => denied(0),
            (Some(Ok(v)), _) => match &pdu {
                // No write view at all: authorizationError (RFC 3415 noSuchView).
                Pdu::SetRequest(req) if v.write.is_none() => {
                    self.auth_failure(src, &ctx.user.name, true);
                    Some(crate::dispatch::error_response(
                        Version::V2c,
                        req,
                        ErrorStatus::AuthorizationError,
                        usize::from(!req.varbinds.is_empty()),
                        budget,
                    ))
                }
                _ => {
                    let view = (self.view)();
                    let g = self.guard(&v, ctx.level);
                    Some(
                        self.dispatcher
                            .process_with(&view, Version::V2c, &pdu, budget, &g),
                    )
                }
            },
            (None, Some(a)) if ctx.level >= a.min_level => match &pdu {
                Pdu::SetRequest(req) if !a.write => {
                    self.auth_failure(src, &ctx.user.name, true);
                    Some(crate::dispatch::error_response(
                        Version::V2c,
                        req,
                        ErrorStatus::AuthorizationError,
                        usize::from(!req.varbinds.is_empty()),
                        budget,
                    ))
                }
                _ => {
                    let view = (self.view)();
                    let g = self.guard(&FullAccess, ctx.level);
                    Some(match &a.subtree {
                        None => self
                            .dispatcher
                            .process_with(&view, Version::V2c, &pdu, budget, &g),
                        Some(t) => self.process_in_subtree(&view, &pdu, t, budget, &g),
                    })
                }
            },
            (None, _) => denied(0),
        };
        match outcome {
            Some(o) => self.finish(src, &pdu, o, Reply::V3(ctx), out),
            None => Action::None,
        }
    }

    pub(super) fn guard<'a>(
        &'a self,
        inner: &'a dyn AccessCheck,
        level: SecurityLevel,
    ) -> Guarded<'a> {
        Guarded {
            inner,
            secrets: &self.secrets,
            privileged: level == SecurityLevel::AuthPriv,
        }
    }

    /// Dispatch for a user who may see only `tree`: reads before the tree
    /// start at its root, anything outside reads as absent, Sets outside
    /// are refused.
    fn process_in_subtree(
        &self,
        view: &V,
        pdu: &Pdu,
        tree: &Oid,
        budget: usize,
        acc: &dyn AccessCheck,
    ) -> Outcome<K> {
        let inside = |o: &Oid| o.starts_with(tree.as_slice());
        let clamp = |vbs: &[VarBind]| -> Vec<VarBind> {
            vbs.iter()
                .map(|vb| {
                    let mut vb = vb.clone();
                    if vb.oid < *tree {
                        vb.oid = tree.clone();
                    }
                    vb
                })
                .collect()
        };
        let (req, walk) = match pdu {
            Pdu::SetRequest(b) => {
                if let Some(i) = b.varbinds.iter().position(|vb| !inside(&vb.oid)) {
                    return crate::dispatch::error_response(
                        Version::V2c,
                        b,
                        ErrorStatus::NoAccess,
                        i + 1,
                        budget,
                    );
                }
                (pdu.clone(), false)
            }
            Pdu::GetRequest(_) => (pdu.clone(), false),
            Pdu::GetNextRequest(b) => (
                Pdu::GetNextRequest(PduBody {
                    varbinds: clamp(&b.varbinds),
                    ..b.clone()
                }),
                true,
            ),
            Pdu::GetBulkRequest(b) => {
                let mut b = b.clone();
                b.varbinds = clamp(&b.varbinds);
                (Pdu::GetBulkRequest(b), true)
            }
            _ => (pdu.clone(), false),
        };
        let mut outcome = self
            .dispatcher
            .process_with(view, Version::V2c, &req, budget, acc);
        if let Outcome::Response(Pdu::Response(b)) = &mut outcome {
            // RFC 3416 4.2.2/4.2.3: an endOfMibView names what was asked for:
            // the request's varbind, or the same column's previous row.
            let asked = pdu.varbinds();
            let (n, r) = match pdu {
                Pdu::GetBulkRequest(q) => {
                    let n = usize::try_from(q.non_repeaters.max(0))
                        .unwrap_or(0)
                        .min(asked.len());
                    (n, asked.len() - n)
                }
                _ => (asked.len(), 0),
            };
            for p in 0..b.varbinds.len() {
                let inside_p = b.varbinds.get(p).is_some_and(|vb| inside(&vb.oid));
                if inside_p {
                    continue;
                }
                let name = if p < n || r == 0 {
                    asked.get(p).map(|vb| vb.oid.clone())
                } else if p >= n + r {
                    b.varbinds.get(p - r).map(|vb| vb.oid.clone())
                } else {
                    asked.get(p).map(|vb| vb.oid.clone())
                };
                if let Some(vb) = b.varbinds.get_mut(p) {
                    if walk {
                        if let Some(name) = name {
                            vb.oid = name;
                        }
                        vb.value = Value::EndOfMibView;
                    } else {
                        vb.value = Value::NoSuchObject;
                    }
                }
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_need_auth_priv() {
        let secrets = [Oid::new(vec![1, 3, 6, 1, 3, 117, 7, 1, 1, 1, 1, 4])];
        let g = Guarded {
            inner: &FullAccess,
            secrets: &secrets,
            privileged: false,
        };
        let key = [1, 3, 6, 1, 3, 117, 7, 1, 1, 1, 1, 4, 1];
        assert!(!g.readable(&key) && !g.writable(&key));
        assert!(g.readable(&[1, 3, 6, 1, 3, 117, 7, 1, 1, 1, 1, 5, 1]));
        assert_eq!(
            g.resume_after(&key).as_slice(),
            &[1, 3, 6, 1, 3, 117, 7, 1, 1, 1, 1, 4, u32::MAX]
        );
        let p = Guarded {
            privileged: true,
            ..g
        };
        assert!(p.readable(&key));
    }
}
