//! The SNMPv3 administrative tables, managed over SNMP the way net-snmp's
//! `snmpusm` and `snmpvacm` expect: usmUserTable, the VACM tables,
//! SNMP-TARGET-MIB and SNMP-NOTIFICATION-MIB. Each is a RowStatus table
//! (RFC 2579) with a StorageType column, held in its module's persisted
//! state ([`crate::core::state`]), so a Set takes effect when the state is
//! published and survives a restart:
//!
//! - rows from the configuration file are `permanent` and refuse Sets
//!   (wrongValue, as RFC 3414 asks of usmUserTable); they are never written
//!   to the state file, which is not their source;
//! - rows created over SNMP are `nonVolatile` (written) unless created
//!   `volatile` (kept until the agent stops).
//!
//! A module declares a row type ([`AdminRow`]) per table and serves it with
//! [`AdminTable`]; TestAndIncr spin locks are [`spin_lock`] scalars.
//!
//! It lives beside the modules, not in [`crate::core`]: it reads and
//! changes the agent's state ([`crate::SystemState`]) and makes the
//! crate's [`Change`], which name every module.

use std::fmt::Debug;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use snmp::dispatch::Clearance;
use snmp::mib::{Access, SetError, SetItem};
use snmp::oid::Oid;
use snmp::rowstatus::{ColumnSet, Row, RowChange, RowRules, RowStatus, RowTable};
use snmp::value::Value;

use crate::core::oids;
use crate::core::rowstatus::{RowStatusKind, RowStatusTable};
use crate::{Change, SystemState, View};

/// The most rows one administrative table holds (an unauthenticated peer
/// cannot create any, an authorized one cannot exhaust memory).
pub const MAX_ROWS: usize = 1000;

/// StorageType (RFC 2579).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StorageType {
    Other = 1,
    Volatile = 2,
    #[default]
    NonVolatile = 3,
    Permanent = 4,
    ReadOnly = 5,
}

impl StorageType {
    fn from_i32(v: i32) -> Option<Self> {
        Some(match v {
            1 => StorageType::Other,
            2 => StorageType::Volatile,
            3 => StorageType::NonVolatile,
            4 => StorageType::Permanent,
            5 => StorageType::ReadOnly,
            _ => return None,
        })
    }

    /// Rows the configuration makes: Sets refuse them.
    pub fn fixed(self) -> bool {
        matches!(self, StorageType::Permanent | StorageType::ReadOnly)
    }
}

/// What a module's state does after one of its tables changed: rebuild what
/// it derives from the rows (the engine's users, the VACM, the sinks).
pub trait AdminState: crate::StateOf {
    fn refresh(&mut self) {}
}

/// One table's columns other than RowStatus and StorageType.
pub trait AdminRow:
    Clone + Default + PartialEq + Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The module state holding the table.
    type State: AdminState;
    /// The entry's OID.
    const ENTRY: &'static [u32];
    /// The RowStatus column.
    const STATUS: u32;
    /// The StorageType column.
    const STORAGE: u32;
    fn rows(s: &Self::State) -> &AdminRows<Self>;
    fn rows_mut(s: &mut Self::State) -> &mut AdminRows<Self>;

    /// Whether `index` is a well-formed index (its lengths and ranges): a row
    /// is never created at another (noCreation).
    fn valid_index(index: &[u32]) -> bool;

    /// A new row's columns (the MIB's DEFVALs), for `index`.
    fn fresh(index: &[u32]) -> Self {
        let _ = index;
        Self::default()
    }

    /// Column `column` of this row (None: not served for it).
    fn read(&self, view: &View, index: &[u32], column: u32) -> Option<Value>;

    /// Applies one value (the MIB's syntax is already checked).
    fn set(
        &mut self,
        view: &View,
        index: &[u32],
        column: u32,
        value: &Value,
    ) -> Result<(), SetError>;

    /// Whether the row has what it needs to become active.
    fn ready(&self) -> bool {
        true
    }

    /// Whether `column` may change while the row is active (RFC 2579 leaves
    /// it to each table). The administrative MIBs allow it by default.
    fn writable_when_active(&self, column: u32) -> bool {
        let _ = column;
        true
    }

    /// Whether a Set of `column` to `value` on this row (None: a row not yet
    /// there) needs authPriv, whatever the tables' write rule: a change
    /// that would send a hidden value (a community) where the writer says.
    /// Such Sets answer notWritable below authPriv.
    fn needs_clearance(row: Option<&Self>, view: &View, column: u32, value: &Value) -> bool {
        let _ = (row, view, column, value);
        false
    }
}

