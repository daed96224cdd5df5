//! Per-port tables read from the ports' own SMAs (LID-routed SMP Gets, one
//! per block): the fallback where the SA's answer does not arrive whole.
//! ibsim answers SMPs itself, where OpenSM answers SA queries one at a time;
//! and the SMA's table is what the SM programmed.

use std::collections::{BTreeMap, HashMap};

use super::super::req;
use super::super::transport::Transport;

/// Each end port's table sizes in blocks (P_Key: NodeInfo:PartitionCap / 32;
/// GUIDInfo: PortInfo:GUIDCap / 8), by (LID, port).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocks {
    pub pkey: u16,
    pub guid: u16,
}

pub type TableBlocks = HashMap<(u16, u8), Blocks>;

/// One port's blocks as read, by block number.
pub(super) type Read = BTreeMap<(u16, u8), Vec<(u16, Vec<u8>)>>;

/// The ports some block of which failed, with why.
pub(super) type Failed = Vec<((u16, u8), String)>;

/// Reads blocks `0..n` of attribute `attr` of each (port, n). A port any of
/// whose blocks failed is left out of the answer and returned with why:
/// part of a table is not the table.
pub(super) fn read_blocks(
    tr: &mut Transport,
    attr: u16,
    ports: impl IntoIterator<Item = ((u16, u8), u16)>,
) -> (Read, Failed) {
    let reqs = ports.into_iter().flat_map(|((lid, port), n)| {
        // The modifier is the block alone: the port is the one the LID
        // names (a CA's), or a switch's port 0, whose PKeyTable port field
        // (the modifier's upper half) is 0 too.
        (0..n.max(1)).map(move |b| (((lid, port), b), req::lid_get(attr, u32::from(b), lid)))
    });
    let mut read = Read::new();
    let mut errs = Vec::new();
    tr.pipeline(reqs, |(k, b), r| {
        match r {
            Ok(mad) => read
                .entry(k)
                .or_default()
                .push((b, req::smp_data(&mad).to_vec())),
            Err(e) => errs.push((k, e.to_string())),
        }
        Vec::new()
    });
    errs.sort_by_key(|(k, _)| *k);
    errs.dedup_by_key(|(k, _)| *k);
    for (k, _) in &errs {
        read.remove(k);
    }
    for blocks in read.values_mut() {
        blocks.sort_by_key(|(b, _)| *b);
    }
    (read, errs)
}
