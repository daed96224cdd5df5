//! IB-PM-MIB (draft-yang-ib-performance-management-mib-00): the PerfMgt
//! attributes ClassPortInfo, PortSamplesControl, PortSamplesResult and
//! PortCounters of every node's PMA, one row per node of the snapshot in each
//! of the four tables, indexed by node GUID (8-octet fixed-size index: eight
//! sub-identifiers, no length).
//!
//! - pmClassPortInfoTable: AllPortSelect from the PMA's CapabilityMask bit 8.
//! - pmPortCountersTable: pmPortCountersPortSelect (agent state, persisted
//!   under `pmPortCountersPortSelect.<GUID>`, default 1) picks the port the row
//!   reports: a port the node lacks reads as zeros; a port it has but the
//!   last sweep has no reading of is absent (noSuchInstance), never zeros;
//!   255 adds up all ports (saturating at each counter's IBA width; absent
//!   when one has no reading) and may be set only when the PMA has
//!   AllPortSelect (else wrongValue). Counter Sets write the PMA:
//!   Set(PortCounters) with the counter's CounterSelect bit. PMAs clear the
//!   selected counters whatever value the Set carries, so 0 is the only value
//!   accepted (wrongValue otherwise).
//! - The seed types these unsigned 32-bit IBA fields (PortXmitData...,
//!   SampleStart, SampleInterval) as Integer32: the value carries the field's
//!   32 bits unchanged, so values of 2^31 and more read as negative numbers
//!   (add 2^32), and a saturated 32-bit counter reads -1. Nothing is lost and
//!   values equal perfquery's modulo 2^32.
//! - pmPortSampleCntrlTable / pmPortSampleResultTable: the PMA's
//!   PortSamplesControl / PortSamplesResult as of the last sweep (zeros before
//!   the PMA was first asked). The writable columns of one node in one Set
//!   request become ONE Set(PortSamplesControl) (see [`fabric_ops`]). While
//!   a run with another Tag is in progress the PMA ignores the Set and
//!   answers with the running Tag (IBA's collision rule): the SNMP Set then
//!   fails with commitFailed, the reason logged (see [`check_reply`]). The
//!   4-octet Tag objects carry IBA's 16-bit Tag in their last two octets.
//!   PMAs without PortSamplesControl (ibsim, many HCAs) are sampled in
//!   software by the source (`ib::source::sampler`): their rows then show
//!   Tick 255, CounterWidth 32 bits and SampleMechanisms 0 (docs/ib-pm.md).

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use ib::mad::pma::{cap, PortCounters, PortSamplesControl, PortSamplesResult};
use ib::model::{Node, NodeIdx, Snapshot};
use ib::source::{ControlOp, ControlReply};
use ib::types::{Guid, NodeType, PortNum};
use snmp::index::{FixedOctets, IndexCodec};
use snmp::mib::{MibObject, SetError};
use snmp::table::{check, RowSet};
use snmp::value::Value;

use crate::core::column::{ro, rw, table};
use crate::core::oids::ib_pm_mib as o;
use crate::core::state::PersistedState;
use crate::core::value::int32_wrapping;
use crate::core::view::SysOrEntry;
use crate::Change;
use crate::Col;
use crate::{SystemState, View};

/// PortSelect of a row never set: port 1.
pub const DEFAULT_PORT_SELECT: u8 = 1;
/// PortSelect value that selects all ports.
pub const ALL_PORTS: u8 = 0xFF;

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    name: "IB-PM-MIB",
    or_entry: || Some(or_entry()),
    objects,
    omitted: &[],
};

/// sysORTable row for this module. Its MODULE-IDENTITY `pm` (117) and
/// `pmMIBObjects` (117.1) share their OIDs with IB-TC-MIB's
/// `infinibandMIB` and `ibTcMIB`, so a manager would read this row as
/// IB-TC-MIB's; the first table is the module's first OID no other module
/// names.
pub fn or_entry() -> SysOrEntry {
    SysOrEntry::new(
        o::PM_CLASS_PORT_INFO_TABLE,
        "IB-PM-MIB: InfiniBand PerfMgt ClassPortInfo, PortSamplesControl/Result \
                and PortCounters of every node",
    )
}

