//! ibSmPathReqTable rows: a PathRecord template (IBA 15.2.5.16) and its
//! ComponentMask, and the PathRecord columns both path tables show.

use std::time::Instant;

use ib::mad::sa::{comp::path_record as pr, PathRecord};
use ib::model::Snapshot;
use ib::types::{Gid, Lid, PKey};
use snmp::mib::SetError;
use snmp::rowstatus::RowData;
use snmp::value::Value;

use super::answer::{Answer, Kind};
use super::columns::{self, bytes, checked, gauge, int, num, num16, num8, octets, put, ReqCol};
use super::{ReqKind, COMP_MASK};
use crate::core::oids::ib_sm_mib as o;

/// A path request's ComponentMask (both path tables): as its CompMask
/// column set it, else the components of the columns set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompMask {
    /// The CompMask column as set.
    pub set: Option<u64>,
    /// The components of the columns set.
    pub columns: u64,
}

impl CompMask {
    /// The ComponentMask the request is asked with.
    pub fn get(&self) -> u64 {
        self.set.unwrap_or(self.columns)
    }

    /// A Set of the CompMask column `oid` (8 octets, big-endian).
    pub(super) fn put(&mut self, oid: &[u32], v: &Value) -> Result<(), SetError> {
        checked(oid, v)?;
        self.set = Some(u64::from_be_bytes(octets::<8>(v)?));
        Ok(())
    }
}

/// An ibSmPathReqTable row: a PathRecord template and its component mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathReq {
    pub template: PathRecord,
    pub comp_mask: CompMask,
    pub created: Instant,
}

impl Default for PathReq {
    fn default() -> Self {
        PathReq {
            template: PathRecord::default(),
            comp_mask: CompMask::default(),
            created: Instant::now(),
        }
    }
}

impl PathReq {
    /// The ComponentMask the request is asked with.
    pub fn mask(&self) -> u64 {
        self.comp_mask.get()
    }
}

impl RowData for PathReq {
    fn set(&mut self, column: u32, v: &Value) -> Result<(), SetError> {
        if column == COMP_MASK {
            return self.comp_mask.put(o::IB_SM_PATH_REQ_ROW_COMP_MASK, v);
        }
        let bit = columns::write(PATH_COLS, &mut self.template, column, v)
            .unwrap_or(Err(SetError::NotWritable))?;
        self.comp_mask.columns |= bit;
        Ok(())
    }

    /// A path needs a source and a destination.
    fn ready(&self) -> bool {
        let m = self.mask();
        m & (pr::SLID | pr::SGID) != 0 && m & (pr::DLID | pr::DGID) != 0
    }
}

/// A PathRecord component as both path request tables (and the result
/// tables) read and write it: one setter per component, whichever table
/// names it.
#[derive(Clone, Copy)]
pub(super) struct Component {
    pub read: fn(&PathRecord) -> Value,
    pub write: fn(&mut PathRecord, &Value) -> Result<(), SetError>,
}

impl Component {
    /// This component as the column `oid` setting ComponentMask bit `bit`.
    pub(super) const fn at(self, oid: &'static [u32], bit: u64) -> ReqCol<PathRecord> {
        ReqCol {
            oid,
            bit,
            read: self.read,
            write: self.write,
        }
    }
}

/// The PathRecord components (IBA 15.2.5.16) the request tables name.
pub(super) mod component {
    use super::*;

    /// An 8-bit component, read as Unsigned32 (or INTEGER with `int`).
    macro_rules! byte {
        ($f:ident) => {
            Component {
                read: |t| gauge(t.$f),
                write: |t, v| put(&mut t.$f, num8(v)),
            }
        };
        ($f:ident, int) => {
            Component {
                read: |t| int(t.$f),
                write: |t, v| put(&mut t.$f, num8(v)),
            }
        };
    }

    fn lid(v: &Value) -> Result<Lid, SetError> {
        num16(v).map(Lid)
    }

