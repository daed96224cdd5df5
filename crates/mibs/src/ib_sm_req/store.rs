//! The request sessions: the three request tables' rows, the answers of
//! the activated ones, and the runner that computes them (runtime state,
//! never persisted).

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ib::mad::sa::PathRecord;
use snmp::rowstatus::{RowChange, RowStatus, RowTable};
use snmp::value::Value;

use super::tables::render;
use super::{
    MultiPathQuery, MultiPathReq, PathReq, TraceReq, DEFAULT_SESSIONS_MAX, DEFAULT_SESSION_TIMEOUT,
    STATUS,
};

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
pub(super) struct Pending {
    pub(super) generation: u64,
    /// The answer as result rows (None: pending).
    pub(super) rows: Option<Vec<Vec<Value>>>,
}

pub(super) struct Store {
    pub(super) path: RowTable<PathReq>,
    pub(super) multipath: RowTable<MultiPathReq>,
    pub(super) trace: RowTable<TraceReq>,
    pub(super) answers: BTreeMap<(Kind, Vec<u32>), Pending>,
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
    pub(super) fn lock(&self) -> MutexGuard<'_, Store> {
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
pub(super) fn settle<R>(
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
/// control path ([`crate::change::Change::apply`]).
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
