//! SNMP PDUs (RFC 3416 section 3, RFC 1157 Trap-PDU) as typed structs.

// Input path: bytes from the wire or files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use crate::ber::{self, BerError, Encoder, Reader};
use crate::oid::Oid;
use crate::value::VarBind;

/// PDU tags (context-specific, constructed).
pub mod tag {
    pub const GET_REQUEST: u8 = 0xa0;
    pub const GET_NEXT_REQUEST: u8 = 0xa1;
    pub const RESPONSE: u8 = 0xa2;
    pub const SET_REQUEST: u8 = 0xa3;
    pub const TRAP_V1: u8 = 0xa4;
    pub const GET_BULK_REQUEST: u8 = 0xa5;
    pub const INFORM_REQUEST: u8 = 0xa6;
    pub const SNMPV2_TRAP: u8 = 0xa7;
    pub const REPORT: u8 = 0xa8;
}

/// error-status values (RFC 3416 section 3; 0-5 are also SNMPv1's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorStatus {
    NoError,
    TooBig,
    NoSuchName,
    BadValue,
    ReadOnly,
    GenErr,
    NoAccess,
    WrongType,
    WrongLength,
    WrongEncoding,
    WrongValue,
    NoCreation,
    InconsistentValue,
    ResourceUnavailable,
    CommitFailed,
    UndoFailed,
    AuthorizationError,
    NotWritable,
    InconsistentName,
    /// A value outside 0..=18 received from the wire (kept, not rejected:
    /// requests' error-status is ignored by the agent).
    Unknown(i32),
}

impl ErrorStatus {
    pub fn from_i32(v: i32) -> Self {
        use ErrorStatus::*;
        match v {
            0 => NoError,
            1 => TooBig,
            2 => NoSuchName,
            3 => BadValue,
            4 => ReadOnly,
            5 => GenErr,
            6 => NoAccess,
            7 => WrongType,
            8 => WrongLength,
            9 => WrongEncoding,
            10 => WrongValue,
            11 => NoCreation,
            12 => InconsistentValue,
            13 => ResourceUnavailable,
            14 => CommitFailed,
            15 => UndoFailed,
            16 => AuthorizationError,
            17 => NotWritable,
            18 => InconsistentName,
            other => Unknown(other),
        }
    }

    pub const fn as_i32(self) -> i32 {
        use ErrorStatus::*;
        match self {
            NoError => 0,
            TooBig => 1,
            NoSuchName => 2,
            BadValue => 3,
            ReadOnly => 4,
            GenErr => 5,
            NoAccess => 6,
            WrongType => 7,
            WrongLength => 8,
            WrongEncoding => 9,
            WrongValue => 10,
            NoCreation => 11,
            InconsistentValue => 12,
            ResourceUnavailable => 13,
            CommitFailed => 14,
            UndoFailed => 15,
            AuthorizationError => 16,
            NotWritable => 17,
            InconsistentName => 18,
            Unknown(v) => v,
        }
    }

    /// The SNMPv1 error-status for a v2 one (RFC 3584 section 4.4).
    pub fn to_v1(self) -> Self {
        use ErrorStatus::*;
        match self {
            NoError | TooBig | NoSuchName | BadValue | ReadOnly | GenErr => self,
            WrongValue | WrongEncoding | WrongType | WrongLength | InconsistentValue => BadValue,
            NoAccess | NotWritable | NoCreation | InconsistentName | AuthorizationError => {
                NoSuchName
            }
            ResourceUnavailable | CommitFailed | UndoFailed | Unknown(_) => GenErr,
        }
    }
}

/// The common PDU body (every PDU type but GetBulk and the v1 Trap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PduBody {
    pub request_id: i32,
    pub error_status: ErrorStatus,
    pub error_index: i32,
    pub varbinds: Vec<VarBind>,
}

