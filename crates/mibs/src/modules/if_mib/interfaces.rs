//! The local node's interfaces, derived once per published snapshot and
//! shared by IF-MIB and IB-IF-MIB, with the little history IF-MIB needs
//! across snapshots (ifLastChange, ifCounterDiscontinuityTime,
//! ifTableLastChange).
//!
//! A snapshot is immutable, but those three objects are "sysUpTime when
//! something changed", which only a comparison with the previous snapshot can
//! tell. That history is an [`IfHistory`] owned by the publisher
//! (`crate::core::publish::Publisher`), which folds in each snapshot in publication
//! order on the source thread; requests only read the [`Interfaces`] it
//! produced.
//!
//! Times are kept as `Instant`s converted once from the snapshot's
//! `SystemTime`s, so the TimeTicks served for an event never jitter between
//! requests; `None` means "before this agent started" and is served as 0,
//! as RFC 2863 asks for changes before the last re-initialization.

use std::collections::{HashMap, HashSet};
use std::time::{Instant, SystemTime};

use ib::model::counters::IfCounters;
use ib::model::{NodeIdx, PortIdx, Snapshot};
use ib::types::{Guid, Vl};
use snmp::index::{IndexCodec, Integer};
use snmp::table::RowSet;

use super::port::{self, AdminStatus, OperStatus};
use crate::core::node::HOST_IF_INDEX_STRIDE;

/// The per-VL traffic attributes ibIfVLTrafficTable reads.
const VL_TRAFFIC: u8 =
    ib::model::counters::detail::VL_OP_PACKETS | ib::model::counters::detail::VL_OP_DATA;

/// One ifTable/ifXTable row: a port of the local node.
#[derive(Clone, Debug)]
pub struct IfRow {
    pub if_index: u32,
    /// The node the port is on.
    pub node_guid: Guid,
    /// Its ifIndex in its node's own context (a host's context numbers
    /// its adapters' ports apart; what is set over SNMP is kept by this).
    pub node_if_index: u32,
    /// The port in the snapshot.
    pub port: PortIdx,
    pub port_num: u8,
    pub descr: String,
    pub name: String,
    pub mtu: i32,
    /// Effective data rate, Mb/s (0 when unknown).
    pub speed_mbps: u64,
    pub phys_address: Vec<u8>,
    pub admin: AdminStatus,
    pub oper: OperStatus,
    /// When ifOperStatus last changed (None: not since the agent started).
    pub last_change: Option<Instant>,
    /// The draft-ietf-ipoib-ibif-mib 2.4 counters over the 64-bit totals.
    /// While the PMA was never read: all zero in the default context (as
    /// always), None (no counter instances) in a node's context.
    pub counters: Option<IfCounters>,
    /// Whether the octets of `counters` are current: in a node context,
    /// once the PMA's flow-control counters were read (else ifHC*Octets
    /// are absent rather than short of them).
    pub octets: bool,
    /// When the totals last restarted (None: not since the agent started).
    pub discontinuity: Option<Instant>,
}

/// One ibIfVLTrafficTable row.
#[derive(Clone, Debug)]
pub struct VlRow {
    pub if_index: u32,
    pub port: PortIdx,
    pub vl: Vl,
}

/// One ibIpoibLinkLayerAddrTable row.
#[derive(Clone, Debug)]
pub struct IpoibRow {
    pub if_index: u32,
    /// 1.. per interface, in the order the snapshot lists them.
    pub index: u32,
    /// IbIpoibClientIdentifier octets.
    pub client_id: [u8; 20],
}

/// The local node's interfaces in one snapshot.
#[derive(Debug, Default)]
pub struct Interfaces {
    pub ifs: RowSet<IfRow>,
    /// ifStackTable rows (higher, lower): (0, i) and (i, 0) for every
    /// interface, as RFC 2863 shows interfaces with no layering.
    pub stack: RowSet<(u32, u32)>,
    pub vls: RowSet<VlRow>,
    pub ipoib: RowSet<IpoibRow>,
    /// When an ifTable row was last created or deleted.
    pub table_last_change: Option<Instant>,
    /// Whether the times above come from this agent's history of the node
    /// (the default context's publisher). A node's context is derived on
    /// request with no history: its ifLastChange, ifTableLastChange and
    /// ifStackLastChange are absent (no time this agent could vouch for).
    pub history: bool,
}

/// The `Instant` of a wall-clock time (now when it lies in the future).
fn instant_of(t: SystemTime) -> Instant {
    let now = Instant::now();
    match SystemTime::now().duration_since(t) {
        Ok(ago) => now.checked_sub(ago).unwrap_or(now),
        Err(_) => now,
    }
}

