//! Codec and walker benchmarks.
//!
//! - encode/decode of a 50-varbind v2c Response (IF-MIB / IB-PM-MIB shaped),
//!   with our codec and with `rasn-snmp` for comparison;
//! - GetNext and GetBulk through the Dispatcher over a 10,000-row table,
//!   including the full request path (decode request, process, encode).
//!
//! `cargo bench -p snmp --bench codec`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use snmp::dispatch::Outcome;
use snmp::message::{response_overhead, Message, Version};
use snmp::oid::Oid;
use snmp::pdu::{BulkBody, ErrorStatus, Pdu, PduBody};
use snmp::value::{Value, VarBind};

fn oid(s: &str) -> Oid {
    s.parse().unwrap()
}

/// 50 varbinds as a poller sees them: ifXTable counters, ifTable strings and
/// states, IB-PM-MIB counters indexed by an 8-octet GUID.
fn response_50() -> Message {
    let guid = [0x00u32, 0x02, 0xc9, 0x03, 0x00, 0x41, 0x7a, 0x10];
    let mut vbs = Vec::new();
    for port in 1..=10u32 {
        vbs.push(VarBind::new(
            oid(&format!("1.3.6.1.2.1.31.1.1.1.6.{port}")),
            Value::Counter64(0x0000_1234_5678_9abc + u64::from(port)),
        ));
        vbs.push(VarBind::new(
            oid(&format!("1.3.6.1.2.1.2.2.1.2.{port}")),
            Value::OctetString(format!("mlx5_0 port {port} 4x HDR").into_bytes()),
        ));
        vbs.push(VarBind::new(
            oid(&format!("1.3.6.1.2.1.2.2.1.8.{port}")),
            Value::Integer(1),
        ));
        vbs.push(VarBind::new(
            oid(&format!("1.3.6.1.2.1.31.1.1.1.15.{port}")),
            Value::Gauge32(200_000),
        ));
        let mut pm = oid("1.3.6.1.3.117.4.1.1.4.1.5").into_vec();
        pm.extend_from_slice(&guid);
        pm.push(port);
        vbs.push(VarBind::new(
            Oid::new(pm),
            Value::Counter32(3_000_000_000 + port),
        ));
    }
    Message {
        version: Version::V2c,
        community: b"public".to_vec(),
        pdu: Pdu::Response(PduBody {
            request_id: 0x1234_5678,
            error_status: ErrorStatus::NoError,
            error_index: 0,
            varbinds: vbs,
        }),
    }
}

mod rasn_side {
    use rasn::types::{Integer, ObjectIdentifier, OctetString};
    use rasn_smi::v2::{ApplicationSyntax, Counter64, ObjectSyntax, SimpleSyntax};
    use rasn_snmp::{v2, v2c};
    use snmp::message::Message;
    use snmp::pdu::Pdu;
    use snmp::value::Value;

    pub type RMessage = v2c::Message<v2::Pdus>;

    pub fn convert(m: &Message) -> RMessage {
        let Pdu::Response(b) = &m.pdu else {
            unreachable!()
        };
        let vbs = b
            .varbinds
            .iter()
            .map(|vb| v2::VarBind {
                name: ObjectIdentifier::new_unchecked(vb.oid.as_slice().to_vec().into()),
                value: v2::VarBindValue::Value(match &vb.value {
                    Value::Integer(i) => {
                        ObjectSyntax::Simple(SimpleSyntax::Integer(Integer::from(i64::from(*i))))
                    }
                    Value::OctetString(s) => {
                        ObjectSyntax::Simple(SimpleSyntax::String(OctetString::from(s.clone())))
                    }
                    Value::Counter32(c) => ObjectSyntax::ApplicationWide(
                        ApplicationSyntax::Counter(rasn_smi::v1::Counter(*c)),
                    ),
                    Value::Gauge32(g) => ObjectSyntax::ApplicationWide(
                        ApplicationSyntax::Unsigned(rasn_smi::v1::Gauge(*g)),
                    ),
                    Value::Counter64(c) => {
                        ObjectSyntax::ApplicationWide(ApplicationSyntax::BigCounter(Counter64(*c)))
                    }
                    other => unimplemented!("{other:?}"),
                }),
            })
            .collect();
        v2c::Message {
            version: 1.into(),
            community: OctetString::from(m.community.clone()),
            data: v2::Pdus::Response(v2::Response(v2::Pdu {
                request_id: b.request_id,
                error_status: 0,
                error_index: 0,
                variable_bindings: vbs,
            })),
        }
    }
}

