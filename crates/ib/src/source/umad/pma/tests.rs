use super::*;

#[test]
fn details_follow_the_summary_counters_that_moved() {
    let a = PortCounters::default();
    assert_eq!(details_due(None, &a, false), detail::ALL, "first sighting");
    assert_eq!(details_due(Some(&a), &a, true), detail::ALL, "full read");
    // Traffic details are due every sweep (if wanted), the others not.
    assert_eq!(details_due(Some(&a), &a, false), detail::TRAFFIC);
    let at_max = PortCounters {
        port_rcv_errors: u16::MAX,
        ..a.clone()
    };
    assert_eq!(
        details_due(Some(&at_max), &at_max, false),
        detail::TRAFFIC | detail::RCV_ERROR_DETAILS,
        "a saturated summary hides movement"
    );
    let b = PortCounters {
        port_rcv_errors: 1,
        port_xmit_wait: 9,
        port_xmit_data: 100,
        ..a.clone()
    };
    assert_eq!(
        details_due(Some(&a), &b, false),
        detail::TRAFFIC | detail::RCV_ERROR_DETAILS | detail::VL_XMIT_WAIT
    );
    let c = PortCounters {
        port_xmit_discards: 1,
        ..a.clone()
    };
    assert_eq!(
        details_due(Some(&a), &c, false),
        detail::TRAFFIC | detail::XMIT_DISCARD_DETAILS
    );
}

#[test]
fn a_switch_sum_stands_for_its_ports_only_when_no_error_counter_moved() {
    let a = PortCounters {
        symbol_error_counter: 3,
        port_xmit_data: 100,
        ..PortCounters::default()
    };
    // Data and packets move with traffic: read 64-bit per port anyway.
    let traffic = PortCounters {
        port_xmit_data: 5000,
        port_rcv_pkts: 7,
        ..a.clone()
    };
    assert!(sum_unchanged(&a, &traffic));
    for moved in [
        PortCounters {
            symbol_error_counter: 4,
            ..a.clone()
        },
        PortCounters {
            port_xmit_wait: 1,
            ..a.clone()
        },
        PortCounters {
            qp1_dropped: 1,
            ..a.clone()
        },
    ] {
        assert!(!sum_unchanged(&a, &moved), "{moved:?}");
    }
    // A sum at its maximum hides movement.
    let full = PortCounters {
        port_rcv_errors: u16::MAX,
        ..a.clone()
    };
    assert!(!sum_unchanged(&full, &full));
}

type Fixture = (
    Target,
    PmaCaps,
    HashMap<(Guid, u8), PortCounters>,
    HashMap<Guid, PortCounters>,
);

/// A switch (GUID 7, LID 3) with linked ports 1 and 2 and `idle` ones,
/// a PMA with AllPortSelect and PortCountersExtended, and last sweep's
/// readings of the linked ports and of its sum.
fn switch_fixture(idle: Vec<u8>) -> Fixture {
    let t = Target {
        node: Guid(7),
        lid: 3,
        ports: vec![1, 2],
        idle,
    };
    let caps = PmaCaps {
        capability_mask: cap::ALL_PORT_SELECT | cap::IS_EXTENDED_WIDTH_SUPPORTED,
        extended: true,
        ..PmaCaps::default()
    };
    let prev = [(Guid(7), 1), (Guid(7), 2)]
        .into_iter()
        .map(|k| (k, PortCounters::default()))
        .collect();
    let sums = [(Guid(7), PortCounters::default())].into();
    (t, caps, prev, sums)
}

/// A steady sweep's schedule after one that read `prev` and `sums`.
fn steady<'a>(
    prev: &'a HashMap<(Guid, u8), PortCounters>,
    sums: &'a HashMap<Guid, PortCounters>,
    idle: Option<&'a HashMap<(Guid, u8), PortReadings>>,
) -> Schedule<'a> {
    Schedule {
        asked: None,
        prev: Some(prev),
        local: None,
        full: false,
        full_slice: None,
        prev_sums: Some(sums),
        counters_only: false,
        idle,
    }
}

#[test]
fn sums_are_asked_of_switches_only_with_what_they_stand_for() {
    let (t, caps, prev, sums) = switch_fixture(Vec::new());
    let opts = PmaOptions::default();
    let sched = steady(&prev, &sums, None);
    assert!(sum_first(&t, &caps, &opts, &sched));
    // Sum first, then only PortCountersExtended per port.
    let reqs = port_requests(&t, 0, &caps, &opts, &sched);
    assert_eq!(reqs.len(), 3);
    assert!(matches!(reqs[0].0, Q::Sum { decide: true, .. }));
    let full = Schedule {
        full: true,
        ..sched
    };
    assert!(!sum_first(&t, &caps, &opts, &full));
    // A full sweep still asks the sum, for the next sweep to compare with.
    let reqs = port_requests(&t, 0, &caps, &opts, &full);
    assert_eq!(reqs.len(), 5);
    assert!(matches!(reqs[0].0, Q::Sum { decide: false, .. }));
    let no_all_port = PmaCaps {
        capability_mask: cap::IS_EXTENDED_WIDTH_SUPPORTED,
        ..caps.clone()
    };
    assert!(!sum_first(&t, &no_all_port, &opts, &sched));
    let hca = Target {
        ports: vec![1],
        ..t.clone()
    };
    assert!(!sum_first(&hca, &caps, &opts, &sched));
    let off = PmaOptions {
        switch_sums: false,
        ..opts
    };
    assert!(!sum_first(&t, &caps, &off, &sched));
}

