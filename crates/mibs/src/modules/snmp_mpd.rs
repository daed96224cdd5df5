//! SNMP-MPD-MIB (RFC 3412): the message processing and dispatching
//! counters, snmpMPDStats.

use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use snmp::agent::SnmpStats;
use snmp::mib::MibObject;
use snmp::table::Scalars;
use snmp::value::Value;

use crate::core::util::oid;
use crate::core::view::SysOrEntry;
use crate::Change;
use crate::View;

/// snmpMPDMIB (no MIB file of it ships in mibs/: its three counters are all
/// it serves).
const SNMP_MPD_MIB: &[u32] = &[1, 3, 6, 1, 6, 3, 11];
/// snmpMPDStats.
const SNMP_MPD_STATS: &[u32] = &[1, 3, 6, 1, 6, 3, 11, 2, 1];

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef::plain(
    "SNMP-MPD-MIB",
    || {
        Some(SysOrEntry::new(
            SNMP_MPD_MIB,
            "The MIB for Message Processing and Dispatching (RFC 3412)",
        ))
    },
    objects,
);

fn objects(_: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    use std::sync::atomic::Ordering::Relaxed;
    let counter = |f: fn(&SnmpStats) -> &AtomicU32| {
        move |v: &View| Value::Counter32(f(&v.stats).load(Relaxed))
    };
    let stats = Scalars::new(oid(SNMP_MPD_STATS))
        .read_only(1, counter(|s| &s.unknown_security_models))
        .read_only(2, counter(|s| &s.invalid_msgs))
        .read_only(3, counter(|s| &s.unknown_pdu_handlers));
    vec![Arc::new(stats)]
}
