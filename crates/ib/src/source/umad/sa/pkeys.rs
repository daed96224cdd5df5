//! Partition tables: one PKeyTableRecord GetTable of the whole fabric (trusted
//! with the SM_Key) where the SA's answer arrives whole (RMPP, reassembled by
//! the kernel for our SA agent), else each port's PKeyTable SMPs.
//!
//! Under umad2sim (ibsim does no RMPP) a whole-fabric answer arrives as its
//! first packet: [`req::sa_truncated`] sees it cut, and the ports are read one
//! by one from their SMAs. The failed attempt costs one MAD per refresh.

use std::collections::BTreeMap;

use super::super::req::{self, GET_TABLE};
use super::super::transport::{Transport, TxError};
use super::sma::{self, TableBlocks};
use super::{records, take_tables, SaView};
use crate::mad::sa::{attr, PKeyTableRecord};
use crate::mad::smp::{attr as smp_attr, PKeyTable};
use crate::types::Lid;

/// How a sweep's partition tables were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PKeyRead {
    /// One GetTable answered for the whole fabric.
    WholeFabric,
    /// The whole-fabric answer was cut short (no RMPP reassembly on this
    /// path, as under umad2sim): read per port from the SMAs instead.
    Cut,
    /// The whole-fabric query was refused or failed: read per port.
    Refused,
    /// Read per port (a few ports: the local node's, or a spread slice).
    PerPort,
}

/// The P_Keys of a port's records in block order, empty entries left out.
fn keys_of(records: impl IntoIterator<Item = PKeyTableRecord>) -> Vec<u16> {
    let mut blocks: Vec<PKeyTableRecord> = records.into_iter().collect();
    blocks.sort_by_key(|r| r.block_num);
    blocks
        .iter()
        .flat_map(|r| r.p_key_table.p_key.iter().map(|k| k.0))
        .filter(|&k| k & 0x7fff != 0)
        .collect()
}

/// A whole-fabric answer's records as each port's P_Keys (block order).
fn by_port(records: impl IntoIterator<Item = PKeyTableRecord>) -> BTreeMap<(u16, u8), Vec<u16>> {
    let mut blocks: BTreeMap<(u16, u8), Vec<PKeyTableRecord>> = BTreeMap::new();
    for r in records {
        blocks.entry((r.lid.0, r.port_num)).or_default().push(r);
    }
    blocks.into_iter().map(|(k, b)| (k, keys_of(b))).collect()
}

/// Asks the whole fabric's PKeyTableRecords in one GetTable and fills `v`
/// for the ports of `end_ports` the answer has. Returns the ports still to
/// ask one by one: none when the answer was whole and had them all, every
/// one when it was cut or refused.
pub(super) fn whole_fabric(
    tr: &mut Transport,
    sm_lid: u16,
    sm_key: u64,
    end_ports: &[(u16, u8)],
    v: &mut SaView,
) -> Vec<(u16, u8)> {
    let template = [0u8; PKeyTableRecord::LEN];
    let request = req::sa(
        GET_TABLE,
        attr::P_KEY_TABLE_RECORD,
        sm_lid,
        sm_key,
        0,
        &template,
    );
    let why = match tr.call(request) {
        Ok(mad) if !req::sa_truncated(&mad) => {
            let tables = by_port(records::<PKeyTableRecord>(&mad));
            let rest = take_tables(
                end_ports,
                tables,
                |k| *k,
                |k, keys| {
                    v.pkeys.insert(k, keys);
                },
            );
            v.pkey_read = Some(PKeyRead::WholeFabric);
            return rest;
        }
        Ok(_) => {
            tracing::debug!("whole-fabric PKeyTableRecord answer cut short: read per port");
            // Counted like every cut answer (ibsnmpd_sa_answers_cut_total).
            v.cut.push("PKeyTableRecord");
            v.pkey_read = Some(PKeyRead::Cut);
            return end_ports.to_vec();
        }
        Err(TxError::Status(st)) => format!("refused, status {st:#06x}"),
        Err(e) => e.to_string(),
    };
    tracing::debug!("whole-fabric PKeyTableRecord: {why}: read per port");
    v.pkey_read = Some(PKeyRead::Refused);
    end_ports.to_vec()
}

/// Each port's PKeyTable from its own SMA (one SMP per block of 32 entries).
pub(super) fn per_port(
    tr: &mut Transport,
    end_ports: &[(u16, u8)],
    blocks: &TableBlocks,
    v: &mut SaView,
) {
    if end_ports.is_empty() {
        return;
    }
    if v.pkey_read.is_none() {
        v.pkey_read = Some(PKeyRead::PerPort);
    }
    let ports = end_ports
        .iter()
        .map(|k| (*k, blocks.get(k).map_or(1, |b| b.pkey)));
    let (read, errs) = sma::read_blocks(tr, smp_attr::P_KEY_TABLE, ports);
    for (k, blocks) in read {
        let records = blocks.into_iter().filter_map(|(b, data)| {
            Some(PKeyTableRecord {
                lid: Lid(k.0),
                port_num: k.1,
                block_num: b,
                p_key_table: PKeyTable::decode(&data).ok()?,
            })
        });
        v.pkeys.insert(k, keys_of(records));
    }
    for (k, e) in errs {
        v.failed.pkeys.push(k);
        v.failures += 1;
        if v.errors.len() < 16 {
            v.errors.push(format!("PKeyTable {k:?}: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::PKey;

    fn record(lid: u16, port: u8, block: u16, keys: &[u16]) -> PKeyTableRecord {
        let mut r = PKeyTableRecord {
            lid: Lid(lid),
            port_num: port,
            block_num: block,
            ..PKeyTableRecord::default()
        };
        for (slot, &k) in r.p_key_table.p_key.iter_mut().zip(keys) {
            *slot = PKey(k);
        }
        r
    }

    /// ibsim cannot answer a whole-fabric GetTable whole (no RMPP): the
    /// grouping of such an answer is checked here on records as OpenSM
    /// lays them out (blocks of one port in any order, ports interleaved).
    #[test]
    fn a_whole_fabric_answer_is_each_ports_blocks_in_order() {
        let records = [
            record(2, 1, 1, &[0x8005]),
            record(1, 0, 0, &[0xffff, 0, 0x8002]),
            record(2, 1, 0, &[0xffff, 0x0002]),
            record(1, 0, 1, &[]),
        ];
        let t = by_port(records);
        assert_eq!(t.len(), 2);
        assert_eq!(t[&(1, 0)], vec![0xffff, 0x8002]);
        assert_eq!(t[&(2, 1)], vec![0xffff, 0x0002, 0x8005]);
    }
}
