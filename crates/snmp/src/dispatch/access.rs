//! What a request may read and write: the access check and the secret,
//! hidden and admin subtrees laid over it.

use super::Clearance;
use crate::oid::Oid;

/// What one request may read and write (e.g. a VACM view pair).
pub trait AccessCheck {
    fn readable(&self, oid: &[u32]) -> bool;
    fn writable(&self, oid: &[u32]) -> bool;
    /// For an unreadable `oid`: where a GetNext may resume without
    /// stepping over anything readable (`oid` itself steps one instance).
    fn resume_after(&self, oid: &[u32]) -> Oid {
        Oid::from_slice(oid)
    }
    /// Some(readable) when everything under `prefix` is equally readable,
    /// so a walk checks a column once rather than each instance; None
    /// when it may differ inside (then each instance is asked).
    fn uniform(&self, prefix: &[u32]) -> Option<bool> {
        let _ = prefix;
        None
    }
}

/// No restriction (community and user shorthands without a view).
pub struct FullAccess;

impl AccessCheck for FullAccess {
    fn readable(&self, _: &[u32]) -> bool {
        true
    }
    fn writable(&self, _: &[u32]) -> bool {
        true
    }
    fn uniform(&self, _: &[u32]) -> Option<bool> {
        Some(true)
    }
}

impl AccessCheck for crate::vacm::Views<'_> {
    fn readable(&self, oid: &[u32]) -> bool {
        self.read.is_some_and(|v| v.contains(oid))
    }
    fn uniform(&self, prefix: &[u32]) -> Option<bool> {
        match self.read {
            Some(v) => v.uniform(prefix),
            None => Some(false),
        }
    }
    fn writable(&self, oid: &[u32]) -> bool {
        self.write.is_some_and(|v| v.contains(oid))
    }
    fn resume_after(&self, oid: &[u32]) -> Oid {
        match self.read {
            Some(v) => v.resume_after(oid),
            None => Oid::new(vec![u32::MAX]),
        }
    }
}

/// An access check with the secret subtrees hidden unless cleared.
pub(super) struct Guarded<'a> {
    pub(super) inner: &'a dyn AccessCheck,
    pub(super) secrets: &'a [Oid],
    /// Secret to read; writable only when cleared (notWritable below).
    pub(super) hidden: &'a [Oid],
    /// Readable as any other object; writable only when cleared.
    pub(super) admin: &'a [Oid],
    pub(super) clearance: Clearance,
}

impl Guarded<'_> {
    /// The secret subtree (to read) holding `oid`, unless cleared.
    fn secret(&self, oid: &[u32]) -> Option<&Oid> {
        if self.clearance == Clearance::Secret {
            return None;
        }
        self.secrets
            .iter()
            .chain(self.hidden)
            .find(|s| oid.starts_with(s.as_slice()))
    }

    fn write_secret(&self, oid: &[u32]) -> bool {
        self.clearance != Clearance::Secret
            && self.secrets.iter().any(|s| oid.starts_with(s.as_slice()))
    }

    /// Whether `oid` is writable only at authPriv and this request is not:
    /// the administrative subtrees, and the hidden ones (whoever could
    /// write a hidden value could also learn whether one exists).
    pub(super) fn write_protected(&self, oid: &[u32]) -> bool {
        self.clearance != Clearance::Secret
            && self
                .admin
                .iter()
                .chain(self.hidden)
                .any(|s| oid.starts_with(s.as_slice()))
    }
}

impl AccessCheck for Guarded<'_> {
    fn readable(&self, oid: &[u32]) -> bool {
        self.secret(oid).is_none() && self.inner.readable(oid)
    }
    fn writable(&self, oid: &[u32]) -> bool {
        !self.write_secret(oid) && !self.write_protected(oid) && self.inner.writable(oid)
    }
    fn resume_after(&self, oid: &[u32]) -> Oid {
        match self.secret(oid) {
            Some(s) => s.join(&[u32::MAX]),
            None => self.inner.resume_after(oid),
        }
    }
    fn uniform(&self, prefix: &[u32]) -> Option<bool> {
        if self.secret(prefix).is_some() {
            return Some(false);
        }
        let secret_inside = self.clearance != Clearance::Secret
            && self
                .secrets
                .iter()
                .chain(self.hidden)
                .any(|s| s.starts_with(prefix));
        if secret_inside {
            return None;
        }
        self.inner.uniform(prefix)
    }
}