/// A row as stored: the table's columns and its StorageType.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry<R> {
    pub storage: StorageType,
    #[serde(flatten)]
    pub data: R,
}

/// One table's rows.
#[derive(Clone, Debug)]
pub struct AdminRows<R: AdminRow> {
    table: RowTable<Entry<R>>,
}

impl<R: AdminRow> Default for AdminRows<R> {
    fn default() -> Self {
        AdminRows {
            table: RowTable::new(R::STATUS, MAX_ROWS),
        }
    }
}

impl<R: AdminRow> PartialEq for AdminRows<R> {
    fn eq(&self, other: &Self) -> bool {
        let same = |a: &Row<Entry<R>>, b: &Row<Entry<R>>| a.status == b.status && a.data == b.data;
        let (a, b) = (self.table.rows(), other.table.rows());
        a.len() == b.len() && a.iter().zip(b).all(|((i, x), (j, y))| i == j && same(x, y))
    }
}

/// A row in the state file (its index dotted, as in an instance OID).
#[derive(Serialize, Deserialize)]
struct Saved<R> {
    index: String,
    status: i32,
    #[serde(flatten)]
    entry: Entry<R>,
}

impl<R: AdminRow> Serialize for AdminRows<R> {
    /// Only `nonVolatile` rows: the others come from the configuration or
    /// end with the agent.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.table
                .rows()
                .iter()
                .filter(|(_, r)| r.data.storage == StorageType::NonVolatile)
                .map(|(index, r)| Saved {
                    index: Oid::from_slice(index).to_string(),
                    status: r.status as i32,
                    entry: r.data.clone(),
                }),
        )
    }
}

impl<'de, R: AdminRow> Deserialize<'de> for AdminRows<R> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let saved: Vec<Saved<R>> = Vec::deserialize(d)?;
        let mut rows = AdminRows::default();
        let now = Instant::now();
        for s in saved {
            let status = match RowStatus::from_i32(s.status) {
                Some(st @ (RowStatus::Active | RowStatus::NotInService | RowStatus::NotReady)) => {
                    st
                }
                _ => return Err(serde::de::Error::custom("bad row status")),
            };
            let index = s
                .index
                .parse::<Oid>()
                .ok()
                .map(|o| o.as_slice().to_vec())
                .filter(|i| R::valid_index(i))
                .ok_or_else(|| serde::de::Error::custom(format!("bad row index {:?}", s.index)))?;
            rows.table.insert(
                index,
                Row {
                    status,
                    data: s.entry,
                    touched: now,
                },
            );
        }
        Ok(rows)
    }
}

impl<R: AdminRow> AdminRows<R> {
    /// Every row by index, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u32], &Row<Entry<R>>)> + '_ {
        self.table.rows().iter().map(|(k, r)| (k.as_slice(), r))
    }

    /// The rows in force: active ones.
    pub fn active(&self) -> impl Iterator<Item = (&[u32], &R)> + '_ {
        self.iter()
            .filter(|(_, r)| r.status == RowStatus::Active)
            .map(|(k, r)| (k, &r.data.data))
    }

    pub fn get(&self, index: &[u32]) -> Option<&Row<Entry<R>>> {
        self.table.get(index)
    }

    /// A row of the configuration: active and `permanent`. A row created
    /// over SNMP at the same index gives way (the configuration is the
    /// operator's word); returns whether one did.
    pub fn put_configured(&mut self, index: Vec<u32>, data: R) -> bool {
        let replaced = self.table.get(&index).is_some();
        self.table.insert(
            index,
            Row {
                status: RowStatus::Active,
                data: Entry {
                    storage: StorageType::Permanent,
                    data,
                },
                touched: Instant::now(),
            },
        );
        replaced
    }

    /// Takes the configuration's rows out (a reloaded configuration puts
    /// its own).
    pub fn clear_configured(&mut self) {
        let fixed = self
            .table
            .rows()
            .iter()
            .filter(|(_, r)| r.data.storage.fixed())
            .map(|(index, _)| RowChange::Delete {
                index: index.clone(),
            })
            .collect();
        self.table.apply(fixed);
    }

    fn apply(&mut self, changes: Vec<RowChange<Entry<R>>>) {
        self.table.apply(changes)
    }
}

/// A checked Set of one table: its rows as the PDU leaves them.
#[derive(Clone, Debug, PartialEq)]
pub struct AdminChange<R: AdminRow> {
    changes: Vec<RowChange<Entry<R>>>,
}

/// A checked Set of an admin table or a spin lock as the crate root's
/// [`Change`] (implemented there, one variant per table).
pub trait IntoChange {
    fn into_change(self) -> Change;
}

