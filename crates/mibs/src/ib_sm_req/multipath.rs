//! ibSmMultiPathReqTable rows: a MultiPathRecord template (IBA 15.2.5.20)
//! with its source and destination GIDs in the SDGIDBlock columns, and the
//! query it becomes: one PathRecord query per (source, destination) pair,
//! the components of the MultiPathRecord mask carried over, at most
//! NumbPath paths in all when NumbPath is in the mask.

use ib::mad::sa::comp::{multi_path_record as mp, path_record as pr};
use ib::mad::sa::{MultiPathRecord, MultiPathRecordHead, PathRecord};
use ib::model::Snapshot;
use ib::types::{Gid, PKey};
use snmp::mib::SetError;
use snmp::rowstatus::{RowChange, RowData};
use snmp::value::Value;

use super::store::{Answer, Kind, RequestChange, Sessions};
use super::tables::ReqKind;
use super::{bytes, gauge, octets, u8_of, unsigned, COMP_MASK};
use crate::oids::ib_sm_mib as o;
use std::time::Instant;

/// SDGIDBlock1..32 are columns 22..53, up to 256 octets each.
const FIRST_BLOCK: u32 = 22;
const LAST_BLOCK: u32 = 53;
const BLOCK_MAX: usize = 256;

/// MultiPathRecord components and the PathRecord components they become.
const CARRIED: &[(u64, u64)] = &[
    (mp::RAW_TRAFFIC, pr::RAW_TRAFFIC),
    (mp::FLOW_LABEL, pr::FLOW_LABEL),
    (mp::HOP_LIMIT, pr::HOP_LIMIT),
    (mp::T_CLASS, pr::T_CLASS),
    (mp::P_KEY, pr::P_KEY),
    (mp::SL, pr::SL),
    (mp::MTU_SELECTOR, pr::MTU_SELECTOR),
    (mp::MTU, pr::MTU),
    (mp::RATE_SELECTOR, pr::RATE_SELECTOR),
    (mp::RATE, pr::RATE),
    (mp::PACKET_LIFE_TIME_SELECTOR, pr::PACKET_LIFE_TIME_SELECTOR),
    (mp::PACKET_LIFE_TIME, pr::PACKET_LIFE_TIME),
];

/// An ibSmMultiPathReqTable row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiPathReq {
    /// The path components (PathRecord fields of the same meaning).
    pub template: PathRecord,
    pub independence_selector: u8,
    pub sgid_count: u8,
    pub dgid_count: u8,
    /// SDGIDBlock1..32.
    pub blocks: Vec<Vec<u8>>,
    /// ibSmMultiPathReqCompMask as set; None: the components of the columns set.
    pub comp_mask: Option<u64>,
    pub set_mask: u64,
    pub created: Instant,
}

impl Default for MultiPathReq {
    fn default() -> Self {
        MultiPathReq {
            template: PathRecord::default(),
            independence_selector: 0,
            sgid_count: 0,
            dgid_count: 0,
            blocks: vec![Vec::new(); (LAST_BLOCK - FIRST_BLOCK + 1) as usize],
            comp_mask: None,
            set_mask: 0,
            created: Instant::now(),
        }
    }
}

/// What an activated multipath request asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiPathQuery {
    /// The carried components (PathRecord fields).
    pub template: PathRecord,
    /// PathRecord component mask of the carried components.
    pub mask: u64,
    pub sgids: Vec<Gid>,
    pub dgids: Vec<Gid>,
    /// NumbPath when in the mask: the most paths in all.
    pub numb_path: Option<u8>,
    /// The request as one MultiPathRecord with its ComponentMask, for an SA
    /// GetMulti (None: more GIDs than one request carries).
    pub record: Option<(MultiPathRecord, u64)>,
}

impl MultiPathQuery {
    /// One PathRecord query per (source, destination) pair, in order.
    pub fn pairs(&self) -> Vec<(PathRecord, u64)> {
        let mut out = Vec::with_capacity(self.sgids.len() * self.dgids.len());
        for s in &self.sgids {
            for d in &self.dgids {
                let t = PathRecord {
                    sgid: *s,
                    dgid: *d,
                    ..self.template.clone()
                };
                out.push((t, self.mask | pr::SGID | pr::DGID));
            }
        }
        out
    }

    /// Whether `n` paths are all that is asked.
    pub fn enough(&self, n: usize) -> bool {
        self.numb_path.is_some_and(|m| n >= usize::from(m))
    }
}