fn codec(c: &mut Criterion) {
    let m = response_50();
    let bytes = m.to_bytes();
    let rm = rasn_side::convert(&m);
    let rbytes = rasn::ber::encode(&rm).unwrap();
    // Both codecs read each other's output.
    assert_eq!(Message::decode(&rbytes).unwrap(), m);
    let back: rasn_side::RMessage = rasn::ber::decode(&bytes).unwrap();
    assert_eq!(back, rm);

    let mut g = c.benchmark_group("response_50vb");
    g.throughput(Throughput::Elements(50));
    let mut out = Vec::with_capacity(4096);
    g.bench_function("ours/encode", |b| {
        b.iter(|| {
            out.clear();
            black_box(&m).encode(&mut out);
            black_box(out.len())
        })
    });
    g.bench_function("ours/decode", |b| {
        b.iter(|| Message::decode(black_box(&bytes)).unwrap())
    });
    g.bench_function("rasn/encode", |b| {
        b.iter(|| rasn::ber::encode(black_box(&rm)).unwrap())
    });
    g.bench_function("rasn/decode", |b| {
        b.iter(|| rasn::ber::decode::<rasn_side::RMessage>(black_box(&bytes)).unwrap())
    });
    g.finish();
}

// ------------------------------------------------------------------ walker

#[path = "../examples/port_table/mod.rs"]
mod port_table;

use port_table::{dispatcher as table_dispatcher, view as table_view, ENTRY};

fn walker(c: &mut Criterion) {
    let view = table_view(10_000);
    let d = table_dispatcher();
    let mut g = c.benchmark_group("walk_10k_rows");

    // One GetNext from a random-ish point in the middle of the table.
    let mid = {
        let mut o = ENTRY.to_vec();
        o.push(3);
        o.extend_from_slice(view.key(5_000));
        o
    };
    g.throughput(Throughput::Elements(1));
    g.bench_function("dispatcher_next", |b| {
        b.iter(|| d.next(black_box(&view), black_box(&mid)).unwrap())
    });

    // Full request path for GetBulk max-repetitions 50 (what snmpbulkwalk
    // sends by default is 10; we bench 50 as pollers do): decode the
    // request, answer it, encode the response.
    let req = Message {
        version: Version::V2c,
        community: b"public".to_vec(),
        pdu: Pdu::GetBulkRequest(BulkBody {
            request_id: 77,
            non_repeaters: 0,
            max_repetitions: 50,
            varbinds: vec![VarBind::new(Oid::new(mid.clone()), Value::Null)],
        }),
    }
    .to_bytes();
    let mut out = Vec::with_capacity(65536);
    g.throughput(Throughput::Elements(50));
    g.bench_function("getbulk50_full_path", |b| {
        b.iter(|| {
            let m = Message::decode(black_box(&req)).unwrap();
            let budget = 65507 - response_overhead(m.community.len(), 77);
            let Outcome::Response(p) = d.process(&view, m.version, &m.pdu, budget) else {
                unreachable!()
            };
            out.clear();
            Message {
                version: m.version,
                community: m.community,
                pdu: p,
            }
            .encode(&mut out);
            black_box(out.len())
        })
    });

    // A whole-table walk with GetNext, one varbind per call (40,000 cells).
    g.throughput(Throughput::Elements(40_000));
    g.sample_size(10);
    g.bench_function("full_walk_getnext", |b| {
        b.iter_batched(
            || ENTRY.to_vec(),
            |start| {
                let mut cur = Oid::new(start);
                let mut n = 0u32;
                while let Some(vb) = d.next(&view, cur.as_slice()) {
                    cur = vb.oid;
                    n += 1;
                }
                assert_eq!(n, 40_000);
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, codec, walker);
criterion_main!(benches);
