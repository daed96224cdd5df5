//! IB-SM-MIB Sets that steer the Subnet Manager: ibSmConfigTable's SM
//! settings. A checked Set becomes an [`SmChange`] carrying an [`SmOp`] with
//! [`Effect::Service`]: the daemon's OpenSM control applies it (console
//! command, opensm.conf edit, heavy resweep; docs/ib-sm.md says which per
//! column). The columns are writable only when the daemon steers an OpenSM
//! ([`crate::DeriveOptions::sm_control`]); otherwise notWritable, as
//! before.

use snmp::mib::{SetError, SetItem};
use snmp::table::check;
use snmp::value::Value;

use ib::mad::smp::PortInfo;
use ib::model::{NodeIdx, PortIdx};
use ib::source::ControlOp;
use ib::types::{Guid, PortNum};

use crate::change::{Change, Effect, ModuleChange};
use crate::ib_sm_mib::sm_rows;
use crate::oids::ib_sm_mib as o;
use crate::util::last;
use crate::view::View;
use ib::opensm::partitions::DEFAULT_PKEY;
pub use ib::opensm::{PartitionOp, SmOp, SmOption};

/// The values OpenSM takes where it allows fewer than the MIB (whose
/// ranges the table checks first).
fn opensm_limit(option: SmOption) -> Option<std::ops::RangeInclusive<u32>> {
    match option {
        SmOption::MasterPollInterval => Some(1..=3_600),
        SmOption::MasterPollRetries => Some(1..=100),
        SmOption::ResponseTimeout => Some(1..=60_000),
        _ => None,
    }
}

/// A checked Set of an SM column: one [`SmOp`], applied by the daemon's
/// OpenSM control ([`Effect::Service`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmChange(pub SmOp);

impl ModuleChange for SmChange {
    fn effect(&self) -> Effect {
        Effect::Service(self.0.clone())
    }
}

fn sm_change(op: SmOp) -> Change {
    Change::new(SmChange(op))
}

/// Phase 1 of a Set of an ibSmConfigTable setting (the table is writable
/// only while the daemon steers the SM, and has checked the MIB's range).
pub fn set_option(_v: &View, option: SmOption, value: &Value) -> Result<Change, SetError> {
    let value = check::unsigned32(value)?;
    if opensm_limit(option).is_some_and(|r| !r.contains(&value)) {
        return Err(SetError::WrongValue);
    }
    Ok(sm_change(SmOp::SetOption { option, value }))
}

/// ibSmConfigSMKey: eight octets (SIZE checked by the table).
pub fn set_sm_key(value: &Value) -> Result<Change, SetError> {
    let k = <[u8; 8]>::try_from(check::octets(value, 8..=8)?).map_err(|_| SetError::WrongLength)?;
    Ok(sm_change(SmOp::SetSmKey(u64::from_be_bytes(k))))
}

