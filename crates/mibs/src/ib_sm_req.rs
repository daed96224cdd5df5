//! IB-SM-MIB request tables (mibs/IB-SM-MIB, ibSmPathInfo, ibSmMultiPathInfo
//! and ibSmTraceInfo): a manager asks the subnet which paths join two ports
//! (ibSmPathReqTable -> ibSmPathResultTable), which paths join two sets of
//! ports (ibSmMultiPathReqTable -> ibSmMultiPathResultTable, [`multipath`])
//! and which nodes a path crosses
//! (ibSmTraceReqTable -> ibSmTraceResultTable), as RowStatus sessions
//! (RFC 2579, [`snmp::rowstatus`]) indexed by the subnet prefix and a session
//! id the manager picks.
//!
//! The protocol (docs/ib-sm.md, "Request tables"):
//! - A request row is created and filled (one Set PDU or several); when it
//!   becomes active the answer is computed off the request path (the Set
//!   returns at once) by the daemon's runner ([`Requests::set_runner`]).
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

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ib::mad::sa::{comp::path_record as pr, PathRecord};
use ib::model::Snapshot;
use ib::types::{Gid, Lid, PKey};
use snmp::mib::{MibObject, SetError, SetItem};
use snmp::oid::Oid;
use snmp::rowstatus::{ColumnSet, RowChange, RowData, RowStatus, RowTable};
use snmp::table::Access;
use snmp::value::{Value, VarBind};

use crate::change::Change;
use crate::if_mib::ticks_at;
use crate::oids::ib_sm_mib as o;
use crate::util::oid;
use crate::view::View;

mod multipath;
pub use multipath::{local_multipaths, MultiPathQuery, MultiPathReq};

/// This module in the registry ([`crate::REGISTRY`]): IB-SM-MIB's request
/// tables (the module's sysORTable row is ib_sm_mib's).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    name: "IB-SM-MIB requests",
    or_entry: || None,
    objects,
    derive: None,
    omitted: &[],
    fabric_ops: None,
    check_reply: None,
    // Sessions are runtime state: nothing persisted.
    state: None,
};

fn objects() -> Vec<crate::Object> {
    use std::sync::Arc;
    vec![
        Arc::new(ReqTable::<PathReq>::new()),
        Arc::new(Results::new(o::IB_SM_PATH_RESULT_ENTRY, Kind::Path, 21)),
        Arc::new(ReqTable::<MultiPathReq>::new()),
        Arc::new(Results::new(
            o::IB_SM_MULTI_PATH_RESULT_ENTRY,
            Kind::MultiPath,
            21,
        )),
        Arc::new(ReqTable::<TraceReq>::new()),
        Arc::new(Results::new(o::IB_SM_TRACE_RESULT_ENTRY, Kind::Trace, 11)),
    ]
}

/// Default idle time before a session is aged out (`request_session_timeout`).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(300);
/// Default most live sessions per table (`request_sessions_max`).
pub const DEFAULT_SESSIONS_MAX: usize = 256;

/// Column numbers shared by both request tables.
const STATUS: u32 = 3;
const CREATION_TIME: u32 = 4;
const COMP_MASK: u32 = 5;

// ----- the session store -------------------------------------------------

/// The agent's request sessions (runtime state, never persisted).
pub static REQUESTS: LazyLock<Requests> = LazyLock::new(Requests::default);

/// What the daemon does with an activated request: compute it off the
/// request path and hand the answer to [`Requests::complete`].
pub type Runner = Box<dyn Fn(Job) + Send + Sync>;

/// An activated request to answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub kind: JobKind,
    /// The request row's index (subnet prefix octets, session id).
    pub index: Vec<u32>,
    /// Which activation this answers (a stale answer is dropped).
    pub generation: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// PathRecords matching `template` in the components of `mask`.
    Path { template: PathRecord, mask: u64 },
    /// The paths between every source and destination GID.
    MultiPath(Box<MultiPathQuery>),
    /// The hops of the path `template`/`mask` names.
    Trace { template: PathRecord, mask: u64 },
}

/// A computed answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Paths(Vec<PathRecord>),
    Trace(Vec<TraceHop>),
}

/// One node of a trace (the ibSmTraceResultTable columns, TraceRecord's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHop {
    pub id_generation: u16,
    /// IbNodeType: 1 channel adapter, 2 switch, 3 router.
    pub node_type: u8,
    pub node_id: u64,
    pub chassis_id: u64,
    /// CA: the port's GUID; reserved (0) otherwise.
    pub entry_port_id: u64,
    pub exit_port_id: u64,
    /// Switch: the port entered by (0 at the source).
    pub entry_port: u8,
    /// Switch: the port left by (0 at the destination).
    pub exit_port: u8,
}

