//! A deflate (RFC 1951) encoder for line-structured text such as the
//! /metrics exposition, where each line repeats most of the line before it
//! (the same metric name and node, the next port). Instead of searching a
//! window for matches as a general LZ77 matcher must (zlib's hash chains),
//! it compares each line with the previous one field by field (fields end
//! at `"`) and codes the common runs as matches at that line's distance and
//! the rest as literals, coded as they are found (one pass). A block's
//! Huffman codes are built from the block before (its counts, every symbol
//! given a code), or are the fixed ones when those would have coded that
//! block in fewer bits: the first block takes the fixed codes.
//!
//! Any input gives a valid stream: text without newlines, lines longer
//! than the 32 KiB window (coded as literals), binary octets.

use std::ops::Range;

use super::crc::Crc;
use super::text::VALUE_ROOM;

mod bits;
mod fused;
mod plan;
use bits::{Bits, Put, Run, PUT_MAX};
use fused::SAMPLE;
pub(super) use fused::{fits, Fused, Source, Unwritten};
use plan::Plan;

/// The longest match deflate codes, and the farthest back it may reach.
const MAX_MATCH: usize = 258;
const MIN_MATCH: usize = 3;
const WINDOW: usize = 32 * 1024;

/// Symbols of the literal/length and distance alphabets.
const LITLEN: usize = 286;
const DIST: usize = 30;
const END_OF_BLOCK: usize = 256;

/// The code length code's symbols in the order the block header lists them.
const CLEN_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// An encoder over a stream of text given in pieces.
pub(super) struct Encoder {
    bits: Bits,
    /// The codes of the next block: the fixed ones for the first, then
    /// those that would have coded the block before in fewer bits (text
    /// is coded in one pass, so a block's codes come from the one before).
    codes: Box<Codes>,
    /// The last line (or part line) of the text so far, when within the
    /// window: what the next piece's first line is compared with.
    tail: Vec<u8>,
    /// A work buffer kept between pieces: the tail and the piece's first
    /// line.
    buf: Vec<u8>,
    /// Once a block is mostly port samples, the codes made from it stay
    /// for the rest of the stream, so that each port's labels code to the
    /// same bits in every family: worked out once, here ([`plan`]).
    plan: Option<Plan>,
}

impl Encoder {
    pub fn new() -> Encoder {
        Encoder {
            bits: Bits::default(),
            codes: Box::new(Codes::fixed()),
            tail: Vec::new(),
            buf: Vec::new(),
            plan: None,
        }
    }

    /// Codes `text` as one block (none when it is empty) and returns the
    /// whole octets made so far; a few bits may wait for the next call.
    #[cfg(test)]
    pub fn push(&mut self, text: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        self.push_fused(Source::text(text), &[], &mut out, &mut Crc::default());
        out
    }

