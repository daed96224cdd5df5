//! gzip's CRC-32 of a text some of whose pieces are known beforehand only
//! by their length and CRC: a port's labels are the same octets in every
//! family, so a gzip scrape need not copy them into the text to have them
//! counted (at 48,000 hosts that copy alone read 1.4 GB a scrape).
//!
//! The CRC register is linear over GF(2): after a piece `p` it is the
//! register before, multiplied by x^(8·len p), plus the piece's CRC from a
//! zero register. The multiplication is four table lookups ([`Shift`]).

/// The reflected CRC-32 polynomial (ISO 3309, as gzip uses).
const POLY: u32 = 0xEDB8_8320;

/// The register after one octet, by the low octet of register and input
/// (`TABLES[0]`); `TABLES[k]`: after that octet and k zero octets, so that
/// eight octets take eight independent lookups ("slicing by 8").
const TABLES: [[u32; 256]; 8] = {
    let mut t = [[0; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut r = i as u32;
        let mut k = 0;
        while k < 8 {
            r = if r & 1 != 0 { r >> 1 ^ POLY } else { r >> 1 };
            k += 1;
        }
        t[0][i] = r;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let r = t[k - 1][i];
            t[k][i] = r >> 8 ^ t[0][(r & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
};
const TABLE: [u32; 256] = TABLES[0];

/// The register after `b` from register `r` (no inversions), for the few
/// octets of a value: eight at a time, then one at a time.
#[inline(always)]
pub(super) fn raw(mut r: u32, b: &[u8]) -> u32 {
    let mut eights = b.chunks_exact(8);
    for e in &mut eights {
        let Ok(e) = <[u8; 8]>::try_from(e) else {
            break;
        };
        let [a0, a1, a2, a3, b0, b1, b2, b3] = e;
        let [r0, r1, r2, r3] = r.to_le_bytes();
        r = TABLES[7][usize::from(a0 ^ r0)]
            ^ TABLES[6][usize::from(a1 ^ r1)]
            ^ TABLES[5][usize::from(a2 ^ r2)]
            ^ TABLES[4][usize::from(a3 ^ r3)]
            ^ TABLES[3][usize::from(b0)]
            ^ TABLES[2][usize::from(b1)]
            ^ TABLES[1][usize::from(b2)]
            ^ TABLES[0][usize::from(b3)];
    }
    for &o in eights.remainder() {
        r = TABLE[((r ^ u32::from(o)) & 0xff) as usize] ^ r >> 8;
    }
    r
}

/// A piece of text known by its length and its CRC from a zero register.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Known {
    pub len: u32,
    pub crc: u32,
}

impl Known {
    pub fn of(b: &[u8]) -> Known {
        // crc32fast inverts the register before and after: from an
        // initial CRC of all ones, the register starts at zero.
        let mut h = crc32fast::Hasher::new_with_initial(!0);
        h.update(b);
        Known {
            len: b.len() as u32,
            crc: !h.finalize(),
        }
    }
}

/// Multiplication of a register by x^(8n), `n` a piece's length: the
/// register after n zero octets, by each octet of the register.
struct Shift([[u32; 256]; 4]);

impl Shift {
    #[cold]
    #[inline(never)]
    fn new(n: u32) -> Shift {
        // Each of the 32 bits alone, moved through n zero octets; a
        // table entry is the sum of its bits' images.
        let mut basis = [0u32; 32];
        for (j, b) in basis.iter_mut().enumerate() {
            let mut r = 1u32 << j;
            for _ in 0..n {
                r = TABLE[(r & 0xff) as usize] ^ r >> 8;
            }
            *b = r;
        }
        let mut t = [[0u32; 256]; 4];
        for (k, row) in t.iter_mut().enumerate() {
            for (v, e) in row.iter_mut().enumerate() {
                *e = (0..8)
                    .filter(|i| v >> i & 1 != 0)
                    .fold(0, |acc, i| acc ^ basis[8 * k + i]);
            }
        }
        Shift(t)
    }

    #[inline(always)]
    fn apply(&self, r: u32) -> u32 {
        let [a, b, c, d] = r.to_le_bytes();
        self.0[0][usize::from(a)]
            ^ self.0[1][usize::from(b)]
            ^ self.0[2][usize::from(c)]
            ^ self.0[3][usize::from(d)]
    }
}

/// A CRC over text given in pieces, some of them [`Known`].
pub(super) struct Crc {
    /// Octets given as they are (what crc32fast does fastest), and the
    /// register and length past the known pieces since (None: none).
    hasher: crc32fast::Hasher,
    raw: Option<(u32, u64)>,
    /// The shifts of the lengths seen, by length (a scrape's names and
    /// labels have a few dozen lengths, each a few hundred octets at most).
    shifts: Vec<Option<Box<Shift>>>,
    /// The last line's name and labels' length, the name's CRC moved past
    /// labels that long, and their joint length.
    joint: ((Known, u32), u32, u32),
}

impl Default for Crc {
    fn default() -> Crc {
        Crc {
            hasher: crc32fast::Hasher::new(),
            raw: None,
            shifts: Vec::new(),
            // No name is u32::MAX octets long.
            joint: (
                (
                    Known {
                        len: u32::MAX,
                        crc: 0,
                    },
                    0,
                ),
                0,
                0,
            ),
        }
    }
}

impl Crc {
    pub fn update(&mut self, b: &[u8]) {
        if b.is_empty() {
            return;
        }
        if let Some((r, n)) = self.raw.take() {
            self.hasher = crc32fast::Hasher::new_with_initial_len(!r, n);
        }
        self.hasher.update(b);
    }

    /// Counts a sample line: its name and labels known, then its value
    /// (and newline) as it is. The name's CRC moved past the labels is
    /// the same for the lines of a family whose labels are as long, so
    /// kept from the line before ([`Crc::joint`]).
    #[inline(always)]
    pub fn line(&mut self, name: Known, labels: Known, value: &[u8]) {
        let (r, n) = match self.raw {
            Some(x) => x,
            None => (!self.hasher.clone().finalize(), self.hasher.total_len()),
        };
        if self.joint.0 != (name, labels.len) {
            let moved = self.shift(labels.len).apply(name.crc);
            self.joint = ((name, labels.len), moved, name.len + labels.len);
        }
        let (_, moved, both) = self.joint;
        // The register after the line is the register before moved past
        // all of it, plus what name, labels and value give from a zero
        // register: that part does not wait for the line before, so one
        // shift a line is all that is chained.
        let own = raw(moved ^ labels.crc, value);
        let len = both + value.len() as u32;
        let r = self.shift(len).apply(r) ^ own;
        self.raw = Some((r, n + u64::from(len)));
    }

    #[inline(always)]
    fn shift(&mut self, len: u32) -> &Shift {
        let i = len as usize;
        if self.shifts.len() <= i {
            self.shifts.resize_with(i + 1, || None);
        }
        self.shifts[i].get_or_insert_with(|| Box::new(Shift::new(len)))
    }

    /// The CRC so far, as crc32fast's (its length and value).
    pub fn hasher(&self) -> crc32fast::Hasher {
        match self.raw {
            Some((r, n)) => crc32fast::Hasher::new_with_initial_len(!r, n),
            None => self.hasher.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text of every octet value and of lengths 0 to some hundreds, given
    /// in pieces as they are and as known pieces, has crc32fast's CRC.
    #[test]
    fn known_pieces_count_as_their_octets() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut whole = Vec::new();
        let mut crc = Crc::default();
        for i in 0..2000 {
            let len = (next() % 300) as usize;
            let piece: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let cut = (next() as usize % (len + 1)).min(len);
            let value: Vec<u8> = (0..next() % 24).map(|_| next() as u8).collect();
            whole.extend_from_slice(&piece);
            match i % 3 {
                0 => crc.update(&piece),
                _ => {
                    whole.extend_from_slice(&value);
                    let (name, labels) = piece.split_at(cut);
                    crc.line(Known::of(name), Known::of(labels), &value);
                }
            }
            let mut want = crc32fast::Hasher::new();
            want.update(&whole);
            let got = crc.hasher();
            assert_eq!(got.total_len(), want.total_len());
            assert_eq!(got.finalize(), want.finalize(), "after piece {i}");
        }
        assert_eq!(raw(0, b""), 0);
        // Eight at a time as one at a time.
        for len in 0..40 {
            let b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let r = next() as u32;
            let one = b.iter().fold(r, |r, &o| {
                TABLE[((r ^ u32::from(o)) & 0xff) as usize] ^ r >> 8
            });
            assert_eq!(raw(r, &b), one);
        }
        assert_eq!(Known::of(b""), Known { len: 0, crc: 0 });
    }
}
