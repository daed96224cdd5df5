//! Turns one sweep's discovery, SA and PMA results into the model's snapshot builder.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::discover::{DNode, Discovered};
use super::pma::{PmaCaps, PmaSweep, Target};
use super::sa::{Blocks, SaView, TableBlocks};
use crate::mad::sa::SmInfoRecord;
use crate::mad::smp::PortInfo;
use crate::model::{
    McastGroup, Node, Partition, PartitionMember, Port, PortIdx, SmRecord, SnapshotBuilder,
    SwitchData,
};
use crate::types::{Guid, NodeType, PKey, PortNum, SmState};

/// Port numbers a node has in the snapshot (switch 0..=N, CA 1..=N).
fn port_range(n: &DNode) -> std::ops::RangeInclusive<u8> {
    if n.is_switch() {
        0..=n.info.num_ports
    } else {
        1..=n.info.num_ports.max(1)
    }
}

/// Nodes in a stable order: by hop distance, then GUID (the local node first).
pub fn ordered(d: &Discovered) -> Vec<&DNode> {
    let mut v: Vec<&DNode> = d.nodes.values().collect();
    v.sort_by_key(|n| (n.path.len(), n.info.node_guid));
    v
}

/// PMA targets: a switch's PMA at port 0's LID for all its ports (those without a
/// link as [`Target::idle`]: a switch PMA answers for them), and each linked HCA
/// port at its own LID (see [`Target`]). An HCA port without a link has no PMA
/// anyone can reach (its LID goes through that port).
pub fn pma_targets(d: &Discovered) -> Vec<Target> {
    let mut v = Vec::new();
    for n in ordered(d) {
        let is_linked = |p: &&super::discover::DPort| {
            p.peer.is_some() || p.info.as_ref().is_some_and(|i| i.port_state >= 2)
        };
        let external = n.ports.values().filter(|p| p.num != 0 || !n.is_switch());
        if n.is_switch() {
            let (linked, idle): (Vec<_>, Vec<_>) = external.partition(is_linked);
            v.push(Target {
                node: n.info.node_guid,
                lid: n.lid(),
                ports: linked.into_iter().map(|p| p.num).collect(),
                idle: idle.into_iter().map(|p| p.num).collect(),
            });
        } else {
            v.extend(external.filter(is_linked).map(|p| Target {
                node: n.info.node_guid,
                lid: p.info.as_ref().map_or(0, |i| i.lid.0),
                ports: vec![p.num],
                idle: Vec::new(),
            }));
        }
    }
    v
}

/// (LID, port) pairs whose P_Key tables and GUIDInfo the SA is asked for: CA ports and
/// switch port 0.
pub fn end_ports(d: &Discovered) -> Vec<(u16, u8)> {
    end_ports_of(d, |_| true)
}

/// [`end_ports`] of the local node alone: its partitions decide which groups the SA
/// shows us, so they are read every sweep.
pub fn local_end_ports(d: &Discovered) -> Vec<(u16, u8)> {
    end_ports_of(d, |n| n.info.node_guid == d.local)
}

/// The size of each end port's P_Key table (NodeInfo:PartitionCap, which a
/// CA's and a switch's port 0 report; blocks of 32) and GUIDInfo table
/// (PortInfo:GUIDCap; blocks of 8).
pub fn table_blocks(d: &Discovered) -> TableBlocks {
    let mut m = TableBlocks::new();
    for n in d.nodes.values() {
        let pkey = n.info.partition_cap.div_ceil(32).max(1);
        for (lid, num) in node_end_ports(n) {
            let guid_cap = n
                .ports
                .get(&num)
                .and_then(|p| p.info.as_ref())
                .map_or(0, |i| u16::from(i.guid_cap));
            let guid = guid_cap.div_ceil(8).max(1);
            m.insert((lid, num), Blocks { pkey, guid });
        }
    }
    m
}

/// (LID, port) of a node's end ports that have a LID: a CA's ports, a
/// switch's port 0.
fn node_end_ports(n: &DNode) -> impl Iterator<Item = (u16, u8)> + '_ {
    n.ports.values().filter_map(move |p| {
        let lid = p.info.as_ref().map(|i| i.lid.0).unwrap_or(0);
        (lid != 0 && (!n.is_switch() || p.num == 0)).then_some((lid, p.num))
    })
}

