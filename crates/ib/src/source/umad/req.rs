//! The few request MADs the umad source sends, as [`Request`]s for the transport.
//! Attribute payloads come from `crate::mad`'s codecs; only header framing lives here.

use super::ffi::Address;
use super::transport::{Agent, Request};

/// Get / Set / GetTable methods.
pub const GET: u8 = 0x01;
pub const SET: u8 = 0x02;
pub const GET_TABLE: u8 = 0x12;

const MAD_SIZE: usize = 256;
/// Directed-route SMP: DrSLID, DrDLID, data, initial path offsets.
const DR_SLID: usize = 32;
const DR_DLID: usize = 34;
pub const SMP_DATA: usize = 64;
const DR_INITIAL_PATH: usize = 128;
/// GS classes: data follows the 24-octet common header (PerfMgt adds 40 reserved octets).
pub const PMA_DATA: usize = 64;
/// SA: RMPP header (12) + SA header (20) after the common header.
pub const SA_DATA: usize = 56;
const SA_COMPONENT_MASK: usize = 48;
const SA_SM_KEY: usize = 36;

fn header(buf: &mut [u8], class: u8, class_version: u8, method: u8, attr: u16, modifier: u32) {
    if let Some(h) = buf.get_mut(..24) {
        h[0] = 1; // BaseVersion
        h[1] = class;
        h[2] = class_version;
        h[3] = method;
        h[16..18].copy_from_slice(&attr.to_be_bytes());
        h[20..24].copy_from_slice(&modifier.to_be_bytes());
    }
}

/// A directed-route SMP Get along `path` (output ports, at most 63 hops).
pub fn dr_get(attr: u16, modifier: u32, path: &[u8]) -> Request {
    let mut mad = vec![0u8; MAD_SIZE];
    header(&mut mad, 0x81, 1, GET, attr, modifier);
    if let Some(h) = mad.get_mut(7) {
        *h = path.len().min(63) as u8; // HopCount; HopPointer stays 0
    }
    mad[DR_SLID..DR_SLID + 2].copy_from_slice(&0xffffu16.to_be_bytes());
    mad[DR_DLID..DR_DLID + 2].copy_from_slice(&0xffffu16.to_be_bytes());
    for (i, p) in path.iter().take(63).enumerate() {
        if let Some(b) = mad.get_mut(DR_INITIAL_PATH + 1 + i) {
            *b = *p;
        }
    }
    Request {
        agent: Agent::Smp,
        addr: Address::directed_route(),
        mad,
    }
}

/// The attribute data of a directed-route SMP answer.
pub fn smp_data(mad: &[u8]) -> &[u8] {
    mad.get(SMP_DATA..SMP_DATA + 64).unwrap_or(&[])
}

/// A PerfMgt request to the PMA at `lid`; `data` is the encoded attribute (Set) or the
/// PortSelect-carrying template (Get).
pub fn pma(method: u8, attr: u16, modifier: u32, lid: u16, data: &[u8]) -> Request {
    let mut mad = vec![0u8; MAD_SIZE];
    header(&mut mad, 0x04, 1, method, attr, modifier);
    let n = data.len().min(MAD_SIZE - PMA_DATA);
    mad[PMA_DATA..PMA_DATA + n].copy_from_slice(&data[..n]);
    Request {
        agent: Agent::PerfMgt,
        addr: Address::gsi(lid),
        mad,
    }
}

/// The attribute data of a PerfMgt answer.
pub fn pma_data(mad: &[u8]) -> &[u8] {
    mad.get(PMA_DATA..).unwrap_or(&[])
}

