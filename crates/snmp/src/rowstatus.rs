//! Conceptual rows with a RowStatus column (RFC 2579, the RowStatus textual
//! convention), as a reusable table: creation by createAndGo or createAndWait,
//! activation, suspension (notInService), destruction, with the RFC's errors.
//!
//! Sets are checked as a batch: [`RowTable::check`] sees every varbind of a
//! PDU that names this table at once, so "one PDU creates and fills a row" and
//! "one PDU fills the columns and activates" are judged on the row as the whole
//! PDU leaves it. Checking changes nothing; [`RowTable::apply`] installs what
//! the check returned (phase 2), and the previous rows are what an undo puts
//! back.
//!
//! The row's own columns are the application's: [`RowData`] applies one
//! column value (type and range checks) and says whether the row has what it
//! needs to become active.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::mib::SetError;
use crate::value::Value;

/// RowStatus values (RFC 2579).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowStatus {
    Active = 1,
    NotInService = 2,
    NotReady = 3,
    CreateAndGo = 4,
    CreateAndWait = 5,
    Destroy = 6,
}

impl RowStatus {
    pub fn from_i32(v: i32) -> Option<RowStatus> {
        Some(match v {
            1 => RowStatus::Active,
            2 => RowStatus::NotInService,
            3 => RowStatus::NotReady,
            4 => RowStatus::CreateAndGo,
            5 => RowStatus::CreateAndWait,
            6 => RowStatus::Destroy,
            _ => return None,
        })
    }
}

/// The application's part of a row: its columns other than RowStatus.
pub trait RowData: Clone {
    /// Applies `value` to column `column` (wrongType, wrongValue... on a bad
    /// value; notWritable for a column that cannot be set).
    fn set(&mut self, column: u32, value: &Value) -> Result<(), SetError>;
    /// Whether every column needed to activate the row has a value.
    fn ready(&self) -> bool;
    /// Whether `column` may change while the row is active (RFC 2579 leaves it
    /// to each table; by default no: set the row notInService first).
    fn writable_when_active(&self, column: u32) -> bool {
        let _ = column;
        false
    }
}

/// One row: its status, its columns, and when a Set last touched it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row<R> {
    pub status: RowStatus,
    pub data: R,
    pub touched: Instant,
}

/// What a checked Set does to one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowChange<R> {
    /// The row (new or changed) as the PDU leaves it. `activated`: it became
    /// active in this PDU (the application starts its work then).
    Put {
        index: Vec<u32>,
        row: Row<R>,
        activated: bool,
    },
    /// The row is destroyed (nothing happens for a row that did not exist).
    Delete { index: Vec<u32> },
}

/// One varbind of a Set that names a column of this table.
#[derive(Clone, Debug)]
pub struct ColumnSet<'a> {
    /// Position of the varbind in the PDU (0-based), for the error index.
    pub position: usize,
    pub index: &'a [u32],
    pub column: u32,
    pub value: &'a Value,
}

/// A RowStatus table: rows by index, a cap on their number, idle ageing.
#[derive(Clone, Debug)]
pub struct RowTable<R> {
    /// The RowStatus column's number.
    status_column: u32,
    rows: BTreeMap<Vec<u32>, Row<R>>,
    max_rows: usize,
}

