//! IB-IF-MIB (draft-ietf-ipoib-ibif-mib-05, shipped as mibs/IB-IF-MIB) for
//! the local node's ports: ibIfPortStatTable, ibIfVLTrafficTable and
//! ibIpoibLinkLayerAddrTable, indexed by the IF-MIB ifIndex of the port.
//!
//! - ibIfPortStatTable: Counter32 = low 32 bits of the model's 64-bit totals
//!   of the PMA field draft -01 section 2.4 names for each column
//!   (PortCounters, PortRcvErrorDetails, PortXmitDiscardDetails); a column
//!   whose attribute the PMA never answered reads 0.
//! - ibIfVLTrafficTable: rows for the operational data VLs and VL15 of ports
//!   whose PMA answers PortVLOpPackets/PortVLOpData. ibIfVLInPkts =
//!   PortVLOpPackets[vl], ibIfVLInOctets = PortVLOpData[vl] * 4 +
//!   PortVLOpPackets[vl] * POH (the REFERENCEs of -01 tie these two columns to
//!   those attributes). IBA has no per-VL transmit counter outside the
//!   sampling engine, so ibIfVLOutOctets/ibIfVLOutPkts are absent (sparse
//!   cells: noSuchInstance) rather than a made-up zero.
//! - ibIpoibLinkLayerAddrTable: the IPoIB interfaces over each port
//!   (`Snapshot::ipoib`), ibIpoibLinkLayerIndex 1.. per port; the address in
//!   IbIpoibClientIdentifier order (see [`client_identifier`]).
//!
//! [`client_identifier`]: crate::if_mib::interfaces::client_identifier

use std::sync::Arc;

use ib::model::counters::vl_octets;
use ib::model::PortTotals;
use snmp::mib::MibObject;
use snmp::table::{Access, Table};
use snmp::value::Value;

use crate::change::Change;
use crate::if_mib::{IfRow, IpoibRow, VlRow};
use crate::oids::ib_if_mib as o;
use crate::util::{last, oid};
use crate::view::{SysOrEntry, View};

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef =
    crate::ModuleDef::plain("IB-IF-MIB", || Some(or_entry()), objects);

/// sysORTable row: the IB-IF-MIB module identity.
pub fn or_entry() -> SysOrEntry {
    SysOrEntry::new(
        o::IB_IF_MIB,
        "InfiniBand interface statistics: port errors, per-VL traffic, IPoIB addresses (IB-IF-MIB)",
    )
}

fn totals(v: &View, port: ib::model::PortIdx) -> Option<&PortTotals> {
    v.snapshot
        .port(port)
        .and_then(|p| p.counters.as_deref())
        .map(|c| &c.totals)
}

/// Every object of the module, ready for `Dispatcher::register_all`.
pub fn objects() -> Vec<Arc<dyn MibObject<View, Change>>> {
    vec![
        Arc::new(port_stat_table()),
        Arc::new(vl_traffic_table()),
        Arc::new(ipoib_table()),
    ]
}

/// The 64-bit total behind each ibIfPortStatTable column (draft -01 2.4).
fn port_stat(t: &PortTotals, col: u32) -> Option<u64> {
    Some(match col {
        2 => t.symbol_error_counter,
        3 => t.link_error_recovery_counter,
        4 => t.link_downed_counter,
        5 => t.port_local_physical_errors,
        6 => t.port_malformed_packet_errors,
        7 => t.port_rcv_remote_physical_errors,
        8 => t.port_rcv_constraint_errors,
        9 => t.port_inactive_discards,
        10 => t.port_neighbor_mtu_discards,
        11 => t.port_sw_lifetime_limit_discards,
        12 => t.port_sw_hoq_lifetime_limit_discards,
        13 => t.local_link_integrity_errors,
        14 => t.excessive_buffer_overrun_errors,
        15 => t.vl15_dropped,
        _ => return None,
    })
}

