//! The port-counter-like table the bulkload example serves and the walker
//! benchmark walks (benches/codec.rs includes this file): GUID + port
//! indexes, four read-only columns.

use std::sync::Arc;

use snmp::dispatch::Dispatcher;
use snmp::index::{FixedOctets, IndexCodec, Unsigned32};
use snmp::oid::Oid;
use snmp::table::{RowSet, Table};
use snmp::value::Value;

pub struct Row {
    guid: [u8; 8],
    port: u32,
    rcv: u64,
}

/// What the table answers from.
pub type View = Arc<RowSet<Row>>;

/// The table's entry OID (an experimental arc).
pub const ENTRY: [u32; 11] = [1, 3, 6, 1, 3, 117, 4, 1, 1, 4, 1];

/// `n` rows: 36 ports a node.
pub fn view(n: u32) -> View {
    Arc::new(RowSet::from_rows(
        (0..n).map(|i| Row {
            guid: (0x0002_c903_0000_0000u64 + u64::from(i / 36)).to_be_bytes(),
            port: i % 36 + 1,
            rcv: u64::from(i) * 1_000_003,
        }),
        |r, out| <(FixedOctets<8>, Unsigned32)>::encode(&(r.guid, r.port), out),
    ))
}

/// A dispatcher serving the table.
pub fn dispatcher() -> Dispatcher<View, ()> {
    let t = Table::<View, (), Row>::new(
        Oid::from_slice(&ENTRY),
        |v: &View| v,
        |_, r, c| match c {
            2 => Some(Value::Gauge32(r.port)),
            3 => Some(Value::Counter64(r.rcv)),
            4 => Some(Value::Counter32(r.rcv as u32)),
            5 => Some(Value::Integer(1)),
            _ => None,
        },
    )
    .read_only(&[2, 3, 4, 5]);
    let mut d = Dispatcher::new();
    d.register(Arc::new(t)).expect("register");
    d
}
