//! The text of one chunk of the body: a buffer initialised once and written
//! in place through a cursor. A sample line takes one room check, where
//! pushing its pieces on a `String` took one each (a capacity check, a
//! length update, a memcpy call): at millions of lines a scrape those
//! cost more than the copies. The buffers are used again ([`Pool`]): a
//! fresh one per chunk would be zeroed (or faulted in) each time.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::body::Bytes;

/// A metric name's longest copy in one fixed-size move (longer names are
/// copied as they are).
const NAME_BLOCK: usize = 64;

/// Room for a value's digits and the newline (u64::MAX has 20 digits).
pub(super) const VALUE_ROOM: usize = 21;

/// A chunk's text.
pub(super) struct Text {
    /// Initialised to its whole length: written in place, never past it.
    buf: Vec<u8>,
    /// Octets of text, at the front of `buf`.
    len: usize,
    /// Where the buffer goes back to when the text is dropped.
    pool: Option<Arc<Pool>>,
}

impl Drop for Text {
    fn drop(&mut self) {
        if let Some(p) = self.pool.take() {
            p.put_back(std::mem::take(&mut self.buf));
        }
    }
}

impl AsRef<[u8]> for Text {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Text {
    /// Holds `room` octets before it grows.
    pub fn with_room(room: usize) -> Text {
        Text {
            buf: vec![0; room],
            len: 0,
            pool: None,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// The text as a body chunk: its buffer goes back to its pool once
    /// the chunk is sent.
    pub fn into_bytes(self) -> Bytes {
        Bytes::from_owner(self)
    }

    /// At least `n` octets after the text, to write in place and then
    /// [`advance`](Self::advance) over.
    fn room(&mut self, n: usize) -> &mut [u8] {
        if self.buf.len() - self.len < n {
            self.grow(n);
        }
        &mut self.buf[self.len..]
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let want = (self.len + n).max(self.buf.len() * 2);
        self.buf.resize(want, 0);
    }

    fn advance(&mut self, n: usize) {
        self.len = (self.len + n).min(self.buf.len());
    }

    pub fn put(&mut self, s: &[u8]) {
        let n = s.len();
        self.room(n)[..n].copy_from_slice(s);
        self.advance(n);
    }

    /// `v` in decimal.
    pub fn put_u64(&mut self, v: u64) {
        let n = decimal(self.room(VALUE_ROOM), v);
        self.advance(n);
    }

    /// A GUID as it displays: `0x` and 16 lowercase hex digits.
    pub fn put_guid(&mut self, v: u64) {
        let mut b = *b"0x0000000000000000";
        for (i, d) in b[2..].iter_mut().enumerate() {
            *d = b"0123456789abcdef"[(v >> (60 - 4 * i) & 0xf) as usize];
        }
        self.put(&b);
    }

    /// A label value escaped as the text format requires (as
    /// [`super::fabric::esc`], without a string of its own).
    pub fn put_escaped(&mut self, v: &str) {
        escape(v, |p| self.put(p.as_bytes()));
    }

    /// A sample line `name`, `labels` (with their braces and the space),
    /// `v` in decimal and a newline.
    #[inline(always)]
    pub fn sample(&mut self, name: &Name, labels: &[u8], v: u64) {
        let need = name.room + labels.len();
        if self.buf.len() - self.len < need {
            self.grow(need);
        }
        let Some(w) = self.buf.get_mut(self.len..) else {
            return;
        };
        // The whole block: the labels then overwrite what is past the name.
        let rest = match (name.fits, w.split_first_chunk_mut::<NAME_BLOCK>()) {
            (true, Some((block, _))) => {
                *block = name.block;
                w.get_mut(name.len..)
            }
            _ => {
                // Within `w`: it has `need` octets, more than the name.
                let (head, rest) = w.split_at_mut(name.len);
                head.copy_from_slice(name.text.as_bytes());
                Some(rest)
            }
        };
        let Some((l, rest)) = rest.and_then(|r| r.split_at_mut_checked(labels.len())) else {
            return;
        };
        l.copy_from_slice(labels);
        let n = decimal(rest, v);
        if let Some(nl) = rest.get_mut(n) {
            *nl = b'\n';
        }
        // Within `need`: `decimal` writes at most 20 digits.
        self.len += name.len + labels.len() + n + 1;
    }

    /// [`sample`](Self::sample) of a signed value.
    pub fn sample_i64(&mut self, name: &Name, labels: &[u8], v: i64) {
        if v >= 0 {
            self.sample(name, labels, v as u64);
        } else {
            self.put(name.text.as_bytes());
            self.put(labels);
            self.put(b"-");
            self.put_u64(v.unsigned_abs());
            self.put(b"\n");
        }
    }
}

impl fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes());
        Ok(())
    }
}

