//! Big-endian bit fields as the IBA attribute tables lay them out: bit 0 is the most
//! significant bit of octet 0, a field is (bit offset, bit width) from the start of the
//! attribute. Readers return 0 and writers do nothing outside the buffer, so a codec
//! can never panic; codecs check the length once up front and report short buffers.

use crate::types::{Gid, Guid, Lid, PKey};

/// Reads an unsigned field of `width` <= 64 bits at bit offset `off`.
#[inline]
pub fn get(buf: &[u8], off: usize, width: usize) -> u64 {
    if width == 0 || width > 64 {
        return 0;
    }
    if (off | width) & 7 == 0 {
        let start = off / 8;
        return match buf.get(start..start + width / 8) {
            Some(b) => b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)),
            None => 0,
        };
    }
    // Unaligned: gather the covering octets (at most 9) into a u128, then shift.
    let u = Unaligned::new(off, width);
    let Some(b) = buf.get(u.octets.clone()) else {
        return 0;
    };
    let acc = b.iter().fold(0u128, |v, &x| (v << 8) | u128::from(x));
    ((acc >> u.shift) & u.mask) as u64
}

/// Where an unaligned field lies: the octets covering it, and its shift and
/// mask within them read as one big-endian number.
struct Unaligned {
    octets: std::ops::RangeInclusive<usize>,
    shift: usize,
    mask: u128,
}

impl Unaligned {
    /// `width` is 1..=64 (the callers check).
    #[inline]
    fn new(off: usize, width: usize) -> Self {
        let (first, last) = (off / 8, (off + width - 1) / 8);
        let total = (last - first + 1) * 8;
        Unaligned {
            octets: first..=last,
            shift: total - (off % 8) - width,
            mask: if width == 64 {
                u128::from(u64::MAX)
            } else {
                (1u128 << width) - 1
            },
        }
    }
}

/// Writes the low `width` bits of `value` at bit offset `off`, keeping other bits.
#[inline]
pub fn set(buf: &mut [u8], off: usize, width: usize, value: u64) {
    if width == 0 || width > 64 {
        return;
    }
    if (off | width) & 7 == 0 {
        let start = off / 8;
        let n = width / 8;
        if let Some(b) = buf.get_mut(start..start + n) {
            for (i, x) in b.iter_mut().enumerate() {
                *x = (value >> (8 * (n - 1 - i))) as u8;
            }
        }
        return;
    }
    let u = Unaligned::new(off, width);
    let Some(b) = buf.get_mut(u.octets.clone()) else {
        return;
    };
    let mut acc = b.iter().fold(0u128, |v, &x| (v << 8) | u128::from(x));
    acc = (acc & !(u.mask << u.shift)) | ((u128::from(value) & u.mask) << u.shift);
    let n = b.len();
    for (i, x) in b.iter_mut().enumerate() {
        *x = (acc >> (8 * (n - 1 - i))) as u8;
    }
}

/// Copies `N` octets starting at bit offset `off` (must be octet aligned).
#[inline]
pub fn get_bytes<const N: usize>(buf: &[u8], off: usize) -> [u8; N] {
    let mut out = [0u8; N];
    let start = off / 8;
    if let Some(b) = buf.get(start..start + N) {
        out.copy_from_slice(b);
    }
    out
}

#[inline]
pub fn set_bytes(buf: &mut [u8], off: usize, src: &[u8]) {
    let start = off / 8;
    if let Some(b) = buf.get_mut(start..start + src.len()) {
        b.copy_from_slice(src);
    }
}

/// A value that occupies a field of an attribute. `width` is the field width in bits
/// as the IBA table gives it (for arrays, the whole array).
pub trait Field: Sized {
    fn read(buf: &[u8], off: usize, width: usize) -> Self;
    fn write(&self, buf: &mut [u8], off: usize, width: usize);
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            #[inline]
            fn read(buf: &[u8], off: usize, width: usize) -> Self {
                // `width` never exceeds the type's size in the tables, so this is exact.
                get(buf, off, width) as $t
            }
            #[inline]
            fn write(&self, buf: &mut [u8], off: usize, width: usize) {
                set(buf, off, width, u64::from(*self));
            }
        }
    )*};
}
int_field!(u8, u16, u32, u64);

impl Field for bool {
    #[inline]
    fn read(buf: &[u8], off: usize, width: usize) -> Self {
        get(buf, off, width) != 0
    }
    #[inline]
    fn write(&self, buf: &mut [u8], off: usize, width: usize) {
        set(buf, off, width, u64::from(*self));
    }
}

