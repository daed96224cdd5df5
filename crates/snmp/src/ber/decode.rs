//! BER decoding: a never-panicking reader over a byte slice.

use super::{tag, BerError};
use crate::oid::{Oid, INLINE_SUBIDS, MAX_SUBIDS};
use crate::value::{Value, VarBind};

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
        // A walk's request holds one varbind: room for it at once, without
        // the growth path's bookkeeping.
        let mut out = Vec::with_capacity(1);
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
    // Sign-extended from all ones: the same bits as i64 arithmetic.
    Ok(big_endian(if neg { u64::MAX } else { 0 }, s) as i64)
}

pub fn decode_i32(c: &[u8]) -> Result<i32, BerError> {
    narrow(decode_i64(c))
}

/// `s` (at most 8 octets) shifted in, most significant first, over `init`.
fn big_endian(init: u64, s: &[u8]) -> u64 {
    s.iter().fold(init, |v, &b| (v << 8) | u64::from(b))
}

/// A decoded integer as a narrower type (too large: IntegerOverflow).
fn narrow<W, T: TryFrom<W>>(v: Result<W, BerError>) -> Result<T, BerError> {
    v.and_then(|v| T::try_from(v).map_err(|_| BerError::IntegerOverflow))
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
    Ok(big_endian(0, s))
}

pub fn decode_u32(c: &[u8]) -> Result<u32, BerError> {
    narrow(decode_u64(c))
}

/// Decodes OBJECT IDENTIFIER content (first two arcs packed as 40*X+Y).
///
/// Into a buffer the size of the `Oid`'s own (32 sub-identifiers, the
/// count known from the octets ending one), which becomes the `Oid`: a
/// request's names decode without an allocation or a 128-entry buffer to
/// clear. Longer names decode into one on the heap.
pub fn decode_oid(c: &[u8]) -> Result<Oid, BerError> {
    let (&first, rest) = c.split_first().ok_or(BerError::EmptyOid)?;
    // Fast path: every sub-identifier fits in one octet (the common case).
    if first < 0x80 && rest.len() + 2 <= INLINE_SUBIDS && rest.iter().all(|&b| b < 0x80) {
        let mut out = [0u32; INLINE_SUBIDS];
        let (x, y) = match first {
            0..=39 => (0, first),
            40..=79 => (1, first - 40),
            _ => (2, first - 80),
        };
        let arcs = [x, u32::from(y)]
            .into_iter()
            .chain(rest.iter().map(|&b| u32::from(b)));
        for (d, v) in out.iter_mut().zip(arcs) {
            *d = v;
        }
        return Ok(Oid::from_buf_and_len(out, rest.len() + 2));
    }
    // Each octet with bit 8 clear ends a sub-identifier; the first holds two.
    let arcs = c.iter().filter(|&&b| b & 0x80 == 0).count() + 1;
    if arcs <= INLINE_SUBIDS {
        let mut out = [0u32; INLINE_SUBIDS];
        let mut n = 0;
        decode_arcs(c, |v| {
            // Never past the end: there are no more than `arcs`.
            *out.get_mut(n).ok_or(BerError::OidTooLong)? = v;
            n += 1;
            Ok(())
        })?;
        return Ok(Oid::from_buf_and_len(out, n));
    }
    // Longer: straight into the heap buffer the `Oid` keeps.
    let mut out = Vec::with_capacity(arcs.min(MAX_SUBIDS));
    decode_arcs(c, |v| {
        if out.len() == MAX_SUBIDS {
            return Err(BerError::OidTooLong);
        }
        out.push(v);
        Ok(())
    })?;
    Ok(Oid::new(out))
}

/// Hands each sub-identifier of OBJECT IDENTIFIER content `c` to `put`.
///
/// One sub-identifier a turn of the outer loop, its continuation octets
/// in the inner one, so a one-octet arc costs one test.
fn decode_arcs(c: &[u8], mut put: impl FnMut(u32) -> Result<(), BerError>) -> Result<(), BerError> {
    let mut rest = c;
    let mut first = true;
    while let Some((&lead, tail)) = rest.split_first() {
        // A sub-identifier must not start with 0x80 (X.690 8.19.2).
        if lead == 0x80 {
            return Err(BerError::BadSubid);
        }
        rest = tail;
        let mut acc = u64::from(lead & 0x7f);
        let mut b = lead;
        while b & 0x80 != 0 {
            // Ending in a continuation octet: truncated.
            let (&next, tail) = rest.split_first().ok_or(BerError::BadSubid)?;
            rest = tail;
            b = next;
            acc = (acc << 7) | u64::from(b & 0x7f);
            // The first sub-identifier may reach 2^32-1 + 80.
            if acc > u64::from(u32::MAX) + 80 {
                return Err(BerError::SubidOverflow);
            }
        }
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
    }
    Ok(())
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
