//! The worker behind IB-SM-MIB's request tables (mibs::modules::ib_sm_req): an
//! activated request is answered here, off the request path, and its
//! answer installed as result rows; idle sessions are aged out.
//!
//! Paths: an SA PathRecord query on the source thread (umad), or computed
//! from the snapshot's forwarding tables (sources without an SA: the
//! simulator). Traces: always from the forwarding tables (OpenSM has no
//! TraceRecord). The SA query waits at most [`SA_WAIT`]: a dead SM or a
//! busy source thread gives a failed request (notInService), never a hung one.

use std::time::{Duration, Instant};

use std::sync::Arc;

use ib::source::{ControlOp, ControlReply};
use mibs::modules::ib_sm_req::{
    local_multipaths, local_paths, trace_hops, Answer, Job, JobKind, MultiPathQuery,
};

use crate::models::source_thread::FabricHandle;
use crate::services::controller::Controller;

/// Longest wait for the SA's answer (the source thread may be sweeping).
pub const SA_WAIT: Duration = Duration::from_secs(10);
/// Most (source, destination) pairs of one multipath request asked of the
/// SA, one PathRecord query each (255 x 255 GIDs would be 65,025 queries).
pub const MAX_PAIRS: usize = 1024;

/// Answers the requests the controller sends (on the runtime) and ages
/// idle sessions out, both through the controller: request sessions are
/// agent state, changed in turn with Sets.
pub fn start(
    rt: &tokio::runtime::Runtime,
    fabric: FabricHandle,
    controller: Arc<Controller>,
    has_sa: bool,
    timeout: Duration,
    mut jobs: tokio::sync::mpsc::UnboundedReceiver<Job>,
) {
    let c = Arc::clone(&controller);
    rt.spawn(async move {
        while let Some(job) = jobs.recv().await {
            let (fabric, c) = (fabric.clone(), Arc::clone(&c));
            tokio::spawn(async move {
                let t0 = Instant::now();
                let answer = answer(&fabric, has_sa, &job).await;
                tracing::debug!(
                    index = ?job.index,
                    ms = t0.elapsed().as_secs_f64() * 1e3,
                    ok = answer.is_ok(),
                    "request answered"
                );
                c.update_runtime(|st| Arc::make_mut(&mut st.requests).complete(&job, answer))
                    .await;
            });
        }
    });
    // Age sessions out within a tenth of the timeout (at most every 5 s).
    let tick = (timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(5));
    rt.spawn(async move {
        let mut t = tokio::time::interval(tick);
        loop {
            t.tick().await;
            let now = Instant::now();
            controller
                .update_runtime(|st| {
                    // Only a state that loses sessions is copied.
                    let mut s = (*st.requests).clone();
                    s.age_out(now) > 0 && {
                        st.requests = Arc::new(s);
                        true
                    }
                })
                .await;
        }
    });
}

async fn answer(fabric: &FabricHandle, has_sa: bool, job: &Job) -> Result<Answer, String> {
    match &job.kind {
        JobKind::Path { template, mask } if has_sa => {
            sa_paths(fabric, template, *mask).await.map(Answer::Paths)
        }
        JobKind::MultiPath(q) if has_sa => sa_multipaths(fabric, q).await,
        JobKind::MultiPath(q) => local_multipaths(&fabric.snapshot(), q),
        JobKind::Path { template, mask } => local_paths(&fabric.snapshot(), template, *mask),
        JobKind::Trace { template, mask } => trace_hops(&fabric.snapshot(), template, *mask),
    }
}

/// One SA PathRecord query on the source thread.
async fn sa_paths(
    fabric: &FabricHandle,
    template: &ib::mad::sa::PathRecord,
    mask: u64,
) -> Result<Vec<ib::mad::sa::PathRecord>, String> {
    let op = ControlOp::SaPathRecords {
        template: Box::new(template.clone()),
        comp_mask: mask,
    };
    match tokio::time::timeout(SA_WAIT, fabric.control(op)).await {
        Ok(Ok(ControlReply::PathRecords(r))) => Ok(r),
        Ok(Ok(other)) => Err(format!(
            "unexpected answer to a PathRecord query: {other:?}"
        )),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(format!("no SA answer within {} s", SA_WAIT.as_secs())),
    }
}

/// A multipath request: SA GetMulti(MultiPathRecord) when the GIDs fit in
/// one request and the SA's answer is whole ([`whole_answer`]), else
/// PathRecord queries, one per (source, destination) pair, until NumbPath
/// paths are in.
async fn sa_multipaths(fabric: &FabricHandle, q: &MultiPathQuery) -> Result<Answer, String> {
    // The SA's own MultiPathRecord answer where it gives a whole one.
    if let Some((record, mask)) = &q.record {
        let op = ControlOp::SaMultiPathRecords {
            record: Box::new(record.clone()),
            comp_mask: *mask,
        };
        match tokio::time::timeout(SA_WAIT, fabric.control(op)).await {
            Ok(Ok(ControlReply::PathRecords(r))) => match whole_answer(q, r) {
                Ok(r) => {
                    tracing::debug!(
                        paths = r.len(),
                        "multipath: the SA's MultiPathRecord answer"
                    );
                    return Ok(Answer::Paths(r));
                }
                Err(why) => tracing::debug!(
                    "SA MultiPathRecord (GetMulti) answer short ({why}): asking PathRecords per pair"
                ),
            },
            Ok(other) => tracing::debug!(
                answer = ?other,
                "SA MultiPathRecord (GetMulti) refused or cut short: asking PathRecords per pair"
            ),
            Err(_) => return Err(format!("no SA answer within {} s", SA_WAIT.as_secs())),
        }
    }
    let pairs = q.pairs();
    if pairs.len() > MAX_PAIRS {
        tracing::warn!(
            pairs = pairs.len(),
            asked = MAX_PAIRS,
            "multipath request: only the first pairs are asked"
        );
    }
    let mut out = Vec::new();
    for (t, mask) in pairs.iter().take(MAX_PAIRS) {
        if q.enough(out.len()) {
            break;
        }
        out.extend(sa_paths(fabric, t, *mask).await?);
    }
    if let Some(m) = q.numb_path {
        out.truncate(usize::from(m));
    }
    Ok(Answer::Paths(out))
}

