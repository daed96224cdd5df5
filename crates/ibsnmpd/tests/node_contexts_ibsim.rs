//! Node contexts on the umad source over ibsim + OpenSM: the agent runs
//! attached at Hca1, and a 48-port switch it is not attached to is read as
//! a device of its own (`public@leaf01`, its GUID context): every port,
//! with error counters equal to perfquery's and data counters equal to
//! `perfquery -x` up to the MADs sent between the two reads; one
//! wildcard-context monitor on IF-MIB::ifInErrors fires for an error burst
//! on port 37, naming the switch's context.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::collections::BTreeMap;
use std::time::Duration;

use common::UmadAgent;

/// A 48-port switch with two HCAs on ports 1 and 37.
const NET: &str = "\
Switch\t48 \"leaf01\"
[1]\t\"Hca1\"[1]
[37]\t\"Hca2\"[1]

Hca\t2 \"Hca1\"
[1]\t\"leaf01\"[1]

Hca\t2 \"Hca2\"
[1]\t\"leaf01\"[37]
";

const IF_NUMBER: &str = ".1.3.6.1.2.1.2.1.0";
const IF_IN_ERRORS: &str = ".1.3.6.1.2.1.2.2.1.14";
const IF_HC_IN_OCTETS: &str = ".1.3.6.1.2.1.31.1.1.1.6";

fn walk(agent: &UmadAgent, community: &str, root: &str) -> BTreeMap<u32, u64> {
    agent
        .column(community, root)
        .into_iter()
        .filter_map(|(i, v)| Some((i, v.parse().ok()?)))
        .collect()
}

/// The agent attached at Hca1, once leaf01's context shows all its ports.
fn start_at_hca1(tb: &ib_testbed::Testbed, args: &[&str]) -> UmadAgent {
    let ready = |a: &UmadAgent| {
        let o = a.v2c(
            "snmpget",
            "public@leaf01",
            &["-Oqv", "-t", "1", "-r", "0"],
            &[IF_NUMBER],
        );
        o.status.success()
            && String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<u32>()
                .is_ok_and(|n| n >= 48)
    };
    UmadAgent::start(tb, Some("Hca1"), args, Duration::from_secs(60), ready)
}

#[test]
fn a_48_port_switch_is_a_device_with_perfquery_counters() {
    let tb = common::testbed(NET);
    tb.console("PerformanceSet \"leaf01\"[37] PortCounters.PortRcvErrors=11")
        .unwrap();
    tb.console("PerformanceSet \"leaf01\"[37] PortCounters.PortRcvRemotePhysicalErrors=3")
        .unwrap();
    tb.console("PerformanceSet \"leaf01\"[37] PortCountersExtended.PortRcvData=5000000000")
        .unwrap();
    let agent = start_at_hca1(&tb, &["--sweep-interval", "1"]);
    let lids = common::node_lids(&tb);
    let (guid, lid) = common::node_by_name(&tb, &lids, "leaf01");
    let lid = lid.to_string();

    // ifIndex: the port number (plus one with an enhanced port 0).
    let errors = walk(&agent, "public@leaf01", IF_IN_ERRORS);
    let shift = u32::from(errors.len() == 49);
    assert!(errors.len() == 48 || errors.len() == 49, "{errors:?}");
    // The GUID names the same device.
    let by_guid = walk(&agent, &format!("public@{guid:016x}"), IF_IN_ERRORS);
    assert_eq!(by_guid, errors);
    for port in 1..=48u32 {
        let pc = common::perfquery(&tb, &[&lid, &port.to_string()]);
        assert_eq!(
            errors.get(&(port + shift)).copied(),
            Some(pc["PortRcvErrors"] + pc["PortRcvRemotePhysicalErrors"]),
            "port {port}"
        );
    }
    assert_eq!(errors[&(37 + shift)], 14);

    // Data: the agent's snapshot is older than perfquery's read, which adds
    // the MADs sent meanwhile (a few packets of 72 words each).
    // The octets count flow-control packets, read from the first sweep
    // after the context was polled (absent until then, never short).
    let octets = common::wait_for("current ifHCInOctets", Duration::from_secs(30), || {
        let o = walk(&agent, "public@leaf01", IF_HC_IN_OCTETS);
        (o.len() >= 48).then_some(o)
    });
    for port in [1u32, 37] {
        let pq = common::perfquery(&tb, &["-x", &lid, &port.to_string()]);
        let fc = common::perfquery(&tb, &["--flowctlcounters", &lid, &port.to_string()]);
        let want = pq["PortRcvData"] * 4 + pq["PortRcvPkts"] * 4 + fc["PortRcvFlowPkts"] * 8;
        let got = octets[&(port + shift)];
        assert!(
            want >= got && want - got < 2_000_000,
            "port {port}: perfquery -x {want}, ifHCInOctets {got}"
        );
    }
    assert!(octets[&(37 + shift)] >= 20_000_000_000);
}

