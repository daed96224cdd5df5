//! SNMP-VIEW-BASED-ACM-MIB (RFC 3415): the VACM tables, managed over SNMP
//! the way net-snmp's `snmpvacm` does it.
//!
//! vacmSecurityToGroupTable, vacmAccessTable and vacmViewTreeFamilyTable are
//! read-create RowStatus tables ([`crate::modules::admin`]). The configuration's VACM
//! (with the community and user shorthands) shows as `permanent` rows that
//! refuse Sets; rows created over SNMP are kept in [`VacmState`], which
//! derives the [`Vacm`] they put in force ([`VacmState::in_force`]) after
//! every Set. The engine adds that to the configured VACM per request.
//!
//! vacmContextTable lists "" alone here; with node contexts the daemon
//! registers `snmp::context::ContextTable` instead (every node's context,
//! docs/contexts.md). An access row's vacmAccessContextPrefix and
//! vacmAccessContextMatch are in force as written: a prefix row reaches
//! the node contexts whose names start with it.

use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};
use snmp::mib::SetError;
use snmp::oid::Oid;
use snmp::rowstatus::RowStatus;
use snmp::table::RowSet;
use snmp::usm::SecurityLevel;
use snmp::vacm::{AccessEntry, SecurityModel, Vacm, ViewFamily};
use snmp::value::Value;

use crate::core::column::{ro, table};
use crate::core::oids::snmp_view_based_acm_mib as o;
use crate::core::state::PersistedState;
use crate::core::util::last;
use crate::core::view::SysOrEntry;
use crate::modules::admin::{self, AdminRow, AdminRows, AdminState, AdminTable, SpinLock};
use crate::Object;
use crate::View;

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    ..crate::ModuleDef::plain(
        "SNMP-VIEW-BASED-ACM-MIB",
        || {
            Some(SysOrEntry::new(
                o::SNMP_VACM_MIB,
                "The View-based Access Control Model (RFC 3415), its tables managed over SNMP",
            ))
        },
        objects,
    )
};

fn objects(_: &crate::Options) -> Vec<Object> {
    vec![
        Arc::new(table(
            o::VACM_CONTEXT_ENTRY,
            contexts,
            &[ro(o::VACM_CONTEXT_NAME, |_, _| {
                Some(Value::OctetString(Vec::new()))
            })],
        )),
        Arc::new(AdminTable::<GroupRow>::new()),
        Arc::new(AdminTable::<AccessRow>::new()),
        admin::spin_lock::<VacmState>(
            o::VACM_VIEW_SPIN_LOCK,
            |s| s.spin_lock,
            |s| &mut s.spin_lock,
        ),
        Arc::new(AdminTable::<FamilyRow>::new()),
    ]
}

/// vacmContextTable: the default context "" (index: its length, 0).
fn contexts(_: &View) -> &RowSet<()> {
    static CONTEXTS: LazyLock<RowSet<()>> = LazyLock::new(|| RowSet::from_pairs([(vec![0], ())]));
    &CONTEXTS
}

/// The module's state: its three tables (rows created over SNMP persisted,
/// the configuration's added at startup) and what they put in force.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "Saved")]
pub struct VacmState {
    pub groups: AdminRows<GroupRow>,
    pub access: AdminRows<AccessRow>,
    pub views: AdminRows<FamilyRow>,
    /// vacmViewSpinLock (this run only, as RFC 2579 TestAndIncr allows).
    #[serde(skip)]
    spin_lock: SpinLock,
    /// The active rows created over SNMP, as the engine reads them.
    #[serde(skip)]
    in_force: Arc<Vacm>,
}

/// The state file's part of [`VacmState`].
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Saved {
    groups: AdminRows<GroupRow>,
    access: AdminRows<AccessRow>,
    views: AdminRows<FamilyRow>,
}

impl From<Saved> for VacmState {
    fn from(s: Saved) -> Self {
        let mut v = VacmState {
            groups: s.groups,
            access: s.access,
            views: s.views,
            ..VacmState::default()
        };
        v.refresh();
        v
    }
}

