use super::*;
use crate::oid::Oid;
use crate::value::{Value, VarBind};

fn enc_value(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    Encoder::new(&mut out).value(v);
    out
}

fn dec_value(b: &[u8]) -> Result<Value, BerError> {
    let mut r = Reader::new(b);
    let v = r.read_value()?;
    r.finish()?;
    Ok(v)
}

#[test]
fn integers() {
    for (v, bytes) in [
        (0i32, &[0x02, 1, 0][..]),
        (127, &[0x02, 1, 0x7f]),
        (128, &[0x02, 2, 0, 0x80]),
        (-1, &[0x02, 1, 0xff]),
        (-128, &[0x02, 1, 0x80]),
        (-129, &[0x02, 2, 0xff, 0x7f]),
        (i32::MAX, &[0x02, 4, 0x7f, 0xff, 0xff, 0xff]),
        (i32::MIN, &[0x02, 4, 0x80, 0, 0, 0]),
    ] {
        assert_eq!(enc_value(&Value::Integer(v)), bytes, "{v}");
        assert_eq!(dec_value(bytes).unwrap(), Value::Integer(v));
    }
    // Redundant leading octets are tolerated.
    assert_eq!(dec_value(&[0x02, 3, 0, 0, 5]).unwrap(), Value::Integer(5));
    assert_eq!(
        dec_value(&[0x02, 10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]).unwrap(),
        Value::Integer(-2)
    );
    assert_eq!(
        dec_value(&[0x02, 5, 0, 0x80, 0, 0, 0]),
        Err(BerError::IntegerOverflow)
    );
    assert_eq!(dec_value(&[0x02, 0]), Err(BerError::EmptyInteger));
}

#[test]
fn unsigned() {
    assert_eq!(
        enc_value(&Value::Counter32(u32::MAX)),
        [0x41, 5, 0, 0xff, 0xff, 0xff, 0xff]
    );
    assert_eq!(
        dec_value(&[0x41, 5, 0, 0xff, 0xff, 0xff, 0xff]).unwrap(),
        Value::Counter32(u32::MAX)
    );
    // Missing leading zero tolerated.
    assert_eq!(dec_value(&[0x42, 1, 0xff]).unwrap(), Value::Gauge32(255));
    assert_eq!(
        dec_value(&[0x43, 5, 1, 0, 0, 0, 0]),
        Err(BerError::IntegerOverflow)
    );
    let c = Value::Counter64(u64::MAX);
    let b = enc_value(&c);
    assert_eq!(b.len(), 11);
    assert_eq!(dec_value(&b).unwrap(), c);
    assert_eq!(enc_value(&Value::Counter64(0)), [0x46, 1, 0]);
}

#[test]
fn oids() {
    let o: Oid = "1.3.6.1.2.1.1.1.0".parse().unwrap();
    let b = enc_value(&Value::ObjectId(o.clone()));
    assert_eq!(b, [0x06, 8, 0x2b, 6, 1, 2, 1, 1, 1, 0]);
    assert_eq!(dec_value(&b).unwrap(), Value::ObjectId(o));
    let big = Oid::new(vec![2, 999, u32::MAX]);
    let b = enc_value(&Value::ObjectId(big.clone()));
    assert_eq!(dec_value(&b).unwrap(), Value::ObjectId(big));
    // > u32 sub-identifier
    assert_eq!(
        dec_value(&[0x06, 6, 0x2b, 0x90, 0x80, 0x80, 0x80, 0x00]),
        Err(BerError::SubidOverflow)
    );
    // non-minimal and truncated sub-identifiers
    assert_eq!(
        dec_value(&[0x06, 3, 0x2b, 0x80, 1]),
        Err(BerError::BadSubid)
    );
    assert_eq!(dec_value(&[0x06, 2, 0x2b, 0x81]), Err(BerError::BadSubid));
    // 128 sub-identifiers are fine, 129 are not.
    let mut b = vec![0x06, 0x81, 127, 0x2b];
    b.extend(std::iter::repeat_n(1u8, 126));
    assert!(dec_value(&b).is_ok());
    let mut b = vec![0x06, 0x81, 128, 0x2b];
    b.extend(std::iter::repeat_n(1u8, 127));
    assert!(dec_value(&b).is_err());
    // Either side of the 32 held in place, one-octet and longer arcs.
    for n in [31, 32, 33, 127, 128] {
        for arc in [5, 300, u32::MAX] {
            let o = Oid::new(
                [1, 3]
                    .into_iter()
                    .chain(std::iter::repeat_n(arc, n - 2))
                    .collect(),
            );
            let b = enc_value(&Value::ObjectId(o.clone()));
            assert_eq!(
                dec_value(&b).unwrap(),
                Value::ObjectId(o),
                "{n} arcs of {arc}"
            );
        }
    }
}

