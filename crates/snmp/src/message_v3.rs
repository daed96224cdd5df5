//! SNMPv3 messages (RFC 3412 6) with USM security parameters (RFC 3414 2.4).
//!
//! ```text
//! SNMPv3Message ::= SEQUENCE { msgVersion INTEGER (3), msgGlobalData HeaderData,
//!     msgSecurityParameters OCTET STRING, msgData ScopedPduData }
//! HeaderData ::= SEQUENCE { msgID, msgMaxSize INTEGER, msgFlags OCTET STRING (1),
//!     msgSecurityModel INTEGER }
//! ScopedPduData ::= CHOICE { plaintext ScopedPDU, encryptedPDU OCTET STRING }
//! ScopedPDU ::= SEQUENCE { contextEngineID, contextName OCTET STRING, data PDU }
//! ```
//! The USM MAC covers the whole message with msgAuthenticationParameters
//! zeroed, so the decoder also returns where that field lies.

// Input path: bytes from the wire never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::ops::Range;

use crate::ber::{self, BerError, Encoder, Reader};
use crate::message::{DecodeError, SNMP_V3};
use crate::pdu::Pdu;

/// msgFlags bits.
pub mod flags {
    pub const AUTH: u8 = 0x01;
    pub const PRIV: u8 = 0x02;
    pub const REPORTABLE: u8 = 0x04;
}

/// The User-based Security Model's number (RFC 3411 SnmpSecurityModel).
pub const USM_SECURITY_MODEL: i64 = 3;

/// msgGlobalData.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderData {
    pub msg_id: i32,
    pub max_size: i32,
    pub flags: u8,
    pub security_model: i64,
}

/// UsmSecurityParameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsmParams {
    pub engine_id: Vec<u8>,
    pub engine_boots: i32,
    pub engine_time: i32,
    pub user_name: Vec<u8>,
    pub auth_params: Vec<u8>,
    pub priv_params: Vec<u8>,
}

/// A scopedPDU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopedPdu {
    pub context_engine_id: Vec<u8>,
    pub context_name: Vec<u8>,
    pub pdu: Pdu,
}

/// msgData.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopedPduData {
    Plain(ScopedPdu),
    Encrypted(Vec<u8>),
}

/// A decoded SNMPv3 message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct V3Message {
    pub header: HeaderData,
    pub usm: UsmParams,
    pub data: ScopedPduData,
}

/// Byte offset of `inner` within `outer` (both from the same buffer).
fn offset(outer: &[u8], inner: &[u8]) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize)
}

fn read_i32(r: &mut Reader<'_>) -> Result<i32, BerError> {
    r.read_i32()
}

impl ScopedPdu {
    /// Decodes a scopedPDU. Octets after it are ignored: they are the
    /// padding of a decrypted DES block (RFC 3414 8.1.1.2).
    pub fn decode(buf: &[u8]) -> Result<ScopedPdu, BerError> {
        let mut r = Reader::new(buf);
        let mut s = r.read_sequence()?;
        let context_engine_id = s.read_octets()?.to_vec();
        let context_name = s.read_octets()?.to_vec();
        let pdu = Pdu::decode(&mut s)?;
        s.finish()?;
        Ok(ScopedPdu {
            context_engine_id,
            context_name,
            pdu,
        })
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut e = Encoder::new(out);
        let m = e.begin(ber::tag::SEQUENCE);
        e.octets(&self.context_engine_id);
        e.octets(&self.context_name);
        self.pdu.encode(&mut e);
        e.end(m);
    }
}

