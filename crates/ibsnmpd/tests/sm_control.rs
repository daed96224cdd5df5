//! Steering OpenSM from IB-SM-MIB (`[opensm]`): on ibsim + OpenSM started
//! with its own opensm.conf and loopback console, a Set of
//! ibSmConfigPriority reaches the running SM (console, sminfo, the agent's
//! own ibSmSMInfoTable) and opensm.conf; a Set of ibSmConfigSweepInterval
//! lands in opensm.conf and in OpenSM's running configuration after the
//! heavy resweep (console `dump_conf`); the operator's comments and other
//! lines stay; bad values are refused and change nothing. Without
//! `[opensm]` the SM columns are notWritable. ibSmPartitionConfig's
//! operations edit partitions.conf and show in PKeyTableRecord and
//! ibSmPartitionTable. With `port_writes`, ibSmPortInfoPhyState disables and
//! enables a switch port (smpquery portinfo agrees), never the agent's own.

mod common;

use std::time::Duration;

use common::{snmp, wait_for, Agent, UmadAgent};
use ib_testbed::{Testbed, TestbedConfig, SMALL_NET};

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

/// The agent on the testbed with `toml` as its config file (in the returned
/// directory), once it serves ibSmConfigPriority.
fn steering_agent(tb: &Testbed, toml: &str) -> (tempfile::TempDir, UmadAgent) {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(&conf, toml).unwrap();
    let agent = opensm_agent(tb, &conf);
    (dir, agent)
}

/// The agent on the testbed with config file `conf`, once it serves
/// ibSmConfigPriority.
fn opensm_agent(tb: &Testbed, conf: &std::path::Path) -> UmadAgent {
    UmadAgent::start(
        tb,
        None,
        &["--config", conf.to_str().unwrap(), "--sweep-interval", "1"],
        Duration::from_secs(60),
        |a: &UmadAgent| {
            let o = snmp(
                "snmpget",
                &["-v2c", "-c", "public", "-On", &a.target, PRIORITY],
            );
            String::from_utf8_lossy(&o.stdout).contains("Gauge32")
        },
    )
}

/// A testbed whose OpenSM runs with [`OPENSM_CONF`] and a console, and the
/// agent steering it through both: (testbed, opensm.conf, the agent's
/// directory, the agent).
/// SMALL_NET with OpenSM sweeping every 2 s, its opensm.conf `conf` and,
/// when given, its partitions.conf.
fn sm_testbed(conf: &str, partitions: Option<&str>) -> Testbed {
    let mut cfg = TestbedConfig::new(SMALL_NET);
    cfg.sm_sweep_secs = 2;
    if let Some(p) = partitions {
        cfg.partitions = p.to_string();
    }
    cfg.opensm_conf = Some(conf.to_string());
    Testbed::start(cfg).unwrap_or_else(|e| panic!("testbed: {e}"))
}

fn console_steering() -> (Testbed, std::path::PathBuf, tempfile::TempDir, UmadAgent) {
    let tb = sm_testbed(OPENSM_CONF, None);
    let conf_path = tb.dir().join("opensm.conf");
    let (dir, agent) = steering_agent(
        &tb,
        &format!(
            "[opensm]\nconf = \"{}\"\nconsole = \"127.0.0.1:{}\"\n",
            conf_path.display(),
            tb.console_port()
        ),
    );
    (tb, conf_path, dir, agent)
}

