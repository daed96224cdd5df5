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
}

impl Prometheus {
    fn start(dir: &Path, target: &str) -> Prometheus {
        require_tool("prometheus");
        let conf = dir.join("prometheus.yml");
        std::fs::write(
            &conf,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 rule_files: [{:?}]\n\
                 scrape_configs:\n  - job_name: ibsnmpd\n    static_configs:\n      - targets: [\"{target}\"]\n",
                packaging().join("prometheus/ibsnmpd-rules.yml")
            ),
        )
        .unwrap();
        let port = free_port("127.0.0.1");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", conf.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .expect("spawn prometheus");
        Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
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
    let deadline = Instant::now() + Duration::from_secs(60);
    while prom.count("count_over_time(ibsnmpd_uptime_seconds[5m]) >= 5") == 0 {
        assert!(
            Instant::now() < deadline,
            "Prometheus never scraped the agent:\n{}\n{}",
            std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default(),
            agent.log_text()
        );
        std::thread::sleep(Duration::from_millis(500));
    }

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