/// The identifier newtypes are read and written as the integer they wrap.
macro_rules! newtype_field {
    ($($t:ident($inner:ty)),*) => {$(
        impl Field for $t {
            #[inline]
            fn read(buf: &[u8], off: usize, width: usize) -> Self {
                $t(<$inner>::read(buf, off, width))
            }
            #[inline]
            fn write(&self, buf: &mut [u8], off: usize, width: usize) {
                self.0.write(buf, off, width);
            }
        }
    )*};
}
newtype_field!(Guid(u64), Lid(u16), PKey(u16));

impl Field for Gid {
    #[inline]
    fn read(buf: &[u8], off: usize, _width: usize) -> Self {
        Gid(get_bytes::<16>(buf, off))
    }
    #[inline]
    fn write(&self, buf: &mut [u8], off: usize, _width: usize) {
        set_bytes(buf, off, &self.0);
    }
}

/// Text fields (NodeDescription, ServiceName): octets up to the first NUL, UTF-8
/// decoded lossily; written truncated to the field and NUL padded.
impl Field for String {
    fn read(buf: &[u8], off: usize, width: usize) -> Self {
        let start = off / 8;
        let b = buf.get(start..start + width / 8).unwrap_or(&[]);
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(b.get(..end).unwrap_or(&[])).into_owned()
    }
    fn write(&self, buf: &mut [u8], off: usize, width: usize) {
        let start = off / 8;
        if let Some(b) = buf.get_mut(start..start + width / 8) {
            b.fill(0);
            // Truncate on a char boundary so the field stays valid UTF-8.
            let mut n = self.len().min(b.len());
            while !self.is_char_boundary(n) {
                n -= 1;
            }
            if let (Some(dst), Some(src)) = (b.get_mut(..n), self.as_bytes().get(..n)) {
                dst.copy_from_slice(src);
            }
        }
    }
}

/// Arrays of equal-width elements laid out back to back.
impl<T: Field, const N: usize> Field for [T; N] {
    fn read(buf: &[u8], off: usize, width: usize) -> Self {
        let w = width / N.max(1);
        std::array::from_fn(|i| T::read(buf, off + i * w, w))
    }
    fn write(&self, buf: &mut [u8], off: usize, width: usize) {
        let w = width / N.max(1);
        for (i, v) in self.iter().enumerate() {
            v.write(buf, off + i * w, w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_layout() {
        let b = [0x12, 0x34, 0x56, 0x78, 0x9a];
        assert_eq!(get(&b, 0, 8), 0x12);
        assert_eq!(get(&b, 0, 4), 0x1);
        assert_eq!(get(&b, 4, 4), 0x2);
        assert_eq!(get(&b, 4, 8), 0x23);
        assert_eq!(get(&b, 0, 32), 0x1234_5678);
        assert_eq!(get(&b, 7, 1), 0);
        assert_eq!(get(&b, 11, 1), 1);
        assert_eq!(get(&b, 36, 4), 0xa);
        assert_eq!(get(&b, 36, 8), 0, "out of range reads 0");
        assert_eq!(get(&b, 0, 65), 0);
    }

    #[test]
    fn unaligned_64() {
        let b = [0xffu8; 9];
        assert_eq!(get(&b, 3, 64), u64::MAX);
        let mut z = [0u8; 9];
        set(&mut z, 3, 64, u64::MAX);
        assert_eq!(z[0], 0x1f);
        assert_eq!(z[8], 0xe0);
    }

    #[test]
    fn string_field() {
        let mut b = [0xffu8; 8];
        "héllo".to_string().write(&mut b, 0, 32);
        assert_eq!(&b[..4], b"h\xc3\xa9l");
        assert_eq!(String::read(&b, 0, 32), "hél");
        "hé".to_string().write(&mut b, 0, 16);
        assert_eq!(&b[..2], b"h\0");
    }

    proptest! {
        #[test]
        fn set_get_roundtrip(buf in proptest::collection::vec(any::<u8>(), 1..40),
                             off in 0usize..320, width in 1usize..=64, v in any::<u64>()) {
            let mut b = buf.clone();
            set(&mut b, off, width, v);
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            if off + width <= b.len() * 8 {
                prop_assert_eq!(get(&b, off, width), v & mask);
                // Bits outside the field are untouched.
                for i in 0..b.len() * 8 {
                    if i < off || i >= off + width {
                        prop_assert_eq!(get(&b, i, 1), get(&buf, i, 1));
                    }
                }
            } else {
                prop_assert_eq!(&b, &buf);
            }
        }
    }
}
