//! AgentX PDUs (RFC 2741 section 6) as typed structs, with pure encode and
//! decode over byte slices.
//!
//! A subagent may send in either byte order (the header's
//! NETWORK_BYTE_ORDER flag says which): [`Pdu::encode`] always sends network
//! order, [`Pdu::decode`] reads both. Decoding never panics: a short or
//! inconsistent packet is a [`DecodeError`], which a session answers with a
//! parseError Close (RFC 2741 7.1.2).

// Input path: bytes from the master never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use crate::oid::Oid;
use crate::value::{Value, VarBind};

/// The AgentX protocol version (RFC 2741).
pub const VERSION: u8 = 1;
/// Octets of the fixed header.
pub const HEADER_LEN: usize = 20;
/// The OID prefix `n` in an encoded OID stands for 1.3.6.1.n.
const INTERNET: [u32; 4] = [1, 3, 6, 1];

/// Header flags (RFC 2741 6.1).
pub mod flags {
    pub const INSTANCE_REGISTRATION: u8 = 0x01;
    pub const NEW_INDEX: u8 = 0x02;
    pub const ANY_INDEX: u8 = 0x04;
    pub const NON_DEFAULT_CONTEXT: u8 = 0x08;
    pub const NETWORK_BYTE_ORDER: u8 = 0x10;
}

/// Response error codes (RFC 2741 6.2.16) beyond the SNMP error-status values.
pub mod error {
    use crate::pdu::ErrorStatus;

    pub const NO_AGENTX_ERROR: u16 = 0;
    /// The SNMP error-status values a Response to CommitSet and UndoSet
    /// carries (RFC 2741 7.2.4.2, RFC 3416): commitFailed, undoFailed.
    pub const COMMIT_FAILED: u16 = ErrorStatus::CommitFailed.as_i32() as u16;
    pub const UNDO_FAILED: u16 = ErrorStatus::UndoFailed.as_i32() as u16;
    pub const OPEN_FAILED: u16 = 256;
    pub const NOT_OPEN: u16 = 257;
    pub const INDEX_WRONG_TYPE: u16 = 258;
    pub const INDEX_ALREADY_ALLOCATED: u16 = 259;
    pub const INDEX_NONE_AVAILABLE: u16 = 260;
    pub const INDEX_NOT_ALLOCATED: u16 = 261;
    pub const UNSUPPORTED_CONTEXT: u16 = 262;
    pub const DUPLICATE_REGISTRATION: u16 = 263;
    pub const UNKNOWN_REGISTRATION: u16 = 264;
    pub const UNKNOWN_AGENT_CAPS: u16 = 265;
    pub const PARSE_ERROR: u16 = 266;
    pub const REQUEST_DENIED: u16 = 267;
    pub const PROCESSING_ERROR: u16 = 268;
}

/// Close-PDU reasons (RFC 2741 6.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    Other = 1,
    ParseError = 2,
    ProtocolError = 3,
    Timeouts = 4,
    Shutdown = 5,
    ByManager = 6,
}

impl CloseReason {
    fn from_wire(b: u8) -> CloseReason {
        match b {
            2 => CloseReason::ParseError,
            3 => CloseReason::ProtocolError,
            4 => CloseReason::Timeouts,
            5 => CloseReason::Shutdown,
            6 => CloseReason::ByManager,
            _ => CloseReason::Other,
        }
    }
}

/// Why a packet could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("packet shorter than its {0}")]
    Short(&'static str),
    #[error("AgentX version {0} (only 1 is spoken)")]
    Version(u8),
    #[error("unknown PDU type {0}")]
    UnknownType(u8),
    #[error("unknown varbind type {0}")]
    UnknownValueType(u16),
    #[error("OID with {0} sub-identifiers (at most 128)")]
    OidTooLong(u8),
    #[error("payload length {0} is not a multiple of 4")]
    Unaligned(u32),
}

/// The fixed header of every PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Header {
    pub flags: u8,
    pub session_id: u32,
    pub transaction_id: u32,
    pub packet_id: u32,
}

/// A request's search range (RFC 2741 5.2): from `start` (itself included when
/// `include`) up to, not including, `end` (empty: no bound).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchRange {
    pub start: Oid,
    pub include: bool,
    pub end: Oid,
}

/// A registration's subtree (RFC 2741 6.2.3): `subtree`, or with `range_subid`
/// set, the range of OIDs whose sub-identifier `range_subid` (1-based) runs from
/// the subtree's up to `upper_bound`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub timeout: u8,
    pub priority: u8,
    pub range_subid: u8,
    pub subtree: Oid,
    pub upper_bound: Option<u32>,
}

