use super::reply::list_len;
use super::*;
use crate::index::{IndexCodec, Unsigned32};
use crate::mib::{SetError, SetItem};
use crate::pdu::BulkBody;
use crate::table::{check, RowSet, Scalars, Table};

struct View {
    rows: RowSet<u32>,
    name: String,
}

#[derive(Debug, PartialEq)]
enum Change {
    Name(String),
    Row(u32, i32),
}

fn oid(s: &str) -> Oid {
    s.parse().unwrap()
}

fn dispatcher() -> Dispatcher<View, Change> {
    let mut d = Dispatcher::new();
    let sys = Scalars::<View, Change>::new(oid("1.3.6.1.2.1.1"))
        .read_only(1, |_| Value::OctetString(b"descr".to_vec()))
        .read_write(
            5,
            |v| Value::OctetString(v.name.clone().into_bytes()),
            |_, val| Ok(Change::Name(check::display_string(val, 255)?)),
        );
    d.register_all(sys.into_objects()).unwrap();
    let t: Table<View, Change, u32> = Table::new(
        oid("1.3.6.1.2.1.2.2.1"),
        |v: &View| &v.rows,
        |_, r, c| match c {
            1 => Some(Value::Integer(*r as i32)),
            2 => Some(Value::Counter64(u64::from(*r) << 40)),
            3 => Some(Value::Gauge32(*r)),
            _ => None,
        },
    )
    .read_only(&[1, 2])
    .read_write(3, |_, r, _, v| Ok(Change::Row(*r, check::integer(v)?)));
    d.register(Arc::new(t)).unwrap();
    d
}

fn view() -> View {
    View {
        rows: RowSet::from_rows(1..=3u32, Unsigned32::encode),
        name: "n".into(),
    }
}

fn body(oids: &[&str]) -> PduBody {
    PduBody::request(
        7,
        oids.iter()
            .map(|o| VarBind::new(oid(o), Value::Null))
            .collect(),
    )
}

fn response(o: Outcome<Change>) -> PduBody {
    match o {
        Outcome::Response(Pdu::Response(b)) => b,
        other => panic!("unexpected {other:?}"),
    }
}

/// An object that judges all of its varbinds of a PDU together: one
/// change per PDU holding every value (sums them), as a RowStatus table
/// does with the columns of one row.
struct Batch(Oid);

