//! Node contexts named as clusters name their nodes (issue 50), over
//! hand-built snapshots: NodeDescription forms, ifName by the rule, GUID
//! spellings, hosts with several HCAs, shared names, down ports, and
//! counters served only when current.

use std::sync::Arc;

use ib::model::{Snapshot, SnapshotBuilder};
use ib::types::NodeType;
use snmp::agent::SnmpStats;
use snmp::value::Value;

use crate::core::oids::{ib_if_mib as ibo, if_mib as o};
use crate::modules::if_mib::tests::{down, get, node, port, readings, system, up, Fabric};
use crate::View;

/// A fabric whose NodeDescriptions are written as real clusters write
/// them; each node has ports 1 and 2 (port 2 down), and port 1 of each the
/// readings of [`readings`].
fn cluster(descs: &[(NodeType, u64, &str)]) -> Arc<Snapshot> {
    let mut f = Fabric::new("cluster");
    f.number += 1;
    let mut b = SnapshotBuilder::new(0);
    for (i, (kind, guid, desc)) in descs.iter().enumerate() {
        b.add_node(
            node(*kind, *guid, desc, false),
            vec![port(1, up()), port(2, down())],
        );
        b.set_readings(u32::try_from(i * 2).unwrap(), readings(1));
    }
    f.build(b)
}

fn in_context(s: &Arc<Snapshot>, name: &str) -> Option<View> {
    let sys = system();
    let base = View::new(
        Arc::clone(s),
        Arc::clone(&sys),
        Arc::new(SnmpStats::default()),
    );
    crate::modules::node_context::view(&base, name.as_bytes())
}

