//! Pure BER codec (the X.690 subset SNMP uses) over byte slices.
//!
//! Decoding accepts definite lengths only (indefinite lengths are not
//! allowed in SNMP), tolerates non-minimal long-form lengths and redundant
//! leading octets in integers, and never panics. Encoding is minimal (DER-like
//! lengths) and writes forward into a `Vec<u8>`: a constructed value reserves
//! one length octet and shifts its contents in the rare case the content
//! grows past 127 octets, which keeps the encoder allocation-free.

// Input path: bytes from the wire or files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use crate::oid::{Oid, MAX_SUBIDS};
use crate::value::{Value, VarBind};

/// Universal and SNMP application/context tags.
pub mod tag {
    pub const INTEGER: u8 = 0x02;
    pub const OCTET_STRING: u8 = 0x04;
    pub const NULL: u8 = 0x05;
    pub const OBJECT_IDENTIFIER: u8 = 0x06;
    pub const SEQUENCE: u8 = 0x30;
    pub const IP_ADDRESS: u8 = 0x40;
    pub const COUNTER32: u8 = 0x41;
    pub const GAUGE32: u8 = 0x42;
    pub const TIMETICKS: u8 = 0x43;
    pub const OPAQUE: u8 = 0x44;
    pub const COUNTER64: u8 = 0x46;
    pub const NO_SUCH_OBJECT: u8 = 0x80;
    pub const NO_SUCH_INSTANCE: u8 = 0x81;
    pub const END_OF_MIB_VIEW: u8 = 0x82;
}

/// Why a BER value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BerError {
    #[error("truncated input: needed {needed} more octets")]
    Truncated { needed: usize },
    #[error("indefinite length is not allowed in SNMP")]
    IndefiniteLength,
    #[error("length field of {0} octets is too long")]
    LengthTooLong(usize),
    #[error("multi-octet tags are not used by SNMP")]
    HighTagNumber,
    #[error("expected tag 0x{expected:02x}, found 0x{found:02x}")]
    UnexpectedTag { expected: u8, found: u8 },
    #[error("unknown value tag 0x{0:02x}")]
    UnknownTag(u8),
    #[error("empty INTEGER")]
    EmptyInteger,
    #[error("INTEGER out of range")]
    IntegerOverflow,
    #[error("NULL with non-empty content")]
    NonEmptyNull,
    #[error("empty OBJECT IDENTIFIER")]
    EmptyOid,
    #[error("OBJECT IDENTIFIER sub-identifier exceeds 2^32-1")]
    SubidOverflow,
    #[error("OBJECT IDENTIFIER has more than 128 sub-identifiers")]
    OidTooLong,
    #[error("OBJECT IDENTIFIER sub-identifier is truncated or not minimal")]
    BadSubid,
    #[error("IpAddress must be 4 octets, got {0}")]
    BadIpAddress(usize),
    #[error("trailing data after value")]
    TrailingData,
}

