//! ibSmTraceReqTable rows and the trace itself: the nodes a path crosses,
//! hop by hop from the switches' forwarding tables as ibtracert follows
//! them (OpenSM has no SA TraceRecord).

use std::time::Instant;

use ib::mad::sa::{comp::path_record as pr, PathRecord};
use ib::model::Snapshot;
use ib::types::{Gid, Lid};
use snmp::mib::SetError;
use snmp::rowstatus::RowData;
use snmp::value::Value;

use super::answer::{Answer, Kind, TraceHop};
use super::columns::{self, bytes, checked, gauge, int, num16, num8, octets, put, ReqCol};
use super::{ReqKind, COMP_MASK};
use crate::core::oids::ib_sm_mib as o;

/// An ibSmTraceReqTable row: the TraceRecord template columns (kept and
/// shown; the path traced is the path request with the same index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceReq {
    pub comp_mask: [u8; 8],
    pub hop: TraceHop,
    pub created: Instant,
}

impl Default for TraceReq {
    fn default() -> Self {
        TraceReq {
            comp_mask: [0; 8],
            hop: TraceHop {
                id_generation: 0,
                node_type: 0,
                node_id: 0,
                chassis_id: 0,
                entry_port_id: 0,
                exit_port_id: 0,
                entry_port: 0,
                exit_port: 0,
            },
            created: Instant::now(),
        }
    }
}

fn guid(v: &Value) -> Result<u64, SetError> {
    octets::<8>(v).map(u64::from_be_bytes)
}

/// A TraceRecord column (no ComponentMask bit: the trace keeps its mask).
const fn hop(
    oid: &'static [u32],
    read: fn(&TraceHop) -> Value,
    write: fn(&mut TraceHop, &Value) -> Result<(), SetError>,
) -> ReqCol<TraceHop> {
    ReqCol {
        oid,
        bit: 0,
        read,
        write,
    }
}

/// A GUID column (8 octets).
macro_rules! guid_col {
    ($oid:expr, $f:ident) => {
        hop(
            $oid,
            |h| bytes(&h.$f.to_be_bytes()),
            |h, v| put(&mut h.$f, guid(v)),
        )
    };
}

/// The TraceRecord columns (IBA 15.2.5.17), in ibSmTraceReqTable's column
/// order; the result table shows them in the same order from column 4 on.
pub(super) const TRACE_COLS: &[ReqCol<TraceHop>] = &[
    hop(
        o::IB_SM_TRACE_REQ_ID_GENERATION,
        |h| gauge(h.id_generation),
        |h, v| put(&mut h.id_generation, num16(v)),
    ),
    hop(
        o::IB_SM_TRACE_REQ_NODE_TYPE,
        |h| int(h.node_type),
        |h, v| put(&mut h.node_type, num8(v)),
    ),
    guid_col!(o::IB_SM_TRACE_REQ_NODE_ID, node_id),
    guid_col!(o::IB_SM_TRACE_REQ_CHASSIS_ID, chassis_id),
    guid_col!(o::IB_SM_TRACE_REQ_ENTRY_PORT_ID, entry_port_id),
    guid_col!(o::IB_SM_TRACE_REQ_EXIT_PORT_ID, exit_port_id),
    hop(
        o::IB_SM_TRACE_REQ_ENTRY_PORT,
        |h| gauge(h.entry_port),
        |h, v| put(&mut h.entry_port, num8(v)),
    ),
    hop(
        o::IB_SM_TRACE_REQ_EXIT_PORT,
        |h| gauge(h.exit_port),
        |h, v| put(&mut h.exit_port, num8(v)),
    ),
];

impl RowData for TraceReq {
    fn set(&mut self, column: u32, v: &Value) -> Result<(), SetError> {
        if column == COMP_MASK {
            checked(o::IB_SM_TRACE_REQ_COMP_MASK, v)?;
            self.comp_mask = octets::<8>(v)?;
            return Ok(());
        }
        columns::write(TRACE_COLS, &mut self.hop, column, v)
            .unwrap_or(Err(SetError::NotWritable))
            .map(|_| ())
    }

    /// Whether the path exists is checked against the path table when the
    /// trace is activated.
    fn ready(&self) -> bool {
        true
    }
}

