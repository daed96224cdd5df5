//! Which per-port families a scrape carries: the groups an operator
//! chooses (`metrics_families`) and a scrape narrows (`collect[]`).

/// A set of per-port families a scrape carries (`metrics_families`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Data and packet counters (octets, packets).
    Data,
    /// Unicast and multicast packet counters.
    Casts,
    /// The PortCounters error counters and PortXmitWait.
    Errors,
    /// Node info, port state, physical state, width, rate.
    State,
    /// The health gauges (docs/health.md) and their thresholds.
    Health,
    /// PortRcvErrorDetails, PortXmitDiscardDetails, PortFlowCtlCounters.
    Detail,
    /// Per-VL packets, data and transmit wait (a `vl` label: 16 samples a port).
    Vl,
}

impl Group {
    /// Every group by its configuration name.
    pub const NAMES: [(&'static str, Group); 7] = [
        ("data", Group::Data),
        ("casts", Group::Casts),
        ("errors", Group::Errors),
        ("state", Group::State),
        ("health", Group::Health),
        ("detail", Group::Detail),
        ("vl", Group::Vl),
    ];

    pub fn parse(name: &str) -> Option<Group> {
        Self::NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, g)| g)
    }
}

/// The groups a scrape carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Families(u8);

impl Families {
    /// What the shipped alert rules and dashboard read: 22 samples a
    /// healthy port; `casts`, `detail` and `vl` are opt-in (they multiply
    /// a large fabric's scrape).
    pub const DEFAULT: Families = Families(
        1 << Group::Data as u8
            | 1 << Group::Errors as u8
            | 1 << Group::State as u8
            | 1 << Group::Health as u8,
    );

    pub fn of(groups: impl IntoIterator<Item = Group>) -> Families {
        Families(groups.into_iter().fold(0, |m, g| m | 1 << g as u8))
    }

    pub fn has(self, g: Group) -> bool {
        self.0 & (1 << g as u8) != 0
    }

    /// The PMA detail attributes these families serve for every port (the
    /// umad source reads other nodes' only for them: `PmaOptions::remote_details`).
    pub fn pma_details(self) -> u8 {
        use ib::source::umad::pma::detail;
        let mut m = 0;
        if self.has(Group::Detail) {
            m |= detail::RCV_ERROR_DETAILS | detail::XMIT_DISCARD_DETAILS | detail::FLOW_CTL;
        }
        if self.has(Group::Vl) {
            m |= detail::VL_OP_PACKETS | detail::VL_OP_DATA | detail::VL_XMIT_WAIT;
        }
        m
    }
}

impl Default for Families {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One of `count` groups of the fabric's nodes that a scrape may ask for
/// (`group=INDEX&groups=COUNT`), so that several scrapes, or several
/// Prometheus servers, share a large fabric: the groups' scrapes add up to
/// the whole one. A node's group is a hash of its GUID, the same whatever
/// the agent's version or the fabric's other nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u16,
    pub count: u16,
}

impl Shard {
    /// Groups a fabric may be split in.
    pub const MAX: u16 = 1024;

    /// `index` of `count`; None when out of range.
    pub fn new(index: u16, count: u16) -> Option<Shard> {
        (count > 0 && count <= Self::MAX && index < count).then_some(Shard { index, count })
    }

    /// Whether a node of GUID hash `mix` ([`mix`]) is in this group.
    pub fn has(self, mix: u64) -> bool {
        mix % u64::from(self.count) == u64::from(self.index)
    }

    /// The group that also carries the fabric-wide families and the
    /// agent's own figures.
    pub fn is_first(self) -> bool {
        self.index == 0
    }
}

/// A node GUID's hash for [`Shard::has`] (splitmix64's finalizer: GUIDs
/// of one vendor differ in their low bits only).
pub fn mix(guid: u64) -> u64 {
    let mut z = guid;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node is in one group of any count, and the groups are even.
    #[test]
    fn groups_partition_the_nodes_evenly() {
        for count in [1u16, 2, 3, 8, 100] {
            let mut sizes = vec![0u32; usize::from(count)];
            for g in 0..20_000u64 {
                let m = mix(0x0002_c903_0000_0000 + g);
                let groups: Vec<u16> = (0..count)
                    .filter(|&i| Shard::new(i, count).unwrap().has(m))
                    .collect();
                assert_eq!(groups.len(), 1);
                sizes[usize::from(groups[0])] += 1;
            }
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(
                f64::from(*max) < f64::from(*min) * 1.5 + 30.0,
                "{count}: {sizes:?}"
            );
        }
        assert!(Shard::new(3, 3).is_none());
        assert!(Shard::new(0, 0).is_none());
        assert!(Shard::new(0, Shard::MAX + 1).is_none());
    }
}
