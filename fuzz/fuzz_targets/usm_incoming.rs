//! SNMPv3 decoding and the whole USM path (engine ID, user, digest, time
//! window, decryption) must never panic on any datagram.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use snmp::message_v3::V3Message;
use snmp::usm::{AuthProtocol, Engine, PrivProtocol, UserConfig, Usm};

fn usm() -> &'static Usm {
    static U: OnceLock<Usm> = OnceLock::new();
    U.get_or_init(|| {
        let users = vec![
            UserConfig {
                name: "a".into(),
                auth: Some((AuthProtocol::Sha1, "authpass1".into())),
                privacy: Some((PrivProtocol::Aes128, "privpass1".into())),
                access: None,
            },
            UserConfig {
                name: "d".into(),
                auth: Some((AuthProtocol::Md5, "authpass1".into())),
                privacy: Some((PrivProtocol::Des, "privpass1".into())),
                access: None,
            },
            UserConfig {
                name: "n".into(),
                auth: None,
                privacy: None,
                access: None,
            },
        ];
        // A short engine ID the fuzzer can find.
        Usm::new(Engine::new(vec![0x80, 0, 0, 0, 1], 1), &users).expect("users")
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok((m, _)) = V3Message::decode(data) {
        let mut out = Vec::new();
        m.encode(&mut out);
        assert_eq!(V3Message::decode(&out).map(|x| x.0).as_ref(), Ok(&m));
    }
    let _ = usm().incoming(data);
});
