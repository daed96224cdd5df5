//! IF-MIB and IB-IF-MIB over hand-built snapshots: row layout, the section
//! 2.4 formulas, status mapping, history (ifLastChange,
//! ifCounterDiscontinuityTime), Sets.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use ib::mad::pma::{
    PortCounters, PortCountersExtended, PortFlowCtlCounters, PortVlOpData, PortVlOpPackets,
};
use ib::mad::smp::{NodeInfo, PortInfo, SwitchInfo};
use ib::model::{
    CounterHistory, IpoibInterface, Node, Port, PortReadings, Snapshot, SnapshotBuilder, SweepInfo,
    SwitchData,
};
use ib::types::{Guid, Lid, LinkSpeed, LinkWidth, NodeType, PhysPortState, PortNum, PortState};
use snmp::agent::SnmpStats;
use snmp::mib::SetError;
use snmp::oid::Oid;
use snmp::value::Value;

use crate::core::oids::{ib_if_mib as ibo, if_mib as o};
use crate::modules::if_mib::IfSet;
use crate::Change;
use crate::{Published, Publisher};
use crate::{SystemState, View};

pub(crate) fn port_info(lid: u16, state: PortState, phys: PhysPortState) -> PortInfo {
    let mut pi = PortInfo::default();
    pi.lid = Lid(lid);
    pi.port_state = state.raw();
    pi.port_physical_state = phys.raw();
    pi.link_width_active = LinkWidth::X4.raw();
    pi.set_link_speed(LinkSpeed::Hdr);
    pi.neighbor_mtu = 5;
    pi.operational_vls = 3;
    pi
}

pub(crate) fn port(num: u8, info: PortInfo) -> Port {
    Port {
        node: 0,
        num: PortNum(num),
        guid: Guid(0x1000 + u64::from(num)),
        info,
        remote: None,
        pkeys: Arc::from(Vec::new()),
        guids: Arc::from(Vec::new()),
        counters: None,
    }
}

pub(crate) fn node(kind: NodeType, guid: u64, desc: &str, enhanced: bool) -> Node {
    let mut info = NodeInfo::default();
    info.node_type = kind.raw();
    info.node_guid = Guid(guid);
    let switch = (kind == NodeType::Switch).then(|| {
        let mut si = SwitchInfo::default();
        si.enhanced_port0 = enhanced;
        Box::new(SwitchData {
            info: si,
            lft: Arc::from(Vec::new()),
        })
    });
    Node {
        info,
        description: desc.to_string(),
        ports: 0..0,
        switch,
        pma: None,
        sampling: None,
    }
}

/// Readings where every counter the formulas use is distinct.
pub(crate) fn readings(k: u64) -> PortReadings {
    let mut pc = PortCounters::default();
    pc.port_rcv_constraint_errors = 3;
    pc.vl15_dropped = 5;
    pc.port_rcv_remote_physical_errors = 7;
    pc.port_rcv_errors = 11;
    pc.port_xmit_discards = 13;
    pc.port_xmit_constraint_errors = 17;
    pc.symbol_error_counter = 19;
    pc.link_downed_counter = 2;
    let mut ext = PortCountersExtended::default();
    ext.port_rcv_data = 1000 * k;
    ext.port_rcv_pkts = 100 * k;
    ext.port_xmit_data = 2000 * k;
    ext.port_xmit_pkts = 200 * k;
    ext.port_multicast_rcv_pkts = 9 * k;
    ext.port_multicast_xmit_pkts = 8 * k;
    let mut fc = PortFlowCtlCounters::default();
    fc.port_rcv_flow_pkts = 31;
    fc.port_xmit_flow_pkts = 37;
    let mut vp = PortVlOpPackets::default();
    vp.port_vl_op_packets[1] = 41;
    let mut vd = PortVlOpData::default();
    vd.port_vl_op_data[1] = 43;
    PortReadings {
        counters: pc,
        extended: Some(ext),
        flow_ctl: Some(fc),
        vl_op_packets: Some(vp),
        vl_op_data: Some(vd),
        ..PortReadings::default()
    }
}

/// One source's successive snapshots, published like the daemon does.
pub(crate) struct Fabric {
    source: String,
    history: CounterHistory,
    pub(crate) number: u64,
    publisher: Publisher,
}

impl Fabric {
    pub(crate) fn new(name: &str) -> Self {
        Fabric {
            source: format!("test-{name}"),
            history: CounterHistory::new(),
            number: 0,
            publisher: Publisher::new(),
        }
    }

