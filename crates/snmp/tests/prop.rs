//! Property tests: the decoder never panics, encode/decode round trips, index
//! codecs round trip, and the walker agrees with a naive reference.
//!
//! `PROPTEST_CASES=1000000 cargo test --release -p snmp --test prop` for a
//! long run.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use snmp::dispatch::{AccessCheck, Dispatcher};
use snmp::index::{
    FixedOctets, ImpliedOctets, IndexCodec, Integer, IpAddress, ObjectIdentifier, Unsigned32,
    VarOctets,
};
use snmp::message::{Message, Version};
use snmp::oid::Oid;
use snmp::pdu::{BulkBody, ErrorStatus, Pdu, PduBody, TrapV1};
use snmp::table::{Column, RowSet, Scalars, Table};
use snmp::value::{Value, VarBind};

fn arb_oid() -> impl Strategy<Value = Oid> {
    (
        0u32..=2,
        any::<u32>(),
        prop::collection::vec(prop_oneof![0u32..300, any::<u32>()], 0..40),
    )
        .prop_map(|(x, y, rest)| {
            let y = if x < 2 { y % 40 } else { y };
            let mut v = vec![x, y];
            v.extend(rest);
            Oid::new(v)
        })
}

fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::Integer),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Value::OctetString),
        Just(Value::Null),
        arb_oid().prop_map(Value::ObjectId),
        any::<[u8; 4]>().prop_map(Value::IpAddress),
        any::<u32>().prop_map(Value::Counter32),
        any::<u32>().prop_map(Value::Gauge32),
        any::<u32>().prop_map(Value::TimeTicks),
        prop::collection::vec(any::<u8>(), 0..10).prop_map(Value::Opaque),
        any::<u64>().prop_map(Value::Counter64),
        Just(Value::NoSuchObject),
        Just(Value::NoSuchInstance),
        Just(Value::EndOfMibView),
    ]
}

fn arb_varbinds() -> impl Strategy<Value = Vec<VarBind>> {
    prop::collection::vec(
        (arb_oid(), arb_value()).prop_map(|(o, v)| VarBind::new(o, v)),
        0..8,
    )
}

fn arb_body() -> impl Strategy<Value = PduBody> {
    (any::<i32>(), 0i32..=18, any::<i32>(), arb_varbinds()).prop_map(|(r, s, i, v)| PduBody {
        request_id: r,
        error_status: ErrorStatus::from_i32(s),
        error_index: i,
        varbinds: v,
    })
}

fn arb_message() -> impl Strategy<Value = Message> {
    let common = prop_oneof![
        arb_body().prop_map(Pdu::GetRequest),
        arb_body().prop_map(Pdu::GetNextRequest),
        arb_body().prop_map(Pdu::Response),
        arb_body().prop_map(Pdu::SetRequest),
    ];
    let v2_only = prop_oneof![
        arb_body().prop_map(Pdu::InformRequest),
        arb_body().prop_map(Pdu::SnmpV2Trap),
        arb_body().prop_map(Pdu::Report),
        (any::<i32>(), any::<i32>(), any::<i32>(), arb_varbinds()).prop_map(|(r, n, m, v)| {
            Pdu::GetBulkRequest(BulkBody {
                request_id: r,
                non_repeaters: n,
                max_repetitions: m,
                varbinds: v,
            })
        }),
    ];
    let v1_trap = (
        arb_oid(),
        any::<[u8; 4]>(),
        any::<i32>(),
        any::<i32>(),
        any::<u32>(),
        arb_varbinds(),
    )
        .prop_map(|(e, a, g, s, t, v)| {
            Pdu::TrapV1(TrapV1 {
                enterprise: e,
                agent_addr: a,
                generic_trap: g,
                specific_trap: s,
                time_stamp: t,
                varbinds: v,
            })
        });
    let community = prop::collection::vec(any::<u8>(), 0..20);
    prop_oneof![
        (community.clone(), prop_oneof![common.clone(), v1_trap]).prop_map(|(c, p)| Message {
            version: Version::V1,
            community: c,
            pdu: p,
        }),
        (community, prop_oneof![common, v2_only]).prop_map(|(c, p)| Message {
            version: Version::V2c,
            community: c,
            pdu: p,
        }),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// X.690 8.19 read one octet at a time: the reference for `decode_oid`.
fn oid_by_octets(c: &[u8]) -> Option<Oid> {
    let mut arcs: Vec<u32> = Vec::new();
    let mut acc: u64 = 0;
    let mut open = false;
    for &b in c {
        if !open && b == 0x80 {
            return None;
        }
        open = true;
        acc = (acc << 7) | u64::from(b & 0x7f);
        if acc > u64::from(u32::MAX) + 80 {
            return None;
        }
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let x = (acc / 40).min(2);
                arcs.push(x as u32);
                arcs.push(u32::try_from(acc - 40 * x).ok()?);
            } else {
                arcs.push(u32::try_from(acc).ok()?);
            }
            acc = 0;
            open = false;
        }
    }
    (!open && !arcs.is_empty() && arcs.len() <= 128).then(|| Oid::new(arcs))
}

