//! Routing truth (docs/routing.md): every route the switches' linear
//! forwarding tables make, from every switch to every end LID (a CA port's
//! base LID, a switch's port 0), walked through one snapshot, and what is
//! broken: destinations a switch cannot reach, the black holes they fall
//! into (a table entry pointing at a port that is down or not linked, or no
//! entry: 255, or past LinearFDBTop), forwarding loops, and leaf switches
//! whose uplinks carry uneven shares of the destinations; and whether the
//! routes' channel dependencies make a cycle (a credit loop, [`super::credit`]).
//!
//! One walk per destination visits each switch once: a switch's route is
//! its next hop's plus one, so a destination costs O(switches) and the
//! whole check O(switches x destinations), with no route walked twice.

use std::collections::BTreeMap;

use serde::Serialize;

use super::credit::Deps;
use super::snapshot::{NodeIdx, PortIdx, Snapshot};
use crate::types::{Lid, NodeType, PortNum, PortState};

/// Why a destination cannot be reached from a switch: where its packets
/// end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Break {
    /// The switch's table has no entry for the LID (255, or past its
    /// LinearFDBTop, or port 0 of a switch that is not the destination).
    NoRoute { switch: NodeIdx },
    /// The entry points at a port that is down or not linked.
    BlackHole { switch: NodeIdx, port: u8 },
    /// The entry leads to a channel adapter that is not the destination.
    Misrouted { switch: NodeIdx, port: u8 },
    /// The route comes back to a switch it passed (`switch`: the first of
    /// the cycle met, by node index).
    Loop { switch: NodeIdx },
    /// The routes' channel dependencies make a cycle (a credit loop: under
    /// load the links can deadlock though every route arrives); `switch`
    /// and `port`: the cycle's first link ([`RouteCheck::credit_loop`]
    /// names them all).
    CreditLoop { switch: NodeIdx, port: u8 },
}

/// A switch-to-switch link by its sending end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Link {
    pub switch: NodeIdx,
    pub port: u8,
}

/// A route's fate from one switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Unknown,
    /// Being walked (meeting it again is a loop).
    Walking,
    /// Reaches the destination in this many switch-to-next hops.
    Good(u8),
    Broken(Break),
}

/// One destination: its LID and the port that has it.
#[derive(Clone, Copy, Debug)]
struct Dest {
    lid: Lid,
    port: PortIdx,
    node: NodeIdx,
}

/// Unreachable destinations from one leaf switch (a switch with channel
/// adapters on it): the hosts there cannot talk to them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unreachable {
    pub switch: NodeIdx,
    /// The end ports on the switch (hosts that lose the destinations).
    pub hosts: usize,
    /// The LIDs it cannot reach (sorted).
    pub lids: Vec<u16>,
}

/// Destinations lost at one break, from how many switches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Broken {
    #[serde(flatten)]
    pub at: Break,
    /// Destinations whose routes end there (from at least one switch); for
    /// a credit loop, destinations whose routes hold one of its
    /// dependencies.
    pub destinations: usize,
    /// (switch, destination) routes that end there; for a credit loop,
    /// (dependency, destination) pairs on it.
    pub routes: u64,
}

/// How evenly a leaf's uplinks share the destinations routed up.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Balance {
    pub switch: NodeIdx,
    /// Destinations routed out by each uplink (port, count), by port.
    pub uplinks: Vec<(u8, u64)>,
    /// (max - min) / mean of the counts: 0 is even.
    pub spread: f64,
}

/// Everything the check found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RouteCheck {
    pub switches: usize,
    pub destinations: usize,
    /// (switch, destination) routes walked, and those that arrive.
    pub routes: u64,
    pub good: u64,
    /// Good routes by hop count (index: switch-to-next hops).
    pub hops: Vec<u64>,
    /// Leaf switches that cannot reach some destinations.
    pub unreachable: Vec<Unreachable>,
    /// Host pairs that cannot talk: for each leaf, its hosts times the
    /// destinations it cannot reach.
    pub unreachable_pairs: u64,
    /// Where broken routes end, most destinations first.
    pub broken: Vec<Broken>,
    /// Leaves whose uplinks share the destinations unevenly (spread above
    /// the threshold), and every leaf's balance.
    pub unbalanced: Vec<Balance>,
    pub balance: Vec<Balance>,
    /// One cycle of the channel dependency graph, link by link from its
    /// first (each depends on the next, the last on the first); empty when
    /// the routes make none.
    pub credit_loop: Vec<Link>,
}

fn is_switch(s: &Snapshot, n: NodeIdx) -> bool {
    s.node(n)
        .is_some_and(|n| n.info.node_type() == Some(NodeType::Switch))
}

