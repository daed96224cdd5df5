//! Routing truth in the running agent (docs/routing.md): every published
//! snapshot's forwarding tables walked by `ib::model::routes::check` (the
//! same check as `ibsnmpd routes check`), for the health report, /metrics,
//! the log and the notification sinks. A snapshot whose switches' tables
//! were not read (the sysfs source, the umad source's quick first sweep)
//! is not checked: its routes are absent, not clean.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ib::model::routes::{self, Break, RouteCheck};
use ib::model::{NodeIdx, Snapshot};
use serde::{Deserialize, Serialize};

/// `[routes] max_spread`, read at each snapshot; a reload sets it.
#[derive(Clone, Debug)]
pub struct SharedSpread(Arc<AtomicU64>);

impl SharedSpread {
    pub fn new(v: f64) -> Self {
        SharedSpread(Arc::new(AtomicU64::new(v.to_bits())))
    }
    pub fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
    pub fn set(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Relaxed);
    }
}

/// A switch as the report names it: its description and NodeGUID.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Switch {
    pub switch: String,
    pub guid: String,
}

/// Node `n`'s description and NodeGUID as the reports name it; None when
/// the snapshot has no such node.
pub fn node_name(s: &Snapshot, n: NodeIdx) -> Option<(String, String)> {
    s.node(n)
        .map(|node| (node.description.clone(), node.info.node_guid.to_string()))
}

/// A node named in a report's text: its name quoted and escaped (names
/// are data from the fabric), then its GUID.
pub fn fmt_node(f: &mut std::fmt::Formatter<'_>, name: &str, guid: &str) -> std::fmt::Result {
    write!(f, "{name:?} ({guid})")
}

impl Switch {
    fn of(s: &Snapshot, n: NodeIdx) -> Switch {
        let (switch, guid) =
            node_name(s, n).unwrap_or_else(|| (format!("node {n}"), String::new()));
        Switch { switch, guid }
    }
}

impl std::fmt::Display for Switch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fmt_node(f, &self.switch, &self.guid)
    }
}

/// A leaf switch whose hosts cannot reach some end LIDs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unreachable {
    #[serde(flatten)]
    pub at: Switch,
    pub hosts: usize,
    pub lids: Vec<u16>,
}

/// Where broken routes end: `kind` black_hole, no_route, misrouted or
/// loop; `port` 0 when the kind names none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Broken {
    pub kind: String,
    #[serde(flatten)]
    pub at: Switch,
    pub port: u8,
    /// Destinations whose routes end there, and (switch, destination)
    /// routes that do.
    pub destinations: usize,
    pub routes: u64,
}

/// A leaf's uplinks: destinations routed out by each (port, count).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Balance {
    #[serde(flatten)]
    pub at: Switch,
    pub uplinks: Vec<(u8, u64)>,
    pub spread: f64,
    /// Spread above `max_spread`.
    pub unbalanced: bool,
}

/// One check of a snapshot's routes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutesReport {
    /// The sweep checked.
    pub sweep: u64,
    pub max_spread: f64,
    pub switches: usize,
    pub destinations: usize,
    /// (switch, destination) routes walked, and those that arrive.
    pub routes: u64,
    pub good: u64,
    /// Host pairs that cannot talk.
    pub unreachable_pairs: u64,
    pub unreachable: Vec<Unreachable>,
    pub broken: Vec<Broken>,
    pub balance: Vec<Balance>,
}

fn kind_of(b: &Break) -> (&'static str, NodeIdx, u8) {
    match *b {
        Break::NoRoute { switch } => ("no_route", switch, 0),
        Break::BlackHole { switch, port } => ("black_hole", switch, port),
        Break::Misrouted { switch, port } => ("misrouted", switch, port),
        Break::Loop { switch } => ("loop", switch, 0),
        Break::CreditLoop { switch, port } => ("credit_loop", switch, port),
    }
}

