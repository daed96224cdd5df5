//! Cabling plans in the formats sites keep them in, besides ibnetdiscover's
//! default one (docs/topology.md, "The plan"): told from the first
//! meaningful line (not blank, not a `#` comment).
//!
//! - `ibnetdiscover -p`: one port a line, `CA 8 1 0x... 4x SDR - SW 6 1
//!   0x... ( 'cn003' - 'edge-2' )`, or `SW 4 7 0x... 4x SDR 'edge-3'` for a
//!   port with no link. The GUIDs are port GUIDs (a switch's is its port
//!   0's), so nodes are found in the fabric by port GUID; the ports of a
//!   CA are its consecutive lines with one description.
//! - iblinkinfo: `Switch: 0x... edge-3:` / `CA: cn005:` headers, then
//!   their ports, `4 1[  ] ==( 4X 2.5 Gbps Active/ LinkUp)==> 8 1[  ]
//!   "cn005" ( )` (a CA's with its port GUID first); the far end is told by
//!   its LID (and name); `-l` (one line a port, the far end's GUID too)
//!   alike. Nodes only seen as a far end are found by name.
//! - an ibdiagnet (ibdm) topology file: a system line `TYPE NAME [CFG:
//!   ...]`, then its ports, indented, `P1 -4x-14G-> HCA cn001 P1`, up to a
//!   blank line. Port names are `Pn` or `n` (names that need the system's
//!   IBNL file, `L1/P3`, are refused); a system is a CA when its type says
//!   HCA (or is an HCA device, MT23108, MT4123...), else a switch. No
//!   GUIDs: nodes are found by name. A link without `-WIDTH-SPEED` has no
//!   planned rate (ibdm assumes 4x SDR).

// Input path: bytes from files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use super::links::{link_up, Ctx};
use super::read::{quote, record_lines};
use super::{
    TopoNode, TopoPort, Topology, TopologyError, IBSIM_CA_GUID_BASE, IBSIM_ROUTER_GUID_BASE,
    IBSIM_SWITCH_GUID_BASE, MAX_PORTS,
};
use crate::types::{Guid, Lid, LinkSpeed, LinkWidth, NodeType, PortNum};
use std::collections::{HashMap, HashSet};

mod linkinfo;

/// The formats a plan may be in, as errors name them.
pub const FORMATS: &str = "ibnetdiscover's default format (ibsim's net \
     format: Switch|Hca|Ca|Rt N \"name\" and [port] lines), ibnetdiscover -p \
     output (CA|SW|RT LID PORT 0xGUID WIDTH SPEED - ...), iblinkinfo output \
     (Switch: 0xGUID name: / CA: name: and their port lines, or -l lines) or \
     an ibdiagnet topology file (SYSTEM-TYPE NAME, then PORT -4x-25G-> TYPE \
     NAME PORT lines)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Net,
    Ports,
    LinkInfo,
    Ibdm,
}

const NET_WORDS: [&str; 21] = [
    "Switch",
    "Hca",
    "Ca",
    "Rt",
    "Router",
    "switchguid",
    "caguid",
    "hcaguids",
    "rtguid",
    "sysimgguid",
    "vendid",
    "devid",
    "width",
    "speed",
    "include",
    "do",
    "pdebug",
    "Chassis",
    "Hostname",
    "module",
    "lft",
];

fn meaningful(text: &str) -> impl Iterator<Item = (usize, &str)> {
    record_lines(text).filter_map(|(n, l)| Some((n, l?)))
}

fn is_ports_line(t: &str) -> bool {
    let mut w = t.split_whitespace();
    matches!(w.next(), Some("CA" | "SW" | "RT"))
        && w.next().is_some_and(|x| x.parse::<u32>().is_ok())
        && w.next().is_some_and(|x| x.parse::<u32>().is_ok())
        && w.next().is_some_and(|x| x.starts_with("0x"))
}

