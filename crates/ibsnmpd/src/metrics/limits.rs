//! What the /metrics endpoint lets clients hold, so that scrapes stay fair
//! to SNMP: connections in all and per client address and how long a
//! connection may stall (a reader that stops reading, an idle keep-alive),
//! kept by the HTTP server ([`crate::services::http`]), and scrapes
//! rendering at once, kept by the endpoint.

use std::time::Duration;

/// Default scrapes rendering at once (`metrics_max_renders`): half the
/// cores, at least one, whatever the number of scrapers: the other half
/// stays with SNMP.
pub fn default_max_renders() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}
/// Default scrapes that may wait for a render slot (`metrics_render_queue`).
pub const DEFAULT_RENDER_QUEUE: usize = 8;
/// How long a scrape waits in the queue before its 503.
pub const DEFAULT_QUEUE_WAIT: Duration = Duration::from_secs(5);
/// Default connections per client address (`metrics_max_connections_per_client`).
pub const DEFAULT_MAX_PER_CLIENT: usize = 8;
/// Default time a connection may go without reading or writing a byte
/// (`metrics_stall_timeout`).
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(15);

/// The endpoint's limits (docs/metrics.md, "What a client can hold").
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub max_connections: usize,
    pub max_per_client: usize,
    pub max_renders: usize,
    pub render_queue: usize,
    pub queue_wait: Duration,
    pub stall_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: super::DEFAULT_MAX_CONNECTIONS,
            max_per_client: DEFAULT_MAX_PER_CLIENT,
            max_renders: default_max_renders(),
            render_queue: DEFAULT_RENDER_QUEUE,
            queue_wait: DEFAULT_QUEUE_WAIT,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
        }
    }
}
