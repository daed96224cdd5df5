//! Helpers for phase-1 Set checks, giving the RFC 3416 error for each
//! kind of mismatch.

use crate::mib::SetError;
use crate::value::Value;
use std::ops::RangeInclusive;

/// An INTEGER (else wrongType).
pub fn integer(v: &Value) -> Result<i32, SetError> {
    match v {
        Value::Integer(i) => Ok(*i),
        _ => Err(SetError::WrongType),
    }
}

/// An INTEGER that `ok` accepts (else wrongType / wrongValue).
fn integer_where(v: &Value, ok: impl Fn(&i32) -> bool) -> Result<i32, SetError> {
    integer(v).and_then(|i| {
        if ok(&i) {
            Ok(i)
        } else {
            Err(SetError::WrongValue)
        }
    })
}

/// An INTEGER within `range` (else wrongType / wrongValue).
pub fn integer_in(v: &Value, range: RangeInclusive<i32>) -> Result<i32, SetError> {
    integer_where(v, |i| range.contains(i))
}

/// An enumerated INTEGER whose value is one of `allowed`.
pub fn enumerated(v: &Value, allowed: &[i32]) -> Result<i32, SetError> {
    integer_where(v, |i| allowed.contains(i))
}

/// An OCTET STRING whose length is in `len` (else wrongType / wrongLength).
pub fn octets(v: &Value, len: RangeInclusive<usize>) -> Result<&[u8], SetError> {
    match v {
        Value::OctetString(b) if len.contains(&b.len()) => Ok(b),
        Value::OctetString(_) => Err(SetError::WrongLength),
        _ => Err(SetError::WrongType),
    }
}

/// A DisplayString (RFC 2579: NVT ASCII, at most `max` octets; control
/// characters other than CR, LF, TAB, NUL give wrongValue).
pub fn display_string(v: &Value, max: usize) -> Result<String, SetError> {
    let b = octets(v, 0..=max)?;
    if b.iter()
        .all(|&c| (0x20..0x7f).contains(&c) || matches!(c, b'\r' | b'\n' | b'\t' | 0))
    {
        Ok(String::from_utf8_lossy(b).into_owned())
    } else {
        Err(SetError::WrongValue)
    }
}

/// A Gauge32/Unsigned32. (Counters are read-only in SMIv2 and no TimeTicks
/// object here is writable: there are no Set checks for them.)
pub fn unsigned32(v: &Value) -> Result<u32, SetError> {
    match v {
        Value::Gauge32(u) => Ok(*u),
        _ => Err(SetError::WrongType),
    }
}
