//! Phase 2 of Sets: the daemon's one control path.
//!
//! Every Set request that passed phase 1 arrives here as a list of
//! [`Change`]s. Requests are serialised (one at a time). Changes to the
//! agent's own state are applied to a copy of the state, which is persisted
//! (atomically, fsynced) before it is published and before the agent sends
//! the response; changes for the fabric go to the source thread over its
//! channel and are awaited. On failure nothing is published and what was
//! persisted is rolled back, and SM operations already applied are taken
//! back (commitFailed), or undoFailed when something cannot be: a rollback
//! that fails, or a fabric operation already done.

use std::sync::Arc;

use arc_swap::ArcSwap;
use mibs::core::state::Persisted;
use mibs::{Change, SystemState};
use snmp::agent::{ApplyError, ApplyErrorKind, ApplyFuture, SetController};
use tracing::{error, info};

use ib::source::ControlOp;

use crate::models::opensm::{OpenSmControl, SmFailure, SmUndo};
use crate::models::source_thread::FabricHandle;
use crate::models::state::{NodeChanges, NodeValues, StateStore};
use ib::opensm::SmOp;
use mibs::modules::ib_sm_req::Job;
use mibs::modules::if_mib::IfMibState;

/// Applies Sets; shared by every receive task of the agent.
pub struct Controller {
    inner: Arc<Inner>,
}

struct Inner {
    system: Arc<ArcSwap<SystemState>>,
    /// What the state file holds (only values ever Set over SNMP).
    stored: std::sync::Mutex<Persisted>,
    store: StateStore,
    fabric: FabricHandle,
    serial: tokio::sync::Mutex<()>,
    /// The last successful AgentX commit, for its UndoSet (None after an
    /// undo, or when it reached the fabric, which cannot be taken back).
    /// Sets from other paths never replace it.
    last: std::sync::Mutex<Option<Undo>>,
    /// The OpenSM the agent steers (`[opensm]`), for [`mibs::Plan::sm`].
    opensm: Option<Arc<OpenSmControl>>,
    /// Where requests a Set activates go to be answered (see
    /// [`crate::services::requests`]); None: nothing answers them.
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
}

/// What a request has done so far that a failure takes back.
#[derive(Default)]
struct Rollback {
    /// What the state file held before (it was rewritten).
    kv: Option<Persisted>,
    /// The node contexts' values before, of the nodes it changed, and
    /// every node's then (they were recorded).
    nodes: Option<(NodeChanges, NodeValues)>,
    /// The SM operations applied.
    sm: Option<SmUndo>,
}

/// An AgentX commit: the state it replaced and the state it published, so
/// that its UndoSet takes back exactly what it changed
/// ([`SystemState::undo`]), whatever was applied since.
struct Undo {
    before: Arc<SystemState>,
    after: Arc<SystemState>,
}

impl Controller {
    /// `stored` is what `store` held at start.
    pub fn new(
        system: Arc<ArcSwap<SystemState>>,
        stored: Persisted,
        store: StateStore,
        fabric: FabricHandle,
        opensm: Option<Arc<OpenSmControl>>,
        jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
    ) -> Self {
        Controller {
            inner: Arc::new(Inner {
                system,
                stored: std::sync::Mutex::new(stored),
                store,
                fabric,
                serial: tokio::sync::Mutex::new(()),
                last: std::sync::Mutex::new(None),
                opensm,
                jobs,
            }),
        }
    }

    /// Changes the agent's runtime state (never persisted: request answers,
    /// session ageing) in turn with Sets; `change` answers whether it
    /// changed anything (only then is a new state published).
    pub async fn update_runtime(&self, change: impl FnOnce(&mut SystemState) -> bool) {
        let _one_at_a_time = self.inner.serial.lock().await;
        let mut new = (*self.inner.system.load_full()).clone();
        if change(&mut new) {
            self.inner.system.store(Arc::new(new));
        }
    }
}

impl Inner {
    fn stored_values(&self) -> Persisted {
        self.stored.lock().map(|s| s.clone()).unwrap_or_default()
    }