/// The PDUs a subagent sends or receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    Open {
        timeout: u8,
        id: Oid,
        descr: Vec<u8>,
    },
    Close(CloseReason),
    Register(Region),
    Unregister(Region),
    Get(Vec<SearchRange>),
    GetNext(Vec<SearchRange>),
    GetBulk {
        non_repeaters: u16,
        max_repetitions: u16,
        ranges: Vec<SearchRange>,
    },
    TestSet(Vec<VarBind>),
    CommitSet,
    UndoSet,
    CleanupSet,
    Notify(Vec<VarBind>),
    Ping,
    IndexAllocate(Vec<VarBind>),
    IndexDeallocate(Vec<VarBind>),
    AddAgentCaps {
        id: Oid,
        descr: Vec<u8>,
    },
    RemoveAgentCaps(Oid),
    Response {
        sys_up_time: u32,
        error: u16,
        index: u16,
        varbinds: Vec<VarBind>,
    },
}

impl Body {
    /// The PDU type octet (RFC 2741 6.1).
    pub fn kind(&self) -> u8 {
        match self {
            Body::Open { .. } => 1,
            Body::Close(_) => 2,
            Body::Register(_) => 3,
            Body::Unregister(_) => 4,
            Body::Get(_) => 5,
            Body::GetNext(_) => 6,
            Body::GetBulk { .. } => 7,
            Body::TestSet(_) => 8,
            Body::CommitSet => 9,
            Body::UndoSet => 10,
            Body::CleanupSet => 11,
            Body::Notify(_) => 12,
            Body::Ping => 13,
            Body::IndexAllocate(_) => 14,
            Body::IndexDeallocate(_) => 15,
            Body::AddAgentCaps { .. } => 16,
            Body::RemoveAgentCaps(_) => 17,
            Body::Response { .. } => 18,
        }
    }

    /// PDUs that carry a context when NON_DEFAULT_CONTEXT is set.
    fn has_context(kind: u8) -> bool {
        matches!(kind, 3..=8 | 12..=17)
    }
}

/// One AgentX PDU: header, optional non-default context, body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pdu {
    pub header: Header,
    /// The SNMP context, when not the default one.
    pub context: Option<Vec<u8>>,
    pub body: Body,
}

/// How many octets the payload of a PDU whose header is `head` holds, or None
/// when `head` is shorter than a header. Lets a stream reader know how much to
/// wait for.
pub fn payload_len(head: &[u8]) -> Option<usize> {
    let h: &[u8; HEADER_LEN] = head.get(..HEADER_LEN)?.try_into().ok()?;
    let len = [h[16], h[17], h[18], h[19]];
    let n = if h[2] & flags::NETWORK_BYTE_ORDER != 0 {
        u32::from_be_bytes(len)
    } else {
        u32::from_le_bytes(len)
    };
    usize::try_from(n).ok()
}

// ----- decoding --------------------------------------------------------------