impl PersistedState for VacmState {
    const MODULE: &'static str = "SNMP-VIEW-BASED-ACM-MIB";
}

impl AdminState for VacmState {
    fn refresh(&mut self) {
        let mut v = Vacm::default();
        for (index, row) in managed(&self.groups) {
            if let Some((model, name)) = group_index(index) {
                if let Some(m) = security_model(model) {
                    v.groups.insert((m, name), row.group_name.clone());
                }
            }
        }
        for (index, row) in managed(&self.access) {
            if let Some(a) = access_index(index).and_then(|i| row.entry(i)) {
                v.access.push(a);
            }
        }
        for (index, row) in managed(&self.views) {
            if let Some((name, subtree)) = family_index(index) {
                v.views.entry(name).or_default().families.push(ViewFamily {
                    subtree,
                    mask: row.mask.clone(),
                    included: row.included,
                });
            }
        }
        self.in_force = Arc::new(v);
    }
}

impl VacmState {
    /// What the rows created over SNMP put in force (the engine merges it
    /// with the configured VACM; a new `Arc` after each change).
    pub fn in_force(&self) -> &Arc<Vacm> {
        &self.in_force
    }

    /// Makes what the configuration puts in force the `permanent` rows, in
    /// place of the previous configuration's (an SNMP row at the same index
    /// gives way). Entries no row can show (a name longer than the MIB
    /// allows) are left out of the tables, not out of force. Returns how
    /// many SNMP rows gave way.
    pub fn configure(&mut self, configured: &Vacm) -> usize {
        self.groups.clear_configured();
        self.access.clear_configured();
        self.views.clear_configured();
        let mut displaced = 0;
        let mut put = |replaced: bool| displaced += usize::from(replaced);
        for ((model, name), group) in &configured.groups {
            let mut index = vec![*model as u32];
            admin::string_index(name, &mut index);
            if GroupRow::valid_index(&index) {
                put(self.groups.put_configured(
                    index,
                    GroupRow {
                        group_name: group.clone(),
                    },
                ));
            }
        }
        for a in &configured.access {
            let mut index = Vec::new();
            admin::string_index(a.group.as_bytes(), &mut index);
            // The contexts the entry governs (the shorthands': every
            // context with node contexts, docs/contexts.md).
            let (prefix, context_match) = match &a.context {
                snmp::vacm::ContextMatch::Exact(p) => (p, MATCH_EXACT),
                snmp::vacm::ContextMatch::Prefix(p) => (p, MATCH_PREFIX),
            };
            admin::string_index(prefix, &mut index);
            index.push(a.model.map_or(0, |m| m as u32));
            index.push(a.level as u32);
            if AccessRow::valid_index(&index) {
                put(self.access.put_configured(
                    index,
                    AccessRow {
                        read_view_name: a.read.clone().unwrap_or_default(),
                        write_view_name: a.write.clone().unwrap_or_default(),
                        context_match,
                        ..AccessRow::default()
                    },
                ));
            }
        }
        for (name, view) in &configured.views {
            for f in &view.families {
                let mut index = Vec::new();
                admin::string_index(name.as_bytes(), &mut index);
                index.push(u32::try_from(f.subtree.len()).unwrap_or(u32::MAX));
                index.extend_from_slice(f.subtree.as_slice());
                if FamilyRow::valid_index(&index) {
                    put(self.views.put_configured(
                        index,
                        FamilyRow {
                            mask: f.mask.clone(),
                            included: f.included,
                        },
                    ));
                }
            }
        }
        self.refresh();
        displaced
    }
}

/// The rows a manager created and activated (the configuration's are in
/// force through the engine's own copy).
fn managed<R: AdminRow>(rows: &AdminRows<R>) -> impl Iterator<Item = (&[u32], &R)> + '_ {
    rows.iter()
        .filter(|(_, r)| r.status == RowStatus::Active && !r.data.storage.fixed())
        .map(|(k, r)| (k, &r.data.data))
}