/// Every object of the module: the four tables.
pub fn objects(_: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    vec![
        Arc::new(table(
            o::PM_CLASS_PORT_INFO_ENTRY,
            rows,
            CLASS_PORT_INFO_COLS,
        )),
        Arc::new(table(
            o::PM_PORT_SAMPLE_CNTRL_ENTRY,
            rows,
            SAMPLE_CONTROL_COLS,
        )),
        Arc::new(table(
            o::PM_PORT_SAMPLE_RESULT_ENTRY,
            rows,
            SAMPLE_RESULT_COLS,
        )),
        Arc::new(table(o::PM_PORT_COUNTERSO_ENTRY, rows, PORT_COUNTERS_COLS)),
    ]
}

// ------------------------------------------------------------------ rows

/// The rows of the four tables: every node of a snapshot, in node GUID
/// order (the 8-octet index). Derived once per published snapshot
/// (`crate::core::publish::Publisher`) and read by requests through
/// [`PmRows`].
pub fn node_rows(snap: &Snapshot) -> RowSet<NodeIdx> {
    let count = NodeIdx::try_from(snap.nodes.len()).unwrap_or(NodeIdx::MAX);
    RowSet::from_rows(0..count, |&n, out| {
        let g = snap.node(n).map(|n| n.info.node_guid).unwrap_or(Guid(0));
        FixedOctets::<8>::encode(&g.to_bytes(), out);
    })
}

/// IB-PM-MIB's derived rows, as stored in [`crate::FabricRows`].
#[derive(Debug, Default)]
pub struct PmRows(pub RowSet<NodeIdx>);

fn rows(v: &View) -> &RowSet<NodeIdx> {
    // A node context serves no IB-PM-MIB object: it has no rows of ours.
    static NONE: LazyLock<RowSet<NodeIdx>> = LazyLock::new(RowSet::new);
    v.derived.fabric().map_or(&NONE, |f| &f.pm.0)
}

fn node(v: &View, n: NodeIdx) -> Option<&Node> {
    v.snapshot.node(n)
}

fn guid_value(node: &Node) -> Value {
    Value::OctetString(node.info.node_guid.to_bytes().to_vec())
}

fn all_port_select(node: &Node) -> bool {
    node.pma
        .as_ref()
        .is_some_and(|c| c.has(cap::ALL_PORT_SELECT))
}

/// IBA's 16-bit Tag as the MIB's 4-octet string.
fn tag_value(tag: u16) -> Value {
    let [a, b] = tag.to_be_bytes();
    Value::OctetString(vec![0, 0, a, b])
}

// ------------------------------------------------------ pmClassPortInfoTable

const CLASS_PORT_INFO_COLS: &[Col<NodeIdx>] = &[
    ro(o::PM_CLASS_PORT_INFO_GUID, |v, &n| {
        Some(guid_value(node(v, n)?))
    }),
    // TruthValue: true(1), false(2).
    ro(o::PM_CLASS_PORT_INFO_ALL_PORT_SELECT, |v, &n| {
        let all = all_port_select(node(v, n)?);
        Some(Value::Integer(if all { 1 } else { 2 }))
    }),
];

// ---------------------------------------------------- pmPortSampleCntrlTable

/// The PortSamplesControl a row shows (zeros before the PMA was asked).
fn control_of(node: &Node) -> PortSamplesControl {
    node.sampling
        .as_ref()
        .map(|s| s.control.clone())
        .unwrap_or_default()
}

fn result_of(node: &Node) -> PortSamplesResult {
    node.sampling
        .as_ref()
        .map(|s| s.result.clone())
        .unwrap_or_default()
}

/// A cell of the PortSamplesControl a row shows.
fn control(v: &View, n: NodeIdx, f: impl Fn(&PortSamplesControl) -> Value) -> Option<Value> {
    Some(f(&control_of(node(v, n)?)))
}

/// pmPortSampleCntrlCounter`I`Mask.
fn mask<const I: usize>(v: &View, n: &NodeIdx) -> Option<Value> {
    control(v, *n, |c| int32_wrapping(c.counter_mask(I).into()))
}

/// pmPortSampleCntrlCounterSelect`I`.
fn select<const I: u8>(v: &View, n: &NodeIdx) -> Option<Value> {
    control(v, *n, |c| {
        int32_wrapping(
            c.counter_select
                .get(usize::from(I))
                .copied()
                .unwrap_or(0)
                .into(),
        )
    })
}