fn port_stat_table() -> Table<View, Change, IfRow> {
    Table::new(
        oid(o::IB_IF_PORT_STAT_ENTRY),
        |v: &View| &crate::if_mib::interfaces(v).ifs,
        |v, r: &IfRow, col| {
            let t = totals(v, r.port);
            let zero = PortTotals::default();
            // Low 32 bits: wraps like a Counter32, never resets.
            port_stat(t.unwrap_or(&zero), col).map(|x| Value::Counter32(x as u32))
        },
    )
    .column(last(o::IB_IF_PORT_STAT_IF_INDEX), Access::NotAccessible)
    .read_only(&[
        last(o::IB_IF_PORT_SYMBOL_ERRS),
        last(o::IB_IF_PORT_LINK_ERR_RECOVERY),
        last(o::IB_IF_PORT_LINK_DOWNED),
        last(o::IB_IF_PORT_STAT_LOCAL_PHY_ERRS),
        last(o::IB_IF_PORT_STAT_MAL_PKT_ERRS),
        last(o::IB_IF_PORT_STAT_RCV_REM_PHY_ERRS),
        last(o::IB_IF_PORT_STAT_RCV_CONSTR_ERRS),
        last(o::IB_IF_PORT_STAT_INACT_DISCARDS),
        last(o::IB_IF_PORT_STAT_NEIGH_MTU_DISCARDS),
        last(o::IB_IF_PORT_STAT_SW_LIFETIME_DISCARDS),
        last(o::IB_IF_PORT_STAT_HOQ_LIFETIME_DISCARDS),
        last(o::IB_IF_PORT_STAT_LINK_INTERGRITY_ERRS),
        last(o::IB_IF_PORT_STAT_EXC_BUF_OVERRUN_ERRS),
        last(o::IB_IF_PORT_STAT_VL15_DROPPED),
    ])
}

/// (ibIfVLInOctets, ibIfVLInPkts) of one VL from the per-VL totals.
pub fn vl_in(t: &PortTotals, vl: usize) -> (u64, u64) {
    let pkts = t.vl_op_packets.get(vl).copied().unwrap_or(0);
    let data = t.vl_op_data.get(vl).copied().unwrap_or(0);
    (vl_octets(data, pkts), pkts)
}

fn vl_traffic_table() -> Table<View, Change, VlRow> {
    Table::new(
        oid(o::IB_IF_VL_TRAFFIC_ENTRY),
        |v: &View| &crate::if_mib::interfaces(v).vls,
        |v, r: &VlRow, col| {
            let (octets, pkts) =
                totals(v, r.port).map_or((0, 0), |t| vl_in(t, usize::from(r.vl.raw())));
            match col {
                5 => Some(Value::Counter64(octets)),
                6 => Some(Value::Counter64(pkts)),
                _ => None,
            }
        },
    )
    .column(last(o::IB_IF_VL_TRAFFIC_IF_INDEX), Access::NotAccessible)
    .column(last(o::IB_IF_VL_INDEX), Access::NotAccessible)
    .read_only(&[
        last(o::IB_IF_VL_OUT_OCTETS),
        last(o::IB_IF_VL_OUT_PKTS),
        last(o::IB_IF_VL_IN_OCTETS),
        last(o::IB_IF_VL_IN_PKTS),
    ])
}

fn ipoib_table() -> Table<View, Change, IpoibRow> {
    Table::new(
        oid(o::IB_IPOIB_LINK_LAYER_ADDR_ENTRY),
        |v: &View| &crate::if_mib::interfaces(v).ipoib,
        |_, r: &IpoibRow, col| (col == 3).then(|| Value::OctetString(r.client_id.to_vec())),
    )
    .column(last(o::IB_IPOIB_LINK_LAYER_IF_INDEX), Access::NotAccessible)
    .column(last(o::IB_IPOIB_LINK_LAYER_INDEX), Access::NotAccessible)
    .read_only(&[last(o::IB_IPOIB_LINK_LAYER_ADDR)])
}
