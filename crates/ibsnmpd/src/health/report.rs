//! The report `ibsnmpd health` prints, whichever way it was made (two sweeps
//! of a source, or a running agent's published snapshot and health
//! tracker): JSON as it is (`--format json`; the control socket answers it
//! on one line) or rendered as text, one line per finding.

use std::fmt::Write as _;
use std::time::SystemTime;

use ib::model::health::{HealthConfig, PortHealth};
use ib::model::Snapshot;
use ib::types::SmState;
use serde::{Deserialize, Serialize};

/// The whole report.
#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    /// The source the snapshot came from (`umad`, `sim`, ...).
    pub source: String,
    /// The two sweeps were this far apart (`--source`). Absent from a
    /// running agent: its rates are over `thresholds.window_s` of its own
    /// sweeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
    pub nodes: usize,
    pub ports: usize,
    /// The sweep the report is of.
    pub sweep: Sweep,
    pub sms: Vec<Sm>,
    /// NO_MASTER_SM: no master Subnet Manager answers (a finding of the
    /// fabric, counted in `findings`).
    #[serde(default)]
    pub no_master_sm: bool,
    pub thresholds: HealthConfig,
    /// Ports with something to report ([`is_finding`]), plus one for
    /// NO_MASTER_SM.
    pub findings: usize,
    pub ports_health: Vec<PortHealth>,
    /// The fabric against its cabling plan (a running agent with
    /// `[topology] expected`, docs/topology.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<crate::topology::TopologyReport>,
}

/// How the reported sweep went (its cost, all phases together).
#[derive(Debug, Serialize, Deserialize)]
pub struct Sweep {
    /// 1 for the source's first sweep, then +1 each.
    pub number: u64,
    /// Seconds from the sweep's start to the report.
    pub age_s: f64,
    pub duration_s: f64,
    /// MADs sent, retries included.
    pub mads_sent: u64,
    /// Queries that failed for good.
    pub mads_failed: u64,
    /// Attempts that got no answer in time.
    pub mads_timeouts: u64,
}

/// A Subnet Manager the sweep found.
#[derive(Debug, Serialize, Deserialize)]
pub struct Sm {
    pub guid: String,
    pub lid: u16,
    pub priority: u8,
    pub state: String,
    pub answering: bool,
}

/// Whether a port shows in the text report.
fn is_finding(p: &PortHealth, c: &HealthConfig) -> bool {
    p.is_unhealthy(c) || p.counters_cleared || p.limited.is_some()
}

impl Report {
    /// The report of `snap`, whose ports' health under `thresholds` is
    /// `ports`; `interval` as [`Report::interval_s`].
    pub fn new(
        snap: &Snapshot,
        interval: Option<f64>,
        thresholds: HealthConfig,
        ports_health: Vec<PortHealth>,
    ) -> Report {
        let sweep = &snap.sweep;
        let no_master_sm = ib::model::health::no_master_sm(snap);
        let cost = [&sweep.cost.discovery, &sweep.cost.sa, &sweep.cost.pma];
        let total = |f: fn(&ib::model::PhaseCost) -> u64| cost.iter().map(|c| f(c)).sum();
        let sms = snap
            .sms
            .iter()
            .map(|s| Sm {
                guid: s.info.guid.to_string(),
                lid: s.lid.0,
                priority: s.info.priority,
                state: SmState::from_raw(s.info.sm_state)
                    .map_or("unknown", SmState::name)
                    .to_string(),
                answering: s.answering,
            })
            .collect();
        Report {
            source: sweep.source.clone(),
            interval_s: interval,
            nodes: snap.nodes.len(),
            ports: ports_health.len(),
            sweep: Sweep {
                number: sweep.number,
                age_s: SystemTime::now()
                    .duration_since(sweep.time)
                    .map_or(0.0, |d| d.as_secs_f64()),
                duration_s: sweep.duration.as_secs_f64(),
                mads_sent: total(|c| c.sent),
                mads_failed: total(|c| c.failed),
                mads_timeouts: total(|c| c.timeouts),
            },
            sms,
            no_master_sm,
            findings: ports_health
                .iter()
                .filter(|p| is_finding(p, &thresholds))
                .count()
                + usize::from(no_master_sm),
            thresholds,
            ports_health,
            topology: None,
        }
    }