    /// Publishes `s` as the next snapshot and gives a view of it.
    fn publish(&mut self, s: &Arc<Snapshot>, sys: &Arc<SystemState>) -> View {
        published_view(&self.publisher.publish(Arc::clone(s)), sys)
    }

    /// A CA with two ports: port 1 as given, port 2 `p2`.
    fn ca(&mut self, p1: PortInfo, p2: PortInfo, k: u64) -> Arc<Snapshot> {
        self.number += 1;
        let mut b = SnapshotBuilder::new(0xfe80_0000_0000_0000);
        let n = b.add_node(
            node(NodeType::Ca, 0xAA, "node01 mlx5_0", false),
            vec![port(1, p1), port(2, p2)],
        );
        b.local_node = Some(n);
        b.set_readings(0, readings(k));
        let mut addr = [0u8; 20];
        addr[3] = 0x48;
        addr[4] = 0xfe;
        addr[5] = 0x80;
        b.ipoib.push(IpoibInterface {
            port: 0,
            name: "ib0".into(),
            address: addr,
        });
        self.build(b)
    }

    pub(crate) fn build(&mut self, b: SnapshotBuilder) -> Arc<Snapshot> {
        Arc::new(b.build(
            SweepInfo {
                number: self.number,
                time: SystemTime::now(),
                duration: Duration::ZERO,
                source: self.source.clone(),
                cost: Default::default(),
            },
            &mut self.history,
        ))
    }
}

pub(crate) fn system() -> Arc<SystemState> {
    Arc::new(SystemState::new("t".into(), Oid::new(vec![1, 3])))
}

fn published_view(p: &Published, sys: &Arc<SystemState>) -> View {
    View::from_published(p, Arc::clone(sys), Arc::new(SnmpStats::default()))
}

/// A view of `s` alone (no history).
fn view(s: &Arc<Snapshot>, sys: &Arc<SystemState>) -> View {
    View::new(
        Arc::clone(s),
        Arc::clone(sys),
        Arc::new(SnmpStats::default()),
    )
}

/// IF-MIB's objects and IB-IF-MIB's (which extends its tables), from the
/// registry: IB-IF-MIB builds on this module, not the other way round.
fn if_objects() -> Vec<crate::Object> {
    crate::modules(&crate::Options::default())
        .into_iter()
        .filter(|m| matches!(m.name, "IF-MIB" | "IB-IF-MIB"))
        .flat_map(|m| m.objects)
        .collect()
}

pub(crate) fn get(v: &View, base: &[u32], index: &[u32]) -> Value {
    let mut oid = base.to_vec();
    oid.extend_from_slice(index);
    for obj in if_objects() {
        if oid.starts_with(obj.root().as_slice()) {
            return obj.get(v, &oid);
        }
    }
    Value::NoSuchObject
}

/// A TimeTicks object's value (the history tests' ifLastChange and the like).
fn ticks(v: &View, base: &[u32], index: &[u32]) -> u32 {
    match get(v, base, index) {
        Value::TimeTicks(t) => t,
        other => panic!("{base:?} {index:?}: {other:?}"),
    }
}

pub(crate) fn up() -> PortInfo {
    port_info(5, PortState::Active, PhysPortState::LinkUp)
}

pub(crate) fn down() -> PortInfo {
    port_info(6, PortState::Down, PhysPortState::Polling)
}

