//! Notifications on the umad source over ibsim + OpenSM (the project's
//! testbed), received by net-snmp's snmptrapd: `Unlink` of a host port gives
//! ibSmTrapOutOfService for that node GUID and port and `ReLink`
//! ibSmTrapInService, each within one of the agent's sweeps once OpenSM has
//! acted (and IF-MIB linkDown/linkUp when it is the agent's own port); LocalLinkIntegrityErrors set past the configured threshold with
//! ibsim's PerformanceSet gives ibSmTrapLinkIntegrityThreasholdReached once;
//! a new IPoIB partition (partitions.conf + SIGHUP to OpenSM) gives
//! ibSmTrapMCGroupCreated; a new master SM, or the agent's port leaving and
//! rejoining a partition, gives no multicast group notification.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::time::{Duration, Instant};

use common::{snmp, UmadAgent};
use ib_testbed::{
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

/// `command` on the sim's console, then the one `name` notification it
/// gives and how long it took to arrive.
fn one_after(tb: &Testbed, trapd: &Trapd, command: &str, name: &str) -> (trapd::Trap, Duration) {
    let t0 = Instant::now();
    tb.console(command).unwrap();
    let t = trapd.wait(WAIT, name, |t| count(t, name) >= 1);
    let n = named(&t, name);
    assert_eq!(n.len(), 1, "{}", trapd.text());
    (n[0].clone(), n[0].seen.unwrap() - t0)
}

/// A testbed of `net`, snmptrapd, and the agent sending to it once
/// coldStart has arrived.
fn fabric_with_agent(net: &str) -> (Testbed, Trapd, UmadAgent, tempfile::TempDir) {
    let tb = common::testbed(net);
    let trapd = Trapd::start();
    let (agent, dir) = start_cold(&tb, &trapd);
    (tb, trapd, agent, dir)
}

/// [`start`] with no more configuration, once coldStart has arrived.
fn start_cold(tb: &Testbed, trapd: &Trapd) -> (UmadAgent, tempfile::TempDir) {
    let started = start(tb, trapd, "");
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    started
}

fn start(tb: &Testbed, trapd: &Trapd, extra_config: &str) -> (UmadAgent, tempfile::TempDir) {
    let (dir, conf) = common::temp_file(
        "ibsnmpd.toml",
        &format!("trap2sink = [\"{}\"]\n{extra_config}", trapd.addr()),
    );
    let args = ["--sweep-interval", "1", "--config", conf.to_str().unwrap()];
    let a = UmadAgent::start_answering(tb, Some("Hca1"), &args, Duration::from_secs(60));
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

    let (out, out_latency) = one_after(&tb, &trapd, "Unlink \"Hca4\"[1]", "ibSmTrapOutOfService");
    assert_eq!(out.object("IB-SM-MIB::ibSmTrapNodeGUID1.0"), Some(&*hca4));
    assert_eq!(
        out.object("IB-SM-MIB::ibSmTrapPortNum1.0"),
        Some("Gauge32: 1")
    );
    // Switch2's port 2 (Hca4's peer) changed state too.
    trapd.wait(WAIT, "switch link state", |t| {
        count(t, "ibSmTrapSwitchLinkStateChanged") >= 1
    });

    let (back, in_latency) = one_after(&tb, &trapd, "ReLink \"Hca4\"[1]", "ibSmTrapInService");
    assert_eq!(back.object("IB-SM-MIB::ibSmTrapNodeGUID1.0"), Some(&*hca4));
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
    trapd.assert_count_after(
        Duration::from_secs(4),
        "ibSmTrapLinkIntegrityThreasholdReached",
        1,
    );
    drop(agent);
}

#[test]
fn new_ipoib_partition_gives_mc_group_created() {
    let (tb, trapd, agent, _dir) = fabric_with_agent(SMALL_NET);
    std::fs::write(
        tb.dir().join("partitions.conf"),
        format!("{DEFAULT_PARTITIONS}P2=0x8002, ipoib : ALL=full;\n"),
    )
    .unwrap();
    common::hup_opensm(&tb);
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

/// The agent's own second port (Hca1 of `ib_testbed::DUAL_PORT_NET`: port
/// 1 to Switch1, port 2 to Switch2): Unlink gives linkDown for ifIndex 2 with
/// ibSmTrapOutOfService, ReLink linkUp (the port trains to Init: dormant,
/// which leaves down) and ibSmTrapInService once OpenSM activates it.
#[test]
fn own_port_unlink_gives_link_down_and_up() {
    let (tb, trapd, agent, _dir) = fabric_with_agent(DUAL_PORT_NET);
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
            "IF-MIB::ifIndex.2 = INTEGER: 2".to_string(),
            "IF-MIB::ifAdminStatus.2 = INTEGER: up(1)".into(),
            "IF-MIB::ifOperStatus.2 = INTEGER: down(2)".into(),
            // Appended: which node and port (the CA's name from umad).
            "IF-MIB::ifName.2 = STRING: ibsim0/2".into(),
            "IF-MIB::ifDescr.2 = STRING: ibsim0 port 2".into(),
            format!("IB-SM-MIB::ibSmTrapNodeGUID1.0 = {hca1}"),
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

/// ibSmSMInfoSMState cells: (SM port GUID, state).
fn sm_states(target: &str) -> Vec<(u64, u64)> {
    let out = snmp(
        "snmpwalk",
        &[
            "-v2c",
            "-c",
            "public",
            "-On",
            target,
            ".1.3.6.1.3.117.7.1.7.1.1.6",
        ],
    );
    common::parse_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .filter_map(|(oid, v)| {
            let g = oid.get(oid.len().checked_sub(8)?..)?;
            let guid = g.iter().fold(0u64, |a, &b| a << 8 | u64::from(b));
            let st = v.rsplit(' ').next()?.parse().ok()?;
            Some((guid, st))
        })
        .collect()
}

/// The MGIDs of ibSmMcastGroupTable (its QKey column's indexes).
fn mc_groups(target: &str) -> std::collections::BTreeSet<Vec<u32>> {
    let col = ".1.3.6.1.3.117.7.1.6.1.1.3";
    let out = snmp("snmpwalk", &["-v2c", "-c", "public", "-On", target, col]);
    common::parse_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .filter(|(oid, _)| oid.len() > 16)
        .map(|(oid, _)| oid[oid.len() - 16..].to_vec())
        .collect()
}

/// Partition 0x0001 with an IPoIB group: every port a member (the agent's
/// Hca1 included), or the switches only (the group still exists, out of the
/// agent's view: OpenSM shows an unprivileged requester only the groups of
/// its partitions).
const WITH_P1: &str = "Default=0x7fff, ipoib : ALL=full;\nP1=0x0001, ipoib : ALL=full;\n";
const P1_SWITCHES: &str =
    "Default=0x7fff, ipoib : ALL=full;\nP1=0x0001, ipoib : ALL_SWITCHES=full;\n";

/// Whether an MGID (16 index sub-identifiers) is partition 0x0001's IPoIB
/// group (ff12:401b:8001::ffff:ffff, the P_Key with its membership bit).
fn p1_group(mgid: &[u32]) -> bool {
    mgid.get(..6)
        .is_some_and(|m| m[..4] == [0xff, 0x12, 0x40, 0x1b] && m[4] & 0x7f == 0 && m[5] == 1)
}

/// Polls `f` (bounded) until it holds.
fn until(what: &str, limit: Duration, f: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The master SM moves (OpenSM killed, a standby on Hca3 takes over) and
/// the new master does not put the agent's port in partition 0x0001: the
/// agent's view of the groups changes (0x0001's group goes out of view),
/// the groups do not, so no ibSmTrapMCGroupCreated/Deleted; the SM rows
/// follow the takeover, as sminfo says.
#[test]
fn a_new_master_sm_gives_no_mc_group_events() {
    check_tools().unwrap();
    let mut cfg = TestbedConfig::new(SMALL_NET);
    cfg.sm_sweep_secs = 2;
    cfg.partitions = WITH_P1.into();
    // The standby gives up on a silent master after 2 polls 1 s apart.
    cfg.opensm_conf = Some("sminfo_polling_timeout 1000\npolling_retry_number 2\n".into());
    let mut tb = Testbed::start(cfg).unwrap();
    tb.opensm_console("priority 5").expect("console priority");
    tb.start_standby_opensm_with_partitions("Hca3", 1, P1_SWITCHES)
        .unwrap_or_else(|e| panic!("standby OpenSM: {e}"));
    let trapd = Trapd::start();
    let (agent, _dir) = start_cold(&tb, &trapd);
    until("partition 0x0001's group in view", WAIT, || {
        mc_groups(&agent.target).iter().any(|g| p1_group(g))
    });
    let groups = mc_groups(&agent.target);
    let first = sm_states(&agent.target);
    let old_master = first
        .iter()
        .find(|(_, st)| *st == 3)
        .map(|(g, _)| *g)
        .unwrap_or_else(|| panic!("no master in {first:?}"));

    tb.stop_opensm();
    // The standby becomes master (sminfo, from the port's SM LID, agrees)
    // and the agent's table shows it within a few sweeps.
    let new_master = std::cell::Cell::new(0);
    until("no new master", Duration::from_secs(120), || {
        let m = sm_states(&agent.target)
            .into_iter()
            .find(|(g, st)| *st == 3 && *g != old_master);
        m.map(|(g, _)| new_master.set(g)).is_some()
    });
    let si = tb.run_diag("sminfo", &[]).expect("sminfo");
    assert!(
        si.stdout
            .contains(&format!("sm guid {:#x}", new_master.get())),
        "sminfo: {} (agent's new master {:#x})",
        si.stdout,
        new_master.get()
    );
    // The new master's SA shows the agent the same groups but 0x0001's.
    let want: std::collections::BTreeSet<Vec<u32>> =
        groups.iter().filter(|g| !p1_group(g)).cloned().collect();
    until("the new master's groups", WAIT, || {
        mc_groups(&agent.target) == want
    });
    // A few more sweeps for any late difference to be notified.
    std::thread::sleep(Duration::from_secs(3));
    assert_no_mc_group_events(&trapd);
    drop(agent);
}

fn assert_no_mc_group_events(trapd: &Trapd) {
    let t = trapd.traps();
    assert_eq!(count(&t, "ibSmTrapMCGroupCreated"), 0, "{}", trapd.text());
    assert_eq!(count(&t, "ibSmTrapMCGroupDeleted"), 0, "{}", trapd.text());
}

/// The same master: the agent's port leaves partition 0x0001 (partitions.conf
/// and SIGHUP) and its group goes out of the agent's view, not away: no
/// ibSmTrapMCGroupDeleted. Back in: no ibSmTrapMCGroupCreated.
#[test]
fn leaving_a_partition_gives_no_mc_group_events() {
    check_tools().unwrap();
    let mut cfg = TestbedConfig::new(SMALL_NET);
    cfg.partitions = WITH_P1.into();
    let tb = Testbed::start(cfg).unwrap();
    let trapd = Trapd::start();
    let (agent, _dir) = start_cold(&tb, &trapd);
    let in_view = || mc_groups(&agent.target).iter().any(|g| p1_group(g));
    until("partition 0x0001's group in view", WAIT, in_view);
    let hup = |text: &str| {
        std::fs::write(tb.dir().join("partitions.conf"), text).unwrap();
        common::hup_opensm(&tb);
    };
    hup(P1_SWITCHES);
    until("0x0001's group out of view", WAIT, || !in_view());
    hup(WITH_P1);
    until("0x0001's group back in view", WAIT, in_view);
    std::thread::sleep(Duration::from_secs(3));
    assert_no_mc_group_events(&trapd);
    drop(agent);
}

/// Issue 35.2: a second OpenSM stopped (by its PID): its port's IsSM bit goes
/// and ibSmTrapCapabilityMaskChanged names that port, from the SM ports'
/// PortInfo the agent reads every sweep. `topology_every = 1000` keeps the
/// periodic discovery out of the way: only that read can show it.
#[test]
fn a_stopped_standby_sm_gives_capability_mask_changed() {
    check_tools().unwrap();
    let mut cfg = TestbedConfig::new(SMALL_NET);
    cfg.sm_sweep_secs = 2;
    let mut tb = Testbed::start(cfg).unwrap();
    tb.opensm_console("priority 5").expect("console priority");
    tb.start_standby_opensm("Hca3", 1)
        .unwrap_or_else(|e| panic!("standby OpenSM: {e}"));
    let trapd = Trapd::start();
    let (agent, _dir) = start(&tb, &trapd, "[umad]\ntopology_every = 1000\n");
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    let hca3 = guid_text(hca_guid(&tb, "Hca3"));
    let is_sm = |tb: &Testbed| {
        let out = tb
            .run_diag("smpquery", &["-D", "portinfo", "0,2", "1"])
            .expect("smpquery");
        out.stdout.contains("IsSM")
    };
    assert!(is_sm(&tb), "the standby's port has IsSM (smpquery)");
    // Two sweeps (1 s apart) with the standby up, then stopped.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(count(&trapd.traps(), "ibSmTrapCapabilityMaskChanged"), 0);
    tb.stop_standby_opensms();
    assert!(!is_sm(&tb), "smpquery: IsSM gone");
    trapd.wait(WAIT, "ibSmTrapCapabilityMaskChanged", |t| {
        count(t, "ibSmTrapCapabilityMaskChanged") >= 1
    });
    let t = trapd.traps();
    let cm = named(&t, "ibSmTrapCapabilityMaskChanged");
    assert_eq!(cm.len(), 1, "{}", trapd.text());
    assert_eq!(
        cm[0].object("IB-SM-MIB::ibSmTrapNodeGUID1.0"),
        Some(&*hca3),
        "{}",
        trapd.text()
    );
    drop(agent);
}