impl V3Message {
    /// Decodes a whole datagram and returns the range of the
    /// msgAuthenticationParameters content within `buf`.
    pub fn decode(buf: &[u8]) -> Result<(V3Message, Range<usize>), DecodeError> {
        let mut r = Reader::new(buf);
        let mut s = r.read_sequence()?;
        r.finish()?;
        let v = s.read_i64()?;
        if v != SNMP_V3 {
            return Err(DecodeError::UnsupportedVersion(v));
        }
        let mut h = s.read_sequence()?;
        let msg_id = read_i32(&mut h)?;
        let max_size = read_i32(&mut h)?;
        let fl = h.read_octets()?;
        let security_model = h.read_i64()?;
        h.finish()?;
        let flags = match fl {
            [f] => *f,
            _ => return Err(DecodeError::Ber(BerError::TrailingData)),
        };
        if msg_id < 0 {
            return Err(DecodeError::OutOfRange("msgID"));
        }
        if max_size < 484 {
            return Err(DecodeError::OutOfRange("msgMaxSize"));
        }
        let sp = s.read_octets()?;
        let (usm, auth_range) = if security_model == USM_SECURITY_MODEL {
            let mut u = Reader::new(sp);
            let mut q = u.read_sequence()?;
            u.finish()?;
            let engine_id = q.read_octets()?.to_vec();
            let engine_boots = read_i32(&mut q)?;
            let engine_time = read_i32(&mut q)?;
            let user_name = q.read_octets()?.to_vec();
            let ap = q.read_octets()?;
            let range = offset(buf, ap)..offset(buf, ap) + ap.len();
            let priv_params = q.read_octets()?.to_vec();
            q.finish()?;
            // RFC 3414 2.4 UsmSecurityParameters; an engine ID is 5..32
            // octets (RFC 3411 SnmpEngineID), or empty in a discovery probe.
            if engine_id.len() > 32 || (1..5).contains(&engine_id.len()) {
                return Err(DecodeError::OutOfRange("msgAuthoritativeEngineID"));
            }
            if engine_boots < 0 {
                return Err(DecodeError::OutOfRange("msgAuthoritativeEngineBoots"));
            }
            if engine_time < 0 {
                return Err(DecodeError::OutOfRange("msgAuthoritativeEngineTime"));
            }
            if user_name.len() > 32 {
                return Err(DecodeError::OutOfRange("msgUserName"));
            }
            (
                UsmParams {
                    engine_id,
                    engine_boots,
                    engine_time,
                    user_name,
                    auth_params: ap.to_vec(),
                    priv_params,
                },
                range,
            )
        } else {
            (UsmParams::default(), 0..0)
        };
        let data = if s.peek_tag() == Some(ber::tag::OCTET_STRING) {
            ScopedPduData::Encrypted(s.read_octets()?.to_vec())
        } else {
            let (t, c) = s.read_tlv()?;
            if t != ber::tag::SEQUENCE {
                return Err(DecodeError::Ber(BerError::TrailingData));
            }
            // Re-read with the header: ScopedPdu::decode wants the TLV.
            let whole = buf
                .get(offset(buf, c).saturating_sub(ber::tlv_len(c.len()) - c.len())..)
                .unwrap_or(&[]);
            ScopedPduData::Plain(ScopedPdu::decode(whole)?)
        };
        s.finish()?;
        Ok((
            V3Message {
                header: HeaderData {
                    msg_id,
                    max_size,
                    flags,
                    security_model,
                },
                usm,
                data,
            },
            auth_range,
        ))
    }