/// One `[[monitor]]` over every port of every node: `contexts = "*"`
/// (mteTriggerContextNameWildcard) on IF-MIB::ifInErrors. ibsim's
/// PerformanceSet raises PortRcvErrors on port 37 of the switch the agent
/// is not attached to; mteTriggerRising names the switch's GUID context
/// (mteHotContextName) and the port's ifInErrors instance (mteHotOID).
#[test]
fn a_wildcard_context_monitor_fires_for_port_37_of_a_switch() {
    let tb = common::testbed(NET);
    let trapd = trapd::Trapd::start();
    let (_dir, conf) = common::temp_file(
        "ibsnmpd.toml",
        r#"
[[monitor]]
name = "portErrors"
comment = "receive errors on any port of any node"
oid = "IF-MIB::ifInErrors"
contexts = "*"
threshold = { rising = 10, falling = 0 }
delta = true
frequency = 1
objects = ["IF-MIB::ifName"]
"#,
    );
    let conf = conf.display().to_string();
    let sink = trapd.addr();
    let agent = start_at_hca1(
        &tb,
        &[
            "--sweep-interval",
            "1",
            "--config",
            &conf,
            "--trap2sink",
            &sink,
        ],
    );
    // Two samples of every node's ports before the burst: baselines set.
    let lids = common::node_lids(&tb);
    let (guid, _) = common::node_by_name(&tb, &lids, "leaf01");
    std::thread::sleep(Duration::from_secs(3));
    tb.console("PerformanceSet \"leaf01\"[37] PortCounters.PortRcvErrors=50")
        .unwrap();
    let traps = trapd.wait(
        Duration::from_secs(30),
        "mteTriggerRising of portErrors",
        |t| !trapd::of_trigger(t, "mteTriggerRising", "portErrors").is_empty(),
    );
    let rising = trapd::of_trigger(&traps, "mteTriggerRising", "portErrors");
    assert_eq!(rising.len(), 1, "{rising:?}\n{}", agent.log_text());
    let t = rising[0];
    let context = format!("{guid:016x}");
    assert!(
        t.object("DISMAN-EVENT-MIB::mteHotContextName.0")
            .is_some_and(|v| v.contains(&context)),
        "{t:?}"
    );
    let oid = t
        .object("DISMAN-EVENT-MIB::mteHotOID.0")
        .unwrap_or_default();
    assert!(
        oid.ends_with("ifInErrors.37") || oid.ends_with("ifInErrors.38"),
        "{t:?}"
    );
    assert!(
        t.object("DISMAN-EVENT-MIB::mteHotValue.0")
            .is_some_and(|v| v.contains("50")),
        "{t:?}"
    );
    assert!(
        t.objects.iter().any(|o| o.contains("leaf01/37")),
        "the extra object is read in the same context: {t:?}"
    );
}
