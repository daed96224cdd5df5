//! The request MADs the umad source sends, as addressed [`Request`]s for the transport.
//! The MADs themselves come from `crate::mad::build`; this adds the addressing (DLID,
//! QP, Q_Key) and the agent, and finds the data in the answers.

use super::ffi::Address;
use super::transport::{Agent, Request};
use crate::mad::build::{self, DrPath};

/// Get / Set / GetTable methods.
pub const GET: u8 = 0x01;
pub const SET: u8 = 0x02;
pub const GET_TABLE: u8 = 0x12;

const MAD_SIZE: usize = 256;
/// Directed-route SMP data offset.
pub const SMP_DATA: usize = 64;
/// GS classes: data follows the 24-octet common header (PerfMgt adds 40 reserved octets).
pub const PMA_DATA: usize = 64;
/// SA: RMPP header (12) + SA header (20) after the common header.
pub const SA_DATA: usize = 56;

fn to_vec(r: Result<crate::mad::build::MadBuf, crate::mad::MadError>) -> Vec<u8> {
    // A request that cannot be built (only a route over 63 hops could) goes out as an
    // all-zero MAD that no agent answers: it fails like an unanswered query.
    r.map(|b| b.to_vec())
        .unwrap_or_else(|_| vec![0u8; MAD_SIZE])
}

/// A directed-route SMP Get along `path` (output ports, at most 63 hops).
pub fn dr_get(attr: u16, modifier: u32, path: &[u8]) -> Request {
    let mad = to_vec(DrPath::new(path).map(|p| build::dr_smp_get(&p, attr, modifier, 0)));
    Request {
        agent: Agent::Smp,
        addr: Address::directed_route(),
        mad,
    }
}

/// A directed-route SMP Set along `path` with the encoded attribute `data`,
/// carrying `m_key`.
pub fn dr_set(attr: u16, modifier: u32, path: &[u8], m_key: u64, data: &[u8]) -> Request {
    let set = crate::mad::header::method::SET;
    let mad = to_vec(
        DrPath::new(path).and_then(|p| build::dr_smp(set, &p, attr, modifier, 0, m_key, data)),
    );
    Request {
        agent: Agent::Smp,
        addr: Address::directed_route(),
        mad,
    }
}

/// A LID-routed SMP Get of `attr` to the port at `lid` (SMInfo of the SM there).
pub fn lid_get(attr: u16, modifier: u32, lid: u16) -> Request {
    Request {
        agent: Agent::SmpLid,
        addr: Address::smp(lid),
        mad: to_vec(build::lid_smp(GET, attr, modifier, 0, 0, &[])),
    }
}

/// The attribute data of an SMP answer (directed-route or LID-routed: both at
/// offset 64).
pub fn smp_data(mad: &[u8]) -> &[u8] {
    mad.get(SMP_DATA..SMP_DATA + 64).unwrap_or(&[])
}

/// A PerfMgt request to the PMA at `lid`; `data` is the encoded attribute (Set) or the
/// PortSelect-carrying template (Get).
pub fn pma(method: u8, attr: u16, modifier: u32, lid: u16, data: &[u8]) -> Request {
    Request {
        agent: Agent::PerfMgt,
        addr: Address::gsi(lid),
        mad: to_vec(build::pma(method, attr, modifier, 0, data)),
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
    Request {
        agent: Agent::Sa,
        addr: Address::gsi(sm_lid),
        mad: to_vec(build::sa(
            method,
            attr,
            0,
            component_mask,
            sm_key,
            0,
            record,
        )),
    }
}

/// The records of an SA answer: AttributeOffset (in 8-octet units) gives the record
/// size, and the records are the whole ones that arrived. RMPP PayloadLength is not
/// used: it is per segment (the kernel's reassembly already sized the buffer by it),
/// and a responder that copies the request's SA header into its answer, as OpenSM
/// does when no RMPP layer segments it (umad2sim), leaves the request's value there.
/// All-zero records at the end are padding of a fixed-size MAD, not records. Under
/// ibsim only the first packet of a multi-packet answer arrives ([`sa_truncated`]).
pub fn sa_records(mad: &[u8]) -> Vec<&[u8]> {
    let off = sa_record_size(mad);
    let data = mad.get(SA_DATA..).unwrap_or(&[]);
    if off == 0 {
        return Vec::new();
    }
    let mut out: Vec<&[u8]> = data.chunks_exact(off).collect();
    // A single-record Get answer; GetTable answers may hold several.
    if mad.get(3).copied() == Some(0x81) {
        out.truncate(1);
    }
    while out.last().is_some_and(|r| r.iter().all(|&b| b == 0)) {
        out.pop();
    }
    out
}

/// The record size of an SA answer in octets (AttributeOffset x 8; 0: no records).
fn sa_record_size(mad: &[u8]) -> usize {
    mad.get(44..46)
        .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])) * 8)
        .unwrap_or(0)
}

/// Whether a multi-record SA answer (GetTableResp, GetMultiResp) was cut short: its
/// data ends inside a record. Under umad2sim an answer longer than one MAD arrives as
/// its first 256 octets (200 of data), which no SA record size this agent asks for
/// divides; a kernel-reassembled RMPP answer ends on a record.
pub fn sa_truncated(mad: &[u8]) -> bool {
    let off = sa_record_size(mad);
    let method = mad.get(3).copied().unwrap_or(0);
    let data = mad.get(SA_DATA..).map_or(0, <[u8]>::len);
    (method == 0x92 || method == 0x94) && off != 0 && data % off != 0
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
        // PayloadLength is not trusted: OpenSM under umad2sim answers a GetMulti
        // with the request's (here 20 + one record) and three records.
        m[32..36].copy_from_slice(&36u32.to_be_bytes());
        m[88] = 3;
        assert_eq!(sa_records(&m).len(), 3);
        // AttributeOffset 0: no records, no panic; short buffers too.
        m[44..46].copy_from_slice(&0u16.to_be_bytes());
        assert!(sa_records(&m).is_empty());
        assert!(sa_records(&[0u8; 10]).is_empty());
    }

    /// A GetMultiResp cut to one MAD: three whole 64-octet PathRecords and 8
    /// octets of a fourth arrive; an answer of exactly its records does not.
    #[test]
    fn cut_answers_are_seen() {
        let mut m = vec![0u8; 256];
        m[3] = 0x94;
        m[44..46].copy_from_slice(&8u16.to_be_bytes());
        for r in 0..4 {
            if let Some(b) = m.get_mut(SA_DATA + 64 * r) {
                *b = 1 + r as u8;
            }
        }
        assert!(sa_truncated(&m));
        assert_eq!(sa_records(&m).len(), 3);
        m.truncate(SA_DATA + 128);
        assert!(!sa_truncated(&m));
        assert_eq!(sa_records(&m).len(), 2);
        // A Get answer (one record) is never cut: 256 octets on real hardware.
        let mut g = vec![0u8; 256];
        g[3] = 0x81;
        g[44..46].copy_from_slice(&8u16.to_be_bytes());
        g[SA_DATA] = 1;
        assert!(!sa_truncated(&g));
        assert_eq!(sa_records(&g).len(), 1);
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
