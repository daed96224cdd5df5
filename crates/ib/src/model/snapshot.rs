//! The immutable fabric snapshot and its builder.
//!
//! Attributes are stored as the MADs deliver them (the `mad` structs), so the
//! simulator and the real sources fill the same structures. Ports of all nodes
//! live in one vector (a node owns a contiguous range, port 0 first on a
//! switch), and lookups by GUID, LID and (node, port) go through indexes built
//! once per snapshot.

use super::accum::{advance, CounterHistory, PortCounterState};
use super::counters::PortReadings;
use crate::mad::pma::{ClassPortInfo, PortSamplesControl, PortSamplesResult};
use crate::mad::sa::{McMemberRecord, ServiceRecord};
use crate::mad::smp::{NodeInfo, PortInfo, SmInfo, SwitchInfo};
use crate::types::{Gid, Guid, Lid, LinkSpeed, NodeType, PKey, PortNum, PortState};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Index of a node in [`Snapshot::nodes`].
pub type NodeIdx = u32;
/// Index of a port in [`Snapshot::ports`].
pub type PortIdx = u32;

/// When and how a snapshot was taken.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepInfo {
    /// 1 for the first sweep of a source, then +1 each sweep.
    pub number: u64,
    /// When the sweep started (the time events and counter readings carry).
    pub time: SystemTime,
    pub duration: Duration,
    /// The source spec that produced it (`sim`, `umad:mlx5_0:1`, ...).
    pub source: String,
    /// What the sweep cost per phase (sources that send MADs fill it).
    pub cost: SweepCost,
}

/// One phase of a sweep: how long it took and the MADs it sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhaseCost {
    pub duration: Duration,
    /// MADs sent, retries included.
    pub sent: u64,
    /// Queries that failed for good.
    pub failed: u64,
    /// Attempts that got no answer in time.
    pub timeouts: u64,
}

/// A sweep's cost by MAD class: discovery (SMPs), SA queries, PMA polling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepCost {
    pub discovery: PhaseCost,
    pub sa: PhaseCost,
    pub pma: PhaseCost,
    /// SA answers cut short (RMPP transfers that did not complete) since the
    /// source started: cumulative, unlike the phases.
    pub sa_answers_cut: u64,
}

/// A node: NodeInfo and NodeDescription as the SMA reports them.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub info: NodeInfo,
    pub description: String,
    /// Its ports in [`Snapshot::ports`] (switch: port 0..=NumPorts; CA: 1..=NumPorts).
    pub ports: std::ops::Range<PortIdx>,
    pub switch: Option<Box<SwitchData>>,
    /// The PMA's ClassPortInfo (None when the PMA did not answer).
    pub pma: Option<Box<ClassPortInfo>>,
    /// PortSamplesControl/Result of the PMA (None when not supported).
    pub sampling: Option<Box<Sampling>>,
}

/// What a switch adds: SwitchInfo and its linear forwarding table.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchData {
    pub info: SwitchInfo,
    /// Output port per LID (index = LID, up to LinearFDBTop); 255 = none.
    /// Shared between snapshots while routing is unchanged.
    pub lft: Arc<[u8]>,
}

/// A PMA's sampling engine state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sampling {
    pub control: PortSamplesControl,
    pub result: PortSamplesResult,
}

/// A port as SMP and PMA see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    pub node: NodeIdx,
    pub num: PortNum,
    /// PortGUID (a switch's ports all share port 0's).
    pub guid: Guid,
    pub info: PortInfo,
    /// The port at the other end of the link.
    pub remote: Option<PortIdx>,
    /// P_KeyTable (shared between ports with the same table).
    pub pkeys: Arc<[PKey]>,
    /// GUIDInfo: the port's GUIDs (index 0 = PortGUID); empty on switch external ports.
    pub guids: Arc<[Guid]>,
    /// Last readings and 64-bit totals (None: the PMA was never read).
    pub counters: Option<Arc<PortCounterState>>,
}

/// SMInfo of one SM port, with where it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct SmRecord {
    pub lid: Lid,
    pub port: Option<PortIdx>,
    pub info: SmInfo,
    /// The SM answered this sweep (the SA's SMInfoRecord, or SMInfo at its
    /// port). False: it did not; `info` is its last answer with SMState
    /// notActive, and its ActCount is not current.
    pub answering: bool,
}

/// One partition: its P_Key and member ports.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    pub pkey: PKey,
    pub members: Vec<PartitionMember>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionMember {
    pub port_guid: Guid,
    pub full: bool,
}

/// A multicast group: its parameters and member records (as MCMemberRecords).
#[derive(Debug, Clone, PartialEq)]
pub struct McastGroup {
    /// The group's record (MGID, MLID, Q_Key, P_Key, MTU, rate, SL, scope...).
    pub group: McMemberRecord,
    /// One record per member port (PortGID, JoinState, ProxyJoin).
    pub members: Vec<McMemberRecord>,
}

