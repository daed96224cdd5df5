//! ibSmPortInfoTable: every data port's PortInfo, and (with `port_writes`)
//! the Sets of its safe columns, one Set(PortInfo) per port and request.

use snmp::mib::SetError;
use snmp::table::check;

use ib::mad::smp::PortInfo;
use ib::source::ControlOp;
use ib::types::PortNum;

use super::*;

macro_rules! pi {
    ($oid:expr, $f:ident) => {
        ro($oid, |v, &p| u(port(v, p)?.info.$f))
    };
    ($oid:expr, $f:ident, gauge) => {
        ro($oid, |v, &p| gauge(port(v, p)?.info.$f))
    };
    ($oid:expr, $f:ident, int) => {
        ro($oid, |v, &p| int(port(v, p)?.info.$f))
    };
    ($oid:expr, $f:ident, truth) => {
        ro($oid, |v, &p| truth(port(v, p)?.info.$f))
    };
    // Writable with `port_writes` ([`set_port`]).
    ($oid:expr, $f:ident => $field:ident) => {
        rw(
            $oid,
            |v, &p| u(port(v, p)?.info.$f),
            |v, &p, _, x| set_port(v, p, PortField::$field, x),
        )
    };
    ($oid:expr, $f:ident, gauge => $field:ident) => {
        rw(
            $oid,
            |v, &p| gauge(port(v, p)?.info.$f),
            |v, &p, _, x| set_port(v, p, PortField::$field, x),
        )
    };
}

/// All 42 PortInfo columns.
pub(super) const PORT_COLS: &[Col<PortIdx>] = &[
    ro_octets(o::IB_SM_PORT_INFO_M_KEY, |v, &p, out| {
        put_secret(out, v, port(v, p)?.info.m_key)
    }),
    ro_octets(o::IB_SM_PORT_INFO_GID_PREFIX, |v, &p, out| {
        put(out, &port(v, p)?.info.gid_prefix.to_be_bytes())
    }),
    ro(o::IB_SM_PORT_INFO_LID, |v, &p| u(port(v, p)?.info.lid.0)),
    ro(o::IB_SM_PORT_INFO_MASTER_SM_LID, |v, &p| {
        u(port(v, p)?.info.master_sm_lid.0)
    }),
    ro_octets(o::IB_SM_PORT_INFO_CAP_MASK, |v, &p, out| {
        put_bits(out, port(v, p)?.info.capability_mask, 4)
    }),
    ro_octets(o::IB_SM_PORT_INFO_DIAG_CODE, |v, &p, out| {
        put(out, &port(v, p)?.info.diag_code.to_be_bytes())
    }),
    pi!(o::IB_SM_PORT_INFO_M_KEY_LEASE_PERIOD, m_key_lease_period),
    pi!(o::IB_SM_PORT_INFO_LINK_WIDTH_ENABLED, link_width_enabled => LinkWidthEnabled),
    pi!(
        o::IB_SM_PORT_INFO_LINK_WIDTH_SUPPORTED,
        link_width_supported
    ),
    pi!(o::IB_SM_PORT_INFO_LINK_WIDTH_ACTIVE, link_width_active),
    pi!(
        o::IB_SM_PORT_INFO_LINK_SPEED_SUPPORTED,
        link_speed_supported
    ),
    pi!(o::IB_SM_PORT_INFO_STATE, port_state => State),
    pi!(o::IB_SM_PORT_INFO_PHY_STATE, port_physical_state => PhyState),
    pi!(
        o::IB_SM_PORT_INFO_LINK_DOWN_DEF_STATE,
        link_down_default_state
    ),
    pi!(o::IB_SM_PORT_INFO_M_KEY_PROT_BITS, m_key_protect_bits => MKeyProtBits),
    pi!(o::IB_SM_PORT_INFO_LMC, lmc => Lmc),
    pi!(o::IB_SM_PORT_INFO_LINK_SPEED_ACTIVE, link_speed_active),
    pi!(o::IB_SM_PORT_INFO_LINK_SPEED_ENABLED, link_speed_enabled => LinkSpeedEnabled),
    pi!(o::IB_SM_PORT_INFO_NEIGHBOR_MTU, neighbor_mtu, int),
    pi!(o::IB_SM_PORT_INFO_MASTER_SM_SL, master_sm_sl),
    pi!(o::IB_SM_PORT_INFO_VL_CAP, vl_cap),
    pi!(o::IB_SM_PORT_INFO_VL_HIGH_LIMIT, vl_high_limit => VlHighLimit),
    pi!(o::IB_SM_PORT_INFO_VL_ARB_HIGH_CAP, vl_arbitration_high_cap),
    pi!(o::IB_SM_PORT_INFO_VL_ARB_LOW_CAP, vl_arbitration_low_cap),
    pi!(o::IB_SM_PORT_INFO_MTU_CAP, mtu_cap, int),
    pi!(o::IB_SM_PORT_INFO_VL_STALL_COUNT, vl_stall_count),
    pi!(o::IB_SM_PORT_INFO_HOQ_LIFE, hoq_life => HoqLife),
    pi!(o::IB_SM_PORT_INFO_OPER_VL, operational_vls),
    pi!(
        o::IB_SM_PORT_INFO_IN_PART_ENFORCE,
        partition_enforcement_inbound,
        truth
    ),
    pi!(
        o::IB_SM_PORT_INFO_OUT_PART_ENFORCE,
        partition_enforcement_outbound,
        truth
    ),
    pi!(
        o::IB_SM_PORT_INFO_IN_FILTER_RAW_PKT_ENF,
        filter_raw_inbound,
        truth
    ),
    pi!(
        o::IB_SM_PORT_INFO_OUT_FILTER_RAW_PKT_ENF,
        filter_raw_outbound,
        truth
    ),
    pi!(o::IB_SM_PORT_INFO_M_KEY_VIOLATION, m_key_violations, gauge),
    pi!(o::IB_SM_PORT_INFO_P_KEY_VIOLATION, p_key_violations, gauge),
    pi!(o::IB_SM_PORT_INFO_Q_KEY_VIOLATION, q_key_violations, gauge),
    pi!(o::IB_SM_PORT_INFO_GUID_CAP, guid_cap),
    pi!(o::IB_SM_PORT_INFO_SUBNET_TIMEOUT, subnet_timeout),
    pi!(o::IB_SM_PORT_INFO_RESP_TIME, resp_time_value),
    pi!(o::IB_SM_PORT_INFO_LOCAL_PHY_ERROR, local_phy_errors, gauge => LocalPhyError),
    pi!(o::IB_SM_PORT_INFO_OVERRUN_ERROR, overrun_errors, gauge => OverrunError),
    ro_octets(o::IB_SM_PORT_INFO_INIT_TYPE, |v, &p, out| {
        put_bits(out, u32::from(port(v, p)?.info.init_type), 1)
    }),
    ro_octets(o::IB_SM_PORT_INFO_INIT_TYPE_REPLY, |v, &p, out| {
        put_bits(out, u32::from(port(v, p)?.info.init_type_reply), 1)
    }),
];