struct Reader<'a> {
    buf: &'a [u8],
    big_endian: bool,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.buf.len() < n {
            return Err(DecodeError::Short(what));
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?.first().copied().unwrap_or(0))
    }
    /// `N` octets in the session's byte order (RFC 2741 6.1 NETWORK_BYTE_ORDER):
    /// `be`/`le` are the integer type's `from_be_bytes`/`from_le_bytes`.
    fn int<const N: usize, T>(
        &mut self,
        what: &'static str,
        be: fn([u8; N]) -> T,
        le: fn([u8; N]) -> T,
    ) -> Result<T, DecodeError> {
        let b: [u8; N] = self
            .take(N, what)?
            .try_into()
            .map_err(|_| DecodeError::Short(what))?;
        Ok(if self.big_endian { be(b) } else { le(b) })
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        self.int(what, u16::from_be_bytes, u16::from_le_bytes)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        self.int(what, u32::from_be_bytes, u32::from_le_bytes)
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let hi = u64::from(self.u32(what)?);
        let lo = u64::from(self.u32(what)?);
        Ok(if self.big_endian {
            hi << 32 | lo
        } else {
            lo << 32 | hi
        })
    }
    /// An OID and its `include` octet.
    fn oid(&mut self) -> Result<(Oid, bool), DecodeError> {
        let n = self.u8("OID header")?;
        let prefix = self.u8("OID header")?;
        let include = self.u8("OID header")? != 0;
        self.u8("OID header")?;
        if n > 128 {
            return Err(DecodeError::OidTooLong(n));
        }
        let mut v = Vec::with_capacity(usize::from(n) + 5);
        if prefix != 0 {
            v.extend_from_slice(&INTERNET);
            v.push(u32::from(prefix));
        }
        for _ in 0..n {
            v.push(self.u32("OID")?);
        }
        Ok((Oid::new(v), include))
    }
    fn octets(&mut self) -> Result<Vec<u8>, DecodeError> {
        let n = self.u32("octet string length")? as usize;
        let data = self.take(n, "octet string")?.to_vec();
        self.take((4 - n % 4) % 4, "octet string padding")?;
        Ok(data)
    }
    fn search_ranges(&mut self) -> Result<Vec<SearchRange>, DecodeError> {
        let mut v = Vec::new();
        while !self.buf.is_empty() {
            let (start, include) = self.oid()?;
            let (end, _) = self.oid()?;
            v.push(SearchRange {
                start,
                include,
                end,
            });
        }
        Ok(v)
    }
    fn value(&mut self, t: u16) -> Result<Value, DecodeError> {
        Ok(match t {
            2 => Value::Integer(self.u32("Integer")? as i32),
            4 => Value::OctetString(self.octets()?),
            5 => Value::Null,
            6 => Value::ObjectId(self.oid()?.0),
            64 => {
                let b = self.octets()?;
                let a: [u8; 4] = b
                    .as_slice()
                    .try_into()
                    .map_err(|_| DecodeError::Short("IpAddress"))?;
                Value::IpAddress(a)
            }
            65 => Value::Counter32(self.u32("Counter32")?),
            66 => Value::Gauge32(self.u32("Gauge32")?),
            67 => Value::TimeTicks(self.u32("TimeTicks")?),
            68 => Value::Opaque(self.octets()?),
            70 => Value::Counter64(self.u64("Counter64")?),
            128 => Value::NoSuchObject,
            129 => Value::NoSuchInstance,
            130 => Value::EndOfMibView,
            t => return Err(DecodeError::UnknownValueType(t)),
        })
    }
    fn varbinds(&mut self) -> Result<Vec<VarBind>, DecodeError> {
        let mut v = Vec::new();
        while !self.buf.is_empty() {
            let t = self.u16("varbind type")?;
            self.u16("varbind type")?;
            let (oid, _) = self.oid()?;
            let value = self.value(t)?;
            v.push(VarBind::new(oid, value));
        }
        Ok(v)
    }
    fn region(&mut self, register: bool) -> Result<Region, DecodeError> {
        let timeout = self.u8("region")?;
        let priority = self.u8("region")?;
        let range_subid = self.u8("region")?;
        self.u8("region")?;
        let (subtree, _) = self.oid()?;
        let upper_bound = if range_subid != 0 {
            Some(self.u32("upper bound")?)
        } else {
            None
        };
        Ok(Region {
            timeout: if register { timeout } else { 0 },
            priority,
            range_subid,
            subtree,
            upper_bound,
        })
    }
}

