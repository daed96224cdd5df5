//! SA queries to the master SM for what only the SM knows: SMs (SMInfoRecord), multicast
//! groups (MCMemberRecord), partitions (PKeyTableRecord, trusted with the SM_Key), the
//! GUIDs the SM assigned each port, alias GUIDs included (GUIDInfoRecord), services
//! (ServiceRecord), paths on demand (PathRecord), and InformInfo subscriptions.
//!
//! Large answers come through RMPP on real hardware (the kernel reassembles them for an
//! agent registered with RMPP version 1); ibsim cuts them to their first packet, so
//! partition tables and GUIDInfo that do not fit one packet are read from the ports'
//! own SMAs instead ([`sma`]).

use std::collections::HashMap;

mod guids;
mod pkeys;
mod sma;
pub use pkeys::PKeyRead;
pub use sma::{Blocks, TableBlocks};

use super::req::{self, GET, GET_TABLE, SET};
use super::transport::{Transport, TxError};
use crate::mad::sa::{
    attr, comp, GuidInfoRecord, InformInfo, McMemberRecord, PathRecord, ServiceRecord, SmInfoRecord,
};
use crate::mad::smp::SmInfo;
use crate::mad::Codec;
use crate::types::{Gid, Guid, Lid};

/// The traps we subscribe to where the SM delivers Reports: GID in/out of service (64,
/// 65), multicast group create/delete (66, 67), link state / integrity / buffer overrun /
/// flow control (128-131), capability and system image changes (144, 145), M_Key, P_Key,
/// Q_Key violations (256-259).
pub const TRAPS: [u16; 14] = [
    64, 65, 66, 67, 128, 129, 130, 131, 144, 145, 256, 257, 258, 259,
];

/// Everything the SA told us in one sweep.
#[derive(Debug, Clone, Default)]
pub struct SaView {
    pub sms: Vec<SmInfoRecord>,
    /// One record per multicast group (OpenSM's answer to an untrusted requester).
    pub mc_groups: Vec<McMemberRecord>,
    /// One record per member port (trusted requesters only).
    pub mc_members: Vec<McMemberRecord>,
    pub services: Vec<ServiceRecord>,
    /// (LID, port) -> P_Keys of block 0 (plus further blocks when present).
    pub pkeys: HashMap<(u16, u8), Vec<u16>>,
    /// LID -> the port's GUIDs by GUIDInfo index (8 per block the SM returned; index 0
    /// is the port GUID, zeros are unassigned entries).
    pub guids: HashMap<u16, Vec<Guid>>,
    pub failures: u64,
    pub errors: Vec<String>,
    /// GetTable answers cut short this sweep (an RMPP transfer that did not
    /// complete: more records were sent than arrived), by attribute name. A
    /// cut group or service table counts as failed ([`SaFailed`]): the last
    /// whole answer stands, never part of one as the whole table.
    pub cut: Vec<&'static str>,
    /// Queries that failed this sweep: their fields above are empty for want
    /// of an answer, not because the SA has none (the source keeps its last).
    pub failed: SaFailed,
    /// How the partition tables were read this sweep (None: not asked).
    pub pkey_read: Option<PKeyRead>,
}

/// Which parts of an [`SaView`] got no answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaFailed {
    pub mc_groups: bool,
    pub mc_members: bool,
    pub services: bool,
    /// (LID, port) whose PKeyTableRecord query failed.
    pub pkeys: Vec<(u16, u8)>,
    /// LIDs whose GUIDInfoRecord query failed.
    pub guids: Vec<u16>,
}

impl SaView {
    /// Fills what failed this sweep from `last` (the last good view), so that an
    /// unanswered query reads as what the SA said before, not as nothing.
    pub fn keep_failed_from(&mut self, last: &SaView) {
        let f = &self.failed;
        if f.mc_groups {
            self.mc_groups.clone_from(&last.mc_groups);
        }
        if f.mc_members {
            self.mc_members.clone_from(&last.mc_members);
        }
        if f.services {
            self.services.clone_from(&last.services);
        }
        for k in &f.pkeys {
            if let Some(keys) = last.pkeys.get(k) {
                self.pkeys.insert(*k, keys.clone());
            }
        }
        for lid in &f.guids {
            if let Some(g) = last.guids.get(lid) {
                self.guids.insert(*lid, g.clone());
            }
        }
    }
}

