//! Subnet Management (SMP) attributes, IBA volume 1 section 14.2.5.
//!
//! Enumerated fields are kept as their raw wire values so that decode/encode is
//! lossless for reserved codes; typed accessors (`port_state()`, ...) interpret them.

use super::{attribute, attribute_id, header::class};
use crate::types::{
    Guid, Lid, LinkSpeed, LinkWidth, Mtu, NodeType, PKey, PhysPortState, PortState, SmState,
};

/// SMP AttributeIDs (IBA table 145).
pub mod attr {
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    pub const NOTICE: u16 = 0x0002;
    pub const INFORM_INFO: u16 = 0x0003;
    pub const NODE_DESCRIPTION: u16 = 0x0010;
    pub const NODE_INFO: u16 = 0x0011;
    pub const SWITCH_INFO: u16 = 0x0012;
    pub const GUID_INFO: u16 = 0x0014;
    pub const PORT_INFO: u16 = 0x0015;
    pub const P_KEY_TABLE: u16 = 0x0016;
    pub const SL_TO_VL_MAPPING_TABLE: u16 = 0x0017;
    pub const VL_ARBITRATION_TABLE: u16 = 0x0018;
    pub const LINEAR_FORWARDING_TABLE: u16 = 0x0019;
    pub const RANDOM_FORWARDING_TABLE: u16 = 0x001A;
    pub const MULTICAST_FORWARDING_TABLE: u16 = 0x001B;
    pub const SM_INFO: u16 = 0x0020;
    pub const VENDOR_DIAG: u16 = 0x0030;
    pub const LED_INFO: u16 = 0x0031;
    /// Mellanox vendor-specific ExtendedPortInfo (carries FDR10).
    pub const MLNX_EXTENDED_PORT_INFO: u16 = 0xFF90;
}

/// PortInfo:CapabilityMask bits (IBA 14.2.5.6).
pub mod port_cap {
    pub const IS_SM: u32 = 1 << 1;
    pub const IS_NOTICE_SUPPORTED: u32 = 1 << 2;
    pub const IS_TRAP_SUPPORTED: u32 = 1 << 3;
    pub const IS_OPTIONAL_IPD_SUPPORTED: u32 = 1 << 4;
    pub const IS_AUTOMATIC_MIGRATION_SUPPORTED: u32 = 1 << 5;
    pub const IS_SL_MAPPING_SUPPORTED: u32 = 1 << 6;
    pub const IS_M_KEY_NVRAM: u32 = 1 << 7;
    pub const IS_P_KEY_NVRAM: u32 = 1 << 8;
    pub const IS_LED_INFO_SUPPORTED: u32 = 1 << 9;
    pub const IS_SM_DISABLED: u32 = 1 << 10;
    pub const IS_SYSTEM_IMAGE_GUID_SUPPORTED: u32 = 1 << 11;
    pub const IS_P_KEY_SWITCH_EXTERNAL_PORT_TRAP_SUPPORTED: u32 = 1 << 12;
    pub const IS_EXTENDED_SPEEDS_SUPPORTED: u32 = 1 << 14;
    pub const IS_CAPABILITY_MASK2_SUPPORTED: u32 = 1 << 15;
    pub const IS_COMMUNICATION_MANAGEMENT_SUPPORTED: u32 = 1 << 16;
    pub const IS_SNMP_TUNNELING_SUPPORTED: u32 = 1 << 17;
    pub const IS_REINIT_SUPPORTED: u32 = 1 << 18;
    pub const IS_DEVICE_MANAGEMENT_SUPPORTED: u32 = 1 << 19;
    pub const IS_VENDOR_CLASS_SUPPORTED: u32 = 1 << 20;
    pub const IS_DR_NOTICE_SUPPORTED: u32 = 1 << 21;
    pub const IS_CAPABILITY_MASK_NOTICE_SUPPORTED: u32 = 1 << 22;
    pub const IS_BOOT_MANAGEMENT_SUPPORTED: u32 = 1 << 23;
    pub const IS_LINK_ROUND_TRIP_LATENCY_SUPPORTED: u32 = 1 << 24;
    pub const IS_CLIENT_REREGISTRATION_SUPPORTED: u32 = 1 << 25;
    pub const IS_OTHER_LOCAL_CHANGES_NOTICE_SUPPORTED: u32 = 1 << 26;
    pub const IS_LINK_SPEED_WIDTH_PAIRS_TABLE_SUPPORTED: u32 = 1 << 27;
}

