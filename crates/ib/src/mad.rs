//! MAD (management datagram) codecs: pure functions over byte slices with typed
//! structs on top. One struct per IBA attribute, one field per IBA field with the
//! spec's width; `decode(&[u8])` / `encode(&self, &mut [u8])` never panic and never
//! allocate per field (text fields such as NodeDescription allocate their String).
//!
//! - [`bits`]: big-endian bit-field reader/writer used by every codec;
//! - [`header`]: the common MAD header, directed-route SMP header, RMPP and SA headers;
//! - [`smp`]: Subnet Management attributes (NodeInfo, PortInfo, SwitchInfo, ...);
//! - [`pma`]: Performance Management attributes (PortCounters, PortSamplesControl, ...);
//! - [`sa`]: Subnet Administration records (PathRecord, MCMemberRecord, ...);
//! - [`build`]: whole 256-octet request MADs the sources send.

// Input path: bytes from the wire or files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod bits;
pub mod build;
pub mod header;
pub mod pma;
pub mod port_counters;
pub mod sa;
pub mod smp;

/// Size of every MAD on the wire (UD QP0/QP1 payload).
pub const MAD_SIZE: usize = 256;

/// Errors from decoding or building MADs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MadError {
    #[error("{what}: buffer of {got} octets is shorter than the {need} octets required")]
    TooShort {
        what: &'static str,
        need: usize,
        got: usize,
    },
    #[error("{what}: {len} octets do not fit in the {max} available")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
    #[error("directed route of {0} hops is longer than the 63 allowed")]
    PathTooLong(usize),
    #[error("unexpected MAD: {0}")]
    Unexpected(&'static str),
    #[error("MAD status {status:#06x}: {}", header::status_text(*status))]
    Status { status: u16 },
    #[error("SA record size is zero (AttributeOffset 0) with a non-empty payload")]
    ZeroAttributeOffset,
}

/// Fixed-layout attribute codecs.
pub trait Codec: Sized {
    /// Octets the attribute occupies in the MAD data area.
    const LEN: usize;
    /// Decodes from the start of `buf` (which may be longer than `LEN`).
    fn decode(buf: &[u8]) -> Result<Self, MadError>;
    /// Encodes into the start of `buf`, zeroing reserved bits in `..LEN`.
    fn encode(&self, buf: &mut [u8]) -> Result<(), MadError>;
}

/// An attribute with its AttributeID in a management class.
pub trait Attribute: Codec {
    const ATTRIBUTE_ID: u16;
    /// The management class it belongs to (SubnMgt attributes use [`header::class::SUBN_LID_ROUTED`]).
    const CLASS: u8;
}

pub(crate) static ZEROES: [u8; MAD_SIZE] = [0; MAD_SIZE];

/// Declares an attribute struct with its field table and generates Codec, Default
/// (= decoding all-zero octets) and [`bits::Field`] (so records can nest it).
/// Each field: `name: Type = (bit_offset, bit_width)` as in the IBA table.
macro_rules! attribute {
    (
        $(#[$m:meta])*
        pub struct $name:ident [$len:expr] {
            $( $(#[$fm:meta])* $f:ident : $t:ty = ($off:expr, $w:expr) ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            $( $(#[$fm])* pub $f : $t, )*
        }

        impl $name {
            /// Octets on the wire.
            pub const LEN: usize = $len;
            /// Field table (name, bit offset, bit width), for tests and dumps.
            pub const FIELDS: &'static [(&'static str, usize, usize)] =
                &[$( (stringify!($f), $off, $w) ),*];

            pub fn decode(buf: &[u8]) -> Result<Self, $crate::mad::MadError> {
                if buf.len() < $len {
                    return Err($crate::mad::MadError::TooShort {
                        what: stringify!($name),
                        need: $len,
                        got: buf.len(),
                    });
                }
                Ok(Self {
                    $( $f: <$t as $crate::mad::bits::Field>::read(buf, $off, $w), )*
                })
            }

            pub fn encode(&self, buf: &mut [u8]) -> Result<(), $crate::mad::MadError> {
                let Some(dst) = buf.get_mut(..$len) else {
                    return Err($crate::mad::MadError::TooShort {
                        what: stringify!($name),
                        need: $len,
                        got: buf.len(),
                    });
                };
                dst.fill(0);
                $( $crate::mad::bits::Field::write(&self.$f, dst, $off, $w); )*
                Ok(())
            }
        }

        impl $crate::mad::Codec for $name {
            const LEN: usize = $len;
            fn decode(buf: &[u8]) -> Result<Self, $crate::mad::MadError> {
                $name::decode(buf)
            }
            fn encode(&self, buf: &mut [u8]) -> Result<(), $crate::mad::MadError> {
                $name::encode(self, buf)
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    $( $f: <$t as $crate::mad::bits::Field>::read(&$crate::mad::ZEROES, $off, $w), )*
                }
            }
        }

        impl $crate::mad::bits::Field for $name {
            fn read(buf: &[u8], off: usize, _width: usize) -> Self {
                buf.get(off / 8..)
                    .and_then(|b| $name::decode(b).ok())
                    .unwrap_or_default()
            }
            fn write(&self, buf: &mut [u8], off: usize, _width: usize) {
                if let Some(b) = buf.get_mut(off / 8..) {
                    // Only fails on a short buffer, which the enclosing codec checked.
                    let _ = $name::encode(self, b);
                }
            }
        }
    };
}
pub(crate) use attribute;

macro_rules! attribute_id {
    ($($name:ident => ($class:expr, $id:expr)),* $(,)?) => {$(
        impl $crate::mad::Attribute for $name {
            const ATTRIBUTE_ID: u16 = $id;
            const CLASS: u8 = $class;
        }
    )*};
}
pub(crate) use attribute_id;

/// Serde for arrays longer than 32 (serde derives stop at 32): a plain sequence.
pub(crate) mod serde_array {
    use serde::{de::Error, Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize, const N: usize>(
        v: &[T; N],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
        d: D,
    ) -> Result<[T; N], D::Error> {
        let v = Vec::<T>::deserialize(d)?;
        let n = v.len();
        v.try_into()
            .map_err(|_| D::Error::invalid_length(n, &"an array of the attribute's length"))
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    /// Asserts that a field table has no overlapping fields and fits in `len` octets.
    pub fn check_table(name: &str, len: usize, fields: &[(&str, usize, usize)]) {
        let mut v: Vec<_> = fields.to_vec();
        v.sort_by_key(|f| f.1);
        for w in v.windows(2) {
            assert!(
                w[0].1 + w[0].2 <= w[1].1,
                "{name}: {} overlaps {}",
                w[0].0,
                w[1].0
            );
        }
        if let Some(l) = v.last() {
            assert!(l.1 + l.2 <= len * 8, "{name}: {} past the end", l.0);
        }
    }

    /// Parses a hex string with whitespace into octets.
    pub fn hex(s: &str) -> Vec<u8> {
        let d: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..d.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&d[i..i + 2], 16).unwrap())
            .collect()
    }
}

#[cfg(test)]
mod tests;
