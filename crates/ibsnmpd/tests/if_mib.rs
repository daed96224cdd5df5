//! IF-MIB and IB-IF-MIB served by the real binary, read with net-snmp's
//! tools and the MIB files we ship: the simulated fabric (walks, sysORTable,
//! Sets, counters across sweeps) and the sysfs source on a copy of the
//! kernel-like fixture tree (values equal the draft-ietf-ipoib-ibif-mib 2.4
//! formulas over the counters `ibsnmpd dump --format json` shows; resets by
//! others, saturation and a real discontinuity).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{repo, text, Agent, BIN};
use serde_json::Value as Json;

const IF_NUMBER: &str = ".1.3.6.1.2.1.2.1.0";
const IF_ENTRY: &str = ".1.3.6.1.2.1.2.2.1";
const IF_X_ENTRY: &str = ".1.3.6.1.2.1.31.1.1.1";
const IF_TABLE_LAST_CHANGE: &str = ".1.3.6.1.2.1.31.1.5.0";
const IB_IF_PORT_STAT_ENTRY: &str = ".1.3.6.1.3.117.2.1.1.1";
const IB_IF_VL_TRAFFIC_ENTRY: &str = ".1.3.6.1.3.117.2.1.2.1";
const IB_IPOIB_ADDR: &str = ".1.3.6.1.3.117.2.1.3.1.3";

/// A net-snmp tool with the shipped MIBs loaded; asserts success and a
/// clean stderr (every name resolved); returns stdout.
fn named(agent: &Agent, tool: &str, args: &[&str], oids: &[&str]) -> String {
    let out = common::with_mib(tool, "ALL")
        .args(["-v2c", "-t", "2", "-r", "1"])
        .args(args)
        .arg(&agent.target)
        .args(oids)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "{tool} {args:?} {oids:?}: {}\nstdout:\n{stdout}\nstderr:\n{stderr}\nagent log:\n{}",
        out.status,
        agent.log_text()
    );
    stdout
}

/// `MODULE::name.index = TYPE: value` lines as (name.index, value).
fn walk(agent: &Agent, what: &str) -> BTreeMap<String, String> {
    named(agent, "snmpwalk", &["-c", "public"], &[what])
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(" = ")?;
            let k = k.split_once("::").map_or(k, |x| x.1);
            Some((k.to_string(), v.to_string()))
        })
        .collect()
}

/// Numeric values of several instances read in ONE Get (one snapshot).
fn get_numbers(agent: &Agent, oids: &[String]) -> Vec<u64> {
    let refs: Vec<&str> = oids.iter().map(String::as_str).collect();
    let out = agent.ok("snmpget", "2c", "public", &["-Oqv", "-Oe", "-Ot"], &refs);
    common::numbers(&out, oids.len())
}

fn col(entry: &str, c: u32, index: &str) -> String {
    format!("{entry}.{c}.{index}")
}

fn set(agent: &Agent, oid: &str, ty: &str, val: &str) -> std::process::Output {
    agent.tool(
        "snmpset",
        &["-v2c", "-c", "private", "-On", "-t", "2", "-r", "0"],
        &[oid, ty, val],
    )
}

/// Each (name.index, value) of `want` is in the walk `t` as given.
fn assert_cells(t: &BTreeMap<String, String>, want: &[(&str, &str)]) {
    for (k, v) in want {
        assert_eq!(t.get(*k).map(String::as_str), Some(*v), "{k}: {t:#?}");
    }
}

// ------------------------------------------------------------------ sim