impl MibObject<View, Change> for Batch {
    fn root(&self) -> &Oid {
        &self.0
    }
    fn get(&self, _: &View, _: &[u32]) -> Value {
        Value::NoSuchInstance
    }
    fn next(&self, _: &View, _: &[u32]) -> Option<VarBind> {
        None
    }
    fn check_set_batch(
        &self,
        _: &View,
        sets: &[SetItem<'_>],
    ) -> Result<Vec<(usize, Change)>, (usize, SetError)> {
        let mut sum = 0;
        for s in sets {
            match s.value {
                Value::Integer(i) => sum += i,
                _ => return Err((s.position, SetError::WrongType)),
            }
        }
        let first = sets.first().map_or(0, |s| s.position);
        Ok(vec![(first, Change::Row(sets.len() as u32, sum))])
    }
}

#[test]
fn an_object_sees_all_its_varbinds_of_a_pdu_together() {
    let mut d = dispatcher();
    d.register(Arc::new(Batch(oid("1.3.6.1.9")))).unwrap();
    let v = view();
    let vb = |o: &str, val: Value| VarBind::new(oid(o), val);
    let vbs = [
        vb("1.3.6.1.9.1", Value::Integer(2)),
        vb("1.3.6.1.2.1.1.5.0", Value::OctetString(b"x".to_vec())),
        vb("1.3.6.1.9.2", Value::Integer(3)),
    ];
    // One change for the two Batch varbinds (at the first one's place),
    // the scalar's in PDU order.
    assert_eq!(
        d.check_set_all(&v, &vbs).unwrap(),
        vec![Change::Row(2, 5), Change::Name("x".into())]
    );
    // The error names the varbind's position in the PDU.
    let bad = [
        vbs[1].clone(),
        vbs[0].clone(),
        vb("1.3.6.1.9.3", Value::Null),
    ];
    assert_eq!(d.check_set_all(&v, &bad), Err((2, SetError::WrongType)));
    let unowned = [vbs[0].clone(), vb("1.3.6.1.8.1", Value::Integer(1))];
    assert_eq!(
        d.check_set_all(&v, &unowned),
        Err((1, SetError::NotWritable))
    );
}

#[test]
fn overlap_rejected() {
    let mut d = dispatcher();
    let s: Scalars<View, Change> = Scalars::new(oid("1.3.6.1.2.1.1"));
    assert!(d.register(Arc::new(s)).is_err());
    let s: Scalars<View, Change> = Scalars::new(oid("1.3.6.1.2.1.2.2.1.5"));
    assert!(d.register(Arc::new(s)).is_err());
}

#[test]
fn get_v2_and_v1() {
    let d = dispatcher();
    let v = view();
    let req = Pdu::GetRequest(body(&[
        "1.3.6.1.2.1.1.1.0",
        "1.3.6.1.2.1.1.2.0",
        "1.3.6.1.2.1.1.1.1",
        "1.3.6.1.2.1.2.2.1.2.1",
    ]));
    let r = response(d.process(&v, Version::V2c, &req, 65000));
    let vals: Vec<_> = r.varbinds.iter().map(|x| x.value.clone()).collect();
    assert_eq!(
        vals,
        [
            Value::OctetString(b"descr".to_vec()),
            Value::NoSuchObject,
            Value::NoSuchInstance,
            Value::Counter64(1 << 40)
        ]
    );
    let r = response(d.process(&v, Version::V1, &req, 65000));
    assert_eq!(r.error_status, ErrorStatus::NoSuchName);
    assert_eq!(r.error_index, 2);
    let req = Pdu::GetRequest(body(&["1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.2.2.1.2.1"]));
    let r = response(d.process(&v, Version::V1, &req, 65000));
    assert_eq!(
        (r.error_status, r.error_index),
        (ErrorStatus::NoSuchName, 2)
    );
}

fn walk(d: &Dispatcher<View, Change>, version: Version) -> Vec<String> {
    let v = view();
    let mut cur = oid("0.0");
    let mut seen = Vec::new();
    loop {
        let req = Pdu::GetNextRequest(PduBody::request(
            1,
            vec![VarBind::new(cur.clone(), Value::Null)],
        ));
        let r = response(d.process(&v, version, &req, 65000));
        if r.error_status != ErrorStatus::NoError {
            assert_eq!(version, Version::V1);
            assert_eq!(r.error_status, ErrorStatus::NoSuchName);
            break;
        }
        let vb = &r.varbinds[0];
        if vb.value == Value::EndOfMibView {
            break;
        }
        assert!(vb.oid > cur);
        cur = vb.oid.clone();
        seen.push(cur.to_string());
    }
    seen
}

#[test]
fn walks() {
    let d = dispatcher();
    let v2 = walk(&d, Version::V2c);
    assert_eq!(v2.len(), 2 + 9);
    let v1 = walk(&d, Version::V1);
    assert_eq!(v1.len(), 2 + 6);
    assert!(!v1.iter().any(|o| o.starts_with("1.3.6.1.2.1.2.2.1.2.")));
}

#[test]
fn bulk() {
    let d = dispatcher();
    let v = view();
    let req = Pdu::GetBulkRequest(BulkBody {
        request_id: 3,
        non_repeaters: 1,
        max_repetitions: 4,
        varbinds: vec![
            VarBind::new(oid("1.3.6.1.2.1.1"), Value::Null),
            VarBind::new(oid("1.3.6.1.2.1.2.2.1.3"), Value::Null),
            VarBind::new(oid("1.3.6.1.2.1.2.2.1.1.2"), Value::Null),
        ],
    });
    let r = response(d.process(&v, Version::V2c, &req, 65000));
    let got: Vec<String> = r
        .varbinds
        .iter()
        .map(|x| format!("{}={}", x.oid, matches!(x.value, Value::EndOfMibView)))
        .collect();
    assert_eq!(
        got,
        [
            "1.3.6.1.2.1.1.1.0=false",
            "1.3.6.1.2.1.2.2.1.3.1=false",
            "1.3.6.1.2.1.2.2.1.1.3=false",
            "1.3.6.1.2.1.2.2.1.3.2=false",
            "1.3.6.1.2.1.2.2.1.2.1=false",
            "1.3.6.1.2.1.2.2.1.3.3=false",
            "1.3.6.1.2.1.2.2.1.2.2=false",
            "1.3.6.1.2.1.2.2.1.3.3=true",
            "1.3.6.1.2.1.2.2.1.2.3=false",
        ]
    );
    // Size bound: the response is cut, never tooBig, once non-repeaters fit.
    let r = response(d.process(&v, Version::V2c, &req, 60));
    assert_eq!(r.error_status, ErrorStatus::NoError);
    assert!(list_len(&r.varbinds) <= 60);
    assert!(r.varbinds.len() >= 2);
    let r = response(d.process(&v, Version::V2c, &req, 5));
    assert_eq!(r.error_status, ErrorStatus::TooBig);
    assert!(r.varbinds.is_empty());
}

/// RFC 3416 4.2.3: when even the non-repeaters overflow the budget, the
/// response is the longest prefix that fits (noError), cut inside the
/// non-repeaters, with no repetitions after it; tooBig only when not even
/// the first varbind fits. Get and GetNext keep tooBig (4.2.1, 4.2.2).
#[test]
fn bulk_total_is_capped() {
    let mut d = dispatcher();
    d.set_max_bulk_varbinds(10);
    let req = Pdu::GetBulkRequest(BulkBody {
        request_id: 1,
        non_repeaters: 0,
        max_repetitions: 50,
        varbinds: vec![VarBind::new(vec![1, 3].into(), Value::Null); 3],
    });
    let b = response(d.process(&view(), Version::V2c, &req, 60000));
    assert!(
        b.varbinds.len() <= 10 && b.varbinds.len() >= 3,
        "{}",
        b.varbinds.len()
    );
    assert_eq!(b.varbinds.len() % 3, 0);
}

#[test]
fn bulk_cut_inside_the_non_repeaters() {
    let d = dispatcher();
    let v = view();
    let oids = [
        "1.3.6.1.2.1.1",
        "1.3.6.1.2.1.2.2.1.1",
        "1.3.6.1.2.1.2.2.1.2",
        "1.3.6.1.2.1.2.2.1.3",
    ];
    let req = |non_repeaters| {
        Pdu::GetBulkRequest(BulkBody {
            request_id: 9,
            non_repeaters,
            max_repetitions: 5,
            varbinds: oids
                .iter()
                .map(|o| VarBind::new(oid(o), Value::Null))
                .collect(),
        })
    };
    let full = response(d.process(&v, Version::V2c, &req(3), 65000));
    assert_eq!(full.error_status, ErrorStatus::NoError);
    assert!(full.varbinds.len() > 3);
    let two = list_len(&full.varbinds[..2]);
    let three = list_len(&full.varbinds[..3]);
    for budget in [two, three - 1] {
        let r = response(d.process(&v, Version::V2c, &req(3), budget));
        assert_eq!(r.error_status, ErrorStatus::NoError, "budget {budget}");
        assert_eq!(r.varbinds, full.varbinds[..2], "budget {budget}");
    }
    // All non-repeaters fit but no repetition: exactly the non-repeaters.
    let r = response(d.process(&v, Version::V2c, &req(3), three));
    assert_eq!(r.error_status, ErrorStatus::NoError);
    assert_eq!(r.varbinds, full.varbinds[..3]);
    // Not even the first: tooBig with an empty list (as net-snmp).
    let first = list_len(&full.varbinds[..1]);
    let r = response(d.process(&v, Version::V2c, &req(3), first - 1));
    assert_eq!(r.error_status, ErrorStatus::TooBig);
    assert!(r.varbinds.is_empty());
    // Nothing requested (max-repetitions 0, no non-repeaters): an empty
    // noError response, whatever the budget.
    let none = Pdu::GetBulkRequest(BulkBody {
        request_id: 10,
        non_repeaters: 0,
        max_repetitions: 0,
        varbinds: vec![VarBind::new(oid(oids[0]), Value::Null)],
    });
    let r = response(d.process(&v, Version::V2c, &none, 0));
    assert_eq!(r.error_status, ErrorStatus::NoError);
    assert!(r.varbinds.is_empty());
    // GetNext over the same varbinds with the same small budget: tooBig.
    let next = Pdu::GetNextRequest(body(&oids[..3]));
    let r = response(d.process(&v, Version::V2c, &next, two));
    assert_eq!(r.error_status, ErrorStatus::TooBig);
    assert!(r.varbinds.is_empty());
    let get = Pdu::GetRequest(body(&["1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.1.1.0"]));
    let r = response(d.process(&v, Version::V2c, &get, first));
    assert_eq!(r.error_status, ErrorStatus::TooBig);
}

#[test]
fn sets() {
    let d = dispatcher();
    let v = view();
    let mut b = body(&["1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.2.2.1.3.2"]);
    b.varbinds[0].value = Value::OctetString(b"x".to_vec());
    b.varbinds[1].value = Value::Integer(9);
    match d.process(&v, Version::V2c, &Pdu::SetRequest(b.clone()), 65000) {
        Outcome::Set { changes, response } => {
            assert_eq!(changes, [Change::Name("x".into()), Change::Row(2, 9)]);
            assert_eq!(response.varbinds, b.varbinds);
        }
        o => panic!("{o:?}"),
    }
    let mut bad = b.clone();
    bad.varbinds[1].value = Value::Null;
    let r = response(d.process(&v, Version::V2c, &Pdu::SetRequest(bad.clone()), 65000));
    assert_eq!((r.error_status, r.error_index), (ErrorStatus::WrongType, 2));
    let r = response(d.process(&v, Version::V1, &Pdu::SetRequest(bad), 65000));
    assert_eq!((r.error_status, r.error_index), (ErrorStatus::BadValue, 2));
    let mut ro = b.clone();
    ro.varbinds[0].oid = oid("1.3.6.1.2.1.1.1.0");
    let r = response(d.process(&v, Version::V2c, &Pdu::SetRequest(ro.clone()), 65000));
    assert_eq!(
        (r.error_status, r.error_index),
        (ErrorStatus::NotWritable, 1)
    );
    let r = response(d.process(&v, Version::V1, &Pdu::SetRequest(ro), 65000));
    assert_eq!(
        (r.error_status, r.error_index),
        (ErrorStatus::NoSuchName, 1)
    );
    let mut nc = b;
    nc.varbinds[1].oid = oid("1.3.6.1.2.1.2.2.1.3.99");
    let r = response(d.process(&v, Version::V2c, &Pdu::SetRequest(nc), 65000));
    assert_eq!(
        (r.error_status, r.error_index),
        (ErrorStatus::NoCreation, 2)
    );
}

/// The test dispatcher with the ifDescr column kept back by `keep` (hidden
/// or secret): the dispatcher, the column and its cell ifDescr.1.
fn keeping_if_descr(
    keep: fn(&mut Dispatcher<View, Change>, Vec<Oid>),
) -> (Dispatcher<View, Change>, Oid, Oid) {
    let mut d = dispatcher();
    let column = oid("1.3.6.1.2.1.2.2.1.3");
    keep(&mut d, vec![column.clone()]);
    (d, column, oid("1.3.6.1.2.1.2.2.1.3.1"))
}

/// Hidden subtrees: read and written only with clearance (notWritable
/// below).
#[test]
fn hidden_subtrees_are_secret_to_read_only() {
    let (d, _, cell) = keeping_if_descr(Dispatcher::set_hidden_subtrees);
    let v = view();
    let run =
        |c: Clearance, pdu: &Pdu| d.process_with(&v, Version::V2c, pdu, 65000, &FullAccess, c);
    let get = Pdu::GetRequest(PduBody::request(
        1,
        vec![VarBind::new(cell.clone(), Value::Null)],
    ));
    assert_eq!(
        response(run(Clearance::Public, &get)).varbinds[0].value,
        Value::NoSuchObject
    );
    assert_eq!(
        response(run(Clearance::Secret, &get)).varbinds[0].value,
        Value::Gauge32(1)
    );
    let set = Pdu::SetRequest(PduBody::request(
        1,
        vec![VarBind::new(cell, Value::Integer(7))],
    ));
    assert_eq!(
        response(run(Clearance::Public, &set)).error_status,
        ErrorStatus::NotWritable
    );
    assert!(matches!(run(Clearance::Secret, &set), Outcome::Set { .. }));
}

/// Administrative subtrees: readable as the view says, writable only
/// with clearance; below, notWritable (v1: noSuchName) whatever the
/// view and whether or not the instance exists, on every way in.
#[test]
fn admin_subtrees_are_writable_only_with_clearance() {
    let mut d = dispatcher();
    d.set_admin_subtrees(vec![oid("1.3.6.1.2.1.2.2.1.3")]);
    let v = view();
    let cell = oid("1.3.6.1.2.1.2.2.1.3.1");
    let get = Pdu::GetRequest(PduBody::request(
        1,
        vec![VarBind::new(cell.clone(), Value::Null)],
    ));
    let run = |c: Clearance, ver: Version, pdu: &Pdu, acc: &dyn AccessCheck| {
        d.process_with(&v, ver, pdu, 65000, acc, c)
    };
    assert_eq!(
        response(run(Clearance::Public, Version::V2c, &get, &FullAccess)).varbinds[0].value,
        Value::Gauge32(1)
    );
    for instance in [cell.clone(), oid("1.3.6.1.2.1.2.2.1.3.99")] {
        let set = Pdu::SetRequest(PduBody::request(
            1,
            vec![VarBind::new(instance, Value::Integer(7))],
        ));
        let r = response(run(Clearance::Public, Version::V2c, &set, &FullAccess));
        assert_eq!(
            (r.error_status, r.error_index),
            (ErrorStatus::NotWritable, 1)
        );
        let r = response(run(Clearance::Public, Version::V1, &set, &FullAccess));
        assert_eq!(r.error_status, ErrorStatus::NoSuchName);
    }
    let set = [VarBind::new(cell.clone(), Value::Integer(7))];
    assert!(matches!(
        d.check_set_all(&v, &set),
        Err((0, SetError::NotWritable))
    ));
    let setp = Pdu::SetRequest(PduBody::request(1, set.to_vec()));
    assert!(matches!(
        run(Clearance::Secret, Version::V2c, &setp, &FullAccess),
        Outcome::Set { .. }
    ));
}

/// The secret rule holds on every way in: the engine's requests without
/// clearance and the plain reads and set checks AgentX uses.
#[test]
fn secrets_need_clearance_on_every_entry_point() {
    let (d, column, cell) = keeping_if_descr(Dispatcher::set_secret_subtrees);
    let v = view();
    let last_public = oid("1.3.6.1.2.1.2.2.1.2.3");
    // Plain reads: absent, walked past.
    assert_eq!(d.get(&v, cell.as_slice()), Value::NoSuchObject);
    assert!(d.next(&v, last_public.as_slice()).is_none());
    // Set checks: notWritable.
    let set = [VarBind::new(cell.clone(), Value::Integer(7))];
    assert!(matches!(
        d.check_set_all(&v, &set),
        Err((0, SetError::NotWritable))
    ));
    assert!(d
        .check_set(&v, cell.as_slice(), &Value::Integer(7))
        .is_err());
    // Requests: public ones see nothing, cleared ones everything.
    let get = Pdu::GetRequest(PduBody::request(
        1,
        vec![VarBind::new(cell.clone(), Value::Null)],
    ));
    let run = |c: Clearance, pdu: &Pdu| {
        response(d.process_with(&v, Version::V2c, pdu, 65000, &FullAccess, c))
    };
    assert_eq!(
        run(Clearance::Public, &get).varbinds[0].value,
        Value::NoSuchObject
    );
    assert_eq!(
        run(Clearance::Secret, &get).varbinds[0].value,
        Value::Gauge32(1)
    );
    let bulk = Pdu::GetBulkRequest(BulkBody {
        request_id: 1,
        non_repeaters: 0,
        max_repetitions: 10,
        varbinds: vec![VarBind::new(last_public, Value::Null)],
    });
    let public = run(Clearance::Public, &bulk);
    assert!(public
        .varbinds
        .iter()
        .all(|vb| !vb.oid.starts_with(column.as_slice())));
    let cleared = run(Clearance::Secret, &bulk);
    assert_eq!(cleared.varbinds[0].oid, cell);
    let setp = Pdu::SetRequest(PduBody::request(1, set.to_vec()));
    assert_eq!(
        run(Clearance::Public, &setp).error_status,
        ErrorStatus::NoAccess
    );
    assert!(matches!(
        d.process_with(
            &v,
            Version::V2c,
            &setp,
            65000,
            &FullAccess,
            Clearance::Secret
        ),
        Outcome::Set { .. }
    ));
    // The rest of the table is untouched.
    assert_eq!(
        d.get(&v, &[1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 2]),
        Value::Integer(2)
    );
}
