//! The fabric held against its cabling plan: a pure function of a plan (a
//! [`Topology`]) and a [`Snapshot`], no MADs, linear in the fabric.
//!
//! Plan nodes are found in the fabric by node GUID when the plan knows it
//! ([`TopoNode::guid_known`]: ibnetdiscover output, `ibsnmpd dump`), by port
//! GUID when it knows only those ([`TopoNode::port_guids_known`]:
//! ibnetdiscover -p, iblinkinfo), else by name: the fabric node whose NodeDescription is the plan's name, or whose
//! description's first word is (`node017 HCA-1`), when exactly one is.
//!
//! Links are compared end port by end port. A planned link that is not there
//! and a link that is not planned which share an end are one MISCABLED
//! finding (a planned end arriving elsewhere); two cables whose far ends
//! were exchanged are one MISCABLED swap. A node of the plan that is not in
//! the fabric shows as its links from nodes that are (an HCA whose only
//! cable is out cannot be discovered at all); MISSING NODE is kept for
//! planned nodes none of whose planned neighbours are present either, and
//! UNEXPECTED NODE likewise.

use super::{NodeIdx, PortIdx, Snapshot};
use crate::topology::{TopoPort, Topology};
use crate::types::{Guid, LinkSpeed, LinkWidth, PortNum};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// One end of a cable: the node's name, its GUID when known, the port.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct End {
    pub node: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guid: Option<Guid>,
    pub port: u8,
}

/// A node the plan and the fabric disagree about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeRef {
    pub node: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guid: Option<Guid>,
}

/// A planned end arriving somewhere else.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Cable {
    /// The end that is where the plan puts it.
    pub at: End,
    /// Where the plan says its far end goes.
    pub planned: End,
    /// Where it goes (None: nowhere, the port has no link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<End>,
}

/// One difference between the fabric and its plan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// A planned link that is not there. `b_present`: false when `b`'s node
    /// is not in the fabric at all (nothing else of it was seen).
    Missing {
        a: End,
        b: End,
        b_present: bool,
    },
    /// A link that is not in the plan.
    Unexpected {
        a: End,
        b: End,
    },
    /// A planned end arrives at another node or port.
    Miscabled {
        cable: Cable,
    },
    /// Two cables whose far ends were exchanged: each end's planned far end
    /// is the other's actual one.
    Swapped {
        first: Cable,
        second: Cable,
    },
    MissingNode {
        node: NodeRef,
        /// Why it was not found when that is not plain absence.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    UnexpectedNode {
        node: NodeRef,
    },
    /// A link narrower or slower than planned (`4xHDR` in the plan).
    BelowPlan {
        a: End,
        b: End,
        planned: String,
        actual: String,
    },
}

/// The kinds, as /metrics labels them.
pub const KINDS: [&str; 6] = [
    "missing",
    "unexpected",
    "miscabled",
    "missing_node",
    "unexpected_node",
    "below_plan",
];

impl Finding {
    /// The kind's label (`miscabled` for swaps too).
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::Missing { .. } => "missing",
            Finding::Unexpected { .. } => "unexpected",
            Finding::Miscabled { .. } | Finding::Swapped { .. } => "miscabled",
            Finding::MissingNode { .. } => "missing_node",
            Finding::UnexpectedNode { .. } => "unexpected_node",
            Finding::BelowPlan { .. } => "below_plan",
        }
    }

    /// The fabric ports a technician would touch, with their GUIDs (the
    /// per-port gauge): ends on nodes the fabric has.
    pub fn ports(&self) -> Vec<&End> {
        fn cable(c: &Cable) -> Vec<&End> {
            let mut v = vec![&c.at];
            v.extend(c.actual.as_ref());
            v
        }
        let ends: Vec<&End> = match self {
            Finding::Missing { a, b, b_present } => {
                if *b_present {
                    vec![a, b]
                } else {
                    vec![a]
                }
            }
            Finding::Unexpected { a, b } | Finding::BelowPlan { a, b, .. } => vec![a, b],
            Finding::Miscabled { cable: c } => cable(c),
            Finding::Swapped { first, second } => {
                let mut v = cable(first);
                v.extend(cable(second));
                v
            }
            Finding::MissingNode { .. } | Finding::UnexpectedNode { .. } => vec![],
        };
        ends.into_iter().filter(|e| e.guid.is_some()).collect()
    }
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names are data from the fabric: quoted and escaped as the health
        // report quotes them (a control character never reaches a terminal).
        write!(f, "{:?} port {}", self.node, self.port)?;
        if let Some(g) = self.guid {
            write!(f, " ({g})")?;
        }
        Ok(())
    }
}

