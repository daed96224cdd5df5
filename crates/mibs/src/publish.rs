//! Publishing a snapshot: everything the modules derive from it, computed
//! once on the source thread, and the history IF-MIB carries from one
//! snapshot to the next.
//!
//! Data flows one way: a source sweeps into a new immutable snapshot, the
//! [`Publisher`] derives a [`Published`] from it (IF-MIB interfaces, IB-PM-MIB
//! rows), and the daemon swaps that in. Requests build a [`crate::View`] from
//! the current `Published` with reference-count increments only and never
//! wait. The publisher is the only owner of cross-snapshot history, so two
//! publishers (two sources, two tests) never see each other's.

use std::sync::Arc;

use ib::model::{NodeIdx, Snapshot};
use snmp::table::RowSet;

use crate::if_mib::{IfHistory, Interfaces};

/// A snapshot with what the modules derive from it.
#[derive(Clone)]
pub struct Published {
    pub snapshot: Arc<Snapshot>,
    /// The local node's interfaces (IF-MIB, IB-IF-MIB rows and history).
    pub interfaces: Arc<Interfaces>,
    /// IB-PM-MIB's rows: every node in GUID order
    /// ([`crate::ib_pm_mib::node_rows`]).
    pub pm_rows: Arc<RowSet<NodeIdx>>,
}

impl Published {
    /// `snapshot` derived on its own, with no history (as an agent's first
    /// snapshot): the placeholder before the first sweep, tests. Successive
    /// snapshots of a source go through one [`Publisher`].
    pub fn new(snapshot: Arc<Snapshot>) -> Self {
        Publisher::new().publish(snapshot)
    }
}

/// Turns each new snapshot of one source into a [`Published`], keeping the
/// history between them. Owned by whoever publishes (the daemon's source
/// thread); `publish` takes `&mut self`, so requests never touch it.
#[derive(Debug, Default)]
pub struct Publisher {
    /// ifLastChange, ifCounterDiscontinuityTime, ifTableLastChange.
    interfaces: IfHistory,
}

impl Publisher {
    pub fn new() -> Self {
        Self::default()
    }

    /// A publisher whose IF-MIB interfaces are numbered from `offset + 1`
    /// ([`IfHistory::with_if_index_offset`]).
    pub fn with_if_index_offset(offset: u32) -> Self {
        Publisher {
            interfaces: IfHistory::with_if_index_offset(offset),
        }
    }

    /// Folds in the next snapshot (in publication order) and derives what
    /// the modules serve from it.
    pub fn publish(&mut self, snapshot: Arc<Snapshot>) -> Published {
        Published {
            interfaces: Arc::new(self.interfaces.derive(&snapshot)),
            pm_rows: Arc::new(crate::ib_pm_mib::node_rows(&snapshot)),
            snapshot,
        }
    }
}
