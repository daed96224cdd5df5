//! The notifications ibsnmpd sends, each with the OBJECTS its
//! NOTIFICATION-TYPE lists (SNMPv2-MIB, IF-MIB, IB-SM-MIB), and the mapping
//! from fabric events and snapshot differences to them. linkUp and linkDown
//! append (RFC 2863 section 8 allows it) ifName, ifDescr and
//! ibSmTrapNodeGUID1, which name the node and port: an ifIndex alone is
//! ambiguous between the nodes of a fabric.
//!
//! IB-SM-MIB's generic notifications mirror IBA's generic traps (IBA 14.2.5.1,
//! "Notice" generic trap numbers): ibSmTrapType and ibSmTrapProducerType
//! carry the Notice's Type and ProducerType as the IBA (and OpenSM) set them.
//! The accessible-for-notify objects are scalars under ibSmTrapData, sent
//! with instance `.0`. Values the fabric model cannot know (the other end of
//! a bad-key packet, its QPs) are sent as zero.

use ib::model::events::{AttributeChange, ErrorCounter, Key};
use ib::model::{FabricEvent, FabricEventKind, Snapshot};
use ib::types::{Gid, Guid, NodeType};
use snmp::notify::Notification;
use snmp::oid::Oid;
use snmp::value::{Value, VarBind};

use crate::core::oids::{ib_sm_mib as sm, if_mib, snmpv2_mib};
use crate::modules::if_mib::port::{admin_status, oper_status, OperStatus};
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

/// A port's service state, reported by the SM (IBA traps 64/65).
fn service(trap: &[u32], prefix: u64, node: Guid, port_num: u8) -> Notification {
    let (t, p) = (TrapType::SubnetMgmt, ProducerType::SubnetMgmt);
    node_port(trap, prefix, t, p, node, port_num).with_state(state::SERVICE)
}

/// ibSmTrapInService (IBA trap 64, from the SM).
pub fn in_service(prefix: u64, node: Guid, port_num: u8) -> Notification {
    service(sm::IB_SM_TRAP_IN_SERVICE, prefix, node, port_num)
}

