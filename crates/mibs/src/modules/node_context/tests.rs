//! Node contexts over the built-in simulated fabric: names, the rows of a
//! switch's context against the dumped totals, absent values, Sets per node.

use std::sync::Arc;

use ib::model::Snapshot;
use ib::source::Source;
use ib::types::NodeType;
use snmp::agent::SnmpStats;
use snmp::oid::Oid;
use snmp::value::Value;

use crate::core::node::{guid_name, parse_guid_name, Target};
use crate::core::oids::{if_mib as o, snmpv2_mib as so};
use crate::modules::if_mib::{IfMibState, IfSet};
use crate::{Change, SystemState, View};

fn sim() -> Arc<Snapshot> {
    let mut src = crate::testing::sim_source("test-node-contexts", false);
    src.sweep().unwrap();
    Arc::new(src.sweep().unwrap())
}

fn base(s: &Arc<Snapshot>, sys: SystemState) -> View {
    View::new(Arc::clone(s), Arc::new(sys), Arc::new(SnmpStats::default()))
}

fn system() -> SystemState {
    SystemState::new("agent".into(), Oid::new(vec![1, 3, 6, 1, 3, 117, 100, 1]))
}

fn get(v: &View, base: &[u32], index: &[u32]) -> Value {
    let mut oid = base.to_vec();
    oid.extend_from_slice(index);
    for obj in super::objects(&crate::Options::default()) {
        if oid.starts_with(obj.root().as_slice()) {
            return obj.get(v, &oid);
        }
    }
    Value::NoSuchObject
}

/// ifAlias.3 and the node context's object serving it.
fn if_alias_3() -> (Vec<u32>, crate::Object) {
    let alias_oid = [o::IF_ALIAS, &[3]].concat();
    let obj = super::objects(&crate::Options::default())
        .into_iter()
        .find(|x| alias_oid.starts_with(x.root().as_slice()))
        .unwrap();
    (alias_oid, obj)
}

fn a_switch(s: &Snapshot) -> usize {
    s.nodes
        .iter()
        .position(|n| n.info.node_type == NodeType::Switch.raw())
        .unwrap()
}

#[test]
fn guid_names_are_16_lowercase_hex_digits() {
    assert_eq!(
        guid_name(ib::types::Guid(0x2c90300a1b2c3)),
        "0002c90300a1b2c3"
    );
    assert_eq!(
        parse_guid_name(b"0002c90300a1b2c3"),
        Some(ib::types::Guid(0x2c90300a1b2c3))
    );
    assert_eq!(parse_guid_name(b"0002C90300A1B2C3"), None);
    assert_eq!(parse_guid_name(b"0x02c90300a1b2c3"), None);
    assert_eq!(parse_guid_name(b"2c90300a1b2c3"), None);
}

#[test]
fn every_node_resolves_by_guid_and_unique_names_by_name() {
    let s = sim();
    let v = base(&s, system());
    let names = &v.derived.context_names;
    let mut listed = Vec::new();
    let mut after = Vec::new();
    while let Some(n) = names.next_name(&s, &after) {
        assert!(
            (after.len(), &after) < (n.len(), &n),
            "vacmContextTable order"
        );
        listed.push(n.clone());
        after = n;
    }
    // After a 16-octet name that is no GUID name: the next in order, as a
    // search of the whole list finds it.
    for probe in [
        &b"0000000000000zzz"[..],
        b"Zzzzzzzzzzzzzzzz",
        b"ffffffffffffffg0",
    ] {
        let want = listed
            .iter()
            .filter(|n| (n.len(), n.as_slice()) > (probe.len(), probe))
            .min_by(|a, b| (a.len(), a.as_slice()).cmp(&(b.len(), b.as_slice())))
            .cloned();
        assert_eq!(names.next_name(&s, probe), want, "after {probe:?}");
    }
    for (i, n) in s.nodes.iter().enumerate() {
        let g = guid_name(n.info.node_guid);
        assert_eq!(
            names.resolve(&s, g.as_bytes()),
            Some(Target::Node(i as u32))
        );
        assert!(listed.contains(&g.into_bytes()));
        let word = n.description.split_whitespace().next().unwrap();
        let same = s
            .nodes
            .iter()
            .filter(|m| m.description.split_whitespace().next() == Some(word))
            .count();
        let by_name = names.resolve(&s, word.as_bytes());
        match by_name {
            Some(Target::Node(n)) => {
                assert_eq!((same, n), (1, i as u32), "{word}");
                assert_eq!(names.name_of(&s, i as u32), Some(word));
            }
            // The adapters of one host: one context holding them all.
            Some(Target::Host { members, .. }) => {
                assert_eq!(members.len(), same, "{word}");
                assert!(members.contains(&(i as u32)), "{word}");
            }
            None => assert!(same > 1, "{word} is unique"),
        }
    }
    assert_eq!(names.resolve(&s, b"no-such-node"), None);
    assert_eq!(names.resolve(&s, b"ffffffffffffffff"), None);
}

