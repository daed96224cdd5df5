//! Renderings of a snapshot: ibnetdiscover's text (diffable against the real
//! tool) and JSON (schema in docs/dump-json.md).

use super::counters::IfCounters;
use super::snapshot::{Node, Port, Snapshot};
use crate::topology::{write_ibnetdiscover, TopoNode, TopoPort, Topology, WriteHeader};
use crate::types::{data_rate_mbps, Guid, Lid, NodeType};
use serde_json::{json, Value};
use std::time::{SystemTime, UNIX_EPOCH};

/// ibnetdiscover's node id for a node: `S-`/`H-`/`R-` and the GUID.
pub fn node_id(n: &Node) -> String {
    let prefix = match n.info.node_type() {
        Some(NodeType::Switch) => "S",
        Some(NodeType::Ca) => "H",
        Some(NodeType::Router) => "R",
        None => "?",
    };
    format!("{prefix}-{:016x}", n.info.node_guid.0)
}

/// The snapshot as a topology (node ids as ibnetdiscover names them).
pub fn to_topology(s: &Snapshot) -> Topology {
    let mut nodes = Vec::with_capacity(s.nodes.len());
    for (i, n) in s.nodes.iter().enumerate() {
        let t = n.info.node_type().unwrap_or(NodeType::Ca);
        let mut tn = TopoNode::new(t, node_id(n), n.info.num_ports, n.info.node_guid);
        tn.description = Some(n.description.clone());
        tn.port0_guid = n.info.port_guid;
        tn.sys_image_guid = n.info.system_image_guid;
        tn.vendor_id = n.info.vendor_id;
        tn.device_id = n.info.device_id;
        if t == NodeType::Switch {
            tn.enhanced_port0 = n.switch.as_ref().map(|sw| sw.info.enhanced_port0);
            if let Some(p0) = s.node_ports(i as u32).first() {
                tn.lid = Some(p0.info.lid);
                tn.lmc = Some(p0.info.lmc);
            }
        }
        for p in s.node_ports(i as u32) {
            let Some((rn, rp)) = p
                .remote
                .and_then(|r| s.port(r))
                .and_then(|rp| Some((s.node(rp.node)?, rp)))
            else {
                continue;
            };
            let mut tp = TopoPort::new(p.num, p.guid, node_id(rn), rp.num);
            if t != NodeType::Switch {
                tp.lid = Some(p.info.lid);
                tp.lmc = Some(p.info.lmc);
            }
            tp.width = p.info.link_width();
            tp.speed = s.port_speed(p);
            tn.ports.push(tp);
        }
        nodes.push(tn);
    }
    // Node ids derive from unique GUIDs; a duplicate GUID is the only failure.
    Topology::new(nodes).unwrap_or_default()
}

/// What ibnetdiscover would print for this fabric.
pub fn dump_ibnetdiscover(s: &Snapshot) -> String {
    let from = s.local_node().map(|n| (n.info.node_guid, n.info.port_guid));
    write_ibnetdiscover(
        &to_topology(s),
        &WriteHeader {
            generated: Some(s.sweep.time),
            initiated_from: from,
        },
    )
}

/// RFC 3339 UTC with milliseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (y, m, day) = crate::topology::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

fn guid(g: Guid) -> Value {
    Value::String(g.to_string())
}

fn port_json(s: &Snapshot, p: &Port) -> Value {
    let info = &p.info;
    let width = info.link_width();
    let speed = s.port_speed(p);
    let remote = p.remote.and_then(|r| s.port(r)).and_then(|rp| {
        let rn = s.node(rp.node)?;
        Some(json!({"node_guid": guid(rn.info.node_guid), "port": rp.num.0}))
    });
    let counters = p.counters.as_ref().map(|c| {
        json!({
            "read_at": rfc3339(c.read_at),
            "discontinuity": rfc3339(c.discontinuity),
            "raw": serde_json::to_value(&c.readings).unwrap_or(Value::Null),
            "totals": serde_json::to_value(&c.totals).unwrap_or(Value::Null),
            "if": serde_json::to_value(IfCounters::from_totals(&c.totals)).unwrap_or(Value::Null),
        })
    });
    json!({
        "num": p.num.0,
        "guid": guid(p.guid),
        "lid": info.lid.0,
        "lmc": info.lmc,
        "state": info.port_state().map(|x| x.name()),
        "phys_state": info.phys_state().map(|x| x.name()),
        "width": width.map(|w| w.name()),
        "speed": speed.map(|x| x.name()),
        "rate_mbps": match (width, speed) {
            (Some(w), Some(sp)) => Some(data_rate_mbps(w, sp)),
            _ => None,
        },
        "remote": remote,
        "port_info": serde_json::to_value(info).unwrap_or(Value::Null),
        "pkeys": p.pkeys.iter().map(|k| k.0).collect::<Vec<_>>(),
        "guids": p.guids.iter().map(|g| g.to_string()).collect::<Vec<_>>(),
        "counters": counters,
    })
}

/// One node with its ports.
fn node_json(s: &Snapshot, i: usize, n: &Node) -> Value {
    let sw = n.switch.as_ref().map(|sw| {
        json!({
            "info": serde_json::to_value(&sw.info).unwrap_or(Value::Null),
            "lft": sw.lft.iter().collect::<Vec<_>>(),
        })
    });
    json!({
        "guid": guid(n.info.node_guid),
        "id": node_id(n),
        "type": n.info.node_type().map(|t| t.name()),
        "description": n.description,
        "lid": s.node_lid(i as u32).0,
        "node_info": serde_json::to_value(&n.info).unwrap_or(Value::Null),
        "switch": sw,
        "pma": n.pma.as_ref().map(|c| serde_json::to_value(c).unwrap_or(Value::Null)),
        "sampling": n.sampling.as_ref().map(|x| json!({
            "control": serde_json::to_value(&x.control).unwrap_or(Value::Null),
            "result": serde_json::to_value(&x.result).unwrap_or(Value::Null),
        })),
        "ports": s.node_ports(i as u32).iter().map(|p| port_json(s, p)).collect::<Vec<_>>(),
    })
}

