//! Whole 256-octet request MADs, as the sources send them through libibumad.
//! Addressing (DLID, QP, Q_Key) is the transport's business, not the MAD's.

use super::header::{
    class, class_version, method, rmpp, DrSmpHeader, MadHeader, RmppHeader, SaHeader, BASE_VERSION,
    GS_DATA_OFFSET, RMPP_OFFSET, SA_DATA_LEN, SA_DATA_OFFSET, SA_HEADER_OFFSET, SMP_DATA_LEN,
    SMP_DATA_OFFSET, SMP_M_KEY_OFFSET,
};
use super::pma::{attr as pma_attr, PortCounters};
use super::smp::attr as smp_attr;
use super::{Attribute, MadError, MAD_SIZE};
use crate::types::{Lid, PortNum};
use std::fmt;

/// A 256-octet MAD buffer.
pub type MadBuf = [u8; MAD_SIZE];

/// A directed route: the output port at each hop (IBA 14.2.2). Hop 0 (the
/// local node) is implicit; at most 63 hops.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DrPath {
    /// Octet 0 unused, as in the SMP InitialPath; ports in `1..=hops`.
    path: [u8; 64],
    hops: u8,
}

impl DrPath {
    pub const MAX_HOPS: usize = 63;

    /// The empty route: the local port's own node.
    pub const fn local() -> Self {
        Self {
            path: [0; 64],
            hops: 0,
        }
    }

    /// A route through the given output ports.
    pub fn new(ports: &[u8]) -> Result<Self, MadError> {
        if ports.len() > Self::MAX_HOPS {
            return Err(MadError::PathTooLong(ports.len()));
        }
        let mut p = Self::local();
        for &x in ports {
            p = p.push(x)?;
        }
        Ok(p)
    }

    /// This route extended by one hop out of `port`.
    pub fn push(&self, port: u8) -> Result<Self, MadError> {
        let n = usize::from(self.hops) + 1;
        let mut p = *self;
        match p.path.get_mut(n) {
            Some(slot) if n <= Self::MAX_HOPS => *slot = port,
            _ => return Err(MadError::PathTooLong(n)),
        }
        p.hops = n as u8;
        Ok(p)
    }

    pub fn hops(&self) -> u8 {
        self.hops
    }

    /// The output ports, one per hop.
    pub fn ports(&self) -> &[u8] {
        self.path.get(1..=usize::from(self.hops)).unwrap_or(&[])
    }

    /// The route as the 64-octet InitialPath field.
    pub fn initial_path(&self) -> [u8; 64] {
        self.path
    }
}

impl Default for DrPath {
    fn default() -> Self {
        Self::local()
    }
}

/// Written as ibnetdiscover/smpquery -D take it: "0,1,3" (leading 0 = local node).
impl fmt::Display for DrPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0")?;
        for p in self.ports() {
            write!(f, ",{p}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for DrPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DrPath({self})")
    }
}

/// A management class with the ClassVersion requests of it carry.
type Class = (u8, u8);
const SUBN_LID_ROUTED: Class = (class::SUBN_LID_ROUTED, class_version::SUBN);
const PERF_MGT: Class = (class::PERF_MGT, class_version::PERF_MGT);
const SUBN_ADM: Class = (class::SUBN_ADM, class_version::SUBN_ADM);

/// A MAD with its common header (LID-routed SMPs and GS classes) laid out,
/// the rest zero.
fn with_header(
    (mgmt_class, cv): Class,
    m: u8,
    tid: u64,
    attr: u16,
    attr_mod: u32,
) -> Result<MadBuf, MadError> {
    let mut buf = [0u8; MAD_SIZE];
    MadHeader {
        base_version: BASE_VERSION,
        mgmt_class,
        class_version: cv,
        method: m,
        status: 0,
        class_specific: 0,
        transaction_id: tid,
        attribute_id: attr,
        attribute_modifier: attr_mod,
    }
    .encode(&mut buf)?;
    Ok(buf)
}

