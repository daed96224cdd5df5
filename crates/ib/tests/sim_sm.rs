//! The simulator's Subnet Manager view: a master and a standby SM, and
//! partitions from an OpenSM partitions.conf-style text (full and limited
//! members, P_Key tables, one IPoIB group per `ipoib` partition).

use ib::source::sim::{SimConfig, SimSource};
use ib::source::Source;
use ib::types::{NodeType, SmState};

const PARTS: &str = "\
# two partitions
Default=0x7fff, ipoib : ALL=full;
Storage=0x8002, ipoib : SELF=full, ALL_CAS=limited;
Mgmt=0x3 : ALL_SWITCHES=full;
";

#[test]
fn master_standby_and_partitions_file() {
    let mut sim = SimSource::default_fabric(SimConfig {
        partitions: Some(PARTS.to_string()),
        ..SimConfig::default()
    })
    .expect("sim");
    let s = sim.sweep().expect("sweep");

    let master = s.master_sm().expect("master");
    let standby: Vec<_> = s
        .sms
        .iter()
        .filter(|r| r.info.sm_state() == Some(SmState::Standby))
        .collect();
    assert_eq!(standby.len(), 1);
    assert!(standby[0].info.priority < master.info.priority);
    assert_ne!(standby[0].port, master.port);

    let keys: Vec<u16> = s.partitions.iter().map(|p| p.pkey.0 & 0x7fff).collect();
    assert_eq!(keys, vec![0x7fff, 0x0002, 0x0003]);
    let is_switch = |g| {
        s.port_by_guid(g)
            .and_then(|p| s.port(p))
            .and_then(|p| s.node(p.node))
            .is_some_and(|n| n.info.node_type == NodeType::Switch as u8)
    };
    let storage = &s.partitions[1];
    let master_guid = master.port.and_then(|p| s.port(p)).map(|p| p.guid).unwrap();
    for m in &storage.members {
        assert!(!is_switch(m.port_guid));
        assert_eq!(m.full, m.port_guid == master_guid, "{m:?}");
    }
    assert!(s.partitions[2]
        .members
        .iter()
        .all(|m| is_switch(m.port_guid) && m.full));

    // P_Key tables: a limited member holds 0x0002, the SM's port 0x8002.
    let limited = storage.members.iter().find(|m| !m.full).unwrap();
    let lp = s.port(s.port_by_guid(limited.port_guid).unwrap()).unwrap();
    assert!(lp.pkeys.iter().any(|k| k.0 == 0x0002));
    let mp = s.port(master.port.unwrap()).unwrap();
    assert!(mp.pkeys.iter().any(|k| k.0 == 0x8002));

    // IPoIB groups for the two ipoib partitions, CA members only.
    assert_eq!(s.mcast_groups.len(), 2);
    let g = &s.mcast_groups[1];
    assert_eq!(g.group.p_key.0, 0x8002);
    assert_eq!(g.group.mgid.to_string(), "ff12:401b:8002::ffff:ffff");
    assert_eq!(g.members.len(), storage.members.len());
}

#[test]
fn bad_partitions_text_is_a_clear_error() {
    let e = SimSource::default_fabric(SimConfig {
        partitions: Some("Default=0x7fff : ALL=full;\nBad : ALL;\n".into()),
        ..SimConfig::default()
    })
    .err()
    .expect("error");
    assert!(e.to_string().contains("line 2"), "{e}");
}