fn end_ports_of(d: &Discovered, keep: impl Fn(&DNode) -> bool) -> Vec<(u16, u8)> {
    ordered(d)
        .into_iter()
        .filter(|n| keep(n))
        .flat_map(node_end_ports)
        .collect()
}

/// The SMs of a builder from SMInfo records, each with whether the SM
/// answered (the port of each found by its LID among the builder's end ports).
/// One that did not answer reads notActive: `record` is its last answer.
pub fn sm_records(b: &SnapshotBuilder, sms: &[(SmInfoRecord, bool)]) -> Vec<SmRecord> {
    let end_port = |p: &Port| {
        b.nodes
            .get(p.node as usize)
            .is_some_and(|n| n.info.node_type() != Some(NodeType::Switch) || p.num.0 == 0)
    };
    sms.iter()
        .map(|(r, answering)| {
            let mut info = r.sm_info.clone();
            if !answering {
                info.sm_state = SmState::NotActive.raw();
            }
            SmRecord {
                lid: r.lid,
                port: b
                    .ports
                    .iter()
                    .position(|p| end_port(p) && p.info.lid == r.lid)
                    .and_then(|i| PortIdx::try_from(i).ok()),
                info,
                answering: *answering,
            }
        })
        .collect()
}

/// Fills a builder from one sweep. `pma` and `sa` may be partial or empty (failures).
pub fn build(
    d: &Discovered,
    sa: Option<&SaView>,
    pma: Option<&PmaSweep>,
    caps: &HashMap<Guid, PmaCaps>,
) -> SnapshotBuilder {
    let prefix = d
        .local_port
        .as_ref()
        .map(|p| p.gid_prefix)
        .filter(|&p| p != 0)
        .unwrap_or(0xfe80_0000_0000_0000);
    let nports: usize = d.nodes.values().map(|n| port_range(n).count()).sum();
    let mut b = SnapshotBuilder::with_capacity(prefix, d.nodes.len(), nports);
    let mut index: HashMap<(Guid, u8), PortIdx> = HashMap::with_capacity(nports);
    let mut by_lid: HashMap<u16, PortIdx> = HashMap::new();
    let mut pkeys = PKeyTables::default();
    for n in ordered(d) {
        let g = n.info.node_guid;
        let ports = node_ports(n, sa, &mut pkeys);
        let ni = b.add_node(node(n, caps), ports);
        if g == d.local {
            b.local_node = Some(ni);
        }
        if let Some(r) = b.nodes.get(ni as usize).map(|x| x.ports.clone()) {
            for (pi, num) in r.zip(port_range(n)) {
                index.insert((g, num), pi);
                if let Some(p) = b.ports.get(pi as usize) {
                    let end_port = !n.is_switch() || num == 0;
                    if end_port && p.info.lid.0 != 0 {
                        by_lid.insert(p.info.lid.0, pi);
                    }
                }
            }
        }
    }
    for n in d.nodes.values() {
        for p in n.ports.values() {
            if let Some(peer) = p.peer {
                if let (Some(&a), Some(&z)) =
                    (index.get(&(n.info.node_guid, p.num)), index.get(&peer))
                {
                    b.link(a, z);
                }
            }
        }
    }
    if let Some(pma) = pma {
        for (k, s) in &pma.samples {
            if let (Some(&pi), Some(r)) = (index.get(k), s.readings()) {
                b.set_readings(pi, r.clone());
            }
        }
    }
    if let Some(sa) = sa {
        add_sa(&mut b, sa, &by_lid);
    }
    b
}

/// P_Key tables shared between the ports that have the same one.
#[derive(Default)]
struct PKeyTables {
    empty: Arc<[PKey]>,
    seen: BTreeMap<Vec<u16>, Arc<[PKey]>>,
}

impl PKeyTables {
    fn get(&mut self, keys: Option<&Vec<u16>>) -> Arc<[PKey]> {
        match keys {
            Some(keys) => self
                .seen
                .entry(keys.clone())
                .or_insert_with(|| keys.iter().map(|&k| PKey(k)).collect())
                .clone(),
            None => self.empty.clone(),
        }
    }
}

