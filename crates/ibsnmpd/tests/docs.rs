//! Docs that run: every code block of README.md and docs/*.md carries a
//! marker saying what it is, and the runnable ones are run here, so an
//! example cannot rot.
//!
//! The marker is an HTML comment on the line before the block (blank lines
//! between are allowed), invisible when the Markdown is rendered:
//!
//! - `<!-- doc: shell -->` runs in bash (`set -euo pipefail`, from the
//!   repository root) against a fresh agent on the simulated fabric, with
//!   the read-write community `private` and a control socket;
//! - `<!-- doc: agent -->` starts its own agent: a line running `ibsnmpd`
//!   without a subcommand is put in the background and waited for;
//! - `<!-- doc: config -->` is a configuration file: the agent must start
//!   with it and answer `public` from 127.0.0.1;
//! - `<!-- doc: json -->` must parse;
//! - `<!-- doc: output -->`, `<!-- doc: synopsis -->`: shown, not run;
//! - `<!-- doc: skip REASON -->`: not run here, and why.
//!
//! Commands run as written but for what keeps them on this machine and out
//! of each other's way: `cargo run --release --bin ibsnmpd [--]` and a
//! leading `ibsnmpd` are the binary under test; the ports 1161 and 9683 are
//! free ports; `/tmp/`, `/var/lib/ibsnmpd`, `/run/ibsnmpd` and
//! `/etc/ibsnmpd` are inside a temporary directory; HOME is one too.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{free_port, repo, Agent, BIN};

/// One code block and its marker.
#[derive(Debug)]
struct Block {
    place: String,
    kind: String,
    body: String,
}

