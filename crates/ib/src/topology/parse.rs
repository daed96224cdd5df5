//! Reader for ibnetdiscover / ibsim "net" topology files.

// Input path: bytes from the wire or files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use super::formats::{self, Format};
use super::links::{link_up, quoted, Ctx};
use super::read::{path_name, quote, record_lines, Limits, Reader, DEFAULT_LIMITS};
use super::{
    LftOverride, TopoNode, TopoPort, Topology, TopologyError, IBSIM_CA_GUID_BASE,
    IBSIM_ROUTER_GUID_BASE, IBSIM_SWITCH_GUID_BASE, MAX_PORTS,
};
use crate::types::{Guid, Lid, LinkSpeed, LinkWidth, NodeType, PortNum};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

/// Reads a topology file in any accepted format ([`formats::FORMATS`], told
/// from the content; gzip-compressed files are recognised by their magic)
/// within the [`DEFAULT_LIMITS`].
pub fn parse_file(path: impl AsRef<Path>) -> Result<Topology, TopologyError> {
    parse_file_with(path, DEFAULT_LIMITS)
}

/// [`parse_file`] within other limits.
pub fn parse_file_with(path: impl AsRef<Path>, limits: Limits) -> Result<Topology, TopologyError> {
    let path = path.as_ref();
    let mut reader = Reader::new(limits);
    let text = reader.read(path)?;
    let dir = path.parent().map(Path::to_path_buf);
    parse_text(&text, &path_name(path), dir, reader)
}

/// Parses topology text in any accepted format; `file` only names the
/// source in error messages (`include`s are read relative to the current
/// directory).
pub fn parse_str(text: &str, file: &str) -> Result<Topology, TopologyError> {
    parse_text(text, file, None, Reader::new(DEFAULT_LIMITS))
}

fn parse_text(
    text: &str,
    file: &str,
    dir: Option<PathBuf>,
    reader: Reader,
) -> Result<Topology, TopologyError> {
    match formats::detect(text, file)? {
        Format::Net => {
            let mut p = Parser::new(reader);
            p.text(text, file, dir, 0)?;
            p.finish()
        }
        other => formats::parse(other, text, file),
    }
}

/// Assignments seen since the last node header, applied to the next node.
#[derive(Default)]
struct Pending {
    vendor_id: Option<u32>,
    device_id: Option<u16>,
    sys_image_guid: Option<Guid>,
    port0_guid: Option<Guid>,
    /// A GUID line set the next node's GUID.
    node_guid: bool,
}

struct Parser {
    reader: Reader,
    nodes: Vec<TopoNode>,
    /// File of each node (for link errors found after parsing).
    node_files: Vec<String>,
    /// Node index by name, and the node GUIDs taken: duplicates are
    /// found in constant time (a 48,000-host plan has 49,000 nodes).
    by_name: std::collections::HashMap<String, usize>,
    guids: std::collections::HashSet<u64>,
    /// ibsim's running GUID counters per node type (CA, switch, router).
    next_guid: [u64; 3],
    pending: Pending,
    /// Default enabled width/speed masks (`width=`/`speed=` lines).
    width_enabled: Option<u8>,
    speed_enabled: Option<u8>,
    /// `lft` lines, checked against the nodes once all are read.
    lft: Vec<LftOverride>,
}

impl Parser {
    fn new(reader: Reader) -> Self {
        Self {
            reader,
            nodes: Vec::new(),
            node_files: Vec::new(),
            by_name: Default::default(),
            guids: Default::default(),
            next_guid: [
                IBSIM_CA_GUID_BASE,
                IBSIM_SWITCH_GUID_BASE,
                IBSIM_ROUTER_GUID_BASE,
            ],
            pending: Pending::default(),
            width_enabled: None,
            speed_enabled: None,
            lft: Vec::new(),
        }
    }
}

fn type_slot(t: NodeType) -> usize {
    match t {
        NodeType::Ca => 0,
        NodeType::Switch => 1,
        NodeType::Router => 2,
    }
}

const EXPECTED_TOP: &str = "expected a node header (Switch|Hca|Ca|Rt N \"name\"), an \
     assignment (switchguid=, caguid=, rtguid=, sysimgguid=, vendid=, devid=, width=, speed=), \
     include, lft, a comment or a blank line";

impl Parser {
    fn include(&mut self, path: &Path, depth: usize) -> Result<(), TopologyError> {
        let text = self.reader.read(path)?;
        let dir = path.parent().map(Path::to_path_buf);
        self.text(&text, &path_name(path), dir, depth)
    }

