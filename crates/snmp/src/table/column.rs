//! A table's columns, declared once as data.

use super::RowSet;
use crate::mib::{Access, SetError};
use crate::syntax::Syntax;
use crate::value::Value;

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

pub(super) struct Col<V, K, R> {
    pub(super) id: u32,
    pub(super) access: Access,
    /// The column's object, when declared with a [`Column`].
    pub(super) oid: Option<&'static [u32]>,
    pub(super) read: Option<ReadFn<V, R>>,
    pub(super) octets: Option<ReadOctetsFn<V, R>>,
    pub(super) check: Option<Box<CheckFn<V, K, R>>>,
    pub(super) syntax: Option<Syntax>,
}
