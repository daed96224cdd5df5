//! Property tests of the 64-bit accumulators against a model of IBA counters.

use ib::mad::pma::PortCountersExtended;
use ib::model::accum::{delta, CounterWidth};
use ib::model::{advance, PortCounterState, PortReadings};
use proptest::prelude::*;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One step of the world between two readings.
#[derive(Debug, Clone)]
enum Step {
    /// The counter counts this many events.
    Count(u64),
    /// Someone else resets the counter, then it counts this many.
    ResetThen(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0u64..5000).prop_map(Step::Count),
        1 => (0u64..5000).prop_map(Step::ResetThen),
    ]
}

fn t(i: usize) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64)
}

/// A 16-bit saturating hardware counter: the reading after each step.
fn readings16(start: u64, steps: &[Step]) -> (Vec<u16>, Vec<u64>) {
    let mut hw = start.min(0xFFFF);
    let mut out = vec![hw as u16];
    let mut counted_since_reading = vec![0];
    for s in steps {
        let n = match s {
            Step::Count(n) => *n,
            Step::ResetThen(n) => {
                hw = 0;
                *n
            }
        };
        hw = (hw + n).min(0xFFFF);
        out.push(hw as u16);
        counted_since_reading.push(n);
    }
    (out, counted_since_reading)
}

fn state_with_symbol_errors(
    prev: Option<&PortCounterState>,
    v: u16,
    at: SystemTime,
) -> PortCounterState {
    let mut r = PortReadings::default();
    r.counters.symbol_error_counter = v;
    advance(prev, r, at)
}

proptest! {
    #[test]
    fn totals_never_decrease(start in 0u64..70_000, steps in prop::collection::vec(step(), 1..60)) {
        let (rs, _) = readings16(start, &steps);
        let mut st = state_with_symbol_errors(None, rs[0], t(0));
        let first = st.discontinuity;
        for (i, v) in rs.iter().enumerate().skip(1) {
            let next = state_with_symbol_errors(Some(&st), *v, t(i));
            prop_assert!(next.totals.symbol_error_counter >= st.totals.symbol_error_counter);
            prop_assert_eq!(next.discontinuity, first, "resets are not discontinuities");
            st = next;
        }
    }

    #[test]
    fn totals_equal_true_increments_without_saturation_or_reset(
        start in 0u64..1000,
        counts in prop::collection::vec(0u64..500, 1..100),
    ) {
        let steps: Vec<Step> = counts.iter().map(|c| Step::Count(*c)).collect();
        let (rs, _) = readings16(start, &steps);
        prop_assume!(rs.last().copied().unwrap_or(0) < 0xFFFF);
        let mut st = state_with_symbol_errors(None, rs[0], t(0));
        for (i, v) in rs.iter().enumerate().skip(1) {
            st = state_with_symbol_errors(Some(&st), *v, t(i));
        }
        prop_assert_eq!(st.totals.symbol_error_counter, start + counts.iter().sum::<u64>());
    }

    #[test]
    fn a_reset_counts_what_followed_it(start in 0u64..60_000, after in 0u64..5000) {
        let (rs, _) = readings16(start, &[Step::ResetThen(after)]);
        let a = state_with_symbol_errors(None, rs[0], t(0));
        let b = state_with_symbol_errors(Some(&a), rs[1], t(1));
        let grew = u64::from(rs[1]) >= u64::from(rs[0]);
        let d = b.totals.symbol_error_counter - a.totals.symbol_error_counter;
        if grew {
            // Indistinguishable from counting: at least the visible growth.
            prop_assert_eq!(d, u64::from(rs[1]) - u64::from(rs[0]));
        } else {
            prop_assert_eq!(d, after.min(0xFFFF));
        }
    }

    #[test]
    fn saturated_counters_stay_put(extra in 0u64..100_000) {
        let a = state_with_symbol_errors(None, 0xFFFF, t(0));
        let b = state_with_symbol_errors(Some(&a), ((0xFFFFu64 + extra).min(0xFFFF)) as u16, t(1));
        prop_assert_eq!(b.totals.symbol_error_counter, a.totals.symbol_error_counter);
    }

    #[test]
    fn wrapping_64_bit_counters_add_up(start in any::<u64>(), incs in prop::collection::vec(0u64..(1u64 << 40), 1..50)) {
        let mut hw = start;
        let mk = |v: u64| PortReadings {
            extended: Some(PortCountersExtended { port_xmit_data: v, ..Default::default() }),
            ..Default::default()
        };
        let mut st = advance(None, mk(hw), t(0));
        let base = st.totals.port_xmit_data;
        for (i, n) in incs.iter().enumerate() {
            hw = hw.wrapping_add(*n);
            let next = advance(Some(&st), mk(hw), t(i + 1));
            prop_assert!(next.totals.port_xmit_data.wrapping_sub(st.totals.port_xmit_data) == *n);
            st = next;
        }
        prop_assert_eq!(st.totals.port_xmit_data.wrapping_sub(base), incs.iter().sum::<u64>());
    }

    #[test]
    fn delta_is_bounded_by_the_width(prev in any::<u64>(), new in any::<u64>(), bits in 1u8..64) {
        let d = delta(prev, new, CounterWidth::Saturating(bits));
        prop_assert!(d < (1u64 << bits));
    }
}

