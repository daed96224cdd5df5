//! Bring-up of a simulated fabric, as a master SM would do it once: node and
//! port attributes, LIDs, min-hop linear forwarding tables, SMInfo, the
//! default partition and the IPoIB broadcast group.

use super::PortFaults;
use crate::mad::pma::{cap, ClassPortInfo};
use crate::mad::sa::{McMemberRecord, ServiceRecord};
use crate::mad::smp::{port_cap, NodeInfo, PortInfo, SmInfo, SwitchInfo};
use crate::model::snapshot::{
    McastGroup, Partition, PartitionMember, Sampling, SmRecord, SwitchData,
};
use crate::model::{Node, NodeIdx, Port, PortIdx, SnapshotBuilder};
use crate::source::SourceError;
use crate::topology::{TopoNode, Topology};
use crate::types::{
    Gid, Guid, Lid, LinkSpeed, LinkWidth, NodeType, PKey, PhysPortState, PortNum, PortState,
    SmState,
};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

const NONE: u32 = u32::MAX;
/// Mellanox's vendor id, and ConnectX-6 / Quantum device ids, for nodes the
/// topology gives none.
const DEFAULT_VENDOR: u32 = 0x02c9;
const DEFAULT_CA_DEVICE: u16 = 0x101b;
const DEFAULT_SWITCH_DEVICE: u16 = 0xcf08;
/// IPoIB IPv4 broadcast group of the default partition (RFC 4391).
pub const IPOIB_BROADCAST_MGID: &str = "ff12:401b:ffff::ffff:ffff";
pub const IPOIB_BROADCAST_MLID: Lid = Lid(0xC000);
/// Set in a CA port's GUID to make its alias GUID (EUI-64 locally
/// administered bit).
pub const ALIAS_GUID_BIT: u64 = 0x0200_0000_0000_0000;
/// PortSamplesControl:Tick we report: 0xFF = 2,560 x 0.4 ns.
pub const SAMPLE_TICK: u8 = 0xFF;

/// The static part of a simulated fabric (what does not change between sweeps).
pub struct Fabric {
    pub(crate) nodes: Vec<Node>,
    pub(crate) ports: Vec<Port>,
    pub(crate) sms: Vec<SmRecord>,
    pub(crate) partitions: Vec<Partition>,
    pub(crate) mcast_groups: Vec<McastGroup>,
    pub(crate) services: Vec<ServiceRecord>,
    pub(crate) local_node: NodeIdx,
    pub(crate) subnet_prefix: u64,
    node_by_guid: HashMap<Guid, NodeIdx>,
}

/// "This system": the node `key` names (name, description or GUID), else the
/// first node of the topology, as ibsim attaches clients by default.
pub fn choose_local_node(topo: &Topology, key: Option<&str>) -> Result<NodeIdx, SourceError> {
    if topo.nodes.is_empty() {
        return Err(SourceError::Invalid("the topology has no nodes".into()));
    }
    match key {
        None => Ok(0),
        Some(k) => topo
            .find(k)
            .map(|i| i as NodeIdx)
            .ok_or_else(|| SourceError::NoSuchLocalNode {
                wanted: k.to_string(),
                have: "the simulated fabric".into(),
            }),
    }
}