/// A cursor over BER-encoded bytes.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes not yet consumed.
    pub fn remaining(&self) -> &'a [u8] {
        self.buf
    }

    /// Fails unless all input was consumed.
    pub fn finish(&self) -> Result<(), BerError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(BerError::TrailingData)
        }
    }

    /// The next tag without consuming it.
    pub fn peek_tag(&self) -> Option<u8> {
        self.buf.first().copied()
    }

    /// Reads one TLV, returning its tag and content.
    pub fn read_tlv(&mut self) -> Result<(u8, &'a [u8]), BerError> {
        let (&t, rest) = self
            .buf
            .split_first()
            .ok_or(BerError::Truncated { needed: 1 })?;
        if t & 0x1f == 0x1f {
            return Err(BerError::HighTagNumber);
        }
        let (&l0, mut rest) = rest
            .split_first()
            .ok_or(BerError::Truncated { needed: 1 })?;
        let len = if l0 < 0x80 {
            usize::from(l0)
        } else if l0 == 0x80 {
            return Err(BerError::IndefiniteLength);
        } else {
            let n = usize::from(l0 & 0x7f);
            if rest.len() < n {
                return Err(BerError::Truncated {
                    needed: n - rest.len(),
                });
            }
            let (lb, r) = rest.split_at(n);
            rest = r;
            // Tolerate leading zero octets (non-minimal long form).
            let mut len: usize = 0;
            for &b in lb {
                if len > (usize::MAX >> 8) || (len >> 24) != 0 {
                    return Err(BerError::LengthTooLong(n));
                }
                len = (len << 8) | usize::from(b);
            }
            len
        };
        if rest.len() < len {
            return Err(BerError::Truncated {
                needed: len - rest.len(),
            });
        }
        let (content, rest) = rest.split_at(len);
        self.buf = rest;
        Ok((t, content))
    }

    /// Reads one TLV that must carry `expected`, returning its content.
    pub fn read_expect(&mut self, expected: u8) -> Result<&'a [u8], BerError> {
        let (t, c) = self.read_tlv()?;
        if t != expected {
            return Err(BerError::UnexpectedTag { expected, found: t });
        }
        Ok(c)
    }

    /// Enters a constructed value with tag `expected`: returns a reader over
    /// its content.
    pub fn read_constructed(&mut self, expected: u8) -> Result<Reader<'a>, BerError> {
        self.read_expect(expected).map(Reader::new)
    }

    pub fn read_sequence(&mut self) -> Result<Reader<'a>, BerError> {
        self.read_constructed(tag::SEQUENCE)
    }

    pub fn read_i32(&mut self) -> Result<i32, BerError> {
        let c = self.read_expect(tag::INTEGER)?;
        decode_i32(c)
    }

    pub fn read_i64(&mut self) -> Result<i64, BerError> {
        let c = self.read_expect(tag::INTEGER)?;
        decode_i64(c)
    }

    pub fn read_octets(&mut self) -> Result<&'a [u8], BerError> {
        self.read_expect(tag::OCTET_STRING)
    }

    pub fn read_null(&mut self) -> Result<(), BerError> {
        let c = self.read_expect(tag::NULL)?;
        if c.is_empty() {
            Ok(())
        } else {
            Err(BerError::NonEmptyNull)
        }
    }

    pub fn read_oid(&mut self) -> Result<Oid, BerError> {
        let c = self.read_expect(tag::OBJECT_IDENTIFIER)?;
        decode_oid(c)
    }

    /// Reads an application-tagged unsigned 32-bit value (Counter32,
    /// Gauge32, TimeTicks) with tag `t`.
    pub fn read_u32(&mut self, t: u8) -> Result<u32, BerError> {
        let c = self.read_expect(t)?;
        decode_u32(c)
    }

    /// Reads any varbind value.
    pub fn read_value(&mut self) -> Result<Value, BerError> {
        let (t, c) = self.read_tlv()?;
        decode_value(t, c)
    }

    /// Reads one `VarBind ::= SEQUENCE { name, value }`.
    pub fn read_varbind(&mut self) -> Result<VarBind, BerError> {
        let mut s = self.read_sequence()?;
        let oid = s.read_oid()?;
        let value = s.read_value()?;
        s.finish()?;
        Ok(VarBind { oid, value })
    }

    /// Reads a `VarBindList ::= SEQUENCE OF VarBind`.
    pub fn read_varbind_list(&mut self) -> Result<Vec<VarBind>, BerError> {
        let mut s = self.read_sequence()?;
        let mut out = Vec::new();
        while !s.is_empty() {
            out.push(s.read_varbind()?);
        }
        Ok(out)
    }
}

/// Decodes INTEGER content as i64 (two's complement), tolerating redundant
/// leading sign octets.
pub fn decode_i64(c: &[u8]) -> Result<i64, BerError> {
    let (&first, _) = c.split_first().ok_or(BerError::EmptyInteger)?;
    let neg = first & 0x80 != 0;
    let pad = if neg { 0xff } else { 0x00 };
    // Skip redundant sign-extension octets, keeping the sign bit correct.
    let mut s = c;
    while s.len() > 8 {
        match s {
            [a, rest @ ..] if *a == pad && rest.first().is_some_and(|b| b & 0x80 == pad & 0x80) => {
                s = rest
            }
            _ => return Err(BerError::IntegerOverflow),
        }
    }
    let mut v: i64 = if neg { -1 } else { 0 };
    for &b in s {
        v = (v << 8) | i64::from(b);
    }
    Ok(v)
}

pub fn decode_i32(c: &[u8]) -> Result<i32, BerError> {
    let v = decode_i64(c)?;
    i32::try_from(v).map_err(|_| BerError::IntegerOverflow)
}

/// Decodes unsigned content as u64. Leading zero octets are skipped; content
/// with the top bit set and no leading zero (a common encoder slip) is read
/// as the unsigned magnitude.
pub fn decode_u64(c: &[u8]) -> Result<u64, BerError> {
    if c.is_empty() {
        return Err(BerError::EmptyInteger);
    }
    let mut s = c;
    while let [0, rest @ ..] = s {
        s = rest;
    }
    if s.len() > 8 {
        return Err(BerError::IntegerOverflow);
    }
    let mut v: u64 = 0;
    for &b in s {
        v = (v << 8) | u64::from(b);
    }
    Ok(v)
}

pub fn decode_u32(c: &[u8]) -> Result<u32, BerError> {
    let v = decode_u64(c)?;
    u32::try_from(v).map_err(|_| BerError::IntegerOverflow)
}