fn text(v: Value) -> String {
    match v {
        Value::OctetString(b) => String::from_utf8(b).unwrap(),
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn descriptions_as_clusters_write_them() {
    use crate::core::node::describe;
    let d = |s, sw| {
        let d = describe(s, sw);
        (d.name, d.device)
    };
    assert_eq!(
        d("leaf-a.rack01 SB7800", true),
        (Some("leaf-a.rack01"), None)
    );
    assert_eq!(
        d("ib-spine-02 QM8700 (row B)", true),
        (Some("ib-spine-02"), None)
    );
    assert_eq!(
        d("MF0;ib-leaf-07:MQM8790/U1", true),
        (Some("ib-leaf-07"), None)
    );
    assert_eq!(d("cn001 HCA-1", false), (Some("cn001"), Some("HCA-1")));
    assert_eq!(
        d("stor-1 mlx5_0 (dual)", false),
        (Some("stor-1"), Some("mlx5_0"))
    );
    assert_eq!(d("dgx01 mlx5_7", false), (Some("dgx01"), Some("mlx5_7")));
    assert_eq!(d("cn002 compute node", false), (Some("cn002"), None));
    assert_eq!(
        d("MT4123 ConnectX6 Mellanox Technologies", false),
        (Some("MT4123"), None)
    );
    assert_eq!(d("", false), (None, None));
}

#[test]
fn if_names_by_the_rule_never_a_later_word() {
    let s = cluster(&[
        (NodeType::Switch, 0x10, "leaf-a.rack01 SB7800"),
        (NodeType::Switch, 0x11, "ib-spine-02 QM8700 (row B)"),
        (NodeType::Switch, 0x12, "MF0;ib-leaf-07:MQM8790/U1"),
        (NodeType::Ca, 0x20, "stor-1 mlx5_0 (dual)"),
        (NodeType::Ca, 0x21, "cn001 HCA-1"),
        (NodeType::Ca, 0x22, "cn002 compute node"),
    ]);
    for (ctx, name) in [
        ("leaf-a.rack01", "leaf-a.rack01/1"),
        ("ib-spine-02", "ib-spine-02/1"),
        // A managed switch is known by its host name.
        ("ib-leaf-07", "ib-leaf-07/1"),
        ("stor-1", "mlx5_0/1"),
        ("cn001", "HCA-1/1"),
        ("cn002", "cn002/1"),
        ("0000000000000012", "ib-leaf-07/1"),
    ] {
        let v = in_context(&s, ctx).unwrap_or_else(|| panic!("no context {ctx}"));
        assert_eq!(text(get(&v, o::IF_NAME, &[1])), name, "{ctx}");
    }
}

#[test]
fn guid_contexts_in_every_spelling() {
    let s = cluster(&[(NodeType::Switch, 0x2c90300a1b2c3, "leaf01 SB7800")]);
    for name in [
        "0002c90300a1b2c3",
        "0002C90300A1B2C3",
        "0x0002c90300a1b2c3",
        "0X0002C90300A1B2C3",
    ] {
        let v = in_context(&s, name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(text(get(&v, o::IF_NAME, &[1])), "leaf01/1", "{name}");
    }
    assert!(in_context(&s, "0x2c90300a1b2c3").is_none(), "16 digits");
    assert!(in_context(&s, "0x0002c90300a1b2c").is_none());
}

#[test]
fn a_host_with_several_adapters_is_one_context() {
    let s = cluster(&[
        (NodeType::Ca, 0x31, "dgx01 mlx5_1"),
        (NodeType::Ca, 0x30, "dgx01 mlx5_0"),
        (NodeType::Ca, 0x3a, "dgx01 mlx5_10"),
        (NodeType::Switch, 0x40, "leaf01 QM8700"),
    ]);
    let v = in_context(&s, "dgx01").expect("the host's context");
    // Adapters by device word (mlx5_10 after mlx5_1), 1000 ifIndexes apart.
    for (i, name) in [
        (1, "mlx5_0/1"),
        (2, "mlx5_0/2"),
        (1001, "mlx5_1/1"),
        (2001, "mlx5_10/1"),
    ] {
        assert_eq!(text(get(&v, o::IF_NAME, &[i])), name, "ifIndex {i}");
    }
    assert_eq!(get(&v, o::IF_NUMBER, &[0]), Value::Integer(6));
    // Each adapter is still its own device by GUID, numbered as alone.
    let one = in_context(&s, "0000000000000031").unwrap();
    assert_eq!(text(get(&one, o::IF_NAME, &[1])), "mlx5_1/1");
    assert_eq!(get(&one, o::IF_NUMBER, &[0]), Value::Integer(2));
}

#[test]
fn shared_names_hide_no_node_silently() {
    let s = cluster(&[
        // A host named like a switch: the switch keeps the name.
        (NodeType::Switch, 0x50, "leaf01 QM8700"),
        (NodeType::Ca, 0x51, "leaf01 mlx5_0"),
        // Two switches of one name: neither has it.
        (NodeType::Switch, 0x52, "spine MQM8790"),
        (NodeType::Switch, 0x53, "spine MQM8790"),
        // Two adapters without distinct device words: no host context.
        (NodeType::Ca, 0x54, "cn009 HCA-1"),
        (NodeType::Ca, 0x55, "cn009 HCA-1"),
    ]);
    let leaf = in_context(&s, "leaf01").unwrap();
    assert_eq!(text(get(&leaf, o::IF_NAME, &[1])), "leaf01/1");
    assert!(in_context(&s, "spine").is_none());
    assert!(in_context(&s, "cn009").is_none());
    for g in 0x50..=0x55u64 {
        assert!(in_context(&s, &format!("{g:016x}")).is_some(), "{g:x}");
    }
    // A name with a control character names no context (its GUID does).
    let bad = cluster(&[(NodeType::Ca, 0x60, "cn\u{1b}[2J01 mlx5_0")]);
    assert!(in_context(&bad, "cn\u{1b}[2J01").is_none());
    assert!(in_context(&bad, "0000000000000060").is_some());
}

#[test]
fn a_down_port_is_described_without_a_rate() {
    let s = cluster(&[(NodeType::Switch, 0x70, "leaf-d SB7800")]);
    let v = in_context(&s, "leaf-d").unwrap();
    assert_eq!(text(get(&v, o::IF_DESCR, &[1])), "leaf-d port 1 4x HDR");
    // Port 2 is Down/Polling: PortInfo still holds the last link's width
    // and speed, which are not true now.
    assert_eq!(text(get(&v, o::IF_DESCR, &[2])), "leaf-d port 2");
    assert_eq!(get(&v, o::IF_SPEED, &[2]), Value::Gauge32(0));
}

#[test]
fn node_contexts_serve_only_current_details_and_octets() {
    // The readings hold flow control but no error details: the detail
    // columns are absent (never a 0 that was not read), the octets present
    // with the flow-control term.
    let s = cluster(&[(NodeType::Switch, 0x80, "leaf-e SB7800")]);
    let v = in_context(&s, "leaf-e").unwrap();
    assert_eq!(
        get(&v, ibo::IB_IF_PORT_STAT_LOCAL_PHY_ERRS, &[1]),
        Value::NoSuchInstance
    );
    assert_eq!(
        get(&v, ibo::IB_IF_PORT_STAT_INACT_DISCARDS, &[1]),
        Value::NoSuchInstance
    );
    assert_eq!(
        get(&v, ibo::IB_IF_PORT_SYMBOL_ERRS, &[1]),
        Value::Counter32(19)
    );
    let t = s.ports[0].counters.as_deref().unwrap();
    let want = ib::model::counters::if_in_octets(1000, 100, 31);
    assert_eq!(t.totals.port_rcv_flow_pkts, 31);
    assert_eq!(get(&v, o::IF_HC_IN_OCTETS, &[1]), Value::Counter64(want));

    // Without flow control read, the octets are absent, not short.
    let mut f = Fabric::new("no-flow");
    f.number += 1;
    let mut b = SnapshotBuilder::new(0);
    b.add_node(
        node(NodeType::Switch, 0x81, "leaf-f SB7800", false),
        vec![port(1, up())],
    );
    let mut r = readings(1);
    r.flow_ctl = None;
    r.rcv_error_details = Some(Default::default());
    b.set_readings(0, r);
    let s = f.build(b);
    let v = in_context(&s, "leaf-f").unwrap();
    assert_eq!(get(&v, o::IF_HC_IN_OCTETS, &[1]), Value::NoSuchInstance);
    assert_eq!(get(&v, o::IF_IN_OCTETS, &[1]), Value::NoSuchInstance);
    assert_eq!(get(&v, o::IF_HC_IN_UCAST_PKTS, &[1]), Value::Counter64(100));
    assert_eq!(
        get(&v, ibo::IB_IF_PORT_STAT_LOCAL_PHY_ERRS, &[1]),
        Value::Counter32(0)
    );
}