impl<R: AdminRow> AdminChange<R> {
    /// Phase 2: into the module's state (persisted).
    pub(crate) fn apply(&self, state: &mut SystemState) {
        state.modules.update::<R::State>(|s| {
            R::rows_mut(s).apply(self.changes.clone());
            s.refresh();
        });
    }
}

/// An administrative table: the RowStatus adapter over a module's rows.
pub type AdminTable<R> = RowStatusTable<AdminRowsOf<R>>;

/// Where an administrative table's rows live (its module's state).
pub struct AdminRowsOf<R>(std::marker::PhantomData<fn() -> R>);

impl<R: AdminRow> AdminTable<R> {
    /// The table of rows `R`, serving every accessible column of the MIB
    /// file's (generated), so no table declares them again.
    pub fn new() -> Self {
        let mut columns: Vec<(u32, Access)> = oids::columns(R::ENTRY)
            .filter(|o| o.access.readable())
            .map(|o| (crate::core::util::last(o.oid), o.access))
            .collect();
        columns.sort_unstable_by_key(|(c, _)| *c);
        RowStatusTable::of(R::ENTRY, columns, AdminRowsOf(std::marker::PhantomData))
    }
}

impl<R: AdminRow> Default for AdminTable<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// Table `R`'s rows in the view (its module's state).
fn table_of<R: AdminRow>(view: &View) -> &RowTable<Entry<R>> {
    &R::rows(view.system.modules.get::<R::State>()).table
}

/// The rules of one Set: the view the row's columns read.
struct Rules<'a> {
    view: &'a View,
}

impl<R: AdminRow> RowRules<Entry<R>> for Rules<'_> {
    fn set(&self, row: &mut Entry<R>, s: &ColumnSet<'_>) -> Result<(), SetError> {
        if s.column == R::STORAGE {
            let Value::Integer(v) = s.value else {
                return Err(SetError::WrongType);
            };
            return match StorageType::from_i32(*v) {
                // Only the configuration makes fixed rows.
                Some(t @ (StorageType::Volatile | StorageType::NonVolatile)) => {
                    row.storage = t;
                    Ok(())
                }
                _ => Err(SetError::WrongValue),
            };
        }
        row.data.set(self.view, s.index, s.column, s.value)
    }
    fn ready(&self, row: &Entry<R>) -> bool {
        row.data.ready()
    }
    fn writable_when_active(&self, row: &Entry<R>, column: u32) -> bool {
        row.data.writable_when_active(column)
    }
}

impl<R: AdminRow> RowStatusKind for AdminRowsOf<R>
where
    AdminChange<R>: IntoChange,
{
    type Row = Entry<R>;
    type View = View;
    type Change = Change;

    fn rows<'a>(&self, view: &'a View) -> Option<&'a RowTable<Entry<R>>> {
        Some(table_of::<R>(view))
    }

    fn cell(&self, view: &View, index: &[u32], row: &Row<Entry<R>>, column: u32) -> Option<Value> {
        if column == R::STATUS {
            Some(Value::Integer(row.status as i32))
        } else if column == R::STORAGE {
            Some(Value::Integer(row.data.storage as i32))
        } else {
            row.data.data.read(view, index, column)
        }
    }

    fn admit(
        &self,
        view: &View,
        s: &SetItem<'_>,
        column: u32,
        index: &[u32],
    ) -> Result<(), SetError> {
        let row = self.rows(view).and_then(|t| t.get(index));
        if s.clearance != Clearance::Secret
            && R::needs_clearance(row.map(|r| &r.data.data), view, column, s.value)
        {
            return Err(SetError::NotWritable);
        }
        let mut col_oid = R::ENTRY.to_vec();
        col_oid.push(column);
        if let Some(syntax) = oids::syntax(&col_oid) {
            syntax.check(s.value)?;
        }
        match row {
            // RFC 3414 (usmUserStorageType): a Set a fixed row does not
            // accept at all is wrongValue.
            Some(r) if r.data.storage.fixed() => Err(SetError::WrongValue),
            Some(_) => Ok(()),
            None if !R::valid_index(index) => Err(SetError::NoCreation),
            None => Ok(()),
        }
    }

    fn check(&self, view: &View, cols: &[ColumnSet<'_>]) -> Result<Change, (usize, SetError)> {
        let changes = table_of::<R>(view).check_with(
            &Rules { view },
            cols,
            |index| Entry {
                storage: StorageType::NonVolatile,
                data: R::fresh(index),
            },
            Instant::now(),
        )?;
        Ok(AdminChange::<R> { changes }.into_change())
    }
}

// ----- TestAndIncr spin locks -----------------------------------------------------------

