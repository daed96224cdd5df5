//! Response PDUs: errors, tooBig, and the size budget.

use super::Outcome;
use crate::ber;
use crate::message::Version;
use crate::pdu::{ErrorStatus, Pdu, PduBody};
use crate::value::VarBind;

/// A Response PDU.
pub(super) fn response<K>(
    request_id: i32,
    status: ErrorStatus,
    varbinds: Vec<VarBind>,
) -> Outcome<K> {
    Outcome::Response(Pdu::Response(PduBody {
        request_id,
        error_status: status,
        error_index: 0,
        varbinds,
    }))
}

pub(super) fn list_len(vbs: &[VarBind]) -> usize {
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
pub(super) fn too_big<K>(version: Version, req: &PduBody, budget: usize) -> Outcome<K> {
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

pub(super) fn finish<K>(
    version: Version,
    req: &PduBody,
    out: Vec<VarBind>,
    budget: usize,
) -> Outcome<K> {
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
