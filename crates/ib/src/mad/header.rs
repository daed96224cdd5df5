//! MAD headers: the common MAD header (IBA 13.4.3), the directed-route SMP layout
//! (IBA 14.2.1.2), the RMPP header (IBA 13.6.2) and the SA header (IBA 15.2.1.1),
//! plus a zero-copy view of a received MAD.

use super::{attribute, MadError, MAD_SIZE};
use crate::types::Lid;

/// MAD BaseVersion for InfiniBand.
pub const BASE_VERSION: u8 = 1;

/// Management classes (IBA table 146).
pub mod class {
    pub const SUBN_LID_ROUTED: u8 = 0x01;
    pub const SUBN_DIRECTED_ROUTE: u8 = 0x81;
    pub const SUBN_ADM: u8 = 0x03;
    pub const PERF_MGT: u8 = 0x04;
    pub const BM: u8 = 0x05;
    pub const DEV_MGT: u8 = 0x06;
    pub const COM_MGT: u8 = 0x07;
    pub const SNMP: u8 = 0x08;
    pub const CONG_MGT: u8 = 0x21;
}

/// ClassVersion each class speaks.
pub mod class_version {
    pub const SUBN: u8 = 1;
    pub const SUBN_ADM: u8 = 2;
    pub const PERF_MGT: u8 = 1;
}

/// Methods (IBA table 147 and 187); the response bit R is 0x80.
pub mod method {
    pub const GET: u8 = 0x01;
    pub const SET: u8 = 0x02;
    pub const SEND: u8 = 0x03;
    pub const TRAP: u8 = 0x05;
    pub const REPORT: u8 = 0x06;
    pub const TRAP_REPRESS: u8 = 0x07;
    pub const GET_TABLE: u8 = 0x12;
    pub const GET_TRACE_TABLE: u8 = 0x13;
    pub const GET_MULTI: u8 = 0x14;
    pub const DELETE: u8 = 0x15;
    pub const RESPONSE: u8 = 0x80;
    pub const GET_RESP: u8 = 0x81;
    pub const REPORT_RESP: u8 = 0x86;
    pub const GET_TABLE_RESP: u8 = 0x92;
    pub const GET_MULTI_RESP: u8 = 0x94;
    pub const DELETE_RESP: u8 = 0x95;
}

/// MAD Status values (IBA table 148; SA class-specific codes table 197).
pub mod status {
    pub const BUSY: u16 = 0x0001;
    pub const REDIRECT_REQUIRED: u16 = 0x0002;
    /// Bits 2..4 hold the "invalid field" code.
    pub const INVALID_FIELD_MASK: u16 = 0x001C;
    pub const BAD_VERSION: u16 = 1 << 2;
    pub const METHOD_NOT_SUPPORTED: u16 = 2 << 2;
    pub const METHOD_ATTRIBUTE_NOT_SUPPORTED: u16 = 3 << 2;
    pub const INVALID_ATTRIBUTE_VALUE: u16 = 7 << 2;
    /// Bits 8..14 hold a class-specific code.
    pub const CLASS_SPECIFIC_MASK: u16 = 0x7F00;
    pub const SA_ERR_NO_RESOURCES: u16 = 1 << 8;
    pub const SA_ERR_REQ_INVALID: u16 = 2 << 8;
    pub const SA_ERR_NO_RECORDS: u16 = 3 << 8;
    pub const SA_ERR_TOO_MANY_RECORDS: u16 = 4 << 8;
    pub const SA_ERR_REQ_INVALID_GID: u16 = 5 << 8;
    pub const SA_ERR_REQ_INSUFFICIENT_COMPONENTS: u16 = 6 << 8;
    pub const SA_ERR_REQ_DENIED: u16 = 7 << 8;
    /// Directed-route SMPs carry the D (direction) bit in the top status bit.
    pub const DR_DIRECTION: u16 = 0x8000;
}

