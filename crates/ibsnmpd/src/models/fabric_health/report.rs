//! The report `ibsnmpd health` prints, whichever way it was made (two sweeps
//! of a source, or a running agent's published snapshot and health
//! tracker): JSON as it is (`--format json`; the control socket answers it
//! on one line) or rendered as text, one line per finding.

use std::fmt::Write as _;
use std::time::SystemTime;

use ib::model::health::{Degraded, HealthConfig, PortHealth};
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
    pub topology: Option<crate::models::cabling_plan::TopologyReport>,
    /// Every route of the switches' forwarding tables (a running agent
    /// whose source reads them, docs/routing.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes: Option<crate::models::route_check::RoutesReport>,
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
            routes: None,
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
        let mut lines: Vec<(Kind, String)> = Vec::new();
        if self.no_master_sm {
            lines.push((
                Kind::NoMasterSm,
                "NO_MASTER_SM no master Subnet Manager answers: links stay in Init, no paths, no new LIDs"
                    .to_string(),
            ));
        }
        // DEGRADED and LIMITED are the link's: both ends report it, the
        // text says it once (from the end met first).
        let mut links_said = std::collections::HashSet::new();
        for p in &self.ports_health {
            for (kind, line) in port_lines(p, c, &span) {
                if matches!(kind, Kind::Degraded | Kind::Limited) {
                    if let Some(link) = link_key(p) {
                        if !links_said.insert((kind, link)) {
                            continue;
                        }
                    }
                }
                lines.push((kind, line));
            }
        }
        // The worst first: one DOWN is not to hide among many LIMITED.
        lines.sort_by_key(|(k, _)| *k);
        if lines.is_empty() {
            let _ = writeln!(out, "No findings: every port is healthy.");
        } else {
            let mut counts: Vec<(Kind, usize)> = Vec::new();
            for (k, _) in &lines {
                match counts.last_mut() {
                    Some((last, n)) if last == k => *n += 1,
                    _ => counts.push((*k, 1)),
                }
            }
            let summary: Vec<String> = counts
                .iter()
                .map(|(k, n)| format!("{n} {}", k.name()))
                .collect();
            let _ = writeln!(out, "Findings ({}): {}", lines.len(), summary.join(", "));
            for (_, l) in lines {
                let _ = writeln!(out, "  {l}");
            }
        }
        if let Some(r) = &self.routes {
            out.push_str(&r.text());
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

/// The kinds of finding, in the order the text report gives them: the
/// faults that stop traffic first, configurations last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    NoMasterSm,
    Down,
    Degraded,
    Flapping,
    Errors,
    Congested,
    Cleared,
    Limited,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::NoMasterSm => "NO_MASTER_SM",
            Kind::Down => "DOWN",
            Kind::Degraded => "DEGRADED",
            Kind::Flapping => "FLAPPING",
            Kind::Errors => "ERRORS",
            Kind::Congested => "CONGESTED",
            Kind::Cleared => "CLEARED",
            Kind::Limited => "LIMITED",
        }
    }
}

/// The link a port is an end of, the same from either end (None without a
/// peer).
fn link_key(p: &PortHealth) -> Option<[(u64, u8); 2]> {
    let (_, q) = p.peer.as_ref()?;
    let mut ends = [(p.guid.0, p.port), (p.peer_guid?.0, *q)];
    ends.sort_unstable();
    Some(ends)
}

