//! Tables of this crate as lists of [`Column`] declarations: one entry per
//! column gives its number (the generated OID constant's last
//! sub-identifier), MAX-ACCESS as served, its read, and for a writable
//! column its Set check. The value's type and range come from the MIB file
//! (generated [`crate::core::oids::ObjectType::check`]) and are checked
//! before the column's own check runs, so no module repeats them.
//!
//! Generic over the view `V` and the change `C` a Set becomes: the crate
//! root names both (its `Col` alias), this file names no module.

use snmp::table::{RowSet, Table};

use crate::core::oids;
use crate::core::util::oid;

pub use snmp::table::{Column, ReadFn, ReadOctetsFn, WriteFn};

/// A read-only column.
pub const fn ro<V, C, R>(oid: &'static [u32], read: ReadFn<V, R>) -> Column<V, C, R> {
    Column::read_only(oid, read)
}

/// A read-only OCTET STRING column whose cells write their octets into
/// the buffer a walk lends (no allocation per cell).
pub const fn ro_octets<V, C, R>(oid: &'static [u32], read: ReadOctetsFn<V, R>) -> Column<V, C, R> {
    Column::read_only_octets(oid, read)
}

/// A read-write column.
pub const fn rw<V, C, R>(
    oid: &'static [u32],
    read: ReadFn<V, R>,
    write: WriteFn<V, C, R>,
) -> Column<V, C, R> {
    Column::read_write(oid, read, write)
}

/// A not-accessible (index) column.
pub const fn index<V, C, R>(oid: &'static [u32]) -> Column<V, C, R> {
    Column::index(oid)
}

/// The table at `entry` over the rows `rows` finds, serving exactly `cols`,
/// Sets checked against the MIB's syntax of each column.
pub fn table<V, C, R, F>(entry: &'static [u32], rows: F, cols: &[Column<V, C, R>]) -> Table<V, C, R>
where
    V: 'static,
    C: 'static,
    R: 'static,
    F: for<'a> Fn(&'a V) -> &'a RowSet<R> + Send + Sync + 'static,
{
    Table::from_columns(oid(entry), rows, cols).with_syntax(oids::syntax)
}