fn is_linkinfo_line(t: &str) -> bool {
    if ["Switch: ", "CA: ", "Router: "]
        .iter()
        .any(|h| t.starts_with(h))
    {
        return true;
    }
    // -l: `0x<guid> "<name>" LID PORT[..] ==(`
    let mut w = t.split_whitespace();
    w.next().is_some_and(|g| g.starts_with("0x")) && t.contains("==") && t.contains('"')
}

/// The format of `text`, from its first meaningful lines.
pub(super) fn detect(text: &str, file: &str) -> Result<Format, TopologyError> {
    let mut lines = meaningful(text);
    let Some((n, first)) = lines.next() else {
        return Ok(Format::Net);
    };
    let t = first.trim();
    if is_ports_line(t) {
        return Ok(Format::Ports);
    }
    if is_linkinfo_line(t) {
        return Ok(Format::LinkInfo);
    }
    let word: String = t
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if NET_WORDS.contains(&word.as_str()) || t.starts_with('[') || t.starts_with('@') {
        return Ok(Format::Net);
    }
    let indented = |l: &str| l.starts_with([' ', '\t']);
    if !indented(first) && t.split_whitespace().count() >= 2 {
        if let Some((_, next)) = lines.next() {
            if indented(next) && next.contains("->") {
                return Ok(Format::Ibdm);
            }
        }
    }
    Err(TopologyError::Syntax {
        file: file.to_string(),
        line: n,
        message: format!(
            "{} does not start a topology in a format read here: expected {FORMATS}",
            quote(t)
        ),
    })
}

/// Parses `text` in a format other than [`Format::Net`].
pub(super) fn parse(format: Format, text: &str, file: &str) -> Result<Topology, TopologyError> {
    let nodes = match format {
        Format::Ports => ports(text, file)?,
        Format::LinkInfo => linkinfo::linkinfo(text, file)?,
        Format::Ibdm => ibdm(text, file)?,
        Format::Net => {
            return Err(TopologyError::Generator(
                "internal: net format given to formats::parse".into(),
            ))
        }
    };
    build(nodes, file)
}

/// A node as read, before it is named.
#[derive(Debug)]
struct Node {
    t: NodeType,
    desc: String,
    /// A switch's (port 0) GUID, or a CA's first port GUID: the file knows
    /// the node by port GUID.
    guid: Option<u64>,
    /// Switch: its LID.
    lid: Option<u16>,
    ports: Vec<Port>,
    max_port: u8,
    line: usize,
}

impl Node {
    fn new(t: NodeType, desc: &str, line: usize) -> Self {
        Node {
            t,
            desc: desc.to_string(),
            guid: None,
            lid: None,
            ports: Vec::new(),
            max_port: 0,
            line,
        }
    }
    fn has_port(&self, p: u8) -> bool {
        self.ports.iter().any(|x| x.port == p)
    }
}

#[derive(Debug)]
struct Port {
    port: u8,
    /// A CA port's GUID.
    guid: Option<u64>,
    /// A CA port's LID.
    lid: Option<u16>,
    width: Option<LinkWidth>,
    speed: Option<LinkSpeed>,
    /// Far end: node index and port, once known.
    remote: Option<(usize, u8)>,
    line: usize,
}

impl Port {
    fn new(port: u8, line: usize) -> Self {
        Port {
            port,
            guid: None,
            lid: None,
            width: None,
            speed: None,
            remote: None,
            line,
        }
    }
}

/// Port `pi` of node `i` leads to port `port` of node `j` (found or made
/// for it once every line is read): the far node has at least that port.
fn connect(nodes: &mut [Node], (i, pi): (usize, usize), (j, port): (usize, u8)) {
    if let Some(x) = nodes.get_mut(j) {
        x.max_port = x.max_port.max(port);
    }
    if let Some(p) = nodes.get_mut(i).and_then(|n| n.ports.get_mut(pi)) {
        p.remote = Some((j, port));
    }
}

fn ctx<'a>(file: &'a str, line: usize) -> Ctx<'a> {
    Ctx { file, line }
}

