//! IB-SM-MIB (mibs/IB-SM-MIB), the read tables: the whole subnet as its
//! Subnet Manager sees it, for every node and port of the snapshot.
//!
//! Rows are derived once per published snapshot ([`SmRows`], by
//! [`SmHistory`], which also keeps the partition and multicast membership
//! history behind the LastChange columns); requests only look cells up.
//! Every table is declared by naming its columns once ([`Col`] lists,
//! [`crate::core::column`]): the
//! column number comes from the generated OID constant, a Set's type and
//! range from the MIB file (generated `OBJECT_TYPES`), and tests/coverage.rs checks that
//! every accessible column is served or listed in `DEF.omitted` with a reason.
//!
//! Indexes are the MIB's: the 8-octet subnet prefix first (fixed-size
//! OCTET STRING: no length sub-identifier), then GUIDs (8 octets), port
//! numbers, P_Keys, MGIDs (16 octets) as the INDEX clauses say.
//!
//! Notes (docs/ib-sm.md has the full list):
//! - ibSmPortInfoTable: every port 1..254 of every node (IbDataPort has no
//!   port 0, so a switch's management port 0 is not a row), linked or not.
//! - ibSmConfigTable is indexed by the subnet prefix alone, so it has one
//!   row: the master SM (or, with none, the best SM known).
//! - ibSmPartitionTable: key = the 15-bit P_Key base; elements of 10 octets
//!   (node GUID, port, 1 = full / 2 = limited), 25 per vector (250 of the
//!   255 octets), vectors numbered from 1.
//! - Secrets (SM_Key, M_Key) read as eight zero octets unless the view
//!   allows them ([`View::secrets`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use ib::model::{McastGroup, Node, NodeIdx, Port, PortIdx, Snapshot};
use ib::types::Guid;
use snmp::index::{FixedOctets, ImpliedOctets, IndexCodec};
use snmp::mib::MibObject;
use snmp::table::{RowSet, Table};
use snmp::value::Value;

use crate::core::column::{ro, ro_octets, rw};
use crate::core::oids::ib_sm_mib as o;
use crate::core::value;
use crate::core::value::ticks_at;
use crate::core::view::SysOrEntry;
use crate::Change;
use crate::Col;
use crate::View;
use ib::opensm::{OpenSmConf, SmOption};
pub use ib::opensm::{PartitionOp, SmOp};

mod config;
mod guids;
mod links;
mod multicast;
mod nodes;
mod partitions;
mod ports;
mod services;
mod sms;
mod switches;

use config::{CONFIG_COLS, CONFIG_OMITTED};
use guids::GUID_INFO_COLS;
use links::LINK_COLS;
use multicast::{MCAST_GROUP_COLS, MCAST_MEMBER_COLS};
use nodes::NODE_COLS;
pub use partitions::PartitionConfig;
use partitions::PARTITION_COLS;
use ports::PORT_COLS;
pub use ports::{fabric_ops, PortField, PortInfoSet};
use services::{SERVICE_ASSOC_COLS, SERVICE_COLS};
use sms::SM_COLS;
use switches::SWITCH_COLS;

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    name: "IB-SM-MIB",
    or_entry: || Some(or_entry()),
    objects,
    omitted: CONFIG_OMITTED,
};

/// sysORTable row: the IB-SM-MIB module identity.
pub fn or_entry() -> SysOrEntry {
    SysOrEntry::new(
        o::IB_SM_MIB,
        "IB-SM-MIB: the InfiniBand subnet as its Subnet Manager sees it \
         (nodes, ports, switches, SMs, links, partitions, multicast, services)",
    )
}

/// Octets of one ibSmPartitionVector element.
pub const PARTITION_ELEMENT: usize = 10;
/// Octets of one ibSmMcastMemberVector element.
pub const MCAST_ELEMENT: usize = 18;
/// The largest vector the MIB allows.
const VECTOR_MAX: usize = 255;

/// One vector row (ibSmPartitionTable, ibSmMcastMemberTable).
#[derive(Debug, Clone)]
pub struct VectorRow {
    pub vector: Vec<u8>,
    pub element_size: usize,
    /// When this key's membership last changed (None: unchanged since the
    /// agent's first snapshot, reads 0).
    pub last_change: Option<Instant>,
}

