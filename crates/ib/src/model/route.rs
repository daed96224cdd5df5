//! Routes through a snapshot, hop by hop from the switches' linear forwarding
//! tables, as `ibtracert` follows them with SMPs: what a trace request shows,
//! and what a path between two ports is made of (its MTU and rate are the
//! smallest along the way).
//!
//! OpenSM does not implement SA TraceRecord, so traces are computed here from
//! the forwarding tables the sweep read.

use super::snapshot::{NodeIdx, PortIdx, Snapshot};
use crate::types::{Lid, NodeType, PortNum};

/// The longest route followed (IBA's directed-route limit).
pub const MAX_HOPS: usize = 64;

/// One node a route passes: where it enters and where it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub node: NodeIdx,
    /// The port it enters by (None at the source).
    pub entry: Option<PortNum>,
    /// The port it leaves by (None at the destination).
    pub exit: Option<PortNum>,
}

/// Why a route could not be followed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("the source port is not in the snapshot")]
    NoSource,
    #[error("no end port answers LID {0}")]
    NoDestination(u16),
    #[error("switch {node} has no forwarding entry for LID {lid}")]
    NoEntry { node: NodeIdx, lid: u16 },
    #[error("port {port} of node {node} leads nowhere (no link)")]
    Dangling { node: NodeIdx, port: u8 },
    #[error("the route loops or exceeds {MAX_HOPS} hops")]
    TooLong,
}

fn is_switch(s: &Snapshot, n: NodeIdx) -> bool {
    s.node(n)
        .is_some_and(|n| n.info.node_type == NodeType::Switch as u8)
}

/// The nodes a packet from end port `from` to `dlid` passes, source and
/// destination included, following each switch's LFT.
///
/// A route arrives only at the destination *port*: from one port of a CA
/// to another port of the same CA it leaves by the source port and goes
/// through the fabric, as ibtracert follows it (a dual-rail HCA's two ports
/// are two end ports, not one).
pub fn trace(s: &Snapshot, from: PortIdx, dlid: Lid) -> Result<Vec<Hop>, RouteError> {
    let target = s
        .port_by_lid(dlid)
        .ok_or(RouteError::NoDestination(dlid.0))?;
    let src = s.port(from).ok_or(RouteError::NoSource)?;
    let mut hops = Vec::new();
    let mut node = src.node;
    let mut entry: Option<PortNum> = None;
    // A CA leaves through the port the route starts from; a switch (port 0)
    // through its forwarding table like any other switch.
    let mut exit = (!is_switch(s, node)).then_some(src.num);
    for _ in 0..MAX_HOPS {
        // Where the packet is now: the port it entered by (a CA), the
        // switch's port 0, or the source port before it leaves.
        let here = if is_switch(s, node) {
            s.node_port(node, PortNum(0))
        } else {
            entry.map_or(Some(from), |e| s.node_port(node, e))
        };
        if here == Some(target) {
            hops.push(Hop {
                node,
                entry,
                exit: None,
            });
            return Ok(hops);
        }
        let out = match exit {
            Some(p) => p,
            None => {
                let sw = s
                    .node(node)
                    .and_then(|n| n.switch.as_ref())
                    .ok_or(RouteError::NoEntry { node, lid: dlid.0 })?;
                match sw.lft.get(usize::from(dlid.0)).copied() {
                    Some(p) if p != 0xFF => PortNum(p),
                    _ => return Err(RouteError::NoEntry { node, lid: dlid.0 }),
                }
            }
        };
        if out.0 == 0 {
            // A switch forwarding to itself but not the destination.
            return Err(RouteError::NoEntry { node, lid: dlid.0 });
        }
        hops.push(Hop {
            node,
            entry,
            exit: Some(out),
        });
        let remote = s
            .node_port(node, out)
            .and_then(|p| s.port(p))
            .and_then(|p| p.remote)
            .and_then(|r| s.port(r))
            .ok_or(RouteError::Dangling { node, port: out.0 })?;
        node = remote.node;
        entry = Some(remote.num);
        exit = None;
    }
    Err(RouteError::TooLong)
}