impl PduBody {
    /// A request body (error-status and error-index zero).
    pub fn request(request_id: i32, varbinds: Vec<VarBind>) -> Self {
        PduBody {
            request_id,
            error_status: ErrorStatus::NoError,
            error_index: 0,
            varbinds,
        }
    }
}

/// GetBulkRequest-PDU body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkBody {
    pub request_id: i32,
    pub non_repeaters: i32,
    pub max_repetitions: i32,
    pub varbinds: Vec<VarBind>,
}

/// SNMPv1 Trap-PDU (RFC 1157).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrapV1 {
    pub enterprise: Oid,
    pub agent_addr: [u8; 4],
    pub generic_trap: i32,
    pub specific_trap: i32,
    pub time_stamp: u32,
    pub varbinds: Vec<VarBind>,
}

/// Any SNMPv1/v2c PDU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pdu {
    GetRequest(PduBody),
    GetNextRequest(PduBody),
    Response(PduBody),
    SetRequest(PduBody),
    GetBulkRequest(BulkBody),
    InformRequest(PduBody),
    SnmpV2Trap(PduBody),
    Report(PduBody),
    TrapV1(TrapV1),
}

impl Pdu {
    pub fn tag(&self) -> u8 {
        match self {
            Pdu::GetRequest(_) => tag::GET_REQUEST,
            Pdu::GetNextRequest(_) => tag::GET_NEXT_REQUEST,
            Pdu::Response(_) => tag::RESPONSE,
            Pdu::SetRequest(_) => tag::SET_REQUEST,
            Pdu::GetBulkRequest(_) => tag::GET_BULK_REQUEST,
            Pdu::InformRequest(_) => tag::INFORM_REQUEST,
            Pdu::SnmpV2Trap(_) => tag::SNMPV2_TRAP,
            Pdu::Report(_) => tag::REPORT,
            Pdu::TrapV1(_) => tag::TRAP_V1,
        }
    }

    /// Confirmed class (RFC 3411 2.8): the PDUs a Response or Report
    /// answers.
    pub fn is_confirmed(&self) -> bool {
        matches!(
            self,
            Pdu::GetRequest(_)
                | Pdu::GetNextRequest(_)
                | Pdu::GetBulkRequest(_)
                | Pdu::SetRequest(_)
                | Pdu::InformRequest(_)
        )
    }

    /// The body of the PDU types with request-id, error-status,
    /// error-index and varbinds (all but GetBulk and the v1 Trap).
    pub fn body(&self) -> Option<&PduBody> {
        match self {
            Pdu::GetRequest(b)
            | Pdu::GetNextRequest(b)
            | Pdu::Response(b)
            | Pdu::SetRequest(b)
            | Pdu::InformRequest(b)
            | Pdu::SnmpV2Trap(b)
            | Pdu::Report(b) => Some(b),
            Pdu::GetBulkRequest(_) | Pdu::TrapV1(_) => None,
        }
    }

    /// The request-id, for every PDU type that has one.
    pub fn request_id(&self) -> Option<i32> {
        match self {
            Pdu::GetBulkRequest(b) => Some(b.request_id),
            Pdu::TrapV1(_) => None,
            other => other.body().map(|b| b.request_id),
        }
    }

    pub fn varbinds(&self) -> &[VarBind] {
        match (self, self.body()) {
            (_, Some(b)) => &b.varbinds,
            (Pdu::GetBulkRequest(b), _) => &b.varbinds,
            (Pdu::TrapV1(t), _) => &t.varbinds,
            _ => &[],
        }
    }

