//! DISMAN-EVENT-MIB (RFC 2981): threshold monitoring the net-snmp way.
//!
//! Triggers come from the configuration (`[[monitor]]`, net-snmp's
//! `monitor` directive): each samples one object (or, wildcarded, every
//! instance under it) of the agent's own MIB every `frequency` seconds and
//! tests it (existence, boolean or threshold, absolute or delta values).
//! A trigger that fires sends mteTriggerFired, mteTriggerRising or
//! mteTriggerFalling through the agent's notification sinks; a trigger that
//! cannot sample sends mteTriggerFailure and counts in mteTriggerFailures.
//!
//! Parts: this file (the configured triggers, [`Monitors`], the module's
//! registry entry), `tables` (the MIB objects, read-only: rows are
//! configuration, owner [`OWNER`], active), `eval` (sampling and the tests,
//! [`Evaluator`]).

use std::sync::atomic::AtomicU32;

use snmp::index::{ImpliedOctets, IndexCodec, VarOctets};
use snmp::oid::Oid;
use snmp::table::RowSet;

use crate::core::oids::disman_event_mib as o;
use crate::core::view::SysOrEntry;

mod eval;
mod tables;

pub use eval::{Evaluator, Fired, FiredKind, Sampler};

/// mteOwner of every configured row (net-snmp uses `_snmpd`).
pub const OWNER: &str = "_ibsnmpd";

/// This module in the registry ([`crate::REGISTRY`]). mteEventSetTable is
/// not served: events only notify (no Set actions).
pub const DEF: crate::ModuleDef = crate::ModuleDef::plain(
    "DISMAN-EVENT-MIB",
    || {
        Some(SysOrEntry::new(
            o::DISMAN_EVENT_MIB,
            "The MIB for event triggers: configured threshold monitors (RFC 2981)",
        ))
    },
    tables::objects,
);

/// mteTriggerBooleanComparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Unequal = 1,
    Equal = 2,
    Less = 3,
    LessOrEqual = 4,
    Greater = 5,
    GreaterOrEqual = 6,
}

impl Comparison {
    /// `sample OP value`.
    pub fn holds(self, sample: i64, value: i64) -> bool {
        match self {
            Comparison::Unequal => sample != value,
            Comparison::Equal => sample == value,
            Comparison::Less => sample < value,
            Comparison::LessOrEqual => sample <= value,
            Comparison::Greater => sample > value,
            Comparison::GreaterOrEqual => sample >= value,
        }
    }
}

/// mteTriggerThresholdStartup: which alarm the first sample may raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Startup {
    Rising = 1,
    Falling = 2,
    RisingOrFalling = 3,
}

impl Startup {
    fn rising(self) -> bool {
        self != Startup::Falling
    }
    fn falling(self) -> bool {
        self != Startup::Rising
    }
}

/// mteTriggerExistenceTest / Startup bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Existence {
    pub present: bool,
    pub absent: bool,
    pub changed: bool,
}

impl Existence {
    /// The BITS octet (present(0), absent(1), changed(2)).
    fn bits(self) -> u8 {
        (u8::from(self.present) << 7) | (u8::from(self.absent) << 6) | (u8::from(self.changed) << 5)
    }
}

/// A trigger's test (mteTriggerTest: exactly one, as `monitor` sets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Test {
    /// Fires when an instance appears, disappears or changes value.
    Existence { test: Existence, startup: Existence },
    /// Fires when `sample OP value` becomes true.
    Boolean {
        op: Comparison,
        value: i32,
        startup: bool,
    },
    /// Fires rising at `rising` and above, falling at `falling` and below,
    /// each rearmed by the other.
    Threshold {
        rising: i32,
        falling: i32,
        startup: Startup,
    },
}

/// One configured trigger (`[[monitor]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// mteTriggerName (1..32 octets).
    pub name: String,
    /// mteTriggerComment.
    pub comment: String,
    /// mteTriggerValueID.
    pub value_id: Oid,
    /// mteTriggerValueIDWildcard: every instance under `value_id`.
    pub wildcard: bool,
    /// mteTriggerContextName: the context sampled ("" the default one),
    /// or with `context_wildcard` the prefix of the node contexts sampled.
    pub context: Vec<u8>,
    /// mteTriggerContextNameWildcard: every node context whose name starts
    /// with `context`, one per node (its GUID context; `context` "" is
    /// every node, the default context left out: its ports are the local
    /// node's, already one of the nodes).
    pub context_wildcard: bool,
    pub test: Test,
    /// mteTriggerSampleType deltaValue(2).
    pub delta: bool,
    /// mteTriggerFrequency, seconds.
    pub frequency: u32,
    /// mteObjectsTable rows named after the trigger: extra varbinds, each
    /// (OID, wildcard: the sampled instance's suffix appended).
    pub objects: Vec<(Oid, bool)>,
}

impl Trigger {
    fn test_bits(&self) -> u8 {
        match self.test {
            Test::Existence { .. } => 0x80,
            Test::Boolean { .. } => 0x40,
            Test::Threshold { .. } => 0x20,
        }
    }
}

