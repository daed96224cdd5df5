//! IB-PM-MIB on the umad source over ibsim + OpenSM (the testbed of
//! `ib_testbed`): PortSelect then the counters equal perfquery's for several
//! nodes, a counter Set clears it in the PMA (perfquery shows it), and ibsim's
//! PMA, which lacks PortSamplesControl, gets a software sampling run.

mod common;

use std::process::Output;
use std::time::{Duration, Instant};

use common::{guid_hex_index as guid_index, parse_lines, UmadAgent, BIN};
use ib_testbed::{Testbed, TestbedConfig, SMALL_NET};
use serde_json::Value as Json;

const SC: &str = ".1.3.6.1.3.117.1.2.1";
const SR: &str = ".1.3.6.1.3.117.1.3.1";
const PC: &str = ".1.3.6.1.3.117.1.4.1";

/// pmPortCounters columns and perfquery's names.
const COUNTERS: [(u32, &str); 16] = common::PM_COLUMNS;

impl UmadAgent {
    /// Sweeps once at start and then only after Sets (or software-sampling
    /// timers), so the counters it serves are those of a known moment.
    fn start_pm(tb: &Testbed) -> UmadAgent {
        // Ready once the first sweep is in: some node row exists.
        let ready = |a: &UmadAgent| {
            let next = a.snmp("snmpgetnext", "public", &[".1.3.6.1.3.117.1.1.1.1"]);
            String::from_utf8_lossy(&next.stdout).contains(".1.3.6.1.3.117.1.1.1.1.")
        };
        let args = ["--sweep-interval", "3600"];
        UmadAgent::start(tb, None, &args, Duration::from_secs(30), ready)
    }

    fn snmp(&self, tool: &str, community: &str, rest: &[&str]) -> Output {
        self.v2c(tool, community, &["-On", "-t", "3", "-r", "0"], rest)
    }

