//! P_Key tables from the SA (issue 41.2): a table refresh asks the whole
//! fabric's PKeyTableRecords in one GetTable and falls back to each port's
//! PKeyTable SMPs when that answer is cut short or refused. Under umad2sim the whole
//! answer is always cut to its first packet (ibsim does no RMPP), so what
//! runs end to end here is the fallback (and the per-port read of the local
//! node's tables); the grouping of a whole answer is unit-tested in
//! `source::umad::sa::pkeys`. Either way every end port's table must equal
//! what the SMA holds (`smpquery pkeys`) and what the SA says
//! (`saquery --smkey 1 PKTR LID/PORT`).
mod umad_util;

use ib::model::Snapshot;
use ib::source::umad::UmadOptions;
use umad_util::*;

/// Three partitions that give CA ports and switch ports different tables:
/// the default, one where CAs are limited members and switches full, one
/// of CAs only.
const PARTITIONS: &str = "Default=0x7fff, ipoib : ALL=full;\n\
    P2=0x0002 : ALL_CAS=limited, ALL_SWITCHES=full;\n\
    P3=0x0003 : ALL_CAS=full;\n";

/// The P_Keys a tool printed (every `0x` word of the table lines), empty
/// entries left out as the source leaves them out.
fn keys_in(text: &str, table_line: impl Fn(&str) -> bool) -> Vec<u16> {
    text.lines()
        .filter(|l| table_line(l))
        .flat_map(|l| l.split_whitespace())
        .filter_map(|w| w.strip_prefix("0x"))
        .filter_map(|h| u16::from_str_radix(h, 16).ok())
        .filter(|k| k & 0x7fff != 0)
        .collect()
}

fn smp_pkeys(lid: u16, port: u8) -> Vec<u16> {
    let out = child_diag("smpquery", &["pkeys", &lid.to_string(), &port.to_string()]);
    // "  0: 0xffff 0x0000 ...", then "64 pkeys capacity for this port".
    keys_in(&out, |l| {
        l.split_once(':')
            .is_some_and(|(i, _)| i.trim().parse::<u32>().is_ok())
    })
}

fn sa_pkeys(lid: u16, port: u8) -> Vec<u16> {
    let out = child_diag(
        "saquery",
        &["--smkey", "1", "PKTR", &format!("{lid}/{port}")],
    );
    // The table lines are the ones made of P_Keys alone.
    keys_in(&out, |l| l.trim_start().starts_with("0x"))
}

/// Every end port with a LID whose table `which` selects equals the SMA's
/// and the SA's; returns how many were compared.
fn equal_to_the_diags(snap: &Snapshot, which: impl Fn(&ib::model::Port) -> bool) -> usize {
    let mut compared = 0;
    for p in snap.ports.iter().filter(|p| snap.is_end_port(p)) {
        let lid = p.info.lid.0;
        if lid == 0 || !which(p) {
            continue;
        }
        let ours: Vec<u16> = p.pkeys.iter().map(|k| k.0).collect();
        let where_ = format!("LID {lid} port {}", p.num.0);
        assert_eq!(ours, smp_pkeys(lid, p.num.0), "{where_}: smpquery pkeys");
        assert_eq!(ours, sa_pkeys(lid, p.num.0), "{where_}: saquery PKTR");
        compared += 1;
    }
    compared
}

/// The parent side: SMALL_NET with [`PARTITIONS`], test `name` in the child.
fn parent(name: &str) {
    let mut cfg = ib_testbed::TestbedConfig::new(ib_testbed::SMALL_NET);
    cfg.partitions = PARTITIONS.into();
    let tb = start(cfg);
    println!("{}", run_child(&tb, name, &[]));
}

#[test]
fn pkey_tables_equal_smpquery_and_saquery_through_the_fallback() {
    if !in_child() {
        return parent("pkey_tables_equal_smpquery_and_saquery_through_the_fallback");
    }
    let mut s = open_source(UmadOptions::default());
    // The first sweep reads the local node's tables, from their SMAs.
    let first = s.sweep().unwrap();
    let local = first.local_node.expect("local node");
    assert_eq!(s.stats().pkey_whole_fabric + s.stats().pkey_fallbacks, 0);
    assert!(equal_to_the_diags(&first, |p| p.node == local) >= 1);
    // The second reads every table: the whole-fabric answer comes cut
    // (no RMPP in ibsim), so every port is read from its SMA.
    let second = s.sweep().unwrap();
    let stats = s.stats();
    assert_eq!(
        (stats.pkey_whole_fabric, stats.pkey_fallbacks),
        (0, 1),
        "{stats:?}"
    );
    // SMALL_NET: four HCA ports and the two switches' port 0.
    assert_eq!(equal_to_the_diags(&second, |_| true), 6);
    // The partitions made different tables: a CA's and a switch's differ.
    let tables: std::collections::BTreeSet<Vec<u16>> = second
        .ports
        .iter()
        .filter(|p| second.is_end_port(p) && p.info.lid.0 != 0)
        .map(|p| p.pkeys.iter().map(|k| k.0).collect())
        .collect();
    assert!(tables.len() >= 2, "{tables:?}");
    println!("tables: {tables:x?}");
}