/// pmPortSampleCntrlCounterSelect`I`, writable.
const fn select_col<const I: u8>(oid: &'static [u32]) -> Col<NodeIdx> {
    rw(oid, select::<I>, set_select::<I>)
}

fn set_select<const I: u8>(
    v: &View,
    n: &NodeIdx,
    _: &[u32],
    x: &Value,
) -> Result<Change, SetError> {
    let sel = u16::try_from(check::integer_in(x, 0..=0xFFFF)?).unwrap_or(0);
    set_sample(v, *n, SampleField::CounterSelect(I, sel))
}

const SAMPLE_CONTROL_COLS: &[Col<NodeIdx>] = &[
    ro(o::PM_PORT_SAMPLE_CNTRL_GUID, |v, &n| {
        Some(guid_value(node(v, n)?))
    }),
    rw(
        o::PM_PORT_SAMPLE_CNTRL_OP_CODE,
        |v, &n| control(v, n, |c| int32_wrapping(c.op_code.into())),
        |v, &n, _, x| {
            set_sample(
                v,
                n,
                SampleField::OpCode(u8_of(check::integer_in(x, 0..=255)?)),
            )
        },
    ),
    rw(
        o::PM_PORT_SAMPLE_CNTRL_PORT_SELECT,
        |v, &n| control(v, n, |c| int32_wrapping(c.port_select.into())),
        |v, &n, _, x| {
            let p = checked_port_select(v, n, x)?;
            set_sample(v, n, SampleField::PortSelect(p))
        },
    ),
    ro(o::PM_PORT_SAMPLE_CNTRL_TICK, |v, &n| {
        control(v, n, |c| int32_wrapping(c.tick.into()))
    }),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER_WIDTH, |v, &n| {
        control(v, n, |c| int32_wrapping(c.counter_width.into()))
    }),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER0_MASK, mask::<0>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER1_MASK, mask::<1>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER2_MASK, mask::<2>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER3_MASK, mask::<3>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER4_MASK, mask::<4>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER5_MASK, mask::<5>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER6_MASK, mask::<6>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER7_MASK, mask::<7>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER8_MASK, mask::<8>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER9_MASK, mask::<9>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER10_MASK, mask::<10>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER11_MASK, mask::<11>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER12_MASK, mask::<12>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER13_MASK, mask::<13>),
    ro(o::PM_PORT_SAMPLE_CNTRL_COUNTER14_MASK, mask::<14>),
    ro(o::PM_PORT_SAMPLE_CNTRL_SAMPLE_MECHANISMS, |v, &n| {
        control(v, n, |c| int32_wrapping(c.sample_mechanisms.into()))
    }),
    ro(o::PM_PORT_SAMPLE_CNTRL_SAMPLE_STATUS, |v, &n| {
        control(v, n, |c| int32_wrapping(c.sample_status.into()))
    }),
    ro(o::PM_PORT_SAMPLE_CNTRL_OPTION_MASK, |v, &n| {
        control(v, n, |c| {
            Value::OctetString(c.option_mask.to_be_bytes().to_vec())
        })
    }),
    ro(o::PM_PORT_SAMPLE_CNTRL_VENDOR_MASK, |v, &n| {
        control(v, n, |c| {
            Value::OctetString(c.vendor_mask.to_be_bytes().to_vec())
        })
    }),
    // The 32 bits of the Integer32 are the IBA field (see the module docs).
    rw(
        o::PM_PORT_SAMPLE_CNTRL_SAMPLE_START,
        |v, &n| control(v, n, |c| int32_wrapping(c.sample_start.into())),
        |v, &n, _, x| set_sample(v, n, SampleField::SampleStart(check::integer(x)? as u32)),
    ),
    rw(
        o::PM_PORT_SAMPLE_CNTRL_SAMPLE_INTERVAL,
        |v, &n| control(v, n, |c| int32_wrapping(c.sample_interval.into())),
        |v, &n, _, x| set_sample(v, n, SampleField::SampleInterval(check::integer(x)? as u32)),
    ),
    rw(
        o::PM_PORT_SAMPLE_CNTRL_TAG,
        |v, &n| control(v, n, |c| tag_value(c.tag)),
        |v, &n, _, x| match check::octets(x, 4..=4)? {
            [0, 0, hi, lo] => set_sample(v, n, SampleField::Tag(u16::from_be_bytes([*hi, *lo]))),
            // IBA's Tag is 16 bits: the first two octets must be zero.
            _ => Err(SetError::WrongValue),
        },
    ),
    select_col::<0>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT0),
    select_col::<1>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT1),
    select_col::<2>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT2),
    select_col::<3>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT3),
    select_col::<4>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT4),
    select_col::<5>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT5),
    select_col::<6>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT6),
    select_col::<7>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT7),
    select_col::<8>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT8),
    select_col::<9>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT9),
    select_col::<10>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT10),
    select_col::<11>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT11),
    select_col::<12>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT12),
    select_col::<13>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT13),
    select_col::<14>(o::PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT14),
];

