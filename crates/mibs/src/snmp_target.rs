//! SNMP-TARGET-MIB (RFC 3413): its two context counters. The agent has
//! only the default context, so a request for another is unknown
//! (snmpUnknownContexts) and none is ever unavailable.

use std::sync::Arc;

use snmp::mib::MibObject;
use snmp::table::Scalars;
use snmp::value::Value;

use crate::change::Change;
use crate::util::oid;
use crate::view::{SysOrEntry, View};

/// snmpTargetMIB (mibs/ietf/SNMP-TARGET-MIB ships for DISMAN-EVENT-MIB's
/// imports; build.rs does not read it: the counters are all served here).
const SNMP_TARGET_MIB: &[u32] = &[1, 3, 6, 1, 6, 3, 12];
/// snmpTargetObjects.
const SNMP_TARGET_OBJECTS: &[u32] = &[1, 3, 6, 1, 6, 3, 12, 1];

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef::plain(
    "SNMP-TARGET-MIB",
    || {
        Some(SysOrEntry::new(
            SNMP_TARGET_MIB,
            "The MIB for SNMP targets: its context counters (RFC 3413)",
        ))
    },
    objects,
);

fn objects() -> Vec<Arc<dyn MibObject<View, Change>>> {
    use std::sync::atomic::Ordering::Relaxed;
    let counters = Scalars::new(oid(SNMP_TARGET_OBJECTS))
        // snmpUnavailableContexts: no known context is ever unavailable.
        .read_only(4, |_: &View| Value::Counter32(0))
        .read_only(5, |v: &View| {
            Value::Counter32(v.stats.unknown_contexts.load(Relaxed))
        });
    counters.into_objects()
}
