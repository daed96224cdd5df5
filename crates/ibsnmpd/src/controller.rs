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
use mibs::change::{Change, Effect};
use mibs::state::Persisted;
use mibs::SystemState;
use snmp::agent::{ApplyError, ApplyErrorKind, ApplyFuture, SetController};
use tracing::{error, info};

use ib::source::ControlOp;

use crate::fabric::FabricHandle;
use crate::opensm::{OpenSmControl, SmFailure, SmUndo};
use crate::state::StateStore;
use ib::opensm::SmOp;
use mibs::ib_sm_req::Job;

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
    /// What the last successful apply replaced (None after an undo, or when it
    /// reached the fabric, which cannot be taken back).
    last: std::sync::Mutex<Option<Undo>>,
    /// The OpenSM the agent steers (`[opensm]`), for [`Effect::Service`].
    opensm: Option<Arc<OpenSmControl>>,
    /// Where requests a Set activates go to be answered (see
    /// [`crate::requests`]); None: nothing answers them.
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
}

/// The state before the last successful apply.
struct Undo {
    system: Arc<SystemState>,
    kv: Persisted,
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

    async fn apply_all(&self, changes: Vec<Change>, principal: &str) -> Result<(), ApplyError> {
        let _one_at_a_time = self.serial.lock().await;
        let old = self.system.load_full();
        let mut new = (*old).clone();
        let mut fabric_ops: Vec<(usize, ControlOp)> = Vec::new();
        let mut grouped = false;
        let mut first_local = None;
        let mut service: Vec<(usize, SmOp)> = Vec::new();
        let old_kv = self.stored_values();
        for (i, c) in changes.iter().enumerate() {
            match c.effect() {
                Effect::Agent => {
                    c.apply(&mut new);
                    first_local.get_or_insert(i);
                }
                Effect::Fabric(op) => fabric_ops.push((i, op)),
                Effect::Grouped => grouped = true,
                Effect::Service(op) => service.push((i, op)),
            }
        }
        if grouped {
            // Several varbinds, one operation (e.g. one PMA Set per node).
            fabric_ops.extend(mibs::change::grouped_fabric_ops(&changes));
            fabric_ops.sort_by_key(|(i, _)| *i);
        }
        // What the file held for modules this agent cannot read (a value it
        // could not parse at start) stays as it was.
        let mut new_kv = old_kv.clone();
        if let Some(i) = first_local {
            // A module whose part could not be read is kept as the file has
            // it: a Set of it could not be persisted, so it changes nothing.
            if let Some(module) = new.modules.changed_unreadable(&old.modules) {
                let reason = format!(
                    "the {module} part of {} could not be read at start: read-only until repaired",
                    self.store.path().display()
                );
                error!(%reason, "Set refused");
                return Err(ApplyError {
                    index: i,
                    kind: ApplyErrorKind::CommitFailed,
                    reason,
                });
            }
            new.modules
                .persist_into(&mut new_kv)
                .map_err(|reason| ApplyError {
                    index: i,
                    kind: ApplyErrorKind::CommitFailed,
                    reason,
                })?;
        }
        let persisted = old_kv != new_kv;
        let reached_fabric = !fabric_ops.is_empty() || !service.is_empty();
        if persisted {
            if let Err(e) = self.persist(new_kv.clone()).await {
                error!(path = %self.store.path().display(), error = %e, "cannot persist Set");
                return Err(ApplyError {
                    index: first_local.unwrap_or(0),
                    kind: ApplyErrorKind::CommitFailed,
                    reason: format!("cannot write {}: {e}", self.store.path().display()),
                });
            }
        }
        // SM operations first: unlike fabric operations, they can be taken
        // back when a later operation fails.
        let mut sm_undo = None;
        if let Some(&(first, _)) = service.first() {
            let ops: Vec<SmOp> = service.iter().map(|(_, op)| op.clone()).collect();
            match self.apply_service(ops).await {
                Ok(undo) => sm_undo = Some(undo),
                Err(failure) => {
                    let reason = failure.reason().to_string();
                    error!(varbind = first + 1, %reason, "SM Set failed");
                    let mut kind = match failure {
                        SmFailure::Failed(_) => ApplyErrorKind::CommitFailed,
                        SmFailure::NotUndone(_) => ApplyErrorKind::UndoFailed,
                    };
                    if persisted && !self.roll_back_persisted(&old_kv).await {
                        kind = ApplyErrorKind::UndoFailed;
                    }
                    return Err(ApplyError {
                        index: first,
                        kind,
                        reason,
                    });
                }
            }
        }
        for (done, (i, op)) in fabric_ops.into_iter().enumerate() {
            let what = self.describe(&op);
            let result = match self.fabric.control(op.clone()).await {
                Ok(reply) => mibs::change::check_reply(&op, &reply),
                Err(e) => Err(e),
            };
            if let Err(reason) = result {
                error!(varbind = i + 1, by = principal, op = %what, %reason, "fabric Set failed");
                // Fabric operations already done cannot be taken back.
                let mut kind = if done == 0 {
                    ApplyErrorKind::CommitFailed
                } else {
                    ApplyErrorKind::UndoFailed
                };
                if let Some(undo) = sm_undo.take() {
                    if !self.undo_service(undo).await {
                        kind = ApplyErrorKind::UndoFailed;
                    }
                }
                if persisted && !self.roll_back_persisted(&old_kv).await {
                    kind = ApplyErrorKind::UndoFailed;
                }
                return Err(ApplyError {
                    index: i,
                    kind,
                    reason,
                });
            }
            // Who changed the fabric, and what was sent: once, at info.
            if op.changes_fabric() {
                info!(by = principal, op = %what, "Set applied to the fabric");
            }
        }
        if persisted {
            info!(changes = changes.len(), "Set applied and persisted");
            if let Ok(mut stored) = self.stored.lock() {
                *stored = new_kv;
            }
        }
        if !service.is_empty() {
            // (What changed is logged by the OpenSM control.)
            info!(by = principal, "Set applied to the SM");
        }
        let activated = new.requests.jobs_after(old.requests.generation());
        let undo = (!reached_fabric).then_some(Undo {
            system: old,
            kv: old_kv,
        });
        if let Ok(mut last) = self.last.lock() {
            *last = undo;
        }
        self.system.store(Arc::new(new));
        // Answered off the request path, once the rows are visible.
        for job in activated {
            if let Some(jobs) = &self.jobs {
                let _ = jobs.send(job);
            }
        }
        Ok(())
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

    /// Puts back the state before the last successful apply.
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
            .ok_or_else(|| fail("the last Set reached the fabric or was already undone".into()))?;
        if self.stored_values() != undo.kv {
            self.persist(undo.kv.clone())
                .await
                .map_err(|e| fail(format!("cannot write {}: {e}", self.store.path().display())))?;
            if let Ok(mut stored) = self.stored.lock() {
                *stored = undo.kv;
            }
        }
        info!("Set undone");
        self.system.store(undo.system);
        Ok(())
    }
}

impl SetController<Change> for Controller {
    fn apply(&self, changes: Vec<Change>) -> ApplyFuture {
        self.apply_as("AgentX master", changes)
    }

    fn apply_as(&self, principal: &str, changes: Vec<Change>) -> ApplyFuture {
        let me = Arc::clone(&self.inner);
        let principal = principal.to_string();
        Box::pin(async move { me.apply_all(changes, &principal).await })
    }

    fn undo_last(&self) -> ApplyFuture {
        let me = Arc::clone(&self.inner);
        Box::pin(async move { me.undo_last().await })
    }
}