/// One writable component of PortSamplesControl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleField {
    OpCode(u8),
    PortSelect(u8),
    SampleStart(u32),
    SampleInterval(u32),
    Tag(u16),
    /// CounterSelect`index` (0..=14).
    CounterSelect(u8, u16),
}

impl SampleField {
    fn apply(self, c: &mut PortSamplesControl) {
        match self {
            SampleField::OpCode(x) => c.op_code = x,
            SampleField::PortSelect(x) => c.port_select = x,
            SampleField::SampleStart(x) => c.sample_start = x,
            SampleField::SampleInterval(x) => c.sample_interval = x,
            SampleField::Tag(x) => c.tag = x,
            SampleField::CounterSelect(i, x) => {
                if let Some(slot) = c.counter_select.get_mut(usize::from(i)) {
                    *slot = x;
                }
            }
        }
    }
}

/// A PortSelect value (IBA: 8 bits); 255 only with AllPortSelect.
fn checked_port_select(v: &View, n: NodeIdx, value: &Value) -> Result<u8, SetError> {
    let node = node(v, n).ok_or(SetError::NoCreation)?;
    let p = u8_of(check::integer_in(value, 0..=255)?);
    if p == ALL_PORTS && !all_port_select(node) {
        return Err(SetError::WrongValue);
    }
    Ok(p)
}

/// Phase 1 of a Set of one pmPortSampleCntrl component.
fn set_sample(v: &View, n: NodeIdx, field: SampleField) -> Result<Change, SetError> {
    let node = node(v, n).ok_or(SetError::NoCreation)?;
    // No refusal here while the node samples: the snapshot may be stale,
    // and the run's owner (same Tag) may restart it. The PMA decides; an
    // ignored Set shows in its answer (check_reply: commitFailed).
    Ok(Change::Pm(PmSet::SampleControl {
        node: node.info.node_guid,
        base: Box::new(control_of(node)),
        field,
    }))
}

fn u8_of(i: i32) -> u8 {
    u8::try_from(i).unwrap_or(0)
}

// --------------------------------------------------- pmPortSampleResultTable

/// pmPortSampleResultCounter`I`.
fn result_counter<const I: usize>(v: &View, n: &NodeIdx) -> Option<Value> {
    let r = result_of(node(v, *n)?);
    Some(Value::Counter32(r.counter.get(I).copied().unwrap_or(0)))
}

const SAMPLE_RESULT_COLS: &[Col<NodeIdx>] = &[
    ro(o::PM_PORT_SAMPLE_RESULT_GUID, |v, &n| {
        Some(guid_value(node(v, n)?))
    }),
    ro(o::PM_PORT_SAMPLE_RESULT_TAG, |v, &n| {
        Some(tag_value(result_of(node(v, n)?).tag))
    }),
    ro(o::PM_RESULT_SAMPLE_STATUS, |v, &n| {
        Some(int32_wrapping(result_of(node(v, n)?).sample_status.into()))
    }),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER0, result_counter::<0>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER1, result_counter::<1>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER2, result_counter::<2>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER3, result_counter::<3>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER4, result_counter::<4>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER5, result_counter::<5>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER6, result_counter::<6>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER7, result_counter::<7>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER8, result_counter::<8>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER9, result_counter::<9>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER10, result_counter::<10>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER11, result_counter::<11>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER12, result_counter::<12>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER13, result_counter::<13>),
    ro(o::PM_PORT_SAMPLE_RESULT_COUNTER14, result_counter::<14>),
];

