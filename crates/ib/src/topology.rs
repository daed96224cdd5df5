//! Topology files in the format ibnetdiscover prints and ibsim reads.
//!
//! Both forms are accepted: the short form of ibsim's net examples
//! (`Switch 8 "Switch1"` / `[1] "Hca1"[1]`) and full ibnetdiscover output
//! (vendid/devid/sysimgguid/switchguid/caguid lines, `# "desc" ... lid N`
//! comments, port GUIDs, widths and speeds). GUIDs are resolved exactly as ibsim
//! resolves them (switches from 0x200000, CAs from 0x100000 reserving one GUID
//! per port, `switchguid=`/`caguid=` lines resetting the base), so a fabric
//! loaded by the built-in simulator has the GUIDs ibsim gives the same file.
//!
//! A cabling plan may also be kept as `ibnetdiscover -p` output, iblinkinfo
//! output or an ibdiagnet (ibdm) topology file ([`formats`]): the format is
//! told from the content. Files are read within [`Limits`] ([`read`]).
//!
//! A fabric file for the built-in sim may also override forwarding-table
//! entries after the sim routes it: `lft "SWITCH" LID[-LID] PORT` lines
//! ([`LftOverride`], docs/routing.md "Faults in a fabric file").
//!
//! - [`parse`]: text -> [`Topology`], errors naming file, line and expectation;
//! - [`write`]: [`Topology`] -> text exactly as ibnetdiscover prints it;
//! - [`fat_tree`]: a fat-tree generator whose output ibsim accepts;
//! - [`check`]: a fabric snapshot held against a topology as its cabling plan.

mod fat_tree;
mod formats;
mod lft;
mod links;
mod parse;
mod read;
mod write;

pub use fat_tree::{fat_tree, shape as fat_tree_shape, FatTreeShape};
pub use formats::FORMATS;
pub use parse::{parse_file, parse_file_with, parse_str};
pub use read::{quote, Limits, DEFAULT_LIMITS, QUOTE_MAX};
pub(crate) use write::civil_from_days;
pub use write::{write_ibnetdiscover, WriteHeader};

use crate::types::{Guid, Lid, LinkSpeed, LinkWidth, NodeType, PortNum};
use std::collections::{BTreeSet, HashMap};

/// First GUID ibsim gives a CA (each CA reserves 1 + NumPorts GUIDs).
pub const IBSIM_CA_GUID_BASE: u64 = 0x10_0000;
/// First GUID ibsim gives a switch (one GUID each: node = port 0).
pub const IBSIM_SWITCH_GUID_BASE: u64 = 0x20_0000;
/// First GUID given to a router (ibsim has no base of its own for routers).
pub const IBSIM_ROUTER_GUID_BASE: u64 = 0x30_0000;
/// Largest port count a node may declare (255 is PortSelect "all ports").
pub const MAX_PORTS: u8 = 254;

/// Why a topology could not be read or generated.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A line that does not have the expected form, or a link that does not add up.
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },
    /// A file the limits refuse (not a regular file, too big, read twice).
    #[error("{file}: {reason}")]
    Refused { file: String, reason: String },
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// Parameters a generator cannot satisfy.
    #[error("{0}")]
    Generator(String),
}

/// A parsed fabric description: nodes in file order, each with its connected ports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Topology {
    pub nodes: Vec<TopoNode>,
    /// Forwarding-table overrides (`lft` lines, in file order): the sim
    /// applies them after routing ([`lft`]).
    pub lft: Vec<LftOverride>,
    by_name: HashMap<String, usize>,
}

/// One node record (`Switch|Hca|Ca|Rt N "name"` and its port lines).
#[derive(Debug, Clone, PartialEq)]
pub struct TopoNode {
    pub node_type: NodeType,
    /// The quoted node id (ibnetdiscover: `S-<guid>`/`H-<guid>`; short form: any name).
    pub name: String,
    /// From the `# "description"` comment; ibsim uses the name when absent.
    pub description: Option<String>,
    pub num_ports: u8,
    pub node_guid: Guid,
    /// The node GUID came from the file (a `switchguid=`/`caguid=`/`rtguid=`
    /// line before the header) or from a fabric; false when the parser made
    /// it up as ibsim would: a plan then knows the node by its name only.
    pub guid_known: bool,
    /// Without the node GUID, the file gave its port GUIDs (a CA's ports,
    /// a switch's port 0: ibnetdiscover -p, iblinkinfo): the node is found
    /// in the fabric by those.
    pub port_guids_known: bool,
    /// NodeInfo:PortGUID of port 0 for a switch (the `(..)` after switchguid=).
    pub port0_guid: Guid,
    pub sys_image_guid: Guid,
    pub vendor_id: u32,
    pub device_id: u16,
    /// `enhanced port 0` / `base port 0` on a switch header, when given.
    pub enhanced_port0: Option<bool>,
    /// Switch: LID of port 0 (`lid N lmc M` in the header comment).
    pub lid: Option<Lid>,
    pub lmc: Option<u8>,
    /// Connected ports, in file order (unconnected ports have no line).
    pub ports: Vec<TopoPort>,
    /// Line of the header in its file (0 for generated topologies).
    pub line: usize,
}

