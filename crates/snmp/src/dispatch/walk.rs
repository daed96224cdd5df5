//! GetNext and GetBulk (RFC 3416 4.2.2, 4.2.3): walks over the registered
//! objects, passing by what the request may not read.

use super::reply::{error_response, response, too_big};
use super::{is_owner, AccessCheck, Clearance, Dispatcher, Outcome};
use crate::message::Version;
use crate::mib::VarBindSink;
use crate::oid::Oid;
use crate::pdu::{BulkBody, ErrorStatus, Pdu, PduBody};
use crate::response::{Collect, ResponseList};
use crate::value::Value;

impl<V, K> Dispatcher<V, K> {
    /// Up to `max` successive instances after `oid` that the request may
    /// read (RFC 3415 3.2: a walk passes by what the view excludes; SNMPv1
    /// never sees Counter64, RFC 3584 4.4), pushed into `out` as the
    /// objects find them. Returns how many `out` took, and whether it
    /// refused one (full): then the walk stopped there.
    pub(super) fn next_run<O: VarBindSink + ?Sized>(
        &self,
        view: &V,
        version: Version,
        oid: &[u32],
        max: usize,
        acc: &dyn AccessCheck,
        out: &mut O,
    ) -> (usize, bool) {
        if max == 0 {
            return (0, false);
        }
        let mut run = Run {
            acc,
            v1: version == Version::V1,
            depth: 0,
            column: None,
            col_same: 0,
            out_same: 0,
            left: max,
            out,
            stop: Stop::Walking,
        };
        let mut from = Oid::from_slice(oid);
        'resume: loop {
            // Objects whose whole subtree lies before `from` form a prefix;
            // each object after the one that ends is walked from its start.
            let start = self.roots.partition_point(|r| {
                r.as_slice() < from.as_slice() && !is_owner(r.as_slice(), from.as_slice())
            });
            for o in self.objects.get(start..).unwrap_or(&[]) {
                // The depth of a column of this object: its root and one
                // more sub-identifier.
                run.depth = o.root().len() + 1;
                o.next_into(view, from.as_slice(), &mut run);
                match std::mem::replace(&mut run.stop, Stop::Walking) {
                    Stop::Walking if run.left > 0 => {}
                    Stop::Walking => return (max, false),
                    Stop::Full => return (max - run.left, true),
                    Stop::Denied(at) => {
                        // Resume where the view lets us, always moving forward.
                        let resume = acc.resume_after(at.as_slice());
                        from = if resume > at { resume } else { at };
                        continue 'resume;
                    }
                }
            }
            return (max - run.left, false); // the end of the MIB
        }
    }

    pub(super) fn get_next_request(
        &self,
        view: &V,
        version: Version,
        req: &PduBody,
        budget: usize,
        acc: &dyn AccessCheck,
    ) -> Outcome<K> {
        let mut out = Collect::new(budget, req.varbinds.len());
        match self.get_next_into(view, version, req, acc, &mut out) {
            Answer::Done => response(req.request_id, ErrorStatus::NoError, out.varbinds),
            Answer::TooBig => too_big(version, req, budget),
            Answer::Error(status, index) => error_response(version, req, status, index, budget),
        }
    }

    /// GetNext (RFC 3416 4.2.2) into `out`.
    pub(super) fn get_next_into<O: ResponseList + ?Sized>(
        &self,
        view: &V,
        version: Version,
        req: &PduBody,
        acc: &dyn AccessCheck,
        out: &mut O,
    ) -> Answer {
        // A response too big is tooBig, unless a later varbind makes it an
        // SNMPv1 noSuchName: keep walking (a full list takes nothing more).
        let mut too_big = false;
        for (i, vb) in req.varbinds.iter().enumerate() {
            let (got, full) = self.next_run(view, version, vb.oid.as_slice(), 1, acc, out);
            too_big |= full;
            if got == 0 && !full {
                if version == Version::V1 {
                    return Answer::Error(ErrorStatus::NoSuchName, i + 1);
                }
                too_big |= !out.push(vb.oid.as_slice(), &Value::EndOfMibView);
            }
        }
        if too_big {
            Answer::TooBig
        } else {
            Answer::Done
        }
    }

    pub(super) fn get_bulk_request(
        &self,
        view: &V,
        req: &BulkBody,
        budget: usize,
        acc: &dyn AccessCheck,
    ) -> Outcome<K> {
        let cap = req.varbinds.len() * 16;
        let mut out = Collect::new(budget, cap.min(self.max_bulk_varbinds));
        let status = match self.get_bulk_into(view, req, acc, &mut out) {
            Answer::Done => ErrorStatus::NoError,
            _ => ErrorStatus::TooBig,
        };
        response(req.request_id, status, out.varbinds)
    }

    /// GetBulk (RFC 3416 4.2.3) into `out`: Done or TooBig.
    pub(super) fn get_bulk_into<O: ResponseList + ?Sized>(
        &self,
        view: &V,
        req: &BulkBody,
        acc: &dyn AccessCheck,
        out: &mut O,
    ) -> Answer {
        let l = req.varbinds.len();
        let n = usize::try_from(req.non_repeaters.max(0))
            .unwrap_or(0)
            .min(l);
        let m = usize::try_from(req.max_repetitions.max(0))
            .unwrap_or(0)
            .min(self.max_repetitions as usize);
        let (non_rep, rep) = req.varbinds.split_at(n);
        let r = rep.len();
        // RFC 3416 4.2.3: a response that would be too large carries the
        // longest prefix of its varbinds that fits (non-repeaters included),
        // never tooBig. Only when not even the first varbind fits is there
        // nothing to send: then tooBig, as net-snmp does, because an empty
        // noError list would read as the end of a walk.
        let requested = n > 0 || (r > 0 && m > 0);
        let mut full = false;
        for vb in non_rep {
            let from = vb.oid.as_slice();
            let (got, f) = self.next_run(view, Version::V2c, from, 1, acc, out);
            full = f || (got == 0 && !out.push(from, &Value::EndOfMibView));
            if full {
                break;
            }
        }
        // Repetitions the varbind cap leaves room for.
        let limit = self.max_bulk_varbinds.max(n + r);
        let m = match (full, r) {
            (true, _) | (_, 0) => 0,
            _ => m.min(limit.saturating_sub(out.count()) / r),
        };
        if m > 0 && r == 1 {
            // One repeater (a walk): its run is the answer, walked straight
            // into it and cut at the budget.
            let (from, ended) = match rep.first() {
                Some(v) => (v.oid.as_slice(), v.value == Value::EndOfMibView),
                None => (&[][..], true),
            };
            let (got, full) = match ended {
                true => (0, false),
                false => self.next_run(view, Version::V2c, from, m, acc, out),
            };
            // Past its end it repeats endOfMibView at the last instance.
            if !full && got < m {
                if got > 0 {
                    out.end_after_last();
                } else {
                    out.push(from, &Value::EndOfMibView);
                }
            }
        } else if m > 0 {
            // Each repeater's successors are independent of the others':
            // walk each one's run at once (a table finds its place once),
            // then lay them out repetition by repetition.
            let mut runs = Vec::with_capacity(r);
            let mut longest = 0;
            for vb in rep {
                // (Sized for a typical answer: m may be large and the size
                // budget cut the answer far sooner.)
                let mut run = Collect::new(usize::MAX, m.min(64));
                if vb.value != Value::EndOfMibView {
                    self.next_run(view, Version::V2c, vb.oid.as_slice(), m, acc, &mut run);
                }
                longest = longest.max(run.varbinds.len());
                // Past its end a repeater repeats endOfMibView at the last
                // instance it reached.
                let end = run.varbinds.last().map_or(&vb.oid, |v| &v.oid).clone();
                runs.push((run.varbinds.into_iter(), end));
            }
            // The repetition where every repeater is past its end is the
            // last one sent.
            let reps = m.min(longest + 1);
            'reps: for _ in 0..reps {
                for (run, end) in runs.iter_mut() {
                    let taken = match run.next() {
                        Some(vb) => out.push(vb.oid.as_slice(), &vb.value),
                        None => out.push(end.as_slice(), &Value::EndOfMibView),
                    };
                    if !taken {
                        break 'reps;
                    }
                }
            }
        }
        if out.count() == 0 && requested {
            Answer::TooBig
        } else {
            Answer::Done
        }
    }

    /// A walk's request (GetNext, GetBulk) answered straight into `out`
    /// (a [`crate::response::Direct`] list inside the response message):
    /// true when the answer is a noError response carrying what `out`
    /// took. False for every other request and answer (errors, tooBig):
    /// then answer with [`Dispatcher::process_with`], which gives the same
    /// response.
    pub fn walk_into<O: ResponseList + ?Sized>(
        &self,
        view: &V,
        version: Version,
        pdu: &Pdu,
        acc: &dyn AccessCheck,
        clearance: Clearance,
        out: &mut O,
    ) -> bool {
        let guarded = self.guard(acc, clearance);
        let answer = match pdu {
            Pdu::GetNextRequest(b) => self.get_next_into(view, version, b, &guarded, out),
            Pdu::GetBulkRequest(b) if version == Version::V2c => {
                self.get_bulk_into(view, b, &guarded, out)
            }
            _ => return false,
        };
        matches!(answer, Answer::Done)
    }
}
/// How a GetNext or GetBulk answer came out.
pub(super) enum Answer {
    Done,
    TooBig,
    /// An error-status and its varbind's (1-based) index.
    Error(ErrorStatus, usize),
}

