//! DISMAN-EVENT-MIB threshold monitors with the real binary on the
//! simulated fabric: `[[monitor]]` triggers show in net-snmp's walk of the
//! MIB's tables (loaded from the shipped MIB files), and snmptrapd receives
//! mteTriggerRising when a symbol error burst (`ctl error-burst`) passes a
//! delta threshold and mteTriggerFalling when the errors stop, mteTriggerFired
//! for a boolean test when a link goes down (`ctl link-flap`) and for an
//! existence test (startup and a changed value), and mteTriggerFailure for
//! an object that is not there, counted in mteTriggerFailures.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::time::Duration;

use common::ctl;
use trapd::{Trap, Trapd};

/// mteTriggerFailures.0 and mteResourceSampleInstances.0 (the tools run
/// without MIBs).
const MTE_TRIGGER_FAILURES: &str = ".1.3.6.1.2.1.88.1.2.1.0";
const MTE_RESOURCE_SAMPLE_INSTANCES: &str = ".1.3.6.1.2.1.88.1.1.3.0";
const WAIT: Duration = Duration::from_secs(20);

const CONFIG: &str = r#"
[[monitor]]
name = "symbolErrors"
comment = "symbol errors per sample"
oid = "IB-PM-MIB::pmPortCountersSymbolErrors"
threshold = { rising = 100, falling = 0 }
delta = true
frequency = 1
objects = ["IB-PM-MIB::pmPortCountersLinkDown"]

[[monitor]]
name = "portDown"
oid = "IF-MIB::ifOperStatus"
boolean = { op = "!=", value = 1 }
frequency = 1
objects = ["IF-MIB::ifDescr"]

[[monitor]]
name = "sysNameSet"
oid = "SNMPv2-MIB::sysName.0"
wildcard = false
existence = ["present", "changed"]
frequency = 1

[[monitor]]
name = "missing"
oid = "1.3.6.1.2.1.1.99.0"
wildcard = false
boolean = { op = "==", value = 1 }
frequency = 1
"#;

fn of<'a>(t: &'a [Trap], name: &str, trigger: &str) -> Vec<&'a Trap> {
    trapd::of_trigger(t, name, trigger)
}

/// The first `name` notification of `trigger`, once one has arrived.
fn first(trapd: &Trapd, name: &str, trigger: &str) -> Trap {
    let t = trapd.wait(WAIT, &format!("{name} of {trigger}"), |t| {
        !of(t, name, trigger).is_empty()
    });
    of(&t, name, trigger)[0].clone()
}

