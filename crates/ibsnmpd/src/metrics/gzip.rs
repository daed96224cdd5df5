//! gzip (RFC 1952) for /metrics, as two deflate streams in one member: the
//! fabric part, the same for every scrape of a published snapshot and so
//! kept for the scrapes after the first ([`Kept`]), then the agent's own
//! figures, compressed per scrape. The fabric stream ends with a sync
//! flush (an empty stored block, not the final one), so the agent's stream
//! follows on an octet boundary and a decoder reads one stream; the
//! trailer's CRC-32 is the two parts' CRCs combined.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use hyper::body::Bytes;

use super::crc::Crc;
use super::deflate::{Encoder, Fused, Source};
use super::Families;

/// The member header: deflate, no name, no time, OS unknown.
pub(super) const HEADER: &[u8] = &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Octets of gzipped fabric parts kept for one published snapshot, all
/// family sets together: the default families of a 48,000-host fabric
/// take about 100 MB. A larger part is sent and not kept; the one scrape
/// collecting a part holds at most as much again.
const KEPT_MAX: usize = 256 << 20;

/// One part of the text, being compressed.
pub(super) struct Part {
    z: Encoder,
    crc: Crc,
}

impl Part {
    pub fn new() -> Part {
        Part {
            z: Encoder::new(),
            crc: Crc::default(),
        }
    }

    /// Compresses `text`: the deflate octets made so far (as
    /// [`push_fused`](Self::push_fused) adds them to a buffer).
    pub fn push(&mut self, text: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        self.z
            .push_fused(Source::text(text), &[], &mut out, &mut self.crc);
        out
    }

    /// As [`push`](Self::push), with the sample lines the encoder may code
    /// from their labels' tokens and `{labels} ` ([`Encoder::push_fused`]),
    /// some of them left out of the text (counted in the CRC from theirs).
    pub fn push_fused(&mut self, src: Source, fused: &[Fused], out: &mut Vec<u8>) {
        self.z.push_fused(src, fused, out, &mut self.crc);
    }

    #[cfg(test)]
    pub fn encoder(&self) -> &Encoder {
        &self.z
    }

    /// Ends the part: its last octets and the CRC of its text. `last`
    /// ends the deflate stream; otherwise a sync flush leaves it open for
    /// the next part.
    pub fn end(self, last: bool) -> (Vec<u8>, crc32fast::Hasher) {
        (self.z.end(last), self.crc.hasher())
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
/// compressing the same text again. A newer snapshot drops them.
#[derive(Default)]
pub(super) struct Kept {
    /// The published snapshot they belong to (a weak reference keeps the
    /// address from being reused, not the snapshot alive).
    of: Weak<crate::fabric::Published>,
    parts: Vec<(Families, Arc<Deflated>)>,
    /// Whether a scrape is collecting a part now: one at a time, so that
    /// what scrapes hold to keep stays within [`KEPT_MAX`] too.
    collecting: bool,
}

impl Kept {
    /// Makes these the parts of `published` if it is newer: the older
    /// parts, taken out. Err: `published` is older than the snapshot kept
    /// for (a scrape that took its snapshot before the last sweep
    /// published neither finds nor keeps anything).
    fn renew(
        &mut self,
        published: &Arc<crate::fabric::Published>,
    ) -> Result<Vec<(Families, Arc<Deflated>)>, ()> {
        if std::ptr::eq(self.of.as_ptr(), Arc::as_ptr(published)) {
            return Ok(Vec::new());
        }
        if let Some(now) = self.of.upgrade() {
            if now.snapshot.sweep.number > published.snapshot.sweep.number {
                return Err(());
            }
        }
        self.of = Arc::downgrade(published);
        Ok(std::mem::take(&mut self.parts))
    }
}

/// The parts kept for snapshots older than `published`, taken out when it
/// is published: dropped there (a 48,000-host fabric's are some 140 MB in
/// hundreds of buffers), not by the first scrape of the new snapshot.
pub(super) fn stale(
    kept: &Mutex<Kept>,
    published: &Arc<crate::fabric::Published>,
) -> Vec<(Families, Arc<Deflated>)> {
    let mut k = kept.lock().unwrap_or_else(PoisonError::into_inner);
    k.renew(published).unwrap_or_default()
}

/// What a gzip scrape sends for its fabric part: the kept gzip of it, or
/// it renders and compresses the part, collecting it to keep when no
/// other scrape is collecting one (a [`Keeper`]).
pub(super) fn lookup(
    kept: &Arc<Mutex<Kept>>,
    published: &Arc<crate::fabric::Published>,
    f: Families,
) -> Result<Arc<Deflated>, Option<Keeper>> {
    let mut k = kept.lock().unwrap_or_else(PoisonError::into_inner);
    if k.renew(published).is_err() {
        return Err(None);
    }
    if let Some((_, d)) = k.parts.iter().find(|(g, _)| *g == f) {
        return Ok(Arc::clone(d));
    }
    if k.collecting {
        return Err(None);
    }
    k.collecting = true;
    Err(Some(Keeper {
        kept: Arc::clone(kept),
        published: Arc::downgrade(published),
        families: f,
        chunks: Vec::new(),
        octets: 0,
    }))
}

/// Collects the fabric part's chunks of a scrape as they are sent, to
/// keep them once the part is whole (unless it grows past [`KEPT_MAX`]).
pub(super) struct Keeper {
    kept: Arc<Mutex<Kept>>,
    published: Weak<crate::fabric::Published>,
    families: Families,
    chunks: Vec<Bytes>,
    octets: usize,
}

impl Keeper {
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

    /// The part is whole: keep it, if its snapshot is still the one kept
    /// for and the parts stay within the bound.
    pub fn keep(mut self, crc: &crc32fast::Hasher) {
        let chunks = std::mem::take(&mut self.chunks);
        let mut k = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let kept: usize = k
            .parts
            .iter()
            .flat_map(|(_, d)| &d.chunks)
            .map(Bytes::len)
            .sum();
        if Weak::ptr_eq(&k.of, &self.published)
            && k.parts.iter().all(|(g, _)| *g != self.families)
            && kept + self.octets <= KEPT_MAX
        {
            let d = Deflated {
                chunks,
                crc: crc.clone(),
            };
            k.parts.push((self.families, Arc::new(d)));
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .collecting = false;
    }
}

#[cfg(test)]
mod fused_tests;

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
        gz.extend(p.push(a.as_bytes()));
        let (tail, mut crc) = p.end(false);
        gz.extend(tail);
        let mut q = Part::new();
        gz.extend(q.push(b.as_bytes()));
        let (tail, crc_b) = q.end(true);
        gz.extend(tail);
        crc.combine(&crc_b);
        gz.extend(trailer(crc));
        let mut text = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, a + b);
    }

