//! The text of one chunk of the body: a buffer initialised once and written
//! in place through a cursor, numbers by itoa. A sample line takes one room
//! check, where pushing its pieces on a `String` took one each (a capacity
//! check, a length update): at millions of lines a scrape those cost more
//! than the copies. The buffers are used again ([`Pool`]): a fresh one per
//! chunk would be zeroed (or faulted in) each time.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::body::Bytes;

/// Room for a value's digits, its sign and the newline (u64::MAX has 20
/// digits).
const VALUE_ROOM: usize = 22;

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
        self.put(itoa::Buffer::new().format(v).as_bytes());
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
        self.line(name, labels, itoa::Buffer::new().format(v));
    }

    #[inline(always)]
    fn line(&mut self, name: &Name, labels: &[u8], value: &str) {
        let parts = [name.text.as_bytes(), labels, value.as_bytes(), b"\n"];
        let w = self.room(name.text.len() + labels.len() + VALUE_ROOM);
        let mut at = 0;
        for p in parts {
            if let Some(d) = w.get_mut(at..at + p.len()) {
                d.copy_from_slice(p);
                at += p.len();
            }
        }
        self.advance(at);
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

/// A family's metric name.
#[derive(Default)]
pub(super) struct Name {
    text: String,
}

impl Name {
    pub fn new(text: String) -> Name {
        Name { text }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
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
        let long = Name::new("x".repeat(100));
        let mut want = String::new();
        let mut t = Text::with_room(8);
        let mut v = 1u64;
        for _ in 0..70 {
            for x in [v - 1, v, v + 1, u64::MAX - v] {
                t.sample(&name, b"{a=\"1\"} ", x);
                want.push_str(&format!("m{{a=\"1\"}} {x}\n"));
                t.sample(&long, b" ", x);
                want.push_str(&format!("{} {x}\n", long.as_str()));
            }
            v = v.wrapping_mul(3).max(1);
        }
        for p in (0..20).map(|e| 10u64.pow(e)) {
            for x in [p - 1, p, p + 1] {
                t.sample(&name, b" ", x);
                want.push_str(&format!("m {x}\n"));
            }
        }
        assert_eq!(t.as_bytes(), want.as_bytes());
        assert_eq!(&t.into_bytes()[..], want.as_bytes());
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
