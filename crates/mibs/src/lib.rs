//! MIB modules served by ibsnmpd, as typed tables over one immutable view.
//!
//! Every module implements `snmp::mib::MibObject<View, Change>`: reads come
//! from [`view::View`] (the fabric snapshot plus agent state), Sets turn into
//! [`change::Change`] values that the daemon's one control path applies.

pub mod oids;
pub mod view;
pub mod change;
pub mod snmpv2;
