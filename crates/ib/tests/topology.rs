//! Topology files: parsing both forms, errors, the writer, the fat-tree generator.

use ib::topology::{
    fat_tree, fat_tree_shape, parse_file, parse_str, write_ibnetdiscover, TopologyError,
    WriteHeader,
};
use ib::types::{Guid, Lid, LinkSpeed, LinkWidth, NodeType, PortNum};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn short_form_example() {
    let t = parse_file(data("net.2sw2path4hca")).unwrap();
    assert_eq!(t.nodes.len(), 6);
    let s1 = t.node("Switch1").unwrap();
    assert_eq!(s1.node_type, NodeType::Switch);
    assert_eq!(s1.num_ports, 8);
    assert_eq!(s1.node_guid, Guid(0x200000));
    assert_eq!(s1.ports.len(), 4);
    let h4 = t.node("Hca4").unwrap();
    assert_eq!(h4.node_type, NodeType::Ca);
    // ibsim: CAs from 0x100000, each reserving 1 + NumPorts GUIDs.
    assert_eq!(h4.node_guid, Guid(0x100009));
    assert_eq!(h4.port_guid(PortNum(1)), Guid(0x10000a));
    assert_eq!(t.links().count(), 6);
}

#[test]
fn every_ibsim_example_parses() {
    let dir = PathBuf::from("/usr/share/doc/ibsim-utils/net-examples");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: install ibsim-utils (apt-get install ibsim-utils)",
            dir.display()
        )
    });
    let mut n = 0;
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("net") {
            continue;
        }
        let t = parse_file(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!t.nodes.is_empty(), "{name}");
        n += 1;
    }
    assert!(n >= 4);
}

#[test]
fn full_ibnetdiscover_output() {
    let t = parse_file(data("ibnetdiscover-2sw4hca.txt")).unwrap();
    assert_eq!(t.nodes.len(), 6);
    let s2 = t.node("S-0000000000200001").unwrap();
    assert_eq!(s2.description(), "Switch2");
    assert_eq!(s2.node_guid, Guid(0x200001));
    assert_eq!(s2.port0_guid, Guid(0x200001));
    assert_eq!(s2.enhanced_port0, Some(false));
    assert_eq!(s2.lid, Some(Lid(3)));
    assert_eq!(s2.lmc, Some(0));
    let p1 = s2.port(PortNum(1)).unwrap();
    assert_eq!(p1.remote, "H-0000000000100003");
    assert_eq!(p1.width, Some(LinkWidth::X4));
    assert_eq!(p1.speed, Some(LinkSpeed::Sdr));
    let h4 = t.node("H-0000000000100009").unwrap();
    assert_eq!(h4.description(), "Hca4");
    assert_eq!(h4.node_guid, Guid(0x100009));
    let hp = h4.port(PortNum(1)).unwrap();
    assert_eq!(hp.guid, Guid(0x10000a));
    assert_eq!(hp.lid, Some(Lid(6)));
    assert_eq!(hp.lmc, Some(0));
    // Same graph as the short form it was discovered from.
    let short = parse_file(data("net.2sw2path4hca")).unwrap();
    assert_eq!(t.link_set(), short.link_set());
}

#[test]
fn writer_round_trip_is_exact() {
    let t = parse_file(data("ibnetdiscover-2sw4hca.txt")).unwrap();
    let text = write_ibnetdiscover(&t, &WriteHeader::default());
    let back = parse_str(&text, "written").unwrap();
    assert_eq!(back.link_set(), t.link_set());
    for n in &t.nodes {
        let b = back.node(&n.name).unwrap();
        assert_eq!(b.node_guid, n.node_guid);
        assert_eq!(b.description, n.description);
        assert_eq!(b.lid, n.lid);
        for p in &n.ports {
            let q = b.port(p.port).unwrap();
            assert_eq!(
                (q.guid, q.lid, q.width, q.speed),
                (p.guid, p.lid, p.width, p.speed)
            );
        }
    }
    // Writing the parse of the writer's text gives the same text.
    assert_eq!(
        write_ibnetdiscover(&back, &WriteHeader::default())
            .lines()
            .skip(2)
            .collect::<Vec<_>>(),
        text.lines().skip(2).collect::<Vec<_>>()
    );
}

#[test]
fn writer_matches_ibnetdiscover_lines() {
    // Node blocks (not their order) must be byte-identical to ibnetdiscover's.
    let orig = std::fs::read_to_string(data("ibnetdiscover-2sw4hca.txt")).unwrap();
    let t = parse_str(&orig, "ibnd").unwrap();
    let ours = write_ibnetdiscover(&t, &WriteHeader::default());
    let body = |s: &str| -> BTreeSet<String> {
        s.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(body(&ours), body(&orig));
}

#[test]
fn gzip_input() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("net.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&p).unwrap(),
        flate2::Compression::default(),
    );
    enc.write_all(&std::fs::read(data("net.2sw2path4hca")).unwrap())
        .unwrap();
    enc.finish().unwrap();
    assert_eq!(parse_file(&p).unwrap().nodes.len(), 6);
}

