//! Publishing a snapshot: everything the modules derive from it, computed
//! once on the source thread, and the history a module carries from one
//! snapshot to the next.
//!
//! Data flows one way: a source sweeps into a new immutable snapshot, the
//! [`Publisher`] runs the [`Derive`] over it (the crate root's
//! [`crate::Deriver`], one typed field per module) and the daemon swaps the
//! [`Published`] in. Requests build a view from the current `Published` with
//! reference-count increments only and never wait. The deriver is the only
//! owner of the modules' cross-snapshot history, so two publishers (two
//! sources, two tests) never see each other's.
//!
//! Beside the modules' rows, a publisher may derive what its owner serves
//! besides the MIB modules (the daemon's fabric health, ...): the `extra`,
//! of the owner's own type. This file names no module.

use std::sync::Arc;

use ib::model::Snapshot;

/// The per-snapshot derivation of rows `Rows`, with whatever history it keeps.
/// Runs on the source thread, once per published snapshot, in order.
pub trait Derive: Send {
    type Rows: Send + Sync;
    fn derive(&mut self, snapshot: &Arc<Snapshot>) -> Self::Rows;
}

/// A snapshot with what was derived from it: the modules' rows `D`, the
/// owner's extra `X`.
pub struct Published<D, X> {
    pub snapshot: Arc<Snapshot>,
    pub derived: Arc<D>,
    pub extra: X,
}

impl<D, X: Clone> Clone for Published<D, X> {
    fn clone(&self) -> Self {
        Published {
            snapshot: Arc::clone(&self.snapshot),
            derived: Arc::clone(&self.derived),
            extra: self.extra.clone(),
        }
    }
}

/// How the owner derives its extra from each snapshot.
pub type ExtraFn<X> = Box<dyn FnMut(&Arc<Snapshot>) -> X + Send>;

/// Turns each new snapshot of one source into a [`Published`], keeping the
/// history between them. Owned by whoever publishes (the daemon's source
/// thread); `publish` takes `&mut self`, so requests never touch it.
pub struct Publisher<G, X> {
    deriver: G,
    extra: ExtraFn<X>,
}

impl<G, X> std::fmt::Debug for Publisher<G, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher").finish_non_exhaustive()
    }
}

impl<G: Derive> Publisher<G, ()> {
    /// A publisher of `deriver`'s rows and no extra.
    pub fn of(deriver: G) -> Self {
        Publisher {
            deriver,
            extra: Box::new(|_| ()),
        }
    }
}

impl<G: Derive, X> Publisher<G, X> {
    /// Also derives `extra` from every snapshot (after the modules' rows),
    /// published as [`Published::extra`].
    pub fn with_extra<Y>(
        self,
        extra: impl FnMut(&Arc<Snapshot>) -> Y + Send + 'static,
    ) -> Publisher<G, Y> {
        Publisher {
            deriver: self.deriver,
            extra: Box::new(extra),
        }
    }

    /// Folds in the next snapshot (in publication order) and derives what
    /// is served from it.
    pub fn publish(&mut self, snapshot: Arc<Snapshot>) -> Published<G::Rows, X> {
        let derived = Arc::new(self.deriver.derive(&snapshot));
        let extra = (self.extra)(&snapshot);
        Published {
            snapshot,
            derived,
            extra,
        }
    }
}
