//! The fabric against its cabling plan (issue 40) on ibsim + OpenSM: the
//! plan is `ibsnmpd dump --format ibnetdiscover` of the good fabric, then
//! ibsim's console pulls cn004's cable and swaps two cables (cn003 and
//! cn005 exchange their switch ports). `ibsnmpd topology check` names
//! exactly the missing link and the one swap (exit 1, text and JSON), as
//! does a plan by node names only; the running agent (`[topology]
//! expected`) shows them in its health report and /metrics and sends one
//! mteTriggerFired per finding to snmptrapd, and mteTriggerFalling for each
//! once the cables are back. cn006's link runs at 1x from the start (ibsim's
//! `w=1`): a plan wanting 4x there gives one BELOW PLAN.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::{curl, UmadAgent};
use ib_testbed::{check_tools, Testbed, TestbedConfig};
use trapd::{named, Trapd};

const BIN: &str = env!("CARGO_BIN_EXE_ibsnmpd");

/// Three edge switches in a chain, two hosts each; names as a site's plan
/// would have them. cn006's link runs at 1x (ibsim's `w=1`).
const NET: &str = "\
Switch\t8 \"edge-1\"
[1]\t\"cn001\"[1]
[2]\t\"cn002\"[1]
[7]\t\"edge-2\"[7]

Switch\t8 \"edge-2\"
[1]\t\"cn003\"[1]
[2]\t\"cn004\"[1]
[7]\t\"edge-1\"[7]
[8]\t\"edge-3\"[8]

Switch\t8 \"edge-3\"
[1]\t\"cn005\"[1]
[2]\t\"cn006\"[1]\tw=1
[8]\t\"edge-2\"[8]

Hca\t1 \"cn001\"
[1]\t\"edge-1\"[1]

Hca\t1 \"cn002\"
[1]\t\"edge-1\"[2]

Hca\t1 \"cn003\"
[1]\t\"edge-2\"[1]

Hca\t1 \"cn004\"
[1]\t\"edge-2\"[2]

Hca\t1 \"cn005\"
[1]\t\"edge-3\"[1]

Hca\t1 \"cn006\"
[1]\t\"edge-3\"[2]\tw=1
";

const WAIT: Duration = Duration::from_secs(60);

