//! The notifications ibsnmpd sends, each with exactly the OBJECTS its
//! NOTIFICATION-TYPE lists (SNMPv2-MIB, IF-MIB, IB-SM-MIB), and the mapping
//! from fabric events and snapshot differences to them.
//!
//! IB-SM-MIB's generic notifications mirror IBA's generic traps (IBA 14.2.5.1,
//! "Notice" generic trap numbers): ibSmTrapType and ibSmTrapProducerType
//! carry the Notice's Type and ProducerType as the IBA (and OpenSM) set them.
//! The accessible-for-notify objects are scalars under ibSmTrapData, sent
//! with instance `.0`. Values the fabric model cannot know (the other end of
//! a bad-key packet, its QPs) are sent as zero.

use ib::mad::smp::PortInfo;
use ib::model::{FabricEvent, FabricEventKind, Port, Snapshot};
use ib::types::{Gid, Guid, NodeType};
use snmp::notify::Notification;
use snmp::oid::Oid;
use snmp::value::{Value, VarBind};

use std::collections::HashSet;

use crate::if_mib::port::{admin_status, oper_status, OperStatus};
use crate::oids::{ib_sm_mib as sm, if_mib, snmpv2_mib};
use crate::SystemState;

/// ibSmTrapType: the IBA Notice's Type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrapType {
    Fatal = 0,
    Urgent = 1,
    Security = 2,
    SubnetMgmt = 3,
    Informational = 4,
}

/// ibSmTrapProducerType: the IBA Notice's ProducerType.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProducerType {
    ChannelAdapter = 1,
    Switch = 2,
    Router = 3,
    SubnetMgmt = 4,
}

impl ProducerType {
    /// The producer a node of this type is.
    pub fn of(node_type: Option<NodeType>) -> Self {
        match node_type {
            Some(NodeType::Switch) => ProducerType::Switch,
            Some(NodeType::Router) => ProducerType::Router,
            _ => ProducerType::ChannelAdapter,
        }
    }
}

/// Counter increments within one sweep that raise IB-SM-MIB's threshold
/// notifications (0: never).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// PortCounters LocalLinkIntegrityErrors (IBA trap 129).
    pub link_integrity: u64,
    /// PortCounters ExcessiveBufferOverrunErrors (IBA trap 130).
    pub buffer_overrun: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            link_integrity: 1,
            buffer_overrun: 1,
        }
    }
}

/// The storm-control key of a port.
pub fn port_source(node: Guid, port: u8) -> String {
    format!("{node}:{port}")
}

fn scalar(oid: &[u32]) -> Oid {
    Oid::from_slice(oid).join(&[0])
}

fn vb(oid: &[u32], value: Value) -> VarBind {
    VarBind::new(scalar(oid), value)
}

fn guid(oid: &[u32], g: Guid) -> VarBind {
    vb(oid, Value::OctetString(g.to_bytes().to_vec()))
}

fn port(oid: &[u32], p: u8) -> VarBind {
    vb(oid, Value::Gauge32(u32::from(p)))
}

fn u32v(oid: &[u32], v: u32) -> VarBind {
    vb(oid, Value::Gauge32(v))
}

/// ibSmTrapSubnetPrefix, ibSmTrapType, ibSmTrapProducerType: every generic
/// notification starts with them.
fn head(prefix: u64, t: TrapType, p: ProducerType) -> Vec<VarBind> {
    vec![
        vb(
            sm::IB_SM_TRAP_SUBNET_PREFIX,
            Value::OctetString(prefix.to_be_bytes().to_vec()),
        ),
        vb(sm::IB_SM_TRAP_TYPE, Value::Integer(t as i32)),
        vb(sm::IB_SM_TRAP_PRODUCER_TYPE, Value::Integer(p as i32)),
    ]
}