attribute! {
    /// NodeInfo (IBA 14.2.5.3), 40 octets.
    pub struct NodeInfo [40] {
        base_version: u8 = (0, 8),
        class_version: u8 = (8, 8),
        /// Raw NodeType (1 CA, 2 Switch, 3 Router); see [`NodeInfo::node_type`].
        node_type: u8 = (16, 8),
        num_ports: u8 = (24, 8),
        system_image_guid: Guid = (32, 64),
        node_guid: Guid = (96, 64),
        port_guid: Guid = (160, 64),
        partition_cap: u16 = (224, 16),
        device_id: u16 = (240, 16),
        revision: u32 = (256, 32),
        local_port_num: u8 = (288, 8),
        vendor_id: u32 = (296, 24),
    }
}

impl NodeInfo {
    pub fn node_type(&self) -> Option<NodeType> {
        NodeType::from_raw(self.node_type)
    }
}

attribute! {
    /// NodeDescription (IBA 14.2.5.2): 64 octets of UTF-8 text, NUL padded.
    pub struct NodeDescription [64] {
        node_string: String = (0, 512),
    }
}

attribute! {
    /// PortInfo (IBA 14.2.5.6), 64 octets, every field incl. the extended
    /// (FDR..NDR) and XDR (LinkSpeedExt*2) speed fields.
    pub struct PortInfo [64] {
        m_key: u64 = (0, 64),
        gid_prefix: u64 = (64, 64),
        lid: Lid = (128, 16),
        master_sm_lid: Lid = (144, 16),
        capability_mask: u32 = (160, 32),
        diag_code: u16 = (192, 16),
        m_key_lease_period: u16 = (208, 16),
        local_port_num: u8 = (224, 8),
        link_width_enabled: u8 = (232, 8),
        link_width_supported: u8 = (240, 8),
        link_width_active: u8 = (248, 8),
        link_speed_supported: u8 = (256, 4),
        port_state: u8 = (260, 4),
        port_physical_state: u8 = (264, 4),
        link_down_default_state: u8 = (268, 4),
        m_key_protect_bits: u8 = (272, 2),
        lmc: u8 = (277, 3),
        link_speed_active: u8 = (280, 4),
        link_speed_enabled: u8 = (284, 4),
        neighbor_mtu: u8 = (288, 4),
        master_sm_sl: u8 = (292, 4),
        vl_cap: u8 = (296, 4),
        init_type: u8 = (300, 4),
        vl_high_limit: u8 = (304, 8),
        vl_arbitration_high_cap: u8 = (312, 8),
        vl_arbitration_low_cap: u8 = (320, 8),
        init_type_reply: u8 = (328, 4),
        mtu_cap: u8 = (332, 4),
        vl_stall_count: u8 = (336, 3),
        hoq_life: u8 = (339, 5),
        operational_vls: u8 = (344, 4),
        partition_enforcement_inbound: bool = (348, 1),
        partition_enforcement_outbound: bool = (349, 1),
        filter_raw_inbound: bool = (350, 1),
        filter_raw_outbound: bool = (351, 1),
        m_key_violations: u16 = (352, 16),
        p_key_violations: u16 = (368, 16),
        q_key_violations: u16 = (384, 16),
        guid_cap: u8 = (400, 8),
        client_reregister: bool = (408, 1),
        multicast_p_key_trap_suppression_enabled: u8 = (409, 2),
        subnet_timeout: u8 = (411, 5),
        resp_time_value: u8 = (419, 5),
        local_phy_errors: u8 = (424, 4),
        overrun_errors: u8 = (428, 4),
        max_credit_hint: u16 = (432, 16),
        link_speed_ext_active2: u8 = (449, 2),
        link_speed_ext_supported2: u8 = (451, 2),
        link_speed_ext_enabled2: u8 = (453, 3),
        link_round_trip_latency: u32 = (456, 24),
        capability_mask2: u16 = (480, 16),
        link_speed_ext_active: u8 = (496, 4),
        link_speed_ext_supported: u8 = (500, 4),
        link_speed_ext_enabled: u8 = (507, 5),
    }
}

