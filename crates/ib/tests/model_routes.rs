//! Routing truth over sim snapshots (`ib::model::routes`): a fabric as the
//! sim routes it is clean, and each fault a table can hold is found where
//! it is: no route (255), a black hole (a port that is down), a loop, a
//! leaf whose uplinks share the destinations unevenly. The same answers as
//! `ib::model::route::trace`, pair by pair.

use std::sync::Arc;

use ib::model::route::trace;
use ib::model::routes::{check, Break};
use ib::model::{NodeIdx, PortIdx, Snapshot};
use ib::source::sim::{SimConfig, SimSource};
use ib::source::Source;
use ib::types::{Lid, NodeType, PortNum, PortState};

fn sim() -> Snapshot {
    let mut sim = SimSource::default_fabric(SimConfig::default()).unwrap();
    sim.sweep().unwrap()
}

fn switches(s: &Snapshot) -> Vec<NodeIdx> {
    (0..s.nodes.len() as NodeIdx)
        .filter(|&n| s.node(n).unwrap().info.node_type == NodeType::Switch as u8)
        .collect()
}

/// A leaf: a switch with a CA on it.
fn a_leaf(s: &Snapshot) -> NodeIdx {
    *switches(s)
        .iter()
        .find(|&&n| {
            s.node_ports(n).iter().any(|p| {
                p.remote.and_then(|r| s.port(r)).is_some_and(|r| {
                    s.node(r.node).unwrap().info.node_type != NodeType::Switch as u8
                })
            })
        })
        .unwrap()
}

/// A CA port's LID that `sw` does not have on itself.
fn remote_ca_lid(s: &Snapshot, sw: NodeIdx) -> Lid {
    s.ports
        .iter()
        .find(|p| {
            p.num.0 != 0
                && p.info.lid.0 != 0
                && s.node(p.node).unwrap().info.node_type != NodeType::Switch as u8
                && p.remote
                    .and_then(|r| s.port(r))
                    .is_some_and(|r| r.node != sw)
        })
        .unwrap()
        .info
        .lid
}

fn set_lft(s: &mut Snapshot, sw: NodeIdx, lid: Lid, port: u8) {
    let data = s.nodes[sw as usize].switch.as_mut().unwrap();
    let mut lft = data.lft.to_vec();
    lft[usize::from(lid.0)] = port;
    data.lft = Arc::from(lft);
}

fn lft(s: &Snapshot, sw: NodeIdx, lid: Lid) -> u8 {
    s.node(sw).unwrap().switch.as_ref().unwrap().lft[usize::from(lid.0)]
}

#[test]
fn the_sims_routes_are_all_good_and_agree_with_trace() {
    let s = sim();
    let c = check(&s, 10.0);
    assert!(c.destinations > 0 && c.switches > 0, "{c:?}");
    assert_eq!(c.routes, (c.switches * c.destinations) as u64);
    assert_eq!(c.good, c.routes, "{:?}", c.broken);
    assert!(c.unreachable.is_empty() && c.broken.is_empty());
    // Every switch reaches every end port, as trace follows it from the
    // switch's port 0.
    for sw in switches(&s) {
        let p0 = s.node_port(sw, PortNum(0)).unwrap();
        for p in s.ports.iter().filter(|p| p.info.lid.0 != 0) {
            assert!(trace(&s, p0, p.info.lid).is_ok());
        }
    }
    assert!(!c.balance.is_empty(), "leaves have uplinks");
}

#[test]
fn no_route_black_hole_and_loop_are_found_where_they_are() {
    let clean = sim();
    let leaf = a_leaf(&clean);
    let dlid = remote_ca_lid(&clean, leaf);

    // No entry (255) at the leaf.
    let mut s = clean.clone();
    set_lft(&mut s, leaf, dlid, 0xFF);
    let c = check(&s, 10.0);
    assert_eq!(c.broken.len(), 1, "{:?}", c.broken);
    assert_eq!(c.broken[0].at, Break::NoRoute { switch: leaf });
    assert_eq!(c.broken[0].destinations, 1);
    let u = c.unreachable.iter().find(|u| u.switch == leaf).unwrap();
    assert_eq!(u.lids, vec![dlid.0]);
    assert_eq!(c.unreachable_pairs, u.hosts as u64);
    let p0 = s.node_port(leaf, PortNum(0)).unwrap();
    assert!(trace(&s, p0, dlid).is_err(), "trace agrees");

    // A black hole: the uplink the leaf uses goes down.
    let mut s = clean.clone();
    let up = lft(&s, leaf, dlid);
    let pi: PortIdx = s.node_port(leaf, PortNum(up)).unwrap();
    s.ports[pi as usize].info.port_state = PortState::Down as u8;
    let c = check(&s, 10.0);
    let hole = c
        .broken
        .iter()
        .find(|b| {
            b.at == Break::BlackHole {
                switch: leaf,
                port: up,
            }
        })
        .unwrap_or_else(|| panic!("{:?}", c.broken));
    assert!(hole.destinations >= 1);
    assert!(c.unreachable_pairs > 0);

    // A loop: the spine the leaf goes to sends the LID back to the leaf.
    let mut s = clean.clone();
    let spine_port = s.node_port(leaf, PortNum(up)).unwrap();
    let far = s
        .port(s.port(spine_port).unwrap().remote.unwrap())
        .unwrap()
        .clone();
    set_lft(&mut s, far.node, dlid, far.num.0);
    let c = check(&s, 10.0);
    let lp = c
        .broken
        .iter()
        .find(|b| matches!(b.at, Break::Loop { .. }))
        .unwrap_or_else(|| panic!("{:?}", c.broken));
    assert_eq!(
        lp.at,
        Break::Loop {
            switch: leaf.min(far.node)
        }
    );
    assert_eq!(lp.destinations, 1);
}

#[test]
fn a_leaf_routing_everything_up_one_uplink_is_unbalanced() {
    let mut s = sim();
    let leaf = a_leaf(&s);
    let c = check(&s, 10.0);
    let b = c.balance.iter().find(|b| b.switch == leaf).unwrap();
    assert!(b.uplinks.len() > 1, "{b:?}");
    let one = b.uplinks[0].0;
    let lids: Vec<Lid> = s
        .ports
        .iter()
        // Hosts' LIDs: a spine's own LID sent up another spine would loop.
        .filter(|p| p.info.lid.0 != 0 && p.num.0 != 0)
        .map(|p| p.info.lid)
        .collect();
    for lid in lids {
        let current = lft(&s, leaf, lid);
        if b.uplinks.iter().any(|(p, _)| *p == current) {
            set_lft(&mut s, leaf, lid, one);
        }
    }
    let c = check(&s, 0.5);
    assert!(c.broken.is_empty(), "still all routed: {:?}", c.broken);
    let u = c.unbalanced.iter().find(|u| u.switch == leaf).unwrap();
    assert!(u.spread > 0.5, "{u:?}");
}