/// How a table's rows take column values, when that needs more than the row
/// ([`RowData`] is the case where it does not): the request's view, other
/// tables.
pub trait RowRules<R> {
    /// Applies one column value to `row` (see [`RowData::set`]).
    fn set(&self, row: &mut R, set: &ColumnSet<'_>) -> Result<(), SetError>;
    /// See [`RowData::ready`].
    fn ready(&self, row: &R) -> bool;
    /// See [`RowData::writable_when_active`].
    fn writable_when_active(&self, row: &R, column: u32) -> bool;
}

/// The rules of a [`RowData`] row: its own.
struct OwnRules;

impl<R: RowData> RowRules<R> for OwnRules {
    fn set(&self, row: &mut R, set: &ColumnSet<'_>) -> Result<(), SetError> {
        row.set(set.column, set.value)
    }
    fn ready(&self, row: &R) -> bool {
        row.ready()
    }
    fn writable_when_active(&self, row: &R, column: u32) -> bool {
        row.writable_when_active(column)
    }
}

impl<R: RowData> RowTable<R> {
    /// Phase 1 for every varbind of a PDU that names this table. `fresh` makes
    /// the columns of a row being created. On error: the varbind's position and
    /// the error, with nothing changed.
    pub fn check(
        &self,
        sets: &[ColumnSet<'_>],
        fresh: impl Fn(&[u32]) -> R,
        now: Instant,
    ) -> Result<Vec<RowChange<R>>, (usize, SetError)> {
        self.check_with(&OwnRules, sets, fresh, now)
    }
}

impl<R: Clone> RowTable<R> {
    pub fn new(status_column: u32, max_rows: usize) -> Self {
        RowTable {
            status_column,
            rows: BTreeMap::new(),
            max_rows,
        }
    }

    pub fn rows(&self) -> &BTreeMap<Vec<u32>, Row<R>> {
        &self.rows
    }

    pub fn get(&self, index: &[u32]) -> Option<&Row<R>> {
        self.rows.get(index)
    }

    /// Puts a row in place as it is (rows restored from storage, rows the
    /// agent's configuration makes), whatever the cap.
    pub fn insert(&mut self, index: Vec<u32>, row: Row<R>) {
        self.rows.insert(index, row);
    }

    /// Changes the cap on rows (rows already there stay).
    pub fn set_max_rows(&mut self, max_rows: usize) {
        self.max_rows = max_rows;
    }

    /// The agent changes a row's status itself (e.g. a request that failed
    /// goes back to notInService); false when there is no such row.
    pub fn set_status(&mut self, index: &[u32], status: RowStatus) -> bool {
        match self.rows.get_mut(index) {
            Some(r) => {
                r.status = status;
                true
            }
            None => false,
        }
    }

