//! The subcommands and the sim source, through the real binary.

mod common;

use std::process::Command;

use common::{parse_lines, Agent, BIN};

#[test]
fn fat_tree_dump_and_serve() {
    let tmp = tempfile::tempdir().unwrap();
    let net = tmp.path().join("fabric.net");
    let o = Command::new(BIN)
        .args([
            "topology", "fat-tree", "--hosts", "24", "--radix", "8", "-o",
        ])
        .arg(&net)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&net).unwrap();
    assert!(text.contains("Switch"), "{text}");

    let spec = format!("sim:{}", net.display());
    let o = Command::new(BIN)
        .args(["dump", "--source", &spec, "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("dump --format json");
    assert!(json.is_object());

    let o = Command::new(BIN)
        .args(["dump", "--source", &spec])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Switch"));

    // The agent serves it, with a fast sweep, and keeps answering across sweeps.
    let agent = Agent::start(&["--source", &spec, "--sweep-interval", "0.2"]);
    let out = agent.ok("snmpwalk", "2c", "public", &[], &[".1.3.6.1.2.1.1"]);
    assert!(parse_lines(&out).len() >= 10, "{out}");
    std::thread::sleep(std::time::Duration::from_millis(600));
    let out = agent.ok("snmpget", "2c", "public", &[], &[".1.3.6.1.2.1.1.1.0"]);
    assert!(out.contains("sim:"), "{out}");
}

#[test]
fn bad_topology_file_exits_2() {
    let (tmp, net) = common::temp_file(
        "bad.net",
        "Switch 8 \"S1\"\n[1] \"nowhere\"[1]\nthis is not a topology line\n",
    );
    let spec = format!("sim:{}", net.display());
    let o = Command::new(BIN)
        .args(["--source", &spec, "--listen", "127.0.0.1:0"])
        .arg("--state-dir")
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("bad.net"), "{err}");
}

/// `ibsnmpd routes check` on the sim (docs/routing.md): every route of its
/// tables arrives and its leaves' uplinks carry even shares (exit 0); a
/// source it cannot read or a bad threshold is exit 2.
#[test]
fn routes_check_exit_codes() {
    let run = |args: &[&str]| {
        let o = Command::new(BIN)
            .args(["routes", "check"])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
        )
    };
    let (code, out) = run(&[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with("Routes: sim, 4 switches to 14 end LIDs: 56 routes, 56 arrive"),
        "{out}"
    );
    assert!(out.contains("No findings"), "{out}");
    let (code, json) = run(&["--format", "json"]);
    assert_eq!(code, Some(0), "{json}");
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["check"]["good"], 56);
    for b in j["check"]["balance"].as_array().unwrap() {
        // As even as the hosts' LIDs allow (5 over 2 uplinks: 3 and 2).
        let counts: Vec<u64> = b["uplinks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u[1].as_u64().unwrap())
            .collect();
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(max - min <= 1, "even shares: {b}");
    }
    // A threshold no uneven share passes: findings, exit 1.
    assert_eq!(run(&["--max-spread", "0"]).0, Some(1));
    assert_eq!(run(&["--source", "sim:/nonexistent.net"]).0, Some(2));
    assert_eq!(run(&["--max-spread", "-1"]).0, Some(2));
}

/// A missing required argument is named on the one error line; a command
/// that needs a subcommand and got none prints its help (stdout) and one
/// line saying so (stderr), exit 2.
#[test]
fn missing_arguments_and_subcommands_are_named() {
    for (args, want) in [
        (
            &["topology", "check"][..],
            "not provided: --expected <FILE>",
        ),
        (&["ctl", "status"][..], "not provided: --socket <PATH>"),
        (&["topology", "fat-tree"][..], "not provided: --hosts <N>"),
    ] {
        let o = Command::new(BIN).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("ibsnmpd: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let o = Command::new(BIN).arg("topology").output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        out.contains("Usage: ibsnmpd topology")
            && out.contains("fat-tree")
            && out.contains("check"),
        "{out}"
    );
    assert_eq!(
        err.trim_end(),
        "ibsnmpd: topology: a subcommand is needed (listed above)"
    );
}
