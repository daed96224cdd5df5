//! PathRecords computed from a snapshot, the way OpenSM answers an SA
//! PathRecord query without QoS: the route the switches' forwarding tables
//! give (one path per LID pair with LMC 0), SL 0 or the SL asked for (OpenSM
//! gives the SL the request names), the partition both ends
//! share, MTU and rate the smallest along the route, and every value with
//! selector "exact". Used where there is no SA to ask (the simulator).

use super::route::{links, trace, RouteError};
use super::snapshot::{PortIdx, Snapshot};
use crate::mad::sa::{comp::path_record as pr, PathRecord};
use crate::types::{Gid, Lid, LinkSpeed, PKey};

/// OpenSM's default subnet timeout code, which it also gives as a path's
/// packet lifetime (4.096 us * 2^18, about 1 s).
pub const PACKET_LIFE_TIME: u8 = 0x12;
/// Selector "exact" (IBA 15.2.5.16).
const EXACT: u8 = 2;

/// Why no path could be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the request names no source (SLID or SGID in the component mask)")]
    NoSource,
    #[error("the request names no destination (DLID or DGID in the component mask)")]
    NoDestination,
    #[error(transparent)]
    Route(#[from] RouteError),
}

/// The end port a LID or GID component names.
fn end_port(
    s: &Snapshot,
    mask: u64,
    lid_bit: u64,
    lid: Lid,
    gid_bit: u64,
    gid: Gid,
) -> Option<PortIdx> {
    if mask & lid_bit != 0 {
        return s.port_by_lid(lid);
    }
    if mask & gid_bit != 0 {
        return s.port_by_guid(gid.guid());
    }
    None
}

/// The PathRecords from the request `t` (components in `mask`), at most
/// `t.numb_path` when NumbPath is in the mask. Components the route does
/// not satisfy (a P_Key one end lacks, MTU/rate/packet lifetime selectors)
/// leave no record, as the SA answers.
pub fn path_records(s: &Snapshot, t: &PathRecord, mask: u64) -> Result<Vec<PathRecord>, PathError> {
    let src = end_port(s, mask, pr::SLID, t.slid, pr::SGID, t.sgid);
    let dst = end_port(s, mask, pr::DLID, t.dlid, pr::DGID, t.dgid);
    if mask & (pr::SLID | pr::SGID) == 0 {
        return Err(PathError::NoSource);
    }
    if mask & (pr::DLID | pr::DGID) == 0 {
        return Err(PathError::NoDestination);
    }
    // A LID or GID that names no port: no path, as the SA answers.
    let (Some(src), Some(dst)) = (src, dst) else {
        return Ok(Vec::new());
    };
    let (Some(sp), Some(dp)) = (s.port(src), s.port(dst)) else {
        return Ok(Vec::new());
    };
    let dlid = dp.info.lid;
    let hops = trace(s, src, dlid)?;
    let crossed = links(s, &hops);
    // MTU: the smallest MTUCap of the ends and of every port crossed.
    let mut ports: Vec<PortIdx> = vec![src, dst];
    for (a, b) in &crossed {
        ports.push(*a);
        ports.push(*b);
    }
    let mtu = ports
        .iter()
        .filter_map(|&p| s.port(p))
        .map(|p| p.info.mtu_cap)
        .filter(|&m| m != 0)
        .min()
        .unwrap_or(0);
    // Rate: the slowest link crossed (a path inside one node: its port's).
    let link_ports: Vec<PortIdx> = if crossed.is_empty() {
        vec![src]
    } else {
        crossed.iter().map(|(a, _)| *a).collect()
    };
    let gbps = link_ports
        .iter()
        .filter_map(|&p| s.port(p))
        .filter_map(|p| {
            let w = p.info.link_width()?;
            let sp = s.port_speed(p)?;
            Some(w.lanes() * lane_gbps_tenths(sp))
        })
        .min();
    let rate = gbps.map_or(0, rate_code);
    // The partition: the one asked for, else the first both ends share
    // (a full member on one end at least, as the SA requires).
    let pkey = if mask & pr::P_KEY != 0 {
        match shared_pkey(sp.pkeys.as_ref(), dp.pkeys.as_ref(), Some(t.p_key)) {
            Some(k) => k,
            None => return Ok(Vec::new()),
        }
    } else {
        match shared_pkey(sp.pkeys.as_ref(), dp.pkeys.as_ref(), None) {
            Some(k) => k,
            None => return Ok(Vec::new()),
        }
    };
    let rec = PathRecord {
        dgid: Gid::new(s.subnet_prefix, dp.guid),
        sgid: Gid::new(s.subnet_prefix, sp.guid),
        dlid,
        slid: sp.info.lid,
        reversible: true,
        p_key: pkey,
        sl: if mask & pr::SL != 0 { t.sl & 0x0F } else { 0 },
        mtu_selector: EXACT,
        mtu,
        rate_selector: EXACT,
        rate,
        packet_life_time_selector: EXACT,
        packet_life_time: PACKET_LIFE_TIME,
        ..PathRecord::default()
    };
    if !satisfies(&rec, t, mask) {
        return Ok(Vec::new());
    }
    let mut out = vec![rec];
    if mask & pr::NUMB_PATH != 0 {
        out.truncate(usize::from(t.numb_path));
    }
    Ok(out)
}