#[test]
fn a_switch_context_serves_every_port_with_the_dumped_totals() {
    let s = sim();
    let b = base(&s, system());
    let sw = a_switch(&s);
    let node = &s.nodes[sw];
    let name = guid_name(node.info.node_guid);
    let v = super::view(&b, name.as_bytes()).unwrap();
    let ports = node.info.num_ports as usize;
    // Base switch port 0 is no interface (IbPort convention).
    let enhanced = node.switch.as_ref().unwrap().info.enhanced_port0;
    let rows = ports + usize::from(enhanced);
    assert_eq!(get(&v, o::IF_NUMBER, &[0]), Value::Integer(rows as i32));
    assert_eq!(get(&b, o::IF_NUMBER, &[0]), {
        let l = s.local_node().unwrap();
        Value::Integer(l.info.num_ports as i32)
    });
    let dump = ib::model::dump_json(&s);
    let dn = dump["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["guid"].as_str() == Some(node.info.node_guid.to_string().as_str()))
        .unwrap();
    let mut checked = 0;
    for p in dn["ports"].as_array().unwrap() {
        let num = p["num"].as_u64().unwrap() as u32;
        if num == 0 && !enhanced {
            continue;
        }
        let i = num + u32::from(enhanced);
        assert_eq!(get(&v, o::IF_TYPE, &[i]), Value::Integer(199));
        match p["counters"]["totals"].as_object() {
            Some(t) => {
                let t = |k: &str| t[k].as_u64().unwrap();
                let in_octets =
                    t("port_rcv_data") * 4 + t("port_rcv_pkts") * 4 + t("port_rcv_flow_pkts") * 8;
                assert_eq!(
                    get(&v, o::IF_HC_IN_OCTETS, &[i]),
                    Value::Counter64(in_octets)
                );
                assert_eq!(
                    get(&v, o::IF_IN_ERRORS, &[i]),
                    Value::Counter32(
                        (t("port_rcv_remote_physical_errors") + t("port_rcv_errors")) as u32
                    )
                );
                checked += 1;
            }
            // Never read: no counter instances, not 0.
            None => {
                assert!(get(&v, o::IF_HC_IN_OCTETS, &[i]).is_exception());
                assert!(get(&v, o::IF_COUNTER_DISCONTINUITY_TIME, &[i]).is_exception());
            }
        }
    }
    assert!(checked > 0);
    // No history in a node's context: no ifLastChange, ifTableLastChange.
    assert!(get(&v, o::IF_LAST_CHANGE, &[1 + u32::from(enhanced)]).is_exception());
    assert!(get(&v, o::IF_TABLE_LAST_CHANGE, &[0]).is_exception());
    // The system group is the node's.
    let descr = match get(&v, so::SYS_DESCR, &[0]) {
        Value::OctetString(d) => String::from_utf8(d).unwrap(),
        other => panic!("{other:?}"),
    };
    assert!(descr.starts_with(&node.description), "{descr}");
    assert!(descr.contains("switch"), "{descr}");
    let expected_name = v
        .derived
        .context_names
        .name_of(&s, sw as u32)
        .map_or(name.clone(), str::to_string);
    assert_eq!(
        get(&v, so::SYS_NAME, &[0]),
        Value::OctetString(expected_name.into_bytes())
    );
    assert_eq!(get(&v, so::SYS_SERVICES, &[0]), Value::Integer(2));
}

#[test]
fn if_alias_is_set_per_node_and_persisted_by_guid() {
    let s = sim();
    let sw = a_switch(&s);
    let guid = s.nodes[sw].info.node_guid;
    let b = base(&s, system());
    let v = super::view(&b, guid_name(guid).as_bytes()).unwrap();
    let (alias_oid, obj) = if_alias_3();
    let change = obj
        .check_set(&v, &alias_oid, &Value::OctetString(b"uplink".to_vec()))
        .unwrap();
    assert_eq!(
        change,
        Change::If(IfSet::Alias {
            node: Some(guid),
            if_index: 3,
            alias: "uplink".into()
        })
    );
    let mut sys = system();
    change.apply(&mut sys);
    let m = sys.modules.get::<IfMibState>();
    assert!(m.if_alias.is_empty(), "the default context is untouched");
    assert_eq!(m.nodes[&guid_name(guid)].if_alias[&3], "uplink");
    // Kept apart from the module's part of the state file (the daemon
    // writes each node's values alone).
    assert_eq!(serde_json::to_value(m).unwrap(), serde_json::json!({}));
    assert!(sys.modules.persisted().unwrap().is_empty());
    let after = base(&s, sys);
    let v = super::view(&after, guid_name(guid).as_bytes()).unwrap();
    assert_eq!(
        get(&v, o::IF_ALIAS, &[3]),
        Value::OctetString(b"uplink".to_vec())
    );
    assert_eq!(
        get(&after, o::IF_ALIAS, &[1]),
        Value::OctetString(Vec::new())
    );
    // A file written before node contexts still reads.
    let old: IfMibState =
        serde_json::from_value(serde_json::json!({"ifAlias": {"1": "a"}})).unwrap();
    assert_eq!(old.if_alias.get(&1).map(String::as_str), Some("a"));
    assert!(old.nodes.is_empty());
    // One written when they were kept there: read (the daemon moves them).
    let old: IfMibState = serde_json::from_value(
        serde_json::json!({"nodes": {guid_name(guid): {"ifAlias": {"3": "b"}}}}),
    )
    .unwrap();
    assert_eq!(old.nodes[&guid_name(guid)].if_alias[&3], "b");
}

/// At most NODES_STORED_MAX nodes hold values: one more is refused
/// (resourceUnavailable) unless it sets a default; a node set back to
/// its defaults holds nothing and frees its place.
#[test]
fn node_contexts_hold_values_of_a_bounded_number_of_nodes() {
    use crate::modules::if_mib::{node_changes, NodeIfState, NODES_STORED_MAX};
    let s = sim();
    let guid = s.nodes[a_switch(&s)].info.node_guid;
    let mut sys = system();
    sys.modules.update::<IfMibState>(|m| {
        for i in 0..NODES_STORED_MAX as u64 {
            let mut n = NodeIfState::default();
            n.if_alias.insert(1, "x".into());
            m.nodes
                .insert(guid_name(ib::types::Guid(0xffff_0000 + i)), Arc::new(n));
        }
    });
    let full = sys.modules.get::<IfMibState>().clone();
    let b = base(&s, sys.clone());
    let v = super::view(&b, guid_name(guid).as_bytes()).unwrap();
    let (alias_oid, obj) = if_alias_3();
    let set =
        |v: &View, val: &[u8]| obj.check_set(v, &alias_oid, &Value::OctetString(val.to_vec()));
    assert_eq!(
        set(&v, b"one too many"),
        Err(snmp::mib::SetError::ResourceUnavailable)
    );
    assert!(set(&v, b"").is_ok(), "a default takes no place");
    // Another node set back to its defaults frees a place.
    let other = guid_name(ib::types::Guid(0xffff_0000));
    let free = Change::If(IfSet::Alias {
        node: Some(ib::types::Guid(0xffff_0000)),
        if_index: 1,
        alias: String::new(),
    });
    free.apply(&mut sys);
    let m = sys.modules.get::<IfMibState>();
    assert!(!m.nodes.contains_key(&other));
    let changes = node_changes(&full, m);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[&other], None);
    let b = base(&s, sys.clone());
    let v = super::view(&b, guid_name(guid).as_bytes()).unwrap();
    let change = set(&v, b"now it fits").unwrap();
    let before = sys.modules.get::<IfMibState>().clone();
    change.apply(&mut sys);
    let changes = node_changes(&before, sys.modules.get::<IfMibState>());
    assert_eq!(changes.len(), 1, "only the node set");
    assert_eq!(
        changes[&guid_name(guid)].as_ref().unwrap().if_alias[&3],
        "now it fits"
    );
}

