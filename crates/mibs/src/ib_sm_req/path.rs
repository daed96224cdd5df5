//! ibSmPathReqTable rows: a PathRecord template (IBA 15.2.5.16) and its
//! ComponentMask, and the PathRecord columns both path tables show.

use std::time::Instant;

use ib::mad::sa::{comp::path_record as pr, PathRecord};
use ib::model::Snapshot;
use ib::types::{Gid, Lid, PKey};
use snmp::mib::SetError;
use snmp::rowstatus::RowData;
use snmp::value::Value;

use super::store::{Answer, Kind, RequestChange, Sessions};
use super::tables::ReqKind;
use super::{bytes, gauge, integer, octets, u8_of, unsigned, COMP_MASK, CREATION_TIME};
use crate::oids::ib_sm_mib as o;
use snmp::rowstatus::{RowChange, RowTable};

/// An ibSmPathReqTable row: a PathRecord template and its component mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathReq {
    pub template: PathRecord,
    /// ibSmPathReqRowCompMask as set; None: the components of the columns set.
    pub comp_mask: Option<u64>,
    /// The components of the columns set.
    pub set_mask: u64,
    pub created: Instant,
}

impl Default for PathReq {
    fn default() -> Self {
        PathReq {
            template: PathRecord::default(),
            comp_mask: None,
            set_mask: 0,
            created: Instant::now(),
        }
    }
}

impl PathReq {
    /// The ComponentMask the request is asked with.
    pub fn mask(&self) -> u64 {
        self.comp_mask.unwrap_or(self.set_mask)
    }
}

impl RowData for PathReq {
    fn set(&mut self, column: u32, v: &Value) -> Result<(), SetError> {
        let t = &mut self.template;
        let bit = match column {
            COMP_MASK => {
                self.comp_mask = Some(u64::from_be_bytes(octets::<8>(v)?));
                return Ok(());
            }
            6 => {
                t.dgid = Gid::from_bytes(octets::<16>(v)?);
                pr::DGID
            }
            7 => {
                t.sgid = Gid::from_bytes(octets::<16>(v)?);
                pr::SGID
            }
            8 => {
                t.numb_path = u8_of(unsigned(v, 127)?);
                pr::NUMB_PATH
            }
            9 | 10 => {
                let lid = unsigned(v, 65535)?;
                if lid == 0 {
                    return Err(SetError::WrongValue);
                }
                let lid = Lid(u16::try_from(lid).map_err(|_| SetError::WrongValue)?);
                if column == 9 {
                    t.dlid = lid;
                    pr::DLID
                } else {
                    t.slid = lid;
                    pr::SLID
                }
            }
            11 => {
                t.raw_traffic = unsigned(v, 1)? == 1;
                pr::RAW_TRAFFIC
            }
            12 => {
                let [a, b, c] = octets::<3>(v)?;
                t.flow_label = u32::from_be_bytes([0, a, b, c]) & 0xF_FFFF;
                pr::FLOW_LABEL
            }
            13 => {
                t.hop_limit = u8_of(unsigned(v, 255)?);
                pr::HOP_LIMIT
            }
            14 => {
                t.t_class = u8_of(unsigned(v, 255)?);
                pr::T_CLASS
            }
            15 => {
                t.p_key = PKey(u16::try_from(unsigned(v, 65535)?).unwrap_or(0));
                pr::P_KEY
            }
            16 => {
                t.sl = u8_of(unsigned(v, 15)?);
                pr::SL
            }
            17 => {
                t.mtu_selector = integer(v, 0, 3)?;
                pr::MTU_SELECTOR
            }
            18 => {
                t.mtu = integer(v, 1, 5)?;
                pr::MTU
            }
            19 => {
                t.rate_selector = integer(v, 0, 3)?;
                pr::RATE_SELECTOR
            }
            20 => {
                t.rate = u8_of(unsigned(v, 63)?);
                pr::RATE
            }
            21 => {
                t.packet_life_time_selector = integer(v, 0, 3)?;
                pr::PACKET_LIFE_TIME_SELECTOR
            }
            22 => {
                t.packet_life_time = u8_of(unsigned(v, 63)?);
                pr::PACKET_LIFE_TIME
            }
            23 => {
                t.preference = u8_of(unsigned(v, 255)?);
                pr::PREFERENCE
            }
            CREATION_TIME => return Err(SetError::NotWritable),
            _ => return Err(SetError::NotWritable),
        };
        self.set_mask |= bit;
        Ok(())
    }

