//! What a validated Set varbind becomes.
//!
//! Phase 1 of a Set (every module's `check_set`) turns each varbind into a
//! [`Change`]: a value of the checking module's own type, which says where it
//! takes effect. Only when all varbinds pass does the daemon's one control
//! path apply the list (phase 2). Changes to the agent's own state are
//! applied to a copy of [`SystemState`] and persisted before the response is
//! sent; changes that must reach the fabric become source control
//! operations, sent to the source thread and awaited.
//!
//! To add a writable object: define a type in its module, implement
//! [`ModuleChange`] for it, and return `Change::new(value)` from the
//! column's check. This file names no module.

use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

use crate::SystemState;

/// A module's change to one object instance.
pub trait ModuleChange: Any + Debug + DynEq + Send + Sync {
    /// Where this change takes effect.
    fn effect(&self) -> Effect;

    /// Applies an [`Effect::Agent`] change to `state` (the module's typed
    /// state in `state.modules`). Cannot fail: every check happened in phase 1.
    fn apply(&self, state: &mut SystemState) {
        let _ = state;
    }
}

/// A validated change, owned by the module that checked it.
#[derive(Clone, Debug)]
pub struct Change(Arc<dyn ModuleChange>);

impl Change {
    pub fn new(c: impl ModuleChange) -> Self {
        Change(Arc::new(c))
    }

    /// The module's own value, when it is a `C`.
    pub fn get<C: ModuleChange>(&self) -> Option<&C> {
        let any: &dyn Any = self.0.as_ref();
        any.downcast_ref()
    }

    /// Where this change takes effect.
    pub fn effect(&self) -> Effect {
        self.0.effect()
    }

    /// Applies an [`Effect::Agent`] change to `state`; others leave it be.
    pub fn apply(&self, state: &mut SystemState) {
        self.0.apply(state)
    }
}

/// Equality across the types of [`ModuleChange`] (any `PartialEq` type).
pub trait DynEq {
    fn dyn_eq(&self, other: &dyn Any) -> bool;
}

impl<T: PartialEq + Any> DynEq for T {
    fn dyn_eq(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }
}

/// Two changes are equal when they are equal values of the same type.
impl PartialEq for Change {
    fn eq(&self, other: &Self) -> bool {
        let other: &dyn Any = other.0.as_ref();
        self.0.dyn_eq(other)
    }
}

/// Where a change takes effect.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// The agent's own state (applied by [`Change::apply`], then persisted).
    Agent,
    /// A source control operation (PMA Set, ...), run on the source thread
    /// between sweeps; the Set fails with commitFailed when it fails.
    Fabric(ib::source::ControlOp),
    /// A fabric operation built from several changes of one request
    /// together (one PMA Set per node): see [`grouped_fabric_ops`].
    Grouped,
    /// An operation on the Subnet Manager the daemon steers beside the
    /// fabric source (its files, console, commands). Fails with
    /// commitFailed when it fails.
    Service(ib::opensm::SmOp),
}

/// The fabric operations of a request's [`Effect::Grouped`] changes, each
/// with the index of the first change it came from.
pub fn grouped_fabric_ops(changes: &[Change]) -> Vec<(usize, ib::source::ControlOp)> {
    let mut ops: Vec<_> = crate::REGISTRY
        .iter()
        .filter_map(|d| d.fabric_ops)
        .flat_map(|f| f(changes))
        .collect();
    ops.sort_by_key(|(i, _)| *i);
    ops
}

/// Checks a source's answer to a fabric operation: Err(reason) when the
/// operation "succeeded" without taking effect (commitFailed).
pub fn check_reply(
    op: &ib::source::ControlOp,
    reply: &ib::source::ControlReply,
) -> Result<(), String> {
    crate::REGISTRY
        .iter()
        .filter_map(|d| d.check_reply)
        .try_for_each(|f| f(op, reply))
}
