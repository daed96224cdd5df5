//! What consumers are reading of other nodes' ports now, so that the PMA
//! sweep reads it for them and for no one else (docs/umad.md "Which
//! ports"): a node context that is polled asks for its node's detail
//! attributes (error details, flow control, per-VL counters); a node no
//! one has asked about for [`Demand::ttl`] costs no extra MAD again.
//!
//! Consumers write from request threads ([`Demand::ask`]); the source
//! takes what is live once per sweep ([`Demand::live`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::types::Guid;

/// How long a node stays asked for after its last request: longer than
/// the polling interval of any NMS (Zabbix, LibreNMS: 1-5 minutes).
pub const TTL: Duration = Duration::from_secs(15 * 60);

/// Detail attributes asked for, by node.
#[derive(Debug)]
pub struct Demand {
    asked: Mutex<HashMap<Guid, (u8, Instant)>>,
    ttl: Duration,
}

impl Default for Demand {
    fn default() -> Self {
        Demand::new(TTL)
    }
}

impl Demand {
    /// Asks last `ttl` after their last request.
    pub fn new(ttl: Duration) -> Self {
        Demand {
            asked: Mutex::new(HashMap::new()),
            ttl,
        }
    }

    /// How long an ask lasts.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A consumer reads `mask` (detail bits) of `node`'s ports now.
    pub fn ask(&self, node: Guid, mask: u8) {
        let now = Instant::now();
        if let Ok(mut m) = self.asked.lock() {
            let e = m.entry(node).or_insert((0, now));
            e.0 |= mask;
            e.1 = now;
        }
    }

    /// What is asked for now, by node; asks older than the TTL are dropped.
    pub fn live(&self) -> HashMap<Guid, u8> {
        let now = Instant::now();
        let Ok(mut m) = self.asked.lock() else {
            return HashMap::new();
        };
        m.retain(|_, (_, at)| now.saturating_duration_since(*at) < self.ttl);
        m.iter().map(|(g, (mask, _))| (*g, *mask)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_accumulate_and_expire() {
        let d = Demand::new(Duration::from_secs(3600));
        d.ask(Guid(1), 0b01);
        d.ask(Guid(1), 0b10);
        d.ask(Guid(2), 0b100);
        let live = d.live();
        assert_eq!(live.get(&Guid(1)), Some(&0b11));
        assert_eq!(live.get(&Guid(2)), Some(&0b100));

        let gone = Demand::new(Duration::ZERO);
        gone.ask(Guid(1), 1);
        assert!(
            gone.live().is_empty(),
            "an ask older than the TTL is dropped"
        );
    }
}
