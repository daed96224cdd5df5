//! Tables of this crate as lists of [`Column`] declarations: one entry per
//! column gives its number (the generated OID constant's last
//! sub-identifier), MAX-ACCESS as served, its read, and for a writable
//! column its Set check. The value's type and range come from the MIB file
//! (generated [`crate::oids::ObjectType::check`]) and are checked before the
//! column's own check runs, so no module repeats them.

use snmp::table::{RowSet, Table};

use crate::core::util::oid;
use crate::Change;
use crate::View;

pub use snmp::table::{Column, ReadFn, ReadOctetsFn, WriteFn};

/// A column of a table over rows `R` of the view.
pub type Col<R> = Column<View, Change, R>;

/// A read-only column.
pub const fn ro<R>(oid: &'static [u32], read: ReadFn<View, R>) -> Col<R> {
    Column::read_only(oid, read)
}

/// A read-only OCTET STRING column whose cells write their octets into
/// the buffer a walk lends (no allocation per cell).
pub const fn ro_octets<R>(oid: &'static [u32], read: ReadOctetsFn<View, R>) -> Col<R> {
    Column::read_only_octets(oid, read)
}

/// A read-write column.
pub const fn rw<R>(
    oid: &'static [u32],
    read: ReadFn<View, R>,
    write: WriteFn<View, Change, R>,
) -> Col<R> {
    Column::read_write(oid, read, write)
}

/// A not-accessible (index) column.
pub const fn index<R>(oid: &'static [u32]) -> Col<R> {
    Column::index(oid)
}

/// The table at `entry` over the rows `rows` finds, serving exactly `cols`,
/// Sets checked against the MIB's syntax of each column.
pub fn table<R, F>(entry: &'static [u32], rows: F, cols: &[Col<R>]) -> Table<View, Change, R>
where
    R: 'static,
    F: for<'a> Fn(&'a View) -> &'a RowSet<R> + Send + Sync + 'static,
{
    Table::from_columns(oid(entry), rows, cols).with_syntax(crate::oids::syntax)
}
