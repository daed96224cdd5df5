//! DISMAN-EVENT-MIB's objects over [`super::Monitors`]: every row is a
//! configured one (owner [`super::OWNER`], active, enabled), every column
//! read-only (the configuration is where triggers are changed).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

use snmp::table::{RowSet, Scalars};
use snmp::value::Value;

use super::{
    event_name, Comparison, Event, Existence, FiredKind, MonitorStats, ObjectsRow, Startup, Test,
    Trigger, OWNER,
};
use crate::core::column::{index, ro, table};
use crate::core::oids::{disman_event_mib as o, snmpv2_mib};
use crate::core::util::{last, oid};
use crate::Col;
use crate::Object;
use crate::View;

fn text(s: &str) -> Value {
    Value::OctetString(s.as_bytes().to_vec())
}

fn truth(b: bool) -> Value {
    Value::Integer(if b { 1 } else { 2 })
}

/// RowStatus active(1).
const ACTIVE: Value = Value::Integer(1);

/// An owner or name column that refers to a row: `name` when the row
/// refers to one, else the MIB's empty default.
fn named(yes: bool, name: &str) -> Option<Value> {
    Some(text(if yes { name } else { "" }))
}

/// The owner of the rows a column refers to (all configured: [`OWNER`]).
fn owner(yes: bool) -> Option<Value> {
    named(yes, OWNER)
}

/// The event a trigger's firing of `kind` runs (mteTrigger...Event).
fn event(yes: bool, kind: FiredKind) -> Option<Value> {
    named(yes, event_name(kind))
}

pub(super) fn objects(_: &crate::Options) -> Vec<Object> {
    fn stat(v: &View, f: fn(&MonitorStats) -> &AtomicU32) -> u32 {
        f(&v.system.monitors.stats).load(Relaxed)
    }
    let resource = Scalars::new(oid(o::MTE_RESOURCE))
        // Samples are at least a second apart; instances are not capped.
        .read_only(last(o::MTE_RESOURCE_SAMPLE_MINIMUM), |_| Value::Integer(1))
        .read_only(last(o::MTE_RESOURCE_SAMPLE_INSTANCE_MAXIMUM), |_| {
            Value::Gauge32(0)
        })
        .read_only(last(o::MTE_RESOURCE_SAMPLE_INSTANCES), |v: &View| {
            Value::Gauge32(stat(v, |s| &s.instances))
        })
        .read_only(last(o::MTE_RESOURCE_SAMPLE_INSTANCES_HIGH), |v: &View| {
            Value::Gauge32(stat(v, |s| &s.instances_high))
        })
        .read_only(last(o::MTE_RESOURCE_SAMPLE_INSTANCE_LACKS), |_| {
            Value::Counter32(0)
        });
    let failures = Scalars::new(oid(o::MTE_TRIGGER))
        .read_only(last(o::MTE_TRIGGER_FAILURES), |v: &View| {
            Value::Counter32(stat(v, |s| &s.failures))
        });
    let event_failures = Scalars::new(oid(o::MTE_EVENT))
        .read_only(last(o::MTE_EVENT_FAILURES), |v: &View| {
            Value::Counter32(stat(v, |s| &s.event_failures))
        });
    let mut objs: Vec<Object> = vec![Arc::new(resource)];
    objs.extend(failures.into_objects());
    objs.extend(event_failures.into_objects());
    objs.extend([
        Arc::new(table(o::MTE_TRIGGER_ENTRY, triggers, TRIGGER_COLS)) as Object,
        Arc::new(table(o::MTE_TRIGGER_DELTA_ENTRY, triggers, DELTA_COLS)),
        Arc::new(table(
            o::MTE_TRIGGER_EXISTENCE_ENTRY,
            triggers,
            EXISTENCE_COLS,
        )),
        Arc::new(table(o::MTE_TRIGGER_BOOLEAN_ENTRY, triggers, BOOLEAN_COLS)),
        Arc::new(table(
            o::MTE_TRIGGER_THRESHOLD_ENTRY,
            triggers,
            THRESHOLD_COLS,
        )),
        Arc::new(table(
            o::MTE_OBJECTS_ENTRY,
            |v: &View| &v.system.monitors.objects,
            OBJECTS_COLS,
        )),
        Arc::new(table(o::MTE_EVENT_ENTRY, events, EVENT_COLS)),
        Arc::new(table(
            o::MTE_EVENT_NOTIFICATION_ENTRY,
            events,
            NOTIFICATION_COLS,
        )),
    ]);
    objs
}

fn triggers(v: &View) -> &RowSet<Trigger> {
    &v.system.monitors.triggers
}

fn events(v: &View) -> &RowSet<Event> {
    &v.system.monitors.events
}

