//! Discovery by directed-route SMPs equals ibnetdiscover's view of the same fabric.
mod umad_util;

use ib::source::umad::discover::{discover, DiscoverOptions};
use ib::source::umad::ffi;
use ib::source::umad::transport::{Transport, TransportConfig};
use umad_util::*;

fn our_view() -> IbnetView {
    let lib = ffi::library().unwrap();
    let p = lib.resolve(None, None).unwrap();
    let mut t = Transport::open(
        &p.ca,
        p.port,
        TransportConfig {
            window: 64,
            ..Default::default()
        },
    )
    .unwrap();
    let d = discover(&mut t, DiscoverOptions::default());
    assert_eq!(d.failures, 0, "{:?}", d.errors);
    let mut v = IbnetView::default();
    for (g, n) in &d.nodes {
        if n.is_switch() {
            v.switch_lids.insert(g.0, n.lid());
            v.switch_ports.insert(g.0, n.info.num_ports);
        }
        for (pn, p) in &n.ports {
            if let Some((pg, pp)) = p.peer {
                v.links.insert(((g.0, *pn), (pg.0, pp)));
                if !n.is_switch() {
                    v.ca_port_lids
                        .insert((g.0, *pn), p.info.as_ref().unwrap().lid.0);
                    v.ca_port_guids.insert((g.0, *pn), p.guid.0);
                }
            }
        }
    }
    v
}

/// Our discovery equals ibnetdiscover's on the running fabric, which has
/// at least `links` links.
fn equals_ibnetdiscover(links: usize) -> usize {
    let ours = our_view();
    let out = std::process::Command::new("ibnetdiscover")
        .output()
        .unwrap();
    assert!(out.status.success());
    let theirs = parse_ibnetdiscover(&String::from_utf8_lossy(&out.stdout));
    assert!(theirs.links.len() >= links, "{}", theirs.links.len());
    assert_eq!(ours, theirs);
    theirs.links.len()
}

#[test]
fn discovery_equals_ibnetdiscover() {
    if !in_child() {
        return run_on_small_net("discovery_equals_ibnetdiscover");
    }
    let links = equals_ibnetdiscover(1);
    println!("links {links}");
}

/// A three-level fat tree (parallel paths, 4 hops deep) written by the topology module.
#[test]
fn fat_tree_discovery_equals_ibnetdiscover() {
    if !in_child() {
        return run_on_fat_tree(128, "fat_tree_discovery_equals_ibnetdiscover");
    }
    equals_ibnetdiscover(501);
}
