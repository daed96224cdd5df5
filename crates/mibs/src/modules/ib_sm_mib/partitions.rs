//! ibSmPartitionTable (membership vectors by P_Key) and
//! ibSmPartitionConfig, the form that creates, deletes and changes
//! partitions through the SM.

use snmp::mib::{SetError, SetItem};
use snmp::table::check;

use super::config::sm_change;
use super::*;
use crate::core::util::last;
use ib::opensm::partitions::DEFAULT_PKEY;

pub(super) const PARTITION_COLS: &[Col<VectorRow>] = &vector_cols(
    o::IB_SM_PARTITION_VECTOR,
    o::IB_SM_PARTITION_VECTOR_SIZE,
    o::IB_SM_PARTITION_VECTOR_ELEMENT_SIZE,
    o::IB_SM_PARTITION_LAST_CHANGE,
);

/// ibSmPartitionConfig: read as a ready form (this subnet's prefix, the
/// default partition, action none, ...); written as one operation per Set
/// PDU, judged with all of the PDU's varbinds (a missing required field is
/// inconsistentValue, as the MIB asks).
pub struct PartitionConfig {
    scalars: snmp::table::Scalars<View, Change>,
    /// The daemon steers the SM ([`crate::Options::sm_control`]): else
    /// every Set is notWritable.
    sm_control: bool,
}

impl PartitionConfig {
    pub fn new(sm_control: bool) -> Self {
        let g = |x: u32| move |_: &View| Value::Gauge32(x);
        let scalars = snmp::table::Scalars::new(crate::core::util::oid(o::IB_SM_PARTITION_CONFIG))
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
        PartitionConfig {
            scalars,
            sm_control,
        }
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
            let syntax = crate::core::oids::syntax(object).ok_or(at(SetError::NoCreation))?;
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
            clearance: snmp::dispatch::Clearance::Public,
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
        if !self.sm_control {
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
