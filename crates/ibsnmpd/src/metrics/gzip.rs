//! gzip (RFC 1952) for /metrics, with deflate from flate2 (its zlib-rs
//! backend) and CRC-32 from crc32fast. A body is one member of two deflate
//! streams: the fabric part, the same for every scrape of a published
//! snapshot and so compressed once and shared ([`Part`]), then the agent's
//! own figures, compressed per scrape. The fabric stream ends with a sync
//! flush (an empty stored block, not the final one), so the agent's stream
//! follows on an octet boundary and a decoder reads one stream; the
//! trailer's CRC-32 is the two parts' CRCs combined.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use flate2::{Compress, Compression, FlushCompress};
use hyper::body::Bytes;
use tokio::sync::watch;

use super::Selection;

/// The member header: deflate, no name, no time, OS unknown.
pub(super) const HEADER: &[u8] = &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// zlib's fastest level. On the 48,000-host sim's 1.77 GB text, levels 1,
/// 2 and 6 took 2.4, 2.9 and 11 s of CPU for 9.8x, 13.3x and 15.2x
/// (docs/design/metrics.md): the part is compressed once per snapshot,
/// and CPU is what a scrape takes from SNMP.
const LEVEL: u32 = 1;

/// Octets of gzipped fabric parts kept for one published snapshot, all
/// selections together. A part that grows past it is not kept (its
/// scrapes still get all of it).
const KEPT_MAX: usize = 256 << 20;

/// A deflate stream being made, and the CRC of its text.
pub(super) struct Deflate {
    z: Compress,
    crc: crc32fast::Hasher,
}

impl Deflate {
    pub fn new() -> Deflate {
        Deflate {
            // Raw deflate: the gzip framing is the body's.
            z: Compress::new(Compression::new(LEVEL), false),
            crc: crc32fast::Hasher::new(),
        }
    }

    /// Compresses `text` onto the end of `out`.
    pub fn push(&mut self, text: &[u8], out: &mut Vec<u8>) {
        self.crc.update(text);
        self.run(text, out, FlushCompress::None);
    }

    /// Ends the stream onto `out` (`last`), or leaves it open for the next
    /// part with a sync flush; the CRC of its text.
    pub fn end(mut self, last: bool, out: &mut Vec<u8>) -> crc32fast::Hasher {
        let flush = if last {
            FlushCompress::Finish
        } else {
            FlushCompress::Sync
        };
        self.run(&[], out, flush);
        self.crc
    }

