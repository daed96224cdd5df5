//! IB-PM-MIB served by the real binary over the simulated fabric, driven by
//! net-snmp's tools: walks of the four tables, PortSelect and counter Sets
//! (compared with `ibsnmpd dump --format json`), a sampling run started over
//! SNMP, and refused Sets.

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{
    assert_increasing, guid_hex_index as guid_index, parse_lines, require_tool, text, Agent, BIN,
};
use serde_json::Value as Json;

const PM: &str = ".1.3.6.1.3.117.1";
const CPI: &str = ".1.3.6.1.3.117.1.1.1";
const SC: &str = ".1.3.6.1.3.117.1.2.1";
const SR: &str = ".1.3.6.1.3.117.1.3.1";
const PC: &str = ".1.3.6.1.3.117.1.4.1";

/// pmPortCounters columns 3..=18 and the dump's PortCounters field names:
/// the PMA's names ([`common::PM_COLUMNS`]) in snake case.
static COUNTERS: std::sync::LazyLock<Vec<(u32, String)>> = std::sync::LazyLock::new(|| {
    common::PM_COLUMNS
        .iter()
        .map(|(c, name)| (*c, snake_case(name)))
        .collect()
});

/// `PortRcvErrors` -> `port_rcv_errors`, `VL15Dropped` -> `vl15_dropped`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut prev: Option<char> = None;
    for ch in name.chars() {
        if ch.is_ascii_uppercase()
            && prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
        {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
        prev = Some(ch);
    }
    out
}

/// The sim's snapshot as `ibsnmpd dump --format json` prints it.
fn dump() -> Json {
    let out = Command::new(BIN)
        .args(["dump", "--source", "sim", "--format", "json"])
        .output()
        .expect("run ibsnmpd dump");
    assert!(out.status.success(), "dump failed: {}", text(&out));
    serde_json::from_slice(&out.stdout).expect("dump JSON")
}

fn nodes(d: &Json) -> Vec<Json> {
    d["nodes"].as_array().expect("nodes").clone()
}

fn is_switch(n: &Json) -> bool {
    n["type"] == "Switch"
}