#[test]
fn if_table_rows_and_formulas() {
    let mut f = Fabric::new("formulas");
    let s = f.ca(up(), down(), 1);
    let sys = system();
    let v = view(&s, &sys);
    // 2.4: RcvData*4 + RcvPkts*POH + RcvFlowPkts*SLP.
    let in_octets = 1000 * 4 + 100 * 4 + 31 * 8;
    let out_octets = 2000 * 4 + 200 * 4 + 37 * 8;
    // (column, index, what the cell reads)
    let cells: &[(&[u32], &[u32], Value)] = &[
        (o::IF_NUMBER, &[0], Value::Integer(2)),
        (o::IF_INDEX, &[1], Value::Integer(1)),
        (
            o::IF_DESCR,
            &[1],
            Value::OctetString(b"mlx5_0 port 1 4x HDR".to_vec()),
        ),
        (o::IF_TYPE, &[2], Value::Integer(199)),
        (o::IF_MTU, &[1], Value::Integer(4096)),
        (o::IF_SPEED, &[1], Value::Gauge32(u32::MAX)),
        (o::IF_HIGH_SPEED, &[1], Value::Gauge32(200_000)),
        (o::IF_PHYS_ADDRESS, &[1], Value::OctetString(vec![0, 5])),
        (o::IF_ADMIN_STATUS, &[1], Value::Integer(1)),
        (o::IF_OPER_STATUS, &[1], Value::Integer(1)),
        (o::IF_OPER_STATUS, &[2], Value::Integer(2)),
        (o::IF_LAST_CHANGE, &[1], Value::TimeTicks(0)),
        (o::IF_HC_IN_OCTETS, &[1], Value::Counter64(in_octets)),
        (o::IF_IN_OCTETS, &[1], Value::Counter32(in_octets as u32)),
        (o::IF_HC_OUT_OCTETS, &[1], Value::Counter64(out_octets)),
        (o::IF_IN_UCAST_PKTS, &[1], Value::Counter32(100)),
        (o::IF_HC_IN_UCAST_PKTS, &[1], Value::Counter64(100)),
        (o::IF_IN_DISCARDS, &[1], Value::Counter32(3 + 5)),
        (o::IF_IN_ERRORS, &[1], Value::Counter32(7 + 11)),
        (o::IF_IN_UNKNOWN_PROTOS, &[1], Value::Counter32(0)),
        (o::IF_OUT_DISCARDS, &[1], Value::Counter32(13 + 17)),
        (o::IF_OUT_UCAST_PKTS, &[1], Value::Counter32(200 + 13 + 17)),
        (
            o::IF_HC_OUT_UCAST_PKTS,
            &[1],
            Value::Counter64(200 + 13 + 17),
        ),
        (o::IF_OUT_ERRORS, &[1], Value::Counter32(0)),
        (o::IF_HC_IN_MULTICAST_PKTS, &[1], Value::Counter64(9)),
        (o::IF_OUT_MULTICAST_PKTS, &[1], Value::Counter32(8)),
        (o::IF_HC_IN_BROADCAST_PKTS, &[1], Value::Counter64(0)),
        (o::IF_OUT_BROADCAST_PKTS, &[1], Value::Counter32(0)),
        // Port 2 was never read: zero counters.
        (o::IF_HC_IN_OCTETS, &[2], Value::Counter64(0)),
        (o::IF_NAME, &[1], Value::OctetString(b"mlx5_0/1".to_vec())),
        (o::IF_LINK_UP_DOWN_TRAP_ENABLE, &[1], Value::Integer(1)),
        (o::IF_PROMISCUOUS_MODE, &[1], Value::Integer(2)),
        (o::IF_CONNECTOR_PRESENT, &[1], Value::Integer(1)),
        (o::IF_ALIAS, &[1], Value::OctetString(Vec::new())),
        (o::IF_COUNTER_DISCONTINUITY_TIME, &[1], Value::TimeTicks(0)),
        (o::IF_STACK_STATUS, &[0, 1], Value::Integer(1)),
        (o::IF_STACK_STATUS, &[2, 0], Value::Integer(1)),
        (o::IF_INDEX, &[3], Value::NoSuchInstance),
        // IB-IF-MIB.
        (ibo::IB_IF_PORT_SYMBOL_ERRS, &[1], Value::Counter32(19)),
        (ibo::IB_IF_PORT_LINK_DOWNED, &[1], Value::Counter32(2)),
        (
            ibo::IB_IF_PORT_STAT_RCV_REM_PHY_ERRS,
            &[1],
            Value::Counter32(7),
        ),
        (ibo::IB_IF_PORT_STAT_VL15_DROPPED, &[1], Value::Counter32(5)),
        (ibo::IB_IF_PORT_STAT_VL15_DROPPED, &[2], Value::Counter32(0)),
        (ibo::IB_IF_VL_IN_PKTS, &[1, 1], Value::Counter64(41)),
        (
            ibo::IB_IF_VL_IN_OCTETS,
            &[1, 1],
            Value::Counter64(43 * 4 + 41 * 4),
        ),
        (ibo::IB_IF_VL_IN_PKTS, &[1, 15], Value::Counter64(0)),
        // OperationalVLs 3 = VL0-3, then VL15.
        (ibo::IB_IF_VL_IN_PKTS, &[1, 4], Value::NoSuchInstance),
        (ibo::IB_IF_VL_OUT_PKTS, &[1, 1], Value::NoSuchInstance),
        (ibo::IB_IF_VL_IN_PKTS, &[2, 0], Value::NoSuchInstance),
    ];
    for (column, index, want) in cells {
        assert_eq!(&get(&v, column, index), want, "{column:?} {index:?}");
    }
    let Value::OctetString(id) = get(&v, ibo::IB_IPOIB_LINK_LAYER_ADDR, &[1, 1]) else {
        panic!("no IPoIB row");
    };
    assert_eq!(id.len(), 20);
    assert_eq!(&id[..2], &[0xfe, 0x80]);
    assert_eq!(&id[16..], &[0, 0, 0x48, 0]);
}

