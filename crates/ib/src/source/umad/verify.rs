//! The periodic re-verification of the topology, spread over sweeps. Instead
//! of a whole discovery every `topology_every` sweeps (about as many SMPs as
//! the fabric has ports, landing in one sweep), each sweep re-reads the slice
//! of the nodes whose turn it is ([`super::spread`]): every node is checked
//! once a period, so a change that nothing else shows is seen as late as
//! before at worst, and a change seen makes the sweep discover at once.
//!
//! A node's check is what a discovery learns about it: NodeInfo along its
//! route (the route still leads to it, through the same port), its
//! NodeDescription and SwitchInfo, the PortInfo of every port, and NodeInfo
//! through each linked port its route does not already cover (the far end
//! is still the same node and port; a link between two switches is checked
//! from one side). What cannot have moved the topology (a description, a
//! PortInfo's other fields) is patched into the kept topology; a node, port,
//! LID, link or state that differs, or an SMP unanswered, is a [`Trigger`].

use std::collections::HashMap;

use super::discover::{link_up, may_traverse, DNode, Discovered, MAX_HOPS};
use super::req;
use super::spread::Slice;
use super::transport::{Request, Transport};
use super::watch::Trigger;
use crate::mad::smp::{attr, NodeDescription, NodeInfo, PortInfo, SwitchInfo};
use crate::types::Guid;

/// What each SMP of a check asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    /// NodeInfo along the node's own route: this node, arrived at through
    /// this port (None: the route's last hop is not known as a link).
    Node(Guid, Option<u8>),
    Description(Guid),
    SwitchInfo(Guid),
    Port(Guid, u8),
    /// NodeInfo through this port: the far end must be this (node, port).
    Peer(Guid, u8, (Guid, u8)),
}

/// The SMPs checking the nodes of `slice`.
pub fn plan(d: &Discovered, slice: Slice) -> Vec<(Check, Request)> {
    let by_route: HashMap<&[u8], Guid> = d
        .nodes
        .values()
        .map(|n| (n.path.as_slice(), n.info.node_guid))
        .collect();
    let mut out = Vec::new();
    let mut nodes: Vec<&DNode> = d
        .nodes
        .values()
        .filter(|n| slice.covers(n.info.node_guid.0))
        .collect();
    nodes.sort_by_key(|n| n.info.node_guid);
    for n in nodes {
        let g = n.info.node_guid;
        let path = n.path.as_slice();
        out.push((
            Check::Node(g, arrival(d, &by_route, n)),
            req::dr_get(attr::NODE_INFO, 0, path),
        ));
        out.push((
            Check::Description(g),
            req::dr_get(attr::NODE_DESCRIPTION, 0, path),
        ));
        if n.is_switch() {
            out.push((
                Check::SwitchInfo(g),
                req::dr_get(attr::SWITCH_INFO, 0, path),
            ));
        }
        let first = u8::from(!n.is_switch());
        for p in first..=n.info.num_ports {
            out.push((
                Check::Port(g, p),
                req::dr_get(attr::PORT_INFO, u32::from(p), path),
            ));
        }
        for port in n.ports.values() {
            let Some(peer) = port.peer else { continue };
            let up = port.info.as_ref().is_some_and(link_up);
            if !up || !may_traverse(d, n, port.num) || path.len() >= MAX_HOPS {
                continue;
            }
            let mut through = path.to_vec();
            through.push(port.num);
            // The peer's own check covers a link its route ends with; a
            // link either end may cross is checked from the lesser end.
            if by_route.get(through.as_slice()) == Some(&peer.0) {
                continue;
            }
            let other_crosses = d
                .nodes
                .get(&peer.0)
                .is_some_and(|o| may_traverse(d, o, peer.1));
            if other_crosses && peer < (g, port.num) {
                continue;
            }
            let r = req::dr_get(attr::NODE_INFO, 0, &through);
            out.push((Check::Peer(g, port.num, peer), r));
        }
    }
    out
}

/// The port of `n` its route arrives through: our own port for the local
/// node, else the port linked to the last hop of the node before it.
fn arrival(d: &Discovered, by_route: &HashMap<&[u8], Guid>, n: &DNode) -> Option<u8> {
    let Some((&last, before)) = n.path.split_last() else {
        return Some(d.local_port_num);
    };
    let parent = *by_route.get(before)?;
    n.ports
        .values()
        .find(|p| p.peer == Some((parent, last)))
        .map(|p| p.num)
}

/// What a check's answers say: the first sign of change, and the patches
/// of what moved without changing the topology.
#[derive(Debug, Default)]
pub struct Outcome {
    pub trigger: Option<Trigger>,
    /// SMPs sent (each check's, once; retries aside).
    pub sent: u64,
}

