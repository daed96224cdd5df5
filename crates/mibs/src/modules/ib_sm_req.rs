//! IB-SM-MIB request tables (mibs/IB-SM-MIB, ibSmPathInfo, ibSmMultiPathInfo
//! and ibSmTraceInfo): a manager asks the subnet which paths join two ports
//! (ibSmPathReqTable -> ibSmPathResultTable), which paths join two sets of
//! ports (ibSmMultiPathReqTable -> ibSmMultiPathResultTable, `multipath`)
//! and which nodes a path crosses
//! (ibSmTraceReqTable -> ibSmTraceResultTable), as RowStatus sessions
//! (RFC 2579, [`snmp::rowstatus`]) indexed by the subnet prefix and a session
//! id the manager picks.
//!
//! The protocol (docs/ib-sm.md, "Request tables"):
//! - A request row is created and filled (one Set PDU or several); when it
//!   becomes active the answer is computed off the request path (the Set
//!   returns at once) by the daemon's runner ([`Sessions::jobs_after`]).
//! - Result rows appear under the same session id when the answer is in.
//!   While the request is active and has no result rows it is pending; when
//!   the answer fails (no SA, SA error, no route) or holds no record, the
//!   agent sets the request notInService: active again retries.
//! - A trace names its path by the ibSmPathReqTable row with the same index
//!   (its source and destination LIDs or GIDs); activating a trace without
//!   one is inconsistentValue. Hops come from the switches' forwarding
//!   tables (OpenSM has no TraceRecord), as ibtracert follows them.
//! - Destroying a request removes its results; sessions no Set touched for
//!   `request_session_timeout` are aged out; at most `request_sessions_max`
//!   live per table (more: resourceUnavailable). Sessions are runtime state
//!   and do not survive a restart.
//!
//! Parts: `store` (sessions and answers, agent state in the view), `tables` (the MIB
//! objects), `path`, `multipath`, `trace` (each request's columns and
//! how it is answered from a snapshot).

use std::time::{Duration, Instant};

use snmp::rowstatus::RowData;
use snmp::value::Value;

use crate::core::oids::ib_sm_mib as o;
use crate::core::util::last;

/// A request row's creation time accessors ([`ReqKind`]), over its
/// `created` field: written once for the three request kinds.
macro_rules! created_field {
    () => {
        fn created(&self) -> Instant {
            self.created
        }
        fn set_created(&mut self, t: Instant) {
            self.created = t;
        }
    };
}

mod answer;
mod columns;
mod multipath;
mod path;
mod store;
mod tables;
mod trace;

pub use answer::{Answer, Kind, TraceHop};
pub use multipath::{local_multipaths, MultiPathQuery, MultiPathReq};
pub use path::{local_paths, PathReq};
pub use store::{Job, JobKind, RequestChange, Sessions};
use tables::{ReqTable, Results};
pub use trace::{trace_hops, TraceReq};

/// This module in the registry ([`crate::REGISTRY`]): IB-SM-MIB's request
/// tables (the module's sysORTable row is ib_sm_mib's). Sessions are
/// runtime state: nothing persisted.
pub const DEF: crate::ModuleDef = crate::ModuleDef::plain("IB-SM-MIB requests", || None, objects);

fn objects(_: &crate::Options) -> Vec<crate::Object> {
    use std::sync::Arc;
    vec![
        Arc::new(ReqTable::<PathReq>::new()),
        Arc::new(Results::new(
            o::IB_SM_PATH_RESULT_ENTRY,
            Kind::Path,
            path::PATH_COLS.len(),
        )),
        Arc::new(ReqTable::<MultiPathReq>::new()),
        Arc::new(Results::new(
            o::IB_SM_MULTI_PATH_RESULT_ENTRY,
            Kind::MultiPath,
            path::PATH_COLS.len(),
        )),
        Arc::new(ReqTable::<TraceReq>::new()),
        Arc::new(Results::new(
            o::IB_SM_TRACE_RESULT_ENTRY,
            Kind::Trace,
            trace::TRACE_COLS.len(),
        )),
    ]
}

/// What differs between the two request tables.
trait ReqKind: RowData + Default + PartialEq + Eq + std::fmt::Debug + Send + Sync + 'static {
    const KIND: Kind;
    const ENTRY: &'static [u32];
    /// The highest column (from the row's column declarations).
    fn last_column() -> u32;
    fn created(&self) -> Instant;
    fn set_created(&mut self, t: Instant);
    fn column(&self, column: u32) -> Option<Value>;
}

/// An answer as result rows: each row's cells from column 4 on.
fn render(answer: &Answer) -> Vec<Vec<Value>> {
    match answer {
        Answer::Paths(r) => r
            .iter()
            .map(|t| path::PATH_COLS.iter().map(|c| (c.read)(t)).collect())
            .collect(),
        Answer::Trace(h) => h
            .iter()
            .map(|h| trace::TRACE_COLS.iter().map(|c| (c.read)(h)).collect())
            .collect(),
    }
}

/// Default idle time before a session is aged out (`request_session_timeout`).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(300);
/// Default most live sessions per table (`request_sessions_max`).
pub const DEFAULT_SESSIONS_MAX: usize = 256;
/// Result rows all sessions of the three tables hold together (each row is
/// a few hundred octets of values): a request whose answer would pass it
/// fails (notInService, logged), so memory is bounded by rows, not only by
/// sessions (256 sessions of 32x32 GIDs would hold 262,144 rows).
/// The default of [`Sessions::with_max_result_rows`] (`request_result_rows_max`).
pub const MAX_RESULT_ROWS: usize = 32_768;

/// Column numbers the request tables share (the same in each).
const STATUS: u32 = last(o::IB_SM_PATH_REQ_ROW_STATUS);
const CREATION_TIME: u32 = last(o::IB_SM_PATH_REQ_CREATION_TIME);
const COMP_MASK: u32 = last(o::IB_SM_PATH_REQ_ROW_COMP_MASK);