proptest! {
    #[test]
    fn decode_arbitrary_bytes_never_panics(b in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Message::decode(&b);
    }

    /// A row search finds what a scan of the sorted indexes finds, for
    /// indexes sharing long prefixes (as GIDs do) and any probe.
    #[test]
    fn rowset_search_matches_a_scan(
        keys in prop::collection::vec(prop::collection::vec(0u32..3, 0..10), 0..60),
        probes in prop::collection::vec(prop::collection::vec(0u32..3, 0..11), 1..20),
        prefix in prop::collection::vec(any::<u32>(), 0..6),
    ) {
        let full = |k: &Vec<u32>| prefix.iter().chain(k).copied().collect::<Vec<u32>>();
        let rows = snmp::table::RowSet::from_pairs(keys.iter().map(|k| (full(k), full(k))));
        let mut sorted: Vec<Vec<u32>> = keys.iter().map(full).collect();
        sorted.sort();
        sorted.dedup();
        for p in probes.iter().map(full).chain(sorted.clone()) {
            let after = sorted.iter().position(|k| *k > p).unwrap_or(sorted.len());
            prop_assert_eq!(rows.position_after(&p), after);
            prop_assert_eq!(rows.get(&p), sorted.iter().find(|k| **k == p));
        }
    }

    /// OBJECT IDENTIFIER content of any octets decodes as the plain
    /// octet-by-octet reading of X.690 8.19 does: the same arcs, or an
    /// error where it has one (whichever buffer the arcs go to).
    #[test]
    fn decode_oid_matches_the_octet_by_octet_reading(
        b in prop::collection::vec(
            prop_oneof![any::<u8>(), 0u8..0x80, Just(0x80u8), Just(0xffu8)],
            0..200,
        )
    ) {
        prop_assert_eq!(snmp::ber::decode_oid(&b).ok(), oid_by_octets(&b));
    }

    #[test]
    fn varbind_len_is_what_the_encoder_writes(o in arb_oid(), v in arb_value()) {
        // GetBulk's size budget counts with varbind_len before encoding.
        let vb = VarBind::new(o, v);
        let mut out = Vec::new();
        snmp::ber::Encoder::new(&mut out).varbind(&vb);
        prop_assert_eq!(out.len(), snmp::ber::varbind_len(&vb));
    }

    #[test]
    fn oid_runs_encode_as_each_oid_alone(
        base in arb_oid(),
        tails in prop::collection::vec((0usize..40, prop::collection::vec(any::<u32>(), 0..6)), 1..12),
    ) {
        // A walk's OIDs share prefixes of any length with the one before:
        // each is the base cut somewhere and given a new tail.
        let mut run = snmp::ber::OidRun::default();
        let mut list = Vec::new();
        for (cut, tail) in tails {
            let mut o = base.as_slice().get(..cut.min(base.len())).unwrap_or(&[]).to_vec();
            o.extend(tail);
            let vb = VarBind::new(o.into(), Value::Null);
            let mut alone = Vec::new();
            snmp::ber::Encoder::new(&mut alone).varbind(&vb);
            prop_assert_eq!(run.varbind_len(&vb), alone.len());
            list.push(vb);
        }
        // The list encoder shares prefixes too; its varbinds are the same octets.
        let mut whole = Vec::new();
        snmp::ber::Encoder::new(&mut whole).varbind_list(&list);
        let mut each = Vec::new();
        for vb in &list {
            snmp::ber::Encoder::new(&mut each).varbind(vb);
        }
        prop_assert!(whole.ends_with(&each), "the list's content differs");
    }

    #[test]
    fn oid_runs_told_a_shared_prefix_encode_as_each_oid_alone(
        base in arb_oid(),
        tails in prop::collection::vec(
            (0usize..40, prop::collection::vec(any::<u32>(), 0..6), 0usize..=100, arb_value()),
            1..12,
        ),
    ) {
        // A table's walk tells the encoder how much of each OID is the one
        // before's (at most what truly is: `told` percent of it): the
        // octets are those of each OID alone, and through a Direct list
        // (with any value) those of each varbind alone.
        let mut run = snmp::ber::OidRun::default();
        let mut out = Vec::new();
        let mut direct = snmp::response::Direct::new(&mut out, usize::MAX);
        let mut each = Vec::new();
        let mut before: Vec<u32> = Vec::new();
        for (cut, tail, told, value) in tails {
            let mut o = base.as_slice().get(..cut.min(base.len())).unwrap_or(&[]).to_vec();
            o.extend(tail);
            let shared = before.iter().zip(&o).take_while(|(a, b)| a == b).count();
            let same = shared * told / 100;
            let mut alone = Vec::new();
            snmp::ber::Encoder::new(&mut alone).oid(&o);
            let got = run.content_after(same, &o).map(<[u8]>::to_vec);
            if let Some(c) = got {
                prop_assert!(alone.ends_with(&c), "content of {:?} told {}", o, same);
                prop_assert_eq!(alone.len(), snmp::ber::tlv_len(c.len()));
            }
            prop_assert!(snmp::mib::VarBindSink::push_after(&mut direct, same, &o, &value));
            let vb = VarBind::new(o.clone().into(), value);
            snmp::ber::Encoder::new(&mut each).varbind(&vb);
            before = o;
        }
        prop_assert_eq!(out, each);
    }

    #[test]
    fn roundtrip(m in arb_message()) {
        let b = m.to_bytes();
        prop_assert_eq!(Message::decode(&b), Ok(m));
    }

    #[test]
    fn decode_mutated_never_panics(m in arb_message(), muts in prop::collection::vec(arb_mutation(), 1..6)) {
        let mut b = m.to_bytes();
        for mu in muts {
            let n = b.len().max(1);
            match mu {
                Mutation::Flip(i, x) => { if let Some(c) = b.get_mut(i % n) { *c ^= x | 1; } }
                Mutation::Insert(i, x) => b.insert(i % (b.len() + 1), x),
                Mutation::Delete(i) => { if !b.is_empty() { b.remove(i % n); } }
                Mutation::Truncate(i) => b.truncate(i % n),
            }
        }
        if let Ok(m2) = Message::decode(&b) {
            // Whatever decodes must re-encode to something that decodes the same.
            prop_assert_eq!(Message::decode(&m2.to_bytes()), Ok(m2));
        }
    }

    #[test]
    fn index_roundtrip(
        i in 0i32..=i32::MAX, u in any::<u32>(), g in any::<[u8; 8]>(),
        s in prop::collection::vec(any::<u8>(), 0..20), o in arb_oid(),
        ip in any::<[u8; 4]>(), tail in prop::collection::vec(any::<u8>(), 0..20),
    ) {
        type T = (Integer, Unsigned32, FixedOctets<8>, VarOctets, ObjectIdentifier);
        let v = (i, u, g, s.clone(), o.clone());
        let enc = T::to_subids(&v);
        prop_assert_eq!(T::decode_all(&enc), Some(v));
        type T2 = (IpAddress, ImpliedOctets);
        let v2 = (ip, tail);
        prop_assert_eq!(T2::decode_all(&T2::to_subids(&v2)), Some(v2));
    }

    #[test]
    fn index_decode_total(s in prop::collection::vec(prop_oneof![0u32..300, any::<u32>()], 0..30)) {
        type T = (VarOctets, ObjectIdentifier, FixedOctets<8>, Integer);
        if let Some(v) = T::decode_all(&s) {
            prop_assert_eq!(T::to_subids(&v), s);
        }
    }
}

