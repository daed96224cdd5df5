//! SIGHUP with notification sinks (docs/usage.md, "Reloading"): a sink
//! added to the file gets the next notification (the reload's own
//! warmStart) at snmptrapd, a sink taken out gets no more, the
//! SNMP-TARGET-MIB rows show the new sinks, and what needs a restart is
//! named in one warning line.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Agent;
use trapd::{count, Trapd};

const WAIT: Duration = Duration::from_secs(15);
/// snmpTargetParamsMPModel."internal0" (the first configured sink's row;
/// the index is the name, IMPLIED).
const INTERNAL0_MP_MODEL: &str = ".1.3.6.1.6.3.12.1.3.1.2.105.110.116.101.114.110.97.108.48";

/// `ibsnmpd.toml` of `text` in a fresh directory.
fn config_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(&conf, text).unwrap();
    (dir, conf)
}

/// Rewrites the config file `conf` with `text` and sends `agent` SIGHUP.
fn reload(agent: &Agent, conf: &Path, text: &str) {
    std::fs::write(conf, text).unwrap();
    common::signal(&agent.pid().to_string(), "HUP");
}

/// Asserts that `agent` has said of no setting that it needs a restart.
fn assert_no_restart_warning(agent: &Agent) {
    let log = agent.log_text();
    assert!(common::restart_warnings(&log).is_empty(), "{log}");
}

#[test]
fn sighup_sends_to_a_trapsess_added_and_not_to_a_sink_removed() {
    let engine = "8000000005aabbccee";
    let old_sink = Trapd::start();
    let new_sink = Trapd::start_v3(engine);
    let user = "[[user]]\nname = \"trapops\"\nauth = \"SHA-256\"\nauth_pass = \"authpass-1\"\n\
                priv = \"AES\"\npriv_pass = \"privpass-1\"\n";
    let (_dir, conf) = config_file(&format!(
        "engine_id = \"{engine}\"\ntrap2sink = [\"{}\"]\n{user}",
        old_sink.addr()
    ));
    let agent = Agent::start(&["--config", conf.to_str().unwrap()]);
    old_sink.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    // SNMPv2c: snmpTargetParamsMPModel 1.
    assert!(
        agent.get(&[INTERNAL0_MP_MODEL]).contains("INTEGER: 1"),
        "{}",
        agent.log_text()
    );

    // The trap2sink goes, a [[trapsess]] comes; the queue length changes
    // only on restart.
    reload(
        &agent,
        &conf,
        &format!(
            "engine_id = \"{engine}\"\nnotification_queue = 64\n{user}\
             [[trapsess]]\nhost = \"{}\"\nuser = \"trapops\"\nlevel = \"priv\"\n",
            new_sink.addr()
        ),
    );
    let t = new_sink.wait(WAIT, "warmStart at the sink added", |t| {
        count(t, "warmStart") == 1
    });
    assert_eq!(count(&t, "coldStart"), 0, "{}", new_sink.text());
    // snmptrapd names the USM user it authenticated and decrypted with.
    assert!(new_sink.text().contains("trapops"), "{}", new_sink.text());
    // The removed sink came first in the same send: it had its chance.
    assert_eq!(
        count(&old_sink.traps(), "warmStart"),
        0,
        "{}",
        old_sink.text()
    );
    // The row is the new sink's: SNMPv3, snmpTargetParamsMPModel 3.
    assert!(agent.get(&[INTERNAL0_MP_MODEL]).contains("INTEGER: 3"));

    let log = agent.log_text();
    let restart = common::restart_warnings(&log);
    assert_eq!(restart.len(), 1, "{log}");
    assert!(restart[0].contains("notification_queue"), "{log}");
    assert!(!restart[0].contains("trapsess"), "{log}");
}