fn port_num(s: &str, c: &Ctx) -> Result<u8, TopologyError> {
    s.parse::<u8>()
        .ok()
        .filter(|p| (1..=MAX_PORTS).contains(p))
        .ok_or_else(|| {
            c.err(format!(
                "expected a port number 1-{MAX_PORTS}, found {}",
                quote(s)
            ))
        })
}

fn hex_guid(s: &str, c: &Ctx) -> Result<u64, TopologyError> {
    s.strip_prefix("0x")
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or_else(|| c.err(format!("expected a GUID (0x...), found {}", quote(s))))
}

fn lid_num(s: &str, c: &Ctx) -> Result<u16, TopologyError> {
    s.parse::<u16>()
        .ok()
        .filter(|l| *l < 0xC000)
        .ok_or_else(|| c.err(format!("expected a LID, found {}", quote(s))))
}

/// `4x`/`4X` (`??` and the like: unknown).
fn width_of(s: &str) -> Option<LinkWidth> {
    let n = s.strip_suffix(['x', 'X'])?;
    format!("{n}X").parse().ok()
}

/// Whitespace-separated words, and what is left after them.
struct Words<'a>(&'a str);

impl<'a> Words<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let s = self.0.trim_start();
        if s.is_empty() {
            return None;
        }
        let end = s.find(char::is_whitespace).unwrap_or(s.len());
        let (w, rest) = s.split_at(end);
        self.0 = rest;
        Some(w)
    }
    fn rest(&self) -> &'a str {
        self.0.trim()
    }
}

fn word<'a>(w: &mut Words<'a>, what: &str, c: &Ctx) -> Result<&'a str, TopologyError> {
    w.next()
        .ok_or_else(|| c.err(format!("expected {what}, found the end of the line")))
}

// ---- ibnetdiscover -p -------------------------------------------------

struct PEnd {
    t: NodeType,
    lid: u16,
    port: u8,
    guid: u64,
}

fn p_end(w: &mut Words, c: &Ctx) -> Result<PEnd, TopologyError> {
    let t = match word(w, "CA, SW or RT", c)? {
        "CA" => NodeType::Ca,
        "SW" => NodeType::Switch,
        "RT" => NodeType::Router,
        x => return Err(c.err(format!("expected CA, SW or RT, found {}", quote(x)))),
    };
    let lid = lid_num(word(w, "a LID", c)?, c)?;
    let port = port_num(word(w, "a port number", c)?, c)?;
    let guid = hex_guid(word(w, "a port GUID", c)?, c)?;
    Ok(PEnd { t, lid, port, guid })
}

/// Where each port GUID (a CA's ports, a switch's port 0) was read.
#[derive(Default)]
struct Index {
    by_guid: HashMap<u64, usize>,
}