/// The answer of one activation.
#[derive(Clone, Debug)]
struct Pending {
    generation: u64,
    /// The answer as result rows (None: pending).
    rows: Option<Vec<Vec<Value>>>,
}

struct Store {
    path: RowTable<PathReq>,
    multipath: RowTable<MultiPathReq>,
    trace: RowTable<TraceReq>,
    answers: BTreeMap<(Kind, Vec<u32>), Pending>,
    generation: u64,
    timeout: Duration,
}

/// The request tables' shared state.
pub struct Requests {
    store: Mutex<Store>,
    runner: Mutex<Option<Runner>>,
}

impl Default for Requests {
    fn default() -> Self {
        Requests {
            store: Mutex::new(Store {
                path: RowTable::new(STATUS, DEFAULT_SESSIONS_MAX),
                multipath: RowTable::new(STATUS, DEFAULT_SESSIONS_MAX),
                trace: RowTable::new(STATUS, DEFAULT_SESSIONS_MAX),
                answers: BTreeMap::new(),
                generation: 0,
                timeout: DEFAULT_SESSION_TIMEOUT,
            }),
            runner: Mutex::new(None),
        }
    }
}

/// Which request table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Path,
    MultiPath,
    Trace,
}

impl Requests {
    fn lock(&self) -> MutexGuard<'_, Store> {
        // A panic elsewhere while holding the lock leaves consistent maps.
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the idle timeout and the per-table session cap.
    pub fn configure(&self, timeout: Duration, max: usize) {
        let mut s = self.lock();
        s.timeout = timeout;
        s.path.set_max_rows(max);
        s.multipath.set_max_rows(max);
        s.trace.set_max_rows(max);
    }

    /// Installs what computes activated requests (the daemon's worker).
    pub fn set_runner(&self, runner: Runner) {
        if let Ok(mut r) = self.runner.lock() {
            *r = Some(runner);
        }
    }

    /// Removes sessions idle for the configured timeout, with their results.
    pub fn age_out(&self, now: Instant) -> usize {
        let mut s = self.lock();
        let idle = s.timeout;
        let mut gone: Vec<(Kind, Vec<u32>)> = Vec::new();
        gone.extend(
            s.path
                .age_out(idle, now)
                .into_iter()
                .map(|i| (Kind::Path, i)),
        );
        gone.extend(
            s.multipath
                .age_out(idle, now)
                .into_iter()
                .map(|i| (Kind::MultiPath, i)),
        );
        gone.extend(
            s.trace
                .age_out(idle, now)
                .into_iter()
                .map(|i| (Kind::Trace, i)),
        );
        for k in &gone {
            s.answers.remove(k);
        }
        if !gone.is_empty() {
            tracing::info!(sessions = gone.len(), "request sessions aged out");
        }
        gone.len()
    }

    /// Installs the answer of `job`. An empty or failed answer sets the
    /// request notInService (the manager may activate it again).
    pub fn complete(&self, job: &Job, answer: Result<Answer, String>) {
        let kind = match job.kind {
            JobKind::Path { .. } => Kind::Path,
            JobKind::MultiPath(_) => Kind::MultiPath,
            JobKind::Trace { .. } => Kind::Trace,
        };
        let mut s = self.lock();
        let key = (kind, job.index.clone());
        match s.answers.get(&key) {
            Some(p) if p.generation == job.generation => {}
            // Destroyed, suspended or activated again meanwhile.
            _ => return,
        }
        let failed = match &answer {
            Ok(Answer::Paths(r)) if r.is_empty() => Some("no path matches".to_string()),
            Ok(Answer::Trace(h)) if h.is_empty() => Some("no hop".to_string()),
            Ok(_) => None,
            Err(e) => Some(e.clone()),
        };
        match failed {
            Some(reason) => {
                tracing::warn!(table = ?kind, index = ?job.index, %reason, "request failed: set notInService");
                s.answers.remove(&key);
                match kind {
                    Kind::Path => s.path.set_status(&job.index, RowStatus::NotInService),
                    Kind::MultiPath => s.multipath.set_status(&job.index, RowStatus::NotInService),
                    Kind::Trace => s.trace.set_status(&job.index, RowStatus::NotInService),
                };
            }
            None => {
                if let (Some(p), Ok(a)) = (s.answers.get_mut(&key), answer) {
                    p.rows = Some(render(&a));
                }
            }
        }
    }