    pub const DGID: Component = Component {
        read: |t| bytes(&t.dgid.to_bytes()),
        write: |t, v| put(&mut t.dgid, octets::<16>(v).map(Gid::from_bytes)),
    };
    pub const SGID: Component = Component {
        read: |t| bytes(&t.sgid.to_bytes()),
        write: |t, v| put(&mut t.sgid, octets::<16>(v).map(Gid::from_bytes)),
    };
    pub const NUMB_PATH: Component = byte!(numb_path);
    pub const DLID: Component = Component {
        read: |t| gauge(t.dlid.0),
        write: |t, v| put(&mut t.dlid, lid(v)),
    };
    pub const SLID: Component = Component {
        read: |t| gauge(t.slid.0),
        write: |t, v| put(&mut t.slid, lid(v)),
    };
    pub const RAW_TRAFFIC: Component = Component {
        read: |t| gauge(u8::from(t.raw_traffic)),
        write: |t, v| put(&mut t.raw_traffic, num(v).map(|n| n == 1)),
    };
    pub const FLOW_LABEL: Component = Component {
        read: |t| bytes(t.flow_label.to_be_bytes().get(1..).unwrap_or_default()),
        write: |t, v| {
            let [a, b, c] = octets::<3>(v)?;
            t.flow_label = u32::from_be_bytes([0, a, b, c]) & 0xF_FFFF;
            Ok(())
        },
    };
    pub const HOP_LIMIT: Component = byte!(hop_limit);
    pub const T_CLASS: Component = byte!(t_class);
    pub const P_KEY: Component = Component {
        read: |t| gauge(t.p_key.0),
        write: |t, v| put(&mut t.p_key, num16(v).map(PKey)),
    };
    pub const SL: Component = byte!(sl);
    // The path table types the selectors INTEGER, the multipath table
    // Unsigned32 (its columns read them as Gauge32).
    pub const MTU_SELECTOR: Component = byte!(mtu_selector, int);
    pub const MTU: Component = byte!(mtu, int);
    pub const RATE_SELECTOR: Component = byte!(rate_selector, int);
    pub const RATE: Component = byte!(rate);
    pub const PACKET_LIFE_TIME_SELECTOR: Component = byte!(packet_life_time_selector, int);
    pub const PACKET_LIFE_TIME: Component = byte!(packet_life_time);
    pub const PREFERENCE: Component = byte!(preference);
}

/// ibSmPathReqTable's PathRecord columns, in column order; the result
/// tables show the same components in the same order from column 4 on.
pub(super) const PATH_COLS: &[ReqCol<PathRecord>] = &[
    component::DGID.at(o::IB_SM_PATH_REQ_DST_GID, pr::DGID),
    component::SGID.at(o::IB_SM_PATH_REQ_SRC_GID, pr::SGID),
    component::NUMB_PATH.at(o::IB_SM_PATH_REQ_NUMB_PATH, pr::NUMB_PATH),
    component::DLID.at(o::IB_SM_PATH_REQ_DST_LID, pr::DLID),
    component::SLID.at(o::IB_SM_PATH_REQ_SRC_LID, pr::SLID),
    component::RAW_TRAFFIC.at(o::IB_SM_PATH_REQ_RAW_TRAFFIC, pr::RAW_TRAFFIC),
    component::FLOW_LABEL.at(o::IB_SM_PATH_REQ_FLOW_LABEL, pr::FLOW_LABEL),
    component::HOP_LIMIT.at(o::IB_SM_PATH_REQ_HOP_LIMIT, pr::HOP_LIMIT),
    component::T_CLASS.at(o::IB_SM_PATH_REQ_T_CLASS, pr::T_CLASS),
    component::P_KEY.at(o::IB_SM_PATH_REQ_P_KEY, pr::P_KEY),
    component::SL.at(o::IB_SM_PATH_REQ_SL, pr::SL),
    component::MTU_SELECTOR.at(o::IB_SM_PATH_REQ_MTU_SEL, pr::MTU_SELECTOR),
    component::MTU.at(o::IB_SM_PATH_REQ_MTU, pr::MTU),
    component::RATE_SELECTOR.at(o::IB_SM_PATH_REQ_RATE_SEL, pr::RATE_SELECTOR),
    component::RATE.at(o::IB_SM_PATH_REQ_RATE, pr::RATE),
    component::PACKET_LIFE_TIME_SELECTOR.at(
        o::IB_SM_PATH_REQ_PKT_LIFE_TIME_SEL,
        pr::PACKET_LIFE_TIME_SELECTOR,
    ),
    component::PACKET_LIFE_TIME.at(o::IB_SM_PATH_REQ_PKT_LIFE_TIME, pr::PACKET_LIFE_TIME),
    component::PREFERENCE.at(o::IB_SM_PATH_REQ_PREFERENCE, pr::PREFERENCE),
];

/// PathRecords from the snapshot's routing (no SA: the simulator).
pub fn local_paths(s: &Snapshot, template: &PathRecord, mask: u64) -> Result<Answer, String> {
    ib::model::paths::path_records(s, template, mask)
        .map(Answer::Paths)
        .map_err(|e| e.to_string())
}

impl ReqKind for PathReq {
    const KIND: Kind = Kind::Path;
    const ENTRY: &'static [u32] = o::IB_SM_PATH_REQ_ENTRY;
    fn last_column() -> u32 {
        columns::last_column(PATH_COLS)
    }
    created_field!();
    fn column(&self, column: u32) -> Option<Value> {
        match column {
            COMP_MASK => Some(bytes(&self.mask().to_be_bytes())),
            c => columns::find(PATH_COLS, c).map(|col| (col.read)(&self.template)),
        }
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