fn ports(text: &str, file: &str) -> Result<Vec<Node>, TopologyError> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut ix = Index::default();
    let mut remotes: Vec<(usize, usize, PEnd, String)> = Vec::new();
    let mut prev: Option<usize> = None;
    for (n, line) in meaningful(text) {
        let c = ctx(file, n);
        let mut w = Words(line);
        let local = p_end(&mut w, &c)?;
        let width = width_of(word(&mut w, "a width (4x)", &c)?);
        let speed = word(&mut w, "a speed (SDR)", &c)?.parse::<LinkSpeed>().ok();
        let rest = w.rest();
        let (remote, name, rname) = if let Some(r) = rest.strip_prefix('-') {
            let mut w = Words(r);
            let remote = p_end(&mut w, &c)?;
            let names = w
                .rest()
                .strip_prefix("( '")
                .and_then(|s| s.strip_suffix("' )"))
                .and_then(|s| s.split_once("' - '"))
                .ok_or_else(|| {
                    c.err("expected ( 'name' - 'remote name' ) after the remote port")
                })?;
            (Some(remote), names.0, Some(names.1))
        } else {
            let name = rest
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .ok_or_else(|| {
                    c.err("expected '- TYPE LID PORT GUID ( ... )' or the quoted node name")
                })?;
            (None, name, None)
        };
        let i = p_node(&mut nodes, &mut ix, prev, &local, name, n, &c)?;
        prev = Some(i);
        let node = nodes
            .get_mut(i)
            .ok_or_else(|| c.err("internal: bad node index"))?;
        if node.has_port(local.port) {
            return Err(c.err(format!(
                "port {} of {} listed twice",
                local.port,
                quote(&node.desc)
            )));
        }
        node.max_port = node.max_port.max(local.port);
        let mut p = Port::new(local.port, n);
        if local.t != NodeType::Switch {
            p.guid = Some(local.guid);
            p.lid = (local.lid != 0).then_some(local.lid);
        } else if local.lid != 0 {
            node.lid = Some(local.lid);
        }
        p.width = width;
        p.speed = speed;
        let pi = node.ports.len();
        node.ports.push(p);
        if let (Some(r), Some(rn)) = (remote, rname) {
            remotes.push((i, pi, r, rn.to_string()));
        }
    }
    // Far ends: the node listed with that port GUID, or one made for it.
    for (i, pi, r, rname) in remotes {
        let j = match ix.by_guid.get(&r.guid) {
            Some(j) => *j,
            None => {
                let line = nodes
                    .get(i)
                    .and_then(|n| n.ports.get(pi))
                    .map_or(0, |p| p.line);
                let mut node = Node::new(r.t, &rname, line);
                node.guid = Some(r.guid);
                if r.t != NodeType::Switch {
                    let mut p = Port::new(r.port, line);
                    p.guid = Some(r.guid);
                    p.lid = (r.lid != 0).then_some(r.lid);
                    node.ports.push(p);
                }
                nodes.push(node);
                ix.by_guid.insert(r.guid, nodes.len() - 1);
                nodes.len() - 1
            }
        };
        connect(&mut nodes, (i, pi), (j, r.port));
    }
    Ok(nodes)
}

/// The node a `-p` line's local end belongs to.
fn p_node(
    nodes: &mut Vec<Node>,
    ix: &mut Index,
    prev: Option<usize>,
    e: &PEnd,
    name: &str,
    line: usize,
    c: &Ctx,
) -> Result<usize, TopologyError> {
    if let Some(i) = ix.by_guid.get(&e.guid).copied() {
        let node = nodes.get(i).ok_or_else(|| c.err("internal: bad index"))?;
        if node.t != e.t || (e.t != NodeType::Switch && node.desc != name) {
            return Err(c.err(format!(
                "GUID {:#018x} is {} here and another node's at line {}",
                e.guid,
                quote(name),
                node.line
            )));
        }
        return Ok(i);
    }
    // A CA's next port: the line before is the same CA, port not yet seen.
    if e.t != NodeType::Switch {
        if let Some(i) = prev {
            if let Some(p) = nodes.get(i) {
                if p.t == e.t && p.desc == name && !p.has_port(e.port) {
                    ix.by_guid.insert(e.guid, i);
                    return Ok(i);
                }
            }
        }
    }
    let mut node = Node::new(e.t, name, line);
    node.guid = Some(e.guid);
    nodes.push(node);
    ix.by_guid.insert(e.guid, nodes.len() - 1);
    Ok(nodes.len() - 1)
}

// ---- ibdiagnet (ibdm) topology file -------------------------------------

/// HCA device types of ibdm's IBNL set and ibdiagnet's later ones.
const HCA_DEVICES: [&str; 14] = [
    "MT23108", "MT25204", "MT25208", "MT25218", "MT26418", "MT26428", "MT26438", "MT4099",
    "MT4103", "MT4115", "MT4117", "MT4119", "MT4123", "MT4129",
];

fn system_type(t: &str) -> NodeType {
    if t.to_ascii_uppercase().contains("HCA") || HCA_DEVICES.contains(&t) {
        NodeType::Ca
    } else {
        NodeType::Switch
    }
}