/// The hops of the path `template`/`mask` names, from the switches'
/// forwarding tables (as ibtracert follows them).
pub fn trace_hops(s: &Snapshot, template: &PathRecord, mask: u64) -> Result<Answer, String> {
    let port = |lid_bit: u64, lid: Lid, gid_bit: u64, gid: Gid| {
        if mask & lid_bit != 0 {
            s.port_by_lid(lid)
        } else if mask & gid_bit != 0 {
            s.port_by_guid(gid.guid())
        } else {
            None
        }
    };
    let src = port(pr::SLID, template.slid, pr::SGID, template.sgid)
        .ok_or("the path's source names no port")?;
    let dst = port(pr::DLID, template.dlid, pr::DGID, template.dgid)
        .ok_or("the path's destination names no port")?;
    let dlid = s
        .port(dst)
        .map(|p| p.info.lid)
        .ok_or("the path's destination names no port")?;
    let hops = ib::model::route::trace(s, src, dlid).map_err(|e| e.to_string())?;
    let generation = u16::try_from(s.sweep.number & 0xFFFF).unwrap_or(0);
    let single = hops.len() == 1;
    let source_guid = s.port(src).map_or(0, |p| p.guid.0);
    let out = hops
        .iter()
        .filter_map(|h| {
            let node = s.node(h.node)?;
            let is_switch = node.info.node_type == ib::types::NodeType::Switch as u8;
            let port_guid = |p: Option<ib::types::PortNum>| {
                p.and_then(|n| s.node_port(h.node, n))
                    .and_then(|i| s.port(i))
                    .map_or(0, |p| p.guid.0)
            };
            Some(TraceHop {
                id_generation: generation,
                node_type: node.info.node_type,
                node_id: node.info.node_guid.0,
                chassis_id: node.info.system_image_guid.0,
                // A CA's port: the one it is entered (destination) or left
                // (source) by; a trace that never leaves its source (to
                // itself) names the source port, a switch's port 0 too.
                entry_port_id: if single {
                    source_guid
                } else if is_switch {
                    0
                } else {
                    port_guid(h.entry.or(h.exit))
                },
                exit_port_id: 0,
                entry_port: if is_switch {
                    h.entry.map_or(0, |p| p.0)
                } else {
                    0
                },
                exit_port: if is_switch {
                    h.exit.map_or(0, |p| p.0)
                } else {
                    0
                },
            })
        })
        .collect();
    Ok(Answer::Trace(out))
}
impl ReqKind for TraceReq {
    const KIND: Kind = Kind::Trace;
    const ENTRY: &'static [u32] = o::IB_SM_TRACE_REQ_ENTRY;
    fn last_column() -> u32 {
        columns::last_column(TRACE_COLS)
    }
    created_field!();
    fn column(&self, column: u32) -> Option<Value> {
        match column {
            COMP_MASK => Some(bytes(&self.comp_mask)),
            c => columns::find(TRACE_COLS, c).map(|col| (col.read)(&self.hop)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ib::source::sim::{SimConfig, SimSource};
    use ib::source::Source;

    /// The trace of hca-1 port 1 to `to` on the dual-rail fabric.
    fn rows(s: &Snapshot, from: Lid, to: Lid) -> Vec<TraceHop> {
        let t = PathRecord {
            slid: from,
            dlid: to,
            ..Default::default()
        };
        match trace_hops(s, &t, pr::SLID | pr::DLID).unwrap() {
            Answer::Trace(h) => h,
            a => panic!("{a:?}"),
        }
    }

    #[test]
    fn a_ca_port_is_named_on_every_row_a_single_row_included() {
        let topo = ib::topology::parse_str(
            include_str!("../../../../ib/tests/data/net.dual-rail"),
            "dual rail",
        )
        .unwrap();
        let s = SimSource::new(&topo, SimConfig::default())
            .unwrap()
            .sweep()
            .unwrap();
        let hca = s
            .nodes
            .iter()
            .position(|n| n.description == "hca-1")
            .unwrap() as u32;
        let port = |n: u8| {
            s.port(s.node_port(hca, ib::types::PortNum(n)).unwrap())
                .unwrap()
        };
        let (p1, p2) = (port(1), port(2));
        // To itself: one row, naming the source port.
        let one = rows(&s, p1.info.lid, p1.info.lid);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].entry_port_id, p1.guid.0);
        // Port 1 to port 2 of the same HCA: through the fabric, the CA rows
        // naming the port left and the port entered.
        let across = rows(&s, p1.info.lid, p2.info.lid);
        assert_eq!(across.len(), 5);
        assert_eq!(across[0].entry_port_id, p1.guid.0);
        assert_eq!(across[4].entry_port_id, p2.guid.0);
        assert!(across[1..4].iter().all(|h| h.entry_port_id == 0));
    }
}
