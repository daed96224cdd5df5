//! Sample lines that follow the line of the port before in the same
//! family, coded from their labels' tokens worked out once per snapshot
//! (the name matched one line back, the labels' literals and matches, the
//! value as literals), and the lines a gzip scrape leaves out of the text.

use std::ops::Range;

use super::{Out, Put, Tok, MIN_MATCH, WINDOW};
use crate::metrics::crc::Known;
use crate::metrics::text::{decimal, VALUE_ROOM};

/// What fused lines are coded from: the text, the rows' label tokens and
/// their `{labels} ` back to back.
#[derive(Clone, Copy)]
pub(in crate::metrics) struct Source<'a> {
    pub text: &'a [u8],
    pub toks: &'a [Tok],
    pub labels: &'a [u8],
}

impl Source<'_> {
    /// Text alone, with no fused lines to code from it.
    pub fn text(text: &[u8]) -> Source<'_> {
        Source {
            text,
            toks: &[],
            labels: &[],
        }
    }
}

/// A sample line `name{labels} value\n` that follows `name{prev} value\n`
/// (the same name, the labels of the port before), in `text` or left out
/// of it ([`unwritten`](Self::unwritten)): coded as the name matched one
/// line back, the labels' tokens worked out once (their distances moved
/// by what the lines hold besides the labels), and the value as literals.
#[derive(Debug, Clone)]
pub(in crate::metrics) struct Fused {
    /// Where the line starts and ends (after its newline) in `text`; one
    /// left out of it starts and ends where it would be.
    pub at: usize,
    pub end: usize,
    /// Octets of the line, of the name, of the labels, of the previous
    /// line and its labels.
    pub len: usize,
    pub name: usize,
    pub labels: usize,
    pub prev_len: usize,
    pub prev_labels: usize,
    /// The labels' tokens: where in the tokens given.
    pub toks: Range<u32>,
    /// Its row: the same for every line of the same labels, and dense
    /// (what the plan is kept by).
    pub row: u32,
    /// Where its `{labels} ` are in the labels given.
    pub braced: usize,
    /// A line the text leaves out, so that its labels are not copied
    /// there (gzip counts them by their CRC: [`Unwritten`]).
    pub unwritten: Option<Unwritten>,
}

/// What a line left out of the text is besides its row's labels: its
/// value, and the CRCs of its name and of its labels.
#[derive(Debug, Clone, Copy)]
pub(in crate::metrics) struct Unwritten {
    pub value: u64,
    pub name: Known,
    pub labels: Known,
}

/// Whether a sample line of a name and labels this long can be coded from
/// its labels' tokens after a line `prev_len` long: its name matched and
/// the line before within the window.
pub(in crate::metrics) fn fits(name: usize, prev_len: usize, labels: usize) -> bool {
    name >= MIN_MATCH && prev_len + labels + 4 <= WINDOW
}

/// Fused lines are counted for the next block's codes one in this many.
pub(super) const SAMPLE: usize = 8;

impl Fused {
    pub(super) fn fits(&self) -> bool {
        fits(self.name, self.prev_len, self.labels)
    }

    #[inline(always)]
    pub(super) fn code<const COUNT: bool, W: Put>(
        &self,
        src: &Source,
        value: &[u8],
        out: &mut Out<W>,
    ) {
        let toks = &src.toks[self.toks.start as usize..self.toks.end as usize];
        // Distances of the labels' lines (`{prev} ` and a newline) and of
        // the real ones differ by the name and the previous value.
        let synthetic = self.prev_labels + 4;
        let shift = self.prev_len - synthetic;
        let braced = self.braced(src.labels);
        let rest = match toks.first() {
            Some(&Tok::Match(n, d)) if usize::from(d) == synthetic => {
                out.matches::<COUNT>(self.name + usize::from(n), self.prev_len);
                toks.get(1..).unwrap_or(&[])
            }
            _ => {
                out.matches::<COUNT>(self.name, self.prev_len);
                toks
            }
        };
        for t in rest {
            match *t {
                Tok::Lits(a, b) => {
                    out.literals::<COUNT>(braced.get(usize::from(a)..usize::from(b)).unwrap_or(&[]))
                }
                Tok::Match(n, d) => out.matches::<COUNT>(usize::from(n), usize::from(d) + shift),
            }
        }
        out.literals::<COUNT>(value);
    }

    /// The line's `{labels} `, from the rows' `labels`.
    #[inline(always)]
    pub(super) fn braced<'a>(&self, labels: &'a [u8]) -> &'a [u8] {
        labels
            .get(self.braced..self.braced + self.labels + 3)
            .unwrap_or(&[])
    }

    /// The line's value and newline: from the text, or written in `buf`
    /// for a line the text leaves out.
    #[inline(always)]
    pub(super) fn value<'a>(&self, text: &'a [u8], buf: &'a mut [u8; VALUE_ROOM]) -> &'a [u8] {
        match &self.unwritten {
            None => text
                .get(self.at + self.name + self.labels + 3..self.end)
                .unwrap_or(&[]),
            Some(u) => value_line(u.value, buf),
        }
    }
}

/// `v` in decimal and a newline, written in `buf`.
#[inline(always)]
fn value_line(v: u64, buf: &mut [u8; VALUE_ROOM]) -> &[u8] {
    let n = decimal(buf, v);
    if let Some(nl) = buf.get_mut(n) {
        *nl = b'\n';
    }
    buf.get(..n + 1).unwrap_or(&[])
}