/// A TestAndIncr (RFC 2579) value: a Set must name the current value, which
/// then moves on by one (2147483647 wraps to 0). Kept for this run only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpinLock(pub i32);

impl SpinLock {
    /// The value after a successful Set.
    pub fn next(self) -> SpinLock {
        SpinLock(self.0.checked_add(1).unwrap_or(0))
    }

    /// Phase 1 of a Set of `v` against the current value.
    pub fn check(self, v: &Value) -> Result<(), SetError> {
        match v {
            Value::Integer(x) if *x == self.0 => Ok(()),
            Value::Integer(x) if *x < 0 => Err(SetError::WrongValue),
            Value::Integer(_) => Err(SetError::InconsistentValue),
            _ => Err(SetError::WrongType),
        }
    }
}

/// A Set of a spin lock in module state `S` (found by `lock`).
#[derive(Clone, Debug)]
pub struct SpinLockChange<S> {
    lock: fn(&mut S) -> &mut SpinLock,
}

/// A module has one spin lock per table family; any two Sets of them are
/// the same change.
impl<S> PartialEq for SpinLockChange<S> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<S: AdminState> SpinLockChange<S> {
    /// Phase 2: the lock's next value.
    pub(crate) fn apply(&self, state: &mut SystemState) {
        state.modules.update::<S>(|s| {
            let l = (self.lock)(s);
            *l = l.next();
        });
    }
}

/// The spin lock scalar of module state `S` at `oid` (without `.0`).
pub fn spin_lock<S: AdminState>(
    oid: &'static [u32],
    get: fn(&S) -> SpinLock,
    lock: fn(&mut S) -> &mut SpinLock,
) -> crate::Object
where
    SpinLockChange<S>: IntoChange,
{
    let read = move |v: &View| Value::Integer(get(v.system.modules.get::<S>()).0);
    std::sync::Arc::new(snmp::table::Scalar::read_write(
        Oid::from_slice(oid),
        read,
        move |v: &View, value: &Value| {
            get(v.system.modules.get::<S>()).check(value)?;
            Ok(SpinLockChange::<S> { lock }.into_change())
        },
    ))
}

/// Octets of an index part: `len` sub-identifiers each 0..=255.
pub fn index_octets(index: &[u32]) -> Option<Vec<u8>> {
    index.iter().map(|&b| u8::try_from(b).ok()).collect()
}

/// The length-prefixed octet string at the start of `index` and the rest.
pub fn split_string(index: &[u32]) -> Option<(Vec<u8>, &[u32])> {
    let (&len, rest) = index.split_first()?;
    let (s, rest) = rest.split_at_checked(usize::try_from(len).ok()?)?;
    Some((index_octets(s)?, rest))
}

/// An octet string as a length-prefixed index part.
pub fn string_index(s: &[u8], out: &mut Vec<u32>) {
    out.push(u32::try_from(s.len()).unwrap_or(u32::MAX));
    out.extend(s.iter().map(|&b| u32::from(b)));
}

/// Index strings checked against SIZE(lo..hi).
pub fn sized(s: &[u8], lo: usize, hi: usize) -> bool {
    (lo..=hi).contains(&s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_lock_test_and_incr() {
        let l = SpinLock(41);
        assert_eq!(l.check(&Value::Integer(41)), Ok(()));
        assert_eq!(
            l.check(&Value::Integer(40)),
            Err(SetError::InconsistentValue)
        );
        assert_eq!(l.check(&Value::Integer(-1)), Err(SetError::WrongValue));
        assert_eq!(
            l.check(&Value::OctetString(vec![])),
            Err(SetError::WrongType)
        );
        assert_eq!(l.next(), SpinLock(42));
        assert_eq!(SpinLock(i32::MAX).next(), SpinLock(0));
    }

    #[test]
    fn index_strings() {
        let mut i = Vec::new();
        string_index(b"ab", &mut i);
        string_index(b"", &mut i);
        assert_eq!(i, vec![2, 97, 98, 0]);
        let (a, rest) = split_string(&i).unwrap();
        assert_eq!(a, b"ab");
        assert_eq!(split_string(rest), Some((Vec::new(), &[][..])));
        assert!(split_string(&[3, 1]).is_none());
        assert!(split_string(&[1, 256]).is_none());
    }

    #[test]
    fn only_fixed_storage_types_are_fixed() {
        for (v, fixed) in [(1, false), (2, false), (3, false), (4, true), (5, true)] {
            assert_eq!(StorageType::from_i32(v).unwrap().fixed(), fixed);
        }
        assert!(StorageType::from_i32(6).is_none());
    }
}