/// The records of a GetTable answer, and whether it was cut short.
#[derive(Debug, Clone, PartialEq)]
pub struct Table<T> {
    pub records: Vec<T>,
    /// The answer ends inside a record ([`req::sa_truncated`]): an RMPP transfer
    /// that did not complete. `records` are the whole ones that arrived.
    pub cut: bool,
}

fn get_table<T: Codec>(
    tr: &mut Transport,
    attr_id: u16,
    sm_lid: u16,
    sm_key: u64,
    mask: u64,
    template: &[u8],
) -> Result<Table<T>, TxError> {
    let mad = tr.call(req::sa(GET_TABLE, attr_id, sm_lid, sm_key, mask, template))?;
    Ok(Table {
        records: records(&mad),
        cut: req::sa_truncated(&mad),
    })
}

/// The whole records of an SA answer that decode.
fn records<T: Codec>(mad: &[u8]) -> Vec<T> {
    req::sa_records(mad)
        .into_iter()
        .filter_map(|r| T::decode(r).ok())
        .collect()
}

/// Hands each of `end_ports` its table from a whole-fabric answer
/// (`tables`, by `key`) through `put`; returns the ports the answer lacks,
/// to be asked one by one.
fn take_tables<K: Ord, T>(
    end_ports: &[(u16, u8)],
    mut tables: std::collections::BTreeMap<K, T>,
    key: impl Fn(&(u16, u8)) -> K,
    mut put: impl FnMut((u16, u8), T),
) -> Vec<(u16, u8)> {
    let mut rest = Vec::new();
    for k in end_ports {
        match tables.remove(&key(k)) {
            Some(t) => put(*k, t),
            None => rest.push(*k),
        }
    }
    rest
}

/// A whole table's records; a cut one is noted in `v.cut` (the source counts
/// and logs it once per attribute, not as a failure every sweep) and
/// reads as failed (`Err(())`: the caller keeps the last whole answer).
fn whole<T>(v: &mut SaView, what: &'static str, t: Table<T>) -> Result<Vec<T>, ()> {
    if !t.cut {
        return Ok(t.records);
    }
    v.cut.push(what);
    tracing::debug!(records = t.records.len(), "{what}: answer cut short");
    Err(())
}

/// Queries the SA: SMs, multicast groups, services, and the per-port tables
/// `t` names (partition tables only when `sm_key` is given: OpenSM answers
/// PKeyTableRecord to trusted requesters).
pub fn query(tr: &mut Transport, sm_lid: u16, sm_key: Option<u64>, t: &Tables) -> SaView {
    let mut v = SaView::default();
    let key = sm_key.unwrap_or(0);
    let note = |v: &mut SaView, what: &str, e: TxError| {
        v.failures += 1;
        if v.errors.len() < 16 {
            v.errors.push(format!("{what}: {e}"));
        }
    };
    match get_table::<SmInfoRecord>(tr, attr::SM_INFO_RECORD, sm_lid, key, 0, &[]) {
        // A cut list of SMs still says the SA answers: the SMs that arrived
        // (logged and counted as cut).
        Ok(t) => {
            if t.cut {
                v.cut.push("SMInfoRecord");
            }
            v.sms = t.records;
        }
        Err(e) => {
            note(&mut v, "SMInfoRecord", e);
            // The SM does not answer: skip the rest rather than time out on each.
            return v;
        }
    }
    // Untrusted, OpenSM answers one record per group (PortGID zero) of the
    // requester's partitions, empty groups included; trusted (the SM_Key), one
    // per member port of every group (none for a group nobody joined yet).
    match get_table::<McMemberRecord>(tr, attr::MC_MEMBER_RECORD, sm_lid, 0, 0, &[]) {
        Ok(t) => match whole(&mut v, GROUPS, t) {
            Ok(r) => v.mc_groups = r,
            Err(()) => v.failed.mc_groups = true,
        },
        Err(e) => {
            v.failed.mc_groups = true;
            note(&mut v, "MCMemberRecord", e);
        }
    }
    if key != 0 {
        match get_table::<McMemberRecord>(tr, attr::MC_MEMBER_RECORD, sm_lid, key, 0, &[]) {
            Ok(t) => match whole(&mut v, "MCMemberRecord (members)", t) {
                Ok(r) => v.mc_members = r,
                Err(()) => v.failed.mc_members = true,
            },
            Err(e) => {
                v.failed.mc_members = true;
                note(&mut v, "MCMemberRecord (members)", e);
            }
        }
    }
    match get_table::<ServiceRecord>(tr, attr::SERVICE_RECORD, sm_lid, key, 0, &[]) {
        Ok(t) => match whole(&mut v, "ServiceRecord", t) {
            Ok(r) => v.services = r,
            Err(()) => v.failed.services = true,
        },
        // OpenSM answers an empty table with status "no records" (0x0400) on a Get; on a
        // GetTable it returns zero records. Treat the status as empty.
        Err(TxError::Status(_)) => {}
        Err(e) => {
            v.failed.services = true;
            note(&mut v, "ServiceRecord", e);
        }
    }
    tables(tr, sm_lid, sm_key, t, &mut v);
    if v.cut.contains(&GROUPS) {
        groups_by_partition(tr, sm_lid, t.end_ports, &mut v);
    }
    v
}

