//! Performance Management (PerfMgt, class 0x04) attributes, IBA volume 1 section 16.1.
//! Every layout starts at the GS data area (MAD octet 64).

use super::{attribute, attribute_id, header::class};
use crate::types::{Gid, Lid, PKey};

/// PerfMgt AttributeIDs (IBA table 227 and Mellanox/IBA 1.2.1 additions).
pub mod attr {
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    pub const PORT_SAMPLES_CONTROL: u16 = 0x0010;
    pub const PORT_SAMPLES_RESULT: u16 = 0x0011;
    pub const PORT_COUNTERS: u16 = 0x0012;
    pub const PORT_RCV_ERROR_DETAILS: u16 = 0x0015;
    pub const PORT_XMIT_DISCARD_DETAILS: u16 = 0x0016;
    pub const PORT_OP_RCV_COUNTERS: u16 = 0x0017;
    pub const PORT_FLOW_CTL_COUNTERS: u16 = 0x0018;
    pub const PORT_VL_OP_PACKETS: u16 = 0x0019;
    pub const PORT_VL_OP_DATA: u16 = 0x001A;
    pub const PORT_VL_XMIT_FLOW_CTL_UPDATE_ERRORS: u16 = 0x001B;
    pub const PORT_VL_XMIT_WAIT_COUNTERS: u16 = 0x001C;
    pub const PORT_COUNTERS_EXTENDED: u16 = 0x001D;
    pub const PORT_SAMPLES_RESULT_EXTENDED: u16 = 0x001E;
    pub const PORT_EXTENDED_SPEEDS_COUNTERS: u16 = 0x001F;
}

/// PerfMgt ClassPortInfo:CapabilityMask bits (IBA 16.1.2).
pub mod cap {
    pub const ALL_PORT_SELECT: u16 = 0x0100;
    pub const IS_EXTENDED_WIDTH_SUPPORTED: u16 = 0x0200;
    pub const IS_EXTENDED_WIDTH_SUPPORTED_NO_IETF: u16 = 0x0400;
    pub const IS_SAMPLES_ONLY_SUPPORTED: u16 = 0x0800;
    pub const IS_PORT_COUNTERS_XMIT_WAIT_SUPPORTED: u16 = 0x1000;
    pub const IS_INHIBIT_LIMITED_P_KEY_MULTICAST_SUPPORTED: u16 = 0x2000;
    pub const IS_RSFEC_COUNTERS_SUPPORTED: u16 = 0x4000;
    pub const IS_QP1_DROPPED_SUPPORTED: u16 = 0x8000;
}

/// PortCounters:CounterSelect bits (which counters a Set clears).
pub mod counter_select {
    pub const SYMBOL_ERROR_COUNTER: u16 = 1 << 0;
    pub const LINK_ERROR_RECOVERY_COUNTER: u16 = 1 << 1;
    pub const LINK_DOWNED_COUNTER: u16 = 1 << 2;
    pub const PORT_RCV_ERRORS: u16 = 1 << 3;
    pub const PORT_RCV_REMOTE_PHYSICAL_ERRORS: u16 = 1 << 4;
    pub const PORT_RCV_SWITCH_RELAY_ERRORS: u16 = 1 << 5;
    pub const PORT_XMIT_DISCARDS: u16 = 1 << 6;
    pub const PORT_XMIT_CONSTRAINT_ERRORS: u16 = 1 << 7;
    pub const PORT_RCV_CONSTRAINT_ERRORS: u16 = 1 << 8;
    pub const LOCAL_LINK_INTEGRITY_ERRORS: u16 = 1 << 9;
    pub const EXCESSIVE_BUFFER_OVERRUN_ERRORS: u16 = 1 << 10;
    pub const VL15_DROPPED: u16 = 1 << 11;
    pub const PORT_XMIT_DATA: u16 = 1 << 12;
    pub const PORT_RCV_DATA: u16 = 1 << 13;
    pub const PORT_XMIT_PKTS: u16 = 1 << 14;
    pub const PORT_RCV_PKTS: u16 = 1 << 15;
    pub const ALL: u16 = 0xFFFF;
    /// CounterSelect2 (octet 18) bit for PortXmitWait.
    pub const SELECT2_PORT_XMIT_WAIT: u8 = 1 << 0;
}

