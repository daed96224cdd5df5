//! Fat-tree (folded Clos) generator.
//!
//! Every switch has `radix` ports. A leaf (edge) switch takes `radix/2` hosts on
//! ports 1..=radix/2 and sends `radix/2` uplinks from the ports above. With 2
//! levels the leaves connect to spines; with 3 levels leaves are grouped in pods
//! of `radix/2`, each pod with its own aggregation switches, and aggregation
//! uplinks go to core switches. Upper layers are sized to what the hosts need
//! (partial trees get fewer, possibly parallel-linked, upper switches), and
//! uplinks are dealt round-robin so that every lower switch reaches every upper
//! one it can. Full trees are the textbook non-blocking fat trees: radix^2/2
//! hosts with 2 levels, radix^3/4 with 3.

use super::{
    TopoNode, TopoPort, Topology, TopologyError, IBSIM_CA_GUID_BASE, IBSIM_SWITCH_GUID_BASE,
};
use crate::types::{Guid, Lid, LinkSpeed, LinkWidth, NodeType, PortNum};

/// Counts of what [`fat_tree`] builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatTreeShape {
    pub hosts: usize,
    pub leaves: usize,
    /// Aggregation switches (3 levels only).
    pub aggregation: usize,
    /// Spine (2 levels) or core (3 levels) switches.
    pub top: usize,
}

impl FatTreeShape {
    pub fn switches(&self) -> usize {
        self.leaves + self.aggregation + self.top
    }
    /// LIDs needed with LMC 0: one per host port and one per switch.
    pub fn lids(&self) -> usize {
        self.hosts + self.switches()
    }
}

/// Builds a fat tree of `hosts` single-port CAs over `radix`-port switches in
/// `levels` (2 or 3) levels. Node names: `host00001`, `leaf0001`/`spine0001`
/// (2 levels), `edge0001`/`agg0001`/`core0001` (3 levels); GUIDs as ibsim
/// would give them.
pub fn fat_tree(hosts: usize, radix: u8, levels: u8) -> Result<Topology, TopologyError> {
    let shape = shape(hosts, radix, levels)?;
    let r = usize::from(radix);
    let half = r / 2;
    let mut b = Builder::default();

    let host_w = digits(hosts);
    let hosts_ix: Vec<usize> = (0..hosts)
        .map(|i| b.node(NodeType::Ca, format!("host{:0host_w$}", i + 1), 1))
        .collect();
    let (leaf_name, top_name) = if levels == 2 {
        ("leaf", "spine")
    } else {
        ("edge", "core")
    };
    let sw_w = digits(shape.switches()).max(4);
    let leaves = b.switches(leaf_name, 1..=shape.leaves, sw_w, radix);
    // Hosts fill leaves in order, on the lower half of the ports.
    for (h, &host) in hosts_ix.iter().enumerate() {
        let leaf = leaves.get(h / half).copied().unwrap_or(0);
        b.link(host, 1, leaf, (h % half + 1) as u8);
    }
    let mut uplink_next = vec![half as u8 + 1; b.nodes.len() + shape.aggregation + shape.top];

    let lower_for_top: Vec<usize> = if levels == 2 {
        leaves.clone()
    } else {
        // Pods of up to `half` leaves; a pod of e leaves gets e aggregation switches.
        let mut aggs = Vec::with_capacity(shape.aggregation);
        for pod in leaves.chunks(half) {
            let first = aggs.len() + 1;
            let pod_aggs = b.switches("agg", first..=first + pod.len() - 1, sw_w, radix);
            let mut down_next = vec![1u8; pod_aggs.len()];
            deal(
                &mut b,
                pod,
                &pod_aggs,
                half,
                &mut uplink_next,
                &mut down_next,
            );
            aggs.extend(pod_aggs);
        }
        aggs
    };
    let tops = b.switches(top_name, 1..=shape.top, sw_w, radix);
    let mut down_next = vec![1u8; tops.len()];
    deal(
        &mut b,
        &lower_for_top,
        &tops,
        half,
        &mut uplink_next,
        &mut down_next,
    );

    // Switches first in the file, as ibnetdiscover prints them; the first node
    // is ibsim's default attach point, and a leaf is the natural SM host.
    let mut nodes = b.nodes;
    let cas: Vec<TopoNode> = nodes.drain(..hosts).collect();
    nodes.extend(cas);
    Topology::new(nodes)
}