// ------------------------------------------------------- pmPortCountersTable

/// pmPortCountersSymbolErrors: column c (3..=18) has CounterSelect bit c - 3.
const PC_FIRST: u32 = 3;

/// The port a row reports (agent state).
pub fn port_select(view: &View, g: Guid) -> u8 {
    view.system
        .modules
        .get::<PmState>()
        .port_select
        .get(&g.0)
        .copied()
        .unwrap_or(DEFAULT_PORT_SELECT)
}

/// The values set over SNMP (persisted): pmPortCountersPortSelect by node GUID.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmState {
    #[serde(
        rename = "pmPortCountersPortSelect",
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        with = "crate::core::util::guid_keys"
    )]
    pub port_select: BTreeMap<u64, u8>,
}

impl PersistedState for PmState {
    const MODULE: &'static str = "IB-PM-MIB";

    fn from_v1(kv: &BTreeMap<String, String>) -> Self {
        PmState {
            port_select: kv
                .iter()
                .filter_map(|(k, v)| {
                    let g = k.strip_prefix("pmPortCountersPortSelect.")?;
                    Some((u64::from_str_radix(g, 16).ok()?, v.parse().ok()?))
                })
                .collect(),
        }
    }
}

/// A Set of an IB-PM-MIB column.
#[derive(Clone, Debug, PartialEq)]
pub enum PmSet {
    /// pmPortCountersPortSelect of a node (agent state).
    PortSelect { node: Guid, port: u8 },
    /// Clear the counters `select` (PortCounters:CounterSelect bits) of port
    /// `port` (255 = all) of a node's PMA.
    ClearCounter { node: Guid, port: u8, select: u16 },
    /// One written component of a node's PortSamplesControl; `base` is the
    /// node's control as the request saw it. All of a request's components
    /// for one node become one PMA Set ([`fabric_ops`]).
    SampleControl {
        node: Guid,
        base: Box<PortSamplesControl>,
        field: SampleField,
    },
}

impl PmSet {
    /// Whether it changes the agent's state (PortSelect, persisted); the
    /// others are PMA Sets, one per node ([`fabric_ops`]).
    pub(crate) fn is_agent(&self) -> bool {
        matches!(self, PmSet::PortSelect { .. })
    }

    /// Phase 2 of an agent change: into the agent's state.
    pub(crate) fn apply(&self, state: &mut SystemState) {
        if let PmSet::PortSelect { node, port } = self {
            state.modules.update::<PmState>(|m| {
                m.port_select.insert(node.0, *port);
            });
        }
    }
}

/// A node's PortCounters for PortSelect `sel`: one port's reading of this
/// sweep, zeros for a port the node lacks (IBA), the saturating sum of all
/// ports for 255. None where no current reading exists (a port this sweep
/// could not read; for 255, any port of the sum): absent, never zeros.
pub fn counters_for(snap: &Snapshot, n: NodeIdx, sel: u8) -> Option<PortCounters> {
    fn reading(p: &ib::model::Port) -> Option<&PortCounters> {
        p.counters.as_deref().map(|c| &c.readings.counters)
    }
    let mut out = if sel == ALL_PORTS {
        let ports = snap.node_ports(n);
        let is_switch = snap
            .node(n)
            .is_some_and(|x| x.info.node_type == NodeType::Switch as u8);
        ports
            .iter()
            // A switch's aggregate is over its external ports.
            .filter(|p| !(is_switch && p.num.0 == 0))
            .try_fold(PortCounters::default(), |acc, p| {
                Some(add_saturating(&acc, reading(p)?))
            })?
    } else {
        match snap.node_port(n, PortNum(sel)).and_then(|p| snap.port(p)) {
            Some(p) => reading(p)?.clone(),
            None => PortCounters::default(),
        }
    };
    out.port_select = sel;
    Some(out)
}

/// Field-wise sum at IBA's widths (each counter stops at all ones).
fn add_saturating(a: &PortCounters, b: &PortCounters) -> PortCounters {
    ib::mad::port_counters::add_saturating(a, b)
}