#[test]
fn walk_is_ordered_and_complete() {
    let mut f = Fabric::new("walk");
    let s = f.ca(up(), down(), 1);
    let sys = system();
    let v = view(&s, &sys);
    let mut objs = if_objects();
    objs.sort_by(|a, b| a.root().cmp(b.root()));
    let mut seen = Vec::new();
    for obj in &objs {
        let mut oid = obj.root().as_slice().to_vec();
        while let Some(vb) = obj.next(&v, &oid) {
            oid = vb.oid.into_vec();
            seen.push(oid.clone());
        }
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "walk not increasing");
    // ifTable: 18 columns x 2 rows; ifXTable 19 x 2; stack 4 rows + 2 scalars
    // + ifNumber; portStat 14 x 2; VL 2 x 5 rows; IPoIB 1.
    assert_eq!(seen.len(), 1 + 36 + 38 + 4 + 2 + 28 + 10 + 1);
}

#[test]
fn history_moves_only_on_change() {
    let mut f = Fabric::new("history");
    let sys = system();
    let s1 = f.ca(up(), down(), 1);
    let v1 = f.publish(&s1, &sys);
    assert_eq!(ticks(&v1, o::IF_LAST_CHANGE, &[2]), 0);
    std::thread::sleep(Duration::from_millis(30));
    // Port 2 comes up; port 1's counters grow (no discontinuity).
    let s2 = f.ca(up(), up(), 2);
    let v2 = f.publish(&s2, &sys);
    let lc = ticks(&v2, o::IF_LAST_CHANGE, &[2]);
    assert!(lc > 0);
    assert_eq!(ticks(&v2, o::IF_LAST_CHANGE, &[1]), 0);
    assert_eq!(
        get(&v2, o::IF_COUNTER_DISCONTINUITY_TIME, &[1]),
        Value::TimeTicks(0)
    );
    assert_eq!(
        get(&v2, o::IF_HC_IN_UCAST_PKTS, &[1]),
        Value::Counter64(200),
        "totals carry on"
    );
    // A request still holding the older publication reads it unchanged; it
    // cannot touch the publisher's history.
    assert_eq!(ticks(&v1, o::IF_LAST_CHANGE, &[2]), 0);
    std::thread::sleep(Duration::from_millis(30));
    // Nothing changes: ifLastChange stays where it was.
    let s3 = f.ca(up(), up(), 3);
    let v3 = f.publish(&s3, &sys);
    assert_eq!(ticks(&v3, o::IF_LAST_CHANGE, &[2]), lc);
    assert_eq!(ticks(&v3, o::IF_LAST_CHANGE, &[1]), 0);
    assert_eq!(ticks(&v3, o::IF_TABLE_LAST_CHANGE, &[0]), 0);
    std::thread::sleep(Duration::from_millis(30));
    // Port 2 goes down again: a later ifLastChange.
    let s4 = f.ca(up(), down(), 4);
    let v4 = f.publish(&s4, &sys);
    let lc4 = ticks(&v4, o::IF_LAST_CHANGE, &[2]);
    assert!(lc4 > lc, "{lc4} > {lc}");
    assert_eq!(ticks(&v4, o::IF_LAST_CHANGE, &[1]), 0);
}