/// A directed-route SMP (Get or Set) along `path`, permissive DrSLID/DrDLID
/// (the whole route is directed). `data` (at most 64 octets) fills the SMP data.
pub fn dr_smp(
    m: u8,
    path: &DrPath,
    attribute_id: u16,
    attribute_modifier: u32,
    tid: u64,
    m_key: u64,
    data: &[u8],
) -> Result<MadBuf, MadError> {
    let mut buf = [0u8; MAD_SIZE];
    let h = DrSmpHeader {
        base_version: BASE_VERSION,
        mgmt_class: class::SUBN_DIRECTED_ROUTE,
        class_version: class_version::SUBN,
        method: m,
        direction: false,
        status: 0,
        hop_pointer: 0,
        hop_count: path.hops(),
        transaction_id: tid,
        attribute_id,
        attribute_modifier,
        m_key,
        dr_slid: Lid::PERMISSIVE,
        dr_dlid: Lid::PERMISSIVE,
        initial_path: path.initial_path(),
        return_path: [0; 64],
    };
    h.encode(&mut buf)?;
    put_data(&mut buf, SMP_DATA_OFFSET, SMP_DATA_LEN, data, "SMP data")?;
    Ok(buf)
}

/// DR SMP Get(attribute) along `path`.
pub fn dr_smp_get(path: &DrPath, attribute_id: u16, attribute_modifier: u32, tid: u64) -> MadBuf {
    // Cannot fail: no data and the header fits.
    dr_smp(
        method::GET,
        path,
        attribute_id,
        attribute_modifier,
        tid,
        0,
        &[],
    )
    .unwrap_or([0; 256])
}

/// DR SMP Get(NodeInfo) along `path` (the discovery probe).
pub fn dr_get_node_info(path: &DrPath, tid: u64) -> MadBuf {
    dr_smp_get(path, smp_attr::NODE_INFO, 0, tid)
}

/// DR SMP Get(PortInfo) of `port` along `path`.
pub fn dr_get_port_info(path: &DrPath, port: PortNum, tid: u64) -> MadBuf {
    dr_smp_get(path, smp_attr::PORT_INFO, u32::from(port.0), tid)
}

/// A LID-routed SMP (class 0x01); the DLID goes in the transport address.
pub fn lid_smp(
    m: u8,
    attribute_id: u16,
    attribute_modifier: u32,
    tid: u64,
    m_key: u64,
    data: &[u8],
) -> Result<MadBuf, MadError> {
    let mut buf = with_header(SUBN_LID_ROUTED, m, tid, attribute_id, attribute_modifier)?;
    super::bits::set(&mut buf, SMP_M_KEY_OFFSET * 8, 64, m_key);
    put_data(&mut buf, SMP_DATA_OFFSET, SMP_DATA_LEN, data, "SMP data")?;
    Ok(buf)
}

/// A PerfMgt MAD with the given attribute data (at most 192 octets).
pub fn pma(
    m: u8,
    attribute_id: u16,
    attribute_modifier: u32,
    tid: u64,
    data: &[u8],
) -> Result<MadBuf, MadError> {
    let mut buf = with_header(PERF_MGT, m, tid, attribute_id, attribute_modifier)?;
    put_data(&mut buf, GS_DATA_OFFSET, 192, data, "PMA data")?;
    Ok(buf)
}

/// PMA Get(attribute) for `port_select` (PortSelect at data octet 1, as every
/// port-scoped PMA attribute has it). 0xFF = all ports where AllPortSelect is supported.
pub fn pma_get(attribute_id: u16, port_select: PortNum, tid: u64) -> MadBuf {
    let data = [0, port_select.0];
    pma(method::GET, attribute_id, 0, tid, &data).unwrap_or([0; 256])
}

/// PMA Get(ClassPortInfo).
pub fn pma_get_class_port_info(tid: u64) -> MadBuf {
    pma(method::GET, pma_attr::CLASS_PORT_INFO, 0, tid, &[]).unwrap_or([0; 256])
}

/// PMA Get(PortCounters) of `port`.
pub fn pma_get_port_counters(port: PortNum, tid: u64) -> MadBuf {
    pma_get(pma_attr::PORT_COUNTERS, port, tid)
}

/// PMA Get(PortCountersExtended) of `port`.
pub fn pma_get_port_counters_extended(port: PortNum, tid: u64) -> MadBuf {
    pma_get(pma_attr::PORT_COUNTERS_EXTENDED, port, tid)
}

/// PMA Set(PortCounters) that clears the counters selected by `counter_select`
/// (see [`super::pma::counter_select`]) and `counter_select2` (PortXmitWait).
pub fn pma_reset_port_counters(
    port: PortNum,
    counter_select: u16,
    counter_select2: u8,
    tid: u64,
) -> MadBuf {
    let pc = PortCounters {
        port_select: port.0,
        counter_select,
        counter_select2,
        ..PortCounters::default()
    };
    pma_set(&pc, 0, tid).unwrap_or([0; 256])
}

