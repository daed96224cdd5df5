//! The View-based Access Control Model (RFC 3415): MIB views built from
//! view tree families, groups of securityNames, and access entries choosing
//! a read and a write view by group, security model and level.
//!
//! Access entries name the contexts they govern by
//! vacmAccessContextPrefix and vacmAccessContextMatch ([`ContextMatch`]);
//! the default, exact "", is the default context only.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use fnv::FnvBuildHasher;

use crate::oid::Oid;
use crate::usm::SecurityLevel;

/// securityModel (RFC 3411): SNMPv1, SNMPv2c, USM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecurityModel {
    V1 = 1,
    V2c = 2,
    Usm = 3,
}

impl SecurityModel {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "v1" => SecurityModel::V1,
            "v2c" => SecurityModel::V2c,
            "usm" | "v3" => SecurityModel::Usm,
            _ => return None,
        })
    }
}

/// One vacmViewTreeFamilyEntry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewFamily {
    pub subtree: Oid,
    /// Bit i (MSB first) set: sub-identifier i must match; missing bits
    /// are 1 (RFC 3415 vacmViewTreeFamilyMask).
    pub mask: Vec<u8>,
    pub included: bool,
}

impl ViewFamily {
    fn must_match(&self, i: usize) -> bool {
        match self.mask.get(i / 8) {
            Some(b) => b & (0x80 >> (i % 8)) != 0,
            None => true,
        }
    }

    fn has_wildcard(&self) -> bool {
        (0..self.subtree.len()).any(|i| !self.must_match(i))
    }

    fn matches(&self, oid: &[u32]) -> bool {
        let s = self.subtree.as_slice();
        oid.len() >= s.len()
            && s.iter()
                .zip(oid)
                .enumerate()
                .all(|(i, (a, b))| a == b || !self.must_match(i))
    }
}

/// A MIB view: a set of families (RFC 3415 3.2.1 / 6).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MibView {
    pub families: Vec<ViewFamily>,
}

impl MibView {
    /// The family deciding `oid`: the matching one with the longest
    /// subtree, ties to the lexicographically greater subtree.
    fn decider(&self, oid: &[u32]) -> Option<&ViewFamily> {
        self.families
            .iter()
            .filter(|f| f.matches(oid))
            .max_by(|a, b| {
                a.subtree
                    .len()
                    .cmp(&b.subtree.len())
                    .then_with(|| a.subtree.cmp(&b.subtree))
            })
    }

    pub fn contains(&self, oid: &[u32]) -> bool {
        self.decider(oid).is_some_and(|f| f.included)
    }

    /// Whether every OID under `prefix` (and `prefix` itself) is in the
    /// view, or none is: Some(answer) when no family reaches deeper than
    /// `prefix` into it, so the families deciding `prefix` decide all of
    /// it; None when the answer may differ inside.
    pub fn uniform(&self, prefix: &[u32]) -> Option<bool> {
        let deeper = self.families.iter().any(|f| {
            let s = f.subtree.as_slice();
            s.len() > prefix.len()
                && s.iter()
                    .zip(prefix)
                    .enumerate()
                    .all(|(i, (a, b))| a == b || !f.must_match(i))
        });
        (!deeper).then(|| self.contains(prefix))
    }

    /// For an `oid` not in the view: an OID from which a GetNext may
    /// resume without stepping over anything in the view. Jumps past a
    /// plain excluded subtree (to the first included family inside it, if
    /// any); with wildcards, steps one instance at a time.
    pub fn resume_after(&self, oid: &[u32]) -> Oid {
        let Some(f) = self.decider(oid).filter(|f| !f.has_wildcard()) else {
            // Not covered by any family: jump to the next family start.
            if self.decider(oid).is_none() {
                if let Some(next) = self
                    .families
                    .iter()
                    .filter(|f| f.included && f.subtree.as_slice() > oid)
                    .map(|f| &f.subtree)
                    .min()
                {
                    return next.clone();
                }
                if self.families.iter().all(|f| !f.has_wildcard()) {
                    // Nothing in view lies after `oid`.
                    return Oid::new(vec![u32::MAX]);
                }
            }
            return Oid::from_slice(oid);
        };
        let mut end = f.subtree.as_slice().to_vec();
        end.push(u32::MAX);
        let inner = self
            .families
            .iter()
            .filter(|g| {
                g.included
                    && g.subtree.starts_with(f.subtree.as_slice())
                    && g.subtree.as_slice() > oid
            })
            .map(|g| g.subtree.clone())
            .min();
        match inner {
            Some(i) if i.as_slice() < end.as_slice() => i,
            _ => Oid::new(end),
        }
    }
}

