//! The message decoder must never panic, and whatever it accepts must
//! re-encode to bytes that decode to the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snmp::message::Message;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Message::decode(data) {
        let again = Message::decode(&m.to_bytes());
        assert_eq!(again.as_ref(), Ok(&m));
    }
});