impl RoutesReport {
    pub fn new(s: &Snapshot, c: &RouteCheck, max_spread: f64) -> Self {
        RoutesReport {
            sweep: s.sweep.number,
            max_spread,
            switches: c.switches,
            destinations: c.destinations,
            routes: c.routes,
            good: c.good,
            unreachable_pairs: c.unreachable_pairs,
            unreachable: c
                .unreachable
                .iter()
                .map(|u| Unreachable {
                    at: Switch::of(s, u.switch),
                    hosts: u.hosts,
                    lids: u.lids.clone(),
                })
                .collect(),
            broken: c
                .broken
                .iter()
                .map(|b| {
                    let (kind, sw, port) = kind_of(&b.at);
                    Broken {
                        kind: kind.into(),
                        at: Switch::of(s, sw),
                        port,
                        destinations: b.destinations,
                        routes: b.routes,
                    }
                })
                .collect(),
            balance: c
                .balance
                .iter()
                .map(|b| Balance {
                    at: Switch::of(s, b.switch),
                    uplinks: b.uplinks.clone(),
                    spread: b.spread,
                    unbalanced: b.spread > max_spread,
                })
                .collect(),
        }
    }

    /// The findings, each as (kind, switch, port, words).
    pub fn findings(&self) -> Vec<Finding> {
        let mut v: Vec<Finding> = self
            .unreachable
            .iter()
            .map(|u| Finding {
                kind: "unreachable".into(),
                guid: u.at.guid.clone(),
                port: 0,
                words: format!(
                    "UNREACHABLE {}: its {} hosts cannot reach {} end LIDs",
                    u.at,
                    u.hosts,
                    u.lids.len()
                ),
            })
            .collect();
        v.extend(self.broken.iter().map(|b| Finding {
            kind: b.kind.clone(),
            guid: b.at.guid.clone(),
            port: b.port,
            words: match b.kind.as_str() {
                "loop" => format!("LOOP through {}", b.at),
                "credit_loop" => format!("CREDIT LOOP through {} port {}", b.at, b.port),
                "no_route" => format!("BLACK HOLE {} has no route", b.at),
                "misrouted" => format!(
                    "BLACK HOLE {} port {}: leads to a channel adapter that is not the destination",
                    b.at, b.port
                ),
                _ => format!("BLACK HOLE {} port {}: down or not linked", b.at, b.port),
            } + &format!(": {} destinations, {} routes", b.destinations, b.routes),
        }));
        v.extend(self.balance.iter().filter(|b| b.unbalanced).map(|b| {
            let shares: Vec<String> = b.uplinks.iter().map(|(p, n)| format!("{p}:{n}")).collect();
            Finding {
                kind: "unbalanced".into(),
                guid: b.at.guid.clone(),
                port: 0,
                words: format!(
                    "UNBALANCED {}: uplinks (port:destinations) {} spread {:.2} > {:.2}",
                    b.at,
                    shares.join(" "),
                    b.spread,
                    self.max_spread
                ),
            }
        }));
        v
    }

    /// A summary line, then one line per finding.
    pub fn text(&self) -> String {
        let findings = self.findings();
        let mut out = format!(
            "routes: {} switches to {} end LIDs, {} of {} routes arrive; {} host pairs cannot talk\n",
            self.switches, self.destinations, self.good, self.routes, self.unreachable_pairs
        );
        for f in &findings {
            out.push_str("  ");
            out.push_str(&f.words);
            out.push('\n');
        }
        out
    }
}

/// One finding of the check, as logged and notified.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: String,
    pub guid: String,
    pub port: u8,
    pub words: String,
}

/// What makes it the same finding from one sweep to the next (its
/// counts may change).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RouteKey {
    pub kind: String,
    pub guid: String,
    pub port: u8,
}

impl Finding {
    pub fn key(&self) -> RouteKey {
        RouteKey {
            kind: self.kind.clone(),
            guid: self.guid.clone(),
            port: self.port,
        }
    }
}

/// What the agent publishes with each snapshot: the check, when the
/// snapshot carries forwarding tables.
pub struct Published(pub Option<RoutesReport>);

