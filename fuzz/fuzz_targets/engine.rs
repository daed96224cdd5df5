//! The whole agent path for any datagram: message processing (v1, v2c,
//! v3), security (communities, USM), access control (VACM with the
//! shorthands) and dispatch must never panic, and whatever the engine
//! answers must decode again.
#![no_main]

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use snmp::agent::{
    Action, ApplyError, Community, CommunityAccess, Engine, EngineConfig, SetController,
    SnmpStats,
};
use snmp::dispatch::Dispatcher;
use snmp::oid::Oid;
use snmp::table::Scalars;
use snmp::usm::{AuthProtocol, Engine as UsmEngine, SecurityLevel, UserAccess, UserConfig, Usm};
use snmp::value::Value;
use snmp::vacm::{AccessEntry, MibView, SecurityModel, Vacm, ViewFamily};

fn engine() -> &'static Engine<(), ()> {
    static E: OnceLock<Engine<(), ()>> = OnceLock::new();
    E.get_or_init(|| {
        let mut d: Dispatcher<(), ()> = Dispatcher::new();
        for root in [[1u32, 3, 6, 1, 2, 1, 1], [1, 3, 6, 1, 2, 1, 2]] {
            let mut sc = Scalars::new(Oid::from_slice(&root));
            for sub in 1..=4u32 {
                sc = sc.read_write(sub, move |_: &()| Value::Integer(sub as i32), |_, _| Ok(()));
            }
            d.register_all(sc.into_objects()).expect("register");
        }
        let users = vec![
            UserConfig {
                name: "n".into(),
                auth: None,
                privacy: None,
                access: Some(UserAccess {
                    write: true,
                    min_level: SecurityLevel::NoAuthNoPriv,
                    subtree: Some(Oid::new(vec![1, 3, 6, 1, 2, 1, 2])),
                }),
            },
            UserConfig {
                name: "a".into(),
                auth: Some((AuthProtocol::Sha1, "authpass1".into())),
                privacy: None,
                access: None,
            },
        ];
        let usm = Usm::new(UsmEngine::new(vec![0x80, 0, 0, 0, 1], 1), &users).expect("users");
        let mut vacm = Vacm::default();
        vacm.views.insert(
            "v".into(),
            MibView {
                families: vec![ViewFamily {
                    subtree: Oid::new(vec![1, 3, 6, 1, 2, 1, 1]),
                    mask: vec![],
                    included: true,
                }],
            },
        );
        vacm.groups.insert((SecurityModel::Usm, b"a".to_vec()), "g".into());
        vacm.access.push(AccessEntry {
            group: "g".into(),
            context: Default::default(),
            model: None,
            level: SecurityLevel::NoAuthNoPriv,
            read: Some("v".into()),
            write: None,
        });
        let controller: Arc<dyn SetController<()>> =
            Arc::new(|_: Vec<()>| async { Ok::<(), ApplyError>(()) });
        // sysUpTime stands for a secret column: only authPriv reads it.
        d.set_secret_subtrees(vec![Oid::new(vec![1, 3, 6, 1, 2, 1, 1, 3])]);
        Engine::new(EngineConfig {
            communities: vec![
                Community::new("p", CommunityAccess::ReadOnly),
                Community::new("w", CommunityAccess::ReadWrite),
            ],
            usm: Some(Arc::new(usm)),
            vacm: Some(Arc::new(vacm)),
            ..EngineConfig::new(Arc::new(d), Box::new(|| ()), controller, SnmpStats::new())
        })
    })
}

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    let src = SocketAddr::from(([127, 0, 0, 1], 9));
    if let Action::Send = engine().process(src, data, &mut out) {
        let ok = snmp::message::Message::decode(&out).is_ok()
            || snmp::message_v3::V3Message::decode(&out).is_ok();
        assert!(ok, "the engine answered something that does not decode");
    }
});
