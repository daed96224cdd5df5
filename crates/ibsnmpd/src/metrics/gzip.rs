//! gzip (RFC 1952) for /metrics, as two deflate streams in one member: the
//! fabric part, the same for every scrape of a published snapshot and so
//! kept for the scrapes after the first ([`Kept`]), then the agent's own
//! figures, compressed per scrape. The fabric stream ends with a sync
//! flush (an empty stored block, not the final one), so the agent's stream
//! follows on an octet boundary and a decoder reads one stream; the
//! trailer's CRC-32 is the two parts' CRCs combined.

use std::io::{self, Write as _};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use flate2::write::DeflateEncoder;
use hyper::body::Bytes;

use super::Families;

/// The member header: deflate, no name, no time, OS unknown.
pub(super) const HEADER: &[u8] = &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Octets of gzipped fabric parts kept for one published snapshot, all
/// family sets together: the default families of a 48,000-host fabric
/// take about 140 MB. A larger part is sent and not kept.
const KEPT_MAX: usize = 256 << 20;

/// One part of the text, being compressed.
pub(super) struct Part {
    z: DeflateEncoder<Vec<u8>>,
    crc: crc32fast::Hasher,
}

impl Part {
    pub fn new() -> Part {
        Part {
            z: DeflateEncoder::new(Vec::new(), flate2::Compression::fast()),
            crc: crc32fast::Hasher::new(),
        }
    }

    /// Compresses `text`: the deflate octets made so far (often none).
    pub fn push(&mut self, text: &[u8]) -> io::Result<Vec<u8>> {
        self.crc.update(text);
        self.z.write_all(text)?;
        Ok(std::mem::take(self.z.get_mut()))
    }

    /// Ends the part: its last octets and the CRC of its text. `last`
    /// ends the deflate stream; otherwise a sync flush leaves it open for
    /// the next part.
    pub fn end(mut self, last: bool) -> io::Result<(Vec<u8>, crc32fast::Hasher)> {
        let out = if last {
            self.z.finish()?
        } else {
            self.z.flush()?;
            std::mem::take(self.z.get_mut())
        };
        Ok((out, self.crc))
    }
}

/// The trailer: CRC-32 and length (modulo 2^32) of the whole text.
pub(super) fn trailer(crc: crc32fast::Hasher) -> [u8; 8] {
    let len = crc.total_len() as u32;
    let mut t = [0; 8];
    t[..4].copy_from_slice(&crc.finalize().to_le_bytes());
    t[4..].copy_from_slice(&len.to_le_bytes());
    t
}

/// The gzipped fabric part of one scrape: deflate chunks ending with a
/// sync flush, and the CRC of their text.
pub(super) struct Deflated {
    pub chunks: Vec<Bytes>,
    pub crc: crc32fast::Hasher,
}

/// The gzipped fabric parts of the published snapshot, by family set,
/// within [`KEPT_MAX`]: a scrape of the same snapshot and families (a
/// second Prometheus, a retry) sends them instead of rendering and
/// compressing the same text again. A new snapshot drops them.
#[derive(Default)]
pub(super) struct Kept {
    /// The published snapshot they belong to (a weak reference keeps the
    /// address from being reused, not the snapshot alive).
    of: Weak<mibs::Published>,
    parts: Vec<(Families, Arc<Deflated>)>,
}

impl Kept {
    /// The kept part of `published` for families `f`. Parts of an older
    /// snapshot are dropped now (their memory back before the next sweep's
    /// first gzip scrape ends).
    pub fn get(&mut self, published: &Arc<mibs::Published>, f: Families) -> Option<Arc<Deflated>> {
        if !std::ptr::eq(self.of.as_ptr(), Arc::as_ptr(published)) {
            self.parts.clear();
            return None;
        }
        self.parts
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, d)| Arc::clone(d))
    }

    fn octets(&self) -> usize {
        self.parts
            .iter()
            .flat_map(|(_, d)| &d.chunks)
            .map(Bytes::len)
            .sum()
    }

    fn put(&mut self, published: &Weak<mibs::Published>, f: Families, d: Deflated) {
        if !Weak::ptr_eq(&self.of, published) {
            // A newer snapshot's part replaces the older ones; an older
            // snapshot's (a scrape that began before a sweep) is not kept.
            if published.strong_count() == 0 {
                return;
            }
            self.of = published.clone();
            self.parts.clear();
        }
        let size: usize = d.chunks.iter().map(Bytes::len).sum();
        if self.parts.iter().all(|(g, _)| *g != f) && self.octets() + size <= KEPT_MAX {
            self.parts.push((f, Arc::new(d)));
        }
    }
}

/// Collects the fabric part's chunks of a scrape as they are sent, to
/// keep them once the part is whole (unless it grows past [`KEPT_MAX`]).
pub(super) struct Keeper {
    kept: Arc<Mutex<Kept>>,
    published: Weak<mibs::Published>,
    families: Families,
    chunks: Vec<Bytes>,
    octets: usize,
}

impl Keeper {
    pub fn new(
        kept: Arc<Mutex<Kept>>,
        published: &Arc<mibs::Published>,
        families: Families,
    ) -> Keeper {
        Keeper {
            kept,
            published: Arc::downgrade(published),
            families,
            chunks: Vec::new(),
            octets: 0,
        }
    }

    /// `chunk` as sent, kept too while the part stays within the bound
    /// (false once past it: keep no more).
    pub fn add(&mut self, chunk: Vec<u8>) -> (Bytes, bool) {
        let mut chunk = chunk;
        chunk.shrink_to_fit();
        let b = Bytes::from(chunk);
        self.octets += b.len();
        if self.octets > KEPT_MAX {
            return (b, false);
        }
        self.chunks.push(b.clone());
        (b, true)
    }

    /// The part is whole: keep it.
    pub fn keep(self, crc: &crc32fast::Hasher) {
        let d = Deflated {
            chunks: self.chunks,
            crc: crc.clone(),
        };
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .put(&self.published, self.families, d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    /// Two parts, the first ended by a sync flush, make one gzip member
    /// that decodes to their text.
    #[test]
    fn two_parts_decode_as_one_member() {
        let a = "infiniband_switch_port_state_id{guid=\"0x1\"} 4\n".repeat(5000);
        let b = "ibsnmpd_uptime_seconds 12.5\n";
        let mut gz = HEADER.to_vec();
        let mut p = Part::new();
        gz.extend(p.push(a.as_bytes()).unwrap());
        let (tail, mut crc) = p.end(false).unwrap();
        gz.extend(tail);
        let mut q = Part::new();
        gz.extend(q.push(b.as_bytes()).unwrap());
        let (tail, crc_b) = q.end(true).unwrap();
        gz.extend(tail);
        crc.combine(&crc_b);
        gz.extend(trailer(crc));
        let mut text = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, a + b);
    }
}