/// The group table's name in [`SaView::cut`].
const GROUPS: &str = "MCMemberRecord (groups)";

/// A group table cut short asked again per P_Key of our ports (the groups an
/// untrusted requester sees are those of its partitions): each answer is
/// smaller. Whole only when every partition's answer is whole; else the
/// groups stay failed (the last whole answer stands).
fn groups_by_partition(tr: &mut Transport, sm_lid: u16, end_ports: &[(u16, u8)], v: &mut SaView) {
    // Our partitions must be whole to stand for the whole group table.
    if end_ports.iter().any(|k| v.failed.pkeys.contains(k)) {
        return;
    }
    let mut keys: Vec<u16> = end_ports
        .iter()
        .filter_map(|k| v.pkeys.get(k))
        .flatten()
        .map(|k| k & 0x7fff)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    if keys.is_empty() {
        return;
    }
    let mut groups = Vec::new();
    for key in keys {
        let t = McMemberRecord {
            // The full-member form: a limited query of a limited group matches nothing.
            p_key: crate::types::PKey(key | 0x8000),
            ..McMemberRecord::default()
        };
        let mut buf = [0u8; McMemberRecord::LEN];
        let _ = t.encode(&mut buf);
        let mask = comp::mc_member_record::P_KEY;
        match get_table::<McMemberRecord>(tr, attr::MC_MEMBER_RECORD, sm_lid, 0, mask, &buf) {
            Ok(t) if !t.cut => groups.extend(t.records),
            Ok(_) => {
                tracing::debug!(pkey = key, "group table of one partition cut short too");
                return;
            }
            // No group in this partition.
            Err(TxError::Status(0x0400)) => {}
            Err(e) => {
                tracing::debug!(pkey = key, "group table of one partition: {e}");
                return;
            }
        }
    }
    groups.sort_by_key(|g| g.mgid.0);
    groups.dedup_by_key(|g| g.mgid.0);
    v.mc_groups = groups;
    v.failed.mc_groups = false;
}

/// Which per-port tables a query reads, and how.
#[derive(Debug, Clone, Copy)]
pub struct Tables<'a> {
    /// The (LID, port) pairs whose GUIDInfo and (with the SM_Key) partition
    /// tables are read; empty: the caller keeps the last ones.
    pub end_ports: &'a [(u16, u8)],
    /// Many ports are asked (a table refresh): the partition tables are
    /// first asked in one GetTable of the whole fabric
    /// ([`pkeys::whole_fabric`]), and read per port (PKeyTable SMPs) only
    /// where that answer is cut, refused or lacks the port.
    pub whole_fabric: bool,
    /// Each end port's table sizes, for the SMP reads.
    pub blocks: &'a TableBlocks,
    /// This SA path is known to cut multi-packet answers (no RMPP
    /// reassembly): GUIDInfo tables longer than one packet are read from
    /// the SMAs at once.
    pub cuts_multi_packet: bool,
}