#[test]
fn sim_tables_walk_with_the_shipped_mibs() {
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let t = walk(&agent, "IF-MIB::ifTable");
    assert_cells(
        &t,
        &[
            ("ifIndex.1", "INTEGER: 1"),
            ("ifType.1", "INTEGER: infiniband(199)"),
            ("ifDescr.1", "STRING: mlx5_0 port 1 4x HDR"),
            ("ifMtu.1", "INTEGER: 4096"),
            ("ifSpeed.1", "Gauge32: 4294967295"),
            ("ifAdminStatus.1", "INTEGER: up(1)"),
            ("ifOperStatus.1", "INTEGER: up(1)"),
        ],
    );
    assert!(
        t.get("ifPhysAddress.1")
            .is_some_and(|v| v.starts_with("STRING: 0:")),
        "{t:#?}"
    );
    assert!(t
        .get("ifInOctets.1")
        .is_some_and(|v| v.starts_with("Counter32: ")));
    // The local node (node01) is a dual-port HCA: port 2 (to leaf02) is an
    // interface of its own, and there is no third.
    assert_cells(&t, &[("ifDescr.2", "STRING: mlx5_0 port 2 4x HDR")]);
    assert!(!t.keys().any(|k| k.ends_with(".3")), "{t:#?}");
    let n = walk(&agent, "IF-MIB::ifNumber");
    assert_cells(&n, &[("ifNumber.0", "INTEGER: 2")]);

    let x = walk(&agent, "IF-MIB::ifXTable");
    assert_cells(
        &x,
        &[
            ("ifName.1", "STRING: mlx5_0/1"),
            ("ifHighSpeed.1", "Gauge32: 200000"),
        ],
    );
    assert!(x
        .get("ifHCInOctets.1")
        .is_some_and(|v| v.starts_with("Counter64: ")));
    assert_cells(
        &x,
        &[
            ("ifHCInBroadcastPkts.1", "Counter64: 0"),
            ("ifLinkUpDownTrapEnable.1", "INTEGER: enabled(1)"),
            ("ifConnectorPresent.1", "INTEGER: true(1)"),
            ("ifPromiscuousMode.1", "INTEGER: false(2)"),
            ("ifCounterDiscontinuityTime.1", "Timeticks: (0) 0:00:00.00"),
        ],
    );
    assert_eq!(x.len(), 2 * 19, "{x:#?}");

    let s = walk(&agent, "IF-MIB::ifStackTable");
    assert_cells(
        &s,
        &[
            ("ifStackStatus.0.1", "INTEGER: active(1)"),
            ("ifStackStatus.1.0", "INTEGER: active(1)"),
        ],
    );

    let ib = walk(&agent, "IB-IF-MIB::ibIfMIB");
    for c in [
        "ibIfPortSymbolErrs.1",
        "ibIfPortLinkErrRecovery.1",
        "ibIfPortLinkDowned.1",
        "ibIfPortStatRcvRemPhyErrs.1",
        "ibIfPortStatRcvConstrErrs.1",
        "ibIfPortStatLinkIntergrityErrs.1",
        "ibIfPortStatExcBufOverrunErrs.1",
        "ibIfPortStatVL15Dropped.1",
    ] {
        assert!(
            ib.get(c).is_some_and(|v| v.starts_with("Counter32: ")),
            "{c}: {ib:#?}"
        );
    }
    assert!(
        ib.get("ibIfVLInOctets.1.0")
            .is_some_and(|v| v.starts_with("Counter64: ")),
        "{ib:#?}"
    );
    assert!(ib.contains_key("ibIfVLInPkts.1.15"), "VL15 row: {ib:#?}");

    // The sim's ib0 over port 1: GID (fe80::...), QPN 0x48, reserved octet.
    let addr = agent.ok(
        "snmpget",
        "2c",
        "public",
        &["-Oqv", "-Ox"],
        &[&format!("{IB_IPOIB_ADDR}.1.1")],
    );
    let octets: Vec<&str> = addr
        .split_whitespace()
        .map(|h| h.trim_matches('"'))
        .filter(|h| !h.is_empty())
        .collect();
    assert_eq!(octets.len(), 20, "{addr}");
    assert_eq!(&octets[..2], &["FE", "80"], "{addr}");
    assert_eq!(&octets[16..], &["00", "00", "48", "00"], "{addr}");

    let or = walk(&agent, "SNMPv2-MIB::sysORID");
    let ids: Vec<&String> = or.values().collect();
    assert!(
        ids.iter().any(|v| v.as_str() == "OID: IF-MIB::ifMIB"),
        "{or:#?}"
    );
    assert!(
        ids.iter().any(|v| v.as_str() == "OID: IB-IF-MIB::ibIfMIB"),
        "{or:#?}"
    );
    // IB-PM-MIB's row names IB-PM-MIB, not IB-TC-MIB (which shares the
    // OIDs of its MODULE-IDENTITY).
    assert!(
        ids.iter()
            .any(|v| v.as_str() == "OID: IB-PM-MIB::pmClassPortInfoTable"),
        "{or:#?}"
    );
}

