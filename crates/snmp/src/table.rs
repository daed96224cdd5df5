//! The one generic table walker, and scalar groups.
//!
//! A MIB module builds a [`RowSet`] per table once per snapshot (rows sorted
//! by their encoded index) and keeps it inside its view `V`. A [`Table`]
//! then serves Get/GetNext/Set for that table in column-major order with one
//! binary search per request. [`Scalars`] does the same for scalar objects.
//!
//! A table is declared once, as a list of [`Column`]s: each gives the
//! column's OID (its number is the last sub-identifier), MAX-ACCESS, how a
//! cell reads and, for a writable column, its Set check. A column's
//! [`Syntax`] (type and range, from the MIB) is checked before its own check
//! ([`Table::with_syntax`]).
//!
//! ```
//! use snmp::index::{IndexCodec, Integer};
//! use snmp::mib::{MibObject, SetError};
//! use snmp::syntax::{Base, Syntax};
//! use snmp::table::{check, Column, RowSet, Scalars, Table};
//! use snmp::value::Value;
//! use snmp::oid::Oid;
//!
//! struct Port { num: i32, descr: String, mtu: i32 }
//! struct View { ports: RowSet<Port>, contact: String }
//! enum Change { Contact(Vec<u8>), Mtu(i32, i32) }
//!
//! let view = View {
//!     ports: RowSet::from_rows(
//!         vec![Port { num: 2, descr: "b".into(), mtu: 4096 },
//!              Port { num: 1, descr: "a".into(), mtu: 2048 }],
//!         |p, out| Integer::encode(&p.num, out)),
//!     contact: "ops".into(),
//! };
//! // ifEntry-like table: 1.3.6.1.2.1.2.2.1, columns 1 (index), 2, 4 (writable).
//! const COLS: &[Column<View, Change, Port>] = &[
//!     Column::read_only(&[1, 3, 6, 1, 2, 1, 2, 2, 1, 1], |_, p| Some(Value::Integer(p.num))),
//!     Column::read_only(&[1, 3, 6, 1, 2, 1, 2, 2, 1, 2], |_, p| {
//!         Some(Value::OctetString(p.descr.clone().into_bytes()))
//!     }),
//!     Column::read_write(
//!         &[1, 3, 6, 1, 2, 1, 2, 2, 1, 4],
//!         |_, p| Some(Value::Integer(p.mtu)),
//!         |_, p, _index, value| Ok(Change::Mtu(p.num, check::integer(value)?)),
//!     ),
//! ];
//! let table = Table::from_columns("1.3.6.1.2.1.2.2.1".parse().unwrap(), |v: &View| &v.ports, COLS)
//!     .with_syntax(|_oid| Some(Syntax { base: Base::Integer, ranges: &[(256, 4096)] }));
//! let mtu: Oid = "1.3.6.1.2.1.2.2.1.4.1".parse().unwrap();
//! assert!(matches!(table.check_set(&view, mtu.as_slice(), &Value::Integer(9000)),
//!                  Err(SetError::WrongValue)));
//! let next = table.next(&view, &"1.3.6.1.2.1.2.2.1.2.1".parse::<Oid>().unwrap().as_slice())
//!     .unwrap();
//! assert_eq!(next.oid.to_string(), "1.3.6.1.2.1.2.2.1.2.2");
//!
//! // system-group-like scalars (use `into_objects` when a table shares the root).
//! let system = Scalars::<View, Change>::new("1.3.6.1.2.1.1".parse().unwrap())
//!     .read_only(1, |_v| Value::OctetString(b"ibsnmpd".to_vec()))
//!     .read_write(4, |v| Value::OctetString(v.contact.clone().into_bytes()), |_v, value| {
//!         Ok(Change::Contact(check::octets(value, 0..=255)?.to_vec()))
//!     });
//! assert_eq!(system.get(&view, &[1, 3, 6, 1, 2, 1, 1, 4, 0]),
//!            Value::OctetString(b"ops".to_vec()));
//! assert!(matches!(system.check_set(&view, &[1, 3, 6, 1, 2, 1, 1, 1, 0], &Value::Null),
//!                  Err(SetError::NotWritable)));
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use crate::mib::{MibObject, SetError, VarBindSink};
use crate::oid::{Oid, MAX_SUBIDS};
use crate::value::{Value, VarBind};

