//! MIB modules served by ibsnmpd, as typed tables over one immutable view.
//!
//! Every module implements `snmp::mib::MibObject<View, Change>`: reads come
//! from [`view::View`] (the fabric snapshot plus agent state), Sets turn into
//! [`change::Change`] values that the daemon's one control path applies.
//! [`modules`] lists what the daemon registers and what sysORTable shows.

#![forbid(unsafe_code)]

use std::sync::Arc;

use snmp::mib::MibObject;

pub mod change;
pub mod ib_if_mib;
pub mod ib_pm_mib;
pub mod if_mib;
pub mod notifications;
pub mod oids;
pub mod publish;
pub mod snmpv2;
mod util;
pub mod view;

pub use change::Change;
pub use publish::{Published, Publisher};
pub use view::{SysOrEntry, SystemState, View};

/// One registrable MIB object of ibsnmpd.
pub type Object = Arc<dyn MibObject<View, Change>>;

/// A MIB module as served: its objects and its sysORTable row.
pub struct Module {
    /// The module name (e.g. "SNMPv2-MIB").
    pub name: &'static str,
    /// sysORTable row (`None` for modules not listed there).
    pub or_entry: Option<SysOrEntry>,
    pub objects: Vec<Object>,
}

/// Every module ibsnmpd serves, in sysORTable order. A new module adds
/// itself here.
pub fn modules() -> Vec<Module> {
    vec![
        Module {
            name: "SNMPv2-MIB",
            or_entry: Some(snmpv2::or_entry()),
            objects: snmpv2::objects(),
        },
        Module {
            name: "IF-MIB",
            or_entry: Some(if_mib::or_entry()),
            objects: if_mib::objects(),
        },
        Module {
            name: "IB-IF-MIB",
            or_entry: Some(ib_if_mib::or_entry()),
            objects: ib_if_mib::objects(),
        },
        Module {
            name: "IB-PM-MIB",
            or_entry: Some(ib_pm_mib::or_entry()),
            objects: ib_pm_mib::objects(),
        },
    ]
}