impl PortInfo {
    pub fn port_state(&self) -> Option<PortState> {
        PortState::from_raw(self.port_state)
    }
    pub fn phys_state(&self) -> Option<PhysPortState> {
        PhysPortState::from_raw(self.port_physical_state)
    }
    /// Whether the port has a link: its logical state is past Down (Init,
    /// Armed, Active). A port without one keeps the width and speed fields
    /// of its last training (or what the SMA starts with), which are no
    /// link's.
    pub fn has_link(&self) -> bool {
        matches!(
            self.port_state(),
            Some(PortState::Init | PortState::Armed | PortState::Active)
        )
    }
    pub fn link_width(&self) -> Option<LinkWidth> {
        LinkWidth::from_raw(self.link_width_active)
    }
    pub fn neighbor_mtu(&self) -> Option<Mtu> {
        Mtu::from_raw(self.neighbor_mtu)
    }
    pub fn mtu_cap(&self) -> Option<Mtu> {
        Mtu::from_raw(self.mtu_cap)
    }
    /// LinkSpeedExtActive with LinkSpeedExtActive2 above it: 1 FDR, 2 EDR, 4 HDR,
    /// 8 NDR, 16 XDR (the encoding [`LinkSpeed::from_port_info`] takes).
    pub fn link_speed_ext_active_combined(&self) -> u8 {
        (self.link_speed_ext_active & 0x0F) | ((self.link_speed_ext_active2 & 0x03) << 4)
    }
    /// Same for the supported mask.
    pub fn link_speed_ext_supported_combined(&self) -> u8 {
        (self.link_speed_ext_supported & 0x0F) | ((self.link_speed_ext_supported2 & 0x03) << 4)
    }
    /// The active speed; `mlnx_fdr10` is MlnxExtPortInfo:LinkSpeedActive bit 0 when known.
    /// Extended speeds count only when the port advertises IsExtendedSpeedsSupported.
    pub fn link_speed(&self, mlnx_fdr10: bool) -> Option<LinkSpeed> {
        self.link_speed_with(self.capability_mask, mlnx_fdr10)
    }
    /// [`PortInfo::link_speed`] under another port's CapabilityMask: a
    /// switch's external ports carry none of their own (IBA 14.2.5.6), so
    /// whether their extended-speed fields are valid is said by the switch's
    /// port 0 (as ibnetdiscover reads it). See `Snapshot::port_speed`.
    pub fn link_speed_with(&self, capability_mask: u32, mlnx_fdr10: bool) -> Option<LinkSpeed> {
        let ext = if capability_mask & port_cap::IS_EXTENDED_SPEEDS_SUPPORTED != 0 {
            self.link_speed_ext_active_combined()
        } else {
            0
        };
        LinkSpeed::from_port_info(self.link_speed_active, ext, mlnx_fdr10)
    }
    /// Sets the three active-speed fields so that [`PortInfo::link_speed`] returns `s`
    /// (the simulator and tests use this). Returns whether FDR10 must be signalled
    /// through MlnxExtPortInfo.
    pub fn set_link_speed(&mut self, s: LinkSpeed) -> bool {
        use crate::types::SpeedEncoding as E;
        self.link_speed_ext_active = 0;
        self.link_speed_ext_active2 = 0;
        match s.encoding() {
            E::LinkSpeed(b) => {
                self.link_speed_active = b;
                false
            }
            E::LinkSpeedExt(b) => {
                // IBA: LinkSpeedActive reads as QDR when an extended speed is active.
                self.link_speed_active = 4;
                self.capability_mask |= port_cap::IS_EXTENDED_SPEEDS_SUPPORTED;
                self.link_speed_ext_active = b & 0x0F;
                self.link_speed_ext_active2 = (b >> 4) & 0x03;
                false
            }
            E::MlnxExtPortInfo(_) => {
                self.link_speed_active = 4;
                true
            }
        }
    }
    pub fn is_sm(&self) -> bool {
        self.capability_mask & port_cap::IS_SM != 0
    }
}