    /// Appends the encoded message to `out` and returns the range of the
    /// msgAuthenticationParameters content in `out` (to fill in the MAC).
    pub fn encode(&self, out: &mut Vec<u8>) -> Range<usize> {
        let start = out.len();
        let mut sp = Vec::with_capacity(96);
        {
            let mut e = Encoder::new(&mut sp);
            let m = e.begin(ber::tag::SEQUENCE);
            e.octets(&self.usm.engine_id);
            e.integer(i64::from(self.usm.engine_boots));
            e.integer(i64::from(self.usm.engine_time));
            e.octets(&self.usm.user_name);
            e.octets(&self.usm.auth_params);
            e.octets(&self.usm.priv_params);
            e.end(m);
        }
        let mut e = Encoder::new(out);
        let m = e.begin(ber::tag::SEQUENCE);
        e.integer(SNMP_V3);
        let h = e.begin(ber::tag::SEQUENCE);
        e.integer(i64::from(self.header.msg_id));
        e.integer(i64::from(self.header.max_size));
        e.octets(&[self.header.flags]);
        e.integer(self.header.security_model);
        e.end(h);
        e.octets(&sp);
        match &self.data {
            ScopedPduData::Plain(p) => {
                let sp = e.begin(ber::tag::SEQUENCE);
                e.octets(&p.context_engine_id);
                e.octets(&p.context_name);
                p.pdu.encode(&mut e);
                e.end(sp);
                e.end(m);
            }
            ScopedPduData::Encrypted(c) => {
                e.octets(c);
                e.end(m);
            }
        }
        // Locate the field by decoding what was written (cheap, and immune
        // to the length fix-ups of the encoder).
        let written = out.get(start..).unwrap_or(&[]);
        match V3Message::decode(written) {
            Ok((_, r)) => r.start + start..r.end + start,
            Err(_) => 0..0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::PduBody;
    use crate::value::{Value, VarBind};

    fn sample(data: ScopedPduData) -> V3Message {
        V3Message {
            header: HeaderData {
                msg_id: 77,
                max_size: 65507,
                flags: flags::AUTH | flags::REPORTABLE,
                security_model: USM_SECURITY_MODEL,
            },
            usm: UsmParams {
                engine_id: vec![0x80, 0, 0x1f, 0x88, 4, b'x'],
                engine_boots: 3,
                engine_time: 1000,
                user_name: b"ops".to_vec(),
                auth_params: vec![0; 12],
                priv_params: vec![],
            },
            data,
        }
    }

    #[test]
    fn round_trip_plain_and_encrypted() {
        let pdu = Pdu::GetRequest(PduBody::request(
            5,
            vec![VarBind::new(
                vec![1, 3, 6, 1, 2, 1, 1, 1, 0].into(),
                Value::Null,
            )],
        ));
        let m = sample(ScopedPduData::Plain(ScopedPdu {
            context_engine_id: vec![1, 2],
            context_name: vec![],
            pdu,
        }));
        let mut out = vec![];
        let r = m.encode(&mut out);
        assert_eq!(r.len(), 12);
        let (d, r2) = V3Message::decode(&out).unwrap();
        assert_eq!(d, m);
        assert_eq!(r, r2);
        let m = sample(ScopedPduData::Encrypted(vec![9; 300]));
        let mut out = vec![];
        m.encode(&mut out);
        assert_eq!(V3Message::decode(&out).unwrap().0, m);
        // Every truncation fails cleanly.
        for n in 0..out.len() {
            assert!(V3Message::decode(&out[..n]).is_err());
        }
    }

    /// Values outside RFC 3414's ranges are refused, not taken in.
    #[test]
    fn usm_fields_out_of_range_are_refused() {
        let base = || sample(ScopedPduData::Encrypted(vec![1, 2, 3]));
        let refused = |m: V3Message, field: &str| {
            let mut out = Vec::new();
            m.encode(&mut out);
            match V3Message::decode(&out) {
                Err(DecodeError::OutOfRange(f)) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        };
        let mut m = base();
        m.usm.user_name = vec![b'u'; 33];
        refused(m, "msgUserName");
        let mut m = base();
        m.usm.engine_boots = -1;
        refused(m, "msgAuthoritativeEngineBoots");
        let mut m = base();
        m.usm.engine_time = i32::MIN;
        refused(m, "msgAuthoritativeEngineTime");
        let mut m = base();
        m.usm.engine_id = vec![1; 33];
        refused(m, "msgAuthoritativeEngineID");
        let mut m = base();
        m.usm.engine_id = vec![1; 4];
        refused(m, "msgAuthoritativeEngineID");
        let mut m = base();
        m.header.msg_id = -5;
        refused(m, "msgID");
        // The limits themselves are fine.
        let mut m = base();
        m.usm.user_name = vec![b'u'; 32];
        m.usm.engine_id = vec![1; 32];
        let mut out = Vec::new();
        m.encode(&mut out);
        assert!(V3Message::decode(&out).is_ok());
    }

    /// A discovery probe laid out as net-snmp sends it (empty engine ID and user).
    #[test]
    fn decode_net_snmp_probe() {
        let probe: &[u8] = &[
            0x30, 0x3a, 0x02, 0x01, 0x03, 0x30, 0x0f, 0x02, 0x02, 0x4a, 0x69, 0x02, 0x03, 0x00,
            0xff, 0xe3, 0x04, 0x01, 0x04, 0x02, 0x01, 0x03, 0x04, 0x10, 0x30, 0x0e, 0x04, 0x00,
            0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x30, 0x12,
            0x04, 0x00, 0x04, 0x00, 0xa0, 0x0c, 0x02, 0x02, 0x37, 0xf0, 0x02, 0x01, 0x00, 0x02,
            0x01, 0x00, 0x30, 0x00,
        ];
        let (m, _) = V3Message::decode(probe).unwrap();
        assert_eq!(m.header.flags, flags::REPORTABLE);
        assert!(m.usm.engine_id.is_empty());
        assert!(matches!(m.data, ScopedPduData::Plain(_)));
    }
}
