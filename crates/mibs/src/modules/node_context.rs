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
//! snapshot ([`Recent`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ib::model::{Node, NodeIdx, Snapshot};
use ib::types::NodeType;
use snmp::table::Scalars;
use snmp::value::Value;

use crate::core::node::{described, guid_name, ContextNames, NodeContext, Target};
use crate::core::util::{last, oid};
use crate::if_mib::Interfaces;
use crate::oids::snmpv2_mib as o;
use crate::{Change, Derived, Object, View};

/// How many nodes' rows a snapshot keeps once derived: a walk of a node's
/// tables is many requests, each deriving the same rows otherwise.
const RECENT: usize = 8;

/// The rows of the few nodes asked last, with the snapshot they were
/// derived from (in [`Derived::recent`]): at most [`RECENT`], the oldest
/// dropped first; nothing is kept for the nodes not asked.
#[derive(Debug, Default)]
pub struct Recent(Mutex<VecDeque<Arc<Derived>>>);

impl Recent {
    fn get_or_derive(
        &self,
        s: &Snapshot,
        names: &Arc<ContextNames>,
        target: Target,
    ) -> Option<Arc<Derived>> {
        if let Ok(q) = self.0.lock() {
            let of = |d: &&Arc<Derived>| d.node.as_ref().is_some_and(|n| n.target == target);
            if let Some(d) = q.iter().find(of) {
                return Some(Arc::clone(d));
            }
        }
        let derived = derive(s, names, target)?;
        if let Ok(mut q) = self.0.lock() {
            if q.len() >= RECENT {
                q.pop_front();
            }
            q.push_back(Arc::clone(&derived));
        }
        Some(derived)
    }
}

/// The rows of the node or host `target` of `s`.
fn derive(s: &Snapshot, names: &Arc<ContextNames>, target: Target) -> Option<Arc<Derived>> {
    let first = s.node(*target.nodes().first()?)?;
    Some(Arc::new(Derived {
        if_mib: Interfaces::of_nodes(s, target.nodes()),
        node: Some(NodeContext {
            guid: first.info.node_guid,
            target,
        }),
        // sysName reads the snapshot's one index, not a new one.
        context_names: Arc::clone(names),
        ..Derived::default()
    }))
}

/// A node context's view for one use that is not kept ([`Recent`] is
/// left as it is): a monitor sampling every node must not push out the
/// rows that requests walking a node are reading.
pub fn view_once(base: &View, name: &[u8]) -> Option<View> {
    let s = &base.snapshot;
    let names = &base.derived.context_names;
    Some(View {
        derived: derive(s, names, names.resolve(s, name)?)?,
        ..base.clone()
    })
}

/// The view of the node context `name` (never ""), from the default
/// context's view `base`; None when no node of its snapshot has that name.
/// The node's rows are derived from `base`'s snapshot (or taken from the
/// few it keeps: [`Recent`]); the agent's state is `base`'s, as every Set
/// leaves it.
pub fn view(base: &View, name: &[u8]) -> Option<View> {
    let s = &base.snapshot;
    let target = base.derived.context_names.resolve(s, name)?;
    Some(View {
        derived: base
            .derived
            .recent
            .get_or_derive(s, &base.derived.context_names, target)?,
        ..base.clone()
    })
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
    objs.extend(crate::if_mib::objects(opts));
    objs.extend(crate::ib_if_mib::objects(opts));
    objs
}

/// The one node of a single-node context.
fn node(v: &View) -> Option<(NodeIdx, &Node)> {
    let idx = v.derived.node.as_ref()?.single()?;
    Some((idx, v.snapshot.node(idx)?))
}

/// The host of a host context: its name and adapters.
fn host(v: &View) -> Option<(&str, Vec<&Node>)> {
    match &v.derived.node.as_ref()?.target {
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
        _ => crate::snmpv2::SYS_SERVICES,
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
            text(crate::snmpv2::sys_contact(&v.system).to_string())
        })
        .read_only(last(o::SYS_NAME), move |v: &View| {
            or_absent(sys_name(v).map(text))
        })
        .read_only(last(o::SYS_LOCATION), |v: &View| {
            text(crate::snmpv2::sys_location(&v.system).to_string())
        })
        .read_only(last(o::SYS_SERVICES), move |v: &View| {
            let host = host(v).map(|_| crate::snmpv2::SYS_SERVICES);
            or_absent(
                node(v)
                    .map(|(_, n)| sys_services(n))
                    .or(host)
                    .map(Value::Integer),
            )
        })
}

#[cfg(test)]
mod tests;
