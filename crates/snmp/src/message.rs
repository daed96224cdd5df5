//! Community-based SNMP messages (SNMPv1, RFC 1157; SNMPv2c, RFC 1901).
//!
//! `Message ::= SEQUENCE { version INTEGER, community OCTET STRING, data PDU }`.
//! SNMPv3 (version 3) has a different layout after the version field:
//! [`peek_version`] tells the engine which decoder a datagram goes to
//! ([`crate::message_v3`] for v3), and this one answers
//! [`DecodeError::UnsupportedVersion`] for any version it does not decode.

// Input path: bytes from the wire or files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use crate::ber::{self, BerError, Encoder, Reader};
use crate::pdu::Pdu;

/// Community-based SNMP versions (the wire value is `self as i64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    V1 = 0,
    V2c = 1,
}

/// The wire value of SNMPv3's msgVersion.
pub const SNMP_V3: i64 = 3;

impl Version {
    pub fn from_wire(v: i64) -> Option<Version> {
        match v {
            0 => Some(Version::V1),
            1 => Some(Version::V2c),
            _ => None,
        }
    }
    pub fn wire(self) -> i64 {
        self as i64
    }
}

/// Why a datagram is not a usable SNMP message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Malformed BER (counted as snmpInASNParseErrs).
    #[error("malformed message: {0}")]
    Ber(#[from] BerError),
    /// Well-formed header with a version this agent does not speak
    /// (counted as snmpInBadVersions when no decoder takes it). SNMPv3
    /// messages are decoded by [`crate::message_v3`].
    #[error("unsupported SNMP version {0}")]
    UnsupportedVersion(i64),
    /// A PDU type that the message's version does not define (e.g. GetBulk
    /// in SNMPv1, or a v1 Trap in SNMPv2c).
    #[error("PDU type 0x{tag:02x} is not valid in {version:?}")]
    PduNotInVersion { version: Version, tag: u8 },
    /// Well-formed BER, but a field outside the range its ASN.1 allows
    /// (RFC 3412/3414: msgID, msgMaxSize, engine boots and time, user
    /// name and engine ID lengths); counted as snmpInASNParseErrs.
    #[error("{0} out of range")]
    OutOfRange(&'static str),
}

impl DecodeError {
    /// True when the agent should count snmpInBadVersions rather than
    /// snmpInASNParseErrs.
    pub fn is_bad_version(&self) -> bool {
        matches!(self, DecodeError::UnsupportedVersion(_))
    }
}

/// A community-based SNMP message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub version: Version,
    pub community: Vec<u8>,
    pub pdu: Pdu,
}

/// Reads the outer SEQUENCE and the version field only (any version).
pub fn peek_version(buf: &[u8]) -> Result<i64, DecodeError> {
    let mut r = Reader::new(buf);
    let mut s = r.read_sequence()?;
    Ok(s.read_i64()?)
}

impl Message {
    /// Decodes a whole datagram. Never panics; trailing bytes are an error.
    pub fn decode(buf: &[u8]) -> Result<Message, DecodeError> {
        let mut r = Reader::new(buf);
        let mut s = r.read_sequence()?;
        r.finish()?;
        let v = s.read_i64()?;
        let version = match Version::from_wire(v) {
            Some(version) => version,
            // SNMP_V3 is the seam for the v3 message processing model.
            None => return Err(DecodeError::UnsupportedVersion(v)),
        };
        let community = s.read_octets()?.to_vec();
        let pdu = Pdu::decode(&mut s)?;
        s.finish()?;
        let tag = pdu.tag();
        let ok = match version {
            Version::V1 => !matches!(
                pdu,
                Pdu::GetBulkRequest(_)
                    | Pdu::InformRequest(_)
                    | Pdu::SnmpV2Trap(_)
                    | Pdu::Report(_)
            ),
            Version::V2c => !matches!(pdu, Pdu::TrapV1(_)),
        };
        if !ok {
            return Err(DecodeError::PduNotInVersion { version, tag });
        }
        Ok(Message {
            version,
            community,
            pdu,
        })
    }

