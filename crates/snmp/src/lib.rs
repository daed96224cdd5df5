//! IB-agnostic SNMP agent engine.
//!
//! Layers, bottom up:
//! - [`ber`]: pure BER encode/decode over byte slices (X.690 subset used by SNMP);
//! - [`oid`], [`value`]: the SMI data model;
//! - [`pdu`], [`message`]: SNMPv1/v2c messages and PDUs as typed structs;
//! - [`mib`], [`table`], [`index`]: the seam every MIB module plugs into, and
//!   the one generic table walker; [`rowstatus`]: read-create rows with a
//!   RowStatus column (RFC 2579), checked as a batch per PDU;
//! - [`dispatch`]: Get/GetNext/GetBulk/Set processing over registered objects
//!   (RFC 3416, with RFC 3584 mapping for v1);
//! - [`agent`]: the UDP transport, community checks and snmp-group counters;
//! - [`agentx`]: the AgentX subagent transport (RFC 2741) over the same
//!   dispatcher and Set control path;
//! - [`notify`]: the notification originator (traps, informs).

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
