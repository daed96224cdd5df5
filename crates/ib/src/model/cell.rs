//! The current snapshot, swapped atomically: readers never block a sweep and a
//! sweep never blocks readers.

use super::snapshot::Snapshot;
use arc_swap::ArcSwapOption;
use std::sync::Arc;

/// Holds the latest `Arc<Snapshot>` (none before the first sweep).
#[derive(Debug, Default)]
pub struct SnapshotCell {
    inner: ArcSwapOption<Snapshot>,
}

impl SnapshotCell {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(snapshot: Arc<Snapshot>) -> Self {
        Self {
            inner: ArcSwapOption::from(Some(snapshot)),
        }
    }

    /// The current snapshot; it stays valid (and unchanged) while the caller holds it.
    pub fn load(&self) -> Option<Arc<Snapshot>> {
        self.inner.load_full()
    }

    /// Publishes a new snapshot, returning the one it replaces.
    pub fn store(&self, snapshot: Arc<Snapshot>) -> Option<Arc<Snapshot>> {
        self.inner.swap(Some(snapshot))
    }
}
