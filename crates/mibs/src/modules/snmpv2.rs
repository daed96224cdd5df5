//! SNMPv2-MIB (RFC 3418): the system group, sysORTable and the snmp group.
//!
//! sysContact, sysName, sysLocation and snmpEnableAuthenTraps are writable;
//! their Sets become [`Change`]s that the daemon applies and persists.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use snmp::mib::{MibObject, SetError};
use snmp::table::{check, Scalars};
use snmp::value::Value;

use crate::core::column::{index, ro, table};
use crate::core::oids::snmpv2_mib as o;
use crate::core::state::PersistedState;
use crate::core::util::{last, oid};
use crate::core::view::SysOrEntry;
use crate::Change;
use crate::Col;
use crate::{SystemState, View};

/// sysObjectID of ibsnmpd: `infinibandMIB.100.1` (1.3.6.1.3.117.100.1).
///
/// The experimental arc 117 is where the InfiniBand MIBs live
/// (IB-TC-MIB's `infinibandMIB`); its sub-arcs 1-3 are taken by the IB
/// MIB modules. 100 is used here for this agent so that sysObjectID
/// needs no private enterprise number (see docs/usage.md).
pub const IBSNMPD_OBJECT_ID: &[u32] = &[1, 3, 6, 1, 3, 117, 100, 1];

/// sysServices: applications (layer 7) + end-to-end (layer 4), the value
/// net-snmp's snmpd reports by default.
pub const SYS_SERVICES: i32 = 72;

/// The longest DisplayString (RFC 2579: SIZE (0..255)).
const DISPLAY_STRING_MAX: usize = 255;

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    ..crate::ModuleDef::plain("SNMPv2-MIB", || Some(or_entry()), objects)
};

/// The values set over SNMP (persisted); `None`: the configured default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SystemGroup {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_contact: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snmp_enable_authen_traps: Option<bool>,
}

impl PersistedState for SystemGroup {
    const MODULE: &'static str = "SNMPv2-MIB";

    fn from_v1(kv: &BTreeMap<String, String>) -> Self {
        SystemGroup {
            sys_contact: kv.get("sysContact").cloned(),
            sys_name: kv.get("sysName").cloned(),
            sys_location: kv.get("sysLocation").cloned(),
            snmp_enable_authen_traps: match kv.get("snmpEnableAuthenTraps").map(String::as_str) {
                Some("1") => Some(true),
                Some("2") => Some(false),
                _ => None,
            },
        }
    }
}

fn stored(s: &SystemState) -> &SystemGroup {
    s.modules.get::<SystemGroup>()
}

/// sysContact: as set over SNMP, else as configured.
pub fn sys_contact(s: &SystemState) -> &str {
    stored(s).sys_contact.as_deref().unwrap_or(&s.contact)
}

/// sysName: as set over SNMP, else as configured.
pub fn sys_name(s: &SystemState) -> &str {
    stored(s).sys_name.as_deref().unwrap_or(&s.name)
}

/// sysLocation: as set over SNMP, else as configured.
pub fn sys_location(s: &SystemState) -> &str {
    stored(s).sys_location.as_deref().unwrap_or(&s.location)
}

/// snmpEnableAuthenTraps: as set over SNMP, else as configured.
pub fn authen_traps_enabled(s: &SystemState) -> bool {
    stored(s)
        .snmp_enable_authen_traps
        .unwrap_or(s.enable_authen_traps)
}

/// A Set of one of the writable objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SystemSet {
    SysContact(String),
    SysName(String),
    SysLocation(String),
    /// true = enabled(1), false = disabled(2).
    SnmpEnableAuthenTraps(bool),
}

impl SystemSet {
    /// Phase 2: into the agent's state (persisted).
    pub(crate) fn apply(&self, state: &mut SystemState) {
        state.modules.update::<SystemGroup>(|g| match self {
            SystemSet::SysContact(s) => g.sys_contact = Some(s.clone()),
            SystemSet::SysName(s) => g.sys_name = Some(s.clone()),
            SystemSet::SysLocation(s) => g.sys_location = Some(s.clone()),
            SystemSet::SnmpEnableAuthenTraps(b) => g.snmp_enable_authen_traps = Some(*b),
        })
    }
}

/// sysORTable row for this module (its MODULE-IDENTITY snmpMIB).
pub fn or_entry() -> SysOrEntry {
    SysOrEntry::new(o::SNMP_MIB, "The MIB module for SNMP entities (RFC 3418)")
}

fn text(s: &str) -> Value {
    Value::OctetString(s.as_bytes().to_vec())
}

fn display_string(v: &Value) -> Result<String, SetError> {
    check::display_string(v, DISPLAY_STRING_MAX)
}

/// Every object of the module, ready for `Dispatcher::register_all`.
pub fn objects(_: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    let mut objs = system_scalars().into_objects();
    objs.push(Arc::new(table(
        o::SYS_OR_ENTRY,
        |v: &View| &v.system.or_rows,
        OR_COLS,
    )));
    objs.push(Arc::new(snmp_group()));
    objs
}

