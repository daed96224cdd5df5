//! Attribute changes between two sweeps that are no fabric event of their
//! own (not logged, not counted in `events_total`): what only the SM's
//! traps would tell, found in the same walk as the events so the two
//! snapshots are compared once.

use std::collections::HashSet;

use crate::mad::smp::PortInfo;
use crate::model::accum::PortTotals;
use crate::model::snapshot::{McastGroup, Port, Snapshot};
use crate::types::{Gid, Guid, PortNum};

/// Which key a violation counter counts (PortInfo M_KeyViolations,
/// P_KeyViolations, Q_KeyViolations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    M,
    P,
    Q,
}

/// The error counters whose increase the SM's traps report (IBA traps 129
/// and 130 when a threshold is passed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCounter {
    LocalLinkIntegrity,
    ExcessiveBufferOverrun,
}

/// One attribute change between two sweeps.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeChange {
    SystemImageGuid {
        node_guid: Guid,
        system_image_guid: Guid,
    },
    /// An end port's CapabilityMask (a switch's lives in port 0).
    CapabilityMask {
        node_guid: Guid,
        port: PortNum,
        mask: u32,
    },
    /// A violation counter went up: M_Key and Q_Key on end ports, P_Key on
    /// any port (switch external ports enforce partitions, trap 259).
    KeyViolation {
        node_guid: Guid,
        port: PortNum,
        key: Key,
    },
    /// An error counter went up by `increase` (a port without readings in
    /// both sweeps has none).
    ErrorIncrease {
        node_guid: Guid,
        port: PortNum,
        counter: ErrorCounter,
        increase: u64,
    },
    /// A multicast group really created or deleted (see [`mc_groups`]).
    McGroup { created: bool, mgid: Gid },
}

/// One of a port's 64-bit counter totals.
type Total = fn(&PortTotals) -> u64;
/// One of PortInfo's 16-bit key violation counters.
type Violations = fn(&PortInfo) -> u16;

/// The changes of one port present in both sweeps.
pub(super) fn port_changes(
    next: &Snapshot,
    node_guid: Guid,
    q: &Port,
    p: &Port,
    out: &mut Vec<AttributeChange>,
) {
    let port = p.num;
    let counters: [(ErrorCounter, Total); 2] = [
        (ErrorCounter::LocalLinkIntegrity, |t| {
            t.local_link_integrity_errors
        }),
        (ErrorCounter::ExcessiveBufferOverrun, |t| {
            t.excessive_buffer_overrun_errors
        }),
    ];
    for (counter, f) in counters {
        if let Some(increase) = increase(q, p, f).filter(|&n| n > 0) {
            out.push(AttributeChange::ErrorIncrease {
                node_guid,
                port,
                counter,
                increase,
            });
        }
    }
    let end_port = next.is_end_port(p);
    if end_port && q.info.capability_mask != p.info.capability_mask {
        out.push(AttributeChange::CapabilityMask {
            node_guid,
            port,
            mask: p.info.capability_mask,
        });
    }
    let keys: [(Key, bool, Violations); 3] = [
        (Key::M, end_port, |i| i.m_key_violations),
        (Key::P, true, |i| i.p_key_violations),
        (Key::Q, end_port, |i| i.q_key_violations),
    ];
    for (key, applies, f) in keys {
        // 16-bit counters that saturate; a decrease is a reset.
        if applies && f(&p.info) > f(&q.info) {
            out.push(AttributeChange::KeyViolation {
                node_guid,
                port,
                key,
            });
        }
    }
}

/// The counter increase of one port between two snapshots (None when
/// either lacks counters).
fn increase(a: &Port, b: &Port, f: Total) -> Option<u64> {
    let (x, y) = (a.counters.as_ref()?, b.counters.as_ref()?);
    Some(f(&y.totals).saturating_sub(f(&x.totals)))
}

/// The partitions (P_Key base, membership bit cleared) of the local node's
/// ports; None when the snapshot knows none (no local node, or no P_Key
/// tables read).
fn local_partitions(s: &Snapshot) -> Option<HashSet<u16>> {
    let n = s.local_node?;
    let keys: HashSet<u16> = s
        .node_ports(n)
        .iter()
        .flat_map(|p| p.pkeys.iter().map(|k| k.0 & 0x7fff))
        .collect();
    (!keys.is_empty()).then_some(keys)
}

/// Multicast groups created and deleted between two snapshots: only groups
/// that really appeared or vanished, not changes of the agent's view of them.
/// The view is the master SA's answer, filtered by the partitions of the port
/// asking. So groups are compared only when both snapshots have the same
/// master SM answering (a new master's SA rebuilds its groups; an SM that does
/// not answer shows its last ones); and a group of a partition the local node
/// joined, which the subnet had before, came into view rather than being
/// created; one of a partition it left, which the subnet still has, went out
/// of view rather than being deleted.
pub(super) fn mc_groups(prev: &Snapshot, next: &Snapshot, out: &mut Vec<AttributeChange>) {
    let master = |s: &Snapshot| s.master_sm().map(|m| m.info.guid);
    if master(prev).is_none() || master(prev) != master(next) {
        return;
    }
    let (was, is) = (local_partitions(prev), local_partitions(next));
    let member = |parts: &Option<HashSet<u16>>, k: u16| parts.as_ref().map(|p| p.contains(&k));
    let exists = |s: &Snapshot, k: u16| s.partitions.iter().any(|p| p.pkey.0 & 0x7fff == k);
    let key = |g: &McastGroup| g.group.p_key.0 & 0x7fff;
    // In view before and not now, the partition still there: left, not deleted.
    let left = |g: &McastGroup| {
        let k = key(g);
        member(&was, k) == Some(true) && member(&is, k) == Some(false) && exists(next, k)
    };
    // Not in view before and now, the partition there before: joined, not created.
    let joined = |g: &McastGroup| {
        let k = key(g);
        member(&was, k) == Some(false) && member(&is, k) == Some(true) && exists(prev, k)
    };
    let old: HashSet<Gid> = prev.mcast_groups.iter().map(|g| g.group.mgid).collect();
    let new: HashSet<Gid> = next.mcast_groups.iter().map(|g| g.group.mgid).collect();
    for g in &prev.mcast_groups {
        if !new.contains(&g.group.mgid) && !left(g) {
            out.push(AttributeChange::McGroup {
                created: false,
                mgid: g.group.mgid,
            });
        }
    }
    for g in &next.mcast_groups {
        if !old.contains(&g.group.mgid) && !joined(g) {
            out.push(AttributeChange::McGroup {
                created: true,
                mgid: g.group.mgid,
            });
        }
    }
}
