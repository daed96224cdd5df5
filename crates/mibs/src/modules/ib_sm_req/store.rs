//! The request sessions: the three request tables' rows and the answers
//! of the activated ones, as one value of the agent's state
//! ([`crate::SystemState::requests`]): requests read it from their
//! view without a lock; the daemon's control path changes it (Sets, answers
//! in, ageing) and publishes a new one. Runtime state, never persisted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ib::mad::sa::PathRecord;
use snmp::rowstatus::{RowChange, RowStatus, RowTable};
use snmp::value::Value;

use super::answer::{Answer, Kind};
use super::{
    render, MultiPathQuery, MultiPathReq, PathReq, TraceReq, DEFAULT_SESSIONS_MAX,
    DEFAULT_SESSION_TIMEOUT, MAX_RESULT_ROWS, STATUS,
};

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

impl JobKind {
    /// The request table the job answers.
    pub fn kind(&self) -> Kind {
        match self {
            JobKind::Path { .. } => Kind::Path,
            JobKind::MultiPath(_) => Kind::MultiPath,
            JobKind::Trace { .. } => Kind::Trace,
        }
    }
}

/// The answer of one activation.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    pub(super) generation: u64,
    /// What to compute (handed to the runner once the Set is applied).
    job: JobKind,
    /// The answer as result rows (None: pending); shared by the copies of
    /// the sessions each change makes.
    pub(super) rows: Option<Arc<[Vec<Value>]>>,
}

/// The request sessions at one moment.
#[derive(Clone, Debug)]
pub struct Sessions {
    pub(super) path: RowTable<PathReq>,
    pub(super) multipath: RowTable<MultiPathReq>,
    pub(super) trace: RowTable<TraceReq>,
    pub(super) answers: BTreeMap<(Kind, Vec<u32>), Pending>,
    generation: u64,
    timeout: Duration,
    /// Result rows all sessions may hold together.
    max_result_rows: usize,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new(DEFAULT_SESSION_TIMEOUT, DEFAULT_SESSIONS_MAX)
    }
}

impl Sessions {
    /// No sessions; idle ones age out after `timeout`, at most `max` per table.
    pub fn new(timeout: Duration, max: usize) -> Self {
        Sessions {
            path: RowTable::new(STATUS, max),
            multipath: RowTable::new(STATUS, max),
            trace: RowTable::new(STATUS, max),
            answers: BTreeMap::new(),
            generation: 0,
            timeout,
            max_result_rows: MAX_RESULT_ROWS,
        }
    }

    /// At most `max` result rows held by all sessions together: an answer
    /// that would pass it fails (notInService, logged).
    pub fn with_max_result_rows(mut self, max: usize) -> Self {
        self.max_result_rows = max;
        self
    }

    /// The last activation's number: [`Sessions::jobs_after`] of it names
    /// what a later change activated.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The requests activated after `generation` and not answered yet, for
    /// the runner.
    pub fn jobs_after(&self, generation: u64) -> Vec<Job> {
        self.answers
            .iter()
            .filter(|(_, p)| p.generation > generation && p.rows.is_none())
            .map(|((_, index), p)| Job {
                kind: p.job.clone(),
                index: index.clone(),
                generation: p.generation,
            })
            .collect()
    }

    /// Removes sessions idle for the configured timeout, with their
    /// results; how many went.
    pub fn age_out(&mut self, now: Instant) -> usize {
        let idle = self.timeout;
        let mut gone: Vec<(Kind, Vec<u32>)> = Vec::new();
        let mut take = |kind: Kind, indexes: Vec<Vec<u32>>| {
            gone.extend(indexes.into_iter().map(|i| (kind, i)));
        };
        take(Kind::Path, self.path.age_out(idle, now));
        take(Kind::MultiPath, self.multipath.age_out(idle, now));
        take(Kind::Trace, self.trace.age_out(idle, now));
        for k in &gone {
            self.answers.remove(k);
        }
        if !gone.is_empty() {
            tracing::info!(sessions = gone.len(), "request sessions aged out");
        }
        gone.len()
    }

    /// The result rows the sessions hold now.
    pub fn result_rows(&self) -> usize {
        self.answers
            .values()
            .filter_map(|p| p.rows.as_ref())
            .map(|r| r.len())
            .sum()
    }

    /// Installs the answer of `job`; false when the request was destroyed,
    /// suspended or activated again meanwhile (the answer is stale). An
    /// empty or failed answer sets the request notInService (the manager
    /// may activate it again).
    pub fn complete(&mut self, job: &Job, answer: Result<Answer, String>) -> bool {
        let kind = job.kind.kind();
        let key = (kind, job.index.clone());
        match self.answers.get(&key) {
            Some(p) if p.generation == job.generation => {}
            _ => return false,
        }
        let held = self.result_rows();
        let failed = match &answer {
            Ok(Answer::Paths(r)) if r.is_empty() => Some("no path matches".to_string()),
            Ok(Answer::Trace(h)) if h.is_empty() => Some("no hop".to_string()),
            Ok(a) if held.saturating_add(a.len()) > self.max_result_rows => Some(format!(
                "{} result rows would pass the {} all sessions may hold ({held} held); destroy finished sessions",
                a.len(),
                self.max_result_rows
            )),
            Ok(_) => None,
            Err(e) => Some(e.clone()),
        };
        match (failed, answer) {
            (Some(reason), _) | (None, Err(reason)) => {
                tracing::warn!(table = ?kind, index = ?job.index, %reason, "request failed: set notInService");
                self.answers.remove(&key);
                match kind {
                    Kind::Path => self.path.set_status(&job.index, RowStatus::NotInService),
                    Kind::MultiPath => self
                        .multipath
                        .set_status(&job.index, RowStatus::NotInService),
                    Kind::Trace => self.trace.set_status(&job.index, RowStatus::NotInService),
                };
            }
            (None, Ok(a)) => {
                if let Some(p) = self.answers.get_mut(&key) {
                    p.rows = Some(render(&a).into());
                }
            }
        }
        true
    }