/// `P12` or `12`.
fn panel_port(s: &str, c: &Ctx) -> Result<u8, TopologyError> {
    let d = s.strip_prefix(['P', 'p']).unwrap_or(s);
    d.parse::<u8>()
        .ok()
        .filter(|p| (1..=MAX_PORTS).contains(p))
        .ok_or_else(|| {
            c.err(format!(
                "port name {}: expected Pn or n (1-{MAX_PORTS}); chassis port names (L1/P3) \
                 need the system's IBNL file, which is not read",
                quote(s)
            ))
        })
}

/// `-4x-14G->`, `-4x->`, `-14G->` or `->`.
fn arrow(s: &str, c: &Ctx) -> Result<(Option<LinkWidth>, Option<LinkSpeed>), TopologyError> {
    let bad = || {
        c.err(format!(
            "expected -WIDTH-SPEED-> (-4x-25G->, -4x->, ->), found {}",
            quote(s)
        ))
    };
    let inner = s
        .strip_prefix('-')
        .and_then(|r| r.strip_suffix("->").or_else(|| r.strip_suffix('>')))
        .ok_or_else(bad)?;
    let (mut w, mut sp) = (None, None);
    for part in inner.split('-').filter(|p| !p.is_empty()) {
        if let Some(x) = width_of(part) {
            w = Some(x);
        } else if let Some(g) = part.strip_suffix(['G', 'g']) {
            sp = Some(match g {
                "2.5" => LinkSpeed::Sdr,
                "5" => LinkSpeed::Ddr,
                "10" => LinkSpeed::Qdr,
                "14" => LinkSpeed::Fdr,
                "25" => LinkSpeed::Edr,
                "50" => LinkSpeed::Hdr,
                "100" => LinkSpeed::Ndr,
                "200" => LinkSpeed::Xdr,
                _ => return Err(bad()),
            });
        } else {
            return Err(bad());
        }
    }
    Ok((w, sp))
}

fn ibdm(text: &str, file: &str) -> Result<Vec<Node>, TopologyError> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut cur: Option<usize> = None;
    let mut system = |nodes: &mut Vec<Node>, t: &str, name: &str, line: usize| {
        let ty = system_type(t);
        *by_name.entry(name.to_string()).or_insert_with(|| {
            nodes.push(Node::new(ty, name, line));
            nodes.len() - 1
        })
    };
    for (n, line) in record_lines(text) {
        let c = ctx(file, n);
        // A blank line ends the system's section.
        let Some(line) = line else {
            cur = None;
            continue;
        };
        let t = line.trim();
        let mut w = Words(t);
        if !line.starts_with([' ', '\t']) {
            let ty = word(&mut w, "a system type", &c)?;
            let name = word(&mut w, "a system name", &c)?;
            let rest = w.rest();
            if !rest.is_empty() && !rest.starts_with("CFG:") {
                return Err(c.err(format!(
                    "unexpected {} after the system name: expected 'CFG: ...' or the end of \
                     the line",
                    quote(rest)
                )));
            }
            let j = system(&mut nodes, ty, name, n);
            if let Some(x) = nodes.get_mut(j) {
                x.line = n;
            }
            cur = Some(j);
            continue;
        }
        let i = cur.ok_or_else(|| {
            c.err("port line outside a system section: expected a SYSTEM-TYPE NAME line before it")
        })?;
        let port = panel_port(word(&mut w, "a port name (P1)", &c)?, &c)?;
        let (width, speed) = arrow(word(&mut w, "-WIDTH-SPEED->", &c)?, &c)?;
        let rt = word(&mut w, "the remote system type", &c)?;
        let rname = word(&mut w, "the remote system name", &c)?;
        let rport = panel_port(word(&mut w, "the remote port name", &c)?, &c)?;
        if !w.rest().is_empty() {
            return Err(c.err(format!(
                "unexpected {} after the remote port",
                quote(w.rest())
            )));
        }
        let j = system(&mut nodes, rt, rname, n);
        let node = nodes
            .get_mut(i)
            .ok_or_else(|| c.err("internal: bad node index"))?;
        if node.has_port(port) {
            return Err(c.err(format!(
                "port P{port} of {} listed twice",
                quote(&node.desc)
            )));
        }
        node.max_port = node.max_port.max(port);
        let mut p = Port::new(port, n);
        p.width = width;
        p.speed = speed;
        p.remote = Some((j, rport));
        node.ports.push(p);
        if let Some(x) = nodes.get_mut(j) {
            x.max_port = x.max_port.max(rport);
        }
    }
    Ok(nodes)
}