/// vacmAccessContextPrefix with vacmAccessContextMatch (RFC 3415): the
/// contexts an access entry governs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ContextMatch {
    /// exact(1): the context named by the prefix, only.
    Exact(Vec<u8>),
    /// prefix(2): every context whose name starts with the prefix
    /// (`Prefix("")`: every context).
    Prefix(Vec<u8>),
}

impl Default for ContextMatch {
    /// Exact "": the default context only.
    fn default() -> Self {
        ContextMatch::Exact(Vec::new())
    }
}

impl ContextMatch {
    /// Every context, the default one included.
    pub fn all() -> Self {
        ContextMatch::Prefix(Vec::new())
    }

    pub fn matches(&self, context: &[u8]) -> bool {
        match self {
            ContextMatch::Exact(p) => p.as_slice() == context,
            ContextMatch::Prefix(p) => context.starts_with(p),
        }
    }

    /// vacmAccessContextPrefix.
    pub fn prefix(&self) -> &[u8] {
        match self {
            ContextMatch::Exact(p) | ContextMatch::Prefix(p) => p,
        }
    }

    fn is_exact(&self) -> bool {
        matches!(self, ContextMatch::Exact(_))
    }
}

/// One vacmAccessEntry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessEntry {
    pub group: String,
    /// The contexts it governs.
    pub context: ContextMatch,
    /// None: any security model.
    pub model: Option<SecurityModel>,
    pub level: SecurityLevel,
    pub read: Option<String>,
    pub write: Option<String>,
}

impl AccessEntry {
    /// Reads of view `read` for `group` at `level` or above, in every
    /// context and under every security model, and no writes: the common
    /// entry, the others by struct update from it.
    pub fn read_only(group: &str, level: SecurityLevel, read: &str) -> Self {
        AccessEntry {
            group: group.into(),
            context: ContextMatch::default(),
            model: None,
            level,
            read: Some(read.into()),
            write: None,
        }
    }
}

/// Why access was refused (RFC 3415 3.2: noGroupName, noAccessEntry, noSuchView).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    NoAccessEntry,
    NoSuchView,
}

/// The views a request may use.
#[derive(Clone, Copy, Debug)]
pub struct Views<'a> {
    pub read: Option<&'a MibView>,
    pub write: Option<&'a MibView>,
}

/// A map of a VACM table, hashed with FNV: every request looks up its
/// principal's group and its views, and SipHash (with the key's
/// allocation) was a sixth of a 50-varbind request's instructions. The
/// keys are what the operator configures (or a Set at authPriv writes); a
/// request only looks up, so it cannot build the collisions SipHash
/// guards against.
pub type VacmMap<K, V> = HashMap<K, V, FnvBuildHasher>;

/// A vacmSecurityToGroupTable key, borrowed or owned, so a request looks
/// its principal up without copying the name.
trait GroupKey {
    fn key(&self) -> (SecurityModel, &[u8]);
}

impl GroupKey for (SecurityModel, Vec<u8>) {
    fn key(&self) -> (SecurityModel, &[u8]) {
        (self.0, &self.1)
    }
}

impl GroupKey for (SecurityModel, &[u8]) {
    fn key(&self) -> (SecurityModel, &[u8]) {
        *self
    }
}

impl<'a> Borrow<dyn GroupKey + 'a> for (SecurityModel, Vec<u8>) {
    fn borrow(&self) -> &(dyn GroupKey + 'a) {
        self
    }
}