/// IB-SM-MIB's rows of one snapshot.
#[derive(Debug, Default)]
pub struct SmRows {
    pub config: RowSet<usize>,
    pub nodes: RowSet<NodeIdx>,
    pub ports: RowSet<PortIdx>,
    pub switches: RowSet<NodeIdx>,
    pub partitions: RowSet<VectorRow>,
    pub mcast_groups: RowSet<usize>,
    pub mcast_members: RowSet<VectorRow>,
    pub sms: RowSet<usize>,
    pub links: RowSet<(PortIdx, PortIdx)>,
    pub services: RowSet<usize>,
    pub service_assoc: RowSet<usize>,
    /// (port, block number): GUIDInfo blocks of 8 GUIDs.
    pub guid_blocks: RowSet<(PortIdx, u32)>,
    /// OpenSM's configuration as read at this publish (None: no file
    /// configured or unreadable).
    pub opensm: Option<OpenSmConf>,
}

/// Membership history of the vector tables, owned by one publisher.
#[derive(Debug, Default)]
pub struct SmHistory {
    /// [`crate::Options::opensm_conf`]: read at every publish.
    opensm_conf: Option<std::path::PathBuf>,
    first_done: bool,
    partitions: HashMap<u16, (Vec<u8>, Option<Instant>)>,
    mcast: HashMap<[u8; 16], (Vec<u8>, Option<Instant>)>,
}

fn prefix(s: &Snapshot, out: &mut Vec<u32>) {
    FixedOctets::<8>::encode(&s.subnet_prefix.to_be_bytes(), out);
}

fn guid_idx(g: Guid, out: &mut Vec<u32>) {
    FixedOctets::<8>::encode(&g.to_bytes(), out);
}

/// The node GUID and port number of a member port GUID (switch members are
/// named by their port 0).
fn member_port(s: &Snapshot, by_guid: &HashMap<u64, PortIdx>, g: Guid) -> (Guid, u8) {
    by_guid
        .get(&g.0)
        .and_then(|&p| s.port(p))
        .and_then(|p| s.node(p.node).map(|n| (n.info.node_guid, p.num.0)))
        .unwrap_or((g, 0))
}

/// Splits `elements` (each `size` octets) into vectors of at most 255 octets.
fn vectors(elements: &[u8], size: usize) -> Vec<Vec<u8>> {
    let per = (VECTOR_MAX / size).max(1) * size;
    if elements.is_empty() {
        return vec![Vec::new()];
    }
    elements.chunks(per).map(<[u8]>::to_vec).collect()
}

impl SmHistory {
    /// A history with the daemon's settings (IB-SM-MIB's fields).
    pub fn new(opts: &crate::Options) -> Self {
        SmHistory {
            opensm_conf: opts.opensm_conf.clone(),
            ..SmHistory::default()
        }
    }

    /// Folds in the next snapshot and derives its rows.
    pub fn rows(&mut self, s: &Snapshot) -> SmRows {
        let now = Instant::now();
        let first = !self.first_done;
        self.first_done = true;
        let mut rows = fabric_rows(s);
        rows.partitions = self.partition_rows(s, first, now);
        (rows.mcast_groups, rows.mcast_members) = self.mcast_rows(s, first, now);
        (rows.services, rows.service_assoc) = service_rows(s);
        rows.opensm = self.read_opensm();
        rows
    }