/// Decodes OBJECT IDENTIFIER content (first two arcs packed as 40*X+Y).
///
/// Into a buffer on the stack, copied once into the `Oid`: a request's
/// names fit in place (32 sub-identifiers), so decoding allocates nothing
/// (the allocation and the pushes were a thirtieth of a walk's
/// instructions at 50 varbinds a request).
pub fn decode_oid(c: &[u8]) -> Result<Oid, BerError> {
    let (&first, rest) = c.split_first().ok_or(BerError::EmptyOid)?;
    let mut out = [0u32; MAX_SUBIDS];
    // Fast path: every sub-identifier fits in one octet (the common case).
    if first < 0x80 && rest.iter().all(|&b| b < 0x80) {
        let (x, y) = match first {
            0..=39 => (0, first),
            40..=79 => (1, first - 40),
            _ => (2, first - 80),
        };
        let dst = out.get_mut(..rest.len() + 2).ok_or(BerError::OidTooLong)?;
        let arcs = [x, u32::from(y)]
            .into_iter()
            .chain(rest.iter().map(|&b| u32::from(b)));
        for (d, v) in dst.iter_mut().zip(arcs) {
            *d = v;
        }
        return Ok(Oid::from_slice(dst));
    }
    let mut n = 0;
    let mut put = |v: u32| -> Result<(), BerError> {
        *out.get_mut(n).ok_or(BerError::OidTooLong)? = v;
        n += 1;
        Ok(())
    };
    let mut acc: u64 = 0;
    let mut started = false;
    let mut first = true;
    for &b in c {
        if !started && b == 0x80 {
            // A sub-identifier must not start with 0x80 (X.690 8.19.2).
            return Err(BerError::BadSubid);
        }
        started = true;
        acc = (acc << 7) | u64::from(b & 0x7f);
        // The first sub-identifier may reach 2^32-1 + 80.
        if acc > u64::from(u32::MAX) + 80 {
            return Err(BerError::SubidOverflow);
        }
        if b & 0x80 == 0 {
            if first {
                let (x, y) = match acc {
                    0..=39 => (0, acc),
                    40..=79 => (1, acc - 40),
                    _ => (2, acc - 80),
                };
                put(x)?;
                put(u32::try_from(y).map_err(|_| BerError::SubidOverflow)?)?;
                first = false;
            } else {
                put(u32::try_from(acc).map_err(|_| BerError::SubidOverflow)?)?;
            }
            acc = 0;
            started = false;
        }
    }
    if started {
        return Err(BerError::BadSubid);
    }
    Ok(Oid::from_slice(out.get(..n).unwrap_or(&[])))
}

/// Decodes a varbind value from its tag and content.
pub fn decode_value(t: u8, c: &[u8]) -> Result<Value, BerError> {
    Ok(match t {
        tag::INTEGER => Value::Integer(decode_i32(c)?),
        tag::OCTET_STRING => Value::OctetString(c.to_vec()),
        tag::NULL => {
            if !c.is_empty() {
                return Err(BerError::NonEmptyNull);
            }
            Value::Null
        }
        tag::OBJECT_IDENTIFIER => Value::ObjectId(decode_oid(c)?),
        tag::IP_ADDRESS => {
            let a: [u8; 4] = c.try_into().map_err(|_| BerError::BadIpAddress(c.len()))?;
            Value::IpAddress(a)
        }
        tag::COUNTER32 => Value::Counter32(decode_u32(c)?),
        tag::GAUGE32 => Value::Gauge32(decode_u32(c)?),
        tag::TIMETICKS => Value::TimeTicks(decode_u32(c)?),
        tag::OPAQUE => Value::Opaque(c.to_vec()),
        tag::COUNTER64 => Value::Counter64(decode_u64(c)?),
        // The exceptions are NULL-like; tolerate (and ignore) content.
        tag::NO_SUCH_OBJECT => Value::NoSuchObject,
        tag::NO_SUCH_INSTANCE => Value::NoSuchInstance,
        tag::END_OF_MIB_VIEW => Value::EndOfMibView,
        other => return Err(BerError::UnknownTag(other)),
    })
}

// ---------------------------------------------------------------- encoding

/// Octets needed to encode a length field for `len` content octets.
#[inline]
pub fn length_len(len: usize) -> usize {
    match len {
        0..=0x7f => 1,
        0x80..=0xff => 2,
        0x100..=0xffff => 3,
        0x1_0000..=0xff_ffff => 4,
        _ => 5,
    }
}

/// Octets of a whole TLV with `content` content octets (single-octet tag).
#[inline]
pub fn tlv_len(content: usize) -> usize {
    1 + length_len(content) + content
}

