//! SNMP-NOTIFICATION-MIB (RFC 3413): which targets get notifications, as
//! what, and filtered how. snmpNotifyTable selects snmpTargetAddrTable rows
//! by tag and says trap or inform; snmpNotifyFilterProfileTable names a
//! filter per snmpTargetParamsTable row; snmpNotifyFilterTable holds the
//! filters' families of subtrees (RFC 3413 section 6). All are RowStatus
//! tables managed over SNMP ([`crate::modules::admin`]).
//!
//! [`targets`] is the notification originator's reading of these tables
//! with SNMP-TARGET-MIB's (RFC 3413 section 3.3): done per notification, so
//! a Set is in force for the next one.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use snmp::mib::{MibObject, SetError};
use snmp::oid::Oid;
use snmp::rowstatus::RowStatus;
use snmp::usm::SecurityLevel;
use snmp::vacm::{MibView, ViewFamily};
use snmp::value::Value;

use crate::core::oids::snmp_notification_mib as o;
use crate::core::state::PersistedState;
use crate::core::util::last;
use crate::core::view::SysOrEntry;
use crate::modules::admin::{self, AdminRow, AdminRows, AdminState, AdminTable, StorageType};
use crate::modules::snmp_target::{self as target, integer, octets, TargetState};
use crate::Change;
use crate::{SystemState, View};

/// The module's state: its three tables.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotifyState {
    #[serde(default)]
    pub notify: AdminRows<NotifyEntry>,
    #[serde(default)]
    pub profiles: AdminRows<FilterProfile>,
    #[serde(default)]
    pub filters: AdminRows<Filter>,
}

impl PersistedState for NotifyState {
    const MODULE: &'static str = "SNMP-NOTIFICATION-MIB";
}

/// Nothing derived: the originator reads the rows at each notification.
impl AdminState for NotifyState {}

/// snmpNotifyType trap(1).
pub const TRAP: i32 = 1;
/// snmpNotifyType inform(2).
pub const INFORM: i32 = 2;

/// One snmpNotifyEntry's columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotifyEntry {
    /// snmpNotifyTag: one tag (DEFVAL "": selects nothing).
    #[serde(with = "target::text_octets")]
    pub tag: Vec<u8>,
    /// snmpNotifyType (DEFVAL trap).
    pub kind: i32,
}

impl Default for NotifyEntry {
    fn default() -> Self {
        NotifyEntry {
            tag: Vec::new(),
            kind: TRAP,
        }
    }
}

const NOTIFY_TAG: u32 = last(o::SNMP_NOTIFY_TAG);
const NOTIFY_TYPE: u32 = last(o::SNMP_NOTIFY_TYPE);

impl AdminRow for NotifyEntry {
    type State = NotifyState;
    const ENTRY: &'static [u32] = o::SNMP_NOTIFY_ENTRY;
    const STATUS: u32 = last(o::SNMP_NOTIFY_ROW_STATUS);
    const STORAGE: u32 = last(o::SNMP_NOTIFY_STORAGE_TYPE);

    fn rows(s: &NotifyState) -> &AdminRows<Self> {
        &s.notify
    }
    fn rows_mut(s: &mut NotifyState) -> &mut AdminRows<Self> {
        &mut s.notify
    }

    fn valid_index(index: &[u32]) -> bool {
        target::valid_name(index)
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        match column {
            NOTIFY_TAG => Some(Value::OctetString(self.tag.clone())),
            NOTIFY_TYPE => Some(Value::Integer(self.kind)),
            _ => None,
        }
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        match column {
            NOTIFY_TAG => {
                let t = octets(value)?;
                // SnmpTagValue: one tag, no delimiters.
                if !target::valid_tag_list(t) || target::tags(t).nth(1).is_some() {
                    return Err(SetError::WrongValue);
                }
                self.tag = t.to_vec();
            }
            NOTIFY_TYPE => self.kind = integer(value)?,
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }
}

/// One snmpNotifyFilterProfileEntry's columns (indexed by the params name).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilterProfile {
    /// snmpNotifyFilterProfileName (no DEFVAL: must be set).
    #[serde(default, with = "target::text_octets::option")]
    pub name: Option<Vec<u8>>,
}