/// SnmpSecurityModel values the engine has (RFC 3411: 1 SNMPv1, 2 SNMPv2c,
/// 3 USM); other models may have rows but no principal of theirs exists.
fn security_model(v: u32) -> Option<SecurityModel> {
    Some(match v {
        1 => SecurityModel::V1,
        2 => SecurityModel::V2c,
        3 => SecurityModel::Usm,
        _ => return None,
    })
}

fn security_level(v: u32) -> Option<SecurityLevel> {
    Some(match v {
        1 => SecurityLevel::NoAuthNoPriv,
        2 => SecurityLevel::AuthNoPriv,
        3 => SecurityLevel::AuthPriv,
        _ => return None,
    })
}

/// Whether an instance of `entry`'s columns at `index` fits in an OID
/// (RFC 2578: at most 128 sub-identifiers).
fn fits(entry: &[u32], index: &[u32]) -> bool {
    entry.len() + 1 + index.len() <= 128
}

/// A length-prefixed SnmpAdminString (UTF-8, RFC 3411) of `lo..=hi` octets
/// at the start of `index`, and the rest.
fn admin_string(index: &[u32], lo: usize, hi: usize) -> Option<(String, &[u32])> {
    let (s, rest) = admin::split_string(index)?;
    admin::sized(&s, lo, hi).then_some(())?;
    Some((String::from_utf8(s).ok()?, rest))
}

/// An SnmpAdminString column value of at most 32 octets (its SIZE is
/// checked before): UTF-8 or wrongValue.
fn admin_value(v: &Value) -> Result<String, SetError> {
    match v {
        Value::OctetString(b) => String::from_utf8(b.clone()).map_err(|_| SetError::WrongValue),
        _ => Err(SetError::WrongType),
    }
}

fn octets(s: &str) -> Option<Value> {
    Some(Value::OctetString(s.as_bytes().to_vec()))
}

// ----- vacmSecurityToGroupTable ----------------------------------------------------------

/// vacmSecurityToGroupEntry, index (vacmSecurityModel, vacmSecurityName).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupRow {
    pub group_name: String,
}

/// (securityModel, securityName) of a vacmSecurityToGroupEntry index.
fn group_index(index: &[u32]) -> Option<(u32, Vec<u8>)> {
    let (&model, rest) = index.split_first()?;
    let (name, rest) = admin::split_string(rest)?;
    let ok = rest.is_empty()
        && (1..=i32::MAX as u32).contains(&model)
        && admin::sized(&name, 1, 32)
        && fits(o::VACM_SECURITY_TO_GROUP_ENTRY, index);
    ok.then_some((model, name))
}

impl AdminRow for GroupRow {
    type State = VacmState;
    const ENTRY: &'static [u32] = o::VACM_SECURITY_TO_GROUP_ENTRY;
    const STATUS: u32 = last(o::VACM_SECURITY_TO_GROUP_STATUS);
    const STORAGE: u32 = last(o::VACM_SECURITY_TO_GROUP_STORAGE_TYPE);

    fn rows(s: &VacmState) -> &AdminRows<Self> {
        &s.groups
    }
    fn rows_mut(s: &mut VacmState) -> &mut AdminRows<Self> {
        &mut s.groups
    }

    fn valid_index(index: &[u32]) -> bool {
        group_index(index).is_some()
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        (column == last(o::VACM_GROUP_NAME)).then(|| octets(&self.group_name))?
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        if column != last(o::VACM_GROUP_NAME) {
            return Err(SetError::NotWritable);
        }
        self.group_name = admin_value(value)?;
        Ok(())
    }

    /// vacmGroupName has no DEFVAL.
    fn ready(&self) -> bool {
        !self.group_name.is_empty()
    }
}

// ----- vacmAccessTable ---------------------------------------------------------------------

/// vacmAccessContextMatch exact(1): the DEFVAL.
const MATCH_EXACT: i32 = 1;
/// vacmAccessContextMatch prefix(2).
const MATCH_PREFIX: i32 = 2;

/// vacmAccessEntry, index (vacmGroupName, vacmAccessContextPrefix,
/// vacmAccessSecurityModel, vacmAccessSecurityLevel).
///
/// A field missing from the state file reads as its narrowest value (exact
/// match, no view): never more access than the row was given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AccessRow {
    /// exact(1) or prefix(2).
    pub context_match: i32,
    pub read_view_name: String,
    pub write_view_name: String,
    /// Kept and shown; the agent's notifications are not filtered by it.
    pub notify_view_name: String,
}