    /// Phase 2 of a request Set: installs the rows, drops the results of
    /// rows destroyed or no longer active, and starts the activated ones.
    fn apply(&self, change: &RequestChange) {
        let mut jobs = Vec::new();
        {
            let mut s = self.lock();
            let s = &mut *s;
            match change {
                RequestChange::Path(c) => {
                    let (kind, table) = (Kind::Path, &mut s.path);
                    for ch in c {
                        settle(
                            kind,
                            ch,
                            &mut s.answers,
                            &mut s.generation,
                            &mut jobs,
                            |r| JobKind::Path {
                                template: r.template.clone(),
                                mask: r.mask(),
                            },
                        );
                    }
                    table.apply(c.clone());
                }
                RequestChange::MultiPath(c) => {
                    for ch in c {
                        settle(
                            Kind::MultiPath,
                            ch,
                            &mut s.answers,
                            &mut s.generation,
                            &mut jobs,
                            |r| JobKind::MultiPath(Box::new(r.query())),
                        );
                    }
                    s.multipath.apply(c.clone());
                }
                RequestChange::Trace(c) => {
                    for ch in c {
                        // The path a trace follows: the path request with
                        // the same index (checked present in phase 1).
                        let path = match ch {
                            RowChange::Put { index, .. } => {
                                s.path.get(index).map(|r| r.data.clone())
                            }
                            RowChange::Delete { .. } => None,
                        };
                        settle(
                            Kind::Trace,
                            ch,
                            &mut s.answers,
                            &mut s.generation,
                            &mut jobs,
                            |_| {
                                let p = path.clone().unwrap_or_default();
                                JobKind::Trace {
                                    mask: p.mask(),
                                    template: p.template,
                                }
                            },
                        );
                    }
                    s.trace.apply(c.clone());
                }
            }
        }
        if jobs.is_empty() {
            return;
        }
        let runner = self.runner.lock();
        for job in jobs {
            match runner.as_ref().ok().and_then(|r| r.as_ref()) {
                Some(run) => run(job),
                None => self.complete(&job, Err("no request runner in this process".into())),
            }
        }
    }
}

/// Bookkeeping of one row change: results of a row that is destroyed or
/// leaves active go; a row that becomes active gets a new generation and
/// a job.
fn settle<R>(
    kind: Kind,
    ch: &RowChange<R>,
    answers: &mut BTreeMap<(Kind, Vec<u32>), Pending>,
    generation: &mut u64,
    jobs: &mut Vec<Job>,
    job: impl Fn(&R) -> JobKind,
) {
    match ch {
        RowChange::Delete { index } => {
            answers.remove(&(kind, index.clone()));
        }
        RowChange::Put {
            index,
            row,
            activated,
        } => {
            if *activated {
                *generation += 1;
                answers.insert(
                    (kind, index.clone()),
                    Pending {
                        generation: *generation,
                        rows: None,
                    },
                );
                jobs.push(Job {
                    kind: job(&row.data),
                    index: index.clone(),
                    generation: *generation,
                });
            } else if row.status != RowStatus::Active {
                answers.remove(&(kind, index.clone()));
            }
        }
    }
}

/// A checked request Set (phase 1), applied in phase 2 by the daemon's
/// control path ([`Change::apply`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestChange {
    Path(Vec<RowChange<PathReq>>),
    MultiPath(Vec<RowChange<MultiPathReq>>),
    Trace(Vec<RowChange<TraceReq>>),
}

/// Request rows are agent runtime state: applying the change installs them
/// in the session store (not in [`crate::view::SystemState`], never
/// persisted) and starts the activated requests.
impl crate::change::ModuleChange for RequestChange {
    fn effect(&self) -> crate::change::Effect {
        crate::change::Effect::Agent
    }

    fn apply(&self, _: &mut crate::view::SystemState) {
        REQUESTS.apply(self);
    }
}

// ----- value helpers -----------------------------------------------------

fn unsigned(v: &Value, max: u32) -> Result<u32, SetError> {
    match v {
        Value::Gauge32(u) if *u <= max => Ok(*u),
        Value::Gauge32(_) => Err(SetError::WrongValue),
        _ => Err(SetError::WrongType),
    }
}

fn integer(v: &Value, lo: i32, hi: i32) -> Result<u8, SetError> {
    match v {
        Value::Integer(i) if (lo..=hi).contains(i) => {
            u8::try_from(*i).map_err(|_| SetError::WrongValue)
        }
        Value::Integer(_) => Err(SetError::WrongValue),
        _ => Err(SetError::WrongType),
    }
}

fn octets<const N: usize>(v: &Value) -> Result<[u8; N], SetError> {
    match v {
        Value::OctetString(b) => b.as_slice().try_into().map_err(|_| SetError::WrongLength),
        _ => Err(SetError::WrongType),
    }
}

fn u8_of(v: u32) -> u8 {
    u8::try_from(v).unwrap_or(u8::MAX)
}

fn gauge(v: impl Into<u32>) -> Value {
    Value::Gauge32(v.into())
}

