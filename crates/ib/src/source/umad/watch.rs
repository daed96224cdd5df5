//! What a steady sweep checks instead of discovering the subnet again: the
//! signs that the topology the last discovery saw no longer holds. Any one of
//! them makes the sweep discover (docs/umad.md "Steady sweeps").
//!
//! - our own port's PortInfo (state, LID, MasterSMLID), one SMP;
//! - PortInfo of every port that was not Active (down, Init, Armed): a link
//!   coming up or an SM activating a port shows there first;
//! - after the PMA pass: a port's LinkDownedCounter moved, a port's PMA did not
//!   answer (its node or link gone, or its LID changed), SA Reports (traps).
//!
//! A link going down is seen by the PMA of the far end no longer answering
//! (an HCA behind it is unreachable) or by LinkDownedCounter on both ends; what
//! none of these shows (a switch-to-switch link on a PMA that does not count
//! LinkDowned) waits for the periodic check of one of its ends
//! ([`super::verify`], a slice of the nodes each sweep: `topology_every`).

use std::collections::HashMap;
use std::fmt;

use super::discover::Discovered;
use super::pma::PmaSweep;
use super::req;
use super::transport::Transport;
use crate::mad::pma::PortCounters;
use crate::mad::smp::{attr, PortInfo};
use crate::types::{Guid, PortState};

/// Why a sweep discovers the subnet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// No topology yet.
    First,
    /// Every sweep (`topology_every = 1`).
    Periodic,
    /// The periodic check of this node's slice saw its topology change
    /// ([`super::verify`]).
    Checked(Guid),
    /// The last discovery was incomplete; its predecessor stood in.
    Incomplete,
    /// A watched port's state changed (node GUID, port number).
    PortState(Guid, u8),
    /// Our own port's LID or master SM moved.
    LocalPort,
    /// A watched PortInfo did not come back (the node may be gone).
    Unanswered(Guid, u8),
    /// The port's LinkDownedCounter moved since the last sweep.
    LinkDowned(Guid, u8),
    /// This many ports' PMAs did not answer PortCounters.
    PmaUnreached(usize),
    /// SA Reports (traps) arrived.
    Reports(usize),
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trigger::First => write!(f, "first sweep"),
            Trigger::Periodic => write!(f, "discovery every sweep"),
            Trigger::Checked(g) => write!(f, "periodic check of {g} saw a change"),
            Trigger::Incomplete => write!(f, "last discovery incomplete"),
            Trigger::PortState(g, p) => write!(f, "port state changed at {g} port {p}"),
            Trigger::LocalPort => write!(f, "our port's LID or master SM changed"),
            Trigger::Unanswered(g, p) => write!(f, "PortInfo of {g} port {p} unanswered"),
            Trigger::LinkDowned(g, p) => write!(f, "LinkDownedCounter moved at {g} port {p}"),
            Trigger::PmaUnreached(n) => write!(f, "{n} ports' PMAs did not answer"),
            Trigger::Reports(n) => write!(f, "{n} SA Reports"),
        }
    }
}

/// The part of a PortInfo a watched port is compared on.
fn state(pi: &PortInfo) -> (u8, u8) {
    (pi.port_state, pi.port_physical_state)
}

/// Ports whose PortInfo a steady sweep reads again: our own, and every port
/// not Active (a switch's port 0 aside: it follows the switch), each along its
/// node's route, with what the last discovery saw there.
pub fn watched(d: &Discovered) -> Vec<(Guid, u8, Vec<u8>, Option<PortInfo>)> {
    let mut v = Vec::new();
    for n in d.nodes.values() {
        let g = n.info.node_guid;
        for p in n.ports.values() {
            let ours = g == d.local && p.num == d.local_port_num;
            let active = p
                .info
                .as_ref()
                .is_some_and(|i| i.port_state() == Some(PortState::Active));
            let base = n.is_switch() && p.num == 0;
            if ours || !(active || base) {
                v.push((g, p.num, n.path.clone(), p.info.clone()));
            }
        }
    }
    v.sort_by_key(|w| (w.0, w.1));
    v
}

/// Reads the watched ports' PortInfo: the first sign of change, if any.
pub fn probe(t: &mut Transport, d: &Discovered) -> Option<Trigger> {
    let ports = watched(d);
    let reqs = ports
        .iter()
        .enumerate()
        .map(|(i, (_, p, path, _))| (i, req::dr_get(attr::PORT_INFO, u32::from(*p), path)));
    let mut found: Option<Trigger> = None;
    t.pipeline(reqs, |i, r| {
        let Some((g, p, _, last)) = ports.get(i) else {
            return Vec::new();
        };
        let now = r
            .ok()
            .and_then(|mad| PortInfo::decode(req::smp_data(&mad)).ok());
        let ours = *g == d.local && *p == d.local_port_num;
        let t = match (now, last) {
            (None, _) => Some(Trigger::Unanswered(*g, *p)),
            (Some(now), Some(last))
                if ours && (now.lid, now.master_sm_lid) != (last.lid, last.master_sm_lid) =>
            {
                Some(Trigger::LocalPort)
            }
            (Some(now), Some(last)) if state(&now) == state(last) => None,
            (Some(_), _) => Some(Trigger::PortState(*g, *p)),
        };
        if found.is_none() {
            found = t;
        }
        Vec::new()
    });
    found
}

