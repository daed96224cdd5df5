//! The request tables' columns, declared once each: the column's OID (its
//! number is the last sub-identifier), how it reads and is written, and the
//! ComponentMask bit a write sets. A value is checked against the column's
//! SYNTAX in the MIB file (type, range, SIZE) before it is written, so no
//! column repeats its range; the last column of a table is the highest
//! declared.

use snmp::mib::SetError;
use snmp::value::Value;

/// One column over data `D` (a PathRecord, a TraceHop, a request row).
pub(super) struct ReqCol<D> {
    pub oid: &'static [u32],
    /// The ComponentMask bit a write sets (0: none).
    pub bit: u64,
    pub read: fn(&D) -> Value,
    /// Stores a value that passed the column's syntax.
    pub write: fn(&mut D, &Value) -> Result<(), SetError>,
}

impl<D> ReqCol<D> {
    pub const fn id(&self) -> u32 {
        match self.oid {
            [.., last] => *last,
            [] => 0,
        }
    }
}

pub(super) fn find<D>(cols: &[ReqCol<D>], id: u32) -> Option<&ReqCol<D>> {
    cols.iter().find(|c| c.id() == id)
}

/// The highest column number of `cols`.
pub(super) fn last_column<D>(cols: &[ReqCol<D>]) -> u32 {
    cols.iter().map(ReqCol::id).max().unwrap_or(0)
}

/// Checks `v` against the MIB's syntax of the object at `oid`.
pub(super) fn checked(oid: &[u32], v: &Value) -> Result<(), SetError> {
    match crate::core::oids::syntax(oid) {
        Some(s) => s.check(v),
        None => Ok(()),
    }
}

/// Writes `v` into `d` through column `id` of `cols`: the ComponentMask bit
/// set, or the error; `None` when `cols` has no such column.
pub(super) fn write<D>(
    cols: &[ReqCol<D>],
    d: &mut D,
    id: u32,
    v: &Value,
) -> Option<Result<u64, SetError>> {
    let c = find(cols, id)?;
    Some(
        checked(c.oid, v)
            .and_then(|()| (c.write)(d, v))
            .map(|()| c.bit),
    )
}

/// Stores a converted value in its field.
pub(super) fn put<T>(slot: &mut T, v: Result<T, SetError>) -> Result<(), SetError> {
    *slot = v?;
    Ok(())
}

/// The number in a checked INTEGER or Unsigned32 value.
pub(super) fn num(v: &Value) -> Result<u32, SetError> {
    match v {
        Value::Gauge32(u) => Ok(*u),
        Value::Integer(i) => u32::try_from(*i).map_err(|_| SetError::WrongValue),
        _ => Err(SetError::WrongType),
    }
}

/// A checked number that fits a `u8`.
pub(super) fn num8(v: &Value) -> Result<u8, SetError> {
    u8::try_from(num(v)?).map_err(|_| SetError::WrongValue)
}

/// A checked number that fits a `u16`.
pub(super) fn num16(v: &Value) -> Result<u16, SetError> {
    u16::try_from(num(v)?).map_err(|_| SetError::WrongValue)
}

/// A checked fixed-size OCTET STRING.
pub(super) fn octets<const N: usize>(v: &Value) -> Result<[u8; N], SetError> {
    match v {
        Value::OctetString(b) => b.as_slice().try_into().map_err(|_| SetError::WrongLength),
        _ => Err(SetError::WrongType),
    }
}

pub(super) use crate::core::value::{gauge32 as gauge, integer as int, octets as bytes};