/// Counts for `hosts`, `radix`, `levels`, or why they cannot be built.
pub fn shape(hosts: usize, radix: u8, levels: u8) -> Result<FatTreeShape, TopologyError> {
    let err = |m: String| Err(TopologyError::Generator(m));
    if !(4..=super::MAX_PORTS).contains(&radix) || radix & 1 == 1 {
        return err(format!(
            "radix {radix}: expected an even number of switch ports from 4 to {}",
            super::MAX_PORTS - 1
        ));
    }
    if hosts == 0 {
        return err("a fat tree needs at least one host".into());
    }
    let r = usize::from(radix);
    let half = r / 2;
    let leaves = hosts.div_ceil(half);
    let s = match levels {
        2 => {
            let max = r * half;
            if hosts > max {
                return err(format!(
                    "{hosts} hosts do not fit a 2-level fat tree of radix {radix} (at most {max}); use --levels 3 or a larger radix"
                ));
            }
            FatTreeShape {
                hosts,
                leaves,
                aggregation: 0,
                top: (leaves * half).div_ceil(r),
            }
        }
        3 => {
            let max = r * half * half;
            if hosts > max {
                return err(format!(
                    "{hosts} hosts do not fit a 3-level fat tree of radix {radix} (at most {max}); use a larger radix"
                ));
            }
            FatTreeShape {
                hosts,
                leaves,
                aggregation: leaves,
                top: (leaves * half).div_ceil(r),
            }
        }
        _ => return err(format!("levels {levels}: expected 2 or 3")),
    };
    let max_lids = usize::from(Lid::UNICAST_MAX.0);
    if s.lids() > max_lids {
        return err(format!(
            "{hosts} hosts with radix {radix} need {} switches and {} LIDs, more than the {max_lids} unicast LIDs of a subnet; use a larger radix",
            s.switches(),
            s.lids()
        ));
    }
    Ok(s)
}

/// Deals each lower switch's `half` uplinks round-robin over `uppers`.
fn deal(
    b: &mut Builder,
    lowers: &[usize],
    uppers: &[usize],
    half: usize,
    uplink_next: &mut [u8],
    down_next: &mut [u8],
) {
    if uppers.is_empty() {
        return;
    }
    let mut k = 0usize;
    for &lo in lowers {
        for _ in 0..half {
            let u = k % uppers.len();
            k += 1;
            let (Some(&up), Some(lp), Some(dp)) =
                (uppers.get(u), uplink_next.get_mut(lo), down_next.get_mut(u))
            else {
                continue;
            };
            b.link(lo, *lp, up, *dp);
            *lp += 1;
            *dp += 1;
        }
    }
}

fn digits(n: usize) -> usize {
    n.max(1).to_string().len()
}

#[derive(Default)]
struct Builder {
    nodes: Vec<TopoNode>,
    next_ca: u64,
    next_sw: u64,
}

impl Builder {
    /// Switches named `name` and their number (`numbers`, zero-padded to `width`).
    fn switches(
        &mut self,
        name: &str,
        numbers: std::ops::RangeInclusive<usize>,
        width: usize,
        radix: u8,
    ) -> Vec<usize> {
        numbers
            .map(|n| self.node(NodeType::Switch, format!("{name}{n:0width$}"), radix))
            .collect()
    }

    fn node(&mut self, t: NodeType, name: String, ports: u8) -> usize {
        let guid = if t == NodeType::Switch {
            let g = IBSIM_SWITCH_GUID_BASE + self.next_sw;
            self.next_sw += 1;
            g
        } else {
            let g = IBSIM_CA_GUID_BASE + self.next_ca;
            self.next_ca += u64::from(ports) + 1;
            g
        };
        self.nodes.push(TopoNode::new(t, name, ports, Guid(guid)));
        self.nodes.len() - 1
    }

    fn link(&mut self, a: usize, ap: u8, z: usize, zp: u8) {
        let (Some(an), Some(zn)) = (self.nodes.get(a), self.nodes.get(z)) else {
            return;
        };
        let (a_name, a_guid) = (an.name.clone(), an.port_guid(PortNum(ap)));
        let (z_name, z_guid) = (zn.name.clone(), zn.port_guid(PortNum(zp)));
        // Every link 4x HDR: what a current fabric runs (ibsim reads it from the comment).
        let port = |p: u8, g, remote, rp: u8| {
            let mut t = TopoPort::new(PortNum(p), g, remote, PortNum(rp));
            t.width = Some(LinkWidth::X4);
            t.speed = Some(LinkSpeed::Hdr);
            t
        };
        if let Some(n) = self.nodes.get_mut(a) {
            n.ports.push(port(ap, a_guid, z_name, zp));
        }
        if let Some(n) = self.nodes.get_mut(z) {
            n.ports.push(port(zp, z_guid, a_name, ap));
        }
    }
}
