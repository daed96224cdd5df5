//! Node contexts on ibsim + OpenSM with NodeDescriptions as real clusters
//! write them (issue 50): switches "NAME MODEL" and managed switches
//! "MF0;NAME:MODEL/U1", hosts "HOST HCA-1" and "HOST mlx5_0 (dual)", two
//! HCAs of one GPU server, and a description with a control character.
//! Each context is compared with infiniband-diags (smpquery, perfquery):
//! names by the rule of docs/contexts.md, the multi-HCA host as one
//! device, detail counters absent until polled and then equal to
//! perfquery, octets by one formula, a down port's ifDescr without a
//! rate, GUID contexts in every spelling, and names escaped in the log
//! and on the terminal. Without OpenSM, `ibsnmpd health` finds
//! NO_MASTER_SM.

mod common;

use std::time::Duration;

use common::{text, UmadAgent};

/// The control character of the hostile description (ESC: a terminal
/// takes what follows as a command).
const ESC_NAME: &str = "cn\u{1b}[2J666 mlx5_0";

fn net() -> String {
    format!(
        "\
Switch\t8 \"leaf-a.rack01 SB7800\"
[1]\t\"cn001 HCA-1\"[1]
[2]\t\"stor-1 mlx5_0 (dual)\"[1]
[3]\t\"dgx01 mlx5_0\"[1]
[4]\t\"dgx01 mlx5_1\"[1]
[5]\t\"MF0;ib-leaf-07:MQM8790/U1\"[1]
[6]\t\"{ESC_NAME}\"[1]
[7]\t\"cn002 HCA-1\"[1]

Switch\t8 \"MF0;ib-leaf-07:MQM8790/U1\"
[1]\t\"leaf-a.rack01 SB7800\"[5]

Hca\t1 \"cn001 HCA-1\"
[1]\t\"leaf-a.rack01 SB7800\"[1]

Hca\t1 \"cn002 HCA-1\"
[1]\t\"leaf-a.rack01 SB7800\"[7]

Hca\t1 \"stor-1 mlx5_0 (dual)\"
[1]\t\"leaf-a.rack01 SB7800\"[2]

Hca\t1 \"dgx01 mlx5_0\"
[1]\t\"leaf-a.rack01 SB7800\"[3]

Hca\t1 \"dgx01 mlx5_1\"
[1]\t\"leaf-a.rack01 SB7800\"[4]

Hca\t1 \"{ESC_NAME}\"
[1]\t\"leaf-a.rack01 SB7800\"[6]
"
    )
}

const LEAF: &str = "leaf-a.rack01 SB7800";
const IF_NUMBER: &str = ".1.3.6.1.2.1.2.1.0";
const IF_DESCR: &str = ".1.3.6.1.2.1.2.2.1.2";
const IF_OPER_STATUS: &str = ".1.3.6.1.2.1.2.2.1.8";
const IF_NAME: &str = ".1.3.6.1.2.1.31.1.1.1.1";
const IF_HC_IN_OCTETS: &str = ".1.3.6.1.2.1.31.1.1.1.6";
const SYS_NAME: &str = ".1.3.6.1.2.1.1.5.0";
/// ibIfPortStatTable (IB-IF-MIB): LocalPhyErrs, MalformedPkts,
/// InactiveDiscards, NeighborMTUDiscards.
const IB_IF_PORT_STAT: &str = ".1.3.6.1.3.117.2.1.1.1";
const DETAIL_COLUMNS: [(u32, &str); 4] = [
    (5, "PortLocalPhysicalErrors"),
    (6, "PortMalformedPktErrors"),
    (9, "PortInactiveDiscards"),
    (10, "PortNeighborMTUDiscards"),
];

impl UmadAgent {
    /// `snmpget -Oqv` of one OID in a context: the value, or None when
    /// the agent has no such instance (or no such context).
    fn get_in(&self, context: &str, oid: &str) -> Option<String> {
        let o = self.v2c(
            "snmpget",
            &format!("public@{context}"),
            &["-Oqv", "-On", "-t", "2", "-r", "1"],
            &[oid],
        );
        let out = String::from_utf8_lossy(&o.stdout).trim().to_string();
        (o.status.success() && !out.starts_with("No Such")).then_some(out)
    }

    /// ifIndex -> value of a column walked in a context.
    fn column_in(&self, context: &str, root: &str) -> Vec<(u32, String)> {
        self.column(&format!("public@{context}"), root)
    }
}