/// Ports without a link cost no MAD on a steady sweep once read: they
/// stand (with the sum, when it is asked first), and are read when first
/// seen and on full sweeps.
#[test]
fn ports_without_a_link_are_read_when_due() {
    let (t, caps, prev, sums) = switch_fixture(vec![4]);
    let opts = PmaOptions::default();
    let idle: HashMap<(Guid, u8), PortReadings> = [((Guid(7), 4), PortReadings::default())].into();
    let sched = steady(&prev, &sums, Some(&idle));
    // The sum and PortCountersExtended of the linked ports: none for port 4.
    assert_eq!(idle_standing(&t, &sched), vec![4]);
    assert_eq!(port_requests(&t, 0, &caps, &opts, &sched).len(), 3);
    // The sum moved: port 4 is read with the linked ports.
    assert_eq!(read_ports_in_full(&t, 0, Some(&caps), &sched).len(), 4);
    // Never read: PortCounters and PortCountersExtended at once.
    let first = Schedule {
        idle: None,
        ..sched
    };
    assert_eq!(port_requests(&t, 0, &caps, &opts, &first).len(), 5);
    // A full sweep reads it whatever stands.
    let full = Schedule {
        full: true,
        ..sched
    };
    assert!(idle_standing(&t, &full).is_empty());
    assert_eq!(port_requests(&t, 0, &caps, &opts, &full).len(), 7);
    // Without a sum to wait for, the reading stands at once.
    let mut out = PmaSweep::default();
    let no_sum = PmaOptions {
        switch_sums: false,
        ..opts
    };
    let reqs = first_requests(&mut out, &t, 0, &caps, &no_sum, &sched);
    assert_eq!(reqs.len(), 4, "PortCounters(Extended) of ports 1 and 2");
    assert!(out.samples[&(Guid(7), 4)].counters_read);
}

/// The 32-bit data and packet counters follow the 64-bit ones, stopping
/// at all ones; the error counters are left as read.
#[test]
fn narrow_data_saturates_the_extended_values() {
    let mut r = PortReadings {
        counters: PortCounters {
            port_xmit_data: 7,
            port_rcv_pkts: 9,
            symbol_error_counter: 3,
            ..PortCounters::default()
        },
        ..PortReadings::default()
    };
    narrow_data(&mut r);
    assert_eq!(r.counters.port_xmit_data, 7, "no extended reading: as read");
    r.extended = Some(PortCountersExtended {
        port_xmit_data: 5_000_000_000,
        port_rcv_data: 123_456,
        port_xmit_pkts: u64::from(u32::MAX),
        port_rcv_pkts: u64::from(u32::MAX) + 1,
        ..PortCountersExtended::default()
    });
    narrow_data(&mut r);
    let c = &r.counters;
    assert_eq!(
        (
            c.port_xmit_data,
            c.port_rcv_data,
            c.port_xmit_pkts,
            c.port_rcv_pkts
        ),
        (u32::MAX, 123_456, u32::MAX, u32::MAX)
    );
    assert_eq!(c.symbol_error_counter, 3);
}

#[test]
fn saturating_mask_selects_counters_past_the_threshold() {
    let pc = PortCounters {
        port_xmit_data: u32::MAX - 1,
        port_rcv_data: 10,
        port_xmit_pkts: (u32::MAX / 4) * 3 + 10,
        port_rcv_pkts: u32::MAX / 2,
        ..PortCounters::default()
    };
    let m = saturating_mask(&pc, 0.75);
    assert_eq!(
        m,
        counter_select::PORT_XMIT_DATA | counter_select::PORT_XMIT_PKTS
    );
    assert_eq!(saturating_mask(&PortCounters::default(), 0.75), 0);
}

#[test]
fn counter_reset_encodes_select_mask() {
    let r = counter_reset(9, 3, 0xF000);
    assert_eq!(r.mad[3], SET);
    let pc = PortCounters::decode(req::pma_data(&r.mad)).unwrap();
    assert_eq!(pc.port_select, 3);
    assert_eq!(pc.counter_select, 0xF000);
}
