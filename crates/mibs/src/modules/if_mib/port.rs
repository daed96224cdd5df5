//! How one InfiniBand port appears as an IF-MIB interface
//! (draft-ietf-ipoib-ibif-mib section 2.2): ifIndex, ifDescr, ifName, ifMtu,
//! ifSpeed/ifHighSpeed, ifPhysAddress and the status mapping.
//!
//! Pure functions over the snapshot's PortInfo/NodeInfo, so each rule is
//! tested on its own.

use ib::mad::smp::PortInfo;
use ib::model::{Node, NodeIdx, Port, Snapshot};
use ib::types::{data_rate_mbps, Lid, LinkSpeed, LinkWidth, NodeType, PhysPortState, PortState};

/// ifType infiniband(199) (IANAifType-MIB).
pub const IF_TYPE_INFINIBAND: i32 = 199;

/// The largest ifSpeed (bits/s): faster links report this and ifHighSpeed.
pub const IF_SPEED_MAX: u32 = u32::MAX;

/// ifAdminStatus (RFC 2863).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdminStatus {
    Up = 1,
    Down = 2,
}

/// ifOperStatus (RFC 2863).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperStatus {
    Up = 1,
    Down = 2,
    Testing = 3,
    Unknown = 4,
    Dormant = 5,
}

/// ifAdminStatus from PortPhysicalState: the only administrative state IBA
/// exposes is a port disabled by management (PhysPortState Disabled); every
/// other port is meant to be up.
pub fn admin_status(phys: Option<PhysPortState>) -> AdminStatus {
    match phys {
        Some(PhysPortState::Disabled) => AdminStatus::Down,
        _ => AdminStatus::Up,
    }
}

/// ifOperStatus from PortState and PortPhysicalState:
///
/// | PortState | PortPhysicalState | ifOperStatus |
/// |---|---|---|
/// | Active | any | up |
/// | Init, Armed | any | dormant (link trained, waiting for the SM to activate it) |
/// | Down | PhyTest | testing |
/// | Down | Sleep, Polling, Disabled, Training, LinkUp, LinkErrorRecovery | down |
/// | NoChange / invalid | - | unknown |
pub fn oper_status(state: Option<PortState>, phys: Option<PhysPortState>) -> OperStatus {
    match state {
        Some(PortState::Active) => OperStatus::Up,
        Some(PortState::Init | PortState::Armed) => OperStatus::Dormant,
        Some(PortState::Down) => match phys {
            Some(PhysPortState::PhyTest) => OperStatus::Testing,
            _ => OperStatus::Down,
        },
        Some(PortState::NoChange) | None => OperStatus::Unknown,
    }
}

/// Active width and speed of a port, when both are valid (the speed through
/// the snapshot: a switch port's extended speeds hang on port 0's
/// CapabilityMask).
pub fn active_link(s: &Snapshot, p: &Port) -> Option<(LinkWidth, LinkSpeed)> {
    Some((p.info.link_width()?, s.port_speed(p)?))
}

/// Effective data rate in Mb/s (line coding compensated: 4x SDR = 8,000,
/// 4x HDR = 200,000, 4x NDR = 400,000), 0 when width or speed is unknown.
pub fn speed_mbps(link: Option<(LinkWidth, LinkSpeed)>) -> u64 {
    link.map_or(0, |(w, s)| data_rate_mbps(w, s))
}

/// ifSpeed in bits/s, at its maximum when the rate does not fit.
pub fn if_speed(mbps: u64) -> u32 {
    u32::try_from(mbps.saturating_mul(1_000_000)).unwrap_or(IF_SPEED_MAX)
}

/// ifHighSpeed in Mb/s (Gauge32).
pub fn if_high_speed(mbps: u64) -> u32 {
    u32::try_from(mbps).unwrap_or(u32::MAX)
}

/// ifMtu: NeighborMTU (the MTU in use on the link), else MTUCap, else 0.
pub fn mtu(info: &PortInfo) -> i32 {
    info.neighbor_mtu()
        .or_else(|| info.mtu_cap())
        .map_or(0, |m| i32::try_from(m.bytes()).unwrap_or(0))
}

fn is_switch(node: &Node) -> bool {
    node.info.node_type == NodeType::Switch as u8
}

fn enhanced_port0(node: &Node) -> bool {
    node.switch.as_ref().is_some_and(|s| s.info.enhanced_port0)
}

/// ifIndex of port `num` of `node` (the IbPort convention): the port number,
/// plus one on a switch with enhanced port 0 so that port 0 is ifIndex 1.
/// `None` for base switch port 0, which is no interface.
pub fn if_index(node: &Node, num: u8) -> Option<u32> {
    if is_switch(node) && enhanced_port0(node) {
        Some(u32::from(num) + 1)
    } else if num == 0 {
        None
    } else {
        Some(u32::from(num))
    }
}

/// The LID ifPhysAddress shows for a port: its base LID, or on a switch the
/// LID of port 0 (the switch's management port).
pub fn base_lid(snapshot: &Snapshot, node_idx: NodeIdx, info: &PortInfo) -> Lid {
    match snapshot.node(node_idx) {
        Some(node) if is_switch(node) => snapshot
            .node_ports(node_idx)
            .first()
            .map_or(Lid(0), |p0| p0.info.lid),
        _ => info.lid,
    }
}

/// ifPhysAddress: the base LID as 2 octets in IBA bit order (big-endian),
/// empty when no LID is assigned.
pub fn phys_address(lid: Lid) -> Vec<u8> {
    if lid.0 == 0 {
        Vec::new()
    } else {
        lid.0.to_be_bytes().to_vec()
    }
}

