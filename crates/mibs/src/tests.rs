//! The crate root's types: the agent's state as the state file holds it.

use std::collections::BTreeMap;

use snmp::oid::Oid;

use crate::core::state::Persisted;
use crate::modules::if_mib::{IfMibState, IfSet};
use crate::modules::snmpv2::{self, SystemGroup, SystemSet};
use crate::Change;
use crate::{ModuleStates, SystemState};

#[test]
fn round_trip_through_json() {
    let mut s = ModuleStates::default();
    assert_eq!(s.persisted().unwrap(), Persisted::new());
    s.update::<SystemGroup>(|g| g.sys_contact = Some("ops".into()));
    s.update::<IfMibState>(|m| {
        m.if_alias.insert(3, "uplink".into());
    });
    let p = s.persisted().unwrap();
    assert_eq!(p.len(), 2);
    let (back, problems) = ModuleStates::restore(&p);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(back, s);
    assert_eq!(
        back.get::<SystemGroup>().sys_contact.as_deref(),
        Some("ops")
    );
}

#[test]
fn bad_values_are_named_and_skipped() {
    let mut p = Persisted::new();
    p.insert("SNMPv2-MIB".into(), serde_json::json!({"sysContact": 5}));
    p.insert("NO-SUCH-MIB".into(), serde_json::json!({}));
    let (s, problems) = ModuleStates::restore(&p);
    assert_eq!(problems.len(), 2);
    assert_eq!(*s.system, SystemGroup::default());
}

/// An unreadable part is kept as the file had it, whatever happens to
/// the module in memory; a change to it is reported.
#[test]
fn unreadable_parts_are_kept_and_changes_to_them_reported() {
    let mut p = Persisted::new();
    let bad = serde_json::json!({"sysContact": 5});
    p.insert("SNMPv2-MIB".into(), bad.clone());
    p.insert("IF-MIB".into(), serde_json::json!({"ifAlias": {"3": "a"}}));
    let (before, problems) = ModuleStates::restore(&p);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].module, "SNMPv2-MIB");
    let mut after = before.clone();
    after.update::<IfMibState>(|m| {
        m.if_alias.insert(4, "b".into());
    });
    assert_eq!(after.changed_unreadable(&before), None);
    after.update::<SystemGroup>(|g| g.sys_contact = Some("ops".into()));
    assert_eq!(after.changed_unreadable(&before), Some("SNMPv2-MIB"));
    let mut kv = p.clone();
    after.persist_into(&mut kv).unwrap();
    assert_eq!(kv["SNMPv2-MIB"], bad, "the unreadable part is kept");
    assert_eq!(kv["IF-MIB"]["ifAlias"]["4"], "b");
    // Set back to its default: still kept.
    let mut kv = p.clone();
    before.persist_into(&mut kv).unwrap();
    assert_eq!(kv, p);
}

#[test]
fn version_1_keys_migrate() {
    let kv: BTreeMap<String, String> = [
        ("sysName", "n"),
        ("snmpEnableAuthenTraps", "1"),
        ("ifAlias.7", "x"),
        ("ifLinkUpDownTrapEnable.7", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let s = ModuleStates::from_v1(&kv);
    let g = s.get::<SystemGroup>();
    assert_eq!(g.sys_name.as_deref(), Some("n"));
    assert_eq!(g.snmp_enable_authen_traps, Some(true));
    let m = s.get::<IfMibState>();
    assert_eq!(m.if_alias.get(&7).map(String::as_str), Some("x"));
    assert_eq!(m.if_link_up_down_trap_enable.get(&7), Some(&2));
}

#[test]
fn persisted_round_trip() {
    let changes = [
        Change::System(SystemSet::SysContact("c".into())),
        Change::System(SystemSet::SnmpEnableAuthenTraps(true)),
        Change::If(IfSet::Alias {
            node: None,
            if_index: 1,
            alias: "up".into(),
        }),
    ];
    let mut s = SystemState::new("d".into(), Oid::new(vec![1, 3]));
    for c in &changes {
        c.apply(&mut s);
    }
    let p = s.modules.persisted().unwrap();
    let mut t = SystemState::new("d".into(), Oid::new(vec![1, 3]));
    t.name = "default".into();
    assert!(t.restore(&p).is_empty());
    assert_eq!(snmpv2::sys_contact(&t), "c");
    assert_eq!(snmpv2::sys_name(&t), "default");
    assert!(snmpv2::authen_traps_enabled(&t));
    assert_eq!(
        t.modules
            .get::<crate::modules::if_mib::IfMibState>()
            .if_alias[&1],
        "up"
    );
}

/// AgentX's UndoSet takes back exactly its own commit (issue 54): a Set
/// from another manager between the commit and the undo stays; one that
/// changed the same module makes the undo fail rather than take it too.
#[test]
fn an_undo_takes_back_its_own_set_only() {
    let alias = |i: u32, a: &str| {
        Change::If(IfSet::Alias {
            node: None,
            if_index: i,
            alias: a.into(),
        })
    };
    let s0 = SystemState::new("t".into(), Oid::new(vec![1, 3]));
    // The AgentX manager's commit.
    let mut s1 = s0.clone();
    alias(1, "agentx").apply(&mut s1);
    // A UDP manager's Set of another module, before the undo.
    let mut s2 = s1.clone();
    Change::System(SystemSet::SysContact("udp".into())).apply(&mut s2);
    let undone = s2.undo(&s0, &s1).unwrap();
    let aliases = &undone.modules.get::<IfMibState>().if_alias;
    assert!(aliases.is_empty(), "the commit is taken back: {aliases:?}");
    assert_eq!(snmpv2::sys_contact(&undone), "udp", "the other Set stays");

    // Another manager changed the same module since: nothing is undone.
    let mut s3 = s1.clone();
    alias(2, "udp").apply(&mut s3);
    let e = s3.undo(&s0, &s1).unwrap_err();
    assert!(e.contains("IF-MIB"), "{e}");
}