/// The agent attached at "cn001 HCA-1", sweeping every second, once the
/// managed switch's context shows all its ports (a poll of a context asks
/// for its node's details: the leaf's are not asked for yet).
fn agent(tb: &ib_testbed::Testbed) -> UmadAgent {
    UmadAgent::start(
        tb,
        Some("cn001 HCA-1"),
        &["--sweep-interval", "1"],
        Duration::from_secs(90),
        |a| {
            a.get_in("ib-leaf-07", IF_NUMBER)
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n >= 8)
        },
    )
}

/// The ifIndex of switch port 1 (port + 1 with an enhanced port 0).
fn shift(a: &UmadAgent, context: &str) -> u32 {
    let n: u32 = a.get_in(context, IF_NUMBER).unwrap().parse().unwrap();
    u32::from(n == 9)
}

fn wait_for<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    common::wait_for(what, Duration::from_secs(60), f)
}

#[test]
fn contexts_are_named_as_operators_name_their_nodes() {
    let tb = common::testbed(&net());
    let a = agent(&tb);
    let lids = common::node_lids(&tb);

    // A switch port is NAME/PORT, never the model's word.
    let sh = shift(&a, "leaf-a.rack01");
    let names = a.column_in("leaf-a.rack01", IF_NAME);
    for port in 1..=8u32 {
        let want = format!("leaf-a.rack01/{port}");
        assert!(
            names.contains(&(port + sh, want.clone())),
            "{want} in {names:?}"
        );
    }

    // A managed switch by the name between ';' and ':'; the same device
    // as its GUID context (smpquery's NodeGUID) in every spelling.
    let (guid, _) = common::node_by_name(&tb, &lids, "MF0;ib-leaf-07:MQM8790/U1");
    assert_eq!(
        a.get_in("ib-leaf-07", SYS_NAME).as_deref(),
        Some("\"ib-leaf-07\"")
    );
    let by_name = a.column_in("ib-leaf-07", IF_NAME);
    assert!(
        by_name.iter().any(|(_, n)| n == "ib-leaf-07/1"),
        "{by_name:?}"
    );
    for spelling in [
        format!("{guid:016x}"),
        format!("{guid:016X}"),
        format!("0x{guid:016x}"),
        format!("0x{guid:016X}"),
    ] {
        assert_eq!(a.column_in(&spelling, IF_NAME), by_name, "{spelling}");
    }

    // Hosts: the device word of rdma-ndd's form, never a later word.
    assert_eq!(
        a.column_in("stor-1", IF_NAME),
        vec![(1, "mlx5_0/1".to_string())]
    );
    assert_eq!(
        a.column_in("cn002", IF_NAME),
        vec![(1, "HCA-1/1".to_string())]
    );
    // The agent's own node: the CA's kernel name (rdma-ndd writes the same
    // into a real host's description; ibsim's CA is ibsim0).
    assert_eq!(
        a.column_in("cn001", IF_NAME),
        vec![(1, "ibsim0/1".to_string())]
    );

    // The GPU server: one device holding both HCAs' ports; each HCA is
    // still its own device by GUID.
    assert_eq!(
        a.column_in("dgx01", IF_NAME),
        vec![(1, "mlx5_0/1".to_string()), (1001, "mlx5_1/1".to_string())]
    );
    let (hca1, _) = common::node_by_name(&tb, &lids, "dgx01 mlx5_1");
    assert_eq!(
        a.column_in(&format!("{hca1:016x}"), IF_NAME),
        vec![(1, "mlx5_1/1".to_string())]
    );

    // The hostile description names no context, and reaches the log only
    // escaped.
    assert_eq!(a.get_in("cn\u{1b}[2J666", SYS_NAME), None);
    // (ibnetdiscover prints the ESC as a space.)
    let key = lids.keys().find(|k| k.ends_with("666 mlx5_0")).unwrap();
    let (bad, _) = common::node_by_name(&tb, &lids, key);
    // The agent reads the ESC as the fabric holds it (net-snmp prints the
    // sysDescr as hex: 1B is there).
    let descr = a
        .get_in(&format!("{bad:016x}"), ".1.3.6.1.2.1.1.1.0")
        .unwrap();
    assert!(descr.contains("63 6E 1B 5B"), "{descr}");

    // A port that goes down: described without the last link's rate.
    tb.console(&format!("Unlink \"{LEAF}\"[2]")).unwrap();
    let idx = 2 + sh;
    wait_for("leaf port 2 down", || {
        let st = a.get_in("leaf-a.rack01", &format!("{IF_OPER_STATUS}.{idx}"))?;
        (st == "2" || st == "down").then_some(())
    });
    assert_eq!(
        a.get_in("leaf-a.rack01", &format!("{IF_DESCR}.{idx}"))
            .as_deref(),
        Some("\"leaf-a.rack01 port 2\"")
    );
    // Its link going down is logged with its name escaped.
    tb.console(&format!("Unlink \"{LEAF}\"[6]")).unwrap();
    let log = wait_for("the hostile node's event in the log", || {
        let log = a.log_text();
        log.contains("666 mlx5_0").then_some(log)
    });
    assert!(!log.contains('\u{1b}'), "a raw ESC in the log:\n{log}");
    assert!(log.contains("cn\\u{1b}[2J666 mlx5_0"), "escaped:\n{log}");
}

