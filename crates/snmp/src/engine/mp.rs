//! Message processing (RFC 3412) on the way out: how a response is wrapped
//! (the request's community, or its USM context) and counted in the snmp
//! group; and the request counters on the way in.

use super::{inc, Engine};
use crate::message::{Message, Version};
use crate::pdu::{ErrorStatus, Pdu};
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
            Pdu::GetNextRequest(_) | Pdu::GetBulkRequest(_) => inc(&s.in_get_nexts),
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
}