/// The links a route crosses, as (port left, port entered) index pairs.
pub fn links(s: &Snapshot, hops: &[Hop]) -> Vec<(PortIdx, PortIdx)> {
    hops.windows(2)
        .filter_map(|w| {
            let [a, b] = w else { return None };
            let out = s.node_port(a.node, a.exit?)?;
            let inp = s.node_port(b.node, b.entry?)?;
            Some((out, inp))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::sim::{SimConfig, SimSource};
    use crate::source::Source;

    #[test]
    fn every_lid_is_reached_from_every_end_port_of_the_default_fabric() {
        let mut sim = SimSource::default_fabric(SimConfig::default()).unwrap();
        let s = sim.sweep().unwrap();
        let ends: Vec<PortIdx> = (0..s.ports.len() as PortIdx)
            .filter(|&p| {
                s.port(p)
                    .is_some_and(|x| s.is_end_port(x) && x.info.lid.0 != 0)
            })
            .collect();
        for &from in &ends {
            for &to in &ends {
                let lid = s.port(to).unwrap().info.lid;
                let hops = trace(&s, from, lid).unwrap();
                assert_eq!(hops.first().unwrap().node, s.port(from).unwrap().node);
                assert_eq!(hops.last().unwrap().node, s.port(to).unwrap().node);
                assert!(hops.len() <= 5, "leaf-spine-leaf at most: {hops:?}");
                // Every link crossed is a real link, entered where it ends.
                for (a, b) in links(&s, &hops) {
                    assert_eq!(s.port(a).unwrap().remote, Some(b));
                }
            }
        }
    }

    /// Two HCAs with one port on each of two leaf switches (dual rail), the
    /// leaves joined through a spine, and a single-rail HCA.
    const DUAL_RAIL: &str = include_str!("../../tests/data/net.dual-rail");

    #[test]
    fn the_two_ports_of_a_dual_rail_hca_are_joined_through_the_fabric() {
        let topo = crate::topology::parse_str(DUAL_RAIL, "dual rail").unwrap();
        let mut sim = SimSource::new(&topo, SimConfig::default()).unwrap();
        let s = sim.sweep().unwrap();
        let port = |name: &str, n: u8| {
            let node = s.nodes.iter().position(|x| x.description == name).unwrap();
            s.node_port(node as NodeIdx, PortNum(n)).unwrap()
        };
        let named = |hops: &[Hop]| -> Vec<(String, Option<u8>, Option<u8>)> {
            hops.iter()
                .map(|h| {
                    (
                        s.node(h.node).unwrap().description.clone(),
                        h.entry.map(|p| p.0),
                        h.exit.map(|p| p.0),
                    )
                })
                .collect()
        };
        let (p1, p2) = (port("hca-1", 1), port("hca-1", 2));
        let hops = trace(&s, p1, s.port(p2).unwrap().info.lid).unwrap();
        let h = |n: &str, e: Option<u8>, x: Option<u8>| (n.to_string(), e, x);
        assert_eq!(
            named(&hops),
            vec![
                h("hca-1", None, Some(1)),
                h("leaf-a", Some(1), Some(3)),
                h("spine", Some(1), Some(2)),
                h("leaf-b", Some(3), Some(1)),
                h("hca-1", Some(2), None),
            ]
        );
        // To itself: one row, the source.
        let hops = trace(&s, p1, s.port(p1).unwrap().info.lid).unwrap();
        assert_eq!(named(&hops), vec![h("hca-1", None, None)]);
        // Every CA port reaches every other, entering the destination CA by
        // the destination port.
        for from in 0..s.ports.len() as PortIdx {
            for to in 0..s.ports.len() as PortIdx {
                let (f, t) = (s.port(from).unwrap(), s.port(to).unwrap());
                let ca = |p: &crate::model::Port| !is_switch(&s, p.node) && p.info.lid.0 != 0;
                if !ca(f) || !ca(t) {
                    continue;
                }
                let hops = trace(&s, from, t.info.lid).unwrap();
                let last = hops.last().unwrap();
                assert_eq!(
                    s.node_port(last.node, last.entry.unwrap_or(f.num)),
                    Some(to)
                );
            }
        }
    }

    #[test]
    fn unknown_lids_are_errors() {
        let mut sim = SimSource::default_fabric(SimConfig::default()).unwrap();
        let s = sim.sweep().unwrap();
        assert_eq!(
            trace(&s, 0, Lid(0xBFFF)),
            Err(RouteError::NoDestination(0xBFFF))
        );
    }
}
