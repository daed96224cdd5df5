//! PMA failures as operators need them: counted per node and attribute, and
//! logged per distinct cause (attribute and error kind), rate-limited, so a new
//! fault is never hidden behind one that keeps recurring, and a cause that
//! clears says so once.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::pma::{attr_name, PmaSweep};
use crate::types::Guid;

/// How often one recurring cause is logged again.
pub const LOG_INTERVAL: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Default)]
struct Cause {
    /// Failed queries since start.
    total: u64,
    /// Failed queries since this cause was last logged.
    since_log: u64,
    last_logged: Option<Instant>,
}

/// Failure counts and per-cause log state of one source.
#[derive(Debug, Clone, Default)]
pub struct PmaFaults {
    /// Failed queries since start, by (node, PMA attribute).
    by_target: BTreeMap<(Guid, u16), u64>,
    causes: BTreeMap<String, Cause>,
    /// Causes seen in the last sweep (to tell when one clears).
    active: BTreeSet<String>,
}

impl PmaFaults {
    /// Folds in one sweep's failures and logs what is new, recurring (at most once
    /// per [`LOG_INTERVAL`] per cause) or cleared.
    pub fn record(&mut self, sweep: &PmaSweep, now: Instant) {
        let mut this: BTreeMap<String, (u64, BTreeSet<Guid>, String)> = BTreeMap::new();
        for f in &sweep.failed {
            *self.by_target.entry((f.node, f.attr)).or_default() += 1;
            let e = this.entry(f.cause()).or_insert_with(|| {
                let port = f.port.map_or(String::new(), |p| format!(" port {p}"));
                (
                    0,
                    BTreeSet::new(),
                    format!("{}{port} via LID {}", f.node, f.lid),
                )
            });
            e.0 += 1;
            e.1.insert(f.node);
        }
        for (cause, (n, nodes, first)) in &this {
            let c = self.causes.entry(cause.clone()).or_default();
            c.total += n;
            c.since_log += n;
            let due = !matches!(c.last_logged, Some(t) if now.duration_since(t) < LOG_INTERVAL);
            if due || !self.active.contains(cause) {
                tracing::warn!(
                    failures = n,
                    nodes = nodes.len(),
                    since_last_log = c.since_log,
                    total = c.total,
                    "PMA queries failed: {cause} (first: node {first})"
                );
                c.since_log = 0;
                c.last_logged = Some(now);
            }
        }
        for gone in self.active.iter().filter(|c| !this.contains_key(*c)) {
            tracing::info!("PMA queries succeed again: {gone}");
        }
        self.active = this.into_keys().collect();
    }

    /// Failed queries since start for (node, attribute).
    pub fn count(&self, node: Guid, attr: u16) -> u64 {
        self.by_target.get(&(node, attr)).copied().unwrap_or(0)
    }

    /// Every (node, attribute name, failed queries since start), for dumps and metrics.
    pub fn counts(&self) -> impl Iterator<Item = (Guid, &'static str, u64)> + '_ {
        self.by_target
            .iter()
            .map(|(&(g, a), &n)| (g, attr_name(a), n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mad::pma::attr;
    use crate::source::umad::pma::PmaFailure;
    use crate::source::umad::transport::TxError;

    fn fail(node: u64, a: u16, e: TxError) -> PmaFailure {
        PmaFailure {
            node: Guid(node),
            lid: 1,
            port: Some(1),
            attr: a,
            error: e,
        }
    }

    #[test]
    fn counts_per_node_and_attribute_and_tracks_causes() {
        let mut f = PmaFaults::default();
        let t0 = Instant::now();
        let s1 = PmaSweep {
            failed: vec![
                fail(1, attr::PORT_COUNTERS, TxError::Timeout(4)),
                fail(2, attr::PORT_COUNTERS, TxError::Timeout(4)),
            ],
            ..PmaSweep::default()
        };
        f.record(&s1, t0);
        assert_eq!(f.active.len(), 1, "one cause, two nodes");
        // A second, different cause while the first persists is its own entry.
        let s2 = PmaSweep {
            failed: vec![
                fail(1, attr::PORT_COUNTERS, TxError::Timeout(4)),
                fail(3, attr::PORT_VL_OP_DATA, TxError::Status(0x1c)),
            ],
            ..PmaSweep::default()
        };
        f.record(&s2, t0 + Duration::from_secs(1));
        assert_eq!(f.active.len(), 2);
        assert_eq!(f.count(Guid(1), attr::PORT_COUNTERS), 2);
        assert_eq!(f.count(Guid(3), attr::PORT_VL_OP_DATA), 1);
        assert_eq!(f.causes["PortCounters: no answer"].total, 3);
        // The recurring cause was logged at t0 only (rate limit), the new one at once.
        assert_eq!(f.causes["PortCounters: no answer"].since_log, 1);
        assert_eq!(
            f.causes["PortVLOpData: status 0x001c (invalid attribute or modifier)"].since_log,
            0
        );
        f.record(&PmaSweep::default(), t0 + Duration::from_secs(2));
        assert!(f.active.is_empty());
    }
}
