//! ibSmSwitchInfoTable: every switch's SwitchInfo.

use super::*;

macro_rules! si {
    ($oid:expr, $f:ident) => {
        ro($oid, |v, &n| u(node(v, n)?.switch.as_ref()?.info.$f))
    };
    ($oid:expr, $f:ident, truth) => {
        ro($oid, |v, &n| truth(node(v, n)?.switch.as_ref()?.info.$f))
    };
}

pub(super) const SWITCH_COLS: &[Col<NodeIdx>] = &[
    si!(o::IB_SM_SWITCH_INFO_LINEAR_FDB_CAP, linear_fdb_cap),
    si!(o::IB_SM_SWITCH_INFO_RANDOM_FDB_CAP, random_fdb_cap),
    si!(o::IB_SM_SWITCH_INFO_MCAST_FDB_CAP, multicast_fdb_cap),
    si!(o::IB_SM_SWITCH_INFO_LINEAR_FDB_TOP, linear_fdb_top),
    si!(o::IB_SM_SWITCH_INFO_DEFAULT_PORT, default_port),
    si!(
        o::IB_SM_SWITCH_INFO_DEF_PRI_MCAST_PORT,
        default_multicast_primary_port
    ),
    si!(
        o::IB_SM_SWITCH_INFO_DEF_NON_PRI_MCAST_PORT,
        default_multicast_not_primary_port
    ),
    si!(o::IB_SM_SWITCH_INFO_LIFE_TIME_VALUE, life_time_value),
    ro(o::IB_SM_SWITCH_INFO_PORT_STATE_CHANGE, |v, &n| {
        u(u32::from(
            node(v, n)?.switch.as_ref()?.info.port_state_change,
        ))
    }),
    si!(o::IB_SM_SWITCH_INFO_LI_DS_PER_PORT, lids_per_port),
    si!(
        o::IB_SM_SWITCH_INFO_PARTITION_ENF_CAP,
        partition_enforcement_cap
    ),
    si!(
        o::IB_SM_SWITCH_INFO_IN_ENF_CAP,
        inbound_enforcement_cap,
        truth
    ),
    si!(
        o::IB_SM_SWITCH_INFO_OUT_ENF_CAP,
        outbound_enforcement_cap,
        truth
    ),
    si!(
        o::IB_SM_SWITCH_INFO_IN_FILTER_RAW_PKT_CAP,
        filter_raw_inbound_cap,
        truth
    ),
    si!(
        o::IB_SM_SWITCH_INFO_OUT_FILTER_RAW_PKT_CAP,
        filter_raw_outbound_cap,
        truth
    ),
    si!(o::IB_SM_SWITCH_INFO_ENHANCED0, enhanced_port0, truth),
];
