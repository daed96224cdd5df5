//! PathRecords computed from sim snapshots (`ib::model::paths`).

use ib::mad::sa::{comp::path_record as pr, PathRecord};
use ib::model::paths::*;
use ib::source::sim::{SimConfig, SimSource};
use ib::source::Source;
use ib::types::PKey;

#[test]
fn a_path_between_two_hosts_follows_the_route() {
    let mut sim = SimSource::default_fabric(SimConfig::default()).unwrap();
    let s = sim.sweep().unwrap();
    let ends: Vec<&ib::model::Port> = s
        .ports
        .iter()
        .filter(|p| s.is_end_port(p) && p.info.lid.0 != 0)
        .collect();
    let (a, b) = (ends[0], ends[ends.len() - 1]);
    let t = PathRecord {
        slid: a.info.lid,
        dlid: b.info.lid,
        ..PathRecord::default()
    };
    let r = path_records(&s, &t, pr::SLID | pr::DLID).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].slid, r[0].dlid), (a.info.lid, b.info.lid));
    assert_eq!(r[0].p_key, PKey::DEFAULT);
    assert!(r[0].mtu >= 1 && r[0].rate >= 2, "{:?}", r[0]);
    // The SL asked for is the path's (OpenSM without QoS); a P_Key
    // neither end holds gives none; NumbPath 0 bounds to nothing.
    let sl1 = PathRecord { sl: 1, ..t.clone() };
    let r1 = path_records(&s, &sl1, pr::SLID | pr::DLID | pr::SL).unwrap();
    assert_eq!(r1[0].sl, 1);
    let pk = PathRecord {
        p_key: PKey(0x8001),
        ..t.clone()
    };
    assert!(path_records(&s, &pk, pr::SLID | pr::DLID | pr::P_KEY)
        .unwrap()
        .is_empty());
    let none = PathRecord { numb_path: 0, ..t };
    assert!(path_records(&s, &none, pr::SLID | pr::DLID | pr::NUMB_PATH)
        .unwrap()
        .is_empty());
}

#[test]
fn rate_codes() {
    assert_eq!(rate_code(100), 3);
    assert_eq!(rate_code(400), 7);
    assert_eq!(rate_code(25), 2);
    assert_eq!(rate_code(1000), 16);
    assert_eq!(rate_gbps_tenths(7), Some(400));
}