/// Hashes as the owned key does: the tuple's fields in order, a `Vec<u8>`
/// as its slice.
impl Hash for dyn GroupKey + '_ {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.key().hash(h);
    }
}

impl PartialEq for dyn GroupKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn GroupKey + '_ {}

/// The VACM tables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vacm {
    pub views: VacmMap<String, MibView>,
    pub groups: VacmMap<(SecurityModel, Vec<u8>), String>,
    pub access: Vec<AccessEntry>,
}

impl Vacm {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Adds `other`'s rows: its families join views of the same name, its
    /// groups the principals not already in one, its access entries all.
    pub fn merge(&mut self, other: &Vacm) {
        for (name, view) in &other.views {
            self.views
                .entry(name.clone())
                .or_default()
                .families
                .extend(view.families.iter().cloned());
        }
        for (k, g) in &other.groups {
            self.groups.entry(k.clone()).or_insert_with(|| g.clone());
        }
        self.access.extend(other.access.iter().cloned());
    }

    /// vacmGroupName of a principal, found without copying its name.
    pub fn group(&self, model: SecurityModel, name: &[u8]) -> Option<&String> {
        self.groups.get(&(model, name) as &dyn GroupKey)
    }

    /// [`Vacm::views_in`] the default context "".
    pub fn views(
        &self,
        model: SecurityModel,
        name: &[u8],
        level: SecurityLevel,
    ) -> Option<Result<Views<'_>, Denied>> {
        self.views_in(b"", model, name, level)
    }

    /// RFC 3415 3.2 isAccessAllowed in `context` (which exists: the engine
    /// answers an unknown one before asking). None when the principal is in
    /// no group (noGroupName). The engine adds the rocommunity/rouser
    /// shorthands as groups first ([`crate::engine`]'s access module).
    pub fn views_in(
        &self,
        context: &[u8],
        model: SecurityModel,
        name: &[u8],
        level: SecurityLevel,
    ) -> Option<Result<Views<'_>, Denied>> {
        let group = self.group(model, name)?;
        // Preference (RFC 3415 4, vacmAccessTable): model-specific over
        // any, an exact context match over a prefix, the longer prefix,
        // then the highest level not above the request's.
        let best = self
            .access
            .iter()
            .filter(|a| {
                &a.group == group
                    && a.context.matches(context)
                    && a.model.is_none_or(|m| m == model)
                    && a.level <= level
            })
            .max_by_key(|a| {
                let c = &a.context;
                (a.model.is_some(), c.is_exact(), c.prefix().len(), a.level)
            });
        let Some(a) = best else {
            return Some(Err(Denied::NoAccessEntry));
        };
        let view = |n: &Option<String>| -> Result<Option<&MibView>, Denied> {
            match n {
                None => Ok(None),
                Some(n) => self.views.get(n).map(Some).ok_or(Denied::NoSuchView),
            }
        };
        // Only the view of the request's kind decides (RFC 3415 3.2): a
        // write view that does not exist (a row naming one not yet
        // created) leaves reads alone and gives no write access.
        Some(view(&a.read).map(|read| Views {
            read,
            write: view(&a.write).ok().flatten(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fam(s: &str, mask: &[u8], included: bool) -> ViewFamily {
        ViewFamily {
            subtree: s.parse().unwrap(),
            mask: mask.to_vec(),
            included,
        }
    }

    /// A column is uniform unless a family reaches inside it (a wildcard
    /// counts where its masked arcs could match); the answer then agrees
    /// with `contains` for every instance.
    #[test]
    fn uniform_columns() {
        let v = MibView {
            families: vec![
                fam("1.3.6.1", &[], true),
                fam("1.3.6.1.2.1.2.2.1.5", &[], false),
                fam("1.3.6.1.4.1.9.1.3", &[], false),
                // ifXEntry.*.7: any column's row 7 (mask 0xff 0xd0: arc 10 wild).
                fam("1.3.6.1.2.1.31.1.1.1.0.7", &[0xff, 0xd0], false),
            ],
        };
        let o = |s: &str| s.parse::<Oid>().unwrap();
        assert_eq!(v.uniform(o("1.3.6.1.2.1.2.2.1.2").as_slice()), Some(true));
        assert_eq!(v.uniform(o("1.3.6.1.2.1.2.2.1.5").as_slice()), Some(false));
        assert_eq!(v.uniform(o("1.3.6.1.2.1.2.2.1").as_slice()), None);
        assert_eq!(v.uniform(o("1.3.6.1.4.1.9.1").as_slice()), None);
        assert_eq!(v.uniform(o("1.3.6.1.2.1.31.1.1.1.6").as_slice()), None);
        assert_eq!(v.uniform(o("1.3.6.2").as_slice()), Some(false));
        for (col, inst) in [
            ("1.3.6.1.2.1.2.2.1.2", "1.3.6.1.2.1.2.2.1.2.9"),
            ("1.3.6.1.2.1.2.2.1.5", "1.3.6.1.2.1.2.2.1.5.1"),
        ] {
            assert_eq!(
                v.uniform(o(col).as_slice()),
                Some(v.contains(o(inst).as_slice()))
            );
        }
    }

    #[test]
    fn families_decide_by_specificity_and_masks() {
        let v = MibView {
            families: vec![
                fam("1.3.6.1", &[], true),
                fam("1.3.6.1.3.117.2", &[], false),
                fam("1.3.6.1.3.117.2.1.5", &[], true),
                // ifEntry columns 10 of every row... wildcard on the column's row part.
                fam("1.3.6.1.2.1.2.2.1.10.7", &[0xff, 0xc0], false),
            ],
        };
        assert!(v.contains(&[1, 3, 6, 1, 2, 1, 1, 1, 0]));
        assert!(!v.contains(&[1, 3, 6, 1, 3, 117, 2, 1, 1, 4]));
        assert!(v.contains(&[1, 3, 6, 1, 3, 117, 2, 1, 5, 9]));
        assert!(!v.contains(&[1, 3, 6, 1, 2, 1, 2, 2, 1, 10, 7]));
        assert!(!v.contains(&[1, 3, 6, 1, 2, 1, 2, 2, 1, 10, 9]));
        assert!(v.contains(&[1, 3, 6, 1, 2, 1, 2, 2, 1, 11, 7]));
        assert!(!v.contains(&[1, 3, 5]));
        // Skips: to the included island, then past the excluded subtree.
        assert_eq!(
            v.resume_after(&[1, 3, 6, 1, 3, 117, 2, 1, 1, 4])
                .to_string(),
            "1.3.6.1.3.117.2.1.5"
        );
        assert_eq!(
            v.resume_after(&[1, 3, 6, 1, 3, 117, 2, 1, 6, 4]).as_slice(),
            &[1, 3, 6, 1, 3, 117, 2, u32::MAX]
        );
    }

    /// A principal found by its borrowed name is the one stored under the
    /// owned key (the two hash alike), for every model and any name.
    #[test]
    fn group_by_borrowed_name() {
        let mut vacm = Vacm::default();
        let models = [SecurityModel::V1, SecurityModel::V2c, SecurityModel::Usm];
        for (i, name) in [&b""[..], b"public", b"ops", b"\xff\x00a"]
            .iter()
            .enumerate()
        {
            for (j, m) in models.into_iter().enumerate() {
                vacm.groups.insert((m, name.to_vec()), format!("g{i}{j}"));
            }
        }
        for ((m, name), g) in &vacm.groups {
            assert_eq!(vacm.group(*m, name), Some(g));
        }
        assert_eq!(vacm.group(SecurityModel::V2c, b"publi"), None);
        assert_eq!(vacm.group(SecurityModel::V2c, b"public\0"), None);
    }

    #[test]
    fn access_selection() {
        let mut vacm = Vacm::default();
        vacm.views.insert(
            "all".into(),
            MibView {
                families: vec![fam("1", &[], true)],
            },
        );
        vacm.groups
            .insert((SecurityModel::V2c, b"public".to_vec()), "g".into());
        vacm.groups
            .insert((SecurityModel::Usm, b"ops".to_vec()), "g".into());
        vacm.access.push(AccessEntry::read_only(
            "g",
            SecurityLevel::NoAuthNoPriv,
            "all",
        ));
        vacm.access.push(AccessEntry {
            model: Some(SecurityModel::Usm),
            write: Some("all".into()),
            ..AccessEntry::read_only("g", SecurityLevel::AuthPriv, "all")
        });
        assert!(vacm
            .views(SecurityModel::V1, b"public", SecurityLevel::NoAuthNoPriv)
            .is_none());
        let v = vacm
            .views(SecurityModel::V2c, b"public", SecurityLevel::NoAuthNoPriv)
            .unwrap()
            .unwrap();
        assert!(v.read.is_some() && v.write.is_none());
        let v = vacm
            .views(SecurityModel::Usm, b"ops", SecurityLevel::AuthNoPriv)
            .unwrap()
            .unwrap();
        assert!(v.write.is_none());
        let v = vacm
            .views(SecurityModel::Usm, b"ops", SecurityLevel::AuthPriv)
            .unwrap()
            .unwrap();
        assert!(v.write.is_some());
        vacm.access.push(AccessEntry {
            model: Some(SecurityModel::V2c),
            ..AccessEntry::read_only("g", SecurityLevel::NoAuthNoPriv, "missing")
        });
        assert_eq!(
            vacm.views(SecurityModel::V2c, b"public", SecurityLevel::NoAuthNoPriv)
                .unwrap()
                .unwrap_err(),
            Denied::NoSuchView
        );
        vacm.access.push(AccessEntry {
            model: Some(SecurityModel::V1),
            write: Some("missing".into()),
            ..AccessEntry::read_only("g", SecurityLevel::NoAuthNoPriv, "all")
        });
        vacm.groups
            .insert((SecurityModel::V1, b"public".to_vec()), "g".into());
        let v = vacm
            .views(SecurityModel::V1, b"public", SecurityLevel::NoAuthNoPriv)
            .unwrap()
            .unwrap();
        assert!(v.read.is_some() && v.write.is_none(), "reads stay");
    }

    /// RFC 3415 4 (vacmAccessTable): an exact context match before a
    /// prefix, the longer prefix before the shorter; no entry for the
    /// context: noAccessEntry.
    #[test]
    fn context_selection() {
        let mut vacm = Vacm::default();
        for v in ["exact", "leaf", "any"] {
            vacm.views.insert(v.into(), MibView::default());
        }
        vacm.groups
            .insert((SecurityModel::V2c, b"c".to_vec()), "g".into());
        let entry = |context: ContextMatch, view: &str| AccessEntry {
            context,
            ..AccessEntry::read_only("g", SecurityLevel::NoAuthNoPriv, view)
        };
        vacm.access
            .push(entry(ContextMatch::Prefix(b"".to_vec()), "any"));
        vacm.access
            .push(entry(ContextMatch::Prefix(b"leaf".to_vec()), "leaf"));
        vacm.access
            .push(entry(ContextMatch::Exact(b"leaf01".to_vec()), "exact"));
        let read = |context: &[u8]| {
            let v = vacm.views_in(
                context,
                SecurityModel::V2c,
                b"c",
                SecurityLevel::NoAuthNoPriv,
            );
            let v = v.unwrap().unwrap().read.unwrap() as *const MibView;
            ["exact", "leaf", "any"]
                .into_iter()
                .find(|n| std::ptr::eq(&vacm.views[*n], v))
                .unwrap()
        };
        assert_eq!(read(b"leaf01"), "exact");
        assert_eq!(read(b"leaf02"), "leaf");
        assert_eq!(read(b"spine01"), "any");
        assert_eq!(read(b""), "any");
        vacm.access.remove(0);
        assert_eq!(
            vacm.views_in(
                b"spine01",
                SecurityModel::V2c,
                b"c",
                SecurityLevel::NoAuthNoPriv
            )
            .map(|r| r.map(|_| ())),
            Some(Err(Denied::NoAccessEntry))
        );
        assert!(ContextMatch::default().matches(b""));
        assert!(!ContextMatch::default().matches(b"leaf01"));
    }
}
