//! The services layer: what runs beside the source thread on the agent's
//! runtime (the control path, request sessions, triggers, notifications,
//! the control socket, AgentX, the node contexts) and the configured
//! source's opening. It names the settings and the models, never the
//! daemon that assembles it.

pub mod agentx;
pub mod contexts;
pub mod control_socket;
pub mod controller;
pub mod requests;
pub mod sources;
pub mod targets;
pub mod traps;
pub mod triggers;
pub mod usm_users;
pub mod vacm_tables;
