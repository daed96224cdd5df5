//! Port labels' tokens coded once per stream. Once the codes stay as they
//! are (from the first block that is mostly port samples on), the
//! literals and match lengths of a port's label tokens code to the same
//! bits in every family: they are worked out the first time the port's
//! line is coded and replayed for the others, so a sample line costs a
//! few writes (its distances, which move with the line before, and its
//! value) instead of a table lookup per octet and a write per token.

use super::{long_match_lengths, Codes, Fused, Out, Source, Tok, MIN_MATCH, PUT_MAX};

/// The most bits a distance takes: a 15-bit code and 13 extra bits.
const DIST_BITS_MAX: u32 = 28;

/// One write of a port's coded labels: literal codes (`d` 0), or a match
/// length's code and extra bits with the distance `d` of the labels'
/// lines (moved by the line before when written).
#[derive(Debug, Clone, Copy)]
pub(super) struct Coded {
    v: u64,
    n: u32,
    d: u32,
}

/// The coded labels of the ports seen so far, by row.
#[derive(Default)]
pub(super) struct Plan {
    /// For each row ([`Fused::row`]): its writes in `coded`, and the
    /// length of a first match that the line's name match runs on into
    /// (0: none). Unset: `u32::MAX`. By row, not by where the row's
    /// tokens start: a family reads it in order a few octets a line,
    /// where entries a row's tokens apart cost a cache miss each.
    at: Vec<(u32, u32, u32)>,
    coded: Vec<Coded>,
    /// The length of the tokens it was worked out from.
    toks: usize,
}

const UNSET: (u32, u32, u32) = (u32::MAX, 0, 0);

impl Plan {
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.coded.is_empty()
    }

    /// Drops what was worked out (for tokens of other rows).
    pub fn clear(&mut self) {
        self.at.clear();
        self.coded.clear();
    }

    /// Makes ready for tokens `toks` long (those of one snapshot's rows:
    /// others drop what was worked out).
    pub fn fit(&mut self, toks: usize) {
        if self.toks != toks {
            self.clear();
            self.toks = toks;
        }
    }

    /// The writes of line `f`'s label tokens (in `src`, with its labels)
    /// coded with `codes`, worked out the first time; and the
    /// length of a first match that starts at the labels (0: none). The
    /// tokens of one range stand for the same labels each time, as a
    /// snapshot's rows make them.
    #[inline(always)]
    pub fn get(&mut self, src: &Source, f: &Fused, codes: &Codes) -> (&[Coded], usize) {
        let row = f.row as usize;
        let mut at = self.at.get(row).copied().unwrap_or(UNSET);
        if at == UNSET {
            at = self.work_out(src, f, codes);
            if self.at.len() <= row {
                self.at.resize(row + 1, UNSET);
            }
            if let Some(x) = self.at.get_mut(row) {
                *x = at;
            }
        }
        let coded = self.coded.get(at.0 as usize..at.1 as usize).unwrap_or(&[]);
        (coded, at.2 as usize)
    }

    #[cold]
    fn work_out(&mut self, src: &Source, f: &Fused, codes: &Codes) -> (u32, u32, u32) {
        let toks = src
            .toks
            .get(f.toks.start as usize..f.toks.end as usize)
            .unwrap_or(&[]);
        // The line's `{labels} `: the literals' offsets are into it.
        let labels = f.braced(src.labels);
        let synthetic = f.prev_labels + 4;
        let start = self.coded.len() as u32;
        let (first, rest) = match toks.split_first() {
            Some((&Tok::Match(n, d), rest)) if usize::from(d) == synthetic => (u32::from(n), rest),
            _ => (0, toks),
        };
        for t in rest {
            match *t {
                Tok::Lits(a, b) => {
                    let lits = labels.get(usize::from(a)..usize::from(b)).unwrap_or(&[]);
                    let (mut v, mut n) = (0u64, 0u32);
                    for &c in lits {
                        let p = codes.lit[usize::from(c)];
                        let len = p >> 24;
                        if n + len > PUT_MAX {
                            self.coded.push(Coded { v, n, d: 0 });
                            (v, n) = (0, 0);
                        }
                        v |= u64::from(p & 0xff_ffff) << n;
                        n += len;
                    }
                    if n > 0 {
                        self.coded.push(Coded { v, n, d: 0 });
                    }
                }
                Tok::Match(n, d) => {
                    for len in long_match_lengths(usize::from(n)) {
                        let p = codes.lengths[(len - MIN_MATCH) & 0xff];
                        let (v, n, d) = (u64::from(p & 0xff_ffff), p >> 24, u32::from(d));
                        // Written with the literals before it when they
                        // leave room for any distance's bits.
                        let own = self.coded.len() > start as usize;
                        match self.coded.last_mut() {
                            Some(c) if own && c.d == 0 && c.n + n <= PUT_MAX - DIST_BITS_MAX => {
                                c.v |= v << c.n;
                                c.n += n;
                                c.d = d;
                            }
                            _ => self.coded.push(Coded { v, n, d }),
                        }
                    }
                }
            }
        }
        (start, self.coded.len() as u32, first)
    }
}

impl Plan {
    /// Codes line `f` with the stream's fixed codes: the name matched
    /// (running on into the labels' first match), the labels as worked
    /// out once for the port, the value (and newline: [`Fused::value`])
    /// as literals.
    #[inline(always)]
    pub fn code<W: super::Put>(&mut self, f: &Fused, src: &Source, value: &[u8], out: &mut Out<W>) {
        let synthetic = f.prev_labels + 4;
        let shift = f.prev_len - synthetic;
        let (coded, first) = self.get(src, f, out.codes);
        out.matches::<false>(f.name + first, f.prev_len);
        out.coded(coded, shift);
        out.literals::<false>(value);
    }
}

impl<W: super::Put> Out<'_, W> {
    /// A port's coded labels, their distances moved by `shift`.
    #[inline(always)]
    pub(super) fn coded(&mut self, coded: &[Coded], shift: usize) {
        for c in coded {
            if c.d == 0 {
                self.bits.put(c.v, c.n);
            } else {
                let (d, nd) = self.distance(c.d as usize + shift);
                self.bits.put(c.v | d << c.n, c.n + nd);
            }
        }
    }
}
