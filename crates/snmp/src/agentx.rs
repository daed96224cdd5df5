//! AgentX (RFC 2741): the subagent side, so the application's MIB modules can
//! be served through a master agent (net-snmp's snmpd) under its access
//! control, users and trap sinks.
//!
//! - [`pdu`]: the PDUs as typed structs, pure encode/decode;
//! - [`subagent`]: the session over a Unix or TCP stream, driving the same
//!   [`crate::dispatch::Dispatcher`] and Set controller as the UDP transport.

pub mod pdu;
pub mod subagent;

pub use subagent::{
    ContextRegistrations, MasterAddress, Notification, Registration, Subagent, SubagentConfig,
};