#[inline]
fn push_length(out: &mut Vec<u8>, len: usize) {
    match len {
        0..=0x7f => out.push(len as u8),
        0x80..=0xff => out.extend_from_slice(&[0x81, len as u8]),
        0x100..=0xffff => out.extend_from_slice(&[0x82, (len >> 8) as u8, len as u8]),
        0x1_0000..=0xff_ffff => {
            out.extend_from_slice(&[0x83, (len >> 16) as u8, (len >> 8) as u8, len as u8])
        }
        _ => out.extend_from_slice(&[
            0x84,
            (len >> 24) as u8,
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
        ]),
    }
}

/// Content octets of a two's complement INTEGER.
#[inline]
pub fn i64_content_len(v: i64) -> usize {
    // Number of significant bits including one sign bit.
    let bits = if v < 0 {
        64 - (!v).leading_zeros()
    } else {
        64 - v.leading_zeros()
    } + 1;
    (bits as usize).div_ceil(8)
}

/// Content octets of an unsigned integer (with a leading zero octet when the
/// top bit would otherwise be set).
#[inline]
pub fn u64_content_len(v: u64) -> usize {
    let bits = (64 - v.leading_zeros()) as usize + 1;
    bits.div_ceil(8)
}

#[inline]
fn subid_len(v: u64) -> usize {
    let bits = (64 - v.leading_zeros()).max(1) as usize;
    bits.div_ceil(7)
}

/// The (possibly packed) first sub-identifier and the rest, for encoding.
#[inline]
fn oid_parts(s: &[u32]) -> (u64, &[u32]) {
    match s {
        [] => (0, &[]),
        [x] => (u64::from(*x) * 40, &[]),
        [x, y, rest @ ..] => (u64::from(*x) * 40 + u64::from(*y), rest),
    }
}

/// Content octets of an OID. OIDs shorter than two arcs are padded with
/// zeros (`1` encodes as `1.0`), as net-snmp does.
pub fn oid_content_len(s: &[u32]) -> usize {
    let (first, rest) = oid_parts(s);
    // One octet per sub-identifier plus one per 7 more bits, summed in u32
    // lanes so the compiler vectorises it (it is asked for every varbind
    // of a response, for the size budget).
    let extra: u32 = rest
        .iter()
        .map(|&v| {
            u32::from(v >= 1 << 7)
                + u32::from(v >= 1 << 14)
                + u32::from(v >= 1 << 21)
                + u32::from(v >= 1 << 28)
        })
        .sum();
    subid_len(first) + rest.len() + extra as usize
}

/// Content octets of a value.
pub fn value_content_len(v: &Value) -> usize {
    match v {
        Value::Integer(i) => i64_content_len(i64::from(*i)),
        Value::OctetString(b) | Value::Opaque(b) => b.len(),
        Value::Null | Value::NoSuchObject | Value::NoSuchInstance | Value::EndOfMibView => 0,
        Value::ObjectId(o) => oid_content_len(o.as_slice()),
        Value::IpAddress(_) => 4,
        Value::Counter32(u) | Value::Gauge32(u) | Value::TimeTicks(u) => {
            u64_content_len(u64::from(*u))
        }
        Value::Counter64(u) => u64_content_len(*u),
    }
}

/// The tag a value is encoded with.
pub fn value_tag(v: &Value) -> u8 {
    match v {
        Value::Integer(_) => tag::INTEGER,
        Value::OctetString(_) => tag::OCTET_STRING,
        Value::Null => tag::NULL,
        Value::ObjectId(_) => tag::OBJECT_IDENTIFIER,
        Value::IpAddress(_) => tag::IP_ADDRESS,
        Value::Counter32(_) => tag::COUNTER32,
        Value::Gauge32(_) => tag::GAUGE32,
        Value::TimeTicks(_) => tag::TIMETICKS,
        Value::Opaque(_) => tag::OPAQUE,
        Value::Counter64(_) => tag::COUNTER64,
        Value::NoSuchObject => tag::NO_SUCH_OBJECT,
        Value::NoSuchInstance => tag::NO_SUCH_INSTANCE,
        Value::EndOfMibView => tag::END_OF_MIB_VIEW,
    }
}

/// Content octets of a `VarBind` SEQUENCE.
#[inline]
pub fn varbind_content_len(oid: &[u32], value: &Value) -> usize {
    tlv_len(oid_content_len(oid)) + tlv_len(value_content_len(value))
}

/// Total encoded octets of one varbind (its SEQUENCE TLV).
#[inline]
pub fn varbind_len(vb: &VarBind) -> usize {
    tlv_len(varbind_content_len(vb.oid.as_slice(), &vb.value))
}