/// PortCountersExtended:CounterSelect bits.
pub mod counter_select_ext {
    pub const PORT_XMIT_DATA: u16 = 1 << 0;
    pub const PORT_RCV_DATA: u16 = 1 << 1;
    pub const PORT_XMIT_PKTS: u16 = 1 << 2;
    pub const PORT_RCV_PKTS: u16 = 1 << 3;
    pub const PORT_UNICAST_XMIT_PKTS: u16 = 1 << 4;
    pub const PORT_UNICAST_RCV_PKTS: u16 = 1 << 5;
    pub const PORT_MULTICAST_XMIT_PKTS: u16 = 1 << 6;
    pub const PORT_MULTICAST_RCV_PKTS: u16 = 1 << 7;
    pub const ALL: u16 = 0x00FF;
}

/// PortSamplesControl:CounterSelect values for the mandatory quantities.
pub mod sample_select {
    pub const PORT_XMIT_DATA: u16 = 0x0001;
    pub const PORT_RCV_DATA: u16 = 0x0002;
    pub const PORT_XMIT_PKTS: u16 = 0x0003;
    pub const PORT_RCV_PKTS: u16 = 0x0004;
    pub const PORT_XMIT_WAIT: u16 = 0x0005;
}

/// PortSamplesControl:SampleStatus values.
pub mod sample_status {
    /// Sampling complete (or never started).
    pub const DONE: u8 = 0;
    /// SampleStart timer running.
    pub const STARTED: u8 = 1;
    /// Sampling underway (SampleInterval timer running).
    pub const RUNNING: u8 = 2;
}

attribute! {
    /// ClassPortInfo (IBA 13.4.8.1), 72 octets; common to every GS class.
    pub struct ClassPortInfo [72] {
        base_version: u8 = (0, 8),
        class_version: u8 = (8, 8),
        capability_mask: u16 = (16, 16),
        capability_mask2: u32 = (32, 27),
        resp_time_value: u8 = (59, 5),
        redirect_gid: Gid = (64, 128),
        redirect_tc: u8 = (192, 8),
        redirect_sl: u8 = (200, 4),
        redirect_fl: u32 = (204, 20),
        redirect_lid: Lid = (224, 16),
        redirect_p_key: PKey = (240, 16),
        redirect_qp: u32 = (264, 24),
        redirect_q_key: u32 = (288, 32),
        trap_gid: Gid = (320, 128),
        trap_tc: u8 = (448, 8),
        trap_sl: u8 = (456, 4),
        trap_fl: u32 = (460, 20),
        trap_lid: Lid = (480, 16),
        trap_p_key: PKey = (496, 16),
        trap_hl: u8 = (512, 8),
        trap_qp: u32 = (520, 24),
        trap_q_key: u32 = (544, 32),
    }
}

impl ClassPortInfo {
    pub fn has(&self, bit: u16) -> bool {
        self.capability_mask & bit != 0
    }
    /// PortCountersExtended with all fields (IsExtendedWidthSupported or NoIETF).
    pub fn supports_extended_counters(&self) -> bool {
        self.has(cap::IS_EXTENDED_WIDTH_SUPPORTED | cap::IS_EXTENDED_WIDTH_SUPPORTED_NO_IETF)
    }
}

attribute! {
    /// PortCounters (IBA 16.1.3.5), 44 octets, with the spec's narrow, saturating widths.
    pub struct PortCounters [44] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        symbol_error_counter: u16 = (32, 16),
        link_error_recovery_counter: u8 = (48, 8),
        link_downed_counter: u8 = (56, 8),
        port_rcv_errors: u16 = (64, 16),
        port_rcv_remote_physical_errors: u16 = (80, 16),
        port_rcv_switch_relay_errors: u16 = (96, 16),
        port_xmit_discards: u16 = (112, 16),
        port_xmit_constraint_errors: u8 = (128, 8),
        port_rcv_constraint_errors: u8 = (136, 8),
        counter_select2: u8 = (144, 8),
        /// 4 bits.
        local_link_integrity_errors: u8 = (152, 4),
        /// 4 bits.
        excessive_buffer_overrun_errors: u8 = (156, 4),
        qp1_dropped: u16 = (160, 16),
        vl15_dropped: u16 = (176, 16),
        /// In units of 4 octets.
        port_xmit_data: u32 = (192, 32),
        /// In units of 4 octets.
        port_rcv_data: u32 = (224, 32),
        port_xmit_pkts: u32 = (256, 32),
        port_rcv_pkts: u32 = (288, 32),
        port_xmit_wait: u32 = (320, 32),
    }
}

