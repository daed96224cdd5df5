//! Subnet Administration (SubnAdm, class 0x03) records, IBA volume 1 section 15.2.5.
//! A record starts at the SA data area (MAD octet 56); GetTable answers repeat records
//! every AttributeOffset * 8 octets (see [`records`]).

use super::{attribute, attribute_id, header::class, MadError};
use crate::mad::smp::{GuidInfo, LinearForwardingTable, NodeDescription, NodeInfo, PKeyTable};
use crate::mad::smp::{PortInfo, SmInfo, SwitchInfo};
use crate::types::{Gid, Lid, PKey};

pub use crate::mad::pma::ClassPortInfo;

/// SA AttributeIDs (IBA table 195).
pub mod attr {
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    pub const NOTICE: u16 = 0x0002;
    pub const INFORM_INFO: u16 = 0x0003;
    pub const NODE_RECORD: u16 = 0x0011;
    pub const PORT_INFO_RECORD: u16 = 0x0012;
    pub const SL_TO_VL_MAPPING_TABLE_RECORD: u16 = 0x0013;
    pub const SWITCH_INFO_RECORD: u16 = 0x0014;
    pub const LINEAR_FORWARDING_TABLE_RECORD: u16 = 0x0015;
    pub const RANDOM_FORWARDING_TABLE_RECORD: u16 = 0x0016;
    pub const MULTICAST_FORWARDING_TABLE_RECORD: u16 = 0x0017;
    pub const SM_INFO_RECORD: u16 = 0x0018;
    pub const LINK_SPEED_WIDTH_PAIRS_TABLE_RECORD: u16 = 0x0019;
    pub const INFORM_INFO_RECORD: u16 = 0x00F3;
    pub const LINK_RECORD: u16 = 0x0020;
    pub const GUID_INFO_RECORD: u16 = 0x0030;
    pub const SERVICE_RECORD: u16 = 0x0031;
    pub const P_KEY_TABLE_RECORD: u16 = 0x0033;
    pub const PATH_RECORD: u16 = 0x0035;
    pub const VL_ARBITRATION_TABLE_RECORD: u16 = 0x0036;
    pub const MC_MEMBER_RECORD: u16 = 0x0038;
    pub const TRACE_RECORD: u16 = 0x0039;
    pub const MULTI_PATH_RECORD: u16 = 0x003A;
    pub const SERVICE_ASSOCIATION_RECORD: u16 = 0x003B;
}