/// Objects of a notification about one port (GUID1, PortNum1).
fn node_port(
    trap: &[u32],
    prefix: u64,
    t: TrapType,
    p: ProducerType,
    g: Guid,
    n: u8,
) -> Notification {
    let mut v = head(prefix, t, p);
    v.push(guid(sm::IB_SM_TRAP_NODE_GUID1, g));
    v.push(port(sm::IB_SM_TRAP_PORT_NUM1, n));
    Notification::new(trap, v).with_source(port_source(g, n))
}

/// The states notifications report (storm control sends the last one it
/// held back, [`Notification::state`]).
pub mod state {
    /// linkUp / linkDown.
    pub const LINK: &str = "link";
    /// ibSmTrapInService / ibSmTrapOutOfService.
    pub const SERVICE: &str = "service";
    /// ibSmTrapMCGroupCreated / Deleted.
    pub const GROUP: &str = "group";
}

/// A port's service state, reported by the SM.
fn service(
    trap: &[u32],
    prefix: u64,
    t: TrapType,
    p: ProducerType,
    g: Guid,
    n: u8,
) -> Notification {
    node_port(trap, prefix, t, p, g, n).with_state(state::SERVICE)
}

/// ibSmTrapInService (IBA trap 64, from the SM).
pub fn in_service(prefix: u64, node: Guid, port_num: u8) -> Notification {
    service(
        sm::IB_SM_TRAP_IN_SERVICE,
        prefix,
        TrapType::SubnetMgmt,
        ProducerType::SubnetMgmt,
        node,
        port_num,
    )
}

/// ibSmTrapOutOfService (IBA trap 65, from the SM).
pub fn out_of_service(prefix: u64, node: Guid, port_num: u8) -> Notification {
    service(
        sm::IB_SM_TRAP_OUT_OF_SERVICE,
        prefix,
        TrapType::SubnetMgmt,
        ProducerType::SubnetMgmt,
        node,
        port_num,
    )
}

/// ibSmTrapMCGroupCreated / Deleted (IBA traps 66/67, from the SM).
pub fn mc_group(created: bool, prefix: u64, mgid: Gid) -> Notification {
    let trap = if created {
        sm::IB_SM_TRAP_MC_GROUP_CREATED
    } else {
        sm::IB_SM_TRAP_MC_GROUP_DELETED
    };
    let mut v = head(prefix, TrapType::SubnetMgmt, ProducerType::SubnetMgmt);
    v.push(vb(
        sm::IB_SM_TRAP_MC_GID,
        Value::OctetString(mgid.to_bytes().to_vec()),
    ));
    Notification::new(trap, v)
        .with_source(format!("mgid {mgid}"))
        .with_state(state::GROUP)
}

/// ibSmTrapSwitchLinkStateChanged (IBA trap 128, from the switch).
pub fn switch_link_state_changed(prefix: u64, switch: Guid, port_num: u8) -> Notification {
    let mut v = head(prefix, TrapType::Urgent, ProducerType::Switch);
    v.push(guid(sm::IB_SM_TRAP_SWITCH_GUID, switch));
    v.push(port(sm::IB_SM_TRAP_SWITCH_PORT_NUM, port_num));
    Notification::new(sm::IB_SM_TRAP_SWITCH_LINK_STATE_CHANGED, v)
        .with_source(port_source(switch, port_num))
}

/// ibSmTrapLinkIntegrityThreasholdReached (IBA trap 129).
pub fn link_integrity(prefix: u64, p: ProducerType, node: Guid, port_num: u8) -> Notification {
    node_port(
        sm::IB_SM_TRAP_LINK_INTEGRITY_THREASHOLD_REACHED,
        prefix,
        TrapType::Urgent,
        p,
        node,
        port_num,
    )
}

/// ibSmTrapBufferOverrunThresholdReached (IBA trap 130).
pub fn buffer_overrun(prefix: u64, p: ProducerType, node: Guid, port_num: u8) -> Notification {
    node_port(
        sm::IB_SM_TRAP_BUFFER_OVERRUN_THRESHOLD_REACHED,
        prefix,
        TrapType::Urgent,
        p,
        node,
        port_num,
    )
}