    /// As [`push`](Self::push) of `src.text`, the lines `fused` names (in
    /// order, whole lines of the text, or lines it leaves out:
    /// [`Fused::unwritten`]) coded from their labels' tokens and their
    /// `{labels} ` in `src` instead of being compared with the line
    /// before: the text then starts a line. The octets go to the end of
    /// `octets`. `crc` counts the whole text, the lines left out of
    /// `src.text` included, as it is coded: one pass over the lines.
    pub fn push_fused(
        &mut self,
        src: Source,
        fused: &[Fused],
        octets: &mut Vec<u8>,
        crc: &mut Crc,
    ) {
        let text = src.text;
        let unwritten: usize = fused
            .iter()
            .filter(|f| f.unwritten.is_some())
            .map(|f| f.len)
            .sum();
        let whole = text.len() + unwritten;
        if whole == 0 {
            return self.bits.take_into(octets);
        }
        let mut freq = Freq::default();
        self.bits.append(&self.codes.header);
        // No code is longer than two octets a text octet (a literal at most
        // 15 bits, a match of 3 or more at most 48), and the end of block.
        self.bits.room(2 * whole + 8);
        let (mut at, mut k) = (0, 0);
        // Whether the line before is one the text leaves out: the next
        // line of the text is not compared with it.
        let mut after_unwritten = false;
        while let Some(f) = fused.get(k) {
            let mut out = Out {
                bits: &mut self.bits,
                codes: &self.codes,
                freq: &mut freq,
                weight: 1,
            };
            // Most fused lines follow another: nothing between.
            if at < f.at {
                let before = (!after_unwritten).then_some(&self.tail[..]);
                crc.update(&text[at..f.at]);
                general(before, &mut self.buf, text, at..f.at, &mut out);
            }
            if f.fits() {
                let plan = self.plan.as_mut();
                (at, k) = run(
                    &mut self.bits,
                    &self.codes,
                    &mut freq,
                    plan,
                    src,
                    fused,
                    k,
                    crc,
                );
                after_unwritten = fused.get(k - 1).is_some_and(|f| f.unwritten.is_some());
            } else {
                // Only lines of the text: those left out fit.
                let before = (!after_unwritten).then_some(&self.tail[..]);
                crc.update(&text[f.at..f.end]);
                general(before, &mut self.buf, text, f.at..f.end, &mut out);
                (at, k) = (f.end, k + 1);
                after_unwritten = false;
            }
        }
        let mut out = Out {
            bits: &mut self.bits,
            codes: &self.codes,
            freq: &mut freq,
            weight: 1,
        };
        let before = (!after_unwritten).then_some(&self.tail[..]);
        crc.update(&text[at..]);
        general(before, &mut self.buf, text, at..text.len(), &mut out);
        out.put(self.codes.end_of_block);
        if self.plan.is_none() {
            let samples: usize = fused.iter().map(|f| f.len).sum();
            if samples * 2 >= whole && !fused.is_empty() {
                // These codes serve every family from now on: the
                // distances and lengths of lines of other names, and the
                // digits of other values, get codes near those seen here.
                freq.widen();
                self.plan = Some(Plan::default());
            }
            *self.codes = Codes::after(&mut freq);
        }
        // The last line, kept for the next piece when a match can reach it
        // (a piece of one line follows the tail; one of fused lines starts
        // a line). None when it is a line the text leaves out: the next
        // piece's first line is not compared with it.
        let last = if after_unwritten && at == text.len() {
            &[][..]
        } else {
            match memchr::memrchr(b'\n', &text[..text.len() - 1]) {
                Some(p) => &text[p + 1..],
                None if !fused.is_empty() => text,
                None => &self.buf[..],
            }
        };
        self.tail.clear();
        if last.len() <= WINDOW {
            self.tail.extend_from_slice(last);
        }
        self.bits.take_into(octets);
    }

    /// Whether lines were coded from the stream's plan.
    #[cfg(test)]
    pub fn planned(&self) -> bool {
        self.plan.as_ref().is_some_and(|p| !p.is_empty())
    }

    /// Ends the stream (`last`) with a final empty block, or leaves it
    /// open on an octet boundary with an empty stored block (a sync flush)
    /// so another stream's blocks may follow: the last octets.
    pub fn end(mut self, last: bool) -> Vec<u8> {
        self.bits.room(8);
        if last {
            // BFINAL, fixed codes, end of block (seven zero bits).
            self.bits.put(0b011, 3);
            self.bits.put(0, 7);
            self.bits.align();
        } else {
            self.bits.put(0, 3);
            self.bits.align();
            self.bits.octets(&[0, 0, 0xff, 0xff]);
        }
        self.bits.into_octets()
    }
}