// ------------------------------------------------------ walker vs reference

#[derive(Debug, Clone)]
struct Row {
    seed: u32,
}

struct View {
    rows: RowSet<Row>,
}

fn cell(r: &Row, c: u32) -> Option<Value> {
    // Deterministically sparse; column 4 is Counter64 (v1 skips it).
    match c {
        4 => Some(Value::Counter64(u64::from(r.seed))),
        _ if matches!(r.seed.wrapping_mul(31).wrapping_add(c) % 5, 0) => None,
        _ => Some(Value::Integer((r.seed % 1000) as i32)),
    }
}

const ENTRY: [u32; 6] = [1, 3, 6, 1, 4, 1];
/// A second table over the same rows, declared with [`Column`]s: column 1
/// an OCTET STRING whose cells are written into the buffer a walk lends.
const ENTRY2: [u32; 6] = [1, 3, 6, 1, 4, 3];

/// ENTRY2's column 1: sparse, 0 to 130 octets (the long length form too).
fn octets_cell(r: &Row, out: &mut Vec<u8>) -> Option<()> {
    if r.seed % 3 == 1 {
        return None;
    }
    out.extend((0..(r.seed * 7) % 131).map(|i| i as u8));
    Some(())
}

const COLS2: &[Column<View, (), Row>] = &[
    Column::read_only_octets(&[1, 3, 6, 1, 4, 3, 1], |_, r, out| octets_cell(r, out)),
    Column::read_only(&[1, 3, 6, 1, 4, 3, 2], |_, r| {
        Some(Value::Integer(r.seed as i32))
    }),
];

