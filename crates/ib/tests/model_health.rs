//! Port health over snapshots of the sim source (`ib::model::health`).

use ib::model::health::*;
use ib::model::Snapshot;
use ib::source::sim::SimSource;
use ib::source::Source;
use ib::types::{LinkWidth, PortState};
use std::time::Duration;

fn sim() -> SimSource {
    SimSource::default_fabric(Default::default()).unwrap()
}

/// The first port with a link that is active.
fn first_linked_active(snap: &Snapshot) -> usize {
    snap.ports
        .iter()
        .position(|p| p.remote.is_some() && p.info.port_state == PortState::Active as u8)
        .unwrap()
}

/// A sweep of the sim fabric and its [`first_linked_active`] port.
fn swept() -> (Snapshot, usize) {
    let snap = sim().sweep().unwrap();
    let i = first_linked_active(&snap);
    (snap, i)
}

#[test]
fn a_healthy_fabric_reports_nothing() {
    let mut s = sim();
    let mut h = Health::default();
    let snap = s.sweep().unwrap();
    let report = h.observe(&snap);
    assert!(!report.is_empty());
    let bad: Vec<_> = report
        .iter()
        .filter(|p| p.active && (p.degraded.is_some() || p.down_after_up))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn a_narrow_link_is_degraded_and_a_dropped_one_down_after_up() {
    let mut s = sim();
    let mut h = Health::default();
    let mut snap = s.sweep().unwrap();
    h.observe(&snap);
    // The first linked active port: run it at 1X, both ends able of more.
    let i = first_linked_active(&snap);
    let p = &mut snap.ports[i];
    p.info.link_width_active = LinkWidth::X1.port_info_bit();
    let report = h.observe(&snap);
    let d = report
        .iter()
        .find(|r| r.degraded.is_some())
        .expect("a degraded link");
    assert_eq!(d.degraded.as_ref().unwrap().width, "1X");
    assert_ne!(d.degraded.as_ref().unwrap().expected_width, "1X");
    // Then down.
    snap.ports[i].info.port_state = PortState::Down as u8;
    let report = h.observe(&snap);
    assert_eq!(report.iter().filter(|r| r.down_after_up).count(), 1);
}

#[test]
fn a_link_enabled_below_what_both_ends_support_is_limited_not_degraded() {
    let mut h = Health::default();
    let (mut snap, i) = swept();
    let r = snap.ports[i].remote.unwrap() as usize;
    let supported = snap.ports[i].info.link_width_supported;
    assert!(supported & snap.ports[r].info.link_width_supported & !1 != 0);
    // Both ends enable 1X only and the link trained at 1X, as
    // configured (ibsim's `w=1`).
    for q in [i, r] {
        let info = &mut snap.ports[q].info;
        info.link_width_enabled = LinkWidth::X1.port_info_bit();
        info.link_width_active = LinkWidth::X1.port_info_bit();
    }
    let report = h.observe(&snap);
    let flagged: Vec<_> = report.iter().filter(|p| p.limited.is_some()).collect();
    assert_eq!(flagged.len(), 2, "both ends: {flagged:#?}");
    for p in &flagged {
        assert!(p.degraded.is_none(), "{p:?}");
        let l = p.limited.as_ref().unwrap();
        assert_eq!(l.width, "1X");
        assert_ne!(l.expected_width, "1X");
        assert!(!p.is_unhealthy(h.config()), "a configuration, not a fault");
    }
    // One end enables 4X again but the link stays at 1X: a fault now
    // (DEGRADED), no longer a configuration.
    snap.ports[i].info.link_width_enabled = 0xFF;
    snap.ports[r].info.link_width_enabled = 0xFF;
    let report = h.observe(&snap);
    assert_eq!(report.iter().filter(|p| p.degraded.is_some()).count(), 2);
    assert_eq!(report.iter().filter(|p| p.limited.is_some()).count(), 0);
}

#[test]
fn flaps_the_sweeps_saw_count_when_link_downed_does_not_move() {
    let mut h = Health::default();
    let (mut snap, i) = swept();
    let key = |r: &PortHealth| (r.guid, r.port);
    let want = {
        let p = &snap.ports[i];
        let n = snap.node(p.node).unwrap();
        (n.info.node_guid, p.num.0)
    };
    h.observe(&snap);
    let mut last = None;
    for _ in 0..3 {
        snap.ports[i].info.port_state = PortState::Down as u8;
        h.observe(&snap);
        snap.ports[i].info.port_state = PortState::Active as u8;
        last = h.observe(&snap).into_iter().find(|r| key(r) == want);
    }
    let p = last.unwrap();
    assert_eq!(p.down_transitions, 3, "{p:?}");
    assert_eq!(p.link_downed, 3, "{p:?}");
    assert!(p.is_unhealthy(h.config()));
    // A window later they are forgotten.
    snap.sweep.time += h.config().window;
    let p = h
        .observe(&snap)
        .into_iter()
        .find(|r| key(r) == want)
        .unwrap();
    assert_eq!((p.down_transitions, p.link_downed), (0, 0), "{p:?}");
}

#[test]
fn no_master_sm_when_none_answers_or_every_port_waits_for_one() {
    let mut s = sim();
    let mut snap = s.sweep().unwrap();
    assert!(!no_master_sm(&snap));
    for sm in &mut snap.sms {
        sm.answering = false;
    }
    assert!(no_master_sm(&snap));
    // A source that reads no SMInfo: Active ports say an SM is there.
    snap.sms.clear();
    assert!(!no_master_sm(&snap));
    // One that asked and found none: none is there.
    snap.sweep.cost.sa.sent = 3;
    assert!(no_master_sm(&snap));
    snap.sweep.cost.sa.sent = 0;
    for p in &mut snap.ports {
        if p.info.port_state == PortState::Active as u8 {
            p.info.port_state = PortState::Init as u8;
        }
    }
    assert!(no_master_sm(&snap));
}

/// The port's counters with `f` applied and read `secs` later.
fn bump(
    snap: &mut Snapshot,
    i: usize,
    secs: u64,
    f: impl Fn(&mut ib::model::PortTotals, &mut ib::mad::pma::PortCounters),
) {
    let p = &mut snap.ports[i];
    let mut c = (**p.counters.as_ref().unwrap()).clone();
    c.read_at += Duration::from_secs(secs);
    f(&mut c.totals, &mut c.readings.counters);
    p.counters = Some(std::sync::Arc::new(c));
}

#[test]
fn rates_flaps_congestion_and_clears_over_the_window() {
    let mut s = sim();
    let mut h = Health::new(HealthConfig {
        window: Duration::from_secs(600),
        ..HealthConfig::default()
    });
    let mut snap = s.sweep().unwrap();
    let i = snap
        .ports
        .iter()
        .position(|p| p.remote.is_some() && p.counters.is_some() && p.num.0 != 0)
        .unwrap();
    h.observe(&snap);
    // The link's bits: its data rate (4x HDR on the sim: 2e11 bit/s) over
    // the window, idle included, whatever it received.
    let line_bps = {
        let p = &snap.ports[i];
        ib::types::data_rate_mbps(p.info.link_width().unwrap(), snap.port_speed(p).unwrap()) as f64
            * 1e6
    };
    // 60 s later: 1e9 words received, 240 symbol errors, two LinkDowned,
    // one LinkErrorRecovery, as many wait ticks as data words sent. Rates
    // count over a whole window (600 s) even though the samples span 60 s.
    bump(&mut snap, i, 60, |t, c| {
        c.symbol_error_counter = 100;
        t.port_rcv_data += 1_000_000_000;
        t.symbol_error_counter += 240;
        t.link_downed_counter += 2;
        t.link_error_recovery_counter += 1;
        t.port_xmit_data += 1000;
        t.port_xmit_wait += 1000;
    });
    let r = h.observe(&snap);
    let p = r
        .iter()
        .find(|x| x.symbol_ber.is_some_and(|b| b > 0.0))
        .unwrap();
    let ber = 240.0 / (line_bps * 600.0);
    assert!((p.symbol_ber.unwrap() - ber).abs() < ber * 1e-9, "{p:?}");
    assert_eq!(p.link_downed, 2);
    // One recovery in the window: 6 an hour, not 60 (the 60 s span alone).
    assert!((p.link_recovery_per_hour.unwrap() - 6.0).abs() < 1e-9);
    assert!((p.xmit_wait_ratio.unwrap() - 0.5).abs() < 1e-9);
    assert!(p.is_unhealthy(h.config()));
    assert!(!p.counters_cleared);
    // Much later, with nothing new: the window has passed, the port is
    // healthy again; a reading that went down is a clear.
    bump(&mut snap, i, 3600, |_, c| c.symbol_error_counter = 0);
    let r = h.observe(&snap);
    let p = r.iter().find(|x| x.counters_cleared).expect("a clear");
    assert_eq!(p.link_downed, 0);
    assert_eq!(p.symbol_ber.unwrap_or(0.0), 0.0);
}