#[test]
fn discontinuity_when_port_returns() {
    let mut f = Fabric::new("disc");
    let sys = system();
    let s1 = f.ca(up(), down(), 1);
    let _ = f.publish(&s1, &sys);
    // Sweep 2: no readings for port 1 at all (node gone), then back.
    f.number += 1;
    let mut b = SnapshotBuilder::new(0);
    let n = b.add_node(node(NodeType::Ca, 0xAA, "node01 mlx5_0", false), vec![]);
    b.local_node = Some(n);
    let s2 = f.build(b);
    let v2 = f.publish(&s2, &sys);
    assert_eq!(get(&v2, o::IF_NUMBER, &[0]), Value::Integer(0));
    let tlc = ticks(&v2, o::IF_TABLE_LAST_CHANGE, &[0]);
    std::thread::sleep(Duration::from_millis(30));
    let s3 = f.ca(up(), down(), 1);
    let v3 = f.publish(&s3, &sys);
    let d = ticks(&v3, o::IF_COUNTER_DISCONTINUITY_TIME, &[1]);
    assert!(d > 0, "a port back after an absence restarts its totals");
    let tlc3 = ticks(&v3, o::IF_TABLE_LAST_CHANGE, &[0]);
    assert!(tlc3 >= tlc);
    // The same discontinuity is served identically later; counters that
    // merely grow are no discontinuity.
    std::thread::sleep(Duration::from_millis(30));
    let s4 = f.ca(up(), down(), 2);
    assert_eq!(
        get(
            &f.publish(&s4, &sys),
            o::IF_COUNTER_DISCONTINUITY_TIME,
            &[1]
        ),
        Value::TimeTicks(d)
    );
}

#[test]
fn counter_reset_by_others_is_no_discontinuity() {
    let mut f = Fabric::new("reset");
    let sys = system();
    let s1 = f.ca(up(), down(), 5);
    let _ = f.publish(&s1, &sys);
    std::thread::sleep(Duration::from_millis(30));
    // The PMA's counters drop (perfquery -R): the totals carry on.
    let s2 = f.ca(up(), down(), 1);
    let v2 = f.publish(&s2, &sys);
    assert_eq!(
        get(&v2, o::IF_COUNTER_DISCONTINUITY_TIME, &[1]),
        Value::TimeTicks(0)
    );
    let Value::Counter64(after) = get(&v2, o::IF_HC_IN_UCAST_PKTS, &[1]) else {
        panic!()
    };
    // 500 packets, then the reset, then 100 more: all is counted once.
    assert_eq!(after, 600, "totals never go back");
}

#[test]
fn publishers_are_independent() {
    // Two publishers of the same source name: no state is shared (no global
    // cache), so each one's history is its own.
    let sys = system();
    let mut a = Fabric::new("independent");
    let mut b = Fabric::new("independent");
    let s = a.ca(up(), down(), 1);
    let _ = a.publish(&s, &sys);
    let s = b.ca(up(), down(), 1);
    let _ = b.publish(&s, &sys);
    std::thread::sleep(Duration::from_millis(30));
    // Port 2 comes up in A only.
    let s = a.ca(up(), up(), 2);
    let va = a.publish(&s, &sys);
    let s = b.ca(up(), down(), 2);
    let vb = b.publish(&s, &sys);
    let lc = ticks(&va, o::IF_LAST_CHANGE, &[2]);
    assert!(lc > 0);
    assert_eq!(ticks(&vb, o::IF_LAST_CHANGE, &[2]), 0);
    // A fresh publisher (or a standalone view) of A's latest snapshot has no
    // history: what it finds first changed before the agent started.
    let s = a.ca(up(), up(), 3);
    let fresh = published_view(&Publisher::new().publish(Arc::clone(&s)), &sys);
    assert_eq!(ticks(&fresh, o::IF_LAST_CHANGE, &[2]), 0);
    assert_eq!(
        get(&view(&s, &sys), o::IF_LAST_CHANGE, &[2]),
        Value::TimeTicks(0)
    );
    // ...while A's own publisher keeps its earlier change.
    assert_eq!(
        get(&a.publish(&s, &sys), o::IF_LAST_CHANGE, &[2]),
        Value::TimeTicks(lc)
    );
}

