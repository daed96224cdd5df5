//! Any decodable request, processed against a small MIB, never panics and
//! never produces a response larger than the size limit.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use snmp::dispatch::{Dispatcher, Outcome};
use snmp::index::{IndexCodec, VarOctets};
use snmp::message::{response_overhead, Message};
use snmp::oid::Oid;
use snmp::table::{check, RowSet, Scalars, Table};
use snmp::value::Value;

struct View {
    rows: RowSet<(Vec<u8>, u32)>,
}

fn setup() -> &'static (Dispatcher<View, u32>, View) {
    static S: OnceLock<(Dispatcher<View, u32>, View)> = OnceLock::new();
    S.get_or_init(|| {
        let mut d = Dispatcher::new();
        let s = Scalars::<View, u32>::new(Oid::new(vec![1, 3, 6, 1, 2, 1, 1]))
            .read_only(1, |_| Value::OctetString(b"fuzz".to_vec()))
            .read_write(
                4,
                |_| Value::OctetString(vec![]),
                |_, v| check::octets(v, 0..=255).map(|b| b.len() as u32),
            );
        d.register_all(s.into_objects()).unwrap();
        let t = Table::<View, u32, (Vec<u8>, u32)>::new(
            Oid::new(vec![1, 3, 6, 1, 2, 1, 2, 2, 1]),
            |v: &View| &v.rows,
            |_, r, c| match c {
                1 => Some(Value::Gauge32(r.1)),
                2 => Some(Value::Counter64(u64::from(r.1) << 33)),
                3 => (r.1 % 3 != 0).then_some(Value::OctetString(r.0.clone())),
                _ => None,
            },
        )
        .read_only(&[1, 2])
        .read_write(3, |_, r, _, v| check::integer(v).map(|i| i as u32 ^ r.1));
        d.register(Arc::new(t)).unwrap();
        d.set_max_repetitions(500);
        let rows = RowSet::from_rows(
            (0..100u32).map(|i| (format!("r{}", i % 37).into_bytes(), i)),
            |r, o| VarOctets::encode(&r.0, o),
        );
        (d, View { rows })
    })
}

fuzz_target!(|data: &[u8]| {
    let (d, view) = setup();
    let Some((&sz, msg)) = data.split_first() else {
        return;
    };
    let Ok(m) = Message::decode(msg) else { return };
    let max = 484 + usize::from(sz) * 40;
    let rid = m.pdu.request_id().unwrap_or(0);
    let budget = max.saturating_sub(response_overhead(m.community.len(), rid));
    let pdu = match d.process(view, m.version, &m.pdu, budget) {
        Outcome::Response(p) => p,
        Outcome::Set { response, .. } => snmp::pdu::Pdu::Response(response),
        _ => return,
    };
    let out = Message {
        version: m.version,
        community: m.community,
        pdu,
    }
    .to_bytes();
    assert!(out.len() <= max, "{} > {}", out.len(), max);
});
