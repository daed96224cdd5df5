//! The shipped MIBs with ordinary managers' tools: net-snmp's snmptable
//! renders IB-PM-MIB's four tables, and Prometheus' snmp_exporter scrapes
//! them with a module its generator made from mibs/.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::Agent;

const TABLES: [&str; 4] = [
    "pmClassPortInfoTable",
    "pmPortSampleCntrlTable",
    "pmPortSampleResultTable",
    "pmPortCountersTable",
];

fn mib_dirs() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../mibs");
    format!("{}:{}", root.display(), root.join("ietf").display())
}

/// `snmptable -OX` (indexes formatted with their DISPLAY-HINT): every table,
/// one row per node of the sim fabric, GUIDs in IbGuid's `1x:` form.
#[test]
fn snmptable_renders_every_ib_pm_table() {
    common::require_tool("snmptable");
    let agent = Agent::start(&[]);
    let nodes = 12; // the default sim fabric
    for t in TABLES {
        let out = snmptable(&agent, &format!("IB-PM-MIB::{t}"), &["-OX"]);
        let rows: Vec<&str> = out.lines().filter(|l| l.contains('|')).skip(1).collect();
        assert_eq!(rows.len(), nodes, "{t}:\n{out}");
        // The first column is the GUID, formatted; rows are distinct.
        let mut guids: Vec<&str> = rows.iter().map(|r| r.split('|').next().unwrap()).collect();
        assert!(
            guids.iter().all(|g| g.split(':').count() == 8),
            "{t}:\n{out}"
        );
        guids.dedup();
        assert_eq!(guids.len(), nodes, "{t}:\n{out}");
    }
}

/// The ten GUID-indexed tables. Plain `snmptable` cannot walk them:
/// net-snmp prints a binary string index as quoted text ('........' for
/// every GUID) and takes the equal strings for "OID not increasing".
/// `-Cb -Ob` (the invocation README.md and docs/mibs.md give) and `-Cb -OX`
/// work for each, rows distinct by index.
#[test]
fn snmptable_walks_every_guid_indexed_table() {
    common::require_tool("snmptable");
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let tables = [
        "IB-PM-MIB::pmClassPortInfoTable",
        "IB-PM-MIB::pmPortSampleCntrlTable",
        "IB-PM-MIB::pmPortSampleResultTable",
        "IB-PM-MIB::pmPortCountersTable",
        "IB-SM-MIB::ibSmNodeInfoTable",
        "IB-SM-MIB::ibSmPortInfoTable",
        "IB-SM-MIB::ibSmSwitchInfoTable",
        "IB-SM-MIB::ibSmSMInfoTable",
        "IB-SM-MIB::ibSmLinkTable",
        "IB-SM-MIB::ibSmGUIDInfoTable",
    ];
    for t in tables {
        for hint in ["-Ob", "-OX"] {
            let out = snmptable(&agent, t, &["-Cb", "-Ci", hint]);
            let rows: Vec<&str> = out.lines().filter(|l| l.contains('|')).skip(1).collect();
            assert!(!rows.is_empty(), "{t} {hint}:\n{out}");
            let mut index: Vec<&str> = rows.iter().map(|r| r.split('|').next().unwrap()).collect();
            index.sort();
            index.dedup();
            assert_eq!(index.len(), rows.len(), "{t} {hint}:\n{out}");
        }
    }
}

/// snmptable's output with the shipped MIBs, `|` between columns; panics
/// on any error or stderr line.
fn snmptable(agent: &Agent, table: &str, opts: &[&str]) -> String {
    let o = Command::new("snmptable")
        .args(["-v2c", "-c", "public", "-M", &mib_dirs(), "-m", "ALL"])
        .args(opts)
        .args(["-Cf", "|", &agent.target, table])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && err.trim().is_empty(),
        "{table} {opts:?}: {err}\n{out}"
    );
    out
}

/// packaging/snmp_exporter/generator.yml through Debian's
/// prometheus-snmp-generator with the shipped MIBs, then a scrape of the
/// agent through prometheus-snmp-exporter: no error, every table's metrics
/// with one series per node, GUID labels whole.
#[test]
fn snmp_exporter_scrapes_ib_pm_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let gen_yml = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../packaging/snmp_exporter/generator.yml");
    let agent = Agent::start(&[]);
    let body = common::snmp_exporter_scrape(
        tmp.path(),
        &std::fs::read_to_string(&gen_yml).unwrap(),
        "ib_pm",
        &agent.target,
    );
    for (metric, label) in [
        ("pmClassPortInfoAllPortSelect", "pmClassPortInfoGUID"),
        ("pmPortSampleCntrlOpCode", "pmPortSampleCntrlGUID"),
        ("pmPortSampleResultTag", "pmPortSampleResultGUID"),
        ("pmPortCountersSymbolErrors", "pmPortCountersGUID"),
    ] {
        let mut guids: Vec<&str> = body
            .lines()
            .filter(|l| l.starts_with(&format!("{metric}{{")))
            .filter_map(|l| l.split(&format!("{label}=\"")).nth(1)?.split('"').next())
            .collect();
        guids.sort();
        guids.dedup();
        assert_eq!(guids.len(), 12, "{metric}: {guids:?}\n{body}");
        assert!(
            guids.iter().all(|g| g.len() == 18 && g.starts_with("0x")),
            "{guids:?}"
        );
    }
}