/// An IPoIB network interface over a port (a Linux netdev such as `ib0` or the
/// P_Key child `ib0.8001`; the simulator synthesizes them).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IpoibInterface {
    /// The port it runs over.
    pub port: PortIdx,
    /// Interface name.
    pub name: String,
    /// Its 20-octet link-layer address, which is also its IPoIB client
    /// identifier (IB-TC-MIB IbIpoibClientIdentifier): 1 octet of flags and the
    /// 3-octet QPN, then the port's 16-octet GID.
    pub address: [u8; 20],
}

/// An immutable view of the fabric after one sweep.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub sweep: SweepInfo,
    pub subnet_prefix: u64,
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub sms: Vec<SmRecord>,
    pub partitions: Vec<Partition>,
    pub mcast_groups: Vec<McastGroup>,
    pub services: Vec<ServiceRecord>,
    /// "This system" for IF-MIB.
    pub local_node: Option<NodeIdx>,
    /// IPoIB interfaces of the local node's ports (ibIpoibLinkLayerAddrTable).
    pub ipoib: Vec<IpoibInterface>,
    /// The local node's CA device name as the host knows it (`mlx5_0`):
    /// the sysfs device directory or the CA the umad source opened; None when
    /// the source has no such name (the simulator).
    pub local_ca: Option<String>,
    index: Index,
}

#[derive(Debug, Clone, Default)]
struct Index {
    node_by_guid: HashMap<Guid, NodeIdx>,
    port_by_guid: HashMap<Guid, PortIdx>,
    /// End port per unicast LID (LMC ranges included); u32::MAX = none.
    port_by_lid: Vec<PortIdx>,
}

const NONE: u32 = u32::MAX;

impl Snapshot {
    pub fn node(&self, i: NodeIdx) -> Option<&Node> {
        self.nodes.get(i as usize)
    }
    pub fn port(&self, i: PortIdx) -> Option<&Port> {
        self.ports.get(i as usize)
    }
    pub fn node_by_guid(&self, g: Guid) -> Option<NodeIdx> {
        self.index.node_by_guid.get(&g).copied()
    }
    /// The end port with this PortGUID (CA ports, switch port 0).
    pub fn port_by_guid(&self, g: Guid) -> Option<PortIdx> {
        self.index.port_by_guid.get(&g).copied()
    }
    /// The end port answering a unicast LID (any LID of its LMC range).
    pub fn port_by_lid(&self, lid: Lid) -> Option<PortIdx> {
        self.index
            .port_by_lid
            .get(usize::from(lid.0))
            .copied()
            .filter(|p| *p != NONE)
    }
    /// Port `num` of node `n`.
    pub fn node_port(&self, n: NodeIdx, num: PortNum) -> Option<PortIdx> {
        let node = self.node(n)?;
        let first = node.ports.start;
        let base = if node.info.node_type() == Some(NodeType::Switch) {
            0
        } else {
            1
        };
        let direct = u32::from(num.0)
            .checked_sub(base)
            .and_then(|off| first.checked_add(off))
            .filter(|i| *i < node.ports.end && self.port(*i).is_some_and(|p| p.num == num));
        // A node may leave ports out (sysfs skips RoCE ports): then search.
        direct.or_else(|| {
            node.ports
                .clone()
                .find(|i| self.port(*i).is_some_and(|p| p.num == num))
        })
    }
    /// Port `num` of the node with GUID `g`.
    pub fn port_of(&self, g: Guid, num: PortNum) -> Option<PortIdx> {
        self.node_port(self.node_by_guid(g)?, num)
    }
    /// The port's active link speed. On a switch, port 0's CapabilityMask
    /// says whether the external ports' extended-speed fields are valid
    /// (theirs is reserved), so FDR..XDR switch links read right.
    pub fn port_speed(&self, port: &Port) -> Option<LinkSpeed> {
        let node = self.node(port.node)?;
        let cap = if node.info.node_type() == Some(NodeType::Switch) {
            self.node_port(port.node, PortNum(0))
                .and_then(|p0| self.port(p0))
                .map_or(port.info.capability_mask, |p0| p0.info.capability_mask)
        } else {
            port.info.capability_mask
        };
        port.info.link_speed_with(cap, false)
    }
    /// The ports the agent reports as ports (its log, `ctl status`,
    /// `ibsnmpd_fabric_ports`, `ibsnmpd health`, IF-MIB): all but switch
    /// port 0, the switch's management port, which has no link.
    pub fn port_count(&self) -> usize {
        self.ports
            .iter()
            .filter(|p| {
                p.num.0 != 0
                    || self
                        .node(p.node)
                        .is_some_and(|n| n.info.node_type() != Some(NodeType::Switch))
            })
            .count()
    }
    pub fn node_ports(&self, n: NodeIdx) -> &[Port] {
        self.node(n)
            .and_then(|node| {
                self.ports
                    .get(node.ports.start as usize..node.ports.end as usize)
            })
            .unwrap_or(&[])
    }
    /// The node's own LID (switch: port 0's; CA: its first port with a LID).
    /// The LID a PMA query about port `num` of node `g` goes to: a switch's
    /// management LID (one PMA for all its ports), an HCA port's own LID (each
    /// port has its own PMA, reached only through that port). None when the
    /// node is unknown or has no LID.
    pub fn pma_lid(&self, g: Guid, num: PortNum) -> Option<Lid> {
        let n = self.node_by_guid(g)?;
        let node = self.node(n)?;
        let lid = if node.info.node_type() == Some(NodeType::Switch) {
            self.node_lid(n)
        } else {
            self.port_of(g, num)
                .and_then(|p| self.port(p))
                .map(|p| p.info.lid)
                .filter(|l| l.0 != 0)
                .unwrap_or_else(|| self.node_lid(n))
        };
        (lid.0 != 0).then_some(lid)
    }