    fn published(sweep: u64) -> Arc<crate::fabric::Published> {
        let snap = crate::fabric::empty_snapshot("sim", sweep);
        Arc::new(crate::fabric::Published::new(Arc::new(snap)))
    }

    /// The default families' part of `p` kept, and the chunk sent; while
    /// it is collected, no other scrape collects one.
    fn one_kept(p: &Arc<crate::fabric::Published>) -> (Arc<Mutex<Kept>>, Bytes) {
        let kept = Arc::new(Mutex::new(Kept::default()));
        let all = Families::DEFAULT;
        let Err(Some(mut k)) = lookup(&kept, p, all) else {
            panic!("the first scrape collects");
        };
        assert!(matches!(lookup(&kept, p, all), Err(None)));
        let (sent, keeping) = k.add(b"deflated".to_vec());
        assert!(keeping);
        k.keep(&crc32fast::Hasher::new());
        (kept, sent)
    }

    /// One scrape collects a part at a time; the part kept serves the
    /// same snapshot and family set only; a newer snapshot drops it, and
    /// a scrape of an older one neither finds nor keeps anything.
    #[test]
    fn parts_are_kept_per_snapshot_and_family_set() {
        let (p1, p2) = (published(1), published(2));
        let all = Families::DEFAULT;
        let (kept, sent) = one_kept(&p1);
        let Ok(d) = lookup(&kept, &p1, all) else {
            panic!("kept");
        };
        assert_eq!(d.chunks, [sent]);
        let vl = Families::of([super::super::Group::Vl]);
        assert!(matches!(lookup(&kept, &p1, vl), Err(Some(_))));
        assert!(matches!(lookup(&kept, &p2, all), Err(Some(_))));
        assert!(matches!(lookup(&kept, &p1, all), Err(None)));
        assert!(matches!(lookup(&kept, &p2, all), Err(Some(_))));
    }

    /// A newer snapshot's publication takes the older parts out (to drop
    /// them there); an older one's takes nothing.
    #[test]
    fn stale_parts_go_at_publication() {
        let (p1, p2) = (published(1), published(2));
        let all = Families::DEFAULT;
        let (kept, _) = one_kept(&p1);
        assert!(stale(&kept, &p1).is_empty());
        assert_eq!(stale(&kept, &p2).len(), 1);
        assert!(stale(&kept, &p1).is_empty());
        assert!(matches!(lookup(&kept, &p1, all), Err(None)));
        assert!(matches!(lookup(&kept, &p2, all), Err(Some(_))));
    }
}