/// The end LIDs of a snapshot: CA ports' base LIDs and switches' port 0.
/// A CA port whose own link is not Active is no destination: it is down
/// (the health report's), not a route's fault.
fn destinations(s: &Snapshot) -> Vec<Dest> {
    s.ports
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let switch = is_switch(s, p.node);
            let up = p.info.port_state() == Some(PortState::Active);
            let end = if switch {
                p.num.0 == 0
            } else {
                p.num.0 != 0 && up
            };
            let port = PortIdx::try_from(i).ok()?;
            (end && p.info.lid.0 != 0).then_some(Dest {
                lid: p.info.lid,
                port,
                node: p.node,
            })
        })
        .collect()
}

/// Every channel adapter port with a LID, up or not: what the tables route.
fn destinations_routed(s: &Snapshot) -> impl Iterator<Item = Dest> + '_ {
    s.ports.iter().enumerate().filter_map(|(i, p)| {
        let ca = p.num.0 != 0 && !is_switch(s, p.node) && p.info.lid.0 != 0;
        ca.then_some(Dest {
            lid: p.info.lid,
            port: PortIdx::try_from(i).ok()?,
            node: p.node,
        })
    })
}

/// The port linked to `node`'s port `num`, when the link is up.
fn far_end(s: &Snapshot, node: NodeIdx, num: u8) -> Option<PortIdx> {
    let here = s.port(s.node_port(node, PortNum(num))?)?;
    if here.info.port_state() != Some(PortState::Active) {
        return None;
    }
    let far = here.remote?;
    let p = s.port(far)?;
    (p.info.port_state() == Some(PortState::Active)).then_some(far)
}

/// The next step of switch `sw`'s route to `d`: arrived (over how many
/// links: 0 at the destination switch itself, 1 to a CA on it), the next
/// switch, or where it breaks.
enum Step {
    Arrived(u8),
    /// The next switch, and the port that leads to it.
    Next(NodeIdx, u8),
    Broken(Break),
}

fn step(s: &Snapshot, sw: NodeIdx, d: &Dest) -> Step {
    if d.node == sw {
        return Step::Arrived(0);
    }
    let Some(data) = s.node(sw).and_then(|n| n.switch.as_deref()) else {
        return Step::Broken(Break::NoRoute { switch: sw });
    };
    let within = d.lid.0 <= data.info.linear_fdb_top;
    let port = match data.lft.get(usize::from(d.lid.0)) {
        Some(&p) if within && p != 0xFF && p != 0 => p,
        _ => return Step::Broken(Break::NoRoute { switch: sw }),
    };
    let Some(far) = far_end(s, sw, port) else {
        return Step::Broken(Break::BlackHole { switch: sw, port });
    };
    match s.port(far) {
        Some(_) if far == d.port => Step::Arrived(1),
        Some(p) if is_switch(s, p.node) => Step::Next(p.node, port),
        _ => Step::Broken(Break::Misrouted { switch: sw, port }),
    }
}

/// No next switch (in [`walk`]'s `hop`).
const NO_HOP: (usize, u8) = (usize::MAX, 0);

/// The fate of every switch's route to `d` (indexed like `switches`;
/// `index`: a node's place among them), and into `hop` each switch's next
/// switch (by its place) and the port to it, NO_HOP when the route does
/// not go on to a switch. Each switch is stepped once: a walk stops at the
/// first switch whose fate is known and hands it back along its path, one
/// hop more each switch.
fn walk(
    s: &Snapshot,
    switches: &[NodeIdx],
    index: &[Option<usize>],
    d: &Dest,
    hop: &mut [(usize, u8)],
) -> Vec<Fate> {
    let mut fate = vec![Fate::Unknown; switches.len()];
    hop.iter_mut().for_each(|h| *h = NO_HOP);
    let mut path: Vec<usize> = Vec::new();
    for start in 0..switches.len() {
        if fate[start] != Fate::Unknown {
            continue;
        }
        let mut at = start;
        // The fate of the last switch on the path.
        let mut last = loop {
            fate[at] = Fate::Walking;
            path.push(at);
            let next = match step(s, switches[at], d) {
                Step::Arrived(links) => break Fate::Good(links),
                Step::Broken(b) => break Fate::Broken(b),
                Step::Next(n, port) => match index.get(n as usize).copied().flatten() {
                    Some(i) => {
                        hop[at] = (i, port);
                        i
                    }
                    None => break Fate::Broken(Break::NoRoute { switch: n }),
                },
            };
            match fate[next] {
                Fate::Unknown => at = next,
                Fate::Good(h) => break Fate::Good(h.saturating_add(1)),
                Fate::Broken(b) => break Fate::Broken(b),
                Fate::Walking => {
                    // Back at a switch of this walk: a loop, named by the
                    // cycle's first switch in node order.
                    let from = path.iter().position(|&p| p == next).unwrap_or(0);
                    let first = path
                        .get(from..)
                        .unwrap_or_default()
                        .iter()
                        .map(|&i| switches[i])
                        .min()
                        .unwrap_or(switches[next]);
                    break Fate::Broken(Break::Loop { switch: first });
                }
            }
        };
        for &i in path.iter().rev() {
            fate[i] = last;
            last = match last {
                Fate::Good(h) => Fate::Good(h.saturating_add(1)),
                f => f,
            };
        }
        path.clear();
    }
    fate
}

