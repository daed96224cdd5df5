//! The request and result tables as MIB objects over the view's sessions:
//! a request table checks a PDU's varbinds of its rows together
//! (RowStatus), a result table reads the answers in place.

use std::time::Instant;

use snmp::mib::{MibObject, SetError, SetItem};
use snmp::oid::Oid;
use snmp::rowstatus::{ColumnSet, Row, RowChange, RowData, RowTable};
use snmp::table::Access;
use snmp::value::{Value, VarBind};

use super::answer::Kind;
use super::store::{Sessions, Stored};
use super::{ReqKind, CREATION_TIME, STATUS};
use crate::core::rowstatus::{RowStatusKind, RowStatusTable};
use crate::core::util::oid;
use crate::core::value::ticks_at;
use crate::Change;
use crate::View;

/// The request index: 8 octets of subnet prefix, then the session id.
fn parse_req_index(index: &[u32]) -> Option<(u64, u32)> {
    let (prefix, session) = index.split_at_checked(8)?;
    let &[session] = session else { return None };
    let mut p = 0u64;
    for &b in prefix {
        p = (p << 8) | u64::from(u8::try_from(b).ok()?);
    }
    (session <= i32::MAX as u32).then_some((p, session))
}

/// A request table (ibSmPathReqTable, ibSmMultiPathReqTable,
/// ibSmTraceReqTable): the RowStatus adapter over the view's sessions.
pub(super) type ReqTable<R> = RowStatusTable<ReqRows<R>>;

/// Where a request table's rows live (the sessions).
pub(super) struct ReqRows<R>(std::marker::PhantomData<fn() -> R>);

impl<R: ReqKind + Stored> ReqTable<R> {
    /// The table of requests `R`: RowStatus, the creation time
    /// (read-only), then the request's own columns.
    pub(super) fn new() -> Self {
        let columns = (STATUS..=R::last_column())
            .map(|c| {
                let a = if c == CREATION_TIME {
                    Access::ReadOnly
                } else {
                    Access::ReadCreate
                };
                (c, a)
            })
            .collect();
        RowStatusTable::of(R::ENTRY, columns, ReqRows(std::marker::PhantomData))
    }
}

impl<R: ReqKind + Stored> RowStatusKind for ReqRows<R> {
    type Row = R;
    type View = View;
    type Change = Change;

    fn rows<'a>(&self, view: &'a View) -> Option<&'a RowTable<R>> {
        Some(R::table(&view.system.requests))
    }

    fn cell(&self, view: &View, _: &[u32], row: &Row<R>, column: u32) -> Option<Value> {
        match column {
            STATUS => Some(Value::Integer(row.status as i32)),
            CREATION_TIME => Some(Value::TimeTicks(ticks_at(
                view.system.started,
                Some(row.data.created()),
            ))),
            c => row.data.column(c),
        }
    }

    fn admit(&self, view: &View, _: &SetItem<'_>, _: u32, index: &[u32]) -> Result<(), SetError> {
        match parse_req_index(index) {
            Some((prefix, _)) if prefix == view.snapshot.subnet_prefix => Ok(()),
            _ => Err(SetError::NoCreation),
        }
    }

    fn check(&self, view: &View, cols: &[ColumnSet<'_>]) -> Result<Change, (usize, SetError)> {
        let now = Instant::now();
        let store = &view.system.requests;
        let changes = R::table(store).check(
            cols,
            |_| {
                let mut r = R::default();
                r.set_created(now);
                r
            },
            now,
        )?;
        // A trace follows the path request with the same index: it must be
        // there, with a source and a destination, when the trace starts.
        if R::KIND == Kind::Trace {
            for ch in &changes {
                if let RowChange::Put {
                    index,
                    activated: true,
                    ..
                } = ch
                {
                    let ok = store.path.get(index).is_some_and(|p| p.data.ready());
                    if !ok {
                        let pos = cols
                            .iter()
                            .find(|c| c.index == index.as_slice() && c.column == STATUS)
                            .map_or(0, |c| c.position);
                        return Err((pos, SetError::InconsistentValue));
                    }
                }
            }
        }
        Ok(Change::Req(R::change(changes)))
    }
}

