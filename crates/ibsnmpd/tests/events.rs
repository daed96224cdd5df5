//! Fabric events between sweeps, with the real binary on the simulated
//! fabric: a link flap through the control socket shows up in the log
//! (`--log-level info`) as the port going out of service and, after the
//! flap, in service again, with the link state changes of both ends.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, BIN};

/// The agent, killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(what: &str, log: &Path, deadline: Instant, ok: impl Fn(&str) -> bool) -> String {
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if ok(&text) {
            return text;
        }
        assert!(Instant::now() < deadline, "{what}; log:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn link_flap_events_are_logged() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("ctl.sock");
    let log = dir.path().join("agent.log");
    let port = free_port("127.0.0.1");
    let _agent = Running(
        Command::new(BIN)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--state-dir")
            .arg(dir.path())
            .arg("--control-socket")
            .arg(&socket)
            .args(["--sweep-interval", "0.5", "--log-level", "info"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    wait_for("agent not listening", &log, deadline, |t| {
        t.contains("ibsnmpd listening")
    });
    // Sweeps of an unchanged fabric make no events.
    std::thread::sleep(Duration::from_millis(1200));
    let quiet = std::fs::read_to_string(&log).unwrap();
    assert!(!quiet.contains("fabric event"), "{quiet}");

    let out = Command::new(BIN)
        .arg("ctl")
        .arg("--socket")
        .arg(&socket)
        .args(["link-flap", "node02", "1", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // One flap: out of and back in service, and four link state changes.
    let text = wait_for("not all events of the flap", &log, deadline, |t| {
        t.matches("fabric event").count() >= 6
    });
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("fabric event"))
        .collect();
    let find = |what: &str, node: &str| {
        lines
            .iter()
            // Names are data from the fabric: quoted and escaped.
            .position(|l| l.contains(what) && l.contains(&format!("node={node:?}")))
            .unwrap_or_else(|| panic!("no {what:?} for {node}: {lines:#?}"))
    };
    let out_of_service = find("port out of service", "node02 mlx5_0");
    let in_service = find("port in service", "node02 mlx5_0");
    assert!(out_of_service < in_service, "{lines:#?}");
    assert!(lines[out_of_service].contains(" port=1 "), "{lines:#?}");
    assert!(lines[out_of_service].contains("guid=0x"), "{lines:#?}");
    // Both ends of the link go down and come back.
    let changes: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("link state change"))
        .collect();
    assert_eq!(changes.len(), 4, "{lines:#?}");
    assert!(
        changes
            .iter()
            .any(|l| l.contains("node=\"leaf01\"") && l.contains("to=Down")),
        "{lines:#?}"
    );
    assert!(
        changes
            .iter()
            .any(|l| l.contains("node=\"node02 mlx5_0\"") && l.contains("to=Active")),
        "{lines:#?}"
    );
    assert_eq!(lines.len(), 6, "{lines:#?}");
}
