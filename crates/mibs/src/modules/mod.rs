//! The MIB modules ibsnmpd serves, one child each (with the notification
//! mapping and the administrative tables' shared part beside them). They
//! build on [`crate::core`] and meet in the crate root's types.

pub mod admin;
pub mod disman_event;
pub mod entity_mib;
pub mod ib_if_mib;
pub mod ib_pm_mib;
pub mod ib_sm_mib;
pub mod ib_sm_req;
pub mod if_mib;
pub mod node_context;
pub mod notifications;
pub mod snmp_mpd;
pub mod snmp_notification;
pub mod snmp_target;
pub mod snmp_usm;
pub mod snmp_vacm;
pub mod snmpv2;
