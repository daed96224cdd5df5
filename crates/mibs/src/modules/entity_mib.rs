//! ENTITY-MIB (RFC 6933) entLogicalTable in the default context: one row
//! per node of the fabric, naming the node's context
//! (entLogicalContextName) so that a manager can discover the node
//! contexts ([`crate::modules::node_context`]) as it discovers a switch's per-VLAN
//! instances.
//!
//! Rows are derived on request from the view's snapshot, one step per
//! instance (nothing is built per node). entLogicalIndex is the node's
//! position in the snapshot plus one: stable while the fabric's node list
//! is (RFC 6933 lets an agent renumber logical entities; a manager keys
//! them by entLogicalContextName, the node's GUID context).
//!
//! The OIDs are written here: ENTITY-MIB is not among the shipped MIB
//! files (`mibs/`), whose OIDs are generated.

use snmp::mib::{Access, MibObject};
use snmp::oid::Oid;
use snmp::value::{Value, VarBind};

use crate::core::node::guid_name;
use crate::core::view::SysOrEntry;
use crate::{Change, View};

/// entityMIB (MODULE-IDENTITY): 1.3.6.1.2.1.47.
pub const ENTITY_MIB: &[u32] = &[1, 3, 6, 1, 2, 1, 47];
/// entLogicalEntry: entityMIB.1.2.1.1.
pub const ENT_LOGICAL_ENTRY: &[u32] = &[1, 3, 6, 1, 2, 1, 47, 1, 2, 1, 1];
/// ifMIB (RFC 2863's MODULE-IDENTITY): a node context's entLogicalType,
/// the major MIB module it serves.
pub const IF_MIB_MODULE: &[u32] = &[1, 3, 6, 1, 2, 1, 31];

/// entLogicalDescr, entLogicalType, entLogicalContextEngineID,
/// entLogicalContextName. Not served: entLogicalCommunity (deprecated:
/// `community@context` addresses a context), entLogicalTAddress and
/// entLogicalTDomain (the agent may listen on several addresses; a
/// manager reaches the node context where it reaches the agent).
const COLUMNS: [u32; 4] = [2, 3, 7, 8];

/// sysORTable row: the ENTITY-MIB module identity.
pub fn or_entry() -> SysOrEntry {
    SysOrEntry::new(
        ENTITY_MIB,
        "The MIB module for representing multiple logical entities supported by a single SNMP agent (RFC 6933): the fabric's nodes as contexts",
    )
}

/// entLogicalTable over the view's snapshot.
pub struct EntLogicalTable {
    entry: Oid,
    /// snmpEngineID: entLogicalContextEngineID of every node context (they
    /// are all this agent's).
    engine_id: Vec<u8>,
}

impl EntLogicalTable {
    pub fn new(engine_id: Vec<u8>) -> Self {
        EntLogicalTable {
            entry: Oid::from_slice(ENT_LOGICAL_ENTRY),
            engine_id,
        }
    }

    fn cell(&self, v: &View, column: u32, index: u32) -> Option<Value> {
        let idx = index.checked_sub(1)?;
        let node = v.snapshot.node(idx)?;
        Some(match column {
            2 => Value::OctetString(node.description.clone().into_bytes()),
            3 => Value::ObjectId(Oid::from_slice(IF_MIB_MODULE)),
            7 => Value::OctetString(self.engine_id.clone()),
            8 => Value::OctetString(guid_name(node.info.node_guid).into_bytes()),
            _ => return None,
        })
    }

    fn instance(&self, column: u32, index: u32, value: Value) -> VarBind {
        VarBind::new(self.entry.join(&[column, index]), value)
    }
}

impl MibObject<View, Change> for EntLogicalTable {
    fn root(&self) -> &Oid {
        &self.entry
    }

    fn get(&self, v: &View, oid: &[u32]) -> Value {
        match oid.strip_prefix(self.entry.as_slice()) {
            Some([c, i]) if COLUMNS.contains(c) => {
                self.cell(v, *c, *i).unwrap_or(Value::NoSuchInstance)
            }
            Some([c, ..]) if COLUMNS.contains(c) => Value::NoSuchInstance,
            _ => Value::NoSuchObject,
        }
    }

    fn next(&self, v: &View, oid: &[u32]) -> Option<VarBind> {
        // (column, the last index before the answer) to start from.
        let (column, after) = match oid.strip_prefix(self.entry.as_slice()) {
            None if oid < self.entry.as_slice() => (0, 0),
            None => return None,
            Some([]) => (0, 0),
            Some([c]) => (*c, 0),
            Some([c, i, ..]) => (*c, *i),
        };
        let nodes = u32::try_from(v.snapshot.nodes.len()).unwrap_or(u32::MAX);
        for c in COLUMNS.into_iter().filter(|c| *c >= column) {
            let first = if c == column {
                after.saturating_add(1)
            } else {
                1
            };
            // `after` may be the last u32 index: nothing follows it there.
            if c == column && after == u32::MAX {
                continue;
            }
            if first <= nodes {
                if let Some(value) = self.cell(v, c, first) {
                    return Some(self.instance(c, first, value));
                }
            }
        }
        None
    }

    fn declared_columns(&self) -> Vec<(u32, Access)> {
        COLUMNS.iter().map(|c| (*c, Access::ReadOnly)).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ib::source::Source;
    use snmp::agent::SnmpStats;

    use super::*;
    use crate::SystemState;

    #[test]
    fn one_row_per_node_walked_column_by_column() {
        let mut src = crate::testing::sim_source("test-ent-logical", false);
        let s = Arc::new(src.sweep().unwrap());
        let v = View::new(
            Arc::clone(&s),
            Arc::new(SystemState::new("t".into(), Oid::new(vec![1, 3]))),
            Arc::new(SnmpStats::default()),
        );
        let t = EntLogicalTable::new(vec![0x80, 1]);
        let mut at = ENTITY_MIB.to_vec();
        let mut seen = Vec::new();
        while let Some(vb) = t.next(&v, &at) {
            assert!(vb.oid.as_slice() > at.as_slice());
            assert_eq!(t.get(&v, vb.oid.as_slice()), vb.value);
            at = vb.oid.as_slice().to_vec();
            seen.push(vb);
        }
        let n = s.nodes.len();
        assert_eq!(seen.len(), 4 * n);
        for (i, node) in s.nodes.iter().enumerate() {
            let name = &seen[3 * n + i];
            assert_eq!(
                name.value,
                Value::OctetString(guid_name(node.info.node_guid).into_bytes())
            );
            // The context it names resolves to this node.
            let ctx = crate::modules::node_context::view(
                &v,
                &guid_name(node.info.node_guid).into_bytes(),
            )
            .unwrap();
            assert_eq!(ctx.derived.node().unwrap().single(), Some(i as u32));
        }
        let mut past = ENT_LOGICAL_ENTRY.to_vec();
        past.extend([2, n as u32 + 1]);
        assert_eq!(t.get(&v, &past), Value::NoSuchInstance);
        past.truncate(ENT_LOGICAL_ENTRY.len());
        past.extend([8, u32::MAX]);
        assert!(t.next(&v, &past).is_none());
    }
}
