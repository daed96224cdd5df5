//! `ibsnmpd health` on ibsim + OpenSM: between its two sweeps the fabric
//! gets symbol errors (PerformanceSet), transmit waits (PerformanceSet
//! PortXmitWait), a counter clear (`perfquery -R`) and an unlinked cable
//! (`Unlink`); the report names each port with what happened, in text and
//! JSON, and a healthy fabric reports nothing.

mod common;

use std::process::Stdio;
use std::time::Duration;

use ib::testbed::{check_tools, Testbed, TestbedConfig, SMALL_NET};

fn health(tb: &Testbed, interval: &str, format: &str) -> std::process::Child {
    tb.command(common::BIN)
        .args(["health", "--source", "umad", "--interval", interval])
        .args(["--format", format])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ibsnmpd health")
}

fn finish(c: std::process::Child) -> String {
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn health_reports_errors_waits_clears_and_a_link_gone_down() {
    if let Err(e) = check_tools() {
        panic!("{e}");
    }
    let tb = Testbed::start(TestbedConfig::new(SMALL_NET)).unwrap();

    // A quiet fabric first: nothing to report.
    let quiet = finish(health(&tb, "1", "text"));
    assert!(quiet.contains("No findings"), "{quiet}");
    assert!(quiet.contains("master"), "{quiet}");

    let run = health(&tb, "4", "text");
    // After its first sweep (well under a second on this fabric):
    std::thread::sleep(Duration::from_millis(1500));
    for cmd in [
        "PerformanceSet \"Switch2\"[1] PortCounters.SymbolErrorCounter=900",
        "PerformanceSet \"Switch1\"[2] PortCounters.PortXmitWait=4000000",
        "Unlink \"Hca4\"[1]",
    ] {
        tb.console(cmd).unwrap();
    }
    // Hca2 port 1's counters cleared, as another manager would.
    let lids = common::node_lids(&tb);
    let (_, hca2_lid) = common::node_by_name(&tb, &lids, "Hca2");
    let lid = common::port_lid(&tb, hca2_lid, 1).to_string();
    let r = tb.run_diag("perfquery", &["-R", &lid, "1"]).unwrap();
    assert!(r.success(), "{}", r.stderr);
    let text = finish(run);

    let line = |tag: &str, who: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(tag) && l.contains(who))
            .unwrap_or_else(|| panic!("no {tag} for {who}:\n{text}"))
            .to_string()
    };
    let errors = line("ERRORS", "\"Switch2\"");
    assert!(errors.contains("port 1 <-> \"Hca2\" port 1"), "{errors}");
    line("CONGESTED", "\"Switch1\"");
    line("CLEARED", "\"Hca2\"");
    let down = line("DOWN", "\"Switch2\"");
    assert!(down.contains("port 2"), "{down}");

    // JSON: every port, the same findings.
    let json: serde_json::Value = serde_json::from_str(&finish(health(&tb, "1", "json"))).unwrap();
    assert!(json["ports"].as_u64().unwrap() >= 12, "{json}");
    assert_eq!(json["sms"][0]["state"], "master", "{json}");
}