#[test]
fn sim_32_bit_counters_are_the_low_bits_and_never_go_backwards() {
    let agent = Agent::start(&["--sweep-interval", "0.2"]);
    // (Counter32 column in ifTable/ifXTable, its Counter64 twin in ifXTable)
    let pairs = [
        (col(IF_ENTRY, 10, "1"), col(IF_X_ENTRY, 6, "1")),
        (col(IF_ENTRY, 11, "1"), col(IF_X_ENTRY, 7, "1")),
        (col(IF_X_ENTRY, 2, "1"), col(IF_X_ENTRY, 8, "1")),
        (col(IF_ENTRY, 16, "1"), col(IF_X_ENTRY, 10, "1")),
        (col(IF_ENTRY, 17, "1"), col(IF_X_ENTRY, 11, "1")),
        (col(IF_X_ENTRY, 4, "1"), col(IF_X_ENTRY, 12, "1")),
    ];
    let mut oids: Vec<String> = pairs
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    oids.push(col(IF_X_ENTRY, 19, "1"));
    oids.push(col(IB_IF_VL_TRAFFIC_ENTRY, 5, "1.0"));
    oids.push(col(IB_IF_PORT_STAT_ENTRY, 2, "1"));
    let mut prev: Option<Vec<u64>> = None;
    let mut grew = false;
    for _ in 0..12 {
        let v = get_numbers(&agent, &oids);
        for (i, _) in pairs.iter().enumerate() {
            assert_eq!(
                v[2 * i],
                v[2 * i + 1] & 0xFFFF_FFFF,
                "{:?}: {v:?}",
                pairs[i]
            );
        }
        if let Some(p) = &prev {
            for (i, (a, b)) in p.iter().zip(&v).enumerate() {
                // Counter64s and the small error counter never decrease.
                if i % 2 == 1 || i > 2 * pairs.len() {
                    assert!(b >= a, "{} went back: {a} -> {b}", oids[i]);
                }
            }
            // A Counter32 moves forward by what its Counter64 twin moved,
            // modulo 2^32 (it wraps, never goes back or jumps).
            for i in 0..pairs.len() {
                let d32 = v[2 * i].wrapping_sub(p[2 * i]) & 0xFFFF_FFFF;
                let d64 = v[2 * i + 1].wrapping_sub(p[2 * i + 1]) & 0xFFFF_FFFF;
                assert_eq!(d32, d64, "{:?}: {p:?} -> {v:?}", pairs[i]);
            }
            grew |= v[1] > p[1];
            assert_eq!(v[2 * pairs.len()], 0, "ifCounterDiscontinuityTime moved");
        }
        prev = Some(v);
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(grew, "ifHCInOctets never moved across sweeps");
}

#[test]
fn if_alias_and_trap_enable_are_set_and_survive_a_restart() {
    let mut agent = Agent::start(&["--sweep-interval", "3600"]);
    let alias = col(IF_X_ENTRY, 18, "1");
    let trap = col(IF_X_ENTRY, 14, "1");
    let o = set(&agent, &alias, "s", "uplink to leaf01");
    assert!(o.status.success(), "{}", text(&o));
    let o = set(&agent, &trap, "i", "2");
    assert!(o.status.success(), "{}", text(&o));
    // Refusals: wrong type, too long, read-only, no such interface.
    let o = set(&agent, &alias, "i", "1");
    assert!(text(&o).contains("wrongType"), "{}", text(&o));
    let o = set(&agent, &alias, "s", &"x".repeat(65));
    assert!(text(&o).contains("wrongLength"), "{}", text(&o));
    let o = set(&agent, &trap, "i", "3");
    assert!(text(&o).contains("wrongValue"), "{}", text(&o));
    let o = set(&agent, &col(IF_ENTRY, 7, "1"), "i", "2");
    assert!(text(&o).contains("notWritable"), "{}", text(&o));
    let o = set(&agent, &col(IF_X_ENTRY, 18, "99"), "s", "x");
    assert!(text(&o).contains("noCreation"), "{}", text(&o));

    agent.restart();
    let x = walk(&agent, "IF-MIB::ifXTable");
    assert_eq!(
        x.get("ifAlias.1").map(String::as_str),
        Some("STRING: uplink to leaf01")
    );
    assert_eq!(
        x.get("ifLinkUpDownTrapEnable.1").map(String::as_str),
        Some("INTEGER: disabled(2)")
    );
}

// ---------------------------------------------------------------- sysfs

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            copy_tree(&e.path(), &dst);
        } else if ft.is_symlink() {
            let target = std::fs::read_link(e.path()).unwrap();
            std::os::unix::fs::symlink(target, dst).unwrap();
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A private copy of the kernel-like fixture tree of the sysfs source.
fn sysfs_root() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(
        &repo().join("crates/ib/tests/fixtures/sysfs/host"),
        tmp.path(),
    );
    tmp
}

