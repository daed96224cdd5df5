//! The fabric model: an immutable [`Snapshot`] of what IBA management sees
//! (what SMP, SA and PMA MADs deliver), swapped atomically in a [`SnapshotCell`].
//!
//! - [`snapshot`]: nodes, ports, switches, SMs, partitions, multicast groups,
//!   services, per-port counter readings, lookup indexes; [`SnapshotBuilder`];
//! - [`counters`]: raw PMA readings and the one place 4-octet units become octets
//!   (draft-ietf-ipoib-ibif-mib section 2.4 formulas);
//! - [`accum`]: 64-bit monotonic totals from successive readings, discontinuities;
//! - [`cell`]: the atomically swapped current snapshot;
//! - [`events`]: fabric events from diffing consecutive snapshots;
//! - [`dump`]: ibnetdiscover text and JSON renderings of a snapshot.

pub mod accum;
pub mod cell;
pub mod check;
pub mod counters;
mod credit;
pub mod dump;
pub mod events;
pub mod health;
pub mod paths;
pub mod route;
pub mod routes;
pub mod snapshot;

pub use accum::{advance, CounterHistory, CounterWidth, PortCounterState, PortTotals, VlCounts};
pub use cell::SnapshotCell;
pub use counters::{ExtendedFields, PortReadings};
pub use dump::{dump_ibnetdiscover, dump_json, to_topology};
pub use events::{compare, diff, AttributeChange, Diff, FabricEvent, FabricEventKind};
pub use snapshot::{
    IpoibInterface, McastGroup, Node, NodeIdx, Partition, PartitionMember, PhaseCost, Port,
    PortIdx, Sampling, SmRecord, Snapshot, SnapshotBuilder, SweepCost, SweepInfo, SwitchData,
};
