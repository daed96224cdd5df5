//! The shipped Prometheus pieces against a real Prometheus: the alert rules
//! pass `promtool check rules` and their unit tests (`promtool test
//! rules`), and every query of the Grafana dashboard, its variables
//! included, evaluates without error and with data in a Prometheus that
//! scraped the agent on the simulated fabric.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, require_tool, Agent};

fn packaging() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../packaging")
}

#[test]
fn alert_rules_pass_promtool() {
    require_tool("promtool");
    let dir = packaging().join("prometheus");
    for args in [
        &["check", "rules", "ibsnmpd-rules.yml"][..],
        &["test", "rules", "ibsnmpd-rules.test.yml"][..],
    ] {
        let o = Command::new("promtool")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "promtool {args:?}:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// A Prometheus scraping `target` every second, in `dir`.
struct Prometheus {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Prometheus {
    fn start(dir: &Path, target: &str) -> Prometheus {
        let targets = format!("static_configs:\n      - targets: [\"{target}\"]");
        Prometheus::with_targets(dir, &targets, "1s")
    }

    /// Scraping the agent's targets as `targets` (a scrape config's
    /// `static_configs` or `http_sd_configs`) every `interval`.
    fn with_targets(dir: &Path, targets: &str, interval: &str) -> Prometheus {
        require_tool("prometheus");
        let conf = dir.join("prometheus.yml");
        std::fs::write(
            &conf,
            format!(
                "global:\n  scrape_interval: {interval}\n  scrape_timeout: {interval}\n  evaluation_interval: 1s\n\
                 rule_files: [{:?}]\n\
                 scrape_configs:\n  - job_name: ibsnmpd\n    {targets}\n",
                packaging().join("prometheus/ibsnmpd-rules.yml")
            ),
        )
        .unwrap();
        let port = free_port("127.0.0.1");
        let log = dir.join("prometheus.log");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", conf.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("spawn prometheus");
        Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    /// Waits until each of `queries` counts a sample; past `timeout`,
    /// panics that it never scraped `what`, with its log and `agent`'s.
    fn wait_scraped(&self, queries: &[&str], timeout: Duration, what: &str, agent: &Agent) {
        let deadline = Instant::now() + timeout;
        while queries.iter().any(|q| self.count(q) == 0) {
            assert!(
                Instant::now() < deadline,
                "Prometheus never scraped {what}:\n{}\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default(),
                agent.log_text()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The `data` of an instant query; Err with Prometheus' error text.
    fn query(&self, q: &str) -> Result<serde_json::Value, String> {
        let o = Command::new("curl")
            .args(["-sS", "-G", "--max-time", "10"])
            .arg(format!("{}/api/v1/query", self.url))
            .arg("--data-urlencode")
            .arg(format!("query={q}"))
            .output()
            .map_err(|e| e.to_string())?;
        let body: serde_json::Value = serde_json::from_slice(&o.stdout).map_err(|e| {
            format!(
                "{e}: {}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })?;
        if body["status"] != "success" {
            return Err(body["error"].to_string());
        }
        Ok(body["data"].clone())
    }

    /// The number of results of `q` (0 on an error).
    fn count(&self, q: &str) -> usize {
        self.query(q)
            .ok()
            .and_then(|d| d["result"].as_array().map(Vec::len))
            .unwrap_or(0)
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every `expr` of the dashboard's panels.
fn dashboard_queries(d: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in d["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            if let Some(e) = t["expr"].as_str() {
                out.push((p["title"].as_str().unwrap_or("").to_string(), e.to_string()));
            }
        }
    }
    out
}

#[test]
fn every_dashboard_query_works_on_a_real_prometheus() {
    require_tool("curl");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port("127.0.0.1");
    let metrics = format!("127.0.0.1:{port}");
    let agent = Agent::start(&["--metrics", &metrics, "--sweep-interval", "1"]);
    let prom = Prometheus::start(dir.path(), &metrics);
    // Enough scrapes for a rate over [5m].
    prom.wait_scraped(
        &["count_over_time(ibsnmpd_uptime_seconds[5m]) >= 5"],
        Duration::from_secs(60),
        "the agent",
        &agent,
    );

    let d: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(packaging().join("grafana-ibsnmpd.json")).unwrap(),
    )
    .unwrap();
    // The variables, as Grafana resolves them (label_values of a series).
    let first = |q: &str, label: &str| -> String {
        let data = prom.query(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        data["result"][0]["metric"][label]
            .as_str()
            .unwrap_or_else(|| panic!("{q}: no {label} in {data}"))
            .to_string()
    };
    let switch = first("infiniband_switch_info", "switch");
    // A port with a link partner, as an operator would pick.
    let port = first(
        &format!("infiniband_switch_port_state_id{{switch=\"{switch}\",uplink!=\"\"}}"),
        "port",
    );
    let hca = first("infiniband_hca_info", "hca");
    let hca_port = first(
        &format!("infiniband_hca_port_state_id{{hca=\"{hca}\"}}"),
        "port",
    );
    let queries = dashboard_queries(&d);
    assert!(queries.len() >= 22, "{} queries", queries.len());
    let mut failures = Vec::new();
    for (title, q) in queries {
        let q = q
            .replace("$hca_port", &hca_port)
            .replace("$hca", &hca)
            .replace("$switch", &switch)
            .replace("$port", &port);
        match prom.query(&q) {
            Err(e) => failures.push(format!("{title}: {q}: {e}")),
            Ok(data) if data["result"].as_array().is_none_or(Vec::is_empty) => {
                failures.push(format!("{title}: {q}: empty result"))
            }
            Ok(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Sample lines of a scrape (comments out), sorted.
fn samples(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    v.sort_unstable();
    v
}

/// Issue 52.5: on the 2,000-host sim the default scrape carries at most 24
/// samples a port; the groups that /sd lists add up to it, sample for
/// sample; and a Prometheus that discovers them through http_sd_configs
/// scrapes every group and holds every port.
#[test]
fn a_large_fabric_is_lean_and_its_groups_add_up_in_prometheus() {
    require_tool("curl");
    let dir = tempfile::tempdir().unwrap();
    let source = common::fat_tree(dir.path(), 2000, 64);
    let metrics = format!("127.0.0.1:{}", free_port("127.0.0.1"));
    let socket = dir.path().join("ctl");
    let socket_arg = socket.display().to_string();
    let agent = Agent::start(&[
        "--source",
        &source,
        "--metrics",
        &metrics,
        "--control-socket",
        &socket_arg,
        "--sweep-interval",
        "3600",
    ]);
    let url = format!("http://{metrics}/metrics");
    // A few sweeps, so the health window has rates to report.
    for _ in 0..3 {
        common::output_ok(Command::new(common::BIN).args([
            "ctl",
            "--socket",
            &socket_arg,
            "sweep",
        ]));
    }
    let whole = common::curl(&url);
    let ports = whole
        .lines()
        .filter(|l| {
            l.starts_with("infiniband_switch_port_state_id{")
                || l.starts_with("infiniband_hca_port_state_id{")
        })
        .count();
    assert!(ports > 4000, "{ports} ports");
    let port_samples = samples(&whole)
        .iter()
        .filter(|l| {
            l.starts_with("infiniband_switch_port_") || l.starts_with("infiniband_hca_port_")
        })
        .count();
    let per_port = port_samples as f64 / ports as f64;
    eprintln!("{port_samples} port samples for {ports} ports: {per_port:.2} a port");
    assert!(
        per_port <= 24.0,
        "{port_samples} samples for {ports} ports: {per_port:.1} a port"
    );

    // The groups, as Prometheus' http_sd sees them; their scrapes add up
    // to the whole one (the agent's own figures, which change by the
    // scrape, in the first group only).
    let sd: serde_json::Value =
        serde_json::from_str(&common::curl(&format!("http://{metrics}/sd?groups=3"))).unwrap();
    let groups = sd.as_array().unwrap();
    assert_eq!(groups.len(), 3, "{sd}");
    let fabric = |t: &str| -> Vec<String> {
        samples(t)
            .into_iter()
            .filter(|l| !l.starts_with("ibsnmpd_"))
            .map(String::from)
            .collect()
    };
    let mut union = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        assert_eq!(g["targets"][0], metrics.as_str(), "{g}");
        let (k, n) = (
            &g["labels"]["__param_group"],
            &g["labels"]["__param_groups"],
        );
        let text = common::curl(&format!(
            "{url}?group={}&groups={}",
            k.as_str().unwrap(),
            n.as_str().unwrap()
        ));
        assert_eq!(text.contains("ibsnmpd_uptime_seconds "), i == 0);
        let part = fabric(&text);
        assert!(
            part.len() > port_samples / 5,
            "group {i}: {} samples",
            part.len()
        );
        union.extend(part);
    }
    // The thresholds are in every group, so each port meets its own.
    let thresholds = |v: &[String]| {
        v.iter()
            .filter(|l| l.starts_with("infiniband_health_"))
            .count()
    };
    let whole_fabric = fabric(&whole);
    assert_eq!(thresholds(&union), 3 * thresholds(&whole_fabric));
    union.retain(|l| !l.starts_with("infiniband_health_"));
    union.sort_unstable();
    let mut want = whole_fabric;
    want.retain(|l| !l.starts_with("infiniband_health_"));
    assert!(
        union == want,
        "the groups' samples are not the whole scrape's: {} and {}",
        union.len(),
        want.len()
    );

    // A Prometheus finds the groups through http_sd and scrapes them all.
    let targets = format!(
        "http_sd_configs:\n      - url: http://{metrics}/sd?groups=3\n        refresh_interval: 5s"
    );
    let prom = Prometheus::with_targets(dir.path(), &targets, "5s");
    let hca_ports = whole
        .lines()
        .filter(|l| l.starts_with("infiniband_hca_port_state_id{"))
        .count();
    let want = format!("count(infiniband_hca_port_state_id) == {hca_ports}");
    prom.wait_scraped(
        &[r#"count(up{job="ibsnmpd"} == 1) == 3"#, &want],
        Duration::from_secs(120),
        "the three groups",
        &agent,
    );
    assert_eq!(
        prom.count("count by (group) (infiniband_hca_port_state_id)"),
        3
    );
    // Each group's target meets its own thresholds: the rules evaluate
    // (a many-to-many join would be an error).
    prom.query(r#"infiniband_hca_port_xmit_wait_ratio > on (instance, job, group) group_left () infiniband_health_threshold{check="max_xmit_wait_ratio"}"#)
        .unwrap();
}
