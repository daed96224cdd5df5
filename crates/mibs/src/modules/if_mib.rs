//! IF-MIB (RFC 2863) for the local node's InfiniBand ports, as
//! draft-ietf-ipoib-ibif-mib section 2 prescribes: ifNumber, ifTable,
//! ifXTable, ifStackTable (no layering), ifTableLastChange and
//! ifStackLastChange.
//!
//! One row per port of the local node (`Snapshot::local_node`), ifIndex by
//! the IbPort convention ([`port::if_index`]). Counters are the section 2.4
//! formulas over the model's 64-bit totals ([`ib::model::counters`]); the
//! Counter32 objects are their low 32 bits, so they wrap and never reset.
//! ifAlias and ifLinkUpDownTrapEnable are writable and persisted
//! ([`IfMibState`]).
//!
//! Status mapping (see [`port::oper_status`]): ifAdminStatus is down only for
//! a port whose PortPhysicalState is Disabled; ifOperStatus is up for
//! PortState Active, dormant for Init/Armed (link trained, waiting for the
//! SM), testing for PhyTest, down otherwise, unknown when PortState is invalid.

pub mod interfaces;
pub mod port;
#[cfg(test)]
#[allow(clippy::field_reassign_with_default)]
pub(crate) mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use ib::model::counters::IfCounters;
use ib::types::Guid;
use serde::{Deserialize, Serialize};
use snmp::mib::{MibObject, SetError};
use snmp::table::{check, RowSet, Scalar};
use snmp::value::Value;

use crate::core::column::{index, ro, rw, table};
use crate::core::oids::if_mib as o;
use crate::core::state::PersistedState;
use crate::core::util::oid;
use crate::core::value::{counter32_wrapping, int32_saturating, ticks_at};
use crate::core::view::SysOrEntry;
use crate::Change;
use crate::Col;
use crate::{SystemState, View};

pub use interfaces::{IfHistory, IfRow, Interfaces, IpoibRow, VlRow};

/// ifAlias: DisplayString (SIZE(0..64)).
const IF_ALIAS_MAX: usize = 64;

/// How many nodes may hold values set in their node contexts (ifAlias,
/// ifLinkUpDownTrapEnable): a Set that would add one more fails with
/// resourceUnavailable. A node whose values are all set back to their
/// defaults (ifAlias "", ifLinkUpDownTrapEnable enabled(1)) holds none
/// and frees its place.
pub const NODES_STORED_MAX: usize = 4096;

/// What node contexts hold, by node GUID context name (16 lowercase hex
/// digits): each node's values behind their own `Arc`, so a Set copies
/// the map's entries, never the values of other nodes.
pub type NodeStates = BTreeMap<String, Arc<NodeIfState>>;

/// The values set over SNMP, by ifIndex (persisted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IfMibState {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub if_alias: BTreeMap<u32, String>,
    /// enabled(1) or disabled(2), where set.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub if_link_up_down_trap_enable: BTreeMap<u32, i32>,
    /// What was set in node contexts (at most [`NODES_STORED_MAX`]
    /// nodes). Not written with the rest of the module: the daemon keeps
    /// it apart, each Set writing the nodes it changed only; read from
    /// files written before, where it was (`nodes`), to be moved.
    #[serde(default, skip_serializing, deserialize_with = "node_states")]
    pub nodes: NodeStates,
}

fn node_states<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NodeStates, D::Error> {
    let m = BTreeMap::<String, NodeIfState>::deserialize(d)?;
    Ok(m.into_iter().map(|(k, v)| (k, Arc::new(v))).collect())
}

/// The values set in one node's context, by ifIndex: only those that are
/// not the defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeIfState {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub if_alias: BTreeMap<u32, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub if_link_up_down_trap_enable: BTreeMap<u32, i32>,
}

impl PersistedState for IfMibState {
    const MODULE: &'static str = "IF-MIB";