// ---- to a Topology ---------------------------------------------------------

fn build(nodes: Vec<Node>, file: &str) -> Result<Topology, TopologyError> {
    // Names: by GUID as ibnetdiscover names nodes, else the name read.
    let mut names: Vec<String> = Vec::with_capacity(nodes.len());
    let mut taken: HashSet<String> = HashSet::with_capacity(nodes.len());
    for n in &nodes {
        let name = match (n.guid, n.t) {
            (Some(g), NodeType::Switch) => format!("S-{g:016x}"),
            (Some(g), NodeType::Ca) => format!("H-{g:016x}"),
            (Some(g), NodeType::Router) => format!("R-{g:016x}"),
            (None, _) => n.desc.clone(),
        };
        if n.desc.is_empty() && n.guid.is_none() {
            return Err(ctx(file, n.line).err("empty node name"));
        }
        if !taken.insert(name.clone()) {
            return Err(ctx(file, n.line).err(format!(
                "two nodes named {} (a name is one node's)",
                quote(&name)
            )));
        }
        names.push(name);
    }
    // Nodes without GUIDs are numbered as ibsim numbers the short form.
    let mut next = [
        IBSIM_CA_GUID_BASE,
        IBSIM_SWITCH_GUID_BASE,
        IBSIM_ROUTER_GUID_BASE,
    ];
    let mut out = Vec::with_capacity(nodes.len());
    let mut files = Vec::with_capacity(nodes.len());
    for (n, name) in nodes.iter().zip(&names) {
        let num_ports = n.max_port.max(1);
        let slot = match n.t {
            NodeType::Ca => 0,
            NodeType::Switch => 1,
            NodeType::Router => 2,
        };
        let node_guid = match (n.guid, n.t) {
            (Some(g), NodeType::Switch) => g,
            (Some(_), _) => {
                // As ibsim numbers a CA's ports: node GUID + port number.
                let first = n
                    .ports
                    .iter()
                    .filter(|p| p.guid.is_some())
                    .min_by_key(|p| p.port);
                first
                    .and_then(|p| p.guid.map(|g| g.wrapping_sub(u64::from(p.port))))
                    .unwrap_or(0)
            }
            (None, _) => {
                let g = next.get(slot).copied().unwrap_or(0);
                if let Some(x) = next.get_mut(slot) {
                    *x = if n.t == NodeType::Switch {
                        g.wrapping_add(1)
                    } else {
                        g.wrapping_add(u64::from(num_ports) + 1)
                    };
                }
                g
            }
        };
        let mut t = TopoNode::new(n.t, name.clone(), num_ports, Guid(node_guid));
        t.guid_known = false;
        t.port_guids_known = n.guid.is_some();
        t.description = Some(n.desc.clone());
        t.line = n.line;
        t.lid = n.lid.map(Lid);
        for p in &n.ports {
            let Some((j, rp)) = p.remote else { continue };
            let remote = names.get(j).cloned().unwrap_or_default();
            let guid = match n.t {
                NodeType::Switch => Guid(node_guid),
                _ => Guid(p.guid.unwrap_or(node_guid.wrapping_add(u64::from(p.port)))),
            };
            let mut tp = TopoPort::new(PortNum(p.port), guid, remote, PortNum(rp));
            tp.lid = p.lid.map(Lid);
            tp.width = p.width;
            tp.speed = p.speed;
            tp.line = p.line;
            t.ports.push(tp);
        }
        out.push(t);
        files.push(file.to_string());
    }
    link_up(out, &files)
}
