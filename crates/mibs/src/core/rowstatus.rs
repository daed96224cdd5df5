//! The one RowStatus table adapter (RFC 2579) of this crate: a read-create
//! table over rows the view holds, for the administrative tables
//! (`modules::admin`) and IB-SM-MIB's request tables alike. What differs
//! between them (where the rows live, how a cell reads, which Sets a table
//! refuses on its own, how a PDU's Sets become a change) is a
//! [`RowStatusKind`]; the entry, the columns, the walk, the Get and the
//! shared Set checks are here.
//! The kind names the view and the change type, so this file names none.

use snmp::mib::{MibObject, SetError, SetItem};
use snmp::oid::Oid;
use snmp::rowstatus::{ColumnSet, Row, RowTable};
use snmp::table::Access;
use snmp::value::{Value, VarBind};

/// What one RowStatus table is.
pub trait RowStatusKind: Send + Sync + 'static {
    /// A row as the table stores it.
    type Row: Clone;
    /// What a request reads (the crate root's `View`).
    type View;
    /// What a checked Set becomes (the crate root's `Change`).
    type Change;
    /// The rows in the view (None: none were ever made).
    fn rows<'a>(&self, view: &'a Self::View) -> Option<&'a RowTable<Self::Row>>;
    /// One cell of a row (None: no value).
    fn cell(
        &self,
        view: &Self::View,
        index: &[u32],
        row: &Row<Self::Row>,
        column: u32,
    ) -> Option<Value>;
    /// The table's own refusals of a Set of a writable column, before the
    /// PDU's Sets are checked together.
    fn admit(
        &self,
        view: &Self::View,
        set: &SetItem<'_>,
        column: u32,
        index: &[u32],
    ) -> Result<(), SetError>;
    /// A PDU's Sets of this table checked together (RowStatus rules) into
    /// one change.
    fn check(
        &self,
        view: &Self::View,
        cols: &[ColumnSet<'_>],
    ) -> Result<Self::Change, (usize, SetError)>;
}

/// A RowStatus table as a MIB object.
pub struct RowStatusTable<K> {
    /// The entry (`xxxEntry`) OID.
    root: Oid,
    /// Every accessible column with its MAX-ACCESS, in column order.
    columns: Vec<(u32, Access)>,
    kind: K,
}

impl<K> RowStatusTable<K> {
    /// The table at `entry` serving `columns` (accessible ones, each with
    /// its MAX-ACCESS, in column order).
    pub fn of(entry: &[u32], columns: Vec<(u32, Access)>, kind: K) -> Self {
        RowStatusTable {
            root: Oid::from_slice(entry),
            columns,
            kind,
        }
    }
}

impl<K: RowStatusKind> RowStatusTable<K> {
    fn declared(&self, column: u32) -> Option<Access> {
        self.columns
            .iter()
            .find(|(c, _)| *c == column)
            .map(|(_, a)| *a)
    }
}

impl<K: RowStatusKind> MibObject<K::View, K::Change> for RowStatusTable<K> {
    fn root(&self) -> &Oid {
        &self.root
    }

    fn get(&self, view: &K::View, o: &[u32]) -> Value {
        let Some([c, index @ ..]) = o.strip_prefix(self.root.as_slice()) else {
            return Value::NoSuchObject;
        };
        if !self.declared(*c).is_some_and(Access::readable) {
            return Value::NoSuchObject;
        }
        self.kind
            .rows(view)
            .and_then(|rows| rows.get(index))
            .and_then(|r| self.kind.cell(view, index, r, *c))
            .unwrap_or(Value::NoSuchInstance)
    }

    fn next(&self, view: &K::View, o: &[u32]) -> Option<VarBind> {
        let readable = self.columns.iter().filter(|(_, a)| a.readable());
        snmp::rowstatus::next_cell(
            self.root.as_slice(),
            readable.map(|(c, _)| *c),
            self.kind.rows(view)?.rows(),
            o,
            |k, r, c| self.kind.cell(view, k, r, c),
        )
    }

    fn check_set(&self, view: &K::View, o: &[u32], value: &Value) -> Result<K::Change, SetError> {
        snmp::mib::check_one(self, view, o, value)
    }

    fn check_set_batch(
        &self,
        view: &K::View,
        sets: &[SetItem<'_>],
    ) -> Result<Vec<(usize, K::Change)>, (usize, SetError)> {
        let mut cols = Vec::with_capacity(sets.len());
        for s in sets {
            let refuse = |e| (s.position, e);
            let Some([column, index @ ..]) = s.oid.strip_prefix(self.root.as_slice()) else {
                return Err(refuse(SetError::NoCreation));
            };
            match self.declared(*column) {
                Some(a) if a.writable() => {}
                Some(_) => return Err(refuse(SetError::NotWritable)),
                None => return Err(refuse(SetError::NoCreation)),
            }
            self.kind.admit(view, s, *column, index).map_err(refuse)?;
            cols.push(ColumnSet {
                position: s.position,
                index,
                column: *column,
                value: s.value,
            });
        }
        let change = self.kind.check(view, &cols)?;
        Ok(vec![(sets.first().map_or(0, |s| s.position), change)])
    }

    fn declared_columns(&self) -> Vec<(u32, Access)> {
        self.columns.to_vec()
    }
}
