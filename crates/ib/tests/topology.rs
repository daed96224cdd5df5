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
    // (file text, what the error says); where that names the place, the
    // error starts with it.
    for (text, want) in [
        (
            "Switch 8 \"a\"\n[1] \"b\"[1]\n\nFoo bar\n",
            "bad.net:4: expected a node header",
        ),
        (
            "Switch x \"a\"\n",
            "bad.net:1: expected the number of ports",
        ),
        ("Switch 8 a\n", "bad.net:1: expected the quoted node id"),
        (
            "Switch 8 \"a\"\n[9] \"b\"[1]\n",
            "bad.net:2: port 9 out of range",
        ),
        (
            "Switch 8 \"a\"\n[1] \"b\"[1]\n",
            "bad.net:2: remote node \"b\"",
        ),
        (
            "[1] \"b\"[1]\n",
            "bad.net:1: port line outside a node record",
        ),
        (
            "Switch 8 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[2]\n",
            "says it is connected to",
        ),
        (
            "Switch 8 \"a\"\n\nSwitch 8 \"a\"\n",
            "bad.net:3: duplicate node id \"a\" (first defined at line 1)",
        ),
        (
            "Switch 8 \"a\"\n[1] \"b\"[1] q=3\n",
            "expected options w=N, s=N",
        ),
        (
            "Hca 1 \"b\"\n[1] \"a\"[1] # lid 70000\n\nSwitch 2 \"a\"\n[1] \"b\"[1]\n",
            "bad.net:2: lid 70000",
        ),
        ("Switch 300 \"a\"\n", "1-254"),
    ] {
        let e = err_of(text);
        if want.starts_with("bad.net:") {
            assert!(e.starts_with(want), "{e}");
        } else {
            assert!(e.contains(want), "{e}");
        }
    }
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

/// Each link once with its planned rate, ends by description (the first
/// word: an ibdiagnet plan names `cn007`, the fabric says `cn007 HCA-1`).
/// Ends (name, port) in order, and the planned width and speed.
type RatedLink = (String, u8, String, u8, Option<LinkWidth>, Option<LinkSpeed>);