/// One mteObjectsTable row.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ObjectsRow {
    id: Oid,
    wildcard: bool,
}

/// One mteEventTable row: the events every trigger of `monitor` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    comment: &'static str,
    notification: &'static [u32],
}

/// mteEventName of the event each kind of firing runs.
const EVENTS: [(&str, Event); 4] = [
    (
        "_mteTriggerFailure",
        Event {
            comment: "A trigger could not sample its object",
            notification: o::MTE_TRIGGER_FAILURE,
        },
    ),
    (
        "_mteTriggerFalling",
        Event {
            comment: "A threshold trigger fell to its falling threshold",
            notification: o::MTE_TRIGGER_FALLING,
        },
    ),
    (
        "_mteTriggerFired",
        Event {
            comment: "An existence or boolean trigger fired",
            notification: o::MTE_TRIGGER_FIRED,
        },
    ),
    (
        "_mteTriggerRising",
        Event {
            comment: "A threshold trigger rose to its rising threshold",
            notification: o::MTE_TRIGGER_RISING,
        },
    ),
];

/// The mteResource counters and mteTriggerFailures (runtime).
#[derive(Debug, Default)]
pub struct MonitorStats {
    /// mteTriggerFailures.
    pub failures: AtomicU32,
    /// mteResourceSampleInstances: instances sampled at the last samples.
    pub instances: AtomicU32,
    /// mteResourceSampleInstancesHigh.
    pub instances_high: AtomicU32,
    /// mteEventFailures: notifications the originator could not queue.
    pub event_failures: AtomicU32,
}

/// The configured triggers as the MIB's tables, and their counters; in the
/// agent state ([`crate::SystemState::monitors`]).
#[derive(Debug, Default)]
pub struct Monitors {
    triggers: RowSet<Trigger>,
    objects: RowSet<ObjectsRow>,
    events: RowSet<Event>,
    pub stats: MonitorStats,
}

/// `mteOwner, IMPLIED name`: the index of trigger and event rows.
fn owner_index(name: &str) -> Vec<u32> {
    let mut k = VarOctets::to_subids(&OWNER.as_bytes().to_vec());
    ImpliedOctets::encode(&name.as_bytes().to_vec(), &mut k);
    k
}

impl Monitors {
    /// The tables of `triggers` (names unique: the configuration checks).
    pub fn new(triggers: Vec<Trigger>) -> Self {
        let objects = triggers.iter().flat_map(|t| {
            t.objects.iter().zip(1u32..).map(|((id, wildcard), n)| {
                let mut k = VarOctets::to_subids(&OWNER.as_bytes().to_vec());
                VarOctets::encode(&t.name.as_bytes().to_vec(), &mut k);
                k.push(n);
                (
                    k,
                    ObjectsRow {
                        id: id.clone(),
                        wildcard: *wildcard,
                    },
                )
            })
        });
        let objects = RowSet::from_pairs(objects.collect::<Vec<_>>());
        let events = if triggers.is_empty() {
            RowSet::new()
        } else {
            RowSet::from_pairs(EVENTS.iter().map(|(n, e)| (owner_index(n), *e)))
        };
        Monitors {
            triggers: RowSet::from_pairs(triggers.into_iter().map(|t| (owner_index(&t.name), t))),
            objects,
            events,
            stats: MonitorStats::default(),
        }
    }

    /// The triggers, in mteTriggerTable order.
    pub fn triggers(&self) -> &[Trigger] {
        self.triggers.rows()
    }
}

/// The event a firing runs (mteTrigger...Event).
pub fn event_name(kind: FiredKind) -> &'static str {
    match kind {
        FiredKind::Fired => "_mteTriggerFired",
        FiredKind::Rising => "_mteTriggerRising",
        FiredKind::Falling => "_mteTriggerFalling",
        FiredKind::Failure(_) => "_mteTriggerFailure",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_indexed_by_owner_and_implied_name() {
        let t = Trigger {
            name: "ab".into(),
            comment: String::new(),
            value_id: Oid::from_slice(&[1, 3, 6]),
            wildcard: true,
            context: Vec::new(),
            context_wildcard: false,
            test: Test::Boolean {
                op: Comparison::Unequal,
                value: 1,
                startup: true,
            },
            delta: false,
            frequency: 60,
            objects: vec![(Oid::from_slice(&[1, 3, 7]), true)],
        };
        let m = Monitors::new(vec![t]);
        let owner: Vec<u32> = OWNER.bytes().map(u32::from).collect();
        let mut k = vec![owner.len() as u32];
        k.extend(&owner);
        k.extend([97, 98]);
        assert_eq!(m.triggers.key(0), k.as_slice());
        assert_eq!(m.events.len(), 4);
        let mut ok = vec![owner.len() as u32];
        ok.extend(&owner);
        ok.extend([2, 97, 98, 1]);
        assert_eq!(m.objects.key(0), ok.as_slice());
        assert!(Monitors::new(Vec::new()).events.is_empty());
    }
}