attribute! {
    /// SwitchInfo (IBA 14.2.5.4), 20 octets defined.
    pub struct SwitchInfo [20] {
        linear_fdb_cap: u16 = (0, 16),
        random_fdb_cap: u16 = (16, 16),
        multicast_fdb_cap: u16 = (32, 16),
        linear_fdb_top: u16 = (48, 16),
        default_port: u8 = (64, 8),
        default_multicast_primary_port: u8 = (72, 8),
        default_multicast_not_primary_port: u8 = (80, 8),
        life_time_value: u8 = (88, 5),
        port_state_change: bool = (93, 1),
        optimized_sl_to_vl_mapping_programming: u8 = (94, 2),
        lids_per_port: u16 = (96, 16),
        partition_enforcement_cap: u16 = (112, 16),
        inbound_enforcement_cap: bool = (128, 1),
        outbound_enforcement_cap: bool = (129, 1),
        filter_raw_inbound_cap: bool = (130, 1),
        filter_raw_outbound_cap: bool = (131, 1),
        enhanced_port0: bool = (132, 1),
        multicast_fdb_top: u16 = (144, 16),
    }
}

attribute! {
    /// LinearForwardingTable block (IBA 14.2.5.10): output ports of 64 consecutive
    /// LIDs starting at AttributeModifier * 64. Port 255 means "drop".
    pub struct LinearForwardingTable [64] {
        #[serde(with = "super::serde_array")]
        port: [u8; 64] = (0, 512),
    }
}

impl LinearForwardingTable {
    pub const ENTRIES: usize = 64;
    pub const INVALID_PORT: u8 = 0xFF;
}

attribute! {
    /// GUIDInfo block (IBA 14.2.5.5): 8 port GUIDs at index AttributeModifier * 8.
    pub struct GuidInfo [64] {
        guid: [Guid; 8] = (0, 512),
    }
}

attribute! {
    /// P_KeyTable block (IBA 14.2.5.7): 32 P_Keys at index AttributeModifier * 32.
    pub struct PKeyTable [64] {
        p_key: [PKey; 32] = (0, 512),
    }
}

impl PKeyTable {
    pub const ENTRIES: usize = 32;
}

attribute! {
    /// SMInfo (IBA 14.2.5.13), 21 octets.
    pub struct SmInfo [21] {
        guid: Guid = (0, 64),
        sm_key: u64 = (64, 64),
        act_count: u32 = (128, 32),
        priority: u8 = (160, 4),
        /// Raw SMState; see [`SmInfo::sm_state`].
        sm_state: u8 = (164, 4),
    }
}

impl SmInfo {
    pub fn sm_state(&self) -> Option<SmState> {
        SmState::from_raw(self.sm_state)
    }
}

attribute! {
    /// Mellanox ExtendedPortInfo (vendor attribute 0xFF90): FDR10 lives here
    /// (LinkSpeedActive bit 0 = FDR10).
    pub struct MlnxExtPortInfo [16] {
        state_change_enable: u8 = (24, 8),
        link_speed_supported: u8 = (56, 8),
        link_speed_enabled: u8 = (88, 8),
        link_speed_active: u8 = (120, 8),
    }
}

impl MlnxExtPortInfo {
    pub const FDR10: u8 = 0x01;
    pub fn fdr10_active(&self) -> bool {
        self.link_speed_active & Self::FDR10 != 0
    }
}