#[test]
fn a_snapshot_keeps_the_rows_of_the_last_nodes_asked_only() {
    let s = sim();
    let b = base(&s, system());
    let name = |i: usize| guid_name(s.nodes[i].info.node_guid);
    let a = super::view(&b, name(0).as_bytes()).unwrap();
    let again = super::view(&b, name(0).as_bytes()).unwrap();
    assert!(Arc::ptr_eq(&a.derived, &again.derived), "derived once");
    // A node's rows read the snapshot's one name index (sysName), not one
    // built again per node.
    assert!(Arc::ptr_eq(
        &a.derived.context_names,
        &b.derived.context_names
    ));
    for i in 1..s.nodes.len() {
        super::view(&b, name(i).as_bytes()).unwrap();
    }
    assert!(s.nodes.len() > super::RECENT);
    let later = super::view(&b, name(0).as_bytes()).unwrap();
    assert!(
        !Arc::ptr_eq(&a.derived, &later.derived),
        "node 0 was dropped"
    );
    // The node contexts' rows the default context keeps.
    let kept = || -> Vec<Arc<crate::Derived>> {
        let recent = &b.derived.fabric().unwrap().recent;
        recent.0.lock().unwrap().iter().cloned().collect()
    };
    assert_eq!(kept().len(), super::RECENT);
    // A view for one use (a monitor's sample) is derived and not kept.
    let before = kept();
    let once = super::view_once(&b, name(0).as_bytes()).unwrap();
    assert!(!Arc::ptr_eq(&once.derived, &later.derived));
    let after = kept();
    assert!(before.iter().zip(&after).all(|(x, y)| Arc::ptr_eq(x, y)));
}