    async fn persist(&self, kv: Persisted) -> std::io::Result<()> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || store.save(&kv))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Records what a Set changed in node contexts (`all`: every node's
    /// values after it): what changed only ([`crate::models::state::NodeStore`]).
    async fn persist_nodes(&self, changes: NodeChanges, all: NodeValues) -> std::io::Result<()> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || store.nodes().save(&changes, &all))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Executes a request's [`mibs::Plan`] in a fixed order: the agent's state
    /// (persisted before anything else), the SM's operations (which can be
    /// undone), the fabric's (which cannot). A failure takes back what was
    /// done, once ([`Inner::fail`]).
    async fn apply_all(
        &self,
        changes: Vec<Change>,
        principal: &str,
        undoable: bool,
    ) -> Result<(), ApplyError> {
        let _one_at_a_time = self.serial.lock().await;
        let old = self.system.load_full();
        let old_kv = self.stored_values();
        let plan = mibs::plan(&changes);
        let (new, new_kv) = self.agent_state(&changes, &plan.agent, &old, &old_kv)?;
        let persisted = old_kv != new_kv;
        let mut done = Rollback::default();
        if persisted {
            if let Err(e) = self.persist(new_kv.clone()).await {
                error!(path = %self.store.path().display(), error = %e, "cannot persist Set");
                return Err(ApplyError {
                    index: plan.agent.first().copied().unwrap_or(0),
                    kind: ApplyErrorKind::CommitFailed,
                    reason: format!("cannot write {}: {e}", self.store.path().display()),
                });
            }
            done.kv = Some(old_kv.clone());
        }
        let (changed, undo) = node_changes(&old, &new);
        if !changed.is_empty() {
            let index = plan.agent.first().copied().unwrap_or(0);
            if let Err(e) = self.persist_nodes(changed, nodes_of(&new)).await {
                let path = self.store.nodes().log_path().display().to_string();
                error!(%path, error = %e, "cannot persist Set");
                let reason = format!("cannot write {path}: {e}");
                return Err(self
                    .fail(done, index, ApplyErrorKind::CommitFailed, reason)
                    .await);
            }
            done.nodes = Some((undo, nodes_of(&old)));
        }
        if let Some(&(first, _)) = plan.sm.first() {
            let ops: Vec<SmOp> = plan.sm.iter().map(|(_, op)| op.clone()).collect();
            match self.apply_service(ops).await {
                Ok(undo) => done.sm = Some(undo),
                Err(failure) => {
                    let reason = failure.reason().to_string();
                    error!(varbind = first + 1, %reason, "SM Set failed");
                    let kind = match failure {
                        SmFailure::Failed(_) => ApplyErrorKind::CommitFailed,
                        SmFailure::NotUndone(_) => ApplyErrorKind::UndoFailed,
                    };
                    return Err(self.fail(done, first, kind, reason).await);
                }
            }
        }
        if let Err((index, any_done, reason)) = self.run_fabric(&plan.fabric, principal).await {
            // Fabric operations already done cannot be taken back.
            let kind = if any_done {
                ApplyErrorKind::UndoFailed
            } else {
                ApplyErrorKind::CommitFailed
            };
            return Err(self.fail(done, index, kind, reason).await);
        }
        if persisted {
            info!(changes = changes.len(), "Set applied and persisted");
            if let Ok(mut stored) = self.stored.lock() {
                *stored = new_kv;
            }
        }
        if !plan.sm.is_empty() {
            // (What changed is logged by the OpenSM control.)
            info!(by = principal, "Set applied to the SM");
        }
        let reached_fabric = !plan.fabric.is_empty() || !plan.sm.is_empty();
        self.publish(old, new, undoable.then_some(reached_fabric));
        Ok(())
    }

    /// The agent's state after the plan's agent changes, and what the state
    /// file then holds; refused when a change touches a module whose part
    /// of the file could not be read (it could not be persisted).
    fn agent_state(
        &self,
        changes: &[Change],
        agent: &[usize],
        old: &SystemState,
        old_kv: &Persisted,
    ) -> Result<(SystemState, Persisted), ApplyError> {
        let mut new = old.clone();
        for &i in agent {
            changes[i].apply(&mut new);
        }
        // What the file held for modules this agent cannot read (a value it
        // could not parse at start) stays as it was.
        let mut new_kv = old_kv.clone();
        let Some(&index) = agent.first() else {
            return Ok((new, new_kv));
        };
        let fail = |reason: String| ApplyError {
            index,
            kind: ApplyErrorKind::CommitFailed,
            reason,
        };
        if let Some(module) = new.modules.changed_unreadable(&old.modules) {
            let reason = format!(
                "the {module} part of {} could not be read at start: read-only until repaired",
                self.store.path().display()
            );
            error!(%reason, "Set refused");
            return Err(fail(reason));
        }
        new.modules.persist_into(&mut new_kv).map_err(fail)?;
        Ok((new, new_kv))
    }

    /// Sends the plan's fabric operations in order; on the first failure,
    /// its change's index, whether any operation was done before it, and
    /// why.
    async fn run_fabric(
        &self,
        ops: &[(usize, ControlOp)],
        principal: &str,
    ) -> Result<(), (usize, bool, String)> {
        for (done, (i, op)) in ops.iter().enumerate() {
            let what = self.describe(op);
            let result = match self.fabric.control(op.clone()).await {
                Ok(reply) => mibs::check_reply(op, &reply),
                Err(e) => Err(e),
            };
            if let Err(reason) = result {
                error!(varbind = i + 1, by = principal, op = %what, %reason, "fabric Set failed");
                return Err((*i, done > 0, reason));
            }
            // Who changed the fabric, and what was sent: once, at info.
            if op.changes_fabric() {
                info!(by = principal, op = %what, "Set applied to the fabric");
            }
        }
        Ok(())
    }

    /// The one rollback of a failed request: its SM operations undone, the
    /// state file written back; `kind` becomes undoFailed when either
    /// cannot be.
    async fn fail(
        &self,
        done: Rollback,
        index: usize,
        mut kind: ApplyErrorKind,
        reason: String,
    ) -> ApplyError {
        if let Some(undo) = done.sm {
            if !self.undo_service(undo).await {
                kind = ApplyErrorKind::UndoFailed;
            }
        }
        if let Some(kv) = done.kv {
            if !self.roll_back_persisted(&kv).await {
                kind = ApplyErrorKind::UndoFailed;
            }
        }
        if let Some((undo, all)) = done.nodes {
            if let Err(e) = self.persist_nodes(undo, all).await {
                error!(error = %e, "cannot roll back the node contexts' values");
                kind = ApplyErrorKind::UndoFailed;
            }
        }
        ApplyError {
            index,
            kind,
            reason,
        }
    }

    /// Publishes the state of a request that succeeded, remembers how to
    /// undo an AgentX commit (`undoable`: Some(whether it reached the
    /// fabric or the SM), when it cannot be), and hands the request rows
    /// it activated to the runner.
    fn publish(&self, old: Arc<SystemState>, new: SystemState, undoable: Option<bool>) {
        let activated = new.requests.jobs_after(old.requests.generation());
        let new = Arc::new(new);
        if let (Some(reached_fabric), Ok(mut last)) = (undoable, self.last.lock()) {
            *last = (!reached_fabric).then(|| Undo {
                before: old,
                after: Arc::clone(&new),
            });
        }
        self.system.store(new);
        // Answered off the request path, once the rows are visible.
        for job in activated {
            if let Some(jobs) = &self.jobs {
                let _ = jobs.send(job);
            }
        }
    }

    /// A fabric operation for the log: what, with the node's name.
    fn describe(&self, op: &ControlOp) -> String {
        let node = match op {
            ControlOp::GetPortCounters { node, .. }
            | ControlOp::SetPortCounters { node, .. }
            | ControlOp::SetPortSamplesControl { node, .. }
            | ControlOp::SimLinkFlap { node, .. }
            | ControlOp::SimErrorBurst { node, .. }
            | ControlOp::SetPortInfo { node, .. } => Some(*node),
            ControlOp::SaPathRecords { .. } | ControlOp::SaMultiPathRecords { .. } => None,
        };
        let snap = self.fabric.snapshot();
        match node
            .and_then(|g| snap.node(snap.node_by_guid(g)?))
            .map(|n| n.description.trim())
            .filter(|d| !d.is_empty())
        {
            Some(name) => format!("{op} ({name:?})"),
            None => op.to_string(),
        }
    }

    /// The SM operations of a request, through the OpenSM control, as one
    /// (file and console I/O off the runtime's threads); then the last
    /// snapshot is published again, so a Get right after the response reads
    /// what opensm.conf now says.
    async fn apply_service(&self, ops: Vec<SmOp>) -> Result<SmUndo, SmFailure> {
        let Some(opensm) = self.opensm.clone() else {
            return Err(SmFailure::Failed(
                "no [opensm] section: the SM is not steered".into(),
            ));
        };
        let undo = tokio::task::spawn_blocking(move || opensm.apply(&ops))
            .await
            .map_err(|e| SmFailure::Failed(e.to_string()))??;
        self.republish("an SM Set").await;
        Ok(undo)
    }

    /// Takes back applied SM operations (a later operation of the same Set
    /// failed); false when they could not be.
    async fn undo_service(&self, undo: SmUndo) -> bool {
        let Some(opensm) = self.opensm.clone() else {
            return false;
        };
        let done = tokio::task::spawn_blocking(move || opensm.undo(undo)).await;
        self.republish("an SM Set was undone").await;
        match done {
            Ok(Ok(())) => {
                info!("SM Set undone: a later operation of the same Set failed");
                true
            }
            Ok(Err(reason)) => {
                error!(%reason, "SM Set could not be undone");
                false
            }
            Err(e) => {
                error!(error = %e, "SM Set could not be undone");
                false
            }
        }
    }

    /// Publishes the last snapshot again, so a Get right after the response
    /// reads what opensm.conf now says.
    async fn republish(&self, after: &str) {
        if let Err(e) = self.fabric.republish().await {
            error!(error = %e, "cannot publish after {after}");
        }
    }

    /// Writes back the state file as it was; false when it could not be.
    async fn roll_back_persisted(&self, old_kv: &Persisted) -> bool {
        match self.persist(old_kv.clone()).await {
            Ok(()) => true,
            Err(e) => {
                error!(error = %e, "cannot roll back persisted state");
                false
            }
        }
    }

    /// Takes back exactly what the last AgentX commit changed (its
    /// UndoSet), keeping what any other Set, answer or reload changed
    /// since; undoFailed when that commit's changes were changed again.
    async fn undo_last(&self) -> Result<(), ApplyError> {
        let _one_at_a_time = self.serial.lock().await;
        let fail = |reason: String| ApplyError {
            index: 0,
            kind: ApplyErrorKind::UndoFailed,
            reason,
        };
        let undo = self
            .last
            .lock()
            .ok()
            .and_then(|mut l| l.take())
            .ok_or_else(|| fail("the Set reached the fabric or was already undone".into()))?;
        let now = self.system.load_full();
        let new = now.undo(&undo.before, &undo.after).map_err(fail)?;
        // The node contexts' values are kept apart: what the undo changes
        // there is appended to their log.
        let (changed, _) = node_changes(&now, &new);
        if !changed.is_empty() {
            self.persist_nodes(changed, nodes_of(&new))
                .await
                .map_err(|e| {
                    let path = self.store.nodes().log_path().display().to_string();
                    fail(format!("cannot write {path}: {e}"))
                })?;
        }
        let old_kv = self.stored_values();
        let mut new_kv = old_kv.clone();
        new.modules.persist_into(&mut new_kv).map_err(fail)?;
        if new_kv != old_kv {
            self.persist(new_kv.clone())
                .await
                .map_err(|e| fail(format!("cannot write {}: {e}", self.store.path().display())))?;
            if let Ok(mut stored) = self.stored.lock() {
                *stored = new_kv;
            }
        }
        info!("Set undone");
        self.system.store(Arc::new(new));
        Ok(())
    }
}

