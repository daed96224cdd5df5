//! Table index codecs (RFC 2578 section 7.7): how INDEX values map to the
//! sub-identifiers that follow a column's OID.
//!
//! Each codec is a zero-sized marker type implementing [`IndexCodec`];
//! tuples of codecs encode multi-part indexes in order. Decoding is total:
//! any sub-identifier slice gives `Some((value, rest))` or `None`.
//!
//! ```
//! use snmp::index::{IndexCodec, FixedOctets, Unsigned32};
//! // IB-PM-MIB style: node GUID (8 octets, no length) then a port number.
//! type Idx = (FixedOctets<8>, Unsigned32);
//! let mut subids = Vec::new();
//! Idx::encode(&([0, 2, 0xc9, 3, 0, 0, 0, 1], 7), &mut subids);
//! assert_eq!(subids, [0, 2, 201, 3, 0, 0, 0, 1, 7]);
//! assert_eq!(Idx::decode_all(&subids), Some(([0, 2, 0xc9, 3, 0, 0, 0, 1], 7)));
//! ```

use crate::oid::Oid;

/// Encodes/decodes one INDEX component.
pub trait IndexCodec {
    type Value;
    /// Appends the sub-identifiers of `v`.
    fn encode(v: &Self::Value, out: &mut Vec<u32>);
    /// Decodes a value from the front of `s`, returning it and the rest.
    fn decode(s: &[u32]) -> Option<(Self::Value, &[u32])>;
    /// Decodes a value that must use all of `s`.
    fn decode_all(s: &[u32]) -> Option<Self::Value> {
        match Self::decode(s)? {
            (v, []) => Some(v),
            _ => None,
        }
    }
    /// The encoded index as a new vector.
    fn to_subids(v: &Self::Value) -> Vec<u32> {
        let mut out = Vec::new();
        Self::encode(v, &mut out);
        out
    }
}

/// INTEGER-valued index (non-negative values only, as RFC 2578 requires).
pub struct Integer;
impl IndexCodec for Integer {
    type Value = i32;
    fn encode(v: &i32, out: &mut Vec<u32>) {
        // Negative values cannot be indexes; clamp rather than panic.
        out.push(u32::try_from(*v).unwrap_or(0));
    }
    fn decode(s: &[u32]) -> Option<(i32, &[u32])> {
        let (&f, rest) = s.split_first()?;
        Some((i32::try_from(f).ok()?, rest))
    }
}

/// Unsigned32 / Gauge32-valued index.
pub struct Unsigned32;
impl IndexCodec for Unsigned32 {
    type Value = u32;
    fn encode(v: &u32, out: &mut Vec<u32>) {
        out.push(*v);
    }
    fn decode(s: &[u32]) -> Option<(u32, &[u32])> {
        let (&f, rest) = s.split_first()?;
        Some((f, rest))
    }
}

fn octets_from(s: &[u32]) -> Option<Vec<u8>> {
    s.iter().map(|&x| u8::try_from(x).ok()).collect()
}

/// Fixed-size OCTET STRING (e.g. an 8-octet GUID): N sub-identifiers, no
/// length prefix.
pub struct FixedOctets<const N: usize>;
impl<const N: usize> IndexCodec for FixedOctets<N> {
    type Value = [u8; N];
    fn encode(v: &[u8; N], out: &mut Vec<u32>) {
        out.extend(v.iter().map(|&b| u32::from(b)));
    }
    fn decode(s: &[u32]) -> Option<([u8; N], &[u32])> {
        if s.len() < N {
            return None;
        }
        let (head, rest) = s.split_at(N);
        let mut a = [0u8; N];
        for (d, &x) in a.iter_mut().zip(head) {
            *d = u8::try_from(x).ok()?;
        }
        Some((a, rest))
    }
}

/// Variable-size OCTET STRING: the length, then one sub-identifier per octet.
pub struct VarOctets;
impl IndexCodec for VarOctets {
    type Value = Vec<u8>;
    fn encode(v: &Vec<u8>, out: &mut Vec<u32>) {
        out.push(v.len() as u32);
        out.extend(v.iter().map(|&b| u32::from(b)));
    }
    fn decode(s: &[u32]) -> Option<(Vec<u8>, &[u32])> {
        let (&n, rest) = s.split_first()?;
        let n = usize::try_from(n).ok()?;
        if rest.len() < n {
            return None;
        }
        let (head, rest) = rest.split_at(n);
        Some((octets_from(head)?, rest))
    }
}

