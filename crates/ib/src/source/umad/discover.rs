//! Fabric discovery by directed-route SMPs, breadth first, as ibnetdiscover does:
//! NodeInfo along each path, then NodeDescription, SwitchInfo, PortInfo per port and the
//! LFT blocks of each switch. Every query is pipelined through the transport's window;
//! answers to NodeInfo and PortInfo enqueue the next hop.

use std::collections::{BTreeMap, HashMap};

use super::req;
use super::transport::{Request, Transport, TxError};
use crate::mad::smp::{
    attr, LinearForwardingTable, NodeDescription, NodeInfo, PortInfo, SwitchInfo,
};
use crate::types::{Guid, NodeType};

/// Longest directed route IBA allows.
pub(super) const MAX_HOPS: usize = 63;

/// One port as discovered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DPort {
    pub num: u8,
    /// The port's GUID (a switch's ports share its port 0 GUID).
    pub guid: Guid,
    pub info: Option<PortInfo>,
    /// The remote end of the link: (node GUID, port number).
    pub peer: Option<(Guid, u8)>,
}

/// One node as discovered.
#[derive(Debug, Clone, PartialEq)]
pub struct DNode {
    pub info: NodeInfo,
    pub description: String,
    pub switch_info: Option<SwitchInfo>,
    /// Directed route from us to this node (first arrival).
    pub path: Vec<u8>,
    pub ports: BTreeMap<u8, DPort>,
    /// Linear forwarding table: output port per LID (index = LID), switches only;
    /// empty until read.
    pub lft: Vec<u8>,
}

impl DNode {
    pub fn is_switch(&self) -> bool {
        self.info.node_type() == Some(NodeType::Switch)
    }

    /// The node's management LID (switch: port 0; CA: the first port with a LID).
    pub fn lid(&self) -> u16 {
        self.ports
            .values()
            .filter_map(|p| p.info.as_ref())
            .map(|i| i.lid.0)
            .find(|&l| l != 0)
            .unwrap_or(0)
    }
}

/// The result of one discovery sweep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    pub nodes: HashMap<Guid, DNode>,
    /// GUID of the node we are attached to.
    pub local: Guid,
    /// Our port's PortInfo (MasterSMLID, our LID).
    pub local_port: Option<PortInfo>,
    /// Our port's number on the local node.
    pub local_port_num: u8,
    /// SMP queries that failed for good (the sweep may be partial).
    pub failures: u64,
    /// Distinct failure reasons seen, for the log.
    pub errors: Vec<String>,
}

/// What each outstanding SMP is for.
#[derive(Debug, Clone)]
enum Q {
    NodeInfo {
        path: Vec<u8>,
        from: Option<(Guid, u8)>,
    },
    NodeDesc(Guid),
    SwitchInfo(Guid),
    PortInfo(Guid, u8),
    Lft(Guid, u32),
}

/// Discovery options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscoverOptions {
    /// Read the switches' linear forwarding tables (one SMP per 64 LIDs per switch).
    pub lft: bool,
}

impl Default for DiscoverOptions {
    fn default() -> Self {
        DiscoverOptions { lft: true }
    }
}

pub(super) fn link_up(pi: &PortInfo) -> bool {
    // Physically LinkUp (5) or in LinkErrorRecovery (6); an SMA that reports
    // no physical state (0): PortState above Down. A port disabled (3) may
    // still show its last PortState for a moment: nothing answers through it.
    match pi.port_physical_state {
        5 | 6 => true,
        0 => pi.port_state >= 2,
        _ => false,
    }
}

/// Runs one BFS sweep from our port.
pub fn discover(t: &mut Transport, opts: DiscoverOptions) -> Discovered {
    let mut d = Discovered::default();
    let start = (
        Q::NodeInfo {
            path: Vec::new(),
            from: None,
        },
        req::dr_get(attr::NODE_INFO, 0, &[]),
    );
    run(t, &mut d, vec![start], opts);
    d
}

/// Reads the linear forwarding tables of the switches `due` names (by node
/// GUID) of a discovery made without them (`DiscoverOptions { lft: false }`).
pub fn fetch_lfts(t: &mut Transport, d: &mut Discovered, due: impl Fn(Guid) -> bool) {
    let mut reqs = Vec::new();
    for n in d.nodes.values_mut().filter(|n| due(n.info.node_guid)) {
        if let Some(si) = n.switch_info.as_ref().filter(|si| si.linear_fdb_top > 0) {
            n.lft = lft_slots(si);
            reqs.extend(lft_requests(n.info.node_guid, si, &n.path));
        }
    }
    run(t, d, reqs, DiscoverOptions { lft: true });
}

