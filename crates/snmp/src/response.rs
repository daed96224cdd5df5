//! A response's VarBindList as the dispatcher builds it, within the size
//! budget of RFC 3416 4.2: a varbind that would take the list past the
//! budget is refused, and so is everything after it (the dispatcher then
//! cuts a GetBulk answer there, or answers tooBig).
//!
//! Two lists give the same octets: [`Collect`] keeps [`VarBind`]s (for the
//! message encoders: AgentX, SNMPv3, Get and Set answers), [`Direct`]
//! encodes each varbind straight into the response message as it is found
//! (the UDP v1/v2c GetNext and GetBulk path, where a walk spends its time),
//! exactly as [`Encoder::varbind_list`] would encode the collected list.

use std::ops::Range;

use crate::ber::{self, Encoder, OidRun};
use crate::mib::VarBindSink;
use crate::oid::Oid;
use crate::value::{Value, VarBind};

/// A response's VarBindList being built (pushes refused past the budget).
pub trait ResponseList: VarBindSink {
    /// Varbinds taken so far.
    fn count(&self) -> usize;
    /// One more varbind naming the last one taken, with endOfMibView (a
    /// GetBulk repeater past its end); false when it does not fit or
    /// nothing was taken.
    fn end_after_last(&mut self) -> bool;
}

/// The list as varbinds.
#[derive(Debug)]
pub struct Collect {
    pub varbinds: Vec<VarBind>,
    used: usize,
    budget: usize,
    full: bool,
}

impl Collect {
    /// An empty list of at most `budget` encoded octets (`usize::MAX`:
    /// unbounded); `capacity` varbinds reserved.
    pub fn new(budget: usize, capacity: usize) -> Self {
        Collect {
            varbinds: Vec::with_capacity(capacity),
            used: 0,
            budget,
            full: false,
        }
    }
}

impl VarBindSink for Collect {
    fn push(&mut self, oid: &[u32], value: &Value) -> bool {
        if self.full {
            return false;
        }
        if self.budget != usize::MAX {
            self.used += ber::tlv_len(ber::varbind_content_len(oid, value));
            if self.used > self.budget {
                self.full = true;
                return false;
            }
        }
        self.varbinds
            .push(VarBind::new(Oid::from_slice(oid), value.clone()));
        true
    }
}

impl ResponseList for Collect {
    fn count(&self) -> usize {
        self.varbinds.len()
    }

    fn end_after_last(&mut self) -> bool {
        let Some(last) = self.varbinds.last().map(|vb| vb.oid.clone()) else {
            return false;
        };
        self.push(last.as_slice(), &Value::EndOfMibView)
    }
}

/// The list encoded into a message buffer whose VarBindList SEQUENCE the
/// caller opened (and closes once the dispatcher is done).
pub struct Direct<'a> {
    out: &'a mut Vec<u8>,
    /// OIDs encoded from what they share with the one before, as
    /// [`Encoder::varbind_list`] does.
    run: OidRun,
    used: usize,
    budget: usize,
    full: bool,
    count: usize,
    /// Where the last varbind's OID TLV lies in `out`.
    last: Option<Range<usize>>,
}

impl<'a> Direct<'a> {
    /// Varbinds appended to `out`, at most `budget` octets of them.
    pub fn new(out: &'a mut Vec<u8>, budget: usize) -> Self {
        Direct {
            out,
            run: OidRun::default(),
            used: 0,
            budget,
            full: false,
            count: 0,
            last: None,
        }
    }

    /// Keeps the varbind written from `start` on if it fits the budget.
    fn admit(&mut self, start: usize) -> bool {
        self.used += self.out.len() - start;
        if self.used > self.budget {
            self.out.truncate(start);
            self.full = true;
            return false;
        }
        self.count += 1;
        true
    }
}

impl VarBindSink for Direct<'_> {
    fn push(&mut self, oid: &[u32], value: &Value) -> bool {
        self.push_after(0, oid, value)
    }

    #[inline]
    fn push_after(&mut self, same: usize, oid: &[u32], value: &Value) -> bool {
        if self.full {
            return false;
        }
        let start = self.out.len();
        let name = Encoder::new(self.out).varbind_in_run_after(&mut self.run, same, oid, value);
        let fits = self.admit(start);
        if fits {
            self.last = Some(name);
        }
        fits
    }
}

impl ResponseList for Direct<'_> {
    fn count(&self) -> usize {
        self.count
    }

    fn end_after_last(&mut self) -> bool {
        let Some(name) = self.last.clone().filter(|_| !self.full) else {
            return false;
        };
        let start = self.out.len();
        let mut e = Encoder::new(self.out);
        let v = e.begin(ber::tag::SEQUENCE);
        let at = e.len();
        e.repeat(name.clone());
        e.null_tagged(ber::tag::END_OF_MIB_VIEW);
        let open = e.len();
        e.end(v);
        // A long-form length moved the content up.
        let at = at + e.len() - open;
        // (The run still holds the same OID: nothing to tell it.)
        let fits = self.admit(start);
        if fits {
            self.last = Some(at..at + name.len());
        }
        fits
    }
}
