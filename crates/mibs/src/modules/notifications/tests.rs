//! The notifications' varbinds and when they are sent.

use super::*;

fn names(n: &Notification) -> Vec<&'static str> {
    n.varbinds
        .iter()
        .map(|vb| {
            let o = vb.oid.as_slice();
            sm::OBJECTS
                .iter()
                .find(|(_, oid)| o.len() == oid.len() + 1 && o.starts_with(oid))
                .map_or("?", |(name, _)| *name)
        })
        .collect()
}

/// The OBJECTS clauses of IB-SM-MIB, in order.
#[test]
fn objects_as_the_mib_lists_them() {
    let g = Guid(0x10);
    let k = KeyViolation::default();
    let head = [
        "ibSmTrapSubnetPrefix",
        "ibSmTrapType",
        "ibSmTrapProducerType",
    ];
    let with =
        |rest: &[&'static str]| -> Vec<&'static str> { head.iter().chain(rest).copied().collect() };
    let p = ProducerType::ChannelAdapter;
    assert_eq!(
        names(&in_service(1, g, 1)),
        with(&["ibSmTrapNodeGUID1", "ibSmTrapPortNum1"])
    );
    assert_eq!(
        names(&mc_group(true, 1, Gid([0; 16]))),
        with(&["ibSmTrapMCGid"])
    );
    assert_eq!(
        names(&switch_link_state_changed(1, g, 3)),
        with(&["ibSmTrapSwitchGUID", "ibSmTrapSwitchPortNum"])
    );
    assert_eq!(
        names(&capability_mask_changed(1, p, g, 1, 5)),
        with(&[
            "ibSmTrapNodeGUID1",
            "ibSmTrapPortNum1",
            "ibSmTrapCapabilityMask"
        ])
    );
    assert_eq!(
        names(&system_image_guid_changed(1, p, g, g)),
        with(&["ibSmTrapNodeGUID1", "ibSmTrapSystemImageGUID"])
    );
    assert_eq!(names(&bad_m_key(1, p, g, 1, &k)).len(), 16);
    assert_eq!(
        names(&bad_p_key(1, p, g, 1, &k)),
        with(&[
            "ibSmTrapNodeGUID1",
            "ibSmTrapPortNum1",
            "ibSmTrapNodeGUID2",
            "ibSmTrapPortNum2",
            "ibSmTrapPKey",
            "ibSmTrapQueuePair1",
            "ibSmTrapQueuePair2",
            "ibSmTrapServiceLevel"
        ])
    );
    assert_eq!(names(&bad_q_key(1, p, g, 1, &k))[7], "ibSmTrapQKey");
    assert_eq!(
        names(&switch_external_ports_bad_p_key(1, g, 2, vec![], &k)).len(),
        14
    );
    assert_eq!(
        names(&vendor_specific(1, TrapType::Urgent, 0x2c9, 1, g, 1, &[1])),
        vec![
            "ibSmTrapSubnetPrefix",
            "ibSmTrapType",
            "ibSmTrapVendorID",
            "ibSmTrapDeviceID",
            "ibSmTrapNodeGUID1",
            "ibSmTrapPortNum1",
            "ibSmTrapVendorDetailedData"
        ]
    );
    assert!(!names(&bad_m_key(1, p, g, 1, &k)).contains(&"?"));
}

/// The index in `s.ports` of port `port` of the first switch.
fn first_switch_port(s: &Snapshot, port: u8) -> usize {
    let node = s
        .nodes
        .iter()
        .position(|n| n.info.node_type() == Some(NodeType::Switch))
        .unwrap();
    s.node_port(node as u32, ib::types::PortNum(port)).unwrap() as usize
}

fn trap_names(v: &[Notification]) -> Vec<&'static str> {
    v.iter()
        .map(|n| {
            sm::OBJECTS
                .iter()
                .find(|(_, o)| *o == n.trap_oid.as_slice())
                .map_or("?", |(name, _)| *name)
        })
        .collect()
}

/// Each kind of snapshot difference gives its notification once, and
/// the same snapshot twice gives nothing.
#[test]
fn snapshot_differences() {
    use ib::source::Source;
    let mut src = crate::testing::sim_source("test-notifications", true);
    let a = src.sweep().unwrap();
    let th = Thresholds {
        link_integrity: 3,
        buffer_overrun: 1,
    };
    assert!(changes_between(&a, &a, &th).is_empty());
    let mut b = a.clone();
    // A CA port (node01 port 1) and a switch's external port.
    let ca = b.node_port(0, ib::types::PortNum(1)).unwrap() as usize;
    let sw = first_switch_port(&b, 1);
    b.ports[ca].info.capability_mask ^= 1 << 5;
    b.ports[ca].info.m_key_violations += 1;
    b.ports[ca].info.p_key_violations += 2;
    b.ports[ca].info.q_key_violations += 1;
    b.ports[sw].info.p_key_violations += 1;
    b.nodes[0].info.system_image_guid = Guid(0x1234);
    let mut c = (**b.ports[ca].counters.as_ref().unwrap()).clone();
    c.totals.local_link_integrity_errors += 2; // under the threshold
    c.totals.excessive_buffer_overrun_errors += 1;
    b.ports[ca].counters = Some(std::sync::Arc::new(c));
    let group = ib::model::McastGroup {
        group: ib::mad::sa::McMemberRecord::decode(&[0u8; 52]).unwrap(),
        members: Vec::new(),
    };
    b.mcast_groups.push(group);
    let n = changes_between(&a, &b, &th);
    let mut got = trap_names(&n);
    got.sort();
    assert_eq!(
        got,
        vec![
            "ibSmTrapBadMKey",
            "ibSmTrapBadPKey",
            "ibSmTrapBadQKey",
            "ibSmTrapBufferOverrunThresholdReached",
            "ibSmTrapCapabilityMaskChanged",
            "ibSmTrapMCGroupCreated",
            "ibSmTrapSwitchExternalPortsBadPKey",
            "ibSmTrapSystemImageGUIDChanged",
        ]
    );
    // Back again: the group is deleted; decreases (resets) say nothing.
    let back = trap_names(&changes_between(&b, &a, &th));
    assert!(back.contains(&"ibSmTrapMCGroupDeleted"), "{back:?}");
    assert!(!back.iter().any(|n| n.contains("Bad")), "{back:?}");
    assert!(changes_between(&b, &b, &th).is_empty());
}

