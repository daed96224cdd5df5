//! Sampling and testing the configured triggers (RFC 2981's semantics, as
//! net-snmp's `monitor` applies them).
//!
//! - Each trigger samples its object (wildcarded: every instance under it)
//!   when due, every `frequency` seconds, from a [`Sampler`] (the agent's
//!   own MIB on the current view: no network, no MADs).
//! - Delta sampling keeps a baseline per instance: the first sample sets it,
//!   a value lower than the baseline (counters cleared) or an instance that
//!   vanished starts a new one, with no test in between.
//! - Boolean: fires when `sample OP value` becomes true (on the first tested
//!   sample when startup is true).
//! - Threshold: rising at or above `rising`, falling at or below `falling`;
//!   after a rising alarm only a falling one can come, and back (RMON
//!   hysteresis). The first tested sample may raise the alarm its startup
//!   allows.
//! - Existence: present (an instance appeared), absent (one vanished),
//!   changed (its value changed); startup fires present/absent on the first
//!   sample.
//! - A trigger that cannot sample (its object missing, a value that is not
//!   a number for boolean/threshold) counts in mteTriggerFailures each time
//!   and notifies mteTriggerFailure once until it samples again.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use snmp::notify::Notification;
use snmp::oid::Oid;
use snmp::value::{Value, VarBind};

use super::{Monitors, Test, Trigger};
use crate::core::oids::disman_event_mib as o;

/// Reads the agent's own MIB (its default context).
pub trait Sampler {
    /// The value at `oid` (an exception when there is none).
    fn get(&self, oid: &[u32]) -> Value;
    /// The first instance after `oid`.
    fn next(&self, oid: &[u32]) -> Option<VarBind>;
    /// The same MIB in the node context `name` (one view derived for the
    /// whole sample); None when there is no such context.
    fn in_context(&self, name: &[u8]) -> Option<Box<dyn Sampler + '_>> {
        let _ = name;
        None
    }
    /// One context name per node (its GUID context), in order.
    fn node_contexts(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }
}

/// A sampled instance: its context, then its OID.
type Key = (Vec<u8>, Oid);

/// The contexts a trigger samples.
fn contexts(t: &Trigger, s: &dyn Sampler) -> Vec<Vec<u8>> {
    if t.context_wildcard {
        let mut all = s.node_contexts();
        all.retain(|c| c.starts_with(&t.context));
        all
    } else {
        vec![t.context.clone()]
    }
}

/// Runs `f` on the sampler of `context` ("" the default one); nothing when
/// the context is gone.
fn with_context<R>(
    s: &dyn Sampler,
    context: &[u8],
    f: impl FnOnce(&dyn Sampler) -> R,
) -> Option<R> {
    if context.is_empty() {
        Some(f(s))
    } else {
        s.in_context(context).map(|c| f(&*c))
    }
}

/// What a firing reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FiredKind {
    /// An existence or boolean test became true (mteTriggerFired).
    Fired,
    /// mteTriggerRising.
    Rising,
    /// mteTriggerFalling.
    Falling,
    /// mteTriggerFailure with this mteFailedReason.
    Failure(i32),
}

/// FailureReason noSuchName(2): the sampled object is not there.
pub const NO_SUCH_NAME: i32 = 2;
/// FailureReason badType(-5): not a number where one is tested.
pub const BAD_TYPE: i32 = -5;

/// One firing of a trigger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    /// mteHotTrigger.
    pub trigger: String,
    /// mteHotContextName: the context of the instance ("" the default).
    pub context: Vec<u8>,
    pub kind: FiredKind,
    /// mteHotOID: the instance that fired.
    pub oid: Oid,
    /// mteHotValue: the value tested (the delta for delta sampling).
    pub value: i32,
    /// The trigger's extra objects for this instance.
    pub objects: Vec<VarBind>,
}