    fn text(
        &mut self,
        text: &str,
        file: &str,
        dir: Option<PathBuf>,
        depth: usize,
    ) -> Result<(), TopologyError> {
        // Index of the node whose port lines may follow.
        let mut open: Option<usize> = None;
        for (n, line) in record_lines(text) {
            let ctx = Ctx { file, line: n };
            // A blank line ends the node record.
            let Some(line) = line else {
                open = None;
                continue;
            };
            let trimmed = line.trim();
            if line.starts_with('[') {
                let Some(n) = open else {
                    return Err(ctx.err("port line outside a node record: expected a node header (Switch|Hca|Ca|Rt) before it"));
                };
                let port = self.port_line(line, n, &ctx)?;
                if let Some(node) = self.nodes.get_mut(n) {
                    node.ports.push(port);
                }
                continue;
            }
            if line.starts_with('@') {
                return Err(ctx.err("ibsim port aliases ('@' lines) are not supported"));
            }
            open = None;
            let word: String = trimmed
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            match word.as_str() {
                "Switch" => open = Some(self.header(line, NodeType::Switch, &ctx, file)?),
                "Hca" | "Ca" => open = Some(self.header(line, NodeType::Ca, &ctx, file)?),
                "Rt" | "Router" => open = Some(self.header(line, NodeType::Router, &ctx, file)?),
                "switchguid" => self.guid_base(trimmed, NodeType::Switch, &ctx)?,
                "caguid" | "hcaguids" => self.guid_base(trimmed, NodeType::Ca, &ctx)?,
                "rtguid" => self.guid_base(trimmed, NodeType::Router, &ctx)?,
                "sysimgguid" => {
                    self.pending.sys_image_guid = Some(Guid(assign_u64(trimmed, &ctx)?));
                }
                "vendid" => {
                    let v = assign_u64(trimmed, &ctx)?;
                    self.pending.vendor_id = Some(
                        u32::try_from(v)
                            .ok()
                            .filter(|v| *v <= 0xFF_FFFF)
                            .ok_or_else(|| ctx.err("vendid: expected a 24-bit vendor id"))?,
                    );
                }
                "devid" => {
                    let v = assign_u64(trimmed, &ctx)?;
                    self.pending.device_id = Some(
                        u16::try_from(v)
                            .map_err(|_| ctx.err("devid: expected a 16-bit device id"))?,
                    );
                }
                "width" => {
                    self.width_enabled = Some(width_mask(assign_u64(trimmed, &ctx)?, &ctx)?);
                }
                "speed" => {
                    self.speed_enabled = Some(speed_mask(assign_u64(trimmed, &ctx)?, &ctx)?);
                }
                "include" => {
                    let name = trimmed
                        .find('"')
                        .and_then(|q| trimmed.get(q..))
                        .and_then(quoted)
                        .map(|(s, _)| s)
                        .ok_or_else(|| ctx.err("include: expected a quoted file name"))?;
                    let max = self.reader.limits.max_include_depth;
                    if depth + 1 > max {
                        return Err(
                            ctx.err(format!("include nested more than {max} deep (the limit)"))
                        );
                    }
                    let path = match &dir {
                        Some(d) if Path::new(name).is_relative() => d.join(name),
                        _ => PathBuf::from(name),
                    };
                    self.include(&path, depth + 1)?;
                }
                "lft" => self.lft.push(super::lft::parse_line(trimmed, &ctx)?),
                // ibsim console commands, its debug switch and name prefix; ibnetdiscover
                // chassis annotations (-g): no effect on the fabric we build.
                "do" | "pdebug" | "Chassis" | "Hostname" => {}
                "module" => return Err(ctx.err("ibsim 'module' name prefixes are not supported")),
                _ => return Err(ctx.err(EXPECTED_TOP)),
            }
        }
        Ok(())
    }

    fn guid_base(&mut self, line: &str, t: NodeType, ctx: &Ctx) -> Result<(), TopologyError> {
        let slot = type_slot(t);
        let (op_pos, relative) = match (line.find('='), line.find('+')) {
            (Some(e), _) => (e, false),
            (None, Some(p)) => (p, true),
            (None, None) => return Err(ctx.err("expected '=' or '+' and a GUID")),
        };
        let rest = line.get(op_pos + 1..).unwrap_or("");
        let (value, after) = number_prefix(rest)
            .ok_or_else(|| ctx.err("expected a GUID number (0x...) after '='"))?;
        // switchguid=0x200001(200001): the parenthesised value is port 0's GUID.
        let after = after.trim_start();
        if t == NodeType::Switch {
            if let Some(inner) = after.strip_prefix('(').and_then(|s| s.split(')').next()) {
                let pg = u64::from_str_radix(inner.trim(), 16)
                    .map_err(|_| ctx.err("expected a hexadecimal port GUID in '(...)'"))?;
                self.pending.port0_guid = Some(Guid(pg));
            }
        }
        self.pending.node_guid = true;
        if let Some(slot_val) = self.next_guid.get_mut(slot) {
            *slot_val = if relative {
                base_for(t).wrapping_add(value)
            } else {
                value
            };
        }
        Ok(())
    }