/// A writable ibSmPortInfoTable column and the PortInfo field it sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortField {
    /// PortState (0 noStateChange, 1 down, ... 4 active).
    State,
    /// PortPhysicalState (2 polling: enable, 3 disabled: disable).
    PhyState,
    LinkWidthEnabled,
    LinkSpeedEnabled,
    VlHighLimit,
    HoqLife,
    LocalPhyError,
    OverrunError,
    /// M_KeyProtectBits: a wrong value can lock the SM out of the port.
    MKeyProtBits,
    /// LMC: changes the port's LID range (the SM normally owns it).
    Lmc,
}

impl PortField {
    /// The values the agent writes where it allows fewer than the MIB:
    /// PortState up to active(4), PortPhysicalState up to disabled(3).
    fn limit(self) -> Option<u32> {
        match self {
            PortField::State => Some(4),
            PortField::PhyState => Some(3),
            _ => None,
        }
    }

    fn set(self, p: &mut PortInfo, v: u8) {
        match self {
            PortField::State => p.port_state = v,
            PortField::PhyState => p.port_physical_state = v,
            PortField::LinkWidthEnabled => p.link_width_enabled = v,
            PortField::LinkSpeedEnabled => p.link_speed_enabled = v,
            PortField::VlHighLimit => p.vl_high_limit = v,
            PortField::HoqLife => p.hoq_life = v,
            PortField::LocalPhyError => p.local_phy_errors = v,
            PortField::OverrunError => p.overrun_errors = v,
            PortField::MKeyProtBits => p.m_key_protect_bits = v,
            PortField::Lmc => p.lmc = v,
        }
    }
}

/// One written PortInfo column of one port; `base` is the port's PortInfo
/// as the request saw it. A request's columns of one port become one
/// Set(PortInfo) ([`fabric_ops`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PortInfoSet {
    pub node: Guid,
    pub port: PortNum,
    pub base: Box<PortInfo>,
    pub field: PortField,
    pub value: u8,
}

