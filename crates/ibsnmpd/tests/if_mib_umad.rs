//! IF-MIB and IB-IF-MIB on the umad source over ibsim + OpenSM (the
//! project's testbed): the agent runs under umad2sim attached at Hca1
//! (SIM_HOST), so IF-MIB shows Hca1's ports; values are checked against
//! perfquery, counters set with ibsim's PerformanceSet past 2^32 show in
//! ifHCInOctets and wrap in ifInOctets, and resets by someone else
//! (perfquery -R) or saturation never move a counter back nor the
//! discontinuity time.

mod common;

use std::collections::BTreeMap;

use std::time::Duration;

use common::{snmp, UmadAgent};
use ib_testbed::{Testbed, SMALL_NET};

const IF_ENTRY: &str = ".1.3.6.1.2.1.2.2.1";
const IF_X_ENTRY: &str = ".1.3.6.1.2.1.31.1.1.1";
const IB_IF_PORT_STAT_ENTRY: &str = ".1.3.6.1.3.117.2.1.1.1";

impl UmadAgent {
    /// Starts the agent attached at `host` (ibsim's SIM_HOST; None: ibsim's
    /// default attach point, Switch1 port 0), ready once it serves IF-MIB rows.
    fn start_if(tb: &Testbed, host: Option<&str>, sweep: &str) -> UmadAgent {
        let ready = |a: &UmadAgent| {
            let out = common::probe(&a.target, ".1.3.6.1.2.1.2.1.0", &["-Oqv"]);
            let n = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<u32>()
                .unwrap_or(0);
            out.status.success() && n > 0
        };
        let args = ["--sweep-interval", sweep];
        UmadAgent::start(tb, host, &args, Duration::from_secs(60), ready)
    }

    /// Numeric values of several instances in one Get (one snapshot).
    fn get(&self, oids: &[String]) -> Vec<u64> {
        let oids: Vec<&str> = oids.iter().map(String::as_str).collect();
        let out = self.values(&["-Oe", "-Ot"], &oids);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        common::numbers(&text, oids.len())
    }

    /// The values alone (`-Oqv` and `flags`) of `oids` in one Get.
    fn values(&self, flags: &[&str], oids: &[&str]) -> std::process::Output {
        let opts = [&["-t", "2", "-r", "1", "-Oqv"][..], flags].concat();
        self.v2c("snmpget", "public", &opts, oids)
    }

    /// The octets of an OCTET STRING instance.
    fn octets(&self, oid: &str) -> Vec<u8> {
        let out = self.values(&["-Ox"], &[oid]);
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|h| u8::from_str_radix(h.trim_matches('"'), 16).ok())
            .collect()
    }
}

fn col(entry: &str, c: u32) -> String {
    format!("{entry}.{c}.1")
}

fn perfquery(tb: &Testbed, args: &[&str]) -> BTreeMap<String, u64> {
    common::perfquery(tb, args)
}

fn console(tb: &Testbed, cmd: &str) {
    tb.console(cmd).unwrap();
}

/// The testbed (ibsim + OpenSM); missing tools fail with an install hint.
fn testbed() -> Testbed {
    common::testbed(SMALL_NET)
}