attribute! {
    /// Notice (IBA 14.2.5.1 / 13.4.8.2), 80 octets: the payload of Trap() and of the
    /// SA's Report() to InformInfo subscribers.
    pub struct Notice [80] {
        is_generic: bool = (0, 1),
        /// IBA "Type" (0 fatal, 1 urgent, 2 security, 3 SM, 4 info).
        notice_type: u8 = (1, 7),
        /// ProducerType (generic: 1 CA, 2 switch, 3 router, 4 class manager) or VendorID.
        producer_type_vendor_id: u32 = (8, 24),
        /// TrapNumber (generic) or DeviceID.
        trap_number_device_id: u16 = (32, 16),
        issuer_lid: Lid = (48, 16),
        notice_toggle: bool = (64, 1),
        notice_count: u16 = (65, 15),
        #[serde(with = "super::serde_array")]
        data_details: [u8; 54] = (80, 432),
        issuer_gid: crate::types::Gid = (512, 128),
    }
}

/// Generic trap numbers (IBA 14.2.5.1 / 13.4.8.2).
pub mod trap {
    pub const GID_IN_SERVICE: u16 = 64;
    pub const GID_OUT_OF_SERVICE: u16 = 65;
    pub const MCAST_GROUP_CREATED: u16 = 66;
    pub const MCAST_GROUP_DELETED: u16 = 67;
    pub const LINK_STATE_CHANGE: u16 = 128;
    pub const LOCAL_LINK_INTEGRITY_THRESHOLD: u16 = 129;
    pub const EXCESSIVE_BUFFER_OVERRUN_THRESHOLD: u16 = 130;
    pub const FLOW_CONTROL_UPDATE_WATCHDOG: u16 = 131;
    pub const CAPABILITY_MASK_CHANGED: u16 = 144;
    pub const SYSTEM_IMAGE_GUID_CHANGED: u16 = 145;
    pub const BAD_M_KEY: u16 = 256;
    pub const BAD_P_KEY: u16 = 257;
    pub const BAD_Q_KEY: u16 = 258;
    pub const BAD_P_KEY_SWITCH_EXTERNAL_PORT: u16 = 259;
}

impl Notice {
    /// The generic trap number, if this is a generic notice.
    pub fn trap_number(&self) -> Option<u16> {
        self.is_generic.then_some(self.trap_number_device_id)
    }
    /// GIDADDR of traps 64-67 (DataDetails octets 6..22).
    pub fn gid_addr(&self) -> Option<crate::types::Gid> {
        match self.trap_number()? {
            trap::GID_IN_SERVICE..=trap::MCAST_GROUP_DELETED => Some(crate::types::Gid(
                super::bits::get_bytes::<16>(&self.data_details, 48),
            )),
            _ => None,
        }
    }
    /// LIDADDR of traps 128-131 and 144-145 (DataDetails octets 0..2, or 2..4 for 144/145).
    pub fn lid_addr(&self) -> Option<Lid> {
        let off = match self.trap_number()? {
            trap::LINK_STATE_CHANGE..=trap::FLOW_CONTROL_UPDATE_WATCHDOG => 0,
            trap::CAPABILITY_MASK_CHANGED | trap::SYSTEM_IMAGE_GUID_CHANGED => 16,
            _ => return None,
        };
        Some(Lid(super::bits::get(&self.data_details, off, 16) as u16))
    }
}

attribute_id! {
    Notice => (class::SUBN_LID_ROUTED, attr::NOTICE),
    NodeInfo => (class::SUBN_LID_ROUTED, attr::NODE_INFO),
    NodeDescription => (class::SUBN_LID_ROUTED, attr::NODE_DESCRIPTION),
    PortInfo => (class::SUBN_LID_ROUTED, attr::PORT_INFO),
    SwitchInfo => (class::SUBN_LID_ROUTED, attr::SWITCH_INFO),
    LinearForwardingTable => (class::SUBN_LID_ROUTED, attr::LINEAR_FORWARDING_TABLE),
    GuidInfo => (class::SUBN_LID_ROUTED, attr::GUID_INFO),
    PKeyTable => (class::SUBN_LID_ROUTED, attr::P_KEY_TABLE),
    SmInfo => (class::SUBN_LID_ROUTED, attr::SM_INFO),
    MlnxExtPortInfo => (class::SUBN_LID_ROUTED, attr::MLNX_EXTENDED_PORT_INFO),
}