/// The IbIpoibClientIdentifier of an IPoIB link-layer address.
///
/// Linux (and RFC 4391) lay the 20 octets out as reserved/flags (1), QPN (3),
/// GID (16); IB-TC-MIB's IbIpoibClientIdentifier is GID (16), QPN (3),
/// reserved (1). The octets are rotated, nothing is lost.
pub fn client_identifier(address: &[u8; 20]) -> [u8; 20] {
    let gid = address.iter().skip(4);
    let qpn = address.iter().skip(1).take(3);
    let flags = address.iter().take(1);
    let mut out = [0u8; 20];
    for (o, b) in out.iter_mut().zip(gid.chain(qpn).chain(flags)) {
        *o = *b;
    }
    out
}

#[derive(Clone, Debug)]
struct PortHistory {
    oper: OperStatus,
    last_change: Option<Instant>,
    /// The model's discontinuity time (None: no counters yet).
    disc_source: Option<SystemTime>,
    discontinuity: Option<Instant>,
}

/// What IF-MIB remembers from one published snapshot to the next. One per
/// publisher (so per source); a fresh one treats its first snapshot as what
/// the agent found at start (nothing changed since).
#[derive(Debug, Default)]
pub struct IfHistory {
    /// Whether a snapshot with a local node was folded in: what the agent
    /// saw before that (an empty placeholder snapshot) is not a change.
    seen_local: bool,
    ports: HashMap<(Guid, u8), PortHistory>,
    if_indexes: HashSet<u32>,
    table_last_change: Option<Instant>,
    /// Added to every ifIndex (see [`IfHistory::with_if_index_offset`]).
    if_index_offset: u32,
}

struct LocalPort {
    key: (Guid, u8),
    idx: PortIdx,
    if_index: u32,
    oper: OperStatus,
    disc: Option<SystemTime>,
}

fn local_ports(s: &Snapshot, offset: u32) -> (Option<NodeIdx>, Vec<LocalPort>) {
    match s.local_node {
        Some(n) => node_ports(s, n, offset, None),
        None => (None, Vec::new()),
    }
}

/// The interfaces of node `n` (each port with an ifIndex).
fn node_ports(
    s: &Snapshot,
    n: NodeIdx,
    offset: u32,
    only: Option<&[u32]>,
) -> (Option<NodeIdx>, Vec<LocalPort>) {
    let Some(node) = s.node(n) else {
        return (None, Vec::new());
    };
    let wanted = |num: u8| {
        only.is_none_or(|only| {
            port::if_index(node, num)
                .and_then(|i| i.checked_add(offset))
                .is_some_and(|i| only.contains(&i))
        })
    };
    let ports = node
        .ports
        .clone()
        .filter_map(|i| {
            let p = s.port(i)?;
            if !wanted(p.num.0) {
                return None;
            }
            Some(LocalPort {
                key: (node.info.node_guid, p.num.0),
                idx: i,
                if_index: port::if_index(node, p.num.0)?.checked_add(offset)?,
                oper: port::oper_status(p.info.port_state(), p.info.phys_state()),
                disc: p.counters.as_deref().map(|c| c.discontinuity),
            })
        })
        .collect();
    (Some(n), ports)
}

impl IfHistory {
    /// A history whose interfaces are numbered from `offset + 1` on: in AgentX
    /// mode the master's own ifTable (the host's netdevs, kernel ifindex) shares
    /// the ifIndex space, and the master does not consult AgentX index
    /// allocations for its own rows, so a fixed offset is what keeps them apart.
    pub fn with_if_index_offset(offset: u32) -> Self {
        IfHistory {
            if_index_offset: offset,
            ..IfHistory::default()
        }
    }

    /// Folds in the next published snapshot and derives its interfaces.
    pub fn derive(&mut self, s: &Snapshot) -> Interfaces {
        let (node, ports) = local_ports(s, self.if_index_offset);
        self.advance(s, node, &ports);
        Interfaces::build(s, &[(node, ports)], Some(self))
    }

