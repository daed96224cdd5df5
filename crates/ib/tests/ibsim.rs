//! Against a real ibsim: our generated fat trees load and ibnetdiscover sees
//! them as written; our sim's dump and ibnetdiscover over ibsim describe the
//! same fabric for the same topology file. No SM is needed: ibnetdiscover
//! walks the fabric with directed-route SMPs.

use ib::topology::{fat_tree, parse_str, write_ibnetdiscover, Topology, WriteHeader};
use ib_testbed::{Testbed, TestbedConfig};
use std::collections::BTreeSet;

/// ibsim (no OpenSM) on `net`; fails the test, naming the missing package,
/// when the tools are not installed.
fn ibsim(net: &str) -> Testbed {
    Testbed::start(TestbedConfig::new(net).without_opensm())
        .unwrap_or_else(|e| panic!("cannot start the ibsim testbed: {e}"))
}

/// ibnetdiscover's view of the fabric ibsim loaded.
fn discovered(tb: &Testbed) -> Topology {
    let out = tb
        .run_diag("ibnetdiscover", &[])
        .expect("run ibnetdiscover");
    assert_eq!(out.code, Some(0), "ibnetdiscover failed: {}", out.stderr);
    parse_str(&out.stdout, "ibnetdiscover output").unwrap()
}

fn check_fat_tree(hosts: usize, radix: u8, levels: u8) {
    let t = fat_tree(hosts, radix, levels).unwrap();
    let tb = ibsim(&write_ibnetdiscover(&t, &WriteHeader::default()));
    let seen = discovered(&tb);
    assert_eq!(seen.nodes.len(), t.nodes.len());
    assert_eq!(seen.link_set(), t.link_set());
    // ibsim read the 4xHDR the writer put in the comments.
    let hdr = seen
        .nodes
        .iter()
        .flat_map(|n| n.ports.iter())
        .filter(|p| p.speed == Some(ib::types::LinkSpeed::Hdr))
        .count();
    assert!(hdr > 0, "no HDR links seen by ibnetdiscover");
}

#[test]
fn fat_tree_two_levels_loads_in_ibsim() {
    check_fat_tree(64, 16, 2);
}

#[test]
fn fat_tree_three_levels_loads_in_ibsim() {
    check_fat_tree(300, 12, 3);
}

/// Our sim's `dump_ibnetdiscover` and ibnetdiscover over ibsim, on the same
/// topology text, describe the same graph (node descriptions, port numbers)
/// and, since both derive GUIDs the same way, the same GUIDs.
fn same_graph_as_ibnetdiscover(net: &str) {
    use ib::model::dump_ibnetdiscover;
    use ib::source::sim::{SimConfig, SimSource};
    use ib::source::Source;
    let topo = parse_str(net, "net").unwrap();
    let mut sim = SimSource::new(&topo, SimConfig::default()).unwrap();
    let ours = parse_str(&dump_ibnetdiscover(&sim.sweep().unwrap()), "our dump").unwrap();
    let tb = ibsim(net);
    let theirs = discovered(&tb);
    assert_eq!(ours.nodes.len(), theirs.nodes.len());
    assert_eq!(ours.link_set(), theirs.link_set());
    let g = |t: &Topology| -> BTreeSet<(String, u64)> {
        t.nodes
            .iter()
            .map(|n| (n.description().to_string(), n.node_guid.0))
            .collect()
    };
    assert_eq!(g(&ours), g(&theirs));
}

#[test]
fn sim_dump_matches_ibnetdiscover_on_ibsim_example() {
    let net = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/net.2sw2path4hca");
    same_graph_as_ibnetdiscover(&std::fs::read_to_string(net).unwrap());
}

#[test]
fn sim_dump_matches_ibnetdiscover_on_fat_tree() {
    let t = fat_tree(96, 16, 2).unwrap();
    same_graph_as_ibnetdiscover(&write_ibnetdiscover(&t, &WriteHeader::default()));
}

#[test]
fn sim_dump_matches_ibnetdiscover_on_builtin_default() {
    same_graph_as_ibnetdiscover(ib::source::sim::DEFAULT_TOPOLOGY);
}