    pub fn node_lid(&self, n: NodeIdx) -> Lid {
        self.node_ports(n)
            .iter()
            .map(|p| p.info.lid)
            .find(|l| l.0 != 0)
            .unwrap_or(Lid(0))
    }
    /// Each link once, as (port, remote port) with port < remote port.
    pub fn links(&self) -> impl Iterator<Item = (PortIdx, PortIdx)> + '_ {
        self.ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.remote.filter(|r| (i as u32) < *r).map(|r| (i as u32, r)))
    }
    pub fn local_node(&self) -> Option<&Node> {
        self.local_node.and_then(|i| self.node(i))
    }
    /// The master SM's record (SMState master, answering).
    pub fn master_sm(&self) -> Option<&SmRecord> {
        self.sms
            .iter()
            .find(|s| s.answering && s.info.sm_state() == Some(crate::types::SmState::Master))
    }
    /// A port's GID with the subnet prefix.
    pub fn port_gid(&self, p: PortIdx) -> Option<Gid> {
        self.port(p).map(|p| Gid::new(self.subnet_prefix, p.guid))
    }
    /// Whether a port is an end port (has its own LID): CA/router ports, switch port 0.
    pub fn is_end_port(&self, p: &Port) -> bool {
        self.node(p.node)
            .is_some_and(|n| n.info.node_type() != Some(NodeType::Switch) || p.num.0 == 0)
    }
    /// A port's logical state.
    pub fn port_state(&self, p: &Port) -> Option<PortState> {
        p.info.port_state()
    }
}

/// Collects a sweep's results and builds the [`Snapshot`] (indexes, accumulated
/// counters). Sources fill it the same way whatever they talk to.
#[derive(Debug, Default)]
pub struct SnapshotBuilder {
    pub subnet_prefix: u64,
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// This sweep's PMA readings per port index (None: not read this sweep).
    pub readings: Vec<Option<PortReadings>>,
    pub sms: Vec<SmRecord>,
    pub partitions: Vec<Partition>,
    pub mcast_groups: Vec<McastGroup>,
    pub services: Vec<ServiceRecord>,
    pub local_node: Option<NodeIdx>,
    /// IPoIB interfaces (see [`Snapshot::ipoib`]).
    pub ipoib: Vec<IpoibInterface>,
    /// See [`Snapshot::local_ca`].
    pub local_ca: Option<String>,
}

impl SnapshotBuilder {
    pub fn new(subnet_prefix: u64) -> Self {
        Self {
            subnet_prefix,
            ..Self::default()
        }
    }

    pub fn with_capacity(subnet_prefix: u64, nodes: usize, ports: usize) -> Self {
        Self {
            subnet_prefix,
            nodes: Vec::with_capacity(nodes),
            ports: Vec::with_capacity(ports),
            readings: Vec::with_capacity(ports),
            ..Self::default()
        }
    }

    /// Adds a node and its ports (in port-number order, port 0 first on a switch).
    /// Port `node`/`remote` fields are set here and by [`SnapshotBuilder::link`].
    pub fn add_node(&mut self, mut node: Node, ports: Vec<Port>) -> NodeIdx {
        let idx = self.nodes.len() as NodeIdx;
        let start = self.ports.len() as PortIdx;
        for mut p in ports {
            p.node = idx;
            p.remote = None;
            self.ports.push(p);
            self.readings.push(None);
        }
        node.ports = start..self.ports.len() as PortIdx;
        self.nodes.push(node);
        idx
    }

    /// Connects two ports (both directions).
    pub fn link(&mut self, a: PortIdx, b: PortIdx) {
        if let Some(p) = self.ports.get_mut(a as usize) {
            p.remote = Some(b);
        }
        if let Some(p) = self.ports.get_mut(b as usize) {
            p.remote = Some(a);
        }
    }

