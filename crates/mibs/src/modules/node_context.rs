//! A node's context (issue 39): any node of the fabric served as if it had
//! its own agent. The context's view is the default context's with the
//! node's rows derived now, on request, from the current snapshot
//! ([`view`]); its objects ([`objects`]) are the SNMPv2-MIB system group
//! about the node, IF-MIB and IB-IF-MIB over the node's ports (the default
//! context's own objects and row builder, given the node's
//! [`Interfaces`]). The daemon adds the engine's snmpEngine group.
//!
//! Nothing is kept per node: a node's rows live as long as the request
//! that asked for them, or, for the last few nodes asked, as long as the
//! snapshot ([`Recent`]). A GetRequest that reads only some ports' rows
//! derives only those ([`rows_read`], [`view_reading`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ib::model::{Node, NodeIdx, Snapshot};
use ib::types::NodeType;
use snmp::table::Scalars;
use snmp::value::Value;

use crate::core::node::{described, guid_name, ContextNames, NodeContext, Target};
use crate::core::oids::snmpv2_mib as o;
use crate::core::util::{last, oid};
use crate::modules::if_mib::Interfaces;
use crate::{Change, Derived, Object, Scope, View};

/// How many nodes' rows a snapshot keeps once derived: a walk of a node's
/// tables is many requests, each deriving the same rows otherwise.
const RECENT: usize = 8;

/// The rows of the few nodes asked last, with the snapshot they were
/// derived from (in [`crate::FabricRows::recent`]): at most [`RECENT`], the oldest
/// dropped first; nothing is kept for the nodes not asked.
#[derive(Debug, Default)]
pub struct Recent(Mutex<VecDeque<Arc<Derived>>>);

impl Recent {
    /// The rows kept for `target`, if any.
    fn get(&self, target: &Target) -> Option<Arc<Derived>> {
        let q = self.0.lock().ok()?;
        q.iter()
            .find(|d| d.node().is_some_and(|n| n.target == *target))
            .map(Arc::clone)
    }

    fn get_or_derive(
        &self,
        s: &Snapshot,
        names: &Arc<ContextNames>,
        target: Target,
    ) -> Option<Arc<Derived>> {
        if let Some(d) = self.get(&target) {
            return Some(d);
        }
        let derived = derive(s, names, target, None)?;
        if let Ok(mut q) = self.0.lock() {
            if q.len() >= RECENT {
                q.pop_front();
            }
            q.push_back(Arc::clone(&derived));
        }
        Some(derived)
    }
}

/// The rows of the node or host `target` of `s`: those of the ifIndexes
/// `only` (None: all).
fn derive(
    s: &Snapshot,
    names: &Arc<ContextNames>,
    target: Target,
    only: Option<&[u32]>,
) -> Option<Arc<Derived>> {
    let first = s.node(*target.nodes().first()?)?;
    Some(Arc::new(Derived {
        if_mib: Interfaces::of_nodes_only(s, target.nodes(), only),
        // sysName reads the snapshot's one index, not a new one.
        context_names: Arc::clone(names),
        scope: Scope::Node(NodeContext {
            guid: first.info.node_guid,
            target,
        }),
    }))
}

/// The rows of the node or host `target` of `base`'s snapshot: those the
/// default context keeps ([`Recent`]), else derived now and kept.
fn recent_or_derive(base: &View, target: Target) -> Option<Arc<Derived>> {
    let (s, names) = (&base.snapshot, &base.derived.context_names);
    match base.derived.fabric() {
        Some(f) => f.recent.get_or_derive(s, names, target),
        // A node context's view is never a base; derived, not kept.
        None => derive(s, names, target, None),
    }
}

/// A node context's view for one use that is not kept ([`Recent`] is
/// left as it is): a monitor sampling every node must not push out the
/// rows that requests walking a node are reading.
pub fn view_once(base: &View, name: &[u8]) -> Option<View> {
    let s = &base.snapshot;
    let names = &base.derived.context_names;
    Some(View {
        derived: derive(s, names, names.resolve(s, name)?, None)?,
        ..base.clone()
    })
}