/// The GUIDInfo blocks and (with `sm_key`) partition tables of `t.end_ports` into `v`.
pub fn tables(tr: &mut Transport, sm_lid: u16, sm_key: Option<u64>, t: &Tables, v: &mut SaView) {
    let end_ports = t.end_ports;
    if let Some(sm_key) = sm_key {
        if t.whole_fabric {
            let rest = pkeys::whole_fabric(tr, sm_lid, sm_key, end_ports, v);
            pkeys::per_port(tr, &rest, t.blocks, v);
        } else {
            pkeys::per_port(tr, end_ports, t.blocks, v);
        }
    }
    // A multi-packet answer just came cut, or did before: tables that do not
    // fit one packet go to the SMAs without asking the SA first.
    let cuts = t.cuts_multi_packet || v.pkey_read == Some(PKeyRead::Cut);
    if t.whole_fabric && !cuts {
        // A refresh: the whole fabric in one query where RMPP works.
        let rest = guids::whole_fabric(tr, sm_lid, end_ports, v);
        guid_info(tr, sm_lid, &rest.ports, t.blocks, rest.cut, v);
    } else {
        guid_info(tr, sm_lid, end_ports, t.blocks, cuts, v);
    }
}

/// The GUIDInfo blocks of every end port, asked per LID; a port whose answer
/// does not fit one packet and arrives cut (umad2sim: no RMPP) is read from
/// its own SMA instead, one GUIDInfo SMP per block ([`sma`]). When
/// `cuts_multi_packet` (this SA path has no RMPP, so it is no SA that
/// answers a whole fabric at once), every port is read from its SMA: the
/// SM answers SA queries one at a time, each a search of its whole
/// database (OpenSM walks every node for a GUIDInfoRecord query), where
/// each SMA answers its own (docs/umad.md "P_Key tables").
fn guid_info(
    tr: &mut Transport,
    sm_lid: u16,
    end_ports: &[(u16, u8)],
    blocks: &TableBlocks,
    cuts_multi_packet: bool,
    v: &mut SaView,
) {
    type Ports = Vec<(u16, u8)>;
    let (to_smas, to_sa): (Ports, Ports) = end_ports.iter().partition(|_| cuts_multi_packet);
    guid_info_from_smas(tr, &to_smas, blocks, v);
    let reqs = to_sa
        .iter()
        .map(|&(lid, _)| (lid, guid_info_request(sm_lid, lid)));
    let mut errs = Vec::new();
    let mut cut = Vec::new();
    tr.pipeline(reqs, |lid, r| {
        match r {
            // Part of a port's GUIDs is not its GUIDs: asked block by block below.
            Ok(mad) if req::sa_truncated(&mad) => cut.push(lid),
            Ok(mad) => {
                let blocks: Vec<GuidInfoRecord> = req::sa_records(&mad)
                    .into_iter()
                    .filter_map(|rec| GuidInfoRecord::decode(rec).ok())
                    .filter(|rec| rec.lid.0 == lid)
                    .collect();
                v.guids.insert(lid, guids_of(blocks));
            }
            // No record: the SM assigned nothing at this LID (keep the port GUID only).
            Err(TxError::Status(_)) => {}
            Err(e) => errs.push((lid, e)),
        }
        Vec::new()
    });
    if !cut.is_empty() {
        v.cut.extend(cut.iter().map(|_| "GUIDInfoRecord"));
        let cut: Vec<(u16, u8)> = to_sa
            .iter()
            .filter(|(lid, _)| cut.contains(lid))
            .copied()
            .collect();
        guid_info_from_smas(tr, &cut, blocks, v);
    }
    for (lid, e) in errs {
        v.failed.guids.push(lid);
        v.failures += 1;
        if v.errors.len() < 16 {
            v.errors.push(format!("GUIDInfoRecord LID {lid}: {e}"));
        }
    }
}

/// A GUIDInfoRecord GetTable of all the blocks of the port at `lid`.
fn guid_info_request(sm_lid: u16, lid: u16) -> super::transport::Request {
    let t = GuidInfoRecord {
        lid: Lid(lid),
        ..GuidInfoRecord::default()
    };
    let mut buf = [0u8; GuidInfoRecord::LEN];
    let _ = t.encode(&mut buf);
    let mask = comp::guid_info_record::LID;
    req::sa(GET_TABLE, attr::GUID_INFO_RECORD, sm_lid, 0, mask, &buf)
}