const PROFILE_NAME: u32 = last(o::SNMP_NOTIFY_FILTER_PROFILE_NAME);

impl AdminRow for FilterProfile {
    type State = NotifyState;
    const ENTRY: &'static [u32] = o::SNMP_NOTIFY_FILTER_PROFILE_ENTRY;
    const STATUS: u32 = last(o::SNMP_NOTIFY_FILTER_PROFILE_ROW_STATUS);
    const STORAGE: u32 = last(o::SNMP_NOTIFY_FILTER_PROFILE_STOR_TYPE);

    fn rows(s: &NotifyState) -> &AdminRows<Self> {
        &s.profiles
    }
    fn rows_mut(s: &mut NotifyState) -> &mut AdminRows<Self> {
        &mut s.profiles
    }

    fn valid_index(index: &[u32]) -> bool {
        target::valid_name(index)
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        match column {
            PROFILE_NAME => self.name.clone().map(Value::OctetString),
            _ => None,
        }
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        match column {
            PROFILE_NAME => self.name = Some(octets(value)?.to_vec()),
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }

    fn ready(&self) -> bool {
        self.name.is_some()
    }
}

/// snmpNotifyFilterType included(1) / excluded(2).
const INCLUDED: i32 = 1;
const EXCLUDED: i32 = 2;

/// One snmpNotifyFilterEntry's columns (indexed by profile name and subtree).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filter {
    /// snmpNotifyFilterMask (DEFVAL '': every sub-identifier must match).
    pub mask: Vec<u8>,
    /// snmpNotifyFilterType (DEFVAL included).
    pub kind: i32,
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            mask: Vec::new(),
            kind: INCLUDED,
        }
    }
}

const FILTER_MASK: u32 = last(o::SNMP_NOTIFY_FILTER_MASK);
const FILTER_TYPE: u32 = last(o::SNMP_NOTIFY_FILTER_TYPE);

/// A filter index: the profile name and the subtree.
fn filter_index(index: &[u32]) -> Option<(Vec<u8>, &[u32])> {
    let (name, subtree) = admin::split_string(index)?;
    (admin::sized(&name, 1, 32) && subtree.len() <= 128).then_some((name, subtree))
}

impl AdminRow for Filter {
    type State = NotifyState;
    const ENTRY: &'static [u32] = o::SNMP_NOTIFY_FILTER_ENTRY;
    const STATUS: u32 = last(o::SNMP_NOTIFY_FILTER_ROW_STATUS);
    const STORAGE: u32 = last(o::SNMP_NOTIFY_FILTER_STORAGE_TYPE);

    fn rows(s: &NotifyState) -> &AdminRows<Self> {
        &s.filters
    }
    fn rows_mut(s: &mut NotifyState) -> &mut AdminRows<Self> {
        &mut s.filters
    }

    fn valid_index(index: &[u32]) -> bool {
        filter_index(index).is_some()
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        match column {
            FILTER_MASK => Some(Value::OctetString(self.mask.clone())),
            FILTER_TYPE => Some(Value::Integer(self.kind)),
            _ => None,
        }
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        match column {
            FILTER_MASK => self.mask = octets(value)?.to_vec(),
            FILTER_TYPE => self.kind = integer(value)?,
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }
}

/// How a target is sent to: snmpTargetParamsTable's models and names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Security {
    /// SNMPv1 Trap-PDUs with this community.
    V1 { community: Vec<u8> },
    /// SNMPv2c with this community.
    V2c { community: Vec<u8> },
    /// SNMPv3 USM as this user at this level.
    Usm { user: Vec<u8>, level: SecurityLevel },
}

/// One target a notification goes to (RFC 3413 3.3), with what the
/// originator needs: address, PDU class, retries, security.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// snmpTargetAddrName.
    pub name: Vec<u8>,
    pub addr: SocketAddr,
    pub inform: bool,
    /// Informs: time before a retry, and retries.
    pub timeout: Duration,
    pub retries: u32,
    pub security: Security,
}

/// A target and the filter of its params (None: everything passes).
#[derive(Clone, Debug, PartialEq)]
pub struct Selected {
    pub target: Target,
    pub filter: Option<MibView>,
}

