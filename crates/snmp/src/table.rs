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

use crate::mib::{MibObject, SetError, VarBindSink};
use crate::oid::{Oid, MAX_SUBIDS};
use crate::value::{Value, VarBind};

pub use crate::mib::Access;
pub use crate::syntax::Syntax;

pub mod check;
mod column;
mod rowset;
mod scalar;

pub use column::*;
pub use rowset::RowSet;
pub use scalar::{Scalar, ScalarCheckFn, ScalarGetFn, Scalars};

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
    /// sparse cells skipped) to `take`, with their OID and how many of its
    /// first sub-identifiers are those of the instance handed before (0
    /// for the first: see [`VarBindSink::push_after`]), until it answers
    /// false. The row position is searched once; the walk then steps
    /// through the rows, the OID built in place (entry and column once a
    /// column, the index each row), so no instance allocates.
    fn walk(&self, view: &V, oid: &[u32], mut take: impl FnMut(usize, &[u32], &Value) -> bool) {
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
        // What the next instance shares with the one handed before.
        let mut same = 0;
        // The one buffer an OCTET STRING column's cells are written into.
        let mut octets = Value::OctetString(Vec::new());
        for col in self.columns.get(start..).unwrap_or(&[]) {
            let pos = match after.take() {
                Some(idx) => rows.position_after(idx),
                None => 0,
            };
            if !col.access.readable() {
                continue;
            }
            if let Some(c) = name.get_mut(e.len()) {
                *c = col.id;
            }
            // What the next row's index shares with the index handed
            // before in this column (the least of the rows' words since;
            // nothing at the column's start).
            let mut key_same = 0;
            // Hands one instance to `take`: Some(false) once it wants no
            // more, None for an index too long to name. Only the index
            // octets that differ from the name before are copied.
            let mut give = |key_same: &mut usize, key: &[u32], value: &Value| {
                let k = (*key_same).min(key.len());
                let dst = name.get_mut(base + k..base + key.len())?;
                dst.copy_from_slice(key.get(k..).unwrap_or(&[]));
                let told = if same == base { base + k } else { same };
                let more = take(told, name.get(..base + key.len()).unwrap_or(&[]), value);
                same = base;
                *key_same = usize::MAX;
                Some(more)
            };
            // The cell function is chosen once a column, not once a cell.
            // An exception from it also means "absent". (The value is lent
            // where it was returned, not moved: a `Value` is 144 bytes.)
            let stopped = match (col.read, col.octets) {
                (Some(f), _) => rows.each_from(pos, |key, shared, row| {
                    key_same = key_same.min(shared);
                    match &f(view, row) {
                        Some(v) if !v.is_exception() => give(&mut key_same, key, v) != Some(false),
                        _ => true,
                    }
                }),
                (None, Some(f)) => rows.each_from(pos, |key, shared, row| {
                    key_same = key_same.min(shared);
                    // Each cell written into the same buffer, lent as a value.
                    let Value::OctetString(buf) = &mut octets else {
                        return true;
                    };
                    buf.clear();
                    f(view, row, buf).is_none() || give(&mut key_same, key, &octets) != Some(false)
                }),
                (None, None) => rows.each_from(pos, |key, shared, row| {
                    key_same = key_same.min(shared);
                    match &(self.cell)(view, row, col.id) {
                        Some(v) if !v.is_exception() => give(&mut key_same, key, v) != Some(false),
                        _ => true,
                    }
                }),
            };
            if stopped {
                return;
            }
            // The next column's first instance shares the entry.
            same = same.min(e.len());
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
        self.walk(view, oid, |_, name, value| {
            found = Some(VarBind::new(Oid::from_slice(name), value.clone()));
            false
        });
        found
    }

    fn next_into(&self, view: &V, oid: &[u32], sink: &mut dyn VarBindSink) {
        self.walk(view, oid, |same, name, value| {
            sink.push_after(same, name, value)
        });
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

#[cfg(test)]
mod tests;