fn bytes(b: &[u8]) -> Value {
    Value::OctetString(b.to_vec())
}

// ----- ibSmPathReqTable rows ------------------------------------------------

/// An ibSmPathReqTable row: a PathRecord template and its component mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathReq {
    pub template: PathRecord,
    /// ibSmPathReqRowCompMask as set; None: the components of the columns set.
    pub comp_mask: Option<u64>,
    /// The components of the columns set.
    pub set_mask: u64,
    pub created: Instant,
}

impl Default for PathReq {
    fn default() -> Self {
        PathReq {
            template: PathRecord::default(),
            comp_mask: None,
            set_mask: 0,
            created: Instant::now(),
        }
    }
}

impl PathReq {
    /// The ComponentMask the request is asked with.
    pub fn mask(&self) -> u64 {
        self.comp_mask.unwrap_or(self.set_mask)
    }
}

impl RowData for PathReq {
    fn set(&mut self, column: u32, v: &Value) -> Result<(), SetError> {
        let t = &mut self.template;
        let bit = match column {
            COMP_MASK => {
                self.comp_mask = Some(u64::from_be_bytes(octets::<8>(v)?));
                return Ok(());
            }
            6 => {
                t.dgid = Gid::from_bytes(octets::<16>(v)?);
                pr::DGID
            }
            7 => {
                t.sgid = Gid::from_bytes(octets::<16>(v)?);
                pr::SGID
            }
            8 => {
                t.numb_path = u8_of(unsigned(v, 127)?);
                pr::NUMB_PATH
            }
            9 | 10 => {
                let lid = unsigned(v, 65535)?;
                if lid == 0 {
                    return Err(SetError::WrongValue);
                }
                let lid = Lid(u16::try_from(lid).map_err(|_| SetError::WrongValue)?);
                if column == 9 {
                    t.dlid = lid;
                    pr::DLID
                } else {
                    t.slid = lid;
                    pr::SLID
                }
            }
            11 => {
                t.raw_traffic = unsigned(v, 1)? == 1;
                pr::RAW_TRAFFIC
            }
            12 => {
                let [a, b, c] = octets::<3>(v)?;
                t.flow_label = u32::from_be_bytes([0, a, b, c]) & 0xF_FFFF;
                pr::FLOW_LABEL
            }
            13 => {
                t.hop_limit = u8_of(unsigned(v, 255)?);
                pr::HOP_LIMIT
            }
            14 => {
                t.t_class = u8_of(unsigned(v, 255)?);
                pr::T_CLASS
            }
            15 => {
                t.p_key = PKey(u16::try_from(unsigned(v, 65535)?).unwrap_or(0));
                pr::P_KEY
            }
            16 => {
                t.sl = u8_of(unsigned(v, 15)?);
                pr::SL
            }
            17 => {
                t.mtu_selector = integer(v, 0, 3)?;
                pr::MTU_SELECTOR
            }
            18 => {
                t.mtu = integer(v, 1, 5)?;
                pr::MTU
            }
            19 => {
                t.rate_selector = integer(v, 0, 3)?;
                pr::RATE_SELECTOR
            }
            20 => {
                t.rate = u8_of(unsigned(v, 63)?);
                pr::RATE
            }
            21 => {
                t.packet_life_time_selector = integer(v, 0, 3)?;
                pr::PACKET_LIFE_TIME_SELECTOR
            }
            22 => {
                t.packet_life_time = u8_of(unsigned(v, 63)?);
                pr::PACKET_LIFE_TIME
            }
            23 => {
                t.preference = u8_of(unsigned(v, 255)?);
                pr::PREFERENCE
            }
            CREATION_TIME => return Err(SetError::NotWritable),
            _ => return Err(SetError::NotWritable),
        };
        self.set_mask |= bit;
        Ok(())
    }

    /// A path needs a source and a destination.
    fn ready(&self) -> bool {
        let m = self.mask();
        m & (pr::SLID | pr::SGID) != 0 && m & (pr::DLID | pr::DGID) != 0
    }
}

/// The PathRecord columns shared by the request and result tables, by the
/// request table's column number.
fn path_column(t: &PathRecord, column: u32) -> Option<Value> {
    Some(match column {
        6 => bytes(&t.dgid.to_bytes()),
        7 => bytes(&t.sgid.to_bytes()),
        8 => gauge(t.numb_path),
        9 => gauge(t.dlid.0),
        10 => gauge(t.slid.0),
        11 => gauge(u8::from(t.raw_traffic)),
        12 => bytes(&t.flow_label.to_be_bytes()[1..]),
        13 => gauge(t.hop_limit),
        14 => gauge(t.t_class),
        15 => gauge(t.p_key.0),
        16 => gauge(t.sl),
        17 => Value::Integer(i32::from(t.mtu_selector)),
        18 => Value::Integer(i32::from(t.mtu)),
        19 => Value::Integer(i32::from(t.rate_selector)),
        20 => gauge(t.rate),
        21 => Value::Integer(i32::from(t.packet_life_time_selector)),
        22 => gauge(t.packet_life_time),
        23 => gauge(t.preference),
        _ => return None,
    })
}