/// ibSmTrapFlowControlUpdateWatchdogTimerExpired (IBA trap 131; only a
/// delivered Notice reports it: no counter shows it).
pub fn flow_control_watchdog(
    prefix: u64,
    p: ProducerType,
    node: Guid,
    port_num: u8,
) -> Notification {
    node_port(
        sm::IB_SM_TRAP_FLOW_CONTROL_UPDATE_WATCHDOG_TIMER_EXPIRED,
        prefix,
        TrapType::Urgent,
        p,
        node,
        port_num,
    )
}

/// ibSmTrapCapabilityMaskChanged (IBA trap 144).
pub fn capability_mask_changed(
    prefix: u64,
    p: ProducerType,
    node: Guid,
    port_num: u8,
    mask: u32,
) -> Notification {
    let mut n = node_port(
        sm::IB_SM_TRAP_CAPABILITY_MASK_CHANGED,
        prefix,
        TrapType::Informational,
        p,
        node,
        port_num,
    );
    n.varbinds.push(vb(
        sm::IB_SM_TRAP_CAPABILITY_MASK,
        Value::OctetString(mask.to_be_bytes().to_vec()),
    ));
    n
}

/// ibSmTrapSystemImageGUIDChanged (IBA trap 145).
pub fn system_image_guid_changed(
    prefix: u64,
    p: ProducerType,
    node: Guid,
    image: Guid,
) -> Notification {
    let mut v = head(prefix, TrapType::Informational, p);
    v.push(guid(sm::IB_SM_TRAP_NODE_GUID1, node));
    v.push(guid(sm::IB_SM_TRAP_SYSTEM_IMAGE_GUID, image));
    Notification::new(sm::IB_SM_TRAP_SYSTEM_IMAGE_GUID_CHANGED, v).with_source(node.to_string())
}

/// What a bad-key Notice says about the offending packet; zero where unknown
/// (a violation counter only says that one happened).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyViolation {
    pub node2: Guid,
    pub port2: u8,
    /// BadMKey: the MAD's method, attribute, modifier and M_Key.
    pub method: u16,
    pub attrib_id: u16,
    pub attrib_modifier: u32,
    pub m_key: u64,
    /// BadPKey/BadQKey.
    pub p_key: u16,
    pub q_key: u32,
    pub qp1: u32,
    pub qp2: u32,
    pub sl: u8,
}

/// ibSmTrapBadMKey (IBA trap 256).
pub fn bad_m_key(
    prefix: u64,
    p: ProducerType,
    node: Guid,
    port_num: u8,
    k: &KeyViolation,
) -> Notification {
    let mut n = node_port(
        sm::IB_SM_TRAP_BAD_M_KEY,
        prefix,
        TrapType::Security,
        p,
        node,
        port_num,
    );
    n.varbinds.extend([
        guid(sm::IB_SM_TRAP_NODE_GUID2, k.node2),
        port(sm::IB_SM_TRAP_PORT_NUM2, k.port2),
        u32v(sm::IB_SM_TRAP_METHOD, u32::from(k.method)),
        u32v(sm::IB_SM_TRAP_ATTRIB_ID, u32::from(k.attrib_id)),
        u32v(sm::IB_SM_TRAP_ATTRIB_MODIFIER, k.attrib_modifier),
        vb(
            sm::IB_SM_TRAP_M_KEY,
            Value::OctetString(k.m_key.to_be_bytes().to_vec()),
        ),
        u32v(sm::IB_SM_TRAP_DRS_LID, 0),
        // TruthValue false(2): not known to come from a directed-route SMP.
        vb(sm::IB_SM_TRAP_DR_NOTICE, Value::Integer(2)),
        vb(sm::IB_SM_TRAP_DR_PATH_TRUNCATED, Value::Integer(2)),
        u32v(sm::IB_SM_TRAP_DR_HOP_COUNT, 0),
        vb(
            sm::IB_SM_TRAP_DR_RETURN_PATH,
            Value::OctetString(Vec::new()),
        ),
    ]);
    n
}