    fn run(&mut self, mut text: &[u8], out: &mut Vec<u8>, flush: FlushCompress) {
        loop {
            if out.capacity() - out.len() < 1 << 14 {
                out.reserve((text.len() / 4).max(1 << 16));
            }
            let before = self.z.total_in();
            // Errors are misuse (a stream used after its end), not input.
            if self.z.compress_vec(text, out, flush).is_err() {
                return;
            }
            let used = usize::try_from(self.z.total_in() - before).unwrap_or(text.len());
            text = text.get(used..).unwrap_or_default();
            // Done once the text is in and the compressor left room
            // unused: it has nothing more to write for this flush.
            if text.is_empty() && out.len() < out.capacity() {
                return;
            }
        }
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

/// The gzipped fabric part of one snapshot and selection so far: deflate
/// chunks, and once all are made (ending with a sync flush) the CRC of
/// their text.
#[derive(Default)]
pub(super) struct Made {
    pub chunks: Vec<Bytes>,
    pub crc: Option<crc32fast::Hasher>,
    octets: usize,
}

/// A fabric part being made or made: one maker sends, every scrape of it
/// reads as it grows.
pub(super) type Part = watch::Receiver<Made>;

/// The gzipped fabric parts of the published snapshot, by selection,
/// within [`KEPT_MAX`]: a scrape of the same snapshot and selection (a
/// second Prometheus, a retry, one that comes while the first is being
/// compressed) reads that part instead of rendering and compressing the
/// same text again. A newer snapshot drops them.
#[derive(Default)]
pub(super) struct Kept {
    /// The published snapshot they belong to (a weak reference keeps the
    /// address from being reused, not the snapshot alive).
    of: Weak<crate::models::source_thread::Published>,
    parts: Vec<(Selection, Part)>,
}

impl Kept {
    /// Makes these the parts of `published` if it is newer: the older
    /// parts, taken out. Err: `published` is older than the snapshot kept
    /// for (a scrape that took its snapshot before the last sweep
    /// published neither finds nor keeps anything).
    fn renew(
        &mut self,
        published: &Arc<crate::models::source_thread::Published>,
    ) -> Result<Vec<(Selection, Part)>, ()> {
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

    fn octets(&self) -> usize {
        self.parts.iter().map(|(_, p)| p.borrow().octets).sum()
    }
}

/// The parts kept for snapshots older than `published`, taken out when it
/// is published: dropped there (a 48,000-host fabric's are some hundred
/// MB in hundreds of buffers), not by the first scrape of the new snapshot.
pub(super) fn stale(
    kept: &Mutex<Kept>,
    published: &Arc<crate::models::source_thread::Published>,
) -> Vec<(Selection, Part)> {
    let mut k = kept.lock().unwrap_or_else(PoisonError::into_inner);
    k.renew(published).unwrap_or_default()
}

/// What a gzip scrape sends for its fabric part.
pub(super) enum Found {
    /// A part made or being made: read it.
    Kept(Part),
    /// None yet: make it with this sender (kept for the next scrapes when
    /// there is room), and read it.
    Make(watch::Sender<Made>, Part),
}

/// The part of `published` and `selection` to send.
pub(super) fn find(
    kept: &Mutex<Kept>,
    published: &Arc<crate::models::source_thread::Published>,
    selection: Selection,
) -> Found {
    let (tx, rx) = watch::channel(Made::default());
    let mut k = kept.lock().unwrap_or_else(PoisonError::into_inner);
    if k.renew(published).is_err() {
        return Found::Make(tx, rx);
    }
    if let Some((_, p)) = k.parts.iter().find(|(s, _)| *s == selection) {
        return Found::Kept(p.clone());
    }
    if k.octets() < KEPT_MAX {
        k.parts.push((selection, rx.clone()));
    }
    Found::Make(tx, rx)
}

/// Adds `chunk` to `part` (shrunk: a part is kept for the snapshot's
/// life); past [`KEPT_MAX`] the part is kept no more (scrapes that read it
/// still get all of it).
pub(super) fn grow(kept: &Mutex<Kept>, part: &watch::Sender<Made>, mut chunk: Vec<u8>) {
    chunk.shrink_to_fit();
    let mut octets = 0;
    part.send_modify(|m| {
        m.octets += chunk.len();
        m.chunks.push(Bytes::from(chunk));
        octets = m.octets;
    });
    if octets > KEPT_MAX {
        let this = part.subscribe();
        let mut k = kept.lock().unwrap_or_else(PoisonError::into_inner);
        k.parts.retain(|(_, p)| !p.same_channel(&this));
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
        let a = "infiniband_switch_port_state_id{guid=\"0x1\"} 4\n".repeat(50_000);
        let b = "ibsnmpd_uptime_seconds 12.5\n";
        let mut gz = HEADER.to_vec();
        let mut p = Deflate::new();
        for piece in a.as_bytes().chunks(7000) {
            p.push(piece, &mut gz);
        }
        let mut crc = p.end(false, &mut gz);
        let mut q = Deflate::new();
        q.push(b.as_bytes(), &mut gz);
        crc.combine(&q.end(true, &mut gz));
        gz.extend(trailer(crc));
        let mut text = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, a + b);
    }

    fn published(sweep: u64) -> Arc<crate::models::source_thread::Published> {
        let snap = crate::models::source_thread::empty_snapshot("sim", sweep);
        Arc::new(crate::models::source_thread::Published::new(Arc::new(snap)))
    }

    fn kept(
        k: &Mutex<Kept>,
        p: &Arc<crate::models::source_thread::Published>,
        s: Selection,
    ) -> bool {
        matches!(find(k, p, s), Found::Kept(_))
    }

    /// The first scrape makes a part; the next of the same snapshot and
    /// selection reads it, even before it is whole; a newer snapshot drops
    /// it, and a scrape of an older one neither finds nor keeps anything.
    #[test]
    fn parts_are_kept_per_snapshot_and_selection() {
        let (p1, p2) = (published(1), published(2));
        let all = Selection::default();
        let k = Mutex::new(Kept::default());
        let Found::Make(tx, _) = find(&k, &p1, all) else {
            panic!("the first scrape makes it");
        };
        grow(&k, &tx, b"deflated".to_vec());
        let Found::Kept(part) = find(&k, &p1, all) else {
            panic!("kept");
        };
        assert_eq!(part.borrow().chunks, [Bytes::from_static(b"deflated")]);
        let vl = Selection {
            families: super::super::Families::of([super::super::Group::Vl]),
            ..all
        };
        assert!(!kept(&k, &p1, vl));
        assert!(kept(&k, &p1, vl));
        assert!(!kept(&k, &p2, all));
        assert!(!kept(&k, &p1, all));
        assert!(kept(&k, &p2, all));
        assert_eq!(stale(&k, &p2).len(), 0);
    }

    /// A newer snapshot's publication takes the older parts out (to drop
    /// them there); an older one's takes nothing.
    #[test]
    fn stale_parts_go_at_publication() {
        let (p1, p2) = (published(1), published(2));
        let all = Selection::default();
        let k = Mutex::new(Kept::default());
        let _ = find(&k, &p1, all);
        assert!(stale(&k, &p1).is_empty());
        assert_eq!(stale(&k, &p2).len(), 1);
        assert!(stale(&k, &p1).is_empty());
        assert!(!kept(&k, &p1, all));
        assert!(!kept(&k, &p2, all));
        assert!(kept(&k, &p2, all));
    }

    /// A part past the bound is kept no more.
    #[test]
    fn a_part_past_the_bound_is_not_kept() {
        let p = published(1);
        let all = Selection::default();
        let k = Mutex::new(Kept::default());
        let Found::Make(tx, rx) = find(&k, &p, all) else {
            panic!("made");
        };
        grow(&k, &tx, vec![0; KEPT_MAX + 1]);
        assert_eq!(rx.borrow().chunks.len(), 1);
        assert!(!kept(&k, &p, all));
    }
}