/// Why a [`Run`] stopped the object it walks.
pub(super) enum Stop {
    /// It did not: the object ran out (or `left` reached 0).
    Walking,
    /// The response refused an instance.
    Full,
    /// An instance the request may not read.
    Denied(Oid),
}

/// A walk between the objects and the response: passes on the instances
/// the request may read, at most `left` of them. An object is walked column
/// by column (`depth`: its root and a column number): each column is asked
/// once whether it is readable throughout (a view rarely splits a column),
/// its instances one by one only where it is not.
/// (Generic over the list it fills, so a response's push is not one more
/// dynamic call for every instance.)
pub(super) struct Run<'a, O: ?Sized> {
    acc: &'a dyn AccessCheck,
    v1: bool,
    depth: usize,
    column: Option<(Oid, Option<bool>)>,
    /// Sub-identifiers the object vouched shared since the last instance
    /// whose column was looked at (`VarBindSink::push_after`): at `depth`
    /// or more, `column` is this instance's column.
    col_same: usize,
    /// The same, since the last instance passed to `out`.
    out_same: usize,
    left: usize,
    out: &'a mut O,
    stop: Stop,
}

impl<O: VarBindSink + ?Sized> Run<'_, O> {
    pub(super) fn readable(&mut self, oid: &[u32]) -> bool {
        let col = oid.get(..self.depth).unwrap_or(oid);
        let known = std::mem::replace(&mut self.col_same, usize::MAX) >= self.depth;
        let uniform = match &self.column {
            Some((_, u)) if known => *u,
            Some((c, u)) if c.as_slice() == col => *u,
            _ => {
                let u = self.acc.uniform(col);
                self.column = Some((Oid::from_slice(col), u));
                u
            }
        };
        uniform.unwrap_or_else(|| self.acc.readable(oid))
    }
}

impl<O: VarBindSink + ?Sized> VarBindSink for Run<'_, O> {
    fn push(&mut self, oid: &[u32], value: &Value) -> bool {
        self.push_after(0, oid, value)
    }

    fn push_after(&mut self, same: usize, oid: &[u32], value: &Value) -> bool {
        // What `oid` shares with the last one looked at and the last one
        // passed on: the least of the words since.
        self.col_same = self.col_same.min(same);
        self.out_same = self.out_same.min(same);
        if self.v1 && matches!(value, Value::Counter64(_)) {
            return true;
        }
        if !self.readable(oid) {
            self.stop = Stop::Denied(Oid::from_slice(oid));
            return false;
        }
        let same = std::mem::replace(&mut self.out_same, usize::MAX);
        if !self.out.push_after(same, oid, value) {
            self.stop = Stop::Full;
            return false;
        }
        self.left -= 1;
        self.left > 0
    }
}