fn check(tb: &Testbed, plan: &Path, format: &str) -> Output {
    tb.command(BIN)
        .args(["topology", "check", "--source", "umad", "--format", format])
        .arg("--expected")
        .arg(plan)
        .output()
        .expect("ibsnmpd topology check")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the check must say after the changes, whichever way the plan
/// names the nodes: cn004's link missing and one swap, nothing else.
fn assert_missing_and_swap(text: &str) {
    let lines: Vec<&str> = text.lines().skip(1).map(str::trim).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("MISSING: \"edge-2\" port 2 (")
            && lines[0].contains("-- \"cn004\" port 1")
            && lines[0].ends_with("no link (\"cn004\" is not in the fabric)"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("MISCABLED: two cables swapped: \"edge-2\" port 1 (")
            && lines[1].contains("; \"edge-3\" port 1 (")
            && lines[1].contains("\"edge-2\" port 1 (0x0000000000200001) reaches \"cn005\" port 1")
            && lines[1].contains("planned \"cn003\" port 1"),
        "{text}"
    );
}

use trapd::of_trigger as triggers;

#[test]
fn missing_link_and_swap_from_cli_agent_metrics_and_traps() {
    check_tools().unwrap();
    let tb = Testbed::start(TestbedConfig::new(NET)).unwrap();
    let dir = tempfile::tempdir().unwrap();

    // The plan: the good fabric as ibnetdiscover prints it.
    let dump = tb
        .command(BIN)
        .args(["dump", "--source", "umad", "--format", "ibnetdiscover"])
        .output()
        .unwrap();
    assert!(dump.status.success(), "{dump:?}");
    let plan = dir.path().join("plan.net");
    std::fs::write(&plan, &dump.stdout).unwrap();
    let names = dir.path().join("names.net");
    std::fs::write(&names, NET).unwrap();
    for p in [&plan, &names] {
        let o = check(&tb, p, "text");
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        assert!(stdout(&o).starts_with("topology: the fabric matches"));
    }

    // A plan that wants cn006's link at 4x: BELOW PLAN, nothing else.
    let wide = dir.path().join("wide.net");
    std::fs::write(&wide, NET.replace("\tw=1", "\tw=1\t# 4xSDR")).unwrap();
    let o = check(&tb, &wide, "text");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let lines: Vec<String> = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.trim().to_string())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    eprintln!("{}", lines[0]);
    assert!(
        lines[0]
            .starts_with("BELOW PLAN: \"edge-3\" port 2 (0x0000000000200002) -- \"cn006\" port 1")
            && lines[0].contains(": 1x")
            && lines[0].ends_with(", planned 4xSDR"),
        "{lines:?}"
    );

    // The agent, holding the fabric against the plan.
    let trapd = Trapd::start();
    let mport = common::free_port("127.0.0.1");
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(
        &conf,
        format!(
            "trap2sink = [\"{}\"]\n[topology]\nexpected = \"{}\"\n",
            trapd.addr(),
            plan.display()
        ),
    )
    .unwrap();
    let socket = dir.path().join("ctl.sock");
    let metrics = format!("127.0.0.1:{mport}");
    let agent = UmadAgent::start_operated(&tb, None, &conf, &socket, &metrics, WAIT);
    trapd.wait(WAIT, "coldStart", |t| !named(t, "coldStart").is_empty());
    let url = format!("http://{metrics}/metrics");
    assert!(
        curl(&url).contains("infiniband_topology_mismatches{kind=\"missing\"} 0"),
        "{}",
        curl(&url)
    );

    // cn004's cable out; cn003 and cn005 swap their switch ports.
    tb.console("Unlink \"cn004\"[1]").unwrap();
    tb.console("Unlink \"cn003\"[1]").unwrap();
    tb.console("Unlink \"cn005\"[1]").unwrap();
    tb.console("Link \"edge-3\"[1] \"cn003\"[1]").unwrap();
    tb.console("Link \"edge-2\"[1] \"cn005\"[1]").unwrap();

    // The CLI, once discovery sees both moved hosts again.
    let text = common::wait_for("the CLI to see the changes", WAIT, || {
        let o = check(&tb, &plan, "text");
        let t = stdout(&o);
        (o.status.code() == Some(1) && t.lines().count() == 3).then_some(t)
    });
    eprintln!("{text}");
    assert_missing_and_swap(&text);
    let json = check(&tb, &plan, "json");
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["matches"], false);
    assert_eq!(v["counts"]["missing"], 1);
    assert_eq!(v["counts"]["miscabled"], 1);
    let kinds: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["missing", "swapped"], "{v:#}");
    assert_eq!(v["findings"][0]["b"]["node"], "cn004");
    assert_eq!(v["findings"][0]["b_present"], false);
    // The same from a plan that knows the nodes by name only.
    let by_name = check(&tb, &names, "text");
    assert_eq!(by_name.status.code(), Some(1), "{by_name:?}");
    assert_missing_and_swap(&stdout(&by_name));

    // The agent's health report (its control socket) says the same.
    let health = common::wait_for("the agent's report", WAIT, || {
        let out = tb
            .command(BIN)
            .args(["health", "--socket", socket.to_str().unwrap()])
            .output()
            .unwrap();
        let t = stdout(&out);
        t.contains("topology: 2 difference(s)").then_some(t)
    });
    let topo = &health[health.find("topology: 2 difference(s)").unwrap()..];
    assert_missing_and_swap(topo);
    let m = curl(&url);
    for line in [
        "infiniband_topology_mismatches{kind=\"missing\"} 1",
        "infiniband_topology_mismatches{kind=\"miscabled\"} 1",
        "infiniband_topology_mismatches{kind=\"unexpected\"} 0",
        "infiniband_topology_port_mismatch{guid=\"0x0000000000200001\",port=\"2\",kind=\"missing\",node=\"edge-2\"} 1",
        "infiniband_topology_port_mismatch{guid=\"0x0000000000200002\",port=\"1\",kind=\"miscabled\",node=\"edge-3\"} 1",
    ] {
        assert!(m.contains(line), "{line} not in\n{m}");
    }

    // One notification per finding.
    let t = trapd.wait(WAIT, "topology notifications", |t| {
        !triggers(t, "mteTriggerFired", "topology:missing").is_empty()
            && !triggers(t, "mteTriggerFired", "topology:miscabled").is_empty()
    });
    assert_eq!(triggers(&t, "mteTriggerFired", "topology:missing").len(), 1);
    assert_eq!(
        triggers(&t, "mteTriggerFired", "topology:miscabled").len(),
        1
    );
    let missing = triggers(&t, "mteTriggerFired", "topology:missing")[0];
    assert_eq!(
        missing.object("IB-SM-MIB::ibSmTrapPortNum1.0"),
        Some("Gauge32: 2")
    );

    // Cables back as planned: both clear, each notified once.
    tb.console("Unlink \"cn003\"[1]").unwrap();
    tb.console("Unlink \"cn005\"[1]").unwrap();
    tb.console("Link \"edge-2\"[1] \"cn003\"[1]").unwrap();
    tb.console("Link \"edge-3\"[1] \"cn005\"[1]").unwrap();
    tb.console("ReLink \"cn004\"[1]").unwrap();
    let t = trapd.wait(WAIT, "topology clearances", |t| {
        !triggers(t, "mteTriggerFalling", "topology:missing").is_empty()
            && !triggers(t, "mteTriggerFalling", "topology:miscabled").is_empty()
    });
    assert_eq!(
        triggers(&t, "mteTriggerFalling", "topology:missing").len(),
        1
    );
    let log = agent.log_text();
    assert!(
        log.contains("topology cleared: MISSING: \"edge-2\" port 2"),
        "{log}"
    );
    let o = check(&tb, &plan, "text");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// The agent's health report, or None while the socket does not answer.
