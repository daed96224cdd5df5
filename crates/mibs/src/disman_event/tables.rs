//! DISMAN-EVENT-MIB's objects over [`super::Monitors`]: every row is a
//! configured one (owner [`super::OWNER`], active, enabled), every column
//! read-only (the configuration is where triggers are changed).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

use snmp::table::{Scalars, Table};
use snmp::value::Value;

use super::{Event, MonitorStats, ObjectsRow, Startup, Test, Trigger, OWNER};
use crate::oids::{disman_event_mib as o, snmpv2_mib};
use crate::util::{last, oid};
use crate::view::View;
use crate::Object;

fn text(s: &str) -> Value {
    Value::OctetString(s.as_bytes().to_vec())
}

fn truth(b: bool) -> Value {
    Value::Integer(if b { 1 } else { 2 })
}

/// RowStatus active(1).
const ACTIVE: Value = Value::Integer(1);

/// (owner, event) when `yes`, else the MIB's empty defaults.
fn event_ref(yes: bool, name: &str, col_owner: bool) -> Value {
    match (yes, col_owner) {
        (false, _) => text(""),
        (true, true) => text(OWNER),
        (true, false) => text(name),
    }
}

fn columns(first: &[u32], last_col: &[u32]) -> Vec<u32> {
    (last(first)..=last(last_col)).collect()
}

pub(super) fn objects() -> Vec<Object> {
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
        Arc::new(trigger_table()) as Object,
        Arc::new(delta_table()),
        Arc::new(existence_table()),
        Arc::new(boolean_table()),
        Arc::new(threshold_table()),
        Arc::new(objects_table()),
        Arc::new(event_table()),
        Arc::new(event_notification_table()),
    ]);
    objs
}

/// A read-only table over the configured triggers.
fn triggers<G>(entry: &[u32], cols: Vec<u32>, cell: G) -> Table<View, crate::Change, Trigger>
where
    G: Fn(&Trigger, u32) -> Option<Value> + Send + Sync + 'static,
{
    Table::new(
        oid(entry),
        |v: &View| &v.system.monitors.triggers,
        move |_, t: &Trigger, col| cell(t, col),
    )
    .read_only(&cols)
}

fn trigger_table() -> Table<View, crate::Change, Trigger> {
    let cols = columns(o::MTE_TRIGGER_COMMENT, o::MTE_TRIGGER_ENTRY_STATUS);
    triggers(o::MTE_TRIGGER_ENTRY, cols, |t, col| {
        let has_objects = !t.objects.is_empty();
        Some(match col {
            3 => text(&t.comment),
            4 => Value::OctetString(vec![t.test_bits()]),
            5 => Value::Integer(if t.delta { 2 } else { 1 }),
            6 => Value::ObjectId(t.value_id.clone()),
            7 => truth(t.wildcard),
            8 | 9 => text(""),
            10 => truth(false),
            11 => Value::Gauge32(t.frequency),
            12 => event_ref(has_objects, &t.name, true),
            13 => event_ref(has_objects, &t.name, false),
            14 => truth(true),
            15 => ACTIVE,
            _ => return None,
        })
    })
}

fn delta_table() -> Table<View, crate::Change, Trigger> {
    let cols = columns(
        o::MTE_TRIGGER_DELTA_DISCONTINUITY_ID,
        o::MTE_TRIGGER_DELTA_DISCONTINUITY_ID_TYPE,
    );
    triggers(o::MTE_TRIGGER_DELTA_ENTRY, cols, |_, col| {
        Some(match col {
            // Discontinuities are seen in the values themselves (a counter
            // that went back, an instance that vanished); sysUpTime.0 is
            // the MIB's default and never goes back while the agent runs.
            1 => Value::ObjectId(oid(snmpv2_mib::SYS_UP_TIME).join(&[0])),
            2 => truth(false),
            3 => Value::Integer(1),
            _ => return None,
        })
    })
}