pub use crate::mib::Access;
pub use crate::syntax::Syntax;

// ------------------------------------------------------------------ RowSet

/// Rows of one table sorted by their encoded index, for O(log n) lookup.
///
/// Indexes are stored back to back in one vector (no allocation per row).
#[derive(Clone, Debug)]
pub struct RowSet<R> {
    keys: Vec<u32>,
    /// `ends[i]` is the end of row i's index in `keys`.
    ends: Vec<usize>,
    rows: Vec<R>,
}

impl<R> Default for RowSet<R> {
    fn default() -> Self {
        RowSet {
            keys: Vec::new(),
            ends: Vec::new(),
            rows: Vec::new(),
        }
    }
}

fn sub(keys: &[u32], a: usize, b: usize) -> &[u32] {
    keys.get(a..b).unwrap_or(&[])
}

impl<R> RowSet<R> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a set from rows and a function appending each row's encoded
    /// index (usually an [`IndexCodec`](crate::index::IndexCodec)'s
    /// `encode`). Rows may come in any order; of rows with equal indexes
    /// only the first is kept.
    pub fn from_rows<I, F>(rows: I, mut index: F) -> Self
    where
        I: IntoIterator<Item = R>,
        F: FnMut(&R, &mut Vec<u32>),
    {
        let mut tmp = Vec::new();
        let mut entries: Vec<(usize, usize, R)> = Vec::new();
        for r in rows {
            let a = tmp.len();
            index(&r, &mut tmp);
            entries.push((a, tmp.len(), r));
        }
        Self::from_entries(tmp, entries)
    }

    /// Builds a set from (encoded index, row) pairs in any order.
    pub fn from_pairs<I>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (Vec<u32>, R)>,
    {
        let mut tmp = Vec::new();
        let mut entries = Vec::new();
        for (k, r) in pairs {
            let a = tmp.len();
            tmp.extend_from_slice(&k);
            entries.push((a, tmp.len(), r));
        }
        Self::from_entries(tmp, entries)
    }

    fn from_entries(tmp: Vec<u32>, mut entries: Vec<(usize, usize, R)>) -> Self {
        let sorted = entries.windows(2).all(|w| match w {
            [x, y] => sub(&tmp, x.0, x.1) < sub(&tmp, y.0, y.1),
            _ => true,
        });
        if !sorted {
            entries.sort_by(|x, y| sub(&tmp, x.0, x.1).cmp(sub(&tmp, y.0, y.1)));
        }
        let mut set = RowSet {
            keys: Vec::with_capacity(tmp.len()),
            ends: Vec::with_capacity(entries.len()),
            rows: Vec::with_capacity(entries.len()),
        };
        for (a, b, r) in entries {
            let k = sub(&tmp, a, b);
            if set.ends.last().is_some() && set.key(set.len() - 1) == k {
                continue;
            }
            set.keys.extend_from_slice(k);
            set.ends.push(set.keys.len());
            set.rows.push(r);
        }
        set
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The encoded index of row `i` (empty when out of range).
    pub fn key(&self, i: usize) -> &[u32] {
        let a = if i == 0 {
            0
        } else {
            self.ends.get(i - 1).copied().unwrap_or(0)
        };
        let b = self.ends.get(i).copied().unwrap_or(a);
        sub(&self.keys, a, b)
    }

    /// Row `i` in index order, with its encoded index.
    pub fn at(&self, i: usize) -> Option<(&[u32], &R)> {
        self.rows.get(i).map(|r| (self.key(i), r))
    }

    /// Position of the first row whose index is not less than `index`
    /// (or `len()`), and whether it is equal.
    fn search(&self, index: &[u32]) -> (usize, bool) {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(index) {
                Ordering::Less => lo = mid + 1,
                Ordering::Equal => return (mid, true),
                Ordering::Greater => hi = mid,
            }
        }
        (lo, false)
    }

    /// The row with exactly this encoded index.
    pub fn get(&self, index: &[u32]) -> Option<&R> {
        match self.search(index) {
            (i, true) => self.rows.get(i),
            _ => None,
        }
    }

    /// Position of the first row whose index is strictly greater than `index`.
    pub fn position_after(&self, index: &[u32]) -> usize {
        match self.search(index) {
            (i, true) => i + 1,
            (i, false) => i,
        }
    }

    /// The first row whose index is strictly greater than `index`.
    pub fn first_after(&self, index: &[u32]) -> Option<(&[u32], &R)> {
        self.at(self.position_after(index))
    }

    pub fn first(&self) -> Option<(&[u32], &R)> {
        self.at(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u32], &R)> + '_ {
        (0..self.len()).filter_map(move |i| self.at(i))
    }

    pub fn rows(&self) -> &[R] {
        &self.rows
    }
}