    /// Phase 2 of a request Set: installs the rows, drops the results of
    /// rows destroyed or no longer active, and marks the activated ones
    /// pending (see [`Sessions::jobs_after`]).
    fn apply(&mut self, change: &RequestChange) {
        let s = self;
        match change {
            RequestChange::Path(c) => {
                for ch in c {
                    settle(Kind::Path, ch, &mut s.answers, &mut s.generation, |r| {
                        JobKind::Path {
                            template: r.template.clone(),
                            mask: r.mask(),
                        }
                    });
                }
                s.path.apply(c.clone());
            }
            RequestChange::MultiPath(c) => {
                for ch in c {
                    settle(
                        Kind::MultiPath,
                        ch,
                        &mut s.answers,
                        &mut s.generation,
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
                        RowChange::Put { index, .. } => s.path.get(index).map(|r| r.data.clone()),
                        RowChange::Delete { .. } => None,
                    };
                    settle(Kind::Trace, ch, &mut s.answers, &mut s.generation, |_| {
                        let p = path.clone().unwrap_or_default();
                        JobKind::Trace {
                            mask: p.mask(),
                            template: p.template,
                        }
                    });
                }
                s.trace.apply(c.clone());
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
                        job: job(&row.data),
                        rows: None,
                    },
                );
            } else if row.status != RowStatus::Active {
                answers.remove(&(kind, index.clone()));
            }
        }
    }
}

/// A checked request Set (phase 1), applied in phase 2 by the daemon's
/// control path ([`crate::Change::apply`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestChange {
    Path(Vec<RowChange<PathReq>>),
    MultiPath(Vec<RowChange<MultiPathReq>>),
    Trace(Vec<RowChange<TraceReq>>),
}

/// Request rows are agent runtime state: applying the change installs them
/// in the state's sessions (never persisted); the daemon then runs the
/// requests it activated ([`Sessions::jobs_after`]).
impl RequestChange {
    /// Phase 2: into the agent's (runtime) state.
    pub(crate) fn apply_to(&self, state: &mut crate::SystemState) {
        Arc::make_mut(&mut state.requests).apply(self);
    }
}

/// Where a request kind's rows live in the sessions, and its changes.
pub(super) trait Stored: Sized {
    fn table(s: &Sessions) -> &RowTable<Self>;
    fn change(c: Vec<RowChange<Self>>) -> RequestChange;
}

impl Stored for PathReq {
    fn table(s: &Sessions) -> &RowTable<Self> {
        &s.path
    }
    fn change(c: Vec<RowChange<Self>>) -> RequestChange {
        RequestChange::Path(c)
    }
}

impl Stored for MultiPathReq {
    fn table(s: &Sessions) -> &RowTable<Self> {
        &s.multipath
    }
    fn change(c: Vec<RowChange<Self>>) -> RequestChange {
        RequestChange::MultiPath(c)
    }
}

impl Stored for TraceReq {
    fn table(s: &Sessions) -> &RowTable<Self> {
        &s.trace
    }
    fn change(c: Vec<RowChange<Self>>) -> RequestChange {
        RequestChange::Trace(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An activated multipath request at `session`, pending.
    fn pending(s: &mut Sessions, session: u32) -> Job {
        let job = Job {
            kind: JobKind::Path {
                template: PathRecord::default(),
                mask: 0,
            },
            index: vec![session],
            generation: u64::from(session),
        };
        s.answers.insert(
            (Kind::Path, job.index.clone()),
            Pending {
                generation: job.generation,
                job: job.kind.clone(),
                rows: None,
            },
        );
        job
    }

    /// Result rows are capped in total, whatever the number of sessions:
    /// the answer that would pass the cap fails, the ones before stay.
    #[test]
    fn result_rows_are_capped_in_total() {
        let mut s = Sessions::default();
        let per = MAX_RESULT_ROWS / 4;
        let paths = |n: usize| Ok(Answer::Paths(vec![PathRecord::default(); n]));
        for session in 1..=4 {
            let job = pending(&mut s, session);
            assert!(s.complete(&job, paths(per)));
        }
        assert_eq!(s.result_rows(), 4 * per);
        let job = pending(&mut s, 5);
        assert!(s.complete(&job, paths(1)));
        assert_eq!(s.result_rows(), 4 * per, "the fifth answer is refused");
        assert!(!s.answers.contains_key(&(Kind::Path, vec![5])));
    }
}