impl Selected {
    /// RFC 3413 6.1: the notification's OID and each object's name must be
    /// in the filter.
    pub fn passes<'a>(
        &self,
        trap_oid: &[u32],
        mut objects: impl Iterator<Item = &'a [u32]>,
    ) -> bool {
        match &self.filter {
            None => true,
            Some(v) => v.contains(trap_oid) && objects.all(|o| v.contains(o)),
        }
    }
}

fn security(p: &target::TargetParams) -> Option<Security> {
    let name = p.security_name.clone()?;
    Some(match (p.mp_model?, p.security_level?) {
        (target::MP_V1, _) => Security::V1 { community: name },
        (target::MP_V2C, _) => Security::V2c { community: name },
        (target::MP_V3, 1) => Security::Usm {
            user: name,
            level: SecurityLevel::NoAuthNoPriv,
        },
        (target::MP_V3, 2) => Security::Usm {
            user: name,
            level: SecurityLevel::AuthNoPriv,
        },
        (target::MP_V3, 3) => Security::Usm {
            user: name,
            level: SecurityLevel::AuthPriv,
        },
        _ => return None,
    })
}

/// The active row of `rows` at the IMPLIED name `name`.
fn active_at<'a, R: AdminRow>(rows: &'a AdminRows<R>, name: &[u8]) -> Option<&'a R> {
    let index: Vec<u32> = name.iter().map(|&b| u32::from(b)).collect();
    rows.get(&index)
        .filter(|r| r.status == RowStatus::Active)
        .map(|r| &r.data.data)
}

/// The active filter profile of a params row, as a view (RFC 3413 6:
/// an active profile row without active filter rows lets nothing pass).
fn filter_of(n: &NotifyState, params_name: &[u8]) -> Option<MibView> {
    let profile = active_at(&n.profiles, params_name)?.name.as_deref()?;
    let families = n
        .filters
        .active()
        .filter_map(|(i, f)| {
            let (name, subtree) = filter_index(i)?;
            (name == profile).then(|| ViewFamily {
                subtree: Oid::from_slice(subtree),
                mask: f.mask.clone(),
                included: f.kind != EXCLUDED,
            })
        })
        .collect();
    Some(MibView { families })
}

/// Every target the active snmpNotifyTable rows select (RFC 3413 3.3):
/// active snmpTargetAddrTable rows holding one of their tags, whose params
/// row is active; each once, in snmpTargetAddrTable order (an inform wins
/// over a trap for the same target). Configuration rows (`permanent`) of
/// snmpNotifyTable are left out when `configured` is false: the originator
/// already has them as its fixed sinks.
pub fn targets(system: &SystemState, configured: bool) -> Vec<Selected> {
    let n = system.modules.get::<NotifyState>();
    let t = system.modules.get::<TargetState>();
    // Per tag: whether some row selecting it asks for informs.
    let mut by_tag: HashMap<&[u8], bool> = HashMap::new();
    let notify = n.notify.iter().filter(|(_, r)| {
        r.status == RowStatus::Active && (configured || r.data.storage != StorageType::Permanent)
    });
    for (_, row) in notify {
        let entry = &row.data.data;
        if !entry.tag.is_empty() {
            *by_tag.entry(entry.tag.as_slice()).or_default() |= entry.kind == INFORM;
        }
    }
    if by_tag.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (name, addr) in t.addrs.active() {
        let Some(inform) = target::tags(&addr.tag_list)
            .filter_map(|tag| by_tag.get(tag).copied())
            .reduce(|a, b| a || b)
        else {
            continue;
        };
        let (Some(sock), Some(name)) = (addr.socket_addr(), admin::index_octets(name)) else {
            continue;
        };
        let Some(security) = active_at(&t.params, &addr.params).and_then(security) else {
            continue;
        };
        out.push(Selected {
            target: Target {
                name,
                addr: sock,
                inform,
                timeout: addr.timeout(),
                retries: addr.retries(),
                security,
            },
            filter: filter_of(n, &addr.params),
        });
    }
    out
}

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    ..crate::ModuleDef::plain(
        "SNMP-NOTIFICATION-MIB",
        || {
            Some(SysOrEntry::new(
                o::SNMP_NOTIFICATION_MIB,
                "The MIB for notification origination, targets and filters managed over SNMP (RFC 3413)",
            ))
        },
        objects,
    )
};