// ------------------------------------------------------------------- Table

/// `&V -> &RowSet<R>`: where a table's rows live inside the view.
pub type RowsFn<V, R> = dyn for<'a> Fn(&'a V) -> &'a RowSet<R> + Send + Sync;
/// `(view, row, column) -> value`; `None` is a sparse (absent) cell.
pub type CellFn<V, R> = dyn Fn(&V, &R, u32) -> Option<Value> + Send + Sync;
/// Phase-1 Set check of one cell: `(view, row, encoded index, new value)`.
pub type CheckFn<V, K, R> = dyn Fn(&V, &R, &[u32], &Value) -> Result<K, SetError> + Send + Sync;
/// A declared column's value in one row; `None` is a sparse (absent) cell.
pub type ReadFn<V, R> = fn(&V, &R) -> Option<Value>;
/// A declared OCTET STRING column's value in one row, appended to an empty
/// buffer; `None` is a sparse (absent) cell. A walk lends one buffer to
/// every cell of the column, so its cells allocate nothing.
pub type ReadOctetsFn<V, R> = fn(&V, &R, &mut Vec<u8>) -> Option<()>;
/// A declared column's phase-1 Set check, called once the value passed the
/// column's [`Syntax`]: `(view, row, encoded index, new value)`.
pub type WriteFn<V, K, R> = fn(&V, &R, &[u32], &Value) -> Result<K, SetError>;

/// One column, declared once: its OID (the column number is the last
/// sub-identifier), MAX-ACCESS as served, how a cell reads, and for a
/// writable column how a Set is checked. A table is a slice of these
/// ([`Table::from_columns`]); constants, so a MIB module lists them as data.
pub struct Column<V, K, R> {
    pub oid: &'static [u32],
    pub access: Access,
    pub read: Option<ReadFn<V, R>>,
    /// Instead of `read`, for an OCTET STRING column.
    pub octets: Option<ReadOctetsFn<V, R>>,
    pub write: Option<WriteFn<V, K, R>>,
}

impl<V, K, R> Column<V, K, R> {
    /// A read-only column.
    pub const fn read_only(oid: &'static [u32], read: ReadFn<V, R>) -> Self {
        Column {
            oid,
            access: Access::ReadOnly,
            read: Some(read),
            octets: None,
            write: None,
        }
    }

    /// A read-only OCTET STRING column whose cells write their octets
    /// ([`ReadOctetsFn`]).
    pub const fn read_only_octets(oid: &'static [u32], read: ReadOctetsFn<V, R>) -> Self {
        Column {
            oid,
            access: Access::ReadOnly,
            read: None,
            octets: Some(read),
            write: None,
        }
    }

    /// A read-write column with its Set check.
    pub const fn read_write(
        oid: &'static [u32],
        read: ReadFn<V, R>,
        write: WriteFn<V, K, R>,
    ) -> Self {
        Column {
            oid,
            access: Access::ReadWrite,
            read: Some(read),
            octets: None,
            write: Some(write),
        }
    }