/// `[health]` applies from the next snapshot: /metrics shows the new
/// threshold, and nothing is said to need a restart.
#[test]
fn sighup_applies_the_health_settings() {
    let (_dir, conf) = config_file("[health]\nflap_count = 2\n");
    let maddr = format!("127.0.0.1:{}", common::free_port("127.0.0.1"));
    let agent = Agent::start(&[
        "--config",
        conf.to_str().unwrap(),
        "--metrics",
        &maddr,
        "--sweep-interval",
        "1",
    ]);
    let url = format!("http://{maddr}/metrics");
    let scrape = || {
        let o = std::process::Command::new("curl")
            .args(["-sS", "--fail", "--max-time", "10", &url])
            .output()
            .expect("curl");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let threshold = |n: u32| format!("infiniband_health_threshold{{check=\"flap_count\"}} {n}\n");
    assert!(scrape().contains(&threshold(2)), "{}", scrape());
    reload(&agent, &conf, "[health]\nflap_count = 5\n");
    let deadline = std::time::Instant::now() + WAIT;
    while !scrape().contains(&threshold(5)) {
        assert!(std::time::Instant::now() < deadline, "{}", agent.log_text());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_no_restart_warning(&agent);
    let log = agent.log_text();
    assert!(log.contains("SIGHUP: configuration reloaded"), "{log}");
}

/// `[routes] max_spread` applies from the next snapshot, with no restart
/// warning: the running agent's routes report (`ibsnmpd health --socket`)
/// carries the threshold in force.
#[test]
fn sighup_applies_the_routes_max_spread() {
    let (dir, conf) = config_file("[routes]\nmax_spread = 100\n");
    let socket = dir.path().join("ctl.sock");
    let agent = Agent::start(&[
        "--config",
        conf.to_str().unwrap(),
        "--control-socket",
        socket.to_str().unwrap(),
        "--sweep-interval",
        "1",
    ]);
    let spread = || {
        let o = std::process::Command::new(common::BIN)
            .args(["health", "--format", "json", "--socket"])
            .arg(&socket)
            .output()
            .ok()?;
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).ok()?;
        j["routes"]["max_spread"].as_f64()
    };
    common::wait_for("the routes report", WAIT, || {
        spread().filter(|s| *s == 100.0)
    });
    reload(&agent, &conf, "[routes]\nmax_spread = 0.5\n");
    common::wait_for("max_spread 0.5 in force", WAIT, || {
        spread().filter(|s| *s == 0.5)
    });
    assert_no_restart_warning(&agent);
}

/// A `[[monitor]]` added by a reload samples at once: its existence test
/// fires at its first sample (mteTriggerFired at snmptrapd with its name
/// as mteHotTrigger), and mteTriggerTable shows it instead of the old one.
#[test]
fn sighup_replaces_the_monitors() {
    let trapd = Trapd::start();
    let monitor = |name: &str| {
        format!(
            "trap2sink = [\"{}\"]\n\n[[monitor]]\nname = \"{name}\"\n\
             oid = \"SNMPv2-MIB::sysName.0\"\nwildcard = false\n\
             existence = [\"present\"]\nfrequency = 1\n",
            trapd.addr()
        )
    };
    let fired = |t: &[trapd::Trap], name: &str| {
        let hot = format!("STRING: {name}");
        trapd::named(t, "mteTriggerFired")
            .into_iter()
            .filter(|x| x.object("DISMAN-EVENT-MIB::mteHotTrigger.0") == Some(&*hot))
            .count()
    };
    let (_dir, conf) = config_file(&monitor("before"));
    let agent = Agent::start(&["--config", conf.to_str().unwrap()]);
    trapd.wait(WAIT, "the first monitor", |t| fired(t, "before") == 1);

    reload(&agent, &conf, &monitor("after"));
    trapd.wait(WAIT, "the monitor added by the reload", |t| {
        fired(t, "after") == 1
    });
    let walk = common::walk_with_shipped_mibs(&agent.target, "DISMAN-EVENT-MIB::mteTriggerValueID");
    assert!(
        walk.contains("'after'") && !walk.contains("'before'"),
        "{walk}"
    );
    assert_no_restart_warning(&agent);
}

/// `authtrapenable` is snmpEnableAuthenTraps' default: a reload changes it
/// at once (a value Set over SNMP would still win).
#[test]
fn sighup_applies_authtrapenable() {
    let (_dir, conf) = config_file("authtrapenable = 2\n");
    let agent = Agent::start(&["--config", conf.to_str().unwrap()]);
    const SNMP_ENABLE_AUTHEN_TRAPS: &str = ".1.3.6.1.2.1.11.30.0";
    assert_eq!(agent.get_number(SNMP_ENABLE_AUTHEN_TRAPS), 2);
    reload(&agent, &conf, "authtrapenable = 1\n");
    let deadline = std::time::Instant::now() + WAIT;
    while agent.get_number(SNMP_ENABLE_AUTHEN_TRAPS) != 1 {
        assert!(std::time::Instant::now() < deadline, "{}", agent.log_text());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_no_restart_warning(&agent);
}
