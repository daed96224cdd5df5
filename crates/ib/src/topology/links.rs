//! What every plan format shares once its nodes are read: where an error
//! is ([`Ctx`]), and the links checked against their far ends
//! ([`link_up`]).

// Input path: bytes from files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use super::read::quote;
use super::{TopoNode, TopoPort, Topology, TopologyError};

pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: usize,
}

impl Ctx<'_> {
    pub(crate) fn err(&self, message: impl Into<String>) -> TopologyError {
        TopologyError::Syntax {
            file: self.file.to_string(),
            line: self.line,
            message: message.into(),
        }
    }
}

/// `"text"rest` after optional leading whitespace: (text, rest).
pub(crate) fn quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    let end = s.find('"')?;
    Some((s.get(..end)?, s.get(end + 1..)?))
}

/// Checks every link of `nodes` against its far end and adds the far ends
/// a file left out; `node_files[i]` is node i's file (for errors).
pub(crate) fn link_up(
    mut nodes: Vec<TopoNode>,
    node_files: &[String],
) -> Result<Topology, TopologyError> {
    {
        let index: std::collections::HashMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        // Check every link against its far end; add far ends a file left out.
        let mut missing: Vec<(usize, TopoPort)> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let file = node_files.get(i).map(String::as_str).unwrap_or("");
            for p in &n.ports {
                let ctx = Ctx { file, line: p.line };
                let j = *index.get(p.remote.as_str()).ok_or_else(|| {
                    ctx.err(format!(
                        "remote node {} (connected to {} port {}) is not defined",
                        quote(&p.remote),
                        quote(&n.name),
                        p.port.0
                    ))
                })?;
                let r = nodes
                    .get(j)
                    .ok_or_else(|| ctx.err("internal: bad node index"))?;
                if p.remote_port.0 > r.num_ports {
                    return Err(ctx.err(format!(
                        "remote port {} out of range: {} has ports 1-{}",
                        p.remote_port.0,
                        quote(&r.name),
                        r.num_ports
                    )));
                }
                if j == i && p.remote_port == p.port {
                    return Err(ctx.err("port connected to itself"));
                }
                match r.port(p.remote_port) {
                    Some(back) if back.remote == n.name && back.remote_port == p.port => {}
                    Some(back) => {
                        return Err(ctx.err(format!(
                            "{} port {} is connected to {} port {}, but {} port {} says it is connected to {} port {}",
                            quote(&n.name), p.port.0, quote(&r.name), p.remote_port.0,
                            quote(&r.name), back.port.0, quote(&back.remote), back.remote_port.0
                        )))
                    }
                    None => {
                        let guid = r.port_guid(p.remote_port);
                        let mut back = TopoPort::new(p.remote_port, guid, n.name.clone(), p.port);
                        back.width = p.width;
                        back.speed = p.speed;
                        back.width_enabled = p.width_enabled;
                        back.speed_enabled = p.speed_enabled;
                        back.line = p.line;
                        missing.push((j, back));
                    }
                }
            }
        }
        for (j, back) in missing {
            if let Some(node) = nodes.get_mut(j) {
                node.ports.push(back);
            }
        }
        Topology::new(nodes)
    }
}
