//! GUIDInfo of the whole fabric: one GUIDInfoRecord GetTable where the SA's
//! answer arrives whole (RMPP, reassembled by the kernel for our SA agent),
//! instead of one query per end port that the SM answers one at a time.
//!
//! Under umad2sim (ibsim does no RMPP) the answer comes cut: the ports are
//! then asked as before (per port, long tables from their SMAs). Where the
//! SA path is already known to cut multi-packet answers (the P_Key attempt
//! of the same refresh showed it), the attempt is not made.

use std::collections::BTreeMap;

use super::super::req::{self, GET_TABLE};
use super::super::transport::{Transport, TxError};
use super::{guids_of, records, take_tables, SaView};
use crate::mad::sa::{attr, GuidInfoRecord};

/// What the whole-fabric attempt left to ask per port.
pub(super) struct Rest {
    pub ports: Vec<(u16, u8)>,
    /// The answer came cut: this SA path cuts multi-packet answers.
    pub cut: bool,
}

/// A whole answer's records as each LID's blocks.
fn by_lid(records: impl IntoIterator<Item = GuidInfoRecord>) -> BTreeMap<u16, Vec<GuidInfoRecord>> {
    let mut m: BTreeMap<u16, Vec<GuidInfoRecord>> = BTreeMap::new();
    for r in records {
        m.entry(r.lid.0).or_default().push(r);
    }
    m
}

/// Asks the whole fabric's GUIDInfoRecords in one GetTable (untrusted, as
/// the per-port queries are) and fills `v` for the ports of `end_ports` the
/// answer has. Returns the ports still to ask one by one: those the answer
/// lacks (the SM shows a requester only the ports it shares a partition
/// with; a per-port query says the same), every one when it was cut or
/// refused.
pub(super) fn whole_fabric(
    tr: &mut Transport,
    sm_lid: u16,
    end_ports: &[(u16, u8)],
    v: &mut SaView,
) -> Rest {
    let template = [0u8; GuidInfoRecord::LEN];
    let request = req::sa(GET_TABLE, attr::GUID_INFO_RECORD, sm_lid, 0, 0, &template);
    match tr.call(request) {
        Ok(mad) if !req::sa_truncated(&mad) => {
            let tables = by_lid(records::<GuidInfoRecord>(&mad));
            let ports = take_tables(
                end_ports,
                tables,
                |k| k.0,
                |k, blocks| {
                    v.guids.insert(k.0, guids_of(blocks));
                },
            );
            Rest { ports, cut: false }
        }
        Ok(_) => {
            tracing::debug!("whole-fabric GUIDInfoRecord answer cut short: read per port");
            v.cut.push("GUIDInfoRecord");
            Rest {
                ports: end_ports.to_vec(),
                cut: true,
            }
        }
        Err(e) => {
            let why = match e {
                TxError::Status(st) => format!("refused, status {st:#06x}"),
                e => e.to_string(),
            };
            tracing::debug!("whole-fabric GUIDInfoRecord: {why}: read per port");
            Rest {
                ports: end_ports.to_vec(),
                cut: false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Guid, Lid};

    fn record(lid: u16, block: u8, first: u64) -> GuidInfoRecord {
        let mut r = GuidInfoRecord {
            lid: Lid(lid),
            block_num: block,
            ..GuidInfoRecord::default()
        };
        r.guid_info.guid[0] = Guid(first);
        r
    }

    /// ibsim cannot answer a whole-fabric GetTable whole (no RMPP): the
    /// grouping of such an answer is checked here (blocks of one port in
    /// any order, ports interleaved), each port's GUIDs by index.
    #[test]
    fn a_whole_fabric_answer_is_each_ports_blocks_in_order() {
        let t = by_lid([record(7, 1, 0x71), record(3, 0, 0x30), record(7, 0, 0x70)]);
        assert_eq!(t.len(), 2);
        let g7 = guids_of(t[&7].clone());
        assert_eq!(g7.len(), 16);
        assert_eq!((g7[0], g7[8]), (Guid(0x70), Guid(0x71)));
        assert_eq!(guids_of(t[&3].clone())[0], Guid(0x30));
    }
}
