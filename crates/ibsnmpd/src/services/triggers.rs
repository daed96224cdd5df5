//! The DISMAN-EVENT-MIB monitor task (docs/health.md, "Threshold
//! monitors"): every second, the triggers that are due sample the agent's
//! own MIB through the dispatcher on the current view (a published
//! snapshot: no network round trip, no MADs) and what fires goes out
//! through the notification sinks.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mibs::modules::disman_event::{Evaluator, Monitors, Sampler};
use mibs::{Change, View};
use snmp::dispatch::Dispatcher;
use snmp::value::{Value, VarBind};
use tokio::task::JoinHandle;
use tracing::{info, warn};

use crate::services::contexts::NodeContexts;
use crate::services::traps::Traps;

/// How often due triggers are looked for (mteResourceSampleMinimum).
const TICK: Duration = Duration::from_secs(1);

/// Reads through the dispatcher on one view; node contexts (issue 39)
/// through their own object set on a view derived from it.
struct Reads<'a> {
    dispatcher: &'a Dispatcher<View, Change>,
    view: &'a View,
    contexts: Option<&'a NodeContexts>,
}

/// A node context's reads: its view, derived once for the whole sample.
struct ContextReads<'a> {
    dispatcher: &'a Dispatcher<View, Change>,
    view: View,
}

impl Sampler for ContextReads<'_> {
    fn get(&self, oid: &[u32]) -> Value {
        self.dispatcher.get(&self.view, oid)
    }
    fn next(&self, oid: &[u32]) -> Option<VarBind> {
        self.dispatcher.next(&self.view, oid)
    }
}

impl Sampler for Reads<'_> {
    fn get(&self, oid: &[u32]) -> Value {
        self.dispatcher.get(self.view, oid)
    }
    fn next(&self, oid: &[u32]) -> Option<VarBind> {
        self.dispatcher.next(self.view, oid)
    }
    fn in_context(&self, name: &[u8]) -> Option<Box<dyn Sampler + '_>> {
        let c = self.contexts?;
        Some(Box::new(ContextReads {
            dispatcher: c.dispatcher(),
            view: mibs::modules::node_context::view_once(self.view, name)?,
        }))
    }
    fn node_contexts(&self) -> Vec<Vec<u8>> {
        match self.contexts {
            Some(_) => mibs::modules::node_context::guid_names(self.view),
            None => Vec::new(),
        }
    }
}

/// Starts the task on `runtime` when there are triggers.
pub fn start(
    runtime: &tokio::runtime::Handle,
    monitors: Arc<Monitors>,
    dispatcher: Arc<Dispatcher<View, Change>>,
    view: crate::services::contexts::ViewFn,
    traps: Option<Traps>,
    contexts: Option<Arc<NodeContexts>>,
) -> Option<JoinHandle<()>> {
    if monitors.triggers().is_empty() {
        return None;
    }
    info!(
        triggers = monitors.triggers().len(),
        "DISMAN-EVENT-MIB monitors sampling"
    );
    Some(runtime.spawn(async move {
        let mut eval = Evaluator::new(&monitors);
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            // A wildcard trigger may walk a table of the whole fabric: on
            // the blocking pool, never on a worker SNMP requests need.
            let (m, d, view, c) = (
                Arc::clone(&monitors),
                Arc::clone(&dispatcher),
                Arc::clone(&view),
                contexts.clone(),
            );
            let sampled = tokio::task::spawn_blocking(move || {
                let v = view();
                let reads = Reads {
                    dispatcher: &d,
                    view: &v,
                    contexts: c.as_deref(),
                };
                let fired = eval.run(&m, Instant::now(), &reads);
                (eval, fired)
            })
            .await;
            let fired;
            (eval, fired) = match sampled {
                Ok(x) => x,
                Err(e) => {
                    warn!(error = %e, "DISMAN-EVENT-MIB monitors stopped");
                    return;
                }
            };
            for f in fired {
                info!(trigger = %f.trigger, context = %String::from_utf8_lossy(&f.context), kind = ?f.kind, oid = %f.oid, value = f.value, "monitor fired");
                // Without sinks the event has nowhere to go: not a failure.
                if traps.as_ref().is_some_and(|t| !t.notify(f.notification())) {
                    monitors.stats.event_failures.fetch_add(1, Relaxed);
                    warn!(trigger = %f.trigger, "notification queue full: monitor notification dropped");
                }
            }
        }
    }))
}

/// Starts the task with given triggers (see [`start`]).
pub type Starter = Box<dyn Fn(Arc<Monitors>) -> Option<JoinHandle<()>> + Send + Sync>;

/// The running task, as a reload replaces it with new triggers.
pub struct MonitorTask {
    start: Starter,
    running: Option<JoinHandle<()>>,
}

impl MonitorTask {
    pub fn start(start: Starter, monitors: Arc<Monitors>) -> Self {
        let running = start(monitors);
        MonitorTask { start, running }
    }

    /// The old triggers stop (their state and counters with them), the new
    /// ones start sampling.
    pub fn replace(&mut self, monitors: Arc<Monitors>) {
        if let Some(old) = self.running.take() {
            old.abort();
        }
        self.running = (self.start)(monitors);
    }
}