attribute! {
    /// PortCountersExtended (IBA 16.1.4.11), 184 octets: 64-bit data/packet counters,
    /// and with IsExtendedWidthSupported also 64-bit copies of the error counters.
    pub struct PortCountersExtended [184] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        counter_select2: u32 = (32, 32),
        /// In units of 4 octets.
        port_xmit_data: u64 = (64, 64),
        /// In units of 4 octets.
        port_rcv_data: u64 = (128, 64),
        port_xmit_pkts: u64 = (192, 64),
        port_rcv_pkts: u64 = (256, 64),
        port_unicast_xmit_pkts: u64 = (320, 64),
        port_unicast_rcv_pkts: u64 = (384, 64),
        port_multicast_xmit_pkts: u64 = (448, 64),
        port_multicast_rcv_pkts: u64 = (512, 64),
        symbol_error_counter: u64 = (576, 64),
        link_error_recovery_counter: u64 = (640, 64),
        link_downed_counter: u64 = (704, 64),
        port_rcv_errors: u64 = (768, 64),
        port_rcv_remote_physical_errors: u64 = (832, 64),
        port_rcv_switch_relay_errors: u64 = (896, 64),
        port_xmit_discards: u64 = (960, 64),
        port_xmit_constraint_errors: u64 = (1024, 64),
        port_rcv_constraint_errors: u64 = (1088, 64),
        local_link_integrity_errors: u64 = (1152, 64),
        excessive_buffer_overrun_errors: u64 = (1216, 64),
        vl15_dropped: u64 = (1280, 64),
        port_xmit_wait: u64 = (1344, 64),
        qp1_dropped: u64 = (1408, 64),
    }
}

attribute! {
    /// PortRcvErrorDetails (IBA 16.1.4.1).
    pub struct PortRcvErrorDetails [16] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_local_physical_errors: u16 = (32, 16),
        port_malformed_packet_errors: u16 = (48, 16),
        port_buffer_overrun_errors: u16 = (64, 16),
        port_dlid_mapping_errors: u16 = (80, 16),
        port_vl_mapping_errors: u16 = (96, 16),
        port_looping_errors: u16 = (112, 16),
    }
}

attribute! {
    /// PortXmitDiscardDetails (IBA 16.1.4.2).
    pub struct PortXmitDiscardDetails [12] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_inactive_discards: u16 = (32, 16),
        port_neighbor_mtu_discards: u16 = (48, 16),
        port_sw_lifetime_limit_discards: u16 = (64, 16),
        port_sw_hoq_lifetime_limit_discards: u16 = (80, 16),
    }
}

attribute! {
    /// PortOpRcvCounters (IBA 16.1.4.3).
    pub struct PortOpRcvCounters [12] {
        op_code: u8 = (0, 8),
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_op_rcv_pkts: u32 = (32, 32),
        port_op_rcv_data: u32 = (64, 32),
    }
}

attribute! {
    /// PortFlowCtlCounters (IBA 16.1.4.4).
    pub struct PortFlowCtlCounters [12] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_xmit_flow_pkts: u32 = (32, 32),
        port_rcv_flow_pkts: u32 = (64, 32),
    }
}

attribute! {
    /// PortVLOpPackets (IBA 16.1.4.5): 16-bit packet counts per VL 0..15.
    pub struct PortVlOpPackets [36] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_vl_op_packets: [u16; 16] = (32, 256),
    }
}

attribute! {
    /// PortVLOpData (IBA 16.1.4.6): 32-bit data counts (4-octet units) per VL 0..15.
    pub struct PortVlOpData [68] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_vl_op_data: [u32; 16] = (32, 512),
    }
}

attribute! {
    /// PortVLXmitFlowCtlUpdateErrors (IBA 16.1.4.7): 2-bit counters per VL 0..15.
    pub struct PortVlXmitFlowCtlUpdateErrors [8] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_vl_xmit_flow_ctl_update_errors: [u8; 16] = (32, 32),
    }
}

attribute! {
    /// PortVLXmitWaitCounters (IBA 16.1.4.8): 16-bit counters per VL 0..15.
    pub struct PortVlXmitWaitCounters [36] {
        port_select: u8 = (8, 8),
        counter_select: u16 = (16, 16),
        port_vl_xmit_wait: [u16; 16] = (32, 256),
    }
}