    fn header(
        &mut self,
        line: &str,
        t: NodeType,
        ctx: &Ctx,
        file: &str,
    ) -> Result<usize, TopologyError> {
        let keyword_len = line
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(line.len());
        let rest = line.get(keyword_len..).unwrap_or("").trim_start();
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let num_ports: u8 = digits
            .parse()
            .ok()
            .filter(|n| (1..=MAX_PORTS).contains(n))
            .ok_or_else(|| {
                ctx.err(format!(
                    "expected the number of ports (1-{MAX_PORTS}) after the node type"
                ))
            })?;
        let rest = rest.get(digits.len()..).unwrap_or("");
        let (name, rest) = quoted(rest)
            .ok_or_else(|| ctx.err("expected the quoted node id after the port count"))?;
        if name.is_empty() {
            return Err(ctx.err("empty node id"));
        }
        if let Some(prev) = self.by_name.get(name).and_then(|i| self.nodes.get(*i)) {
            return Err(ctx.err(format!(
                "duplicate node id {} (first defined at line {})",
                quote(name),
                prev.line
            )));
        }
        let slot = type_slot(t);
        let guid = self.next_guid.get(slot).copied().unwrap_or(0);
        if let Some(c) = self.next_guid.get_mut(slot) {
            // ibsim: a switch takes one GUID, a CA one plus one per port.
            *c = if t == NodeType::Switch {
                guid.wrapping_add(1)
            } else {
                guid.wrapping_add(u64::from(num_ports) + 1)
            };
        }
        if !self.guids.insert(guid) {
            return Err(ctx.err(format!(
                "node {}: GUID {guid:#x} already in use",
                quote(name)
            )));
        }
        let pending = std::mem::take(&mut self.pending);
        let mut node = TopoNode::new(t, name, num_ports, Guid(guid));
        node.line = ctx.line;
        node.guid_known = pending.node_guid;
        node.port0_guid = pending.port0_guid.unwrap_or(Guid(guid));
        node.sys_image_guid = pending.sys_image_guid.unwrap_or(Guid(guid));
        node.vendor_id = pending.vendor_id.unwrap_or(0);
        node.device_id = pending.device_id.unwrap_or(0);

        if let Some(comment) = rest.split_once('#').map(|(_, c)| c.trim()) {
            let after = if let Some((desc, after)) = quoted(comment) {
                node.description = Some(desc.to_string());
                after
            } else {
                // Unquoted description ends where ibsim's keywords start.
                let end = [" enhanced port ", " base port ", " lid ", " lmc "]
                    .iter()
                    .filter_map(|k| comment.find(k))
                    .min()
                    .unwrap_or(comment.len());
                let desc = comment.get(..end).unwrap_or("").trim();
                if !desc.is_empty() {
                    node.description = Some(desc.to_string());
                }
                comment.get(end..).unwrap_or("")
            };
            if after.contains("enhanced port 0") {
                node.enhanced_port0 = Some(true);
            } else if after.contains("base port 0") {
                node.enhanced_port0 = Some(false);
            }
            (node.lid, node.lmc) = lid_lmc(after, ctx)?;
        } else if !rest.trim().is_empty() {
            return Err(ctx.err(format!(
                "unexpected {} after the node id: expected '# \"description\"' or end of line",
                quote(rest.trim())
            )));
        }
        self.by_name.insert(node.name.clone(), self.nodes.len());
        self.nodes.push(node);
        self.node_files.push(file.to_string());
        Ok(self.nodes.len() - 1)
    }

