//! Every node of the fabric as an SNMP context (issue 39), read with real
//! clients against the running agent on the simulated fabric: net-snmp's
//! tools with `community@context` (v2c) and `-n` (v3), snmptable, pysnmp
//! with a contextName, snmp_exporter's if_mib module with `context_name`; counters equal the 2.4 formulas over the totals
//! `ibsnmpd dump --format json` prints; ifAlias set per node and kept
//! across a restart; VACM: with `node_contexts = "none"` a community gets
//! nothing there; `fabric_link_traps`: linkDown/linkUp for a port of a node
//! other than the agent's, with that node's ifIndex.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::collections::BTreeMap;

use common::{text, Agent};
use serde_json::Value as Json;

const SYS_NAME: &str = ".1.3.6.1.2.1.1.5.0";
const SYS_DESCR: &str = ".1.3.6.1.2.1.1.1.0";
const SYS_CONTACT: &str = ".1.3.6.1.2.1.1.4.0";
const IF_NUMBER: &str = ".1.3.6.1.2.1.2.1.0";
const IF_X_ENTRY: &str = ".1.3.6.1.2.1.31.1.1.1";
const IF_HC_IN_OCTETS: &str = ".1.3.6.1.2.1.31.1.1.1.6";
const IF_HC_OUT_OCTETS: &str = ".1.3.6.1.2.1.31.1.1.1.10";
const IF_IN_ERRORS: &str = ".1.3.6.1.2.1.2.2.1.14";
const IF_ALIAS: &str = ".1.3.6.1.2.1.31.1.1.1.18";
const VACM_CONTEXT_NAME: &str = ".1.3.6.1.6.3.16.1.1.1.1";
const ENT_LOGICAL_DESCR: &str = ".1.3.6.1.2.1.47.1.2.1.1.2";
const ENT_LOGICAL_CONTEXT_NAME: &str = ".1.3.6.1.2.1.47.1.2.1.1.8";

const CONFIG: &str = r#"
[[rocommunity]]
community = "public"

[[user]]
name = "ops"
auth = "SHA"
auth_pass = "ops-auth-1"
priv = "AES"
priv_pass = "ops-priv-1"

[[rouser]]
user = "ops"
level = "priv"
"#;

fn start(head: &str) -> (Agent, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ibsnmpd.toml");
    common::write_private(&path, &format!("{head}{CONFIG}"));
    let cfg = path.display().to_string();
    (Agent::start(&["--config", &cfg]), dir)
}

fn ops() -> Vec<&'static str> {
    common::usm_args("ops", "ops-auth-1", Some("ops-priv-1"))
}

/// `OID = TYPE: value` lines of a numeric walk, by the instance after `root`.
fn by_index(out: &str, root: &str) -> BTreeMap<u32, String> {
    out.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(" = ")?;
            let i = k.strip_prefix(root)?.strip_prefix('.')?.parse().ok()?;
            Some((i, v.split_once(": ").map_or(v, |x| x.1).to_string()))
        })
        .collect()
}