#[test]
fn lengths() {
    // Indefinite length rejected.
    assert_eq!(
        Reader::new(&[0x30, 0x80, 0, 0]).read_tlv(),
        Err(BerError::IndefiniteLength)
    );
    // Non-minimal long form tolerated.
    let mut r = Reader::new(&[0x04, 0x82, 0, 2, 7, 8]);
    assert_eq!(r.read_octets().unwrap(), &[7, 8]);
    // Truncated.
    assert!(Reader::new(&[0x04, 5, 1]).read_tlv().is_err());
    assert!(Reader::new(&[0x04, 0x84, 0xff, 0xff, 0xff, 0xff])
        .read_tlv()
        .is_err());
    assert!(Reader::new(&[0x04, 0x89, 1, 1, 1, 1, 1, 1, 1, 1, 1])
        .read_tlv()
        .is_err());
}

#[test]
fn long_constructed() {
    for n in [0usize, 1, 127, 128, 255, 256, 70000] {
        let mut out = Vec::new();
        let mut e = Encoder::new(&mut out);
        let m = e.begin(tag::SEQUENCE);
        e.octets(&vec![0xaa; n]);
        e.end(m);
        let mut r = Reader::new(&out);
        let mut s = r.read_sequence().unwrap();
        assert!(r.is_empty());
        assert_eq!(s.read_octets().unwrap().len(), n);
        assert!(s.is_empty());
    }
}

#[test]
fn computed_lengths_match() {
    let vals = [
        Value::Integer(-5),
        Value::OctetString(vec![1; 200]),
        Value::Null,
        Value::ObjectId("1.3.6.1.4.1.99999.1".parse().unwrap()),
        Value::IpAddress([10, 0, 0, 1]),
        Value::Counter32(0x8000_0000),
        Value::Gauge32(3),
        Value::TimeTicks(1),
        Value::Opaque(vec![]),
        Value::Counter64(1 << 63),
        Value::NoSuchObject,
        Value::EndOfMibView,
    ];
    for v in vals {
        let b = enc_value(&v);
        assert_eq!(b.len(), tlv_len(value_content_len(&v)), "{v:?}");
        let vb = VarBind::new("1.3.6.1.2.1.31.1.1.1.6.4294967295".parse().unwrap(), v);
        let mut out = Vec::new();
        Encoder::new(&mut out).varbind(&vb);
        assert_eq!(out.len(), varbind_len(&vb));
        assert_eq!(Reader::new(&out).read_varbind().unwrap(), vb);
    }
}

#[test]
fn a_reserved_long_length_gives_the_octets_of_a_short_one() {
    // begin_long reserves three length octets; whatever the content's
    // length, the octets are begin's (the shortest form), nested or not.
    for len in [
        0usize, 1, 0x7f, 0x80, 0xff, 0x100, 0x1945, 0xffff, 0x1_0000, 0x1_2345,
    ] {
        let content: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let encode = |long: bool| {
            let mut out = vec![0xaa];
            let mut e = Encoder::new(&mut out);
            let open = |e: &mut Encoder<'_>, t| if long { e.begin_long(t) } else { e.begin(t) };
            let outer = open(&mut e, tag::SEQUENCE);
            e.integer(1);
            let inner = open(&mut e, tag::SEQUENCE);
            e.octets(&content);
            e.end(inner);
            e.end(outer);
            out
        };
        let short = encode(false);
        assert_eq!(encode(true), short, "content of {len} octets");
        let mut r = Reader::new(short.get(1..).unwrap());
        assert!(r.read_tlv().is_ok(), "content of {len} octets decodes");
    }
}

#[test]
fn a_walks_counters_and_gauges_are_the_octets_of_value() {
    // varbind_in_run writes these in one fixed-size copy; every content
    // length from 1 to 9 octets, at its edges.
    let mut edges = vec![0u64, u64::MAX];
    for bits in (7..64).step_by(8) {
        edges.extend([(1u64 << bits) - 1, 1u64 << bits]);
    }
    for v in edges {
        let mut values = vec![Value::Counter64(v)];
        if let Ok(small) = u32::try_from(v) {
            values.extend([Value::Counter32(small), Value::Gauge32(small)]);
        }
        for value in values {
            let oid = Oid::new(vec![1, 3, 6, 1, 2, 1, 2, 2, 1, 10, 7]);
            let mut fast = Vec::new();
            Encoder::new(&mut fast).varbind_in_run(&mut OidRun::default(), oid.as_slice(), &value);
            let mut plain = Vec::new();
            Encoder::new(&mut plain).varbind(&VarBind::new(oid, value.clone()));
            assert_eq!(fast, plain, "{value:?}");
        }
    }
}
