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

mod decode;
mod encode;

pub use decode::*;
pub use encode::*;

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

#[cfg(test)]
mod tests;