#[test]
fn umad_counters_match_perfquery_and_survive_resets() {
    let tb = testbed();
    // Before the agent's first sweep: a 64-bit data counter past 2^32 (so
    // its octets are far past 2^32 too), error counters that MAD traffic
    // does not move.
    console(
        &tb,
        "PerformanceSet \"Hca1\"[1] PortCountersExtended.PortRcvData=5000000000",
    );
    console(
        &tb,
        "PerformanceSet \"Hca1\"[1] PortCounters.SymbolErrorCounter=7",
    );
    console(
        &tb,
        "PerformanceSet \"Hca1\"[1] PortCounters.PortRcvErrors=11",
    );
    console(
        &tb,
        "PerformanceSet \"Hca1\"[1] PortCounters.PortRcvRemotePhysicalErrors=3",
    );
    console(&tb, "PerformanceSet \"Hca1\"[1] PortCounters.VL15Dropped=5");
    console(
        &tb,
        "PerformanceSet \"Hca1\"[1] PortCounters.PortXmitDiscards=13",
    );

    let agent = UmadAgent::start_if(&tb, Some("Hca1"), "0.5");
    let lid_octets = agent.octets(&col(IF_ENTRY, 6));
    assert_eq!(
        lid_octets.len(),
        2,
        "ifPhysAddress is the 2-octet LID: {lid_octets:?}"
    );
    let lid = (u16::from(lid_octets[0]) << 8 | u16::from(lid_octets[1])).to_string();

    let watch = [
        col(IF_X_ENTRY, 6),             // 0 ifHCInOctets
        col(IF_ENTRY, 10),              // 1 ifInOctets
        col(IB_IF_PORT_STAT_ENTRY, 2),  // 2 ibIfPortSymbolErrs
        col(IF_ENTRY, 14),              // 3 ifInErrors
        col(IF_ENTRY, 13),              // 4 ifInDiscards
        col(IF_ENTRY, 19),              // 5 ifOutDiscards
        col(IB_IF_PORT_STAT_ENTRY, 15), // 6 ibIfPortStatVL15Dropped
        col(IF_X_ENTRY, 19),            // 7 ifCounterDiscontinuityTime
        col(IF_X_ENTRY, 7),             // 8 ifHCInUcastPkts
        col(IF_X_ENTRY, 10),            // 9 ifHCOutOctets
    ];
    let v = agent.get(&watch);
    let pq = perfquery(&tb, &["-x", &lid, "1"]);
    let pc = perfquery(&tb, &[&lid, "1"]);
    println!("agent {v:?}\nperfquery -x {pq:?}\nperfquery {pc:?}");

    // Past 2^32 in ifHCInOctets, wrapped in ifInOctets (same snapshot).
    assert!(v[0] >= 20_000_000_000, "{v:?}");
    assert_eq!(v[1], v[0] & 0xFFFF_FFFF);
    assert!(v[1] < v[0]);
    // perfquery reads later: MADs since the agent's last sweep add a few
    // packets of 72 words; the formula over its values is never below ours.
    let pq_in = pq["PortRcvData"] * 4 + pq["PortRcvPkts"] * 4;
    assert!(
        pq_in >= v[0] && pq_in - v[0] < 2_000_000,
        "perfquery {pq_in} vs ifHCInOctets {v:?}"
    );
    let pq_out = pq["PortXmitData"] * 4 + pq["PortXmitPkts"] * 4;
    assert!(
        pq_out >= v[9] && pq_out - v[9] < 2_000_000,
        "perfquery {pq_out} vs ifHCOutOctets {v:?}"
    );
    assert!(pq["PortRcvPkts"] >= v[8] && pq["PortRcvPkts"] - v[8] < 5_000);
    // Error counters do not move by themselves: exact.
    assert_eq!(v[2], pc["SymbolErrorCounter"]);
    assert_eq!(v[2], 7);
    assert_eq!(
        v[3],
        pc["PortRcvRemotePhysicalErrors"] + pc["PortRcvErrors"]
    );
    assert_eq!(v[3], 14);
    assert_eq!(v[4], pc["PortRcvConstraintErrors"] + pc["VL15Dropped"]);
    assert_eq!(
        v[5],
        pc["PortXmitDiscards"] + pc["PortXmitConstraintErrors"]
    );
    assert_eq!(v[6], 5);
    let disc = v[7];
    // A PerformanceSet on the sim, then the agent's values two sweeps later.
    let pm_set = |command: &str| {
        console(&tb, command);
        std::thread::sleep(Duration::from_millis(2000));
        agent.get(&watch)
    };

    // Someone else resets every counter (basic and extended).
    perfquery(&tb, &["-R", &lid, "1"]);
    perfquery(&tb, &["-x", "-R", &lid, "1"]);
    std::thread::sleep(Duration::from_millis(2000));
    let w = agent.get(&watch);
    for i in [0, 2, 3, 4, 5, 6, 8, 9] {
        assert!(
            w[i] >= v[i],
            "{} went back after perfquery -R: {v:?} -> {w:?}",
            watch[i]
        );
    }
    assert_eq!(w[2], 7, "nothing new counted from the reset");
    assert_eq!(w[7], disc, "a reset by someone else is no discontinuity");

    // Saturation: the 16-bit counter clamps at 65535 and then stays.
    let x = pm_set("PerformanceSet \"Hca1\"[1] PortCounters.SymbolErrorCounter=70000");
    assert_eq!(x[2], w[2] + 65535, "{w:?} -> {x:?}");
    std::thread::sleep(Duration::from_millis(1500));
    let y = agent.get(&watch);
    assert_eq!(y[2], x[2], "a saturated counter adds nothing");
    // Then reset and 4 more: +4.
    perfquery(&tb, &["-R", &lid, "1"]);
    let z = pm_set("PerformanceSet \"Hca1\"[1] PortCounters.SymbolErrorCounter=4");
    assert_eq!(z[2], y[2] + 4, "{y:?} -> {z:?}");
    for i in [0, 8, 9] {
        assert!(z[i] >= y[i], "{} went back: {y:?} -> {z:?}", watch[i]);
    }
    assert_eq!(z[7], disc);

    // A new value past 2^32 again after the reset: counted on top.
    let u = pm_set("PerformanceSet \"Hca1\"[1] PortCountersExtended.PortRcvData=1500000000");
    assert!(u[0] >= z[0] + 5_900_000_000, "{z:?} -> {u:?}");
    assert_eq!(u[1], u[0] & 0xFFFF_FFFF);
    assert_eq!(u[7], disc);
}

