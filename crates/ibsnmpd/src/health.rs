//! `ibsnmpd health`: two sweeps of a source, an interval apart, and one
//! report of what an operator would act on (as iblinkinfo's "could be" and
//! ibqueryerrors do, in one place): links below their speed or width, error
//! hot spots, flapping, congestion, ports that went down, counters someone
//! cleared, and the Subnet Managers. The rules are `ib::model::health`'s;
//! docs/health.md gives the formulas.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ib::model::health::{Health, HealthConfig, PortHealth};
use ib::model::Snapshot;
use ib::types::SmState;
use serde::Serialize;

use crate::cli::{HealthArgs, HealthFormat};
use crate::config::ConfigError;

/// The health of every port in one published snapshot, for /metrics
/// (derived once per snapshot on the source thread, see [`deriver`]).
pub struct HealthReport {
    pub config: HealthConfig,
    pub ports: Vec<PortHealth>,
}

/// The running agent's health tracker: it follows every published
/// snapshot, so its windows hold the agent's own sweeps.
pub fn deriver(config: HealthConfig) -> Box<dyn mibs::publish::Derive> {
    let mut health = Health::new(config);
    Box::new(
        move |snap: &std::sync::Arc<Snapshot>| -> mibs::publish::Derived {
            let ports = health.observe(snap);
            std::sync::Arc::new(HealthReport {
                config: health.config().clone(),
                ports,
            })
        },
    )
}

/// The whole report (`--format json`).
#[derive(Serialize)]
struct Report<'a> {
    source: &'a str,
    interval_s: f64,
    nodes: usize,
    ports: usize,
    sms: Vec<Sm>,
    findings: usize,
    ports_health: &'a [PortHealth],
}

#[derive(Serialize)]
struct Sm {
    guid: String,
    lid: u16,
    priority: u8,
    state: &'static str,
    answering: bool,
}

pub fn run(args: &HealthArgs) -> Result<()> {
    crate::logging::init(&args.log_level)?;
    if !(args.interval.is_finite() && (0.0..=3600.0).contains(&args.interval)) {
        return Err(ConfigError(format!(
            "--interval {}: expected seconds from 0 to 3600",
            args.interval
        ))
        .into());
    }
    let names = match &args.node_name_map {
        Some(p) => crate::nodemap::NodeNameMap::load(p).map_err(ConfigError)?,
        None => Default::default(),
    };
    let mut source = crate::sources::open_spec(&args.source, None)?;
    let mut sweep = || -> Result<Snapshot> {
        let mut s = source
            .sweep()
            .map_err(|e| anyhow::anyhow!("sweep of {} failed: {e}", args.source))?;
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
    let findings = ports
        .iter()
        .filter(|p| p.is_unhealthy(health.config()) || p.counters_cleared)
        .count();
    let sms: Vec<Sm> = snap
        .sms
        .iter()
        .map(|s| Sm {
            guid: s.info.guid.to_string(),
            lid: s.lid.0,
            priority: s.info.priority,
            state: SmState::from_raw(s.info.sm_state).map_or("unknown", SmState::name),
            answering: s.answering,
        })
        .collect();
    let text = match args.format {
        HealthFormat::Json => {
            let r = Report {
                source: &args.source,
                interval_s: interval,
                nodes: snap.nodes.len(),
                ports: ports.len(),
                sms,
                findings,
                ports_health: &ports,
            };
            serde_json::to_string_pretty(&r).context("cannot encode the report")? + "\n"
        }
        HealthFormat::Text => text(&args.source, interval, &snap, &sms, &ports, &health),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")
}

fn text(
    source: &str,
    interval: f64,
    snap: &Snapshot,
    sms: &[Sm],
    ports: &[PortHealth],
    health: &Health,
) -> String {
    let c = health.config();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Fabric health: {source}, {} nodes, {} ports, two sweeps {interval:.1} s apart",
        snap.nodes.len(),
        ports.len()
    );
    if sms.is_empty() {
        let _ = writeln!(out, "SM: none seen");
    }
    for s in sms {
        let _ = writeln!(
            out,
            "SM: {} lid {} priority {} {}{}",
            s.guid,
            s.lid,
            s.priority,
            s.state,
            if s.answering { "" } else { " (not answering)" }
        );
    }
    if !sms.iter().any(|s| s.state == "master" && s.answering) {
        let _ = writeln!(out, "SM: no master answers");
    }
    let at = |p: &PortHealth| {
        let peer = p
            .peer
            .as_ref()
            .map(|(n, q)| format!(" <-> {n:?} port {q}"))
            .unwrap_or_default();
        format!("{:?} ({}) port {}{peer}", p.node, p.guid, p.port)
    };
    let mut lines = Vec::new();
    for p in ports {
        if p.down_after_up {
            lines.push(format!("DOWN       {}: was active, is not", at(p)));
        }
        if let Some(d) = &p.degraded {
            lines.push(format!(
                "DEGRADED   {}: {} {}, could be {} {}",
                at(p),
                d.width,
                d.speed,
                d.expected_width,
                d.expected_speed
            ));
        }
        let ber = p.symbol_ber.filter(|b| *b > c.max_symbol_ber);
        let rec = p
            .link_recovery_per_hour
            .filter(|r| *r > c.max_link_recovery_per_hour);
        if ber.is_some() || rec.is_some() {
            lines.push(format!(
                "ERRORS     {}: symbol BER {} (max {:.0e}), {} link recoveries/h (max {})",
                at(p),
                ber.map_or("-".into(), |b| format!("{b:.1e}")),
                c.max_symbol_ber,
                rec.map_or("-".into(), |r| format!("{r:.0}")),
                c.max_link_recovery_per_hour
            ));
        }
        if p.link_downed >= c.flap_count {
            lines.push(format!(
                "FLAPPING   {}: LinkDowned +{} in {:.0} s",
                at(p),
                p.link_downed,
                interval
            ));
        }
        if let Some(r) = p.xmit_wait_ratio.filter(|r| *r > c.max_xmit_wait_ratio) {
            lines.push(format!(
                "CONGESTED  {}: transmit waiting {:.1}% of the time (max {:.0}%)",
                at(p),
                r * 100.0,
                c.max_xmit_wait_ratio * 100.0
            ));
        }
        if p.counters_cleared {
            lines.push(format!(
                "CLEARED    {}: counters cleared between the sweeps (another manager?)",
                at(p)
            ));
        }
    }
    if lines.is_empty() {
        let _ = writeln!(out, "No findings: every port is healthy.");
    } else {
        let _ = writeln!(out, "Findings ({}):", lines.len());
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    out
}