/// Codes the fused lines from `fused[k]` on while each fits and follows
/// the one before: where the last ends in `text`, and the next line's
/// index. The loop calls nothing, so that the bit writer's state stays in
/// registers (in [`Bits`], behind a reference, each code loaded and stored
/// it: a third more instructions).
#[allow(clippy::too_many_arguments)]
fn run(
    bits: &mut Bits,
    codes: &Codes,
    freq: &mut Freq,
    mut plan: Option<&mut Plan>,
    src: Source,
    fused: &[Fused],
    mut k: usize,
    crc: &mut Crc,
) -> (usize, usize) {
    let mut buf = std::mem::take(&mut bits.buf);
    let mut out = Out {
        bits: Run {
            acc: bits.acc,
            n: bits.n,
            pos: bits.pos,
            buf: &mut buf,
        },
        codes,
        freq,
        weight: 1,
    };
    if let Some(plan) = plan.as_deref_mut() {
        plan.fit(src.toks.len());
    }
    let mut at = fused.get(k).map_or(0, |f| f.at);
    // The text's lines since the last line left out, not yet counted.
    let mut counted = at;
    let mut digits = [0; VALUE_ROOM];
    while let Some(f) = fused.get(k) {
        if f.at != at || !f.fits() {
            break;
        }
        let value = f.value(src.text, &mut digits);
        if let Some(u) = &f.unwritten {
            crc.update(src.text.get(counted..f.at).unwrap_or(&[]));
            crc.line(u.name, u.labels, value);
            counted = f.end;
        }
        if let Some(plan) = plan.as_deref_mut() {
            plan.code(f, &src, value, &mut out);
        } else if k.is_multiple_of(SAMPLE) {
            // One fused line in SAMPLE is counted for the next block's
            // codes, as SAMPLE lines: their symbols are alike, and
            // counting each cost a tenth of the coding.
            out.weight = SAMPLE as u32;
            f.code::<true, _>(&src, value, &mut out);
            out.weight = 1;
        } else {
            f.code::<false, _>(&src, value, &mut out);
        }
        at = f.end;
        k += 1;
    }
    crc.update(src.text.get(counted..at).unwrap_or(&[]));
    let Run { acc, n, pos, .. } = out.bits;
    (bits.acc, bits.n, bits.pos) = (acc, n, pos);
    bits.buf = buf;
    (at, k)
}

/// The lines of `text[r]` (whole lines, or the first continuing `tail`
/// when `r` starts the piece), each compared with the line before it.
/// `tail` None: the line before `r` is not at hand (one the text leaves
/// out), and `r`'s first line is compared with nothing.
fn general(
    tail: Option<&[u8]>,
    buf: &mut Vec<u8>,
    text: &[u8],
    r: Range<usize>,
    out: &mut Out<&mut Bits>,
) {
    if r.is_empty() {
        return;
    }
    match tail {
        None => tokenize(&text[..r.end], r.start..r.start, out),
        Some(tail) if r.start == 0 => {
            // The piece's first line follows the tail in a buffer of both;
            // the other lines are compared where they are.
            let first = memchr::memchr(b'\n', &text[..r.end]).map_or(r.end, |p| p + 1);
            buf.clear();
            buf.extend_from_slice(tail);
            buf.extend_from_slice(&text[..first]);
            tokenize(buf, 0..tail.len(), out);
            tokenize(&text[..r.end], 0..first, out);
        }
        Some(_) => {
            let prev = memchr::memrchr(b'\n', &text[..r.start - 1]).map_or(0, |p| p + 1);
            tokenize(&text[..r.end], prev..r.start, out);
        }
    }
}

/// One token of a port's labels given the labels of the port before,
/// worked out once per snapshot ([`label_tokens`]): literals at these
/// offsets of the line's `{labels} `, or a match of this length and
/// distance as if each line were its `{labels} ` and a newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    Lits(u16, u16),
    Match(u16, u16),
}

/// Labels longer than this are not worked out (their lines are compared
/// as any other): distances and offsets stay within a token's 16 bits and
/// a line's matches within the window.
const LABELS_MAX: usize = 8 * 1024;

/// Appends the tokens of `{labels} ` following `{prev} ` and a newline;
/// false (and none) when either is too long or holds a newline.
pub(super) fn label_tokens(prev: &str, labels: &str, toks: &mut Vec<Tok>) -> bool {
    let ok = |l: &str| l.len() <= LABELS_MAX && !l.contains('\n');
    if !ok(prev) || !ok(labels) {
        return false;
    }
    let mut buf = Vec::with_capacity(prev.len() + labels.len() + 7);
    buf.push(b'{');
    buf.extend_from_slice(prev.as_bytes());
    buf.extend_from_slice(b"} \n");
    let at = buf.len();
    buf.push(b'{');
    buf.extend_from_slice(labels.as_bytes());
    buf.extend_from_slice(b"} ");
    let end = buf.len();
    // No match runs from the line before into this one: that would need
    // its newline here.
    line(&buf, 0..at, at..end, &mut Recorder { at, toks });
    true
}

/// Records a line's tokens, literals by their offsets in the line.
struct Recorder<'a> {
    at: usize,
    toks: &'a mut Vec<Tok>,
}