attribute! {
    /// PortSamplesControl (IBA 16.1.3.2), 80 octets. CounterMask0..14 are 3-bit fields
    /// packed as CounterMask0, CounterMasks1to9, CounterMasks10to14 on the wire; use
    /// [`PortSamplesControl::counter_mask`] for one of them.
    pub struct PortSamplesControl [80] {
        op_code: u8 = (0, 8),
        port_select: u8 = (8, 8),
        tick: u8 = (16, 8),
        counter_width: u8 = (29, 3),
        counter_mask0: u8 = (34, 3),
        counter_masks1to9: u32 = (37, 27),
        counter_masks10to14: u16 = (65, 15),
        sample_mechanisms: u8 = (80, 8),
        sample_status: u8 = (94, 2),
        option_mask: u64 = (96, 64),
        vendor_mask: u64 = (160, 64),
        sample_start: u32 = (224, 32),
        sample_interval: u32 = (256, 32),
        tag: u16 = (288, 16),
        /// CounterSelect0..14.
        counter_select: [u16; 15] = (304, 240),
        samples_only_option_mask: u64 = (576, 64),
    }
}

impl PortSamplesControl {
    /// CounterMask`i` (0..=14), 3 bits; 0 for an out-of-range index.
    pub fn counter_mask(&self, i: usize) -> u8 {
        match i {
            0 => self.counter_mask0 & 7,
            1..=9 => ((self.counter_masks1to9 >> (3 * (9 - i))) & 7) as u8,
            10..=14 => ((self.counter_masks10to14 >> (3 * (14 - i))) & 7) as u8,
            _ => 0,
        }
    }
    /// Sets CounterMask`i` (0..=14); ignores an out-of-range index.
    pub fn set_counter_mask(&mut self, i: usize, v: u8) {
        let v = v & 7;
        match i {
            0 => self.counter_mask0 = v,
            1..=9 => {
                let s = 3 * (9 - i);
                self.counter_masks1to9 = (self.counter_masks1to9 & !(7 << s)) | (u32::from(v) << s);
            }
            10..=14 => {
                let s = 3 * (14 - i);
                self.counter_masks10to14 =
                    (self.counter_masks10to14 & !(7 << s)) | (u16::from(v) << s);
            }
            _ => {}
        }
    }

    /// The Set collision rule (IBA 16.1.3.2): a Set is ignored while a run
    /// is in progress (`status` not DONE) under another Tag, so the requester
    /// sees the other Tag in the reply.
    pub fn accepts_set(&self, req: &PortSamplesControl, status: u8) -> bool {
        status == sample_status::DONE || req.tag == self.tag
    }

    /// Copies the writable components of a Set (IBA table 246: OpCode,
    /// PortSelect, SampleStart, SampleInterval, Tag, CounterSelect0..14).
    pub fn apply_writable(&mut self, req: &PortSamplesControl) {
        self.op_code = req.op_code;
        self.port_select = req.port_select;
        self.sample_start = req.sample_start;
        self.sample_interval = req.sample_interval;
        self.tag = req.tag;
        self.counter_select = req.counter_select;
    }
}

attribute! {
    /// PortSamplesResult (IBA 16.1.3.4): Counter0..14, 32 bits each.
    pub struct PortSamplesResult [64] {
        tag: u16 = (0, 16),
        sample_status: u8 = (30, 2),
        counter: [u32; 15] = (32, 480),
    }
}

attribute_id! {
    ClassPortInfo => (class::PERF_MGT, attr::CLASS_PORT_INFO),
    PortCounters => (class::PERF_MGT, attr::PORT_COUNTERS),
    PortCountersExtended => (class::PERF_MGT, attr::PORT_COUNTERS_EXTENDED),
    PortRcvErrorDetails => (class::PERF_MGT, attr::PORT_RCV_ERROR_DETAILS),
    PortXmitDiscardDetails => (class::PERF_MGT, attr::PORT_XMIT_DISCARD_DETAILS),
    PortOpRcvCounters => (class::PERF_MGT, attr::PORT_OP_RCV_COUNTERS),
    PortFlowCtlCounters => (class::PERF_MGT, attr::PORT_FLOW_CTL_COUNTERS),
    PortVlOpPackets => (class::PERF_MGT, attr::PORT_VL_OP_PACKETS),
    PortVlOpData => (class::PERF_MGT, attr::PORT_VL_OP_DATA),
    PortVlXmitFlowCtlUpdateErrors => (class::PERF_MGT, attr::PORT_VL_XMIT_FLOW_CTL_UPDATE_ERRORS),
    PortVlXmitWaitCounters => (class::PERF_MGT, attr::PORT_VL_XMIT_WAIT_COUNTERS),
    PortSamplesControl => (class::PERF_MGT, attr::PORT_SAMPLES_CONTROL),
    PortSamplesResult => (class::PERF_MGT, attr::PORT_SAMPLES_RESULT),
}