impl fmt::Display for NodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.node)?;
        if let Some(g) = self.guid {
            write!(f, " ({g})")?;
        }
        Ok(())
    }
}

fn far(e: Option<&End>) -> String {
    e.map_or_else(|| "nothing (no link)".to_string(), ToString::to_string)
}

/// One line a technician at the rack can act on.
impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Missing { a, b, b_present } => {
                write!(f, "MISSING: {a} -- {b}: no link")?;
                if !b_present {
                    write!(f, " ({:?} is not in the fabric)", b.node)?;
                }
                Ok(())
            }
            Finding::Unexpected { a, b } => write!(f, "UNEXPECTED: {a} -- {b}: not in the plan"),
            Finding::Miscabled { cable: c } => write!(
                f,
                "MISCABLED: {} reaches {}, planned {}",
                c.at,
                far(c.actual.as_ref()),
                c.planned
            ),
            Finding::Swapped { first, second } => write!(
                f,
                "MISCABLED: two cables swapped: {} reaches {}, planned {}; {} reaches {}, planned {}",
                first.at,
                far(first.actual.as_ref()),
                first.planned,
                second.at,
                far(second.actual.as_ref()),
                second.planned
            ),
            Finding::MissingNode { node, reason } => {
                write!(f, "MISSING NODE: {node}: not in the fabric")?;
                if let Some(r) = reason {
                    write!(f, " ({r})")?;
                }
                Ok(())
            }
            Finding::UnexpectedNode { node } => {
                write!(f, "UNEXPECTED NODE: {node}: not in the plan")
            }
            Finding::BelowPlan {
                a,
                b,
                planned,
                actual,
            } => write!(f, "BELOW PLAN: {a} -- {b}: {actual}, planned {planned}"),
        }
    }
}

/// `4xHDR` as ibnetdiscover writes a rate (`??` for an unknown part).
fn rate(w: Option<LinkWidth>, s: Option<LinkSpeed>) -> String {
    format!(
        "{}{}",
        w.map_or_else(|| "??".to_string(), |w| format!("{}x", w.lanes())),
        s.map_or("???", LinkSpeed::name)
    )
}

/// A fabric end port: its index in the snapshot (dense, so the per-port
/// tables below are vectors, not hash maps).
type Key = PortIdx;

/// The planned far end of each fabric port (with its plan line), and the
/// actual one (the snapshot's).
struct Cabling<'a> {
    snap: &'a Snapshot,
    planned: Vec<Option<(Key, &'a TopoPort)>>,
}

impl Cabling<'_> {
    fn planned(&self, a: Key) -> Option<Key> {
        self.planned
            .get(a as usize)
            .copied()
            .flatten()
            .map(|(b, _)| b)
    }
    fn plan_line(&self, a: Key) -> Option<&TopoPort> {
        self.planned
            .get(a as usize)
            .copied()
            .flatten()
            .map(|(_, p)| p)
    }
    fn actual(&self, a: Key) -> Option<Key> {
        self.snap.port(a).and_then(|p| p.remote)
    }
    fn node(&self, a: Key) -> Option<NodeIdx> {
        self.snap.port(a).map(|p| p.node)
    }
}

/// How plan nodes were found in the fabric.
struct Matching {
    /// Plan node index -> fabric node.
    fabric_of: Vec<Option<NodeIdx>>,
    /// Fabric node -> plan node index.
    plan_of: Vec<Option<usize>>,
    /// Plan node index -> why it was not found (ambiguous names).
    reason: Vec<Option<String>>,
}