/// ComponentMask bits: bit n selects the n-th field of the record's table
/// (reserved fields count), IBA 15.2.5.
pub mod comp {
    pub mod node_record {
        pub const LID: u64 = 1 << 0;
        pub const BASE_VERSION: u64 = 1 << 2;
        pub const CLASS_VERSION: u64 = 1 << 3;
        pub const NODE_TYPE: u64 = 1 << 4;
        pub const NUM_PORTS: u64 = 1 << 5;
        pub const SYSTEM_IMAGE_GUID: u64 = 1 << 6;
        pub const NODE_GUID: u64 = 1 << 7;
        pub const PORT_GUID: u64 = 1 << 8;
        pub const PARTITION_CAP: u64 = 1 << 9;
        pub const DEVICE_ID: u64 = 1 << 10;
        pub const REVISION: u64 = 1 << 11;
        pub const LOCAL_PORT_NUM: u64 = 1 << 12;
        pub const VENDOR_ID: u64 = 1 << 13;
        pub const NODE_DESCRIPTION: u64 = 1 << 14;
    }
    pub mod port_info_record {
        pub const ENDPORT_LID: u64 = 1 << 0;
        pub const PORT_NUM: u64 = 1 << 1;
        pub const OPTIONS: u64 = 1 << 2;
    }
    pub mod link_record {
        pub const FROM_LID: u64 = 1 << 0;
        pub const FROM_PORT: u64 = 1 << 1;
        pub const TO_PORT: u64 = 1 << 2;
        pub const TO_LID: u64 = 1 << 3;
    }
    pub mod path_record {
        pub const SERVICE_ID_MSB: u64 = 1 << 0;
        pub const SERVICE_ID_LSB: u64 = 1 << 1;
        pub const DGID: u64 = 1 << 2;
        pub const SGID: u64 = 1 << 3;
        pub const DLID: u64 = 1 << 4;
        pub const SLID: u64 = 1 << 5;
        pub const RAW_TRAFFIC: u64 = 1 << 6;
        pub const FLOW_LABEL: u64 = 1 << 8;
        pub const HOP_LIMIT: u64 = 1 << 9;
        pub const T_CLASS: u64 = 1 << 10;
        pub const REVERSIBLE: u64 = 1 << 11;
        pub const NUMB_PATH: u64 = 1 << 12;
        pub const P_KEY: u64 = 1 << 13;
        pub const QOS_CLASS: u64 = 1 << 14;
        pub const SL: u64 = 1 << 15;
        pub const MTU_SELECTOR: u64 = 1 << 16;
        pub const MTU: u64 = 1 << 17;
        pub const RATE_SELECTOR: u64 = 1 << 18;
        pub const RATE: u64 = 1 << 19;
        pub const PACKET_LIFE_TIME_SELECTOR: u64 = 1 << 20;
        pub const PACKET_LIFE_TIME: u64 = 1 << 21;
        pub const PREFERENCE: u64 = 1 << 22;
    }
    pub mod multi_path_record {
        pub const RAW_TRAFFIC: u64 = 1 << 0;
        pub const FLOW_LABEL: u64 = 1 << 2;
        pub const HOP_LIMIT: u64 = 1 << 3;
        pub const T_CLASS: u64 = 1 << 4;
        pub const REVERSIBLE: u64 = 1 << 5;
        pub const NUMB_PATH: u64 = 1 << 6;
        pub const P_KEY: u64 = 1 << 7;
        pub const QOS_CLASS: u64 = 1 << 8;
        pub const SL: u64 = 1 << 9;
        pub const MTU_SELECTOR: u64 = 1 << 10;
        pub const MTU: u64 = 1 << 11;
        pub const RATE_SELECTOR: u64 = 1 << 12;
        pub const RATE: u64 = 1 << 13;
        pub const PACKET_LIFE_TIME_SELECTOR: u64 = 1 << 14;
        pub const PACKET_LIFE_TIME: u64 = 1 << 15;
        pub const SERVICE_ID_MSB: u64 = 1 << 16;
        pub const INDEPENDENCE_SELECTOR: u64 = 1 << 17;
        pub const SGID_COUNT: u64 = 1 << 19;
        pub const DGID_COUNT: u64 = 1 << 20;
        pub const SERVICE_ID_LSB: u64 = 1 << 21;
    }
    pub mod mc_member_record {
        pub const MGID: u64 = 1 << 0;
        pub const PORT_GID: u64 = 1 << 1;
        pub const Q_KEY: u64 = 1 << 2;
        pub const MLID: u64 = 1 << 3;
        pub const MTU_SELECTOR: u64 = 1 << 4;
        pub const MTU: u64 = 1 << 5;
        pub const T_CLASS: u64 = 1 << 6;
        pub const P_KEY: u64 = 1 << 7;
        pub const RATE_SELECTOR: u64 = 1 << 8;
        pub const RATE: u64 = 1 << 9;
        pub const PACKET_LIFE_TIME_SELECTOR: u64 = 1 << 10;
        pub const PACKET_LIFE_TIME: u64 = 1 << 11;
        pub const SL: u64 = 1 << 12;
        pub const FLOW_LABEL: u64 = 1 << 13;
        pub const HOP_LIMIT: u64 = 1 << 14;
        pub const SCOPE: u64 = 1 << 15;
        pub const JOIN_STATE: u64 = 1 << 16;
        pub const PROXY_JOIN: u64 = 1 << 17;
    }
    pub mod service_record {
        pub const SERVICE_ID: u64 = 1 << 0;
        pub const SERVICE_GID: u64 = 1 << 1;
        pub const SERVICE_P_KEY: u64 = 1 << 2;
        pub const SERVICE_LEASE: u64 = 1 << 4;
        pub const SERVICE_KEY: u64 = 1 << 5;
        pub const SERVICE_NAME: u64 = 1 << 6;
    }
    pub mod guid_info_record {
        pub const LID: u64 = 1 << 0;
        pub const BLOCK_NUM: u64 = 1 << 1;
    }
    pub mod p_key_table_record {
        pub const LID: u64 = 1 << 0;
        pub const BLOCK_NUM: u64 = 1 << 1;
        pub const PORT_NUM: u64 = 1 << 2;
    }
    pub mod sm_info_record {
        pub const LID: u64 = 1 << 0;
    }
    pub mod switch_info_record {
        pub const LID: u64 = 1 << 0;
    }
    pub mod linear_forwarding_table_record {
        pub const LID: u64 = 1 << 0;
        pub const BLOCK_NUM: u64 = 1 << 1;
    }
}

