//! Periodic re-reads spread over sweeps: instead of every port, table or
//! node being read again on the same `every`-th sweep (one sweep carrying
//! the whole refresh while the others carry none), each sweep re-reads the
//! slice of them whose turn it is. Each is still read again once every
//! `every` sweeps, so no value is older than the period docs/umad.md
//! promises; only the sweep it lands in moves.

/// The items whose turn it is in one sweep: those whose key falls in slice
/// `sweep % every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub sweep: u64,
    pub every: u32,
}

impl Slice {
    pub fn new(sweep: u64, every: u32) -> Self {
        Slice {
            sweep,
            every: every.max(1),
        }
    }

    /// Whether the item with this key is re-read this sweep. Keys are GUIDs
    /// or (LID, port): mixed first, so that consecutive keys (ibsim's GUIDs,
    /// an SM's LIDs) spread evenly instead of in runs.
    pub fn covers(&self, key: u64) -> bool {
        let every = u64::from(self.every);
        (mix(key) % every) == self.sweep % every
    }
}

/// A fixed 64-bit mix (the finaliser of SplitMix64): stable across runs,
/// so an item's turn does not move between sweeps.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The key of an end port, (LID, port number).
pub fn port_key(lid: u16, port: u8) -> u64 {
    (u64::from(lid) << 8) | u64::from(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_has_exactly_one_turn_per_period_and_turns_are_even() {
        let every = 30;
        let keys: Vec<u64> = (0x20_0000..0x20_0000 + 3000).collect();
        let mut per_sweep = Vec::new();
        for k in &keys {
            let turns = (0..every as u64)
                .filter(|&s| Slice::new(s, every).covers(*k))
                .count();
            assert_eq!(turns, 1, "key {k:#x}");
        }
        for s in 0..every as u64 {
            per_sweep.push(
                keys.iter()
                    .filter(|&&k| Slice::new(s, every).covers(k))
                    .count(),
            );
        }
        // 100 a sweep on average; no sweep carries twice its share.
        assert!(
            per_sweep.iter().all(|&n| (50..=150).contains(&n)),
            "{per_sweep:?}"
        );
        // The turn repeats with the period.
        assert!(Slice::new(7, every).covers(keys[0]) == Slice::new(37, every).covers(keys[0]));
    }
}