fn match_nodes(plan: &Topology, snap: &Snapshot) -> Matching {
    let mut m = Matching {
        fabric_of: vec![None; plan.nodes.len()],
        plan_of: vec![None; snap.nodes.len()],
        reason: vec![None; plan.nodes.len()],
    };
    // Names are indexed only when the plan has nodes without GUIDs.
    let by_name = plan
        .nodes
        .iter()
        .any(|n| !n.guid_known)
        .then(|| NameIndex::new(snap));
    for (i, n) in plan.nodes.iter().enumerate() {
        let found = if n.guid_known {
            snap.node_by_guid(n.node_guid)
        } else if n.port_guids_known {
            // ibnetdiscover -p, iblinkinfo: port GUIDs (a switch's port 0).
            let switch = n.node_type == crate::types::NodeType::Switch;
            let port0 = switch.then_some(n.port0_guid);
            port0
                .into_iter()
                .chain(n.ports.iter().filter(|_| !switch).map(|p| p.guid))
                .find_map(|g| snap.port_by_guid(g))
                .and_then(|p| snap.port(p))
                .map(|p| p.node)
        } else {
            match by_name.as_ref().map(|ix| ix.find(&n.name)) {
                Some(Ok(f)) => f,
                Some(Err(count)) => {
                    if let Some(r) = m.reason.get_mut(i) {
                        *r = Some(format!("{count} fabric nodes are named {:?}", n.name));
                    }
                    None
                }
                None => None,
            }
        };
        // One fabric node per plan node: a second claim is not a match.
        let Some(f) = found else { continue };
        match m.plan_of.get_mut(f as usize) {
            Some(slot @ None) => {
                *slot = Some(i);
                if let Some(x) = m.fabric_of.get_mut(i) {
                    *x = Some(f);
                }
            }
            Some(Some(other)) => {
                let other = plan.nodes.get(*other).map_or("", |o| o.name.as_str());
                if let Some(r) = m.reason.get_mut(i) {
                    *r = Some(format!("its fabric node is already planned as {other:?}"));
                }
            }
            None => {}
        }
    }
    m
}

/// Fabric nodes by description and by the description's first word; a
/// name more than one node has is ambiguous (its count is kept).
struct NameIndex<'a> {
    full: HashMap<&'a str, (NodeIdx, usize)>,
    first_word: HashMap<&'a str, (NodeIdx, usize)>,
}

impl<'a> NameIndex<'a> {
    fn new(snap: &'a Snapshot) -> Self {
        let mut ix = NameIndex {
            full: HashMap::with_capacity(snap.nodes.len()),
            first_word: HashMap::with_capacity(snap.nodes.len()),
        };
        for (i, n) in snap.nodes.iter().enumerate() {
            let d = n.description.trim();
            ix.full.entry(d).or_insert((i as NodeIdx, 0)).1 += 1;
            if let Some(w) = d.split_whitespace().next().filter(|w| *w != d) {
                ix.first_word.entry(w).or_insert((i as NodeIdx, 0)).1 += 1;
            }
        }
        ix
    }

    /// Ok(None): no such node; Err(n): n nodes have the name.
    fn find(&self, name: &str) -> Result<Option<NodeIdx>, usize> {
        for map in [&self.full, &self.first_word] {
            match map.get(name) {
                Some((i, 1)) => return Ok(Some(*i)),
                Some((_, n)) => return Err(*n),
                None => {}
            }
        }
        Ok(None)
    }
}

/// Everything that differs between `snap` and its plan, in a stable order
/// (MISSING, UNEXPECTED, MISCABLED, nodes, BELOW PLAN; then by name).
pub fn check(plan: &Topology, snap: &Snapshot) -> Vec<Finding> {
    let m = match_nodes(plan, snap);
    let ends = Ends { plan, snap, m: &m };
    let fabric_end = |k: Key| ends.fabric(k);
    let mut findings = Vec::new();
    let planned = plan_cabling(&ends);
    missing_nodes(plan, &m, &planned.present_neighbour, &mut findings);
    let unexpected = unexpected_links(snap, &m, &planned.cabling, &mut findings);

    // Each planned end whose far end differs, and each unplanned link.
    let cabling = &planned.cabling;
    let mut missing: Vec<(Key, Key)> = Vec::new();
    for (a, p) in cabling.planned.iter().enumerate() {
        let a = a as Key;
        let Some((b, _)) = *p else { continue };
        if a > b {
            continue;
        }
        if cabling.actual(a) == Some(b) {
            findings.extend(below_plan(cabling, a, b, &fabric_end));
        } else {
            missing.push((a, b));
        }
    }
    for (a, b) in planned.no_such_port {
        findings.push(Finding::Missing {
            a,
            b,
            b_present: true,
        });
    }
    pair_up(
        &mut findings,
        &missing,
        &planned.absent,
        &unexpected,
        &fabric_end,
        cabling,
    );
    findings.sort_by_cached_key(|f| {
        let order = match f {
            Finding::Missing { .. } => 0,
            Finding::Unexpected { .. } => 1,
            Finding::Miscabled { .. } | Finding::Swapped { .. } => 2,
            Finding::MissingNode { .. } => 3,
            Finding::UnexpectedNode { .. } => 4,
            Finding::BelowPlan { .. } => 5,
        };
        (order, f.to_string())
    });
    findings
}

