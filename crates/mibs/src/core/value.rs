//! SNMP values from IBA fields, one meaning per name: how a value that does
//! not fit is shown is part of the name (wrapping keeps the low 32 bits,
//! saturating stops at the type's maximum), so no two modules' `int` differ.

use std::time::Instant;

use snmp::value::Value;

/// INTEGER of a field that fits (i8..i32, u8, u16).
pub fn integer(x: impl Into<i32>) -> Value {
    Value::Integer(x.into())
}

/// Integer32 of an unsigned field of at most 32 bits: the same 32 bits
/// (two's complement), so nothing is lost.
pub fn int32_wrapping(v: u64) -> Value {
    Value::Integer(v as u32 as i32)
}

/// Integer32 of an unsigned count: i32::MAX when it does not fit.
pub fn int32_saturating(v: u32) -> Value {
    Value::Integer(i32::try_from(v).unwrap_or(i32::MAX))
}

/// Gauge32 (and Unsigned32, the same wire type: RFC 2578 section 7.1.11).
pub fn gauge32(x: impl Into<u32>) -> Value {
    Value::Gauge32(x.into())
}

/// Counter32 view of a 64-bit total: its low 32 bits (wraps, never resets).
pub fn counter32_wrapping(v: u64) -> Value {
    Value::Counter32(v as u32)
}

/// OCTET STRING.
pub fn octets(b: &[u8]) -> Value {
    Value::OctetString(b.to_vec())
}

/// sysUpTime (centiseconds, wrapping like TimeTicks) at `t`, for an agent
/// that started at `started`; 0 for `None` or a time before the start.
pub fn ticks_at(started: Instant, t: Option<Instant>) -> u32 {
    t.map_or(0, |t| {
        let cs = t.saturating_duration_since(started).as_millis() / 10;
        (cs % (u128::from(u32::MAX) + 1)) as u32
    })
}