impl Fired {
    /// A finding about the fabric as a whole that appeared
    /// (mteTriggerFired) or cleared (mteTriggerFalling): no MIB instance
    /// holds it (mteHotOID zeroDotZero, the default context), `value` is
    /// how many there are now, `objects` name where it is.
    pub fn finding(trigger: String, appeared: bool, value: u64, objects: Vec<VarBind>) -> Fired {
        Fired {
            trigger,
            context: Vec::new(),
            kind: if appeared {
                FiredKind::Fired
            } else {
                FiredKind::Falling
            },
            oid: Oid::from_slice(&[0, 0]),
            value: i32::try_from(value).unwrap_or(i32::MAX),
            objects,
        }
    }

    /// The notification: the mteHot* objects (instance `.0`, as net-snmp
    /// sends them), then the extra objects; storm control counts per
    /// trigger and instance.
    pub fn notification(&self) -> Notification {
        let inst = |c: &[u32]| Oid::from_slice(c).join(&[0]);
        let text = |s: &str| Value::OctetString(s.as_bytes().to_vec());
        let (trap, last) = match self.kind {
            FiredKind::Fired => (o::MTE_TRIGGER_FIRED, o::MTE_HOT_VALUE),
            FiredKind::Rising => (o::MTE_TRIGGER_RISING, o::MTE_HOT_VALUE),
            FiredKind::Falling => (o::MTE_TRIGGER_FALLING, o::MTE_HOT_VALUE),
            FiredKind::Failure(_) => (o::MTE_TRIGGER_FAILURE, o::MTE_FAILED_REASON),
        };
        let last_value = match self.kind {
            FiredKind::Failure(r) => r,
            _ => self.value,
        };
        let mut vbs = vec![
            VarBind::new(inst(o::MTE_HOT_TRIGGER), text(&self.trigger)),
            VarBind::new(inst(o::MTE_HOT_TARGET_NAME), text("")),
            VarBind::new(
                inst(o::MTE_HOT_CONTEXT_NAME),
                Value::OctetString(self.context.clone()),
            ),
            VarBind::new(inst(o::MTE_HOT_OID), Value::ObjectId(self.oid.clone())),
            VarBind::new(inst(last), Value::Integer(last_value)),
        ];
        vbs.extend(self.objects.iter().cloned());
        let context = String::from_utf8_lossy(&self.context);
        let n = Notification::new(trap, vbs)
            .with_source(format!("{}:{context}:{}", self.trigger, self.oid));
        // SNMPv3 sinks get the node's context as the contextName too.
        if self.context.is_empty() {
            n
        } else {
            n.with_context(self.context.clone())
        }
    }
}

/// What is remembered of one sampled instance.
#[derive(Clone, Debug, Default)]
struct Instance {
    /// Delta baseline.
    baseline: Option<i64>,
    /// The last value (existence `changed`).
    value: Option<Value>,
    /// A tested sample was seen (startup applies before).
    tested: bool,
    /// Boolean: the last comparison's outcome.
    holds: bool,
    armed_rising: bool,
    armed_falling: bool,
}

#[derive(Clone, Debug, Default)]
struct State {
    due: Option<Instant>,
    sampled: bool,
    failing: bool,
    instances: BTreeMap<Key, Instance>,
}

/// The sampling state of every trigger of one [`Monitors`].
#[derive(Debug, Default)]
pub struct Evaluator {
    states: Vec<State>,
}

impl Evaluator {
    pub fn new(monitors: &Monitors) -> Self {
        Evaluator {
            states: vec![State::default(); monitors.triggers().len()],
        }
    }

    /// Samples the triggers due at `now` and returns what fired; updates
    /// the counters in `monitors.stats`.
    pub fn run(&mut self, monitors: &Monitors, now: Instant, s: &dyn Sampler) -> Vec<Fired> {
        let mut out = Vec::new();
        for (t, st) in monitors.triggers().iter().zip(&mut self.states) {
            if st.due.is_some_and(|d| now < d) {
                continue;
            }
            st.due = Some(now + Duration::from_secs(t.frequency.max(1).into()));
            let failures = evaluate(t, st, s, &mut out);
            monitors.stats.failures.fetch_add(failures, Relaxed);
        }
        let n: usize = self.states.iter().map(|s| s.instances.len()).sum();
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        monitors.stats.instances.store(n, Relaxed);
        monitors.stats.instances_high.fetch_max(n, Relaxed);
        out
    }
}

