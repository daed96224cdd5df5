//! IB-SM-MIB on the umad source over ibsim + OpenSM, compared with what
//! infiniband-diags report on the same fabric: nodes (ibnetdiscover), the
//! master SM (sminfo), CA PortInfo (smpquery portinfo), partitions from a
//! partitions.conf with full and limited members (and a member added by
//! editing the file + SIGHUP, with LastChange moved), OpenSM's IPoIB groups.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::{snmp, UmadAgent};
use ib::testbed::{Testbed, TestbedConfig, SMALL_NET};

const SM: &str = ".1.3.6.1.3.117.7";
const SM_PREFIX: [u32; 7] = [1, 3, 6, 1, 3, 117, 7];

/// Default partition for all; 0x0001: OpenSM's own port (Switch1 port 0)
/// full, the CAs limited.
const PARTITIONS: &str = "Default=0x7fff, ipoib : ALL=full;\n\
                          P1=0x0001, ipoib : SELF=full, ALL_CAS=limited;\n";
/// The same with every switch a full member of 0x0001 (adds Switch2).
const PARTITIONS_MORE: &str = "Default=0x7fff, ipoib : ALL=full;\n\
                               P1=0x0001, ipoib : ALL_SWITCHES=full, ALL_CAS=limited;\n";

type Cells = BTreeMap<(u32, u32, Vec<u32>), String>;

