//! Forwarding-table overrides in a fabric file, for the built-in sim only:
//!
//! ```text
//! lft "leaf01" 15 37        # LID 15 leaves leaf01 by port 37
//! lft "spine01" 15-18 255   # LIDs 15 to 18: no route
//! ```
//!
//! `lft "SWITCH" LID[-LID] PORT`: after the sim routes the fabric, the
//! switch's LinearForwardingTable entries for the LIDs are set to PORT
//! (0 to the switch's port count; 255 = no entry), lines applied in file
//! order, so tests can hold black holes, loops and uneven leaves in a
//! file. ibsim does not read these lines (they are ours), and a cabling
//! plan ignores them.

// Input path: bytes from files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use super::links::{quoted, Ctx};
use super::read::quote;
use super::{LftOverride, TopoNode, TopologyError};
use crate::types::{Lid, NodeType};

const EXPECTED: &str =
    "lft: expected 'lft \"SWITCH\" LID[-LID] PORT' (LIDs 1-49151, PORT 0-254 or 255 for none)";

/// One `lft` line (`line` trimmed).
pub(super) fn parse_line(line: &str, ctx: &Ctx) -> Result<LftOverride, TopologyError> {
    let rest = line.strip_prefix("lft").unwrap_or(line);
    let (switch, rest) = quoted(rest).ok_or_else(|| ctx.err(EXPECTED))?;
    let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
    let words: Vec<&str> = rest.split_whitespace().collect();
    let [lids, port] = words.as_slice() else {
        return Err(ctx.err(EXPECTED));
    };
    let (first, last) = match lids.split_once('-') {
        Some((a, b)) => (lid(a, ctx)?, lid(b, ctx)?),
        None => (lid(lids, ctx)?, lid(lids, ctx)?),
    };
    if first > last {
        return Err(ctx.err(format!(
            "lft: LID range {lids} runs backwards: expected FIRST-LAST"
        )));
    }
    let port = port
        .parse::<u8>()
        .map_err(|_| ctx.err(format!("lft: port {}: expected 0-255", quote(port))))?;
    Ok(LftOverride {
        switch: switch.to_string(),
        first,
        last,
        port,
        file: ctx.file.to_string(),
        line: ctx.line,
    })
}

fn lid(s: &str, ctx: &Ctx) -> Result<Lid, TopologyError> {
    s.parse::<u16>()
        .ok()
        .map(Lid)
        .filter(|l| l.is_unicast())
        .ok_or_else(|| {
            ctx.err(format!(
                "lft: LID {}: expected a unicast LID (1-49151)",
                quote(s)
            ))
        })
}

/// Checks each override against the nodes: the switch exists, is a switch,
/// and has the port (or the port is 255).
pub(super) fn check(lft: &[LftOverride], nodes: &[TopoNode]) -> Result<(), TopologyError> {
    for o in lft {
        let ctx = Ctx {
            file: &o.file,
            line: o.line,
        };
        let node = nodes
            .iter()
            .find(|n| n.name == o.switch)
            .ok_or_else(|| ctx.err(format!("lft: no node {}", quote(&o.switch))))?;
        if node.node_type != NodeType::Switch {
            return Err(ctx.err(format!(
                "lft: {} is not a switch (only switches forward)",
                quote(&o.switch)
            )));
        }
        if o.port != 0xFF && o.port > node.num_ports {
            return Err(ctx.err(format!(
                "lft: port {} out of range: {} has ports 0-{} (255: no route)",
                o.port,
                quote(&o.switch),
                node.num_ports
            )));
        }
    }
    Ok(())
}