/// Checks the nodes of `slice` against `d`, patching into it what changed
/// without changing the topology; the first sign of change, if any.
pub fn check(t: &mut Transport, d: &mut Discovered, slice: Slice) -> Outcome {
    let reqs = plan(d, slice);
    let sent = reqs.len() as u64;
    let mut answers: Vec<(Check, Option<Vec<u8>>)> = Vec::with_capacity(reqs.len());
    t.pipeline(reqs, |c, r| {
        answers.push((c, r.ok().map(|mad| req::smp_data(&mad).to_vec())));
        Vec::new()
    });
    answers.sort_by_key(|(c, _)| *c);
    let mut trigger = None;
    for (c, data) in answers {
        let t = match data {
            None => Some(unanswered(c)),
            Some(data) => apply(d, c, &data),
        };
        if trigger.is_none() {
            trigger = t;
        }
    }
    Outcome { trigger, sent }
}

fn unanswered(c: Check) -> Trigger {
    match c {
        Check::Port(g, p) | Check::Peer(g, p, _) => Trigger::Unanswered(g, p),
        Check::Node(g, _) | Check::Description(g) | Check::SwitchInfo(g) => {
            Trigger::Unanswered(g, 0)
        }
    }
}

/// One answer against the kept topology: a change of topology is a trigger;
/// anything else is patched in. An answer that does not decode counts as
/// unanswered (the discovery it starts says what is wrong).
fn apply(d: &mut Discovered, c: Check, data: &[u8]) -> Option<Trigger> {
    let changed = |g: Guid| Some(Trigger::Checked(g));
    let garbled = Some(unanswered(c));
    match c {
        Check::Node(g, port) => {
            let Ok(ni) = NodeInfo::decode(data) else {
                return garbled;
            };
            let n = d.nodes.get_mut(&g)?;
            let moved = ni.node_guid != g
                || port.is_some_and(|p| p != ni.local_port_num)
                || ni.num_ports != n.info.num_ports
                || ni.node_type != n.info.node_type;
            if moved {
                return changed(g);
            }
            n.info = ni;
            None
        }
        Check::Description(g) => {
            let Ok(nd) = NodeDescription::decode(data) else {
                return garbled;
            };
            let n = d.nodes.get_mut(&g)?;
            n.description = nd.node_string.trim_end_matches('\0').to_string();
            None
        }
        Check::SwitchInfo(g) => {
            let Ok(si) = SwitchInfo::decode(data) else {
                return garbled;
            };
            let n = d.nodes.get_mut(&g)?;
            // Another forwarding table size: the tables are read again
            // through a discovery.
            let top = n.switch_info.as_ref().map(|s| s.linear_fdb_top);
            if top != Some(si.linear_fdb_top) {
                return changed(g);
            }
            n.switch_info = Some(si);
            None
        }
        Check::Port(g, p) => {
            let Ok(pi) = PortInfo::decode(data) else {
                return garbled;
            };
            let ours = g == d.local && p == d.local_port_num;
            let slot = d.nodes.get_mut(&g)?.ports.get_mut(&p);
            let Some(slot) = slot else {
                // A port the discovery did not record: the topology moved.
                return Some(Trigger::PortState(g, p));
            };
            let same = slot.info.as_ref().is_some_and(|last| {
                (last.lid, last.port_state, last.port_physical_state)
                    == (pi.lid, pi.port_state, pi.port_physical_state)
                    && (!ours || last.master_sm_lid == pi.master_sm_lid)
            });
            if !same {
                return Some(Trigger::PortState(g, p));
            }
            slot.info = Some(pi);
            None
        }
        Check::Peer(g, _, (pg, pp)) => {
            let Ok(ni) = NodeInfo::decode(data) else {
                return garbled;
            };
            (ni.node_guid != pg || ni.local_port_num != pp).then_some(Trigger::Checked(g))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::umad::discover::DPort;
    use std::collections::{BTreeMap, HashSet};

    fn pi(state: u8) -> PortInfo {
        PortInfo {
            port_state: state,
            port_physical_state: if state >= 2 { 5 } else { 2 },
            ..PortInfo::default()
        }
    }

    fn node(guid: u64, switch: bool, ports: u8, path: &[u8]) -> DNode {
        DNode {
            info: NodeInfo {
                node_guid: Guid(guid),
                node_type: if switch { 2 } else { 1 },
                num_ports: ports,
                ..NodeInfo::default()
            },
            description: String::new(),
            switch_info: None,
            path: path.to_vec(),
            ports: BTreeMap::new(),
            lft: Vec::new(),
        }
    }

    fn link(d: &mut Discovered, a: (u64, u8), b: (u64, u8)) {
        for (x, y) in [(a, b), (b, a)] {
            let n = d.nodes.get_mut(&Guid(x.0)).unwrap();
            n.ports.insert(
                x.1,
                DPort {
                    num: x.1,
                    info: Some(pi(4)),
                    peer: Some((Guid(y.0), y.1)),
                    ..DPort::default()
                },
            );
        }
    }

    /// Our CA (1) on switch A (10) port 1; switches A and B (11) linked
    /// twice (A2-B1 on the route, A3-B2 beside it); CA 2 on B port 3; B
    /// port 4 down.
    fn fabric() -> Discovered {
        let mut d = Discovered {
            local: Guid(1),
            local_port_num: 1,
            ..Discovered::default()
        };
        for n in [
            node(1, false, 1, &[]),
            node(10, true, 4, &[1]),
            node(11, true, 4, &[1, 2]),
            node(2, false, 1, &[1, 2, 3]),
        ] {
            d.nodes.insert(n.info.node_guid, n);
        }
        link(&mut d, (1, 1), (10, 1));
        link(&mut d, (10, 2), (11, 1));
        link(&mut d, (10, 3), (11, 2));
        link(&mut d, (11, 3), (2, 1));
        let b = d.nodes.get_mut(&Guid(11)).unwrap();
        b.ports.insert(
            4,
            DPort {
                num: 4,
                info: Some(pi(1)),
                ..DPort::default()
            },
        );
        d
    }

    #[test]
    fn a_period_of_slices_checks_every_node_port_and_link_once() {
        let d = fabric();
        let every = 7;
        let mut checks = Vec::new();
        for s in 0..every {
            checks.extend(
                plan(&d, Slice::new(s, every as u32))
                    .into_iter()
                    .map(|c| c.0),
            );
        }
        let nodes: Vec<_> = checks
            .iter()
            .filter_map(|c| match c {
                Check::Node(g, port) => Some((*g, *port)),
                _ => None,
            })
            .collect();
        let mut sorted = nodes.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            vec![
                (Guid(1), Some(1)),
                (Guid(2), Some(1)),
                (Guid(10), Some(1)),
                (Guid(11), Some(1))
            ]
        );
        // Every port once: the CAs' ports, switch ports 0..=4.
        let ports: HashSet<_> = checks
            .iter()
            .filter(|c| matches!(c, Check::Port(..)))
            .collect();
        let n_ports = checks
            .iter()
            .filter(|c| matches!(c, Check::Port(..)))
            .count();
        assert_eq!(ports.len(), n_ports);
        assert_eq!(n_ports, 1 + 1 + 5 + 5);
        // The one link no route covers (A3-B2), from the lesser end, once.
        let peers: Vec<_> = checks
            .iter()
            .filter(|c| matches!(c, Check::Peer(..)))
            .collect();
        assert_eq!(peers, vec![&Check::Peer(Guid(10), 3, (Guid(11), 2))]);
        assert_eq!(
            checks
                .iter()
                .filter(|c| matches!(c, Check::SwitchInfo(_)))
                .count(),
            2
        );
    }

    #[test]
    fn changes_of_topology_trigger_and_the_rest_is_patched() {
        let mut d = fabric();
        let mut data = [0u8; 64];
        // PortInfo with another MTU only: patched in.
        let mut p = pi(4);
        p.neighbor_mtu = 5;
        p.encode(&mut data).unwrap();
        assert_eq!(apply(&mut d, Check::Port(Guid(10), 2), &data), None);
        assert_eq!(
            d.nodes[&Guid(10)].ports[&2]
                .info
                .as_ref()
                .unwrap()
                .neighbor_mtu,
            5
        );
        // The port went down: a trigger, nothing patched.
        pi(1).encode(&mut data).unwrap();
        assert_eq!(
            apply(&mut d, Check::Port(Guid(10), 2), &data),
            Some(Trigger::PortState(Guid(10), 2))
        );
        assert_eq!(
            d.nodes[&Guid(10)].ports[&2]
                .info
                .as_ref()
                .unwrap()
                .port_state,
            4
        );
        // Another node at the far end of a link.
        let other = NodeInfo {
            node_guid: Guid(12),
            local_port_num: 2,
            ..NodeInfo::default()
        };
        other.encode(&mut data).unwrap();
        let c = Check::Peer(Guid(10), 3, (Guid(11), 2));
        assert_eq!(apply(&mut d, c, &data), Some(Trigger::Checked(Guid(10))));
        // A garbled answer counts as none; an unanswered check names its port.
        assert_eq!(
            apply(&mut d, Check::Port(Guid(10), 2), &data[..3]),
            Some(Trigger::Unanswered(Guid(10), 2))
        );
        assert_eq!(
            unanswered(Check::Port(Guid(2), 1)),
            Trigger::Unanswered(Guid(2), 1)
        );
    }
}