/// Findings' ends named from the fabric where the node is there, else from
/// the plan.
struct Ends<'a> {
    plan: &'a Topology,
    snap: &'a Snapshot,
    m: &'a Matching,
}

impl Ends<'_> {
    fn node(&self, n: NodeIdx, p: u8) -> End {
        End {
            node: self
                .snap
                .node(n)
                .map_or_else(String::new, |x| x.description.clone()),
            guid: self.snap.node(n).map(|x| x.info.node_guid),
            port: p,
        }
    }

    fn fabric(&self, k: Key) -> End {
        let port = self.snap.port(k);
        self.node(
            port.map_or(NodeIdx::MAX, |p| p.node),
            port.map_or(0, |p| p.num.0),
        )
    }

    fn plan(&self, i: usize, p: PortNum) -> End {
        match self.m.fabric_of.get(i).copied().flatten() {
            Some(f) => self.node(f, p.0),
            None => {
                let n = self.plan.nodes.get(i);
                End {
                    node: n.map_or_else(String::new, |n| n.description().to_string()),
                    guid: n.filter(|n| n.guid_known).map(|n| n.node_guid),
                    port: p.0,
                }
            }
        }
    }
}

/// The plan's links laid over the fabric's ports.
struct Planned<'a> {
    cabling: Cabling<'a>,
    /// Plan node index -> whether a node of the fabric plans a link to it.
    present_neighbour: Vec<bool>,
    /// Planned links whose far end's node is not in the fabric.
    absent: Vec<(Key, End)>,
    /// Planned links to a port number the fabric node does not have.
    no_such_port: BTreeSet<(End, End)>,
}

/// Planned links between present nodes, by fabric end; links to absent nodes.
fn plan_cabling<'a>(ends: &Ends<'a>) -> Planned<'a> {
    let (plan, snap, m) = (ends.plan, ends.snap, ends.m);
    let mut out = Planned {
        cabling: Cabling {
            snap,
            planned: vec![None; snap.ports.len()],
        },
        present_neighbour: vec![false; plan.nodes.len()],
        absent: Vec::new(),
        no_such_port: BTreeSet::new(),
    };
    for (i, n) in plan.nodes.iter().enumerate() {
        let Some(f) = m.fabric_of.get(i).copied().flatten() else {
            continue;
        };
        for p in &n.ports {
            let Some(j) = plan.index_of(&p.remote) else {
                continue;
            };
            if let Some(x) = out.present_neighbour.get_mut(j) {
                *x = true;
            }
            let a = snap.node_port(f, p.port);
            match (a, m.fabric_of.get(j).copied().flatten()) {
                (Some(a), Some(g)) => match snap.node_port(g, p.remote_port) {
                    Some(b) => {
                        if let Some(x) = out.cabling.planned.get_mut(a as usize) {
                            *x = Some((b, p));
                        }
                    }
                    None => {
                        let ends = (ends.fabric(a), ends.node(g, p.remote_port.0));
                        out.no_such_port.insert(ends);
                    }
                },
                (Some(a), None) => out.absent.push((a, ends.plan(j, p.remote_port))),
                // Reported from the other end when that one is present.
                (None, Some(g)) => {
                    if snap.node_port(g, p.remote_port).is_none() {
                        let (x, y) = (ends.node(f, p.port.0), ends.node(g, p.remote_port.0));
                        out.no_such_port
                            .insert(if x <= y { (x, y) } else { (y, x) });
                    }
                }
                (None, None) => {}
            }
        }
    }
    out
}

