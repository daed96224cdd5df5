//! `ibsnmpd health`: one report of what an operator would act on (as
//! iblinkinfo's "could be" and ibqueryerrors do, in one place): links below
//! their speed or width, error hot spots, flapping, congestion, ports that
//! went down, counters someone cleared, the Subnet Managers and the sweep.
//! Made from two sweeps of a source, an interval apart, or asked of a
//! running agent (`--socket`: its control socket's `health` command answers
//! from the published snapshot and the agent's health tracker). The rules
//! are `ib::model::health`'s; docs/health.md gives the formulas.

use ib::model::health::{no_master_sm, Health, HealthConfig, PortHealth};
use ib::model::Snapshot;

mod report;

pub use report::Report;

/// The health of every port in one published snapshot, for /metrics
/// (derived once per snapshot on the source thread, see [`deriver`]).
pub struct HealthReport {
    pub config: HealthConfig,
    pub ports: Vec<PortHealth>,
    /// NO_MASTER_SM: no master Subnet Manager answers
    /// ([`ib::model::health::no_master_sm`]).
    pub no_master_sm: bool,
}

/// The `[health]` settings in force in the agent: a reload swaps them
/// ([`crate::daemon::reload`]).
pub type SharedHealthConfig = std::sync::Arc<arc_swap::ArcSwap<HealthConfig>>;

/// The running agent's health tracker: it follows every published
/// snapshot, so its windows hold the agent's own sweeps. New settings (a
/// reload) apply from the next snapshot, their window starting again.
pub fn deriver(
    config: SharedHealthConfig,
) -> mibs::core::publish::ExtraFn<std::sync::Arc<HealthReport>> {
    let mut health = Health::new(HealthConfig::clone(&config.load()));
    let mut was_without_sm = false;
    Box::new(
        move |snap: &std::sync::Arc<Snapshot>| -> std::sync::Arc<HealthReport> {
            let now = config.load();
            if **now != *health.config() {
                health = Health::new(HealthConfig::clone(&now));
            }
            let ports = health.observe(snap);
            let without_sm = no_master_sm(snap);
            // Logged when it starts and when it ends, not every sweep.
            if without_sm != was_without_sm {
                if without_sm {
                    tracing::warn!(
                        sweep = snap.sweep.number,
                        "NO_MASTER_SM: no master Subnet Manager answers"
                    );
                } else {
                    tracing::info!(
                        sweep = snap.sweep.number,
                        "a master Subnet Manager answers again"
                    );
                }
                was_without_sm = without_sm;
            }
            std::sync::Arc::new(HealthReport {
                config: health.config().clone(),
                ports,
                no_master_sm: without_sm,
            })
        },
    )
}
