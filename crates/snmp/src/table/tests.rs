use super::*;

struct V {
    rows: RowSet<(u32, u32)>,
}

fn table() -> Table<V, (u32, i32), (u32, u32)> {
    Table::new(
        Oid::new(vec![1, 3, 6, 1, 9, 1]),
        |v: &V| &v.rows,
        |_, r, c| match c {
            2 => Some(Value::Gauge32(r.1)),
            // sparse column: odd rows only
            3 => (r.0 % 2 == 1).then_some(Value::Integer(r.0 as i32)),
            _ => None,
        },
    )
    .column(1, Access::NotAccessible)
    .read_only(&[2])
    .read_write(3, |_, r, _, v| Ok((r.0, check::integer(v)?)))
}

fn view() -> V {
    V {
        rows: RowSet::from_rows([(3, 30), (1, 10), (2, 20), (1, 99)], |r, o| o.push(r.0)),
    }
}

type TestColumn = Column<V, (u32, i32), (u32, u32)>;

fn declared() -> Table<V, (u32, i32), (u32, u32)> {
    const COLS: &[TestColumn] = &[
        Column::index(&[1, 3, 6, 1, 9, 1, 1]),
        Column::read_only(&[1, 3, 6, 1, 9, 1, 2], |_, r| Some(Value::Gauge32(r.1))),
        Column::read_write(
            &[1, 3, 6, 1, 9, 1, 3],
            |_, r| (r.0 % 2 == 1).then_some(Value::Integer(r.0 as i32)),
            |_, r, _, v| Ok((r.0, check::integer(v)?)),
        ),
    ];
    Table::from_columns(Oid::new(vec![1, 3, 6, 1, 9, 1]), |v: &V| &v.rows, COLS)
}

#[test]
fn declared_columns_serve_like_the_builder() {
    let (a, b, v) = (table(), declared(), view());
    assert_eq!(a.declared_columns(), b.declared_columns());
    assert_eq!(last_column(&[Column::<V, (), u32>::index(&[1, 7])]), 7);
    let mut oid = vec![1, 3, 6];
    while let Some(vb) = a.next(&v, &oid) {
        assert_eq!(b.next(&v, &oid), Some(vb.clone()));
        oid = vb.oid.into_vec();
    }
    let set = [1, 3, 6, 1, 9, 1, 3, 2];
    assert_eq!(b.check_set(&v, &set, &Value::Integer(5)), Ok((2, 5)));
    let ranged = declared().with_syntax(|_| {
        Some(Syntax {
            base: crate::syntax::Base::Integer,
            ranges: &[(1, 3)],
        })
    });
    assert_eq!(
        ranged.check_set(&v, &set, &Value::Integer(5)),
        Err(SetError::WrongValue)
    );
    assert_eq!(
        ranged.check_set(&v, &set, &Value::Gauge32(1)),
        Err(SetError::WrongType)
    );
    let gated = declared().writable_if(|_| false);
    assert_eq!(
        gated.check_set(&v, &set, &Value::Integer(1)),
        Err(SetError::NotWritable)
    );
}

#[test]
fn rowset_sorted_dedup() {
    let v = view();
    assert_eq!(v.rows.len(), 3);
    assert_eq!(v.rows.get(&[1]), Some(&(1, 10)));
    assert_eq!(v.rows.first_after(&[1]).map(|x| x.1), Some(&(2, 20)));
    assert_eq!(v.rows.first_after(&[1, 0]).map(|x| x.1), Some(&(2, 20)));
    assert_eq!(v.rows.first_after(&[0, 5]).map(|x| x.1), Some(&(1, 10)));
    assert!(v.rows.first_after(&[3]).is_none());
}

#[test]
fn walk() {
    let t = table();
    let v = view();
    let mut oid = vec![1, 3, 6];
    let mut seen = Vec::new();
    while let Some(vb) = t.next(&v, &oid) {
        seen.push(vb.oid.to_string());
        oid = vb.oid.into_vec();
    }
    assert_eq!(
        seen,
        [
            "1.3.6.1.9.1.2.1",
            "1.3.6.1.9.1.2.2",
            "1.3.6.1.9.1.2.3",
            "1.3.6.1.9.1.3.1",
            "1.3.6.1.9.1.3.3"
        ]
    );
    assert!(t.next(&v, &[1, 3, 6, 1, 9, 2]).is_none());
    assert_eq!(t.get(&v, &[1, 3, 6, 1, 9, 1, 2, 2]), Value::Gauge32(20));
    assert_eq!(t.get(&v, &[1, 3, 6, 1, 9, 1, 3, 2]), Value::NoSuchInstance);
    assert_eq!(t.get(&v, &[1, 3, 6, 1, 9, 1, 1, 2]), Value::NoSuchObject);
    assert_eq!(t.get(&v, &[1, 3, 6, 1, 9, 1, 2, 7]), Value::NoSuchInstance);
    assert_eq!(t.get(&v, &[1, 3, 6, 1, 9, 1]), Value::NoSuchObject);
    assert_eq!(
        t.check_set(&v, &[1, 3, 6, 1, 9, 1, 3, 2], &Value::Integer(5)),
        Ok((2, 5))
    );
    assert_eq!(
        t.check_set(&v, &[1, 3, 6, 1, 9, 1, 3, 9], &Value::Integer(5)),
        Err(SetError::NoCreation)
    );
    assert_eq!(
        t.check_set(&v, &[1, 3, 6, 1, 9, 1, 3, 2], &Value::Null),
        Err(SetError::WrongType)
    );
    assert_eq!(
        t.check_set(&v, &[1, 3, 6, 1, 9, 1, 2, 2], &Value::Integer(5)),
        Err(SetError::NotWritable)
    );
}

#[test]
fn rows_say_what_each_index_shares_with_the_one_before() {
    let set = RowSet::from_pairs([
        (vec![1, 2, 3], 'a'),
        (vec![1, 2], 'b'),
        (vec![1, 2, 4, 0], 'c'),
        (vec![2], 'd'),
        (vec![1, 2, 3, 9], 'e'),
    ]);
    let mut seen = Vec::new();
    let stopped = set.each_from(0, |key, shared, row| {
        seen.push((key.to_vec(), shared, *row));
        true
    });
    assert!(!stopped);
    assert_eq!(
        seen,
        [
            (vec![1, 2], 0, 'b'),
            (vec![1, 2, 3], 2, 'a'),
            (vec![1, 2, 3, 9], 3, 'e'),
            (vec![1, 2, 4, 0], 2, 'c'),
            (vec![2], 0, 'd'),
        ]
    );
    // From the middle, and stopped by its callback.
    let mut from = Vec::new();
    assert!(set.each_from(2, |key, shared, _| {
        from.push((key.to_vec(), shared));
        from.len() < 2
    }));
    assert_eq!(from, [(vec![1, 2, 3, 9], 3), (vec![1, 2, 4, 0], 2)]);
    assert!(!set.each_from(9, |_, _, _| false));
}