attribute! {
    /// NodeRecord (IBA 15.2.5.2), 108 octets.
    pub struct NodeRecord [108] {
        lid: Lid = (0, 16),
        node_info: NodeInfo = (32, 320),
        node_description: NodeDescription = (352, 512),
    }
}

attribute! {
    /// PortInfoRecord (IBA 15.2.5.3), 68 octets.
    pub struct PortInfoRecord [68] {
        endport_lid: Lid = (0, 16),
        port_num: u8 = (16, 8),
        options: u8 = (24, 8),
        port_info: PortInfo = (32, 512),
    }
}

attribute! {
    /// LinkRecord (IBA 15.2.5.13), 8 octets.
    pub struct LinkRecord [8] {
        from_lid: Lid = (0, 16),
        from_port: u8 = (16, 8),
        to_port: u8 = (24, 8),
        to_lid: Lid = (32, 16),
    }
}

attribute! {
    /// PathRecord (IBA 15.2.5.16), 64 octets.
    pub struct PathRecord [64] {
        service_id: u64 = (0, 64),
        dgid: Gid = (64, 128),
        sgid: Gid = (192, 128),
        dlid: Lid = (320, 16),
        slid: Lid = (336, 16),
        raw_traffic: bool = (352, 1),
        flow_label: u32 = (356, 20),
        hop_limit: u8 = (376, 8),
        t_class: u8 = (384, 8),
        reversible: bool = (392, 1),
        numb_path: u8 = (393, 7),
        p_key: PKey = (400, 16),
        qos_class: u16 = (416, 12),
        sl: u8 = (428, 4),
        mtu_selector: u8 = (432, 2),
        mtu: u8 = (434, 6),
        rate_selector: u8 = (440, 2),
        rate: u8 = (442, 6),
        packet_life_time_selector: u8 = (448, 2),
        packet_life_time: u8 = (450, 6),
        preference: u8 = (456, 8),
    }
}

attribute! {
    /// The fixed 24 octets of a MultiPathRecord (IBA 15.2.5.20); the GIDs follow.
    pub struct MultiPathRecordHead [24] {
        raw_traffic: bool = (0, 1),
        flow_label: u32 = (4, 20),
        hop_limit: u8 = (24, 8),
        t_class: u8 = (32, 8),
        reversible: bool = (40, 1),
        numb_path: u8 = (41, 7),
        p_key: PKey = (48, 16),
        qos_class: u16 = (64, 12),
        sl: u8 = (76, 4),
        mtu_selector: u8 = (80, 2),
        mtu: u8 = (82, 6),
        rate_selector: u8 = (88, 2),
        rate: u8 = (90, 6),
        packet_life_time_selector: u8 = (96, 2),
        packet_life_time: u8 = (98, 6),
        service_id8msb: u8 = (104, 8),
        independence_selector: u8 = (112, 2),
        sgid_count: u8 = (120, 8),
        dgid_count: u8 = (128, 8),
        service_id56lsb: u64 = (136, 56),
    }
}

/// MultiPathRecord: the fixed part and SGIDCount source GIDs then DGIDCount
/// destination GIDs (SDGID).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MultiPathRecord {
    pub head: MultiPathRecordHead,
    pub sdgid: Vec<Gid>,
}

impl MultiPathRecord {
    /// Most GIDs that fit in one SA data area (200 octets).
    pub const MAX_GIDS: usize = (200 - MultiPathRecordHead::LEN) / 16;

