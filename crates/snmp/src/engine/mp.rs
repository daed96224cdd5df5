//! Message processing (RFC 3412) on the way out: how a response is wrapped
//! (the request's community, or its USM context) and counted in the snmp
//! group; and the request counters on the way in.

use super::{add, inc, Engine};
use crate::ber::{self, Encoder};
use crate::dispatch::{AccessCheck, Clearance, Dispatcher};
use crate::message::{Message, Version};
use crate::pdu::{self, ErrorStatus, Pdu};
use crate::response::{Direct, ResponseList};
use crate::usm::ReplyContext;

/// How a response is wrapped: the request's community, or its USM context.
pub(super) enum Reply {
    Community {
        version: Version,
        community: Vec<u8>,
    },
    V3(ReplyContext),
}

impl Reply {
    /// Error-status mapping follows v2c for v3.
    pub(super) fn version(&self) -> Version {
        match self {
            Reply::Community { version, .. } => *version,
            Reply::V3(_) => Version::V2c,
        }
    }
}

impl<V, K> Engine<V, K> {
    pub(super) fn count_request(&self, pdu: &Pdu) {
        let s = &self.stats;
        match pdu {
            Pdu::GetRequest(_) => inc(&s.in_get_requests),
            Pdu::GetNextRequest(_) => inc(&s.in_get_nexts),
            Pdu::GetBulkRequest(_) => inc(&s.in_get_bulks),
            Pdu::SetRequest(_) => inc(&s.in_set_requests),
            _ => {}
        }
    }

    fn count_response(&self, pdu: &Pdu) {
        let s = &self.stats;
        inc(&s.out_get_responses);
        if let Pdu::Response(b) = pdu {
            match b.error_status {
                ErrorStatus::TooBig => inc(&s.out_too_bigs),
                ErrorStatus::NoSuchName => inc(&s.out_no_such_names),
                ErrorStatus::BadValue => inc(&s.out_bad_values),
                ErrorStatus::GenErr => inc(&s.out_gen_errs),
                _ => {}
            }
        }
    }

    /// Counts a response in the snmp group and encodes its message into `out`.
    pub(super) fn encode_response(&self, reply: Reply, pdu: Pdu, out: &mut Vec<u8>) {
        self.count_response(&pdu);
        match reply {
            Reply::Community { version, community } => Message {
                version,
                community,
                pdu,
            }
            .encode(out),
            Reply::V3(ctx) => {
                if let Some(usm) = &self.usm {
                    usm.encode_response(&ctx, pdu, out);
                }
            }
        }
    }

    /// A walk's request (GetNext, GetBulk) over the community model,
    /// answered straight into `out`: the response message's header, then
    /// each varbind encoded as the dispatcher finds it, no varbind built
    /// in between ([`crate::response::Direct`]). False (`out` cleared) when
    /// the answer is not a noError response: then the general path answers
    /// it, with the same octets.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn respond_walk(
        &self,
        dispatcher: &Dispatcher<V, K>,
        view: &V,
        (version, community, request): (Version, &[u8], &Pdu),
        budget: usize,
        acc: &dyn AccessCheck,
        clearance: Clearance,
        out: &mut Vec<u8>,
    ) -> bool {
        if !matches!(request, Pdu::GetNextRequest(_) | Pdu::GetBulkRequest(_)) {
            return false;
        }
        // As Message::encode lays out a Response with error-status and
        // error-index 0.
        out.clear();
        let mut e = Encoder::new(out);
        // (A walk's answer is hundreds of octets or more: its three
        // lengths are reserved in the long form, so closing them moves
        // nothing; the octets are the same.)
        let message = e.begin_long(ber::tag::SEQUENCE);
        e.integer(version.wire());
        e.octets(community);
        let response = e.begin_long(pdu::tag::RESPONSE);
        e.integer(i64::from(request.request_id().unwrap_or(0)));
        e.integer(0);
        e.integer(0);
        let list = e.begin_long(ber::tag::SEQUENCE);
        let mut direct = Direct::new(out, budget);
        let sent = dispatcher.walk_into(view, version, request, acc, clearance, &mut direct);
        let n = direct.count();
        if !sent {
            out.clear();
            return false;
        }
        let mut e = Encoder::new(out);
        e.end(list);
        e.end(response);
        e.end(message);
        add(&self.stats.in_total_req_vars, n);
        inc(&self.stats.out_get_responses);
        true
    }
}
