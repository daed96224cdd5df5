//! The worker behind IB-SM-MIB's request tables (mibs::ib_sm_req): an
//! activated request is answered here, off the request path, and its
//! answer installed as result rows; idle sessions are aged out.
//!
//! Paths: an SA PathRecord query on the source thread (umad), or computed
//! from the snapshot's forwarding tables (sources without an SA: the
//! simulator). Traces: always from the forwarding tables (OpenSM has no
//! TraceRecord). The SA query waits at most [`SA_WAIT`]: a dead SM or a
//! busy source thread gives a failed request (notInService), never a hung one.

use std::time::{Duration, Instant};

use ib::source::{ControlOp, ControlReply};
use mibs::ib_sm_req::{
    local_multipaths, local_paths, trace_hops, Answer, Job, JobKind, MultiPathQuery, REQUESTS,
};

use crate::fabric::FabricHandle;

/// Longest wait for the SA's answer (the source thread may be sweeping).
pub const SA_WAIT: Duration = Duration::from_secs(10);
/// Most (source, destination) pairs of one multipath request asked of the
/// SA, one PathRecord query each (255 x 255 GIDs would be 65,025 queries).
pub const MAX_PAIRS: usize = 1024;

/// Configures the session store and starts its runner and ageing.
pub fn start(
    rt: &tokio::runtime::Runtime,
    fabric: FabricHandle,
    has_sa: bool,
    timeout: Duration,
    max: usize,
) {
    REQUESTS.configure(timeout, max);
    let handle = rt.handle().clone();
    REQUESTS.set_runner(Box::new(move |job: Job| {
        let fabric = fabric.clone();
        handle.spawn(async move {
            let t0 = Instant::now();
            let answer = answer(&fabric, has_sa, &job).await;
            tracing::debug!(
                index = ?job.index,
                ms = t0.elapsed().as_secs_f64() * 1e3,
                ok = answer.is_ok(),
                "request answered"
            );
            REQUESTS.complete(&job, answer);
        });
    }));
    // Age sessions out within a tenth of the timeout (at most every 5 s).
    let tick = (timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(5));
    rt.spawn(async move {
        let mut t = tokio::time::interval(tick);
        loop {
            t.tick().await;
            REQUESTS.age_out(Instant::now());
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
/// one request and the SA answers it, else PathRecord queries, one per
/// (source, destination) pair, until NumbPath paths are in.
async fn sa_multipaths(fabric: &FabricHandle, q: &MultiPathQuery) -> Result<Answer, String> {
    // The SA's own MultiPathRecord answer where it gives one.
    if let Some((record, mask)) = &q.record {
        let op = ControlOp::SaMultiPathRecords {
            record: Box::new(record.clone()),
            comp_mask: *mask,
        };
        match tokio::time::timeout(SA_WAIT, fabric.control(op)).await {
            Ok(Ok(ControlReply::PathRecords(mut r))) if !r.is_empty() => {
                if let Some(m) = q.numb_path {
                    r.truncate(usize::from(m));
                }
                tracing::debug!(
                    paths = r.len(),
                    "multipath: the SA's MultiPathRecord answer"
                );
                return Ok(Answer::Paths(r));
            }
            Ok(other) => tracing::debug!(
                answer = ?other,
                "SA MultiPathRecord (GetMulti) refused or empty: asking PathRecords per pair"
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