    /// The text report: the fabric, the sweep, the SMs, one line per finding.
    pub fn text(&self) -> String {
        let c = &self.thresholds;
        let window = c.window.as_secs_f64();
        let mut out = String::new();
        let over = match self.interval_s {
            Some(i) => format!("two sweeps {i:.1} s apart"),
            None => format!("the agent's sweeps over {window:.0} s"),
        };
        let _ = writeln!(
            out,
            "Fabric health: {}, {} nodes, {} ports, {over}",
            self.source, self.nodes, self.ports
        );
        let s = &self.sweep;
        let _ = writeln!(
            out,
            "Sweep: #{} {:.1} s ago, took {:.2} s; MADs: {} sent, {} failed, {} timed out",
            s.number, s.age_s, s.duration_s, s.mads_sent, s.mads_failed, s.mads_timeouts
        );
        sm_lines(&mut out, &self.sms);
        let span = match self.interval_s {
            Some(i) => format!("in {i:.0} s"),
            None => format!("within the {window:.0} s window"),
        };
        let fabric = self.no_master_sm.then(|| {
            "NO_MASTER_SM no master Subnet Manager answers: links stay in Init, no paths, no new LIDs"
                .to_string()
        });
        let lines: Vec<String> = fabric
            .into_iter()
            .chain(
                self.ports_health
                    .iter()
                    .flat_map(|p| port_lines(p, c, &span)),
            )
            .collect();
        if lines.is_empty() {
            let _ = writeln!(out, "No findings: every port is healthy.");
        } else {
            let _ = writeln!(out, "Findings ({}):", lines.len());
            for l in lines {
                let _ = writeln!(out, "  {l}");
            }
        }
        if let Some(t) = &self.topology {
            out.push_str(&t.text());
        }
        out
    }
}

fn sm_lines(out: &mut String, sms: &[Sm]) {
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
}

/// The findings of one port; `span` says what flaps are counted over.
fn port_lines(p: &PortHealth, c: &HealthConfig, span: &str) -> Vec<String> {
    let peer = p
        .peer
        .as_ref()
        .map(|(n, q)| format!(" <-> {n:?} port {q}"))
        .unwrap_or_default();
    let at = format!("{:?} ({}) port {}{peer}", p.node, p.guid, p.port);
    let mut lines = Vec::new();
    if p.down_after_up {
        lines.push(format!("DOWN       {at}: was active, is not"));
    }
    if let Some(d) = &p.degraded {
        lines.push(format!(
            "DEGRADED   {at}: {} {}, could be {} {}",
            d.width, d.speed, d.expected_width, d.expected_speed
        ));
    }
    if let Some(d) = &p.limited {
        lines.push(format!(
            "LIMITED    {at}: {} {} as enabled, both ends support {} {}",
            d.width, d.speed, d.expected_width, d.expected_speed
        ));
    }
    let ber = p.symbol_ber.filter(|b| *b > c.max_symbol_ber);
    let rec = p
        .link_recovery_per_hour
        .filter(|r| *r > c.max_link_recovery_per_hour);
    if ber.is_some() || rec.is_some() {
        lines.push(format!(
            "ERRORS     {at}: symbol BER {} (max {:.0e}), {} link recoveries/h (max {})",
            ber.map_or("-".into(), |b| format!("{b:.1e}")),
            c.max_symbol_ber,
            rec.map_or("-".into(), |r| format!("{r:.0}")),
            c.max_link_recovery_per_hour
        ));
    }
    if p.link_downed >= c.flap_count {
        lines.push(format!(
            "FLAPPING   {at}: down {} times {span} (LinkDowned +{}, seen going down {})",
            p.link_downed, p.link_downed_counter, p.down_transitions
        ));
    }
    if let Some(r) = p.xmit_wait_ratio.filter(|r| *r > c.max_xmit_wait_ratio) {
        lines.push(format!(
            "CONGESTED  {at}: transmit waiting {:.1}% of the time (max {:.0}%)",
            r * 100.0,
            c.max_xmit_wait_ratio * 100.0
        ));
    }
    if p.counters_cleared {
        lines.push(format!(
            "CLEARED    {at}: counters cleared since the sweep before (another manager?)"
        ));
    }
    lines
}