const TRIGGER_COLS: &[Col<Trigger>] = &[
    index(o::MTE_OWNER),
    index(o::MTE_TRIGGER_NAME),
    ro(o::MTE_TRIGGER_COMMENT, |_, t| Some(text(&t.comment))),
    ro(o::MTE_TRIGGER_TEST, |_, t| {
        Some(Value::OctetString(vec![t.test_bits()]))
    }),
    // absoluteValue(1), deltaValue(2).
    ro(o::MTE_TRIGGER_SAMPLE_TYPE, |_, t| {
        Some(Value::Integer(if t.delta { 2 } else { 1 }))
    }),
    ro(o::MTE_TRIGGER_VALUE_ID, |_, t| {
        Some(Value::ObjectId(t.value_id.clone()))
    }),
    ro(o::MTE_TRIGGER_VALUE_ID_WILDCARD, |_, t| {
        Some(truth(t.wildcard))
    }),
    ro(o::MTE_TRIGGER_TARGET_TAG, |_, _| Some(text(""))),
    ro(o::MTE_TRIGGER_CONTEXT_NAME, |_, t| {
        Some(Value::OctetString(t.context.clone()))
    }),
    ro(o::MTE_TRIGGER_CONTEXT_NAME_WILDCARD, |_, t| {
        Some(truth(t.context_wildcard))
    }),
    ro(o::MTE_TRIGGER_FREQUENCY, |_, t| {
        Some(Value::Gauge32(t.frequency))
    }),
    // The trigger's mteObjectsTable rows are named after it.
    ro(o::MTE_TRIGGER_OBJECTS_OWNER, |_, t| {
        owner(!t.objects.is_empty())
    }),
    ro(o::MTE_TRIGGER_OBJECTS, |_, t| {
        named(!t.objects.is_empty(), &t.name)
    }),
    ro(o::MTE_TRIGGER_ENABLED, |_, _| Some(truth(true))),
    ro(o::MTE_TRIGGER_ENTRY_STATUS, |_, _| Some(ACTIVE)),
];

// Discontinuities are seen in the values themselves (a counter that went
// back, an instance that vanished); sysUpTime.0 is the MIB's default and
// never goes back while the agent runs.
const DELTA_COLS: &[Col<Trigger>] = &[
    ro(o::MTE_TRIGGER_DELTA_DISCONTINUITY_ID, |_, _| {
        Some(Value::ObjectId(oid(snmpv2_mib::SYS_UP_TIME).join(&[0])))
    }),
    ro(o::MTE_TRIGGER_DELTA_DISCONTINUITY_ID_WILDCARD, |_, _| {
        Some(truth(false))
    }),
    // timeTicks(1).
    ro(o::MTE_TRIGGER_DELTA_DISCONTINUITY_ID_TYPE, |_, _| {
        Some(Value::Integer(1))
    }),
];

/// The trigger's existence test and startup, if it has one.
fn existence(t: &Trigger) -> Option<(Existence, Existence)> {
    match t.test {
        Test::Existence { test, startup } => Some((test, startup)),
        _ => None,
    }
}

/// The BITS octet of an existence test, {present, absent} (the MIB's
/// default) for other triggers.
fn existence_bits(e: Option<Existence>) -> Option<Value> {
    Some(Value::OctetString(vec![e.map_or(0xc0, Existence::bits)]))
}

const EXISTENCE_COLS: &[Col<Trigger>] = &[
    ro(o::MTE_TRIGGER_EXISTENCE_TEST, |_, t| {
        existence_bits(existence(t).map(|e| e.0))
    }),
    ro(o::MTE_TRIGGER_EXISTENCE_STARTUP, |_, t| {
        existence_bits(existence(t).map(|e| e.1))
    }),
    ro(o::MTE_TRIGGER_EXISTENCE_OBJECTS_OWNER, |_, _| {
        Some(text(""))
    }),
    ro(o::MTE_TRIGGER_EXISTENCE_OBJECTS, |_, _| Some(text(""))),
    ro(o::MTE_TRIGGER_EXISTENCE_EVENT_OWNER, |_, t| {
        owner(existence(t).is_some())
    }),
    ro(o::MTE_TRIGGER_EXISTENCE_EVENT, |_, t| {
        event(existence(t).is_some(), FiredKind::Fired)
    }),
];

/// The trigger's boolean test, the MIB's defaults (unequal 0, startup true)
/// for other triggers; and whether it has one.
fn boolean(t: &Trigger) -> (Comparison, i32, bool, bool) {
    match t.test {
        Test::Boolean { op, value, startup } => (op, value, startup, true),
        _ => (Comparison::Unequal, 0, true, false),
    }
}