/// Whether the agent reaches the fabric through port `p`: a port of its own
/// node, or the port at the other end of one of them.
fn own_path(v: &View, p: PortIdx) -> bool {
    let s = &v.snapshot;
    let Some(local) = s.local_node else {
        return false;
    };
    s.node_ports(local)
        .iter()
        .any(|lp| lp.node == s.port(p).map_or(NodeIdx::MAX, |x| x.node) || lp.remote == Some(p))
}

/// Phase 1 of a Set of a writable ibSmPortInfoTable column (the table is
/// writable only with `port_writes`, and has checked the MIB's range).
pub fn set_port(v: &View, p: PortIdx, field: PortField, value: &Value) -> Result<Change, SetError> {
    let x = check::unsigned32(value)?;
    if field.limit().is_some_and(|max| x > max) {
        return Err(SetError::WrongValue);
    }
    // The agent would cut itself off.
    if own_path(v, p) {
        return Err(SetError::InconsistentValue);
    }
    let port = v.snapshot.port(p).ok_or(SetError::NoCreation)?;
    let node = v.snapshot.node(port.node).ok_or(SetError::NoCreation)?;
    tracing::warn!(
        node = %node.info.node_guid,
        port = port.num.0,
        ?field,
        value = x,
        "PortInfo Set requested over SNMP"
    );
    if matches!(field, PortField::MKeyProtBits | PortField::Lmc) {
        tracing::warn!(
            ?field,
            "this PortInfo field belongs to the SM: M_KeyProtectBits can lock the SM out of the \
             port, LMC changes its LIDs, and the SM may set it back at its next sweep"
        );
    }
    Ok(Change::SmPort(PortInfoSet {
        node: node.info.node_guid,
        port: port.num,
        base: Box::new(port.info.clone()),
        field,
        value: u8::try_from(x).unwrap_or(0),
    }))
}

/// One Set(PortInfo) per port of a request's PortInfo changes: the port's
/// PortInfo with the state fields it does not change at NoStateChange (0)
/// and every written column applied, as ibportstate builds it.
pub fn fabric_ops(sets: &[(usize, &PortInfoSet)]) -> Vec<(usize, ControlOp)> {
    let mut ops: Vec<(usize, Guid, PortNum, PortInfo)> = Vec::new();
    for &(i, s) in sets {
        let at = match ops.iter().position(|o| o.1 == s.node && o.2 == s.port) {
            Some(k) => k,
            None => {
                let mut p = (*s.base).clone();
                p.port_state = 0;
                p.port_physical_state = 0;
                p.link_width_enabled = 0;
                p.link_speed_enabled = 0;
                p.link_speed_ext_enabled = 0;
                p.link_down_default_state = 0;
                p.operational_vls = 0;
                ops.push((i, s.node, s.port, p));
                ops.len() - 1
            }
        };
        if let Some(o) = ops.get_mut(at) {
            s.field.set(&mut o.3, s.value);
        }
    }
    ops.into_iter()
        .map(|(i, node, port, info)| {
            (
                i,
                ControlOp::SetPortInfo {
                    node,
                    port,
                    info: Box::new(info),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_writes_merge_into_one_set_port_info_per_port() {
        let base = PortInfo {
            port_state: 4,
            port_physical_state: 5,
            link_width_enabled: 3,
            vl_high_limit: 9,
            lmc: 0,
            ..PortInfo::default()
        };
        let set = |port: u8, field, value| {
            Change::SmPort(PortInfoSet {
                node: Guid(7),
                port: PortNum(port),
                base: Box::new(base.clone()),
                field,
                value,
            })
        };
        let ops = crate::plan(&[
            set(2, PortField::HoqLife, 12),
            set(3, PortField::PhyState, 3),
            set(2, PortField::Lmc, 1),
        ])
        .fabric;
        assert_eq!(ops.len(), 2);
        let ControlOp::SetPortInfo { port, info, .. } = &ops[0].1 else {
            panic!("{ops:?}")
        };
        assert_eq!((ops[0].0, port.0), (0, 2));
        assert_eq!(
            (info.hoq_life, info.lmc),
            (12, 1),
            "both columns in one SMP"
        );
        assert_eq!(info.vl_high_limit, 9, "other fields as read");
        assert_eq!(
            (
                info.port_state,
                info.port_physical_state,
                info.link_width_enabled
            ),
            (0, 0, 0),
            "state fields not written are NoStateChange"
        );
        let ControlOp::SetPortInfo { info, .. } = &ops[1].1 else {
            panic!()
        };
        assert_eq!(info.port_physical_state, 3);
    }
}