impl Sink for Recorder<'_> {
    fn literals(&mut self, _: &[u8], r: Range<usize>) {
        if !r.is_empty() {
            let off = |x: usize| (x - self.at) as u16;
            self.toks.push(Tok::Lits(off(r.start), off(r.end)));
        }
    }
    fn matches(&mut self, n: usize, dist: usize) {
        self.toks.push(Tok::Match(n as u16, dist as u16));
    }
}

/// Symbol counts of one block.
struct Freq {
    litlen: [u32; LITLEN],
    dist: [u32; DIST],
}

impl Freq {
    /// Counts for codes that are to serve other text of the same shape:
    /// each length and distance symbol counts at least half its neighbour
    /// and a quarter of the next (lines one name longer move them), and
    /// each digit as the digits on average (values of other families).
    fn widen(&mut self) {
        fn spread(f: &mut [u32]) {
            let was = f.to_vec();
            for (i, x) in f.iter_mut().enumerate() {
                let near = |d: usize, by: u32| {
                    let a = i
                        .checked_sub(d)
                        .and_then(|j| was.get(j))
                        .copied()
                        .unwrap_or(0);
                    let b = was.get(i + d).copied().unwrap_or(0);
                    a.max(b) / by
                };
                *x = (*x).max(near(1, 2)).max(near(2, 4));
            }
        }
        spread(&mut self.litlen[END_OF_BLOCK + 1..]);
        spread(&mut self.dist);
        let digits = &mut self.litlen[usize::from(b'0')..=usize::from(b'9')];
        let mean = (digits.iter().map(|&d| u64::from(d)).sum::<u64>() / 10) as u32;
        for d in digits {
            *d = (*d).max(mean);
        }
    }
}

impl Default for Freq {
    fn default() -> Freq {
        Freq {
            litlen: [0; LITLEN],
            dist: [0; DIST],
        }
    }
}

/// The tokens of the lines of `buf` after `prev`, each compared with the
/// line before it (the first with `prev`).
fn tokenize(buf: &[u8], mut prev: Range<usize>, out: &mut impl Sink) {
    let mut at = prev.end;
    while at < buf.len() {
        let end = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |p| at + p + 1);
        line(buf, prev, at..end, out);
        prev = at..end;
        at = end;
    }
}

/// The tokens of one line against the previous one: runs equal at the
/// same place of a field are matches; a field whose rest differs in length
/// from the previous line's is literals up to its end, where the two lines
/// line up again.
fn line(buf: &[u8], prev: Range<usize>, cur: Range<usize>, out: &mut impl Sink) {
    let (mut i, mut j) = (cur.start, prev.start);
    // Literals wait from `lit` to `i` until the next match.
    let mut lit = i;
    // Where the field being compared ends, while both lines are known to
    // have it at the same length (a mismatch there is one literal).
    let mut aligned_to = i;
    while i < cur.end {
        if j >= prev.end || i - j > WINDOW {
            i = cur.end;
            break;
        }
        let n = common(buf, i, j, cur.end);
        if n >= MIN_MATCH {
            out.literals(buf, lit..i);
            out.matches(n, i - j);
            lit = i + n;
        }
        i += n;
        j += n;
        if i >= cur.end {
            break;
        }
        // buf[i] differs from buf[j].
        if i >= aligned_to {
            let qi = quote(buf, i, cur.end);
            let d = i - j;
            // The previous line's field ends at the same place: they stay
            // aligned (its own quote search is needed only when not).
            let same = if qi == cur.end {
                j <= prev.end && prev.end - j == cur.end - i
            } else {
                qi - d < prev.end && buf[qi - d] == b'"'
            };
            if !same {
                j = quote(buf, j, prev.end);
                i = qi;
                continue;
            }
            aligned_to = qi;
        }
        i += 1;
        j += 1;
    }
    out.literals(buf, lit..i);
}

/// The next `"` in `buf[from..end]`, or `end`. Fields are short: a plain
/// loop costs less than memchr's set-up.
#[inline]
fn quote(buf: &[u8], from: usize, end: usize) -> usize {
    buf.get(from..end)
        .and_then(|b| b.iter().position(|&c| c == b'"'))
        .map_or(end, |p| from + p)
}

