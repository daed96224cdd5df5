//! P_Key tables from the SA (issue 41.2): a table refresh asks the whole
//! fabric's PKeyTableRecords in one GetTable and falls back to one query per
//! port when that answer is cut short or refused. Under umad2sim the whole
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

#[test]
fn pkey_tables_equal_smpquery_and_saquery_through_the_fallback() {
    if !in_child() {
        let mut cfg = ib::testbed::TestbedConfig::new(ib::testbed::SMALL_NET);
        cfg.partitions = PARTITIONS.into();
        let tb = start(cfg);
        let name = "pkey_tables_equal_smpquery_and_saquery_through_the_fallback";
        println!("{}", run_child(&tb, name, &[]));
        return;
    }
    let mut s = open_source(UmadOptions::default());
    // The first sweep reads the local node's tables, one query per port.
    let first = s.sweep().unwrap();
    let local = first.local_node.expect("local node");
    assert_eq!(s.stats().pkey_whole_fabric + s.stats().pkey_fallbacks, 0);
    assert!(equal_to_the_diags(&first, |p| p.node == local) >= 1);
    // The second reads every table: the whole-fabric answer comes cut
    // (no RMPP in ibsim), so every port is asked on its own.
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
