//! Against a real ibsim: our topology files load there, and ibnetdiscover over
//! ibsim sees the graph we built.

mod support;

use ib::topology::{fat_tree, parse_str, write_ibnetdiscover, Topology, WriteHeader};
use std::collections::BTreeSet;

type Graph = BTreeSet<(String, u8, String, u8)>;

fn graph(t: &Topology) -> Graph {
    t.links()
        .filter_map(|(a, ap, z, zp)| {
            let a = t.nodes.get(a)?.description().to_string();
            let z = t.nodes.get(z)?.description().to_string();
            Some(if (a.as_str(), ap) <= (z.as_str(), zp) {
                (a, ap.0, z, zp.0)
            } else {
                (z, zp.0, a, ap.0)
            })
        })
        .collect()
}

/// ibnetdiscover's view of the fabric ibsim loaded.
fn discovered(sim: &support::IbSim) -> Topology {
    let out = sim.run("ibnetdiscover", &[]);
    assert!(
        out.status.success(),
        "ibnetdiscover failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_str(
        &String::from_utf8_lossy(&out.stdout),
        "ibnetdiscover output",
    )
    .unwrap()
}

fn check_fat_tree(hosts: usize, radix: u8, levels: u8) {
    if !support::available() {
        eprintln!("ibsim/infiniband-diags not installed; skipping");
        return;
    }
    let t = fat_tree(hosts, radix, levels).unwrap();
    let text = write_ibnetdiscover(&t, &WriteHeader::default());
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("fat-tree.net");
    std::fs::write(&net, &text).unwrap();
    let sim = support::IbSim::start(&net, &[]).unwrap();
    let log = sim.log();
    assert!(log.contains("parsed"), "{log}");
    let seen = discovered(&sim);
    assert_eq!(seen.nodes.len(), t.nodes.len());
    assert_eq!(graph(&seen), graph(&t));
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
/// topology file, describe the same graph (node descriptions, port numbers).
fn same_graph_as_ibnetdiscover(net: &std::path::Path) {
    use ib::model::dump_ibnetdiscover;
    use ib::source::sim::{SimConfig, SimSource};
    use ib::source::Source;
    if !support::available() {
        eprintln!("ibsim/infiniband-diags not installed; skipping");
        return;
    }
    let mut sim = SimSource::from_file(net, SimConfig::default()).unwrap();
    let ours = parse_str(&dump_ibnetdiscover(&sim.sweep().unwrap()), "our dump").unwrap();
    let ibsim = support::IbSim::start(net, &[]).unwrap();
    let theirs = discovered(&ibsim);
    assert_eq!(ours.nodes.len(), theirs.nodes.len());
    assert_eq!(graph(&ours), graph(&theirs));
    // ibsim gives the same GUIDs for the same file.
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
    same_graph_as_ibnetdiscover(&net);
}

#[test]
fn sim_dump_matches_ibnetdiscover_on_fat_tree() {
    let t = fat_tree(96, 16, 2).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("ft.net");
    std::fs::write(&net, write_ibnetdiscover(&t, &WriteHeader::default())).unwrap();
    same_graph_as_ibnetdiscover(&net);
}

#[test]
fn sim_dump_matches_ibnetdiscover_on_builtin_default() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("default.net");
    std::fs::write(&net, ib::source::sim::DEFAULT_TOPOLOGY).unwrap();
    same_graph_as_ibnetdiscover(&net);
}