    /// Appends the encoded message to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut e = Encoder::new(out);
        let m = e.begin(ber::tag::SEQUENCE);
        e.integer(self.version.wire());
        e.octets(&self.community);
        self.pdu.encode(&mut e);
        e.end(m);
    }

    /// The encoded message as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        self.encode(&mut out);
        out
    }
}

/// Octets a response message with `community` and `request_id` needs beyond
/// the content of its VarBindList, counting the largest length fields the
/// message can need when the whole message stays under 16 MiB. Use it to
/// turn a maximum message size into a varbind budget.
pub fn response_overhead(community_len: usize, request_id: i32) -> usize {
    // Outer SEQUENCE, PDU and VarBindList headers: tag + up to 4 length octets.
    let headers = 3 * 5;
    let version = 3;
    let community = ber::tlv_len(community_len);
    let rid = ber::tlv_len(ber::i64_content_len(i64::from(request_id)));
    // error-status and error-index: small non-negative integers (index <= 2^31).
    let err = 3 + 6;
    headers + version + community + rid + err
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{BulkBody, ErrorStatus, PduBody};
    use crate::value::{Value, VarBind};

    /// `snmpget -v2c -c public host sysDescr.0` as captured from net-snmp.
    const GET_SYSDESCR: &[u8] = &[
        0x30, 0x29, 0x02, 0x01, 0x01, 0x04, 0x06, b'p', b'u', b'b', b'l', b'i', b'c', 0xa0, 0x1c,
        0x02, 0x04, 0x12, 0x34, 0x56, 0x78, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x0e, 0x30,
        0x0c, 0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x01, 0x00, 0x05, 0x00,
    ];

    #[test]
    fn decode_known_get() {
        let m = Message::decode(GET_SYSDESCR).unwrap();
        assert_eq!(m.version, Version::V2c);
        assert_eq!(m.community, b"public");
        let Pdu::GetRequest(b) = &m.pdu else {
            panic!("not a get")
        };
        assert_eq!(b.request_id, 0x12345678);
        assert_eq!(b.varbinds.len(), 1);
        assert_eq!(b.varbinds[0].oid.to_string(), "1.3.6.1.2.1.1.1.0");
        assert_eq!(b.varbinds[0].value, Value::Null);
        assert_eq!(m.to_bytes(), GET_SYSDESCR);
    }

    #[test]
    fn versions() {
        let mut v3 = GET_SYSDESCR.to_vec();
        v3[4] = 3;
        assert_eq!(
            Message::decode(&v3),
            Err(DecodeError::UnsupportedVersion(3))
        );
        assert_eq!(peek_version(&v3).unwrap(), 3);
        let bulk = Message {
            version: Version::V1,
            community: b"x".to_vec(),
            pdu: Pdu::GetBulkRequest(BulkBody {
                request_id: 1,
                non_repeaters: 0,
                max_repetitions: 10,
                varbinds: vec![],
            }),
        };
        assert!(matches!(
            Message::decode(&bulk.to_bytes()),
            Err(DecodeError::PduNotInVersion { .. })
        ));
    }

    #[test]
    fn trailing_garbage_rejected() {
        let mut b = GET_SYSDESCR.to_vec();
        b.push(0);
        assert!(Message::decode(&b).is_err());
    }

    #[test]
    fn overhead_is_an_upper_bound() {
        for (clen, rid, nvb) in [(6, 1, 0), (0, i32::MIN, 1), (200, i32::MAX, 3000)] {
            let vbs: Vec<VarBind> = (0..nvb)
                .map(|i| VarBind::new(vec![1, 3, 6, 1, i].into(), Value::Counter64(u64::MAX)))
                .collect();
            let content: usize = vbs.iter().map(ber::varbind_len).sum();
            let m = Message {
                version: Version::V2c,
                community: vec![b'a'; clen],
                pdu: Pdu::Response(PduBody {
                    request_id: rid,
                    error_status: ErrorStatus::InconsistentName,
                    error_index: nvb as i32,
                    varbinds: vbs,
                }),
            };
            let n = m.to_bytes().len();
            assert!(n <= content + response_overhead(clen, rid));
            assert!(n + 12 >= content + response_overhead(clen, rid));
        }
    }
}