/// An SA request to the SM at `sm_lid`: `record` is the encoded template record and
/// `component_mask` says which of its fields are keys.
pub fn sa(
    method: u8,
    attr: u16,
    sm_lid: u16,
    sm_key: u64,
    component_mask: u64,
    record: &[u8],
) -> Request {
    let mut mad = vec![0u8; MAD_SIZE];
    header(&mut mad, 0x03, 2, method, attr, 0);
    mad[SA_SM_KEY..SA_SM_KEY + 8].copy_from_slice(&sm_key.to_be_bytes());
    mad[SA_COMPONENT_MASK..SA_COMPONENT_MASK + 8].copy_from_slice(&component_mask.to_be_bytes());
    let n = record.len().min(MAD_SIZE - SA_DATA);
    mad[SA_DATA..SA_DATA + n].copy_from_slice(&record[..n]);
    Request {
        agent: Agent::Sa,
        addr: Address::gsi(sm_lid),
        mad,
    }
}

/// The records of an SA answer: AttributeOffset (in 8-octet units) gives the record size.
/// Under ibsim only the first packet of a multi-packet answer arrives.
pub fn sa_records(mad: &[u8]) -> Vec<&[u8]> {
    let off = mad
        .get(44..46)
        .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])) * 8)
        .unwrap_or(0);
    let data = mad.get(SA_DATA..).unwrap_or(&[]);
    if off == 0 {
        return Vec::new();
    }
    // A single-record Get answer; GetTable answers may hold several.
    let method = mad.get(3).copied().unwrap_or(0);
    let mut out: Vec<&[u8]> = data.chunks(off).filter(|c| c.len() == off).collect();
    if method == 0x81 {
        out.truncate(1);
    } else {
        // RMPP PayloadLength (when set) bounds the records actually present.
        let plen = mad
            .get(32..36)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .unwrap_or(0);
        let rmpp_flags = mad.get(26).copied().unwrap_or(0);
        if rmpp_flags & 0x01 != 0 && plen >= 20 {
            out.truncate((plen - 20) / off);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dr_get_lays_out_the_directed_route_header() {
        let r = dr_get(0x0011, 0, &[1, 3]);
        let m = &r.mad;
        assert_eq!(m.len(), 256);
        assert_eq!(&m[..4], &[1, 0x81, 1, GET]);
        assert_eq!(m[6], 0, "hop pointer");
        assert_eq!(m[7], 2, "hop count");
        assert_eq!(&m[16..18], &[0x00, 0x11]);
        assert_eq!(&m[32..36], &[0xff, 0xff, 0xff, 0xff]);
        assert_eq!(&m[128..131], &[0, 1, 3], "initial path starts at index 1");
        assert_eq!(r.addr, Address::directed_route());
    }

    #[test]
    fn sa_request_and_records() {
        let r = sa(GET_TABLE, 0x0033, 1, 0x1, 0x3, &[9; 72]);
        assert_eq!(&r.mad[..4], &[1, 0x03, 2, GET_TABLE]);
        assert_eq!(&r.mad[36..44], &1u64.to_be_bytes(), "SM_Key");
        assert_eq!(&r.mad[48..56], &3u64.to_be_bytes(), "ComponentMask");
        assert_eq!(r.mad[56], 9);
        // A GetTableResp with two 16-octet records, RMPP active, PayloadLength 20 + 32.
        let mut m = vec![0u8; 256];
        m[3] = 0x92;
        m[26] = 0x07;
        m[32..36].copy_from_slice(&52u32.to_be_bytes());
        m[44..46].copy_from_slice(&2u16.to_be_bytes());
        m[56] = 1;
        m[72] = 2;
        let recs = sa_records(&m);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0][0], 1);
        assert_eq!(recs[1][0], 2);
        // AttributeOffset 0: no records, no panic; short buffers too.
        m[44..46].copy_from_slice(&0u16.to_be_bytes());
        assert!(sa_records(&m).is_empty());
        assert!(sa_records(&[0u8; 10]).is_empty());
    }

    #[test]
    fn pma_request_carries_port_select() {
        let r = pma(GET, 0x0012, 0, 7, &[0, 5, 0, 0]);
        assert_eq!(&r.mad[..4], &[1, 0x04, 1, GET]);
        assert_eq!(r.mad[65], 5);
        assert_eq!(r.addr, Address::gsi(7));
        assert_eq!(pma_data(&r.mad)[1], 5);
    }
}
