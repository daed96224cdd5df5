//! What operators run beside the agent: startup checks, the example config,
//! the packaging files.

mod common;

use std::net::UdpSocket;
use std::process::Command;

use common::BIN;

#[test]
fn bad_log_level_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["verbose", "snmp=loud", ""] {
        let o = Command::new(BIN)
            .args(["--listen", "127.0.0.1:0", "--log-level", bad])
            .arg("--state-dir")
            .arg(tmp.path())
            .output()
            .unwrap();
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
    let o = Command::new(BIN)
        .args(["--listen", &addr, "--log-level", "debug"])
        .arg("--state-dir")
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot bind UDP"), "{err}");
    // The source thread never swept (debug logs every sweep).
    assert!(!err.contains("sweep"), "{err}");
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
        let o = common::snmp(
            "snmpget",
            &[
                "-v2c",
                "-c",
                "public",
                "-t",
                "0.5",
                "-r",
                "0",
                &target,
                ".1.3.6.1.2.1.1.5.0",
            ],
        );
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