#[test]
fn include_and_options() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sw.net"),
        "Switch 4 \"sw\"\n[1] \"h1\"[1] w=8 s=4\n[2] \"h2\"[1]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("top.net"),
        "include \"sw.net\"\n\nHca 1 \"h1\"\n[1] \"sw\"[1]\n\nHca 1 \"h2\"\n[1] \"sw\"[2]\n",
    )
    .unwrap();
    let t = parse_file(dir.path().join("top.net")).unwrap();
    let p = t.node("sw").unwrap().port(PortNum(1)).unwrap();
    assert_eq!((p.width_enabled, p.speed_enabled), (Some(8), Some(4)));
}

#[test]
fn one_sided_links_are_completed() {
    let t = parse_str("Switch 4 \"sw\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n", "x").unwrap();
    assert_eq!(t.node("h").unwrap().port(PortNum(1)).unwrap().remote, "sw");
}

fn err_of(text: &str) -> String {
    match parse_str(text, "bad.net") {
        Err(e @ TopologyError::Syntax { .. }) => e.to_string(),
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn errors_name_file_line_and_expectation() {
    let e = err_of("Switch 8 \"a\"\n[1] \"b\"[1]\n\nFoo bar\n");
    assert!(e.starts_with("bad.net:4: expected a node header"), "{e}");
    let e = err_of("Switch x \"a\"\n");
    assert!(
        e.starts_with("bad.net:1: expected the number of ports"),
        "{e}"
    );
    let e = err_of("Switch 8 a\n");
    assert!(e.contains("bad.net:1: expected the quoted node id"), "{e}");
    let e = err_of("Switch 8 \"a\"\n[9] \"b\"[1]\n");
    assert!(e.contains("bad.net:2: port 9 out of range"), "{e}");
    let e = err_of("Switch 8 \"a\"\n[1] \"b\"[1]\n");
    assert!(e.contains("bad.net:2: remote node \"b\""), "{e}");
    let e = err_of("[1] \"b\"[1]\n");
    assert!(
        e.contains("bad.net:1: port line outside a node record"),
        "{e}"
    );
    let e = err_of("Switch 8 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[2]\n");
    assert!(e.contains("says it is connected to"), "{e}");
    let e = err_of("Switch 8 \"a\"\n\nSwitch 8 \"a\"\n");
    assert!(
        e.contains("bad.net:3: duplicate node id \"a\" (first defined at line 1)"),
        "{e}"
    );
    let e = err_of("Switch 8 \"a\"\n[1] \"b\"[1] q=3\n");
    assert!(e.contains("expected options w=N, s=N"), "{e}");
    let e = err_of("Hca 1 \"b\"\n[1] \"a\"[1] # lid 70000\n\nSwitch 2 \"a\"\n[1] \"b\"[1]\n");
    assert!(e.contains("bad.net:2: lid 70000"), "{e}");
    let e = err_of("Switch 300 \"a\"\n");
    assert!(e.contains("1-254"), "{e}");
    let missing = parse_file("/nonexistent/net").unwrap_err().to_string();
    assert!(missing.starts_with("/nonexistent/net: "), "{missing}");
}

#[test]
fn fat_tree_two_levels() {
    let t = fat_tree(100, 16, 2).unwrap();
    let hosts = t
        .nodes
        .iter()
        .filter(|n| n.node_type == NodeType::Ca)
        .count();
    assert_eq!(hosts, 100);
    let s = fat_tree_shape(100, 16, 2).unwrap();
    assert_eq!(s.leaves, 13);
    assert_eq!(s.top, 7);
    assert_eq!(t.nodes.len(), 100 + 13 + 7);
    // Every leaf reaches every spine; no port used twice; ports within radix.
    for n in &t.nodes {
        let ports: BTreeSet<u8> = n.ports.iter().map(|p| p.port.0).collect();
        assert_eq!(ports.len(), n.ports.len());
        assert!(n
            .ports
            .iter()
            .all(|p| p.port.0 >= 1 && p.port.0 <= n.num_ports));
    }
    let leaf = t.node("leaf0001").unwrap();
    let spines: BTreeSet<&str> = leaf
        .ports
        .iter()
        .filter(|p| p.remote.starts_with("spine"))
        .map(|p| p.remote.as_str())
        .collect();
    assert_eq!(spines.len(), 7);
    // What the writer prints parses back to the same graph.
    let back = parse_str(&write_ibnetdiscover(&t, &WriteHeader::default()), "ft").unwrap();
    assert_eq!(back.link_set(), t.link_set());
}

#[test]
fn fat_tree_three_levels_and_limits() {
    let t = fat_tree(1000, 16, 3).unwrap();
    let s = fat_tree_shape(1000, 16, 3).unwrap();
    assert_eq!(s.leaves, 125);
    assert_eq!(s.aggregation, 125);
    assert_eq!(s.top, 63);
    assert_eq!(t.nodes.len(), 1000 + s.switches());
    for n in t.nodes.iter().filter(|n| n.node_type == NodeType::Switch) {
        assert!(n.ports.len() <= 16, "{} has {}", n.name, n.ports.len());
    }
    // The 48,000-host benchmark fabric fits the unicast LID space.
    let big = fat_tree_shape(48_000, 240, 3).unwrap();
    assert_eq!(big.lids(), 49_000);
    assert!(fat_tree_shape(48_000, 64, 3).is_err());
    assert!(fat_tree_shape(10, 7, 2).is_err());
    assert!(fat_tree_shape(10, 8, 4).is_err());
    assert!(fat_tree_shape(33, 8, 2).is_err());
    assert!(fat_tree_shape(0, 8, 2).is_err());
}
