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
        if self.clearance == Clearance::Secret {
            return self.inner.uniform(prefix);
        }
        // One pass, one compare a subtree, its last shared arc first: the
        // subtrees share the arcs near the root with most columns (and
        // their own MIB's with its columns), so that arc mostly differs
        // and settles it without a memcmp call. A secret holding `prefix`
        // hides all of it; one inside it hides part.
        let mut inside = false;
        for s in self.secrets.iter().chain(self.hidden) {
            let s = s.as_slice();
            let n = s.len().min(prefix.len());
            let (a, b) = (&s[..n], &prefix[..n]);
            if a.last() == b.last() && a == b {
                if s.len() <= prefix.len() {
                    return Some(false);
                }
                inside = true;
            }
        }
        if inside {
            return None;
        }
        self.inner.uniform(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass answer is the two questions asked apart: a secret
    /// holding the prefix (false), else one inside it (ask each instance),
    /// else the view's answer; cleared, the view alone.
    #[test]
    fn guarded_uniform_in_one_pass() {
        let o = |s: &str| s.parse::<Oid>().unwrap();
        let secrets = [
            o("1.3.6.1.6.3.15.1.2.2.1.6"),
            o("1.3.6.1.4.1.9.2"),
            o("1.3.6.1.4.1.9"),
        ];
        let hidden = [o("1.3.6.1.6.3.16.1.2"), o("1.3.6.1.4.1.9.4.1")];
        for clearance in [Clearance::Public, Clearance::Secret] {
            let g = Guarded {
                inner: &FullAccess,
                secrets: &secrets,
                hidden: &hidden,
                admin: &[],
                clearance,
            };
            for (prefix, public) in [
                ("1.3.6.1.2.1.2.2.1.2", Some(true)),
                ("1.3.6.1.6.3.15.1.2.2.1.6", Some(false)),
                ("1.3.6.1.6.3.15.1.2.2.1.6.5", Some(false)),
                ("1.3.6.1.6.3.15.1.2.2.1", None),
                ("1.3.6.1.6.3.16.1", None),
                ("1.3.6.1.6.3.16.1.2.1", Some(false)),
                ("1.3.6.1.4.1", None),
                ("1.3.6.1.4.2", Some(true)),
                ("1.3.6.1.4.1.9.2.1", Some(false)),
                ("1.3.6.1.4.1.9.3", Some(false)),
                ("1.3.6.1.4.1.8", Some(true)),
                ("1.3.6.1.6.3.16.1.3", Some(true)),
                ("1.3.6.1.6.3.16.1.1.9", Some(true)),
            ] {
                let want = match clearance {
                    Clearance::Public => public,
                    Clearance::Secret => Some(true),
                };
                assert_eq!(g.uniform(o(prefix).as_slice()), want, "{prefix}");
            }
            // Every prefix of every subtree, and its neighbours, against
            // the two passes asked apart.
            let all: Vec<&Oid> = secrets.iter().chain(&hidden).collect();
            for s in &all {
                for n in 1..=s.len() + 1 {
                    let mut p: Vec<u32> = s.as_slice().iter().copied().take(n).collect();
                    if n > s.len() {
                        p.push(1);
                    }
                    for delta in [0u32, 1] {
                        if let Some(last) = p.last_mut() {
                            *last += delta;
                        }
                        let above = all.iter().any(|s| p.starts_with(s.as_slice()));
                        let inside = all.iter().any(|s| s.starts_with(&p));
                        let want = match clearance {
                            Clearance::Secret => Some(true),
                            _ if above => Some(false),
                            _ if inside => None,
                            _ => Some(true),
                        };
                        assert_eq!(g.uniform(&p), want, "{p:?}");
                    }
                }
            }
        }
    }
}