fn port_info_template(
    t: NodeType,
    num: u8,
    connected: bool,
    width: LinkWidth,
    speed: LinkSpeed,
) -> PortInfo {
    let mut pi = PortInfo {
        gid_prefix: Gid::DEFAULT_SUBNET_PREFIX,
        m_key_lease_period: 0,
        local_port_num: if t == NodeType::Switch { 0 } else { num },
        link_width_enabled: width.raw(),
        link_width_supported: LinkWidth::X1.raw() | LinkWidth::X4.raw(),
        link_speed_supported: 0x7,
        link_down_default_state: 2,
        link_speed_enabled: 0x7,
        neighbor_mtu: 5,
        vl_cap: 4,
        vl_high_limit: 4,
        vl_arbitration_high_cap: 8,
        vl_arbitration_low_cap: 8,
        mtu_cap: 5,
        vl_stall_count: 7,
        hoq_life: 16,
        operational_vls: 4,
        guid_cap: if t == NodeType::Switch && num != 0 {
            0
        } else {
            1
        },
        subnet_timeout: 18,
        resp_time_value: 16,
        capability_mask: port_cap::IS_TRAP_SUPPORTED
            | port_cap::IS_SL_MAPPING_SUPPORTED
            | port_cap::IS_EXTENDED_SPEEDS_SUPPORTED
            | port_cap::IS_CAPABILITY_MASK2_SUPPORTED
            | port_cap::IS_SYSTEM_IMAGE_GUID_SUPPORTED,
        ..PortInfo::default()
    };
    if t != NodeType::Switch {
        pi.capability_mask |= port_cap::IS_COMMUNICATION_MANAGEMENT_SUPPORTED
            | port_cap::IS_VENDOR_CLASS_SUPPORTED
            | port_cap::IS_CLIENT_REREGISTRATION_SUPPORTED;
    }
    let (ext_sup, _) = ext_speed_masks(speed);
    pi.link_speed_ext_supported = ext_sup & 0x0F;
    pi.link_speed_ext_supported2 = (ext_sup >> 4) & 0x03;
    pi.link_speed_ext_enabled = ext_sup & 0x1F;
    let switch_port0 = t == NodeType::Switch && num == 0;
    if connected || switch_port0 {
        pi.port_state = PortState::Active.raw();
        pi.port_physical_state = PhysPortState::LinkUp.raw();
        pi.link_width_active = width.raw();
        pi.set_link_speed(speed);
    } else {
        pi.port_state = PortState::Down.raw();
        pi.port_physical_state = PhysPortState::Polling.raw();
    }
    pi
}

/// LinkSpeedExtSupported mask up to `speed` (FDR=1, EDR=2, HDR=4, NDR=8, XDR=16).
fn ext_speed_masks(speed: LinkSpeed) -> (u8, u8) {
    let top = match speed {
        LinkSpeed::Fdr => 1,
        LinkSpeed::Edr => 2,
        LinkSpeed::Hdr => 4,
        LinkSpeed::Ndr => 8,
        LinkSpeed::Xdr => 16,
        _ => 0,
    };
    let mask = if top == 0 { 0 } else { (top << 1) - 1 };
    (mask, top)
}

/// What every node's records share (one allocation each, not one a port).
struct Shared {
    pkeys: Arc<[PKey]>,
    no_guids: Arc<[Guid]>,
    sampling: Sampling,
}

impl Shared {
    fn new() -> Self {
        let (control, result) = super::sampling::idle();
        Shared {
            pkeys: Arc::from(vec![PKey::DEFAULT]),
            no_guids: Arc::from(Vec::<Guid>::new()),
            sampling: Sampling { control, result },
        }
    }
}

/// A node's ports (port 0 first on a switch) as the SM brings them up,
/// appended to `ports`, not yet linked.
fn node_ports(tn: &TopoNode, ni: NodeIdx, shared: &Shared, ports: &mut Vec<Port>) {
    let t = tn.node_type;
    let first_port = if t == NodeType::Switch { 0 } else { 1 };
    for num in first_port..=tn.num_ports {
        let tp = tn.port(PortNum(num));
        let width = tp.and_then(|p| p.width).unwrap_or(LinkWidth::X4);
        let speed = tp.and_then(|p| p.speed).unwrap_or(LinkSpeed::Sdr);
        let mut info = port_info_template(t, num, tp.is_some(), width, speed);
        let guid = tn.port_guid(PortNum(num));
        let end_port = t != NodeType::Switch || num == 0;
        let guids = if t != NodeType::Switch {
            // One alias GUID per CA port (the locally administered
            // bit set), as a virtual function has; GUIDCap one block.
            info.guid_cap = info.guid_cap.max(8);
            Arc::from(vec![guid, Guid(guid.0 | ALIAS_GUID_BIT)])
        } else if end_port {
            Arc::from(vec![guid])
        } else {
            Arc::clone(&shared.no_guids)
        };
        ports.push(Port {
            node: ni,
            num: PortNum(num),
            guid,
            info,
            remote: None,
            pkeys: Arc::clone(&shared.pkeys),
            guids,
            counters: None,
        });
    }
}