/// Issue 41.3: the periodic P_Key re-read is spread over `tables_every`
/// sweeps (a slice of the end ports each). An SM's partition change that
/// nothing else shows (two CAs put in a new partition, the local node not:
/// no port state moves, no discovery) is in every served table within
/// `tables_every` sweeps, and then every table equals the diags.
#[test]
fn a_partition_change_is_served_within_tables_every_sweeps() {
    if !in_child() {
        return parent("a_partition_change_is_served_within_tables_every_sweeps");
    }
    let every = 4;
    let mut s = open_source(UmadOptions {
        tables_every: every,
        ..UmadOptions::default()
    });
    s.sweep().unwrap();
    let snap = s.sweep().unwrap();
    let guid = |desc: &str| {
        let n = snap.nodes.iter().find(|n| n.description == desc).unwrap();
        snap.port(n.ports.start).unwrap().guid.0
    };
    let (hca2, hca3) = (guid("Hca2"), guid("Hca3"));
    let dir = std::env::var("UMAD_TESTBED_DIR").unwrap();
    std::fs::write(
        format!("{dir}/partitions.conf"),
        format!("{PARTITIONS}P5=0x0005 : {hca2:#x}=full, {hca3:#x}=full;\n"),
    )
    .unwrap();
    child_signal_opensm("HUP");
    // OpenSM programs the new tables on its heavy sweep: wait until the SMA
    // of Hca2 shows the new P_Key (the diags are the truth).
    let hca2_lid = snap
        .ports
        .iter()
        .find(|p| p.guid.0 == hca2)
        .unwrap()
        .info
        .lid
        .0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !smp_pkeys(hca2_lid, 1).contains(&0x8005) {
        assert!(std::time::Instant::now() < deadline, "OpenSM never set P5");
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let discoveries = s.stats().discoveries;
    let mut last = None;
    for _ in 0..every {
        last = Some(s.sweep().unwrap());
    }
    let last = last.unwrap();
    assert_eq!(s.stats().discoveries, discoveries, "no discovery saw it");
    assert_eq!(equal_to_the_diags(&last, |_| true), 6);
    let with_p5 = last
        .ports
        .iter()
        .filter(|p| p.pkeys.iter().any(|k| k.0 == 0x8005))
        .count();
    assert_eq!(with_p5, 2);
    assert!(last.partitions.iter().any(|p| p.pkey.0 == 0x8005));
}

/// Without an SM_Key (no partition tables) a GUIDInfo refresh first asks
/// the whole fabric's GUIDInfoRecords in one GetTable (issue 41.2); under
/// umad2sim that answer is cut (counted), and every port's GUIDInfo is read
/// as with the SM_Key: the same GUIDs for every end port.
#[test]
fn guid_info_equals_without_an_sm_key_through_the_cut_whole_answer() {
    if !in_child() {
        return parent("guid_info_equals_without_an_sm_key_through_the_cut_whole_answer");
    }
    let guids = |o: UmadOptions| {
        let mut s = open_source(o);
        s.sweep().unwrap();
        let snap = s.sweep().unwrap();
        let cut = snap.sweep.cost.sa_answers_cut;
        let by_port: Vec<_> = snap
            .ports
            .iter()
            .map(|p| (p.guid, p.num, p.guids.to_vec()))
            .collect();
        (by_port, cut)
    };
    let (with_key, _) = guids(UmadOptions::default());
    let (without, cut) = guids(UmadOptions {
        sm_key: None,
        ..UmadOptions::default()
    });
    assert!(cut >= 1, "the whole-fabric answer came cut: {cut}");
    assert!(with_key.iter().any(|(_, _, g)| g.len() > 8), "long tables");
    assert_eq!(without, with_key);
}

/// The GUIDs `saquery GIR LID/BLOCK` prints for one block, by index.
fn sa_guid_block(lid: u16, block: u16) -> Vec<u64> {
    let out = child_diag("saquery", &["GIR", &format!("{lid}/{block}")]);
    out.lines()
        .filter(|l| l.trim_start().starts_with("GUID "))
        .filter_map(|l| l.rsplit('.').next())
        .filter_map(|h| u64::from_str_radix(h.trim().trim_start_matches("0x"), 16).ok())
        .collect()
}

/// Under umad2sim (no RMPP) every end port's GUIDInfo, a switch's port 0
/// as a CA's, is read from its SMA: block by block it equals what the SA
/// says (`saquery GIR LID/BLOCK`).
#[test]
fn guid_info_of_every_end_port_equals_saquery() {
    if !in_child() {
        return parent("guid_info_of_every_end_port_equals_saquery");
    }
    let mut s = open_source(UmadOptions::default());
    s.sweep().unwrap();
    let snap = s.sweep().unwrap();
    let mut switches = 0;
    let mut checked = 0;
    for p in &snap.ports {
        let switch = snap.node(p.node).is_some_and(|n| n.switch.is_some());
        if p.info.lid.0 == 0 || (switch && p.num.0 != 0) {
            continue;
        }
        let mut want = Vec::new();
        for b in 0..(p.info.guid_cap.div_ceil(8).max(1) as u16) {
            want.extend(sa_guid_block(p.info.lid.0, b));
        }
        let got: Vec<u64> = p.guids.iter().map(|g| g.0).collect();
        assert_eq!(got, want, "LID {} port {}", p.info.lid.0, p.num.0);
        checked += 1;
        switches += usize::from(switch);
    }
    assert_eq!(switches, 2, "both switches' port 0");
    assert!(checked >= 6, "{checked}");
}