/// The value of pmPortCounters column `col` (3..=18) in `c`: columns 3..18
/// are the PortCounters fields in CounterSelect order
/// ([`ib::mad::port_counters::PORT_COUNTERS`], SymbolErrorCounter ...
/// PortRcvPkts).
pub fn counter_column(c: &PortCounters, col: u32) -> Option<u64> {
    let i = usize::try_from(col.checked_sub(3)?).ok()?;
    if i >= 16 {
        return None;
    }
    ib::mad::port_counters::PORT_COUNTERS
        .get(i)
        .map(|f| (f.get)(c))
}

/// pmPortCounters column of CounterSelect bit `B` (the columns from
/// pmPortCountersSymbolErrors on, in CounterSelect order).
fn counter<const B: u32>(v: &View, n: &NodeIdx) -> Option<Value> {
    let sel = port_select(v, node(v, *n)?.info.node_guid);
    let c = counters_for(&v.snapshot, *n, sel)?;
    counter_column(&c, PC_FIRST + B).map(int32_wrapping)
}

/// The pmPortCounters column of CounterSelect bit `B`.
const fn counter_col<const B: u32>(oid: &'static [u32]) -> Col<NodeIdx> {
    rw(oid, counter::<B>, clear::<B>)
}

/// A Set of the counter of CounterSelect bit `B`: clear it on the PMA.
fn clear<const B: u32>(v: &View, n: &NodeIdx, _: &[u32], x: &Value) -> Result<Change, SetError> {
    let node = node(v, *n).ok_or(SetError::NoCreation)?;
    // PMAs clear the selected counters whatever the value: only 0 says
    // what will happen.
    check::integer_in(x, 0..=0)?;
    let g = node.info.node_guid;
    let port = port_select(v, g);
    if port != ALL_PORTS && v.snapshot.node_port(*n, PortNum(port)).is_none() {
        // No such port on this node: nothing to clear.
        return Err(SetError::InconsistentValue);
    }
    Ok(Change::Pm(PmSet::ClearCounter {
        node: g,
        port,
        select: 1u16 << B,
    }))
}

const PORT_COUNTERS_COLS: &[Col<NodeIdx>] = &[
    ro(o::PM_PORT_COUNTERS_GUID, |v, &n| {
        Some(guid_value(node(v, n)?))
    }),
    rw(
        o::PM_PORT_COUNTERS_PORT_SELECT,
        |v, &n| {
            Some(int32_wrapping(
                port_select(v, node(v, n)?.info.node_guid).into(),
            ))
        },
        |v, &n, _, x| {
            let port = checked_port_select(v, n, x)?;
            let node = node(v, n).ok_or(SetError::NoCreation)?.info.node_guid;
            Ok(Change::Pm(PmSet::PortSelect { node, port }))
        },
    ),
    counter_col::<0>(o::PM_PORT_COUNTERS_SYMBOL_ERRORS),
    counter_col::<1>(o::PM_PORT_COUNTERS_LINK_ERROR_RECOVERY),
    counter_col::<2>(o::PM_PORT_COUNTERS_LINK_DOWN),
    counter_col::<3>(o::PM_PORT_COUNTERS_RCV_ERRORS),
    counter_col::<4>(o::PM_PORT_COUNTERS_RCV_REMOTE_ERRORS),
    counter_col::<5>(o::PM_PORT_COUNTERS_RCV_SW_RELAY_ERRORS),
    counter_col::<6>(o::PM_PORT_COUNTERS_XMIT_DISCARDS),
    counter_col::<7>(o::PM_PORT_COUNTERS_XMIT_CONSTRAINT_ERRORS),
    counter_col::<8>(o::PM_PORT_COUNTERS_RCV_CONSTRAINT_ERRORS),
    counter_col::<9>(o::PM_PORT_COUNTERS_LOCAL_LINK_INTEGRITY_ERRORS),
    counter_col::<10>(o::PM_PORT_COUNTERS_EXCESSIVE_BUFFER_OVERRUN),
    counter_col::<11>(o::PM_PORT_COUNTERS_VL15_DROPPED),
    counter_col::<12>(o::PM_PORT_COUNTERS_XMIT_DATA),
    counter_col::<13>(o::PM_PORT_COUNTERS_RCV_DATA),
    counter_col::<14>(o::PM_PORT_COUNTERS_XMIT_PKTS),
    counter_col::<15>(o::PM_PORT_COUNTERS_RCV_PKTS),
];