    /// Folds in the next snapshot's states.
    fn advance(&mut self, s: &Snapshot, node: Option<NodeIdx>, ports: &[LocalPort]) {
        let first = !self.seen_local;
        self.seen_local |= node.is_some();
        let when = instant_of(s.sweep.time);
        let mut next = HashMap::with_capacity(ports.len());
        for p in ports {
            let h = match self.ports.get(&p.key) {
                Some(old) => PortHistory {
                    oper: p.oper,
                    last_change: if old.oper == p.oper {
                        old.last_change
                    } else {
                        Some(when)
                    },
                    disc_source: p.disc,
                    discontinuity: if old.disc_source == p.disc {
                        old.discontinuity
                    } else {
                        p.disc.map(instant_of)
                    },
                },
                // Known since the agent's first sweep: nothing changed
                // since the agent started.
                None if first => PortHistory {
                    oper: p.oper,
                    last_change: None,
                    disc_source: p.disc,
                    discontinuity: None,
                },
                None => PortHistory {
                    oper: p.oper,
                    last_change: Some(when),
                    disc_source: p.disc,
                    discontinuity: p.disc.map(instant_of),
                },
            };
            next.insert(p.key, h);
        }
        let if_indexes: HashSet<u32> = ports.iter().map(|p| p.if_index).collect();
        if !first && if_indexes != self.if_indexes {
            self.table_last_change = Some(when);
        }
        self.ports = next;
        self.if_indexes = if_indexes;
    }
}

impl Interfaces {
    /// The interfaces of `s` alone, with no history (as if `s` were the
    /// agent's first snapshot): tests and one-off uses. The agent derives
    /// them through its publisher ([`IfHistory::derive`]).
    pub fn standalone(s: &Snapshot) -> Interfaces {
        IfHistory::default().derive(s)
    }

    /// The interfaces of any node `n` of `s`, derived now with no history:
    /// a node's context (ifIndex by the same IbPort convention, no offset:
    /// node contexts are not served over AgentX). Unread counters are
    /// absent; ifCounterDiscontinuityTime is the model's restart of the
    /// totals (0 when before this agent started).
    pub fn of_node(s: &Snapshot, n: NodeIdx) -> Interfaces {
        Interfaces::of_nodes(s, &[n])
    }

    /// The interfaces of the nodes of one context, derived now with no
    /// history ([`Interfaces::of_node`]): one node's, or a host's adapters
    /// in order, adapter k's ports numbered from
    /// `k * HOST_IF_INDEX_STRIDE` on (so the first is numbered as alone).
    pub fn of_nodes(s: &Snapshot, nodes: &[NodeIdx]) -> Interfaces {
        Interfaces::of_nodes_only(s, nodes, None)
    }

    /// [`Interfaces::of_nodes`] with only the interfaces whose ifIndex is
    /// in `only` (None: all): what a request that reads those rows alone
    /// needs, each row as the whole set has it (a row's columns read its
    /// port only).
    pub fn of_nodes_only(s: &Snapshot, nodes: &[NodeIdx], only: Option<&[u32]>) -> Interfaces {
        let groups: Vec<(Option<NodeIdx>, Vec<LocalPort>)> = nodes
            .iter()
            .zip(0u32..)
            .map(|(n, k)| node_ports(s, *n, k.saturating_mul(HOST_IF_INDEX_STRIDE), only))
            .collect();
        Interfaces::build(s, &groups, None)
    }