/// A port's GUIDs by GUIDInfo index from its blocks (8 GUIDs each; blocks not
/// given are zeros, unassigned).
fn guids_of(mut blocks: Vec<GuidInfoRecord>) -> Vec<Guid> {
    blocks.sort_by_key(|b| b.block_num);
    let mut guids = Vec::new();
    for b in blocks {
        let at = usize::from(b.block_num) * 8;
        guids.resize(at, Guid(0));
        guids.extend(b.guid_info.guid.iter().copied());
    }
    guids
}

/// The GUIDInfo of ports whose SA answer was cut short, from their SMAs
/// (PortInfo:GUIDCap / 8 blocks each). A port any of whose blocks fails is
/// failed (its last GUIDs stand).
fn guid_info_from_smas(
    tr: &mut Transport,
    ports: &[(u16, u8)],
    blocks: &TableBlocks,
    v: &mut SaView,
) {
    let sizes = ports
        .iter()
        .map(|k| (*k, blocks.get(k).map_or(1, |b| b.guid)));
    let (read, errs) = sma::read_blocks(tr, crate::mad::smp::attr::GUID_INFO, sizes);
    for ((lid, _), got) in read {
        let records = got.into_iter().filter_map(|(b, data)| {
            Some(GuidInfoRecord {
                lid: Lid(lid),
                block_num: u8::try_from(b).ok()?,
                guid_info: crate::mad::smp::GuidInfo::decode(&data).ok()?,
            })
        });
        v.guids.insert(lid, guids_of(records.collect()));
    }
    for ((lid, _), e) in errs {
        v.failed.guids.push(lid);
        v.failures += 1;
        if v.errors.len() < 16 {
            v.errors.push(format!("GUIDInfo LID {lid}: {e}"));
        }
    }
}

/// SMInfo of the SM at each of `lids`, asked of the SM itself (LID-routed SMP
/// Get, as `sminfo` does), for when the SA does not answer: None where it did
/// not answer. In the order of `lids`.
pub fn sm_info(tr: &mut Transport, lids: &[u16]) -> Vec<(u16, Option<SmInfo>)> {
    let mut out: Vec<(u16, Option<SmInfo>)> = lids.iter().map(|&l| (l, None)).collect();
    let reqs = lids
        .iter()
        .enumerate()
        .filter(|(_, &l)| l != 0)
        .map(|(i, &l)| (i, req::lid_get(crate::mad::smp::attr::SM_INFO, 0, l)));
    tr.pipeline(reqs, |i, r| {
        match r {
            Ok(mad) => {
                if let (Some(slot), Ok(info)) =
                    (out.get_mut(i), SmInfo::decode(req::smp_data(&mad)))
                {
                    slot.1 = Some(info);
                }
            }
            Err(e) => tracing::debug!(lid = lids.get(i).copied(), "SMInfo not answered: {e}"),
        }
        Vec::new()
    });
    out
}

/// One PathRecord from `slid` to `dlid` (on demand).
pub fn path_record(
    tr: &mut Transport,
    sm_lid: u16,
    slid: u16,
    dlid: u16,
) -> Result<Option<PathRecord>, TxError> {
    let t = PathRecord {
        slid: Lid(slid),
        dlid: Lid(dlid),
        reversible: true,
        numb_path: 1,
        ..PathRecord::default()
    };
    let mut buf = [0u8; PathRecord::LEN];
    let _ = t.encode(&mut buf);
    let mask = comp::path_record::SLID
        | comp::path_record::DLID
        | comp::path_record::REVERSIBLE
        | comp::path_record::NUMB_PATH;
    let mad = tr.call(req::sa(GET, attr::PATH_RECORD, sm_lid, 0, mask, &buf))?;
    Ok(req::sa_records(&mad)
        .first()
        .and_then(|r| PathRecord::decode(r).ok()))
}

/// The PathRecords matching `template` in the components of `mask` (GetTable),
/// and whether the answer was cut short.
pub fn path_records(
    tr: &mut Transport,
    sm_lid: u16,
    template: &PathRecord,
    mask: u64,
) -> Result<Table<PathRecord>, TxError> {
    let mut buf = [0u8; PathRecord::LEN];
    let _ = template.encode(&mut buf);
    get_table(tr, attr::PATH_RECORD, sm_lid, 0, mask, &buf)
}

