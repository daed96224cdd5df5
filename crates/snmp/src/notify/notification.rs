//! One notification and its SNMPv2 variable bindings (RFC 3416 section 4.2.6).

use crate::oid::Oid;
use crate::value::{Value, VarBind};

/// sysUpTime.0 (SNMPv2-MIB).
pub const SYS_UP_TIME_0: &[u32] = &[1, 3, 6, 1, 2, 1, 1, 3, 0];
/// snmpTrapOID.0 (SNMPv2-MIB).
pub const SNMP_TRAP_OID_0: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0];

/// One notification: its NOTIFICATION-TYPE OID and OBJECTS, without the
/// leading sysUpTime.0 and snmpTrapOID.0 (added when it is sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    pub trap_oid: Oid,
    pub varbinds: Vec<VarBind>,
    /// The object it is about (e.g. `0x0002c90300000001:1`), for storm
    /// control; None: never rate-limited.
    pub source: Option<String>,
    /// The state of its source it reports (e.g. `"link"` for linkUp and
    /// linkDown): of a source's notifications with one state, the last
    /// supersedes the others. When storm control held some back, the last
    /// one goes out as the window ends, unless the manager already has it
    /// (a suppressed state change never leaves a manager with a stale
    /// state). None: an event, only counted when suppressed.
    pub state: Option<&'static str>,
    /// The context it is about (RFC 3411 contextName, e.g. a node's):
    /// SNMPv3 sinks carry it in the scopedPDU; SNMPv1/v2c have no place
    /// for it. Empty: the default context.
    pub context: Vec<u8>,
}

impl Notification {
    pub fn new(trap_oid: &[u32], varbinds: Vec<VarBind>) -> Self {
        Notification {
            trap_oid: Oid::from_slice(trap_oid),
            varbinds,
            source: None,
            state: None,
            context: Vec::new(),
        }
    }

    /// The same notification, about context `context`.
    pub fn with_context(mut self, context: impl Into<Vec<u8>>) -> Self {
        self.context = context.into();
        self
    }

    /// The same notification, rate-limited as coming from `source`.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// The same notification, reporting state `state` of its source.
    pub fn with_state(mut self, state: &'static str) -> Self {
        self.state = Some(state);
        self
    }

    /// The SNMPv2-Trap/InformRequest variable bindings: sysUpTime.0,
    /// snmpTrapOID.0, then the OBJECTS (RFC 3416 section 4.2.6).
    pub fn v2_varbinds(&self, up_time: u32) -> Vec<VarBind> {
        let mut v = Vec::with_capacity(self.varbinds.len() + 2);
        v.push(VarBind::new(
            Oid::from_slice(SYS_UP_TIME_0),
            Value::TimeTicks(up_time),
        ));
        v.push(VarBind::new(
            Oid::from_slice(SNMP_TRAP_OID_0),
            Value::ObjectId(self.trap_oid.clone()),
        ));
        v.extend(self.varbinds.iter().cloned());
        v
    }
}