/// A GetRequest that reads some ports' rows alone derives only those,
/// and answers every instance as the whole rows do; anything else (a
/// scalar of IF-MIB, ifStackTable, an incomplete instance) needs the
/// whole rows.
#[test]
fn a_get_of_some_ports_derives_those_rows_only_with_the_same_answers() {
    use crate::core::oids::ib_if_mib as ib;
    let s = sim();
    let b = base(&s, system());
    let ports_tables: [&[u32]; 5] = [
        o::IF_ENTRY,
        o::IF_X_ENTRY,
        ib::IB_IF_PORT_STAT_ENTRY,
        ib::IB_IF_VL_TRAFFIC_ENTRY,
        ib::IB_IPOIB_LINK_LAYER_ADDR_ENTRY,
    ];
    let objects = super::objects(&crate::Options::default());
    let mut compared = 0;
    for n in &s.nodes {
        let name = guid_name(n.info.node_guid);
        let full = super::view_once(&b, name.as_bytes()).unwrap();
        // Every instance of the tables of ports, walked in the whole rows.
        for obj in &objects {
            let root = obj.root().as_slice().to_vec();
            if !ports_tables.iter().any(|t| root.starts_with(t)) {
                continue;
            }
            let mut at = root.clone();
            while let Some(vb) = obj.next(&full, &at) {
                at = vb.oid.as_slice().to_vec();
                let only = super::rows_read([at.as_slice()]).expect("a port's row");
                assert_eq!(only.len(), 1);
                let one = super::view_reading(&b, name.as_bytes(), Some(&only)).unwrap();
                assert!(one.derived.if_mib.ifs.len() <= 1);
                assert_eq!(obj.get(&one, &at), vb.value, "{name} {at:?}");
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "{compared}");
    // An ifIndex the node does not have: no row, as in the whole rows.
    let name = guid_name(s.nodes[a_switch(&s)].info.node_guid);
    let none = super::view_reading(&b, name.as_bytes(), Some(&[9999])).unwrap();
    assert_eq!(none.derived.if_mib.ifs.len(), 0);
    assert_eq!(get(&none, o::IF_DESCR, &[9999]), Value::NoSuchInstance);
    // What reads more than some rows.
    let sys_name = [so::SYSTEM, &[5, 0]].concat();
    let if_descr_1 = [o::IF_DESCR, &[1]].concat();
    assert_eq!(
        super::rows_read([sys_name.as_slice(), &if_descr_1]),
        Some(vec![1])
    );
    for whole in [
        [o::IF_NUMBER, &[0]].concat(),
        [o::IF_STACK_STATUS, &[0, 1]].concat(),
        o::IF_DESCR.to_vec(),
        o::IF_X_ENTRY.to_vec(),
        vec![1, 3, 6, 1, 2, 1, 99],
    ] {
        assert_eq!(super::rows_read([whole.as_slice()]), None, "{whole:?}");
    }
}