fn key_tail(n: &mut Notification, k: &KeyViolation, key: VarBind) {
    n.varbinds.extend([
        guid(sm::IB_SM_TRAP_NODE_GUID2, k.node2),
        port(sm::IB_SM_TRAP_PORT_NUM2, k.port2),
        key,
        u32v(sm::IB_SM_TRAP_QUEUE_PAIR1, k.qp1),
        u32v(sm::IB_SM_TRAP_QUEUE_PAIR2, k.qp2),
        u32v(sm::IB_SM_TRAP_SERVICE_LEVEL, u32::from(k.sl)),
    ]);
}

/// ibSmTrapBadPKey (IBA trap 257).
pub fn bad_p_key(
    prefix: u64,
    p: ProducerType,
    node: Guid,
    port_num: u8,
    k: &KeyViolation,
) -> Notification {
    let mut n = node_port(
        sm::IB_SM_TRAP_BAD_P_KEY,
        prefix,
        TrapType::Security,
        p,
        node,
        port_num,
    );
    key_tail(&mut n, k, u32v(sm::IB_SM_TRAP_P_KEY, u32::from(k.p_key)));
    n
}

/// ibSmTrapBadQKey (IBA trap 258).
pub fn bad_q_key(
    prefix: u64,
    p: ProducerType,
    node: Guid,
    port_num: u8,
    k: &KeyViolation,
) -> Notification {
    let mut n = node_port(
        sm::IB_SM_TRAP_BAD_Q_KEY,
        prefix,
        TrapType::Security,
        p,
        node,
        port_num,
    );
    key_tail(
        &mut n,
        k,
        vb(
            sm::IB_SM_TRAP_Q_KEY,
            Value::OctetString(k.q_key.to_be_bytes().to_vec()),
        ),
    );
    n
}

/// ibSmTrapSwitchExternalPortsBadPKey (IBA trap 259). `data_valid`: the
/// ibSmTrapDataValid BITS octets (empty: no optional field is valid).
pub fn switch_external_ports_bad_p_key(
    prefix: u64,
    switch: Guid,
    switch_port: u8,
    data_valid: Vec<u8>,
    k: &KeyViolation,
) -> Notification {
    let mut v = head(prefix, TrapType::Security, ProducerType::Switch);
    v.extend([
        guid(sm::IB_SM_TRAP_SWITCH_GUID, switch),
        port(sm::IB_SM_TRAP_SWITCH_PORT_NUM, switch_port),
        vb(sm::IB_SM_TRAP_DATA_VALID, Value::OctetString(data_valid)),
        guid(sm::IB_SM_TRAP_NODE_GUID1, Guid(0)),
        port(sm::IB_SM_TRAP_PORT_NUM1, 0),
        guid(sm::IB_SM_TRAP_NODE_GUID2, k.node2),
        port(sm::IB_SM_TRAP_PORT_NUM2, k.port2),
        u32v(sm::IB_SM_TRAP_P_KEY, u32::from(k.p_key)),
        u32v(sm::IB_SM_TRAP_QUEUE_PAIR1, k.qp1),
        u32v(sm::IB_SM_TRAP_QUEUE_PAIR2, k.qp2),
        u32v(sm::IB_SM_TRAP_SERVICE_LEVEL, u32::from(k.sl)),
    ]);
    Notification::new(sm::IB_SM_TRAP_SWITCH_EXTERNAL_PORTS_BAD_P_KEY, v)
        .with_source(port_source(switch, switch_port))
}