#[test]
fn device_name_from_local_ca() {
    let mut f = Fabric::new("local-ca");
    // The agent's own node, a CA, with its device name (`local_ca`) or not.
    let mut local = |local_ca: Option<&str>| {
        f.number += 1;
        let mut b = SnapshotBuilder::new(0);
        let n = b.add_node(
            node(
                NodeType::Ca,
                0xAC,
                "MT4123 ConnectX6 Mellanox Technologies",
                false,
            ),
            vec![port(1, up())],
        );
        b.local_node = Some(n);
        b.local_ca = local_ca.map(Into::into);
        f.build(b)
    };
    let s = local(Some("mlx5_0"));
    let sys = system();
    let v = view(&s, &sys);
    assert_eq!(
        get(&v, o::IF_DESCR, &[1]),
        Value::OctetString(b"mlx5_0 port 1 4x HDR".to_vec())
    );
    assert_eq!(
        get(&v, o::IF_NAME, &[1]),
        Value::OctetString(b"mlx5_0/1".to_vec())
    );
    // Without it, the node's name (the description's first word: a
    // firmware's default description has no device word).
    let s = local(None);
    assert_eq!(
        get(&view(&s, &sys), o::IF_NAME, &[1]),
        Value::OctetString(b"MT4123/1".to_vec())
    );
}

#[test]
fn sets_become_stored_changes() {
    let mut f = Fabric::new("sets");
    let s = f.ca(up(), down(), 1);
    let sys = system();
    let v = view(&s, &sys);
    let x = crate::modules::if_mib::objects(&crate::Options::default())
        .into_iter()
        .find(|o| o.root().as_slice() == o::IF_X_ENTRY)
        .unwrap();
    let alias: Vec<u32> = [o::IF_ALIAS, &[2]].concat();
    assert_eq!(
        x.check_set(&v, &alias, &Value::OctetString(b"uplink".to_vec())),
        Ok(Change::If(IfSet::Alias {
            node: None,
            if_index: 2,
            alias: "uplink".into()
        }))
    );
    assert_eq!(
        x.check_set(&v, &alias, &Value::OctetString(vec![b'a'; 65])),
        Err(SetError::WrongLength)
    );
    assert_eq!(
        x.check_set(&v, &alias, &Value::Integer(1)),
        Err(SetError::WrongType)
    );
    let missing: Vec<u32> = [o::IF_ALIAS, &[9]].concat();
    assert_eq!(
        x.check_set(&v, &missing, &Value::OctetString(Vec::new())),
        Err(SetError::NoCreation)
    );
    let trap: Vec<u32> = [o::IF_LINK_UP_DOWN_TRAP_ENABLE, &[1]].concat();
    assert_eq!(
        x.check_set(&v, &trap, &Value::Integer(2)),
        Ok(Change::If(IfSet::LinkUpDownTrapEnable {
            node: None,
            if_index: 1,
            value: 2
        }))
    );
    assert_eq!(
        x.check_set(&v, &trap, &Value::Integer(3)),
        Err(SetError::WrongValue)
    );
    let promisc: Vec<u32> = [o::IF_PROMISCUOUS_MODE, &[1]].concat();
    assert_eq!(
        x.check_set(&v, &promisc, &Value::Integer(1)),
        Err(SetError::NotWritable)
    );

    // Applied to the state, the values show.
    let mut st = (*sys).clone();
    Change::If(IfSet::Alias {
        node: None,
        if_index: 2,
        alias: "uplink".into(),
    })
    .apply(&mut st);
    Change::If(IfSet::LinkUpDownTrapEnable {
        node: None,
        if_index: 2,
        value: 2,
    })
    .apply(&mut st);
    let v2 = view(&s, &Arc::new(st));
    assert_eq!(
        get(&v2, o::IF_ALIAS, &[2]),
        Value::OctetString(b"uplink".to_vec())
    );
    assert_eq!(
        get(&v2, o::IF_LINK_UP_DOWN_TRAP_ENABLE, &[2]),
        Value::Integer(2)
    );
}

#[test]
fn switch_with_enhanced_port0_offsets_if_index() {
    let mut f = Fabric::new("switch");
    f.number += 1;
    let mut b = SnapshotBuilder::new(0);
    let mut p0 = up();
    p0.lid = Lid(0x42);
    let mut p1 = up();
    p1.lid = Lid(0);
    let n = b.add_node(
        node(NodeType::Switch, 0xBB, "sw1", true),
        vec![port(0, p0), port(1, p1.clone()), port(2, p1)],
    );
    b.local_node = Some(n);
    let s = f.build(b);
    let sys = system();
    let v = view(&s, &sys);
    assert_eq!(get(&v, o::IF_NUMBER, &[0]), Value::Integer(3));
    assert_eq!(
        get(&v, o::IF_DESCR, &[1]),
        Value::OctetString(b"sw1 port 0 4x HDR".to_vec())
    );
    assert_eq!(
        get(&v, o::IF_DESCR, &[3]),
        Value::OctetString(b"sw1 port 2 4x HDR".to_vec())
    );
    // Every port shows the switch's LID (port 0's).
    assert_eq!(
        get(&v, o::IF_PHYS_ADDRESS, &[3]),
        Value::OctetString(vec![0, 0x42])
    );

    // Base port 0: not an interface; ifIndex = port number.
    f.number += 1;
    let mut b = SnapshotBuilder::new(0);
    let n = b.add_node(
        node(NodeType::Switch, 0xBB, "sw1", false),
        vec![port(0, up()), port(1, up())],
    );
    b.local_node = Some(n);
    let s = f.build(b);
    let v = view(&s, &sys);
    assert_eq!(get(&v, o::IF_NUMBER, &[0]), Value::Integer(1));
    assert_eq!(
        get(&v, o::IF_DESCR, &[1]),
        Value::OctetString(b"sw1 port 1 4x HDR".to_vec())
    );
}