impl Default for AccessRow {
    fn default() -> Self {
        AccessRow {
            context_match: MATCH_EXACT,
            read_view_name: String::new(),
            write_view_name: String::new(),
            notify_view_name: String::new(),
        }
    }
}

/// A vacmAccessEntry index, parsed.
struct AccessIndex {
    group: String,
    context_prefix: Vec<u8>,
    model: u32,
    level: u32,
}

fn access_index(index: &[u32]) -> Option<AccessIndex> {
    let (group, rest) = admin_string(index, 1, 32)?;
    let (context_prefix, rest) = admin::split_string(rest)?;
    let [model, level] = *rest else {
        return None;
    };
    let ok = admin::sized(&context_prefix, 0, 32)
        && model <= i32::MAX as u32
        && security_level(level).is_some()
        && fits(o::VACM_ACCESS_ENTRY, index);
    ok.then_some(AccessIndex {
        group,
        context_prefix,
        model,
        level,
    })
}

impl AccessRow {
    /// The entry this row puts in force: vacmAccessContextPrefix matched
    /// exactly or as a prefix (the node contexts, docs/contexts.md).
    fn entry(&self, i: AccessIndex) -> Option<AccessEntry> {
        let context = match self.context_match {
            MATCH_EXACT => snmp::vacm::ContextMatch::Exact(i.context_prefix),
            _ => snmp::vacm::ContextMatch::Prefix(i.context_prefix),
        };
        let model = match i.model {
            0 => None,
            m => Some(security_model(m)?),
        };
        let view = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Some(AccessEntry {
            group: i.group,
            context,
            model,
            level: security_level(i.level)?,
            read: view(&self.read_view_name),
            write: view(&self.write_view_name),
        })
    }
}

impl AdminRow for AccessRow {
    type State = VacmState;
    const ENTRY: &'static [u32] = o::VACM_ACCESS_ENTRY;
    const STATUS: u32 = last(o::VACM_ACCESS_STATUS);
    const STORAGE: u32 = last(o::VACM_ACCESS_STORAGE_TYPE);

    fn rows(s: &VacmState) -> &AdminRows<Self> {
        &s.access
    }
    fn rows_mut(s: &mut VacmState) -> &mut AdminRows<Self> {
        &mut s.access
    }

    fn valid_index(index: &[u32]) -> bool {
        access_index(index).is_some()
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        match column {
            c if c == last(o::VACM_ACCESS_CONTEXT_MATCH) => {
                Some(Value::Integer(self.context_match))
            }
            c if c == last(o::VACM_ACCESS_READ_VIEW_NAME) => octets(&self.read_view_name),
            c if c == last(o::VACM_ACCESS_WRITE_VIEW_NAME) => octets(&self.write_view_name),
            c if c == last(o::VACM_ACCESS_NOTIFY_VIEW_NAME) => octets(&self.notify_view_name),
            _ => None,
        }
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        match column {
            c if c == last(o::VACM_ACCESS_CONTEXT_MATCH) => match value {
                Value::Integer(v) => self.context_match = *v,
                _ => return Err(SetError::WrongType),
            },
            c if c == last(o::VACM_ACCESS_READ_VIEW_NAME) => {
                self.read_view_name = admin_value(value)?
            }
            c if c == last(o::VACM_ACCESS_WRITE_VIEW_NAME) => {
                self.write_view_name = admin_value(value)?
            }
            c if c == last(o::VACM_ACCESS_NOTIFY_VIEW_NAME) => {
                self.notify_view_name = admin_value(value)?
            }
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }
}

// ----- vacmViewTreeFamilyTable ------------------------------------------------------------

/// vacmViewTreeFamilyEntry, index (vacmViewTreeFamilyViewName,
/// vacmViewTreeFamilySubtree).
///
/// Every field decides access, so each is required in the state file: a row
/// without `included` is refused as a corrupt one is (read as included, an
/// exclusion would silently become an inclusion).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FamilyRow {
    /// vacmViewTreeFamilyMask ('' by DEFVAL: every sub-identifier counts).
    pub mask: Vec<u8>,
    /// vacmViewTreeFamilyType included(1) (the DEFVAL) or excluded(2).
    pub included: bool,
}