    fn port_line(&self, line: &str, n: usize, ctx: &Ctx) -> Result<TopoPort, TopologyError> {
        let node = self
            .nodes
            .get(n)
            .ok_or_else(|| ctx.err("internal: no open node"))?;
        let (port, rest) = bracket_num(line)
            .ok_or_else(|| ctx.err("expected '[N]' with the local port number"))?;
        if port == 0 || port > u64::from(node.num_ports) {
            return Err(ctx.err(format!(
                "port {port} out of range: node {} has ports 1-{}",
                quote(&node.name),
                node.num_ports
            )));
        }
        let port = PortNum(port as u8);
        if node.port(port).is_some() {
            return Err(ctx.err(format!(
                "port {} of {} listed twice",
                port.0,
                quote(&node.name)
            )));
        }
        let rest = skip_ext(rest);
        let (own_guid, rest) = paren_guid(rest, ctx)?;
        let (remote, rest) = quoted(rest)
            .ok_or_else(|| ctx.err("expected the quoted remote node id after the port number"))?;
        if remote.is_empty() {
            return Err(ctx.err("empty remote node id"));
        }
        // ibsim defaults the remote port to 1 when it is omitted.
        let (remote_port, rest) = match bracket_num(rest) {
            Some((p, r)) => (p, r),
            None if rest.trim_start().starts_with('[') => {
                return Err(ctx.err("expected '[N]' with the remote port number"))
            }
            None => (1, rest),
        };
        let remote_port = u8::try_from(remote_port)
            .ok()
            .filter(|p| (1..=MAX_PORTS).contains(p))
            .ok_or_else(|| {
                ctx.err(format!(
                    "remote port {remote_port} out of range 1-{MAX_PORTS}"
                ))
            })?;
        let rest = skip_ext(rest);
        let (_remote_guid, rest) = paren_guid(rest, ctx)?;

        let guid = match node.node_type {
            NodeType::Switch => node.port0_guid,
            _ => own_guid.unwrap_or(Guid(node.node_guid.0.wrapping_add(u64::from(port.0)))),
        };
        let mut tp = TopoPort::new(port, guid, remote, PortNum(remote_port));
        tp.line = ctx.line;
        tp.width_enabled = self.width_enabled;
        tp.speed_enabled = self.speed_enabled;

        let (opts, comment) = match rest.split_once('#') {
            Some((o, c)) => (o, Some(c)),
            None => (rest, None),
        };
        for word in opts.split_whitespace() {
            match word.split_once('=') {
                Some(("w", v)) => tp.width_enabled = Some(width_mask(num(v, ctx)?, ctx)?),
                Some(("s", v)) => tp.speed_enabled = Some(speed_mask(num(v, ctx)?, ctx)?),
                _ => {
                    return Err(ctx.err(format!(
                        "unexpected {}: expected options w=N, s=N or a '#' comment",
                        quote(word)
                    )))
                }
            }
        }
        if let Some(c) = comment {
            self.port_comment(c, node.node_type, &mut tp, ctx)?;
        }
        Ok(tp)
    }