/// PMA Set(attribute) with `value` as the data.
pub fn pma_set<T: Attribute>(
    value: &T,
    attribute_modifier: u32,
    tid: u64,
) -> Result<MadBuf, MadError> {
    let mut data = [0u8; 192];
    value.encode(&mut data)?;
    pma(
        method::SET,
        T::ATTRIBUTE_ID,
        attribute_modifier,
        tid,
        data.get(..T::LEN).unwrap_or(&data),
    )
}

/// An SA request (Get, GetTable, Set, Delete, GetMulti...) with `record` as the
/// template whose fields `component_mask` selects. GetMulti requests carry an
/// RMPP DATA header (single segment); others leave RMPP inactive.
pub fn sa(
    m: u8,
    attribute_id: u16,
    attribute_modifier: u32,
    component_mask: u64,
    sm_key: u64,
    tid: u64,
    record: &[u8],
) -> Result<MadBuf, MadError> {
    let mut buf = with_header(SUBN_ADM, m, tid, attribute_id, attribute_modifier)?;
    let rmpp_h = if m == method::GET_MULTI {
        RmppHeader {
            rmpp_version: rmpp::VERSION,
            rmpp_type: rmpp::TYPE_DATA,
            r_resp_time: 0,
            rmpp_flags: rmpp::FLAG_ACTIVE | rmpp::FLAG_FIRST | rmpp::FLAG_LAST,
            rmpp_status: 0,
            data1: 1,
            // PayloadLength counts the SA header (20 octets) plus the data.
            data2: (20 + record.len()) as u32,
        }
    } else {
        // Single-MAD requests leave the RMPP header zero, as saquery does.
        RmppHeader::default()
    };
    rmpp_h.encode(buf.get_mut(RMPP_OFFSET..).unwrap_or(&mut []))?;
    let sah = SaHeader {
        sm_key,
        attribute_offset: 0,
        component_mask,
    };
    sah.encode(buf.get_mut(SA_HEADER_OFFSET..).unwrap_or(&mut []))?;
    put_data(&mut buf, SA_DATA_OFFSET, SA_DATA_LEN, record, "SA record")?;
    Ok(buf)
}

/// SA Get/GetTable/Set/Delete of a typed record template.
pub fn sa_record<T: Attribute>(
    m: u8,
    template: &T,
    component_mask: u64,
    sm_key: u64,
    tid: u64,
) -> Result<MadBuf, MadError> {
    let mut rec = [0u8; SA_DATA_LEN];
    template.encode(&mut rec)?;
    sa(
        m,
        T::ATTRIBUTE_ID,
        0,
        component_mask,
        sm_key,
        tid,
        rec.get(..T::LEN).unwrap_or(&rec),
    )
}

/// SA GetTable of `T` records matching `template` on `component_mask`.
pub fn sa_get_table<T: Attribute>(
    template: &T,
    component_mask: u64,
    sm_key: u64,
    tid: u64,
) -> MadBuf {
    sa_record(method::GET_TABLE, template, component_mask, sm_key, tid).unwrap_or([0; 256])
}

/// SA Get of one `T` record matching `template` on `component_mask`.
pub fn sa_get<T: Attribute>(template: &T, component_mask: u64, sm_key: u64, tid: u64) -> MadBuf {
    sa_record(method::GET, template, component_mask, sm_key, tid).unwrap_or([0; 256])
}

fn put_data(
    buf: &mut MadBuf,
    off: usize,
    max: usize,
    data: &[u8],
    what: &'static str,
) -> Result<(), MadError> {
    if data.len() > max {
        return Err(MadError::TooLong {
            what,
            len: data.len(),
            max,
        });
    }
    if let Some(dst) = buf.get_mut(off..off + data.len()) {
        dst.copy_from_slice(data);
    }
    Ok(())
}

/// The ReportResp() acknowledging an SA Report() (same TID and attribute; IBA
/// 13.4.8.2): without it the SA retransmits the Report.
pub fn sa_report_resp(report: &[u8]) -> Result<MadBuf, MadError> {
    let h = MadHeader::decode(report)?;
    if h.method != method::REPORT {
        return Err(MadError::Unexpected("not a Report() MAD"));
    }
    let mut buf = [0u8; MAD_SIZE];
    let n = report.len().min(MAD_SIZE);
    if let (Some(dst), Some(src)) = (buf.get_mut(..n), report.get(..n)) {
        dst.copy_from_slice(src);
    }
    MadHeader {
        method: method::REPORT_RESP,
        status: 0,
        ..h
    }
    .encode(&mut buf)?;
    Ok(buf)
}