impl Default for FamilyRow {
    fn default() -> Self {
        FamilyRow {
            mask: Vec::new(),
            included: true,
        }
    }
}

/// (viewName, subtree) of a vacmViewTreeFamilyEntry index.
fn family_index(index: &[u32]) -> Option<(String, Oid)> {
    let (name, rest) = admin_string(index, 1, 32)?;
    let (&len, subtree) = rest.split_first()?;
    let ok = usize::try_from(len).is_ok_and(|l| l == subtree.len())
        && fits(o::VACM_VIEW_TREE_FAMILY_ENTRY, index);
    ok.then(|| (name, Oid::from_slice(subtree)))
}

impl AdminRow for FamilyRow {
    type State = VacmState;
    const ENTRY: &'static [u32] = o::VACM_VIEW_TREE_FAMILY_ENTRY;
    const STATUS: u32 = last(o::VACM_VIEW_TREE_FAMILY_STATUS);
    const STORAGE: u32 = last(o::VACM_VIEW_TREE_FAMILY_STORAGE_TYPE);

    fn rows(s: &VacmState) -> &AdminRows<Self> {
        &s.views
    }
    fn rows_mut(s: &mut VacmState) -> &mut AdminRows<Self> {
        &mut s.views
    }

    fn valid_index(index: &[u32]) -> bool {
        family_index(index).is_some()
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        match column {
            c if c == last(o::VACM_VIEW_TREE_FAMILY_MASK) => {
                Some(Value::OctetString(self.mask.clone()))
            }
            c if c == last(o::VACM_VIEW_TREE_FAMILY_TYPE) => {
                Some(Value::Integer(if self.included { 1 } else { 2 }))
            }
            _ => None,
        }
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        match (column, value) {
            (c, Value::OctetString(m)) if c == last(o::VACM_VIEW_TREE_FAMILY_MASK) => {
                self.mask = m.clone()
            }
            (c, Value::Integer(t)) if c == last(o::VACM_VIEW_TREE_FAMILY_TYPE) => {
                self.included = *t == 1
            }
            (c, _)
                if c == last(o::VACM_VIEW_TREE_FAMILY_MASK)
                    || c == last(o::VACM_VIEW_TREE_FAMILY_TYPE) =>
            {
                return Err(SetError::WrongType)
            }
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use snmp::vacm::MibView;

    fn family(name: &str, subtree: &[u32]) -> Vec<u32> {
        let mut i = Vec::new();
        admin::string_index(name.as_bytes(), &mut i);
        i.push(subtree.len() as u32);
        i.extend_from_slice(subtree);
        i
    }

    /// A stored row without a field that decides access fails to load, as
    /// a corrupt one does (security round 4): never an exclusion read as
    /// an inclusion.
    #[test]
    fn rows_missing_an_access_field_are_refused() {
        let family: Result<FamilyRow, _> = serde_json::from_str(r#"{"mask":[]}"#);
        assert!(family.is_err(), "no included");
        let family: FamilyRow = serde_json::from_str(r#"{"mask":[],"included":false}"#).unwrap();
        assert!(!family.included);
        let mask: Result<FamilyRow, _> = serde_json::from_str(r#"{"included":false}"#);
        assert!(mask.is_err(), "no mask: an exclusion could narrow");
    }

    #[test]
    fn indexes_parse_and_refuse_what_the_mib_does() {
        assert_eq!(
            group_index(&[3, 2, b'o' as u32, b'p' as u32]),
            Some((3, b"op".to_vec()))
        );
        assert!(
            group_index(&[0, 1, 65]).is_none(),
            "model 0 is any: not here"
        );
        assert!(group_index(&[3, 0]).is_none(), "securityName SIZE(1..32)");
        assert!(group_index(&[3, 1, 65, 9]).is_none(), "trailing");
        let a = access_index(&[1, 103, 0, 0, 3]).unwrap();
        assert_eq!((a.group.as_str(), a.model, a.level), ("g", 0, 3));
        assert!(access_index(&[1, 103, 0, 0, 4]).is_none(), "level 1..3");
        assert!(access_index(&[1, 0xff, 0, 0, 1]).is_none(), "not UTF-8");
        assert_eq!(
            family_index(&family("v", &[1, 3, 6])),
            Some(("v".into(), Oid::from_slice(&[1, 3, 6])))
        );
        assert!(family_index(&[1, 118, 3, 1, 3]).is_none(), "short subtree");
        let long = family("v", &[1; 120]);
        assert!(family_index(&long).is_none(), "beyond 128 sub-identifiers");
    }

    #[test]
    fn configured_rows_are_permanent_and_not_in_force_twice() {
        let mut configured = Vacm::default();
        configured
            .groups
            .insert((SecurityModel::Usm, b"ops".to_vec()), "g".into());
        configured.views.insert(
            "all".into(),
            MibView {
                families: vec![ViewFamily {
                    subtree: Oid::from_slice(&[1]),
                    mask: Vec::new(),
                    included: true,
                }],
            },
        );
        configured
            .access
            .push(AccessEntry::read_only("g", SecurityLevel::AuthPriv, "all"));
        let mut s = VacmState::default();
        assert_eq!(s.configure(&configured), 0);
        let g = s.groups.get(&[3, 3, 111, 112, 115]).unwrap();
        assert_eq!(g.data.storage, admin::StorageType::Permanent);
        assert!(s.access.get(&[1, 103, 0, 0, 3]).is_some());
        assert!(s.views.get(&family("all", &[1])).is_some());
        // The engine has the configuration already: nothing of it here.
        assert_eq!(**s.in_force(), Vacm::default());
        // A configuration without the group (a reload): its row goes.
        configured.groups.clear();
        s.configure(&configured);
        assert!(s.groups.get(&[3, 3, 111, 112, 115]).is_none());
        assert!(s.access.get(&[1, 103, 0, 0, 3]).is_some());
        // Nothing of it is saved either.
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"groups": [], "access": [], "views": []})
        );
    }

    #[test]
    fn saved_rows_come_back_in_force() {
        let json = serde_json::json!({
            "groups": [{"index": "3.2.111.112", "status": 1, "storage": "nonVolatile",
                        "groupName": "g"}],
            "access": [
                {"index": "1.103.0.3.2", "status": 1, "storage": "nonVolatile",
                 "contextMatch": 1, "readViewName": "v", "writeViewName": "",
                 "notifyViewName": ""},
                // A prefix: in force for the contexts starting with "x".
                {"index": "1.103.1.120.3.2", "status": 1, "storage": "nonVolatile",
                 "contextMatch": 2, "readViewName": "v"},
                // Not active: not in force.
                {"index": "1.103.0.0.1", "status": 2, "storage": "nonVolatile",
                 "readViewName": "v"}
            ],
            "views": [{"index": "1.118.2.1.3", "status": 1, "storage": "nonVolatile",
                       "mask": [], "included": false}]
        });
        let s: VacmState = serde_json::from_value(json.clone()).unwrap();
        let v = s.in_force();
        assert_eq!(
            v.groups.get(&(SecurityModel::Usm, b"op".to_vec())),
            Some(&"g".to_string())
        );
        assert_eq!(v.access.len(), 2);
        assert_eq!(
            v.access[1].context,
            snmp::vacm::ContextMatch::Prefix(b"x".to_vec())
        );
        assert_eq!(v.access[0].context, snmp::vacm::ContextMatch::default());
        assert_eq!(v.access[0].model, Some(SecurityModel::Usm));
        assert_eq!(v.access[0].level, SecurityLevel::AuthNoPriv);
        assert_eq!(v.access[0].read.as_deref(), Some("v"));
        assert_eq!(v.access[0].write, None);
        assert!(!v.views["v"].families[0].included);
        assert_eq!(s.access.iter().count(), 3);
        let back: VacmState = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