// ----------------------------------------------------------- phase 2 helpers

/// The fabric operations of one Set request's IB-PM-MIB changes, each with
/// the index of the first varbind it came from: one Set(PortCounters) per
/// node (CounterSelect bits OR-ed; a pmPortCountersPortSelect Set of the same
/// node in the same request picks the port) and one Set(PortSamplesControl)
/// per node (the node's current control with every written component).
pub fn fabric_ops(sets: &[(usize, &PmSet)]) -> Vec<(usize, ControlOp)> {
    let mut port_select: BTreeMap<Guid, u8> = BTreeMap::new();
    for (_, s) in sets {
        if let PmSet::PortSelect { node, port } = s {
            port_select.insert(*node, *port);
        }
    }
    // (first index, op) per node, in first-appearance order.
    let mut counters: Vec<(usize, Guid, u8, u16)> = Vec::new();
    let mut samples: Vec<(usize, Guid, PortSamplesControl)> = Vec::new();
    for &(i, s) in sets {
        match s {
            PmSet::ClearCounter { node, port, select } => {
                let port = port_select.get(node).copied().unwrap_or(*port);
                match counters.iter_mut().find(|x| x.1 == *node) {
                    Some(x) => x.3 |= select,
                    None => counters.push((i, *node, port, *select)),
                }
            }
            PmSet::SampleControl { node, base, field } => {
                match samples.iter_mut().find(|x| x.1 == *node) {
                    Some(x) => field.apply(&mut x.2),
                    None => {
                        let mut c = (**base).clone();
                        field.apply(&mut c);
                        samples.push((i, *node, c));
                    }
                }
            }
            PmSet::PortSelect { .. } => {}
        }
    }
    let mut ops: Vec<(usize, ControlOp)> = counters
        .into_iter()
        .map(|(i, node, port, select)| {
            (
                i,
                ControlOp::SetPortCounters {
                    node,
                    port: PortNum(port),
                    counter_select: select,
                    counter_select2: 0,
                    values: PortCounters::default(),
                },
            )
        })
        .chain(
            samples
                .into_iter()
                .map(|(i, node, control)| (i, ControlOp::SetPortSamplesControl { node, control })),
        )
        .collect();
    ops.sort_by_key(|(i, _)| *i);
    ops
}