/// Writes one sub-identifier (base 128, high bit on all but the last
/// octet) through a byte sink.
#[inline]
fn put_subid_with(put: &mut impl FnMut(u8), v: u64) {
    for i in (1..subid_len(v)).rev() {
        put(0x80 | ((v >> (7 * i)) & 0x7f) as u8);
    }
    put((v & 0x7f) as u8);
}

/// Writes a sub-identifier after the first: the usual one- and two-octet
/// sizes without a loop.
#[inline]
fn put_arc(put: &mut impl FnMut(u8), v: u32) {
    if v < 0x80 {
        put(v as u8);
    } else if v < 0x4000 {
        put(0x80 | (v >> 7) as u8);
        put((v & 0x7f) as u8);
    } else {
        put_subid_with(put, u64::from(v));
    }
}

/// Octets written into a fixed buffer sized for the worst case (what
/// would not fit is dropped; callers size the buffer so nothing is).
struct Cursor<'b> {
    buf: &'b mut [u8],
    at: usize,
}

impl<'b> Cursor<'b> {
    fn new(buf: &'b mut [u8]) -> Self {
        Cursor { buf, at: 0 }
    }
    #[inline]
    fn put(&mut self, x: u8) {
        if let Some(b) = self.buf.get_mut(self.at) {
            *b = x;
        }
        self.at += 1;
    }
}

/// OIDs of a walk's instances (neighbours share their entry, column and
/// most of the index) encoded one after the other: the previous OID's
/// sub-identifiers and where each one's octets end are kept, so the shared
/// part is copied and only the rest encoded.
pub struct OidRun {
    arcs: [u32; RUN_ARCS],
    /// Sub-identifiers of the previous OID held (0: none).
    n: usize,
    /// `ends[i]`: octets of the encoding through sub-identifier i (the
    /// first two share the first octets).
    ends: [u8; RUN_ARCS],
    bytes: [u8; 5 * RUN_ARCS],
}

/// The longest OID an [`OidRun`] holds; longer ones are encoded whole.
const RUN_ARCS: usize = 32;

impl Default for OidRun {
    fn default() -> Self {
        OidRun {
            arcs: [0; RUN_ARCS],
            n: 0,
            ends: [0; RUN_ARCS],
            bytes: [0; 5 * RUN_ARCS],
        }
    }
}

impl OidRun {
    /// The content octets of `oid` (no tag or length); None for an OID
    /// of fewer than two or more than 32 sub-identifiers (encode those
    /// with [`Encoder::oid`]).
    pub fn content(&mut self, oid: &[u32]) -> Option<&[u8]> {
        if oid.len() < 2 || oid.len() > RUN_ARCS {
            self.n = 0;
            return None;
        }
        let held = self.arcs.get(..self.n).unwrap_or(&[]);
        // Neighbours in a walk differ in their last sub-identifiers: try
        // the longest shared prefixes first as whole-slice compares
        // (memcmp), and scan only when those miss.
        let max = held.len().min(oid.len());
        let same = |k: usize| held.get(..k) == oid.get(..k);
        let shared = [1, 2, 0, 3]
            .into_iter()
            .map(|j| max.saturating_sub(j))
            .find(|&k| k >= 2 && same(k))
            .unwrap_or_else(|| held.iter().zip(oid).take_while(|(a, b)| a == b).count());
        let (mut at, from) = if shared >= 2 {
            let end = self.ends.get(shared - 1).copied().unwrap_or(0);
            (usize::from(end), shared)
        } else {
            let (first, _) = oid_parts(oid);
            let mut w = Cursor::new(&mut self.bytes);
            put_subid_with(&mut |x| w.put(x), first);
            let at = w.at;
            for i in 0..2 {
                if let (Some(a), Some(e), Some(&v)) =
                    (self.arcs.get_mut(i), self.ends.get_mut(i), oid.get(i))
                {
                    *a = v;
                    *e = at as u8;
                }
            }
            (at, 2)
        };
        for (i, &v) in oid.iter().enumerate().skip(from) {
            let mut w = Cursor {
                buf: &mut self.bytes,
                at,
            };
            put_arc(&mut |x| w.put(x), v);
            at = w.at;
            if let (Some(a), Some(e)) = (self.arcs.get_mut(i), self.ends.get_mut(i)) {
                *a = v;
                *e = at as u8;
            }
        }
        self.n = oid.len();
        self.bytes.get(..at)
    }

    /// Total encoded octets of one varbind (as [`varbind_len`]).
    pub fn varbind_len(&mut self, vb: &VarBind) -> usize {
        let oid = match self.content(vb.oid.as_slice()) {
            Some(c) => c.len(),
            None => oid_content_len(vb.oid.as_slice()),
        };
        tlv_len(tlv_len(oid) + tlv_len(value_content_len(&vb.value)))
    }
}

