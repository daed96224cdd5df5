//! Which per-port families a scrape carries: the groups an operator
//! chooses (`metrics_families`) and a scrape narrows (`collect[]`).

/// A set of per-port families a scrape carries (`metrics_families`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Data and packet counters (octets, packets, unicast, multicast).
    Data,
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
    pub const NAMES: [(&'static str, Group); 6] = [
        ("data", Group::Data),
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
    /// What the shipped alert rules and dashboard read; `detail` and `vl`
    /// are opt-in (they multiply a large fabric's scrape).
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