/// The tables of a node context whose rows are ports, each indexed by its
/// ifIndex first: a row's columns read its own port only.
const PORT_ROW_TABLES: &[&[u32]] = &[
    crate::core::oids::if_mib::IF_ENTRY,
    crate::core::oids::if_mib::IF_X_ENTRY,
    crate::core::oids::ib_if_mib::IB_IF_PORT_STAT_ENTRY,
    crate::core::oids::ib_if_mib::IB_IF_VL_TRAFFIC_ENTRY,
    crate::core::oids::ib_if_mib::IB_IPOIB_LINK_LAYER_ADDR_ENTRY,
];

/// The groups of a node context that read no port row: the system group
/// about the node, and the engine's (snmpEngine, usmStats: snmpModules).
const ROWLESS: &[&[u32]] = &[o::SYSTEM, &[1, 3, 6, 1, 6, 3]];

/// The ifIndexes whose rows a GetRequest for `oids` reads in a node
/// context, when that is all it reads: every OID is an instance of a
/// column of a table of ports (ifTable, ifXTable, ibIfPortStatTable,
/// ibIfVLTrafficTable, ibIpoibLinkLayerAddrTable: its ifIndex, then any
/// further index) or of a group that reads no row. None when any other
/// OID is asked (ifNumber, ifStackTable, a prefix of a table): the whole
/// rows are needed.
pub fn rows_read<'a>(oids: impl IntoIterator<Item = &'a [u32]>) -> Option<Vec<u32>> {
    let mut wanted = Vec::new();
    for oid in oids {
        if let Some(t) = PORT_ROW_TABLES.iter().find(|t| oid.starts_with(t)) {
            // entry . column . ifIndex ...
            let if_index = *oid.get(t.len() + 1)?;
            if !wanted.contains(&if_index) {
                wanted.push(if_index);
            }
        } else if !ROWLESS.iter().any(|g| oid.starts_with(g)) {
            return None;
        }
    }
    Some(wanted)
}

/// [`view`] for a request that reads the rows of the ifIndexes `only`
/// alone (Some: [`rows_read`]): the node's rows the snapshot keeps when
/// it keeps them, else only those rows, derived now and not kept (a GET
/// of one port of each of many nodes in turn derives one row each, not
/// every port of each node). None for `only`: [`view`].
pub fn view_reading(base: &View, name: &[u8], only: Option<&[u32]>) -> Option<View> {
    let Some(only) = only else {
        return view(base, name);
    };
    let s = &base.snapshot;
    let names = &base.derived.context_names;
    let target = names.resolve(s, name)?;
    let kept = base.derived.fabric().and_then(|f| f.recent.get(&target));
    let derived = match kept {
        Some(d) => d,
        None => derive(s, names, target, Some(only))?,
    };
    Some(View {
        derived,
        ..base.clone()
    })
}

/// The view of the node context `name` (never ""), from the default
/// context's view `base`; None when no node of its snapshot has that name.
/// The node's rows are derived from `base`'s snapshot (or taken from the
/// few it keeps: [`Recent`]); the agent's state is `base`'s, as every Set
/// leaves it.
pub fn view(base: &View, name: &[u8]) -> Option<View> {
    let target = base.derived.context_names.resolve(&base.snapshot, name)?;
    Some(View {
        derived: recent_or_derive(base, target)?,
        ..base.clone()
    })
}

/// Whether `name` (never "") names a node context of `base`'s snapshot,
/// without deriving its rows.
pub fn exists(base: &View, name: &[u8]) -> bool {
    base.derived
        .context_names
        .resolve(&base.snapshot, name)
        .is_some()
}

/// The first node context name after `after` in vacmContextTable's order,
/// in `base`'s snapshot.
pub fn next_name(base: &View, after: &[u8]) -> Option<Vec<u8>> {
    base.derived.context_names.next_name(&base.snapshot, after)
}

/// One context name per node of `base`'s snapshot: its GUID context (what
/// a trigger over every node samples, each node once).
pub fn guid_names(base: &View) -> Vec<Vec<u8>> {
    base.snapshot
        .nodes
        .iter()
        .map(|n| guid_name(n.info.node_guid).into_bytes())
        .collect()
}

/// The objects a node's context serves (the daemon registers them in the
/// node contexts' dispatcher, with the engine's snmpEngine group).
pub fn objects(opts: &crate::Options) -> Vec<Object> {
    let mut objs: Vec<Object> = vec![Arc::new(system())];
    objs.extend(crate::modules::if_mib::objects(opts));
    objs.extend(crate::modules::ib_if_mib::objects(opts));
    objs
}

