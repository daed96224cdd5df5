//! The AgentX PDU decoder must never panic, and whatever it accepts must
//! re-encode (network byte order) to bytes that decode to the same PDU.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snmp::agentx::pdu::{flags, Pdu};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Pdu::decode(data) {
        let again = Pdu::decode(&p.encode()).expect("re-encoded PDU decodes");
        let norm = |mut x: Pdu| {
            x.header.flags &= !(flags::NETWORK_BYTE_ORDER | flags::NON_DEFAULT_CONTEXT);
            x
        };
        assert_eq!(norm(again), norm(p));
    }
});