// ----- the result tables ----------------------------------------------------------

/// The request index (9 sub-identifiers) and result index of a result row.
const REQ_INDEX_LEN: usize = 9;

/// One cell of a result table: `o` is column, request index, result index.
fn result_get(s: &Sessions, root: &Oid, kind: Kind, last_col: u32, o: &[u32]) -> Value {
    let Some([c, index @ ..]) = o.strip_prefix(root.as_slice()) else {
        return Value::NoSuchObject;
    };
    if !(4..=last_col).contains(c) {
        return Value::NoSuchObject;
    }
    let (Some((req, [i])), Some(col)) = (
        index.split_at_checked(REQ_INDEX_LEN),
        usize::try_from(c - 4).ok(),
    ) else {
        return Value::NoSuchInstance;
    };
    s.answers
        .get(&(kind, req.to_vec()))
        .and_then(|p| p.rows.as_ref())
        .and_then(|rows| rows.get(usize::try_from(i.checked_sub(1)?).ok()?))
        .and_then(|row| row.get(col).cloned())
        .unwrap_or(Value::NoSuchInstance)
}

/// The first result cell after `o` (column by column, rows in index order),
/// read straight from the answers: no copy of the table per request.
fn result_next(s: &Sessions, root: &Oid, kind: Kind, last_col: u32, o: &[u32]) -> Option<VarBind> {
    let (start_col, after): (u32, Option<&[u32]>) = match o.strip_prefix(root.as_slice()) {
        None if o < root.as_slice() => (4, None),
        None => return None,
        Some([]) => (4, None),
        Some([c, ..]) if *c < 4 => (4, None),
        Some([c, index @ ..]) => (*c, Some(index)),
    };
    for c in start_col..=last_col {
        let from = if c == start_col { after } else { None };
        // Answers whose request index could hold a key after `from`.
        let start = from.map_or_else(Vec::new, |f| {
            f.iter().take(REQ_INDEX_LEN).copied().collect()
        });
        for ((k, req), p) in s.answers.range((kind, start)..) {
            if *k != kind {
                break;
            }
            let Some(rows) = &p.rows else { continue };
            for (i, row) in rows.iter().enumerate() {
                let mut key = req.clone();
                key.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
                if from.is_some_and(|f| key.as_slice() <= f) {
                    continue;
                }
                let v = row.get(usize::try_from(c - 4).ok()?)?.clone();
                let mut id = root.as_slice().to_vec();
                id.push(c);
                id.extend_from_slice(&key);
                return Some(VarBind::new(Oid::new(id), v));
            }
        }
    }
    None
}

/// A result table (ibSmPathResultTable, ibSmMultiPathResultTable,
/// ibSmTraceResultTable): columns 4..`last`, the request's answer.
pub(super) struct Results {
    root: Oid,
    kind: Kind,
    last: u32,
}

impl Results {
    /// A result table at `entry` showing `cells` columns from column 4 on.
    pub(super) fn new(entry: &[u32], kind: Kind, cells: usize) -> Self {
        Results {
            root: oid(entry),
            kind,
            last: 3 + u32::try_from(cells).unwrap_or(0),
        }
    }
}

impl MibObject<View, Change> for Results {
    fn root(&self) -> &Oid {
        &self.root
    }
    fn get(&self, view: &View, o: &[u32]) -> Value {
        let s = &view.system.requests;
        result_get(s, &self.root, self.kind, self.last, o)
    }
    fn next(&self, view: &View, o: &[u32]) -> Option<VarBind> {
        let s = &view.system.requests;
        result_next(s, &self.root, self.kind, self.last, o)
    }
    fn declared_columns(&self) -> Vec<(u32, Access)> {
        (4..=self.last).map(|c| (c, Access::ReadOnly)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_index() {
        let mut i: Vec<u32> = 0xfe80_0000_0000_0000u64
            .to_be_bytes()
            .iter()
            .map(|b| u32::from(*b))
            .collect();
        i.push(7);
        assert_eq!(parse_req_index(&i), Some((0xfe80_0000_0000_0000, 7)));
        i.push(1);
        assert_eq!(parse_req_index(&i), None);
    }
}
