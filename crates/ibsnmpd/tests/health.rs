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

/// The values of `name` whose labels include every one of `want`.
fn gauge(text: &str, name: &str, want: &[&str]) -> Vec<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| want.iter().all(|w| l.contains(w)))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect()
}

/// The running agent tracks health over its own sweeps and serves it on
/// /metrics: the same findings as `ibsnmpd health`, per port with the
/// peer's labels, and the `[health]` thresholds the alert rules compare with.
#[test]
fn the_agent_serves_health_on_metrics() {
    if let Err(e) = check_tools() {
        panic!("{e}");
    }
    let tb = Testbed::start(TestbedConfig::new(SMALL_NET)).unwrap();
    let conf = tb.dir().join("health.toml");
    std::fs::write(&conf, "[health]\nwindow = 60\nmax_symbol_ber = 1e-9\n").unwrap();
    let mport = common::free_port("127.0.0.1");
    let url = format!("http://127.0.0.1:{mport}/metrics");
    let scrape = |url: &str| {
        std::process::Command::new("curl")
            .args(["-sS", "--max-time", "5", url])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    let u = url.clone();
    let _agent = common::UmadAgent::start(
        &tb,
        None,
        &[
            "--config",
            conf.to_str().unwrap(),
            "--sweep-interval",
            "1",
            "--metrics",
            &format!("127.0.0.1:{mport}"),
        ],
        Duration::from_secs(60),
        move |_| scrape(&u).contains("infiniband_switch_port_xmit_wait_ratio"),
    );
    let text = scrape(&url);
    let threshold = gauge(
        &text,
        "infiniband_health_threshold",
        &["check=\"max_symbol_ber\""],
    );
    assert_eq!(threshold, vec![1e-9], "{text}");
    assert_eq!(
        gauge(&text, "infiniband_health_window_seconds", &[]),
        vec![60.0]
    );
    // A healthy fabric: no degraded link, nothing down.
    let degraded = gauge(&text, "infiniband_switch_port_link_degraded", &[]);
    assert!(
        !degraded.is_empty() && degraded.iter().all(|&v| v == 0.0),
        "{text}"
    );

    for cmd in [
        "PerformanceSet \"Switch2\"[1] PortCounters.SymbolErrorCounter=900",
        "PerformanceSet \"Switch1\"[2] PortCounters.PortXmitWait=4000000",
        "Unlink \"Hca4\"[1]",
    ] {
        tb.console(cmd).unwrap();
    }
    let (s1, s2) = ("switch=\"Switch1\"", "switch=\"Switch2\"");
    let mut text = String::new();
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(500));
        text = scrape(&url);
        let down = gauge(
            &text,
            "infiniband_switch_port_down_after_up",
            &[s2, "port=\"2\""],
        );
        let ber = gauge(
            &text,
            "infiniband_switch_port_symbol_error_ratio",
            &[s2, "port=\"1\","],
        );
        let wait = gauge(
            &text,
            "infiniband_switch_port_xmit_wait_ratio",
            &[s1, "port=\"2\","],
        );
        if down == vec![1.0] && ber.iter().any(|&b| b > 1e-9) && wait.iter().any(|&w| w > 0.05) {
            // The peer is named on the port's series.
            assert_eq!(
                gauge(
                    &text,
                    "infiniband_switch_port_symbol_error_ratio",
                    &[s2, "port=\"1\",", "uplink=\"Hca2\""]
                )
                .len(),
                1,
                "{text}"
            );
            return;
        }
    }
    panic!("no health findings on /metrics:\n{text}");
}