/// Chunk buffers to use again, at most [`Pool::KEEP`] of them.
#[derive(Default)]
pub(super) struct Pool(Mutex<Vec<Vec<u8>>>);

impl Pool {
    /// Buffers kept between chunks: each scrape holds one or two at a time
    /// (the one filled, the one sent), more scrapes at once make their own.
    const KEEP: usize = 4;

    /// An empty text from a kept buffer, or a new one of `room` octets.
    pub fn text(self: &Arc<Self>, room: usize) -> Text {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut t = kept.map_or_else(
            || Text::with_room(room),
            |buf| Text {
                buf,
                len: 0,
                pool: None,
            },
        );
        t.pool = Some(Arc::clone(self));
        t
    }

    fn put_back(&self, buf: Vec<u8>) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < Self::KEEP {
            kept.push(buf);
        }
    }
}

/// A family's metric name, and padded to [`NAME_BLOCK`] when it fits.
pub(super) struct Name {
    text: String,
    len: usize,
    /// Whether it fits the block.
    fits: bool,
    block: [u8; NAME_BLOCK],
    /// The room a sample line needs besides its labels.
    room: usize,
}

impl Default for Name {
    fn default() -> Name {
        Name::new(String::new())
    }
}

impl Name {
    pub fn new(text: String) -> Name {
        let mut block = [0; NAME_BLOCK];
        if let Some(b) = block.get_mut(..text.len()) {
            b.copy_from_slice(text.as_bytes());
        }
        Name {
            len: text.len(),
            fits: text.len() <= NAME_BLOCK,
            room: NAME_BLOCK.max(text.len()) + VALUE_ROOM,
            text,
            block,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// 10^0 to 10^19.
const POW10: [u64; 20] = {
    let mut p = [1; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// Digits of `v` in decimal, from its bit length (log10(2) is about
/// 1233/4096; the guess may be one too many): fewer instructions than
/// `ilog10`.
pub(super) fn digits(v: u64) -> usize {
    let v = v | 1;
    let t = (((64 - v.leading_zeros()) * 1233) >> 12) as usize;
    t + POW10.get(t).map_or(1, |&p| usize::from(v >= p))
}

/// "00" to "99".
const PAIRS: [u8; 200] = {
    let mut p = [0; 200];
    let mut i = 0;
    while i < 100 {
        p[2 * i] = b'0' + (i / 10) as u8;
        p[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    p
};

/// Writes `v` in decimal at the start of `w` (room for 20 digits) and
/// returns how many digits: from the last, four a step (one division of
/// the u64, two table reads), where `itoa` writes into a buffer of its own
/// to be copied.
#[inline(always)]
pub(super) fn decimal(w: &mut [u8], mut v: u64) -> usize {
    // Most samples: error counters at zero, states.
    if v < 10 {
        if let Some(d) = w.first_mut() {
            *d = b'0' + v as u8;
        }
        return 1;
    }
    let n = digits(v);
    let Some(d) = w.get_mut(..n) else {
        return 0;
    };
    let mut quads = d.rchunks_exact_mut(4);
    for q in &mut quads {
        let r = (v % 10_000) as usize;
        v /= 10_000;
        let (hi, lo) = (r / 100 * 2, r % 100 * 2);
        q[0] = PAIRS[hi];
        q[1] = PAIRS[hi + 1];
        q[2] = PAIRS[lo];
        q[3] = PAIRS[lo + 1];
    }
    // The first one to three digits: v < 1000.
    let v = v as usize;
    match quads.into_remainder() {
        [a] => *a = b'0' + v as u8,
        [a, b] => {
            *a = PAIRS[v % 100 * 2];
            *b = PAIRS[v % 100 * 2 + 1];
        }
        [a, b, c] => {
            *a = b'0' + (v / 100 % 10) as u8;
            *b = PAIRS[v % 100 * 2];
            *c = PAIRS[v % 100 * 2 + 1];
        }
        _ => {}
    }
    n
}

/// A label value escaped as the text format requires (backslash, double
/// quote and newline), in pieces given to `put`: the value's own pieces
/// between escapes, and the escapes.
pub(crate) fn escape(v: &str, mut put: impl FnMut(&str)) {
    let mut rest = v;
    while let Some(i) = rest.find(['\\', '"', '\n']) {
        put(&rest[..i]);
        put(match rest.as_bytes()[i] {
            b'\n' => "\\n",
            b'"' => "\\\"",
            _ => "\\\\",
        });
        rest = &rest[i + 1..];
    }
    put(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_display_writes_them() {
        let name = Name::new("m".into());
        let long = Name::new("x".repeat(NAME_BLOCK + 5));
        let mut want = String::new();
        let mut t = Text::with_room(8);
        let mut v = 1u64;
        for _ in 0..70 {
            for x in [v - 1, v, v + 1, u64::MAX - v] {
                t.sample(&name, b"{a=\"1\"} ", x);
                want.push_str(&format!("m{{a=\"1\"}} {x}\n"));
                t.sample(&long, b" ", x);
                want.push_str(&format!("{} {x}\n", long.as_str()));
                let i = x as i64;
                t.sample_i64(&name, b" ", i);
                want.push_str(&format!("m {i}\n"));
            }
            v = v.wrapping_mul(3).max(1);
        }
        for p in POW10 {
            for x in [p - 1, p, p + 1] {
                t.sample(&name, b" ", x);
                want.push_str(&format!("m {x}\n"));
            }
        }
        t.sample_i64(&name, b" ", i64::MIN);
        want.push_str(&format!("m {}\n", i64::MIN));
        assert_eq!(t.as_bytes(), want.as_bytes());
        assert_eq!(&t.into_bytes()[..], want.as_bytes());
    }

    /// Values of every length.
    #[test]
    fn decimal_digits_match_display() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..200_000u32 {
            // xorshift, then cut to a length of 1 to 64 bits.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x >> (i % 64);
            let mut w = [b'#'; VALUE_ROOM];
            let n = decimal(&mut w, v);
            assert_eq!(&w[..n], v.to_string().as_bytes(), "{v}");
        }
    }

    #[test]
    fn guids_and_label_values_are_written_as_displayed_and_escaped() {
        let mut t = Text::with_room(4);
        let mut want = String::new();
        for g in [0, 1, 0x0002_c903_00a1_b2c3, u64::MAX] {
            t.put_guid(g);
            want.push_str(&ib::types::Guid(g).to_string());
        }
        // The text format's escapes: backslash, double quote, newline.
        for (v, escaped) in [
            ("", ""),
            ("plain", "plain"),
            ("a\\b\"c\nd", "a\\\\b\\\"c\\nd"),
            ("\"\"", "\\\"\\\""),
            ("\\", "\\\\"),
            ("ends\n", "ends\\n"),
            ("é\"ü", "é\\\"ü"),
        ] {
            t.put_escaped(v);
            want.push_str(escaped);
            assert_eq!(super::super::fabric::esc(v), escaped);
        }
        assert_eq!(t.as_bytes(), want.as_bytes());
    }

    #[test]
    fn buffers_go_back_to_their_pool() {
        let pool = Arc::new(Pool::default());
        let mut t = pool.text(16);
        t.put(&[b'x'; 100]);
        let b = t.into_bytes();
        assert_eq!(&b[..], &[b'x'; 100][..]);
        drop(b);
        // The grown buffer, used again, its old text gone.
        let t = pool.text(16);
        assert!(t.buf.len() >= 100);
        assert_eq!(t.as_bytes(), b"");
        let more: Vec<Text> = (0..2 * Pool::KEEP).map(|_| pool.text(16)).collect();
        drop((t, more));
        assert_eq!(pool.0.lock().unwrap().len(), Pool::KEEP);
    }
}