/// IMPLIED OCTET STRING (last index component only): the octets, no length.
pub struct ImpliedOctets;
impl IndexCodec for ImpliedOctets {
    type Value = Vec<u8>;
    fn encode(v: &Vec<u8>, out: &mut Vec<u32>) {
        out.extend(v.iter().map(|&b| u32::from(b)));
    }
    fn decode(s: &[u32]) -> Option<(Vec<u8>, &[u32])> {
        Some((octets_from(s)?, &[]))
    }
}

/// OBJECT IDENTIFIER: the number of sub-identifiers, then each of them.
pub struct ObjectIdentifier;
impl IndexCodec for ObjectIdentifier {
    type Value = Oid;
    fn encode(v: &Oid, out: &mut Vec<u32>) {
        out.push(v.len() as u32);
        out.extend_from_slice(v.as_slice());
    }
    fn decode(s: &[u32]) -> Option<(Oid, &[u32])> {
        let (&n, rest) = s.split_first()?;
        let n = usize::try_from(n).ok()?;
        if rest.len() < n || n > crate::oid::MAX_SUBIDS {
            return None;
        }
        let (head, rest) = rest.split_at(n);
        Some((Oid::from_slice(head), rest))
    }
}

/// IMPLIED OBJECT IDENTIFIER (last index component only).
pub struct ImpliedOid;
impl IndexCodec for ImpliedOid {
    type Value = Oid;
    fn encode(v: &Oid, out: &mut Vec<u32>) {
        out.extend_from_slice(v.as_slice());
    }
    fn decode(s: &[u32]) -> Option<(Oid, &[u32])> {
        if s.len() > crate::oid::MAX_SUBIDS {
            return None;
        }
        Some((Oid::from_slice(s), &[]))
    }
}

/// IpAddress: four sub-identifiers.
pub struct IpAddress;
impl IndexCodec for IpAddress {
    type Value = [u8; 4];
    fn encode(v: &[u8; 4], out: &mut Vec<u32>) {
        FixedOctets::<4>::encode(v, out)
    }
    fn decode(s: &[u32]) -> Option<([u8; 4], &[u32])> {
        FixedOctets::<4>::decode(s)
    }
}

macro_rules! tuple_codec {
    ($($t:ident $v:ident),+) => {
        impl<$($t: IndexCodec),+> IndexCodec for ($($t,)+) {
            type Value = ($($t::Value,)+);
            fn encode(v: &Self::Value, out: &mut Vec<u32>) {
                let ($($v,)+) = v;
                $($t::encode($v, out);)+
            }
            fn decode(s: &[u32]) -> Option<(Self::Value, &[u32])> {
                let rest = s;
                $(let ($v, rest) = $t::decode(rest)?;)+
                Some((($($v,)+), rest))
            }
        }
    };
}
tuple_codec!(A a);
tuple_codec!(A a, B b);
tuple_codec!(A a, B b, C c);
tuple_codec!(A a, B b, C c, D d);
tuple_codec!(A a, B b, C c, D d, E e);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples() {
        assert_eq!(Integer::to_subids(&5), [5]);
        assert_eq!(Integer::decode(&[u32::MAX]), None);
        assert_eq!(VarOctets::to_subids(&b"ab".to_vec()), [2, 97, 98]);
        assert_eq!(VarOctets::decode(&[3, 1, 2]), None);
        assert_eq!(VarOctets::decode(&[1, 256]), None);
        assert_eq!(ImpliedOctets::decode_all(&[97, 98]), Some(b"ab".to_vec()));
        assert_eq!(
            <(IpAddress, Integer)>::decode_all(&[10, 0, 0, 1, 161]),
            Some(([10, 0, 0, 1], 161))
        );
        assert_eq!(<(IpAddress, Integer)>::decode_all(&[10, 0, 0, 1]), None);
        let o: Oid = "1.3.6".parse().unwrap();
        assert_eq!(ObjectIdentifier::to_subids(&o), [3, 1, 3, 6]);
        assert_eq!(ObjectIdentifier::decode(&[u32::MAX, 1]), None);
    }
}