/// Pipelines `reqs` and what their answers ask next into `d`.
fn run(t: &mut Transport, d: &mut Discovered, reqs: Vec<(Q, Request)>, opts: DiscoverOptions) {
    t.pipeline(reqs, |q, r| match r {
        Ok(mad) => on_answer(d, q, req::smp_data(&mad), opts),
        Err(e) => {
            on_failure(d, &q, &e);
            Vec::new()
        }
    });
}

/// The LinearForwardingTable blocks up to a switch's LinearFDBTop.
fn lft_requests(g: Guid, si: &SwitchInfo, path: &[u8]) -> Vec<(Q, Request)> {
    let blocks = u32::from(si.linear_fdb_top) / 64 + 1;
    (0..blocks)
        .map(|b| {
            (
                Q::Lft(g, b),
                req::dr_get(attr::LINEAR_FORWARDING_TABLE, b, path),
            )
        })
        .collect()
}

/// A switch's forwarding table before its blocks arrive: every LID up to
/// LinearFDBTop unrouted.
pub fn lft_slots(si: &SwitchInfo) -> Vec<u8> {
    vec![LinearForwardingTable::INVALID_PORT; usize::from(si.linear_fdb_top) + 1]
}

/// What decides whether a discovery saw the same subnet as another: every node,
/// port, LID and link. Equal signatures let forwarding and partition tables be
/// reused instead of read again.
pub fn signature(d: &Discovered) -> u64 {
    use std::hash::{Hash, Hasher};
    type PortKey = (Guid, u8, u16, Option<(Guid, u8)>, u8);
    let mut ports: Vec<PortKey> = d
        .nodes
        .values()
        .flat_map(|n| {
            n.ports.values().map(|p| {
                let (lid, state) = p.info.as_ref().map_or((0, 0), |i| (i.lid.0, i.port_state));
                (n.info.node_guid, p.num, lid, p.peer, state)
            })
        })
        .collect();
    ports.sort_unstable();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ports.hash(&mut h);
    h.finish()
}

fn on_failure(d: &mut Discovered, q: &Q, e: &TxError) {
    d.failures += 1;
    let msg = format!("{q:?}: {e}");
    tracing::debug!("SMP failed: {msg}");
    if d.errors.len() < 16 {
        d.errors.push(msg);
    }
}

fn path_to(d: &Discovered, g: Guid) -> Vec<u8> {
    d.nodes.get(&g).map(|n| n.path.clone()).unwrap_or_default()
}

fn on_answer(d: &mut Discovered, q: Q, data: &[u8], opts: DiscoverOptions) -> Vec<(Q, Request)> {
    match q {
        Q::NodeInfo { path, from } => match NodeInfo::decode(data) {
            Ok(ni) => on_node_info(d, ni, path, from),
            Err(_) => {
                d.failures += 1;
                Vec::new()
            }
        },
        Q::NodeDesc(g) => {
            if let (Ok(nd), Some(n)) = (NodeDescription::decode(data), d.nodes.get_mut(&g)) {
                n.description = nd.node_string.trim_end_matches('\0').to_string();
            }
            Vec::new()
        }
        Q::SwitchInfo(g) => match SwitchInfo::decode(data) {
            Ok(si) => on_switch_info(d, g, si, opts),
            Err(_) => Vec::new(),
        },
        Q::Lft(g, b) => {
            if let (Ok(t), Some(n)) = (LinearForwardingTable::decode(data), d.nodes.get_mut(&g)) {
                let base = b as usize * 64;
                for (i, port) in t.port.iter().enumerate() {
                    if let Some(slot) = n.lft.get_mut(base + i) {
                        *slot = *port;
                    }
                }
            }
            Vec::new()
        }
        Q::PortInfo(g, p) => match PortInfo::decode(data) {
            Ok(pi) => on_port_info(d, g, p, pi),
            Err(_) => Vec::new(),
        },
    }
}