#[test]
fn monitors_walk_and_notify() {
    let trapd = Trapd::start();
    let dir = tempfile::tempdir().unwrap();
    let (agent, socket) =
        common::agent_with_socket(dir.path(), CONFIG, &["--trap2sink", &trapd.addr()]);

    // The tables as net-snmp reads them with the shipped MIBs.
    let walk = common::walk_with_shipped_mibs(&agent.target, "DISMAN-EVENT-MIB::dismanEventMIB");
    for want in [
        "mteTriggerValueID.\"_ibsnmpd\".'symbolErrors' = OID: IB-PM-MIB::pmPortCountersSymbolErrors",
        "mteTriggerSampleType.\"_ibsnmpd\".'symbolErrors' = INTEGER: deltaValue(2)",
        "mteTriggerValueIDWildcard.\"_ibsnmpd\".'symbolErrors' = INTEGER: true(1)",
        "mteTriggerFrequency.\"_ibsnmpd\".'symbolErrors' = Gauge32: 1",
        "mteTriggerEntryStatus.\"_ibsnmpd\".'symbolErrors' = INTEGER: active(1)",
        "mteTriggerThresholdRising.\"_ibsnmpd\".'symbolErrors' = INTEGER: 100",
        "mteTriggerThresholdRisingEvent.\"_ibsnmpd\".'symbolErrors' = STRING: _mteTriggerRising",
        "mteTriggerBooleanComparison.\"_ibsnmpd\".'portDown' = INTEGER: unequal(1)",
        "mteTriggerBooleanEvent.\"_ibsnmpd\".'portDown' = STRING: _mteTriggerFired",
        "mteTriggerObjects.\"_ibsnmpd\".'portDown' = STRING: portDown",
        "mteObjectsID.\"_ibsnmpd\".\"portDown\".1 = OID: IF-MIB::ifDescr",
        "mteEventNotification.\"_ibsnmpd\".'_mteTriggerRising' = OID: DISMAN-EVENT-MIB::mteTriggerRising",
        "mteEventEnabled.\"_ibsnmpd\".'_mteTriggerFired' = INTEGER: true(1)",
    ] {
        assert!(walk.contains(want), "no {want} in:\n{walk}");
    }

    // Existence: present at startup; changed after a Set.
    first(&trapd, "mteTriggerFired", "sysNameSet");
    agent.ok(
        "snmpset",
        "2c",
        "private",
        &[],
        &[".1.3.6.1.2.1.1.5.0", "s", "renamed"],
    );
    trapd.wait(WAIT, "sysNameSet changed", |t| {
        of(t, "mteTriggerFired", "sysNameSet").len() >= 2
    });

    // Failure: notified once, counted every sample.
    let f = first(&trapd, "mteTriggerFailure", "missing");
    assert_eq!(
        f.object("DISMAN-EVENT-MIB::mteFailedReason.0"),
        Some("INTEGER: noSuchName(2)"),
        "{f:?}"
    );
    assert!(agent.get_number(MTE_TRIGGER_FAILURES) >= 1);

    // Threshold on deltas: a burst rises, the quiet after it falls.
    ctl(&socket, &["error-burst", "node01", "1", "5000"]);
    let t = trapd.wait(WAIT, "symbolErrors falling after rising", |t| {
        !of(t, "mteTriggerRising", "symbolErrors").is_empty()
            && !of(t, "mteTriggerFalling", "symbolErrors").is_empty()
    });
    let r = of(&t, "mteTriggerRising", "symbolErrors")[0];
    let hot_oid = r.object("DISMAN-EVENT-MIB::mteHotOID.0").unwrap();
    assert!(
        hot_oid.starts_with("OID: IB-PM-MIB::pmPortCountersSymbolErrors."),
        "{r:?}"
    );
    let value: i64 = r
        .object("DISMAN-EVENT-MIB::mteHotValue.0")
        .and_then(|v| v.strip_prefix("INTEGER: "))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(value >= 5000, "{r:?}");
    assert!(
        r.objects
            .iter()
            .any(|o| o.starts_with("IB-PM-MIB::pmPortCountersLinkDown.")),
        "{r:?}"
    );
    let rising_at = t.iter().position(|x| std::ptr::eq(x, r)).unwrap();
    assert!(
        t[rising_at..]
            .iter()
            .any(|x| x.name.ends_with("mteTriggerFalling")
                && x.object("DISMAN-EVENT-MIB::mteHotOID.0") == Some(hot_oid)),
        "no falling for {hot_oid} after the rising"
    );

    // Boolean: the agent's own port goes down.
    ctl(&socket, &["link-flap", "node01", "1", "3"]);
    let d = first(&trapd, "mteTriggerFired", "portDown");
    assert_eq!(
        d.object("DISMAN-EVENT-MIB::mteHotOID.0"),
        Some("OID: IF-MIB::ifOperStatus.1"),
        "{d:?}"
    );
    assert_eq!(
        d.object("DISMAN-EVENT-MIB::mteHotValue.0"),
        Some("INTEGER: 2")
    );
    assert!(d.object("IF-MIB::ifDescr.1").is_some(), "{d:?}");
    assert!(agent.get_number(MTE_RESOURCE_SAMPLE_INSTANCES) >= 4);
}