/// Paths computed from the snapshot's routing for every pair.
pub fn local_multipaths(s: &Snapshot, q: &MultiPathQuery) -> Result<Answer, String> {
    let mut out = Vec::new();
    for (t, mask) in q.pairs() {
        if q.enough(out.len()) {
            break;
        }
        out.extend(ib::model::paths::path_records(s, &t, mask).map_err(|e| e.to_string())?);
    }
    if let Some(m) = q.numb_path {
        out.truncate(usize::from(m));
    }
    Ok(Answer::Paths(out))
}

impl MultiPathReq {
    pub fn mask(&self) -> u64 {
        self.comp_mask.unwrap_or(self.set_mask)
    }

    /// The GIDs of the SDGIDBlock columns, in order (16 octets each).
    fn gids(&self) -> Vec<Gid> {
        let all: Vec<u8> = self.blocks.iter().flatten().copied().collect();
        all.chunks_exact(16)
            .filter_map(|c| <[u8; 16]>::try_from(c).ok())
            .map(Gid::from_bytes)
            .collect()
    }

    /// The query this row asks.
    pub fn query(&self) -> MultiPathQuery {
        let m = self.mask();
        let mask = CARRIED
            .iter()
            .filter(|(a, _)| m & a != 0)
            .fold(0, |acc, (_, b)| acc | b);
        let gids = self.gids();
        let s = usize::from(self.sgid_count);
        let d = usize::from(self.dgid_count);
        let sgids: Vec<Gid> = gids.iter().take(s).copied().collect();
        let dgids: Vec<Gid> = gids.iter().skip(s).take(d).copied().collect();
        let t = &self.template;
        let record = (s + d <= MultiPathRecord::MAX_GIDS).then(|| {
            let head = MultiPathRecordHead {
                raw_traffic: t.raw_traffic,
                flow_label: t.flow_label,
                hop_limit: t.hop_limit,
                t_class: t.t_class,
                reversible: true,
                numb_path: t.numb_path,
                p_key: t.p_key,
                sl: t.sl,
                mtu_selector: t.mtu_selector,
                mtu: t.mtu,
                rate_selector: t.rate_selector,
                rate: t.rate,
                packet_life_time_selector: t.packet_life_time_selector,
                packet_life_time: t.packet_life_time,
                independence_selector: self.independence_selector,
                sgid_count: self.sgid_count,
                dgid_count: self.dgid_count,
                ..MultiPathRecordHead::default()
            };
            let sdgid = sgids.iter().chain(&dgids).copied().collect();
            // The counts are part of every MultiPathRecord query; OpenSM
            // also wants NumbPath (default: one path per pair, as asked
            // pair by pair).
            let mut mask = m | mp::SGID_COUNT | mp::DGID_COUNT | mp::REVERSIBLE;
            let mut rec = MultiPathRecord { head, sdgid };
            if m & mp::NUMB_PATH == 0 {
                rec.head.numb_path = u8::try_from(s * d).unwrap_or(127).min(127);
                mask |= mp::NUMB_PATH;
            }
            (rec, mask)
        });
        MultiPathQuery {
            template: t.clone(),
            mask,
            sgids,
            dgids,
            numb_path: (m & mp::NUMB_PATH != 0).then_some(t.numb_path),
            record,
        }
    }
}

impl RowData for MultiPathReq {
    fn set(&mut self, column: u32, v: &Value) -> Result<(), SetError> {
        let t = &mut self.template;
        let bit = match column {
            COMP_MASK => {
                self.comp_mask = Some(u64::from_be_bytes(octets::<8>(v)?));
                return Ok(());
            }
            6 => {
                t.raw_traffic = unsigned(v, 1)? == 1;
                mp::RAW_TRAFFIC
            }
            7 => {
                let [a, b, c] = octets::<3>(v)?;
                t.flow_label = u32::from_be_bytes([0, a, b, c]) & 0xF_FFFF;
                mp::FLOW_LABEL
            }
            8 => {
                t.hop_limit = u8_of(unsigned(v, 255)?);
                mp::HOP_LIMIT
            }
            9 => {
                t.t_class = u8_of(unsigned(v, 255)?);
                mp::T_CLASS
            }
            10 => {
                t.numb_path = u8_of(unsigned(v, 127)?);
                mp::NUMB_PATH
            }
            11 => {
                t.p_key = PKey(u16::try_from(unsigned(v, 65535)?).unwrap_or(0));
                mp::P_KEY
            }
            12 => {
                t.sl = u8_of(unsigned(v, 15)?);
                mp::SL
            }
            13 => {
                t.mtu_selector = u8_of(unsigned(v, 3)?);
                mp::MTU_SELECTOR
            }
            14 => {
                t.mtu = match v {
                    Value::Integer(i) if (1..=5).contains(i) => u8::try_from(*i).unwrap_or(0),
                    Value::Integer(_) => return Err(SetError::WrongValue),
                    _ => return Err(SetError::WrongType),
                };
                mp::MTU
            }
            15 => {
                t.rate_selector = u8_of(unsigned(v, 3)?);
                mp::RATE_SELECTOR
            }
            16 => {
                t.rate = u8_of(unsigned(v, 63)?);
                mp::RATE
            }
            17 => {
                t.packet_life_time_selector = u8_of(unsigned(v, 3)?);
                mp::PACKET_LIFE_TIME_SELECTOR
            }
            18 => {
                t.packet_life_time = u8_of(unsigned(v, 63)?);
                mp::PACKET_LIFE_TIME
            }
            19 => {
                self.independence_selector = u8_of(unsigned(v, 3)?);
                mp::INDEPENDENCE_SELECTOR
            }
            20 => {
                self.sgid_count = u8_of(unsigned(v, 255)?);
                mp::SGID_COUNT
            }
            21 => {
                self.dgid_count = u8_of(unsigned(v, 255)?);
                mp::DGID_COUNT
            }
            FIRST_BLOCK..=LAST_BLOCK => {
                let b = match v {
                    Value::OctetString(b) if b.len() <= BLOCK_MAX => b.clone(),
                    Value::OctetString(_) => return Err(SetError::WrongLength),
                    _ => return Err(SetError::WrongType),
                };
                let slot = self
                    .blocks
                    .get_mut((column - FIRST_BLOCK) as usize)
                    .ok_or(SetError::NotWritable)?;
                *slot = b;
                return Ok(());
            }
            _ => return Err(SetError::NotWritable),
        };
        self.set_mask |= bit;
        Ok(())
    }