fn dump_json(spec: &str) -> Json {
    let out = Command::new(BIN)
        .args(["dump", "--source", spec, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The local node's ports in a dump, by port number.
fn local_ports(dump: &Json) -> BTreeMap<u64, Json> {
    let local = dump["local_node"].as_str().expect("local node").to_string();
    let node = dump["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["guid"].as_str() == Some(&local) || n["node_guid"].as_str() == Some(&local))
        .unwrap_or_else(|| panic!("local node {local} not in dump"));
    node["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["num"].as_u64().unwrap(), p.clone()))
        .collect()
}

fn t(p: &Json, name: &str) -> u64 {
    p["counters"]["totals"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no total {name} in {p}"))
}

/// What IF-MIB must serve for a port, by the 2.4 formulas over its totals:
/// (OID, expected) pairs.
fn expected_if_counters(p: &Json, i: &str) -> Vec<(String, u64)> {
    let in_octets =
        t(p, "port_rcv_data") * 4 + t(p, "port_rcv_pkts") * 4 + t(p, "port_rcv_flow_pkts") * 8;
    let out_octets =
        t(p, "port_xmit_data") * 4 + t(p, "port_xmit_pkts") * 4 + t(p, "port_xmit_flow_pkts") * 8;
    // Unicast counters where the PMA has them (else every packet, 2.4).
    let unicast = p["counters"]["totals"]["unicast_counters"].as_bool() == Some(true);
    let (rcv_ucast, xmit_ucast) = if unicast {
        (
            t(p, "port_unicast_rcv_pkts"),
            t(p, "port_unicast_xmit_pkts"),
        )
    } else {
        (t(p, "port_rcv_pkts"), t(p, "port_xmit_pkts"))
    };
    let out_ucast = xmit_ucast + t(p, "port_xmit_discards") + t(p, "port_xmit_constraint_errors");
    let lo = |v: u64| v & 0xFFFF_FFFF;
    vec![
        (col(IF_X_ENTRY, 6, i), in_octets),
        (col(IF_ENTRY, 10, i), lo(in_octets)),
        (col(IF_X_ENTRY, 10, i), out_octets),
        (col(IF_ENTRY, 16, i), lo(out_octets)),
        (col(IF_X_ENTRY, 7, i), rcv_ucast),
        (col(IF_ENTRY, 11, i), lo(rcv_ucast)),
        (col(IF_X_ENTRY, 11, i), out_ucast),
        (col(IF_ENTRY, 17, i), lo(out_ucast)),
        (
            col(IF_ENTRY, 13, i),
            lo(t(p, "port_rcv_constraint_errors") + t(p, "vl15_dropped")),
        ),
        (
            col(IF_ENTRY, 14, i),
            lo(t(p, "port_rcv_remote_physical_errors") + t(p, "port_rcv_errors")),
        ),
        (
            col(IF_ENTRY, 19, i),
            lo(t(p, "port_xmit_discards") + t(p, "port_xmit_constraint_errors")),
        ),
        (col(IF_ENTRY, 15, i), 0),
        (col(IF_ENTRY, 20, i), 0),
        (col(IF_X_ENTRY, 8, i), t(p, "port_multicast_rcv_pkts")),
        (col(IF_X_ENTRY, 12, i), t(p, "port_multicast_xmit_pkts")),
        (col(IF_X_ENTRY, 9, i), 0),
        (col(IF_X_ENTRY, 13, i), 0),
    ]
    .into_iter()
    // ibIfPortStatTable: each column one PMA counter's low 32 bits.
    .chain(
        [
            (2, "symbol_error_counter"),
            (3, "link_error_recovery_counter"),
            (4, "link_downed_counter"),
            (7, "port_rcv_remote_physical_errors"),
            (8, "port_rcv_constraint_errors"),
            (13, "local_link_integrity_errors"),
            (14, "excessive_buffer_overrun_errors"),
            (15, "vl15_dropped"),
        ]
        .map(|(c, field)| (col(IB_IF_PORT_STAT_ENTRY, c, i), lo(t(p, field)))),
    )
    .collect()
}

fn assert_values(agent: &Agent, expected: &[(String, u64)]) {
    let oids: Vec<String> = expected.iter().map(|e| e.0.clone()).collect();
    let got = get_numbers(agent, &oids);
    for ((oid, want), got) in expected.iter().zip(got) {
        assert_eq!(got, *want, "{oid}");
    }
}

#[test]
fn sysfs_values_equal_the_formulas_over_the_dumped_counters() {
    let root = sysfs_root();
    let spec = format!("sysfs:{}", root.path().display());
    let dump = dump_json(&spec);
    let ports = local_ports(&dump);
    assert!(!ports.is_empty());
    let agent = Agent::start(&["--source", &spec, "--sweep-interval", "3600"]);
    let n = agent.get_number(IF_NUMBER);
    assert_eq!(n, ports.len() as u64);
    for (num, p) in &ports {
        if p["counters"].is_null() {
            continue;
        }
        assert_values(&agent, &expected_if_counters(p, &num.to_string()));
    }
    // ifDescr names the device; the IPoIB address is the netdev's, in
    // IbIpoibClientIdentifier order (GID, QPN, reserved).
    let t = walk(&agent, "IF-MIB::ifDescr");
    assert!(
        t.get("ifDescr.1")
            .is_some_and(|v| v.starts_with("STRING: mlx4_0 port 1")),
        "{t:#?}"
    );
    let addr = std::fs::read_to_string(root.path().join("sys/class/net/ib1/address")).unwrap();
    let octets: Vec<u8> = addr
        .trim()
        .split(':')
        .map(|h| u8::from_str_radix(h, 16).unwrap())
        .collect();
    let mut want: Vec<u8> = octets[4..].to_vec();
    want.extend_from_slice(&octets[1..4]);
    want.push(octets[0]);
    let out = agent.ok("snmpwalk", "2c", "public", &["-Ox"], &[IB_IPOIB_ADDR]);
    let hex: Vec<String> = want.iter().map(|b| format!("{b:02X}")).collect();
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&hex.join(" ")), "want {hex:?} in\n{out}");
}

fn write(root: &Path, rel: &str, v: u64) {
    std::fs::write(root.join(rel), format!("{v}\n")).unwrap();
}

fn read(root: &Path, rel: &str) -> u64 {
    std::fs::read_to_string(root.join(rel))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Waits until the agent has swept again (its sweep interval is 0.2 s).
fn settle() {
    std::thread::sleep(Duration::from_millis(800));
}

#[test]
fn sysfs_resets_by_others_and_saturation_never_move_counters_back() {
    let root = sysfs_root();
    let r = root.path();
    let spec = format!("sysfs:{}", r.display());
    let agent = Agent::start(&["--source", &spec, "--sweep-interval", "0.2"]);
    let port = "sys/class/infiniband/mlx4_0/ports/1";
    let hc_in = col(IF_X_ENTRY, 6, "1");
    let sym = col(IB_IF_PORT_STAT_ENTRY, 2, "1");
    let in_err = col(IF_ENTRY, 14, "1");
    let disc = col(IF_X_ENTRY, 19, "1");
    let watch = [hc_in.clone(), sym.clone(), in_err.clone(), disc.clone()];
    let v0 = get_numbers(&agent, &watch);

    // Someone else resets the counters (perfquery -R / -x -R): the files drop.
    let data = format!("{port}/counters_ext/port_rcv_data_64");
    let before = read(r, &data);
    write(r, &data, 10);
    write(r, &format!("{port}/counters/symbol_error"), 0);
    write(r, &format!("{port}/counters/port_rcv_errors"), 0);
    settle();
    let v1 = get_numbers(&agent, &watch);
    assert!(
        v1[0] >= v0[0] + 40,
        "ifHCInOctets after a reset: {v0:?} -> {v1:?}"
    );
    assert!(v1[1] >= v0[1] && v1[2] >= v0[2], "{v0:?} -> {v1:?}");
    assert_eq!(v1[3], v0[3], "a reset by someone else is no discontinuity");

    // Counting on from the reset value adds exactly the increase.
    write(r, &data, 10 + 1000);
    write(r, &format!("{port}/counters/symbol_error"), 65535);
    settle();
    let v2 = get_numbers(&agent, &watch);
    assert_eq!(v2[0], v1[0] + 4000, "{v1:?} -> {v2:?} (data was {before})");
    assert_eq!(v2[1], v1[1] + 65535);
    // A saturated 16-bit counter that stays saturated adds nothing.
    settle();
    let v3 = get_numbers(&agent, &watch);
    assert_eq!(v3[1], v2[1]);
    // Reset to 0, then 3 more errors: +3, never backwards.
    write(r, &format!("{port}/counters/symbol_error"), 0);
    settle();
    write(r, &format!("{port}/counters/symbol_error"), 3);
    settle();
    let v4 = get_numbers(&agent, &watch);
    assert_eq!(v4[1], v3[1] + 3);
    assert_eq!(v4[3], v0[3]);

    // A real discontinuity: the port disappears for a sweep and comes back.
    let ports_dir = r.join("sys/class/infiniband/mlx4_0/ports");
    let hidden = r.join("port1-away");
    std::fs::rename(ports_dir.join("1"), &hidden).unwrap();
    settle();
    assert_eq!(agent.get_number(IF_NUMBER), 1, "port 1 gone");
    let gone = get_numbers(&agent, &[IF_TABLE_LAST_CHANGE.to_string()])[0];
    assert!(gone > 0, "ifTableLastChange moves when a row goes");
    std::fs::rename(&hidden, ports_dir.join("1")).unwrap();
    settle();
    let v5 = get_numbers(&agent, &watch);
    assert!(
        v5[3] > 0,
        "ifCounterDiscontinuityTime moves on a real discontinuity: {v5:?}"
    );
    settle();
    let v6 = get_numbers(&agent, &watch);
    assert_eq!(v6[3], v5[3], "and then stays");
}
