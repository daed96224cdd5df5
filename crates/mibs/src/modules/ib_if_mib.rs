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
//! [`client_identifier`]: crate::modules::if_mib::interfaces::client_identifier

use std::sync::Arc;

use ib::model::counters::{detail, vl_octets};
use ib::model::PortTotals;
use snmp::mib::MibObject;
use snmp::value::Value;

use crate::core::column::{index, ro, table};
use crate::core::oids::ib_if_mib as o;
use crate::core::view::SysOrEntry;
use crate::modules::if_mib::ifs;
use crate::modules::if_mib::{IfRow, IpoibRow, VlRow};
use crate::Change;
use crate::Col;
use crate::View;

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
pub fn objects(_: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    vec![
        Arc::new(table(o::IB_IF_PORT_STAT_ENTRY, ifs, PORT_STAT_COLS)),
        Arc::new(table(
            o::IB_IF_VL_TRAFFIC_ENTRY,
            |v: &View| &crate::modules::if_mib::interfaces(v).vls,
            VL_TRAFFIC_COLS,
        )),
        Arc::new(table(
            o::IB_IPOIB_LINK_LAYER_ADDR_ENTRY,
            |v: &View| &crate::modules::if_mib::interfaces(v).ipoib,
            IPOIB_COLS,
        )),
    ]
}

/// An ibIfPortStatTable cell: the low 32 bits of a 64-bit total (draft -01
/// 2.4), wrapping like a Counter32, never reset; before a reading zero in
/// the default context, absent in a node's (IF-MIB's rule there).
fn stat(v: &View, r: &IfRow, f: fn(&PortTotals) -> u64) -> Option<Value> {
    match totals(v, r.port) {
        Some(t) => Some(Value::Counter32(f(t) as u32)),
        None if crate::modules::if_mib::interfaces(v).history => Some(Value::Counter32(0)),
        None => None,
    }
}

/// A cell from a detail attribute (`mask`: PortRcvErrorDetails,
/// PortXmitDiscardDetails): as [`stat`], and in a node context absent
/// until the attribute was read and while its reading is not current (a
/// node context asks for it: `ib::source::demand`). Never a 0 that was not
/// read.
fn detail_stat(v: &View, r: &IfRow, mask: u8, f: fn(&PortTotals) -> u64) -> Option<Value> {
    let current = v
        .snapshot
        .port(r.port)
        .and_then(|p| p.counters.as_deref())
        .is_some_and(|c| c.is_current(mask));
    if crate::modules::if_mib::interfaces(v).history || current {
        stat(v, r, f)
    } else {
        None
    }
}

/// A counter column of ibIfPortStatTable: its field of the port's
/// totals, read as [`stat`] does (or [`detail_stat`] with the detail
/// attribute that carries it).
macro_rules! stat_col {
    ($oid:expr, $field:ident) => {
        ro($oid, |v, r| stat(v, r, |t| t.$field))
    };
    ($oid:expr, $detail:expr, $field:ident) => {
        ro($oid, |v, r| detail_stat(v, r, $detail, |t| t.$field))
    };
}

const PORT_STAT_COLS: &[Col<IfRow>] = &[
    index(o::IB_IF_PORT_STAT_IF_INDEX),
    stat_col!(o::IB_IF_PORT_SYMBOL_ERRS, symbol_error_counter),
    stat_col!(o::IB_IF_PORT_LINK_ERR_RECOVERY, link_error_recovery_counter),
    stat_col!(o::IB_IF_PORT_LINK_DOWNED, link_downed_counter),
    stat_col!(
        o::IB_IF_PORT_STAT_LOCAL_PHY_ERRS,
        detail::RCV_ERROR_DETAILS,
        port_local_physical_errors
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_MAL_PKT_ERRS,
        detail::RCV_ERROR_DETAILS,
        port_malformed_packet_errors
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_RCV_REM_PHY_ERRS,
        port_rcv_remote_physical_errors
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_RCV_CONSTR_ERRS,
        port_rcv_constraint_errors
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_INACT_DISCARDS,
        detail::XMIT_DISCARD_DETAILS,
        port_inactive_discards
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_NEIGH_MTU_DISCARDS,
        detail::XMIT_DISCARD_DETAILS,
        port_neighbor_mtu_discards
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_SW_LIFETIME_DISCARDS,
        detail::XMIT_DISCARD_DETAILS,
        port_sw_lifetime_limit_discards
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_HOQ_LIFETIME_DISCARDS,
        detail::XMIT_DISCARD_DETAILS,
        port_sw_hoq_lifetime_limit_discards
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_LINK_INTERGRITY_ERRS,
        local_link_integrity_errors
    ),
    stat_col!(
        o::IB_IF_PORT_STAT_EXC_BUF_OVERRUN_ERRS,
        excessive_buffer_overrun_errors
    ),
    stat_col!(o::IB_IF_PORT_STAT_VL15_DROPPED, vl15_dropped),
];

/// (ibIfVLInOctets, ibIfVLInPkts) of one VL from the per-VL totals.
pub fn vl_in(t: &PortTotals, vl: usize) -> (u64, u64) {
    let pkts = t.vl_op_packets.get(vl).copied().unwrap_or(0);
    let data = t.vl_op_data.get(vl).copied().unwrap_or(0);
    (vl_octets(data, pkts), pkts)
}

/// The VL's received (octets, packets).
fn vl_received(v: &View, r: &VlRow) -> (u64, u64) {
    totals(v, r.port).map_or((0, 0), |t| vl_in(t, usize::from(r.vl.raw())))
}

/// Transmit counts per VL have no IBA source: the cells are absent.
const VL_TRAFFIC_COLS: &[Col<VlRow>] = &[
    index(o::IB_IF_VL_TRAFFIC_IF_INDEX),
    index(o::IB_IF_VL_INDEX),
    ro(o::IB_IF_VL_OUT_OCTETS, |_, _| None),
    ro(o::IB_IF_VL_OUT_PKTS, |_, _| None),
    ro(o::IB_IF_VL_IN_OCTETS, |v, r| {
        Some(Value::Counter64(vl_received(v, r).0))
    }),
    ro(o::IB_IF_VL_IN_PKTS, |v, r| {
        Some(Value::Counter64(vl_received(v, r).1))
    }),
];

const IPOIB_COLS: &[Col<IpoibRow>] = &[
    index(o::IB_IPOIB_LINK_LAYER_IF_INDEX),
    index(o::IB_IPOIB_LINK_LAYER_INDEX),
    ro(o::IB_IPOIB_LINK_LAYER_ADDR, |_, r| {
        Some(Value::OctetString(r.client_id.to_vec()))
    }),
];