/// How many octets from `i` on (up to `end`) equal those from `j` on
/// (`j < i`), eight at a time.
#[inline]
fn common(buf: &[u8], i: usize, j: usize, end: usize) -> usize {
    let (Some(cur), Some(prev)) = (buf.get(i..end), buf.get(j..end)) else {
        return 0;
    };
    let mut n = 0;
    for (x, y) in cur.chunks_exact(8).zip(prev.chunks_exact(8)) {
        let (Ok(x), Ok(y)) = (<[u8; 8]>::try_from(x), <[u8; 8]>::try_from(y)) else {
            break;
        };
        let d = u64::from_le_bytes(x) ^ u64::from_le_bytes(y);
        if d != 0 {
            return n + (d.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + cur[n..]
        .iter()
        .zip(&prev[n..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Where a line's tokens go.
trait Sink {
    /// The octets `buf[r]`, as literals.
    fn literals(&mut self, buf: &[u8], r: Range<usize>);
    /// `n` octets (at least 3) copied from `dist` back.
    fn matches(&mut self, n: usize, dist: usize);
}

impl Sink for Out<'_, &mut Bits> {
    #[inline]
    fn literals(&mut self, buf: &[u8], r: Range<usize>) {
        Out::literals::<true>(self, buf.get(r).unwrap_or(&[]));
    }
    #[inline]
    fn matches(&mut self, n: usize, dist: usize) {
        Out::matches::<true>(self, n, dist);
    }
}

/// Where tokens go: coded at once, and counted for the next block's codes
/// (`COUNT`, each as `weight` symbols).
struct Out<'a, W> {
    bits: W,
    codes: &'a Codes,
    freq: &'a mut Freq,
    weight: u32,
}

impl<W: Put> Out<'_, W> {
    /// A code (and extra bits) packed with its length in the top octet.
    #[inline(always)]
    fn put(&mut self, p: u32) {
        self.bits.put(u64::from(p & 0xff_ffff), p >> 24);
    }

    #[inline(always)]
    fn literals<const COUNT: bool>(&mut self, text: &[u8]) {
        if COUNT {
            for &c in text {
                self.freq.litlen[usize::from(c)] += self.weight;
            }
        }
        // Three to a write: a literal's code is at most 15 bits.
        let lit = |c: u8| self.codes.lit[usize::from(c)];
        let mut three = text.chunks_exact(3);
        for c in &mut three {
            let (a, b, d) = (lit(c[0]), lit(c[1]), lit(c[2]));
            let (na, nb, nd) = (a >> 24, b >> 24, d >> 24);
            let v = u64::from(a & 0xff_ffff)
                | u64::from(b & 0xff_ffff) << na
                | u64::from(d & 0xff_ffff) << (na + nb);
            self.bits.put(v, na + nb + nd);
        }
        match *three.remainder() {
            [a] => self.put(lit(a)),
            [a, b] => {
                let (a, b) = (lit(a), lit(b));
                let na = a >> 24;
                let v = u64::from(a & 0xff_ffff) | u64::from(b & 0xff_ffff) << na;
                self.bits.put(v, na + (b >> 24));
            }
            _ => {}
        }
    }

    /// A run of `n` (at least 3) octets `dist` back (at most the window):
    /// one match, the common case, coded here; a longer run by
    /// [`long_matches`](Self::long_matches).
    #[inline(always)]
    fn matches<const COUNT: bool>(&mut self, n: usize, dist: usize) {
        if n > MAX_MATCH {
            return self.long_matches::<COUNT>(n, dist);
        }
        self.one_match::<COUNT>(n, dist);
    }

    /// One match (3 to 258 octets).
    #[inline(always)]
    fn one_match<const COUNT: bool>(&mut self, n: usize, dist: usize) {
        // Within the tables without bounds checks (a window distance's
        // symbol is at most 29, a length's index at most 255).
        let l = (n - MIN_MATCH) & 0xff;
        if COUNT {
            self.freq.litlen[257 + usize::from(LENGTH_SYM[l])] += self.weight;
            self.freq.dist[dist_sym(dist).min(DIST - 1)] += self.weight;
        }
        let pl = self.codes.lengths[l];
        // Length and distance take at most 20 + 28 bits: one write.
        let (d, nd) = self.distance(dist);
        let nl = pl >> 24;
        self.bits.put(u64::from(pl & 0xff_ffff) | d << nl, nl + nd);
    }

    /// A distance's code and extra bits, and their length: a line's
    /// distance (most are short) read whole, a longer one worked out.
    #[inline(always)]
    fn distance(&self, dist: usize) -> (u64, u32) {
        match self.codes.near.get(dist) {
            Some(&pd) => (u64::from(pd & 0xff_ffff), pd >> 24),
            None => {
                let sym = dist_sym(dist).min(DIST - 1);
                let p = self.codes.dist[sym];
                let x = DIST_EXTRA[sym];
                let extra = ((dist - 1) as u64) & ((1 << x) - 1);
                (u64::from(p & 0xff_ffff) | extra << (p >> 24), (p >> 24) + x)
            }
        }
    }

    /// A run longer than a match: matches of at most 258 octets, none
    /// shorter than 3.
    #[inline(always)]
    fn long_matches<const COUNT: bool>(&mut self, n: usize, dist: usize) {
        for len in long_match_lengths(n) {
            self.one_match::<COUNT>(len, dist);
        }
    }
}

/// The lengths of the matches that make a run of `n` (at least 3)
/// octets: at most 258 each, none shorter than 3.
fn long_match_lengths(mut n: usize) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let len = if n <= MAX_MATCH {
            n
        } else if n - MAX_MATCH < MIN_MATCH {
            n - MIN_MATCH
        } else {
            MAX_MATCH
        };
        n -= len;
        (len > 0).then_some(len)
    })
}