/// The code blocks of a Markdown text: fenced, and indented by four spaces
/// after a blank line (list items' deeper indentation stays in the body).
fn blocks(file: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let marker_before = |at: usize| -> String {
        lines[..at]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| l.trim().strip_prefix("<!-- doc:"))
            .and_then(|l| l.strip_suffix("-->"))
            .map(|k| k.trim().to_string())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.trim_start().starts_with("```") {
            let mut j = i + 1;
            while j < lines.len() && !lines[j].trim_start().starts_with("```") {
                j += 1;
            }
            out.push(Block {
                place: format!("{file}:{}", i + 1),
                kind: marker_before(i),
                body: lines[i + 1..j.min(lines.len())].join("\n"),
            });
            i = j + 1;
            continue;
        }
        if l.starts_with("    ") && (i == 0 || lines[i - 1].trim().is_empty()) {
            let mut j = i;
            let mut body = Vec::new();
            while j < lines.len() && (lines[j].starts_with("    ") || lines[j].trim().is_empty()) {
                body.push(lines[j].get(4..).unwrap_or(""));
                j += 1;
            }
            while body.last().is_some_and(|b| b.trim().is_empty()) {
                body.pop();
            }
            out.push(Block {
                place: format!("{file}:{}", i + 1),
                kind: marker_before(i),
                body: body.join("\n"),
            });
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

fn all_blocks() -> Vec<Block> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .iter()
        .flat_map(|f| {
            let name = f.strip_prefix(repo()).unwrap_or(f).display().to_string();
            blocks(&name, &std::fs::read_to_string(f).unwrap())
        })
        .collect()
}

/// What a block becomes to run here.
struct Rewrite {
    tmp: PathBuf,
    snmp_port: u16,
    metrics_port: u16,
}

impl Rewrite {
    fn new(tmp: &Path) -> Rewrite {
        Rewrite {
            tmp: tmp.to_path_buf(),
            snmp_port: free_port("127.0.0.1"),
            metrics_port: free_port("127.0.0.1"),
        }
    }

    fn apply(&self, text: &str) -> String {
        let t = self.tmp.display().to_string();
        // The binary goes in last, through a placeholder: its own path may
        // hold `/tmp/` or a port (a checkout under /tmp), which the
        // rewrites below must not touch.
        const BINARY: &str = "\u{1}ibsnmpd-under-test\u{1}";
        let mut s = text
            .replace("cargo run --release --bin ibsnmpd --", BINARY)
            .replace("cargo run --release --bin ibsnmpd", BINARY)
            .lines()
            .map(|l| match l.trim_start().strip_prefix("ibsnmpd ") {
                Some(rest) => format!("{BINARY} {rest}"),
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
            .replace(":1161", &format!(":{}", self.snmp_port))
            .replace(":9683", &format!(":{}", self.metrics_port))
            .replace("/tmp/", &format!("{t}/tmp/"));
        for dir in ["/var/lib/ibsnmpd", "/run/ibsnmpd", "/etc/ibsnmpd"] {
            s = s.replace(dir, &format!("{t}{dir}"));
        }
        s.replace(BINARY, BIN)
    }
}

/// The script's head: strict mode, tools, a readiness wait, cleanup.
fn prelude(rw: &Rewrite) -> String {
    format!(
        "set -euo pipefail\n\
         export HOME={tmp} PATH={bindir}:$PATH\n\
         wait_ready() {{\n\
           for _ in $(seq 150); do\n\
             snmpget -v2c -c public -t 0.3 -r 0 127.0.0.1:{port} .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1 && return 0\n\
             sleep 0.2\n\
           done\n\
           echo 'the agent never answered' >&2; return 1\n\
         }}\n\
         trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n",
        tmp = rw.tmp.display(),
        bindir = Path::new(BIN).parent().unwrap().display(),
        port = rw.snmp_port,
    )
}

/// `ibsnmpd` serving (no subcommand) in a line of a block.
fn starts_agent(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix(BIN) else {
        return false;
    };
    let first = rest.split_whitespace().next().unwrap_or("");
    !matches!(
        first,
        "dump" | "topology" | "ctl" | "man" | "health" | "help"
    )
}

fn run_script(place: &str, script: &str, dir: &Path) -> Result<(), String> {
    let path = dir.join("block.sh");
    std::fs::write(&path, script).unwrap();
    let o = Command::new("timeout")
        .args(["120", "bash"])
        .arg(&path)
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{place}: {}\n--- script\n{script}\n--- stdout\n{}\n--- stderr\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

fn run_block(b: &Block) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    for d in ["tmp", "var/lib", "run/ibsnmpd", "etc/ibsnmpd"] {
        std::fs::create_dir_all(tmp.path().join(d)).unwrap();
    }
    let rw = Rewrite::new(tmp.path());
    let kind = b.kind.split_whitespace().next().unwrap_or("");
    match kind {
        "shell" => {
            let ctl = tmp.path().join("tmp/ibsnmpd.sock");
            let ctl_s = ctl.display().to_string();
            let agent = Agent::start(&["--control-socket", &ctl_s, "--sweep-interval", "1"]);
            let body = rw
                .apply(&b.body)
                .replace(&format!("127.0.0.1:{}", rw.snmp_port), &agent.target);
            run_script(&b.place, &format!("{}{body}\n", prelude(&rw)), tmp.path())
                .map_err(|e| format!("{e}\n--- agent log\n{}", agent.log_text()))
        }
        "agent" => {
            let mut script = prelude(&rw);
            for line in rw.apply(&b.body).lines() {
                if starts_agent(line) {
                    let mut l = line.trim_end().trim_end_matches('&').to_string();
                    if !l.contains("--listen") {
                        l.push_str(&format!(" --listen 127.0.0.1:{}", rw.snmp_port));
                    }
                    script.push_str(&format!("{l} &\nwait_ready\n"));
                } else {
                    script.push_str(line);
                    script.push('\n');
                }
            }
            run_script(&b.place, &script, tmp.path())
        }
        "config" => {
            let conf = tmp.path().join("ibsnmpd.toml");
            let text = rw.apply(&b.body);
            std::fs::write(&conf, &text).unwrap();
            let listen = if text.contains("agentaddress") {
                String::new()
            } else {
                format!(" --listen 127.0.0.1:{}", rw.snmp_port)
            };
            let script = format!(
                "{}{BIN} --config {}{listen} &\nwait_ready\n\
                 snmpget -v2c -c public 127.0.0.1:{} .1.3.6.1.2.1.1.1.0\n",
                prelude(&rw),
                conf.display(),
                rw.snmp_port
            );
            run_script(&b.place, &script, tmp.path())
        }
        "json" => serde_json::from_str::<serde_json::Value>(&b.body)
            .map(|_| ())
            .map_err(|e| format!("{}: not JSON: {e}", b.place)),
        "output" | "synopsis" => Ok(()),
        "skip" if b.kind.split_whitespace().count() > 1 => Ok(()),
        "skip" => Err(format!("{}: `skip` needs a reason", b.place)),
        "" => Err(format!(
            "{}: no `<!-- doc: KIND -->` marker before this block (crates/ibsnmpd/tests/docs.rs)",
            b.place
        )),
        k => Err(format!("{}: unknown marker kind {k:?}", b.place)),
    }
}

/// Every block of README.md and docs/ is marked, and the runnable ones run.
#[test]
fn every_example_in_the_docs_runs() {
    common::require_tool("snmpget");
    let blocks = all_blocks();
    assert!(blocks.len() > 30, "{} blocks", blocks.len());
    let started = Instant::now();
    let failures: Vec<String> = blocks
        .iter()
        .filter_map(|b| {
            let t = Instant::now();
            let r = run_block(b).err();
            eprintln!("{} ({}) {:?}", b.place, b.kind, t.elapsed());
            r
        })
        .collect();
    eprintln!("{} blocks checked in {:?}", blocks.len(), started.elapsed());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The runner itself: markers are found through blank lines, list items'
/// blocks keep their text, and an unmarked block is an error.
#[test]
fn blocks_and_markers_are_found() {
    let md = "Intro\n\n<!-- doc: shell -->\n\n    snmpget a\n    snmpget b\n\ntext\n\n\
              ```toml\nx = 1\n```\n\n<!-- doc: skip needs an HCA -->\n```\ny\n```\n";
    let b = blocks("x.md", md);
    assert_eq!(b.len(), 3);
    assert_eq!(
        (b[0].kind.as_str(), b[0].body.as_str()),
        ("shell", "snmpget a\nsnmpget b")
    );
    assert_eq!((b[1].kind.as_str(), b[1].body.as_str()), ("", "x = 1"));
    assert!(run_block(&b[1])
        .unwrap_err()
        .contains("x.md:10: no `<!-- doc"));
    assert!(run_block(&b[2]).is_ok());
}
