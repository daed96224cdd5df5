//! The models layer: the source thread and what it publishes and derives
//! from each snapshot (the health checks, the cabling plan's and the route
//! check's findings, the node-name-map), the state directory, the OpenSM
//! on this host and the log. It names nothing of the layers above.

pub mod cabling_plan;
pub mod engine_state;
pub mod fabric_health;
pub mod findings;
pub mod logging;
pub mod nodemap;
pub mod opensm;
pub mod route_check;
pub mod source_thread;
pub mod state;