/// Each match length's symbol (less 257), by length - 3.
static LENGTH_SYM: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut l = MIN_MATCH;
    while l <= MAX_MATCH {
        t[l - MIN_MATCH] = length_code(l).0 as u8;
        l += 1;
    }
    t
};

/// Extra bits of each length symbol (less 257) and distance symbol.
const LENGTH_EXTRA: [u32; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_EXTRA: [u32; DIST] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// A distance's symbol.
#[inline]
fn dist_sym(dist: usize) -> usize {
    let x = (dist - 1) as u32;
    if x < 4 {
        return x as usize;
    }
    let b = 31 - x.leading_zeros();
    (2 * b + ((x >> (b - 1)) & 1)) as usize
}

/// A match length's symbol (less 257), extra bit count and extra bits.
const fn length_code(len: usize) -> (usize, u32, u32) {
    if len == MAX_MATCH {
        return (28, 0, 0);
    }
    let x = (len - MIN_MATCH) as u32;
    if x < 8 {
        return (x as usize, 0, 0);
    }
    let b = 31 - x.leading_zeros();
    let sym = 4 * (b - 1) + ((x >> (b - 2)) & 3);
    (sym as usize, b - 2, x & ((1 << (b - 2)) - 1))
}

/// A Huffman code: each symbol's length, and its code (bit-reversed, as
/// deflate sends it) with the length in the top octet.
struct Code {
    lens: Vec<u8>,
    packed: Vec<u32>,
}

impl Code {
    /// The canonical code of these lengths (RFC 1951 3.2.2).
    fn of(lens: Vec<u8>) -> Code {
        let mut count = [0u16; 16];
        for &l in &lens {
            count[usize::from(l & 15)] += 1;
        }
        count[0] = 0;
        let mut next = [0u16; 16];
        let mut code = 0u16;
        for b in 1..16 {
            code = (code + count[b - 1]) << 1;
            next[b] = code;
        }
        let packed = lens
            .iter()
            .map(|&l| {
                let l = l & 15;
                if l == 0 {
                    return 0;
                }
                let c = next[usize::from(l)];
                next[usize::from(l)] += 1;
                u32::from(c.reverse_bits() >> (16 - l)) | u32::from(l) << 24
            })
            .collect();
        Code { lens, packed }
    }

    #[inline(always)]
    fn put(&self, bits: &mut Bits, sym: usize) {
        let p = self.packed.get(sym).copied().unwrap_or(0);
        bits.put(u64::from(p & 0xff_ffff), p >> 24);
    }

    /// Bits this code spends on symbols of these counts.
    fn cost(&self, freq: &[u32]) -> u64 {
        freq.iter()
            .zip(&self.lens)
            .map(|(&f, &l)| u64::from(f) * u64::from(l))
            .sum()
    }
}

/// The fixed codes (RFC 1951 3.2.6).
fn fixed() -> &'static (Code, Code) {
    static FIXED: std::sync::OnceLock<(Code, Code)> = std::sync::OnceLock::new();
    FIXED.get_or_init(|| {
        let mut lens = vec![8u8; 288];
        lens[144..256].fill(9);
        lens[256..280].fill(7);
        (Code::of(lens), Code::of(vec![5; DIST]))
    })
}