    /// A not-accessible column (an index object the entry lists).
    pub const fn index(oid: &'static [u32]) -> Self {
        Column {
            oid,
            access: Access::NotAccessible,
            read: None,
            octets: None,
            write: None,
        }
    }

    /// The column number: the OID's last sub-identifier.
    pub const fn id(&self) -> u32 {
        match self.oid {
            [.., last] => *last,
            [] => 0,
        }
    }
}

/// The highest column number of `cols` (0 for none): where a walk of the
/// table ends.
pub fn last_column<V, K, R>(cols: &[Column<V, K, R>]) -> u32 {
    cols.iter().map(Column::id).max().unwrap_or(0)
}

struct Col<V, K, R> {
    id: u32,
    access: Access,
    /// The column's object, when declared with a [`Column`].
    oid: Option<&'static [u32]>,
    read: Option<ReadFn<V, R>>,
    octets: Option<ReadOctetsFn<V, R>>,
    check: Option<Box<CheckFn<V, K, R>>>,
    syntax: Option<Syntax>,
}

/// Whether a table's writable columns take Sets in this view.
pub type GateFn<V> = fn(&V) -> bool;

/// A conceptual table served from a [`RowSet`] in the view.
///
/// Get: `entry.column.index`; GetNext: column-major (all rows of the first
/// readable column, then the next column), sparse cells skipped.
///
/// A Set is checked in RFC 3416's order: the column must be writable (and
/// the table's gate open, [`Table::writable_if`]: else notWritable), the
/// row exist (noCreation), the value match the column's [`Syntax`]
/// (wrongType, wrongLength, wrongValue); then the column's own check runs.
pub struct Table<V, K, R> {
    entry: Oid,
    columns: Vec<Col<V, K, R>>,
    rows: Box<RowsFn<V, R>>,
    cell: Box<CellFn<V, R>>,
    gate: Option<GateFn<V>>,
}