fn links_with_rates(t: &ib::topology::Topology) -> BTreeSet<RatedLink> {
    let word = |i: usize| {
        t.nodes[i]
            .description()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    t.links()
        .map(|(a, ap, z, zp)| {
            let p = t.nodes[a].port(ap).unwrap();
            let (a, z) = (word(a), word(z));
            let (w, s) = (p.width, p.speed);
            if (a.as_str(), ap.0) <= (z.as_str(), zp.0) {
                (a, ap.0, z, zp.0, w, s)
            } else {
                (z, zp.0, a, ap.0, w, s)
            }
        })
        .collect()
}

/// One fabric (ibsim's edge.net under OpenSM: three switches, seven
/// hosts, one with two ports and a description of two words) as
/// ibnetdiscover, ibnetdiscover -p, iblinkinfo (plain, -l, -p) printed
/// it, and as an ibdiagnet topology file written by hand: the same links
/// at the same rates; the tools' files know the same port GUIDs.
#[test]
fn every_plan_format_reads_as_the_same_fabric() {
    let default = parse_file(data("ibnetdiscover-edge.txt")).unwrap();
    let want = links_with_rates(&default);
    assert_eq!(want.len(), 10);
    assert!(want.contains(&(
        "cn006".into(),
        1,
        "edge-3".into(),
        2,
        Some(LinkWidth::X1),
        Some(LinkSpeed::Sdr)
    )));
    for name in [
        "ibnetdiscover-p-edge.txt",
        "iblinkinfo-edge.txt",
        "iblinkinfo-l-edge.txt",
        "iblinkinfo-p-edge.txt",
        "ibdiagnet-edge.topo",
    ] {
        let t = parse_file(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(links_with_rates(&t), want, "{name}");
        assert_eq!(t.nodes.len(), default.nodes.len(), "{name}");
        for n in &t.nodes {
            let d = default
                .nodes
                .iter()
                .find(|x| {
                    x.description() == n.description()
                        || x.description().split_whitespace().next() == Some(n.description())
                })
                .unwrap_or_else(|| panic!("{name}: {} not in the default", n.description()));
            assert_eq!(n.node_type, d.node_type, "{name}: {}", n.name);
            assert!(!n.guid_known, "{name}: {}", n.name);
            if name.ends_with(".topo") {
                // No port counts there: the highest port named.
                assert!(n.num_ports <= d.num_ports, "{name}: {}", n.name);
                assert!(!n.port_guids_known, "{name}: {}", n.name);
                continue;
            }
            assert_eq!(n.num_ports, d.num_ports, "{name}: {}", n.name);
            // Port GUIDs as the fabric has them: how the check finds nodes.
            assert!(n.port_guids_known, "{name}: {}", n.name);
            for p in &d.ports {
                assert_eq!(
                    n.port_guid(p.port),
                    d.port_guid(p.port),
                    "{name}: {}",
                    n.name
                );
            }
        }
    }
}

#[test]
fn unknown_format_names_the_accepted_ones() {
    let e = err_of("# a plan\n\nhello world\n");
    assert!(
        e.starts_with("bad.net:3: \"hello world\" does not start"),
        "{e}"
    );
    for f in [
        "ibnetdiscover -p",
        "iblinkinfo",
        "ibdiagnet",
        "Switch|Hca|Ca|Rt",
    ] {
        assert!(e.contains(f), "{f}: {e}");
    }
}

#[test]
fn format_errors_name_file_and_line() {
    let e = err_of("SX6036 leaf01\n   L1/P3 -4x-> HCA cn001 P1\n");
    assert!(e.starts_with("bad.net:2: port name \"L1/P3\""), "{e}");
    let e = err_of("SX6036 leaf01\n   P1 -4x-7G-> HCA cn001 P1\n");
    assert!(e.contains("bad.net:2: expected -WIDTH-SPEED->"), "{e}");
    let e =
        err_of("SX6036 leaf01\n   P1 -> HCA cn001 P1\n\nHCA cn001\n   P1 -> SX6036 leaf01 P2\n");
    assert!(e.contains("says it is connected to"), "{e}");
    let e = err_of("CA 8 1 0x10 4x SDR - SW 6 1 0x20 ( 'cn003' 'edge-2' )\n");
    assert!(e.starts_with("bad.net:1: expected ( 'name'"), "{e}");
    let e = err_of("CA 8 1 0x10 4x SDR - SW 6 1 0x20 ( 'a' - 'b' )\nCA 8 1 0x10 4x SDR 'a'\n");
    assert!(
        e.starts_with("bad.net:2: port 1 of \"a\" listed twice"),
        "{e}"
    );
    let e =
        err_of("Switch: 0x20 edge-1:\n  1  1[  ] ==( 4X 2.5 Gbps Active/ LinkUp)==> 9 1[  ] \n");
    assert!(
        e.starts_with("bad.net:2: expected the far end's quoted name"),
        "{e}"
    );
    let e = err_of("      1    1[  ] ==( 4X 2.5 Gbps Active/ LinkUp)==> 9 1[  ] \"x\" ( )\n");
    assert!(e.contains("does not start"), "{e}");
}

// ---- Limits (issue 53): what a plan file may not do to its reader ----

/// parse_file on its own thread: a read that blocks fails the test with a
/// message instead of hanging the test run.
fn parse_off_thread(p: PathBuf) -> Result<ib::topology::Topology, TopologyError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(parse_file(&p));
    });
    rx.recv_timeout(std::time::Duration::from_secs(120))
        .expect("parse_file blocked (on a FIFO?)")
}

fn refused(r: Result<ib::topology::Topology, TopologyError>) -> String {
    match r {
        Err(e @ (TopologyError::Refused { .. } | TopologyError::Syntax { .. })) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_fifo_is_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let top = dir.path().join("top.net");
    std::fs::write(&top, "Switch 4 \"sw\"\n\ninclude \"fifo\"\n").unwrap();
    // Nobody ever writes the FIFO: an open or read of it would block.
    let e = refused(parse_off_thread(top));
    assert!(
        e.ends_with("fifo: a FIFO: only regular files are read"),
        "{e}"
    );
    let e = refused(parse_off_thread(fifo));
    assert!(e.contains("a FIFO: only regular files are read"), "{e}");
}

#[test]
fn devices_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("top.net");
    std::fs::write(&top, "include \"/dev/zero\"\n").unwrap();
    let e = refused(parse_off_thread(top));
    assert_eq!(
        e,
        "/dev/zero: a character device: only regular files are read"
    );
    let e = refused(parse_off_thread(dir.path().to_path_buf()));
    assert!(
        e.ends_with("a directory: only regular files are read"),
        "{e}"
    );
}

