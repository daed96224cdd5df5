//! Routes traced through sim snapshots (`ib::model::route`).
mod umad_util;

use ib::model::route::*;
use ib::model::{NodeIdx, PortIdx};
use ib::source::sim::{SimConfig, SimSource};
use ib::source::Source;
use ib::types::{Lid, NodeType, PortNum};
use umad_util::named_hops;

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
const DUAL_RAIL: &str = include_str!("data/net.dual-rail");

#[test]
fn the_two_ports_of_a_dual_rail_hca_are_joined_through_the_fabric() {
    let topo = ib::topology::parse_str(DUAL_RAIL, "dual rail").unwrap();
    let mut sim = SimSource::new(&topo, SimConfig::default()).unwrap();
    let s = sim.sweep().unwrap();
    let port = |name: &str, n: u8| {
        let node = s.nodes.iter().position(|x| x.description == name).unwrap();
        s.node_port(node as NodeIdx, PortNum(n)).unwrap()
    };
    let named = |hops: &[Hop]| named_hops(&s, hops);
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
            let ca = |p: &ib::model::Port| {
                s.node(p.node)
                    .is_some_and(|n| n.info.node_type != NodeType::Switch as u8)
                    && p.info.lid.0 != 0
            };
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
