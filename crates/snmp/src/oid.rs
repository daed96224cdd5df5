//! OBJECT IDENTIFIER values.

use std::fmt;
use std::str::FromStr;

use smallvec::SmallVec;

/// Sub-identifiers held in place: a table column's instance (entry, column,
/// an index of a GID or of a GUID and a port) fits, so building a response allocates
/// no OID; longer ones (GID-indexed rows) go to the heap.
pub(crate) const INLINE_SUBIDS: usize = 32;

/// An OBJECT IDENTIFIER: a sequence of sub-identifiers (at most 128, each u32).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Oid(SmallVec<[u32; INLINE_SUBIDS]>);

/// The longest OID SNMP allows (RFC 2578 section 3.5).
pub const MAX_SUBIDS: usize = 128;

impl Oid {
    pub fn new(subids: Vec<u32>) -> Self {
        Oid(SmallVec::from_vec(subids))
    }
    pub fn from_slice(s: &[u32]) -> Self {
        Oid(SmallVec::from_slice(s))
    }
    /// The first `len` sub-identifiers of `buf`, kept in place.
    pub(crate) fn from_buf_and_len(buf: [u32; INLINE_SUBIDS], len: usize) -> Self {
        Oid(SmallVec::from_buf_and_len(buf, len))
    }
    /// The parts one after another (e.g. a table entry, a column and an
    /// encoded index).
    pub fn from_parts(parts: &[&[u32]]) -> Self {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if len <= INLINE_SUBIDS {
            // In place, copied part by part (SmallVec's extend is slower).
            let mut buf = [0u32; INLINE_SUBIDS];
            let mut at = 0;
            for p in parts {
                if let Some(dst) = buf.get_mut(at..at + p.len()) {
                    dst.copy_from_slice(p);
                }
                at += p.len();
            }
            return Oid(SmallVec::from_buf_and_len(buf, len));
        }
        let mut v = SmallVec::with_capacity(len);
        for p in parts {
            v.extend_from_slice(p);
        }
        Oid(v)
    }
    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn starts_with(&self, prefix: &[u32]) -> bool {
        self.0.starts_with(prefix)
    }
    pub fn push(&mut self, subid: u32) {
        self.0.push(subid)
    }
    pub fn extend_from_slice(&mut self, s: &[u32]) {
        self.0.extend_from_slice(s)
    }
    /// `self` followed by `suffix`.
    pub fn join(&self, suffix: &[u32]) -> Oid {
        Oid::from_parts(&[&self.0, suffix])
    }
    pub fn into_vec(self) -> Vec<u32> {
        self.0.into_vec()
    }
}

impl From<Vec<u32>> for Oid {
    fn from(v: Vec<u32>) -> Self {
        Oid::new(v)
    }
}

impl From<&[u32]> for Oid {
    fn from(v: &[u32]) -> Self {
        Oid::from_slice(v)
    }
}

impl AsRef<[u32]> for Oid {
    fn as_ref(&self) -> &[u32] {
        &self.0
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Oid({self})")
    }
}

/// Error parsing a dotted OID string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid OID {0:?}: expected dotted decimal sub-identifiers")]
pub struct ParseOidError(pub String);

impl FromStr for Oid {
    type Err = ParseOidError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.strip_prefix('.').unwrap_or(s);
        if t.is_empty() {
            return Err(ParseOidError(s.to_string()));
        }
        t.split('.')
            .map(|p| p.parse::<u32>())
            .collect::<Result<SmallVec<_>, _>>()
            .map(Oid)
            .map_err(|_| ParseOidError(s.to_string()))
    }
}