// ----- ibSmTraceReqTable rows -------------------------------------------------

/// An ibSmTraceReqTable row: the TraceRecord template columns (kept and
/// shown; the path traced is the path request with the same index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceReq {
    pub comp_mask: [u8; 8],
    pub hop: TraceHop,
    pub created: Instant,
}

impl Default for TraceReq {
    fn default() -> Self {
        TraceReq {
            comp_mask: [0; 8],
            hop: TraceHop {
                id_generation: 0,
                node_type: 0,
                node_id: 0,
                chassis_id: 0,
                entry_port_id: 0,
                exit_port_id: 0,
                entry_port: 0,
                exit_port: 0,
            },
            created: Instant::now(),
        }
    }
}

impl RowData for TraceReq {
    fn set(&mut self, column: u32, v: &Value) -> Result<(), SetError> {
        let h = &mut self.hop;
        match column {
            COMP_MASK => self.comp_mask = octets::<8>(v)?,
            6 => h.id_generation = u16::try_from(unsigned(v, 65535)?).unwrap_or(0),
            7 => h.node_type = integer(v, 0, 3)?,
            8 => h.node_id = u64::from_be_bytes(octets::<8>(v)?),
            9 => h.chassis_id = u64::from_be_bytes(octets::<8>(v)?),
            10 => h.entry_port_id = u64::from_be_bytes(octets::<8>(v)?),
            11 => h.exit_port_id = u64::from_be_bytes(octets::<8>(v)?),
            12 => h.entry_port = u8_of(unsigned(v, 255)?),
            13 => h.exit_port = u8_of(unsigned(v, 255)?),
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }

    /// Whether the path exists is checked against the path table when the
    /// trace is activated.
    fn ready(&self) -> bool {
        true
    }
}

/// TraceRecord columns, by the result table's column number minus 2 (the
/// request table numbers them 6..13, the result table 4..11).
fn trace_column(h: &TraceHop, req_column: u32) -> Option<Value> {
    Some(match req_column {
        6 => gauge(h.id_generation),
        7 => Value::Integer(i32::from(h.node_type)),
        8 => bytes(&h.node_id.to_be_bytes()),
        9 => bytes(&h.chassis_id.to_be_bytes()),
        10 => bytes(&h.entry_port_id.to_be_bytes()),
        11 => bytes(&h.exit_port_id.to_be_bytes()),
        12 => gauge(h.entry_port),
        13 => gauge(h.exit_port),
        _ => return None,
    })
}

// ----- the request tables as MIB objects ----------------------------------------

/// What differs between the two request tables.
trait ReqKind: RowData + Default + PartialEq + Eq + std::fmt::Debug + Send + Sync + 'static {
    const KIND: Kind;
    const ENTRY: &'static [u32];
    const LAST_COLUMN: u32;
    fn table(s: &Store) -> &RowTable<Self>;
    fn created(&self) -> Instant;
    fn set_created(&mut self, t: Instant);
    fn column(&self, column: u32) -> Option<Value>;
    fn change(c: Vec<RowChange<Self>>) -> RequestChange;
}

impl ReqKind for PathReq {
    const KIND: Kind = Kind::Path;
    const ENTRY: &'static [u32] = o::IB_SM_PATH_REQ_ENTRY;
    const LAST_COLUMN: u32 = 23;
    fn table(s: &Store) -> &RowTable<Self> {
        &s.path
    }
    fn created(&self) -> Instant {
        self.created
    }
    fn set_created(&mut self, t: Instant) {
        self.created = t;
    }
    fn column(&self, column: u32) -> Option<Value> {
        match column {
            COMP_MASK => Some(bytes(&self.mask().to_be_bytes())),
            c => path_column(&self.template, c),
        }
    }
    fn change(c: Vec<RowChange<Self>>) -> RequestChange {
        RequestChange::Path(c)
    }
}

impl ReqKind for TraceReq {
    const KIND: Kind = Kind::Trace;
    const ENTRY: &'static [u32] = o::IB_SM_TRACE_REQ_ENTRY;
    const LAST_COLUMN: u32 = 13;
    fn table(s: &Store) -> &RowTable<Self> {
        &s.trace
    }
    fn created(&self) -> Instant {
        self.created
    }
    fn set_created(&mut self, t: Instant) {
        self.created = t;
    }
    fn column(&self, column: u32) -> Option<Value> {
        match column {
            COMP_MASK => Some(bytes(&self.comp_mask)),
            c => trace_column(&self.hop, c),
        }
    }
    fn change(c: Vec<RowChange<Self>>) -> RequestChange {
        RequestChange::Trace(c)
    }
}