#[test]
fn no_local_node_no_rows() {
    let mut f = Fabric::new("empty");
    f.number += 1;
    let s = f.build(SnapshotBuilder::new(0));
    let v = view(&s, &system());
    assert_eq!(get(&v, o::IF_NUMBER, &[0]), Value::Integer(0));
    assert_eq!(ticks(&v, o::IF_TABLE_LAST_CHANGE, &[0]), 0);
}

/// The built-in simulated fabric: every IF-MIB counter equals the 2.4
/// formulas over the totals `ibsnmpd dump --format json` prints for the
/// same snapshot.
#[test]
fn sim_values_equal_the_formulas_over_the_dumped_totals() {
    use ib::source::Source;
    let mut src = crate::testing::sim_source("test-sim-formulas", false);
    let sys = system();
    for _ in 0..3 {
        let s = Arc::new(src.sweep().unwrap());
        let v = view(&s, &sys);
        let dump = ib::model::dump_json(&s);
        let local = dump["local_node"].as_str().unwrap().to_string();
        let node = dump["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["guid"].as_str() == Some(local.as_str()))
            .unwrap();
        for p in node["ports"].as_array().unwrap() {
            let i = p["num"].as_u64().unwrap() as u32;
            let t = |k: &str| p["counters"]["totals"][k].as_u64().unwrap();
            let in_octets =
                t("port_rcv_data") * 4 + t("port_rcv_pkts") * 4 + t("port_rcv_flow_pkts") * 8;
            let out_octets =
                t("port_xmit_data") * 4 + t("port_xmit_pkts") * 4 + t("port_xmit_flow_pkts") * 8;
            assert!(in_octets > 0);
            assert_eq!(
                get(&v, o::IF_HC_IN_OCTETS, &[i]),
                Value::Counter64(in_octets)
            );
            assert_eq!(
                get(&v, o::IF_IN_OCTETS, &[i]),
                Value::Counter32(in_octets as u32)
            );
            assert_eq!(
                get(&v, o::IF_HC_OUT_OCTETS, &[i]),
                Value::Counter64(out_octets)
            );
            // The sim's PMA has unicast counters: unicast and multicast
            // packets are counted apart, each packet once.
            assert_eq!(p["counters"]["totals"]["unicast_counters"], true);
            assert_eq!(
                get(&v, o::IF_HC_OUT_UCAST_PKTS, &[i]),
                Value::Counter64(
                    t("port_unicast_xmit_pkts")
                        + t("port_xmit_discards")
                        + t("port_xmit_constraint_errors")
                )
            );
            assert_eq!(
                get(&v, o::IF_HC_IN_UCAST_PKTS, &[i]),
                Value::Counter64(t("port_unicast_rcv_pkts"))
            );
            assert_eq!(
                get(&v, o::IF_IN_ERRORS, &[i]),
                Value::Counter32(
                    (t("port_rcv_remote_physical_errors") + t("port_rcv_errors")) as u32
                )
            );
            assert_eq!(
                get(&v, o::IF_HC_IN_MULTICAST_PKTS, &[i]),
                Value::Counter64(t("port_multicast_rcv_pkts"))
            );
            let vl0 = p["counters"]["totals"]["vl_op_data"][0].as_u64().unwrap() * 4
                + p["counters"]["totals"]["vl_op_packets"][0]
                    .as_u64()
                    .unwrap()
                    * 4;
            assert_eq!(
                get(&v, ibo::IB_IF_VL_IN_OCTETS, &[i, 0]),
                Value::Counter64(vl0)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