/// ibSmTrapVendorSpecific (IBA vendor-specific Notices): the Notice's
/// VendorID (24 bits), DeviceID and 54 octets of data.
pub fn vendor_specific(
    prefix: u64,
    t: TrapType,
    vendor_id: u32,
    device_id: u16,
    node: Guid,
    port_num: u8,
    data: &[u8],
) -> Notification {
    let mut detail = data.to_vec();
    detail.resize(54, 0);
    let vid = vendor_id.to_be_bytes();
    let v = vec![
        vb(
            sm::IB_SM_TRAP_SUBNET_PREFIX,
            Value::OctetString(prefix.to_be_bytes().to_vec()),
        ),
        vb(sm::IB_SM_TRAP_TYPE, Value::Integer(t as i32)),
        vb(
            sm::IB_SM_TRAP_VENDOR_ID,
            Value::OctetString(vid.get(1..).unwrap_or(&[]).to_vec()),
        ),
        vb(
            sm::IB_SM_TRAP_DEVICE_ID,
            Value::OctetString(device_id.to_be_bytes().to_vec()),
        ),
        guid(sm::IB_SM_TRAP_NODE_GUID1, node),
        port(sm::IB_SM_TRAP_PORT_NUM1, port_num),
        vb(
            sm::IB_SM_TRAP_VENDOR_DETAILED_DATA,
            Value::OctetString(detail),
        ),
    ];
    Notification::new(sm::IB_SM_TRAP_VENDOR_SPECIFIC, v).with_source(port_source(node, port_num))
}

/// coldStart (SNMPv2-MIB): no objects.
pub fn cold_start() -> Notification {
    Notification::new(snmpv2_mib::COLD_START, Vec::new())
}

/// warmStart (SNMPv2-MIB): no objects.
pub fn warm_start() -> Notification {
    Notification::new(snmpv2_mib::WARM_START, Vec::new())
}

/// authenticationFailure (SNMPv2-MIB) for a request from `from`,
/// rate-limited per source address: one sender (or one spoofed address)
/// uses up its own storm-control budget, not everyone's.
pub fn authentication_failure(from: std::net::IpAddr) -> Notification {
    Notification::new(snmpv2_mib::AUTHENTICATION_FAILURE, Vec::new())
        .with_source(format!("authenticationFailure from {from}"))
}

/// linkUp / linkDown (IF-MIB) with ifIndex, ifAdminStatus, ifOperStatus.
pub fn link_up_down(
    up: bool,
    node: Guid,
    port_num: u8,
    if_idx: u32,
    admin: i32,
    oper: i32,
) -> Notification {
    let inst = |o: &[u32]| Oid::from_slice(o).join(&[if_idx]);
    let v = vec![
        VarBind::new(inst(if_mib::IF_INDEX), Value::Integer(if_idx as i32)),
        VarBind::new(inst(if_mib::IF_ADMIN_STATUS), Value::Integer(admin)),
        VarBind::new(inst(if_mib::IF_OPER_STATUS), Value::Integer(oper)),
    ];
    let trap = if up {
        if_mib::LINK_UP
    } else {
        if_mib::LINK_DOWN
    };
    Notification::new(trap, v)
        .with_source(port_source(node, port_num))
        .with_state(state::LINK)
}

pub use crate::if_mib::link_traps_enabled;

fn producer_of(s: &Snapshot, g: Guid) -> ProducerType {
    ProducerType::of(
        s.node_by_guid(g)
            .and_then(|i| s.node(i))
            .and_then(|n| n.info.node_type()),
    )
}

/// The IB-SM-MIB notifications for one fabric event (`snap`: the snapshot
/// the event came from, for node types and the subnet prefix).
pub fn from_event(ev: &FabricEvent, snap: &Snapshot) -> Vec<Notification> {
    let prefix = snap.subnet_prefix;
    match &ev.kind {
        FabricEventKind::PortInService {
            node_guid, port, ..
        } => {
            vec![in_service(prefix, *node_guid, port.0)]
        }
        FabricEventKind::PortOutOfService {
            node_guid, port, ..
        } => {
            vec![out_of_service(prefix, *node_guid, port.0)]
        }
        // Trap 128 is a switch's: CA port changes show as in/out of service.
        FabricEventKind::LinkStateChange {
            node_guid, port, ..
        } if producer_of(snap, *node_guid) == ProducerType::Switch => {
            vec![switch_link_state_changed(prefix, *node_guid, port.0)]
        }
        _ => Vec::new(),
    }
}