/// Huffman code lengths for these counts, none longer than `limit`. Fewer
/// than two symbols in use get a second, so the code is complete (as
/// zlib's inflate requires of a code length code).
fn lengths(freq: &[u32], limit: u8) -> Vec<u8> {
    let mut f: Vec<u64> = freq.iter().map(|&x| u64::from(x)).collect();
    let used = f.iter().filter(|&&x| x > 0).count();
    for x in f
        .iter_mut()
        .filter(|x| **x == 0)
        .take(2usize.saturating_sub(used))
    {
        *x = 1;
    }
    loop {
        let lens = huffman(&f);
        if lens.iter().all(|&l| l <= limit) {
            return lens;
        }
        // Too deep: flatten the counts and build again (all ones at
        // the end is a balanced code within any limit used here).
        for x in f.iter_mut().filter(|x| **x > 0) {
            *x = (*x >> 1).max(1);
        }
    }
}

/// Code lengths of a Huffman code for these counts (zero: unused). The
/// leaves sorted once, the nodes made in order of count: two queues, the
/// smaller head taken each time (no heap: a block's codes were a twentieth
/// of its coding with one).
fn huffman(f: &[u64]) -> Vec<u8> {
    let mut leaves: Vec<(u64, usize)> = f
        .iter()
        .enumerate()
        .filter(|(_, &x)| x > 0)
        .map(|(i, &x)| (x, i))
        .collect();
    leaves.sort_unstable();
    let n = leaves.len();
    // Each node's count and parent (internal nodes), each leaf's parent.
    let mut count: Vec<u64> = Vec::with_capacity(n);
    let mut up: Vec<usize> = Vec::with_capacity(n);
    let mut leaf_up = vec![usize::MAX; n];
    let (mut li, mut ni) = (0, 0);
    for _ in 1..n {
        let node = count.len();
        let mut sum = 0;
        for _ in 0..2 {
            let leaf = leaves.get(li).map(|l| l.0);
            let inner = count.get(ni).copied();
            match (leaf, inner) {
                (Some(l), Some(i)) if i < l => {
                    sum += i;
                    up[ni] = node;
                    ni += 1;
                }
                (Some(l), _) => {
                    sum += l;
                    leaf_up[li] = node;
                    li += 1;
                }
                (None, Some(i)) => {
                    sum += i;
                    up[ni] = node;
                    ni += 1;
                }
                (None, None) => {}
            }
        }
        count.push(sum);
        up.push(usize::MAX);
    }
    // Parents are made after their children: depths from the root down.
    let mut depth = vec![0u8; count.len()];
    for i in (0..count.len()).rev() {
        if let Some(&d) = up.get(i).and_then(|&p| depth.get(p)) {
            depth[i] = d.saturating_add(1);
        }
    }
    let mut lens = vec![0u8; f.len()];
    for (&(_, s), &p) in leaves.iter().zip(&leaf_up) {
        if let Some(&d) = depth.get(p) {
            lens[s] = d.saturating_add(1);
        }
    }
    lens
}

/// A block's codes as it sends them: its header (block type, and a
/// dynamic block's code lengths), and each symbol's code packed with its
/// length in the top octet (a length's with its extra bits).
struct Codes {
    header: Bits,
    lit: [u32; 256],
    lengths: [u32; 256],
    dist: [u32; DIST],
    /// Distances up to [`NEAR`] (by distance; 0 unused), each code with
    /// its extra bits, as [`lengths`](Self::lengths).
    near: Box<[u32; NEAR + 1]>,
    end_of_block: u32,
}

/// Distances coded from [`Codes::near`]: a sample line is shorter.
const NEAR: usize = 1024;

impl Codes {
    fn fixed() -> Codes {
        let (litlen, dist) = fixed();
        let mut header = Bits::default();
        header.room(1);
        header.put(0b010, 3);
        Codes::of(header, litlen, dist)
    }