impl<V, K, R> Table<V, K, R> {
    /// A table whose entry (the `xxxEntry` object) is `entry`. Add columns
    /// with [`Table::read_only`], [`Table::read_write`], [`Table::column`].
    pub fn new<F, G>(entry: Oid, rows: F, cell: G) -> Self
    where
        F: for<'a> Fn(&'a V) -> &'a RowSet<R> + Send + Sync + 'static,
        G: Fn(&V, &R, u32) -> Option<Value> + Send + Sync + 'static,
    {
        Table {
            entry,
            columns: Vec::new(),
            rows: Box::new(rows),
            cell: Box::new(cell),
            gate: None,
        }
    }

    /// A table serving exactly the declared `cols`.
    pub fn from_columns<F>(entry: Oid, rows: F, cols: &[Column<V, K, R>]) -> Self
    where
        F: for<'a> Fn(&'a V) -> &'a RowSet<R> + Send + Sync + 'static,
        V: 'static,
        K: 'static,
        R: 'static,
    {
        let mut t = Self::new(entry, rows, |_, _, _| None);
        for c in cols {
            t.insert(Col {
                id: c.id(),
                access: c.access,
                oid: Some(c.oid),
                read: c.read,
                octets: c.octets,
                check: c.write.map(|w| Box::new(w) as Box<CheckFn<V, K, R>>),
                syntax: None,
            });
        }
        t
    }

    /// Gives every declared writable column the syntax `of` its OID says
    /// (checked before the column's own check).
    pub fn with_syntax(mut self, of: impl Fn(&[u32]) -> Option<Syntax>) -> Self {
        for c in &mut self.columns {
            if c.access.writable() {
                c.syntax = c.oid.and_then(&of);
            }
        }
        self
    }

    /// Writes are taken only while `gate` says so (else notWritable): a
    /// table whose columns are writable by configuration.
    pub fn writable_if(mut self, gate: GateFn<V>) -> Self {
        self.gate = Some(gate);
        self
    }

    fn insert(&mut self, c: Col<V, K, R>) {
        match self.columns.binary_search_by_key(&c.id, |x| x.id) {
            Ok(i) => {
                if let Some(slot) = self.columns.get_mut(i) {
                    *slot = c;
                }
            }
            Err(i) => self.columns.insert(i, c),
        }
    }

    /// Declares a column with the given MAX-ACCESS and no Set check
    /// (Sets of it give notWritable).
    pub fn column(mut self, id: u32, access: Access) -> Self {
        self.insert(Col {
            id,
            access,
            oid: None,
            read: None,
            octets: None,
            check: None,
            syntax: None,
        });
        self
    }

    /// Declares read-only columns.
    pub fn read_only(mut self, ids: &[u32]) -> Self {
        for &id in ids {
            self = self.column(id, Access::ReadOnly);
        }
        self
    }

    /// Declares a read-write column with its phase-1 check.
    pub fn read_write<C>(mut self, id: u32, check: C) -> Self
    where
        C: Fn(&V, &R, &[u32], &Value) -> Result<K, SetError> + Send + Sync + 'static,
    {
        self.insert(Col {
            id,
            access: Access::ReadWrite,
            oid: None,
            read: None,
            octets: None,
            check: Some(Box::new(check)),
            syntax: None,
        });
        self
    }

    /// One cell: the column's declared read, else the table's cell function.
    fn read(&self, view: &V, row: &R, col: &Col<V, K, R>) -> Option<Value> {
        match (col.read, col.octets) {
            (Some(f), _) => f(view, row),
            (None, Some(f)) => {
                let mut b = Vec::new();
                f(view, row, &mut b).map(|()| Value::OctetString(b))
            }
            (None, None) => (self.cell)(view, row, col.id),
        }
    }

    pub fn entry(&self) -> &Oid {
        &self.entry
    }

    fn find_column(&self, id: u32) -> Option<&Col<V, K, R>> {
        self.columns
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .and_then(|i| self.columns.get(i))
    }

    /// Hands the instances after `oid` in GetNext order (column-major,
    /// sparse cells skipped) to `take`, with their OID, until it answers
    /// false. The row position is searched once; the walk then steps
    /// through the rows, the OID built in place (entry and column once a
    /// column, the index each row), so no instance allocates.
    fn walk(&self, view: &V, oid: &[u32], mut take: impl FnMut(&[u32], &Value) -> bool) {
        let e = self.entry.as_slice();
        let (start, mut after) = match oid.strip_prefix(e) {
            Some(rest) => match rest.split_first() {
                None => (0, None),
                Some((&c, idx)) => {
                    let pos = self.columns.partition_point(|col| col.id < c);
                    match self.columns.get(pos) {
                        Some(col) if col.id == c => (pos, Some(idx)),
                        _ => (pos, None),
                    }
                }
            },
            None if oid < e => (0, None),
            None => return,
        };
        let rows = (self.rows)(view);
        // The instance's name: entry, column, index (an SNMP name has at
        // most 128 sub-identifiers; an instance longer than that is none).
        let mut name = [0u32; MAX_SUBIDS];
        let base = e.len() + 1;
        match name.get_mut(..e.len()) {
            Some(dst) if base <= MAX_SUBIDS => dst.copy_from_slice(e),
            _ => return,
        }
        // The one buffer an OCTET STRING column's cells are written into.
        let mut octets = Vec::new();
        for col in self.columns.get(start..).unwrap_or(&[]) {
            let mut pos = match after.take() {
                Some(idx) => rows.position_after(idx),
                None => 0,
            };
            if !col.access.readable() {
                continue;
            }
            if let Some(c) = name.get_mut(e.len()) {
                *c = col.id;
            }
            // Hands one instance to `take`: Some(false) once it wants no
            // more, None for an index too long to name.
            let mut give = |key: &[u32], value: &Value| {
                let dst = name.get_mut(base..base + key.len())?;
                dst.copy_from_slice(key);
                Some(take(name.get(..base + key.len()).unwrap_or(&[]), value))
            };
            if let Some(f) = col.octets {
                // Each cell written into the same buffer, lent as a value.
                let mut cell = Value::OctetString(std::mem::take(&mut octets));
                while let Some((key, row)) = rows.at(pos) {
                    pos += 1;
                    if let Value::OctetString(buf) = &mut cell {
                        buf.clear();
                        if f(view, row, buf).is_none() {
                            continue;
                        }
                    }
                    if give(key, &cell) == Some(false) {
                        return;
                    }
                }
                if let Value::OctetString(buf) = cell {
                    octets = buf;
                }
                continue;
            }
            while let Some((key, row)) = rows.at(pos) {
                pos += 1;
                // An exception from the cell function also means "absent".
                // (The value is lent where it was returned, not moved: a
                // `Value` is 144 bytes.)
                let cell = self.read(view, row, col);
                let Some(value) = cell.as_ref().filter(|v| !v.is_exception()) else {
                    continue;
                };
                if give(key, value) == Some(false) {
                    return;
                }
            }
        }
    }
}