fn agent_health(socket: &Path) -> String {
    let o = Command::new(BIN)
        .args(["health", "--socket"])
        .arg(socket)
        .output()
        .unwrap();
    stdout(&o)
}

/// `[topology] expected` on the simulator: a plan by names that matches;
/// SIGHUP after the plan file changed shows the new plan's difference; a
/// plan that no longer parses refuses the reload and the old plan stays; a
/// plan that does not parse at start stops the start (exit 2).
#[test]
fn the_plan_is_read_again_on_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.net");
    let good = include_str!("../../ib/src/source/sim/default.net");
    std::fs::write(&plan, good).unwrap();
    let config = format!("[topology]\nexpected = \"{}\"\n", plan.display());
    let (agent, socket) = common::agent_with_socket(dir.path(), &config, &[]);
    let matches = common::wait_for("the first comparison", WAIT, || {
        let h = agent_health(&socket);
        h.contains("topology: the fabric matches").then_some(h)
    });
    assert!(matches.contains(&plan.display().to_string()), "{matches}");

    // The plan moves node02's cable to leaf01 port 9: one MISCABLED.
    let moved = good
        .replace("\"leaf01\"[2]", "\"leaf01\"[9]")
        .replace("[2]\t\"node02\"[1]", "[9]\t\"node02\"[1]");
    assert_ne!(moved, good);
    std::fs::write(&plan, &moved).unwrap();
    common::signal(&agent.pid().to_string(), "HUP");
    let h = common::wait_for("the new plan", WAIT, || {
        let h = agent_health(&socket);
        h.contains("topology: 1 difference(s)").then_some(h)
    });
    assert!(
        h.contains(
            "MISCABLED: \"leaf01\" port 2 (0x0000000000200000) reaches \"node02 mlx5_0\" port 1"
        ) || h.contains("MISCABLED: \"node02 mlx5_0\" port 1"),
        "{h}"
    );

    // A broken plan: the reload is refused, the plan in force stays.
    std::fs::write(&plan, "Switch 8 \"x\"\n[1] \"nowhere\"[1]\n").unwrap();
    common::signal(&agent.pid().to_string(), "HUP");
    let log = common::wait_for("the refusal", WAIT, || {
        let l = agent.log_text();
        l.contains("reload refused").then_some(l)
    });
    assert!(log.contains("nowhere"), "{log}");
    assert!(agent_health(&socket).contains("topology: 1 difference(s)"));
    drop(agent);

    // At start, the same file stops the agent with the parser's words.
    let out = common::run_agent(
        &[
            "--config",
            dir.path().join("ibsnmpd.toml").to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plan.net:2:") && err.contains("\"nowhere\""),
        "{err}"
    );
}