    /// `# "remote desc" lid N 4xQDR` (switch) or `# lid N lmc M "remote desc" lid N 4xQDR` (CA).
    fn port_comment(
        &self,
        c: &str,
        t: NodeType,
        tp: &mut TopoPort,
        ctx: &Ctx,
    ) -> Result<(), TopologyError> {
        let (before, after) = match c.find('"') {
            Some(q) => {
                let (before, from_quote) = c.split_at(q);
                (before, quoted(from_quote).map_or("", |(_, after)| after))
            }
            None => (c, c),
        };
        if t != NodeType::Switch {
            (tp.lid, tp.lmc) = lid_lmc(before, ctx)?;
        }
        for word in after.split_whitespace() {
            if let Some((w, s)) = word.split_once(['x', 'X']) {
                if let (Ok(w), Ok(s)) =
                    (format!("{w}X").parse::<LinkWidth>(), s.parse::<LinkSpeed>())
                {
                    tp.width = Some(w);
                    tp.speed = Some(s);
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Topology, TopologyError> {
        super::lft::check(&self.lft, &self.nodes)?;
        let mut topo = link_up(self.nodes, &self.node_files)?;
        topo.lft = self.lft;
        Ok(topo)
    }
}

fn base_for(t: NodeType) -> u64 {
    match t {
        NodeType::Ca => IBSIM_CA_GUID_BASE,
        NodeType::Switch => IBSIM_SWITCH_GUID_BASE,
        NodeType::Router => IBSIM_ROUTER_GUID_BASE,
    }
}

/// `[N]rest` after optional leading whitespace.
fn bracket_num(s: &str) -> Option<(u64, &str)> {
    let s = s.trim_start().strip_prefix('[')?;
    let end = s.find(']')?;
    let n = s.get(..end)?.trim().parse().ok()?;
    Some((n, s.get(end + 1..)?))
}

/// ibnetdiscover -g prints `[ext N]` after port numbers: not part of the fabric.
fn skip_ext(s: &str) -> &str {
    let t = s.trim_start();
    if let Some(r) = t.strip_prefix("[ext") {
        if let Some(end) = r.find(']') {
            return r.get(end + 1..).unwrap_or("");
        }
    }
    s
}

/// An optional `(hexguid)`.
fn paren_guid<'a>(s: &'a str, ctx: &Ctx) -> Result<(Option<Guid>, &'a str), TopologyError> {
    let t = s.trim_start();
    let Some(r) = t.strip_prefix('(') else {
        return Ok((None, s));
    };
    let end = r
        .find(')')
        .ok_or_else(|| ctx.err("expected ')' closing the port GUID"))?;
    let hex = r.get(..end).unwrap_or("").trim();
    let hex = hex
        .strip_prefix("0x")
        .or_else(|| hex.strip_prefix("0X"))
        .unwrap_or(hex);
    let g = u64::from_str_radix(hex, 16).map_err(|_| {
        ctx.err(format!(
            "expected a hexadecimal port GUID, found {}",
            quote(hex)
        ))
    })?;
    Ok((Some(Guid(g)), r.get(end + 1..).unwrap_or("")))
}

/// A C-style number (decimal, 0x hex, leading-0 octal) at the start of `s`.
fn number_prefix(s: &str) -> Option<(u64, &str)> {
    let s = s.trim_start();
    let (radix, body) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, s.get(1..)?)
    } else {
        (10, s)
    };
    let len = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    if len == 0 {
        return if radix == 8 { Some((0, body)) } else { None };
    }
    let v = u64::from_str_radix(body.get(..len)?, radix).ok()?;
    Some((v, body.get(len..)?))
}

fn num(s: &str, ctx: &Ctx) -> Result<u64, TopologyError> {
    match number_prefix(s) {
        Some((v, rest)) if rest.trim().is_empty() => Ok(v),
        _ => Err(ctx.err(format!("expected a number, found {}", quote(s)))),
    }
}

fn assign_u64(line: &str, ctx: &Ctx) -> Result<u64, TopologyError> {
    let (k, v) = line
        .split_once('=')
        .ok_or_else(|| ctx.err("expected 'name=value'"))?;
    num(v, ctx).map_err(|_| ctx.err(format!("{}: expected a number after '='", quote(k.trim()))))
}

/// `v` when it is a u8 in `range`, else the error `expected` words.
fn u8_in(
    v: u64,
    range: RangeInclusive<u8>,
    ctx: &Ctx,
    expected: impl FnOnce() -> String,
) -> Result<u8, TopologyError> {
    u8::try_from(v)
        .ok()
        .filter(|v| range.contains(v))
        .ok_or_else(|| ctx.err(expected()))
}

fn width_mask(v: u64, ctx: &Ctx) -> Result<u8, TopologyError> {
    u8_in(v, 1..=31, ctx, || {
        format!("width {v}: expected a LinkWidthEnabled mask 1-31 (1=1x, 2=4x, 4=8x, 8=12x, 16=2x)")
    })
}

fn speed_mask(v: u64, ctx: &Ctx) -> Result<u8, TopologyError> {
    u8_in(v, 1..=15, ctx, || {
        format!("speed {v}: expected a LinkSpeedEnabled mask 1-15 (1=SDR, 2=DDR, 4=QDR)")
    })
}

/// The number after `key` in a word list.
fn keyword_value(words: &[&str], key: &str) -> Option<u64> {
    words
        .windows(2)
        .find(|w| w.first() == Some(&key))
        .and_then(|w| w.get(1))
        .and_then(|v| number_prefix(v).map(|(n, _)| n))
}

/// The `lid N` and `lmc M` a comment gives (a switch header's, a CA port's).
fn lid_lmc(comment: &str, ctx: &Ctx) -> Result<(Option<Lid>, Option<u8>), TopologyError> {
    let words: Vec<&str> = comment.split_whitespace().collect();
    let lid = keyword_value(&words, "lid").map(|v| lid_of(v, ctx));
    let lmc = keyword_value(&words, "lmc").map(|v| lmc_of(v, ctx));
    Ok((lid.transpose()?, lmc.transpose()?))
}

fn lid_of(v: u64, ctx: &Ctx) -> Result<Lid, TopologyError> {
    u16::try_from(v)
        .ok()
        .map(Lid)
        .filter(|l| l.is_unicast() || l.is_unassigned())
        .ok_or_else(|| ctx.err(format!("lid {v}: expected a unicast LID (1-49151) or 0")))
}

fn lmc_of(v: u64, ctx: &Ctx) -> Result<u8, TopologyError> {
    u8_in(v, 0..=7, ctx, || format!("lmc {v}: expected 0-7"))
}