impl<V, K, R> MibObject<V, K> for Table<V, K, R> {
    fn root(&self) -> &Oid {
        &self.entry
    }

    fn declared_columns(&self) -> Vec<(u32, Access)> {
        self.columns.iter().map(|c| (c.id, c.access)).collect()
    }

    fn get(&self, view: &V, oid: &[u32]) -> Value {
        let Some(rest) = oid.strip_prefix(self.entry.as_slice()) else {
            return Value::NoSuchObject;
        };
        let Some((&c, index)) = rest.split_first() else {
            return Value::NoSuchObject;
        };
        let col = match self.find_column(c) {
            Some(col) if col.access.readable() => col,
            _ => return Value::NoSuchObject,
        };
        (self.rows)(view)
            .get(index)
            .and_then(|r| self.read(view, r, col))
            .unwrap_or(Value::NoSuchInstance)
    }

    fn next(&self, view: &V, oid: &[u32]) -> Option<VarBind> {
        let mut found = None;
        self.walk(view, oid, |name, value| {
            found = Some(VarBind::new(Oid::from_slice(name), value.clone()));
            false
        });
        found
    }

    fn next_into(&self, view: &V, oid: &[u32], sink: &mut dyn VarBindSink) {
        self.walk(view, oid, |name, value| sink.push(name, value));
    }

    fn check_set(&self, view: &V, oid: &[u32], value: &Value) -> Result<K, SetError> {
        let rest = oid
            .strip_prefix(self.entry.as_slice())
            .ok_or(SetError::NotWritable)?;
        let (&c, index) = rest.split_first().ok_or(SetError::NotWritable)?;
        let col = self.find_column(c).ok_or(SetError::NotWritable)?;
        let check = match (&col.check, col.access.writable()) {
            (Some(check), true) => check,
            _ => return Err(SetError::NotWritable),
        };
        if self.gate.is_some_and(|open| !open(view)) {
            return Err(SetError::NotWritable);
        }
        let row = (self.rows)(view).get(index).ok_or(SetError::NoCreation)?;
        if let Some(syntax) = &col.syntax {
            syntax.check(value)?;
        }
        check(view, row, index, value)
    }
}

// ----------------------------------------------------------------- Scalars

/// Read of a scalar; an exception value (e.g. `NoSuchObject`) means absent.
pub type ScalarGetFn<V> = dyn Fn(&V) -> Value + Send + Sync;
/// Phase-1 Set check of a scalar.
pub type ScalarCheckFn<V, K> = dyn Fn(&V, &Value) -> Result<K, SetError> + Send + Sync;

/// One scalar object (instance `oid.0`); root is the object's OID.
pub struct Scalar<V, K> {
    oid: Oid,
    instance: Oid,
    get: Box<ScalarGetFn<V>>,
    check: Option<Box<ScalarCheckFn<V, K>>>,
}