/// ibSmConfigAdminSMState: enable(1) or disable(2).
pub fn set_admin(value: &Value) -> Result<Change, SetError> {
    let enable = check::integer(value)? == 1;
    Ok(sm_change(SmOp::Admin { enable }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opensm_limits_convert_to_the_file() {
        for o in [
            SmOption::MasterPollInterval,
            SmOption::MasterPollRetries,
            SmOption::ResponseTimeout,
        ] {
            let r = opensm_limit(o).unwrap();
            assert!(o.to_file(*r.end()) > 0);
        }
    }

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
            Change::new(PortInfoSet {
                node: Guid(7),
                port: PortNum(port),
                base: Box::new(base.clone()),
                field,
                value,
            })
        };
        let ops = fabric_ops(&[
            set(2, PortField::HoqLife, 12),
            set(3, PortField::PhyState, 3),
            set(2, PortField::Lmc, 1),
        ]);
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

// ------------------------------------------------------ ibSmPartitionConfig

/// ibSmPartitionConfig: read as a ready form (this subnet's prefix, the
/// default partition, action none, ...); written as one operation per Set
/// PDU, judged with all of the PDU's varbinds (a missing required field is
/// inconsistentValue, as the MIB asks).
pub struct PartitionConfig {
    scalars: snmp::table::Scalars<View, Change>,
}

impl PartitionConfig {
    pub fn new() -> Self {
        let g = |x: u32| move |_: &View| Value::Gauge32(x);
        let scalars = snmp::table::Scalars::new(crate::util::oid(o::IB_SM_PARTITION_CONFIG))
            .read_only(last(o::IB_SM_PARTITION_CONFIG_SUBNET_PREFIX), |v: &View| {
                Value::OctetString(v.snapshot.subnet_prefix.to_be_bytes().to_vec())
            })
            .read_only(last(o::IB_SM_PARTITION_CONFIG_KEY), g(0x7fff))
            .read_only(last(o::IB_SM_PARTITION_CONFIG_ACTION), |_: &View| {
                Value::Integer(1)
            })
            .read_only(
                last(o::IB_SM_PARTITION_CONFIG_MEMBER_NODE_GUID),
                |_: &View| Value::OctetString(vec![0; 8]),
            )
            .read_only(last(o::IB_SM_PARTITION_CONFIG_MEMBER_PORT_NUM), g(1))
            .read_only(last(o::IB_SM_PARTITION_CONFIG_MEMBER_TYPE), |_: &View| {
                Value::Integer(1)
            });
        PartitionConfig { scalars }
    }
}

impl Default for PartitionConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// What one Set PDU wrote, by field.
#[derive(Default)]
struct Form {
    prefix: Option<u64>,
    key: Option<u16>,
    action: Option<(usize, i32)>,
    node: Option<u64>,
    port: Option<u8>,
    full: Option<bool>,
}

/// An 8-octet value (SIZE checked against the MIB first).
fn octets8(v: &Value) -> Result<u64, SetError> {
    <[u8; 8]>::try_from(check::octets(v, 8..=8)?)
        .map(u64::from_be_bytes)
        .map_err(|_| SetError::WrongLength)
}

impl PartitionConfig {
    fn form(sets: &[SetItem<'_>]) -> Result<Form, (usize, SetError)> {
        let mut f = Form::default();
        for s in sets {
            let at = |e| (s.position, e);
            // The scalar's object: the OID without its `.0` instance.
            let object = match s.oid.split_last() {
                Some((0, object)) if object.starts_with(o::IB_SM_PARTITION_CONFIG) => object,
                _ => return Err(at(SetError::NoCreation)),
            };
            let syntax = crate::oids::syntax(object).ok_or(at(SetError::NoCreation))?;
            syntax.check(s.value).map_err(at)?;
            let v = s.value;
            match object {
                o::IB_SM_PARTITION_CONFIG_SUBNET_PREFIX => f.prefix = Some(octets8(v).map_err(at)?),
                o::IB_SM_PARTITION_CONFIG_KEY => {
                    f.key = Some(u16::try_from(check::unsigned32(v).map_err(at)?).unwrap_or(0))
                }
                o::IB_SM_PARTITION_CONFIG_ACTION => {
                    f.action = Some((s.position, check::integer(v).map_err(at)?))
                }
                o::IB_SM_PARTITION_CONFIG_MEMBER_NODE_GUID => {
                    f.node = Some(octets8(v).map_err(at)?)
                }
                o::IB_SM_PARTITION_CONFIG_MEMBER_PORT_NUM => {
                    f.port = Some(u8::try_from(check::unsigned32(v).map_err(at)?).unwrap_or(0))
                }
                o::IB_SM_PARTITION_CONFIG_MEMBER_TYPE => {
                    f.full = Some(check::integer(v).map_err(at)? == 1)
                }
                _ => return Err(at(SetError::NoCreation)),
            }
        }
        Ok(f)
    }

    /// The port GUIDs a member names: the given port, or every port of the
    /// node that has one (a CA's ports; a switch's port 0).
    fn ports(v: &View, node: u64, port: Option<u8>) -> Option<Vec<u64>> {
        let s = &v.snapshot;
        let n = s.node_by_guid(ib::types::Guid(node))?;
        let ports: Vec<u64> = s
            .node_ports(n)
            .iter()
            .filter(|p| port.is_none_or(|q| p.num.0 == q))
            .filter(|p| p.guid.0 != 0)
            .map(|p| p.guid.0)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        (!ports.is_empty()).then_some(ports)
    }
}

impl snmp::mib::MibObject<View, Change> for PartitionConfig {
    fn root(&self) -> &snmp::oid::Oid {
        self.scalars.root()
    }
    fn get(&self, view: &View, oid: &[u32]) -> Value {
        self.scalars.get(view, oid)
    }
    fn next(&self, view: &View, oid: &[u32]) -> Option<snmp::value::VarBind> {
        self.scalars.next(view, oid)
    }
    fn check_set(&self, view: &View, oid: &[u32], value: &Value) -> Result<Change, SetError> {
        let item = SetItem {
            position: 0,
            oid,
            value,
        };
        match self.check_set_batch(view, &[item]) {
            Ok(mut c) => c.pop().map(|(_, c)| c).ok_or(SetError::InconsistentValue),
            Err((_, e)) => Err(e),
        }
    }
    fn check_set_batch(
        &self,
        view: &View,
        sets: &[SetItem<'_>],
    ) -> Result<Vec<(usize, Change)>, (usize, SetError)> {
        let first = sets.first().map_or(0, |s| s.position);
        if !sm_rows(view).sm_control {
            return Err((first, SetError::NotWritable));
        }
        let f = Self::form(sets)?;
        // Prefix, key and action are mandatory for every operation.
        let (Some(prefix), Some(key), Some((at, action))) = (f.prefix, f.key, f.action) else {
            return Err((first, SetError::InconsistentValue));
        };
        let bad = |e| Err((at, e));
        if prefix != view.snapshot.subnet_prefix {
            return bad(SetError::InconsistentValue);
        }
        let members = |port: Option<u8>| -> Result<Vec<u64>, (usize, SetError)> {
            let node = f.node.ok_or((at, SetError::InconsistentValue))?;
            Self::ports(view, node, port).ok_or((at, SetError::InconsistentValue))
        };
        let op = match action {
            // none(1): nothing to do.
            1 => return Ok(Vec::new()),
            2 => PartitionOp::Create { key },
            // The default partition holds every port's management traffic
            // (IPoIB broadcast, SA access): never deleted over SNMP.
            3 if key & 0x7fff == DEFAULT_PKEY => return bad(SetError::InconsistentValue),
            3 => PartitionOp::Delete { key },
            4 => PartitionOp::AddMembers {
                key,
                ports: members(f.port)?,
                full: f.full.ok_or((at, SetError::InconsistentValue))?,
            },
            5 => PartitionOp::RemoveMembers {
                key,
                ports: members(f.port)?,
            },
            _ => {
                let port = f.port.ok_or((at, SetError::InconsistentValue))?;
                let ports = members(Some(port))?;
                PartitionOp::UpdateMemberType {
                    key,
                    port: ports
                        .first()
                        .copied()
                        .ok_or((at, SetError::InconsistentValue))?,
                    full: f.full.ok_or((at, SetError::InconsistentValue))?,
                }
            }
        };
        Ok(vec![(at, sm_change(SmOp::Partition(op)))])
    }
}

// ----------------------------------------------------- ibSmPortInfo writes

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

impl ModuleChange for PortInfoSet {
    fn effect(&self) -> Effect {
        Effect::Grouped
    }
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
    Ok(Change::new(PortInfoSet {
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
pub fn fabric_ops(changes: &[Change]) -> Vec<(usize, ControlOp)> {
    let mut ops: Vec<(usize, Guid, PortNum, PortInfo)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        let Some(s) = c.get::<PortInfoSet>() else {
            continue;
        };
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