    /// ibSmPartitionTable: member elements by P_Key base, with history.
    fn partition_rows(&mut self, s: &Snapshot, first: bool, now: Instant) -> RowSet<VectorRow> {
        let n_ports = PortIdx::try_from(s.ports.len()).unwrap_or(PortIdx::MAX);
        let by_guid: HashMap<u64, PortIdx> = (0..n_ports)
            .filter_map(|p| {
                let pp = s.port(p)?;
                (pp.guid.0 != 0 && s.is_end_port(pp)).then_some((pp.guid.0, p))
            })
            .collect();
        let mut parts: BTreeMap<u16, Vec<[u8; PARTITION_ELEMENT]>> = BTreeMap::new();
        for part in &s.partitions {
            let e = parts.entry(part.pkey.0 & 0x7fff).or_default();
            for m in &part.members {
                let (g, num) = member_port(s, &by_guid, m.port_guid);
                let mut el = [0u8; PARTITION_ELEMENT];
                if let Some(d) = el.get_mut(..8) {
                    d.copy_from_slice(&g.to_bytes());
                }
                el[8] = num;
                el[9] = if m.full { 1 } else { 2 };
                e.push(el);
            }
        }
        let mut part_rows = Vec::new();
        let mut seen = HashMap::new();
        for (key, mut els) in parts {
            els.sort_unstable();
            els.dedup();
            let flat: Vec<u8> = els.concat();
            let changed = track(&mut self.partitions, key, &flat, first, now);
            seen.insert(key, ());
            for (i, v) in vectors(&flat, PARTITION_ELEMENT).into_iter().enumerate() {
                part_rows.push((key, i + 1, v, changed));
            }
        }
        self.partitions.retain(|k, _| seen.contains_key(k));
        RowSet::from_pairs(part_rows.into_iter().map(|(key, i, v, ch)| {
            let mut k = Vec::with_capacity(11);
            prefix(s, &mut k);
            k.push(u32::from(key));
            k.push(u32::try_from(i).unwrap_or(u32::MAX));
            (
                k,
                VectorRow {
                    vector: v,
                    element_size: PARTITION_ELEMENT,
                    last_change: ch,
                },
            )
        }))
    }

    /// ibSmMcastGroupTable and ibSmMcastMemberTable (members with history).
    fn mcast_rows(
        &mut self,
        s: &Snapshot,
        first: bool,
        now: Instant,
    ) -> (RowSet<usize>, RowSet<VectorRow>) {
        let mgid_key = |g: &McastGroup, out: &mut Vec<u32>| {
            prefix(s, out);
            FixedOctets::<16>::encode(&g.group.mgid.to_bytes(), out);
        };
        let mcast_groups = RowSet::from_rows(0..s.mcast_groups.len(), |&i, out| {
            if let Some(g) = s.mcast_groups.get(i) {
                mgid_key(g, out);
            }
        });
        let mut member_rows = Vec::new();
        let mut seen_mc = HashMap::new();
        for g in &s.mcast_groups {
            let mgid = g.group.mgid.to_bytes();
            let mut els: Vec<[u8; MCAST_ELEMENT]> = g
                .members
                .iter()
                .map(|m| {
                    let mut el = [0u8; MCAST_ELEMENT];
                    if let Some(d) = el.get_mut(..16) {
                        d.copy_from_slice(&m.port_gid.to_bytes());
                    }
                    el[16] = m.join_state;
                    el[17] = if m.proxy_join { 1 } else { 2 };
                    el
                })
                .collect();
            els.sort_unstable();
            els.dedup();
            let flat: Vec<u8> = els.concat();
            let changed = track(&mut self.mcast, mgid, &flat, first, now);
            seen_mc.insert(mgid, ());
            for (i, v) in vectors(&flat, MCAST_ELEMENT).into_iter().enumerate() {
                let mut k = Vec::with_capacity(25);
                mgid_key(g, &mut k);
                k.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
                member_rows.push((
                    k,
                    VectorRow {
                        vector: v,
                        element_size: MCAST_ELEMENT,
                        last_change: changed,
                    },
                ));
            }
        }
        self.mcast.retain(|k, _| seen_mc.contains_key(k));
        (mcast_groups, RowSet::from_pairs(member_rows))
    }

    /// OpenSM's configuration, read at publish time (once per sweep),
    /// never on a request.
    fn read_opensm(&self) -> Option<OpenSmConf> {
        self.opensm_conf
            .as_ref()
            .and_then(|p| match std::fs::read_to_string(p) {
                Ok(t) => Some(OpenSmConf::parse(&t)),
                Err(e) => {
                    tracing::debug!(path = %p.display(), error = %e, "cannot read opensm.conf");
                    None
                }
            })
    }
}