/// A discovered node's ports, with the SA's GUIDInfo and P_Key tables.
fn node_ports(n: &DNode, sa: Option<&SaView>, pkeys: &mut PKeyTables) -> Vec<Port> {
    let mut ports = Vec::new();
    for num in port_range(n) {
        let dp = n.ports.get(&num);
        let info: PortInfo = dp.and_then(|p| p.info.clone()).unwrap_or_default();
        let guid = dp.map(|p| p.guid).unwrap_or(if n.is_switch() {
            n.info.port_guid
        } else {
            Guid(0)
        });
        let end_port = !n.is_switch() || num == 0;
        // The SM's GUIDInfo (alias GUIDs included) where the SA gave it, else the
        // port GUID alone.
        let guids: Arc<[Guid]> = match sa.and_then(|s| s.guids.get(&info.lid.0)) {
            Some(gs) if end_port && !gs.is_empty() => Arc::from(gs.as_slice()),
            _ if end_port && guid.0 != 0 => Arc::from(vec![guid]),
            _ => Arc::from(Vec::new()),
        };
        let pkeys = pkeys.get(sa.and_then(|s| s.pkeys.get(&(info.lid.0, num))));
        ports.push(Port {
            node: 0,
            num: PortNum(num),
            guid,
            info,
            remote: None,
            pkeys,
            guids,
            counters: None,
        });
    }
    ports
}

/// A discovered node as the model's, with its PMA's ClassPortInfo.
fn node(n: &DNode, caps: &HashMap<Guid, PmaCaps>) -> Node {
    Node {
        info: n.info.clone(),
        description: n.description.clone(),
        ports: 0..0,
        switch: n.switch_info.clone().map(|info| {
            Box::new(SwitchData {
                info,
                lft: Arc::from(n.lft.clone()),
            })
        }),
        pma: caps
            .get(&n.info.node_guid)
            .and_then(|c| c.class_port_info.clone())
            .map(Box::new),
        sampling: None,
    }
}

/// The SA's answers: SMs, multicast groups, services and the partitions
/// the ports' P_Key tables make.
fn add_sa(b: &mut SnapshotBuilder, sa: &SaView, by_lid: &HashMap<u16, PortIdx>) {
    b.sms = sa
        .sms
        .iter()
        .map(|r| SmRecord {
            lid: r.lid,
            port: by_lid.get(&r.lid.0).copied(),
            info: r.sm_info.clone(),
            answering: true,
        })
        .collect();
    let mut groups: BTreeMap<[u8; 16], McastGroup> = BTreeMap::new();
    for g in &sa.mc_groups {
        groups.entry(g.mgid.0).or_insert_with(|| McastGroup {
            group: g.clone(),
            members: Vec::new(),
        });
    }
    for m in &sa.mc_members {
        groups
            .entry(m.mgid.0)
            .or_insert_with(|| McastGroup {
                group: m.clone(),
                members: Vec::new(),
            })
            .members
            .push(m.clone());
    }
    b.mcast_groups = groups.into_values().collect();
    b.services = sa.services.clone();
    b.partitions = partitions(&b.ports);
}

/// Partitions from the ports' P_Key tables: a member is full when its
/// P_Key has the membership bit, a partition full when one member is.
fn partitions(ports: &[Port]) -> Vec<Partition> {
    let mut parts: BTreeMap<u16, Vec<PartitionMember>> = BTreeMap::new();
    for p in ports {
        if p.guid.0 == 0 {
            continue;
        }
        for k in p.pkeys.iter() {
            parts
                .entry(k.0 & 0x7fff)
                .or_default()
                .push(PartitionMember {
                    port_guid: p.guid,
                    full: k.0 & 0x8000 != 0,
                });
        }
    }
    parts
        .into_iter()
        .map(|(k, members)| Partition {
            pkey: PKey(
                k | if members.iter().any(|m| m.full) {
                    0x8000
                } else {
                    0
                },
            ),
            members,
        })
        .collect()
}