/// A short human description of a MAD status (for logs and errors).
pub fn status_text(s: u16) -> &'static str {
    let s = s & !status::DR_DIRECTION;
    if s == 0 {
        return "success";
    }
    match s & status::INVALID_FIELD_MASK {
        status::BAD_VERSION => return "bad version",
        status::METHOD_NOT_SUPPORTED => return "method not supported",
        status::METHOD_ATTRIBUTE_NOT_SUPPORTED => return "method/attribute not supported",
        status::INVALID_ATTRIBUTE_VALUE => return "invalid attribute or modifier",
        0 => {}
        _ => return "invalid field",
    }
    match s & status::CLASS_SPECIFIC_MASK {
        status::SA_ERR_NO_RESOURCES => return "SA: no resources",
        status::SA_ERR_REQ_INVALID => return "SA: request invalid",
        status::SA_ERR_NO_RECORDS => return "SA: no records",
        status::SA_ERR_TOO_MANY_RECORDS => return "SA: too many records",
        status::SA_ERR_REQ_INVALID_GID => return "SA: invalid GID",
        status::SA_ERR_REQ_INSUFFICIENT_COMPONENTS => return "SA: insufficient components",
        status::SA_ERR_REQ_DENIED => return "SA: request denied",
        0 => {}
        _ => return "class-specific error",
    }
    if s & status::BUSY != 0 {
        "busy"
    } else if s & status::REDIRECT_REQUIRED != 0 {
        "redirect required"
    } else {
        "unknown status"
    }
}

attribute! {
    /// The common MAD header, MAD octets 0..24. `method` includes the R bit.
    pub struct MadHeader [24] {
        base_version: u8 = (0, 8),
        mgmt_class: u8 = (8, 8),
        class_version: u8 = (16, 8),
        method: u8 = (24, 8),
        status: u16 = (32, 16),
        class_specific: u16 = (48, 16),
        transaction_id: u64 = (64, 64),
        attribute_id: u16 = (128, 16),
        attribute_modifier: u32 = (160, 32),
    }
}

impl MadHeader {
    pub fn is_response(&self) -> bool {
        self.method & method::RESPONSE != 0
    }
    pub fn is_directed_route(&self) -> bool {
        self.mgmt_class == class::SUBN_DIRECTED_ROUTE
    }
    /// The status without the directed-route D bit.
    pub fn status_code(&self) -> u16 {
        if self.is_directed_route() {
            self.status & !status::DR_DIRECTION
        } else {
            self.status
        }
    }
}

attribute! {
    /// A whole directed-route SMP except its 64-octet data (octets 64..128): the
    /// common header with D/status and hop pointer/count split out, M_Key, DrSLID,
    /// DrDLID, InitialPath and ReturnPath (octet 0 of each path is unused).
    pub struct DrSmpHeader [256] {
        base_version: u8 = (0, 8),
        mgmt_class: u8 = (8, 8),
        class_version: u8 = (16, 8),
        method: u8 = (24, 8),
        direction: bool = (32, 1),
        status: u16 = (33, 15),
        hop_pointer: u8 = (48, 8),
        hop_count: u8 = (56, 8),
        transaction_id: u64 = (64, 64),
        attribute_id: u16 = (128, 16),
        attribute_modifier: u32 = (160, 32),
        m_key: u64 = (192, 64),
        dr_slid: Lid = (256, 16),
        dr_dlid: Lid = (272, 16),
        #[serde(with = "super::serde_array")]
        initial_path: [u8; 64] = (1024, 512),
        #[serde(with = "super::serde_array")]
        return_path: [u8; 64] = (1536, 512),
    }
}

/// RMPP types and flags (IBA 13.6.2.1).
pub mod rmpp {
    pub const VERSION: u8 = 1;
    pub const TYPE_DATA: u8 = 1;
    pub const TYPE_ACK: u8 = 2;
    pub const TYPE_STOP: u8 = 3;
    pub const TYPE_ABORT: u8 = 4;
    pub const FLAG_ACTIVE: u8 = 0x1;
    pub const FLAG_FIRST: u8 = 0x2;
    pub const FLAG_LAST: u8 = 0x4;
}