#[test]
fn include_fan_out_is_bounded() {
    // 9 files each including the next 9 times: 9^9 reads unbounded. A
    // file is read once per plan: the second include of one is refused.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..9 {
        let body: String = if i == 8 {
            "Switch 4 \"sw\"\n".into()
        } else {
            (0..9)
                .map(|_| format!("include \"f{}\"\n", i + 1))
                .collect()
        };
        std::fs::write(dir.path().join(format!("f{i}")), body).unwrap();
    }
    let e = refused(parse_off_thread(dir.path().join("f0")));
    assert!(e.contains("f8: read twice in one plan"), "{e}");
    // A chain deeper than 8 includes.
    for i in 0..12 {
        std::fs::write(
            dir.path().join(format!("c{i}")),
            format!("include \"c{}\"\n", i + 1),
        )
        .unwrap();
    }
    let e = refused(parse_off_thread(dir.path().join("c0")));
    assert!(e.contains("c8:1: include nested more than 8 deep"), "{e}");
    // More than 256 files, each once.
    let mut top = String::new();
    for i in 0..300 {
        std::fs::write(dir.path().join(format!("w{i}")), "# nothing\n").unwrap();
        top.push_str(&format!("include \"w{i}\"\n"));
    }
    std::fs::write(dir.path().join("wide"), top).unwrap();
    let e = refused(parse_off_thread(dir.path().join("wide")));
    assert!(e.contains("more than 256 files in one plan"), "{e}");
}

#[test]
fn a_gzip_bomb_stops_at_the_limit() {
    use std::io::Write;
    // One gzip member of 8 MiB of newlines (8 KiB compressed), repeated:
    // a file of about 1 MB that decompresses to over 1 GB.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![b'\n'; 8 << 20]).unwrap();
    let member = enc.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bomb.net.gz");
    let mut f = std::fs::File::create(&p).unwrap();
    for _ in 0..130 {
        f.write_all(&member).unwrap();
    }
    drop(f);
    assert!(std::fs::metadata(&p).unwrap().len() < 2 << 20);
    let e = refused(parse_off_thread(p));
    assert!(
        e.ends_with(
            "it decompresses to more than 67108864 octets (limits: 67108864 a file, 67108864 a plan)"
        ),
        "{e}"
    );
}

#[test]
fn big_files_and_long_lines_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // 200 MiB, sparse: refused by its size, before a read.
    let big = dir.path().join("big.net");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let e = refused(parse_off_thread(big));
    assert!(
        e.contains("209715200 octets: more than 67108864 octets"),
        "{e}"
    );
    let long = dir.path().join("long.net");
    let line = format!("Switch 4 \"{}\"\n", "x".repeat(100_000));
    std::fs::write(&long, format!("# ok\n{line}")).unwrap();
    let e = refused(parse_off_thread(long));
    assert!(
        e.ends_with("long.net:2: line of 100011 octets: longer than the limit of 8192"),
        "{e}"
    );
    // Within other limits, the same file reads.
    let limits = ib::topology::Limits {
        max_line_bytes: 1 << 20,
        ..ib::topology::DEFAULT_LIMITS
    };
    let p = dir.path().join("long.net");
    assert_eq!(
        ib::topology::parse_file_with(&p, limits)
            .unwrap()
            .nodes
            .len(),
        1
    );
}

#[test]
fn errors_quote_a_few_dozen_octets() {
    // A 20 MB name defined twice: the error line stays short.
    let name = "n".repeat(20 << 20);
    let text = format!("Switch 4 \"{name}\"\n\nSwitch 4 \"{name}\"\n");
    let e = err_of(&text);
    assert!(e.len() < 200, "{} octets", e.len());
    assert!(
        e.starts_with(&format!(
            "bad.net:3: duplicate node id \"{}\"... (20971520 octets)",
            "n".repeat(40)
        )),
        "{}",
        &e[..200.min(e.len())]
    );
    // Control characters are escaped.
    let e = err_of("Switch 4 \"a\"\n[1] \"b\x1b[2J\"[1]\n");
    assert!(e.contains("\\u{1b}[2J"), "{e}");
    let e = err_of(&format!("{}\n", "z".repeat(5000)));
    assert!(e.len() < 1200, "{} octets", e.len());
}

/// `iblinkinfo --switches-only`: the hosts are only far ends, told by
/// name (cn007's two ports are one node: one name, one LID each).
#[test]
fn iblinkinfo_switches_only_finds_hosts_by_name() {
    let default = parse_file(data("ibnetdiscover-edge.txt")).unwrap();
    let t = parse_file(data("iblinkinfo-switches-edge.txt")).unwrap();
    assert_eq!(t.link_set(), default.link_set());
    let cn007 = t.node("cn007 HCA-1").unwrap();
    assert_eq!((cn007.num_ports, cn007.ports.len()), (2, 2));
    assert!(!cn007.port_guids_known && !cn007.guid_known);
    let edge = t.node("S-0000000000200000").unwrap();
    assert!(edge.port_guids_known);
    assert_eq!(edge.lid, Some(Lid(1)));
}
