//! What every MIB module builds on and that names no module: the
//! per-request view, publishing, the persisted state's parts, table columns,
//! the RowStatus adapter of the admin tables, small value helpers. The
//! crate root gives them the modules' types.

pub mod admin;
pub(crate) mod column;
pub mod node;
pub mod publish;
pub mod rowstatus;
pub mod state;
pub(crate) mod util;
pub mod value;
pub mod view;