fn existence_table() -> Table<View, crate::Change, Trigger> {
    let cols = columns(
        o::MTE_TRIGGER_EXISTENCE_TEST,
        o::MTE_TRIGGER_EXISTENCE_EVENT,
    );
    triggers(o::MTE_TRIGGER_EXISTENCE_ENTRY, cols, |t, col| {
        let (test, startup, yes) = match t.test {
            Test::Existence { test, startup } => (test.bits(), startup.bits(), true),
            // The MIB's defaults: {present, absent}.
            _ => (0xc0, 0xc0, false),
        };
        Some(match col {
            1 => Value::OctetString(vec![test]),
            2 => Value::OctetString(vec![startup]),
            3 | 4 => text(""),
            5 => event_ref(yes, "_mteTriggerFired", true),
            6 => event_ref(yes, "_mteTriggerFired", false),
            _ => return None,
        })
    })
}

fn boolean_table() -> Table<View, crate::Change, Trigger> {
    let cols = columns(
        o::MTE_TRIGGER_BOOLEAN_COMPARISON,
        o::MTE_TRIGGER_BOOLEAN_EVENT,
    );
    triggers(o::MTE_TRIGGER_BOOLEAN_ENTRY, cols, |t, col| {
        let (op, value, startup, yes) = match t.test {
            Test::Boolean { op, value, startup } => (op as i32, value, startup, true),
            _ => (1, 0, true, false),
        };
        Some(match col {
            1 => Value::Integer(op),
            2 => Value::Integer(value),
            3 => truth(startup),
            4 | 5 => text(""),
            6 => event_ref(yes, "_mteTriggerFired", true),
            7 => event_ref(yes, "_mteTriggerFired", false),
            _ => return None,
        })
    })
}

fn threshold_table() -> Table<View, crate::Change, Trigger> {
    let cols = columns(
        o::MTE_TRIGGER_THRESHOLD_STARTUP,
        o::MTE_TRIGGER_THRESHOLD_DELTA_FALLING_EVENT,
    );
    triggers(o::MTE_TRIGGER_THRESHOLD_ENTRY, cols, |t, col| {
        let (startup, rising, falling, yes) = match t.test {
            Test::Threshold {
                rising,
                falling,
                startup,
            } => (startup, rising, falling, true),
            _ => (Startup::RisingOrFalling, 0, 0, false),
        };
        Some(match col {
            1 => Value::Integer(startup as i32),
            2 => Value::Integer(rising),
            3 => Value::Integer(falling),
            4 | 5 => Value::Integer(0),
            6 | 7 => text(""),
            8 => event_ref(yes, "_mteTriggerRising", true),
            9 => event_ref(yes, "_mteTriggerRising", false),
            10 => event_ref(yes, "_mteTriggerFalling", true),
            11 => event_ref(yes, "_mteTriggerFalling", false),
            12..=15 => text(""),
            _ => return None,
        })
    })
}

fn objects_table() -> Table<View, crate::Change, ObjectsRow> {
    Table::new(
        oid(o::MTE_OBJECTS_ENTRY),
        |v: &View| &v.system.monitors.objects,
        |_, r: &ObjectsRow, col| {
            Some(match col {
                3 => Value::ObjectId(r.id.clone()),
                4 => truth(r.wildcard),
                5 => ACTIVE,
                _ => return None,
            })
        },
    )
    .read_only(&columns(o::MTE_OBJECTS_ID, o::MTE_OBJECTS_ENTRY_STATUS))
}

fn event_table() -> Table<View, crate::Change, Event> {
    Table::new(
        oid(o::MTE_EVENT_ENTRY),
        |v: &View| &v.system.monitors.events,
        |_, e: &Event, col| {
            Some(match col {
                2 => text(e.comment),
                // notification(0)
                3 => Value::OctetString(vec![0x80]),
                4 => truth(true),
                5 => ACTIVE,
                _ => return None,
            })
        },
    )
    .read_only(&columns(o::MTE_EVENT_COMMENT, o::MTE_EVENT_ENTRY_STATUS))
}

fn event_notification_table() -> Table<View, crate::Change, Event> {
    Table::new(
        oid(o::MTE_EVENT_NOTIFICATION_ENTRY),
        |v: &View| &v.system.monitors.events,
        |_, e: &Event, col| {
            Some(match col {
                1 => Value::ObjectId(oid(e.notification)),
                2 | 3 => text(""),
                _ => return None,
            })
        },
    )
    .read_only(&columns(
        o::MTE_EVENT_NOTIFICATION,
        o::MTE_EVENT_NOTIFICATION_OBJECTS,
    ))
}