    /// The codes for the block after one of these counts: its own (every
    /// symbol given a code, as the next block may use any) or the fixed
    /// ones, whichever would have coded it in fewer bits.
    fn after(freq: &mut Freq) -> Codes {
        freq.litlen[END_OF_BLOCK] = 1;
        let (fl, fd) = fixed();
        let fixed_bits = fl.cost(&freq.litlen) + fd.cost(&freq.dist);
        // Every symbol gets a code; the unused and rare ones a count of a
        // 4096th of the block, so that the code fits 15 bits at the first
        // try (a count of 1 among a million made it deeper, and each retry
        // is another Huffman build).
        for counts in [&mut freq.litlen[..], &mut freq.dist[..]] {
            let floor = (counts.iter().map(|&f| u64::from(f)).sum::<u64>() >> 12).max(1) as u32;
            for f in counts.iter_mut() {
                *f = (*f).max(floor);
            }
        }
        let litlen = Code::of(lengths(&freq.litlen, 15));
        let dist = Code::of(lengths(&freq.dist, 15));
        let mut header = Bits::default();
        dynamic_header(&mut header, &litlen, &dist);
        if header.len() + litlen.cost(&freq.litlen) + dist.cost(&freq.dist) < fixed_bits {
            Codes::of(header, &litlen, &dist)
        } else {
            Codes::fixed()
        }
    }

    fn of(header: Bits, litlen: &Code, dist: &Code) -> Codes {
        let code = |c: &Code, sym: usize| c.packed.get(sym).copied().unwrap_or(0);
        let mut lengths = [0u32; 256];
        for (x, l) in lengths.iter_mut().zip(MIN_MATCH..) {
            let sym = usize::from(LENGTH_SYM[l - MIN_MATCH]);
            let p = code(litlen, 257 + sym);
            let n = LENGTH_EXTRA[sym];
            let extra = ((l - MIN_MATCH) as u32) & ((1 << n) - 1);
            *x = (p & 0xff_ffff | extra << (p >> 24)) | ((p >> 24) + n) << 24;
        }
        let mut near = Box::new([0u32; NEAR + 1]);
        for (x, d) in near.iter_mut().zip(0usize..).skip(1) {
            let sym = dist_sym(d);
            let p = code(dist, sym);
            let n = DIST_EXTRA[sym];
            let extra = ((d - 1) as u32) & ((1 << n) - 1);
            *x = (p & 0xff_ffff | extra << (p >> 24)) | ((p >> 24) + n) << 24;
        }
        Codes {
            header,
            lit: std::array::from_fn(|c| code(litlen, c)),
            lengths,
            dist: std::array::from_fn(|d| code(dist, d)),
            near,
            end_of_block: code(litlen, END_OF_BLOCK),
        }
    }
}

/// A dynamic block's header (RFC 1951 3.2.7): not final, the counts, the
/// code length code and the two codes' lengths (no run-length symbols:
/// the header is a few hundred octets against a block of a megabyte).
fn dynamic_header(bits: &mut Bits, litlen: &Code, dist: &Code) {
    let nlit = 257.max(
        litlen
            .lens
            .iter()
            .rposition(|&l| l > 0)
            .map_or(0, |p| p + 1),
    );
    let ndist = 1.max(dist.lens.iter().rposition(|&l| l > 0).map_or(0, |p| p + 1));
    let all: Vec<u8> = litlen.lens[..nlit]
        .iter()
        .chain(&dist.lens[..ndist])
        .copied()
        .collect();
    let mut cfreq = [0u32; 19];
    for &l in &all {
        cfreq[usize::from(l)] += 1;
    }
    let clen = Code::of(lengths(&cfreq, 7));
    let nclen = 4.max(
        CLEN_ORDER
            .iter()
            .rposition(|&s| clen.lens[s] > 0)
            .map_or(0, |p| p + 1),
    );
    // At most 17 + 19 x 3 + 316 x 7 bits.
    bits.room(290);
    bits.put(0b100, 3);
    bits.put((nlit - 257) as u64, 5);
    bits.put((ndist - 1) as u64, 5);
    bits.put((nclen - 4) as u64, 4);
    for &s in &CLEN_ORDER[..nclen] {
        bits.put(u64::from(clen.lens[s]), 3);
    }
    for &l in &all {
        clen.put(bits, usize::from(l));
    }
}

#[cfg(test)]
pub(super) mod tests;