/// system group scalars (sysORTable shares the root, hence `into_objects`).
fn system_scalars() -> Scalars<View, Change> {
    Scalars::new(oid(o::SYSTEM))
        .read_only(last(o::SYS_DESCR), |v: &View| text(&v.system.descr))
        .read_only(last(o::SYS_OBJECT_ID), |v: &View| {
            Value::ObjectId(v.system.object_id.clone())
        })
        .read_only(last(o::SYS_UP_TIME), |v: &View| {
            Value::TimeTicks(v.system.up_time())
        })
        .read_write(
            last(o::SYS_CONTACT),
            |v: &View| text(sys_contact(&v.system)),
            |_, val| display_string(val).map(|s| Change::System(SystemSet::SysContact(s))),
        )
        .read_write(
            last(o::SYS_NAME),
            |v: &View| text(sys_name(&v.system)),
            |_, val| display_string(val).map(|s| Change::System(SystemSet::SysName(s))),
        )
        .read_write(
            last(o::SYS_LOCATION),
            |v: &View| text(sys_location(&v.system)),
            |_, val| display_string(val).map(|s| Change::System(SystemSet::SysLocation(s))),
        )
        .read_only(last(o::SYS_SERVICES), |_| Value::Integer(SYS_SERVICES))
        .read_only(last(o::SYS_OR_LAST_CHANGE), |v: &View| {
            Value::TimeTicks(v.system.or_last_change)
        })
}

/// sysORTable, indexed by sysORIndex (1..n in the order modules registered).
const OR_COLS: &[Col<SysOrEntry>] = &[
    index(o::SYS_OR_INDEX),
    ro(o::SYS_ORID, |_, e| Some(Value::ObjectId(e.id.clone()))),
    ro(o::SYS_OR_DESCR, |_, e| Some(text(&e.descr))),
    ro(o::SYS_OR_UP_TIME, |_, e| Some(Value::TimeTicks(e.up_time))),
];

