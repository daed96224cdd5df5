//! The operator control socket with the real binary: `ibsnmpd ctl` flaps a
//! link of the simulated fabric (ifOperStatus goes down, then up again, read
//! with net-snmp's snmpget) and injects an error burst (ibIfPortSymbolErrs
//! rises); bad commands get `error:` lines; the socket is mode 0600, a stale
//! one is replaced, and the file is removed when the agent stops.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{Agent, BIN};

/// ifOperStatus.1 (the local node01's port 1).
const IF_OPER_STATUS_1: &str = ".1.3.6.1.2.1.2.2.1.8.1";
/// ibIfPortSymbolErrs.1.
const IB_IF_PORT_SYMBOL_ERRS_1: &str = ".1.3.6.1.3.117.2.1.1.1.2.1";

struct Ctl {
    agent: Agent,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

fn start(sweep_interval: &str) -> Ctl {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("ctl.sock");
    let agent = Agent::start(&[
        "--control-socket",
        socket.to_str().unwrap(),
        "--sweep-interval",
        sweep_interval,
    ]);
    Ctl {
        agent,
        socket,
        _dir: dir,
    }
}

/// `ibsnmpd ctl --socket S WORDS...`.
fn ctl(socket: &Path, words: &[&str]) -> Output {
    Command::new(BIN)
        .arg("ctl")
        .arg("--socket")
        .arg(socket)
        .args(words)
        .output()
        .unwrap()
}

fn ok_line(socket: &Path, words: &[&str]) -> String {
    let out = ctl(socket, words);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.starts_with("ok "),
        "ctl {words:?}: {}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Sends raw lines over one connection, returns one answer line per command.
fn raw(socket: &Path, lines: &[&str]) -> Vec<String> {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // The agent may close early (an over-long line): then writes fail and
    // only what it answered before is read.
    for l in lines {
        if writeln!(s, "{l}").is_err() {
            break;
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    BufReader::new(s).lines().map_while(Result::ok).collect()
}

#[test]
fn link_flap_takes_the_port_down_and_up_again() {
    let c = start("0.5");
    assert_eq!(c.agent.get_number(IF_OPER_STATUS_1), 1, "up at start");
    let line = ok_line(&c.socket, &["link-flap", "node01", "1", "2"]);
    assert!(line.contains("port 1 down for 2 s"), "{line}");
    // The source thread publishes before it answers: down at once.
    assert_eq!(
        c.agent.get_number(IF_OPER_STATUS_1),
        2,
        "down after the flap"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if c.agent.get_number(IF_OPER_STATUS_1) == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not up again: {}",
            c.agent.log_text()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The same by the full description, quoted as one word.
    let line = ok_line(&c.socket, &["link-flap", "node01 mlx5_0", "1", "0.5"]);
    assert!(line.contains("\"node01 mlx5_0\""), "{line}");
}

#[test]
fn error_burst_raises_symbol_errors() {
    let c = start("3600");
    let before = c.agent.get_number(IB_IF_PORT_SYMBOL_ERRS_1);
    let status = ok_line(&c.socket, &["status"]);
    assert!(status.contains("nodes 12"), "{status}");
    // By name first; the answer names the node's GUID.
    let line = ok_line(&c.socket, &["error-burst", "node01", "1", "1"]);
    let guid = line
        .split(['(', ')'])
        .nth(1)
        .unwrap_or_else(|| panic!("no GUID in {line}"))
        .to_string();
    assert!(guid.starts_with("0x"), "{line}");
    // Then by GUID.
    let line = ok_line(&c.socket, &["error-burst", &guid, "1", "500"]);
    assert!(line.contains("500 symbol errors"), "{line}");
    let after = c.agent.get_number(IB_IF_PORT_SYMBOL_ERRS_1);
    assert!(after >= before + 501, "{before} -> {after}");
    // A sweep on demand shows the same (totals never go backwards).
    let line = ok_line(&c.socket, &["sweep"]);
    assert!(line.contains("done"), "{line}");
    assert!(c.agent.get_number(IB_IF_PORT_SYMBOL_ERRS_1) >= after);
}

#[test]
fn bad_commands_get_error_lines() {
    let c = start("3600");
    let answers = raw(
        &c.socket,
        &[
            "bogus",
            "link-flap nosuch 1",
            "link-flap node01 99",
            "link-flap node01",
            "link-flap node01 1 -3",
            "error-burst node01 1 0",
            "error-burst leaf01 0 5",
            "link-flap \"node01 1",
            "sweep now",
            "",
            "help",
        ],
    );
    assert_eq!(answers.len(), 10, "{answers:#?}");
    for a in &answers[..9] {
        assert!(a.starts_with("error: "), "{answers:#?}");
    }
    assert!(answers[1].contains("no node \"nosuch\""), "{answers:#?}");
    assert!(answers[2].contains("no port 99"), "{answers:#?}");
    assert!(answers[3].contains("usage: link-flap"), "{answers:#?}");
    assert!(answers[6].contains("port 0"), "{answers:#?}");
    assert!(
        answers[9].starts_with("ok commands: link-flap"),
        "{answers:#?}"
    );

    // The client: an error answer is exit 1 with the reason on stderr.
    let out = ctl(&c.socket, &["link-flap", "nosuch", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no node \"nosuch\""), "{stderr}");
    // No socket there: exit 2 and one line.
    let out = ctl(&c.socket.with_extension("nope"), &["help"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect"));

    // An over-long line is refused and the connection closed.
    let long = format!("help {}", "x".repeat(5000));
    let answers = raw(&c.socket, &[&long, "help"]);
    assert_eq!(answers.len(), 1, "{answers:#?}");
    assert!(answers[0].starts_with("error: line longer"), "{answers:#?}");
    // The agent still serves.
    ok_line(&c.socket, &["help"]);
}

#[test]
fn socket_is_private_replaces_a_stale_one_and_is_removed_on_exit() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("ctl.sock");
    // A stale socket left by a killed agent: nobody listens on it.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(socket.exists());
    // Set through the config file key this time.
    let config = dir.path().join("ibsnmpd.toml");
    std::fs::write(
        &config,
        format!("control_socket = {:?}\n", socket.to_str().unwrap()),
    )
    .unwrap();
    let mut agent = Agent::start(&["--config", config.to_str().unwrap()]);
    let meta = std::fs::symlink_metadata(&socket).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    ok_line(&socket, &["status"]);

    // A second agent on the same socket is refused (exit 2), not stolen.
    let refused = |why: &str| {
        let sock = socket.to_str().unwrap();
        let out = common::run_agent(
            &["--listen", "127.0.0.1:0", "--control-socket", sock],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{out:?}"
        );
    };
    refused("in use");
    ok_line(&socket, &["status"]);

    assert!(agent.terminate().success());
    assert!(!socket.exists(), "socket left behind after SIGTERM");

    // Not a socket: refused, and the file is left alone.
    std::fs::write(&socket, "data").unwrap();
    refused("not a socket");
    assert_eq!(std::fs::read_to_string(&socket).unwrap(), "data");
}