/// [`NET`] as ibdiagnet's topology file (`ibdiagnet -t`), written by hand:
/// systems by name, each link once.
const IBDIAGNET: &str = "\
# The test fabric as an ibdiagnet (ibdm) topology file.
SX6036 edge-1
   P1 -4x-2.5G-> HCA cn001 P1
   P2 -4x-2.5G-> HCA cn002 P1
   P7 -4x-2.5G-> SX6036 edge-2 P7

SX6036 edge-2
   P1 -4x-2.5G-> HCA cn003 P1
   P2 -4x-2.5G-> HCA cn004 P1
   P8 -4x-2.5G-> SX6036 edge-3 P8

SX6036 edge-3
   P1 -4x-2.5G-> HCA cn005 P1
   P2 -1x-2.5G-> HCA cn006 P1
";

/// The findings of a JSON report, the GUID left out of ends on nodes the
/// fabric does not have (`b` of a MISSING whose `b_present` is false):
/// ibnetdiscover's default format gives a host's node GUID, -p and
/// iblinkinfo only its port GUIDs, ibdiagnet's none.
fn findings_but_absent_guids(json: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let mut f = v["findings"].take();
    for x in f.as_array_mut().unwrap() {
        if x["kind"] == "missing" && x["b_present"] == false {
            x["b"].as_object_mut().unwrap().remove("guid");
        }
    }
    f
}

/// Issue 52 item 8: a plan as `ibnetdiscover -p` or iblinkinfo printed it
/// from the live fabric, or as an ibdiagnet topology file, gives the same
/// findings as ibnetdiscover's default format: none on the good fabric,
/// and cn004's missing link and the one swap after the changes.
#[test]
fn plans_in_every_format_give_the_same_findings() {
    check_tools().unwrap();
    let tb = Testbed::start(TestbedConfig::new(NET)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut plans = Vec::new();
    for (file, tool, args) in [
        ("ibnetdiscover.net", "ibnetdiscover", &[][..]),
        ("ports.txt", "ibnetdiscover", &["-p"][..]),
        ("linkinfo.txt", "iblinkinfo", &[][..]),
        ("linkinfo-l.txt", "iblinkinfo", &["-l"][..]),
    ] {
        let out = tb.run_diag(tool, args).unwrap();
        assert!(out.success(), "{tool} {args:?}: {}", out.stderr);
        let p = dir.path().join(file);
        std::fs::write(&p, &out.stdout).unwrap();
        plans.push(p);
    }
    let p = dir.path().join("ibdiagnet.topo");
    std::fs::write(&p, IBDIAGNET).unwrap();
    plans.push(p);
    for p in &plans {
        let o = check(&tb, p, "text");
        assert_eq!(o.status.code(), Some(0), "{}: {o:?}", p.display());
        assert!(stdout(&o).starts_with("topology: the fabric matches"));
    }

    tb.console("Unlink \"cn004\"[1]").unwrap();
    tb.console("Unlink \"cn003\"[1]").unwrap();
    tb.console("Unlink \"cn005\"[1]").unwrap();
    tb.console("Link \"edge-3\"[1] \"cn003\"[1]").unwrap();
    tb.console("Link \"edge-2\"[1] \"cn005\"[1]").unwrap();
    let text = common::wait_for("the CLI to see the changes", WAIT, || {
        let o = check(&tb, &plans[0], "text");
        let t = stdout(&o);
        (o.status.code() == Some(1) && t.lines().count() == 3).then_some(t)
    });
    assert_missing_and_swap(&text);
    let json = check(&tb, &plans[0], "json");
    let want = findings_but_absent_guids(&json.stdout);
    let kinds: Vec<&str> = want
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["missing", "swapped"], "{want:#}");
    for p in &plans[1..] {
        let o = check(&tb, p, "text");
        assert_eq!(o.status.code(), Some(1), "{}: {o:?}", p.display());
        assert_missing_and_swap(&stdout(&o));
        let json = check(&tb, p, "json");
        assert_eq!(json.status.code(), Some(1), "{}", p.display());
        assert_eq!(
            findings_but_absent_guids(&json.stdout),
            want,
            "{}",
            p.display()
        );
    }
}