/// Checks a PMA's answer to an operation from [`fabric_ops`]: a
/// Set(PortSamplesControl) answered with another Tag was ignored by the PMA
/// (someone else's sampling run holds it: IBA's Tag collision rule).
pub fn check_reply(op: &ControlOp, reply: &ControlReply) -> Result<(), String> {
    match (op, reply) {
        (
            ControlOp::SetPortSamplesControl { node, control },
            ControlReply::PortSamplesControl(answer),
        ) if answer.tag != control.tag => Err(format!(
            "node {node}: PortSamplesControl Set ignored by the PMA: sampling run with Tag \
             {:#06x} in progress (Tag collision)",
            answer.tag
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_fields_merge_into_one_op_per_node() {
        let g = Guid(0x0002_c903_0000_0001);
        let h = Guid(0x0002_c903_0000_0002);
        let base = Box::new(PortSamplesControl {
            tick: 0xFF,
            sample_interval: 5,
            ..PortSamplesControl::default()
        });
        let sc = |node, field| {
            Change::Pm(PmSet::SampleControl {
                node,
                base: base.clone(),
                field,
            })
        };
        let changes = vec![
            Change::System(crate::modules::snmpv2::SystemSet::SysContact("x".into())),
            sc(g, SampleField::CounterSelect(0, 1)),
            Change::Pm(PmSet::ClearCounter {
                node: h,
                port: 1,
                select: 1,
            }),
            sc(g, SampleField::Tag(0x1234)),
            Change::Pm(PmSet::ClearCounter {
                node: h,
                port: 1,
                select: 1 << 5,
            }),
            Change::Pm(PmSet::PortSelect { node: h, port: 3 }),
            sc(g, SampleField::SampleStart(7)),
        ];
        let ops = crate::plan(&changes).fabric;
        assert_eq!(ops.len(), 2);
        match &ops[0] {
            (1, ControlOp::SetPortSamplesControl { node, control }) => {
                assert_eq!(*node, g);
                assert_eq!(control.counter_select[0], 1);
                assert_eq!(control.tag, 0x1234);
                assert_eq!(control.sample_start, 7);
                assert_eq!(control.sample_interval, 5);
            }
            other => panic!("{other:?}"),
        }
        match &ops[1] {
            (
                2,
                ControlOp::SetPortCounters {
                    node,
                    port,
                    counter_select,
                    ..
                },
            ) => {
                assert_eq!(*node, h);
                assert_eq!(port.0, 3, "PortSelect of the same request wins");
                assert_eq!(*counter_select, 0b10_0001);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reply_with_foreign_tag_fails() {
        let control = PortSamplesControl {
            tag: 1,
            ..PortSamplesControl::default()
        };
        let op = ControlOp::SetPortSamplesControl {
            node: Guid(1),
            control: control.clone(),
        };
        assert!(check_reply(&op, &ControlReply::PortSamplesControl(control.clone())).is_ok());
        let other = PortSamplesControl { tag: 2, ..control };
        assert!(check_reply(&op, &ControlReply::PortSamplesControl(other)).is_err());
    }

    fn ca(guid: u64) -> Node {
        Node {
            info: ib::mad::smp::NodeInfo {
                node_type: NodeType::Ca.raw(),
                node_guid: Guid(guid),
                ..Default::default()
            },
            description: String::new(),
            ports: 0..0,
            switch: None,
            pma: None,
            sampling: None,
        }
    }

    #[test]
    fn rows_are_published_once_in_guid_order() {
        let mut b = ib::model::SnapshotBuilder::new(0);
        for g in [0x30, 0x10, 0x20] {
            b.add_node(ca(g), Vec::new());
        }
        let snap = Arc::new(b.build(
            ib::model::SweepInfo {
                number: 1,
                time: std::time::SystemTime::now(),
                duration: std::time::Duration::ZERO,
                source: "test-pm-rows".into(),
                cost: Default::default(),
            },
            &mut ib::model::CounterHistory::new(),
        ));
        let published = crate::Publisher::new().publish(snap);
        let order: Vec<u64> = published
            .derived
            .fabric()
            .unwrap()
            .pm
            .0
            .rows()
            .iter()
            .filter_map(|&n| published.snapshot.node(n))
            .map(|n| n.info.node_guid.0)
            .collect();
        assert_eq!(order, vec![0x10, 0x20, 0x30]);
        // Views share the published rows: no per-request derivation.
        let system = Arc::new(crate::SystemState::new(
            "t".into(),
            snmp::oid::Oid::new(vec![1, 3]),
        ));
        let stats = Arc::new(snmp::agent::SnmpStats::default());
        let v1 = View::from_published(&published, system.clone(), stats.clone());
        let v2 = View::from_published(&published, system, stats);
        assert!(Arc::ptr_eq(&v1.derived, &v2.derived));
        let table = table(o::PM_CLASS_PORT_INFO_ENTRY, rows, CLASS_PORT_INFO_COLS);
        let mut oid = o::PM_CLASS_PORT_INFO_GUID.to_vec();
        oid.extend([0, 0, 0, 0, 0, 0, 0, 0x20]);
        assert_eq!(
            table.get(&v1, &oid),
            Value::OctetString(vec![0, 0, 0, 0, 0, 0, 0, 0x20])
        );
    }

    #[test]
    fn aggregate_saturates() {
        let a = PortCounters {
            symbol_error_counter: 0xFFF0,
            local_link_integrity_errors: 9,
            port_xmit_data: 0xFFFF_FFF0,
            ..PortCounters::default()
        };
        let s = add_saturating(&a, &a);
        assert_eq!(s.symbol_error_counter, 0xFFFF);
        assert_eq!(s.local_link_integrity_errors, 0xF);
        assert_eq!(s.port_xmit_data, 0xFFFF_FFFF);
        assert_eq!(int32_wrapping(0xFFFF_FFFF), Value::Integer(-1));
        assert_eq!(int32_wrapping(0x8000_0000), Value::Integer(i32::MIN));
        assert_eq!(int32_wrapping(5), Value::Integer(5));
    }
}
