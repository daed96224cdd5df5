//! BER encoding: minimal lengths, written forward into a `Vec<u8>`.

use super::tag;
use crate::value::{Value, VarBind};

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
        self.content_after(0, oid)
    }

    /// [`OidRun::content`], where the caller knows that the first `same`
    /// sub-identifiers of `oid` are those of the OID before (a table's
    /// instances in one column share entry and column): only the rest is
    /// compared.
    #[inline]
    pub fn content_after(&mut self, same: usize, oid: &[u32]) -> Option<&[u8]> {
        if oid.len() < 2 || oid.len() > RUN_ARCS {
            self.n = 0;
            return None;
        }
        let held = self.arcs.get(..self.n).unwrap_or(&[]);
        let max = held.len().min(oid.len());
        // (A word for more than the OID before held is no word.)
        let known = if same <= max { same } else { 0 };
        // Neighbours in a walk differ in their last sub-identifiers: try
        // the longest shared prefixes first as whole-slice compares
        // (memcmp) of what is not known shared, and scan only when those
        // miss.
        let equal = |k: usize| held.get(known..k) == oid.get(known..k);
        // A table's word is exact (its rows know what each index shares
        // with the one before): one compare says so.
        let shared = if known >= 2 && held.get(known) != oid.get(known) {
            known
        } else {
            [1, 2, 0, 3]
                .into_iter()
                .map(|j| max.saturating_sub(j))
                .find(|&k| k >= 2 && k >= known && equal(k))
                .unwrap_or_else(|| {
                    let rest = held.iter().zip(oid).skip(known);
                    known + rest.take_while(|(a, b)| a == b).count()
                })
        };
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

/// A position returned by [`Encoder::begin`] (or [`Encoder::begin_long`]),
/// closed by [`Encoder::end`]: where the content starts, and how many
/// length octets were reserved before it.
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct Mark {
    at: usize,
    reserved: usize,
}

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

    /// Opens a constructed value with tag `t` (its length expected short).
    #[inline]
    pub fn begin(&mut self, t: u8) -> Mark {
        self.out.push(t);
        self.out.push(0);
        Mark {
            at: self.out.len(),
            reserved: 1,
        }
    }

    /// Opens a constructed value with tag `t` whose content is expected to
    /// take 256 to 65,535 octets (a response message, its PDU, its
    /// VarBindList): three length octets are reserved, so closing it moves
    /// nothing then. Any other length is still written in its shortest
    /// form, the content moved down: the octets are those of
    /// [`Encoder::begin`].
    #[inline]
    pub fn begin_long(&mut self, t: u8) -> Mark {
        self.out.extend_from_slice(&[t, 0x82, 0, 0]);
        Mark {
            at: self.out.len(),
            reserved: 3,
        }
    }

    /// Closes the constructed value opened at `m`, fixing up its length.
    #[inline]
    pub fn end(&mut self, m: Mark) {
        let start = m.at;
        let len = self.out.len().saturating_sub(start);
        if m.reserved != 1 {
            return self.end_reserved(m, len);
        }
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

    /// [`Encoder::end`] for a mark with `m.reserved` length octets.
    fn end_reserved(&mut self, m: Mark, len: usize) {
        let need = length_len(len);
        let head = m.at.saturating_sub(m.reserved);
        if need < m.reserved {
            // Shorter than reserved: the content moves down.
            let old_end = self.out.len();
            self.out.copy_within(m.at..old_end, head + need);
            self.out.truncate(old_end - (m.reserved - need));
        } else if need > m.reserved {
            // Longer: it moves up.
            let extra = need - m.reserved;
            let old_end = self.out.len();
            self.out.resize(old_end + extra, 0);
            self.out.copy_within(m.at..old_end, m.at + extra);
        }
        let mut field = [0u8; 5];
        let field = match need {
            1 => {
                field[0] = len as u8;
                field.get(..1)
            }
            _ => {
                field[0] = 0x80 | (need - 1) as u8;
                let be = (len as u64).to_be_bytes();
                for (d, s) in field.iter_mut().skip(1).zip(be.iter().skip(9 - need)) {
                    *d = *s;
                }
                field.get(..need)
            }
        };
        if let (Some(dst), Some(src)) = (self.out.get_mut(head..head + need), field) {
            dst.copy_from_slice(src);
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
        self.unsigned_inline(t, v)
    }

    /// [`Encoder::unsigned`] as one copy of 11 octets (tag, length and
    /// the longest content), then cut to the value's length: fewer
    /// instructions than a push per octet.
    #[inline(always)]
    fn unsigned_fixed(&mut self, t: u8, v: u64) {
        let n = u64_content_len(v);
        let mut tlv = [0u8; 11];
        let (head, content) = tlv.split_at_mut(2);
        head.copy_from_slice(&[t, n as u8]);
        // The content is the value's low n octets, big-endian: shifted
        // to the top of a u64 (n <= 8), or a zero octet and all eight.
        let (at, bytes) = match n {
            9 => (1, v.to_be_bytes()),
            _ => (0, (v << (64 - 8 * n)).to_be_bytes()),
        };
        if let Some(dst) = content.get_mut(at..at + 8) {
            dst.copy_from_slice(&bytes);
        }
        self.out.extend_from_slice(&tlv);
        self.out.truncate(self.out.len() - (9 - n));
    }

    #[inline(always)]
    fn unsigned_inline(&mut self, t: u8, v: u64) {
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
        self.varbind_in_run_after(run, 0, oid, value)
    }

    /// [`Encoder::varbind_in_run`] for an OID whose first `same`
    /// sub-identifiers are known to be those of the one before
    /// ([`OidRun::content_after`]).
    #[inline]
    pub fn varbind_in_run_after(
        &mut self,
        run: &mut OidRun,
        same: usize,
        oid: &[u32],
        value: &Value,
    ) -> std::ops::Range<usize> {
        let start = self.len();
        match run.content_after(same, oid) {
            // The usual name: the varbind's header and the name's in one
            // fixed-size copy, then the name's octets.
            Some(c) if c.len() < 0x80 => {
                let head = [tag::SEQUENCE, 0, tag::OBJECT_IDENTIFIER, c.len() as u8];
                self.out.extend_from_slice(&head);
                self.out.extend_from_slice(c);
            }
            c => {
                self.out.extend_from_slice(&[tag::SEQUENCE, 0]);
                match c {
                    Some(c) => self.octets_tagged(tag::OBJECT_IDENTIFIER, c),
                    None => self.oid(oid),
                }
            }
        }
        // (As `begin` would have left it.)
        let v = Mark {
            at: start + 2,
            reserved: 1,
        };
        let a = start + 2;
        let b = self.len();
        // A walk's cells are mostly counters and gauges: written here, in
        // one fixed-size copy, not through calls to `value` and `unsigned`.
        match value {
            Value::Counter32(u) => self.unsigned_fixed(tag::COUNTER32, u64::from(*u)),
            Value::Gauge32(u) => self.unsigned_fixed(tag::GAUGE32, u64::from(*u)),
            Value::Counter64(u) => self.unsigned_fixed(tag::COUNTER64, *u),
            _ => self.value(value),
        }
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