fn build(indexes: &[Vec<u32>], cols: &[u32]) -> Dispatcher<View, ()> {
    let mut d = Dispatcher::new();
    let t = Table::<View, (), Row>::new(
        Oid::from_slice(&ENTRY),
        |v: &View| &v.rows,
        |_, r, c| cell(r, c),
    )
    .read_only(cols);
    d.register(Arc::new(t)).unwrap();
    let s = Scalars::<View, ()>::new(Oid::new(vec![1, 3, 6, 1, 2]))
        .read_only(1, |_| Value::Integer(1))
        .read_only(3, |_| Value::Counter64(3));
    d.register(Arc::new(s)).unwrap();
    let s = Scalars::<View, ()>::new(Oid::new(vec![1, 3, 6, 1, 4, 2]))
        .read_only(7, |_| Value::Integer(7));
    d.register(Arc::new(s)).unwrap();
    let t = Table::from_columns(Oid::from_slice(&ENTRY2), |v: &View| &v.rows, COLS2);
    d.register(Arc::new(t)).unwrap();
    let _ = indexes;
    d
}

fn reference(indexes: &[Vec<u32>], cols: &[u32]) -> BTreeMap<Oid, Value> {
    let mut m = BTreeMap::new();
    m.insert(Oid::new(vec![1, 3, 6, 1, 2, 1, 0]), Value::Integer(1));
    m.insert(Oid::new(vec![1, 3, 6, 1, 2, 3, 0]), Value::Counter64(3));
    m.insert(Oid::new(vec![1, 3, 6, 1, 4, 2, 7, 0]), Value::Integer(7));
    let mut seen = std::collections::BTreeSet::new();
    for (i, idx) in indexes.iter().enumerate() {
        if !seen.insert(idx.clone()) {
            continue; // first row with an index wins
        }
        let r = Row { seed: i as u32 };
        for &c in cols {
            if let Some(v) = cell(&r, c) {
                let mut o = ENTRY.to_vec();
                o.push(c);
                o.extend_from_slice(idx);
                m.insert(Oid::new(o), v);
            }
        }
        let mut octets = Vec::new();
        let cells2 = [
            octets_cell(&r, &mut octets).map(|()| Value::OctetString(octets)),
            Some(Value::Integer(r.seed as i32)),
        ];
        for (c, v) in (1..).zip(cells2) {
            if let Some(v) = v {
                m.insert(Oid::from_parts(&[&ENTRY2, &[c], idx]), v);
            }
        }
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn walker_matches_reference(
        indexes in prop::collection::vec(prop::collection::vec(0u32..4, 1..4), 0..40),
        cols in prop::collection::btree_set(1u32..7, 0..5),
        probes in prop::collection::vec(prop::collection::vec(0u32..8, 0..12), 0..30),
    ) {
        let cols: Vec<u32> = cols.into_iter().collect();
        let rows = RowSet::from_pairs(indexes.iter().enumerate().map(|(i, k)| (k.clone(), Row { seed: i as u32 })));
        let view = View { rows };
        let d = build(&indexes, &cols);
        let reference = reference(&indexes, &cols);
        // Full walk: strictly increasing and equal to the reference.
        let mut cur = Oid::new(vec![0, 0]);
        let mut walked = BTreeMap::new();
        while let Some(vb) = d.next(&view, cur.as_slice()) {
            prop_assert!(vb.oid > cur);
            cur = vb.oid.clone();
            walked.insert(vb.oid, vb.value);
        }
        prop_assert_eq!(&walked, &reference);
        // Random probes: next and get agree with the reference.
        for p in probes {
            let mut o = vec![1, 3, 6, 1];
            o.extend(p);
            let expect = reference.range((std::ops::Bound::Excluded(Oid::new(o.clone())), std::ops::Bound::Unbounded)).next();
            let got = d.next(&view, &o);
            prop_assert_eq!(got.map(|vb| (vb.oid, vb.value)), expect.map(|(k, v)| (k.clone(), v.clone())));
            let g = d.get(&view, &o);
            match reference.get(&Oid::new(o.clone())) {
                Some(v) => prop_assert_eq!(&g, v),
                None => prop_assert!(g.is_exception()),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    /// GetBulk responses never exceed the message size limit, and are cut
    /// only at the end (the non-repeaters always come first and complete).
    #[test]
    fn bulk_response_bounded(
        indexes in prop::collection::vec(prop::collection::vec(0u32..50, 1..3), 0..200),
        non_rep in -2i32..4, max_rep in -2i32..300, max_size in 484usize..4000,
        community in prop::collection::vec(any::<u8>(), 0..40), rid in any::<i32>(),
        starts in prop::collection::vec(prop::collection::vec(0u32..8, 0..8), 0..5),
    ) {
        use snmp::dispatch::Outcome;
        use snmp::message::response_overhead;
        let cols = [1, 2, 3, 4, 5, 6];
        let rows = RowSet::from_pairs(indexes.iter().enumerate().map(|(i, k)| (k.clone(), Row { seed: i as u32 })));
        let view = View { rows };
        let d = build(&indexes, &cols);
        let vbs: Vec<VarBind> = starts.iter().map(|s| {
            let mut o = vec![1, 3, 6, 1];
            o.extend(s);
            VarBind::new(Oid::new(o), Value::Null)
        }).collect();
        let pdu = Pdu::GetBulkRequest(BulkBody { request_id: rid, non_repeaters: non_rep, max_repetitions: max_rep, varbinds: vbs.clone() });
        let budget = max_size.saturating_sub(response_overhead(community.len(), rid));
        let Outcome::Response(resp) = d.process(&view, Version::V2c, &pdu, budget) else {
            panic!("GetBulk must give a response");
        };
        let Pdu::Response(b) = &resp else { panic!("not a Response") };
        let m = Message { version: Version::V2c, community, pdu: resp.clone() };
        prop_assert!(m.to_bytes().len() <= max_size);
        if b.error_status == ErrorStatus::NoError {
            // RFC 3416 4.2.3: a size-bounded answer is the longest prefix of
            // the unbounded one that fits (possibly cut inside the
            // non-repeaters), never a different set of varbinds.
            let Outcome::Response(Pdu::Response(full)) = d.process(&view, Version::V2c, &pdu, usize::MAX) else {
                panic!("unbounded GetBulk must give a response");
            };
            prop_assert!(b.varbinds.len() <= full.varbinds.len());
            prop_assert_eq!(&b.varbinds[..], &full.varbinds[..b.varbinds.len()]);
        } else {
            prop_assert_eq!(b.error_status, ErrorStatus::TooBig);
            prop_assert!(b.varbinds.is_empty());
        }
    }
}

/// A view that hides some subtrees (as a VACM view with excluded families).
struct Hiding(Vec<Vec<u32>>);

impl AccessCheck for Hiding {
    fn readable(&self, oid: &[u32]) -> bool {
        !self.0.iter().any(|h| oid.starts_with(h))
    }
    fn writable(&self, _: &[u32]) -> bool {
        false
    }
}

/// GetBulk by the letter of RFC 3416 4.2.3: one GetNext after another,
/// repetition by repetition, each repeater from its previous varbind.
fn bulk_reference(
    d: &Dispatcher<View, ()>,
    view: &View,
    acc: &Hiding,
    req: &BulkBody,
    limit: usize,
) -> Vec<VarBind> {
    let next = |oid: &Oid| -> Option<VarBind> {
        let mut cur = oid.clone();
        loop {
            let vb = d.next(view, cur.as_slice())?;
            if acc.readable(vb.oid.as_slice()) {
                return Some(vb);
            }
            cur = vb.oid;
        }
    };
    let end = |oid: &Oid| VarBind::new(oid.clone(), Value::EndOfMibView);
    let n = (req.non_repeaters.max(0) as usize).min(req.varbinds.len());
    let (non_rep, rep) = req.varbinds.split_at(n);
    let mut out: Vec<VarBind> = non_rep
        .iter()
        .map(|vb| next(&vb.oid).unwrap_or_else(|| end(&vb.oid)))
        .collect();
    let limit = limit.max(n + rep.len());
    for i in 0..req.max_repetitions.max(0) as usize {
        if rep.is_empty() || out.len() + rep.len() > limit {
            break;
        }
        let mut all_end = true;
        for (j, vb) in rep.iter().enumerate() {
            let prev = if i == 0 {
                vb.clone()
            } else {
                out[n + (i - 1) * rep.len() + j].clone()
            };
            let got = if prev.value == Value::EndOfMibView {
                None
            } else {
                next(&prev.oid)
            };
            all_end &= got.is_none();
            out.push(got.unwrap_or_else(|| end(&prev.oid)));
        }
        if all_end {
            break;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    /// The dispatcher walks each repeater's run at once; the answer is the
    /// same as GetNext after GetNext, also where the view hides subtrees,
    /// at the end of the MIB and under the varbind cap.
    #[test]
    fn bulk_equals_getnext_by_getnext(
        indexes in prop::collection::vec(prop::collection::vec(0u32..6, 1..3), 0..60),
        non_rep in 0i32..3, max_rep in 0i32..40, limit in 1usize..120,
        starts in prop::collection::vec(prop::collection::vec(0u32..8, 0..8), 0..5),
        hidden in prop::collection::vec(prop::collection::vec(0u32..7, 0..3), 0..4),
    ) {
        use snmp::dispatch::Outcome;
        let cols = [1, 2, 3, 4, 5, 6];
        let rows = RowSet::from_pairs(indexes.iter().enumerate().map(|(i, k)| (k.clone(), Row { seed: i as u32 })));
        let view = View { rows };
        let mut d = build(&indexes, &cols);
        d.set_max_bulk_varbinds(limit);
        let acc = Hiding(hidden.into_iter().map(|h| [&ENTRY[..], &h[..]].concat()).collect());
        let varbinds: Vec<VarBind> = starts.iter().map(|s| {
            let mut o = vec![1, 3, 6, 1];
            o.extend(s);
            VarBind::new(Oid::new(o), Value::Null)
        }).collect();
        let req = BulkBody { request_id: 1, non_repeaters: non_rep, max_repetitions: max_rep, varbinds };
        let Outcome::Response(Pdu::Response(got)) =
            d.process_with(&view, Version::V2c, &Pdu::GetBulkRequest(req.clone()), usize::MAX, &acc, snmp::dispatch::Clearance::Public)
        else {
            panic!("GetBulk must give a response");
        };
        prop_assert_eq!(got.varbinds, bulk_reference(&d, &view, &acc, &req, limit));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    /// A walk's answer encoded straight into the message (the UDP v1/v2c
    /// GetNext and GetBulk path) is the same octets as the varbinds the
    /// general path collects, encoded: in the dispatcher, where a view
    /// hides subtrees, and through the engine, whole messages.
    #[test]
    fn direct_encoding_matches_varbinds(
        indexes in prop::collection::vec(prop::collection::vec(prop_oneof![0u32..6, 100u32..300], 1..3), 0..60),
        bulk in any::<bool>(), v1 in any::<bool>(),
        non_rep in -1i32..3, max_rep in 0i32..60, limit in 1usize..120,
        max_size in 484usize..2000, small in 0usize..120, rid in any::<i32>(),
        starts in prop::collection::vec(prop::collection::vec(0u32..8, 0..8), 0..5),
        ended in prop::collection::vec(any::<bool>(), 5),
        hidden in prop::collection::vec(prop::collection::vec(0u32..7, 0..3), 0..4),
    ) {
        use snmp::ber::{tag, Encoder};
        use snmp::dispatch::{Clearance, FullAccess, Outcome};
        use snmp::engine::{Action, Community, CommunityAccess, Engine, EngineConfig, SnmpStats};
        use snmp::message::response_overhead;
        use snmp::response::Direct;
        let cols = [1, 2, 3, 4, 5, 6];
        let rows = RowSet::from_pairs(indexes.iter().enumerate().map(|(i, k)| (k.clone(), Row { seed: i as u32 })));
        let view = View { rows: rows.clone() };
        let mut d = build(&indexes, &cols);
        d.set_max_bulk_varbinds(limit);
        let varbinds: Vec<VarBind> = starts.iter().zip(&ended).map(|(s, &e)| {
            let mut o = vec![1, 3, 6, 1];
            o.extend(s);
            VarBind::new(Oid::new(o), if e { Value::EndOfMibView } else { Value::Null })
        }).collect();
        let (version, pdu) = if bulk {
            (Version::V2c, Pdu::GetBulkRequest(BulkBody { request_id: rid, non_repeaters: non_rep, max_repetitions: max_rep, varbinds }))
        } else {
            (if v1 { Version::V1 } else { Version::V2c }, Pdu::GetNextRequest(PduBody::request(rid, varbinds)))
        };
        let budget = max_size.saturating_sub(response_overhead(6, rid));
        // The dispatcher: a noError answer is taken directly, the same
        // octets; any other (tooBig: `small` budgets) is left to the
        // general path.
        let acc = Hiding(hidden.into_iter().map(|h| [&ENTRY[..], &h[..]].concat()).collect());
        let cases = [(&acc as &dyn AccessCheck, budget), (&FullAccess, budget), (&acc, small)];
        for (acc, budget) in cases {
            let general = d.process_with(&view, version, &pdu, budget, acc, Clearance::Public);
            let mut direct = Vec::new();
            let mut e = Encoder::new(&mut direct);
            let list = e.begin(tag::SEQUENCE);
            let mut out = Direct::new(&mut direct, budget);
            let taken = d.walk_into(&view, version, &pdu, acc, Clearance::Public, &mut out);
            Encoder::new(&mut direct).end(list);
            match general {
                Outcome::Response(Pdu::Response(b)) if b.error_status == ErrorStatus::NoError => {
                    prop_assert!(taken);
                    let mut collected = Vec::new();
                    Encoder::new(&mut collected).varbind_list(&b.varbinds);
                    prop_assert_eq!(direct, collected);
                }
                _ => prop_assert!(!taken),
            }
        }
        // The engine: whole response messages.
        let d = Arc::new(d);
        let engine: Engine<View, ()> = Engine::new(EngineConfig {
            communities: vec![Community::new("public", CommunityAccess::ReadOnly)],
            max_message_size: max_size,
            ..EngineConfig::new(
                Arc::clone(&d),
                Box::new(move || View { rows: rows.clone() }),
                Arc::new(|_: Vec<()>| async { Ok(()) }),
                SnmpStats::new(),
            )
        });
        let request = Message { version, community: b"public".to_vec(), pdu: pdu.clone() }.to_bytes();
        let mut sent = Vec::new();
        let action = engine.process(([127, 0, 0, 1], 9).into(), &request, &mut sent);
        let expected = match d.process(&view, version, &pdu, budget) {
            Outcome::Response(resp) => Message { version, community: b"public".to_vec(), pdu: resp }.to_bytes(),
            _ => Vec::new(),
        };
        prop_assert_eq!(matches!(action, Action::Send), !expected.is_empty());
        prop_assert_eq!(sent, expected);
    }
}