    /// A path needs a source and a destination.
    fn ready(&self) -> bool {
        let m = self.mask();
        m & (pr::SLID | pr::SGID) != 0 && m & (pr::DLID | pr::DGID) != 0
    }
}

/// The PathRecord columns shared by the request and result tables, by the
/// request table's column number.
pub(super) fn path_column(t: &PathRecord, column: u32) -> Option<Value> {
    Some(match column {
        6 => bytes(&t.dgid.to_bytes()),
        7 => bytes(&t.sgid.to_bytes()),
        8 => gauge(t.numb_path),
        9 => gauge(t.dlid.0),
        10 => gauge(t.slid.0),
        11 => gauge(u8::from(t.raw_traffic)),
        12 => bytes(&t.flow_label.to_be_bytes()[1..]),
        13 => gauge(t.hop_limit),
        14 => gauge(t.t_class),
        15 => gauge(t.p_key.0),
        16 => gauge(t.sl),
        17 => Value::Integer(i32::from(t.mtu_selector)),
        18 => Value::Integer(i32::from(t.mtu)),
        19 => Value::Integer(i32::from(t.rate_selector)),
        20 => gauge(t.rate),
        21 => Value::Integer(i32::from(t.packet_life_time_selector)),
        22 => gauge(t.packet_life_time),
        23 => gauge(t.preference),
        _ => return None,
    })
}

/// PathRecords from the snapshot's routing (no SA: the simulator).
pub fn local_paths(s: &Snapshot, template: &PathRecord, mask: u64) -> Result<Answer, String> {
    ib::model::paths::path_records(s, template, mask)
        .map(Answer::Paths)
        .map_err(|e| e.to_string())
}

impl ReqKind for PathReq {
    const KIND: Kind = Kind::Path;
    const ENTRY: &'static [u32] = o::IB_SM_PATH_REQ_ENTRY;
    const LAST_COLUMN: u32 = 23;
    fn table(s: &Sessions) -> &RowTable<Self> {
        &s.path
    }
    fn created(&self) -> Instant {
        self.created
    }
    fn set_created(&mut self, t: Instant) {
        self.created = t;
    }
    fn column(&self, column: u32) -> Option<Value> {
        match column {
            COMP_MASK => Some(bytes(&self.mask().to_be_bytes())),
            c => path_column(&self.template, c),
        }
    }
    fn change(c: Vec<RowChange<Self>>) -> RequestChange {
        RequestChange::Path(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_request_columns_build_the_mask() {
        let mut r = PathReq::default();
        assert!(!r.ready());
        r.set(10, &Value::Gauge32(3)).unwrap();
        r.set(9, &Value::Gauge32(4)).unwrap();
        assert!(r.ready());
        assert_eq!(r.mask(), pr::SLID | pr::DLID);
        assert_eq!(r.set(9, &Value::Gauge32(0)), Err(SetError::WrongValue));
        assert_eq!(r.set(16, &Value::Gauge32(16)), Err(SetError::WrongValue));
        assert_eq!(r.set(18, &Value::Integer(6)), Err(SetError::WrongValue));
        assert_eq!(
            r.set(5, &Value::OctetString(vec![0; 7])),
            Err(SetError::WrongLength)
        );
        r.set(5, &Value::OctetString(pr::SLID.to_be_bytes().to_vec()))
            .unwrap();
        assert!(!r.ready(), "the CompMask column rules");
    }
}
