//! iblinkinfo's output as a plan: switch and CA headers with their port
//! lines, or `-l` lines (one link a line).

use std::collections::{HashMap, HashSet};

use super::{
    connect, ctx, hex_guid, lid_num, meaningful, port_num, width_of, word, Index, Node, Port,
    Words, FORMATS,
};
use crate::topology::links::Ctx;
use crate::topology::read::quote;
use crate::topology::TopologyError;
use crate::types::{LinkSpeed, LinkWidth, NodeType};

/// A far end as iblinkinfo prints it.
struct LRemote {
    guid: Option<u64>,
    lid: u16,
    port: u8,
    name: String,
}

/// `1[  ]` or `1[12]` (the external port number is not ours).
fn bracket_port(w: &mut Words, c: &Ctx) -> Result<u8, TopologyError> {
    let t = word(w, "a port number", c)?;
    let digits: &str = t.split('[').next().unwrap_or("");
    if !t.contains('[') {
        return Err(c.err(format!("expected PORT[..], found {}", quote(t))));
    }
    if !t.contains(']') {
        // `1[  ]`: the bracket's blanks split it.
        word(w, "']'", c)?;
    }
    port_num(digits, c)
}

/// iblinkinfo's `2.5 Gbps`, `14.0625 Gbps`, `10.0 Gbps (FDR10)`.
fn gbps(n: &str, fdr10: bool) -> Option<LinkSpeed> {
    Some(match n {
        "2.5" => LinkSpeed::Sdr,
        "5.0" => LinkSpeed::Ddr,
        "10.0" if fdr10 => LinkSpeed::Fdr10,
        "10.0" => LinkSpeed::Qdr,
        "14.0625" => LinkSpeed::Fdr,
        "25.78125" => LinkSpeed::Edr,
        "53.125" => LinkSpeed::Hdr,
        "106.25" => LinkSpeed::Ndr,
        "212.5" => LinkSpeed::Xdr,
        _ => return None,
    })
}

/// One port line of iblinkinfo, as read.
struct LPort {
    guid: Option<u64>,
    lid: u16,
    port: u8,
    width: Option<LinkWidth>,
    speed: Option<LinkSpeed>,
    remote: Option<LRemote>,
}

/// The port part of a line: `[0xGUID] LID PORT[..] ==( ... )==> REMOTE`.
fn l_port(s: &str, c: &Ctx, line_mode: bool) -> Result<LPort, TopologyError> {
    let (left, right) = s
        .split_once("==")
        .ok_or_else(|| c.err("expected '==( ... )==>' after the port number"))?;
    let (link, remote) = right
        .split_once("==>")
        .ok_or_else(|| c.err("expected '==>' after the link state"))?;
    let mut w = Words(left);
    let first = word(&mut w, "a LID", c)?;
    let (guid, lid) = if first.starts_with("0x") {
        (Some(hex_guid(first, c)?), word(&mut w, "a LID", c)?)
    } else {
        (None, first)
    };
    let lid = lid_num(lid, c)?;
    let port = bracket_port(&mut w, c)?;
    let (mut width, mut speed) = (None, None);
    if let Some((before, after)) = link.split_once("Gbps") {
        let mut lw = Words(before.trim_start().trim_start_matches('('));
        width = lw.next().and_then(width_of);
        let num = lw.next().unwrap_or("");
        speed = gbps(num, after.trim_start().starts_with("(FDR10)"));
    }
    let r = remote.trim();
    let remote = if r.is_empty() || r.starts_with('[') || r.starts_with("\"Port not available\"") {
        None
    } else {
        let (head, tail) = r
            .split_once('"')
            .ok_or_else(|| c.err("expected the far end's quoted name"))?;
        let name = tail
            .rsplit_once('"')
            .map(|(n, _)| n)
            .ok_or_else(|| c.err("expected '\"' closing the far end's name"))?;
        let mut w = Words(head);
        let rguid = if line_mode {
            Some(hex_guid(word(&mut w, "the far end's GUID", c)?, c)?)
        } else {
            None
        };
        let rlid = lid_num(word(&mut w, "the far end's LID", c)?, c)?;
        let rport = bracket_port(&mut w, c)?;
        Some(LRemote {
            guid: rguid,
            lid: rlid,
            port: rport,
            name: name.to_string(),
        })
    };
    Ok(LPort {
        guid,
        lid,
        port,
        width,
        speed,
        remote,
    })
}

