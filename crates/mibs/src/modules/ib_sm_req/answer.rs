//! What a request is answered with, and which table it is of: the data the
//! request kinds compute and the sessions keep.

use ib::mad::sa::PathRecord;

/// Which request table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Path,
    MultiPath,
    Trace,
}

/// A computed answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Paths(Vec<PathRecord>),
    Trace(Vec<TraceHop>),
}

impl Answer {
    /// Its result rows.
    pub fn len(&self) -> usize {
        match self {
            Answer::Paths(p) => p.len(),
            Answer::Trace(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One node of a trace (the ibSmTraceResultTable columns, TraceRecord's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHop {
    pub id_generation: u16,
    /// IbNodeType: 1 channel adapter, 2 switch, 3 router.
    pub node_type: u8,
    pub node_id: u64,
    pub chassis_id: u64,
    /// CA: the port's GUID; reserved (0) otherwise.
    pub entry_port_id: u64,
    pub exit_port_id: u64,
    /// Switch: the port entered by (0 at the source).
    pub entry_port: u8,
    /// Switch: the port left by (0 at the destination).
    pub exit_port: u8,
}