/// Issue 53 item 2: a plan that would block its reader (an `include` of a
/// FIFO nobody writes) is refused at once, at start and on SIGHUP; the
/// agent keeps its plan and answers, a later reload applies, SIGTERM
/// stops it.
#[test]
fn a_plan_that_would_block_is_refused_and_the_agent_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(st.success());
    let plan = dir.path().join("plan.net");
    let good = include_str!("../../ib/src/source/sim/default.net");
    std::fs::write(&plan, good).unwrap();
    let config = format!("[topology]\nexpected = \"{}\"\n", plan.display());
    let (mut agent, socket) = common::agent_with_socket(dir.path(), &config, &[]);
    common::wait_for("the first comparison", WAIT, || {
        agent_health(&socket)
            .contains("topology: the fabric matches")
            .then_some(())
    });

    // Nobody ever writes the FIFO: a read of it would wait forever.
    std::fs::write(&plan, format!("{good}\ninclude \"fifo\"\n")).unwrap();
    common::signal(&agent.pid().to_string(), "HUP");
    let log = common::wait_for("the refusal", WAIT, || {
        let l = agent.log_text();
        l.contains("reload refused").then_some(l)
    });
    assert!(
        log.contains("fifo: a FIFO: only regular files are read"),
        "{log}"
    );
    assert!(agent_health(&socket).contains("topology: the fabric matches"));

    // The next reload, of a plan that reads, applies.
    let moved = good
        .replace("\"leaf01\"[2]", "\"leaf01\"[9]")
        .replace("[2]\t\"node02\"[1]", "[9]\t\"node02\"[1]");
    std::fs::write(&plan, &moved).unwrap();
    common::signal(&agent.pid().to_string(), "HUP");
    common::wait_for("the new plan", WAIT, || {
        agent_health(&socket)
            .contains("topology: 1 difference(s)")
            .then_some(())
    });
    let st = agent.terminate();
    assert!(st.success(), "{st:?}");

    // At start: the plan itself a FIFO stops the start, without a read.
    std::fs::write(
        dir.path().join("ibsnmpd.toml"),
        format!("[topology]\nexpected = \"{}\"\n", fifo.display()),
    )
    .unwrap();
    let mut child = Reaped(
        Command::new(BIN)
            .args([
                "--config",
                dir.path().join("ibsnmpd.toml").to_str().unwrap(),
            ])
            .arg("--state-dir")
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let status = common::wait_for("the refused start", WAIT, || child.0.try_wait().unwrap());
    assert_eq!(status.code(), Some(2));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.0.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("a FIFO: only regular files are read"), "{err}");
}

/// A child killed and reaped when the test ends, however it ends.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}