/// The request index: 8 octets of subnet prefix, then the session id.
fn parse_req_index(index: &[u32]) -> Option<(u64, u32)> {
    let (prefix, session) = index.split_at_checked(8)?;
    let &[session] = session else { return None };
    let mut p = 0u64;
    for &b in prefix {
        p = (p << 8) | u64::from(u8::try_from(b).ok()?);
    }
    (session <= i32::MAX as u32).then_some((p, session))
}

/// A request table (ibSmPathReqTable, ibSmTraceReqTable).
struct ReqTable<R> {
    root: Oid,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<R: ReqKind> ReqTable<R> {
    fn new() -> Self {
        ReqTable {
            root: oid(R::ENTRY),
            _r: std::marker::PhantomData,
        }
    }

    fn cell(view: &View, row: &snmp::rowstatus::Row<R>, column: u32) -> Option<Value> {
        match column {
            STATUS => Some(Value::Integer(row.status as i32)),
            CREATION_TIME => Some(Value::TimeTicks(ticks_at(
                view.system.started,
                Some(row.data.created()),
            ))),
            c => row.data.column(c),
        }
    }

    /// Splits a full OID into (column, index) under this entry.
    fn split<'a>(&self, o: &'a [u32]) -> Option<(u32, &'a [u32])> {
        let rest = o.strip_prefix(self.root.as_slice())?;
        let (&c, index) = rest.split_first()?;
        Some((c, index))
    }
}

impl<R: ReqKind> MibObject<View, Change> for ReqTable<R> {
    fn root(&self) -> &Oid {
        &self.root
    }

    fn get(&self, view: &View, o: &[u32]) -> Value {
        let Some((c, index)) = self.split(o) else {
            return Value::NoSuchObject;
        };
        if !(STATUS..=R::LAST_COLUMN).contains(&c) {
            return Value::NoSuchObject;
        }
        let s = REQUESTS.lock();
        R::table(&s)
            .get(index)
            .and_then(|r| Self::cell(view, r, c))
            .unwrap_or(Value::NoSuchInstance)
    }

    fn next(&self, view: &View, o: &[u32]) -> Option<VarBind> {
        let s = REQUESTS.lock();
        let rows = R::table(&s).rows();
        let (start_col, after): (u32, Option<&[u32]>) = match o.strip_prefix(self.root.as_slice()) {
            None if o < self.root.as_slice() => (STATUS, None),
            None => return None,
            Some([]) => (STATUS, None),
            Some([c, index @ ..]) if *c < STATUS => {
                let _ = index;
                (STATUS, None)
            }
            Some([c, index @ ..]) => (*c, Some(index)),
        };
        for c in start_col..=R::LAST_COLUMN {
            let from = if c == start_col { after } else { None };
            let row = match from {
                None => rows.iter().next(),
                Some(i) => rows
                    .range::<[u32], _>((std::ops::Bound::Excluded(i), std::ops::Bound::Unbounded))
                    .next(),
            };
            if let Some((k, r)) = row {
                if let Some(v) = Self::cell(view, r, c) {
                    let mut id = self.root.as_slice().to_vec();
                    id.push(c);
                    id.extend_from_slice(k);
                    return Some(VarBind::new(Oid::new(id), v));
                }
            }
        }
        None
    }

    fn check_set(&self, view: &View, o: &[u32], value: &Value) -> Result<Change, SetError> {
        let item = SetItem {
            position: 0,
            oid: o,
            value,
        };
        let mut c = self.check_set_batch(view, &[item]).map_err(|(_, e)| e)?;
        c.pop().map(|(_, k)| k).ok_or(SetError::NotWritable)
    }