/// A node's record: NodeInfo, SwitchInfo (tables empty until routed), its
/// PMA's ClassPortInfo and idle sampling.
fn node(tn: &TopoNode, ports: std::ops::Range<PortIdx>, shared: &Shared) -> Node {
    let t = tn.node_type;
    let switch = t == NodeType::Switch;
    let info = NodeInfo {
        base_version: 1,
        class_version: 1,
        node_type: t.raw(),
        num_ports: tn.num_ports,
        system_image_guid: tn.sys_image_guid,
        node_guid: tn.node_guid,
        port_guid: if switch {
            tn.port0_guid
        } else {
            tn.port_guid(PortNum(1))
        },
        partition_cap: if switch { 8 } else { 128 },
        device_id: match (tn.device_id, switch) {
            (0, true) => DEFAULT_SWITCH_DEVICE,
            (0, false) => DEFAULT_CA_DEVICE,
            (id, _) => id,
        },
        revision: 0,
        local_port_num: if switch { 0 } else { 1 },
        vendor_id: if tn.vendor_id != 0 {
            tn.vendor_id
        } else {
            DEFAULT_VENDOR
        },
    };
    let pma_cap = cap::IS_EXTENDED_WIDTH_SUPPORTED
        | cap::IS_PORT_COUNTERS_XMIT_WAIT_SUPPORTED
        | if switch { cap::ALL_PORT_SELECT } else { 0 };
    Node {
        info,
        description: tn.description().to_string(),
        ports,
        switch: switch.then(|| switch_data(tn)),
        pma: Some(Box::new(ClassPortInfo {
            base_version: 1,
            class_version: 1,
            capability_mask: pma_cap,
            resp_time_value: 18,
            ..ClassPortInfo::default()
        })),
        sampling: Some(Box::new(shared.sampling.clone())),
    }
}

/// A switch's SwitchInfo, its table empty until the fabric is routed.
fn switch_data(tn: &TopoNode) -> Box<SwitchData> {
    Box::new(SwitchData {
        info: SwitchInfo {
            linear_fdb_cap: 0xC000,
            multicast_fdb_cap: 0x1000,
            life_time_value: 18,
            partition_enforcement_cap: 32,
            inbound_enforcement_cap: true,
            outbound_enforcement_cap: true,
            filter_raw_inbound_cap: true,
            filter_raw_outbound_cap: true,
            enhanced_port0: tn.enhanced_port0.unwrap_or(false),
            ..SwitchInfo::default()
        },
        lft: Arc::from(Vec::<u8>::new()),
    })
}

/// Each switch's distance in hops to switch `d` (breadth-first over the
/// CSR adjacency; u32::MAX: unreachable), into `dist`.
fn hops_to(
    d: usize,
    adj_start: &[u32],
    adj: &[(u32, u8)],
    dist: &mut [u32],
    queue: &mut VecDeque<u32>,
) {
    dist.iter_mut().for_each(|x| *x = u32::MAX);
    dist[d] = 0;
    queue.clear();
    queue.push_back(d as u32);
    while let Some(x) = queue.pop_front() {
        let (a, b) = (
            adj_start[x as usize] as usize,
            adj_start[x as usize + 1] as usize,
        );
        for &(y, _) in &adj[a..b] {
            if dist[y as usize] == u32::MAX {
                dist[y as usize] = dist[x as usize] + 1;
                queue.push_back(y);
            }
        }
    }
}

/// The switch graph routing works on (indexes: a switch's place in
/// `switches`).
struct SwitchGraph {
    switches: Vec<NodeIdx>,
    /// Switch i's neighbours (switch, by port) are `adj[adj_start[i]..adj_start[i + 1]]`.
    adj_start: Vec<u32>,
    adj: Vec<(u32, u8)>,
    /// (base LID, LIDs, port) of the end ports on each switch.
    attached: Vec<Vec<(u16, u16, u8)>>,
    /// The highest LID attached anywhere.
    top: u16,
}

impl Fabric {
    /// Brings up `topo` with the SM on its first node and `local` as this system.
    pub fn build(topo: &Topology, local: NodeIdx, lmc: u8) -> Result<Self, SourceError> {
        if lmc > 7 {
            return Err(SourceError::Invalid(format!("lmc {lmc}: expected 0-7")));
        }
        let mut nodes = Vec::with_capacity(topo.nodes.len());
        let mut ports: Vec<Port> = Vec::with_capacity(topo.num_ports_total());
        let shared = Shared::new();
        let mut node_by_guid = HashMap::with_capacity(topo.nodes.len());
        for (ni, tn) in topo.nodes.iter().enumerate() {
            let start = ports.len() as PortIdx;
            node_ports(tn, ni as NodeIdx, &shared, &mut ports);
            if node_by_guid.insert(tn.node_guid, ni as NodeIdx).is_some() {
                return Err(SourceError::Invalid(format!(
                    "node {:?}: GUID {} used twice",
                    tn.name, tn.node_guid
                )));
            }
            nodes.push(node(tn, start..ports.len() as PortIdx, &shared));
        }
        let mut f = Fabric {
            nodes,
            ports,
            sms: Vec::new(),
            partitions: Vec::new(),
            mcast_groups: Vec::new(),
            services: Vec::new(),
            local_node: local,
            subnet_prefix: Gid::DEFAULT_SUBNET_PREFIX,
            node_by_guid,
        };
        f.link(topo);
        let reached = f.assign_lids(topo, lmc);
        f.route();
        f.apply_lft(topo)?;
        f.sm_and_groups(&reached);
        Ok(f)
    }