/// A position returned by [`Encoder::begin`], closed by [`Encoder::end`].
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct Mark(usize);

/// A BER encoder appending to a `Vec<u8>`.
#[derive(Debug)]
pub struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Encoder<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Encoder { out }
    }

    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// Drops everything written after position `len`.
    pub fn truncate(&mut self, len: usize) {
        self.out.truncate(len)
    }

    /// Opens a constructed value with tag `t`.
    #[inline]
    pub fn begin(&mut self, t: u8) -> Mark {
        self.out.push(t);
        self.out.push(0);
        Mark(self.out.len())
    }

    /// Closes the constructed value opened at `m`, fixing up its length.
    #[inline]
    pub fn end(&mut self, m: Mark) {
        let start = m.0;
        let len = self.out.len().saturating_sub(start);
        if len < 0x80 {
            if let Some(b) = self.out.get_mut(start.wrapping_sub(1)) {
                *b = len as u8;
            }
            return;
        }
        // Long form: make room for the extra length octets.
        let extra = length_len(len) - 1;
        let old_end = self.out.len();
        self.out.resize(old_end + extra, 0);
        self.out.copy_within(start..old_end, start + extra);
        let be = (len as u64).to_be_bytes();
        if let (Some(dst), Some(src)) = (
            self.out.get_mut(start.wrapping_sub(1)..start + extra),
            be.get(8 - extra..),
        ) {
            if let Some((l0, rest)) = dst.split_first_mut() {
                *l0 = 0x80 | extra as u8;
                rest.copy_from_slice(src);
            }
        }
    }

    // Always inlined, the short form written here: a call per TLV (to
    // this or to push_length) was a twentieth of a walk's instructions.
    #[inline(always)]
    fn header(&mut self, t: u8, len: usize) {
        self.out.push(t);
        if len < 0x80 {
            self.out.push(len as u8);
        } else {
            push_length(self.out, len);
        }
    }

    pub fn i64_tagged(&mut self, t: u8, v: i64) {
        let n = i64_content_len(v);
        self.header(t, n);
        self.low_octets(v.to_be_bytes(), n);
    }

    /// The last `n` of 8 big-endian octets, one by one: a value is a few
    /// octets, for which a call to memcpy costs more than the copy.
    #[inline]
    fn low_octets(&mut self, bytes: [u8; 8], n: usize) {
        for &b in bytes.get(8usize.saturating_sub(n)..).unwrap_or(&bytes) {
            self.out.push(b);
        }
    }

    pub fn integer(&mut self, v: i64) {
        self.i64_tagged(tag::INTEGER, v)
    }

    pub fn unsigned(&mut self, t: u8, v: u64) {
        let n = u64_content_len(v);
        self.header(t, n);
        if n == 9 {
            self.out.push(0);
        }
        self.low_octets(v.to_be_bytes(), n);
    }

    pub fn octets_tagged(&mut self, t: u8, b: &[u8]) {
        self.header(t, b.len());
        self.out.extend_from_slice(b);
    }

    pub fn octets(&mut self, b: &[u8]) {
        self.octets_tagged(tag::OCTET_STRING, b)
    }

    pub fn null_tagged(&mut self, t: u8) {
        self.out.push(t);
        self.out.push(0);
    }

    pub fn oid(&mut self, s: &[u32]) {
        let (first, rest) = oid_parts(s);
        // Typical OIDs: one pass into a stack buffer, then one copy. Most
        // sub-identifiers take one or two octets (a GID's 254.128...).
        const SHORT: usize = 32;
        if s.len() <= SHORT {
            let mut buf = [0u8; 5 * SHORT];
            let mut w = Cursor::new(&mut buf);
            put_subid_with(&mut |x| w.put(x), first);
            for &v in rest {
                put_arc(&mut |x| w.put(x), v);
            }
            let n = w.at;
            self.header(tag::OBJECT_IDENTIFIER, n);
            self.out.extend_from_slice(buf.get(..n).unwrap_or(&[]));
            return;
        }
        // Long OIDs: sized first, then written in place.
        let n = oid_content_len(s);
        self.header(tag::OBJECT_IDENTIFIER, n);
        let out = &mut *self.out;
        put_subid_with(&mut |x| out.push(x), first);
        for &v in rest {
            put_subid_with(&mut |x| out.push(x), u64::from(v));
        }
    }

    pub fn value(&mut self, v: &Value) {
        match v {
            Value::Integer(i) => self.integer(i64::from(*i)),
            Value::OctetString(b) => self.octets(b),
            Value::Opaque(b) => self.octets_tagged(tag::OPAQUE, b),
            Value::Null => self.null_tagged(tag::NULL),
            Value::NoSuchObject => self.null_tagged(tag::NO_SUCH_OBJECT),
            Value::NoSuchInstance => self.null_tagged(tag::NO_SUCH_INSTANCE),
            Value::EndOfMibView => self.null_tagged(tag::END_OF_MIB_VIEW),
            Value::ObjectId(o) => self.oid(o.as_slice()),
            Value::IpAddress(a) => self.octets_tagged(tag::IP_ADDRESS, a),
            Value::Counter32(u) => self.unsigned(tag::COUNTER32, u64::from(*u)),
            Value::Gauge32(u) => self.unsigned(tag::GAUGE32, u64::from(*u)),
            Value::TimeTicks(u) => self.unsigned(tag::TIMETICKS, u64::from(*u)),
            Value::Counter64(u) => self.unsigned(tag::COUNTER64, *u),
        }
    }

    /// Encodes one varbind (shorter than 128 octets in practice, so the
    /// length fix-up in `end` is one store).
    #[inline]
    pub fn varbind_parts(&mut self, oid: &[u32], value: &Value) {
        let m = self.begin(tag::SEQUENCE);
        self.oid(oid);
        self.value(value);
        self.end(m);
    }

    pub fn varbind(&mut self, vb: &VarBind) {
        self.varbind_parts(vb.oid.as_slice(), &vb.value)
    }

    /// Encodes a VarBindList, each OID after the first from what it
    /// shares with the one before ([`OidRun`]).
    pub fn varbind_list(&mut self, vbs: &[VarBind]) {
        let m = self.begin(tag::SEQUENCE);
        let mut run = OidRun::default();
        for vb in vbs {
            self.varbind_in_run(&mut run, vb.oid.as_slice(), &vb.value);
        }
        self.end(m);
    }

    /// Encodes one varbind of a list, its OID from what it shares with the
    /// one before in `run`. Returns where the OID's TLV was written, so a
    /// later varbind can repeat the name ([`Encoder::repeat`]).
    #[inline]
    pub fn varbind_in_run(
        &mut self,
        run: &mut OidRun,
        oid: &[u32],
        value: &Value,
    ) -> std::ops::Range<usize> {
        let v = self.begin(tag::SEQUENCE);
        let a = self.len();
        match run.content(oid) {
            Some(c) => self.octets_tagged(tag::OBJECT_IDENTIFIER, c),
            None => self.oid(oid),
        }
        let b = self.len();
        self.value(value);
        let open = self.len();
        self.end(v);
        // A long-form length moved the content up.
        let shift = self.len() - open;
        a + shift..b + shift
    }

    /// Appends a copy of octets already written (`range` of the output).
    pub fn repeat(&mut self, range: std::ops::Range<usize>) {
        if range.end <= self.out.len() {
            self.out.extend_from_within(range);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc_value(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        Encoder::new(&mut out).value(v);
        out
    }

    fn dec_value(b: &[u8]) -> Result<Value, BerError> {
        let mut r = Reader::new(b);
        let v = r.read_value()?;
        r.finish()?;
        Ok(v)
    }

    #[test]
    fn integers() {
        for (v, bytes) in [
            (0i32, &[0x02, 1, 0][..]),
            (127, &[0x02, 1, 0x7f]),
            (128, &[0x02, 2, 0, 0x80]),
            (-1, &[0x02, 1, 0xff]),
            (-128, &[0x02, 1, 0x80]),
            (-129, &[0x02, 2, 0xff, 0x7f]),
            (i32::MAX, &[0x02, 4, 0x7f, 0xff, 0xff, 0xff]),
            (i32::MIN, &[0x02, 4, 0x80, 0, 0, 0]),
        ] {
            assert_eq!(enc_value(&Value::Integer(v)), bytes, "{v}");
            assert_eq!(dec_value(bytes).unwrap(), Value::Integer(v));
        }
        // Redundant leading octets are tolerated.
        assert_eq!(dec_value(&[0x02, 3, 0, 0, 5]).unwrap(), Value::Integer(5));
        assert_eq!(
            dec_value(&[0x02, 10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe])
                .unwrap(),
            Value::Integer(-2)
        );
        assert_eq!(
            dec_value(&[0x02, 5, 0, 0x80, 0, 0, 0]),
            Err(BerError::IntegerOverflow)
        );
        assert_eq!(dec_value(&[0x02, 0]), Err(BerError::EmptyInteger));
    }

    #[test]
    fn unsigned() {
        assert_eq!(
            enc_value(&Value::Counter32(u32::MAX)),
            [0x41, 5, 0, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            dec_value(&[0x41, 5, 0, 0xff, 0xff, 0xff, 0xff]).unwrap(),
            Value::Counter32(u32::MAX)
        );
        // Missing leading zero tolerated.
        assert_eq!(dec_value(&[0x42, 1, 0xff]).unwrap(), Value::Gauge32(255));
        assert_eq!(
            dec_value(&[0x43, 5, 1, 0, 0, 0, 0]),
            Err(BerError::IntegerOverflow)
        );
        let c = Value::Counter64(u64::MAX);
        let b = enc_value(&c);
        assert_eq!(b.len(), 11);
        assert_eq!(dec_value(&b).unwrap(), c);
        assert_eq!(enc_value(&Value::Counter64(0)), [0x46, 1, 0]);
    }

    #[test]
    fn oids() {
        let o: Oid = "1.3.6.1.2.1.1.1.0".parse().unwrap();
        let b = enc_value(&Value::ObjectId(o.clone()));
        assert_eq!(b, [0x06, 8, 0x2b, 6, 1, 2, 1, 1, 1, 0]);
        assert_eq!(dec_value(&b).unwrap(), Value::ObjectId(o));
        let big = Oid::new(vec![2, 999, u32::MAX]);
        let b = enc_value(&Value::ObjectId(big.clone()));
        assert_eq!(dec_value(&b).unwrap(), Value::ObjectId(big));
        // > u32 sub-identifier
        assert_eq!(
            dec_value(&[0x06, 6, 0x2b, 0x90, 0x80, 0x80, 0x80, 0x00]),
            Err(BerError::SubidOverflow)
        );
        // non-minimal and truncated sub-identifiers
        assert_eq!(
            dec_value(&[0x06, 3, 0x2b, 0x80, 1]),
            Err(BerError::BadSubid)
        );
        assert_eq!(dec_value(&[0x06, 2, 0x2b, 0x81]), Err(BerError::BadSubid));
        // 128 sub-identifiers are fine, 129 are not.
        let mut b = vec![0x06, 0x81, 127, 0x2b];
        b.extend(std::iter::repeat_n(1u8, 126));
        assert!(dec_value(&b).is_ok());
        let mut b = vec![0x06, 0x81, 128, 0x2b];
        b.extend(std::iter::repeat_n(1u8, 127));
        assert!(dec_value(&b).is_err());
    }

    #[test]
    fn lengths() {
        // Indefinite length rejected.
        assert_eq!(
            Reader::new(&[0x30, 0x80, 0, 0]).read_tlv(),
            Err(BerError::IndefiniteLength)
        );
        // Non-minimal long form tolerated.
        let mut r = Reader::new(&[0x04, 0x82, 0, 2, 7, 8]);
        assert_eq!(r.read_octets().unwrap(), &[7, 8]);
        // Truncated.
        assert!(Reader::new(&[0x04, 5, 1]).read_tlv().is_err());
        assert!(Reader::new(&[0x04, 0x84, 0xff, 0xff, 0xff, 0xff])
            .read_tlv()
            .is_err());
        assert!(Reader::new(&[0x04, 0x89, 1, 1, 1, 1, 1, 1, 1, 1, 1])
            .read_tlv()
            .is_err());
    }

    #[test]
    fn long_constructed() {
        for n in [0usize, 1, 127, 128, 255, 256, 70000] {
            let mut out = Vec::new();
            let mut e = Encoder::new(&mut out);
            let m = e.begin(tag::SEQUENCE);
            e.octets(&vec![0xaa; n]);
            e.end(m);
            let mut r = Reader::new(&out);
            let mut s = r.read_sequence().unwrap();
            assert!(r.is_empty());
            assert_eq!(s.read_octets().unwrap().len(), n);
            assert!(s.is_empty());
        }
    }

    #[test]
    fn computed_lengths_match() {
        let vals = [
            Value::Integer(-5),
            Value::OctetString(vec![1; 200]),
            Value::Null,
            Value::ObjectId("1.3.6.1.4.1.99999.1".parse().unwrap()),
            Value::IpAddress([10, 0, 0, 1]),
            Value::Counter32(0x8000_0000),
            Value::Gauge32(3),
            Value::TimeTicks(1),
            Value::Opaque(vec![]),
            Value::Counter64(1 << 63),
            Value::NoSuchObject,
            Value::EndOfMibView,
        ];
        for v in vals {
            let b = enc_value(&v);
            assert_eq!(b.len(), tlv_len(value_content_len(&v)), "{v:?}");
            let vb = VarBind::new("1.3.6.1.2.1.31.1.1.1.6.4294967295".parse().unwrap(), v);
            let mut out = Vec::new();
            Encoder::new(&mut out).varbind(&vb);
            assert_eq!(out.len(), varbind_len(&vb));
            assert_eq!(Reader::new(&out).read_varbind().unwrap(), vb);
        }
    }
}