/// The dump's raw PortCounters of port `num` of node `n`.
fn dump_counters(n: &Json, num: u64) -> Json {
    n["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| p["num"].as_u64() == Some(num))
        .map(|p| p["counters"]["raw"]["counters"].clone())
        .unwrap_or_else(|| panic!("no port {num} in {}", n["guid"]))
}

/// The Integer32 of a pmPortCounters column as the unsigned IBA value.
fn as_u32(v: &str) -> u64 {
    let i: i64 = v
        .trim_start_matches("INTEGER: ")
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not an INTEGER: {v:?}"));
    (i as i32 as u32).into()
}

fn get(agent: &Agent, oids: &[String]) -> Vec<String> {
    let refs: Vec<&str> = oids.iter().map(String::as_str).collect();
    let out = agent.ok("snmpget", "2c", "public", &[], &refs);
    let rows = parse_lines(&out);
    assert_eq!(rows.len(), oids.len(), "{out}");
    rows.into_iter().map(|(_, v)| v).collect()
}

fn set(agent: &Agent, community: &str, vbs: &[(String, &str, String)]) -> Output {
    let mut args: Vec<String> = vec![];
    for (o, t, v) in vbs {
        args.extend([o.clone(), t.to_string(), v.clone()]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    agent.tool(
        "snmpset",
        &["-v2c", "-c", community, "-On", "-t", "3", "-r", "0"],
        &refs,
    )
}

fn set_ok(agent: &Agent, vbs: &[(String, &str, String)]) {
    let out = set(agent, "private", vbs);
    assert!(
        out.status.success(),
        "snmpset failed: {}\nagent log:\n{}",
        text(&out),
        agent.log_text()
    );
}

/// pmPortCounters' counter columns ([`COUNTERS`]) of the row `idx`.
fn counter_oids(idx: &str) -> Vec<String> {
    COUNTERS
        .iter()
        .map(|(c, _)| format!("{PC}.{c}.{idx}"))
        .collect()
}

fn set_err(agent: &Agent, vbs: &[(String, &str, String)], error: &str) {
    let out = set(agent, "private", vbs);
    let t = text(&out);
    assert!(
        !out.status.success(),
        "snmpset should fail with {error}: {t}"
    );
    assert!(t.contains(error), "expected {error}: {t}");
}

#[test]
fn walk_all_four_tables() {
    let d = dump();
    let ns = nodes(&d);
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let out = agent.ok("snmpwalk", "2c", "public", &[], &[PM]);
    let rows = parse_lines(&out);
    assert_increasing(&rows);
    // Columns x rows: 2 + 42 + 18 + 18 columns, one row per node.
    assert_eq!(rows.len(), (2 + 42 + 18 + 18) * ns.len(), "{out}");
    let value = |oid: String| -> String {
        let want: Vec<u32> = oid
            .trim_start_matches('.')
            .split('.')
            .map(|s| s.parse().unwrap())
            .collect();
        rows.iter()
            .find(|(o, _)| *o == want)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{oid} not in the walk"))
    };
    for n in &ns {
        let g = n["guid"].as_str().unwrap();
        let idx = guid_index(g);
        let hex = format!("{:016X}", u64::from_str_radix(&g[2..], 16).unwrap());
        let spaced: Vec<String> = (0..8).map(|i| hex[2 * i..2 * i + 2].to_string()).collect();
        for table in [CPI, SC, SR, PC] {
            assert_eq!(
                value(format!("{table}.1.{idx}")),
                format!("Hex-STRING: {} ", spaced.join(" ")),
                "GUID column of {table} for {g}"
            );
        }
        let all_ports = n["pma"]["capability_mask"].as_u64().unwrap() & 0x100 != 0;
        assert_eq!(
            value(format!("{CPI}.2.{idx}")),
            format!("INTEGER: {}", if all_ports { 1 } else { 2 })
        );
        assert_eq!(
            value(format!("{PC}.2.{idx}")),
            "INTEGER: 1",
            "default PortSelect"
        );
        assert_eq!(
            value(format!("{SC}.22.{idx}")),
            "INTEGER: 0",
            "SampleStatus"
        );
    }
    // Switches of the sim support AllPortSelect, its HCAs do not.
    assert!(ns.iter().any(is_switch));

    // The shipped MIB file names every column.
    let named = common::with_mib("snmpwalk", "IB-PM-MIB")
        .args(["-v2c", "-c", "public", &agent.target, PM])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&named.stdout);
    assert!(
        named.status.success() && named.stderr.is_empty(),
        "{}",
        text(&named)
    );
    for name in [
        "pmClassPortInfoAllPortSelect",
        "pmPortSampleCntrlCounterSelect14",
        "pmPortSampleResultCounter14",
        "pmResultSampleStatus",
        "pmPortCountersRcvPkts",
    ] {
        assert!(t.contains(&format!("IB-PM-MIB::{name}.")), "{name} missing");
    }
}

/// Counters equal the dump's. The sim's traffic follows its clock since the
/// source started, and the agent and `dump` sample it a few milliseconds
/// apart in two processes: counters the model does not move (errors,
/// saturated data counters) must be equal, moving ones equal within 0.1%.
fn assert_counters_match(agent_vals: &[String], dump: &Json, what: &str) {
    for ((col, field), v) in COUNTERS.iter().zip(agent_vals) {
        let got = as_u32(v);
        let want = dump[field]
            .as_u64()
            .unwrap_or_else(|| panic!("{field} in dump"));
        let moving = matches!(*col, 15..=18) && want != u64::from(u32::MAX);
        if moving {
            let tol = want / 1000 + 10;
            assert!(
                got.abs_diff(want) <= tol,
                "{what} {field}: agent {got}, dump {want}"
            );
        } else {
            assert_eq!(got, want, "{what} {field}");
        }
    }
}

#[test]
fn port_select_then_counters_equal_the_sims() {
    let d = dump();
    let ns = nodes(&d);
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let sw = ns.iter().find(|n| is_switch(n)).expect("a switch");
    let ca = ns.iter().find(|n| !is_switch(n)).expect("an HCA");
    for (n, port) in [(sw, 3u64), (sw, 7), (ca, 1)] {
        let idx = guid_index(n["guid"].as_str().unwrap());
        set_ok(&agent, &[(format!("{PC}.2.{idx}"), "i", port.to_string())]);
        let mut oids = vec![format!("{PC}.2.{idx}")];
        oids.extend(COUNTERS.iter().map(|(c, _)| format!("{PC}.{c}.{idx}")));
        let vals = get(&agent, &oids);
        assert_eq!(vals[0], format!("INTEGER: {port}"));
        assert_counters_match(
            &vals[1..],
            &dump_counters(n, port),
            &format!("{} port {port}", n["guid"]),
        );
    }

    // A port the node lacks reads as zeros (IBA).
    let idx = guid_index(ca["guid"].as_str().unwrap());
    set_ok(&agent, &[(format!("{PC}.2.{idx}"), "i", "9".into())]);
    assert!(get(&agent, &counter_oids(&idx))
        .iter()
        .all(|v| v == "INTEGER: 0"));

    // 255 on an HCA without AllPortSelect: wrongValue, nothing changed.
    set_err(
        &agent,
        &[(format!("{PC}.2.{idx}"), "i", "255".into())],
        "wrongValue",
    );
    assert_eq!(get(&agent, &[format!("{PC}.2.{idx}")])[0], "INTEGER: 9");

    // 255 on a switch: the sum of its ports, saturating at IBA's widths.
    let sidx = guid_index(sw["guid"].as_str().unwrap());
    set_ok(&agent, &[(format!("{PC}.2.{sidx}"), "i", "255".into())]);
    let vals = get(&agent, &counter_oids(&sidx));
    let ports: Vec<u64> = sw["ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["num"].as_u64())
        .filter(|&p| p != 0)
        .collect();
    // Error counters are the model's and do not move: exact sums.
    for ((col, field), v) in COUNTERS.iter().zip(&vals).take(12) {
        let widths: BTreeMap<u32, u64> = [
            (3, 16),
            (4, 8),
            (5, 8),
            (6, 16),
            (7, 16),
            (8, 16),
            (9, 16),
            (10, 8),
            (11, 8),
            (12, 4),
            (13, 4),
            (14, 16),
        ]
        .into_iter()
        .collect();
        let max = (1u64 << widths[col]) - 1;
        let sum: u64 = ports
            .iter()
            .map(|&p| dump_counters(sw, p)[field].as_u64().unwrap())
            .sum();
        assert_eq!(as_u32(v), sum.min(max), "aggregate {field}");
    }

    // PortSelect is agent state and survives a restart.
    let mut agent = agent;
    agent.restart();
    assert_eq!(get(&agent, &[format!("{PC}.2.{sidx}")])[0], "INTEGER: 255");
    assert_eq!(get(&agent, &[format!("{PC}.2.{idx}")])[0], "INTEGER: 9");
}

#[test]
fn counter_set_to_zero_clears_it() {
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let d = dump();
    let ns = nodes(&d);
    // A port whose PortXmitPkts is moving and not saturated.
    let (n, port) = ns
        .iter()
        .flat_map(|n| {
            n["ports"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["num"].as_u64() != Some(0))
                .map(move |p| (n, p["num"].as_u64().unwrap()))
        })
        .find(|(n, p)| {
            let v = dump_counters(n, *p)["port_xmit_pkts"].as_u64().unwrap();
            v > 1_000_000 && v < u64::from(u32::MAX) / 2
        })
        .expect("a port with unsaturated PortXmitPkts");
    let idx = guid_index(n["guid"].as_str().unwrap());
    set_ok(&agent, &[(format!("{PC}.2.{idx}"), "i", port.to_string())]);
    let pkts = format!("{PC}.17.{idx}");
    let before = as_u32(&get(&agent, std::slice::from_ref(&pkts))[0]);
    assert!(before > 1_000_000, "{before}");

    // Clear PortXmitPkts and SymbolErrors in one request: one PMA Set.
    set_ok(
        &agent,
        &[
            (pkts.clone(), "i", "0".into()),
            (format!("{PC}.3.{idx}"), "i", "0".into()),
        ],
    );
    let vals = get(
        &agent,
        &[
            pkts.clone(),
            format!("{PC}.3.{idx}"),
            format!("{PC}.18.{idx}"),
        ],
    );
    let after = as_u32(&vals[0]);
    // Read right after the Set: what the PMA counted since (milliseconds).
    assert!(after < before / 100, "PortXmitPkts {before} -> {after}");
    assert_eq!(vals[1], "INTEGER: 0");
    // Counters not selected are untouched.
    assert!(
        as_u32(&vals[2]) > 1_000_000,
        "PortRcvPkts was cleared too: {}",
        vals[2]
    );

    // Only 0 is accepted (PMAs clear whatever value is written).
    set_err(&agent, &[(pkts.clone(), "i", "5".into())], "wrongValue");
    set_err(&agent, &[(pkts.clone(), "u", "0".into())], "wrongType");
    // The GUID column is read-only.
    set_err(
        &agent,
        &[(format!("{PC}.1.{idx}"), "x", "0000000000000000".into())],
        "notWritable",
    );
    // A counter of a port the node lacks: inconsistentValue.
    set_ok(&agent, &[(format!("{PC}.2.{idx}"), "i", "200".into())]);
    set_err(&agent, &[(pkts, "i", "0".into())], "inconsistentValue");
}

/// The audit log names what was sent: the PortSelect of the same PDU, the
/// node's GUID in hex and its name; never the community.
#[test]
fn the_set_log_names_the_port_the_pdu_selects() {
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let d = dump();
    let n = nodes(&d)
        .into_iter()
        .find(|n| !is_switch(n) && n["ports"].as_array().unwrap().len() >= 2)
        .expect("an HCA with two ports");
    let guid = n["guid"].as_str().unwrap().to_string();
    let idx = guid_index(&guid);
    set_ok(&agent, &[(format!("{PC}.2.{idx}"), "i", "1".into())]);
    // PortSelect 2 and a clear of SymbolErrors in one PDU.
    set_ok(
        &agent,
        &[
            (format!("{PC}.2.{idx}"), "i", "2".into()),
            (format!("{PC}.3.{idx}"), "i", "0".into()),
        ],
    );
    let log = agent.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("Set applied to the fabric"))
        .unwrap_or_else(|| panic!("no audit line:\n{log}"));
    let hex = format!(
        "{:#018x}",
        u64::from_str_radix(guid.trim_start_matches("0x"), 16).unwrap()
    );
    assert!(
        line.contains(&format!("Set(PortCounters) {hex} port 2 ")),
        "{line}"
    );
    let name = n["description"].as_str().unwrap();
    assert!(line.contains(name), "{name} in {line}");
    assert!(line.contains("community from 127.0.0.1"), "{line}");
    assert!(!line.contains("private"), "{line}");
}

#[test]
fn read_only_community_cannot_set() {
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let d = dump();
    let n = &nodes(&d)[0];
    let idx = guid_index(n["guid"].as_str().unwrap());
    for (oid, ty, val) in [
        (format!("{PC}.2.{idx}"), "i", "1"),
        (format!("{PC}.17.{idx}"), "i", "0"),
        (format!("{SC}.26.{idx}"), "i", "1000"),
    ] {
        let out = set(&agent, "public", &[(oid.clone(), ty, val.to_string())]);
        assert!(
            !out.status.success(),
            "Set with the read-only community succeeded: {}",
            text(&out)
        );
        let t = text(&out);
        assert!(
            t.contains("noAccess") || t.contains("authorizationError"),
            "{t}"
        );
    }
    assert_eq!(get(&agent, &[format!("{SC}.26.{idx}")])[0], "INTEGER: 0");
}

/// One consistent reading of a sampling run (one Get = one snapshot).
#[derive(Debug, Clone, Copy)]
struct Obs {
    status: u64,
    xmit_pkts: u64,
}

#[test]
fn sampling_run_over_snmp_completes_with_the_sims_deltas() {
    require_tool("snmpset");
    let agent = Agent::start(&["--sweep-interval", "0.1"]);
    let d = dump();
    let ns = nodes(&d);
    // An HCA whose PortXmitPkts (the bracket below reads it through
    // pmPortCountersXmitPkts, 32 bits) is far from saturation.
    let n = ns
        .iter()
        .filter(|n| !is_switch(n))
        .find(|n| dump_counters(n, 1)["port_xmit_pkts"].as_u64().unwrap() < u64::from(u32::MAX) / 2)
        .expect("an HCA with unsaturated PortXmitPkts");
    let idx = guid_index(n["guid"].as_str().unwrap());
    set_ok(&agent, &[(format!("{PC}.2.{idx}"), "i", "1".into())]);

    // Tick 0xFF = 1.024 us: start after ~0.5 s, sample ~1.5 s.
    set_ok(
        &agent,
        &[
            (format!("{SC}.3.{idx}"), "i", "1".into()),
            (format!("{SC}.28.{idx}"), "i", "3".into()), // PortXmitPkts
            (format!("{SC}.29.{idx}"), "i", "5".into()), // PortXmitWait
            (format!("{SC}.30.{idx}"), "i", "1".into()), // PortXmitData
            (format!("{SC}.26.{idx}"), "i", "1500000".into()),
            (format!("{SC}.25.{idx}"), "i", "500000".into()),
            (format!("{SC}.27.{idx}"), "x", "0000BEEF".into()),
        ],
    );
    let cntrl = get(
        &agent,
        &[
            format!("{SC}.4.{idx}"),
            format!("{SC}.5.{idx}"),
            format!("{SC}.27.{idx}"),
            format!("{SC}.28.{idx}"),
        ],
    );
    assert_eq!(cntrl[0], "INTEGER: 255", "Tick");
    assert_eq!(cntrl[1], "INTEGER: 4", "CounterWidth 32 bits");
    assert_eq!(cntrl[2], "Hex-STRING: 00 00 BE EF ");
    assert_eq!(cntrl[3], "INTEGER: 3");

    // Another application's run (another Tag) collides: commitFailed.
    set_err(
        &agent,
        &[
            (format!("{SC}.27.{idx}"), "x", "00000001".into()),
            (format!("{SC}.26.{idx}"), "i", "10".into()),
        ],
        "commitFailed",
    );

    // Poll status and counters in one Get (one snapshot) until done.
    let oids = [format!("{SC}.22.{idx}"), format!("{PC}.17.{idx}")];
    let mut seen: Vec<Obs> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let v = get(&agent, &oids);
        let o = Obs {
            status: as_u32(&v[0]),
            xmit_pkts: as_u32(&v[1]),
        };
        seen.push(o);
        if o.status == 0 && seen.iter().any(|s| s.status == 2) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "sampling did not complete: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    let statuses: Vec<u64> = seen.iter().map(|o| o.status).collect();
    assert!(
        statuses.contains(&1),
        "SampleStatus 1 never seen: {statuses:?}"
    );
    // 1 -> 2 -> 0 in order.
    let first2 = statuses.iter().position(|&s| s == 2).unwrap();
    assert!(statuses[..first2].iter().all(|&s| s == 1), "{statuses:?}");
    assert!(
        statuses[first2..statuses.len() - 1].iter().all(|&s| s == 2),
        "{statuses:?}"
    );

    let res = get(&agent, &common::row_oids(SR, 2..=7, &idx));
    assert_eq!(res[0], "Hex-STRING: 00 00 BE EF ");
    assert_eq!(res[1], "INTEGER: 0");
    let counter = |s: &str| -> u64 { s.trim_start_matches("Counter32: ").parse().unwrap() };
    let (r_xmit, r_wait, r_data, r_none) = (
        counter(&res[2]),
        counter(&res[3]),
        counter(&res[4]),
        counter(&res[5]),
    );
    assert_eq!(r_none, 0, "CounterSelect3 = 0 is not a quantity");
    assert!(r_data > 0 && r_wait > 0, "{res:?}");

    // The run covered [start, end]; snapshots with status 1 were taken
    // before start, with status 0 at the end after it, with status 2 inside:
    //   delta(last 2 - first 2) <= result <= delta(first 0 - last 1).
    let last1 = seen[first2 - 1];
    let first2o = seen[first2];
    let last2 = seen[seen.len() - 2];
    let end0 = seen[seen.len() - 1];
    let lower = last2.xmit_pkts - first2o.xmit_pkts;
    let upper = end0.xmit_pkts - last1.xmit_pkts;
    eprintln!("PortXmitPkts: result {r_xmit}, sweeps inside {lower}, sweeps around {upper}");
    assert!(
        lower <= r_xmit && r_xmit <= upper,
        "PortXmitPkts: {lower} <= {r_xmit} <= {upper} fails ({seen:?})"
    );
    assert!(lower > 0, "no two sweeps inside the interval: {seen:?}");
}

#[test]
fn sample_control_sets_are_checked_first() {
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let d = dump();
    let ns = nodes(&d);
    let ca = ns.iter().find(|n| !is_switch(n)).unwrap();
    let idx = guid_index(ca["guid"].as_str().unwrap());
    // (column, type, value, error) of one varbind in the CA's row. Tag is
    // 4 octets carrying IBA's 16-bit Tag; PortSelect 255 needs
    // AllPortSelect.
    for (c, ty, v, error) in [
        (27, "x", "0001", "wrongLength"),
        (27, "x", "00010000", "wrongValue"),
        (28, "i", "65536", "wrongValue"),
        (2, "i", "256", "wrongValue"),
        (3, "i", "255", "wrongValue"),
        (4, "i", "1", "notWritable"),
        (22, "i", "0", "notWritable"),
    ] {
        set_err(&agent, &[(format!("{SC}.{c}.{idx}"), ty, v.into())], error);
    }
    // No such row.
    set_err(
        &agent,
        &[(format!("{SC}.26.9.9.9.9.9.9.9.9"), "i", "5".into())],
        "noCreation",
    );
    // One bad varbind: nothing of the request happens (no run started).
    set_err(
        &agent,
        &[
            (format!("{SC}.26.{idx}"), "i", "1000".into()),
            (format!("{SC}.27.{idx}"), "x", "00".into()),
        ],
        "wrongLength",
    );
    let v = get(
        &agent,
        &[format!("{SC}.22.{idx}"), format!("{SC}.26.{idx}")],
    );
    assert_eq!(v, ["INTEGER: 0", "INTEGER: 0"]);
}
