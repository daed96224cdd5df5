//! ibSmMultiPathReqTable rows: a MultiPathRecord template (IBA 15.2.5.20)
//! with its source and destination GIDs in the SDGIDBlock columns, and the
//! query it becomes: one PathRecord query per (source, destination) pair,
//! the components of the MultiPathRecord mask carried over, at most
//! NumbPath paths in all when NumbPath is in the mask.

use ib::mad::sa::comp::{multi_path_record as mp, path_record as pr};
use ib::mad::sa::{MultiPathRecord, MultiPathRecordHead, PathRecord};
use ib::model::Snapshot;
use ib::types::Gid;
use snmp::mib::SetError;
use snmp::rowstatus::RowData;
use snmp::value::Value;

use super::answer::{Answer, Kind};
use super::columns::{self, bytes, gauge, num8, put, ReqCol};
use super::path::{component, CompMask};
use super::{ReqKind, COMP_MASK};
use crate::core::oids::ib_sm_mib as o;
use std::time::Instant;

/// SDGIDBlock1..32.
const BLOCKS: usize = 32;

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
    pub comp_mask: CompMask,
    pub created: Instant,
}

impl Default for MultiPathReq {
    fn default() -> Self {
        MultiPathReq {
            template: PathRecord::default(),
            independence_selector: 0,
            sgid_count: 0,
            dgid_count: 0,
            blocks: vec![Vec::new(); BLOCKS],
            comp_mask: CompMask::default(),
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
        self.comp_mask.get()
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

/// The multipath table's PathRecord components ([`component`]: the same
/// setters as ibSmPathReqTable's), in column order.
const TEMPLATE_COLS: &[ReqCol<PathRecord>] = &[
    component::RAW_TRAFFIC.at(o::IB_SM_MULTI_PATH_REQ_RAW_TRAFFIC, mp::RAW_TRAFFIC),
    component::FLOW_LABEL.at(o::IB_SM_MULTI_PATH_REQ_FLOW_LABEL, mp::FLOW_LABEL),
    component::HOP_LIMIT.at(o::IB_SM_MULTI_PATH_REQ_HOP_LIMIT, mp::HOP_LIMIT),
    component::T_CLASS.at(o::IB_SM_MULTI_PATH_REQ_T_CLASS, mp::T_CLASS),
    component::NUMB_PATH.at(o::IB_SM_MULTI_PATH_REQ_NUMB_PATH, mp::NUMB_PATH),
    component::P_KEY.at(o::IB_SM_MULTI_PATH_REQ_P_KEY, mp::P_KEY),
    component::SL.at(o::IB_SM_MULTI_PATH_REQ_SL, mp::SL),
    // Unsigned32 selectors here (INTEGER in the path table).
    ReqCol {
        read: |t| gauge(t.mtu_selector),
        ..component::MTU_SELECTOR.at(o::IB_SM_MULTI_PATH_REQ_MTU_SEL, mp::MTU_SELECTOR)
    },
    component::MTU.at(o::IB_SM_MULTI_PATH_REQ_MTU, mp::MTU),
    ReqCol {
        read: |t| gauge(t.rate_selector),
        ..component::RATE_SELECTOR.at(o::IB_SM_MULTI_PATH_REQ_RATE_SEL, mp::RATE_SELECTOR)
    },
    component::RATE.at(o::IB_SM_MULTI_PATH_REQ_RATE, mp::RATE),
    ReqCol {
        read: |t| gauge(t.packet_life_time_selector),
        ..component::PACKET_LIFE_TIME_SELECTOR.at(
            o::IB_SM_MULTI_PATH_REQ_PKT_LIFE_TIME_SEL,
            mp::PACKET_LIFE_TIME_SELECTOR,
        )
    },
    component::PACKET_LIFE_TIME.at(o::IB_SM_MULTI_PATH_REQ_PKT_LIFE_TIME, mp::PACKET_LIFE_TIME),
];

/// SDGIDBlock`I + 1`: a slice of the GID list (the MIB's SIZE bounds it).
const fn block<const I: usize>(oid: &'static [u32]) -> ReqCol<MultiPathReq> {
    ReqCol {
        oid,
        bit: 0,
        read: |r| bytes(r.blocks.get(I).map_or(&[][..], Vec::as_slice)),
        write: |r, v| {
            let slot = r.blocks.get_mut(I).ok_or(SetError::NotWritable)?;
            *slot = match v {
                Value::OctetString(b) => b.clone(),
                _ => return Err(SetError::WrongType),
            };
            Ok(())
        },
    }
}

/// The multipath request's own columns (not PathRecord components).
const OWN_COLS: &[ReqCol<MultiPathReq>] = &[
    ReqCol {
        oid: o::IB_SM_MULTI_PATH_REQ_INDEP_SEL,
        bit: mp::INDEPENDENCE_SELECTOR,
        read: |r| gauge(r.independence_selector),
        write: |r, v| put(&mut r.independence_selector, num8(v)),
    },
    ReqCol {
        oid: o::IB_SM_MULTI_PATH_REQ_SGID_COUNT,
        bit: mp::SGID_COUNT,
        read: |r| gauge(r.sgid_count),
        write: |r, v| put(&mut r.sgid_count, num8(v)),
    },
    ReqCol {
        oid: o::IB_SM_MULTI_PATH_REQ_DGID_COUNT,
        bit: mp::DGID_COUNT,
        read: |r| gauge(r.dgid_count),
        write: |r, v| put(&mut r.dgid_count, num8(v)),
    },
    block::<0>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK1),
    block::<1>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK2),
    block::<2>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK3),
    block::<3>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK4),
    block::<4>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK5),
    block::<5>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK6),
    block::<6>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK7),
    block::<7>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK8),
    block::<8>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK9),
    block::<9>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK10),
    block::<10>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK11),
    block::<11>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK12),
    block::<12>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK13),
    block::<13>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK14),
    block::<14>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK15),
    block::<15>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK16),
    block::<16>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK17),
    block::<17>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK18),
    block::<18>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK19),
    block::<19>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK20),
    block::<20>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK21),
    block::<21>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK22),
    block::<22>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK23),
    block::<23>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK24),
    block::<24>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK25),
    block::<25>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK26),
    block::<26>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK27),
    block::<27>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK28),
    block::<28>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK29),
    block::<29>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK30),
    block::<30>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK31),
    block::<31>(o::IB_SM_MULTI_PATH_REQ_SDGID_BLOCK32),
];

impl RowData for MultiPathReq {
    fn set(&mut self, column: u32, v: &Value) -> Result<(), SetError> {
        if column == COMP_MASK {
            return self.comp_mask.put(o::IB_SM_MULTI_PATH_REQ_COMP_MASK, v);
        }
        let bit = columns::write(TEMPLATE_COLS, &mut self.template, column, v)
            .or_else(|| columns::write(OWN_COLS, self, column, v))
            .unwrap_or(Err(SetError::NotWritable))?;
        self.comp_mask.columns |= bit;
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
    fn last_column() -> u32 {
        columns::last_column(OWN_COLS).max(columns::last_column(TEMPLATE_COLS))
    }
    created_field!();
    fn column(&self, column: u32) -> Option<Value> {
        if column == COMP_MASK {
            return Some(bytes(&self.mask().to_be_bytes()));
        }
        match columns::find(TEMPLATE_COLS, column) {
            Some(c) => Some((c.read)(&self.template)),
            None => columns::find(OWN_COLS, column).map(|c| (c.read)(self)),
        }
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