impl Pdu {
    /// Decodes one whole PDU (header and exactly its payload).
    pub fn decode(buf: &[u8]) -> Result<Pdu, DecodeError> {
        let head = buf.get(..HEADER_LEN).ok_or(DecodeError::Short("header"))?;
        let (&version, rest) = head.split_first().ok_or(DecodeError::Short("header"))?;
        if version != VERSION {
            return Err(DecodeError::Version(version));
        }
        let kind = rest.first().copied().unwrap_or(0);
        let fl = rest.get(1).copied().unwrap_or(0);
        let mut r = Reader {
            buf: head.get(4..).unwrap_or(&[]),
            big_endian: fl & flags::NETWORK_BYTE_ORDER != 0,
        };
        let header = Header {
            flags: fl,
            session_id: r.u32("header")?,
            transaction_id: r.u32("header")?,
            packet_id: r.u32("header")?,
        };
        let len = r.u32("header")?;
        if len % 4 != 0 {
            return Err(DecodeError::Unaligned(len));
        }
        let payload = buf
            .get(HEADER_LEN..HEADER_LEN + len as usize)
            .ok_or(DecodeError::Short("payload"))?;
        let mut r = Reader {
            buf: payload,
            big_endian: r.big_endian,
        };
        let context = if fl & flags::NON_DEFAULT_CONTEXT != 0 && Body::has_context(kind) {
            Some(r.octets()?)
        } else {
            None
        };
        let body = match kind {
            1 => {
                let timeout = r.u8("Open")?;
                r.take(3, "Open")?;
                let (id, _) = r.oid()?;
                Body::Open {
                    timeout,
                    id,
                    descr: r.octets()?,
                }
            }
            2 => {
                let reason = CloseReason::from_wire(r.u8("Close")?);
                r.take(3, "Close")?;
                Body::Close(reason)
            }
            3 => Body::Register(r.region(true)?),
            4 => Body::Unregister(r.region(false)?),
            5 => Body::Get(r.search_ranges()?),
            6 => Body::GetNext(r.search_ranges()?),
            7 => Body::GetBulk {
                non_repeaters: r.u16("GetBulk")?,
                max_repetitions: r.u16("GetBulk")?,
                ranges: r.search_ranges()?,
            },
            8 => Body::TestSet(r.varbinds()?),
            9 => Body::CommitSet,
            10 => Body::UndoSet,
            11 => Body::CleanupSet,
            12 => Body::Notify(r.varbinds()?),
            13 => Body::Ping,
            14 => Body::IndexAllocate(r.varbinds()?),
            15 => Body::IndexDeallocate(r.varbinds()?),
            16 => {
                let (id, _) = r.oid()?;
                Body::AddAgentCaps {
                    id,
                    descr: r.octets()?,
                }
            }
            17 => Body::RemoveAgentCaps(r.oid()?.0),
            18 => Body::Response {
                sys_up_time: r.u32("Response")?,
                error: r.u16("Response")?,
                index: r.u16("Response")?,
                varbinds: r.varbinds()?,
            },
            k => return Err(DecodeError::UnknownType(k)),
        };
        Ok(Pdu {
            header,
            context,
            body,
        })
    }

    /// Encodes the PDU in network byte order.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(64));
        if let Some(c) = &self.context {
            if Body::has_context(self.body.kind()) {
                w.octets(c);
            }
        }
        match &self.body {
            Body::Open { timeout, id, descr } => {
                w.0.extend_from_slice(&[*timeout, 0, 0, 0]);
                w.oid(id.as_slice(), false);
                w.octets(descr);
            }
            Body::Close(reason) => w.0.extend_from_slice(&[*reason as u8, 0, 0, 0]),
            Body::Register(g) | Body::Unregister(g) => {
                let first = if matches!(self.body, Body::Register(_)) {
                    g.timeout
                } else {
                    0
                };
                w.0.extend_from_slice(&[first, g.priority, g.range_subid, 0]);
                w.oid(g.subtree.as_slice(), false);
                if let (true, Some(ub)) = (g.range_subid != 0, g.upper_bound) {
                    w.u32(ub);
                }
            }
            Body::Get(ranges) | Body::GetNext(ranges) => w.ranges(ranges),
            Body::GetBulk {
                non_repeaters,
                max_repetitions,
                ranges,
            } => {
                w.u16(*non_repeaters);
                w.u16(*max_repetitions);
                w.ranges(ranges);
            }
            Body::TestSet(vbs)
            | Body::Notify(vbs)
            | Body::IndexAllocate(vbs)
            | Body::IndexDeallocate(vbs) => w.varbinds(vbs),
            Body::CommitSet | Body::UndoSet | Body::CleanupSet | Body::Ping => {}
            Body::AddAgentCaps { id, descr } => {
                w.oid(id.as_slice(), false);
                w.octets(descr);
            }
            Body::RemoveAgentCaps(id) => w.oid(id.as_slice(), false),
            Body::Response {
                sys_up_time,
                error,
                index,
                varbinds,
            } => {
                w.u32(*sys_up_time);
                w.u16(*error);
                w.u16(*index);
                w.varbinds(varbinds);
            }
        }
        let payload = w.0;
        let mut fl = (self.header.flags | flags::NETWORK_BYTE_ORDER) & !flags::NON_DEFAULT_CONTEXT;
        if self.context.is_some() && Body::has_context(self.body.kind()) {
            fl |= flags::NON_DEFAULT_CONTEXT;
        }
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(&[VERSION, self.body.kind(), fl, 0]);
        out.extend_from_slice(&self.header.session_id.to_be_bytes());
        out.extend_from_slice(&self.header.transaction_id.to_be_bytes());
        out.extend_from_slice(&self.header.packet_id.to_be_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(&payload);
        out
    }
}

