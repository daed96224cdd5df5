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
use mibs::ib_sm_req::{local_paths, trace_hops, Answer, Job, JobKind, REQUESTS};

use crate::fabric::FabricHandle;

/// Longest wait for the SA's answer (the source thread may be sweeping).
pub const SA_WAIT: Duration = Duration::from_secs(10);

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
            let op = ControlOp::SaPathRecords {
                template: Box::new(template.clone()),
                comp_mask: *mask,
            };
            match tokio::time::timeout(SA_WAIT, fabric.control(op)).await {
                Ok(Ok(ControlReply::PathRecords(r))) => Ok(Answer::Paths(r)),
                Ok(Ok(other)) => Err(format!(
                    "unexpected answer to a PathRecord query: {other:?}"
                )),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(format!("no SA answer within {} s", SA_WAIT.as_secs())),
            }
        }
        JobKind::Path { template, mask } => local_paths(&fabric.snapshot(), template, *mask),
        JobKind::Trace { template, mask } => trace_hops(&fabric.snapshot(), template, *mask),
    }
}