    /// Joins the ports of each link of `topo`.
    fn link(&mut self, topo: &Topology) {
        for (a, ap, z, zp) in topo.links() {
            let (Some(pa), Some(pz)) = (
                self.node_port(a as NodeIdx, ap),
                self.node_port(z as NodeIdx, zp),
            ) else {
                continue;
            };
            if let Some(p) = self.ports.get_mut(pa as usize) {
                p.remote = Some(pz);
            }
            if let Some(p) = self.ports.get_mut(pz as usize) {
                p.remote = Some(pa);
            }
        }
    }

    pub fn node_by_guid(&self, g: Guid) -> Option<NodeIdx> {
        self.node_by_guid.get(&g).copied()
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    pub fn node_port(&self, n: NodeIdx, num: PortNum) -> Option<PortIdx> {
        let node = self.nodes.get(n as usize)?;
        let base = if node.info.node_type() == Some(NodeType::Switch) {
            0
        } else {
            1
        };
        let i = node.ports.start + u32::from(num.0).checked_sub(base)?;
        (i < node.ports.end).then_some(i)
    }

    pub(crate) fn node_port_range(&self, n: NodeIdx) -> std::ops::Range<PortIdx> {
        self.nodes.get(n as usize).map_or(0..0, |x| x.ports.clone())
    }

    pub(crate) fn remote(&self, p: PortIdx) -> Option<PortIdx> {
        self.ports.get(p as usize).and_then(|x| x.remote)
    }

    pub(crate) fn node_type_of_port(&self, p: PortIdx) -> Option<NodeType> {
        let port = self.ports.get(p as usize)?;
        self.nodes.get(port.node as usize)?.info.node_type()
    }

    pub(crate) fn all_port_select(&self, n: NodeIdx) -> bool {
        self.nodes
            .get(n as usize)
            .and_then(|x| x.pma.as_ref())
            .is_some_and(|c| c.has(cap::ALL_PORT_SELECT))
    }

    /// Seconds per PortSamplesControl tick.
    pub(crate) fn sample_tick_secs(&self) -> f64 {
        (f64::from(SAMPLE_TICK) + 1.0) * 10.0 * 0.4e-9
    }

    /// The nodes the SM (on the first node) reaches over links, and the
    /// breadth-first order it meets them in.
    fn sm_reach(&self) -> (Vec<bool>, Vec<NodeIdx>) {
        let n = self.nodes.len();
        let mut reached = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let mut q = VecDeque::new();
        if n > 0 {
            reached[0] = true;
            q.push_back(0u32);
        }
        while let Some(x) = q.pop_front() {
            order.push(x);
            for p in self.node_port_range(x) {
                let Some(r) = self.remote(p) else { continue };
                let rn = self.ports.get(r as usize).map_or(NONE, |rp| rp.node);
                if let Some(slot) = reached.get_mut(rn as usize) {
                    if !*slot {
                        *slot = true;
                        q.push_back(rn);
                    }
                }
            }
        }
        (reached, order)
    }

    /// LIDs: those the file gives are kept when valid and free; the rest are
    /// handed out breadth-first from the SM's node (the first of the file),
    /// each end port taking an aligned block of 2^LMC (switch port 0: LMC 0).
    /// Returns which nodes the SM reached.
    fn assign_lids(&mut self, topo: &Topology, lmc: u8) -> Vec<bool> {
        let (reached, order) = self.sm_reach();
        let max = usize::from(Lid::UNICAST_MAX.0);
        let mut used = vec![false; max + 1];
        let mut want: Vec<(PortIdx, u8)> = Vec::new();
        for &ni in &order {
            let is_switch = self.nodes[ni as usize].info.node_type() == Some(NodeType::Switch);
            let tn = topo.nodes.get(ni as usize);
            for p in self.node_port_range(ni) {
                let port = &self.ports[p as usize];
                let end_port = !is_switch || port.num.0 == 0;
                let active = port.info.port_state() == Some(PortState::Active);
                if !end_port || !active {
                    continue;
                }
                let l = if is_switch { 0 } else { lmc };
                let given = tn.and_then(|tn| {
                    if is_switch {
                        tn.lid
                    } else {
                        tn.port(port.num).and_then(|tp| tp.lid)
                    }
                });
                let size = 1usize << l;
                let ok = given.filter(|g| {
                    let b = usize::from(g.0);
                    g.is_unicast()
                        && b % size == 0
                        && b + size - 1 <= max
                        && (b..b + size).all(|i| !used[i])
                });
                match ok {
                    Some(g) => {
                        let b = usize::from(g.0);
                        used[b..b + size].iter_mut().for_each(|u| *u = true);
                        self.set_lid(p, g, l);
                    }
                    None => want.push((p, l)),
                }
            }
        }
        let mut next = 1usize;
        for (p, l) in want {
            let size = 1usize << l;
            let mut b = next.div_ceil(size) * size;
            while b + size - 1 <= max && (b..b + size).any(|i| used[i]) {
                b += size;
            }
            if b + size - 1 > max {
                tracing::warn!("simulated SM: out of unicast LIDs; some ports get none");
                break;
            }
            used[b..b + size].iter_mut().for_each(|u| *u = true);
            self.set_lid(p, Lid(b as u16), l);
            next = b + size;
        }
        // Nodes the SM cannot reach stay in Initialize without LIDs.
        for (ni, r) in reached.iter().enumerate() {
            if !*r {
                for p in self.node_port_range(ni as NodeIdx) {
                    let port = &mut self.ports[p as usize];
                    if port.info.port_state() == Some(PortState::Active) {
                        port.info.port_state = PortState::Init.raw();
                    }
                }
            }
        }
        reached
    }

    /// The file's `lft` overrides, in order, over the routed tables: a
    /// table grows (and its LinearFDBTop with it) to hold a LID past its
    /// top unless the entry is 255, which past the top it already is.
    fn apply_lft(&mut self, topo: &Topology) -> Result<(), SourceError> {
        for o in &topo.lft {
            let bad =
                |why: &str| SourceError::Invalid(format!("{}:{}: lft: {why}", o.file, o.line));
            let node = topo
                .index_of(&o.switch)
                .and_then(|i| self.nodes.get_mut(i))
                .ok_or_else(|| bad("no such node"))?;
            let sw = node.switch.as_mut().ok_or_else(|| bad("not a switch"))?;
            let mut lft = sw.lft.to_vec();
            let last = usize::from(o.last.0);
            if last >= lft.len() && o.port != 0xFF {
                lft.resize(last + 1, 0xFF);
                sw.info.linear_fdb_top = sw.info.linear_fdb_top.max(o.last.0);
            }
            let first = usize::from(o.first.0);
            let end = last.min(lft.len().saturating_sub(1));
            if let Some(entries) = lft.get_mut(first..=end) {
                entries.iter_mut().for_each(|e| *e = o.port);
            }
            sw.lft = Arc::from(lft);
        }
        Ok(())
    }

    fn set_lid(&mut self, p: PortIdx, lid: Lid, lmc: u8) {
        if let Some(port) = self.ports.get_mut(p as usize) {
            port.info.lid = lid;
            port.info.lmc = lmc;
        }
    }

    /// The switches, their switch-to-switch adjacency (CSR) and the LIDs
    /// attached to each (port 0's, and each CA's block of 2^LMC).
    fn switch_graph(&self) -> SwitchGraph {
        let switches: Vec<NodeIdx> = (0..self.nodes.len() as NodeIdx)
            .filter(|n| self.nodes[*n as usize].info.node_type() == Some(NodeType::Switch))
            .collect();
        let mut sw_index = vec![NONE; self.nodes.len()];
        for (i, s) in switches.iter().enumerate() {
            sw_index[*s as usize] = i as u32;
        }
        let ns = switches.len();
        let mut g = SwitchGraph {
            adj_start: vec![0u32; ns + 1],
            adj: Vec::new(),
            attached: vec![Vec::new(); ns],
            top: 0,
            switches,
        };
        for (i, &s) in g.switches.iter().enumerate() {
            for p in self.node_port_range(s) {
                let port = &self.ports[p as usize];
                if port.num.0 == 0 {
                    if port.info.lid.is_unicast() {
                        g.attached[i].push((port.info.lid.0, 1, 0));
                        g.top = g.top.max(port.info.lid.0);
                    }
                    continue;
                }
                let Some(r) = port.remote else { continue };
                let rp = &self.ports[r as usize];
                let rsw = sw_index[rp.node as usize];
                if rsw != NONE {
                    g.adj.push((rsw, port.num.0));
                } else if rp.info.lid.is_unicast() {
                    let size = 1u16 << rp.info.lmc;
                    g.attached[i].push((rp.info.lid.0, size, port.num.0));
                    g.top = g.top.max(rp.info.lid.0 + size - 1);
                }
            }
            g.adj_start[i + 1] = g.adj.len() as u32;
        }
        g
    }

    /// Min-hop routing into every switch's LFT. For each destination switch a
    /// BFS over the switch graph gives each switch its next hops; a LID's
    /// route picks among equal next hops by LID, spreading destinations.
    fn route(&mut self) {
        let SwitchGraph {
            switches,
            adj_start,
            adj,
            attached,
            top,
        } = self.switch_graph();
        let ns = switches.len();
        let mut lfts: Vec<Vec<u8>> = vec![vec![0xFF; usize::from(top) + 1]; ns];
        // Channel adapters' LIDs routed out of each switch port so far: each
        // LID takes the least-loaded of its shortest-path ports, as OpenSM's
        // minhop balances them (LID modulo piled 6 of 8 on one uplink of a
        // leaf). A switch's own LID (management only) is not counted, as
        // minhop does not.
        let mut load: Vec<[u32; 256]> = vec![[0; 256]; ns];
        let mut dist = vec![u32::MAX; ns];
        let mut queue = VecDeque::with_capacity(ns);
        let mut cands: Vec<u8> = Vec::new();
        for (d, here) in attached.iter().enumerate() {
            if here.is_empty() {
                continue;
            }
            hops_to(d, &adj_start, &adj, &mut dist, &mut queue);
            for s in 0..ns {
                let lft = &mut lfts[s];
                if s == d {
                    for &(base, size, port) in here {
                        for l in base..base + size {
                            lft[usize::from(l)] = port;
                        }
                    }
                    continue;
                }
                if dist[s] == u32::MAX {
                    continue;
                }
                cands.clear();
                let (a, b) = (adj_start[s] as usize, adj_start[s + 1] as usize);
                for &(y, port) in &adj[a..b] {
                    if dist[y as usize] + 1 == dist[s] {
                        cands.push(port);
                    }
                }
                if cands.is_empty() {
                    continue;
                }
                let used = &mut load[s];
                for &(base, size, at) in here {
                    for l in base..base + size {
                        let port = cands
                            .iter()
                            .copied()
                            .min_by_key(|p| (used[usize::from(*p)], *p))
                            .unwrap_or(cands[0]);
                        if at != 0 {
                            used[usize::from(port)] += 1;
                        }
                        lft[usize::from(l)] = port;
                    }
                }
            }
        }
        for (i, s) in switches.iter().enumerate() {
            if let Some(sw) = self.nodes[*s as usize].switch.as_mut() {
                let lft = std::mem::take(&mut lfts[i]);
                sw.info.linear_fdb_top = top;
                sw.info.multicast_fdb_top = 0xC000;
                sw.lft = Arc::from(lft);
            }
        }
    }

    /// SMInfo of the master (on the first node), MasterSMLID everywhere, the
    /// default partition and the IPoIB broadcast group.
    fn sm_and_groups(&mut self, reached: &[bool]) {
        let sm_port = self.node_port_range(0).find(|p| {
            let port = &self.ports[*p as usize];
            port.info.lid.is_unicast()
        });
        if let Some(smp) = sm_port {
            let (lid, guid) = {
                let p = &mut self.ports[smp as usize];
                p.info.capability_mask |= port_cap::IS_SM;
                (p.info.lid, p.guid)
            };
            for p in self.ports.iter_mut() {
                let reached_node = reached.get(p.node as usize).copied().unwrap_or(false);
                if reached_node && p.info.port_state() == Some(PortState::Active) {
                    p.info.master_sm_lid = lid;
                }
            }
            self.sms.push(SmRecord {
                lid,
                port: Some(smp),
                info: SmInfo {
                    guid,
                    sm_key: 1, // OpenSM's default SM_Key
                    act_count: 0,
                    priority: 1,
                    sm_state: SmState::Master.raw(),
                },
                answering: true,
            });
            self.standby_sm(smp);
        }
        let mut members = Vec::new();
        let mut mc_members = Vec::new();
        let mgid: Gid = IPOIB_BROADCAST_MGID.parse().unwrap_or_default();
        let group = McMemberRecord {
            mgid,
            q_key: 0x0B1B,
            mlid: IPOIB_BROADCAST_MLID,
            mtu_selector: 2,
            mtu: 4,
            p_key: PKey::DEFAULT,
            rate_selector: 2,
            rate: 3,
            packet_life_time_selector: 2,
            packet_life_time: 18,
            scope: 2,
            join_state: 1,
            ..McMemberRecord::default()
        };
        for p in &self.ports {
            let Some(node) = self.nodes.get(p.node as usize) else {
                continue;
            };
            let is_switch = node.info.node_type() == Some(NodeType::Switch);
            if (is_switch && p.num.0 != 0) || !p.info.lid.is_unicast() {
                continue;
            }
            members.push(PartitionMember {
                port_guid: p.guid,
                full: true,
            });
            if !is_switch {
                mc_members.push(McMemberRecord {
                    port_gid: Gid::new(self.subnet_prefix, p.guid),
                    ..group.clone()
                });
            }
        }
        self.partitions.push(Partition {
            pkey: PKey::DEFAULT,
            members,
        });
        self.mcast_groups.push(McastGroup {
            group,
            members: mc_members,
        });
    }

    /// A standby SM at priority 0 on the last CA port with a LID (not on the
    /// master's node), as a second OpenSM would run: SMInfo in Standby.
    fn standby_sm(&mut self, master_port: PortIdx) {
        let master_node = self.ports.get(master_port as usize).map(|p| p.node);
        let standby = (0..self.ports.len()).rev().find(|&i| {
            let p = &self.ports[i];
            let ca = self
                .nodes
                .get(p.node as usize)
                .is_some_and(|n| n.info.node_type() == Some(NodeType::Ca));
            ca && Some(p.node) != master_node && p.info.lid.is_unicast()
        });
        let Some(i) = standby else {
            return;
        };
        let p = &mut self.ports[i];
        p.info.capability_mask |= port_cap::IS_SM;
        let (lid, guid) = (p.info.lid, p.guid);
        self.sms.push(SmRecord {
            lid,
            port: PortIdx::try_from(i).ok(),
            info: SmInfo {
                guid,
                sm_key: 1,
                act_count: 0,
                priority: 0,
                sm_state: SmState::Standby.raw(),
            },
            answering: true,
        });
    }

    /// Registers services with the SA; each names a port of the fabric.
    pub(crate) fn apply_services(
        &mut self,
        specs: &[super::services::ServiceSpec],
    ) -> Result<(), SourceError> {
        for s in specs {
            if !self.ports.iter().any(|p| p.guid.0 == s.port_guid) {
                return Err(SourceError::Invalid(format!(
                    "service {:?}: no port with GUID {:#018x}",
                    s.name, s.port_guid
                )));
            }
            self.services.push(s.record(self.subnet_prefix));
        }
        Ok(())
    }

    /// Replaces the default partition and IPoIB group with those of a
    /// partitions.conf-style list: members by keyword or port GUID, each
    /// member port's P_Key table gains the key (full bit for full members),
    /// and every `ipoib` partition gets its broadcast group (MGID
    /// ff12:401b:<P_Key>::ffff:ffff, MLIDs from 0xC000) joined by its CA
    /// members.
    pub(crate) fn apply_partitions(&mut self, specs: &[crate::opensm::partitions::Partition]) {
        use crate::opensm::partitions::Who;
        let sm_port = self.sms.first().and_then(|s| s.port);
        let template = self.mcast_groups.first().map(|g| g.group.clone());
        self.partitions.clear();
        self.mcast_groups.clear();
        let mut pkeys: Vec<Vec<PKey>> = vec![Vec::new(); self.ports.len()];
        for (gi, spec) in specs.iter().enumerate() {
            let mut members: Vec<(usize, bool)> = Vec::new();
            for (i, p) in self.ports.iter().enumerate() {
                let Some(node) = self.nodes.get(p.node as usize) else {
                    continue;
                };
                let is_switch = node.info.node_type() == Some(NodeType::Switch);
                // End ports only: CA ports and switch port 0.
                if (is_switch && p.num.0 != 0) || !p.info.lid.is_unicast() {
                    continue;
                }
                let full = spec
                    .members
                    .iter()
                    .fold(None, |acc: Option<bool>, (who, full)| {
                        let hit = match who {
                            Who::All => true,
                            Who::AllCas => !is_switch,
                            Who::AllSwitches => is_switch,
                            Who::SelfPort => sm_port == PortIdx::try_from(i).ok(),
                            Who::Guid(g) => p.guid.0 == *g,
                        };
                        if hit {
                            Some(acc.unwrap_or(false) || *full)
                        } else {
                            acc
                        }
                    });
                if let Some(full) = full {
                    members.push((i, full));
                }
            }
            let key = spec.pkey & 0x7fff;
            for &(i, full) in &members {
                if let Some(k) = pkeys.get_mut(i) {
                    k.push(PKey(key | if full { 0x8000 } else { 0 }));
                }
            }
            self.partitions.push(Partition {
                pkey: PKey(key | 0x8000),
                members: members
                    .iter()
                    .filter_map(|&(i, full)| {
                        self.ports.get(i).map(|p| PartitionMember {
                            port_guid: p.guid,
                            full,
                        })
                    })
                    .collect(),
            });
            if let (true, Some(t)) = (spec.ipoib, template.as_ref()) {
                let group = self.ipoib_group(t, key, gi, &members);
                self.mcast_groups.push(group);
            }
        }
        for (p, k) in self.ports.iter_mut().zip(pkeys) {
            if !k.is_empty() {
                p.pkeys = Arc::from(k);
            }
        }
    }

    /// The IPoIB broadcast group of partition `key` (the `gi`-th of the
    /// file: MLID 0xC000 + gi) from the default group `t`, joined by the
    /// partition's CA members.
    fn ipoib_group(
        &self,
        t: &McMemberRecord,
        key: u16,
        gi: usize,
        members: &[(usize, bool)],
    ) -> McastGroup {
        let full_key = key | 0x8000;
        let mut mgid = t.mgid.to_bytes();
        if let Some(d) = mgid.get_mut(4..6) {
            d.copy_from_slice(&full_key.to_be_bytes());
        }
        let group = McMemberRecord {
            mgid: Gid(mgid),
            mlid: Lid(0xC000 + u16::try_from(gi).unwrap_or(0)),
            p_key: PKey(full_key),
            ..t.clone()
        };
        let members = members
            .iter()
            .filter_map(|&(i, _)| self.ports.get(i))
            .filter(|p| {
                self.nodes
                    .get(p.node as usize)
                    .is_some_and(|n| n.info.node_type() != Some(NodeType::Switch))
            })
            .map(|p| McMemberRecord {
                port_gid: Gid::new(self.subnet_prefix, p.guid),
                ..group.clone()
            })
            .collect();
        McastGroup { group, members }
    }

    /// A snapshot builder with this fabric's static state at time `t` (seconds
    /// since start): ports whose link is flapped down read Down/Polling.
    pub(crate) fn builder(&self, t: f64, faults: &HashMap<PortIdx, PortFaults>) -> SnapshotBuilder {
        let mut b = SnapshotBuilder::new(self.subnet_prefix);
        b.nodes = self.nodes.clone();
        b.ports = self.ports.clone();
        for (p, f) in faults {
            if f.down.iter().any(|(s, e)| *s <= t && t < *e) {
                if let Some(port) = b.ports.get_mut(*p as usize) {
                    port.info.port_state = PortState::Down.raw();
                    port.info.port_physical_state = PhysPortState::Polling.raw();
                    port.info.link_width_active = 0;
                }
            }
        }
        b.sms = self.sms.clone();
        b.partitions = self.partitions.clone();
        b.mcast_groups = self.mcast_groups.clone();
        b.services = self.services.clone();
        b.local_node = Some(self.local_node);
        b.ipoib = self.ipoib_interfaces();
        b
    }

    /// One IPoIB interface per port of the local node when it is a CA, as a
    /// Linux host has them: `ib0`, `ib1`, ... with a 20-octet address of
    /// flags/QPN (a made-up QPN per interface) and the port GID.
    fn ipoib_interfaces(&self) -> Vec<crate::model::IpoibInterface> {
        let Some(node) = self.nodes.get(self.local_node as usize) else {
            return Vec::new();
        };
        if node.info.node_type() != Some(NodeType::Ca) {
            return Vec::new();
        }
        node.ports
            .clone()
            .zip(0u32..)
            .filter_map(|(pi, i)| {
                let port = self.ports.get(pi as usize)?;
                let mut address = [0u8; 20];
                let qpn = 0x48 + i;
                address[1..4].copy_from_slice(&qpn.to_be_bytes()[1..4]);
                address[4..].copy_from_slice(&Gid::new(self.subnet_prefix, port.guid).to_bytes());
                Some(crate::model::IpoibInterface {
                    port: pi,
                    name: format!("ib{i}"),
                    address,
                })
            })
            .collect()
    }
}
