//! Notifications on the umad source over ibsim + OpenSM (the project's
//! testbed), received by net-snmp's snmptrapd: `Unlink` of a host port gives
//! ibSmTrapOutOfService for that node GUID and port and `ReLink`
//! ibSmTrapInService, each within one of the agent's sweeps once OpenSM has
//! acted (and IF-MIB linkDown/linkUp when it is the agent's own port); LocalLinkIntegrityErrors set past the configured threshold with
//! ibsim's PerformanceSet gives ibSmTrapLinkIntegrityThreasholdReached once;
//! a new IPoIB partition (partitions.conf + SIGHUP to OpenSM) gives
//! ibSmTrapMCGroupCreated.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::time::{Duration, Instant};

use common::{snmp, UmadAgent};
use ib::testbed::{
    check_tools, Testbed, TestbedConfig, DEFAULT_PARTITIONS, DUAL_PORT_NET, SMALL_NET,
};
use trapd::{count, named, Trapd};

/// A GUID as snmptrapd prints IbGuid (`STRING: 0:2:c9:...`, hex octets).
fn guid_text(g: u64) -> String {
    let octets: Vec<String> = g.to_be_bytes().iter().map(|b| format!("{b:x}")).collect();
    format!("STRING: {}", octets.join(":"))
}

/// The node GUID of the HCA named `name`, from ibnetdiscover.
fn hca_guid(tb: &Testbed, name: &str) -> u64 {
    let out = tb.run_diag("ibnetdiscover", &[]).unwrap();
    assert!(out.success(), "{}", out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("Ca") && l.contains(&format!("\"{name}\"")))
        .unwrap_or_else(|| panic!("no {name} in {}", out.stdout));
    let hex = line
        .split("\"H-")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    u64::from_str_radix(hex, 16).unwrap()
}

fn start(tb: &Testbed, trapd: &Trapd, extra_config: &str) -> (UmadAgent, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(
        &conf,
        format!("trap2sink = [\"{}\"]\n{extra_config}", trapd.addr()),
    )
    .unwrap();
    let ready = |a: &UmadAgent| {
        snmp(
            "snmpget",
            &[
                "-v2c",
                "-c",
                "public",
                "-t",
                "0.5",
                "-r",
                "0",
                &a.target,
                ".1.3.6.1.2.1.1.3.0",
            ],
        )
        .status
        .success()
    };
    let args = ["--sweep-interval", "1", "--config", conf.to_str().unwrap()];
    let a = UmadAgent::start(tb, Some("Hca1"), &args, Duration::from_secs(60), ready);
    (a, dir)
}

const WAIT: Duration = Duration::from_secs(40);

#[test]
fn unlink_relink_and_link_integrity_threshold() {
    check_tools().unwrap();
    let tb = Testbed::start(TestbedConfig::new(SMALL_NET)).unwrap();
    let trapd = Trapd::start();
    let (agent, _dir) = start(&tb, &trapd, "link_integrity_threshold = 3\n");
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    let hca4 = guid_text(hca_guid(&tb, "Hca4"));

    let t0 = Instant::now();
    tb.console("Unlink \"Hca4\"[1]").unwrap();
    let t = trapd.wait(WAIT, "out of service", |t| {
        count(t, "ibSmTrapOutOfService") >= 1
    });
    let out = named(&t, "ibSmTrapOutOfService");
    let out_latency = out[0].seen.unwrap() - t0;
    assert_eq!(out.len(), 1, "{}", trapd.text());
    assert_eq!(
        out[0].object("IB-SM-MIB::ibSmTrapNodeGUID1.0"),
        Some(&*hca4)
    );
    assert_eq!(
        out[0].object("IB-SM-MIB::ibSmTrapPortNum1.0"),
        Some("Gauge32: 1")
    );
    // Switch2's port 2 (Hca4's peer) changed state too.
    trapd.wait(WAIT, "switch link state", |t| {
        count(t, "ibSmTrapSwitchLinkStateChanged") >= 1
    });

    let t1 = Instant::now();
    tb.console("ReLink \"Hca4\"[1]").unwrap();
    let t = trapd.wait(WAIT, "in service", |t| count(t, "ibSmTrapInService") >= 1);
    let back = named(&t, "ibSmTrapInService");
    let in_latency = back[0].seen.unwrap() - t1;
    assert_eq!(back.len(), 1, "{}", trapd.text());
    assert_eq!(
        back[0].object("IB-SM-MIB::ibSmTrapNodeGUID1.0"),
        Some(&*hca4)
    );
    eprintln!(
        "Unlink -> ibSmTrapOutOfService: {out_latency:?}; ReLink -> ibSmTrapInService: {in_latency:?} \
         (agent sweep 1 s, OpenSM sweep 5 s; ReLink waits for OpenSM to activate the port)"
    );

    // A counter increase past the threshold (3) in one sweep: once.
    tb.console("PerformanceSet \"Hca3\"[1] PortCounters.LocalLinkIntegrityErrors=5")
        .unwrap();
    let t = trapd.wait(WAIT, "link integrity", |t| {
        count(t, "ibSmTrapLinkIntegrityThreasholdReached") >= 1
    });
    let li = named(&t, "ibSmTrapLinkIntegrityThreasholdReached");
    assert_eq!(
        li[0].object("IB-SM-MIB::ibSmTrapNodeGUID1.0"),
        Some(&*guid_text(hca_guid(&tb, "Hca3")))
    );
    assert_eq!(
        li[0].object("IB-SM-MIB::ibSmTrapPortNum1.0"),
        Some("Gauge32: 1")
    );
    assert_eq!(
        li[0].object("IB-SM-MIB::ibSmTrapType.0"),
        Some("INTEGER: urgent(1)")
    );
    assert_eq!(
        li[0].object("IB-SM-MIB::ibSmTrapProducerType.0"),
        Some("INTEGER: channelAdapter(1)")
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        count(&trapd.traps(), "ibSmTrapLinkIntegrityThreasholdReached"),
        1,
        "{}",
        trapd.text()
    );
    drop(agent);
}