    /// Records this sweep's PMA readings of a port.
    pub fn set_readings(&mut self, p: PortIdx, r: PortReadings) {
        if self.readings.len() < self.ports.len() {
            self.readings.resize(self.ports.len(), None);
        }
        if let Some(slot) = self.readings.get_mut(p as usize) {
            *slot = Some(r);
        }
    }

    /// Builds the snapshot. Counter totals continue from `history` (the states
    /// of the source's previous sweep) for ports present in both, keyed by
    /// (node GUID, port number); ports not read this sweep keep their previous
    /// state; ports absent from this sweep leave the history, so their return is
    /// a discontinuity. `history` is updated to this sweep's states.
    pub fn build(self, sweep: SweepInfo, history: &mut CounterHistory) -> Snapshot {
        self.build_with(sweep, history, |_| None)
    }

    /// [`SnapshotBuilder::build`], asking `read` for the readings of ports that
    /// [`SnapshotBuilder::set_readings`] did not fill (so a source that reads
    /// on demand never holds a second copy of every port's readings). Ports are
    /// processed on all cores.
    pub fn build_with(
        self,
        sweep: SweepInfo,
        history: &mut CounterHistory,
        read: impl Fn(PortIdx) -> Option<PortReadings> + Sync,
    ) -> Snapshot {
        let SnapshotBuilder {
            subnet_prefix,
            nodes,
            mut ports,
            mut readings,
            sms,
            partitions,
            mcast_groups,
            services,
            local_node,
            ipoib,
            local_ca,
        } = self;
        let now = sweep.time;
        let keys: Vec<(Guid, PortNum)> = ports
            .iter()
            .map(|p| {
                let g = nodes
                    .get(p.node as usize)
                    .map_or(Guid(0), |n| n.info.node_guid);
                (g, p.num)
            })
            .collect();
        let mut prev = history.take_aligned(&keys);
        readings.resize(ports.len(), None);
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8);
        let chunk = ports.len().div_ceil(threads).max(1024);
        let read = &read;
        std::thread::scope(|scope| {
            let mut offset = 0usize;
            let mut handles = Vec::new();
            for ((ps, rs), pv) in ports
                .chunks_mut(chunk)
                .zip(readings.chunks_mut(chunk))
                .zip(prev.chunks_mut(chunk))
            {
                let base = offset;
                offset += ps.len();
                let mut work = move || {
                    for (j, ((port, r), pv)) in ps
                        .iter_mut()
                        .zip(rs.iter_mut())
                        .zip(pv.iter_mut())
                        .enumerate()
                    {
                        let r = r.take().or_else(|| read((base + j) as PortIdx));
                        let prev = pv.take();
                        port.counters = match (r, prev) {
                            (Some(r), prev) => Some(Arc::new(advance(prev.as_deref(), r, now))),
                            (None, Some(ps)) => Some(ps),
                            (None, None) => port.counters.take(),
                        };
                    }
                };
                if threads == 1 {
                    work();
                } else {
                    handles.push(scope.spawn(work));
                }
            }
            for h in handles {
                let _ = h.join();
            }
        });
        history.states = ports.iter().map(|p| p.counters.clone()).collect();
        history.keys = keys;
        let index = build_index(&nodes, &ports);
        Snapshot {
            sweep,
            subnet_prefix,
            nodes,
            ports,
            sms,
            partitions,
            mcast_groups,
            services,
            local_node,
            ipoib,
            local_ca,
            index,
        }
    }
}

fn build_index(nodes: &[Node], ports: &[Port]) -> Index {
    let mut node_by_guid = HashMap::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        node_by_guid.insert(n.info.node_guid, i as NodeIdx);
    }
    let mut port_by_guid = HashMap::with_capacity(nodes.len() * 2);
    let mut port_by_lid: Vec<PortIdx> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let Some(node) = nodes.get(p.node as usize) else {
            continue;
        };
        let end_port = node.info.node_type() != Some(NodeType::Switch) || p.num.0 == 0;
        if !end_port {
            continue;
        }
        port_by_guid.entry(p.guid).or_insert(i as PortIdx);
        let lid = p.info.lid;
        if lid.is_unicast() {
            for l in lid.lmc_range(p.info.lmc) {
                let l = usize::from(l);
                if l > usize::from(Lid::UNICAST_MAX.0) {
                    break;
                }
                if port_by_lid.len() <= l {
                    port_by_lid.resize(l + 1, NONE);
                }
                if let Some(slot) = port_by_lid.get_mut(l) {
                    *slot = i as PortIdx;
                }
            }
        }
    }
    Index {
        node_by_guid,
        port_by_guid,
        port_by_lid,
    }
}