    /// At least one source and one destination GID, and the blocks hold
    /// as many GIDs as SGIDCount + DGIDCount say.
    fn ready(&self) -> bool {
        let (s, d) = (usize::from(self.sgid_count), usize::from(self.dgid_count));
        s >= 1 && d >= 1 && self.gids().len() >= s + d
    }
}

impl ReqKind for MultiPathReq {
    const KIND: Kind = Kind::MultiPath;
    const ENTRY: &'static [u32] = o::IB_SM_MULTI_PATH_REQ_ENTRY;
    const LAST_COLUMN: u32 = LAST_BLOCK;
    fn table(s: &Sessions) -> &snmp::rowstatus::RowTable<Self> {
        &s.multipath
    }
    fn created(&self) -> Instant {
        self.created
    }
    fn set_created(&mut self, t: Instant) {
        self.created = t;
    }
    fn column(&self, column: u32) -> Option<Value> {
        let t = &self.template;
        Some(match column {
            COMP_MASK => bytes(&self.mask().to_be_bytes()),
            6 => gauge(u8::from(t.raw_traffic)),
            7 => bytes(&t.flow_label.to_be_bytes()[1..]),
            8 => gauge(t.hop_limit),
            9 => gauge(t.t_class),
            10 => gauge(t.numb_path),
            11 => gauge(t.p_key.0),
            12 => gauge(t.sl),
            13 => gauge(t.mtu_selector),
            14 => Value::Integer(i32::from(t.mtu)),
            15 => gauge(t.rate_selector),
            16 => gauge(t.rate),
            17 => gauge(t.packet_life_time_selector),
            18 => gauge(t.packet_life_time),
            19 => gauge(self.independence_selector),
            20 => gauge(self.sgid_count),
            21 => gauge(self.dgid_count),
            FIRST_BLOCK..=LAST_BLOCK => bytes(self.blocks.get((column - FIRST_BLOCK) as usize)?),
            _ => return None,
        })
    }
    fn change(c: Vec<RowChange<Self>>) -> RequestChange {
        RequestChange::MultiPath(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gids_come_from_the_blocks_in_order() {
        let mut r = MultiPathReq::default();
        let g = |n: u8| {
            let mut b = vec![0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
            b.push(n);
            b
        };
        r.set(20, &Value::Gauge32(1)).unwrap();
        r.set(21, &Value::Gauge32(2)).unwrap();
        assert!(!r.ready());
        r.set(22, &Value::OctetString([g(1), g(2)].concat()))
            .unwrap();
        assert!(!r.ready());
        r.set(23, &Value::OctetString(g(3))).unwrap();
        assert!(r.ready());
        r.set(12, &Value::Gauge32(0)).unwrap();
        let q = r.query();
        assert_eq!(q.sgids.len(), 1);
        assert_eq!(q.dgids.len(), 2);
        assert_eq!(q.mask, pr::SL);
        assert_eq!(q.pairs().len(), 2);
        assert_eq!(q.pairs()[1].0.dgid.to_bytes()[15], 3);
        assert_eq!(
            r.set(22, &Value::OctetString(vec![0; 257])),
            Err(SetError::WrongLength)
        );
    }
}