#[test]
fn new_ipoib_partition_gives_mc_group_created() {
    check_tools().unwrap();
    let tb = Testbed::start(TestbedConfig::new(SMALL_NET)).unwrap();
    let trapd = Trapd::start();
    let (agent, _dir) = start(&tb, &trapd, "");
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    std::fs::write(
        tb.dir().join("partitions.conf"),
        format!("{DEFAULT_PARTITIONS}P2=0x8002, ipoib : ALL=full;\n"),
    )
    .unwrap();
    let pid = std::fs::read_to_string(tb.dir().join("opensm.pid")).unwrap();
    let st = std::process::Command::new("kill")
        .args(["-HUP", pid.trim()])
        .status()
        .unwrap();
    assert!(st.success());
    let t = trapd.wait(WAIT, "MC group created", |t| {
        count(t, "ibSmTrapMCGroupCreated") >= 1
    });
    let mc = named(&t, "ibSmTrapMCGroupCreated");
    // IPoIB broadcast group of P_Key 0x8002: ff12:401b:8002::ffff:ffff.
    let gid = mc[0].object("IB-SM-MIB::ibSmTrapMCGid.0").unwrap();
    assert!(gid.to_lowercase().contains("ff 12 40 1b 80 02"), "{gid}");
    assert_eq!(
        mc[0].object("IB-SM-MIB::ibSmTrapType.0"),
        Some("INTEGER: subnetMgmt(3)")
    );
    drop(agent);
}

/// The agent's own second port (Hca1 of `ib::testbed::DUAL_PORT_NET`: port
/// 1 to Switch1, port 2 to Switch2): Unlink gives linkDown for ifIndex 2 with
/// ibSmTrapOutOfService, ReLink linkUp (the port trains to Init: dormant,
/// which leaves down) and ibSmTrapInService once OpenSM activates it.
#[test]
fn own_port_unlink_gives_link_down_and_up() {
    check_tools().unwrap();
    let tb = Testbed::start(TestbedConfig::new(DUAL_PORT_NET)).unwrap();
    let trapd = Trapd::start();
    let (agent, _dir) = start(&tb, &trapd, "");
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    let hca1 = guid_text(hca_guid(&tb, "Hca1"));
    tb.console("Unlink \"Hca1\"[2]").unwrap();
    let t = trapd.wait(WAIT, "linkDown and out of service", |t| {
        count(t, "linkDown") >= 1 && count(t, "ibSmTrapOutOfService") >= 1
    });
    let down = named(&t, "linkDown");
    assert_eq!(down.len(), 1, "{}", trapd.text());
    assert_eq!(
        down[0].objects,
        vec![
            "IF-MIB::ifIndex.2 = INTEGER: 2",
            "IF-MIB::ifAdminStatus.2 = INTEGER: up(1)",
            "IF-MIB::ifOperStatus.2 = INTEGER: down(2)"
        ]
    );
    let out = named(&t, "ibSmTrapOutOfService");
    assert_eq!(
        out[0].object("IB-SM-MIB::ibSmTrapNodeGUID1.0"),
        Some(&*hca1)
    );
    assert_eq!(
        out[0].object("IB-SM-MIB::ibSmTrapPortNum1.0"),
        Some("Gauge32: 2")
    );
    tb.console("ReLink \"Hca1\"[2]").unwrap();
    let t = trapd.wait(WAIT, "linkUp and in service", |t| {
        count(t, "linkUp") >= 1 && count(t, "ibSmTrapInService") >= 1
    });
    assert_eq!(count(&t, "linkUp"), 1, "{}", trapd.text());
    assert_eq!(
        named(&t, "linkUp")[0].object("IF-MIB::ifIndex.2"),
        Some("INTEGER: 2")
    );
    drop(agent);
}
