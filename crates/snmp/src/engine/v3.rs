//! The SNMPv3 path of the engine: USM (RFC 3414) names the user and the
//! securityLevel, then VACM decides (RFC 3415), then dispatch.

use std::net::SocketAddr;

use tracing::debug;

use super::mp::Reply;
use super::{access, inc, Action, Engine};
use crate::context::ContextView;
use crate::message::{response_overhead, Version};
use crate::oid::Oid;
use crate::pdu::{ErrorStatus, Pdu, PduBody};
use crate::usm::{Incoming, MpdDrop, ReplyContext, Usm};
use crate::vacm::SecurityModel;
use crate::value::{Value, VarBind};

/// snmpUnknownContexts.0 (SNMP-TARGET-MIB, RFC 3413).
const SNMP_UNKNOWN_CONTEXTS: &[u32] = &[1, 3, 6, 1, 6, 3, 12, 1, 5, 0];

impl<V, K> Engine<V, K> {
    /// An SNMPv3 message: USM, then the user's access, then dispatch.
    pub(super) fn process_v3(
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
        // Access: VACM for the user (RFC 3415 3.2), decided from the
        // context's name before anything of the context is derived; a
        // refusal is an authorizationError, as net-snmp answers, whether
        // the context exists or not: a user learns which contexts exist
        // only in those its access reaches.
        let table = self.communities.load_full();
        let vacm = self.access.vacm(&table);
        let model = SecurityModel::Usm;
        let decision = access::decide(
            &vacm,
            &ctx.context_name,
            model,
            &ctx.user.name,
            ctx.level,
            &pdu,
        );
        let outcome = match decision {
            access::Decision::Denied => denied(0),
            access::Decision::ReadOnlySet => {
                if !self.context_exists(&ctx.context_name) {
                    return self.unknown_context_report(usm, src, ctx, &pdu, out);
                }
                self.auth_failure(src, &ctx.user.name, true);
                denied(usize::from(!pdu.varbinds().is_empty()))
            }
            access::Decision::Allowed(v) => {
                let Some(ContextView {
                    mut view,
                    dispatcher,
                }) = self.context(&ctx.context_name, &pdu)
                else {
                    return self.unknown_context_report(usm, src, ctx, &pdu, out);
                };
                if let Some(hook) = &self.user_hook {
                    hook(&mut view, &ctx.user.name);
                }
                Some(dispatcher.process_with(
                    &view,
                    Version::V2c,
                    &pdu,
                    budget,
                    &v,
                    super::clearance(ctx.level),
                ))
            }
        };
        match outcome {
            Some(o) => self.finish(src, &pdu, o, Reply::V3(ctx), out),
            None => Action::None,
        }
    }

    /// RFC 3413 3.2 (2): a request its access allows for a context this
    /// agent does not have is counted and, being confirmed class,
    /// reported (snmpUnknownContexts).
    fn unknown_context_report(
        &self,
        usm: &Usm,
        src: SocketAddr,
        ctx: ReplyContext,
        pdu: &Pdu,
        out: &mut Vec<u8>,
    ) -> Action<K> {
        let n = self.unknown_context(src, &ctx.context_name);
        let Some(rid) = pdu.request_id().filter(|_| pdu.is_confirmed()) else {
            return Action::None;
        };
        let report = Pdu::Report(PduBody {
            request_id: rid,
            error_status: ErrorStatus::NoError,
            error_index: 0,
            varbinds: vec![VarBind::new(
                Oid::from_slice(SNMP_UNKNOWN_CONTEXTS),
                Value::Counter32(n),
            )],
        });
        usm.encode_response(&ctx, report, out);
        Action::Send
    }
}