    fn check_set_batch(
        &self,
        view: &View,
        sets: &[SetItem<'_>],
    ) -> Result<Vec<(usize, Change)>, (usize, SetError)> {
        let mut cols = Vec::with_capacity(sets.len());
        for s in sets {
            let (column, index) = self
                .split(s.oid)
                .ok_or((s.position, SetError::NoCreation))?;
            if !(STATUS..=R::LAST_COLUMN).contains(&column) {
                return Err((s.position, SetError::NoCreation));
            }
            match parse_req_index(index) {
                Some((prefix, _)) if prefix == view.snapshot.subnet_prefix => {}
                _ => return Err((s.position, SetError::NoCreation)),
            }
            if column == CREATION_TIME {
                return Err((s.position, SetError::NotWritable));
            }
            cols.push(ColumnSet {
                position: s.position,
                index,
                column,
                value: s.value,
            });
        }
        let now = Instant::now();
        let store = REQUESTS.lock();
        let changes = R::table(&store).check(
            &cols,
            |_| {
                let mut r = R::default();
                r.set_created(now);
                r
            },
            now,
        )?;
        // A trace follows the path request with the same index: it must be
        // there, with a source and a destination, when the trace starts.
        if R::KIND == Kind::Trace {
            for ch in &changes {
                if let RowChange::Put {
                    index,
                    activated: true,
                    ..
                } = ch
                {
                    let ok = store.path.get(index).is_some_and(|p| p.data.ready());
                    if !ok {
                        let pos = cols
                            .iter()
                            .find(|c| c.index == index.as_slice() && c.column == STATUS)
                            .map_or(0, |c| c.position);
                        return Err((pos, SetError::InconsistentValue));
                    }
                }
            }
        }
        drop(store);
        let first = sets.first().map_or(0, |s| s.position);
        Ok(vec![(first, Change::new(R::change(changes)))])
    }

    fn declared_columns(&self) -> Vec<(u32, Access)> {
        (STATUS..=R::LAST_COLUMN)
            .map(|c| {
                let a = if c == CREATION_TIME {
                    Access::ReadOnly
                } else {
                    Access::ReadCreate
                };
                (c, a)
            })
            .collect()
    }
}

// ----- the result tables ----------------------------------------------------------

/// An answer as result rows: each row's cells from column 4 on.
fn render(answer: &Answer) -> Vec<Vec<Value>> {
    match answer {
        Answer::Paths(r) => r
            .iter()
            .map(|t| (6..=23).filter_map(|c| path_column(t, c)).collect())
            .collect(),
        Answer::Trace(h) => h
            .iter()
            .map(|h| (6..=13).filter_map(|c| trace_column(h, c)).collect())
            .collect(),
    }
}

/// The request index (9 sub-identifiers) and result index of a result row.
const REQ_INDEX_LEN: usize = 9;

/// One cell of a result table: `o` is column, request index, result index.
fn result_get(root: &Oid, kind: Kind, last_col: u32, o: &[u32]) -> Value {
    let Some([c, index @ ..]) = o.strip_prefix(root.as_slice()) else {
        return Value::NoSuchObject;
    };
    if !(4..=last_col).contains(c) {
        return Value::NoSuchObject;
    }
    let (Some((req, [i])), Some(col)) = (
        index.split_at_checked(REQ_INDEX_LEN),
        usize::try_from(c - 4).ok(),
    ) else {
        return Value::NoSuchInstance;
    };
    let s = REQUESTS.lock();
    s.answers
        .get(&(kind, req.to_vec()))
        .and_then(|p| p.rows.as_ref())
        .and_then(|rows| rows.get(usize::try_from(i.checked_sub(1)?).ok()?))
        .and_then(|row| row.get(col).cloned())
        .unwrap_or(Value::NoSuchInstance)
}

/// The first result cell after `o` (column by column, rows in index order),
/// read straight from the answers: no copy of the table per request.
fn result_next(root: &Oid, kind: Kind, last_col: u32, o: &[u32]) -> Option<VarBind> {
    let (start_col, after): (u32, Option<&[u32]>) = match o.strip_prefix(root.as_slice()) {
        None if o < root.as_slice() => (4, None),
        None => return None,
        Some([]) => (4, None),
        Some([c, ..]) if *c < 4 => (4, None),
        Some([c, index @ ..]) => (*c, Some(index)),
    };
    let s = REQUESTS.lock();
    for c in start_col..=last_col {
        let from = if c == start_col { after } else { None };
        // Answers whose request index could hold a key after `from`.
        let start = from.map_or_else(Vec::new, |f| {
            f.iter().take(REQ_INDEX_LEN).copied().collect()
        });
        for ((k, req), p) in s.answers.range((kind, start)..) {
            if *k != kind {
                break;
            }
            let Some(rows) = &p.rows else { continue };
            for (i, row) in rows.iter().enumerate() {
                let mut key = req.clone();
                key.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
                if from.is_some_and(|f| key.as_slice() <= f) {
                    continue;
                }
                let v = row.get(usize::try_from(c - 4).ok()?)?.clone();
                let mut id = root.as_slice().to_vec();
                id.push(c);
                id.extend_from_slice(&key);
                return Some(VarBind::new(Oid::new(id), v));
            }
        }
    }
    None
}

/// A result table (ibSmPathResultTable, ibSmMultiPathResultTable,
/// ibSmTraceResultTable): columns 4..`last`, the request's answer.
struct Results {
    root: Oid,
    kind: Kind,
    last: u32,
}

impl Results {
    fn new(entry: &[u32], kind: Kind, last: u32) -> Self {
        Results {
            root: oid(entry),
            kind,
            last,
        }
    }
}

impl MibObject<View, Change> for Results {
    fn root(&self) -> &Oid {
        &self.root
    }
    fn get(&self, _: &View, o: &[u32]) -> Value {
        result_get(&self.root, self.kind, self.last, o)
    }
    fn next(&self, _: &View, o: &[u32]) -> Option<VarBind> {
        result_next(&self.root, self.kind, self.last, o)
    }
    fn declared_columns(&self) -> Vec<(u32, Access)> {
        (4..=self.last).map(|c| (c, Access::ReadOnly)).collect()
    }
}

// ----- computing answers from a snapshot ---------------------------------------------

/// PathRecords from the snapshot's routing (no SA: the simulator).
pub fn local_paths(s: &Snapshot, template: &PathRecord, mask: u64) -> Result<Answer, String> {
    ib::model::paths::path_records(s, template, mask)
        .map(Answer::Paths)
        .map_err(|e| e.to_string())
}

/// The hops of the path `template`/`mask` names, from the switches'
/// forwarding tables (as ibtracert follows them).
pub fn trace_hops(s: &Snapshot, template: &PathRecord, mask: u64) -> Result<Answer, String> {
    let port = |lid_bit: u64, lid: Lid, gid_bit: u64, gid: Gid| {
        if mask & lid_bit != 0 {
            s.port_by_lid(lid)
        } else if mask & gid_bit != 0 {
            s.port_by_guid(gid.guid())
        } else {
            None
        }
    };
    let src = port(pr::SLID, template.slid, pr::SGID, template.sgid)
        .ok_or("the path's source names no port")?;
    let dst = port(pr::DLID, template.dlid, pr::DGID, template.dgid)
        .ok_or("the path's destination names no port")?;
    let dlid = s
        .port(dst)
        .map(|p| p.info.lid)
        .ok_or("the path's destination names no port")?;
    let hops = ib::model::route::trace(s, src, dlid).map_err(|e| e.to_string())?;
    let generation = u16::try_from(s.sweep.number & 0xFFFF).unwrap_or(0);
    let out = hops
        .iter()
        .filter_map(|h| {
            let node = s.node(h.node)?;
            let is_switch = node.info.node_type == ib::types::NodeType::Switch as u8;
            let port_guid = |p: Option<ib::types::PortNum>| {
                p.and_then(|n| s.node_port(h.node, n))
                    .and_then(|i| s.port(i))
                    .map_or(0, |p| p.guid.0)
            };
            Some(TraceHop {
                id_generation: generation,
                node_type: node.info.node_type,
                node_id: node.info.node_guid.0,
                chassis_id: node.info.system_image_guid.0,
                // A CA's port: the one it is entered (destination) or left
                // (source) by.
                entry_port_id: if is_switch {
                    0
                } else {
                    port_guid(h.entry.or(h.exit))
                },
                exit_port_id: 0,
                entry_port: if is_switch {
                    h.entry.map_or(0, |p| p.0)
                } else {
                    0
                },
                exit_port: if is_switch {
                    h.exit.map_or(0, |p| p.0)
                } else {
                    0
                },
            })
        })
        .collect();
    Ok(Answer::Trace(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_index() {
        let mut i: Vec<u32> = 0xfe80_0000_0000_0000u64
            .to_be_bytes()
            .iter()
            .map(|b| u32::from(*b))
            .collect();
        i.push(7);
        assert_eq!(parse_req_index(&i), Some((0xfe80_0000_0000_0000, 7)));
        i.push(1);
        assert_eq!(parse_req_index(&i), None);
    }

    #[test]
    fn path_request_columns_build_the_mask() {
        let mut r = PathReq::default();
        assert!(!r.ready());
        r.set(10, &Value::Gauge32(3)).unwrap();
        r.set(9, &Value::Gauge32(4)).unwrap();
        assert!(r.ready());
        assert_eq!(r.mask(), pr::SLID | pr::DLID);
        assert_eq!(r.set(9, &Value::Gauge32(0)), Err(SetError::WrongValue));
        assert_eq!(r.set(16, &Value::Gauge32(16)), Err(SetError::WrongValue));
        assert_eq!(r.set(18, &Value::Integer(6)), Err(SetError::WrongValue));
        assert_eq!(
            r.set(5, &Value::OctetString(vec![0; 7])),
            Err(SetError::WrongLength)
        );
        r.set(5, &Value::OctetString(pr::SLID.to_be_bytes().to_vec()))
            .unwrap();
        assert!(!r.ready(), "the CompMask column rules");
    }
}