/// The end ports (a CA's port, a switch's port 0) with a LID whose last
/// PortInfo satisfies `keep`: (node GUID, port number, node's route, LID).
fn end_ports_where(
    d: &Discovered,
    keep: impl Fn(&PortInfo) -> bool,
) -> Vec<(Guid, u8, Vec<u8>, u16)> {
    let mut v = Vec::new();
    for n in d.nodes.values() {
        for p in n.ports.values() {
            let Some(i) = p.info.as_ref() else {
                continue;
            };
            if (!n.is_switch() || p.num == 0) && i.lid.0 != 0 && keep(i) {
                v.push((n.info.node_guid, p.num, n.path.clone(), i.lid.0));
            }
        }
    }
    v.sort();
    v
}

/// PortInfo:CapabilityMask IsSM (bit 1): an SM runs behind the port.
const IS_SM: u32 = 1 << 1;

/// The LIDs of the end ports whose last PortInfo says an SM runs there
/// (IsSM): SMs the SA may not list yet (a standby the master has not found).
pub fn is_sm_lids(d: &Discovered) -> Vec<u16> {
    end_ports_where(d, |i| i.capability_mask & IS_SM != 0)
        .into_iter()
        .map(|p| p.3)
        .collect()
}

/// What [`refresh_sm_ports`] saw.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Ports whose CapabilityMask changed.
    pub capability_mask: Vec<(Guid, u8)>,
    /// A port whose state changed: the topology may have too, the next sweep
    /// discovers (the next watch compares with what is patched in now).
    pub state: Option<Trigger>,
}

/// Reads again the PortInfo of the end ports at `lids` (the SMs' ports) into
/// `d`: an SM starting or stopping changes its port's CapabilityMask (IsSM),
/// which nothing else a steady sweep reads shows. Our own port's
/// `local_port` is left to the watch (its master SM LID is compared there).
/// A port that does not answer keeps what `d` has (its state is the watch's
/// and the PMA pass's business).
pub fn refresh_sm_ports(t: &mut Transport, d: &mut Discovered, lids: &[u16]) -> Refreshed {
    let ports = end_ports_where(d, |i| lids.contains(&i.lid.0));
    let reqs = ports
        .iter()
        .enumerate()
        .map(|(i, (_, p, path, _))| (i, req::dr_get(attr::PORT_INFO, u32::from(*p), path)));
    let mut fresh: Vec<(usize, PortInfo)> = Vec::new();
    t.pipeline(reqs, |i, r| {
        match r.map(|mad| PortInfo::decode(req::smp_data(&mad))) {
            Ok(Ok(pi)) => fresh.push((i, pi)),
            Ok(Err(e)) => tracing::debug!("SM port PortInfo undecodable: {e}"),
            Err(e) => tracing::debug!("SM port PortInfo unanswered: {e}"),
        }
        Vec::new()
    });
    let mut out = Refreshed::default();
    for (i, pi) in fresh {
        let Some((g, num, _, _)) = ports.get(i) else {
            continue;
        };
        let Some(slot) = d.nodes.get_mut(g).and_then(|n| n.ports.get_mut(num)) else {
            continue;
        };
        if let Some(last) = &slot.info {
            if last.capability_mask != pi.capability_mask {
                out.capability_mask.push((*g, *num));
            }
            if state(last) != state(&pi) && out.state.is_none() {
                out.state = Some(Trigger::PortState(*g, *num));
            }
        }
        slot.info = Some(pi);
    }
    out
}

/// What the PMA pass says about the topology: ports whose PMA did not answer,
/// or whose LinkDownedCounter moved since `prev` (the last sweep's readings).
pub fn after_pma(pma: &PmaSweep, prev: &HashMap<(Guid, u8), PortCounters>) -> Option<Trigger> {
    // A PMA that refuses a port without a link says nothing about the topology.
    let unreached = pma.unreached_linked().count();
    if unreached > 0 {
        return Some(Trigger::PmaUnreached(unreached));
    }
    pma.samples.iter().find_map(|(k, s)| {
        let now = s.readings()?.counters.link_downed_counter;
        let before = prev.get(k)?.link_downed_counter;
        (now != before).then_some(Trigger::LinkDowned(k.0, k.1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PortReadings;
    use crate::source::umad::pma::PortSample;

    fn sample(link_downed: u8) -> PortSample {
        PortSample {
            readings: PortReadings {
                counters: PortCounters {
                    link_downed_counter: link_downed,
                    ..PortCounters::default()
                },
                ..PortReadings::default()
            },
            counters_read: true,
            reset_after_read: false,
        }
    }

    #[test]
    fn link_downed_moving_triggers_a_discovery() {
        let k = (Guid(5), 3);
        let prev: HashMap<_, _> = [(k, sample(1).readings.counters)].into();
        let mut pma = PmaSweep::default();
        pma.samples.insert(k, sample(1));
        assert_eq!(after_pma(&pma, &prev), None);
        pma.samples.insert(k, sample(2));
        assert_eq!(
            after_pma(&pma, &prev),
            Some(Trigger::LinkDowned(Guid(5), 3))
        );
        // A port seen for the first time has nothing to compare with.
        assert_eq!(after_pma(&pma, &HashMap::new()), None);
    }
}