    fn from_v1(kv: &BTreeMap<String, String>) -> Self {
        let by_index = |prefix: &str| {
            kv.iter()
                .filter_map(|(k, v)| {
                    let i = k.strip_prefix(prefix)?.strip_prefix('.')?.parse().ok()?;
                    Some((i, v))
                })
                .collect::<Vec<(u32, &String)>>()
        };
        IfMibState {
            nodes: BTreeMap::new(),
            if_alias: by_index("ifAlias")
                .into_iter()
                .map(|(i, v)| (i, v.clone()))
                .collect(),
            if_link_up_down_trap_enable: by_index("ifLinkUpDownTrapEnable")
                .into_iter()
                .filter_map(|(i, v)| Some((i, v.parse().ok()?)))
                .collect(),
        }
    }
}

/// A Set of a writable ifXTable column, in the default context (`node`
/// None) or a node's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IfSet {
    Alias {
        node: Option<Guid>,
        if_index: u32,
        alias: String,
    },
    LinkUpDownTrapEnable {
        node: Option<Guid>,
        if_index: u32,
        value: i32,
    },
}

impl IfSet {
    /// Phase 2: into the agent's state (persisted).
    pub(crate) fn apply(&self, state: &mut SystemState) {
        state.modules.update::<IfMibState>(|m| match self {
            IfSet::Alias {
                node: None,
                if_index,
                alias,
            } => {
                m.if_alias.insert(*if_index, alias.clone());
            }
            IfSet::LinkUpDownTrapEnable {
                node: None,
                if_index,
                value,
            } => {
                m.if_link_up_down_trap_enable.insert(*if_index, *value);
            }
            // In a node context a default value is no value: the node
            // holds what differs from the defaults only.
            IfSet::Alias {
                node: Some(g),
                if_index,
                alias,
            } => m.update_node(*g, |n| match alias.is_empty() {
                true => n.if_alias.remove(if_index),
                false => n.if_alias.insert(*if_index, alias.clone()),
            }),
            IfSet::LinkUpDownTrapEnable {
                node: Some(g),
                if_index,
                value,
            } => m.update_node(*g, |n| match *value == 1 {
                true => n.if_link_up_down_trap_enable.remove(if_index),
                false => n.if_link_up_down_trap_enable.insert(*if_index, *value),
            }),
        })
    }

    /// The node this Set changes a value of (None: the default context).
    fn node(&self) -> Option<Guid> {
        match self {
            IfSet::Alias { node, .. } | IfSet::LinkUpDownTrapEnable { node, .. } => *node,
        }
    }

    /// Whether this Set sets a value back to its default.
    fn to_default(&self) -> bool {
        match self {
            IfSet::Alias { alias, .. } => alias.is_empty(),
            IfSet::LinkUpDownTrapEnable { value, .. } => *value == 1,
        }
    }

    /// Phase 1: refused (resourceUnavailable) when it would make one more
    /// node hold values than [`NODES_STORED_MAX`].
    fn check_room(self, v: &View) -> Result<Change, SetError> {
        if let Some(g) = self.node() {
            let nodes = &v.system.modules.get::<IfMibState>().nodes;
            let held = nodes.contains_key(&crate::core::node::guid_name(g));
            let count = nodes.len();
            if !held && !self.to_default() && count >= NODES_STORED_MAX {
                return Err(SetError::ResourceUnavailable);
            }
        }
        Ok(Change::If(self))
    }
}

/// The nodes whose values differ between `old` and `new`, with their new
/// values (None: it holds none now). Cheap where nothing changed (the
/// same `Arc`s).
pub fn node_changes(old: &IfMibState, new: &IfMibState) -> BTreeMap<String, Option<NodeIfState>> {
    let mut changed = BTreeMap::new();
    for (k, v) in &new.nodes {
        if old
            .nodes
            .get(k)
            .is_none_or(|o| !Arc::ptr_eq(o, v) && o != v)
        {
            changed.insert(k.clone(), Some(NodeIfState::clone(v)));
        }
    }
    for k in old.nodes.keys() {
        if !new.nodes.contains_key(k) {
            changed.insert(k.clone(), None);
        }
    }
    changed
}

