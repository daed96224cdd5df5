//! The deflate encoder's bit writer: codes appended least significant
//! bit first, each write one eight-octet store into room made beforehand.

/// Bits written least significant first into a buffer kept longer than
/// what is written: each write stores the whole accumulator (eight octets)
/// and moves on by the octets it filled, with no branch and no capacity
/// check per code ([`room`](Self::room) makes the space first, for a
/// bound of what will be written).
#[derive(Default)]
pub(super) struct Bits {
    /// Bits not yet whole octets (fewer than 8 between writes).
    pub(super) acc: u64,
    pub(super) n: u32,
    /// Octets `..pos` are written; the rest is room.
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
}

/// The most bits one [`Bits::put`] takes: with at most 7 waiting, the
/// accumulator then holds at most 63.
pub(super) const PUT_MAX: u32 = 56;

impl Bits {
    /// Makes room for `octets` more.
    pub(super) fn room(&mut self, octets: usize) {
        // The last write stores eight octets whatever it filled.
        let need = self.pos + octets + 8;
        if need > self.buf.len() {
            self.buf.resize(need.max(2 * self.buf.len()), 0);
        }
    }

    /// Appends the low `n` (at most [`PUT_MAX`]) bits of `v` (no others
    /// set), within the room made.
    #[inline(always)]
    pub(super) fn put(&mut self, v: u64, n: u32) {
        put(
            &mut self.buf,
            &mut self.acc,
            &mut self.n,
            &mut self.pos,
            v,
            n,
        );
    }

    /// Zero bits to the next octet boundary.
    pub(super) fn align(&mut self) {
        self.room(8);
        self.put(0, (8 - self.n % 8) % 8);
    }

    pub(super) fn len(&self) -> u64 {
        self.pos as u64 * 8 + u64::from(self.n)
    }

    /// Appends another writer's bits.
    pub(super) fn append(&mut self, other: &Bits) {
        self.room(other.pos + 8);
        for &o in &other.buf[..other.pos] {
            self.put(u64::from(o), 8);
        }
        self.put(other.acc, other.n);
    }

    /// Appends whole octets (on an octet boundary).
    pub(super) fn octets(&mut self, o: &[u8]) {
        debug_assert_eq!(self.n, 0);
        self.room(o.len());
        self.buf[self.pos..self.pos + o.len()].copy_from_slice(o);
        self.pos += o.len();
    }

    /// The whole octets written, moved to the end of `out`; the bits of a
    /// part octet stay.
    pub(super) fn take_into(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.buf[..self.pos]);
        self.pos = 0;
    }

    /// All written, room dropped.
    pub(super) fn into_octets(mut self) -> Vec<u8> {
        self.buf.truncate(self.pos);
        self.buf
    }
}

/// Appends the low `len` (at most [`PUT_MAX`]) bits of `v` (no others
/// set) to the `n` bits of `acc` and stores the whole octets at `pos` of
/// `buf`, within the room made: one eight-octet store whatever is whole.
#[inline(always)]
fn put(buf: &mut [u8], acc: &mut u64, n: &mut u32, pos: &mut usize, v: u64, len: u32) {
    debug_assert!(len <= PUT_MAX && v >> len == 0);
    let a = *acc | v << *n;
    let bits = *n + len;
    match buf.get_mut(*pos..).and_then(|b| b.first_chunk_mut::<8>()) {
        Some(at) => *at = a.to_le_bytes(),
        None => debug_assert!(false, "a write past the room made"),
    }
    let whole = bits & !7;
    *pos += (whole / 8) as usize;
    *acc = a >> whole;
    *n = bits & 7;
}

/// Where codes are written.
pub(super) trait Put {
    fn put(&mut self, v: u64, n: u32);
}

impl Put for &mut Bits {
    #[inline(always)]
    fn put(&mut self, v: u64, n: u32) {
        Bits::put(self, v, n);
    }
}

/// A run's bit writer: [`Bits`]'s state in locals.
pub(super) struct Run<'a> {
    pub(super) acc: u64,
    pub(super) n: u32,
    pub(super) pos: usize,
    pub(super) buf: &'a mut [u8],
}

impl Put for Run<'_> {
    #[inline(always)]
    fn put(&mut self, v: u64, n: u32) {
        put(self.buf, &mut self.acc, &mut self.n, &mut self.pos, v, n);
    }
}