/// Whether every switch of `s` has its forwarding table (and there is one).
fn tables_read(s: &Snapshot) -> bool {
    let mut switches = s
        .nodes
        .iter()
        .filter(|n| n.info.node_type == ib::types::NodeType::Switch as u8)
        .peekable();
    switches.peek().is_some()
        && switches.all(|n| n.switch.as_ref().is_some_and(|d| !d.lft.is_empty()))
}

/// What a check depends on: the switches' tables, every port's LID, state
/// and link. The same inputs give the same routes: the walk is skipped.
#[derive(PartialEq)]
struct Inputs {
    tables: Vec<(Arc<[u8]>, u16)>,
    ports: Vec<(u16, u8, Option<ib::model::PortIdx>, NodeIdx, u8)>,
    nodes: Vec<(u8, String, u64)>,
    max_spread: u64,
}

impl Inputs {
    fn of(s: &Snapshot, max_spread: f64) -> Inputs {
        Inputs {
            tables: s
                .nodes
                .iter()
                .filter_map(|n| n.switch.as_deref())
                .map(|d| (Arc::clone(&d.lft), d.info.linear_fdb_top))
                .collect(),
            ports: s
                .ports
                .iter()
                .map(|p| (p.info.lid.0, p.info.port_state, p.remote, p.node, p.num.0))
                .collect(),
            nodes: s
                .nodes
                .iter()
                .map(|n| (n.info.node_type, n.description.clone(), n.info.node_guid.0))
                .collect(),
            max_spread: max_spread.to_bits(),
        }
    }
}

/// The running agent's route check: walks each published snapshot's
/// tables (again only when they or the links changed). What appeared or
/// cleared since is [`crate::models::findings`]' to say.
pub fn deriver(max_spread: SharedSpread) -> mibs::core::publish::ExtraFn<Arc<Published>> {
    let mut last: Option<(Inputs, RoutesReport)> = None;
    Box::new(move |snap: &Arc<Snapshot>| -> Arc<Published> {
        if snap.sweep.number == 0 || !tables_read(snap) {
            return Arc::new(Published(None));
        }
        let spread = max_spread.get();
        let inputs = Inputs::of(snap, spread);
        let mut report = match last.take() {
            Some((i, r)) if i == inputs => r,
            _ => RoutesReport::new(snap, &routes::check(snap, spread), spread),
        };
        report.sweep = snap.sweep.number;
        last = Some((inputs, report.clone()));
        Arc::new(Published(Some(report)))
    })
}

/// DISMAN-EVENT-MIB's mteTriggerFired when a finding appears,
/// mteTriggerFalling when it clears: mteHotTrigger `routes:KIND`,
/// mteHotValue the host pairs that cannot talk now, then IB-SM-MIB's
/// ibSmTrapNodeGUID1/PortNum1: the switch (and port) the finding names.
pub fn notification(
    RouteKey { kind, guid, port }: &RouteKey,
    appeared: bool,
    pairs: u64,
) -> snmp::notify::Notification {
    use mibs::core::oids::ib_sm_mib as sm;
    use mibs::modules::disman_event::Fired;
    use snmp::oid::Oid;
    use snmp::value::{Value, VarBind};
    let inst = |o: &[u32]| Oid::from_slice(o).join(&[0]);
    let mut objects = Vec::new();
    if let Some(g) = guid
        .strip_prefix("0x")
        .and_then(|h| u64::from_str_radix(h, 16).ok())
    {
        objects.push(VarBind::new(
            inst(sm::IB_SM_TRAP_NODE_GUID1),
            Value::OctetString(g.to_be_bytes().to_vec()),
        ));
        objects.push(VarBind::new(
            inst(sm::IB_SM_TRAP_PORT_NUM1),
            Value::Gauge32(u32::from(*port)),
        ));
    }
    let fired = Fired::finding(format!("routes:{kind}"), appeared, pairs, objects);
    // Storm control keys on the trigger and OID: one key per finding.
    fired
        .notification()
        .with_source(format!("routes:{kind}:{guid}:{port}"))
}