/// The instances of the trigger's object now, in every context it samples.
fn sample(t: &Trigger, s: &dyn Sampler) -> BTreeMap<Key, Value> {
    let mut out = BTreeMap::new();
    for context in contexts(t, s) {
        with_context(s, &context, |c| sample_one(t, c, &context, &mut out));
    }
    out
}

/// The instances of the trigger's object in one context.
fn sample_one(t: &Trigger, s: &dyn Sampler, context: &[u8], out: &mut BTreeMap<Key, Value>) {
    if !t.wildcard {
        let v = s.get(t.value_id.as_slice());
        if !v.is_exception() {
            out.insert((context.to_vec(), t.value_id.clone()), v);
        }
        return;
    }
    let mut cur = t.value_id.clone();
    while let Some(vb) = s.next(cur.as_slice()) {
        if !vb.oid.starts_with(t.value_id.as_slice()) || vb.value.is_exception() {
            break;
        }
        cur = vb.oid.clone();
        out.insert((context.to_vec(), vb.oid), vb.value);
    }
}

/// A number to test, from any SMI integer type.
fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(i64::from(*i)),
        Value::Counter32(u) | Value::Gauge32(u) | Value::TimeTicks(u) => Some(i64::from(*u)),
        Value::Counter64(u) => Some(i64::try_from(*u).unwrap_or(i64::MAX)),
        _ => None,
    }
}