/// The one node of a single-node context.
fn node(v: &View) -> Option<(NodeIdx, &Node)> {
    let idx = v.derived.node()?.single()?;
    Some((idx, v.snapshot.node(idx)?))
}

/// The host of a host context: its name and adapters.
fn host(v: &View) -> Option<(&str, Vec<&Node>)> {
    match &v.derived.node()?.target {
        Target::Host { name, members } => Some((
            name,
            members.iter().filter_map(|m| v.snapshot.node(*m)).collect(),
        )),
        Target::Node(_) => None,
    }
}

/// A host's sysDescr: its adapters by device word and GUID.
fn host_descr(name: &str, adapters: &[&Node]) -> String {
    let list: Vec<String> = adapters
        .iter()
        .map(|n| {
            let device = described(n).device.unwrap_or("?");
            format!("{device} {}", n.info.node_guid)
        })
        .collect();
    format!(
        "{name} (InfiniBand host of {} channel adapters: {})",
        adapters.len(),
        list.join(", ")
    )
}

fn text(s: String) -> Value {
    Value::OctetString(s.into_bytes())
}

/// sysDescr: the NodeDescription, then what NodeInfo tells of the device
/// (IEEE OUI of the vendor, device ID, revision). The firmware version is
/// not in any attribute the sweep reads (it needs vendor-specific MADs),
/// so it is not shown.
pub fn sys_descr(n: &Node) -> String {
    let kind = match NodeType::try_from(n.info.node_type) {
        Ok(NodeType::Switch) => "switch",
        Ok(NodeType::Router) => "router",
        _ => "channel adapter",
    };
    format!(
        "{} (InfiniBand {kind}, vendor 0x{:06x}, device 0x{:04x}, revision 0x{:x}, node GUID {})",
        n.description, n.info.vendor_id, n.info.device_id, n.info.revision, n.info.node_guid
    )
}

/// sysName: the node's name context when it has one (unique), else its
/// GUID context name; a host's name.
fn sys_name(v: &View) -> Option<String> {
    if let Some((name, _)) = host(v) {
        return Some(name.to_string());
    }
    let (idx, n) = node(v)?;
    Some(
        v.derived
            .context_names
            .name_of(&v.snapshot, idx)
            .map_or_else(|| guid_name(n.info.node_guid), str::to_string),
    )
}

/// sysServices (RFC 3418): a switch is datalink (2), a router internet
/// (4), a channel adapter a host as the default context (72).
fn sys_services(n: &Node) -> i32 {
    match NodeType::try_from(n.info.node_type) {
        Ok(NodeType::Switch) => 2,
        Ok(NodeType::Router) => 4,
        _ => crate::modules::snmpv2::SYS_SERVICES,
    }
}

/// The system group about the node, read-only (sysContact and
/// sysLocation are the agent's: the fabric keeps no such thing per node;
/// sysUpTime is the agent's, whose counters the node's rows are).
fn system() -> Scalars<View, Change> {
    let or_absent = |v: Option<Value>| v.unwrap_or(Value::NoSuchObject);
    Scalars::new(oid(o::SYSTEM))
        .read_only(last(o::SYS_DESCR), move |v: &View| {
            let one = node(v).map(|(_, n)| sys_descr(n));
            or_absent(
                one.or_else(|| host(v).map(|(h, a)| host_descr(h, &a)))
                    .map(text),
            )
        })
        .read_only(last(o::SYS_OBJECT_ID), |v: &View| {
            Value::ObjectId(v.system.object_id.clone())
        })
        .read_only(last(o::SYS_UP_TIME), |v: &View| {
            Value::TimeTicks(v.system.up_time())
        })
        .read_only(last(o::SYS_CONTACT), |v: &View| {
            text(crate::modules::snmpv2::sys_contact(&v.system).to_string())
        })
        .read_only(last(o::SYS_NAME), move |v: &View| {
            or_absent(sys_name(v).map(text))
        })
        .read_only(last(o::SYS_LOCATION), |v: &View| {
            text(crate::modules::snmpv2::sys_location(&v.system).to_string())
        })
        .read_only(last(o::SYS_SERVICES), move |v: &View| {
            let host = host(v).map(|_| crate::modules::snmpv2::SYS_SERVICES);
            or_absent(
                node(v)
                    .map(|(_, n)| sys_services(n))
                    .or(host)
                    .map(Value::Integer),
            )
        })
}

#[cfg(test)]
mod naming;
#[cfg(test)]
mod tests;
