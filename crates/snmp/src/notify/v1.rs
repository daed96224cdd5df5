//! SNMPv1 Trap-PDUs from SNMPv2 notifications (RFC 3584 section 3.2).

use std::net::Ipv4Addr;

use super::notification::Notification;
use crate::oid::Oid;
use crate::pdu::TrapV1;
use crate::value::Value;

/// snmpTrapEnterprise.0 (SNMPv2-MIB).
pub const SNMP_TRAP_ENTERPRISE_0: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 4, 3, 0];
/// snmpTrapAddress.0 (RFC 3584's SNMP-COMMUNITY-MIB).
pub const SNMP_TRAP_ADDRESS_0: &[u32] = &[1, 3, 6, 1, 6, 3, 18, 1, 3, 0];
/// snmpTraps: the parent of the six generic traps (coldStart .1 ... egpNeighborLoss .6).
pub const SNMP_TRAPS: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5];

/// SNMPv1 generic-trap enterpriseSpecific(6).
pub const ENTERPRISE_SPECIFIC: i32 = 6;

impl Notification {
    /// The SNMPv1 Trap-PDU for this notification (RFC 3584 section 3.2):
    /// a generic trap under snmpTraps keeps its number - 1 as generic-trap
    /// and snmpTrapEnterprise.0 (or snmpTraps) as enterprise; any other is
    /// enterpriseSpecific(6) with the last sub-identifier as specific-trap
    /// and the rest (without a next-to-last 0) as enterprise. Counter64
    /// bindings are removed (SNMPv1 has no such type).
    pub fn to_v1(&self, up_time: u32, agent_addr: Ipv4Addr) -> TrapV1 {
        let oid = self.trap_oid.as_slice();
        let last = oid.last().copied().unwrap_or(0);
        let parent = oid.get(..oid.len().saturating_sub(1)).unwrap_or(&[]);
        let given_enterprise = self.varbinds.iter().find_map(|vb| {
            match (vb.oid.as_slice() == SNMP_TRAP_ENTERPRISE_0, &vb.value) {
                (true, Value::ObjectId(o)) => Some(o.clone()),
                _ => None,
            }
        });
        let (enterprise, generic, specific) = if parent == SNMP_TRAPS && (1..=6).contains(&last) {
            let e = given_enterprise.unwrap_or_else(|| Oid::from_slice(SNMP_TRAPS));
            (e, last as i32 - 1, 0)
        } else {
            let e = match parent.split_last() {
                Some((0, rest)) => Oid::from_slice(rest),
                _ => Oid::from_slice(parent),
            };
            (e, ENTERPRISE_SPECIFIC, last as i32)
        };
        let addr = self
            .varbinds
            .iter()
            .find_map(
                |vb| match (vb.oid.as_slice() == SNMP_TRAP_ADDRESS_0, &vb.value) {
                    (true, Value::IpAddress(a)) => Some(*a),
                    _ => None,
                },
            )
            .unwrap_or(agent_addr.octets());
        TrapV1 {
            enterprise,
            agent_addr: addr,
            generic_trap: generic,
            specific_trap: specific,
            time_stamp: up_time,
            varbinds: self
                .varbinds
                .iter()
                .filter(|vb| !matches!(vb.value, Value::Counter64(_)))
                .cloned()
                .collect(),
        }
    }
}
