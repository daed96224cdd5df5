//! Publishing a snapshot: everything the modules derive from it, computed
//! once on the source thread, and the history a module carries from one
//! snapshot to the next.
//!
//! Data flows one way: a source sweeps into a new immutable snapshot, the
//! [`Publisher`] runs every registered module's [`Derive`] over it (the
//! registry is [`crate::modules`]), and the daemon swaps the [`Published`]
//! in. Requests build a [`crate::View`] from the current `Published` with
//! reference-count increments only and never wait. Each module's deriver is
//! the only owner of that module's cross-snapshot history, so two publishers
//! (two sources, two tests) never see each other's.
//!
//! This file names no module: a module finds its own rows again by type
//! ([`Published::get`]).

use std::any::Any;
use std::sync::Arc;

use ib::model::Snapshot;

/// What one module derived from one snapshot (its own row type, erased).
pub type Derived = Arc<dyn Any + Send + Sync>;

/// A module's per-snapshot derivation, with whatever history it keeps.
/// Runs on the source thread, once per published snapshot, in order.
pub trait Derive: Send {
    fn derive(&mut self, snapshot: &Arc<Snapshot>) -> Derived;
}

/// Stateless derivations are plain functions.
impl<F> Derive for F
where
    F: FnMut(&Arc<Snapshot>) -> Derived + Send,
{
    fn derive(&mut self, snapshot: &Arc<Snapshot>) -> Derived {
        self(snapshot)
    }
}

/// A snapshot with what the modules derive from it.
#[derive(Clone)]
pub struct Published {
    pub snapshot: Arc<Snapshot>,
    /// One entry per module that derives rows, in registry order.
    pub derived: Arc<[Derived]>,
}

impl Published {
    /// `snapshot` derived on its own, with no history (as an agent's first
    /// snapshot): the placeholder before the first sweep, tests. Successive
    /// snapshots of a source go through one [`Publisher`].
    pub fn new(snapshot: Arc<Snapshot>) -> Self {
        Publisher::new().publish(snapshot)
    }

    /// The rows of type `T` a module derived (None if no module derives a `T`).
    pub fn get<T: Any>(&self) -> Option<&T> {
        find(&self.derived)
    }
}

/// The first derived value of type `T`.
pub(crate) fn find<T: Any>(derived: &[Derived]) -> Option<&T> {
    derived.iter().find_map(|d| d.downcast_ref::<T>())
}

/// Turns each new snapshot of one source into a [`Published`], keeping the
/// modules' history between them. Owned by whoever publishes (the daemon's
/// source thread); `publish` takes `&mut self`, so requests never touch it.
pub struct Publisher {
    derivers: Vec<Box<dyn Derive>>,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("derivers", &self.derivers.len())
            .finish()
    }
}

impl Default for Publisher {
    fn default() -> Self {
        Self::new()
    }
}

impl Publisher {
    /// A publisher running every registered module's deriver.
    pub fn new() -> Self {
        Publisher::with_options(&crate::DeriveOptions::default())
    }

    /// A publisher whose modules derive with `opts`.
    pub fn with_options(opts: &crate::DeriveOptions) -> Self {
        Publisher {
            derivers: crate::derivers(opts),
        }
    }

    /// Also runs `d` on every snapshot (after the modules' derivers): what
    /// the daemon serves beside the MIB modules (e.g. fabric health for
    /// /metrics), found again with [`Published::get`].
    pub fn with_derive(mut self, d: Box<dyn Derive>) -> Self {
        self.derivers.push(d);
        self
    }

    /// Folds in the next snapshot (in publication order) and derives what
    /// the modules serve from it.
    pub fn publish(&mut self, snapshot: Arc<Snapshot>) -> Published {
        let derived: Vec<Derived> = self
            .derivers
            .iter_mut()
            .map(|d| d.derive(&snapshot))
            .collect();
        Published {
            snapshot,
            derived: Arc::from(derived),
        }
    }
}
