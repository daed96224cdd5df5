//! What a sweep could not read, and logging each cause once.
//!
//! A real host's sysfs has devices half initialised or going away, counters
//! a device cannot read, values the kernel refuses: each leaves out only
//! what it touches (a value, a port's counters, a netdev, a device) and
//! becomes a [`Note`]. The source logs a note when it first appears and
//! again only after it cleared and came back, not every sweep.

use std::collections::HashSet;
use tracing::{info, warn};

/// What was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoteKind {
    /// A device could not be read (a required file missing or unreadable,
    /// text that does not parse, the device went away): it is not served.
    DeviceLeftOut,
    /// One value the kernel refused to read (EINVAL, EACCES...): absent.
    ValueAbsent,
    /// A port's counters could not be read (`N/A (no PMA)`, a refused
    /// read, text that is not a number): absent, never 0.
    CountersAbsent,
    /// An IPoIB netdev that could not be read: not listed.
    NetdevLeftOut,
    /// The `--local-node` device is gone: IF-MIB has no ports until it returns.
    LocalNodeAbsent,
}

/// One thing a sweep left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Note {
    pub kind: NoteKind,
    /// The device (`mlx5_0`), port (`mlx5_0 port 1`) or netdev (`ib0`).
    pub subject: String,
    /// Why, naming the file where there is one.
    pub cause: String,
}

impl Note {
    pub fn new(kind: NoteKind, subject: impl Into<String>, cause: impl ToString) -> Self {
        Note {
            kind,
            subject: subject.into(),
            cause: cause.to_string(),
        }
    }

    fn log(&self) {
        let (s, c) = (&self.subject, &self.cause);
        match self.kind {
            NoteKind::DeviceLeftOut => {
                warn!(device = %s, cause = %c, "RDMA device left out (the others are served)")
            }
            NoteKind::ValueAbsent => info!(subject = %s, cause = %c, "value unreadable; absent"),
            NoteKind::CountersAbsent => {
                info!(port = %s, cause = %c, "counters unreadable; absent (not 0)")
            }
            NoteKind::NetdevLeftOut => info!(netdev = %s, cause = %c, "IPoIB netdev left out"),
            NoteKind::LocalNodeAbsent => {
                warn!(device = %s, cause = %c, "local node absent; IF-MIB has no ports until it returns")
            }
        }
    }
}

/// The notes logged and still standing: a sweep logs only those not
/// standing already, and those that cleared may be logged again.
#[derive(Debug, Default)]
pub struct NoteLog {
    standing: HashSet<Note>,
}

impl NoteLog {
    /// Logs the notes of this sweep that are new; returns how many.
    pub fn update(&mut self, notes: &[Note]) -> usize {
        let mut now = HashSet::with_capacity(notes.len());
        let mut logged = 0;
        for n in notes {
            if now.insert(n.clone()) && !self.standing.contains(n) {
                n.log();
                logged += 1;
            }
        }
        self.standing = now;
        logged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_once_until_it_clears() {
        let a = Note::new(NoteKind::ValueAbsent, "mlx5_0 port 1", "rate: EINVAL");
        let b = Note::new(NoteKind::DeviceLeftOut, "mlx5_1", "node_guid: missing");
        let mut log = NoteLog::default();
        assert_eq!(log.update(&[a.clone(), a.clone()]), 1, "a duplicate is one");
        assert_eq!(log.update(std::slice::from_ref(&a)), 0);
        assert_eq!(log.update(&[a.clone(), b.clone()]), 1);
        assert_eq!(log.update(std::slice::from_ref(&b)), 0, "a cleared");
        assert_eq!(log.update(&[a, b]), 1, "a came back");
        let other = Note::new(NoteKind::DeviceLeftOut, "mlx5_1", "state: missing");
        assert_eq!(log.update(&[other]), 1, "a new cause of the same device");
    }
}