/// Attached at a switch (ibsim's default), IF-MIB lists the switch's ports:
/// ifIndex = port number, or port + 1 with an enhanced port 0; every row
/// shows the switch's LID (port 0's) as ifPhysAddress.
#[test]
fn umad_switch_ports_are_interfaces() {
    let tb = testbed();
    let agent = UmadAgent::start_if(&tb, None, "3600");
    let n = agent.get(&[".1.3.6.1.2.1.2.1.0".to_string()])[0];
    assert!(
        n == 8 || n == 9,
        "Switch1 has 8 ports (+ enhanced port 0): ifNumber {n}"
    );
    let out = snmp(
        "snmpwalk",
        &[
            "-v2c",
            "-c",
            "public",
            "-Oqv",
            &agent.target,
            ".1.3.6.1.2.1.2.2.1.2",
        ],
    );
    let descrs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_matches('"').to_string())
        .collect();
    assert_eq!(descrs.len() as u64, n, "{descrs:?}");
    // The device is the CA the source opened (ibstat -l lists it first),
    // not a word of the node description.
    let ibstat = tb.run_diag("ibstat", &["-l"]).unwrap();
    let ca = ibstat
        .stdout
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    assert!(!ca.is_empty(), "{ibstat:?}");
    let first_port = if n == 9 { 0 } else { 1 };
    for (i, d) in descrs.iter().enumerate() {
        assert!(
            d.starts_with(&format!("{ca} port ")),
            "ifDescr.{} = {d:?}, CA {ca}",
            i + 1
        );
        assert!(
            d.contains(&format!(" port {} ", i + first_port))
                || d.ends_with(&format!(" port {}", i + first_port)),
            "ifDescr.{} = {d:?}",
            i + 1
        );
    }
    let lids: Vec<Vec<u8>> = (1..=n)
        .map(|i| agent.octets(&format!("{IF_ENTRY}.6.{i}")))
        .collect();
    assert_eq!(lids[0].len(), 2, "{lids:?}");
    assert!(
        lids.iter().all(|l| *l == lids[0]),
        "one LID for the switch: {lids:?}"
    );
    // The linked ports (1, 2, 3, 5) are up; the others down.
    let oper = agent.get(&[
        format!("{IF_ENTRY}.8.{}", 1 + (n - 8)),
        format!("{IF_ENTRY}.8.{}", 4 + (n - 8)),
    ]);
    assert_eq!(oper, vec![1, 2], "ifOperStatus of ports 1 and 4");
}
