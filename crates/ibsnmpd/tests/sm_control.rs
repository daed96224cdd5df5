//! Steering OpenSM from IB-SM-MIB (`[opensm]`): on ibsim + OpenSM started
//! with its own opensm.conf and loopback console, a Set of
//! ibSmConfigPriority reaches the running SM (console, sminfo, the agent's
//! own ibSmSMInfoTable) and opensm.conf; a Set of ibSmConfigSweepInterval
//! lands in opensm.conf and in OpenSM's running configuration after the
//! heavy resweep (console `dump_conf`); the operator's comments and other
//! lines stay; bad values are refused and change nothing. Without
//! `[opensm]` the SM columns are notWritable.

mod common;

use std::time::{Duration, Instant};

use common::{snmp, Agent, UmadAgent};
use ib::testbed::{Testbed, TestbedConfig, SMALL_NET};

/// ibSmConfigPriority / ibSmConfigSweepInterval of the subnet fe80::/64.
const PRIORITY: &str = ".1.3.6.1.3.117.7.1.1.1.1.3.254.128.0.0.0.0.0.0";
const SWEEP_INTERVAL: &str = ".1.3.6.1.3.117.7.1.1.1.1.9.254.128.0.0.0.0.0.0";
/// ibSmSMInfoPriority column.
const SM_INFO_PRIORITY: &str = ".1.3.6.1.3.117.7.1.7.1.1.5";

const OPENSM_CONF: &str = "# The site's OpenSM settings (comments survive the agent's edits)\n\
                           sm_priority 1   # site default\n\
                           \n\
                           sweep_interval 5\n\
                           lmc 0\n";

fn set(target: &str, oid: &str, ty: &str, v: &str) -> (bool, String) {
    let o = snmp(
        "snmpset",
        &[
            "-v2c", "-c", "private", "-On", "-t", "15", "-r", "0", target, oid, ty, v,
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<String>) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(s) = f() {
            return s;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn priority_and_sweep_interval_reach_opensm() {
    let mut cfg = TestbedConfig::new(SMALL_NET);
    cfg.sm_sweep_secs = 2;
    cfg.opensm_conf = Some(OPENSM_CONF.to_string());
    let tb = Testbed::start(cfg).unwrap_or_else(|e| panic!("testbed: {e}"));
    let conf_path = tb.dir().join("opensm.conf");
    let dir = tempfile::tempdir().unwrap();
    let agent_conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(
        &agent_conf,
        format!(
            "[opensm]\nconf = \"{}\"\nconsole = \"127.0.0.1:{}\"\n",
            conf_path.display(),
            tb.console_port()
        ),
    )
    .unwrap();
    let agent = UmadAgent::start(
        &tb,
        None,
        &[
            "--config",
            agent_conf.to_str().unwrap(),
            "--sweep-interval",
            "1",
        ],
        Duration::from_secs(60),
        |a: &UmadAgent| {
            let o = snmp(
                "snmpget",
                &["-v2c", "-c", "public", "-On", &a.target, PRIORITY],
            );
            String::from_utf8_lossy(&o.stdout).contains("Gauge32")
        },
    );

    // Priority: at once through the console, and in the file.
    let (ok, text) = set(&agent.target, PRIORITY, "u", "7");
    assert!(ok, "Set of ibSmConfigPriority: {text}");
    let si = tb.run_diag("sminfo", &[]).expect("sminfo");
    assert!(si.stdout.contains("priority 7"), "sminfo: {}", si.stdout);
    let status = tb.opensm_console("status").expect("console status");
    assert!(status.contains("7"), "console status: {status}");
    wait_for("ibSmSMInfoPriority 7", Duration::from_secs(30), || {
        let o = snmp(
            "snmpwalk",
            &[
                "-v2c",
                "-c",
                "public",
                "-On",
                &agent.target,
                SM_INFO_PRIORITY,
            ],
        );
        let t = String::from_utf8_lossy(&o.stdout).into_owned();
        t.contains("Gauge32: 7").then_some(t)
    });
    let conf = std::fs::read_to_string(&conf_path).unwrap();
    assert!(conf.contains("sm_priority 7 # site default\n"), "{conf}");

    // Sweep interval: in the file, re-read by OpenSM's heavy resweep.
    let (ok, text) = set(&agent.target, SWEEP_INTERVAL, "u", "7");
    assert!(ok, "Set of ibSmConfigSweepInterval: {text}");
    let conf = std::fs::read_to_string(&conf_path).unwrap();
    assert!(conf.contains("\nsweep_interval 7\n"), "{conf}");
    wait_for(
        "dump_conf with sweep_interval 7",
        Duration::from_secs(20),
        || {
            let d = tb.opensm_console("dump_conf").ok()?;
            d.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["sweep_interval", "7"])
                .then_some(d)
        },
    );
    // The operator's comments and other lines are all still there.
    let expected = OPENSM_CONF
        .replace(
            "sm_priority 1   # site default",
            "sm_priority 7 # site default",
        )
        .replace("sweep_interval 5", "sweep_interval 7");
    assert_eq!(conf, expected);

    // Refused and nothing changed: out of range, wrong type.
    let (ok, text) = set(&agent.target, PRIORITY, "u", "16");
    assert!(!ok && text.contains("wrongValue"), "{text}");
    let (ok, text) = set(&agent.target, PRIORITY, "i", "3");
    assert!(!ok && text.contains("wrongType"), "{text}");
    assert_eq!(std::fs::read_to_string(&conf_path).unwrap(), expected);
}

#[test]
fn without_an_opensm_section_the_sm_columns_are_not_writable() {
    let agent = Agent::start(&[]);
    let o = snmp(
        "snmpget",
        &["-v2c", "-c", "public", "-On", &agent.target, PRIORITY],
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("Gauge32"));
    let (ok, text) = set(&agent.target, PRIORITY, "u", "7");
    assert!(!ok && text.contains("notWritable"), "{text}");
}