    fn build(
        s: &Snapshot,
        groups: &[(Option<NodeIdx>, Vec<LocalPort>)],
        h: Option<&IfHistory>,
    ) -> Self {
        let mut ifs = Vec::new();
        let mut vls = Vec::new();
        let mut by_port = HashMap::new();
        for (node, ports) in groups {
            let Some(n) = *node else { continue };
            let Some(node_ref) = s.node(n) else { continue };
            let device = port::device_name(s, node_ref);
            for lp in ports {
                let Some(p) = s.port(lp.idx) else { continue };
                let hist = h.and_then(|h| h.ports.get(&lp.key));
                let state = p.counters.as_deref();
                let counters = state
                    .map(|c| IfCounters::from_totals(&c.totals))
                    .or_else(|| h.map(|_| IfCounters::default()));
                let discontinuity = match h {
                    Some(_) => hist.and_then(|x| x.discontinuity),
                    None => state.map(|c| instant_of(c.discontinuity)),
                };
                // The octets' flow-control term (002 2.4) is current in a node
                // context only once its PMA was read for it (node contexts ask
                // for it: `ib::source::demand`); the default context's local
                // node reads it every sweep.
                let octets = h.is_some()
                    || state.is_some_and(|c| c.is_settled(ib::model::counters::detail::FLOW_CTL));
                let has_vl = state.is_some_and(|c| {
                    let r = &c.readings;
                    let held = r.vl_op_packets.is_some() || r.vl_op_data.is_some();
                    held && (h.is_some() || c.is_current(VL_TRAFFIC))
                });
                if has_vl {
                    for vl in data_vls(&p.info).chain([Vl::VL15]) {
                        vls.push(VlRow {
                            if_index: lp.if_index,
                            port: lp.idx,
                            vl,
                        });
                    }
                }
                by_port.insert(lp.idx, lp.if_index);
                let down = lp.oper == port::OperStatus::Down;
                // A link that is down has no operational width or speed: its
                // PortInfo's active ones are left from the last link (002 2.2:
                // LinkWidthActive "if valid").
                let link = if down { None } else { port::active_link(s, p) };
                ifs.push(IfRow {
                    if_index: lp.if_index,
                    node_guid: lp.key.0,
                    node_if_index: port::if_index(node_ref, p.num.0).unwrap_or(lp.if_index),
                    port: lp.idx,
                    port_num: p.num.0,
                    descr: port::descr(&device, p.num.0, link),
                    name: port::name(&device, p.num.0),
                    mtu: port::mtu(&p.info),
                    speed_mbps: port::speed_mbps(link),
                    phys_address: port::phys_address(port::base_lid(s, n, &p.info)),
                    admin: port::admin_status(p.info.phys_state()),
                    oper: lp.oper,
                    last_change: hist.and_then(|x| x.last_change),
                    counters,
                    octets,
                    discontinuity,
                });
            }
        }
        let mut per_if: HashMap<u32, u32> = HashMap::new();
        let ipoib: Vec<IpoibRow> = s
            .ipoib
            .iter()
            .filter_map(|i| {
                let if_index = *by_port.get(&i.port)?;
                let k = per_if.entry(if_index).or_insert(0);
                *k += 1;
                Some(IpoibRow {
                    if_index,
                    index: *k,
                    client_id: client_identifier(&i.address),
                })
            })
            .collect();
        let stack = ifs
            .iter()
            .flat_map(|r| [(0, r.if_index), (r.if_index, 0)])
            .collect::<Vec<_>>();
        Interfaces {
            ifs: RowSet::from_rows(ifs, |r, out| out.push(r.if_index)),
            stack: RowSet::from_rows(stack, |&(hi, lo), out| {
                Integer::encode(&i32::try_from(hi).unwrap_or(0), out);
                Integer::encode(&i32::try_from(lo).unwrap_or(0), out);
            }),
            vls: RowSet::from_rows(vls, |r, out| {
                out.push(r.if_index);
                out.push(u32::from(r.vl.raw()));
            }),
            ipoib: RowSet::from_rows(ipoib, |r, out| {
                out.push(r.if_index);
                out.push(r.index);
            }),
            table_last_change: h.and_then(|h| h.table_last_change),
            history: h.is_some(),
        }
    }
}

/// The data VLs a port operates (PortInfo OperationalVLs: 1 = VL0,
/// 2 = VL0-1, 3 = VL0-3, 4 = VL0-7, 5 = VL0-14; VLCap when unset; at least VL0).
fn data_vls(info: &ib::mad::smp::PortInfo) -> impl Iterator<Item = Vl> {
    let code = match info.operational_vls {
        0 => info.vl_cap,
        c => c,
    };
    let count: u8 = match code {
        0 | 1 => 1,
        2 => 2,
        3 => 4,
        4 => 8,
        _ => 15,
    };
    (0..count).map(Vl::from_bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_identifier_reorders_linux_address() {
        let mut addr = [0u8; 20];
        addr[0] = 0x80; // flags
        addr[1..4].copy_from_slice(&[0x00, 0x00, 0x48]); // QPN
        for (i, b) in addr[4..].iter_mut().enumerate() {
            *b = 0xA0 + i as u8; // GID
        }
        let id = client_identifier(&addr);
        assert_eq!(&id[..16], &addr[4..]);
        assert_eq!(&id[16..19], &[0x00, 0x00, 0x48]);
        assert_eq!(id[19], 0x80);
    }

    #[test]
    fn ticks() {
        let t0 = Instant::now();
        use crate::core::value::ticks_at;
        assert_eq!(ticks_at(t0, None), 0);
        assert_eq!(
            ticks_at(t0, Some(t0 + std::time::Duration::from_millis(1234))),
            123
        );
    }

    #[test]
    fn vls_from_operational_vls() {
        let mut pi = ib::mad::smp::PortInfo::default();
        assert_eq!(data_vls(&pi).count(), 1);
        pi.vl_cap = 4;
        assert_eq!(data_vls(&pi).count(), 8);
        pi.operational_vls = 2;
        assert_eq!(data_vls(&pi).count(), 2);
        pi.operational_vls = 5;
        assert_eq!(data_vls(&pi).map(|v| v.raw()).max(), Some(14));
    }
}
