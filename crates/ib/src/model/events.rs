//! Fabric events between two sweeps, from diffing consecutive snapshots: one
//! generic diff, so every source reports changes the same way. The same walk
//! finds the attribute changes that only notifications report
//! ([`attributes`]): two snapshots are compared in one place, once.

pub mod attributes;

pub use attributes::{AttributeChange, ErrorCounter, Key};

use super::snapshot::{Port, Snapshot};
use crate::types::{Guid, Lid, PhysPortState, PortNum, PortState};
use serde::Serialize;
use std::collections::HashMap;
use std::time::SystemTime;

/// A change seen between two sweeps, stamped with the later sweep's time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FabricEvent {
    pub time: SystemTime,
    pub kind: FabricEventKind,
}

/// What changed. "In/out of service" follows IBA traps 64/65 (an end port's GID
/// becomes usable or not: PortState Active or not, or its node came or went);
/// link state changes follow trap 128 (any port's PortState/PhysPortState).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FabricEventKind {
    NodeAdded {
        node_guid: Guid,
        description: String,
    },
    NodeRemoved {
        node_guid: Guid,
        description: String,
    },
    PortInService {
        node_guid: Guid,
        port: PortNum,
        port_guid: Guid,
        lid: Lid,
    },
    PortOutOfService {
        node_guid: Guid,
        port: PortNum,
        port_guid: Guid,
        lid: Lid,
    },
    LinkStateChange {
        node_guid: Guid,
        port: PortNum,
        from: Option<PortState>,
        to: Option<PortState>,
        phys_from: Option<PhysPortState>,
        phys_to: Option<PhysPortState>,
    },
}

fn active(p: &Port) -> bool {
    p.info.port_state() == Some(PortState::Active)
}

/// The end ports of node `n` that are active (those a node's coming or going
/// puts in or out of service).
fn active_end_ports(s: &Snapshot, n: u32) -> impl Iterator<Item = &Port> {
    s.node_ports(n)
        .iter()
        .filter(|p| s.is_end_port(p) && active(p))
}

/// PortInService (`up`) or PortOutOfService of port `p` of node `node_guid`.
fn service_event(up: bool, node_guid: Guid, p: &Port, lid: Lid) -> FabricEventKind {
    let (port, port_guid) = (p.num, p.guid);
    if up {
        FabricEventKind::PortInService {
            node_guid,
            port,
            port_guid,
            lid,
        }
    } else {
        FabricEventKind::PortOutOfService {
            node_guid,
            port,
            port_guid,
            lid,
        }
    }
}

/// Everything that differs between two sweeps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diff {
    /// Fabric events (logged, counted, streamed, notified).
    pub events: Vec<FabricEvent>,
    /// Attribute changes (notified only).
    pub changes: Vec<AttributeChange>,
}

/// Events that turn `prev` into `next`, in a stable order (removals first, then
/// additions, then per-port changes in `next`'s port order).
pub fn diff(prev: &Snapshot, next: &Snapshot) -> Vec<FabricEvent> {
    compare(prev, next).events
}

/// The one comparison of two sweeps: [`diff`]'s events and the attribute
/// changes of nodes and ports present in both.
pub fn compare(prev: &Snapshot, next: &Snapshot) -> Diff {
    let time = next.sweep.time;
    let mut out = Vec::new();
    let mut changes = Vec::new();
    attributes::mc_groups(prev, next, &mut changes);
    let mut push = |kind| out.push(FabricEvent { time, kind });

    let next_nodes: HashMap<Guid, u32> = next
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.info.node_guid, i as u32))
        .collect();
    for (i, n) in prev.nodes.iter().enumerate() {
        let g = n.info.node_guid;
        if next_nodes.contains_key(&g) {
            continue;
        }
        for p in active_end_ports(prev, i as u32) {
            push(service_event(false, g, p, p.info.lid));
        }
        push(FabricEventKind::NodeRemoved {
            node_guid: g,
            description: n.description.clone(),
        });
    }
    for (i, n) in next.nodes.iter().enumerate() {
        let g = n.info.node_guid;
        let Some(pn) = prev.node_by_guid(g) else {
            push(FabricEventKind::NodeAdded {
                node_guid: g,
                description: n.description.clone(),
            });
            for p in active_end_ports(next, i as u32) {
                push(service_event(true, g, p, p.info.lid));
            }
            continue;
        };
        if let Some(before) = prev.node(pn) {
            if before.info.system_image_guid != n.info.system_image_guid {
                changes.push(AttributeChange::SystemImageGuid {
                    node_guid: g,
                    system_image_guid: n.info.system_image_guid,
                });
            }
        }
        for p in next.node_ports(i as u32) {
            let Some(q) = prev.node_port(pn, p.num).and_then(|q| prev.port(q)) else {
                continue;
            };
            attributes::port_changes(next, g, q, p, &mut changes);
            let (from, to) = (q.info.port_state(), p.info.port_state());
            let (pf, pt) = (q.info.phys_state(), p.info.phys_state());
            if from != to || pf != pt {
                push(FabricEventKind::LinkStateChange {
                    node_guid: g,
                    port: p.num,
                    from,
                    to,
                    phys_from: pf,
                    phys_to: pt,
                });
            }
            if next.is_end_port(p) && active(q) != active(p) {
                // Out of service: the LID the port had.
                let lid = if active(p) { p.info.lid } else { q.info.lid };
                push(service_event(active(p), g, p, lid));
            }
        }
    }
    Diff {
        events: out,
        changes,
    }
}
