//! Routing faults held in fabric files (`lft` override lines, the sim
//! applies them after routing): the routes walk names exactly the black
//! hole, the loop and the unbalanced leaf of tests/data/routes-faults.net;
//! bad override lines are refused naming the line; and credit loops: a
//! ring's shortest-path routes make one, a fat tree's make none.

use std::path::PathBuf;

use ib::model::routes::{check, Break, Link};
use ib::model::{NodeIdx, Snapshot};
use ib::source::sim::{SimConfig, SimSource};
use ib::source::Source;
use ib::topology::{fat_tree, parse_str};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn sweep_file(name: &str) -> Snapshot {
    let mut sim = SimSource::from_file(data(name), SimConfig::default()).unwrap();
    sim.sweep().unwrap()
}

fn sweep_text(text: &str) -> Result<Snapshot, String> {
    let topo = parse_str(text, "test.net").map_err(|e| e.to_string())?;
    let mut sim = SimSource::new(&topo, SimConfig::default()).map_err(|e| e.to_string())?;
    sim.sweep().map_err(|e| e.to_string())
}

fn node(s: &Snapshot, name: &str) -> NodeIdx {
    (0..s.nodes.len() as NodeIdx)
        .find(|&n| s.node(n).unwrap().description == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

#[test]
fn the_fault_files_black_hole_loop_and_uneven_leaf_are_named_exactly() {
    let s = sweep_file("routes-faults.net");
    let (leaf01, leaf02) = (node(&s, "leaf01"), node(&s, "leaf02"));
    let (spine01, spine02) = (node(&s, "spine01"), node(&s, "spine02"));
    let c = check(&s, 0.5);
    let broken: Vec<(Break, usize, u64)> = c
        .broken
        .iter()
        .map(|b| (b.at, b.destinations, b.routes))
        .collect();
    let mut want = vec![
        // LID 15 from spine01 and from leaf01 (through spine01).
        (
            Break::BlackHole {
                switch: spine01,
                port: 5,
            },
            1,
            2,
        ),
        // LID 16 from leaf01 and from spine02, the two of the loop.
        (
            Break::Loop {
                switch: leaf01.min(spine02),
            },
            1,
            2,
        ),
    ];
    want.sort_by_key(|w| w.0);
    assert_eq!(broken, want);
    assert_eq!(c.unreachable.len(), 1, "{:?}", c.unreachable);
    assert_eq!(c.unreachable[0].switch, leaf01);
    assert_eq!(c.unreachable[0].lids, vec![15, 16]);
    assert_eq!(c.unreachable_pairs, 4 * 2);
    assert_eq!(c.unbalanced.len(), 1, "{:?}", c.unbalanced);
    assert_eq!(c.unbalanced[0].switch, leaf02);
    // Host destinations only: the switch LIDs carry management, not data.
    assert_eq!(c.unbalanced[0].uplinks, vec![(37, 4), (38, 0)]);
    // Every other route arrives: 4 switches x 12 end LIDs, 4 broken.
    assert_eq!((c.routes, c.good), (48, 44));
    assert!(c.credit_loop.is_empty(), "{:?}", c.credit_loop);
}

#[test]
fn an_lft_line_past_the_top_grows_the_table() {
    let text = std::fs::read_to_string(data("routes-faults.net")).unwrap()
        + "\nlft \"leaf01\" 300-301 37\n";
    let s = sweep_text(&text).unwrap();
    let sw = s
        .node(node(&s, "leaf01"))
        .unwrap()
        .switch
        .as_deref()
        .unwrap();
    assert_eq!(sw.info.linear_fdb_top, 301);
    assert_eq!((sw.lft[300], sw.lft[301], sw.lft[299]), (37, 37, 0xFF));
}

#[test]
fn bad_lft_lines_are_refused_naming_the_line() {
    let base = "Switch 8 \"sw\"\n[1] \"h\"[1]\n\nCa 1 \"h\"\n[1] \"sw\"[1]\n\n";
    for (line, why) in [
        ("lft \"sw\" 5 9", "port 9 out of range"),
        ("lft \"h\" 5 1", "is not a switch"),
        ("lft \"nope\" 5 1", "no node"),
        ("lft \"sw\" 0 1", "LID"),
        ("lft \"sw\" 49152 1", "LID"),
        ("lft \"sw\" 9-5 1", "backwards"),
        ("lft \"sw\" 5 256", "port"),
        ("lft sw 5 1", "expected 'lft"),
        ("lft \"sw\" 5", "expected 'lft"),
    ] {
        let e = sweep_text(&format!("{base}{line}\n")).unwrap_err();
        assert!(e.starts_with("test.net:7: lft"), "{line}: {e}");
        assert!(e.contains(why), "{line}: {e}");
    }
    assert!(sweep_text(&format!("{base}lft \"sw\" 5-6 255 # none\n")).is_ok());
}

/// `n` switches in a ring (port 2 to the next, port 3 to the previous),
/// one host on each.
fn ring(n: usize) -> String {
    let mut t = String::new();
    for i in 0..n {
        let (next, prev) = ((i + 1) % n, (i + n - 1) % n);
        t += &format!(
            "Switch 8 \"sw{i}\"\n[1] \"h{i}\"[1]\n[2] \"sw{next}\"[3]\n[3] \"sw{prev}\"[2]\n\n"
        );
        t += &format!("Ca 1 \"h{i}\"\n[1] \"sw{i}\"[1]\n\n");
    }
    t
}

#[test]
fn a_rings_shortest_paths_make_a_credit_loop() {
    // Five switches: every switch two away is reached one way only, so
    // each direction's links depend on each other all round.
    let s = sweep_text(&ring(5)).unwrap();
    let c = check(&s, 10.0);
    assert_eq!(c.good, c.routes, "every route arrives: {:?}", c.broken);
    let want: Vec<Link> = (0..5)
        .map(|i| Link {
            switch: node(&s, &format!("sw{i}")),
            port: 2,
        })
        .collect();
    assert_eq!(c.credit_loop, want);
    assert_eq!(c.broken.len(), 1, "{:?}", c.broken);
    let b = &c.broken[0];
    assert_eq!(
        b.at,
        Break::CreditLoop {
            switch: want[0].switch,
            port: 2
        }
    );
    // Each host two hops on holds one dependency (switches' own LIDs get
    // management packets: not counted).
    assert_eq!((b.destinations, b.routes), (5, 5));
    assert!(c.unreachable.is_empty());

    // Four switches, the tables sending every two-hop route clockwise.
    let mut text = ring(4);
    let s4 = sweep_text(&text).unwrap();
    for i in 0..4 {
        let far = node(&s4, &format!("sw{}", (i + 2) % 4));
        let lid = s4.node_ports(far)[0].info.lid.0;
        let host = s4.node_ports(node(&s4, &format!("h{}", (i + 2) % 4)))[0]
            .info
            .lid
            .0;
        text += &format!("lft \"sw{i}\" {lid} 2\nlft \"sw{i}\" {host} 2\n");
    }
    let s4 = sweep_text(&text).unwrap();
    let c = check(&s4, 10.0);
    assert_eq!(c.good, c.routes);
    assert_eq!(c.credit_loop.len(), 4, "{:?}", c.credit_loop);
    assert!(c.credit_loop.iter().all(|l| l.port == 2));
}

#[test]
fn trees_make_no_credit_loop() {
    let mut sim = SimSource::default_fabric(SimConfig::default()).unwrap();
    let c = check(&sim.sweep().unwrap(), 10.0);
    assert!(c.credit_loop.is_empty() && c.broken.is_empty(), "{c:?}");
    let topo = fat_tree(128, 8, 3).unwrap();
    let mut sim = SimSource::new(&topo, SimConfig::default()).unwrap();
    let c = check(&sim.sweep().unwrap(), 10.0);
    assert_eq!(c.good, c.routes);
    assert!(
        c.credit_loop.is_empty() && c.broken.is_empty(),
        "{:?}",
        c.credit_loop
    );
}
