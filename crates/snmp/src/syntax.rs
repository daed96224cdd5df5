//! An object's SYNTAX as a Set checks it (RFC 2578 section 7): the base
//! type and the range or size constraints (an enumeration is a list of
//! one-value ranges). MIB crates generate these from their MIB files, so a
//! column's allowed values are written once, in the MIB.

use crate::mib::SetError;
use crate::value::Value;

/// The SMI base type of an object (textual conventions resolved).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// INTEGER, Integer32 and enumerations.
    Integer,
    /// Unsigned32 and Gauge32 (one wire type, RFC 2578 section 7.1.11).
    Unsigned,
    Counter32,
    Counter64,
    TimeTicks,
    /// OCTET STRING and BITS.
    OctetString,
    ObjectId,
    IpAddress,
    Opaque,
    /// A table or entry: nothing to Set.
    Other,
}

/// A base type and its constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Syntax {
    pub base: Base,
    /// Inclusive ranges the value (an integer) or length (an octet string)
    /// must fall in; empty: no constraint.
    pub ranges: &'static [(i64, i64)],
}

impl Syntax {
    /// An unconstrained `base`.
    pub const fn of(base: Base) -> Self {
        Syntax { base, ranges: &[] }
    }

    fn allows(&self, x: i64) -> bool {
        self.ranges.is_empty() || self.ranges.iter().any(|&(lo, hi)| lo <= x && x <= hi)
    }

    /// Phase 1 of a Set: wrongType when `v` is not of the base type,
    /// wrongLength when an octet string's length is out of its SIZE,
    /// wrongValue when an integer is out of its range or enumeration.
    pub fn check(&self, v: &Value) -> Result<(), SetError> {
        let (ok, x) = match (self.base, v) {
            (Base::Integer, Value::Integer(i)) => (true, i64::from(*i)),
            (Base::Unsigned, Value::Gauge32(u))
            | (Base::Counter32, Value::Counter32(u))
            | (Base::TimeTicks, Value::TimeTicks(u)) => (true, i64::from(*u)),
            (Base::Counter64, Value::Counter64(_))
            | (Base::ObjectId, Value::ObjectId(_))
            | (Base::IpAddress, Value::IpAddress(_))
            | (Base::Opaque, Value::Opaque(_)) => return Ok(()),
            (Base::OctetString, Value::OctetString(b)) => {
                let len = i64::try_from(b.len()).unwrap_or(i64::MAX);
                return if self.allows(len) {
                    Ok(())
                } else {
                    Err(SetError::WrongLength)
                };
            }
            _ => (false, 0),
        };
        if !ok {
            Err(SetError::WrongType)
        } else if self.allows(x) {
            Ok(())
        } else {
            Err(SetError::WrongValue)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_range_and_size() {
        let u = Syntax {
            base: Base::Unsigned,
            ranges: &[(1, 254)],
        };
        assert_eq!(u.check(&Value::Gauge32(1)), Ok(()));
        assert_eq!(u.check(&Value::Gauge32(0)), Err(SetError::WrongValue));
        assert_eq!(u.check(&Value::Integer(1)), Err(SetError::WrongType));
        let e = Syntax {
            base: Base::Integer,
            ranges: &[(1, 1), (2, 2)],
        };
        assert_eq!(e.check(&Value::Integer(3)), Err(SetError::WrongValue));
        let s = Syntax {
            base: Base::OctetString,
            ranges: &[(8, 8)],
        };
        assert_eq!(s.check(&Value::OctetString(vec![0; 8])), Ok(()));
        assert_eq!(
            s.check(&Value::OctetString(vec![0; 7])),
            Err(SetError::WrongLength)
        );
        assert_eq!(s.check(&Value::Null), Err(SetError::WrongType));
        assert_eq!(Syntax::of(Base::Integer).check(&Value::Integer(-5)), Ok(()));
    }
}
