//! SNMPv2-MIB (RFC 3418): the system group, sysORTable and the snmp group.
//!
//! sysContact, sysName, sysLocation and snmpEnableAuthenTraps are writable;
//! their Sets become [`Change`]s that the daemon applies and persists.

use std::sync::Arc;

use snmp::mib::{MibObject, SetError};
use snmp::oid::Oid;
use snmp::table::{check, Scalars, Table};
use snmp::value::Value;

use crate::change::Change;
use crate::oids::snmpv2_mib as o;
use crate::view::{SysOrEntry, View};

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

/// sysORTable row for this module (its MODULE-IDENTITY snmpMIB).
pub fn or_entry() -> SysOrEntry {
    SysOrEntry {
        id: Oid::from_slice(o::SNMP_MIB),
        descr: "The MIB module for SNMP entities (RFC 3418)".to_string(),
        up_time: 0,
    }
}

fn oid(s: &[u32]) -> Oid {
    Oid::from_slice(s)
}

fn last(s: &[u32]) -> u32 {
    s.last().copied().unwrap_or(0)
}

fn text(s: &str) -> Value {
    Value::OctetString(s.as_bytes().to_vec())
}

fn display_string(v: &Value) -> Result<String, SetError> {
    check::display_string(v, DISPLAY_STRING_MAX)
}

/// Every object of the module, ready for `Dispatcher::register_all`.
pub fn objects() -> Vec<Arc<dyn MibObject<View, Change>>> {
    let mut objs = system_scalars().into_objects();
    objs.push(Arc::new(or_table()));
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
            |v: &View| text(&v.system.contact),
            |_, val| display_string(val).map(Change::SysContact),
        )
        .read_write(
            last(o::SYS_NAME),
            |v: &View| text(&v.system.name),
            |_, val| display_string(val).map(Change::SysName),
        )
        .read_write(
            last(o::SYS_LOCATION),
            |v: &View| text(&v.system.location),
            |_, val| display_string(val).map(Change::SysLocation),
        )
        .read_only(last(o::SYS_SERVICES), |_| Value::Integer(SYS_SERVICES))
        .read_only(last(o::SYS_OR_LAST_CHANGE), |v: &View| {
            Value::TimeTicks(v.system.or_last_change)
        })
}

/// sysORTable, indexed by sysORIndex (1..n in the order modules registered).
fn or_table() -> Table<View, Change, SysOrEntry> {
    Table::new(
        oid(o::SYS_OR_ENTRY),
        |v: &View| &v.system.or_rows,
        |_, e: &SysOrEntry, col| match col {
            2 => Some(Value::ObjectId(e.id.clone())),
            3 => Some(text(&e.descr)),
            4 => Some(Value::TimeTicks(e.up_time)),
            _ => None,
        },
    )
    .column(last(o::SYS_OR_INDEX), snmp::table::Access::NotAccessible)
    .read_only(&[
        last(o::SYS_ORID),
        last(o::SYS_OR_DESCR),
        last(o::SYS_OR_UP_TIME),
    ])
}

/// The snmp group: the agent's message counters and snmpEnableAuthenTraps.
fn snmp_group() -> Scalars<View, Change> {
    use std::sync::atomic::Ordering::Relaxed;
    let counter = |f: fn(&snmp::agent::SnmpStats) -> &std::sync::atomic::AtomicU32| {
        move |v: &View| Value::Counter32(f(&v.stats).load(Relaxed))
    };
    Scalars::new(oid(o::SNMP))
        .read_only(last(o::SNMP_IN_PKTS), counter(|s| &s.in_pkts))
        .read_only(last(o::SNMP_IN_BAD_VERSIONS), counter(|s| &s.in_bad_versions))
        .read_only(
            last(o::SNMP_IN_BAD_COMMUNITY_NAMES),
            counter(|s| &s.in_bad_community_names),
        )
        .read_only(
            last(o::SNMP_IN_BAD_COMMUNITY_USES),
            counter(|s| &s.in_bad_community_uses),
        )
        .read_only(last(o::SNMP_IN_ASN_PARSE_ERRS), counter(|s| &s.in_asn_parse_errs))
        .read_write(
            last(o::SNMP_ENABLE_AUTHEN_TRAPS),
            |v: &View| Value::Integer(if v.system.enable_authen_traps { 1 } else { 2 }),
            |_, val| check::enumerated(val, &[1, 2]).map(|i| Change::SnmpEnableAuthenTraps(i == 1)),
        )
        .read_only(last(o::SNMP_SILENT_DROPS), counter(|s| &s.silent_drops))
        .read_only(last(o::SNMP_PROXY_DROPS), counter(|s| &s.proxy_drops))
}
