//! What every MIB module builds on and that names no module: the OIDs and
//! object types of the MIB files, the per-request view, publishing, the
//! persisted state's parts, table columns, the RowStatus adapter, small
//! value helpers. Generic where a module's type shows through (the view's
//! state and rows, the change a Set becomes): the crate root names those.

pub(crate) mod column;
pub mod node;
pub mod oids;
pub mod publish;
pub mod rowstatus;
pub mod state;
pub(crate) mod util;
pub mod value;
pub mod view;