/// The sim's switch `name`: its GUID context name and its dumped ports
/// (the sweep the agent shows is not the dump's: only port sets and names
/// are compared with it, counters with one Get from the agent).
fn switch(name: &str) -> (String, Json) {
    let o = std::process::Command::new(common::BIN)
        .args(["dump", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let dump: Json = serde_json::from_slice(&o.stdout).unwrap();
    let node = dump["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["description"].as_str() == Some(name))
        .unwrap()
        .clone();
    let guid = node["guid"]
        .as_str()
        .unwrap()
        .trim_start_matches("0x")
        .to_string();
    (guid, node)
}

#[test]
fn a_switch_is_a_device_by_name_and_by_guid_v2c_v3_and_snmptable() {
    let (agent, _cfg) = start("");
    let (guid, node) = switch("leaf01");
    let ports = node["ports"].as_array().unwrap().len() - 1; // no port 0 interface
    let by_name = agent.get_in("public@leaf01", &[SYS_NAME, IF_NUMBER]);
    assert!(
        by_name.contains("STRING: \"leaf01\"") || by_name.contains("STRING: leaf01"),
        "{by_name}"
    );
    assert!(by_name.contains(&format!("INTEGER: {ports}")), "{by_name}");
    let by_guid = agent.get_in(&format!("public@{guid}"), &[SYS_DESCR]);
    assert!(by_guid.contains("InfiniBand switch"), "{by_guid}");
    // The default context is the agent itself, as always.
    let own = agent.get(&[SYS_DESCR]);
    assert!(own.contains("ibsnmpd"), "{own}");

    // Every port of the switch in ifXTable, over v2c and v3 alike.
    let v2 = agent.ok("snmpwalk", "2c", "public@leaf01", &[], &[IF_HC_IN_OCTETS]);
    let rows = by_index(&v2, IF_HC_IN_OCTETS);
    assert_eq!(rows.len(), ports, "{v2}");
    assert_eq!(
        rows.keys().copied().collect::<Vec<_>>(),
        (1..=ports as u32).collect::<Vec<_>>()
    );
    let mut args = ops();
    args.extend(["-n", "leaf01"]);
    let v3 = agent.tool("snmpwalk", &args, &[IF_X_ENTRY]);
    assert!(v3.status.success(), "{}", text(&v3));
    let v3 = String::from_utf8_lossy(&v3.stdout);
    assert_eq!(by_index(&v3, IF_HC_OUT_OCTETS).len(), ports, "{v3}");
    let names = by_index(&v3, ".1.3.6.1.2.1.31.1.1.1.1");
    assert_eq!(
        names.get(&37).map(String::as_str),
        Some("\"leaf01/37\""),
        "{names:?}"
    );

    // snmptable with the shipped MIBs: one row per port.
    let o = common::with_mib("snmptable", "IF-MIB")
        .args([
            "-v2c",
            "-c",
            "public@leaf01",
            "-Cf",
            "|",
            "-CH",
            "-t",
            "2",
            "-r",
            "1",
        ])
        .arg(&agent.target)
        .arg("IF-MIB::ifXTable")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = table.lines().filter(|l| l.starts_with("leaf01/")).collect();
    assert_eq!(lines.len(), ports, "{table}");

    // vacmContextTable lists the default context and every node's.
    let ctx = agent.ok("snmpwalk", "2c", "public", &[], &[VACM_CONTEXT_NAME]);
    assert!(ctx.contains("\"leaf01\""), "{ctx}");
    assert!(ctx.contains(&format!("\"{guid}\"")), "{ctx}");

    // ENTITY-MIB's entLogicalTable in the default context: one row per
    // node, its GUID context named; sysORTable lists ENTITY-MIB.
    let logical = agent.ok("snmpwalk", "2c", "public", &[], &[ENT_LOGICAL_CONTEXT_NAME]);
    let rows = by_index(&logical, ENT_LOGICAL_CONTEXT_NAME);
    assert_eq!(rows.len(), 12, "{logical}");
    assert!(
        rows.values().any(|v| *v == format!("\"{guid}\"")),
        "{logical}"
    );
    let descr = agent.ok("snmpwalk", "2c", "public", &[], &[ENT_LOGICAL_DESCR]);
    assert!(descr.contains("\"leaf01\""), "{descr}");
    let or = agent.ok("snmpwalk", "2c", "public", &[], &[".1.3.6.1.2.1.1.9.1.2"]);
    assert!(or.contains("OID: .1.3.6.1.2.1.47\n"), "{or}");
}

/// A node's counters are the model's accumulated totals: they grow from
/// sweep to sweep and never go back (their values against the 2.4
/// formulas over the dumped totals of the same snapshot are checked in
/// crates/mibs' node_context tests; against perfquery on ibsim in
/// tests/node_contexts_ibsim.rs).
#[test]
fn counters_follow_the_totals_and_never_go_back() {
    let (agent, _cfg) = start("");
    let first = by_index(
        &agent.ok("snmpwalk", "2c", "public@spine01", &[], &[IF_HC_IN_OCTETS]),
        IF_HC_IN_OCTETS,
    );
    let errors = by_index(
        &agent.ok("snmpwalk", "2c", "public@spine01", &[], &[IF_IN_ERRORS]),
        IF_IN_ERRORS,
    );
    assert!(!first.is_empty());
    assert_eq!(first.len(), errors.len());
    let mut grew = false;
    common::poll(
        std::time::Duration::from_secs(30),
        std::time::Duration::from_millis(500),
        || {
            let later = by_index(
                &agent.ok("snmpwalk", "2c", "public@spine01", &[], &[IF_HC_IN_OCTETS]),
                IF_HC_IN_OCTETS,
            );
            for (i, v) in &later {
                let (a, b) = (common::number(&first[i]), common::number(v));
                assert!(b >= a, "port {i}: {a} -> {b}");
                grew |= b > a;
            }
            if grew {
                Ok(())
            } else {
                Err("no sweep yet".to_string())
            }
        },
    );
}

#[test]
fn if_alias_is_set_per_node_and_survives_a_restart() {
    let (mut agent, _cfg) = start("");
    let set = agent.tool(
        "snmpset",
        &["-v2c", "-c", "private@leaf02", "-On", "-t", "2", "-r", "1"],
        &[&format!("{IF_ALIAS}.37"), "s", "to-spine02"],
    );
    assert!(set.status.success(), "{}", text(&set));
    agent.restart();
    let leaf02 = agent.get_in("public@leaf02", &[&format!("{IF_ALIAS}.37")]);
    assert!(leaf02.contains("to-spine02"), "{leaf02}");
    let leaf01 = agent.get_in("public@leaf01", &[&format!("{IF_ALIAS}.37")]);
    assert!(!leaf01.contains("to-spine02"), "{leaf01}");
    // Kept beside state.json, not in it.
    let (guid, _) = switch("leaf02");
    let log = std::fs::read_to_string(agent.state_dir.join("node-contexts.log")).unwrap();
    assert!(log.contains(&format!("\"{guid}\"")), "{log}");
    let state = std::fs::read_to_string(agent.state_dir.join("state.json")).unwrap_or_default();
    assert!(!state.contains(&guid.to_string()), "{state}");
}

/// 20,000 ifAlias Sets in node contexts (a read-write community filling
/// every port of 80 switches of 254 ports) leave a Set's cost as it was:
/// state.json does not grow (an unrelated sysContact Set writes the same
/// bytes before and after), and a node's Set appends the same bytes to
/// the node contexts' log whatever it holds. The Sets' wall times
/// (snmpset's, medians of a few before and after) are printed, not
/// asserted.
#[test]
fn an_if_alias_flood_leaves_the_cost_of_a_set_flat() {
    let dir = tempfile::tempdir().unwrap();
    let source = common::fat_tree(dir.path(), 8128, 254);
    let agent = Agent::start(&["--source", &source]);
    let set = |community: &str, oids: &[String]| {
        let oids: Vec<&str> = oids.iter().map(String::as_str).collect();
        let t = std::time::Instant::now();
        let o = agent.tool(
            "snmpset",
            &["-v2c", "-c", community, "-On", "-t", "10", "-r", "0"],
            &oids,
        );
        assert!(
            o.status.success(),
            "{community} {}: {}\n{}",
            oids[0],
            text(&o),
            agent
                .log_text()
                .lines()
                .rev()
                .take(10)
                .collect::<Vec<_>>()
                .join("\n")
        );
        t.elapsed()
    };
    let contact = |i: usize| {
        vec![
            SYS_CONTACT.to_string(),
            "s".into(),
            format!("ops-{}", i % 10),
        ]
    };
    let alias = |port: u32, text: &str| vec![format!("{IF_ALIAS}.{port}"), "s".into(), text.into()];
    let state = agent.state_dir.join("state.json");
    let log = agent.state_dir.join("node-contexts.log");
    let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let median = |mut v: Vec<std::time::Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    // Before: sysContact Sets, one node's alias Set.
    let before: Vec<_> = (0..5).map(|i| set("private", &contact(i))).collect();
    let state_before = size(&state);
    let l0 = size(&log);
    set("private@spine0001", &alias(1, "uplink-0001"));
    let per_set_before = size(&log) - l0;
    // The flood: every port of 80 switches (the 64 leaves, 16 spines),
    // 127 varbinds a Set.
    let switches = (1..=64)
        .map(|i| format!("leaf{i:04}"))
        .chain((2..=17).map(|i| format!("spine{i:04}")));
    let mut count = 0;
    for switch in switches {
        for half in [1..=127u32, 128..=254] {
            let oids: Vec<String> = half
                .flat_map(|p| alias(p, &format!("{switch}/{p:03} to somewhere")))
                .collect();
            count += oids.len() / 3;
            set(&format!("private@{switch}"), &oids);
        }
    }
    assert!(count >= 20_000, "{count}");
    // After: the same Sets.
    let after: Vec<_> = (0..5).map(|i| set("private", &contact(i))).collect();
    assert_eq!(size(&state), state_before, "state.json grew");
    let l1 = size(&log);
    set("private@spine0001", &alias(1, "uplink-0002"));
    assert_eq!(size(&log) - l1, per_set_before, "a node's Set wrote more");
    let got = agent.get_in("private@spine0017", &[&format!("{IF_ALIAS}.254")]);
    assert!(got.contains("spine0017/254 to somewhere"), "{got}");
    println!(
        "{count} aliases set; sysContact Set (snmpset wall time) median before {:?}, after {:?}; \
         state.json {state_before} bytes before and after; node log {} bytes",
        median(before),
        median(after),
        size(&log)
    );
}

#[test]
fn pysnmp_reads_a_node_context() {
    let (agent, _cfg) = start("");
    let script = format!(
        r#"
import pysnmp.hlapi as h
user = h.UsmUserData('ops', 'ops-auth-1', 'ops-priv-1',
    authProtocol=h.usmHMACSHAAuthProtocol, privProtocol=h.usmAesCfb128Protocol)
n = 0
for e, s, i, vbs in h.nextCmd(h.SnmpEngine(), user,
        h.UdpTransportTarget(('127.0.0.1', {port}), timeout=2, retries=1),
        h.ContextData(contextName=b'leaf01'),
        h.ObjectType(h.ObjectIdentity('{IF_HC_IN_OCTETS}'.lstrip('.'))),
        lexicographicMode=False):
    assert e is None and not s, (e, s)
    n += 1
e, s, i, vbs = next(h.getCmd(h.SnmpEngine(), user,
        h.UdpTransportTarget(('127.0.0.1', {port}), timeout=2, retries=1),
        h.ContextData(contextName=b'leaf01'),
        h.ObjectType(h.ObjectIdentity('{SYS_NAME}'.lstrip('.')))))
assert e is None and not s, (e, s)
print(n, vbs[0][1].prettyPrint())
"#,
        port = agent.port
    );
    let o = std::process::Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let (_, node) = switch("leaf01");
    let ports = node["ports"].as_array().unwrap().len() - 1;
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("{ports} leaf01")
    );
}

/// `node_contexts = "none"`: the contexts exist (vacmContextTable lists
/// them) but the community's and the user's access stays in the default
/// context: v2c gets no answer (counted as a bad community use), v3 an
/// authorizationError.
#[test]
fn without_node_contexts_a_community_gets_nothing_there() {
    let (agent, _cfg) = start("node_contexts = \"none\"\n");
    let o = agent.tool(
        "snmpget",
        &["-v2c", "-c", "public@leaf01", "-On", "-t", "1", "-r", "0"],
        &[SYS_NAME],
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Timeout"), "{}", text(&o));
    let mut args = ops();
    args.extend(["-n", "leaf01"]);
    let o = agent.tool("snmpget", &args, &[SYS_NAME]);
    assert!(
        text(&o).contains("authorizationError") || text(&o).contains("Authorization"),
        "{}",
        text(&o)
    );
    // The default context is unchanged.
    agent.get(&[SYS_NAME]);
    let ctx = agent.ok("snmpwalk", "2c", "public", &[], &[VACM_CONTEXT_NAME]);
    assert!(ctx.contains("\"leaf01\""), "{ctx}");

    // "off": no node contexts at all; the user, whose access does not
    // reach them, gets the same answer as where they exist (which
    // contexts exist is not told to those whose access does not reach
    // them).
    let (agent, _cfg) = start("node_contexts = \"off\"\n");
    let mut args = ops();
    args.extend(["-n", "leaf01"]);
    let o = agent.tool("snmpget", &args, &[SYS_NAME]);
    assert!(text(&o).contains("authorizationError"), "{}", text(&o));
    let ctx = agent.ok("snmpwalk", "2c", "public", &[], &[VACM_CONTEXT_NAME]);
    assert!(!ctx.contains("leaf01"), "{ctx}");
    let logical = agent.ok("snmpwalk", "2c", "public", &[], &[ENT_LOGICAL_CONTEXT_NAME]);
    assert!(!logical.contains("STRING"), "{logical}");
}

/// A flap of leaf02 port 37 (to spine01 port 2): no IF-MIB trap by
/// default (neither end is the agent's node); with `fabric_link_traps`
/// linkDown and linkUp for both ends, each with its node's ifIndex.
#[test]
fn fabric_link_traps_name_the_node_port() {
    for (on, want) in [(false, 0), (true, 2)] {
        let trapd = trapd::Trapd::start();
        let dir = tempfile::tempdir().unwrap();
        let config = if on { "fabric_link_traps = true\n" } else { "" };
        let (_agent, socket) =
            common::agent_with_socket(dir.path(), config, &["--trap2sink", &trapd.addr()]);
        common::ctl(&socket, &["link-flap", "leaf02", "37", "0.5"]);
        let t = trapd.wait(
            std::time::Duration::from_secs(15),
            "in service again",
            // linkDown/linkUp leave in the same update as the switch link
            // state changes, before them.
            |t| {
                trapd::count(t, "ibSmTrapSwitchLinkStateChanged") >= 4
                    && trapd::count(t, "linkUp") >= want
            },
        );
        assert_eq!(trapd::count(&t, "linkDown"), want, "{t:?}");
        assert_eq!(trapd::count(&t, "linkUp"), want, "{t:?}");
        if on {
            let downs = trapd::named(&t, "linkDown");
            let indexes: Vec<&str> = downs
                .iter()
                .filter_map(|x| x.object("IF-MIB::ifIndex"))
                .collect();
            assert!(indexes.contains(&"INTEGER: 37"), "{downs:?}");
            assert!(indexes.contains(&"INTEGER: 2"), "{downs:?}");
            // The v2c trap names its node and port: ifIndex 37 is also a
            // port of the agent's own node and of every other switch.
            let (guid, _) = switch("leaf02");
            let leaf02 = downs
                .iter()
                .find(|x| x.object("IF-MIB::ifIndex") == Some("INTEGER: 37"))
                .unwrap();
            assert_eq!(leaf02.pdu, "TRAP2", "{leaf02:?}");
            assert_eq!(
                leaf02.object("IF-MIB::ifName.37"),
                Some("STRING: leaf02/37"),
                "{leaf02:?}"
            );
            assert_eq!(
                leaf02.object("IF-MIB::ifDescr.37"),
                Some("STRING: leaf02 port 37"),
                "{leaf02:?}"
            );
            let octets: Vec<String> = (0..8)
                .map(|i| {
                    let b = u8::from_str_radix(&guid[2 * i..2 * i + 2], 16).unwrap();
                    format!("{b:x}")
                })
                .collect();
            assert_eq!(
                leaf02.object("IB-SM-MIB::ibSmTrapNodeGUID1.0"),
                Some(&*format!("STRING: {}", octets.join(":"))),
                "{leaf02:?}"
            );
        }
    }
}

/// Prometheus' snmp_exporter (Debian's prometheus-snmp-exporter and its
/// generator) polling a node's context with its `context_name` over
/// SNMPv3: the if_mib module's walk gives one series per port of leaf01,
/// labelled with the port's ifName.
#[test]
fn snmp_exporter_if_mib_polls_a_node_context() {
    let (agent, _cfg) = start("");
    let tmp = tempfile::tempdir().unwrap();
    let body = common::snmp_exporter_scrape(
        tmp.path(),
        r#"
modules:
  if_mib:
    version: 3
    auth:
      username: ops
      security_level: authPriv
      auth_protocol: SHA
      password: ops-auth-1
      priv_protocol: AES
      priv_password: ops-priv-1
      context_name: leaf01
    walk: [sysUpTime, interfaces, ifXTable]
    lookups:
      - source_indexes: [ifIndex]
        lookup: ifName
"#,
        "if_mib",
        &agent.target,
    );
    let (_, node) = switch("leaf01");
    let ports = node["ports"].as_array().unwrap().len() - 1;
    let series: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("ifHCInOctets{"))
        .collect();
    assert_eq!(series.len(), ports, "{body}");
    assert!(
        series
            .iter()
            .any(|l| l.contains("ifIndex=\"37\"") && l.contains("ifName=\"leaf01/37\"")),
        "{series:?}"
    );
}
