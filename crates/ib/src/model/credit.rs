//! Credit loops (docs/routing.md): the channel dependency graph of the
//! walked routes and one cycle of it, as OpenSM's DFSSSP and ibdmchk look
//! for. A channel is a switch's output port towards another switch; a
//! route that enters switch B by channel A.p and leaves it by B.q makes
//! A.p depend on B.q (a packet holding A.p's buffer at B waits for credits
//! on B.q). A cycle of dependencies can deadlock the fabric under load
//! even though every route arrives.
//!
//! One graph per walk: a channel's dependencies all leave the one switch
//! it leads to, so each channel keeps them as a 256-bit set of that
//! switch's ports (32 octets a channel, one bit set per route step), and
//! the cycle is looked for by one iterative depth-first search.

/// Dependencies between switch-to-switch channels, by switch index (the
/// walk's order of switches) and port.
pub(crate) struct Deps {
    /// First channel id of each switch (a switch has one per port 0-255
    /// it declares, ids `base[i]..base[i + 1]`).
    base: Vec<u32>,
    /// The switch each channel leads to (`u32::MAX`: no dependency yet).
    to: Vec<u32>,
    /// The ports of `to` each channel's routes continue by.
    next: Vec<[u64; 4]>,
}

const NONE: u32 = u32::MAX;

impl Deps {
    /// One channel for each port (0 to its port count) of each switch, in
    /// the walk's order of switches.
    pub(crate) fn new(ports: impl Iterator<Item = u8>) -> Self {
        let mut base = vec![0u32];
        let mut total = 0u32;
        for n in ports {
            total = total.saturating_add(u32::from(n) + 1);
            base.push(total);
        }
        let channels = total as usize;
        Deps {
            base,
            to: vec![NONE; channels],
            next: vec![[0; 4]; channels],
        }
    }

    fn channel(&self, switch: usize, port: u8) -> Option<usize> {
        let first = *self.base.get(switch)?;
        let end = *self.base.get(switch + 1)?;
        let c = first.checked_add(u32::from(port))?;
        (c < end).then_some(c as usize)
    }

    /// A route leaves switch `a` by `pa` into switch `b`, and `b` sends it
    /// on by `pb` towards another switch.
    pub(crate) fn add(&mut self, a: usize, pa: u8, b: usize, pb: u8) {
        let (Some(c), Ok(b32)) = (self.channel(a, pa), u32::try_from(b)) else {
            return;
        };
        if let (Some(to), Some(set)) = (self.to.get_mut(c), self.next.get_mut(c)) {
            *to = b32;
            if let Some(word) = set.get_mut(usize::from(pb >> 6)) {
                *word |= 1u64 << (pb & 63);
            }
        }
    }

    /// The switch and port of a channel id.
    fn link(&self, c: usize) -> (usize, u8) {
        let sw = self
            .base
            .partition_point(|&b| b as usize <= c)
            .saturating_sub(1);
        let port = c - self.base.get(sw).copied().unwrap_or(0) as usize;
        (sw, u8::try_from(port).unwrap_or(u8::MAX))
    }

    /// The first dependency of channel `c` by a port at or after `from`:
    /// (the port after it, the channel it is).
    fn dep_from(&self, c: usize, from: usize) -> Option<(usize, usize)> {
        let to = *self.to.get(c)?;
        let set = self.next.get(c)?;
        let port =
            (from..256).find(|&p| set.get(p >> 6).is_some_and(|w| w & (1u64 << (p & 63)) != 0))?;
        let d = self.channel(to as usize, u8::try_from(port).ok()?)?;
        Some((port + 1, d))
    }

    /// One cycle of the graph, as its channels (switch index, port) in
    /// dependency order starting from the smallest; None when acyclic.
    /// Iterative (a deep fabric must not overflow the stack).
    pub(crate) fn cycle(&self) -> Option<Vec<(usize, u8)>> {
        // 0 unseen, 1 on the stack, 2 done.
        let mut color = vec![0u8; self.to.len()];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..self.to.len() {
            if color.get(root) != Some(&0) || self.to.get(root) == Some(&NONE) {
                continue;
            }
            color[root] = 1;
            stack.push((root, 0));
            while let Some(top) = stack.last_mut() {
                let (c, from) = *top;
                match self.dep_from(c, from) {
                    Some((after, d)) => {
                        top.1 = after;
                        match color.get(d).copied() {
                            Some(0) => {
                                color[d] = 1;
                                stack.push((d, 0));
                            }
                            Some(1) => return Some(self.cycle_of(&stack, d)),
                            _ => {}
                        }
                    }
                    None => {
                        color[c] = 2;
                        stack.pop();
                    }
                }
            }
        }
        None
    }

    /// The cycle on `stack` from channel `d` to its top, rotated to start
    /// at its smallest channel (the same cycle reads the same every walk).
    fn cycle_of(&self, stack: &[(usize, usize)], d: usize) -> Vec<(usize, u8)> {
        let from = stack.iter().position(|&(c, _)| c == d).unwrap_or(0);
        let mut ids: Vec<usize> = stack
            .get(from..)
            .unwrap_or_default()
            .iter()
            .map(|&(c, _)| c)
            .collect();
        if let Some(min) = ids
            .iter()
            .enumerate()
            .min_by_key(|&(_, c)| *c)
            .map(|(i, _)| i)
        {
            ids.rotate_left(min);
        }
        ids.into_iter().map(|c| self.link(c)).collect()
    }
}