/// The end ports on each switch (its hosts), by switch.
fn hosts_on(s: &Snapshot, sw: NodeIdx) -> usize {
    s.node_ports(sw)
        .iter()
        .filter_map(|p| p.remote)
        .filter_map(|r| s.port(r))
        .filter(|r| !is_switch(s, r.node))
        .count()
}

/// Checks every route of `s`; leaves whose uplink spread passes
/// `max_spread` are unbalanced.
pub fn check(s: &Snapshot, max_spread: f64) -> RouteCheck {
    let switches: Vec<NodeIdx> = (0..s.nodes.len())
        .filter_map(|i| NodeIdx::try_from(i).ok())
        .filter(|&n| is_switch(s, n))
        .collect();
    let mut index = vec![None; s.nodes.len()];
    for (i, &n) in switches.iter().enumerate() {
        if let Some(slot) = index.get_mut(n as usize) {
            *slot = Some(i);
        }
    }
    let dests = destinations(s);
    // The end ports on each switch (by its place in `switches`): a leaf
    // has some.
    let hosts: Vec<usize> = switches.iter().map(|&n| hosts_on(s, n)).collect();
    let mut out = RouteCheck {
        switches: switches.len(),
        destinations: dests.len(),
        ..RouteCheck::default()
    };
    let mut lost: BTreeMap<usize, Vec<u16>> = BTreeMap::new();
    let mut breaks: BTreeMap<Break, (usize, u64)> = BTreeMap::new();
    // Per leaf, destinations routed out by each uplink port.
    let mut up: BTreeMap<usize, BTreeMap<u8, u64>> = BTreeMap::new();
    let mut deps = Deps::new(
        switches
            .iter()
            .map(|&n| s.node(n).map_or(0, |n| n.info.num_ports)),
    );
    let mut hop = vec![NO_HOP; switches.len()];
    for d in &dests {
        let fate = walk(s, &switches, &index, d, &mut hop);
        // Data goes to channel adapters; a switch's port 0 gets management
        // packets, mostly SMPs on VL15, which need no credits (and minhop's
        // routes between switches go down and up again in a fat tree).
        if !is_switch(s, d.node) {
            depend(&fate, &hop, &mut deps);
        }
        for i in tally(&mut out, &fate, &mut breaks) {
            if hosts[i] > 0 {
                lost.entry(i).or_default().push(d.lid.0);
            }
        }
    }
    // Balance: how evenly the tables spread the channel adapters' LIDs over
    // each leaf's uplinks, a host that is down included (its entries stay
    // until the SM routes again). Switch LIDs carry management only, and
    // OpenSM's minhop leaves them out of its port loads (on the 4,096-host
    // ibsim fabric they all took a leaf's first uplink, 255 against 128).
    for d in destinations_routed(s) {
        for i in (0..switches.len()).filter(|&i| hosts[i] > 0) {
            if let Some(port) = uplink_of(s, switches[i], &d) {
                *up.entry(i).or_default().entry(port).or_insert(0) += 1;
            }
        }
    }
    for (i, mut lids) in lost {
        lids.sort_unstable();
        lids.dedup();
        out.unreachable_pairs += hosts[i] as u64 * lids.len() as u64;
        out.unreachable.push(Unreachable {
            switch: switches[i],
            hosts: hosts[i],
            lids,
        });
    }
    if let Some(cycle) = deps.cycle() {
        out.credit_loop = cycle
            .into_iter()
            .map(|(i, port)| Link {
                switch: switches[i],
                port,
            })
            .collect();
        if let Some(&Link { switch, port }) = out.credit_loop.first() {
            let on = on_cycle(s, &out.credit_loop, &dests);
            breaks.insert(Break::CreditLoop { switch, port }, on);
        }
    }
    out.broken = breaks
        .into_iter()
        .map(|(at, (destinations, routes))| Broken {
            at,
            destinations,
            routes,
        })
        .collect();
    out.broken
        .sort_by(|a, b| b.destinations.cmp(&a.destinations).then(a.at.cmp(&b.at)));
    for (i, ports) in up {
        let b = balance(switches[i], s, ports);
        if b.spread > max_spread {
            out.unbalanced.push(b.clone());
        }
        out.balance.push(b);
    }
    out
}