/// The rows of the node, port, switch, link, GUID, SM and config tables:
/// the snapshot's, with no history (the other tables are left empty).
fn fabric_rows(s: &Snapshot) -> SmRows {
    let n_nodes = NodeIdx::try_from(s.nodes.len()).unwrap_or(NodeIdx::MAX);
    let nodes = RowSet::from_rows(0..n_nodes, |&n, out| {
        prefix(s, out);
        guid_idx(s.node(n).map_or(Guid(0), |n| n.info.node_guid), out);
    });
    let switches = RowSet::from_rows(
        (0..n_nodes).filter(|&n| s.node(n).is_some_and(|n| n.switch.is_some())),
        |&n, out| {
            prefix(s, out);
            guid_idx(s.node(n).map_or(Guid(0), |n| n.info.node_guid), out);
        },
    );
    let port_key = |p: PortIdx, out: &mut Vec<u32>| {
        prefix(s, out);
        let (g, num) = s
            .port(p)
            .map(|pp| {
                let g = s.node(pp.node).map_or(Guid(0), |n| n.info.node_guid);
                (g, pp.num.0)
            })
            .unwrap_or((Guid(0), 0));
        guid_idx(g, out);
        out.push(u32::from(num));
    };
    let n_ports = PortIdx::try_from(s.ports.len()).unwrap_or(PortIdx::MAX);
    let data_port = |p: &PortIdx| s.port(*p).is_some_and(|p| p.num.0 >= 1 && p.num.0 <= 254);
    let ports = RowSet::from_rows((0..n_ports).filter(data_port), |&p, out| port_key(p, out));
    let links = RowSet::from_rows(
        (0..n_ports)
            .filter(data_port)
            .filter_map(|p| s.port(p).and_then(|pp| pp.remote).map(|r| (p, r))),
        |&(p, _), out| port_key(p, out),
    );
    let guid_blocks = RowSet::from_rows(
        (0..n_ports).filter(data_port).flat_map(|p| {
            let n = s.port(p).map_or(0, |pp| pp.guids.len());
            (0..n.div_ceil(8)).map(move |b| (p, u32::try_from(b).unwrap_or(u32::MAX)))
        }),
        |&(p, b), out| {
            port_key(p, out);
            out.push(b);
        },
    );
    let sms = RowSet::from_rows(0..s.sms.len(), |&i, out| {
        prefix(s, out);
        guid_idx(s.sms.get(i).map_or(Guid(0), |r| r.info.guid), out);
    });
    // One row: the master, else an SM that stopped answering (the master
    // that was: notActive), else the highest-priority SM known.
    let best = s
        .sms
        .iter()
        .enumerate()
        .max_by_key(|(_, r)| (sm_state(r) == 3, !r.answering, r.info.priority))
        .map(|(i, _)| i);
    let config = RowSet::from_rows(best, |_, out| prefix(s, out));
    SmRows {
        config,
        nodes,
        ports,
        switches,
        sms,
        links,
        guid_blocks,
        ..SmRows::default()
    }
}

/// ibSmServiceTable and ibSmServiceAssocTable.
fn service_rows(s: &Snapshot) -> (RowSet<usize>, RowSet<usize>) {
    let services = RowSet::from_rows(0..s.services.len(), |&i, out| {
        if let Some(r) = s.services.get(i) {
            prefix(s, out);
            FixedOctets::<8>::encode(&r.service_id.to_be_bytes(), out);
            FixedOctets::<16>::encode(&r.service_gid.to_bytes(), out);
            out.push(u32::from(r.service_p_key.0));
        }
    });
    let service_assoc = RowSet::from_rows(0..s.services.len(), |&i, out| {
        if let Some(r) = s.services.get(i) {
            prefix(s, out);
            FixedOctets::<16>::encode(&r.service_key, out);
            ImpliedOctets::encode(&r.service_name.as_bytes().to_vec(), out);
        }
    });
    (services, service_assoc)
}

/// Updates one key's membership history; returns its LastChange.
fn track<K: std::hash::Hash + Eq>(
    h: &mut HashMap<K, (Vec<u8>, Option<Instant>)>,
    key: K,
    flat: &[u8],
    first: bool,
    now: Instant,
) -> Option<Instant> {
    match h.get_mut(&key) {
        Some((old, t)) => {
            if old.as_slice() != flat {
                *old = flat.to_vec();
                *t = Some(now);
            }
            *t
        }
        None => {
            let t = (!first).then_some(now);
            h.insert(key, (flat.to_vec(), t));
            t
        }
    }
}

// ------------------------------------------------------------------ cells