const BOOLEAN_COLS: &[Col<Trigger>] = &[
    ro(o::MTE_TRIGGER_BOOLEAN_COMPARISON, |_, t| {
        Some(Value::Integer(boolean(t).0 as i32))
    }),
    ro(o::MTE_TRIGGER_BOOLEAN_VALUE, |_, t| {
        Some(Value::Integer(boolean(t).1))
    }),
    ro(o::MTE_TRIGGER_BOOLEAN_STARTUP, |_, t| {
        Some(truth(boolean(t).2))
    }),
    ro(o::MTE_TRIGGER_BOOLEAN_OBJECTS_OWNER, |_, _| Some(text(""))),
    ro(o::MTE_TRIGGER_BOOLEAN_OBJECTS, |_, _| Some(text(""))),
    ro(o::MTE_TRIGGER_BOOLEAN_EVENT_OWNER, |_, t| {
        owner(boolean(t).3)
    }),
    ro(o::MTE_TRIGGER_BOOLEAN_EVENT, |_, t| {
        event(boolean(t).3, FiredKind::Fired)
    }),
];

/// The trigger's threshold test, the MIB's defaults (risingOrFalling, 0, 0)
/// for other triggers; and whether it has one.
fn threshold(t: &Trigger) -> (Startup, i32, i32, bool) {
    match t.test {
        Test::Threshold {
            rising,
            falling,
            startup,
        } => (startup, rising, falling, true),
        _ => (Startup::RisingOrFalling, 0, 0, false),
    }
}

// Delta thresholds are not configurable: their values are 0, their events
// empty.
const THRESHOLD_COLS: &[Col<Trigger>] = &[
    ro(o::MTE_TRIGGER_THRESHOLD_STARTUP, |_, t| {
        Some(Value::Integer(threshold(t).0 as i32))
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_RISING, |_, t| {
        Some(Value::Integer(threshold(t).1))
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_FALLING, |_, t| {
        Some(Value::Integer(threshold(t).2))
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_DELTA_RISING, |_, _| {
        Some(Value::Integer(0))
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_DELTA_FALLING, |_, _| {
        Some(Value::Integer(0))
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_OBJECTS_OWNER, |_, _| {
        Some(text(""))
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_OBJECTS, |_, _| Some(text(""))),
    ro(o::MTE_TRIGGER_THRESHOLD_RISING_EVENT_OWNER, |_, t| {
        owner(threshold(t).3)
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_RISING_EVENT, |_, t| {
        event(threshold(t).3, FiredKind::Rising)
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_FALLING_EVENT_OWNER, |_, t| {
        owner(threshold(t).3)
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_FALLING_EVENT, |_, t| {
        event(threshold(t).3, FiredKind::Falling)
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_DELTA_RISING_EVENT_OWNER, |_, _| {
        Some(text(""))
    }),
    ro(o::MTE_TRIGGER_THRESHOLD_DELTA_RISING_EVENT, |_, _| {
        Some(text(""))
    }),
    ro(
        o::MTE_TRIGGER_THRESHOLD_DELTA_FALLING_EVENT_OWNER,
        |_, _| Some(text("")),
    ),
    ro(o::MTE_TRIGGER_THRESHOLD_DELTA_FALLING_EVENT, |_, _| {
        Some(text(""))
    }),
];

const OBJECTS_COLS: &[Col<ObjectsRow>] = &[
    index(o::MTE_OBJECTS_NAME),
    index(o::MTE_OBJECTS_INDEX),
    ro(o::MTE_OBJECTS_ID, |_, r| {
        Some(Value::ObjectId(r.id.clone()))
    }),
    ro(o::MTE_OBJECTS_ID_WILDCARD, |_, r| Some(truth(r.wildcard))),
    ro(o::MTE_OBJECTS_ENTRY_STATUS, |_, _| Some(ACTIVE)),
];

const EVENT_COLS: &[Col<Event>] = &[
    index(o::MTE_EVENT_NAME),
    ro(o::MTE_EVENT_COMMENT, |_, e| Some(text(e.comment))),
    // notification(0)
    ro(o::MTE_EVENT_ACTIONS, |_, _| {
        Some(Value::OctetString(vec![0x80]))
    }),
    ro(o::MTE_EVENT_ENABLED, |_, _| Some(truth(true))),
    ro(o::MTE_EVENT_ENTRY_STATUS, |_, _| Some(ACTIVE)),
];

const NOTIFICATION_COLS: &[Col<Event>] = &[
    ro(o::MTE_EVENT_NOTIFICATION, |_, e| {
        Some(Value::ObjectId(oid(e.notification)))
    }),
    ro(o::MTE_EVENT_NOTIFICATION_OBJECTS_OWNER, |_, _| {
        Some(text(""))
    }),
    ro(o::MTE_EVENT_NOTIFICATION_OBJECTS, |_, _| Some(text(""))),
];