/// IF-MIB linkUp/linkDown for a link state change of one of the local
/// node's ports (RFC 2863: linkDown when ifOperStatus enters down, linkUp
/// when it leaves down), None for other events or when the interface's
/// ifLinkUpDownTrapEnable is disabled(2). The interface is the IF-MIB row
/// `next` publishes for the port: the trap names the ifIndex a manager
/// reads (with AgentX's `agentx_if_index_offset`, which the rows carry),
/// and the enable flag is looked up where a Set of that row stored it.
pub fn link_up_down_for<X>(
    ev: &FabricEvent,
    next: &crate::Published<X>,
    system: &SystemState,
) -> Option<Notification> {
    let FabricEventKind::LinkStateChange {
        node_guid,
        port: p,
        from,
        to,
        phys_from,
        phys_to,
    } = &ev.kind
    else {
        return None;
    };
    let local = next.snapshot.local_node()?;
    if local.info.node_guid != *node_guid {
        return None;
    }
    let row = next
        .derived
        .if_mib
        .ifs
        .rows()
        .iter()
        .find(|r| r.port_num == p.0)?;
    let idx = row.if_index;
    let before = oper_status(*from, *phys_from);
    let after = oper_status(*to, *phys_to);
    let up = match (before == OperStatus::Down, after == OperStatus::Down) {
        (false, true) => false,
        (true, false) => true,
        _ => return None,
    };
    if !link_traps_enabled(system, idx) {
        return None;
    }
    let admin = admin_status(*phys_to) as i32;
    Some(link_up_down(up, *node_guid, p.0, idx, admin, after as i32))
}

/// The counter increase of one port between two snapshots (None when
/// either lacks counters).
fn increase(a: &Port, b: &Port, f: fn(&ib::model::PortTotals) -> u64) -> Option<u64> {
    let (x, y) = (a.counters.as_ref()?, b.counters.as_ref()?);
    Some(f(&y.totals).saturating_sub(f(&x.totals)))
}

/// A 16-bit violation counter's increase (it saturates; a decrease is a reset).
fn violations(a: &PortInfo, b: &PortInfo, f: fn(&PortInfo) -> u16) -> u16 {
    f(b).saturating_sub(f(a))
}

/// The partitions (P_Key base, membership bit cleared) of the local node's
/// ports; None when the snapshot knows none (no local node, or no P_Key
/// tables read).
fn local_partitions(s: &Snapshot) -> Option<HashSet<u16>> {
    let n = s.local_node?;
    let keys: HashSet<u16> = s
        .node_ports(n)
        .iter()
        .flat_map(|p| p.pkeys.iter().map(|k| k.0 & 0x7fff))
        .collect();
    (!keys.is_empty()).then_some(keys)
}

/// Multicast groups created and deleted between two snapshots: only groups
/// that really appeared or vanished, not changes of the agent's view of them.
/// The view is the master SA's answer, filtered by the partitions of the port
/// asking. So groups are compared only when both snapshots have the same
/// master SM answering (a new master's SA rebuilds its groups; an SM that does
/// not answer shows its last ones); and a group of a partition the local node
/// joined, which the subnet had before, came into view rather than being
/// created; one of a partition it left, which the subnet still has, went out
/// of view rather than being deleted.
fn mc_group_changes(prev: &Snapshot, next: &Snapshot) -> Vec<Notification> {
    let master = |s: &Snapshot| s.master_sm().map(|m| m.info.guid);
    if master(prev).is_none() || master(prev) != master(next) {
        return Vec::new();
    }
    let (was, is) = (local_partitions(prev), local_partitions(next));
    let member = |parts: &Option<HashSet<u16>>, k: u16| parts.as_ref().map(|p| p.contains(&k));
    let exists = |s: &Snapshot, k: u16| s.partitions.iter().any(|p| p.pkey.0 & 0x7fff == k);
    let key = |g: &ib::model::McastGroup| g.group.p_key.0 & 0x7fff;
    // In view before and not now, the partition still there: left, not deleted.
    let left = |g: &ib::model::McastGroup| {
        let k = key(g);
        member(&was, k) == Some(true) && member(&is, k) == Some(false) && exists(next, k)
    };
    // Not in view before and now, the partition there before: joined, not created.
    let joined = |g: &ib::model::McastGroup| {
        let k = key(g);
        member(&was, k) == Some(false) && member(&is, k) == Some(true) && exists(prev, k)
    };
    let prefix = next.subnet_prefix;
    let old: HashSet<Gid> = prev.mcast_groups.iter().map(|g| g.group.mgid).collect();
    let new: HashSet<Gid> = next.mcast_groups.iter().map(|g| g.group.mgid).collect();
    let mut out = Vec::new();
    for g in &prev.mcast_groups {
        if !new.contains(&g.group.mgid) && !left(g) {
            out.push(mc_group(false, prefix, g.group.mgid));
        }
    }
    for g in &next.mcast_groups {
        if !old.contains(&g.group.mgid) && !joined(g) {
            out.push(mc_group(true, prefix, g.group.mgid));
        }
    }
    out
}