/// A table over `rows` of [`SmRows`] serving exactly `cols` (index columns
/// are not-accessible and never listed).
fn table<R: Send + Sync + 'static>(
    entry: &'static [u32],
    rows: for<'a> fn(&'a SmRows) -> &'a RowSet<R>,
    cols: &'static [Col<R>],
) -> Table<View, Change, R> {
    crate::core::column::table(entry, move |v: &View| rows(sm_rows(v)), cols)
}

/// The four columns of a vector table (ibSmPartitionTable,
/// ibSmMcastMemberTable): Vector, VectorSize, VectorElementSize, LastChange.
const fn vector_cols(
    vector: &'static [u32],
    size: &'static [u32],
    element_size: &'static [u32],
    last_change: &'static [u32],
) -> [Col<VectorRow>; 4] {
    [
        ro(vector, |_, r| octets(&r.vector)),
        ro(size, |_, r| {
            int(i32::try_from(r.vector.len()).unwrap_or(i32::MAX))
        }),
        ro(element_size, |_, r| {
            int(i32::try_from(r.element_size).unwrap_or(i32::MAX))
        }),
        ro(last_change, |v, r| {
            Some(Value::TimeTicks(ticks_at(v.system.started, r.last_change)))
        }),
    ]
}

/// This module's rows for the view's snapshot.
pub fn sm_rows(v: &View) -> &SmRows {
    // A node context serves no IB-SM-MIB object: it has no rows of ours.
    static NONE: LazyLock<SmRows> = LazyLock::new(SmRows::default);
    v.derived.fabric().map_or(&NONE, |f| &f.sm)
}

// A column's read answers Option<Value> (None: no value): the shared
// helpers ([`crate::core::value`]) wrapped.
fn u(x: impl Into<u32>) -> Option<Value> {
    Some(value::gauge32(x))
}
fn gauge(x: impl Into<u32>) -> Option<Value> {
    Some(value::gauge32(x))
}
fn int(x: impl Into<i32>) -> Option<Value> {
    Some(value::integer(x))
}
fn octets(b: &[u8]) -> Option<Value> {
    Some(value::octets(b))
}
fn truth(b: bool) -> Option<Value> {
    int(if b { 1 } else { 2 })
}
/// A secret: its octets when the request may read secrets, else zeros.
fn secret(v: &View, x: u64) -> Option<Value> {
    octets(&if v.secrets { x } else { 0 }.to_be_bytes())
}
/// SMI BITS from an IBA bit mask where IBA bit n is the MIB's bit n (BITS
/// bit n is octet n/8, mask 0x80 >> n%8).
#[cfg(test)]
fn bits(mask: u32, octets_n: usize) -> Option<Value> {
    let mut out = Vec::new();
    put_bits(&mut out, mask, octets_n)?;
    Some(Value::OctetString(out))
}

/// An OCTET STRING cell's octets into the buffer a walk lends
/// ([`crate::core::column::ro_octets`]).
fn put(out: &mut Vec<u8>, b: &[u8]) -> Option<()> {
    out.extend_from_slice(b);
    Some(())
}
/// A secret ([`secret`]) into a walk's buffer.
fn put_secret(out: &mut Vec<u8>, v: &View, x: u64) -> Option<()> {
    put(out, &if v.secrets { x } else { 0 }.to_be_bytes())
}
/// SMI BITS ([`bits`]) into a walk's buffer: octet k holds IBA bits
/// 8k..8k+7, bit 8k first, the mask's k-th little-endian octet reversed.
fn put_bits(out: &mut Vec<u8>, mask: u32, octets_n: usize) -> Option<()> {
    let le = mask.to_le_bytes().map(u8::reverse_bits);
    out.extend_from_slice(le.get(..octets_n.min(4)).unwrap_or(&[]));
    out.resize(octets_n, 0);
    Some(())
}

fn node(v: &View, n: NodeIdx) -> Option<&Node> {
    v.snapshot.node(n)
}
fn port(v: &View, p: PortIdx) -> Option<&Port> {
    v.snapshot.port(p)
}

/// A table whose writable columns take Sets only when `writable` (a
/// setting of the daemon's): else notWritable.
fn writable_by_option<R>(
    t: snmp::table::Table<View, Change, R>,
    writable: bool,
) -> snmp::table::Table<View, Change, R> {
    if writable {
        t
    } else {
        t.writable_if(|_| false)
    }
}