impl IfMibState {
    /// The ifAlias values of the default context (`node` None) or of a
    /// node's.
    fn aliases(&self, node: Option<Guid>) -> Option<&BTreeMap<u32, String>> {
        match node {
            None => Some(&self.if_alias),
            Some(g) => self
                .nodes
                .get(&crate::core::node::guid_name(g))
                .map(|n| &n.if_alias),
        }
    }

    /// The ifLinkUpDownTrapEnable values, as [`IfMibState::aliases`].
    fn trap_enables(&self, node: Option<Guid>) -> Option<&BTreeMap<u32, i32>> {
        match node {
            None => Some(&self.if_link_up_down_trap_enable),
            Some(g) => self
                .nodes
                .get(&crate::core::node::guid_name(g))
                .map(|n| &n.if_link_up_down_trap_enable),
        }
    }

    /// Changes node `g`'s values; a node left with none is taken out.
    fn update_node<R>(&mut self, g: Guid, f: impl FnOnce(&mut NodeIfState) -> R) {
        let key = crate::core::node::guid_name(g);
        let n = self.nodes.entry(key.clone()).or_default();
        f(Arc::make_mut(n));
        if n.if_alias.is_empty() && n.if_link_up_down_trap_enable.is_empty() {
            self.nodes.remove(&key);
        }
    }
}

/// ifLinkUpDownTrapEnable of an interface of the local node: enabled(1)
/// unless set to disabled(2) (the draft's default is enabled).
pub fn link_traps_enabled(system: &SystemState, if_index: u32) -> bool {
    link_traps_enabled_on(system, None, if_index)
}

/// ifLinkUpDownTrapEnable of an interface in the default context (`node`
/// None) or in a node's context.
pub fn link_traps_enabled_on(system: &SystemState, node: Option<Guid>, if_index: u32) -> bool {
    system
        .modules
        .get::<IfMibState>()
        .trap_enables(node)
        .and_then(|traps| traps.get(&if_index))
        .is_none_or(|v| *v != 2)
}

fn alias(v: &View, r: &IfRow) -> Vec<u8> {
    let (node, if_index) = set_key(v, r);
    v.system
        .modules
        .get::<IfMibState>()
        .aliases(node)
        .and_then(|aliases| aliases.get(&if_index))
        .map(|s| s.clone().into_bytes())
        .unwrap_or_default()
}

/// Where what is set of a row is kept: in the default context by its
/// ifIndex; in a node context by its node and its ifIndex there (a host's
/// context reads and sets each adapter's own values).
fn set_key(v: &View, r: &IfRow) -> (Option<Guid>, u32) {
    match v.derived.node() {
        Some(_) => (Some(r.node_guid), r.node_if_index),
        None => (None, r.if_index),
    }
}

/// The interfaces derived from the view's snapshot.
pub fn interfaces(v: &View) -> &Interfaces {
    &v.derived.if_mib
}

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    name: "IF-MIB",
    or_entry: || Some(or_entry()),
    objects,
    omitted: &[
        (
            o::IF_IN_N_UCAST_PKTS,
            "deprecated by RFC 2863 (ifInMulticastPkts, ifInBroadcastPkts replace it)",
        ),
        (
            o::IF_OUT_N_UCAST_PKTS,
            "deprecated by RFC 2863 (ifOutMulticastPkts, ifOutBroadcastPkts replace it)",
        ),
        (o::IF_OUT_Q_LEN, "deprecated by RFC 2863"),
        (o::IF_SPECIFIC, "deprecated by RFC 2863"),
    ],
};

/// sysORTable row: the IF-MIB module identity.
pub fn or_entry() -> SysOrEntry {
    SysOrEntry::new(
        o::IF_MIB,
        "The MIB module to describe generic objects for network interface sub-layers (RFC 2863)",
    )
}

fn ticks(view: &View, t: Option<std::time::Instant>) -> Value {
    Value::TimeTicks(ticks_at(view.system.started, t))
}

/// ifTableLastChange, absent in a node's context (no history there).
fn table_last_change(v: &View) -> Value {
    let i = interfaces(v);
    if i.history {
        ticks(v, i.table_last_change)
    } else {
        Value::NoSuchObject
    }
}