/// The notifications that only a comparison of two snapshots shows:
/// multicast groups created/deleted ([`mc_group_changes`]), counter
/// thresholds passed, capability mask and system image GUID changes, key
/// violations. Each change is reported once (in the first snapshot that
/// shows it).
pub fn from_snapshots(prev: &Snapshot, next: &Snapshot, th: &Thresholds) -> Vec<Notification> {
    let prefix = next.subnet_prefix;
    let mut out = mc_group_changes(prev, next);
    for (ni, n) in next.nodes.iter().enumerate() {
        let g = n.info.node_guid;
        let Some(pi) = prev.node_by_guid(g) else {
            continue;
        };
        let producer = ProducerType::of(n.info.node_type());
        if let Some(pn) = prev.node(pi) {
            if pn.info.system_image_guid != n.info.system_image_guid {
                out.push(system_image_guid_changed(
                    prefix,
                    producer,
                    g,
                    n.info.system_image_guid,
                ));
            }
        }
        let is_switch = producer == ProducerType::Switch;
        for p in next.node_ports(ni as u32) {
            let Some(q) = prev.node_port(pi, p.num).and_then(|q| prev.port(q)) else {
                continue;
            };
            let num = p.num.0;
            let li = increase(q, p, |t| t.local_link_integrity_errors).unwrap_or(0);
            if th.link_integrity > 0 && li >= th.link_integrity {
                out.push(link_integrity(prefix, producer, g, num));
            }
            let bo = increase(q, p, |t| t.excessive_buffer_overrun_errors).unwrap_or(0);
            if th.buffer_overrun > 0 && bo >= th.buffer_overrun {
                out.push(buffer_overrun(prefix, producer, g, num));
            }
            // CapabilityMask and key violations are end-port attributes
            // (a switch's live in port 0's PortInfo), except P_Key
            // enforcement on external switch ports (trap 259).
            let end_port = next.is_end_port(p);
            if end_port && q.info.capability_mask != p.info.capability_mask {
                out.push(capability_mask_changed(
                    prefix,
                    producer,
                    g,
                    num,
                    p.info.capability_mask,
                ));
            }
            let k = KeyViolation::default();
            if end_port && violations(&q.info, &p.info, |i| i.m_key_violations) > 0 {
                out.push(bad_m_key(prefix, producer, g, num, &k));
            }
            if violations(&q.info, &p.info, |i| i.p_key_violations) > 0 {
                out.push(if is_switch && num != 0 {
                    switch_external_ports_bad_p_key(prefix, g, num, Vec::new(), &k)
                } else {
                    bad_p_key(prefix, producer, g, num, &k)
                });
            }
            if end_port && violations(&q.info, &p.info, |i| i.q_key_violations) > 0 {
                out.push(bad_q_key(prefix, producer, g, num, &k));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