// ----- encoding --------------------------------------------------------------

struct Writer(Vec<u8>);

impl Writer {
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    /// An OID, compressed with the 1.3.6.1.n prefix where it applies.
    fn oid(&mut self, s: &[u32], include: bool) {
        let (prefix, rest) = match s {
            [1, 3, 6, 1, n, rest @ ..] if (1..=255).contains(n) => (*n as u8, rest),
            _ => (0, s),
        };
        // More than 128 sub-identifiers is not a valid OID (RFC 2578 3.5); never
        // produced by this agent's MIBs. Truncate rather than emit garbage.
        let rest = rest.get(..128).unwrap_or(rest);
        self.0
            .extend_from_slice(&[rest.len() as u8, prefix, u8::from(include), 0]);
        for &x in rest {
            self.u32(x);
        }
    }
    fn octets(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
        self.0.resize(self.0.len() + (4 - b.len() % 4) % 4, 0);
    }
    fn ranges(&mut self, ranges: &[SearchRange]) {
        for r in ranges {
            self.oid(r.start.as_slice(), r.include);
            self.oid(r.end.as_slice(), false);
        }
    }
    fn varbinds(&mut self, vbs: &[VarBind]) {
        for vb in vbs {
            let t: u16 = match &vb.value {
                Value::Integer(_) => 2,
                Value::OctetString(_) => 4,
                Value::Null => 5,
                Value::ObjectId(_) => 6,
                Value::IpAddress(_) => 64,
                Value::Counter32(_) => 65,
                Value::Gauge32(_) => 66,
                Value::TimeTicks(_) => 67,
                Value::Opaque(_) => 68,
                Value::Counter64(_) => 70,
                Value::NoSuchObject => 128,
                Value::NoSuchInstance => 129,
                Value::EndOfMibView => 130,
            };
            self.u16(t);
            self.u16(0);
            self.oid(vb.oid.as_slice(), false);
            match &vb.value {
                Value::Integer(i) => self.u32(*i as u32),
                Value::OctetString(b) | Value::Opaque(b) => self.octets(b),
                Value::ObjectId(o) => self.oid(o.as_slice(), false),
                Value::IpAddress(a) => self.octets(a),
                Value::Counter32(v) | Value::Gauge32(v) | Value::TimeTicks(v) => self.u32(*v),
                Value::Counter64(v) => {
                    self.u32((*v >> 32) as u32);
                    self.u32(*v as u32);
                }
                Value::Null | Value::NoSuchObject | Value::NoSuchInstance | Value::EndOfMibView => {
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn oid(s: &str) -> Oid {
        s.parse().unwrap()
    }

    fn round_trip(p: Pdu) {
        let bytes = p.encode();
        assert_eq!(payload_len(&bytes), Some(bytes.len() - HEADER_LEN));
        let mut back = Pdu::decode(&bytes).unwrap();
        back.header.flags &= !flags::NETWORK_BYTE_ORDER;
        let mut want = p;
        want.header.flags &= !(flags::NETWORK_BYTE_ORDER | flags::NON_DEFAULT_CONTEXT);
        back.header.flags &= !flags::NON_DEFAULT_CONTEXT;
        assert_eq!(back, want);
    }

    #[test]
    fn every_pdu_round_trips() {
        let h = Header {
            flags: 0,
            session_id: 7,
            transaction_id: 9,
            packet_id: 11,
        };
        let vbs = vec![
            VarBind::new(oid("1.3.6.1.3.117.1.4.1.3.0"), Value::Integer(-5)),
            VarBind::new(oid("1.2.3"), Value::OctetString(b"abcde".to_vec())),
            VarBind::new(
                oid("1.3.6.1.2.1.1.2.0"),
                Value::ObjectId(oid("1.3.6.1.4.1.1")),
            ),
            VarBind::new(
                oid("1.3.6.1.2.1.4.20.1.1.1.2.3.4"),
                Value::IpAddress([1, 2, 3, 4]),
            ),
            VarBind::new(oid("1.3.6.1.2.1.2.2.1.10.1"), Value::Counter32(u32::MAX)),
            VarBind::new(oid("1.3.6.1.2.1.2.2.1.5.1"), Value::Gauge32(3)),
            VarBind::new(oid("1.3.6.1.2.1.1.3.0"), Value::TimeTicks(100)),
            VarBind::new(
                oid("1.3.6.1.2.1.31.1.1.1.6.1"),
                Value::Counter64(u64::MAX - 3),
            ),
            VarBind::new(oid("1.3.6.1.9"), Value::Null),
            VarBind::new(oid("1.3.6.1.9.1"), Value::NoSuchObject),
            VarBind::new(oid("1.3.6.1.9.2"), Value::NoSuchInstance),
            VarBind::new(oid("1.3.6.1.9.3"), Value::EndOfMibView),
            VarBind::new(oid("1.3.6.1.9.4"), Value::Opaque(vec![1])),
        ];
        let ranges = vec![
            SearchRange {
                start: oid("1.3.6.1.3.117"),
                include: true,
                end: oid("1.3.6.1.3.118"),
            },
            SearchRange {
                start: oid("1.3.6.1.2.1.1.1.0"),
                include: false,
                end: Oid::new(vec![]),
            },
        ];
        let region = Region {
            timeout: 5,
            priority: 127,
            range_subid: 0,
            subtree: oid("1.3.6.1.3.117.1"),
            upper_bound: None,
        };
        for body in [
            Body::Open {
                timeout: 10,
                id: oid("1.3.6.1.4.1.8072.3.2.10"),
                descr: b"ibsnmpd".to_vec(),
            },
            Body::Close(CloseReason::Shutdown),
            Body::Register(region.clone()),
            Body::Register(Region {
                range_subid: 11,
                upper_bound: Some(20),
                ..region.clone()
            }),
            Body::Unregister(Region {
                timeout: 0,
                ..region
            }),
            Body::Get(ranges.clone()),
            Body::GetNext(ranges.clone()),
            Body::GetBulk {
                non_repeaters: 1,
                max_repetitions: 10,
                ranges,
            },
            Body::TestSet(vbs.clone()),
            Body::CommitSet,
            Body::UndoSet,
            Body::CleanupSet,
            Body::Notify(vbs.clone()),
            Body::Ping,
            Body::IndexAllocate(vbs.clone()),
            Body::IndexDeallocate(vbs.clone()),
            Body::AddAgentCaps {
                id: oid("1.3.6.1.3.117.1"),
                descr: b"IB-PM-MIB".to_vec(),
            },
            Body::RemoveAgentCaps(oid("1.3.6.1.3.117.1")),
            Body::Response {
                sys_up_time: 42,
                error: error::NOT_OPEN,
                index: 2,
                varbinds: vbs,
            },
        ] {
            round_trip(Pdu {
                header: h,
                context: None,
                body: body.clone(),
            });
            if Body::has_context(body.kind()) {
                round_trip(Pdu {
                    header: h,
                    context: Some(b"ctx".to_vec()),
                    body,
                });
            }
        }
    }

    #[test]
    fn decodes_little_endian_from_the_master() {
        // A GetNext in host (little-endian) order: header, one range
        // 1.3.6.1.2.1 (prefix 2, one subid 1) -> null.
        let mut b = vec![1, 6, 0, 0];
        for v in [3u32, 4, 5] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&12u32.to_le_bytes());
        b.extend_from_slice(&[1, 2, 1, 0]);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&[0, 0, 0, 0]);
        let p = Pdu::decode(&b).unwrap();
        assert_eq!(p.header.session_id, 3);
        assert_eq!(
            p.body,
            Body::GetNext(vec![SearchRange {
                start: oid("1.3.6.1.2.1"),
                include: true,
                end: Oid::new(vec![]),
            }])
        );
    }

    #[test]
    fn short_and_bad_packets_are_errors() {
        assert!(Pdu::decode(&[]).is_err());
        assert_eq!(Pdu::decode(&[2; 20]).unwrap_err(), DecodeError::Version(2));
        let mut p = Pdu {
            header: Header::default(),
            context: None,
            body: Body::Ping,
        }
        .encode();
        p[1] = 99;
        assert_eq!(Pdu::decode(&p).unwrap_err(), DecodeError::UnknownType(99));
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Pdu::decode(&bytes);
            let _ = payload_len(&bytes);
        }

        #[test]
        fn truncations_of_a_valid_pdu_are_errors(cut in 0usize..60) {
            let p = Pdu {
                header: Header::default(),
                context: None,
                body: Body::TestSet(vec![VarBind::new(
                    "1.3.6.1.3.117.1.4.1.2.1".parse().unwrap(),
                    Value::OctetString(b"x".to_vec()),
                )]),
            }
            .encode();
            if cut < p.len() {
                prop_assert!(Pdu::decode(&p[..cut]).is_err());
            }
        }
    }
}