/// `lft "SWITCH" LID[-LID] PORT`: the switch's LinearForwardingTable
/// entries for LIDs `first..=last` set to `port` (255: no route) once the
/// sim has routed the fabric.
#[derive(Debug, Clone, PartialEq)]
pub struct LftOverride {
    pub switch: String,
    pub first: Lid,
    pub last: Lid,
    pub port: u8,
    /// Where the line is, for errors.
    pub file: String,
    pub line: usize,
}

/// One connected port (`[n] "remote"[m]` and what its comment says).
#[derive(Debug, Clone, PartialEq)]
pub struct TopoPort {
    pub port: PortNum,
    /// CA/router port GUID (`[n](guid)`); for switches the node GUID.
    pub guid: Guid,
    pub remote: String,
    pub remote_port: PortNum,
    /// CA/router: this port's LID and LMC from the comment.
    pub lid: Option<Lid>,
    pub lmc: Option<u8>,
    /// Active width and speed from the comment (`4xQDR`).
    pub width: Option<LinkWidth>,
    pub speed: Option<LinkSpeed>,
    /// ibsim's `w=`/`s=` options: LinkWidthEnabled / LinkSpeedEnabled masks.
    pub width_enabled: Option<u8>,
    pub speed_enabled: Option<u8>,
    pub line: usize,
}

impl TopoNode {
    /// A node with ibsim-style defaults; GUIDs must be set by the caller.
    pub fn new(node_type: NodeType, name: impl Into<String>, num_ports: u8, guid: Guid) -> Self {
        Self {
            node_type,
            name: name.into(),
            description: None,
            num_ports,
            node_guid: guid,
            guid_known: true,
            port_guids_known: false,
            port0_guid: guid,
            sys_image_guid: guid,
            vendor_id: 0,
            device_id: 0,
            enhanced_port0: None,
            lid: None,
            lmc: None,
            ports: Vec::new(),
            line: 0,
        }
    }

    /// The description as the SMA reports it (ibsim: the name when none is given).
    pub fn description(&self) -> &str {
        self.description.as_deref().unwrap_or(&self.name)
    }

    pub fn port(&self, n: PortNum) -> Option<&TopoPort> {
        self.ports.iter().find(|p| p.port == n)
    }

    /// GUID of port `n`: switches share the node's port-0 GUID; CA ports are
    /// given explicitly or, as ibsim does, node GUID + port number.
    pub fn port_guid(&self, n: PortNum) -> Guid {
        if self.node_type == NodeType::Switch {
            return self.port0_guid;
        }
        self.port(n)
            .map(|p| p.guid)
            .unwrap_or(Guid(self.node_guid.0.wrapping_add(u64::from(n.0))))
    }
}

impl TopoPort {
    pub fn new(port: PortNum, guid: Guid, remote: impl Into<String>, remote_port: PortNum) -> Self {
        Self {
            port,
            guid,
            remote: remote.into(),
            remote_port,
            lid: None,
            lmc: None,
            width: None,
            speed: None,
            width_enabled: None,
            speed_enabled: None,
            line: 0,
        }
    }
}

impl Topology {
    /// Builds the name index; fails on duplicate names (checked by the parser too).
    pub fn new(nodes: Vec<TopoNode>) -> Result<Self, TopologyError> {
        let mut by_name = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            if by_name.insert(n.name.clone(), i).is_some() {
                return Err(TopologyError::Generator(format!(
                    "duplicate node name {}",
                    quote(&n.name)
                )));
            }
        }
        Ok(Self {
            nodes,
            lft: Vec::new(),
            by_name,
        })
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub fn node(&self, name: &str) -> Option<&TopoNode> {
        self.index_of(name).and_then(|i| self.nodes.get(i))
    }

    /// Node found by name, description or GUID (`0x...`), as `--local-node` takes it.
    pub fn find(&self, key: &str) -> Option<usize> {
        if let Some(i) = self.index_of(key) {
            return Some(i);
        }
        if let Ok(g) = key.parse::<Guid>() {
            if let Some(i) = self.nodes.iter().position(|n| n.node_guid == g) {
                return Some(i);
            }
        }
        self.nodes.iter().position(|n| n.description() == key)
    }

    /// Each link once: (node index, port, remote node index, remote port).
    pub fn links(&self) -> impl Iterator<Item = (usize, PortNum, usize, PortNum)> + '_ {
        self.nodes.iter().enumerate().flat_map(move |(i, n)| {
            n.ports.iter().filter_map(move |p| {
                let j = self.index_of(&p.remote)?;
                ((i, p.port) < (j, p.remote_port)).then_some((i, p.port, j, p.remote_port))
            })
        })
    }

    /// Each link once as (description, port, description, port), ends in
    /// order: how two views of one fabric whose GUIDs differ are compared
    /// (our dump against ibnetdiscover, a generated file against ibsim's).
    pub fn link_set(&self) -> BTreeSet<(String, u8, String, u8)> {
        self.links()
            .filter_map(|(a, ap, z, zp)| {
                let a = self.nodes.get(a)?.description().to_string();
                let z = self.nodes.get(z)?.description().to_string();
                Some(if (a.as_str(), ap) <= (z.as_str(), zp) {
                    (a, ap.0, z, zp.0)
                } else {
                    (z, zp.0, a, ap.0)
                })
            })
            .collect()
    }

    pub fn num_ports_total(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| usize::from(n.num_ports) + usize::from(n.node_type == NodeType::Switch))
            .sum()
    }
}