#[test]
fn missing_optional_attributes_are_not_counted_twice() {
    let mut r = PortReadings {
        flow_ctl: Some(ib::mad::pma::PortFlowCtlCounters {
            port_xmit_flow_pkts: 100,
            ..Default::default()
        }),
        ..Default::default()
    };
    let a = advance(None, r.clone(), t(0));
    // This sweep the PMA did not answer PortFlowCtlCounters.
    let b = advance(Some(&a), PortReadings::default(), t(1));
    assert_eq!(b.totals.port_xmit_flow_pkts, 100);
    r.flow_ctl.as_mut().unwrap().port_xmit_flow_pkts = 150;
    let c = advance(Some(&b), r, t(2));
    assert_eq!(c.totals.port_xmit_flow_pkts, 150);
}

#[test]
fn history_marks_returning_ports_as_discontinuities() {
    use ib::model::snapshot::SweepInfo;
    use ib::source::sim::{SimConfig, SimSource};
    use ib::source::Source;
    // Through a real source: totals continue while a port stays, restart
    // (with a new discontinuity time) only when it comes back after absence.
    let mut sim = SimSource::default_fabric(SimConfig {
        manual_clock: true,
        ..SimConfig::default()
    })
    .unwrap();
    let s1 = sim.sweep().unwrap();
    sim.advance_clock(Duration::from_secs(2));
    let s2 = sim.sweep().unwrap();
    for (a, b) in s1.ports.iter().zip(&s2.ports) {
        let (a, b) = (a.counters.as_ref().unwrap(), b.counters.as_ref().unwrap());
        assert_eq!(a.discontinuity, b.discontinuity);
        assert!(b.totals.port_rcv_data >= a.totals.port_rcv_data);
    }
    // Through the builder: a node that vanishes for a sweep comes back with
    // fresh totals and a new discontinuity time.
    let sweep = |n: u64| SweepInfo {
        number: n,
        time: t(n as usize * 10),
        duration: Duration::ZERO,
        source: "test".into(),
        cost: Default::default(),
    };
    let mut history = ib::model::CounterHistory::new();
    let build = |present: bool, v: u16, n: u64, h: &mut ib::model::CounterHistory| {
        let mut b = ib::model::SnapshotBuilder::new(0xfe80_0000_0000_0000);
        if present {
            let node = s1.nodes[0].clone();
            let mut port = s1.ports[node.ports.start as usize].clone();
            port.counters = None;
            let i = b.add_node(node, vec![port]);
            let p = b.nodes[i as usize].ports.start;
            let mut r = PortReadings::default();
            r.counters.symbol_error_counter = v;
            b.set_readings(p, r);
        }
        b.build(sweep(n), h)
    };
    let a = build(true, 5, 1, &mut history);
    let b = build(true, 7, 2, &mut history);
    let c = build(false, 0, 3, &mut history);
    let d = build(true, 9, 4, &mut history);
    let st = |s: &ib::model::Snapshot| s.ports[0].counters.clone().unwrap();
    assert_eq!(st(&a).discontinuity, t(10));
    assert_eq!(st(&b).discontinuity, t(10));
    assert_eq!(st(&b).totals.symbol_error_counter, 7);
    assert!(c.ports.is_empty(), "{:?}", c.ports.len());
    assert!(history.len() == 1, "history holds d only after d");
    assert_eq!(st(&d).discontinuity, t(40));
    assert_eq!(st(&d).totals.symbol_error_counter, 9);
}