/// A P_Key both tables hold (15-bit base equal, one of them full), the
/// wanted one when given; the one the source holds is returned.
fn shared_pkey(a: &[PKey], b: &[PKey], want: Option<PKey>) -> Option<PKey> {
    let base = |k: PKey| k.0 & 0x7FFF;
    a.iter()
        .filter(|k| base(**k) != 0)
        .filter(|k| want.is_none_or(|w| base(w) == base(**k)))
        .find(|k| {
            b.iter()
                .any(|m| base(*m) == base(**k) && (k.0 | m.0) & PKey::FULL_MEMBER != 0)
        })
        .copied()
}

/// Whether `rec` meets the request's SL, MTU, rate and packet lifetime
/// components (selector: 0 greater, 1 less, 2 exact, 3 best).
fn satisfies(rec: &PathRecord, t: &PathRecord, mask: u64) -> bool {
    // A component and its selector's, compared on `value` of both records.
    let meets = |on: u64, sel_bit: u64, sel: u8, value: fn(&PathRecord) -> u64| {
        let (want, have) = (value(t), value(rec));
        match (mask & on != 0, mask & sel_bit != 0, sel) {
            (false, _, _) => true,
            (true, false, _) | (true, true, 2) => have == want,
            (true, true, 0) => have > want,
            (true, true, 1) => have < want,
            _ => true,
        }
    };
    (mask & pr::SL == 0 || t.sl == rec.sl)
        && meets(pr::MTU, pr::MTU_SELECTOR, t.mtu_selector, |r| {
            u64::from(r.mtu)
        })
        && meets(pr::RATE, pr::RATE_SELECTOR, t.rate_selector, |r| {
            rate_gbps_tenths(r.rate).map_or(0, u64::from)
        })
        && meets(
            pr::PACKET_LIFE_TIME,
            pr::PACKET_LIFE_TIME_SELECTOR,
            t.packet_life_time_selector,
            |r| u64::from(r.packet_life_time),
        )
}

/// A lane's nominal data rate in tenths of Gb/s, as IBA's rate codes count.
fn lane_gbps_tenths(s: LinkSpeed) -> u32 {
    match s {
        LinkSpeed::Sdr => 25,
        LinkSpeed::Ddr => 50,
        LinkSpeed::Qdr | LinkSpeed::Fdr10 => 100,
        LinkSpeed::Fdr => 140,
        LinkSpeed::Edr => 250,
        LinkSpeed::Hdr => 500,
        LinkSpeed::Ndr => 1000,
        LinkSpeed::Xdr => 2000,
    }
}

/// IBA static rate codes (PathRecord:Rate) and their rates in tenths of Gb/s.
const RATES: &[(u8, u32)] = &[
    (2, 25),
    (3, 100),
    (4, 300),
    (5, 50),
    (6, 200),
    (7, 400),
    (8, 600),
    (9, 800),
    (10, 1200),
    (11, 140),
    (12, 560),
    (13, 1120),
    (14, 1680),
    (15, 250),
    (16, 1000),
    (17, 2000),
    (18, 3000),
    (19, 280),
    (20, 500),
    (21, 4000),
    (22, 6000),
    (23, 8000),
    (24, 12000),
];

/// The rate code of a rate (the largest code not above it).
pub fn rate_code(tenths: u32) -> u8 {
    RATES
        .iter()
        .filter(|(_, r)| *r <= tenths)
        .max_by_key(|(_, r)| *r)
        .map_or(0, |(c, _)| *c)
}

/// The rate of a rate code, in tenths of Gb/s.
pub fn rate_gbps_tenths(code: u8) -> Option<u32> {
    RATES.iter().find(|(c, _)| *c == code).map(|(_, r)| *r)
}