    fn get(&self, oids: &[String]) -> Vec<String> {
        let refs: Vec<&str> = oids.iter().map(String::as_str).collect();
        let out = self.snmp("snmpget", "public", &refs);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = parse_lines(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(rows.len(), oids.len());
        rows.into_iter().map(|(_, v)| v).collect()
    }

    fn set(&self, community: &str, vbs: &[(String, &str, String)]) -> Output {
        let mut args: Vec<&str> = vec![];
        for (o, t, v) in vbs {
            args.extend([o.as_str(), *t, v.as_str()]);
        }
        self.snmp("snmpset", community, &args)
    }

    fn set_ok(&self, vbs: &[(String, &str, String)]) {
        let out = self.set("private", vbs);
        assert!(
            out.status.success(),
            "snmpset: {}{}\nagent log:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log_text()
        );
    }
}

/// (description, GUID, LID) of every node, from `ibsnmpd dump --source umad`.
fn nodes(tb: &Testbed) -> Vec<(String, String, u64)> {
    let out = tb
        .command(BIN)
        .args(["dump", "--source", "umad", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Json = serde_json::from_slice(&out.stdout).unwrap();
    d["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["description"].as_str().unwrap().to_string(),
                n["guid"].as_str().unwrap().to_string(),
                n["lid"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn node<'a>(ns: &'a [(String, String, u64)], desc: &str) -> &'a (String, String, u64) {
    ns.iter()
        .find(|n| n.0 == desc)
        .unwrap_or_else(|| panic!("{desc} not in {ns:?}"))
}

/// perfquery LID PORT, as name -> value.
fn perfquery(tb: &Testbed, lid: u64, port: u8) -> std::collections::BTreeMap<String, u64> {
    let out = tb
        .run_diag("perfquery", &[&lid.to_string(), &port.to_string()])
        .unwrap();
    assert!(out.success(), "perfquery {lid} {port}: {}", out.stderr);
    out.stdout
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let v = v.trim_start_matches('.');
            let v = if let Some(h) = v.strip_prefix("0x") {
                u64::from_str_radix(h, 16).ok()?
            } else {
                v.parse().ok()?
            };
            Some((k.trim().to_string(), v))
        })
        .collect()
}

fn as_u32(v: &str) -> u64 {
    let i: i64 = v.trim_start_matches("INTEGER: ").trim().parse().unwrap();
    (i as i32 as u32).into()
}

/// The 16 counter columns `vals` of a row equal perfquery's `pq`: the error
/// counters exactly, data and packets within what MADs through the port(s)
/// (`ports` of them) add between the agent's sweep and perfquery (OpenSM's
/// sweeps, the other perfquery calls, the agent's own).
fn assert_row_equals(
    what: &str,
    vals: &[String],
    pq: &std::collections::BTreeMap<String, u64>,
    ports: u64,
) {
    for ((_, name), v) in COUNTERS.iter().zip(vals) {
        let ours = as_u32(v);
        let theirs = pq[*name];
        if ours != theirs {
            println!("{what} {name}: agent {ours}, perfquery {theirs}");
        }
        if name.starts_with("PortXmit") && (name.ends_with("Data") || name.ends_with("Pkts"))
            || name.starts_with("PortRcv") && (name.ends_with("Data") || name.ends_with("Pkts"))
        {
            let slack = ports
                * if name.ends_with("Data") {
                    72 * 300
                } else {
                    300
                };
            assert!(
                ours <= theirs && theirs - ours <= slack,
                "{what} {name}: agent {ours}, perfquery {theirs}"
            );
        } else {
            assert_eq!(ours, theirs, "{what} {name}");
        }
    }
    println!("{what}: {} counters equal perfquery's", COUNTERS.len());
}

fn console(tb: &Testbed, cmd: &str) {
    tb.console(cmd)
        .unwrap_or_else(|e| panic!("ibsim console {cmd}: {e}"));
}

#[test]
fn umad_port_select_counters_equal_perfquery_and_clear() {
    let Ok(tb) = Testbed::start(TestbedConfig::new(SMALL_NET)) else {
        panic!("ibsim testbed did not start (apt-get install ibsim-utils opensm infiniband-diags)");
    };
    let ns = nodes(&tb);

    // Distinct error counts on the ports compared, so equality means something.
    let ports = [
        ("Hca1", 1u8),
        ("Hca2", 1),
        ("Hca4", 1),
        ("Switch1", 3),
        ("Switch2", 1),
    ];
    for (i, (desc, port)) in ports.iter().enumerate() {
        let i = i as u64 + 1;
        for (field, v) in [
            ("SymbolErrorCounter", i),
            ("LinkDownedCounter", i + 1),
            ("PortRcvErrors", 10 * i),
            ("PortXmitDiscards", 20 * i),
            ("VL15Dropped", 30 * i),
        ] {
            console(
                &tb,
                &format!("PerformanceSet \"{desc}\"[{port}] PortCounters.{field}={v}"),
            );
        }
    }
    // Its first sweep reads them.
    let agent = UmadAgent::start_pm(&tb);

    for (desc, port) in ports {
        let (_, g, lid) = node(&ns, desc);
        let idx = guid_index(g);
        agent.set_ok(&[(format!("{PC}.2.{idx}"), "i", port.to_string())]);
        let mut oids = vec![format!("{PC}.2.{idx}")];
        oids.extend(COUNTERS.iter().map(|(c, _)| format!("{PC}.{c}.{idx}")));
        let vals = agent.get(&oids);
        // perfquery later: MADs since the agent's sweep (OpenSM's sweeps,
        // the other perfquery calls, its own) add packets to the traffic
        // counters of ports on their path; error counters do not move.
        let pq = perfquery(&tb, *lid, port);
        assert_eq!(vals[0], format!("INTEGER: {port}"));
        assert_row_equals(&format!("{desc}[{port}]"), &vals[1..], &pq, 1);
    }

    // Clear SymbolErrors and PortXmitDiscards of Hca2 port 1 in one Set.
    let (_, g, lid) = node(&ns, "Hca2");
    let idx = guid_index(g);
    agent.set_ok(&[(format!("{PC}.2.{idx}"), "i", "1".into())]);
    assert!(perfquery(&tb, *lid, 1)["SymbolErrorCounter"] > 0);
    agent.set_ok(&[
        (format!("{PC}.3.{idx}"), "i", "0".into()),
        (format!("{PC}.9.{idx}"), "i", "0".into()),
    ]);
    // The next read already shows it (the agent re-reads after the Set)...
    let v = agent.get(&[
        format!("{PC}.3.{idx}"),
        format!("{PC}.9.{idx}"),
        format!("{PC}.6.{idx}"),
    ]);
    assert_eq!(v[0], "INTEGER: 0");
    assert_eq!(v[1], "INTEGER: 0");
    assert_eq!(v[2], "INTEGER: 20", "PortRcvErrors was not selected");
    // ...and so does the PMA.
    let pq = perfquery(&tb, *lid, 1);
    assert_eq!(pq["SymbolErrorCounter"], 0);
    assert_eq!(pq["PortXmitDiscards"], 0);
    assert_eq!(pq["PortRcvErrors"], 20);

    // The read-only community cannot.
    let out = agent.set("public", &[(format!("{PC}.6.{idx}"), "i", "0".into())]);
    assert!(!out.status.success());
    assert_eq!(perfquery(&tb, *lid, 1)["PortRcvErrors"], 20);

    // All ports of a switch (ibsim's switch PMAs have AllPortSelect).
    let (_, g, lid) = node(&ns, "Switch1");
    let sidx = guid_index(g);
    agent.set_ok(&[(format!("{PC}.2.{sidx}"), "i", "255".into())]);
    agent.set_ok(&[(format!("{PC}.5.{sidx}"), "i", "0".into())]);
    assert_eq!(perfquery(&tb, *lid, 3)["LinkDownedCounter"], 0);
}

#[test]
fn umad_software_sampling_when_the_pma_lacks_it() {
    let Ok(tb) = Testbed::start(TestbedConfig::new(SMALL_NET)) else {
        panic!("ibsim testbed did not start");
    };
    let ns = nodes(&tb);
    let agent = UmadAgent::start_pm(&tb);
    let (_, g, lid) = node(&ns, "Hca3");
    let idx = guid_index(g);
    let base = perfquery(&tb, *lid, 1)["PortXmitPkts"];

    // 0.5 s start, ~2 s interval; PortXmitPkts and PortRcvData.
    agent.set_ok(&[
        (format!("{SC}.3.{idx}"), "i", "1".into()),
        (format!("{SC}.28.{idx}"), "i", "3".into()),
        (format!("{SC}.29.{idx}"), "i", "2".into()),
        (format!("{SC}.25.{idx}"), "i", "500000".into()),
        (format!("{SC}.26.{idx}"), "i", "2000000".into()),
        (format!("{SC}.27.{idx}"), "x", "00000042".into()),
    ]);
    assert!(
        agent.log_text().contains("sampling this node in software"),
        "no log line about software sampling:\n{}",
        agent.log_text()
    );
    let st = agent.get(&[format!("{SC}.22.{idx}"), format!("{SC}.4.{idx}")]);
    assert_eq!(st[0], "INTEGER: 1", "SampleStart timer running");
    assert_eq!(st[1], "INTEGER: 255", "Tick");
    // During the interval the port transmits a million packets.
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(agent.get(&[format!("{SC}.22.{idx}")])[0], "INTEGER: 2");
    let now = perfquery(&tb, *lid, 1)["PortXmitPkts"];
    console(
        &tb,
        &format!(
            "PerformanceSet \"Hca3\"[1] PortCounters.PortXmitPkts={}",
            now + 1_000_000
        ),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while agent.get(&[format!("{SC}.22.{idx}")])[0] != "INTEGER: 0" {
        assert!(
            Instant::now() < deadline,
            "sampling did not complete: {}",
            agent.log_text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let r = agent.get(&common::row_oids(SR, 2..=5, &idx));
    assert_eq!(r[0], "Hex-STRING: 00 00 00 42 ");
    assert_eq!(r[1], "INTEGER: 0");
    let pkts: u64 = r[2].trim_start_matches("Counter32: ").parse().unwrap();
    // A million plus the few MADs that crossed the port meanwhile.
    assert!(
        (1_000_000..1_000_100).contains(&pkts),
        "result {pkts} (PortXmitPkts was {base} before the run)"
    );
    let log = agent.log_text();
    let done = log
        .lines()
        .find(|l| l.contains("software sampling run complete"))
        .unwrap_or_else(|| panic!("no completion logged:\n{log}"));
    println!("PortXmitPkts sampled: {pkts}; {done}");
}

/// A switch port read through the switch's PortSelect 255 sum (switch_sums,
/// the default): its 32-bit PortXmitData/PortRcvData/PortXmitPkts/PortRcvPkts
/// follow the 64-bit PortCountersExtended within a sweep, saturated at
/// 0xFFFFFFFF as a PMA's 32-bit counters are, and so does PortSelect 255's
/// sum. ibsim keeps the 32-bit and 64-bit counters apart, so the truth is
/// `perfquery -x` saturated at 32 bits.
#[test]
fn switch_port_32_bit_data_follow_the_extended_counters() {
    let Ok(tb) = Testbed::start(TestbedConfig::new(SMALL_NET)) else {
        panic!("ibsim testbed did not start");
    };
    let ns = nodes(&tb);
    let (_, g, lid) = node(&ns, "Switch2");
    let idx = guid_index(g);
    let ready = |a: &UmadAgent| {
        let next = a.snmp("snmpgetnext", "public", &[".1.3.6.1.3.117.1.1.1.1"]);
        String::from_utf8_lossy(&next.stdout).contains(".1.3.6.1.3.117.1.1.1.1.")
    };
    let agent = UmadAgent::start(
        &tb,
        Some("Hca1"),
        &["--sweep-interval", "0.5"],
        Duration::from_secs(30),
        ready,
    );
    const DATA: [(u32, &str); 4] = [
        (15, "PortXmitData"),
        (16, "PortRcvData"),
        (17, "PortXmitPkts"),
        (18, "PortRcvPkts"),
    ];
    let sat = |v: u64| v.min(u64::from(u32::MAX));
    let extended = |port: u8| common::perfquery(&tb, &["-x", &lid.to_string(), &port.to_string()]);
    // MADs through the port between the agent's sweep and perfquery.
    let slack = |name: &str| {
        if name.ends_with("Data") {
            72 * 300
        } else {
            300
        }
    };
    agent.set_ok(&[(format!("{PC}.2.{idx}"), "i", "1".into())]);
    for base in [1_000_000u64, 3_000_000_000, 6_000_000_000, 9_000_000_000] {
        let set: Vec<(&str, u64)> = DATA
            .iter()
            .enumerate()
            .map(|(i, (_, n))| (*n, base + i as u64))
            .collect();
        for (name, v) in &set {
            console(
                &tb,
                &format!("PerformanceSet \"Switch2\"[1] PortCountersExtended.{name}={v}"),
            );
        }
        // Within a sweep or two the columns show the values set (they only
        // grow from there); polled up to a generous bound.
        let oids: Vec<String> = DATA
            .iter()
            .map(|(c, _)| format!("{PC}.{c}.{idx}"))
            .collect();
        let deadline = Instant::now() + Duration::from_secs(30);
        let got = loop {
            let got: Vec<u64> = agent.get(&oids).iter().map(|v| as_u32(v)).collect();
            if got.iter().zip(&set).all(|(g, (_, v))| *g >= sat(*v)) {
                break got;
            }
            assert!(
                Instant::now() < deadline,
                "Switch2[1] 32-bit data/packets never followed {set:?}: {got:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        let pq = extended(1);
        for ((_, name), ours) in DATA.iter().zip(&got) {
            let theirs = sat(pq[*name]);
            assert!(
                *ours <= theirs && theirs - ours <= slack(name),
                "base {base}: {name} agent {ours}, perfquery -x saturated {theirs}"
            );
        }
        println!("base {base}: Switch2[1] {got:?} (perfquery -x saturated)");
    }
    assert_eq!(
        as_u32(&agent.get(&[format!("{PC}.15.{idx}")])[0]),
        u64::from(u32::MAX),
        "saturated"
    );
    // PortSelect 255: the saturating sum of the linked ports' values.
    agent.set_ok(&[(format!("{PC}.2.{idx}"), "i", "255".into())]);
    let oids: Vec<String> = DATA
        .iter()
        .map(|(c, _)| format!("{PC}.{c}.{idx}"))
        .collect();
    let got: Vec<u64> = agent.get(&oids).iter().map(|v| as_u32(v)).collect();
    let linked = [1u8, 2, 3, 5];
    let per_port: Vec<_> = linked.iter().map(|&p| extended(p)).collect();
    for ((_, name), ours) in DATA.iter().zip(&got) {
        let theirs = sat(per_port.iter().map(|pq| sat(pq[*name])).sum());
        assert!(
            *ours <= theirs && theirs - ours <= 4 * slack(name),
            "PortSelect 255 {name}: agent {ours}, sum of perfquery -x {theirs}"
        );
    }
    assert_eq!(got[0], u64::from(u32::MAX), "the sum saturates");
}

/// Issue 35.1: a switch port without a link is read (switch PMAs answer for
/// every port, and errors from before the link went down stay there): its
/// row equals `perfquery LID PORT`, and PortSelect 255 sums every port as
/// `perfquery -a LID` does. An HCA port without a link has no PMA anyone can
/// reach: its columns are absent (noSuchInstance), never zeros.
#[test]
fn unlinked_switch_port_and_the_all_port_sum_equal_perfquery() {
    let Ok(tb) = Testbed::start(TestbedConfig::new(SMALL_NET)) else {
        panic!("ibsim testbed did not start");
    };
    let ns = nodes(&tb);
    for (port, field, v) in [
        (4, "SymbolErrorCounter", 7),
        (4, "LinkDownedCounter", 2),
        (4, "PortRcvErrors", 5),
        (4, "PortXmitDiscards", 3),
        (4, "VL15Dropped", 4),
        (7, "LinkErrorRecoveryCounter", 6),
        (1, "SymbolErrorCounter", 1),
    ] {
        console(
            &tb,
            &format!("PerformanceSet \"Switch2\"[{port}] PortCounters.{field}={v}"),
        );
    }
    let agent = UmadAgent::start_pm(&tb);
    let (_, g, lid) = node(&ns, "Switch2");
    let idx = guid_index(g);
    let columns: Vec<String> = COUNTERS
        .iter()
        .map(|(c, _)| format!("{PC}.{c}.{idx}"))
        .collect();
    agent.set_ok(&[(format!("{PC}.2.{idx}"), "i", "4".into())]);
    let vals = agent.get(&columns);
    let pq = common::perfquery(&tb, &[&lid.to_string(), "4"]);
    assert_eq!(pq["SymbolErrorCounter"], 7, "{pq:?}");
    assert_row_equals("Switch2[4] (no link)", &vals, &pq, 1);

    agent.set_ok(&[(format!("{PC}.2.{idx}"), "i", "255".into())]);
    let vals = agent.get(&columns);
    let pq = common::perfquery(&tb, &["-a", &lid.to_string()]);
    assert_eq!(pq["SymbolErrorCounter"], 8, "{pq:?}");
    assert_row_equals("Switch2 PortSelect 255", &vals, &pq, 8);

    // Hca1 port 2 has no link.
    let (_, g, _) = node(&ns, "Hca1");
    let idx = guid_index(g);
    agent.set_ok(&[(format!("{PC}.2.{idx}"), "i", "2".into())]);
    let out = agent.snmp("snmpget", "public", &[&format!("{PC}.3.{idx}")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("No Such Instance"), "{text}");
}