    pub fn len(&self) -> usize {
        MultiPathRecordHead::LEN + 16 * self.sdgid.len()
    }
    pub fn is_empty(&self) -> bool {
        self.sdgid.is_empty()
    }

    pub fn decode(buf: &[u8]) -> Result<Self, MadError> {
        let head = MultiPathRecordHead::decode(buf)?;
        let n = usize::from(head.sgid_count) + usize::from(head.dgid_count);
        let need = MultiPathRecordHead::LEN + 16 * n;
        let Some(g) = buf.get(MultiPathRecordHead::LEN..need) else {
            return Err(MadError::TooShort {
                what: "MultiPathRecord",
                need,
                got: buf.len(),
            });
        };
        let sdgid = g
            .chunks_exact(16)
            .map(|c| Gid(super::bits::get_bytes::<16>(c, 0)))
            .collect();
        Ok(Self { head, sdgid })
    }

    /// Encodes; SGIDCount + DGIDCount must equal the number of GIDs given.
    pub fn encode(&self, buf: &mut [u8]) -> Result<(), MadError> {
        let n = usize::from(self.head.sgid_count) + usize::from(self.head.dgid_count);
        if n != self.sdgid.len() {
            return Err(MadError::Unexpected(
                "MultiPathRecord SGIDCount + DGIDCount differs from the GIDs given",
            ));
        }
        let need = self.len();
        let Some(dst) = buf.get_mut(..need) else {
            return Err(MadError::TooShort {
                what: "MultiPathRecord",
                need,
                got: buf.len(),
            });
        };
        self.head.encode(dst)?;
        for (i, g) in self.sdgid.iter().enumerate() {
            super::bits::set_bytes(dst, (MultiPathRecordHead::LEN + 16 * i) * 8, &g.0);
        }
        Ok(())
    }
}

attribute! {
    /// MCMemberRecord (IBA 15.2.5.17), 52 octets.
    pub struct McMemberRecord [52] {
        mgid: Gid = (0, 128),
        port_gid: Gid = (128, 128),
        q_key: u32 = (256, 32),
        mlid: Lid = (288, 16),
        mtu_selector: u8 = (304, 2),
        mtu: u8 = (306, 6),
        t_class: u8 = (312, 8),
        p_key: PKey = (320, 16),
        rate_selector: u8 = (336, 2),
        rate: u8 = (338, 6),
        packet_life_time_selector: u8 = (344, 2),
        packet_life_time: u8 = (346, 6),
        sl: u8 = (352, 4),
        flow_label: u32 = (356, 20),
        hop_limit: u8 = (376, 8),
        scope: u8 = (384, 4),
        /// Bit 0 FullMember, 1 NonMember, 2 SendOnlyNonMember, 3 SendOnlyFullMember.
        join_state: u8 = (388, 4),
        proxy_join: bool = (392, 1),
    }
}

attribute! {
    /// ServiceRecord (IBA 15.2.5.14), 176 octets.
    pub struct ServiceRecord [176] {
        service_id: u64 = (0, 64),
        service_gid: Gid = (64, 128),
        service_p_key: PKey = (192, 16),
        service_lease: u32 = (224, 32),
        service_key: [u8; 16] = (256, 128),
        service_name: String = (384, 512),
        service_data8: [u8; 16] = (896, 128),
        service_data16: [u16; 8] = (1024, 128),
        service_data32: [u32; 4] = (1152, 128),
        service_data64: [u64; 2] = (1280, 128),
    }
}

attribute! {
    /// GUIDInfoRecord (IBA 15.2.5.18), 72 octets.
    pub struct GuidInfoRecord [72] {
        lid: Lid = (0, 16),
        block_num: u8 = (16, 8),
        guid_info: GuidInfo = (64, 512),
    }
}

attribute! {
    /// P_KeyTableRecord (IBA 15.2.5.11), 72 octets.
    pub struct PKeyTableRecord [72] {
        lid: Lid = (0, 16),
        block_num: u16 = (16, 16),
        port_num: u8 = (32, 8),
        p_key_table: PKeyTable = (64, 512),
    }
}

