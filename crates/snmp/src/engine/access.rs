//! Access control (RFC 3415), one VACM for every security model.
//!
//! The configured VACM tables come first; the shorthands are rewritten into
//! the same tables, as net-snmp's snmpd does: each community (RFC 3584: its
//! securityName) joins a read-only or read-write group for SNMPv1 and
//! SNMPv2c, each `rouser`/`rwuser` a group of its own for USM whose access
//! entry asks the user's minimum securityLevel and reads (and writes) the
//! user's subtree. A principal the configuration already places in a group
//! keeps that group. Secret subtrees (SM_Key, M_Key) are readable only at
//! authPriv, whatever the view (the dispatcher's `Clearance`).

use std::sync::Arc;

use arc_swap::ArcSwapOption;

use super::community::{security_name, Community, CommunityAccess};
use crate::oid::Oid;
use crate::pdu::Pdu;
use crate::usm::{SecurityLevel, Usm};
use crate::vacm::{AccessEntry, ContextMatch, MibView, SecurityModel, Vacm, ViewFamily, Views};

/// Groups and views the shorthands create; the prefix keeps them apart from
/// configured names.
const ALL_VIEW: &str = "ibsnmpd:all";
const RO_GROUP: &str = "ibsnmpd:rocommunity";
const RW_GROUP: &str = "ibsnmpd:rwcommunity";

/// The VACM in force for one community table and one set of managed rows.
struct Built {
    communities: Arc<Vec<Community>>,
    managed: Option<Arc<Vacm>>,
    vacm: Arc<Vacm>,
}

/// VACM rows managed at run time (the VACM tables' rows created over SNMP):
/// read at each request, cheap (an `Arc` of what is in force).
pub type ManagedVacm = Box<dyn Fn() -> Option<Arc<Vacm>> + Send + Sync>;

/// The configured VACM plus the shorthands, rebuilt when the community table
/// is replaced (a reload), plus the rows managed over SNMP, rebuilt when
/// they change.
pub(crate) struct AccessControl {
    configured: Vacm,
    /// (user name, its rouser/rwuser access) of the USM users.
    users: Vec<(Vec<u8>, crate::usm::UserAccess)>,
    managed: Option<ManagedVacm>,
    /// The contexts the shorthands' access entries govern.
    shorthand_context: ContextMatch,
    built: ArcSwapOption<Built>,
}

/// What a request may do.
pub(crate) enum Decision<'a> {
    /// No group, no access entry at this level, or no such view (RFC 3415
    /// 3.2): refused as a whole.
    Denied,
    /// A Set where the access gives no write view.
    ReadOnlySet,
    /// Dispatch within these views.
    Allowed(Views<'a>),
}

impl AccessControl {
    pub(crate) fn new(
        configured: Option<&Vacm>,
        usm: Option<&Usm>,
        managed: Option<ManagedVacm>,
    ) -> Self {
        let users = usm
            .map(|u| {
                u.users()
                    .filter_map(|u| Some((u.name.clone(), u.access.clone()?)))
                    .collect()
            })
            .unwrap_or_default();
        AccessControl {
            configured: configured.cloned().unwrap_or_default(),
            users,
            managed,
            shorthand_context: ContextMatch::default(),
            built: ArcSwapOption::empty(),
        }
    }

    /// The shorthands' access entries govern `contexts` (default: exact "",
    /// the default context only).
    pub(crate) fn with_shorthand_context(mut self, contexts: ContextMatch) -> Self {
        self.shorthand_context = contexts;
        self
    }

    /// The VACM for this community table and the managed rows in force
    /// (built once for each).
    pub(crate) fn vacm(&self, communities: &Arc<Vec<Community>>) -> Arc<Vacm> {
        let managed = self.managed.as_ref().and_then(|m| m());
        let same = |a: &Option<Arc<Vacm>>, b: &Option<Arc<Vacm>>| match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if let Some(b) = self.built.load_full() {
            if Arc::ptr_eq(&b.communities, communities) && same(&b.managed, &managed) {
                return Arc::clone(&b.vacm);
            }
        }
        let mut vacm = self.configured_with(communities);
        if let Some(m) = &managed {
            vacm.merge(m);
        }
        let vacm = Arc::new(vacm);
        self.built.store(Some(Arc::new(Built {
            communities: Arc::clone(communities),
            managed,
            vacm: Arc::clone(&vacm),
        })));
        vacm
    }