/// What node contexts hold in `s`.
fn nodes_of(s: &SystemState) -> NodeValues {
    s.modules.get::<IfMibState>().nodes.clone()
}

/// The node contexts' values `new` changed from `old`'s: the nodes with
/// their values in `new`, and the same nodes with their values in `old`
/// (what takes the change back). Nothing to compare when IF-MIB's state
/// is the same.
fn node_changes(old: &SystemState, new: &SystemState) -> (NodeChanges, NodeChanges) {
    let a = old.modules.get::<IfMibState>();
    let b = new.modules.get::<IfMibState>();
    if std::ptr::eq(a, b) {
        return Default::default();
    }
    let changed = mibs::modules::if_mib::node_changes(a, b);
    let undo = changed
        .keys()
        .map(|k| (k.clone(), a.nodes.get(k).map(|v| (**v).clone())))
        .collect();
    (changed, undo)
}

impl SetController<Change> for Controller {
    /// AgentX's CommitSet: the one path whose commit an UndoSet may take back.
    fn apply(&self, changes: Vec<Change>) -> ApplyFuture {
        let me = Arc::clone(&self.inner);
        Box::pin(async move { me.apply_all(changes, "AgentX master", true).await })
    }

    fn apply_as(&self, principal: &str, changes: Vec<Change>) -> ApplyFuture {
        let me = Arc::clone(&self.inner);
        let principal = principal.to_string();
        Box::pin(async move { me.apply_all(changes, &principal, false).await })
    }

    fn undo_last(&self) -> ApplyFuture {
        let me = Arc::clone(&self.inner);
        Box::pin(async move { me.undo_last().await })
    }
}