/// Counts one destination's routes into `out` (hop counts) and `breaks`
/// (each break once a destination, every route); returns the switches
/// (by place) whose route is broken.
fn tally(
    out: &mut RouteCheck,
    fate: &[Fate],
    breaks: &mut BTreeMap<Break, (usize, u64)>,
) -> Vec<usize> {
    let mut broken = Vec::new();
    let mut seen: Vec<Break> = Vec::new();
    for (i, f) in fate.iter().enumerate() {
        out.routes += 1;
        match *f {
            Fate::Good(h) => {
                out.good += 1;
                let h = usize::from(h);
                if out.hops.len() <= h {
                    out.hops.resize(h + 1, 0);
                }
                out.hops[h] += 1;
            }
            Fate::Broken(b) => {
                broken.push(i);
                let e = breaks.entry(b).or_insert((0, 0));
                e.1 += 1;
                if !seen.contains(&b) {
                    seen.push(b);
                    e.0 += 1;
                }
            }
            Fate::Unknown | Fate::Walking => {}
        }
    }
    broken
}

/// The channel dependencies of one destination's good routes: a switch
/// that sends it on to a switch that sends it on again.
fn depend(fate: &[Fate], hop: &[(usize, u8)], deps: &mut Deps) {
    for (i, f) in fate.iter().enumerate() {
        let Fate::Good(_) = f else { continue };
        let Some(&(j, pa)) = hop.get(i) else { continue };
        if let Some(&(k, pb)) = hop.get(j) {
            if k != usize::MAX {
                deps.add(i, pa, j, pb);
            }
        }
    }
}

/// The channel-adapter destinations whose tables route them along a
/// dependency of the cycle (a link, then the next from the switch it leads to), and how
/// many (dependency, destination) pairs: what the credit loop carries.
fn on_cycle(s: &Snapshot, cycle: &[Link], dests: &[Dest]) -> (usize, u64) {
    let entry = |l: &Link, lid: Lid| {
        s.node(l.switch)
            .and_then(|n| n.switch.as_deref())
            .and_then(|t| t.lft.get(usize::from(lid.0)).copied())
    };
    let (mut destinations, mut routes) = (0, 0);
    for d in dests.iter().filter(|d| !is_switch(s, d.node)) {
        let held = cycle
            .iter()
            .zip(cycle.iter().cycle().skip(1))
            .filter(|(a, b)| entry(a, d.lid) == Some(a.port) && entry(b, d.lid) == Some(b.port))
            .count() as u64;
        if held > 0 {
            destinations += 1;
            routes += held;
        }
    }
    (destinations, routes)
}

/// The uplink a leaf routes `d` out by: its table's port, when that port
/// leads to another switch (destinations on the leaf itself are not
/// routed up).
fn uplink_of(s: &Snapshot, leaf: NodeIdx, d: &Dest) -> Option<u8> {
    if d.node == leaf {
        return None;
    }
    let data = s.node(leaf)?.switch.as_deref()?;
    let port = *data.lft.get(usize::from(d.lid.0))?;
    let far = far_end(s, leaf, port)?;
    is_switch(s, s.port(far)?.node).then_some(port)
}

/// A leaf's balance over all its uplinks (those with no destination
/// count 0).
fn balance(leaf: NodeIdx, s: &Snapshot, routed: BTreeMap<u8, u64>) -> Balance {
    let mut uplinks: Vec<(u8, u64)> = s
        .node_ports(leaf)
        .iter()
        .filter(|p| p.num.0 != 0)
        .filter(|p| {
            far_end(s, leaf, p.num.0)
                .and_then(|f| s.port(f))
                .is_some_and(|f| is_switch(s, f.node))
        })
        .map(|p| (p.num.0, routed.get(&p.num.0).copied().unwrap_or(0)))
        .collect();
    uplinks.sort_unstable();
    let counts: Vec<f64> = uplinks.iter().map(|(_, c)| *c as f64).collect();
    let mean = counts.iter().sum::<f64>() / counts.len().max(1) as f64;
    let spread = match (
        counts.iter().copied().reduce(f64::max),
        counts.iter().copied().reduce(f64::min),
    ) {
        (Some(max), Some(min)) if mean > 0.0 && counts.len() > 1 => (max - min) / mean,
        _ => 0.0,
    };
    Balance {
        switch: leaf,
        uplinks,
        spread,
    }
}