impl<V, K> Scalar<V, K> {
    pub fn read_only<G>(oid: Oid, get: G) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
    {
        Scalar {
            instance: oid.join(&[0]),
            oid,
            get: Box::new(get),
            check: None,
        }
    }

    pub fn read_write<G, C>(oid: Oid, get: G, check: C) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
        C: Fn(&V, &Value) -> Result<K, SetError> + Send + Sync + 'static,
    {
        let mut s = Self::read_only(oid, get);
        s.check = Some(Box::new(check));
        s
    }
}

impl<V, K> MibObject<V, K> for Scalar<V, K> {
    fn root(&self) -> &Oid {
        &self.oid
    }

    fn get(&self, view: &V, oid: &[u32]) -> Value {
        if oid == self.instance.as_slice() {
            match (self.get)(view) {
                v if v.is_exception() => Value::NoSuchObject,
                v => v,
            }
        } else if oid.starts_with(self.oid.as_slice()) {
            // The object exists; the name is not its instance (RFC 3416
            // 4.2.1, also for the object's own OID without `.0`, as net-snmp).
            Value::NoSuchInstance
        } else {
            Value::NoSuchObject
        }
    }

    fn next(&self, view: &V, oid: &[u32]) -> Option<VarBind> {
        if oid >= self.instance.as_slice() {
            return None;
        }
        let v = (self.get)(view);
        (!v.is_exception()).then(|| VarBind::new(self.instance.clone(), v))
    }

    fn check_set(&self, view: &V, oid: &[u32], value: &Value) -> Result<K, SetError> {
        let check = self.check.as_ref().ok_or(SetError::NotWritable)?;
        if oid != self.instance.as_slice() {
            return Err(SetError::NoCreation);
        }
        check(view, value)
    }
}

/// A group of scalars under one root (e.g. the snmp group). When a table
/// lives under the same root (sysORTable under system), register
/// [`Scalars::into_objects`] instead, one object per scalar, so that
/// registrations do not overlap.
pub struct Scalars<V, K> {
    root: Oid,
    items: Vec<(u32, Scalar<V, K>)>,
}

impl<V, K> Scalars<V, K> {
    pub fn new(root: Oid) -> Self {
        Scalars {
            root,
            items: Vec::new(),
        }
    }

    fn insert(mut self, sub: u32, s: Scalar<V, K>) -> Self {
        match self.items.binary_search_by_key(&sub, |x| x.0) {
            Ok(i) => {
                if let Some(slot) = self.items.get_mut(i) {
                    *slot = (sub, s);
                }
            }
            Err(i) => self.items.insert(i, (sub, s)),
        }
        self
    }

    /// A read-only scalar `root.sub` (instance `root.sub.0`).
    pub fn read_only<G>(self, sub: u32, get: G) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
    {
        let oid = self.root.join(&[sub]);
        self.insert(sub, Scalar::read_only(oid, get))
    }

    /// A read-write scalar `root.sub` with its phase-1 check.
    pub fn read_write<G, C>(self, sub: u32, get: G, check: C) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
        C: Fn(&V, &Value) -> Result<K, SetError> + Send + Sync + 'static,
    {
        let oid = self.root.join(&[sub]);
        self.insert(sub, Scalar::read_write(oid, get, check))
    }

    /// One registrable object per scalar.
    pub fn into_objects(self) -> Vec<Arc<dyn MibObject<V, K>>>
    where
        V: 'static,
        K: 'static,
    {
        self.items
            .into_iter()
            .map(|(_, s)| Arc::new(s) as Arc<dyn MibObject<V, K>>)
            .collect()
    }

    fn item(&self, oid: &[u32]) -> Option<&Scalar<V, K>> {
        let c = *oid.strip_prefix(self.root.as_slice())?.first()?;
        let i = self.items.binary_search_by_key(&c, |x| x.0).ok()?;
        self.items.get(i).map(|x| &x.1)
    }
}

impl<V, K> MibObject<V, K> for Scalars<V, K> {
    fn root(&self) -> &Oid {
        &self.root
    }

