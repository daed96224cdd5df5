//! Rows of one table sorted by their encoded index.

use std::cmp::Ordering;

/// Rows of one table sorted by their encoded index, for O(log n) lookup.
///
/// Indexes are stored back to back in one vector (no allocation per row).
#[derive(Clone, Debug)]
pub struct RowSet<R> {
    keys: Vec<u32>,
    /// `ends[i]` is the end of row i's index in `keys`.
    ends: Vec<usize>,
    /// `shared[i]`: how many sub-identifiers row i's index shares with
    /// row i-1's (at most 255), so a walk re-encodes only the rest.
    shared: Vec<u8>,
    rows: Vec<R>,
}

impl<R> Default for RowSet<R> {
    fn default() -> Self {
        RowSet {
            keys: Vec::new(),
            ends: Vec::new(),
            shared: Vec::new(),
            rows: Vec::new(),
        }
    }
}

/// `key` against `index`, both known to begin with the same `skip`
/// sub-identifiers: the order, and how many they share.
fn compare_after(key: &[u32], index: &[u32], skip: usize) -> (Ordering, usize) {
    let (k, i) = (
        key.get(skip..).unwrap_or(&[]),
        index.get(skip..).unwrap_or(&[]),
    );
    let same = k.iter().zip(i).take_while(|(a, b)| a == b).count();
    let order = match (k.get(same), i.get(same)) {
        (Some(a), Some(b)) => a.cmp(b),
        _ => k.len().cmp(&i.len()),
    };
    (order, skip + same)
}

fn sub(keys: &[u32], a: usize, b: usize) -> &[u32] {
    keys.get(a..b).unwrap_or(&[])
}

impl<R> RowSet<R> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a set from rows and a function appending each row's encoded
    /// index (usually an [`IndexCodec`](crate::index::IndexCodec)'s
    /// `encode`). Rows may come in any order; of rows with equal indexes
    /// only the first is kept.
    pub fn from_rows<I, F>(rows: I, mut index: F) -> Self
    where
        I: IntoIterator<Item = R>,
        F: FnMut(&R, &mut Vec<u32>),
    {
        let mut tmp = Vec::new();
        let mut entries: Vec<(usize, usize, R)> = Vec::new();
        for r in rows {
            let a = tmp.len();
            index(&r, &mut tmp);
            entries.push((a, tmp.len(), r));
        }
        Self::from_entries(tmp, entries)
    }

    /// Builds a set from (encoded index, row) pairs in any order.
    pub fn from_pairs<I>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (Vec<u32>, R)>,
    {
        let mut tmp = Vec::new();
        let mut entries = Vec::new();
        for (k, r) in pairs {
            let a = tmp.len();
            tmp.extend_from_slice(&k);
            entries.push((a, tmp.len(), r));
        }
        Self::from_entries(tmp, entries)
    }

    fn from_entries(tmp: Vec<u32>, mut entries: Vec<(usize, usize, R)>) -> Self {
        let sorted = entries.windows(2).all(|w| match w {
            [x, y] => sub(&tmp, x.0, x.1) < sub(&tmp, y.0, y.1),
            _ => true,
        });
        if !sorted {
            entries.sort_by(|x, y| sub(&tmp, x.0, x.1).cmp(sub(&tmp, y.0, y.1)));
        }
        let mut set = RowSet {
            keys: Vec::with_capacity(tmp.len()),
            ends: Vec::with_capacity(entries.len()),
            shared: Vec::with_capacity(entries.len()),
            rows: Vec::with_capacity(entries.len()),
        };
        for (a, b, r) in entries {
            let k = sub(&tmp, a, b);
            let before = match set.len().checked_sub(1) {
                Some(i) => set.key(i),
                None => &[],
            };
            if !set.is_empty() && before == k {
                continue;
            }
            let shared = before.iter().zip(k).take_while(|(x, y)| x == y).count();
            set.shared.push(u8::try_from(shared).unwrap_or(u8::MAX));
            set.keys.extend_from_slice(k);
            set.ends.push(set.keys.len());
            set.rows.push(r);
        }
        set
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The encoded index of row `i` (empty when out of range).
    pub fn key(&self, i: usize) -> &[u32] {
        let a = if i == 0 {
            0
        } else {
            self.ends.get(i - 1).copied().unwrap_or(0)
        };
        let b = self.ends.get(i).copied().unwrap_or(a);
        sub(&self.keys, a, b)
    }

    /// Row `i` in index order, with its encoded index.
    pub fn at(&self, i: usize) -> Option<(&[u32], &R)> {
        self.rows.get(i).map(|r| (self.key(i), r))
    }

    /// Calls `f` on each row from position `pos` on, in index order, with
    /// its encoded index and how many sub-identifiers of it the row
    /// before's shares, until `f` answers false; true when it did. (A
    /// walk's step: each index found from where the one before ended.)
    #[inline]
    pub fn each_from(&self, pos: usize, mut f: impl FnMut(&[u32], usize, &R) -> bool) -> bool {
        let mut a = match pos.checked_sub(1) {
            Some(i) => self.ends.get(i).copied().unwrap_or(0),
            None => 0,
        };
        let ends = self.ends.get(pos..).unwrap_or(&[]);
        let shared = self.shared.get(pos..).unwrap_or(&[]);
        let rows = self.rows.get(pos..).unwrap_or(&[]);
        for ((&b, &same), row) in ends.iter().zip(shared).zip(rows) {
            if !f(sub(&self.keys, a, b), usize::from(same), row) {
                return true;
            }
            a = b;
        }
        false
    }

    /// Position of the first row whose index is not less than `index`
    /// (or `len()`), and whether it is equal.
    ///
    /// Each compare starts past the sub-identifiers that both bounds share
    /// with `index`: the rows between two indexes share what those two
    /// share (the rows are sorted), and a table's indexes share long
    /// prefixes (a GID's subnet prefix, a vendor's GUIDs), which every
    /// step of a plain search compared again (a walk's request searches
    /// once).
    fn search(&self, index: &[u32]) -> (usize, bool) {
        let (mut lo, mut hi) = (0, self.len());
        // What the row before `lo` and the row at `hi` share with `index`
        // (none while there is no such row).
        let (mut lo_same, mut hi_same) = (0, 0);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (order, same) = compare_after(self.key(mid), index, lo_same.min(hi_same));
            match order {
                Ordering::Less => (lo, lo_same) = (mid + 1, same),
                Ordering::Equal => return (mid, true),
                Ordering::Greater => (hi, hi_same) = (mid, same),
            }
        }
        (lo, false)
    }

    /// The row with exactly this encoded index.
    pub fn get(&self, index: &[u32]) -> Option<&R> {
        match self.search(index) {
            (i, true) => self.rows.get(i),
            _ => None,
        }
    }

    /// Position of the first row whose index is strictly greater than `index`.
    pub fn position_after(&self, index: &[u32]) -> usize {
        match self.search(index) {
            (i, true) => i + 1,
            (i, false) => i,
        }
    }

    /// The first row whose index is strictly greater than `index`.
    pub fn first_after(&self, index: &[u32]) -> Option<(&[u32], &R)> {
        self.at(self.position_after(index))
    }

    pub fn first(&self) -> Option<(&[u32], &R)> {
        self.at(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u32], &R)> + '_ {
        (0..self.len()).filter_map(move |i| self.at(i))
    }

    pub fn rows(&self) -> &[R] {
        &self.rows
    }
}
