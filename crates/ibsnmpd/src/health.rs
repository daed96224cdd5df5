//! `ibsnmpd health`: one report of what an operator would act on (as
//! iblinkinfo's "could be" and ibqueryerrors do, in one place): links below
//! their speed or width, error hot spots, flapping, congestion, ports that
//! went down, counters someone cleared, the Subnet Managers and the sweep.
//! Made from two sweeps of a source, an interval apart, or asked of a
//! running agent (`--socket`: its control socket's `health` command answers
//! from the published snapshot and the agent's health tracker). The rules
//! are `ib::model::health`'s; docs/health.md gives the formulas.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ib::model::health::{no_master_sm, Health, HealthConfig, PortHealth};
use ib::model::Snapshot;

use crate::cli::{HealthArgs, HealthFormat};
use crate::config::ConfigError;

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
/// ([`crate::reload`]).
pub type SharedHealthConfig = std::sync::Arc<arc_swap::ArcSwap<HealthConfig>>;

/// The running agent's health tracker: it follows every published
/// snapshot, so its windows hold the agent's own sweeps. New settings (a
/// reload) apply from the next snapshot, their window starting again.
pub fn deriver(config: SharedHealthConfig) -> mibs::publish::ExtraFn<std::sync::Arc<HealthReport>> {
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

pub fn run(args: &HealthArgs) -> Result<()> {
    crate::logging::init(&args.sweep.log_level)?;
    let report = match &args.socket {
        Some(socket) => from_agent(socket)?,
        None => from_source(args)?,
    };
    let text = match args.format {
        HealthFormat::Json => {
            serde_json::to_string_pretty(&report).context("cannot encode the report")? + "\n"
        }
        HealthFormat::Text => report.text(),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")
}

/// The running agent's report: its control socket's `health` answer.
fn from_agent(socket: &Path) -> Result<Report> {
    let timeout = Duration::from_secs_f64(crate::cli::CTL_TIMEOUT_SECS);
    let answer = crate::ctl::request(socket, &["health".to_string()], timeout)?;
    let json = answer
        .strip_prefix("ok ")
        .with_context(|| format!("unexpected answer from the control socket: {answer:.80}"))?;
    serde_json::from_str(json).context("the control socket's health answer is not a report")
}

/// Two sweeps of `args.sweep.source`, `args.interval` apart.
fn from_source(args: &HealthArgs) -> Result<Report> {
    if !(args.interval.is_finite() && (0.0..=3600.0).contains(&args.interval)) {
        return Err(ConfigError(format!(
            "--interval {}: expected seconds from 0 to 3600",
            args.interval
        ))
        .into());
    }
    let names = match &args.sweep.node_name_map {
        Some(p) => crate::nodemap::NodeNameMap::load(p).map_err(ConfigError)?,
        None => Default::default(),
    };
    let mut source = crate::sources::open_spec(&args.sweep.source, None)?;
    let mut sweep = || -> Result<Snapshot> {
        let mut s = source
            .sweep()
            .map_err(|e| anyhow::anyhow!("sweep of {} failed: {e}", args.sweep.source))?;
        names.apply(&mut s);
        Ok(s)
    };
    let mut health = Health::new(HealthConfig {
        window: Duration::from_secs_f64(args.interval.max(1.0) * 2.0),
        ..HealthConfig::default()
    });
    health.observe(&sweep()?);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(args.interval));
    let snap = sweep()?;
    let ports = health.observe(&snap);
    let interval = started.elapsed().as_secs_f64();
    let report = Report::new(&snap, Some(interval), health.config().clone(), ports);
    if report.no_master_sm {
        tracing::warn!("NO_MASTER_SM: no master Subnet Manager answers");
    }
    Ok(report)
}