/// The snmp group: the agent's message counters and snmpEnableAuthenTraps,
/// plus the obsolete RFC 1213 counters (snmpObsoleteGroup) that managers
/// still poll, as net-snmp serves them. Those counting PDUs this agent never
/// receives or sends (responses, traps, outgoing requests) stay at zero.
fn snmp_group() -> Scalars<View, Change> {
    use std::sync::atomic::Ordering::Relaxed;
    // (column, the agent's counter): Counter32 reads of SnmpStats.
    type Field = fn(&snmp::agent::SnmpStats) -> &std::sync::atomic::AtomicU32;
    let counters: [(&[u32], Field); 18] = [
        (o::SNMP_IN_PKTS, |s| &s.in_pkts),
        (o::SNMP_IN_BAD_VERSIONS, |s| &s.in_bad_versions),
        (o::SNMP_IN_BAD_COMMUNITY_NAMES, |s| {
            &s.in_bad_community_names
        }),
        (o::SNMP_IN_BAD_COMMUNITY_USES, |s| &s.in_bad_community_uses),
        (o::SNMP_IN_ASN_PARSE_ERRS, |s| &s.in_asn_parse_errs),
        (o::SNMP_OUT_PKTS, |s| &s.out_pkts),
        (o::SNMP_IN_TOTAL_REQ_VARS, |s| &s.in_total_req_vars),
        (o::SNMP_IN_TOTAL_SET_VARS, |s| &s.in_total_set_vars),
        (o::SNMP_IN_GET_REQUESTS, |s| &s.in_get_requests),
        (o::SNMP_IN_GET_NEXTS, |s| &s.in_get_nexts),
        (o::SNMP_IN_SET_REQUESTS, |s| &s.in_set_requests),
        (o::SNMP_OUT_TOO_BIGS, |s| &s.out_too_bigs),
        (o::SNMP_OUT_NO_SUCH_NAMES, |s| &s.out_no_such_names),
        (o::SNMP_OUT_BAD_VALUES, |s| &s.out_bad_values),
        (o::SNMP_OUT_GEN_ERRS, |s| &s.out_gen_errs),
        (o::SNMP_OUT_GET_RESPONSES, |s| &s.out_get_responses),
        (o::SNMP_SILENT_DROPS, |s| &s.silent_drops),
        (o::SNMP_PROXY_DROPS, |s| &s.proxy_drops),
    ];
    // Obsolete counters of PDUs this agent never receives or sends.
    let zeros = [
        o::SNMP_IN_TOO_BIGS,
        o::SNMP_IN_NO_SUCH_NAMES,
        o::SNMP_IN_BAD_VALUES,
        o::SNMP_IN_READ_ONLYS,
        o::SNMP_IN_GEN_ERRS,
        o::SNMP_IN_GET_RESPONSES,
        o::SNMP_IN_TRAPS,
        o::SNMP_OUT_GET_REQUESTS,
        o::SNMP_OUT_GET_NEXTS,
        o::SNMP_OUT_SET_REQUESTS,
        o::SNMP_OUT_TRAPS,
    ];
    let group = Scalars::new(oid(o::SNMP)).read_write(
        last(o::SNMP_ENABLE_AUTHEN_TRAPS),
        |v: &View| {
            Value::Integer(if authen_traps_enabled(&v.system) {
                1
            } else {
                2
            })
        },
        |_, val| {
            check::enumerated(val, &[1, 2])
                .map(|i| Change::System(SystemSet::SnmpEnableAuthenTraps(i == 1)))
        },
    );
    let group = counters.into_iter().fold(group, |g, (column, f)| {
        g.read_only(last(column), move |v: &View| {
            Value::Counter32(f(&v.stats).load(Relaxed))
        })
    });
    zeros.into_iter().fold(group, |g, column| {
        g.read_only(last(column), |_: &View| Value::Counter32(0))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemState;
    use ib::model::{CounterHistory, SnapshotBuilder, SweepInfo};
    use snmp::agent::SnmpStats;
    use snmp::dispatch::Dispatcher;
    use snmp::oid::Oid;

    fn view() -> View {
        let snap = SnapshotBuilder::new(0xfe80_0000_0000_0000).build(
            SweepInfo {
                number: 1,
                time: std::time::SystemTime::now(),
                duration: std::time::Duration::ZERO,
                source: "test".into(),
                cost: Default::default(),
            },
            &mut CounterHistory::new(),
        );
        let mut st = SystemState::new("descr".into(), Oid::from_slice(IBSNMPD_OBJECT_ID));
        st.contact = "c".into();
        st.set_or_table(vec![or_entry()]);
        View::new(Arc::new(snap), Arc::new(st), SnmpStats::new())
    }

    fn dispatcher() -> Dispatcher<View, Change> {
        let mut d = Dispatcher::new();
        d.register_all(objects(&crate::Options::default())).unwrap();
        d
    }

    #[test]
    fn walk_is_ordered_and_complete() {
        let d = dispatcher();
        let v = view();
        let mut oid = vec![1, 3];
        let mut seen = Vec::new();
        while let Some(vb) = d.next(&v, &oid) {
            assert!(vb.oid.as_slice() > oid.as_slice());
            oid = vb.oid.clone().into_vec();
            seen.push(vb);
        }
        let at = |o: &[u32]| {
            seen.iter()
                .find(|vb| vb.oid.as_slice() == o)
                .map(|vb| &vb.value)
        };
        assert_eq!(
            at(&[1, 3, 6, 1, 2, 1, 1, 4, 0]),
            Some(&Value::OctetString(b"c".to_vec()))
        );
        assert_eq!(at(&[1, 3, 6, 1, 2, 1, 1, 7, 0]), Some(&Value::Integer(72)));
        assert_eq!(
            at(&[1, 3, 6, 1, 2, 1, 1, 9, 1, 2, 1]),
            Some(&Value::ObjectId(Oid::from_slice(o::SNMP_MIB)))
        );
        assert_eq!(at(&[1, 3, 6, 1, 2, 1, 11, 30, 0]), Some(&Value::Integer(2)));
        assert!(
            at(&[1, 3, 6, 1, 2, 1, 1, 9, 1, 1, 1]).is_none(),
            "sysORIndex is not-accessible"
        );
    }

    #[test]
    fn set_checks() {
        let d = dispatcher();
        let v = view();
        let contact = [1, 3, 6, 1, 2, 1, 1, 4, 0];
        let s = |b: &[u8]| Value::OctetString(b.to_vec());
        assert_eq!(
            d.check_set(&v, &contact, &s(b"ops")),
            Ok(Change::System(SystemSet::SysContact("ops".into())))
        );
        assert_eq!(
            d.check_set(&v, &contact, &s(&[b'a'; 256])),
            Err(SetError::WrongLength)
        );
        assert_eq!(
            d.check_set(&v, &contact, &s(&[b'a', 1])),
            Err(SetError::WrongValue)
        );
        assert_eq!(
            d.check_set(&v, &contact, &Value::Integer(1)),
            Err(SetError::WrongType)
        );
        assert_eq!(
            d.check_set(&v, &[1, 3, 6, 1, 2, 1, 1, 1, 0], &s(b"x")),
            Err(SetError::NotWritable)
        );
        let traps = [1, 3, 6, 1, 2, 1, 11, 30, 0];
        assert_eq!(
            d.check_set(&v, &traps, &Value::Integer(1)),
            Ok(Change::System(SystemSet::SnmpEnableAuthenTraps(true)))
        );
        assert_eq!(
            d.check_set(&v, &traps, &Value::Integer(3)),
            Err(SetError::WrongValue)
        );
    }
}