/// MISSING NODE: plan nodes not in the fabric none of whose planned
/// neighbours is there either.
fn missing_nodes(
    plan: &Topology,
    m: &Matching,
    present_neighbour: &[bool],
    findings: &mut Vec<Finding>,
) {
    for (i, n) in plan.nodes.iter().enumerate() {
        let absent = m.fabric_of.get(i).copied().flatten().is_none();
        if absent && !present_neighbour.get(i).copied().unwrap_or(false) {
            findings.push(Finding::MissingNode {
                node: NodeRef {
                    node: n.description().to_string(),
                    guid: n.guid_known.then_some(n.node_guid),
                },
                reason: m.reason.get(i).cloned().flatten(),
            });
        }
    }
}

/// The fabric's links with at least one planned end that the plan does not
/// have; UNEXPECTED NODE for the unplanned nodes cabled to no planned one.
fn unexpected_links(
    snap: &Snapshot,
    m: &Matching,
    cabling: &Cabling,
    findings: &mut Vec<Finding>,
) -> Vec<(Key, Key)> {
    let mut unexpected: Vec<(Key, Key)> = Vec::new();
    let mut unplanned_seen = vec![false; snap.nodes.len()];
    for (a, b) in snap.links() {
        let (Some(pa), Some(pb)) = (snap.port(a), snap.port(b)) else {
            continue;
        };
        let planned_a = m.plan_of.get(pa.node as usize).copied().flatten().is_some();
        let planned_b = m.plan_of.get(pb.node as usize).copied().flatten().is_some();
        if !planned_a && !planned_b {
            continue;
        }
        // An unplanned node cabled to a planned one shows as that link.
        for (planned_y, y) in [(planned_a, pa), (planned_b, pb)] {
            if !planned_y {
                if let Some(s) = unplanned_seen.get_mut(y.node as usize) {
                    *s = true;
                }
            }
        }
        if cabling.planned(a) != Some(b) {
            unexpected.push((a, b));
        }
    }
    for (f, n) in snap.nodes.iter().enumerate() {
        let unplanned = m.plan_of.get(f).copied().flatten().is_none();
        if unplanned && !unplanned_seen.get(f).copied().unwrap_or(false) {
            findings.push(Finding::UnexpectedNode {
                node: NodeRef {
                    node: n.description.clone(),
                    guid: Some(n.info.node_guid),
                },
            });
        }
    }
    unexpected
}

/// The link `a`-`b` (as planned) narrower or slower than either end's plan says.
fn below_plan(c: &Cabling, a: Key, b: Key, end: &dyn Fn(Key) -> End) -> Option<Finding> {
    let (here, back) = (c.plan_line(a), c.plan_line(b));
    let want_w = here.and_then(|p| p.width).or(back.and_then(|p| p.width));
    let want_s = here.and_then(|p| p.speed).or(back.and_then(|p| p.speed));
    if want_w.is_none() && want_s.is_none() {
        return None;
    }
    let port = c.snap.port(a)?;
    let (w, s) = (port.info.link_width(), c.snap.port_speed(port));
    // An unknown width or speed cannot be said to be below plan.
    let narrow = matches!((want_w, w), (Some(x), Some(y)) if y.lanes() < x.lanes());
    let slow = matches!((want_s, s), (Some(x), Some(y)) if y.lane_data_kbps() < x.lane_data_kbps());
    (narrow || slow).then(|| Finding::BelowPlan {
        a: end(a),
        b: end(b),
        planned: rate(want_w, want_s),
        actual: rate(w, s),
    })
}