    /// Decodes one PDU TLV.
    pub fn decode(r: &mut Reader<'_>) -> Result<Pdu, BerError> {
        let (t, content) = r.read_tlv()?;
        let mut c = Reader::new(content);
        let pdu = match t {
            tag::TRAP_V1 => {
                let enterprise = c.read_oid()?;
                let a = c.read_expect(ber::tag::IP_ADDRESS)?;
                let agent_addr: [u8; 4] =
                    a.try_into().map_err(|_| BerError::BadIpAddress(a.len()))?;
                let generic_trap = c.read_i32()?;
                let specific_trap = c.read_i32()?;
                let time_stamp = c.read_u32(ber::tag::TIMETICKS)?;
                let varbinds = c.read_varbind_list()?;
                Pdu::TrapV1(TrapV1 {
                    enterprise,
                    agent_addr,
                    generic_trap,
                    specific_trap,
                    time_stamp,
                    varbinds,
                })
            }
            tag::GET_BULK_REQUEST => {
                let request_id = c.read_i32()?;
                let non_repeaters = c.read_i32()?;
                let max_repetitions = c.read_i32()?;
                let varbinds = c.read_varbind_list()?;
                Pdu::GetBulkRequest(BulkBody {
                    request_id,
                    non_repeaters,
                    max_repetitions,
                    varbinds,
                })
            }
            tag::GET_REQUEST
            | tag::GET_NEXT_REQUEST
            | tag::RESPONSE
            | tag::SET_REQUEST
            | tag::INFORM_REQUEST
            | tag::SNMPV2_TRAP
            | tag::REPORT => {
                let request_id = c.read_i32()?;
                let error_status = ErrorStatus::from_i32(c.read_i32()?);
                let error_index = c.read_i32()?;
                let varbinds = c.read_varbind_list()?;
                let b = PduBody {
                    request_id,
                    error_status,
                    error_index,
                    varbinds,
                };
                match t {
                    tag::GET_REQUEST => Pdu::GetRequest(b),
                    tag::GET_NEXT_REQUEST => Pdu::GetNextRequest(b),
                    tag::RESPONSE => Pdu::Response(b),
                    tag::SET_REQUEST => Pdu::SetRequest(b),
                    tag::INFORM_REQUEST => Pdu::InformRequest(b),
                    tag::SNMPV2_TRAP => Pdu::SnmpV2Trap(b),
                    _ => Pdu::Report(b),
                }
            }
            other => return Err(BerError::UnknownTag(other)),
        };
        c.finish()?;
        Ok(pdu)
    }

    /// Encodes the PDU TLV.
    pub fn encode(&self, e: &mut Encoder<'_>) {
        let m = e.begin(self.tag());
        if let Some(b) = self.body() {
            e.integer(i64::from(b.request_id));
            e.integer(i64::from(b.error_status.as_i32()));
            e.integer(i64::from(b.error_index));
            e.varbind_list(&b.varbinds);
        } else if let Pdu::GetBulkRequest(b) = self {
            e.integer(i64::from(b.request_id));
            e.integer(i64::from(b.non_repeaters));
            e.integer(i64::from(b.max_repetitions));
            e.varbind_list(&b.varbinds);
        } else if let Pdu::TrapV1(t) = self {
            e.oid(t.enterprise.as_slice());
            e.octets_tagged(ber::tag::IP_ADDRESS, &t.agent_addr);
            e.integer(i64::from(t.generic_trap));
            e.integer(i64::from(t.specific_trap));
            e.unsigned(ber::tag::TIMETICKS, u64::from(t.time_stamp));
            e.varbind_list(&t.varbinds);
        }
        e.end(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_status_roundtrip_and_v1_mapping() {
        for v in 0..=18 {
            let s = ErrorStatus::from_i32(v);
            assert!(!matches!(s, ErrorStatus::Unknown(_)));
            assert_eq!(s.as_i32(), v);
            assert!((0..=5).contains(&s.to_v1().as_i32()));
        }
        assert_eq!(ErrorStatus::NotWritable.to_v1(), ErrorStatus::NoSuchName);
        assert_eq!(ErrorStatus::WrongType.to_v1(), ErrorStatus::BadValue);
        assert_eq!(ErrorStatus::CommitFailed.to_v1(), ErrorStatus::GenErr);
        assert_eq!(ErrorStatus::from_i32(99), ErrorStatus::Unknown(99));
    }
}
