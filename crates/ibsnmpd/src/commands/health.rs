//! `ibsnmpd health`: the fabric's health report (docs/health.md), made
//! from two sweeps of a source or asked of a running agent (`--socket`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ib::model::health::{Health, HealthConfig};
use ib::model::Snapshot;

use super::UsageError;
use crate::cli::HealthArgs;
use crate::config::ConfigError;
use crate::models::fabric_health::Report;

pub fn run(args: &HealthArgs) -> Result<()> {
    crate::models::logging::init(&args.sweep.log_level)?;
    let report = match &args.socket {
        Some(socket) => from_agent(socket)?,
        None => from_source(args)?,
    };
    super::print_report(args.format, &report, Report::text)
}

/// The running agent's report: its control socket's `health` answer.
fn from_agent(socket: &Path) -> Result<Report> {
    let timeout = Duration::from_secs_f64(crate::cli::CTL_TIMEOUT_SECS);
    let answer = super::ctl::request(socket, &["health".to_string()], timeout)?;
    let json = answer
        .strip_prefix("ok ")
        .with_context(|| format!("unexpected answer from the control socket: {answer:.80}"))?;
    serde_json::from_str(json).context("the control socket's health answer is not a report")
}

/// Two sweeps of `args.sweep.source`, `args.interval` apart.
fn from_source(args: &HealthArgs) -> Result<Report> {
    if !(args.interval.is_finite() && (0.0..=3600.0).contains(&args.interval)) {
        return Err(UsageError(format!(
            "--interval {}: expected seconds from 0 to 3600",
            args.interval
        ))
        .into());
    }
    let names = match &args.sweep.node_name_map {
        Some(p) => crate::models::nodemap::NodeNameMap::load(p).map_err(ConfigError)?,
        None => Default::default(),
    };
    let mut source = crate::services::sources::open_spec(&args.sweep.source, None, false)?;
    let mut sweep = || -> Result<Snapshot> {
        let mut s = source
            .sweep()
            .map_err(|e| anyhow::anyhow!("sweep of {} failed: {e}", args.sweep.source))?;
        names.apply(&mut s);
        Ok(s)
    };
    let mut health = Health::new(HealthConfig {
        // The window is the interval: the rates are those of the two sweeps
        // (a longer window would spread their events over time not watched).
        window: Duration::from_secs_f64(args.interval.max(0.1)),
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