/// A Counter32 cell: the low 32 bits of a counter; absent while the port's
/// PMA was never read (node contexts; the default context reads 0).
fn c32(r: &IfRow, f: fn(&IfCounters) -> u64) -> Option<Value> {
    r.counters.as_ref().map(|c| counter32_wrapping(f(c)))
}

/// A Counter64 cell, absent as [`c32`].
fn c64(r: &IfRow, f: fn(&IfCounters) -> u64) -> Option<Value> {
    r.counters.as_ref().map(|c| Value::Counter64(f(c)))
}

/// An octet counter (Counter32): absent, like the others, while the port's
/// PMA was never read, and in a node context while its flow-control
/// counters are not current (one formula, 002 2.4, whichever node).
fn octets32(r: &IfRow, f: fn(&IfCounters) -> u64) -> Option<Value> {
    r.octets.then(|| c32(r, f)).flatten()
}

/// An octet counter (Counter64), absent as [`octets32`].
fn octets64(r: &IfRow, f: fn(&IfCounters) -> u64) -> Option<Value> {
    r.octets.then(|| c64(r, f)).flatten()
}

/// Every object of the module, ready for `Dispatcher::register_all`.
pub fn objects(_: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    vec![
        Arc::new(Scalar::read_only(oid(o::IF_NUMBER), |v: &View| {
            Value::Integer(i32::try_from(interfaces(v).ifs.len()).unwrap_or(i32::MAX))
        })),
        Arc::new(table(o::IF_ENTRY, ifs, IF_COLS)),
        Arc::new(table(o::IF_X_ENTRY, ifs, IF_X_COLS)),
        Arc::new(table(
            o::IF_STACK_ENTRY,
            |v: &View| &interfaces(v).stack,
            IF_STACK_COLS,
        )),
        Arc::new(Scalar::read_only(
            oid(o::IF_TABLE_LAST_CHANGE),
            table_last_change,
        )),
        // The stack changes exactly when ifTable rows come and go.
        Arc::new(Scalar::read_only(
            oid(o::IF_STACK_LAST_CHANGE),
            table_last_change,
        )),
    ]
}

// ifAdminStatus is read-only: port state belongs to the subnet manager
// (draft-ietf-ipoib-ibif-mib 2.2.7).
const IF_COLS: &[Col<IfRow>] = &[
    ro(o::IF_INDEX, |_, r| Some(int32_saturating(r.if_index))),
    ro(o::IF_DESCR, |_, r| {
        Some(Value::OctetString(r.descr.clone().into_bytes()))
    }),
    ro(o::IF_TYPE, |_, _| {
        Some(Value::Integer(port::IF_TYPE_INFINIBAND))
    }),
    ro(o::IF_MTU, |_, r| Some(Value::Integer(r.mtu))),
    ro(o::IF_SPEED, |_, r| {
        Some(Value::Gauge32(port::if_speed(r.speed_mbps)))
    }),
    ro(o::IF_PHYS_ADDRESS, |_, r| {
        Some(Value::OctetString(r.phys_address.clone()))
    }),
    ro(o::IF_ADMIN_STATUS, |_, r| {
        Some(Value::Integer(r.admin as i32))
    }),
    ro(o::IF_OPER_STATUS, |_, r| {
        Some(Value::Integer(r.oper as i32))
    }),
    ro(o::IF_LAST_CHANGE, |v, r| {
        interfaces(v).history.then(|| ticks(v, r.last_change))
    }),
    ro(o::IF_IN_OCTETS, |_, r| octets32(r, |c| c.in_octets)),
    ro(o::IF_IN_UCAST_PKTS, |_, r| c32(r, |c| c.in_ucast_pkts)),
    ro(o::IF_IN_DISCARDS, |_, r| c32(r, |c| c.in_discards)),
    ro(o::IF_IN_ERRORS, |_, r| c32(r, |c| c.in_errors)),
    ro(o::IF_IN_UNKNOWN_PROTOS, |_, r| c32(r, |_| 0)),
    ro(o::IF_OUT_OCTETS, |_, r| octets32(r, |c| c.out_octets)),
    ro(o::IF_OUT_UCAST_PKTS, |_, r| c32(r, |c| c.out_ucast_pkts)),
    ro(o::IF_OUT_DISCARDS, |_, r| c32(r, |c| c.out_discards)),
    ro(o::IF_OUT_ERRORS, |_, r| c32(r, |c| c.out_errors)),
];