/// The findings of one port; `span` says what flaps are counted over.
fn port_lines(p: &PortHealth, c: &HealthConfig, span: &str) -> Vec<(Kind, String)> {
    let peer = p
        .peer
        .as_ref()
        .map(|(n, q)| format!(" <-> {n:?} port {q}"))
        .unwrap_or_default();
    let at = format!("{:?} ({}) port {}{peer}", p.node, p.guid, p.port);
    let mut lines = Vec::new();
    if p.down_after_up {
        lines.push((Kind::Down, format!("DOWN       {at}: was active, is not")));
    }
    // The link as it runs, and as both ends could run it.
    let link = |d: &Degraded| {
        (
            format!("{} {}", d.width, d.speed),
            format!("{} {}", d.expected_width, d.expected_speed),
        )
    };
    if let Some((runs, could)) = p.degraded.as_ref().map(link) {
        lines.push((
            Kind::Degraded,
            format!("DEGRADED   {at}: {runs}, could be {could}"),
        ));
    }
    if let Some((runs, could)) = p.limited.as_ref().map(link) {
        lines.push((
            Kind::Limited,
            format!("LIMITED    {at}: {runs} as enabled, both ends support {could}"),
        ));
    }
    let ber = p.symbol_ber.filter(|b| *b > c.max_symbol_ber);
    let rec = p
        .link_recovery_per_hour
        .filter(|r| *r > c.max_link_recovery_per_hour);
    if ber.is_some() || rec.is_some() {
        lines.push((
            Kind::Errors,
            format!(
                "ERRORS     {at}: symbol BER {} (max {:.0e}), {} link recoveries/h (max {})",
                ber.map_or("-".into(), |b| format!("{b:.1e}")),
                c.max_symbol_ber,
                rec.map_or("-".into(), |r| format!("{r:.0}")),
                c.max_link_recovery_per_hour
            ),
        ));
    }
    if p.link_downed >= c.flap_count {
        lines.push((
            Kind::Flapping,
            format!(
                "FLAPPING   {at}: down {} times {span} (LinkDowned +{}, seen going down {})",
                p.link_downed, p.link_downed_counter, p.down_transitions
            ),
        ));
    }
    if let Some(r) = p.xmit_wait_ratio.filter(|r| *r > c.max_xmit_wait_ratio) {
        lines.push((
            Kind::Congested,
            format!(
                "CONGESTED  {at}: transmit waiting {:.1}% of the time (max {:.0}%)",
                r * 100.0,
                c.max_xmit_wait_ratio * 100.0
            ),
        ));
    }
    if p.counters_cleared {
        lines.push((
            Kind::Cleared,
            format!("CLEARED    {at}: counters cleared since the sweep before (another manager?)"),
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use ib::types::Guid;

    fn port(guid: u64, node: &str, port: u8, peer: Option<(u64, &str, u8)>) -> PortHealth {
        PortHealth {
            guid: Guid(guid),
            node: node.into(),
            port,
            peer: peer.map(|(_, n, q)| (n.to_string(), q)),
            peer_guid: peer.map(|(g, _, _)| Guid(g)),
            active: true,
            down_after_up: false,
            degraded: None,
            limited: None,
            symbol_ber: None,
            link_recovery_per_hour: None,
            link_downed: 0,
            link_downed_counter: 0,
            down_transitions: 0,
            xmit_wait_ratio: None,
            counters_cleared: false,
        }
    }

    fn report(ports_health: Vec<PortHealth>) -> Report {
        Report {
            source: "sim".into(),
            interval_s: None,
            nodes: 3,
            ports: ports_health.len(),
            sweep: Sweep {
                number: 2,
                age_s: 0.0,
                duration_s: 0.0,
                mads_sent: 0,
                mads_failed: 0,
                mads_timeouts: 0,
            },
            sms: Vec::new(),
            no_master_sm: false,
            thresholds: HealthConfig::default(),
            findings: 0,
            ports_health,
            topology: None,
            routes: None,
        }
    }

    /// A LIMITED link is one finding, not one per end; DEGRADED likewise;
    /// the findings open with a count by kind, the worst kind first, and
    /// the DOWN port comes before the LIMITED links it would hide among.
    #[test]
    fn one_finding_per_link_and_a_summary_by_kind_first() {
        let limited = Some(ib::model::health::Degraded {
            width: "4x".into(),
            expected_width: "4x".into(),
            speed: "SDR".into(),
            expected_speed: "QDR".into(),
        });
        let mut ports = Vec::new();
        for k in 0..3u8 {
            // sw1 port k+1 <-> hca(k) port 1, both ends LIMITED.
            let hca = 0x100 + u64::from(k);
            let mut a = port(0x200, "sw1", k + 1, Some((hca, "hca", 1)));
            let mut b = port(hca, "hca", 1, Some((0x200, "sw1", k + 1)));
            a.limited = limited.clone();
            b.limited = limited.clone();
            ports.extend([a, b]);
        }
        // Two links between same-named nodes: still two findings.
        let mut c = port(0x300, "twin", 1, Some((0x301, "twin", 1)));
        let mut d = port(0x302, "twin", 1, Some((0x303, "twin", 1)));
        c.degraded = limited.clone();
        d.degraded = limited.clone();
        let mut c2 = port(0x301, "twin", 1, Some((0x300, "twin", 1)));
        c2.degraded = limited.clone();
        ports.extend([c, d, c2]);
        let mut down = port(0x200, "sw1", 9, None);
        down.down_after_up = true;
        down.active = false;
        ports.push(down);
        let text = report(ports).text();
        let findings: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
        assert_eq!(findings.len(), 6, "{text}");
        let header = text
            .lines()
            .find(|l| l.starts_with("Findings"))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            header, "Findings (6): 1 DOWN, 2 DEGRADED, 3 LIMITED",
            "{text}"
        );
        assert!(findings[0].trim_start().starts_with("DOWN"), "{text}");
        assert!(findings[1].trim_start().starts_with("DEGRADED"), "{text}");
        assert!(findings[5].trim_start().starts_with("LIMITED"), "{text}");
    }
}
