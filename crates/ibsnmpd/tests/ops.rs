//! What operators run beside the agent: startup checks, the example config,
//! the packaging files.

mod common;

use std::net::UdpSocket;
use std::process::Command;

use common::{curl, BIN};

#[test]
fn bad_log_level_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["verbose", "snmp=loud", ""] {
        let o = common::run_agent(&["--listen", "127.0.0.1:0", "--log-level", bad], tmp.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("--log-level"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let o = Command::new(BIN)
        .args(["dump", "--log-level", "loud"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn port_in_use_fails_before_any_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let busy = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let o = common::run_agent(&["--listen", &addr, "--log-level", "debug"], tmp.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(78), "{err}");
    assert!(err.contains("cannot bind UDP"), "{err}");
    // One line says it all (the log's lines before it are the log's).
    assert_eq!(err.matches("ibsnmpd: ").count(), 1, "{err}");
    // The source thread never swept (debug logs every sweep).
    assert!(!err.contains("sweep"), "{err}");
}

/// A process this test started, killed (SIGTERM) and reaped when dropped.
struct Proc(std::process::Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let _ = self.0.wait();
    }
}

/// net-snmp's snmpd on a private UDP port, as on a host where it holds 161.
struct Snmpd;

impl Snmpd {
    fn start(dir: &std::path::Path, port: u16) -> Proc {
        common::require_tool("snmpd");
        let conf = dir.join("snmpd.conf");
        std::fs::write(&conf, "rocommunity public 127.0.0.1\n").unwrap();
        let persist = dir.join("snmpd-persist");
        std::fs::create_dir_all(&persist).unwrap();
        let child = Command::new("/usr/sbin/snmpd")
            .env("SNMP_PERSISTENT_DIR", &persist)
            .env("MIBS", "")
            .args(["-f", "-Lf"])
            .arg(dir.join("snmpd.log"))
            .arg("-C")
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir.join("snmpd.pid"))
            .arg(format!("udp:127.0.0.1:{port}"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn snmpd");
        let snmpd = Proc(child);
        let target = format!("127.0.0.1:{port}");
        common::wait_for(
            "snmpd answering",
            std::time::Duration::from_secs(20),
            || {
                let o = common::probe(&target, ".1.3.6.1.2.1.1.1.0", &[]);
                String::from_utf8_lossy(&o.stdout)
                    .contains("STRING")
                    .then_some(())
            },
        );
        snmpd
    }
}

/// The packaged configuration (packaging/ibsnmpd.toml, its address moved
/// to a private port, the simulated fabric for the HCA) on a port snmpd
/// holds: one line naming the address, snmpd and the agentx setting, and
/// exit 78, which the packaged unit does not restart on. On the same port
/// once free: it serves.
#[test]
fn packaged_config_beside_snmpd_refuses_clearly_and_serves_on_a_free_port() {
    let tmp = tempfile::tempdir().unwrap();
    let port = common::free_port("127.0.0.1");
    let shipped = std::fs::read_to_string(repo_file("packaging/ibsnmpd.toml")).unwrap();
    let conf_text = shipped
        .replace(
            "agentaddress = [\"udp:0.0.0.0:161\"]",
            &format!("agentaddress = [\"udp:127.0.0.1:{port}\"]"),
        )
        .replace("source = \"umad\"", "source = \"sim\"");
    assert!(conf_text.contains(&format!(":{port}\"")) && conf_text.contains("\"sim\""));
    // docs/install.md quotes the error naming the shipped file's source line.
    let source_line = shipped
        .lines()
        .position(|l| l == "source = \"umad\"")
        .map(|i| i + 1)
        .unwrap();
    let install = std::fs::read_to_string(repo_file("docs/install.md")).unwrap();
    assert!(
        install.contains(&format!(
            "/etc/ibsnmpd/ibsnmpd.toml:{source_line}: source umad: "
        )),
        "docs/install.md names another line than {source_line} for the shipped source"
    );
    let conf = tmp.path().join("ibsnmpd.toml");
    std::fs::write(&conf, &conf_text).unwrap();
    let conf_s = conf.display().to_string();
    let state = tmp.path().join("state");

    let snmpd = Snmpd::start(tmp.path(), port);
    let o = common::run_agent(&["--config", &conf_s], &state);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(78), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("ibsnmpd: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    let line = lines[0];
    for want in [
        &format!("127.0.0.1:{port}"),
        "in use",
        "snmpd",
        "agentx = \"/var/agentx/master\"",
        "master agentx",
        "Beside snmpd",
    ] {
        assert!(line.contains(want), "{want:?} missing: {line}");
    }
    // The unit gives up on that status instead of restarting every 5 s.
    let unit = std::fs::read_to_string(repo_file("packaging/ibsnmpd.service")).unwrap();
    let prevent: Vec<&str> = unit
        .lines()
        .filter_map(|l| l.strip_prefix("RestartPreventExitStatus="))
        .flat_map(str::split_whitespace)
        .collect();
    assert!(
        prevent.contains(&"78") && prevent.contains(&"2"),
        "{prevent:?}"
    );
    drop(snmpd);

    // The port free: the packaged configuration serves on it.
    let log = tmp.path().join("agent.log");
    let mut agent = Proc(
        Command::new(BIN)
            .args(["--config", &conf_s, "--state-dir"])
            .arg(&state)
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let target = format!("127.0.0.1:{port}");
    let answered = common::poll(
        std::time::Duration::from_secs(30),
        std::time::Duration::from_millis(200),
        || {
            if let Ok(Some(st)) = agent.0.try_wait() {
                return Ok(Err(format!(
                    "exited {st}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )));
            }
            let o = common::probe(&target, ".1.3.6.1.2.1.1.3.0", &["-On"]);
            if o.status.success() {
                Ok(Ok(String::from_utf8_lossy(&o.stdout).into_owned()))
            } else {
                Err("no answer yet".into())
            }
        },
    );
    drop(agent);
    let answered = answered.unwrap();
    assert!(answered.contains("Timeticks"), "{answered}");
}

#[test]
fn read_only_agent_runs_without_writable_state_dir() {
    // A path under a regular file can never be created, even by root.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "").unwrap();
    let log = tmp.path().join("agent.log");
    let port = common::free_port("127.0.0.1");
    let mut child = Command::new(BIN)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .arg("--state-dir")
        .arg(file.join("state"))
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let target = format!("127.0.0.1:{port}");
    let mut out = String::new();
    for _ in 0..40 {
        let o = common::probe(&target, ".1.3.6.1.2.1.1.5.0", &[]);
        out = String::from_utf8_lossy(&o.stdout).to_string();
        if o.status.success() {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(out.contains("STRING"), "{out} {text}");
    assert_eq!(
        text.matches("no writable state directory").count(),
        1,
        "{text}"
    );
}

fn get_ok(target: &str, community: &str) -> bool {
    common::snmp(
        "snmpget",
        &[
            "-v2c",
            "-c",
            community,
            "-t",
            "1",
            "-r",
            "0",
            target,
            ".1.3.6.1.2.1.1.3.0",
        ],
    )
    .status
    .success()
}

#[test]
fn sighup_reloads_communities_and_node_names_without_losing_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let conf = tmp.path().join("ibsnmpd.toml");
    let map = tmp.path().join("names");
    let write = |community: &str, name: &str| {
        std::fs::write(&map, format!("0x0000000000200000 \"{name}\"\n")).unwrap();
        std::fs::write(
            &conf,
            format!(
                "node_name_map = {:?}\n\n[[rocommunity]]\ncommunity = \"public\"\n\n\
                 [[rocommunity]]\ncommunity = \"{community}\"\n",
                map.display()
            ),
        )
        .unwrap();
    };
    write("old", "leaf-before");
    let mport = common::free_port("127.0.0.1");
    let maddr = format!("127.0.0.1:{mport}");
    let agent = common::Agent::start(&["--config", conf.to_str().unwrap(), "--metrics", &maddr]);
    let url = format!("http://{maddr}/metrics");
    assert!(curl(&url).contains("switch=\"leaf-before\""));
    assert!(get_ok(&agent.target, "old"));
    assert!(!get_ok(&agent.target, "new"));

    // Requests with the community both configurations keep run throughout.
    let target = agent.target.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = std::sync::Arc::clone(&stop);
    let load = std::thread::spawn(move || {
        let (mut ok, mut lost) = (0u32, 0u32);
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            if get_ok(&target, "public") {
                ok += 1;
            } else {
                lost += 1;
            }
        }
        (ok, lost)
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    write("new", "leaf-after");
    let pid = agent.pid().to_string();
    common::signal(&pid, "HUP");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !curl(&url).contains("switch=\"leaf-after\"") {
        assert!(std::time::Instant::now() < deadline, "{}", agent.log_text());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (ok, lost) = load.join().unwrap();
    assert!(ok > 5, "{ok}");
    assert_eq!(lost, 0, "requests lost across the reload");
    assert!(get_ok(&agent.target, "new"));
    assert!(!get_ok(&agent.target, "old"));
    let m = curl(&url);
    assert!(m.contains("ibsnmpd_reloads_total 1"), "{m}");
    // Which build answers, as every exporter says.
    let build = m
        .lines()
        .find(|l| l.starts_with("ibsnmpd_build_info{"))
        .unwrap_or_else(|| panic!("no ibsnmpd_build_info: {m}"));
    let version = format!("version=\"{}\",revision=\"", env!("CARGO_PKG_VERSION"));
    assert!(
        build.contains(&version) && build.ends_with("} 1"),
        "{build}"
    );
    assert!(!build.contains("revision=\"\""), "{build}");

    // A broken file changes nothing and says why; the agent stays up.
    std::fs::write(&conf, "bogus = 1\n").unwrap();
    common::signal(&pid, "HUP");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(get_ok(&agent.target, "new"));
    assert!(
        agent.log_text().contains("reload refused"),
        "{}",
        agent.log_text()
    );
    assert!(curl(&url).contains("ibsnmpd_reload_failures_total 1"));
}

#[test]
fn sighup_names_what_needs_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let conf = tmp.path().join("ibsnmpd.toml");
    std::fs::write(&conf, "sweep_interval = 10\n").unwrap();
    let agent = common::Agent::start(&["--config", conf.to_str().unwrap()]);
    std::fs::write(&conf, "sweep_interval = 5\nsyscontact = \"x\"\n").unwrap();
    let pid = agent.pid().to_string();
    common::signal(&pid, "HUP");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let log = agent.log_text();
    let lines = common::restart_warnings(&log);
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("sweep_interval, syscontact"), "{log}");
    assert!(get_ok(&agent.target, "public"));
}

fn repo_file(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// packaging/ibsnmpd.8 is what `ibsnmpd man` prints (regenerate with
/// `ibsnmpd man > packaging/ibsnmpd.8`), and man renders it cleanly.
#[test]
fn man_page_is_current_and_renders() {
    let o = Command::new(BIN).arg("man").output().unwrap();
    assert!(o.status.success());
    let shipped = std::fs::read(repo_file("packaging/ibsnmpd.8")).unwrap();
    assert!(
        o.stdout == shipped,
        "packaging/ibsnmpd.8 is stale: run `ibsnmpd man > packaging/ibsnmpd.8`"
    );
    let text = String::from_utf8_lossy(&o.stdout);
    for flag in ["metrics", "node\\-name\\-map", "log\\-level"] {
        assert!(text.contains(flag), "{flag}");
    }
    let r = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(repo_file("packaging/ibsnmpd.8"))
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .output()
        .expect("man (Debian package man-db)");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(
        r.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(String::from_utf8_lossy(&r.stdout).contains("SNMP agent for InfiniBand fabrics"));
    // Only pages that exist: no ibsnmpd-SUBCOMMAND(8).
    assert!(!text.contains("ibsnmpd\\-dump("), "{text}");
    // The sections clap does not know; the synopsis with every option's
    // argument, one line per command, and each subcommand's own options.
    for usage in [
        ".SH FILES",
        ".SH SIGNALS",
        ".SH \"EXIT STATUS\"",
        ".SH SUBCOMMANDS",
        "[\\fB\\-\\-listen\\fR \\fIADDR:PORT\\fR]...",
        "[\\fB\\-\\-agentx\\fR [\\fIADDR\\fR]]",
        "\\fBibsnmpd health\\fR [\\fB\\-\\-source\\fR \\fISPEC\\fR]",
        "[\\fB\\-\\-socket\\fR \\fIPATH\\fR]",
        "\\fBibsnmpd ctl\\fR \\fB\\-\\-socket\\fR \\fIPATH\\fR",
        "\\fBibsnmpd dump\\fR",
        "\\fBibsnmpd topology fat\\-tree\\fR",
        ".SS \"ibsnmpd health\"",
        "link\\-flap NODE PORT",
    ] {
        assert!(text.contains(usage), "{usage} missing:\n{text}");
    }
    // Installed pages point at the installed docs.
    assert!(!text.contains("docs/"), "{text}");
    assert!(text.contains("/usr/share/doc/ibsnmpd/"), "{text}");
    installed_doc_references_exist(&text);
    // A port another agent holds: its own exit status, not restarted.
    assert!(text.contains("\\fB78\\fR"), "{text}");
}

/// Every `/usr/share/doc/ibsnmpd/NAME` a man page names is a file the
/// packages install there: docs/*.md compressed by packaging/stage.sh
/// (`NAME.md.gz`), or an example.
fn installed_doc_references_exist(text: &str) {
    let mut seen = 0;
    for (at, _) in text.match_indices("/usr/share/doc/ibsnmpd/") {
        let rest = &text[at + "/usr/share/doc/ibsnmpd/".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '\\'))
            .collect::<String>()
            .replace("\\-", "-");
        // A roff font change (`\fR`) ends it.
        let name = name.split("\\f").next().unwrap_or("").trim_end_matches('.');
        if name.is_empty() || name == "examples" {
            continue;
        }
        let md = name
            .strip_suffix(".gz")
            .unwrap_or_else(|| panic!("{name}: installed compressed, as {name}.gz"));
        assert!(
            repo_file(&format!("docs/{md}")).is_file(),
            "{name}: no docs/{md}"
        );
        seen += 1;
    }
    assert!(seen > 0, "{text}");
}

/// ibsnmpd.toml(5), made from docs/config.md's key table: every key the
/// loader knows is there, and man renders it cleanly.
#[test]
fn the_config_man_page_lists_every_key_and_renders() {
    let o = Command::new(BIN)
        .args(["man", "--config"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let page = std::env::temp_dir().join(format!("ibsnmpd.toml.5.{}", std::process::id()));
    std::fs::write(&page, &text).unwrap();
    let r = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&page)
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .output()
        .expect("man");
    let _ = std::fs::remove_file(&page);
    assert!(
        r.status.success() && r.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let rendered = String::from_utf8_lossy(&r.stdout);
    for key in [
        "agentaddress",
        "sweep_interval",
        "local_node",
        "metrics_listen",
        "metrics_max_connections",
        "node_name_map",
        "secrets",
        "engine_id",
        "request_sessions_max",
        "trap2sink",
        "notification_rate_limit",
    ] {
        assert!(rendered.contains(key), "{key} missing from ibsnmpd.toml(5)");
    }
    // Markdown's escaped table pipe is not roff's.
    assert!(
        text.contains("NAME|GUID") && !text.contains("\\|"),
        "{text}"
    );
    assert!(!text.contains("docs/"), "{text}");
    assert!(
        text.contains("/usr/share/doc/ibsnmpd/config.md.gz"),
        "{text}"
    );
    installed_doc_references_exist(&text);
}

/// `systemd-analyze verify` accepts the unit (with ExecStart pointing at
/// the binary under test, since it checks the command exists).
#[test]
fn systemd_unit_verifies() {
    let unit = std::fs::read_to_string(repo_file("packaging/ibsnmpd.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/sbin/ibsnmpd --config /etc/ibsnmpd/ibsnmpd.toml"));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("ibsnmpd.service");
    std::fs::write(&path, unit.replace("/usr/sbin/ibsnmpd", BIN)).unwrap();
    let o = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .expect("systemd-analyze (Debian package systemd)");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("ibsnmpd.service:"), "{err}");
}

/// Every query of the Grafana dashboard parses as PromQL (`promtool check
/// rules` on them as recording rules) and names only metrics we export.
#[test]
fn grafana_dashboard_queries_parse() {
    let text = std::fs::read_to_string(repo_file("packaging/grafana-ibsnmpd.json")).unwrap();
    let dash: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut exprs = Vec::new();
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("expr", serde_json::Value::String(s)) => out.push(s.clone()),
                        _ => walk(x, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(&dash["panels"], &mut exprs);
    assert!(exprs.len() > 15, "{}", exprs.len());
    let mut rules = String::from("groups:\n- name: dashboard\n  rules:\n");
    for (i, e) in exprs.iter().enumerate() {
        let e = e
            .replace("$hca_port", "1")
            .replace("$hca", "node01 mlx5_0")
            .replace("$switch", "leaf01")
            .replace("$port", "1");
        rules.push_str(&format!(
            "  - record: dashboard:q{i}\n    expr: {}\n",
            serde_json::to_string(&e).unwrap()
        ));
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("rules.yml");
    std::fs::write(&path, rules).unwrap();
    let o = Command::new("promtool")
        .args(["check", "rules"])
        .arg(&path)
        .output()
        .expect("promtool (Debian package prometheus)");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// One fabric, one port count: the log's first sweep, `ctl status`,
/// `ibsnmpd_fabric_ports` and `ibsnmpd health` all count the ports but a
/// switch's port 0 (170 on the simulated fabric: 174 with its four
/// switches' management ports).
#[test]
fn every_place_counts_the_same_ports() {
    let dir = tempfile::tempdir().unwrap();
    let mport = common::free_port("127.0.0.1");
    let maddr = format!("127.0.0.1:{mport}");
    let (agent, socket) = common::agent_with_socket(dir.path(), "", &["--metrics", &maddr]);
    let status = common::ctl(&socket, &["status"]);
    let ctl_ports: u64 = status
        .split_whitespace()
        .skip_while(|w| *w != "ports")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{status}"));
    let metrics = curl(&format!("http://{maddr}/metrics"));
    let metric_ports: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("ibsnmpd_fabric_ports "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{metrics}"));
    let o = Command::new(BIN)
        .args(["health", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    let health = String::from_utf8_lossy(&o.stdout);
    let log = agent.log_text();
    let first = log
        .lines()
        .find(|l| l.contains("first sweep done"))
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(ctl_ports, 170, "{status}");
    assert_eq!(metric_ports, 170, "{metrics}");
    assert!(health.contains(", 170 ports,"), "{health}");
    assert!(first.contains("ports=170"), "{first}");
}

/// ibsnmpd_snmp_requests_total counts each PDU once, under its own type:
/// a GetBulk as `getbulk` (never as `getnext`, which is snmpInGetNexts).
#[test]
fn request_counters_count_getbulk_as_its_own() {
    let mport = common::free_port("127.0.0.1");
    let maddr = format!("127.0.0.1:{mport}");
    let agent = common::Agent::start(&["--metrics", &maddr]);
    let counts = || {
        let text = curl(&format!("http://{maddr}/metrics"));
        let get = |pdu: &str| -> u64 {
            let prefix = format!("ibsnmpd_snmp_requests_total{{pdu=\"{pdu}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {pdu}: {text}"))
        };
        let help = text
            .lines()
            .find(|l| l.starts_with("# HELP ibsnmpd_snmp_requests_total"))
            .unwrap_or_default()
            .to_string();
        (
            [get("get"), get("getnext"), get("getbulk"), get("set")],
            help,
        )
    };
    let (before, help) = counts();
    assert!(
        help.contains("getbulk") && !help.contains("neither"),
        "{help}"
    );
    let sys_descr = ".1.3.6.1.2.1.1.1.0";
    for tool in ["snmpgetnext", "snmpbulkget", "snmpbulkget"] {
        let mut args = vec!["-v2c", "-c", "public", "-t", "2", "-r", "0"];
        if tool == "snmpbulkget" {
            args.extend(["-Cn0", "-Cr5"]);
        }
        args.extend([agent.target.as_str(), sys_descr]);
        let o = common::snmp(tool, &args);
        assert!(o.status.success(), "{tool}: {}", common::text(&o));
    }
    let (after, _) = counts();
    let delta: Vec<u64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
    assert_eq!(delta, vec![0, 1, 2, 0], "get, getnext, getbulk, set");
}
