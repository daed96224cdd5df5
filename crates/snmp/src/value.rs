//! SMIv2 values as carried in varbinds (RFC 2578, RFC 3416 section 3).

use crate::oid::Oid;

/// A varbind value, including the three v2 exceptions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Integer(i32),
    OctetString(Vec<u8>),
    Null,
    ObjectId(Oid),
    IpAddress([u8; 4]),
    Counter32(u32),
    /// Gauge32 and Unsigned32 share the wire tag [APPLICATION 2].
    Gauge32(u32),
    TimeTicks(u32),
    Opaque(Vec<u8>),
    Counter64(u64),
    NoSuchObject,
    NoSuchInstance,
    EndOfMibView,
}

impl Value {
    /// True for noSuchObject, noSuchInstance and endOfMibView.
    pub fn is_exception(&self) -> bool {
        matches!(
            self,
            Value::NoSuchObject | Value::NoSuchInstance | Value::EndOfMibView
        )
    }
}

/// A variable binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarBind {
    pub oid: Oid,
    pub value: Value,
}

impl VarBind {
    pub fn new(oid: Oid, value: Value) -> Self {
        VarBind { oid, value }
    }
}