attribute! {
    /// The RMPP header, MAD octets 24..36 (decode from `&mad[RMPP_OFFSET..]`).
    /// Data1 is SegmentNumber; Data2 is PayloadLength (DATA) or NewWindowLast (ACK).
    pub struct RmppHeader [12] {
        rmpp_version: u8 = (0, 8),
        rmpp_type: u8 = (8, 8),
        r_resp_time: u8 = (16, 5),
        rmpp_flags: u8 = (21, 3),
        rmpp_status: u8 = (24, 8),
        data1: u32 = (32, 32),
        data2: u32 = (64, 32),
    }
}

attribute! {
    /// The SA header after RMPP, MAD octets 36..56 (decode from `&mad[SA_HEADER_OFFSET..]`).
    pub struct SaHeader [20] {
        sm_key: u64 = (0, 64),
        /// Record size in units of 8 octets (GetTable responses).
        attribute_offset: u16 = (64, 16),
        component_mask: u64 = (96, 64),
    }
}

pub const RMPP_OFFSET: usize = 24;
pub const SA_HEADER_OFFSET: usize = 36;
pub const SA_DATA_OFFSET: usize = 56;
pub const SA_DATA_LEN: usize = MAD_SIZE - SA_DATA_OFFSET;
/// SMP data area (LID-routed and directed-route): octets 64..128.
pub const SMP_DATA_OFFSET: usize = 64;
pub const SMP_DATA_LEN: usize = 64;
pub const SMP_M_KEY_OFFSET: usize = 24;
/// General Services (PerfMgt etc.) data area: octets 64..256.
pub const GS_DATA_OFFSET: usize = 64;
pub const GS_DATA_LEN: usize = 192;

/// A received MAD, viewed without copying.
#[derive(Debug, Clone)]
pub struct MadView<'a> {
    buf: &'a [u8],
    header: MadHeader,
}

impl<'a> MadView<'a> {
    /// Checks the header is present; `buf` may be a short SA/RMPP segment or a whole MAD.
    pub fn new(buf: &'a [u8]) -> Result<Self, MadError> {
        let header = MadHeader::decode(buf)?;
        Ok(Self { buf, header })
    }
    pub fn header(&self) -> &MadHeader {
        &self.header
    }
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// Low 32 bits of the TransactionID: the part umad2sim/ibsim return unchanged.
    pub fn tid_low32(&self) -> u32 {
        self.header.transaction_id as u32
    }
    /// `Err(MadError::Status)` unless the status (D bit excluded) is zero.
    pub fn check_status(&self) -> Result<(), MadError> {
        match self.header.status_code() {
            0 => Ok(()),
            s => Err(MadError::Status { status: s }),
        }
    }
    /// The attribute data area for this MAD's class (SMP 64..128, SA 56..256, GS 64..256).
    pub fn data(&self) -> &'a [u8] {
        let (off, len) = match self.header.mgmt_class {
            class::SUBN_LID_ROUTED | class::SUBN_DIRECTED_ROUTE => (SMP_DATA_OFFSET, SMP_DATA_LEN),
            class::SUBN_ADM => (SA_DATA_OFFSET, SA_DATA_LEN),
            _ => (GS_DATA_OFFSET, GS_DATA_LEN),
        };
        let end = (off + len).min(self.buf.len());
        self.buf.get(off..end).unwrap_or(&[])
    }
    /// Decodes the data area as `T`.
    pub fn decode<T: super::Codec>(&self) -> Result<T, MadError> {
        T::decode(self.data())
    }
    pub fn dr_header(&self) -> Result<DrSmpHeader, MadError> {
        if !self.header.is_directed_route() {
            return Err(MadError::Unexpected("not a directed-route SMP"));
        }
        DrSmpHeader::decode(self.buf)
    }
    pub fn rmpp_header(&self) -> Result<RmppHeader, MadError> {
        RmppHeader::decode(self.buf.get(RMPP_OFFSET..).unwrap_or(&[]))
    }
    pub fn sa_header(&self) -> Result<SaHeader, MadError> {
        SaHeader::decode(self.buf.get(SA_HEADER_OFFSET..).unwrap_or(&[]))
    }
}
