//! What every MIB module builds on and that names no module: table columns,
//! the RowStatus adapter of the admin tables, small value helpers.

pub mod admin;
pub(crate) mod column;
pub(crate) mod util;