fn objects(_: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    vec![
        Arc::new(AdminTable::<NotifyEntry>::new()),
        Arc::new(AdminTable::<FilterProfile>::new()),
        Arc::new(AdminTable::<Filter>::new()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tags select addresses; an inform row wins; rows without active
    /// params or with a tag nobody selects are not targets; permanent
    /// notify rows only when asked for.
    #[test]
    fn notify_rows_select_targets_by_tag() {
        let idx = |s: &str| s.bytes().map(u32::from).collect::<Vec<u32>>();
        let mut st = SystemState::new("t".into(), Oid::from_slice(&[1, 3]));
        let addr = |port: u16, tags: &str, params: &str| {
            let (d, a) = target::t_address(SocketAddr::from(([127, 0, 0, 1], port)));
            target::TargetAddr {
                t_domain: d.to_vec(),
                t_address: a,
                tag_list: tags.as_bytes().to_vec(),
                params: params.as_bytes().to_vec(),
                ..Default::default()
            }
        };
        st.modules.update::<TargetState>(|t| {
            t.addrs.put_configured(idx("a"), addr(1, "x y", "p"));
            t.addrs.put_configured(idx("b"), addr(2, "y", "p"));
            t.addrs.put_configured(idx("c"), addr(3, "z", "p"));
            t.addrs.put_configured(idx("d"), addr(4, "x", "none"));
            t.params.put_configured(
                idx("p"),
                target::TargetParams {
                    mp_model: Some(target::MP_V3),
                    security_model: Some(target::SM_USM),
                    security_name: Some(b"ops".to_vec()),
                    security_level: Some(3),
                },
            );
        });
        st.modules.update::<NotifyState>(|n| {
            let row = |tag: &str, kind| NotifyEntry {
                tag: tag.as_bytes().to_vec(),
                kind,
            };
            n.notify.put_configured(idx("n1"), row("x", TRAP));
            n.notify.put_configured(idx("n2"), row("y", INFORM));
        });
        let got: Vec<(String, bool, u16)> = targets(&st, true)
            .into_iter()
            .map(|s| {
                let t = s.target;
                (String::from_utf8(t.name).unwrap(), t.inform, t.addr.port())
            })
            .collect();
        assert_eq!(got, vec![("a".into(), true, 1), ("b".into(), true, 2)]);
        let t = &targets(&st, true)[0].target;
        assert_eq!(
            t.security,
            Security::Usm {
                user: b"ops".to_vec(),
                level: SecurityLevel::AuthPriv
            }
        );
        assert_eq!(t.timeout, Duration::from_secs(15));
        assert!(targets(&st, false).is_empty(), "permanent rows left out");
    }

    #[test]
    fn filters_follow_the_families() {
        let view = MibView {
            families: vec![
                ViewFamily {
                    subtree: Oid::from_slice(&[1, 3, 6, 1, 6, 3, 1, 1, 5]),
                    mask: Vec::new(),
                    included: true,
                },
                ViewFamily {
                    subtree: Oid::from_slice(&[1, 3, 6, 1, 6, 3, 1, 1, 5, 5]),
                    mask: Vec::new(),
                    included: false,
                },
            ],
        };
        let s = Selected {
            target: Target {
                name: b"t".to_vec(),
                addr: "127.0.0.1:162".parse().unwrap(),
                inform: false,
                timeout: Duration::from_secs(1),
                retries: 0,
                security: Security::V2c {
                    community: b"public".to_vec(),
                },
            },
            filter: Some(view),
        };
        let cold = &[1, 3, 6, 1, 6, 3, 1, 1, 5, 1];
        assert!(s.passes(cold, std::iter::empty()));
        assert!(!s.passes(&[1, 3, 6, 1, 6, 3, 1, 1, 5, 5], std::iter::empty()));
        // An object outside the filter stops it too.
        let obj: &[u32] = &[1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 3];
        assert!(!s.passes(cold, [obj].into_iter()));
        let open = Selected {
            filter: None,
            ..s.clone()
        };
        assert!(open.passes(&[1, 3], [obj].into_iter()));
    }
}