#[test]
fn detail_counters_are_read_when_polled_and_equal_perfquery() {
    let tb = common::testbed(&net());
    // Port 3 of the leaf: details that PortCounters' summaries do not show
    // apart, and flow-control packets the octets must count.
    for (f, v) in [
        ("PortRcvErrorDetails.PortLocalPhysicalErrors", 31),
        ("PortRcvErrorDetails.PortMalformedPktErrors", 37),
        ("PortXmitDiscardDetails.PortInactiveDiscards", 41),
        ("PortXmitDiscardDetails.PortNeighborMTUDiscards", 43),
        ("PortFlowCtlCounters.PortRcvFlowPkts", 100_000_000),
    ] {
        let said = tb
            .console(&format!("PerformanceSet \"{LEAF}\"[3] {f}={v}"))
            .unwrap();
        assert!(!said.to_lowercase().contains("unknown"), "{f}: {said}");
    }
    let a = agent(&tb);
    let lids = common::node_lids(&tb);
    let lid = lids[LEAF].to_string();
    // ibsim's switches have no enhanced port 0 (the managed switch's
    // context shows it: ifIndex = port).
    assert_eq!(shift(&a, "ib-leaf-07"), 0);
    let cell = |col: u32| format!("{IB_IF_PORT_STAT}.{col}.3");

    // Never read: absent, not 0. This poll asks for them.
    for (col, name) in DETAIL_COLUMNS {
        assert_eq!(a.get_in("leaf-a.rack01", &cell(col)), None, "{name}");
    }
    // Read from the next sweep on: perfquery -E / -D's values.
    let rcv = common::perfquery(&tb, &["-E", &lid, "3"]);
    let xmit = common::perfquery(&tb, &["-D", &lid, "3"]);
    for (col, name) in DETAIL_COLUMNS {
        let got: u64 = wait_for(name, || a.get_in("leaf-a.rack01", &cell(col))?.parse().ok());
        let want = rcv.get(name).or_else(|| xmit.get(name)).copied();
        assert_eq!(Some(got), want, "{name}");
    }

    // Octets by one formula: data words x 4 + packets x 4 + flow-control
    // packets x 8 (002 2.4), as for the agent's own node. perfquery reads
    // after the agent, adding the MADs sent between (a few KB).
    let oid = format!("{IF_HC_IN_OCTETS}.3");
    let got: u64 = wait_for("ifHCInOctets", || {
        a.get_in("leaf-a.rack01", &oid)?.parse().ok()
    });
    let x = common::perfquery(&tb, &["-x", &lid, "3"]);
    let f = common::perfquery(&tb, &["--flowctlcounters", &lid, "3"]);
    let want = x["PortRcvData"] * 4 + x["PortRcvPkts"] * 4 + f["PortRcvFlowPkts"] * 8;
    assert!(
        want >= got && want - got < 2_000_000,
        "perfquery {want}, ifHCInOctets {got}"
    );
    assert!(got >= 800_000_000, "the flow-control term is in: {got}");
}

#[test]
fn a_fabric_without_a_subnet_manager_is_not_healthy() {
    let tb = ib_testbed::Testbed::start(ib_testbed::TestbedConfig::new(net()).without_opensm())
        .unwrap_or_else(|e| panic!("testbed: {e}"));
    let out = tb
        .command(common::BIN)
        .args(["health", "--source", "umad", "--interval", "0"])
        .env("SIM_HOST", "cn001 HCA-1")
        .output()
        .expect("ibsnmpd health");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("NO_MASTER_SM"), "{}", text(&out));
    assert!(!stdout.contains("No findings"), "{stdout}");
    // The exit code is 0 whatever the findings (docs/health.md).
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !stdout.contains('\u{1b}') && !String::from_utf8_lossy(&out.stderr).contains('\u{1b}'),
        "a raw ESC on the terminal:\n{}",
        text(&out)
    );
}