pub(super) fn linkinfo(text: &str, file: &str) -> Result<Vec<Node>, TopologyError> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut ix = Index::default();
    // Node (and port, for a CA) of each LID a line gives.
    let mut by_lid: HashMap<u16, (usize, Option<u8>)> = HashMap::new();
    let mut remotes: Vec<(usize, usize, LRemote)> = Vec::new();
    let mut cur: Option<usize> = None;
    for (n, line) in meaningful(text) {
        let c = ctx(file, n);
        let t = line.trim();
        let header = [
            ("Switch: ", NodeType::Switch),
            ("CA: ", NodeType::Ca),
            ("Router: ", NodeType::Router),
        ]
        .into_iter()
        .find_map(|(h, ty)| t.strip_prefix(h).map(|r| (ty, r)));
        if let Some((ty, rest)) = header {
            let rest = rest.strip_suffix(':').unwrap_or(rest);
            if ty == NodeType::Switch {
                let mut w = Words(rest);
                let guid = hex_guid(word(&mut w, "the switch's GUID", &c)?, &c)?;
                let desc = w.rest();
                if let Some(i) = ix.by_guid.get(&guid) {
                    let prev = nodes.get(*i).map_or(0, |x| x.line);
                    return Err(c.err(format!(
                        "switch {guid:#018x} listed twice (first at line {prev})"
                    )));
                }
                let mut node = Node::new(ty, desc, n);
                node.guid = Some(guid);
                nodes.push(node);
                ix.by_guid.insert(guid, nodes.len() - 1);
            } else {
                nodes.push(Node::new(ty, rest, n));
            }
            cur = Some(nodes.len() - 1);
            continue;
        }
        let line_mode = t.starts_with("0x")
            && t.split_whitespace()
                .nth(1)
                .is_some_and(|w| w.starts_with('"'));
        let (i, body) = if line_mode {
            // `0xGUID "  name" LID ...`: the name is padded to 30 columns.
            let (g, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
            let guid = hex_guid(g, &c)?;
            let rest = rest.trim_start().strip_prefix('"').unwrap_or(rest);
            let (name, body) = rest
                .split_once('"')
                .ok_or_else(|| c.err("expected '\"' closing the node name"))?;
            let name = name.trim();
            let i = l_node(&mut nodes, &mut ix, cur, guid, name, n, &c)?;
            cur = Some(i);
            (i, format!("{g} {body}"))
        } else {
            let i = cur.ok_or_else(|| {
                c.err(format!(
                    "port line before a node header: expected {FORMATS}"
                ))
            })?;
            (i, t.to_string())
        };
        let LPort {
            guid,
            lid,
            port,
            width,
            speed,
            remote,
        } = l_port(&body, &c, line_mode)?;
        let node = nodes
            .get_mut(i)
            .ok_or_else(|| c.err("internal: bad node index"))?;
        if node.has_port(port) {
            return Err(c.err(format!("port {port} of {} listed twice", quote(&node.desc))));
        }
        node.max_port = node.max_port.max(port);
        let mut p = Port::new(port, n);
        p.width = width;
        p.speed = speed;
        if node.t == NodeType::Switch && !line_mode {
            node.lid = (lid != 0).then_some(lid);
            if lid != 0 {
                by_lid.insert(lid, (i, None));
            }
        } else {
            let guid = guid.ok_or_else(|| c.err("expected the CA port's GUID (0x...)"))?;
            if !line_mode {
                if let Some(j) = ix.by_guid.insert(guid, i).filter(|j| *j != i) {
                    let prev = nodes.get(j).map_or(0, |x| x.line);
                    return Err(c.err(format!(
                        "port GUID {guid:#018x} listed twice (first at line {prev})"
                    )));
                }
            }
            p.guid = Some(guid);
            p.lid = (lid != 0).then_some(lid);
            if lid != 0 {
                by_lid.insert(lid, (i, Some(port)));
            }
            if let Some(x) = nodes.get_mut(i) {
                if x.guid.is_none() {
                    x.guid = Some(guid);
                }
            }
        }
        let Some(node) = nodes.get_mut(i) else {
            continue;
        };
        let pi = node.ports.len();
        node.ports.push(p);
        if let Some(r) = remote {
            remotes.push((i, pi, r));
        }
    }
    line_mode_types(&mut nodes);
    far_ends(nodes, ix, &by_lid, remotes, file)
}