    fn get(&self, view: &V, oid: &[u32]) -> Value {
        match self.item(oid) {
            Some(s) => s.get(view, oid),
            None => Value::NoSuchObject,
        }
    }

    fn next(&self, view: &V, oid: &[u32]) -> Option<VarBind> {
        let start = match oid.strip_prefix(self.root.as_slice()) {
            Some(rest) => match rest.first() {
                Some(&c) => self.items.partition_point(|x| x.0 < c),
                None => 0,
            },
            None if oid < self.root.as_slice() => 0,
            None => return None,
        };
        self.items
            .get(start..)
            .unwrap_or(&[])
            .iter()
            .find_map(|(_, s)| s.next(view, oid))
    }

    fn check_set(&self, view: &V, oid: &[u32], value: &Value) -> Result<K, SetError> {
        self.item(oid)
            .ok_or(SetError::NotWritable)?
            .check_set(view, oid, value)
    }
}

// ------------------------------------------------------------------- check

/// Helpers for phase-1 Set checks, giving the RFC 3416 error for each
/// kind of mismatch.
pub mod check {
    use crate::mib::SetError;
    use crate::value::Value;
    use std::ops::RangeInclusive;

    /// An INTEGER (else wrongType).
    pub fn integer(v: &Value) -> Result<i32, SetError> {
        match v {
            Value::Integer(i) => Ok(*i),
            _ => Err(SetError::WrongType),
        }
    }

    /// An INTEGER within `range` (else wrongType / wrongValue).
    pub fn integer_in(v: &Value, range: RangeInclusive<i32>) -> Result<i32, SetError> {
        let i = integer(v)?;
        if range.contains(&i) {
            Ok(i)
        } else {
            Err(SetError::WrongValue)
        }
    }

    /// An enumerated INTEGER whose value is one of `allowed`.
    pub fn enumerated(v: &Value, allowed: &[i32]) -> Result<i32, SetError> {
        let i = integer(v)?;
        if allowed.contains(&i) {
            Ok(i)
        } else {
            Err(SetError::WrongValue)
        }
    }

    /// An OCTET STRING whose length is in `len` (else wrongType / wrongLength).
    pub fn octets(v: &Value, len: RangeInclusive<usize>) -> Result<&[u8], SetError> {
        match v {
            Value::OctetString(b) if len.contains(&b.len()) => Ok(b),
            Value::OctetString(_) => Err(SetError::WrongLength),
            _ => Err(SetError::WrongType),
        }
    }

    /// A DisplayString (RFC 2579: NVT ASCII, at most `max` octets; control
    /// characters other than CR, LF, TAB, NUL give wrongValue).
    pub fn display_string(v: &Value, max: usize) -> Result<String, SetError> {
        let b = octets(v, 0..=max)?;
        if b.iter()
            .all(|&c| (0x20..0x7f).contains(&c) || matches!(c, b'\r' | b'\n' | b'\t' | 0))
        {
            Ok(String::from_utf8_lossy(b).into_owned())
        } else {
            Err(SetError::WrongValue)
        }
    }

    /// A Gauge32/Unsigned32.
    pub fn unsigned32(v: &Value) -> Result<u32, SetError> {
        match v {
            Value::Gauge32(u) => Ok(*u),
            _ => Err(SetError::WrongType),
        }
    }

    pub fn counter32(v: &Value) -> Result<u32, SetError> {
        match v {
            Value::Counter32(u) => Ok(*u),
            _ => Err(SetError::WrongType),
        }
    }

    pub fn counter64(v: &Value) -> Result<u64, SetError> {
        match v {
            Value::Counter64(u) => Ok(*u),
            _ => Err(SetError::WrongType),
        }
    }

    pub fn timeticks(v: &Value) -> Result<u32, SetError> {
        match v {
            Value::TimeTicks(u) => Ok(*u),
            _ => Err(SetError::WrongType),
        }
    }
}

#[cfg(test)]
mod tests {
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
}