    /// [`RowTable::check`] with the row rules of `rules`.
    pub fn check_with(
        &self,
        rules: &dyn RowRules<R>,
        sets: &[ColumnSet<'_>],
        fresh: impl Fn(&[u32]) -> R,
        now: Instant,
    ) -> Result<Vec<RowChange<R>>, (usize, SetError)> {
        // Group by row, keeping the PDU's order within a row.
        let mut by_row: BTreeMap<&[u32], Vec<&ColumnSet<'_>>> = BTreeMap::new();
        for s in sets {
            by_row.entry(s.index).or_default().push(s);
        }
        let mut creating = 0usize;
        let mut out = Vec::with_capacity(by_row.len());
        for (index, sets) in by_row {
            let existing = self.rows.get(index);
            let status_set = sets.iter().find(|s| s.column == self.status_column);
            let requested = match status_set {
                Some(s) => {
                    let v = match s.value {
                        Value::Integer(v) => *v,
                        _ => return Err((s.position, SetError::WrongType)),
                    };
                    match RowStatus::from_i32(v) {
                        // notReady is a state the agent reports, never one to set.
                        Some(RowStatus::NotReady) | None => {
                            return Err((s.position, SetError::WrongValue))
                        }
                        Some(r) => Some((s.position, r)),
                    }
                }
                None => None,
            };
            if let Some((_, RowStatus::Destroy)) = requested {
                // Other columns of a row being destroyed are still checked.
                if let Some(e) = existing {
                    let mut data = e.data.clone();
                    for s in sets.iter().filter(|s| s.column != self.status_column) {
                        rules.set(&mut data, s).map_err(|e| (s.position, e))?;
                    }
                }
                out.push(RowChange::Delete {
                    index: index.to_vec(),
                });
                continue;
            }
            let (mut row, created) = match (existing, requested) {
                (Some(_), Some((pos, RowStatus::CreateAndGo | RowStatus::CreateAndWait))) => {
                    return Err((pos, SetError::InconsistentValue))
                }
                (Some(e), _) => (e.clone(), false),
                (None, Some((pos, RowStatus::CreateAndGo | RowStatus::CreateAndWait))) => {
                    if self.rows.len() + creating >= self.max_rows {
                        return Err((pos, SetError::ResourceUnavailable));
                    }
                    creating += 1;
                    (
                        Row {
                            status: RowStatus::NotReady,
                            data: fresh(index),
                            touched: now,
                        },
                        true,
                    )
                }
                (None, Some((pos, _))) => return Err((pos, SetError::InconsistentValue)),
                // A column of a row that does not exist, with no creation in
                // this PDU: RFC 2579's answer is noCreation.
                (None, None) => {
                    let pos = sets.first().map_or(0, |s| s.position);
                    return Err((pos, SetError::NoCreation));
                }
            };
            let was_active = row.status == RowStatus::Active && !created;
            for s in sets.iter().filter(|s| s.column != self.status_column) {
                if was_active
                    && requested.map(|r| r.1) != Some(RowStatus::NotInService)
                    && !rules.writable_when_active(&row.data, s.column)
                {
                    return Err((s.position, SetError::InconsistentValue));
                }
                rules.set(&mut row.data, s).map_err(|e| (s.position, e))?;
            }
            let ready = rules.ready(&row.data);
            row.status = match requested {
                Some((pos, RowStatus::CreateAndGo)) => {
                    if !ready {
                        return Err((pos, SetError::InconsistentValue));
                    }
                    RowStatus::Active
                }
                Some((_, RowStatus::CreateAndWait)) => {
                    if ready {
                        RowStatus::NotInService
                    } else {
                        RowStatus::NotReady
                    }
                }
                Some((pos, RowStatus::Active)) => {
                    if !ready {
                        return Err((pos, SetError::InconsistentValue));
                    }
                    RowStatus::Active
                }
                Some((pos, RowStatus::NotInService)) => {
                    if !ready {
                        return Err((pos, SetError::InconsistentValue));
                    }
                    RowStatus::NotInService
                }
                // Columns only: a row waiting for them becomes ready.
                _ => match row.status {
                    RowStatus::NotReady if ready => RowStatus::NotInService,
                    s => s,
                },
            };
            row.touched = now;
            let activated = row.status == RowStatus::Active && !was_active;
            out.push(RowChange::Put {
                index: index.to_vec(),
                row,
                activated,
            });
        }
        Ok(out)
    }

    /// Phase 2: installs checked changes.
    pub fn apply(&mut self, changes: Vec<RowChange<R>>) {
        for c in changes {
            match c {
                RowChange::Put { index, row, .. } => {
                    self.rows.insert(index, row);
                }
                RowChange::Delete { index } => {
                    self.rows.remove(&index);
                }
            }
        }
    }

    /// Removes rows no Set touched for `idle`; returns their indexes.
    pub fn age_out(&mut self, idle: Duration, now: Instant) -> Vec<Vec<u32>> {
        let old: Vec<Vec<u32>> = self
            .rows
            .iter()
            .filter(|(_, r)| now.saturating_duration_since(r.touched) >= idle)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &old {
            self.rows.remove(k);
        }
        old
    }
}

/// GetNext over rows kept by index (a [`RowTable`]'s, or any such map):
/// the first cell after `oid` under the entry `root`, column by column in
/// the order of `columns`, rows in index order; `cell` gives a row's value
/// in a column (None: none there).
pub fn next_cell<R>(
    root: &[u32],
    columns: impl IntoIterator<Item = u32>,
    rows: &BTreeMap<Vec<u32>, R>,
    oid: &[u32],
    cell: impl Fn(&[u32], &R, u32) -> Option<Value>,
) -> Option<crate::value::VarBind> {
    use std::ops::Bound;
    let (start, after): (u32, Option<&[u32]>) = match oid.strip_prefix(root) {
        None if oid < root => (0, None),
        None => return None,
        Some([]) => (0, None),
        Some([c, index @ ..]) => (*c, Some(index)),
    };
    for c in columns.into_iter().filter(|&c| c >= start) {
        let from = if c == start { after } else { None };
        let candidates = rows.range::<[u32], _>((
            from.map_or(Bound::Unbounded, Bound::Excluded),
            Bound::Unbounded,
        ));
        for (k, r) in candidates {
            if let Some(v) = cell(k, r, c) {
                let mut id = root.to_vec();
                id.push(c);
                id.extend_from_slice(k);
                return Some(crate::value::VarBind::new(crate::oid::Oid::new(id), v));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request row: a required target (column 2) and an optional count (3).
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Req {
        target: Option<i32>,
        count: i32,
    }

    impl RowData for Req {
        fn set(&mut self, column: u32, value: &Value) -> Result<(), SetError> {
            let v = match value {
                Value::Integer(v) => *v,
                _ => return Err(SetError::WrongType),
            };
            match column {
                2 => self.target = Some(v),
                3 if (1..=10).contains(&v) => self.count = v,
                3 => return Err(SetError::WrongValue),
                _ => return Err(SetError::NotWritable),
            }
            Ok(())
        }
        fn ready(&self) -> bool {
            self.target.is_some()
        }
    }

    const STATUS: u32 = 9;

    fn set<'a>(pos: usize, index: &'a [u32], column: u32, value: &'a Value) -> ColumnSet<'a> {
        ColumnSet {
            position: pos,
            index,
            column,
            value,
        }
    }

    fn run(t: &mut RowTable<Req>, sets: &[ColumnSet<'_>]) -> Result<(), (usize, SetError)> {
        let c = t.check(sets, |_| Req::default(), Instant::now())?;
        t.apply(c);
        Ok(())
    }

    fn status(t: &RowTable<Req>, i: u32) -> Option<RowStatus> {
        t.get(&[i]).map(|r| r.status)
    }

    #[test]
    fn create_and_go_in_one_pdu_with_its_columns() {
        let mut t = RowTable::new(STATUS, 4);
        let (go, target) = (Value::Integer(4), Value::Integer(7));
        run(
            &mut t,
            &[set(0, &[1], STATUS, &go), set(1, &[1], 2, &target)],
        )
        .unwrap();
        assert_eq!(status(&t, 1), Some(RowStatus::Active));
        assert_eq!(t.get(&[1]).unwrap().data.target, Some(7));
    }

    #[test]
    fn create_and_go_with_a_bad_column_creates_nothing() {
        let mut t = RowTable::new(STATUS, 4);
        let (go, target, bad) = (Value::Integer(4), Value::Integer(7), Value::Integer(99));
        let e = run(
            &mut t,
            &[
                set(0, &[1], STATUS, &go),
                set(1, &[1], 2, &target),
                set(2, &[1], 3, &bad),
            ],
        );
        assert_eq!(e, Err((2, SetError::WrongValue)));
        assert!(t.rows().is_empty());
        // Without its required column, createAndGo is inconsistentValue.
        let e = run(&mut t, &[set(0, &[1], STATUS, &go)]);
        assert_eq!(e, Err((0, SetError::InconsistentValue)));
        assert!(t.rows().is_empty());
    }

    #[test]
    fn create_and_wait_fill_activate_suspend_change_destroy() {
        let mut t = RowTable::new(STATUS, 4);
        let (wait, active, nis, destroy) = (
            Value::Integer(5),
            Value::Integer(1),
            Value::Integer(2),
            Value::Integer(6),
        );
        run(&mut t, &[set(0, &[3], STATUS, &wait)]).unwrap();
        assert_eq!(status(&t, 3), Some(RowStatus::NotReady));
        // Activating before the required column is there: inconsistentValue.
        assert_eq!(
            run(&mut t, &[set(0, &[3], STATUS, &active)]),
            Err((0, SetError::InconsistentValue))
        );
        run(&mut t, &[set(0, &[3], 2, &Value::Integer(1))]).unwrap();
        assert_eq!(status(&t, 3), Some(RowStatus::NotInService));
        run(&mut t, &[set(0, &[3], STATUS, &active)]).unwrap();
        assert_eq!(status(&t, 3), Some(RowStatus::Active));
        // An active row's columns do not change under it...
        assert_eq!(
            run(&mut t, &[set(0, &[3], 3, &Value::Integer(2))]),
            Err((0, SetError::InconsistentValue))
        );
        // ...but do once it is notInService (in the same PDU too).
        run(
            &mut t,
            &[
                set(0, &[3], STATUS, &nis),
                set(1, &[3], 3, &Value::Integer(2)),
            ],
        )
        .unwrap();
        assert_eq!(status(&t, 3), Some(RowStatus::NotInService));
        assert_eq!(t.get(&[3]).unwrap().data.count, 2);
        run(&mut t, &[set(0, &[3], STATUS, &active)]).unwrap();
        run(&mut t, &[set(0, &[3], STATUS, &destroy)]).unwrap();
        assert!(t.rows().is_empty());
        // Destroying a row that does not exist is no error.
        run(&mut t, &[set(0, &[3], STATUS, &destroy)]).unwrap();
    }

    #[test]
    fn the_rfcs_errors() {
        let mut t = RowTable::new(STATUS, 1);
        let (go, wait, active, not_ready, target) = (
            Value::Integer(4),
            Value::Integer(5),
            Value::Integer(1),
            Value::Integer(3),
            Value::Integer(1),
        );
        // notReady and out-of-range values are wrongValue; non-integers wrongType.
        assert_eq!(
            run(&mut t, &[set(0, &[1], STATUS, &not_ready)]),
            Err((0, SetError::WrongValue))
        );
        assert_eq!(
            run(&mut t, &[set(0, &[1], STATUS, &Value::Integer(7))]),
            Err((0, SetError::WrongValue))
        );
        assert_eq!(
            run(&mut t, &[set(0, &[1], STATUS, &Value::Null)]),
            Err((0, SetError::WrongType))
        );
        // active on a row that does not exist; a column of one: noCreation.
        assert_eq!(
            run(&mut t, &[set(0, &[1], STATUS, &active)]),
            Err((0, SetError::InconsistentValue))
        );
        assert_eq!(
            run(&mut t, &[set(0, &[1], 2, &target)]),
            Err((0, SetError::NoCreation))
        );
        run(&mut t, &[set(0, &[1], STATUS, &wait)]).unwrap();
        // Creating an existing row: inconsistentValue; past the cap: resourceUnavailable.
        assert_eq!(
            run(&mut t, &[set(0, &[1], STATUS, &go)]),
            Err((0, SetError::InconsistentValue))
        );
        assert_eq!(
            run(&mut t, &[set(0, &[2], STATUS, &wait)]),
            Err((0, SetError::ResourceUnavailable))
        );
    }

    #[test]
    fn idle_rows_age_out() {
        let mut t = RowTable::new(STATUS, 4);
        let t0 = Instant::now();
        let wait = Value::Integer(5);
        let c = t
            .check(&[set(0, &[1], STATUS, &wait)], |_| Req::default(), t0)
            .unwrap();
        t.apply(c);
        assert!(t
            .age_out(Duration::from_secs(300), t0 + Duration::from_secs(10))
            .is_empty());
        assert_eq!(
            t.age_out(Duration::from_secs(300), t0 + Duration::from_secs(301)),
            vec![vec![1]]
        );
        assert!(t.rows().is_empty());
    }
}