attribute! {
    /// SMInfoRecord (IBA 15.2.5.9).
    pub struct SmInfoRecord [25] {
        lid: Lid = (0, 16),
        sm_info: SmInfo = (32, 168),
    }
}

attribute! {
    /// SwitchInfoRecord (IBA 15.2.5.5).
    pub struct SwitchInfoRecord [24] {
        lid: Lid = (0, 16),
        switch_info: SwitchInfo = (32, 160),
    }
}

attribute! {
    /// LinearForwardingTableRecord (IBA 15.2.5.6), 72 octets.
    pub struct LinearFdbRecord [72] {
        lid: Lid = (0, 16),
        block_num: u16 = (16, 16),
        linear_forwarding_table: LinearForwardingTable = (64, 512),
    }
}

attribute! {
    /// InformInfo (IBA 13.4.8.3), 36 octets: a subscription to traps/notices.
    pub struct InformInfo [36] {
        gid: Gid = (0, 128),
        lid_range_begin: Lid = (128, 16),
        lid_range_end: Lid = (144, 16),
        is_generic: u8 = (176, 8),
        subscribe: u8 = (184, 8),
        /// IBA "Type" (0 fatal, 1 urgent, 2 security, 3 SM, 4 info, 0xFFFF all).
        notice_type: u16 = (192, 16),
        /// TrapNumber when IsGeneric, DeviceID otherwise.
        trap_number_device_id: u16 = (208, 16),
        qpn: u32 = (224, 24),
        resp_time_value: u8 = (251, 5),
        /// ProducerType when IsGeneric, VendorID otherwise.
        producer_type_vendor_id: u32 = (264, 24),
    }
}

impl InformInfo {
    /// LIDRangeBegin value meaning "all LIDs".
    pub const ALL_LIDS: Lid = Lid(0xFFFF);
    pub const ALL_TYPES: u16 = 0xFFFF;
    pub const ALL_PRODUCERS: u32 = 0xFF_FFFF;
}

attribute_id! {
    NodeRecord => (class::SUBN_ADM, attr::NODE_RECORD),
    PortInfoRecord => (class::SUBN_ADM, attr::PORT_INFO_RECORD),
    LinkRecord => (class::SUBN_ADM, attr::LINK_RECORD),
    PathRecord => (class::SUBN_ADM, attr::PATH_RECORD),
    McMemberRecord => (class::SUBN_ADM, attr::MC_MEMBER_RECORD),
    ServiceRecord => (class::SUBN_ADM, attr::SERVICE_RECORD),
    GuidInfoRecord => (class::SUBN_ADM, attr::GUID_INFO_RECORD),
    PKeyTableRecord => (class::SUBN_ADM, attr::P_KEY_TABLE_RECORD),
    SmInfoRecord => (class::SUBN_ADM, attr::SM_INFO_RECORD),
    SwitchInfoRecord => (class::SUBN_ADM, attr::SWITCH_INFO_RECORD),
    LinearFdbRecord => (class::SUBN_ADM, attr::LINEAR_FORWARDING_TABLE_RECORD),
    InformInfo => (class::SUBN_ADM, attr::INFORM_INFO),
}

/// Iterates the records of a (reassembled) SA GetTable payload: one record every
/// `attribute_offset * 8` octets. A trailing partial record is not yielded.
pub fn records(payload: &[u8], attribute_offset: u16) -> Result<Records<'_>, MadError> {
    let stride = usize::from(attribute_offset) * 8;
    if stride == 0 && !payload.is_empty() {
        return Err(MadError::ZeroAttributeOffset);
    }
    Ok(Records { payload, stride })
}

/// Iterator returned by [`records`].
pub struct Records<'a> {
    payload: &'a [u8],
    stride: usize,
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.stride == 0 || self.payload.len() < self.stride {
            return None;
        }
        let (rec, rest) = self.payload.split_at(self.stride);
        self.payload = rest;
        Some(rec)
    }
}

/// Decodes every record of a GetTable payload as `T`.
pub fn decode_table<T: super::Codec>(
    payload: &[u8],
    attribute_offset: u16,
) -> Result<Vec<T>, MadError> {
    records(payload, attribute_offset)?.map(T::decode).collect()
}