const IF_X_COLS: &[Col<IfRow>] = &[
    ro(o::IF_NAME, |_, r| {
        Some(Value::OctetString(r.name.clone().into_bytes()))
    }),
    ro(o::IF_IN_MULTICAST_PKTS, |_, r| {
        c32(r, |c| c.in_multicast_pkts)
    }),
    ro(o::IF_IN_BROADCAST_PKTS, |_, r| c32(r, |_| 0)),
    ro(o::IF_OUT_MULTICAST_PKTS, |_, r| {
        c32(r, |c| c.out_multicast_pkts)
    }),
    ro(o::IF_OUT_BROADCAST_PKTS, |_, r| c32(r, |_| 0)),
    ro(o::IF_HC_IN_OCTETS, |_, r| octets64(r, |c| c.in_octets)),
    ro(o::IF_HC_IN_UCAST_PKTS, |_, r| c64(r, |c| c.in_ucast_pkts)),
    ro(o::IF_HC_IN_MULTICAST_PKTS, |_, r| {
        c64(r, |c| c.in_multicast_pkts)
    }),
    ro(o::IF_HC_IN_BROADCAST_PKTS, |_, r| c64(r, |_| 0)),
    ro(o::IF_HC_OUT_OCTETS, |_, r| octets64(r, |c| c.out_octets)),
    ro(o::IF_HC_OUT_UCAST_PKTS, |_, r| c64(r, |c| c.out_ucast_pkts)),
    ro(o::IF_HC_OUT_MULTICAST_PKTS, |_, r| {
        c64(r, |c| c.out_multicast_pkts)
    }),
    ro(o::IF_HC_OUT_BROADCAST_PKTS, |_, r| c64(r, |_| 0)),
    rw(
        o::IF_LINK_UP_DOWN_TRAP_ENABLE,
        |v, r| {
            let (node, if_index) = set_key(v, r);
            let on = link_traps_enabled_on(&v.system, node, if_index);
            Some(Value::Integer(if on { 1 } else { 2 }))
        },
        |v, r, _, val| {
            let (node, if_index) = set_key(v, r);
            IfSet::LinkUpDownTrapEnable {
                node,
                if_index,
                value: check::integer(val)?,
            }
            .check_room(v)
        },
    ),
    // ifPromiscuousMode false(2), ifConnectorPresent true(1).
    ro(o::IF_HIGH_SPEED, |_, r| {
        Some(Value::Gauge32(port::if_high_speed(r.speed_mbps)))
    }),
    ro(o::IF_PROMISCUOUS_MODE, |_, _| Some(Value::Integer(2))),
    ro(o::IF_CONNECTOR_PRESENT, |_, _| Some(Value::Integer(1))),
    rw(
        o::IF_ALIAS,
        |v, r| Some(Value::OctetString(alias(v, r))),
        |v, r, _, val| {
            let (node, if_index) = set_key(v, r);
            IfSet::Alias {
                node,
                if_index,
                alias: check::display_string(val, IF_ALIAS_MAX)?,
            }
            .check_room(v)
        },
    ),
    ro(o::IF_COUNTER_DISCONTINUITY_TIME, |v, r| {
        r.counters.as_ref().map(|_| ticks(v, r.discontinuity))
    }),
];

// ifStackStatus active(1): the fixed (0, i) / (i, 0) rows.
const IF_STACK_COLS: &[Col<(u32, u32)>] = &[
    index(o::IF_STACK_HIGHER_LAYER),
    index(o::IF_STACK_LOWER_LAYER),
    ro(o::IF_STACK_STATUS, |_, _| Some(Value::Integer(1))),
];

/// The ifTable rows (ifXTable and IB-IF-MIB's ibIfPortStatTable share them).
pub(crate) fn ifs(v: &View) -> &RowSet<IfRow> {
    &interfaces(v).ifs
}
