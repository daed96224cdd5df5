//! `ibsnmpd routes check`: every route of one sweep's forwarding tables
//! (`ib::model::routes`), as a report with node names (docs/routing.md).

use std::fmt::Write as _;
use std::process::ExitCode;

use ib::model::routes::{self, Break, RouteCheck};
use ib::model::{NodeIdx, Snapshot};
use serde::Serialize;

use crate::cli::RoutesCheckArgs;
use crate::models::route_check;

/// Exit 0 when every route arrives and no leaf is unbalanced, 1 with
/// findings, 2 when the fabric could not be read.
pub fn check(args: &RoutesCheckArgs) -> ExitCode {
    super::check_exit(check_once(args))
}

fn check_once(args: &RoutesCheckArgs) -> anyhow::Result<bool> {
    crate::models::logging::init(&args.sweep.log_level)?;
    if !(args.max_spread.is_finite() && args.max_spread >= 0.0) {
        anyhow::bail!(
            "--max-spread {}: expected a ratio of 0 or more",
            args.max_spread
        );
    }
    let snap = super::one_sweep(
        &args.sweep.source,
        args.sweep.node_name_map.as_deref(),
        false,
    )?;
    let started = std::time::Instant::now();
    let check = routes::check(&snap, args.max_spread);
    tracing::info!(
        routes = check.routes,
        seconds = started.elapsed().as_secs_f64(),
        "every route walked"
    );
    let report = Report::new(&snap, check, args.max_spread);
    super::print_report(args.format, &report, Report::text)?;
    Ok(report.findings == 0)
}

/// A node as the report names it: its description (or node-name-map name)
/// and GUID.
#[derive(Debug, Serialize)]
pub struct Named {
    pub name: String,
    pub guid: String,
}

impl Named {
    fn of(s: &Snapshot, n: NodeIdx) -> Named {
        let (name, guid) = route_check::node_name(s, n).unwrap_or_default();
        Named { name, guid }
    }
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        route_check::fmt_node(f, &self.name, &self.guid)
    }
}

/// The check with its nodes named.
#[derive(Debug, Serialize)]
pub struct Report {
    pub source: String,
    pub max_spread: f64,
    pub findings: usize,
    pub check: RouteCheck,
    /// The switches the findings name, by node index.
    pub nodes: std::collections::BTreeMap<NodeIdx, Named>,
}

impl Report {
    pub fn new(s: &Snapshot, check: RouteCheck, max_spread: f64) -> Report {
        let mut ids: Vec<NodeIdx> = check.unreachable.iter().map(|u| u.switch).collect();
        ids.extend(check.broken.iter().map(|b| switch_of(&b.at)));
        ids.extend(check.unbalanced.iter().map(|b| b.switch));
        let nodes = ids.into_iter().map(|n| (n, Named::of(s, n))).collect();
        Report {
            source: s.sweep.source.clone(),
            max_spread,
            findings: check.unreachable.len() + check.broken.len() + check.unbalanced.len(),
            check,
            nodes,
        }
    }

    fn name(&self, n: NodeIdx) -> String {
        self.nodes
            .get(&n)
            .map_or_else(|| format!("node {n}"), ToString::to_string)
    }

    /// A summary line, the counts by kind, then one line per finding.
    pub fn text(&self) -> String {
        let mut out = self.summary();
        if self.findings == 0 {
            let _ = writeln!(
                out,
                "No findings: every route arrives, every leaf's uplinks are within {:.2}.",
                self.max_spread
            );
            return out;
        }
        let c = &self.check;
        let counts: Vec<String> = self
            .counts()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let _ = writeln!(
            out,
            "Findings ({}): {}; {} host pairs cannot talk",
            self.findings,
            counts.join(", "),
            c.unreachable_pairs
        );
        self.finding_lines(&mut out);
        out
    }

    /// The first line: the source, the walk's size, the hop counts.
    fn summary(&self) -> String {
        let c = &self.check;
        let hops: Vec<String> = c
            .hops
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(h, n)| format!("{h}:{n}"))
            .collect();
        format!(
            "Routes: {}, {} switches to {} end LIDs: {} routes, {} arrive (hops {})\n",
            self.source,
            c.switches,
            c.destinations,
            c.routes,
            c.good,
            hops.join(" ")
        )
    }

    /// The findings by kind, as the summary counts them.
    fn counts(&self) -> [(&'static str, usize); 5] {
        let c = &self.check;
        let count = |f: fn(&Break) -> bool| c.broken.iter().filter(|b| f(&b.at)).count();
        let loops = count(|b| matches!(b, Break::Loop { .. }));
        let credit = count(|b| matches!(b, Break::CreditLoop { .. }));
        [
            ("UNREACHABLE", c.unreachable.len()),
            ("BLACK HOLE", c.broken.len() - loops - credit),
            ("LOOP", loops),
            ("CREDIT LOOP", credit),
            ("UNBALANCED", c.unbalanced.len()),
        ]
    }

    /// One line per finding, by kind.
    fn finding_lines(&self, out: &mut String) {
        let c = &self.check;
        for u in &c.unreachable {
            let lids: Vec<String> = u.lids.iter().take(16).map(u16::to_string).collect();
            let more = if u.lids.len() > 16 { ", ..." } else { "" };
            let _ = writeln!(
                out,
                "  UNREACHABLE  {}: its {} hosts cannot reach {} end LIDs ({}{more})",
                self.name(u.switch),
                u.hosts,
                u.lids.len(),
                lids.join(", ")
            );
        }
        for b in &c.broken {
            let _ = writeln!(
                out,
                "  {}: {} destinations, {} routes",
                self.broken_words(&b.at),
                b.destinations,
                b.routes
            );
        }
        for u in &c.unbalanced {
            let shares: Vec<String> = u.uplinks.iter().map(|(p, n)| format!("{p}:{n}")).collect();
            let _ = writeln!(
                out,
                "  UNBALANCED   {}: uplinks (port:destinations) {} spread {:.2} > {:.2}",
                self.name(u.switch),
                shares.join(" "),
                u.spread,
                self.max_spread
            );
        }
    }

    /// Where and how a route breaks, in words.
    fn broken_words(&self, at: &Break) -> String {
        match *at {
            Break::NoRoute { switch } => format!(
                "BLACK HOLE   {} has no route (entry 255 or past LinearFDBTop)",
                self.name(switch)
            ),
            Break::BlackHole { switch, port } => {
                format!("BLACK HOLE   {} port {port}: down or not linked", self.name(switch))
            }
            Break::Misrouted { switch, port } => format!(
                "BLACK HOLE   {} port {port}: leads to a channel adapter that is not the destination",
                self.name(switch)
            ),
            Break::Loop { switch } => format!("LOOP         through {}", self.name(switch)),
            Break::CreditLoop { switch, port } => {
                format!("CREDIT LOOP  through {} port {port}", self.name(switch))
            }
        }
    }
}

fn switch_of(b: &Break) -> NodeIdx {
    match *b {
        Break::NoRoute { switch }
        | Break::BlackHole { switch, .. }
        | Break::Misrouted { switch, .. }
        | Break::Loop { switch }
        | Break::CreditLoop { switch, .. } => switch,
    }
}