/// Every object of the module; ibSmConfigTable's SM settings and
/// ibSmPartitionConfig writable with `sm_control`, ibSmPortInfoTable's safe
/// columns with `port_writes`.
pub fn objects(opts: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    vec![
        Arc::new(writable_by_option(
            table(o::IB_SM_CONFIG_ENTRY, |r| &r.config, CONFIG_COLS),
            opts.sm_control,
        )),
        Arc::new(PartitionConfig::new(opts.sm_control)),
        Arc::new(table(o::IB_SM_NODE_INFO_ENTRY, |r| &r.nodes, NODE_COLS)),
        Arc::new(writable_by_option(
            table(o::IB_SM_PORT_INFO_ENTRY, |r| &r.ports, PORT_COLS),
            opts.port_writes,
        )),
        Arc::new(table(
            o::IB_SM_SWITCH_INFO_ENTRY,
            |r| &r.switches,
            SWITCH_COLS,
        )),
        Arc::new(table(
            o::IB_SM_PARTITION_ENTRY,
            |r| &r.partitions,
            PARTITION_COLS,
        )),
        Arc::new(table(
            o::IB_SM_MCAST_GROUP_ENTRY,
            |r| &r.mcast_groups,
            MCAST_GROUP_COLS,
        )),
        Arc::new(table(
            o::IB_SM_MCAST_MEMBER_ENTRY,
            |r| &r.mcast_members,
            MCAST_MEMBER_COLS,
        )),
        Arc::new(table(o::IB_SM_SM_INFO_ENTRY, |r| &r.sms, SM_COLS)),
        Arc::new(table(o::IB_SM_LINK_ENTRY, |r| &r.links, LINK_COLS)),
        Arc::new(table(o::IB_SM_SERVICE_ENTRY, |r| &r.services, SERVICE_COLS)),
        Arc::new(table(
            o::IB_SM_SERVICE_ASSOC_ENTRY,
            |r| &r.service_assoc,
            SERVICE_ASSOC_COLS,
        )),
        Arc::new(table(
            o::IB_SM_GUID_INFO_ENTRY,
            |r| &r.guid_blocks,
            GUID_INFO_COLS,
        )),
    ]
}

/// An SM's state: notActive(0) when it did not answer this sweep (neither the
/// SA's SMInfoRecord nor SMInfo at its port), whatever it said last.
fn sm_state(r: &ib::model::SmRecord) -> u8 {
    if r.answering {
        r.info.sm_state
    } else {
        0
    }
}