/// The SA's answer to a MultiPathRecord GetMulti.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiPaths {
    /// The paths that arrived whole, in the SA's order; a record without both
    /// LIDs is no path and is left out.
    pub paths: Vec<PathRecord>,
    /// The answer was cut short ([`req::sa_truncated`]): more paths were sent
    /// than arrived (ibsim passes only the first packet of an RMPP answer).
    pub cut: bool,
}

/// The PathRecords an encoded MultiPathRecord asks for (GetMulti: the
/// request goes as one RMPP segment, so at most
/// `MultiPathRecord::MAX_GIDS` GIDs).
pub fn multi_path_records(
    tr: &mut Transport,
    sm_lid: u16,
    record: &[u8],
    mask: u64,
) -> Result<MultiPaths, TxError> {
    let mad = tr.call(req::sa(
        crate::mad::header::method::GET_MULTI,
        attr::MULTI_PATH_RECORD,
        sm_lid,
        0,
        mask,
        record,
    ))?;
    let all: Vec<PathRecord> = req::sa_records(&mad)
        .into_iter()
        .filter_map(|r| PathRecord::decode(r).ok())
        .collect();
    let whole = all.len();
    let paths: Vec<PathRecord> = all
        .into_iter()
        .filter(|p| p.slid.0 != 0 && p.dlid.0 != 0)
        .collect();
    if paths.len() < whole {
        tracing::debug!(
            dropped = whole - paths.len(),
            "MultiPathRecord answer: records without LIDs left out"
        );
    }
    Ok(MultiPaths {
        paths,
        cut: req::sa_truncated(&mad),
    })
}

/// Subscribes `gid` to [`TRAPS`] (InformInfo Set, one per trap). Returns how many the SM
/// accepted. ibsim accepts but never delivers the Reports; the source compares sweeps.
pub fn subscribe(tr: &mut Transport, sm_lid: u16, gid: Gid) -> usize {
    let reqs = TRAPS.iter().map(|&trap| {
        let ii = InformInfo {
            gid,
            lid_range_begin: InformInfo::ALL_LIDS,
            is_generic: 1,
            subscribe: 1,
            notice_type: InformInfo::ALL_TYPES,
            trap_number_device_id: trap,
            producer_type_vendor_id: InformInfo::ALL_PRODUCERS,
            ..InformInfo::default()
        };
        let mut buf = [0u8; InformInfo::LEN];
        let _ = ii.encode(&mut buf);
        // InformInfo is sent as the bare attribute (not a record): no component mask.
        (trap, req::sa(SET, attr::INFORM_INFO, sm_lid, 0, 0, &buf))
    });
    let mut ok = 0;
    tr.pipeline(reqs, |trap, r| {
        match r {
            Ok(_) => ok += 1,
            Err(e) => tracing::debug!(trap, "InformInfo subscription failed: {e}"),
        }
        Vec::new()
    });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What failed this sweep is the last answer; what answered is this one.
    #[test]
    fn failed_parts_keep_the_last_answers() {
        let group = |n: u8| {
            let mut r = McMemberRecord::decode(&[0u8; 52]).unwrap();
            r.mgid = Gid([0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n]);
            r
        };
        let last = SaView {
            mc_groups: vec![group(1), group(2)],
            mc_members: vec![group(1)],
            pkeys: [((3, 1), vec![0xffff]), ((4, 1), vec![0xffff])].into(),
            guids: [(3, vec![Guid(3)])].into(),
            ..SaView::default()
        };
        let mut now = SaView {
            mc_members: vec![group(2)],
            pkeys: [((4, 1), vec![0xffff, 0x8001])].into(),
            failed: SaFailed {
                mc_groups: true,
                pkeys: vec![(3, 1)],
                guids: vec![3],
                ..SaFailed::default()
            },
            ..SaView::default()
        };
        now.keep_failed_from(&last);
        assert_eq!(now.mc_groups.len(), 2, "failed: the last groups");
        assert_eq!(now.mc_members, vec![group(2)], "answered: this sweep's");
        assert_eq!(now.pkeys[&(3, 1)], vec![0xffff]);
        assert_eq!(now.pkeys[&(4, 1)], vec![0xffff, 0x8001]);
        assert_eq!(now.guids[&3], vec![Guid(3)]);
    }
}