/// The device name shown in ifDescr/ifName (docs/contexts.md "Names"):
/// for the local node, the CA's name when the source knows it
/// (`Snapshot::local_ca`: sysfs, umad); else a channel adapter's device word
/// where its description has rdma-ndd's "HOST DEVICE" form (`dgx01 mlx5_0`:
/// `mlx5_0`); else the node's name (a switch's, `MF0;leaf07:MQM8790/U1`:
/// `leaf07`); else the node GUID. Never a later word of the description
/// (a model, a comment).
pub fn device_name(snapshot: &Snapshot, node: &Node) -> String {
    let local = snapshot
        .local_node()
        .is_some_and(|l| l.info.node_guid == node.info.node_guid);
    if let Some(ca) = snapshot
        .local_ca
        .as_deref()
        .filter(|ca| local && !ca.is_empty())
    {
        return ca.to_string();
    }
    let d = crate::core::node::described(node);
    match d.device.or(d.name) {
        Some(word) => word.to_string(),
        None => node.info.node_guid.to_string(),
    }
}

/// ifDescr: device, port, and the active width and speed when known
/// (e.g. "mlx5_0 port 1 4x HDR").
pub fn descr(device: &str, num: u8, link: Option<(LinkWidth, LinkSpeed)>) -> String {
    match link {
        Some((w, s)) => format!("{device} port {num} {}x {}", w.lanes(), s.name()),
        None => format!("{device} port {num}"),
    }
}

/// ifName: short and stable (no link details): "mlx5_0/1".
pub fn name(device: &str, num: u8) -> String {
    format!("{device}/{num}")
}

#[cfg(test)]
#[allow(clippy::field_reassign_with_default)]
mod tests {
    use super::*;
    use ib::types::LinkSpeed::*;

    /// A lone port's active link (its own CapabilityMask applies).
    fn link_of(pi: &PortInfo) -> Option<(LinkWidth, LinkSpeed)> {
        Some((pi.link_width()?, pi.link_speed(false)?))
    }

    fn info(width: LinkWidth, speed: LinkSpeed) -> PortInfo {
        let mut pi = PortInfo::default();
        pi.link_width_active = width.raw();
        pi.set_link_speed(speed);
        pi
    }

    #[test]
    fn speeds_every_generation() {
        let cases = [
            (Sdr, 8_000),
            (Ddr, 16_000),
            (Qdr, 32_000),
            (Fdr, 54_545),
            (Edr, 100_000),
            (Hdr, 200_000),
            (Ndr, 400_000),
            (Xdr, 800_000),
        ];
        for (s, mbps) in cases {
            let pi = info(LinkWidth::X4, s);
            assert_eq!(speed_mbps(link_of(&pi)), mbps, "{s}");
            assert_eq!(if_high_speed(speed_mbps(link_of(&pi))), mbps as u32);
            assert_eq!(if_speed(speed_mbps(link_of(&pi))), IF_SPEED_MAX, "{s}");
        }
        assert_eq!(speed_mbps(link_of(&info(LinkWidth::X1, Sdr))), 2_000);
        assert_eq!(if_speed(2_000), 2_000_000_000);
        assert_eq!(if_speed(4_294), 4_294_000_000);
        assert_eq!(if_speed(4_295), IF_SPEED_MAX);
        assert_eq!(speed_mbps(link_of(&info(LinkWidth::X12, Sdr))), 24_000);
        assert_eq!(speed_mbps(link_of(&PortInfo::default())), 0);
        assert_eq!(if_speed(0), 0);
    }

    #[test]
    fn descr_and_name() {
        let pi = info(LinkWidth::X4, Hdr);
        assert_eq!(descr("mlx5_0", 1, link_of(&pi)), "mlx5_0 port 1 4x HDR");
        assert_eq!(
            descr("mlx5_0", 2, link_of(&PortInfo::default())),
            "mlx5_0 port 2"
        );
        assert_eq!(name("mlx5_0", 1), "mlx5_0/1");
    }

    #[test]
    fn status_mapping() {
        use PhysPortState as P;
        use PortState as S;
        for (state, phys, want) in [
            (Some(S::Active), Some(P::LinkUp), OperStatus::Up),
            (Some(S::Armed), Some(P::LinkUp), OperStatus::Dormant),
            (Some(S::Init), Some(P::LinkUp), OperStatus::Dormant),
            (Some(S::Down), Some(P::Polling), OperStatus::Down),
            (Some(S::Down), Some(P::Disabled), OperStatus::Down),
            (Some(S::Down), Some(P::PhyTest), OperStatus::Testing),
            (None, None, OperStatus::Unknown),
            (Some(S::NoChange), None, OperStatus::Unknown),
        ] {
            assert_eq!(oper_status(state, phys), want, "{state:?} {phys:?}");
        }
        assert_eq!(admin_status(Some(P::Disabled)), AdminStatus::Down);
        assert_eq!(admin_status(Some(P::Polling)), AdminStatus::Up);
        assert_eq!(admin_status(None), AdminStatus::Up);
    }

    #[test]
    fn phys_address_is_two_octets() {
        assert_eq!(phys_address(Lid(0)), Vec::<u8>::new());
        assert_eq!(phys_address(Lid(0x1234)), vec![0x12, 0x34]);
    }

    #[test]
    fn mtu_prefers_neighbor() {
        let mut pi = PortInfo::default();
        assert_eq!(mtu(&pi), 0);
        pi.mtu_cap = 5;
        assert_eq!(mtu(&pi), 4096);
        pi.neighbor_mtu = 4;
        assert_eq!(mtu(&pi), 2048);
    }
}
