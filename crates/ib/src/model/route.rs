//! Routes through a snapshot, hop by hop from the switches' linear forwarding
//! tables, as `ibtracert` follows them with SMPs: what a trace request shows,
//! and what a path between two ports is made of (its MTU and rate are the
//! smallest along the way).
//!
//! OpenSM does not implement SA TraceRecord, so traces are computed here from
//! the forwarding tables the sweep read.

use super::snapshot::{NodeIdx, PortIdx, Snapshot};
use crate::types::{Lid, NodeType, PortNum};

/// The longest route followed (IBA's directed-route limit).
pub const MAX_HOPS: usize = 64;

/// One node a route passes: where it enters and where it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub node: NodeIdx,
    /// The port it enters by (None at the source).
    pub entry: Option<PortNum>,
    /// The port it leaves by (None at the destination).
    pub exit: Option<PortNum>,
}

/// Why a route could not be followed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("the source port is not in the snapshot")]
    NoSource,
    #[error("no end port answers LID {0}")]
    NoDestination(u16),
    #[error("switch {node} has no forwarding entry for LID {lid}")]
    NoEntry { node: NodeIdx, lid: u16 },
    #[error("port {port} of node {node} leads nowhere (no link)")]
    Dangling { node: NodeIdx, port: u8 },
    #[error("the route loops or exceeds {MAX_HOPS} hops")]
    TooLong,
}

fn is_switch(s: &Snapshot, n: NodeIdx) -> bool {
    s.node(n)
        .is_some_and(|n| n.info.node_type() == Some(NodeType::Switch))
}

/// The nodes a packet from end port `from` to `dlid` passes, source and
/// destination included, following each switch's LFT.
///
/// A route arrives only at the destination *port*: from one port of a CA
/// to another port of the same CA it leaves by the source port and goes
/// through the fabric, as ibtracert follows it (a dual-rail HCA's two ports
/// are two end ports, not one).
pub fn trace(s: &Snapshot, from: PortIdx, dlid: Lid) -> Result<Vec<Hop>, RouteError> {
    let target = s
        .port_by_lid(dlid)
        .ok_or(RouteError::NoDestination(dlid.0))?;
    let src = s.port(from).ok_or(RouteError::NoSource)?;
    let mut hops = Vec::new();
    let mut node = src.node;
    let mut entry: Option<PortNum> = None;
    // A CA leaves through the port the route starts from; a switch (port 0)
    // through its forwarding table like any other switch.
    let mut exit = (!is_switch(s, node)).then_some(src.num);
    for _ in 0..MAX_HOPS {
        // Where the packet is now: the port it entered by (a CA), the
        // switch's port 0, or the source port before it leaves.
        let here = if is_switch(s, node) {
            s.node_port(node, PortNum(0))
        } else {
            entry.map_or(Some(from), |e| s.node_port(node, e))
        };
        if here == Some(target) {
            hops.push(Hop {
                node,
                entry,
                exit: None,
            });
            return Ok(hops);
        }
        let out = match exit {
            Some(p) => p,
            None => {
                let sw = s
                    .node(node)
                    .and_then(|n| n.switch.as_ref())
                    .ok_or(RouteError::NoEntry { node, lid: dlid.0 })?;
                match sw.lft.get(usize::from(dlid.0)).copied() {
                    Some(p) if p != 0xFF => PortNum(p),
                    _ => return Err(RouteError::NoEntry { node, lid: dlid.0 }),
                }
            }
        };
        if out.0 == 0 {
            // A switch forwarding to itself but not the destination.
            return Err(RouteError::NoEntry { node, lid: dlid.0 });
        }
        hops.push(Hop {
            node,
            entry,
            exit: Some(out),
        });
        let remote = s
            .node_port(node, out)
            .and_then(|p| s.port(p))
            .and_then(|p| p.remote)
            .and_then(|r| s.port(r))
            .ok_or(RouteError::Dangling { node, port: out.0 })?;
        node = remote.node;
        entry = Some(remote.num);
        exit = None;
    }
    Err(RouteError::TooLong)
}

/// The links a route crosses, as (port left, port entered) index pairs.
pub fn links(s: &Snapshot, hops: &[Hop]) -> Vec<(PortIdx, PortIdx)> {
    hops.windows(2)
        .filter_map(|w| {
            let [a, b] = w else { return None };
            let out = s.node_port(a.node, a.exit?)?;
            let inp = s.node_port(b.node, b.entry?)?;
            Some((out, inp))
        })
        .collect()
}