/// ibSmTrapOutOfService (IBA trap 65, from the SM).
pub fn out_of_service(prefix: u64, node: Guid, port_num: u8) -> Notification {
    service(sm::IB_SM_TRAP_OUT_OF_SERVICE, prefix, node, port_num)
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

/// A port's Urgent notification from its own node (IBA traps 129-131).
fn urgent(trap: &[u32], prefix: u64, p: ProducerType, node: Guid, port_num: u8) -> Notification {
    node_port(trap, prefix, TrapType::Urgent, p, node, port_num)
}

/// ibSmTrapLinkIntegrityThreasholdReached (IBA trap 129).
pub fn link_integrity(prefix: u64, p: ProducerType, node: Guid, port_num: u8) -> Notification {
    urgent(
        sm::IB_SM_TRAP_LINK_INTEGRITY_THREASHOLD_REACHED,
        prefix,
        p,
        node,
        port_num,
    )
}

/// ibSmTrapBufferOverrunThresholdReached (IBA trap 130).
pub fn buffer_overrun(prefix: u64, p: ProducerType, node: Guid, port_num: u8) -> Notification {
    urgent(
        sm::IB_SM_TRAP_BUFFER_OVERRUN_THRESHOLD_REACHED,
        prefix,
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
    urgent(
        sm::IB_SM_TRAP_FLOW_CONTROL_UPDATE_WATCHDOG_TIMER_EXPIRED,
        prefix,
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

/// A bad-key Notice's notification about one port (IBA traps 256-258).
fn security(trap: &[u32], prefix: u64, p: ProducerType, node: Guid, port_num: u8) -> Notification {
    node_port(trap, prefix, TrapType::Security, p, node, port_num)
}

/// ibSmTrapBadMKey (IBA trap 256).
pub fn bad_m_key(
    prefix: u64,
    p: ProducerType,
    node: Guid,
    port_num: u8,
    k: &KeyViolation,
) -> Notification {
    let mut n = security(sm::IB_SM_TRAP_BAD_M_KEY, prefix, p, node, port_num);
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
    let mut n = security(sm::IB_SM_TRAP_BAD_P_KEY, prefix, p, node, port_num);
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
    let mut n = security(sm::IB_SM_TRAP_BAD_Q_KEY, prefix, p, node, port_num);
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

/// The interface a linkUp/linkDown is about: its node and port, its
/// ifIndex, and the ifName and ifDescr of its row in the context it is
/// served in.
#[derive(Clone, Debug)]
pub struct LinkIf<'a> {
    pub node: Guid,
    pub port_num: u8,
    pub if_index: u32,
    pub name: &'a str,
    pub descr: &'a str,
}

/// linkUp / linkDown (IF-MIB) with ifIndex, ifAdminStatus, ifOperStatus,
/// then ifName, ifDescr and ibSmTrapNodeGUID1.0 (the node's GUID).
pub fn link_up_down(up: bool, i: &LinkIf<'_>, admin: i32, oper: i32) -> Notification {
    let inst = |o: &[u32]| Oid::from_slice(o).join(&[i.if_index]);
    let v = vec![
        VarBind::new(inst(if_mib::IF_INDEX), Value::Integer(i.if_index as i32)),
        VarBind::new(inst(if_mib::IF_ADMIN_STATUS), Value::Integer(admin)),
        VarBind::new(inst(if_mib::IF_OPER_STATUS), Value::Integer(oper)),
        VarBind::new(
            inst(if_mib::IF_NAME),
            Value::OctetString(i.name.as_bytes().to_vec()),
        ),
        VarBind::new(
            inst(if_mib::IF_DESCR),
            Value::OctetString(i.descr.as_bytes().to_vec()),
        ),
        guid(sm::IB_SM_TRAP_NODE_GUID1, i.node),
    ];
    let trap = if up {
        if_mib::LINK_UP
    } else {
        if_mib::LINK_DOWN
    };
    Notification::new(trap, v)
        .with_source(port_source(i.node, i.port_num))
        .with_state(state::LINK)
}

pub use crate::modules::if_mib::link_traps_enabled;

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
///
/// With `fabric_wide` (config `fabric_link_traps`), a port of any other
/// node too: the trap carries the ifIndex of the port in that node's
/// context, and the node's GUID context as its contextName (SNMPv3 sinks);
/// the node context's ifLinkUpDownTrapEnable of the port decides.
pub fn link_up_down_for<X>(
    ev: &FabricEvent,
    next: &crate::Published<X>,
    system: &SystemState,
    fabric_wide: bool,
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
    let local = next
        .snapshot
        .local_node()
        .is_some_and(|l| l.info.node_guid == *node_guid);
    // The row the trap names: the default context's for the local node,
    // else the one the node's own context serves.
    let node_rows;
    let (row, context) = if local {
        let row = next
            .derived
            .if_mib
            .ifs
            .rows()
            .iter()
            .find(|r| r.port_num == p.0)?;
        (row, None)
    } else if fabric_wide {
        let s = &next.snapshot;
        node_rows = crate::modules::if_mib::Interfaces::of_node(s, s.node_by_guid(*node_guid)?);
        let row = node_rows.ifs.rows().iter().find(|r| r.port_num == p.0)?;
        (row, Some(*node_guid))
    } else {
        return None;
    };
    let idx = row.if_index;
    let before = oper_status(*from, *phys_from);
    let after = oper_status(*to, *phys_to);
    let up = match (before == OperStatus::Down, after == OperStatus::Down) {
        (false, true) => false,
        (true, false) => true,
        _ => return None,
    };
    if !crate::modules::if_mib::link_traps_enabled_on(system, context, idx) {
        return None;
    }
    let admin = admin_status(*phys_to) as i32;
    let i = LinkIf {
        node: *node_guid,
        port_num: p.0,
        if_index: idx,
        name: &row.name,
        descr: &row.descr,
    };
    let n = link_up_down(up, &i, admin, after as i32);
    Some(match context {
        Some(g) => n.with_context(crate::core::node::guid_name(g).into_bytes()),
        None => n,
    })
}

/// A trap about one port (subnet prefix, producer, node, port number).
type PortTrap = fn(u64, ProducerType, Guid, u8) -> Notification;

/// The notification of one attribute change between two sweeps (`next`:
/// the later snapshot, for node types and the subnet prefix); None for an
/// error increase below its threshold. Each change is reported once, in the
/// first sweep that shows it.
pub fn from_change(ch: &AttributeChange, next: &Snapshot, th: &Thresholds) -> Option<Notification> {
    let prefix = next.subnet_prefix;
    Some(match *ch {
        AttributeChange::McGroup { created, mgid } => mc_group(created, prefix, mgid),
        AttributeChange::SystemImageGuid {
            node_guid,
            system_image_guid,
        } => system_image_guid_changed(
            prefix,
            producer_of(next, node_guid),
            node_guid,
            system_image_guid,
        ),
        AttributeChange::CapabilityMask {
            node_guid,
            port,
            mask,
        } => capability_mask_changed(
            prefix,
            producer_of(next, node_guid),
            node_guid,
            port.0,
            mask,
        ),
        AttributeChange::KeyViolation {
            node_guid,
            port,
            key,
        } => key_violation(next, node_guid, port.0, key),
        AttributeChange::ErrorIncrease {
            node_guid,
            port,
            counter,
            increase,
        } => {
            let (threshold, trap): (u64, PortTrap) = match counter {
                ErrorCounter::LocalLinkIntegrity => (th.link_integrity, link_integrity),
                ErrorCounter::ExcessiveBufferOverrun => (th.buffer_overrun, buffer_overrun),
            };
            if threshold == 0 || increase < threshold {
                return None;
            }
            trap(prefix, producer_of(next, node_guid), node_guid, port.0)
        }
    })
}

/// The notifications of a sweep's attribute changes ([`from_change`]).
pub fn from_changes(
    changes: &[AttributeChange],
    next: &Snapshot,
    th: &Thresholds,
) -> Vec<Notification> {
    changes
        .iter()
        .filter_map(|c| from_change(c, next, th))
        .collect()
}

fn key_violation(next: &Snapshot, g: Guid, num: u8, key: Key) -> Notification {
    let producer = producer_of(next, g);
    let k = KeyViolation::default();
    let prefix = next.subnet_prefix;
    match key {
        Key::M => bad_m_key(prefix, producer, g, num, &k),
        // P_Key enforcement on a switch's external ports is trap 259.
        Key::P if producer == ProducerType::Switch && num != 0 => {
            switch_external_ports_bad_p_key(prefix, g, num, Vec::new(), &k)
        }
        Key::P => bad_p_key(prefix, producer, g, num, &k),
        Key::Q => bad_q_key(prefix, producer, g, num, &k),
    }
}

#[cfg(test)]
mod tests;