/// An SM's ActCount, only while it answers: the last value of a silent SM is
/// not its activity now (absent: noSuchInstance, skipped by walks).
fn act_count(r: &ib::model::SmRecord) -> Option<Value> {
    r.answering.then_some(Value::Counter32(r.info.act_count))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(parts: &[(u16, &[(u64, bool)])]) -> Snapshot {
        let mut b = ib::model::SnapshotBuilder::new(0xfe80_0000_0000_0000);
        b.partitions = parts
            .iter()
            .map(|(k, ms)| ib::model::Partition {
                pkey: ib::types::PKey(*k),
                members: ms
                    .iter()
                    .map(|&(g, full)| ib::model::PartitionMember {
                        port_guid: Guid(g),
                        full,
                    })
                    .collect(),
            })
            .collect();
        b.build(
            ib::model::SweepInfo {
                number: 1,
                time: std::time::SystemTime::now(),
                duration: std::time::Duration::ZERO,
                source: "test-sm".into(),
                cost: Default::default(),
            },
            &mut ib::model::CounterHistory::new(),
        )
    }

    fn last_changes(r: &SmRows) -> Vec<(Vec<u32>, Option<Instant>)> {
        r.partitions
            .iter()
            .map(|(k, v)| (k.to_vec(), v.last_change))
            .collect()
    }

    #[test]
    fn partition_last_change_moves_only_on_membership_change() {
        let mut h = SmHistory::default();
        let a: &[(u64, bool)] = &[(1, true), (2, false)];
        let first = h.rows(&snap(&[(0xffff, a), (0x8001, a)]));
        assert!(last_changes(&first).iter().all(|(_, t)| t.is_none()));
        // Same members (other order): nothing moves.
        let b: &[(u64, bool)] = &[(2, false), (1, true)];
        let same = h.rows(&snap(&[(0xffff, b), (0x8001, a)]));
        assert!(last_changes(&same).iter().all(|(_, t)| t.is_none()));
        // A member added to 0x0001 moves its LastChange only.
        let c: &[(u64, bool)] = &[(1, true), (2, false), (3, false)];
        let moved = h.rows(&snap(&[(0xffff, a), (0x8001, c)]));
        let lc = last_changes(&moved);
        let k1 = lc.iter().find(|(k, _)| k[8] == 1).unwrap();
        let kd = lc.iter().find(|(k, _)| k[8] == 0x7fff).unwrap();
        assert!(k1.1.is_some() && kd.1.is_none());
        // The vector: 3 elements of 10 octets, full = 1, limited = 2.
        let row = moved
            .partitions
            .rows()
            .iter()
            .find(|r| r.vector.len() == 30)
            .unwrap();
        assert_eq!(row.vector[9], 1);
        assert_eq!(row.vector[19], 2);
        // Index: prefix (8 octets), key, vector index 1.
        assert_eq!(k1.0.len(), 10);
        assert_eq!(k1.0[9], 1);
        // Unchanged afterwards: the time stays.
        let again = h.rows(&snap(&[(0xffff, a), (0x8001, c)]));
        let k1b = last_changes(&again)
            .into_iter()
            .find(|(k, _)| k[8] == 1)
            .unwrap();
        assert_eq!(k1b.1, k1.1);
    }

    fn sm(guid: u64, priority: u8, state: u8, answering: bool) -> ib::model::SmRecord {
        ib::model::SmRecord {
            lid: ib::types::Lid(1),
            port: None,
            info: ib::mad::smp::SmInfo {
                guid: Guid(guid),
                sm_key: 0,
                act_count: 77,
                priority,
                sm_state: state,
            },
            answering,
        }
    }

    /// An SM that stopped answering reads notActive with no ActCount, and
    /// stays the ibSmConfig row while no other SM is master.
    #[test]
    fn a_silent_sm_reads_not_active_without_act_count() {
        let lost = sm(1, 0, 3, false);
        assert_eq!(sm_state(&lost), 0, "its last answer said master");
        assert_eq!(act_count(&lost), None);
        let live = sm(2, 5, 2, true);
        assert_eq!(sm_state(&live), 2);
        assert_eq!(act_count(&live), Some(Value::Counter32(77)));
        let config = |sms: Vec<ib::model::SmRecord>| {
            let mut s = snap(&[]);
            s.sms = sms;
            let rows = SmHistory::default().rows(&s);
            rows.config.rows().to_vec()
        };
        // No master: the silent one (the master that was), not the standby
        // of higher priority.
        assert_eq!(config(vec![live.clone(), lost.clone()]), vec![1]);
        // A master that answers is the row.
        let master = sm(3, 0, 3, true);
        assert_eq!(config(vec![lost, live, master]), vec![2]);
    }

    #[test]
    fn vectors_pack_whole_elements_under_255_octets() {
        let els = vec![7u8; PARTITION_ELEMENT * 30];
        let v = vectors(&els, PARTITION_ELEMENT);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].len(), 250);
        assert_eq!(v[1].len(), 50);
        let m = vectors(&vec![1u8; MCAST_ELEMENT * 15], MCAST_ELEMENT);
        assert_eq!(m[0].len(), 252);
        assert_eq!(vectors(&[], 10), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn bits_follow_smi_order() {
        // IBA bit 1 (IsSM) is BITS bit 1: 0x40 in the first octet.
        assert_eq!(bits(0b10, 4), Some(Value::OctetString(vec![0x40, 0, 0, 0])));
        assert_eq!(
            bits(0x8000_0001, 4),
            Some(Value::OctetString(vec![0x80, 0, 0, 1]))
        );
        assert_eq!(bits(0x0102, 1), Some(Value::OctetString(vec![0x40])));
        assert_eq!(
            bits(1, 6),
            Some(Value::OctetString(vec![0x80, 0, 0, 0, 0, 0]))
        );
        assert_eq!(
            bits(1 << 16, 4),
            Some(Value::OctetString(vec![0, 0, 0x80, 0]))
        );
    }
}