/// The nodes, each rendered only as it is written.
struct Nodes<'a>(&'a Snapshot);

impl serde::Serialize for Nodes<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = ser.serialize_seq(Some(self.0.nodes.len()))?;
        for (i, n) in self.0.nodes.iter().enumerate() {
            seq.serialize_element(&node_json(self.0, i, n))?;
        }
        seq.end()
    }
}

/// The snapshot as JSON, streamed: serialising it (e.g. with
/// `serde_json::to_writer_pretty`) builds one node's JSON at a time, so a
/// dump of a large fabric needs little memory beyond the snapshot itself.
/// The text equals [`dump_json`]'s (same keys, same sorted order).
pub struct JsonDump<'a>(pub &'a Snapshot);

impl serde::Serialize for JsonDump<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let s = self.0;
        let mut m = ser.serialize_map(None)?;
        // Keys in sorted order, as serde_json's Map (a BTreeMap) orders them.
        m.serialize_entry("ipoib", &ipoib_json(s))?;
        m.serialize_entry("local_ca", &s.local_ca)?;
        m.serialize_entry(
            "local_node",
            &s.local_node().map(|n| guid(n.info.node_guid)),
        )?;
        m.serialize_entry(
            "master_sm_lid",
            &s.master_sm().map(|m| m.lid.0).unwrap_or(Lid(0).0),
        )?;
        m.serialize_entry("multicast_groups", &groups_json(s))?;
        m.serialize_entry("nodes", &Nodes(s))?;
        m.serialize_entry("partitions", &partitions_json(s))?;
        m.serialize_entry("schema", "ibsnmpd-dump/1")?;
        m.serialize_entry("services", &services_json(s))?;
        m.serialize_entry("sms", &sms_json(s))?;
        m.serialize_entry("subnet_prefix", &format!("{:#018x}", s.subnet_prefix))?;
        m.serialize_entry(
            "sweep",
            &json!({
                "number": s.sweep.number,
                "time": rfc3339(s.sweep.time),
                "duration_s": s.sweep.duration.as_secs_f64(),
                "source": s.sweep.source,
                "cost": cost_json(&s.sweep.cost),
            }),
        )?;
        m.end()
    }
}

/// The whole snapshot as JSON (see docs/dump-json.md); [`JsonDump`] streams
/// the same text.
pub fn dump_json(s: &Snapshot) -> Value {
    serde_json::to_value(JsonDump(s)).unwrap_or(Value::Null)
}

fn sms_json(s: &Snapshot) -> Vec<Value> {
    s.sms
        .iter()
        .map(|m| {
            json!({
                "lid": m.lid.0,
                "port_guid": m.port.and_then(|p| s.port(p)).map(|p| guid(p.guid)),
                "guid": guid(m.info.guid),
                "priority": m.info.priority,
                "state": crate::types::SmState::from_raw(m.info.sm_state).map(|x| x.name()),
                "answering": m.answering,
                // The last ActCount of an SM that no longer answers is not current.
                "act_count": m.answering.then_some(m.info.act_count),
            })
        })
        .collect()
}

fn partitions_json(s: &Snapshot) -> Vec<Value> {
    s
        .partitions
        .iter()
        .map(|p| {
            json!({
                "pkey": format!("{:#06x}", p.pkey.0),
                "members": p.members.iter().map(|m| json!({"port_guid": guid(m.port_guid), "full": m.full})).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn groups_json(s: &Snapshot) -> Vec<Value> {
    s.mcast_groups
        .iter()
        .map(|g| {
            json!({
                "mgid": g.group.mgid.to_string(),
                "mlid": format!("{:#06x}", g.group.mlid.0),
                "pkey": format!("{:#06x}", g.group.p_key.0),
                "qkey": format!("{:#010x}", g.group.q_key),
                "mtu": g.group.mtu,
                "rate": g.group.rate,
                "sl": g.group.sl,
                "scope": g.group.scope,
                "members": g.members.iter().map(|m| json!({
                    "port_gid": m.port_gid.to_string(),
                    "join_state": m.join_state,
                    "proxy_join": m.proxy_join,
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn ipoib_json(s: &Snapshot) -> Vec<Value> {
    s
        .ipoib
        .iter()
        .map(|i| {
            let port = s.port(i.port);
            json!({
                "name": i.name,
                "node_guid": port.and_then(|p| s.node(p.node)).map(|n| guid(n.info.node_guid)),
                "port": port.map(|p| p.num.0),
                "address": i.address.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":"),
            })
        })
        .collect()
}

fn services_json(s: &Snapshot) -> Vec<Value> {
    s.services
        .iter()
        .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
        .collect()
}

/// A sweep's cost per phase (MAD class), as `dump` shows it.
fn cost_json(c: &super::SweepCost) -> Value {
    let phase = |p: &super::PhaseCost| {
        serde_json::json!({
            "duration_s": p.duration.as_secs_f64(),
            "mads_sent": p.sent,
            "failed": p.failed,
            "timeouts": p.timeouts,
        })
    };
    serde_json::json!({
        "discovery": phase(&c.discovery),
        "sa": phase(&c.sa),
        "pma": phase(&c.pma),
    })
}