    /// The configured VACM with the shorthands of `communities` and the
    /// users: what the configuration alone puts in force (the VACM tables
    /// show it as permanent rows).
    pub(crate) fn configured_with(&self, communities: &[Community]) -> Vacm {
        let mut v = self.configured.clone();
        let view = |subtree: Oid| MibView {
            families: vec![ViewFamily {
                subtree,
                mask: Vec::new(),
                included: true,
            }],
        };
        v.views
            .entry(ALL_VIEW.to_string())
            .or_insert_with(|| view(Oid::new(vec![1])));
        for (group, write) in [(RO_GROUP, None), (RW_GROUP, Some(ALL_VIEW.to_string()))] {
            v.access.push(AccessEntry {
                group: group.to_string(),
                context: self.shorthand_context.clone(),
                model: None,
                level: SecurityLevel::NoAuthNoPriv,
                read: Some(ALL_VIEW.to_string()),
                write,
            });
        }
        for (i, c) in communities.iter().enumerate() {
            let group = match c.access {
                CommunityAccess::ReadOnly => RO_GROUP,
                CommunityAccess::ReadWrite => RW_GROUP,
            };
            let name = security_name(communities, i);
            for model in [SecurityModel::V1, SecurityModel::V2c] {
                v.groups
                    .entry((model, name.clone()))
                    .or_insert_with(|| group.to_string());
            }
        }
        for (name, a) in &self.users {
            let key = (SecurityModel::Usm, name.clone());
            if v.groups.contains_key(&key) {
                continue;
            }
            let group = format!("ibsnmpd:user:{}", String::from_utf8_lossy(name));
            let view_name = match &a.subtree {
                Some(t) => {
                    v.views.insert(group.clone(), view(t.clone()));
                    group.clone()
                }
                None => ALL_VIEW.to_string(),
            };
            v.groups.insert(key, group.clone());
            v.access.push(AccessEntry {
                group,
                context: self.shorthand_context.clone(),
                model: Some(SecurityModel::Usm),
                level: a.min_level,
                read: Some(view_name.clone()),
                write: a.write.then_some(view_name),
            });
        }
        v
    }
}

/// RFC 3415 isAccessAllowed for a request of `pdu` by a principal.
pub(crate) fn decide<'a>(
    vacm: &'a Vacm,
    context: &[u8],
    model: SecurityModel,
    name: &[u8],
    level: SecurityLevel,
    pdu: &Pdu,
) -> Decision<'a> {
    match vacm.views_in(context, model, name, level) {
        None | Some(Err(_)) => Decision::Denied,
        Some(Ok(v)) if matches!(pdu, Pdu::SetRequest(_)) && v.write.is_none() => {
            Decision::ReadOnlySet
        }
        Some(Ok(v)) => Decision::Allowed(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::AccessCheck;
    use crate::pdu::PduBody;
    use crate::usm::{Engine, UserAccess, UserConfig};

    #[test]
    fn shorthands_become_vacm_entries() {
        let users = [
            UserConfig::without_keys(
                "ro",
                Some(UserAccess {
                    write: false,
                    min_level: SecurityLevel::NoAuthNoPriv,
                    subtree: Some(Oid::new(vec![1, 3, 6, 1, 2, 1, 2])),
                }),
            ),
            UserConfig::without_keys("none", None),
        ];
        let usm = Usm::new(Engine::new(vec![0x80, 0, 0, 0, 5, 1], 1), &users).unwrap();
        let ac = AccessControl::new(None, Some(&usm), None);
        let table = Arc::new(vec![
            Community::new("public", CommunityAccess::ReadOnly),
            Community::new("private", CommunityAccess::ReadWrite),
        ]);
        let vacm = ac.vacm(&table);
        assert!(Arc::ptr_eq(&vacm, &ac.vacm(&table)), "built once per table");
        let set = Pdu::SetRequest(PduBody::request(1, vec![]));
        let get = Pdu::GetRequest(PduBody::request(1, vec![]));
        let noauth = SecurityLevel::NoAuthNoPriv;
        let v2c = SecurityModel::V2c;
        assert!(matches!(
            decide(&vacm, b"", v2c, b"public", noauth, &set),
            Decision::ReadOnlySet
        ));
        assert!(matches!(
            decide(&vacm, b"", v2c, b"private", noauth, &set),
            Decision::Allowed(_)
        ));
        assert!(matches!(
            decide(&vacm, b"", v2c, b"other", noauth, &get),
            Decision::Denied
        ));
        let usm_model = SecurityModel::Usm;
        match decide(&vacm, b"", usm_model, b"ro", noauth, &get) {
            Decision::Allowed(v) => {
                assert!(v.readable(&[1, 3, 6, 1, 2, 1, 2, 1, 0]));
                assert!(!v.readable(&[1, 3, 6, 1, 2, 1, 1, 1, 0]));
            }
            _ => panic!("rouser with a subtree"),
        }
        assert!(matches!(
            decide(&vacm, b"", usm_model, b"none", noauth, &get),
            Decision::Denied
        ));
        // A new table (reload) gets its own VACM.
        let table2 = Arc::new(vec![Community::new("public", CommunityAccess::ReadWrite)]);
        assert!(matches!(
            decide(&ac.vacm(&table2), b"", v2c, b"public", noauth, &set),
            Decision::Allowed(_)
        ));
    }
}