/// Pairs missing and unexpected links sharing ends: swaps first (two
/// missing and two unexpected links over the same four ends), then single
/// miscablings (one missing and one unexpected link sharing an end), then
/// what is left, as it is.
fn pair_up(
    out: &mut Vec<Finding>,
    missing: &[(Key, Key)],
    absent: &[(Key, End)],
    unexpected: &[(Key, Key)],
    end: &dyn Fn(Key) -> End,
    cabling: &Cabling,
) {
    let mut missing_used = vec![false; missing.len()];
    let mut unexpected_used = vec![false; unexpected.len()];
    // Each link by both its ends.
    let by_end = |links: &[(Key, Key)]| -> HashMap<Key, usize> {
        let mut h = HashMap::with_capacity(links.len() * 2);
        for (i, (a, b)) in links.iter().enumerate() {
            h.insert(*a, i);
            h.insert(*b, i);
        }
        h
    };
    let m_at = by_end(missing);
    let u_at = by_end(unexpected);
    let cable = |at: Key| Cable {
        at: end(at),
        planned: end(cabling.planned(at).unwrap_or(at)),
        actual: cabling.actual(at).map(end),
    };
    let other = |(a, b): (Key, Key), x: Key| if a == x { b } else { a };

    // Swaps: planned a-b and c-d, actual a-d and c-b.
    for (i, &(a, b)) in missing.iter().enumerate() {
        if !free(&missing_used, i) {
            continue;
        }
        let found = [(a, b), (b, a)].into_iter().find_map(|(a, b)| {
            let u1 = *u_at.get(&a)?;
            let d = other(*unexpected.get(u1)?, a);
            let m2 = *m_at.get(&d)?;
            let c = other(*missing.get(m2)?, d);
            let u2 = *u_at.get(&c)?;
            let unused = m2 != i
                && u1 != u2
                && free(&missing_used, m2)
                && free(&unexpected_used, u1)
                && free(&unexpected_used, u2);
            (unused && other(*unexpected.get(u2)?, c) == b).then_some((a, c, m2, u1, u2))
        });
        let Some((a, c, m2, u1, u2)) = found else {
            continue;
        };
        mark(&mut missing_used, &[i, m2]);
        mark(&mut unexpected_used, &[u1, u2]);
        // Name the swap at the pair of ends on one node when there is one
        // (two ports of a switch), else at the lower of the two pairs.
        let b = cabling.planned(a).unwrap_or(a);
        let d = cabling.planned(c).unwrap_or(c);
        let one_node = |x: Key, y: Key| cabling.node(x) == cabling.node(y);
        let (x, y) = if one_node(a, c) || (!one_node(b, d) && a.min(c) < b.min(d)) {
            (a, c)
        } else {
            (b, d)
        };
        let (x, y) = (x.min(y), x.max(y));
        out.push(Finding::Swapped {
            first: cable(x),
            second: cable(y),
        });
    }
    // A planned end arriving elsewhere: missing a-b with unexpected a-x.
    for (i, &(a, b)) in missing.iter().enumerate() {
        if !free(&missing_used, i) {
            continue;
        }
        let hit = [a, b].into_iter().find_map(|at| {
            let u = *u_at.get(&at)?;
            free(&unexpected_used, u).then_some((at, u))
        });
        if let Some((at, u)) = hit {
            mark(&mut missing_used, &[i]);
            mark(&mut unexpected_used, &[u]);
            out.push(Finding::Miscabled { cable: cable(at) });
        }
    }
    // A planned end whose node is not seen, and another node at its place
    // (a replaced HCA: same cable, new GUID).
    for (a, b) in absent {
        let u = u_at.get(a).copied().filter(|u| free(&unexpected_used, *u));
        match u {
            Some(u) => {
                mark(&mut unexpected_used, &[u]);
                out.push(Finding::Miscabled {
                    cable: Cable {
                        at: end(*a),
                        planned: b.clone(),
                        actual: cabling.actual(*a).map(end),
                    },
                });
            }
            None => out.push(Finding::Missing {
                a: end(*a),
                b: b.clone(),
                b_present: false,
            }),
        }
    }
    // What no pairing took: links missing and links unexpected, as they are.
    let left = |links: &[(Key, Key)], used: &[bool]| -> Vec<(End, End)> {
        let left = links.iter().enumerate().filter(|(i, _)| free(used, *i));
        left.map(|(_, (a, b))| (end(*a), end(*b))).collect()
    };
    for (a, b) in left(missing, &missing_used) {
        out.push(Finding::Missing {
            a,
            b,
            b_present: true,
        });
    }
    for (a, b) in left(unexpected, &unexpected_used) {
        out.push(Finding::Unexpected { a, b });
    }
}

/// Whether link `i` is still to be paired (out of range: no).
fn free(used: &[bool], i: usize) -> bool {
    !used.get(i).copied().unwrap_or(true)
}

fn mark(used: &mut [bool], which: &[usize]) {
    for &k in which {
        if let Some(x) = used.get_mut(k) {
            *x = true;
        }
    }
}

/// Findings by kind, every kind present (0 when none): /metrics' gauge.
pub fn count_by_kind(findings: &[Finding]) -> [(&'static str, usize); 6] {
    KINDS.map(|k| (k, findings.iter().filter(|f| f.kind() == k).count()))
}
