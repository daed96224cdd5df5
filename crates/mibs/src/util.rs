//! Small helpers the MIB modules share over the generated OID constants
//! ([`crate::oids`]).

use snmp::oid::Oid;

/// An owned OID from a generated constant.
pub(crate) fn oid(s: &[u32]) -> Oid {
    Oid::from_slice(s)
}

/// The last sub-identifier of an OID: a column's number from the column
/// object's OID (0 for an empty OID).
pub(crate) fn last(s: &[u32]) -> u32 {
    s.last().copied().unwrap_or(0)
}