fn mc_names(prev: &Snapshot, next: &Snapshot) -> Vec<&'static str> {
    let mut v = trap_names(&changes_between(prev, next, &Thresholds::default()));
    v.retain(|n| n.starts_with("ibSmTrapMC"));
    v
}

/// Only groups that appear or vanish at the same master SM, in
/// partitions the local port is in both times, are created or deleted:
/// a master change, an SM that stops answering and a change of the
/// local port's partitions change the agent's view, not the groups.
#[test]
fn mc_group_events_only_for_real_changes() {
    use ib::source::Source;
    let mut src = crate::testing::sim_source("test-mc", true);
    let a = src.sweep().unwrap();
    assert!(a.master_sm().is_some() && a.local_node.is_some());
    let group = |mgid: u8, p_key: u16| {
        let mut r = ib::mad::sa::McMemberRecord::decode(&[0u8; 52]).unwrap();
        r.mgid = Gid([
            0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, mgid,
        ]);
        r.p_key = ib::types::PKey(p_key);
        ib::model::McastGroup {
            group: r,
            members: Vec::new(),
        }
    };
    // Two groups in the local port's partitions (0x7fff, the sim's default).
    let mut with = a.clone();
    with.mcast_groups.push(group(1, 0xffff));
    with.mcast_groups.push(group(2, 0xffff));
    let mut without = a.clone();
    without.mcast_groups.push(group(1, 0xffff));
    // Same master: group 2 really vanished, then came back.
    assert_eq!(mc_names(&with, &without), ["ibSmTrapMCGroupDeleted"]);
    assert_eq!(mc_names(&without, &with), ["ibSmTrapMCGroupCreated"]);
    // Another master (a standby took over): its SA's view, no events.
    let mut moved = without.clone();
    moved.sms.iter_mut().for_each(|m| m.info.guid = Guid(0xabc));
    assert!(moved.master_sm().is_some());
    assert!(mc_names(&with, &moved).is_empty());
    assert!(mc_names(&moved, &with).is_empty());
    // The master stops answering: its last groups, no events either way.
    let mut silent = without.clone();
    silent.sms.iter_mut().for_each(|m| {
        m.answering = false;
        m.info.sm_state = 0;
    });
    assert!(mc_names(&with, &silent).is_empty());
    assert!(mc_names(&silent, &with).is_empty());
    // Partition 0x0001, which a switch port is in: the local port
    // joining or leaving it brings its group into or out of view.
    let local = a.local_node.unwrap();
    let lp = a.node_port(local, a.node_ports(local)[0].num).unwrap() as usize;
    let in_p1 = |s: &mut Snapshot, port: usize| {
        let mut keys: Vec<ib::types::PKey> = s.ports[port].pkeys.to_vec();
        keys.push(ib::types::PKey(0x8001));
        s.ports[port].pkeys = keys.into();
        s.partitions.push(ib::model::Partition {
            pkey: ib::types::PKey(0x8001),
            members: Vec::new(),
        });
    };
    let sw = first_switch_port(&a, 0);
    let mut others = with.clone();
    in_p1(&mut others, sw);
    let mut joined = others.clone();
    in_p1(&mut joined, lp);
    joined.mcast_groups.push(group(3, 0x8001));
    assert!(mc_names(&joined, &others).is_empty(), "out of view");
    assert!(mc_names(&others, &joined).is_empty(), "into view");
    // Still in 0x0001: the group vanishing is a deletion.
    let mut kept = joined.clone();
    kept.mcast_groups
        .retain(|g| g.group.mgid.to_bytes()[15] != 3);
    assert_eq!(mc_names(&joined, &kept), ["ibSmTrapMCGroupDeleted"]);
    // A new partition with the local port in it: its group is new.
    let mut fresh = with.clone();
    in_p1(&mut fresh, lp);
    fresh.mcast_groups.push(group(3, 0x8001));
    assert_eq!(mc_names(&with, &fresh), ["ibSmTrapMCGroupCreated"]);
    // The partition gone from the subnet: its group is deleted.
    assert_eq!(mc_names(&fresh, &with), ["ibSmTrapMCGroupDeleted"]);
}

/// The notifications of the one comparison of two snapshots.
fn changes_between(prev: &Snapshot, next: &Snapshot, th: &Thresholds) -> Vec<Notification> {
    from_changes(&ib::model::compare(prev, next).changes, next, th)
}