/// Each port's far end: by GUID (-l), else by LID when the name agrees,
/// else by a name one listed node has, else a node made for it (by name).
fn far_ends(
    mut nodes: Vec<Node>,
    mut ix: Index,
    by_lid: &HashMap<u16, (usize, Option<u8>)>,
    remotes: Vec<(usize, usize, LRemote)>,
    file: &str,
) -> Result<Vec<Node>, TopologyError> {
    let mut made: HashMap<String, usize> = HashMap::new();
    // Listed nodes by name: (the first, how many).
    let mut named: HashMap<String, (usize, usize)> = HashMap::new();
    for (k, x) in nodes.iter().enumerate() {
        named.entry(x.desc.clone()).or_insert((k, 0)).1 += 1;
    }
    for (i, pi, r) in remotes {
        let line = nodes
            .get(i)
            .and_then(|n| n.ports.get(pi))
            .map_or(0, |p| p.line);
        let by_lid = || {
            by_lid
                .get(&r.lid)
                .filter(|_| r.lid != 0)
                .filter(|(j, port)| {
                    port.is_none_or(|p| p == r.port)
                        && nodes.get(*j).is_some_and(|x| x.desc == r.name)
                })
                .map(|(j, _)| *j)
        };
        let found = match r.guid {
            Some(g) => ix.by_guid.get(&g).copied(),
            None => by_lid(),
        };
        let j = match found {
            Some(j) => j,
            None => match (r.guid, named.get(&r.name)) {
                (None, Some((one, 1))) => *one,
                (None, Some(_)) => {
                    return Err(ctx(file, line).err(format!(
                        "far end {} (LID {}, port {}): more than one node has that name and \
                             none that LID",
                        quote(&r.name),
                        r.lid,
                        r.port
                    )))
                }
                _ => {
                    let key = match r.guid {
                        Some(g) => format!("{g:x}"),
                        None => r.name.clone(),
                    };
                    match made.get(&key) {
                        Some(j) => *j,
                        None => {
                            let mut node = Node::new(NodeType::Ca, &r.name, line);
                            node.guid = r.guid;
                            nodes.push(node);
                            let j = nodes.len() - 1;
                            if let Some(g) = r.guid {
                                ix.by_guid.insert(g, j);
                            }
                            made.insert(key, j);
                            j
                        }
                    }
                }
            },
        };
        connect(&mut nodes, (i, pi), (j, r.port));
    }
    Ok(nodes)
}

/// `-l` lines: the node of a line is the node listed with its GUID (a
/// switch's ports share one), else the line before's when it has the
/// same name and not this port (a CA's next port), else a new one.
fn l_node(
    nodes: &mut Vec<Node>,
    ix: &mut Index,
    prev: Option<usize>,
    guid: u64,
    name: &str,
    line: usize,
    c: &Ctx,
) -> Result<usize, TopologyError> {
    if let Some(i) = ix.by_guid.get(&guid).copied() {
        if nodes.get(i).is_some_and(|x| x.desc != name) {
            return Err(c.err(format!(
                "GUID {guid:#018x} has another name here ({}) than before",
                quote(name)
            )));
        }
        return Ok(i);
    }
    if let Some(i) = prev {
        if nodes
            .get(i)
            .is_some_and(|p| p.desc == name && p.guid != Some(guid))
        {
            ix.by_guid.insert(guid, i);
            return Ok(i);
        }
    }
    let mut node = Node::new(NodeType::Ca, name, line);
    node.guid = Some(guid);
    nodes.push(node);
    ix.by_guid.insert(guid, nodes.len() - 1);
    Ok(nodes.len() - 1)
}

/// `-l` does not print node types: ports sharing one GUID are a switch's.
fn line_mode_types(nodes: &mut [Node]) {
    for n in nodes.iter_mut() {
        if n.t != NodeType::Ca || n.ports.len() < 2 {
            continue;
        }
        let guids: HashSet<Option<u64>> = n.ports.iter().map(|p| p.guid).collect();
        if guids.len() == 1 && n.ports.iter().all(|p| p.guid.is_some()) {
            n.t = NodeType::Switch;
            for p in &mut n.ports {
                if n.lid.is_none() {
                    n.lid = p.lid;
                }
                p.guid = None;
                p.lid = None;
            }
        }
    }
}
