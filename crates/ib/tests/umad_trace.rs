//! Traces computed from the swept forwarding tables (`model::route::trace`)
//! equal `ibtracert` hop by hop on a three-level fat tree in ibsim: the same
//! nodes, entered and left by the same ports.
mod umad_util;

use ib::model::route::trace;
use ib::source::umad::{UmadOptions, UmadSource};
use ib::types::Lid;
use umad_util::*;

/// (node description, entry port, exit port) of each hop ibtracert prints.
fn ibtracert(slid: u16, dlid: u16) -> Vec<(String, Option<u8>, Option<u8>)> {
    let out = std::process::Command::new("ibtracert")
        .args([slid.to_string(), dlid.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "ibtracert {slid} {dlid}: {text}");
    let name = |l: &str| l.rsplit('"').nth(1).unwrap_or("").to_string();
    ib_testbed::ibtracert_hops(&text)
        .unwrap_or_else(|| panic!("ibtracert {slid} {dlid}: {text}"))
        .into_iter()
        .map(|h| (name(h.node), h.entry, h.exit))
        .collect()
}

/// The CA ports with a LID.
fn ca_ports(s: &ib::model::Snapshot) -> Vec<u32> {
    (0..s.ports.len() as u32)
        .filter(|&p| {
            let port = s.port(p).unwrap();
            s.node(port.node).unwrap().switch.is_none() && port.info.lid.0 != 0
        })
        .collect()
}

#[test]
fn traces_equal_ibtracert_in_a_fat_tree() {
    if !in_child() {
        return run_on_fat_tree(64, "traces_equal_ibtracert_in_a_fat_tree");
    }
    let mut src = UmadSource::open(None, None, UmadOptions::default()).unwrap();
    // The forwarding tables come with the second sweep (quick start).
    src.sweep().unwrap();
    let s = src.sweep().unwrap();
    // CA ports with LIDs, a spread of them.
    let cas = ca_ports(&s);
    assert!(cas.len() >= 32, "{}", cas.len());
    let picks: Vec<u32> = cas.iter().step_by(cas.len() / 6).copied().collect();
    let mut compared = 0;
    for &a in &picks {
        for &b in &picks {
            if a == b {
                continue;
            }
            let (sl, dl) = (s.port(a).unwrap().info.lid, s.port(b).unwrap().info.lid);
            let ours = named_hops(&s, &trace(&s, a, Lid(dl.0)).unwrap());
            let theirs = ibtracert(sl.0, dl.0);
            assert_eq!(ours, theirs, "trace {} -> {}", sl.0, dl.0);
            compared += 1;
        }
    }
    println!("{compared} traces equal ibtracert's");
}

/// Dual rail: an HCA with one port on each of two leaf switches. A trace
/// between its own two ports leaves by the source port and comes back
/// through the fabric (5 hops here), as ibtracert shows; every pair of CA
/// ports, the same port to itself included, equals ibtracert.
#[test]
fn dual_rail_traces_equal_ibtracert() {
    if !in_child() {
        return run_on_net(
            include_str!("data/net.dual-rail"),
            "dual_rail_traces_equal_ibtracert",
        );
    }
    let mut src = UmadSource::open(None, None, UmadOptions::default()).unwrap();
    src.sweep().unwrap();
    let s = src.sweep().unwrap();
    let cas = ca_ports(&s);
    assert_eq!(cas.len(), 5, "five CA ports");
    let mut across = 0;
    for &a in &cas {
        for &b in &cas {
            let (pa, pb) = (s.port(a).unwrap(), s.port(b).unwrap());
            let ours = named_hops(&s, &trace(&s, a, pb.info.lid).unwrap());
            let theirs = ibtracert(pa.info.lid.0, pb.info.lid.0);
            assert_eq!(ours, theirs, "trace {} -> {}", pa.info.lid.0, pb.info.lid.0);
            if a != b && pa.node == pb.node {
                assert_eq!(ours.len(), 5, "{ours:?}");
                across += 1;
            }
        }
    }
    assert_eq!(across, 4, "both directions of both dual-rail HCAs");
}