/// The SA's MultiPathRecord answer as the request's result when it is whole:
/// every path is of a pair asked, and either NumbPath paths came (NumbPath in
/// the mask) or every (source, destination) pair has one, as the per-pair
/// queries would give. Ordered pair by pair (sources, then destinations, in
/// the request's order), as the per-pair queries are; at most NumbPath.
/// Err: why the answer is short (the caller asks pair by pair).
pub fn whole_answer(
    q: &MultiPathQuery,
    paths: Vec<ib::mad::sa::PathRecord>,
) -> Result<Vec<ib::mad::sa::PathRecord>, String> {
    let pair = |p: &ib::mad::sa::PathRecord| {
        let s = q.sgids.iter().position(|g| *g == p.sgid)?;
        let d = q.dgids.iter().position(|g| *g == p.dgid)?;
        Some(s * q.dgids.len() + d)
    };
    let mut keyed = Vec::with_capacity(paths.len());
    for p in paths {
        match pair(&p) {
            Some(k) => keyed.push((k, p)),
            None => return Err(format!("a path {} -> {} not asked", p.sgid, p.dgid)),
        }
    }
    keyed.sort_by_key(|(k, _)| *k);
    let mut covered = vec![false; q.sgids.len() * q.dgids.len()];
    for (k, _) in &keyed {
        if let Some(c) = covered.get_mut(*k) {
            *c = true;
        }
    }
    let missing = covered.iter().filter(|c| !**c).count();
    let enough = q.numb_path.is_some_and(|m| keyed.len() >= usize::from(m));
    if keyed.is_empty() || (missing > 0 && !enough) {
        return Err(format!(
            "{} paths, {missing} of {} pairs without one",
            keyed.len(),
            covered.len()
        ));
    }
    let mut out: Vec<_> = keyed.into_iter().map(|(_, p)| p).collect();
    if let Some(m) = q.numb_path {
        out.truncate(usize::from(m));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ib::mad::sa::PathRecord;
    use ib::types::{Gid, Guid};

    fn gid(n: u64) -> Gid {
        Gid::new(0xfe80_0000_0000_0000, Guid(n))
    }

    fn query(s: &[u64], d: &[u64], numb_path: Option<u8>) -> MultiPathQuery {
        MultiPathQuery {
            template: PathRecord::default(),
            mask: 0,
            sgids: s.iter().map(|&g| gid(g)).collect(),
            dgids: d.iter().map(|&g| gid(g)).collect(),
            numb_path,
            record: None,
        }
    }

    fn path(s: u64, d: u64) -> PathRecord {
        PathRecord {
            sgid: gid(s),
            dgid: gid(d),
            ..PathRecord::default()
        }
    }

    fn pairs(v: &[PathRecord]) -> Vec<(u64, u64)> {
        v.iter()
            .map(|p| (p.sgid.guid().0, p.dgid.guid().0))
            .collect()
    }

    /// 2 x 2 GIDs: three paths (the first packet of OpenSM's answer under
    /// ibsim) are short; four, one per pair, are whole and come out in pair
    /// order whatever the SA's order.
    #[test]
    fn a_multipath_answer_is_whole_only_with_every_pair() {
        let q = query(&[1, 2], &[3, 4], None);
        let three = vec![path(1, 3), path(1, 4), path(2, 3)];
        assert!(whole_answer(&q, three).is_err());
        let four = vec![path(2, 4), path(1, 3), path(2, 3), path(1, 4)];
        let got = whole_answer(&q, four).unwrap();
        assert_eq!(pairs(&got), [(1, 3), (1, 4), (2, 3), (2, 4)]);
        assert!(whole_answer(&q, Vec::new()).is_err());
        // A path of a pair not asked: not this request's answer.
        assert!(whole_answer(&q, vec![path(1, 3), path(1, 4), path(2, 3), path(3, 1)]).is_err());
        // NumbPath in the mask: that many paths are whole, cut to it.
        let q = query(&[1, 2], &[3, 4], Some(2));
        let got = whole_answer(&q, vec![path(2, 3), path(1, 4), path(1, 3)]).unwrap();
        assert_eq!(pairs(&got), [(1, 3), (1, 4)]);
        assert!(whole_answer(&q, vec![path(1, 3)]).is_err());
    }
}