/// A node reached along `path` (from the port `from`, none for our own):
/// new, its description, SwitchInfo and every PortInfo are asked.
fn on_node_info(
    d: &mut Discovered,
    ni: NodeInfo,
    path: Vec<u8>,
    from: Option<(Guid, u8)>,
) -> Vec<(Q, Request)> {
    let mut next = Vec::new();
    let g = ni.node_guid;
    let port = ni.local_port_num;
    if from.is_none() {
        d.local = g;
    }
    let is_switch = ni.node_type() == Some(NodeType::Switch);
    if !d.nodes.contains_key(&g) {
        next.push((
            Q::NodeDesc(g),
            req::dr_get(attr::NODE_DESCRIPTION, 0, &path),
        ));
        if is_switch {
            next.push((Q::SwitchInfo(g), req::dr_get(attr::SWITCH_INFO, 0, &path)));
        }
        // PortInfo of every port, linked or not, along the path that reached
        // the node (the SMA answers for any of its ports): a down port still
        // has a state, a LID and enabled widths to report.
        let first = u8::from(!is_switch);
        for p in first..=ni.num_ports {
            next.push((
                Q::PortInfo(g, p),
                req::dr_get(attr::PORT_INFO, u32::from(p), &path),
            ));
        }
        if from.is_none() {
            d.local_port_num = port;
        }
        d.nodes.insert(
            g,
            DNode {
                info: ni.clone(),
                description: String::new(),
                switch_info: None,
                path,
                ports: BTreeMap::new(),
                lft: Vec::new(),
            },
        );
    }
    let Some(node) = d.nodes.get_mut(&g) else {
        return next;
    };
    // A CA is reached once per linked port: each arrival names one port and
    // its GUID.
    if !is_switch {
        node.ports
            .entry(port)
            .or_insert_with(|| DPort {
                num: port,
                ..DPort::default()
            })
            .guid = ni.port_guid;
    }
    if let Some((pg, pp)) = from {
        link(d, (pg, pp), (g, port));
    }
    next
}

fn on_switch_info(
    d: &mut Discovered,
    g: Guid,
    si: SwitchInfo,
    opts: DiscoverOptions,
) -> Vec<(Q, Request)> {
    let mut next = Vec::new();
    if opts.lft && si.linear_fdb_top > 0 {
        next.extend(lft_requests(g, &si, &path_to(d, g)));
    }
    if let Some(n) = d.nodes.get_mut(&g) {
        // Without the blocks the table stays empty: not read is absent,
        // never a table of invalid ports.
        if opts.lft {
            n.lft = lft_slots(&si);
        }
        n.switch_info = Some(si);
    }
    next
}

/// A port's PortInfo; through a port that is up and not yet linked, the
/// next hop's NodeInfo.
fn on_port_info(d: &mut Discovered, g: Guid, p: u8, pi: PortInfo) -> Vec<(Q, Request)> {
    let Some(n) = d.nodes.get_mut(&g) else {
        return Vec::new();
    };
    let is_switch = n.is_switch();
    // A CA port's GUID comes with the NodeInfo that arrives through it; a
    // port never reached that way (down) has none to show.
    let port_guid = if is_switch {
        n.info.port_guid
    } else {
        n.ports.get(&p).map(|x| x.guid).unwrap_or_default()
    };
    let path = n.path.clone();
    let entry = n.ports.entry(p).or_insert_with(|| DPort {
        num: p,
        guid: port_guid,
        ..DPort::default()
    });
    let up = link_up(&pi);
    let has_peer = entry.peer.is_some();
    entry.info = Some(pi.clone());
    if g == d.local && d.local_port.is_none() && (p == d.local_port_num || is_switch && p == 0) {
        d.local_port = Some(pi);
    }
    let crosses = d.nodes.get(&g).is_some_and(|n| may_traverse(d, n, p));
    if !(up && !has_peer && crosses && path.len() < MAX_HOPS) {
        return Vec::new();
    }
    let mut np = path;
    np.push(p);
    let request = req::dr_get(attr::NODE_INFO, 0, &np);
    vec![(
        Q::NodeInfo {
            path: np,
            from: Some((g, p)),
        },
        request,
    )]
}

/// Whether a discovery leaves `n` through its port `p`: switches forward;
/// from a CA only through our own port (hop 0), as ibnetdiscover does: the
/// local CA's other ports are reached through the fabric like any other
/// node's.
pub(super) fn may_traverse(d: &Discovered, n: &DNode, p: u8) -> bool {
    if n.is_switch() {
        p != 0
    } else {
        n.path.is_empty() && p == d.local_port_num
    }
}

fn link(d: &mut Discovered, a: (Guid, u8), b: (Guid, u8)) {
    for (x, y) in [(a, b), (b, a)] {
        if let Some(n) = d.nodes.get_mut(&x.0) {
            let guid = if n.is_switch() {
                n.info.port_guid
            } else {
                n.ports
                    .get(&x.1)
                    .map(|p| p.guid)
                    .unwrap_or(n.info.port_guid)
            };
            n.ports
                .entry(x.1)
                .or_insert_with(|| DPort {
                    num: x.1,
                    guid,
                    ..DPort::default()
                })
                .peer = Some(y);
        }
    }
}