/// mteHotValue is an Integer32: bigger values are clamped.
fn hot(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

fn fired(t: &Trigger, s: &dyn Sampler, kind: FiredKind, key: &Key, value: i64) -> Fired {
    let (context, oid) = key;
    // Wildcarded objects take the fired instance's suffix; all are read in
    // the instance's context.
    let suffix = oid.as_slice().get(t.value_id.len()..).unwrap_or(&[]);
    let objects = with_context(s, context, |c| {
        t.objects
            .iter()
            .filter_map(|(id, wildcard)| {
                let at = if *wildcard {
                    id.join(suffix)
                } else {
                    id.clone()
                };
                let v = c.get(at.as_slice());
                (!v.is_exception()).then(|| VarBind::new(at, v))
            })
            .collect()
    })
    .unwrap_or_default();
    Fired {
        trigger: t.name.clone(),
        context: context.clone(),
        kind,
        oid: oid.clone(),
        value: hot(value),
        objects,
    }
}

/// Samples and tests one trigger; returns the failures to count.
fn evaluate(t: &Trigger, st: &mut State, s: &dyn Sampler, out: &mut Vec<Fired>) -> u32 {
    let now = sample(t, s);
    let first = !st.sampled;
    st.sampled = true;
    if let Test::Existence { test, startup } = t.test {
        let fire = |out: &mut Vec<Fired>, oid: &Key, v: Option<&Value>| {
            let n = v.and_then(integer).unwrap_or(0);
            out.push(fired(t, s, FiredKind::Fired, oid, n));
        };
        if first {
            if test.present && startup.present {
                for (k, v) in &now {
                    fire(out, k, Some(v));
                }
            }
            if test.absent && startup.absent && !t.wildcard && now.is_empty() {
                fire(out, &(t.context.clone(), t.value_id.clone()), None);
            }
        } else {
            for (k, v) in &now {
                match st.instances.get(k) {
                    None if test.present => fire(out, k, Some(v)),
                    Some(i) if test.changed && i.value.as_ref() != Some(v) => fire(out, k, Some(v)),
                    _ => {}
                }
            }
            for k in st.instances.keys().filter(|k| !now.contains_key(*k)) {
                if test.absent {
                    fire(out, k, None);
                }
            }
        }
        st.instances = now
            .into_iter()
            .map(|(k, v)| {
                let i = Instance {
                    value: Some(v),
                    ..Instance::default()
                };
                (k, i)
            })
            .collect();
        st.failing = false;
        return 0;
    }
    let mut fail = |reason: i32, out: &mut Vec<Fired>| {
        if !st.failing {
            st.failing = true;
            out.push(Fired {
                trigger: t.name.clone(),
                context: t.context.clone(),
                kind: FiredKind::Failure(reason),
                oid: t.value_id.clone(),
                value: 0,
                objects: Vec::new(),
            });
        }
        1
    };
    if !t.wildcard && now.is_empty() {
        return fail(NO_SUCH_NAME, out);
    }
    let mut values = Vec::with_capacity(now.len());
    for (k, v) in now {
        match integer(&v) {
            Some(n) => values.push((k, n)),
            None => return fail(BAD_TYPE, out),
        }
    }
    st.failing = false;
    // An instance that vanished starts over when it comes back.
    let keep: std::collections::BTreeSet<&Key> = values.iter().map(|(k, _)| k).collect();
    st.instances.retain(|k, _| keep.contains(k));
    for (k, raw) in &values {
        let inst = st.instances.entry(k.clone()).or_default();
        let v = if t.delta {
            match inst.baseline.replace(*raw) {
                Some(prev) if *raw >= prev => raw - prev,
                // First sample or a counter that went back: a new baseline.
                _ => continue,
            }
        } else {
            *raw
        };
        let startup = !inst.tested;
        inst.tested = true;
        if let Some(kind) = test_value(&t.test, inst, v, startup) {
            out.push(fired(t, s, kind, k, v));
        }
    }
    0
}

/// Boolean and threshold tests of one value.
fn test_value(test: &Test, inst: &mut Instance, v: i64, first: bool) -> Option<FiredKind> {
    match *test {
        Test::Boolean { op, value, startup } => {
            let holds = op.holds(v, i64::from(value));
            let fire = holds && if first { startup } else { !inst.holds };
            inst.holds = holds;
            fire.then_some(FiredKind::Fired)
        }
        Test::Threshold {
            rising,
            falling,
            startup,
        } => {
            let (r, f) = (i64::from(rising), i64::from(falling));
            if first {
                inst.armed_rising = true;
                inst.armed_falling = true;
                if v >= r {
                    inst.armed_rising = false;
                    return startup.rising().then_some(FiredKind::Rising);
                }
                if v <= f {
                    inst.armed_falling = false;
                    return startup.falling().then_some(FiredKind::Falling);
                }
                return None;
            }
            if v >= r && inst.armed_rising {
                inst.armed_rising = false;
                inst.armed_falling = true;
                Some(FiredKind::Rising)
            } else if v <= f && inst.armed_falling {
                inst.armed_falling = false;
                inst.armed_rising = true;
                Some(FiredKind::Falling)
            } else {
                None
            }
        }
        Test::Existence { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Comparison, Existence, Startup};
    use super::*;
    use std::cell::RefCell;

    /// A MIB of a few values, changed between samples.
    #[derive(Default)]
    struct Mib(RefCell<BTreeMap<Vec<u32>, Value>>);

    impl Mib {
        fn set(&self, oid: &[u32], v: Option<Value>) {
            match v {
                Some(v) => self.0.borrow_mut().insert(oid.to_vec(), v),
                None => self.0.borrow_mut().remove(oid),
            };
        }
    }

    impl Sampler for Mib {
        fn get(&self, oid: &[u32]) -> Value {
            self.0
                .borrow()
                .get(oid)
                .cloned()
                .unwrap_or(Value::NoSuchInstance)
        }
        fn next(&self, oid: &[u32]) -> Option<VarBind> {
            let m = self.0.borrow();
            m.range(oid.to_vec()..)
                .find(|(k, _)| k.as_slice() > oid)
                .map(|(k, v)| VarBind::new(Oid::from_slice(k), v.clone()))
        }
    }

    fn trigger(test: Test, delta: bool, wildcard: bool) -> Trigger {
        Trigger {
            context: Vec::new(),
            context_wildcard: false,
            name: "t".into(),
            comment: String::new(),
            value_id: Oid::from_slice(if wildcard { &[1, 5] } else { &[1, 5, 1] }),
            wildcard,
            test,
            delta,
            frequency: 10,
            objects: vec![(Oid::from_slice(&[1, 6]), true)],
        }
    }

    /// Runs `steps` samples 10 s apart, each after setting `1.5.1` (and
    /// `1.6.1`, the extra object) to the step's value.
    fn run(t: Trigger, steps: &[Option<Value>]) -> (Vec<Vec<FiredKind>>, Monitors) {
        let m = Monitors::new(vec![t]);
        let mut e = Evaluator::new(&m);
        let mib = Mib::default();
        mib.set(&[1, 6, 1], Some(Value::Integer(7)));
        let start = Instant::now();
        let mut out = Vec::new();
        for (i, v) in steps.iter().enumerate() {
            mib.set(&[1, 5, 1], v.clone());
            let now = start + Duration::from_secs(10 * i as u64);
            // A second run at the same time does nothing (not due).
            let fired = e.run(&m, now, &mib);
            assert!(e.run(&m, now, &mib).is_empty());
            out.push(fired.iter().map(|f| f.kind).collect());
        }
        (out, m)
    }

    fn c(n: u64) -> Option<Value> {
        Some(Value::Counter64(n))
    }

    #[test]
    fn delta_threshold_rises_once_then_falls_and_rearms() {
        let th = Test::Threshold {
            rising: 10,
            falling: 0,
            startup: Startup::Rising,
        };
        let (out, _) = run(
            trigger(th, true, true),
            &[c(5), c(100), c(200), c(200), c(200), c(300), c(2), c(50)],
        );
        use FiredKind::*;
        assert_eq!(
            out,
            vec![
                vec![],        // baseline
                vec![Rising],  // +95 (startup rising)
                vec![],        // +100: not rearmed
                vec![Falling], // +0
                vec![],
                vec![Rising], // +100
                vec![],       // cleared: new baseline
                vec![],       // +48: still risen
            ]
        );
    }

    #[test]
    fn startup_falling_does_not_raise_rising_first() {
        let th = Test::Threshold {
            rising: 10,
            falling: 0,
            startup: Startup::Falling,
        };
        let (out, _) = run(trigger(th, false, false), &[c(50), c(50), c(0), c(20)]);
        use FiredKind::*;
        assert_eq!(out, vec![vec![], vec![], vec![Falling], vec![Rising]]);
    }

    #[test]
    fn boolean_fires_when_it_becomes_true_with_objects() {
        let b = Test::Boolean {
            op: Comparison::Unequal,
            value: 1,
            startup: true,
        };
        let t = trigger(b, false, true);
        let m = Monitors::new(vec![t]);
        let mut e = Evaluator::new(&m);
        let mib = Mib::default();
        mib.set(&[1, 5, 1], Some(Value::Integer(2)));
        mib.set(&[1, 6, 1], Some(Value::Integer(7)));
        let t0 = Instant::now();
        let f = e.run(&m, t0, &mib);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].oid.as_slice(), &[1, 5, 1]);
        assert_eq!(f[0].value, 2);
        assert_eq!(
            f[0].objects,
            vec![VarBind::new(Oid::from_slice(&[1, 6, 1]), Value::Integer(7))]
        );
        let n = f[0].notification();
        assert_eq!(n.trap_oid.as_slice(), o::MTE_TRIGGER_FIRED);
        assert_eq!(n.varbinds.len(), 6);
        // Still true: no new firing; false then true: fires again.
        let later = |s| t0 + Duration::from_secs(s);
        assert!(e.run(&m, later(10), &mib).is_empty());
        mib.set(&[1, 5, 1], Some(Value::Integer(1)));
        assert!(e.run(&m, later(20), &mib).is_empty());
        mib.set(&[1, 5, 1], Some(Value::Integer(3)));
        assert_eq!(e.run(&m, later(30), &mib).len(), 1);
        assert_eq!(m.stats.instances.load(Relaxed), 1);
    }

    #[test]
    fn existence_present_absent_changed() {
        let x = Test::Existence {
            test: Existence {
                present: true,
                absent: true,
                changed: true,
            },
            startup: Existence {
                present: false,
                absent: true,
                changed: false,
            },
        };
        let i = |n| Some(Value::Integer(n));
        let (out, _) = run(trigger(x, false, false), &[None, i(1), i(1), i(2), None]);
        use FiredKind::*;
        assert_eq!(
            out,
            vec![vec![Fired], vec![Fired], vec![], vec![Fired], vec![Fired]]
        );
    }

    #[test]
    fn failures_are_counted_and_notified_once() {
        let th = Test::Threshold {
            rising: 1,
            falling: 0,
            startup: Startup::Rising,
        };
        let s = Some(Value::OctetString(b"x".to_vec()));
        let (out, m) = run(trigger(th, false, false), &[None, None, s, c(5)]);
        use FiredKind::*;
        assert_eq!(
            out,
            vec![vec![Failure(NO_SUCH_NAME)], vec![], vec![], vec![Rising]]
        );
        assert_eq!(m.stats.failures.load(Relaxed), 3);
    }

    /// Node contexts "a" and "b", each a [`Mib`] of its own.
    struct Fabric {
        own: Mib,
        nodes: [(Vec<u8>, Mib); 2],
    }

    impl Sampler for Fabric {
        fn get(&self, oid: &[u32]) -> Value {
            self.own.get(oid)
        }
        fn next(&self, oid: &[u32]) -> Option<VarBind> {
            self.own.next(oid)
        }
        fn in_context(&self, name: &[u8]) -> Option<Box<dyn Sampler + '_>> {
            let (_, mib) = self.nodes.iter().find(|(n, _)| n == name)?;
            Some(Box::new(Reborrow(mib)))
        }
        fn node_contexts(&self) -> Vec<Vec<u8>> {
            self.nodes.iter().map(|(n, _)| n.clone()).collect()
        }
    }

    struct Reborrow<'a>(&'a Mib);

    impl Sampler for Reborrow<'_> {
        fn get(&self, oid: &[u32]) -> Value {
            self.0.get(oid)
        }
        fn next(&self, oid: &[u32]) -> Option<VarBind> {
            self.0.next(oid)
        }
    }

    /// A wildcard-context trigger samples every node context (not the
    /// default one), keeps a baseline per context and instance, and its
    /// notification names the context (mteHotContextName, contextName).
    #[test]
    fn wildcard_contexts_sample_every_node_and_name_it() {
        let mut t = trigger(
            Test::Threshold {
                rising: 10,
                falling: 0,
                startup: Startup::Rising,
            },
            true,
            true,
        );
        t.context_wildcard = true;
        let m = Monitors::new(vec![t]);
        let mut e = Evaluator::new(&m);
        let f = Fabric {
            own: Mib::default(),
            nodes: [
                (b"a".to_vec(), Mib::default()),
                (b"b".to_vec(), Mib::default()),
            ],
        };
        f.own.set(&[1, 5, 37], Some(Value::Counter32(0)));
        for (_, mib) in &f.nodes {
            mib.set(&[1, 5, 37], Some(Value::Counter32(0)));
            mib.set(&[1, 6, 37], Some(Value::Integer(37)));
        }
        let t0 = Instant::now();
        assert!(e.run(&m, t0, &f).is_empty());
        f.nodes[1].1.set(&[1, 5, 37], Some(Value::Counter32(50)));
        // The default context moving is not sampled.
        f.own.set(&[1, 5, 37], Some(Value::Counter32(500)));
        let fired = e.run(&m, t0 + Duration::from_secs(10), &f);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(fired[0].context, b"b".to_vec());
        assert_eq!(fired[0].oid, Oid::from_slice(&[1, 5, 37]));
        assert_eq!(
            fired[0].objects,
            vec![VarBind::new(
                Oid::from_slice(&[1, 6, 37]),
                Value::Integer(37)
            )]
        );
        let n = fired[0].notification();
        assert_eq!(n.context, b"b".to_vec());
        assert!(n.varbinds.iter().any(|vb| vb.oid
            == Oid::from_slice(o::MTE_HOT_CONTEXT_NAME).join(&[0])
            && vb.value == Value::OctetString(b"b".to_vec())));
    }
}