fn walk(target: &str) -> Cells {
    let out = snmp(
        "snmpbulkwalk",
        &[
            "-v2c", "-c", "public", "-On", "-t", "3", "-r", "1", "-Cr50", target, SM,
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut joined = String::new();
    for line in text.lines() {
        if !line.starts_with('.') && !joined.is_empty() {
            joined.pop();
            joined.push(' ');
        }
        joined.push_str(line);
        joined.push('\n');
    }
    let mut cells = Cells::new();
    for (oid, v) in common::parse_lines(&joined) {
        if v.starts_with("No more variables") {
            continue;
        }
        let Some(rest) = oid.strip_prefix(&SM_PREFIX[..]) else {
            continue;
        };
        if let (&[1, group, table, 1, col], index) = rest.split_at(5) {
            cells.insert((group * 10 + table, col, index.to_vec()), v);
        }
    }
    cells
}

fn col(cells: &Cells, table: u32, c: u32) -> BTreeMap<Vec<u32>, String> {
    cells
        .iter()
        .filter(|((t, cc, _), _)| *t == table && *cc == c)
        .map(|((_, _, i), v)| (i.clone(), v.clone()))
        .collect()
}

fn bytes(v: &str) -> Vec<u8> {
    match v.strip_prefix("Hex-STRING: ") {
        Some(h) => h
            .split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex"))
            .collect(),
        None => v
            .strip_prefix("STRING: ")
            .map(|s| s.trim_matches('"').as_bytes().to_vec())
            .unwrap_or_default(),
    }
}

fn number(v: &str) -> u64 {
    if let Some(t) = v.strip_prefix("Timeticks: (") {
        return t
            .split(')')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("ticks");
    }
    v.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

fn guid_of(index: &[u32], at: usize) -> u64 {
    index
        .get(at..at + 8)
        .expect("GUID index")
        .iter()
        .fold(0, |a, &b| (a << 8) | u64::from(b))
}

/// (node GUID, port, 1 full / 2 limited) of a partition key's vectors.
fn members(cells: &Cells, key: u32) -> BTreeSet<(u64, u8, u8)> {
    col(cells, 51, 4)
        .iter()
        .filter(|(i, _)| i.get(8) == Some(&key))
        .flat_map(|(_, v)| {
            bytes(v)
                .chunks(10)
                .map(|e| {
                    let g = e[..8].iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
                    (g, e[8], e[9])
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn last_change(cells: &Cells, key: u32) -> u64 {
    col(cells, 51, 7)
        .iter()
        .find(|(i, _)| i.get(8) == Some(&key))
        .map(|(_, v)| number(v))
        .expect("LastChange")
}

#[test]
fn umad_tables_equal_infiniband_diags() {
    let mut cfg = TestbedConfig::new(SMALL_NET);
    cfg.partitions = PARTITIONS.to_string();
    cfg.sm_sweep_secs = 2;
    let tb = Testbed::start(cfg).unwrap_or_else(|e| panic!("testbed: {e}"));
    let ready = |a: &UmadAgent| {
        let c = walk(&a.target);
        col(&c, 21, 5).len() >= 6 && !col(&c, 51, 4).is_empty()
    };
    let agent = UmadAgent::start(
        &tb,
        None,
        &["--sweep-interval", "1"],
        Duration::from_secs(60),
        ready,
    );
    let cells = walk(&agent.target);

    // Nodes: the GUIDs ibnetdiscover reports, with their types.
    let disc = tb.run_diag("ibnetdiscover", &[]).expect("ibnetdiscover");
    let mut want = BTreeMap::new();
    for l in disc.stdout.lines() {
        let ty = if l.starts_with("Switch") {
            2
        } else if l.starts_with("Ca") {
            1
        } else {
            continue;
        };
        let g = l
            .split('"')
            .nth(1)
            .and_then(|s| s.split('-').nth(1))
            .map(|h| u64::from_str_radix(h, 16).expect("guid"))
            .expect("node id");
        want.insert(g, ty);
    }
    let got: BTreeMap<u64, u64> = col(&cells, 21, 5)
        .iter()
        .map(|(i, v)| (guid_of(i, 8), number(v)))
        .collect();
    assert_eq!(got, want, "ibnetdiscover:\n{}", disc.stdout);

    // The master SM: sminfo's GUID, priority and state.
    let si = tb.run_diag("sminfo", &[]).expect("sminfo");
    let words: Vec<&str> = si.stdout.split_whitespace().collect();
    let after = |k: &str| {
        words
            .iter()
            .position(|w| *w == k)
            .and_then(|i| words.get(i + 1))
            .map(|w| w.trim_end_matches(','))
            .unwrap_or_else(|| panic!("no {k} in {}", si.stdout))
    };
    let sm_guid = u64::from_str_radix(after("guid").trim_start_matches("0x"), 16).unwrap();
    let states = col(&cells, 71, 6);
    let (idx, st) = states
        .iter()
        .find(|(i, _)| guid_of(i, 8) == sm_guid)
        .unwrap_or_else(|| panic!("SM {sm_guid:#x} not in {states:?}"));
    assert_eq!(number(st), after("state").parse::<u64>().unwrap());
    assert_eq!(
        number(&col(&cells, 71, 5)[idx]),
        after("priority").parse::<u64>().unwrap()
    );

    // CA ports: LID, state, LMC, MTUCap as smpquery portinfo reads them.
    let lids = col(&cells, 31, 6);
    let mut checked = 0;
    for (idx, lid) in &lids {
        // CAs' port 1 (port 2 of the two-port HCAs is unlinked, LID 0).
        if got.get(&guid_of(idx, 8)) != Some(&1) || idx.last() != Some(&1) {
            continue;
        }
        let lid = number(lid).to_string();
        let pq = tb
            .run_diag("smpquery", &["portinfo", &lid, "1"])
            .expect("smpquery");
        let field = |name: &str| -> u64 {
            pq.stdout
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.rsplit('.').next())
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| {
                    v.strip_prefix("0x")
                        .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
                })
                .unwrap_or_else(|| panic!("{name} in {}", pq.stdout))
        };
        assert_eq!(field("Lid:"), lid.parse::<u64>().unwrap());
        assert_eq!(number(&col(&cells, 31, 7)[idx]), field("SMLid:"));
        assert_eq!(number(&col(&cells, 31, 19)[idx]), field("LMC:"));
        checked += 1;
    }
    assert_eq!(checked, 4);

    // Partition 0x0001: Switch1 port 0 full, the four CAs limited.
    let p1 = members(&cells, 1);
    assert_eq!(p1.iter().filter(|m| m.2 == 1).count(), 1, "{p1:?}");
    assert_eq!(p1.iter().filter(|m| m.2 == 2).count(), 4, "{p1:?}");
    assert!(
        p1.contains(&(sm_guid_node(&cells, sm_guid), 0, 1)),
        "{p1:?}"
    );

    // OpenSM's IPoIB broadcast groups of both partitions.
    let pkeys: BTreeSet<u64> = col(&cells, 61, 7).values().map(|v| number(v)).collect();
    assert!(
        pkeys.contains(&0xffff) && pkeys.contains(&0x8001),
        "{pkeys:?}"
    );
    assert!(!col(&cells, 62, 4).is_empty());

    // Add Switch2 as a full member, SIGHUP: within a sweep the vector shows
    // it and LastChange moves; the default partition's does not.
    let before = last_change(&cells, 1);
    let default_before = last_change(&cells, 0x7fff);
    std::fs::write(tb.dir().join("partitions.conf"), PARTITIONS_MORE).expect("write");
    let pid = std::fs::read_to_string(tb.dir().join("opensm.pid")).expect("pid");
    let st = std::process::Command::new("kill")
        .args(["-HUP", pid.trim()])
        .status()
        .expect("kill");
    assert!(st.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = walk(&agent.target);
        let m = members(&c, 1);
        if m.iter().filter(|m| m.2 == 1).count() == 2 {
            assert!(last_change(&c, 1) > before, "LastChange did not move");
            assert_eq!(last_change(&c, 0x7fff), default_before);
            break;
        }
        assert!(Instant::now() < deadline, "new member never showed: {m:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The node GUID of the SM's port (SMInfo carries the port GUID; on a
/// switch port 0 it equals the node GUID).
fn sm_guid_node(cells: &Cells, sm_port_guid: u64) -> u64 {
    let nodes: BTreeSet<u64> = col(cells, 21, 5).keys().map(|i| guid_of(i, 8)).collect();
    if nodes.contains(&sm_port_guid) {
        sm_port_guid
    } else {
        panic!("SM port {sm_port_guid:#x} is not a switch port 0")
    }
}
