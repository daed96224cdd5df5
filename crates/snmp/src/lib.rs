//! IB-agnostic SNMP agent engine.
//!
//! Layers, bottom up (each module names only those below it):
//! - [`ber`], [`oid`], [`value`], [`pdu`], [`message`], [`message_v3`]: the
//!   codec, pure BER over byte slices and the messages as typed structs;
//! - [`mib`]: the seam every MIB module plugs into (and [`response`], where
//!   a walk's instances go);
//! - [`index`], [`syntax`], [`table`]: the one generic table walker and
//!   scalar groups; [`rowstatus`]: read-create rows with a RowStatus column
//!   (RFC 2579), checked as a batch per PDU;
//! - [`notify`]: the notification originator (traps, informs);
//! - [`usm`], [`vacm`]: RFC 3414 and RFC 3415;
//! - [`dispatch`]: Get/GetNext/GetBulk/Set processing over registered objects
//!   (RFC 3416, with RFC 3584 mapping for v1); [`context`]: which view and
//!   objects answer a named context;
//! - [`engine`]: message processing, security, contexts, access control and
//!   counters;
//! - [`agent`]: the UDP transport; [`agentx`]: the AgentX subagent
//!   transport (RFC 2741) over the same dispatcher and Set control path.

#![forbid(unsafe_code)]

pub mod agent;
pub mod agentx;
pub mod ber;
pub mod context;
pub mod dispatch;
pub mod engine;
pub mod index;
pub mod message;
pub mod message_v3;
pub mod mib;
pub mod notify;
pub mod oid;
pub mod pdu;
pub mod response;
pub mod rowstatus;
pub mod syntax;
pub mod table;
pub mod usm;
pub mod vacm;
pub mod value;