#[test]
fn priority_and_sweep_interval_reach_opensm() {
    let (tb, conf_path, _dir, agent) = console_steering();

    // Priority: at once through the console, and in the file.
    let (ok, text) = set(&agent.target, PRIORITY, "u", "7");
    assert!(ok, "Set of ibSmConfigPriority: {text}");
    let si = tb.run_diag("sminfo", &[]).expect("sminfo");
    assert!(si.stdout.contains("priority 7"), "sminfo: {}", si.stdout);
    let status = tb.opensm_console("status").expect("console status");
    assert!(status.contains("7"), "console status: {status}");
    wait_for("ibSmSMInfoPriority 7", Duration::from_secs(30), || {
        let t = common::walk(&agent.target, SM_INFO_PRIORITY, &[]);
        t.contains("Gauge32: 7").then_some(t)
    });
    let conf = std::fs::read_to_string(&conf_path).unwrap();
    assert!(conf.contains("sm_priority 7 # site default\n"), "{conf}");
    // Logged once at info: who asked (no part of the community, a
    // password) and what was applied.
    let log = agent.log_text();
    assert!(
        log.lines()
            .any(|l| l.contains("Set applied to the SM")
                && l.contains("V2c community from 127.0.0.1")),
        "{log}"
    );
    assert!(
        log.lines().any(
            |l| l.contains("SM configuration changed over SNMP") && l.contains("sm_priority 7")
        ),
        "{log}"
    );
    assert!(!log.contains("pr*") && !log.contains("private"), "{log}");

    // Sweep interval: in the file, re-read by OpenSM's heavy resweep.
    let (ok, text) = set(&agent.target, SWEEP_INTERVAL, "u", "7");
    assert!(ok, "Set of ibSmConfigSweepInterval: {text}");
    let conf = std::fs::read_to_string(&conf_path).unwrap();
    assert!(conf.contains("\nsweep_interval 7\n"), "{conf}");
    wait_for(
        "dump_conf with sweep_interval 7",
        Duration::from_secs(60),
        || {
            let d = tb.opensm_console("dump_conf").ok()?;
            let hit = d
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["sweep_interval", "7"]);
            if !hit {
                // Still the old value under load: ask again for the heavy
                // sweep that re-reads the file.
                let _ = tb.opensm_console("resweep heavy");
            }
            hit.then_some(d)
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

    // SMKey is a secret: not writable over v2c (only at authPriv through a
    // view that includes it, docs/snmpv3.md).
    let (ok, text) = set(
        &agent.target,
        ".1.3.6.1.3.117.7.1.1.1.1.4.254.128.0.0.0.0.0.0",
        "x",
        "0000000000000002",
    );
    assert!(
        !ok && (text.contains("noAccess") || text.contains("notWritable")),
        "{text}"
    );

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
    let get = || {
        let o = snmp(
            "snmpget",
            &["-v2c", "-c", "public", "-On", &agent.target, PRIORITY],
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let before = get();
    assert!(before.contains("Gauge32"), "{before}");
    let (ok, text) = set(&agent.target, PRIORITY, "u", "7");
    assert!(!ok && text.contains("notWritable"), "{text}");
    // The column is writable by option only (mibs::Options::sm_control,
    // given to the module's objects): the refused Set changed nothing.
    assert_eq!(get(), before);
}

/// ibSmPartitionConfig scalars (instance .0).
const PC: &str = ".1.3.6.1.3.117.7.1.5.2";
/// ibSmPartitionVector column.
const PARTITION_VECTOR: &str = ".1.3.6.1.3.117.7.1.5.1.1.4";

const PARTITIONS: &str = "# The site's partitions (comments survive the agent's edits)\n\
                          Default=0x7fff, ipoib : ALL=full;\n";

/// One ibSmPartitionConfig operation in one Set PDU: prefix, key, action
/// and the (type, value) pairs of the other scalars given as (sub-id, ..).
fn partition_op(
    target: &str,
    key: u16,
    action: u32,
    more: &[(u32, &str, String)],
) -> (bool, String) {
    let mut args: Vec<String> = [
        "-v2c", "-c", "private", "-On", "-t", "15", "-r", "0", target,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut push = |sub: u32, ty: &str, v: String| {
        args.extend([format!("{PC}.{sub}.0"), ty.to_string(), v]);
    };
    push(1, "x", "FE80000000000000".into());
    push(2, "u", key.to_string());
    push(3, "i", action.to_string());
    for (sub, ty, v) in more {
        push(*sub, ty, v.clone());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = snmp("snmpset", &refs);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

/// (port, full) of `node`'s entries in ibSmPartitionTable's vectors of `key`.
fn vector_members(target: &str, key: u16, node: u64) -> Vec<(u8, bool)> {
    let text = common::walk(target, PARTITION_VECTOR, &["-Ox"]).replace("\n ", " ");
    let mut out = Vec::new();
    for (oid, v) in common::parse_lines(&text) {
        if oid.get(20) != Some(&u32::from(key)) {
            continue;
        }
        let bytes: Vec<u8> = v
            .trim_start_matches("Hex-STRING: ")
            .split_whitespace()
            .filter_map(|b| u8::from_str_radix(b, 16).ok())
            .collect();
        for e in bytes.chunks(10) {
            let g = e.iter().take(8).fold(0u64, |a, &b| a << 8 | u64::from(b));
            if g == node && e.len() == 10 {
                out.push((e[8], e[9] == 1));
            }
        }
    }
    out
}

#[test]
fn partition_configuration_reaches_opensm_and_the_partition_table() {
    let tb = sm_testbed("# site\nsweep_interval 2\n", Some(PARTITIONS));
    let parts = tb.dir().join("partitions.conf");
    let (_dir, agent) = steering_agent(
        &tb,
        &format!(
            "[opensm]\nconf = \"{}\"\npartitions = \"{}\"\npid_file = \"{}\"\n",
            tb.dir().join("opensm.conf").display(),
            parts.display(),
            tb.dir().join("opensm.pid").display(),
        ),
    );
    let lids = common::node_lids(&tb);
    let (hca1, hca1_lid) = common::node_by_name(&tb, &lids, "Hca1");
    let lid = common::port_lid(&tb, hca1_lid, 1).to_string();
    let guid = format!("{hca1:016X}");
    let pkeys = || {
        let o = tb
            .run_diag("saquery", &["--smkey", "1", "PKeyTableRecord", &lid])
            .expect("saquery PKeyTableRecord");
        o.stdout
    };
    // Waits until Hca1's P_Keys (saquery, the SM's view) say `at`.
    let pkeys_until = |what: &str, at: &dyn Fn(&str) -> bool| {
        wait_for(what, Duration::from_secs(30), || {
            let p = pkeys();
            at(&p).then_some(p)
        })
    };
    let member = |ty: u32| {
        vec![
            (4, "x", guid.clone()),
            (5, "u", "1".to_string()),
            (6, "i", ty.to_string()),
        ]
    };

    // Create, then add Hca1 port 1 as a full member.
    let (ok, text) = partition_op(&agent.target, 5, 2, &[]);
    assert!(ok, "create: {text}");
    let (ok, text) = partition_op(&agent.target, 5, 4, &member(1));
    assert!(ok, "addMember: {text}");
    // Hca1 port 1's GUID, as the agent wrote it.
    let port_guid = {
        let t = std::fs::read_to_string(&parts).unwrap();
        let at = t.rfind("=full").expect("the member entry");
        t[..at].rsplit(' ').next().unwrap().to_string()
    };
    pkeys_until("P_Key 0x8005 at Hca1", &|p| p.contains("0x8005"));
    wait_for(
        "the full member in ibSmPartitionTable",
        Duration::from_secs(30),
        || (vector_members(&agent.target, 5, hca1) == [(1, true)]).then(String::new),
    );

    // A required field missing (the member type of addMember): refused,
    // nothing changed.
    let before = std::fs::read_to_string(&parts).unwrap();
    let (ok, text) = partition_op(
        &agent.target,
        5,
        4,
        &[(4, "x", guid.clone()), (5, "u", "1".to_string())],
    );
    assert!(!ok && text.contains("inconsistentValue"), "{text}");
    assert_eq!(std::fs::read_to_string(&parts).unwrap(), before);

    // Limited, then removed.
    let (ok, text) = partition_op(&agent.target, 5, 6, &member(2));
    assert!(ok, "updateMemberType: {text}");
    pkeys_until("P_Key 0x0005 (limited) at Hca1", &|p| {
        p.contains("0x0005") && !p.contains("0x8005")
    });
    wait_for(
        "the limited member in ibSmPartitionTable",
        Duration::from_secs(30),
        || (vector_members(&agent.target, 5, hca1) == [(1, false)]).then(String::new),
    );
    let (ok, text) = partition_op(&agent.target, 5, 5, &[(4, "x", guid.clone())]);
    assert!(ok, "removeMember: {text}");
    pkeys_until("P_Key 0x0005 gone from Hca1", &|p| {
        !p.contains("0x0005") && !p.contains("0x8005")
    });
    wait_for(
        "no member in ibSmPartitionTable",
        Duration::from_secs(30),
        || {
            vector_members(&agent.target, 5, hca1)
                .is_empty()
                .then(String::new)
        },
    );

    // Delete: the operator's file as it was.
    let (ok, text) = partition_op(&agent.target, 5, 3, &[]);
    assert!(ok, "deletePartition: {text}");
    assert_eq!(std::fs::read_to_string(&parts).unwrap(), PARTITIONS);

    // The default partition is never deleted over SNMP.
    let (ok, text) = partition_op(&agent.target, 0x7fff, 3, &[]);
    assert!(!ok && text.contains("inconsistentValue"), "{text}");
    assert_eq!(std::fs::read_to_string(&parts).unwrap(), PARTITIONS);

    // An operator's file where P_Key 6 is stated twice (OpenSM merges them)
    // and Hca1 stands after a comment: addMember does not add it twice,
    // deletePartition takes the key out of the fabric.
    let site = format!(
        "{PARTITIONS}Six=0x0006 :\n  # the first host\n  {port_guid}=full ;\n\
         SixMore=0x8006, ipoib : ALL_SWITCHES=limited ;\n"
    );
    std::fs::write(&parts, &site).unwrap();
    common::hup_opensm(&tb);
    pkeys_until("P_Key 0x8006 at Hca1", &|p| p.contains("0x8006"));
    let (ok, text) = partition_op(&agent.target, 6, 4, &member(1));
    assert!(ok, "addMember: {text}");
    let now = std::fs::read_to_string(&parts).unwrap();
    assert_eq!(now.matches(&port_guid).count(), 1, "{now}");
    let (ok, text) = partition_op(&agent.target, 6, 3, &[]);
    assert!(ok, "deletePartition: {text}");
    assert_eq!(std::fs::read_to_string(&parts).unwrap(), PARTITIONS);
    pkeys_until("P_Key 6 gone from Hca1", &|p| {
        !p.contains("0x0006") && !p.contains("0x8006")
    });
}

/// A Set whose reload step fails answers commitFailed and leaves
/// opensm.conf and partitions.conf byte for byte as they were, so the same
/// Set fails the same way again; a pid file that names init (1) or no
/// OpenSM is never signalled. With the right pid the same Set succeeds and
/// reaches OpenSM.
#[test]
fn a_failed_reload_leaves_every_file_as_it_was() {
    let tb = sm_testbed(OPENSM_CONF, Some(PARTITIONS));
    let conf = tb.dir().join("opensm.conf");
    let parts = tb.dir().join("partitions.conf");
    let pid_file = tb.dir().join("given.pid");
    std::fs::write(&pid_file, "1\n").unwrap();
    let (_dir, agent) = steering_agent(
        &tb,
        &format!(
            "[opensm]\nconf = \"{}\"\npartitions = \"{}\"\npid_file = \"{}\"\n",
            conf.display(),
            parts.display(),
            pid_file.display(),
        ),
    );
    let files = || {
        (
            std::fs::read(&conf).unwrap(),
            std::fs::read(&parts).unwrap(),
        )
    };
    let before = files();
    for pid in ["1", "0", "-1", &std::process::id().to_string()] {
        std::fs::write(&pid_file, format!("{pid}\n")).unwrap();
        for _ in 0..2 {
            let (ok, text) = set(&agent.target, PRIORITY, "u", "9");
            assert!(!ok && text.contains("commitFailed"), "pid {pid}: {text}");
            let (ok, text) = partition_op(&agent.target, 9, 2, &[]);
            assert!(!ok && text.contains("commitFailed"), "pid {pid}: {text}");
            assert!(files() == before, "pid {pid}: a file changed");
        }
    }
    assert!(
        agent.log_text().contains("not opensm"),
        "{}",
        agent.log_text()
    );
    // No temporary file left beside them.
    let temps = std::fs::read_dir(tb.dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".ibsnmpd."))
        .count();
    assert_eq!(temps, 0);

    // OpenSM's own pid: the same Sets go through, and the files keep the
    // operator's mode, owner and group (not the agent's umask and user).
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    for f in [&conf, &parts] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o640)).unwrap();
        let _ = std::os::unix::fs::chown(f, Some(65534), Some(65534));
    }
    let owners = || {
        [&conf, &parts].map(|f| {
            let m = std::fs::metadata(f).unwrap();
            (m.mode() & 0o7777, m.uid(), m.gid())
        })
    };
    let before_owners = owners();
    std::fs::copy(tb.dir().join("opensm.pid"), &pid_file).unwrap();
    let (ok, text) = set(&agent.target, PRIORITY, "u", "9");
    assert!(ok, "{text}");
    let (ok, text) = partition_op(&agent.target, 9, 2, &[]);
    assert!(ok, "{text}");
    assert!(std::fs::read_to_string(&conf)
        .unwrap()
        .contains("sm_priority 9"));
    assert_eq!(owners(), before_owners);
    wait_for("sminfo priority 9", Duration::from_secs(30), || {
        let si = tb.run_diag("sminfo", &[]).ok()?;
        si.stdout.contains("priority 9").then_some(si.stdout)
    });
}

/// ibSmPortInfoPhyState.
const PHY_STATE: &str = ".1.3.6.1.3.117.7.1.3.1.1.16";

fn port_instance(col: &str, node: u64, port: u8) -> String {
    let g: Vec<String> = node.to_be_bytes().iter().map(|b| b.to_string()).collect();
    format!("{col}.254.128.0.0.0.0.0.0.{}.{port}", g.join("."))
}

#[test]
fn port_writes_disable_and_enable_a_port_but_never_the_agents_own() {
    let tb =
        Testbed::start(TestbedConfig::new(SMALL_NET)).unwrap_or_else(|e| panic!("testbed: {e}"));
    let (_dir, agent_conf) = common::temp_file("ibsnmpd.toml", "port_writes = true\n");
    // The agent reaches the fabric through Hca1 port 1 and Switch1 port 1.
    let agent = UmadAgent::start(
        &tb,
        Some("Hca1"),
        &[
            "--config",
            agent_conf.to_str().unwrap(),
            "--sweep-interval",
            "1",
        ],
        Duration::from_secs(60),
        |a: &UmadAgent| {
            common::walk(&a.target, PHY_STATE, &[])
                .matches("Gauge32")
                .count()
                >= 6
        },
    );
    let lids = common::node_lids(&tb);
    let (sw1, sw1_lid) = common::node_by_name(&tb, &lids, "Switch1");
    let (hca1, _) = common::node_by_name(&tb, &lids, "Hca1");
    let phys = |port: u8| {
        let o = tb
            .run_diag(
                "smpquery",
                &["portinfo", &sw1_lid.to_string(), &port.to_string()],
            )
            .expect("smpquery");
        o.stdout
            .lines()
            .find(|l| l.starts_with("PhysLinkState"))
            .unwrap_or_default()
            .to_string()
    };
    // Waits until the agent serves Switch1 port 2's ibSmPortInfoPhyState
    // as `value`.
    let agent_phy_until = |what: &str, value: &str| {
        wait_for(what, Duration::from_secs(30), || {
            let o = snmp(
                "snmpget",
                &[
                    "-v2c",
                    "-c",
                    "public",
                    "-On",
                    &agent.target,
                    &port_instance(PHY_STATE, sw1, 2),
                ],
            );
            let t = String::from_utf8_lossy(&o.stdout).into_owned();
            t.contains(value).then_some(t)
        })
    };

    // Switch1 port 2 (to Hca3): disabled, as `ibportstate disable` does.
    let (ok, text) = set(&agent.target, &port_instance(PHY_STATE, sw1, 2), "u", "3");
    assert!(ok, "disable: {text}");
    assert!(phys(2).contains("Disabled"), "smpquery: {}", phys(2));
    // The audit line names the port and what was set, never the M_Key.
    let log = agent.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("Set applied to the fabric"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        line.contains(&format!("Set(PortInfo) {sw1:#018x} port 2")),
        "{line}"
    );
    assert!(
        !line.to_lowercase().contains("m_key") && !line.contains("MKey"),
        "{line}"
    );
    agent_phy_until("ibSmPortInfoPhyState disabled(3)", "Gauge32: 3");
    // Enabled again (polling), as `ibportstate enable` does; ibsim leaves
    // the port Polling after that (it does with ibportstate too).
    let (ok, text) = set(&agent.target, &port_instance(PHY_STATE, sw1, 2), "u", "2");
    assert!(ok, "enable: {text}");
    wait_for("PhysLinkState Polling", Duration::from_secs(30), || {
        let p = phys(2);
        p.contains("Polling").then_some(p)
    });
    agent_phy_until("ibSmPortInfoPhyState polling(2)", "Gauge32: 2");

    // The agent's own port and the switch port facing it: refused.
    for (node, port) in [(hca1, 1), (sw1, 1)] {
        let (ok, text) = set(
            &agent.target,
            &port_instance(PHY_STATE, node, port),
            "u",
            "3",
        );
        assert!(!ok && text.contains("inconsistentValue"), "{text}");
    }
    assert!(phys(1).contains("LinkUp"), "{}", phys(1));
}

#[test]
fn without_port_writes_port_columns_are_not_writable() {
    let agent = Agent::start(&[]);
    let first = common::walk(&agent.target, PHY_STATE, &[])
        .lines()
        .next()
        .and_then(|l| l.split(' ').next())
        .unwrap_or_default()
        .to_string();
    let (ok, text) = set(&agent.target, &first, "u", "3");
    assert!(!ok && text.contains("notWritable"), "{first}: {text}");
}

/// ibSmConfigAdminSMState of the subnet fe80::/64.
const ADMIN_STATE: &str = ".1.3.6.1.3.117.7.1.1.1.1.5.254.128.0.0.0.0.0.0";

#[test]
fn admin_sm_state_stops_and_starts_opensm_through_the_configured_commands() {
    let tb = sm_testbed(OPENSM_CONF, None);
    let d = tb.dir().display().to_string();
    // The OpenSM the start command launches: stopped whatever the outcome.
    let _opensm2 = common::PidFileGuard(tb.dir().join("opensm2.pid"));
    let port = common::free_port("127.0.0.1");
    // The agent runs under the testbed's umad2sim preload: so do its commands.
    // `exec`: the pid written is OpenSM's, not that of the shell around it.
    let start = format!(
        "cd {d} && OSM_TMP_DIR={d}/osm OSM_CACHE_DIR={d}/osm exec nohup opensm -F {d}/opensm.conf \
         -P {d}/partitions.conf -f {d}/osm/osm2.log -s 2 --console loopback --console-port {port} \
         >{d}/osm2.out 2>&1 & echo $! >{d}/opensm2.pid"
    );
    let stop = format!("kill $(cat {d}/opensm.pid)");
    let (_dir, agent) = steering_agent(
        &tb,
        &format!(
            "[opensm]\nconf = \"{d}/opensm.conf\"\nstart = \"{}\"\nstop = \"{}\"\n",
            start.replace('"', "\\\""),
            stop
        ),
    );
    let sm_up = || {
        tb.run_diag("sminfo", &[])
            .is_ok_and(|o| o.stdout.contains("SMINFO_MASTER"))
    };
    assert!(sm_up());

    let (ok, text) = set(&agent.target, ADMIN_STATE, "i", "2");
    assert!(ok, "disable: {text}");
    wait_for("the SM gone", Duration::from_secs(30), || {
        (!sm_up()).then(String::new)
    });

    let (ok, text) = set(&agent.target, ADMIN_STATE, "i", "1");
    assert!(ok, "enable: {text}");
    wait_for("the SM back as master", Duration::from_secs(60), || {
        sm_up().then(String::new)
    });

    // Bad values are refused.
    let (ok, text) = set(&agent.target, ADMIN_STATE, "i", "3");
    assert!(!ok && text.contains("wrongValue"), "{text}");
}

/// One Set with an SM operation (ibSmConfigPriority) and a fabric operation
/// that fails (a PMA counter clear to an HCA whose port drops every MAD:
/// ibsim's `Error`): the SM operation is taken back, opensm.conf and the
/// running OpenSM are as before, and the answer says nothing changed
/// (commitFailed, not undoFailed; RFC 3416 4.2.5).
#[test]
fn a_failing_fabric_operation_takes_back_the_sm_operations_of_the_same_set() {
    let (tb, conf_path, _dir, agent) = console_steering();
    let lids = common::node_lids(&tb);
    let (guid, _) = common::node_by_name(&tb, &lids, "Hca2");
    // pmPortCountersSymbolErrorCounter of Hca2: a Set(PortCounters) clear.
    let clear = format!(".1.3.6.1.3.117.1.4.1.3.{}", common::guid_index(guid));
    tb.console("Error \"Hca2\"[1] 100").expect("ibsim Error");

    let o = snmp(
        "snmpset",
        &[
            "-v2c",
            "-c",
            "private",
            "-On",
            "-t",
            "30",
            "-r",
            "0",
            &agent.target,
            PRIORITY,
            "u",
            "9",
            &clear,
            "i",
            "0",
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!o.status.success(), "{text}");
    assert!(text.contains("commitFailed"), "{text}");
    assert_eq!(std::fs::read_to_string(&conf_path).unwrap(), OPENSM_CONF);
    // OpenSM re-reads the restored file on its heavy resweep, which puts
    // the priority back (once Hca2 answers again: with a port that drops
    // every MAD, OpenSM's sweeps do not complete).
    tb.console("Error \"Hca2\"[1] 0").expect("ibsim Error");
    wait_for("sminfo priority 1", Duration::from_secs(60), || {
        let si = tb.run_diag("sminfo", &[]).ok()?;
        if !si.stdout.contains("priority 1 ") {
            let _ = tb.opensm_console("resweep heavy");
            return None;
        }
        Some(si.stdout)
    });
    let log = agent.log_text();
    assert!(log.contains("SM Set undone"), "{log}");
}
