//! The umad source's sweep policy on ibsim + OpenSM (issue 28.2, 28.3): the
//! quick first sweep publishes topology and PortCounters(Extended) with the rest
//! absent, then fills it in; steady sweeps skip discovery while nothing changes
//! and still show link events within one sweep.
mod umad_util;

use ib::model::{FabricEventKind, Port, Snapshot};
use ib::source::umad::{UmadOptions, UmadSource};
use ib::types::Guid;
use umad_util::*;

fn open() -> UmadSource {
    open_source(UmadOptions::default())
}

/// A source that reads every port's detail attributes ([`with_details`]).
fn open_with_details(detail_every: u32) -> UmadSource {
    open_source(with_details(UmadOptions::default(), detail_every))
}

fn parent(name: &str) {
    run_on_small_net(name)
}

/// Linked ports (a switch's port 0 aside) with their node's description.
fn linked(s: &Snapshot) -> Vec<(&str, &Port)> {
    s.ports
        .iter()
        .filter(|p| p.remote.is_some())
        .filter_map(|p| Some((s.node(p.node)?.description.as_str(), p)))
        .collect()
}

/// Port 1's counters of the node named `desc`.
fn port1_counters<'a>(s: &'a Snapshot, desc: &str) -> &'a ib::model::PortCounterState {
    let n = node(s, desc).expect(desc);
    let p = s.port(n.ports.start).expect("port 1");
    p.counters.as_deref().expect("counters read")
}

/// How many of the six detail attributes the port's last readings have
/// (None: no counters at all).
fn details_read(p: &Port) -> Option<usize> {
    let r = &p.counters.as_ref()?.readings;
    Some(
        [
            r.rcv_error_details.is_some(),
            r.xmit_discard_details.is_some(),
            r.flow_ctl.is_some(),
            r.vl_op_packets.is_some(),
            r.vl_op_data.is_some(),
            r.vl_xmit_wait.is_some(),
        ]
        .into_iter()
        .filter(|&x| x)
        .count(),
    )
}

fn has_details(p: &Port) -> bool {
    details_read(p) == Some(6)
}

fn has_no_details(p: &Port) -> bool {
    details_read(p) == Some(0)
}

#[test]
fn quick_first_sweep_then_details_and_tables() {
    if !in_child() {
        return parent("quick_first_sweep_then_details_and_tables");
    }
    let mut s = open_with_details(30);
    child_console("PerformanceSet \"Hca3\"[1] PortCounters.SymbolErrorCounter=7");
    child_console("PerformanceSet \"Hca3\"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=4");
    let first = s.sweep().unwrap();
    let local = first.local_node.expect("local node");
    // Every linked port's PortCounters and PortCountersExtended are in.
    let ports = linked(&first);
    assert_eq!(ports.len(), 12, "{ports:?}");
    for (desc, p) in &ports {
        let c = p
            .counters
            .as_ref()
            .unwrap_or_else(|| panic!("{desc} {:?}", p.num));
        assert!(c.readings.extended.is_some(), "{desc} {:?}", p.num);
        // The local node's details are read at once (IF-MIB and IB-IF-MIB
        // serve them); the others' are absent, not zero.
        if p.node == local {
            assert!(has_details(p), "local {desc} {:?}", p.num);
        } else {
            assert!(has_no_details(p), "{desc} {:?}: {:?}", p.num, c.readings);
        }
    }
    let c = port1_counters(&first, "Hca3");
    assert_eq!(c.readings.counters.symbol_error_counter, 7);
    assert_eq!(c.totals.port_local_physical_errors, 0);
    // No forwarding tables and no other node's P_Key table yet: absent.
    for n in first.nodes.iter().filter_map(|n| n.switch.as_ref()) {
        assert!(n.lft.is_empty(), "{:?}", n.lft);
    }
    let hca4 = node(&first, "Hca4").unwrap();
    assert!(first.port(hca4.ports.start).unwrap().pkeys.is_empty());
    let cost = first.sweep.cost;
    println!("first sweep: {cost:?}");

    // The next sweep fills in what the first left out.
    let second = s.sweep().unwrap();
    for (desc, p) in linked(&second) {
        assert!(has_details(p), "{desc} {:?}", p.num);
    }
    let c = port1_counters(&second, "Hca3");
    assert_eq!(c.totals.port_local_physical_errors, 4);
    assert_eq!(c.totals.symbol_error_counter, 7);
    for n in second.nodes.iter().filter_map(|n| n.switch.as_ref()) {
        assert!(!n.lft.is_empty() && n.lft.iter().any(|&p| p != 0xFF));
    }
    let hca4 = node(&second, "Hca4").unwrap();
    assert!(!second.port(hca4.ports.start).unwrap().pkeys.is_empty());
    println!("second sweep: {:?}", second.sweep.cost);
}

/// LinkState of `port` at the end of directed route `path`, from smpquery
/// (empty while it does not answer).
fn port_state(path: &str, port: &str) -> String {
    let out = std::process::Command::new("smpquery")
        .args(["-D", "portinfo", path, port])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("LinkState:"))
        .map(|s| s.trim_start_matches('.').trim().to_string())
        .unwrap_or_default()
}

fn event_at(ev: &[ib::model::FabricEvent], g: Guid, f: fn(&FabricEventKind, Guid) -> bool) -> bool {
    ev.iter().any(|e| f(&e.kind, g))
}

fn removed(k: &FabricEventKind, g: Guid) -> bool {
    matches!(k, FabricEventKind::NodeRemoved { node_guid, .. } if *node_guid == g)
}
fn added(k: &FabricEventKind, g: Guid) -> bool {
    matches!(k, FabricEventKind::NodeAdded { node_guid, .. } if *node_guid == g)
}
fn out_of_service(k: &FabricEventKind, g: Guid) -> bool {
    matches!(k, FabricEventKind::PortOutOfService { node_guid, .. } if *node_guid == g)
}
fn in_service(k: &FabricEventKind, g: Guid) -> bool {
    matches!(k, FabricEventKind::PortInService { node_guid, .. } if *node_guid == g)
}

#[test]
fn steady_sweeps_skip_discovery_and_keep_link_events() {
    if !in_child() {
        return parent("steady_sweeps_skip_discovery_and_keep_link_events");
    }
    let mut s = open();
    let cold = s.sweep().unwrap();
    let full_smps = cold.sweep.cost.discovery.sent;
    let mut prev = s.sweep().unwrap();
    assert_eq!(s.stats().discoveries, 1);
    // By default other nodes' detail attributes are not read (no consumer
    // serves them): absent, not zero; the local node's are.
    let local = prev.local_node.expect("local node");
    for (desc, p) in linked(&prev) {
        let want = if p.node == local { 6 } else { 0 };
        assert_eq!(details_read(p), Some(want), "{desc} {:?}", p.num);
    }
    // Nothing changes: no discovery, only the watched PortInfo (our port and
    // the ports that are not Active), the SMs' ports' (IsSM), this sweep's
    // slice of the topology's periodic check and the PMAs.
    let watched = prev
        .ports
        .iter()
        .filter(|p| p.info.port_state != 4)
        .filter(|p| !(p.num.0 == 0 && prev.node(p.node).is_some_and(|n| n.switch.is_some())))
        .count()
        + 1
        + prev.sms.len();
    for _ in 0..3 {
        let checked = s.stats().check_smps;
        let next = s.sweep().unwrap();
        let smps = next.sweep.cost.discovery.sent - (s.stats().check_smps - checked);
        assert_eq!(smps, watched as u64, "a discovery takes {full_smps}");
        assert!(ib::model::diff(&prev, &next).is_empty());
        prev = next;
    }
    assert_eq!(s.stats().discoveries, 1, "{:?}", s.stats());
    let hca4 = guid(&prev, "Hca4");

    // An HCA unplugged: its port and node go in the very next sweep.
    child_console("Unlink \"Hca4\"[1]");
    let next = s.sweep().unwrap();
    let ev = ib::model::diff(&prev, &next);
    assert!(event_at(&ev, hca4, out_of_service), "{ev:?}");
    assert!(event_at(&ev, hca4, removed), "{ev:?}");
    assert!(node(&next, "Hca4").is_none());
    assert_eq!(s.stats().discoveries, 2);
    // The switch port Hca4 hung on: PortInfo as the SMA has it now.
    assert_portinfo(&next, "Switch2", 2, "0,3");
    prev = next;

    // Plugged back: once OpenSM made the port Active (smpquery says so), one
    // sweep shows the node and its port in service.
    child_console("ReLink \"Hca4\"[1]");
    let mut events = Vec::new();
    let next = s.sweep().unwrap();
    events.extend(ib::model::diff(&prev, &next));
    prev = next;
    let mut state = String::new();
    for _ in 0..40 {
        state = port_state("0,3,2", "1");
        if state == "Active" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert_eq!(state, "Active", "OpenSM did not activate Hca4's port");
    let next = s.sweep().unwrap();
    events.extend(ib::model::diff(&prev, &next));
    assert!(event_at(&events, hca4, added), "{events:?}");
    assert!(event_at(&events, hca4, in_service), "{events:?}");
    let n = node(&next, "Hca4").expect("Hca4 back");
    let p = next.port(n.ports.start).unwrap();
    assert_eq!(p.info.port_state, 4, "Hca4 port 1 Active in the snapshot");
    // Both ends' PortInfo (state, physical state, active width and speed) in
    // the same sweep, as smpquery reads them.
    assert_portinfo(&next, "Hca4", 1, "0,3,2");
    assert_portinfo(&next, "Switch2", 2, "0,3");
    prev = next;

    // Quiet again: the next sweeps reuse the topology.
    let d = s.stats().discoveries;
    let next = s.sweep().unwrap();
    assert!(ib::model::diff(&prev, &next).is_empty());
    let next2 = s.sweep().unwrap();
    assert!(ib::model::diff(&next, &next2).is_empty());
    assert!(s.stats().discoveries <= d + 1, "{:?}", s.stats());
    assert!(port1_counters(&next2, "Hca4").readings.extended.is_some());
    prev = next2;

    // A switch-to-switch link going down: both PMAs still answer, and ibsim's
    // do not count LinkDowned; a real PMA does, as set here. The sum of
    // Switch1's ports moves, its ports are read, the counter moved: the next
    // sweep discovers and shows the link state change.
    let sw1 = guid(&prev, "Switch1");
    child_console("Unlink \"Switch1\"[3]");
    child_console("PerformanceSet \"Switch1\"[3] PortCounters.LinkDownedCounter=1");
    let d = s.stats().discoveries;
    let next = s.sweep().unwrap();
    let ev = ib::model::diff(&prev, &next);
    assert!(
        ev.iter().any(|e| matches!(&e.kind, FabricEventKind::LinkStateChange { node_guid, port, .. } if *node_guid == sw1 && port.0 == 3)),
        "{ev:?}"
    );
    assert_eq!(s.stats().discoveries, d + 1);
    assert_portinfo(&next, "Switch1", 3, "0");
    // Switch2 through the other link (5): port 3 is the one down.
    assert_portinfo(&next, "Switch2", 3, "0,5");
    child_console("ReLink \"Switch1\"[3]");
}

/// The periodic check of the topology is spread (a slice of the nodes a
/// sweep, docs/umad.md "Steady sweeps"): quiet sweeps discover nothing and
/// change nothing, yet every node is checked within `topology_every`
/// sweeps; a switch-to-switch link going down, which neither the watched
/// ports nor ibsim's PMAs show (they do not count LinkDowned), is seen by
/// the check of one of its ends within that period and discovered in the
/// same sweep.
#[test]
fn topology_checks_are_spread_and_see_a_silent_link_change() {
    if !in_child() {
        return parent("topology_checks_are_spread_and_see_a_silent_link_change");
    }
    let every = 4;
    let mut s = open_source(UmadOptions {
        topology_every: every,
        ..UmadOptions::default()
    });
    s.sweep().unwrap();
    let mut prev = s.sweep().unwrap();
    let checked = s.stats().check_smps;
    for _ in 0..every {
        let next = s.sweep().unwrap();
        assert!(ib::model::diff(&prev, &next).is_empty());
        prev = next;
    }
    let st = s.stats();
    assert_eq!(st.discoveries, 1, "no periodic discovery: {st:?}");
    assert_eq!(st.check_triggers, 0, "{st:?}");
    // A period's checks read every port's PortInfo at least.
    assert!(
        st.check_smps - checked >= prev.ports.len() as u64,
        "{st:?} {} ports",
        prev.ports.len()
    );

    let sw1 = guid(&prev, "Switch1");
    let sw2 = guid(&prev, "Switch2");
    // Link 5: Switch2's route is through link 3 (the first its discovery
    // crossed), so the ports the watch reads there still answer.
    child_console("Unlink \"Switch1\"[5]");
    // OpenSM reroutes around the link (through port 5) before the PMAs are
    // asked: the change must come from the check, not from a PMA silent
    // for a moment.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let mut seen = None;
    for i in 0..every {
        let next = s.sweep().unwrap();
        let ev = ib::model::diff(&prev, &next);
        let down = ev.iter().any(|e| {
            matches!(&e.kind, FabricEventKind::LinkStateChange { node_guid, port, .. }
                if (*node_guid == sw1 || *node_guid == sw2) && port.0 == 5)
        });
        prev = next;
        if down {
            seen = Some(i);
            break;
        }
    }
    let st = s.stats();
    assert!(seen.is_some(), "not seen within {every} sweeps: {st:?}");
    assert_eq!(st.discoveries, 2, "{st:?}");
    assert_eq!(st.check_triggers, 1, "{st:?}");
    assert_portinfo(&prev, "Switch1", 5, "0");
    assert_portinfo(&prev, "Switch2", 5, "0,3");
    child_console("ReLink \"Switch1\"[5]");
}

/// PortInfo fields smpquery prints, by name, from the node at directed
/// route `path` (read from the preloaded child).
fn smpquery_portinfo(path: &str, port: u8) -> std::collections::HashMap<String, String> {
    child_diag("smpquery", &["-D", "portinfo", path, &port.to_string()])
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((
                k.trim().to_string(),
                v.trim_start_matches('.').trim().to_string(),
            ))
        })
        .collect()
}

/// The snapshot's PortInfo of `desc` port `num` equals what the SMA answers
/// now: LinkState, PhysLinkState, and the active width and speed of a link
/// that is up (IBA 14.2.5.6 encodings).
fn assert_portinfo(s: &Snapshot, desc: &str, num: u8, path: &str) {
    let n = node(s, desc).expect(desc);
    let pi = s
        .node_port(
            s.nodes
                .iter()
                .position(|x| x.description == desc)
                .expect(desc) as u32,
            ib::types::PortNum(num),
        )
        .and_then(|i| s.port(i))
        .map(|p| p.info.clone())
        .unwrap_or_else(|| panic!("{desc} port {num} in {:?}", n.ports));
    let sma = smpquery_portinfo(path, num);
    let get = |k: &str| sma.get(k).map(String::as_str).unwrap_or("");
    let state = ["", "Down", "Initialize", "Armed", "Active"];
    assert_eq!(
        state.get(usize::from(pi.port_state)).copied(),
        Some(get("LinkState")),
        "{desc} port {num} LinkState: {sma:?}"
    );
    let phys = [
        "",
        "Sleep",
        "Polling",
        "Disabled",
        "PortConfigurationTraining",
        "LinkUp",
    ];
    assert_eq!(
        phys.get(usize::from(pi.port_physical_state)).copied(),
        Some(get("PhysLinkState")),
        "{desc} port {num} PhysLinkState: {sma:?}"
    );
    if pi.port_state == 4 {
        let width = match pi.link_width_active {
            1 => "1X",
            2 => "4X",
            4 => "8X",
            8 => "12X",
            _ => "?",
        };
        assert_eq!(width, get("LinkWidthActive"), "{desc} port {num}: {sma:?}");
        let speed = match pi.link_speed_active {
            1 => "2.5 Gbps",
            2 => "5.0 Gbps",
            4 => "10.0 Gbps",
            _ => "?",
        };
        assert_eq!(speed, get("LinkSpeedActive"), "{desc} port {num}: {sma:?}");
    }
}

/// With a consumer for other nodes' details (metrics `detail`/`vl`, dumps):
/// the traffic ones (per-VL data) are read every sweep; the error ones whose
/// summary counter did not move keep their last reading until the periodic
/// full read (`detail_every`), which reads every port in full; forwarding
/// and P_Key tables are read again on their own periodic refresh
/// (`tables_every`).
#[test]
fn details_follow_consumers_and_the_periodic_refresh() {
    if !in_child() {
        return parent("details_follow_consumers_and_the_periodic_refresh");
    }
    let every = 4;
    let o = UmadOptions {
        tables_every: every,
        ..UmadOptions::default()
    };
    let mut s = open_source(with_details(o, every));
    s.sweep().unwrap();
    let second = s.sweep().unwrap();
    for (desc, p) in linked(&second) {
        assert!(has_details(p), "{desc} {:?}", p.num);
    }
    // A breakdown moving without its summary (ibsim lets one set it so; a
    // consistent PMA moves PortRcvErrors with it), and per-VL data.
    child_console("PerformanceSet \"Hca3\"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=4");
    child_console("PerformanceSet \"Hca3\"[1] PortVLOpData.PortVLOpData2=22");
    let phys = |s: &Snapshot| port1_counters(s, "Hca3").totals.port_local_physical_errors;
    let next = s.sweep().unwrap();
    let c = port1_counters(&next, "Hca3");
    assert_eq!(
        c.totals.vl_op_data.get(2),
        Some(&22),
        "per-VL data read every sweep"
    );
    assert_eq!(phys(&next), 0, "PortRcvErrors did not move");
    let mut seen = None;
    let mut smps = Vec::new();
    for i in 0..every {
        // The topology's periodic check aside (its own test).
        let checked = s.stats().check_smps;
        let next = s.sweep().unwrap();
        if seen.is_none() && phys(&next) == 4 {
            seen = Some(i);
        }
        smps.push(next.sweep.cost.discovery.sent - (s.stats().check_smps - checked));
    }
    assert!(seen.is_some(), "details re-read on the periodic full read");
    // The periodic table re-read is spread over the period (a slice of the
    // switches a sweep, docs/umad.md "Spread re-reads"): over `every` sweeps
    // the forwarding-table SMPs on top of the watched PortInfo ones (the
    // fewest a sweep sends: with two switches, some sweeps re-read none) add
    // up to one whole refresh, the second sweep's.
    let watched = *smps.iter().min().unwrap();
    let spread: u64 = smps.iter().map(|&n| n - watched).sum();
    assert_eq!(
        spread,
        second.sweep.cost.discovery.sent - watched,
        "every switch's table once in {every} sweeps: {smps:?}"
    );
}

/// The readings of `desc` port `num` (None: absent from the snapshot).
fn port_reading<'a>(s: &'a Snapshot, desc: &str, num: u8) -> Option<&'a ib::model::PortReadings> {
    let ni = s.nodes.iter().position(|x| x.description == desc)? as u32;
    let pi = s.node_port(ni, ib::types::PortNum(num))?;
    Some(&s.port(pi)?.counters.as_ref()?.readings)
}

/// perfquery's PortCounters of `desc` port `num` by name (from the child).
fn perfquery(s: &Snapshot, desc: &str, num: u8) -> std::collections::HashMap<String, u64> {
    let n = node(s, desc).expect(desc);
    let lid = s.port(n.ports.start).expect("port 0").info.lid.0;
    child_diag("perfquery", &[&lid.to_string(), &num.to_string()])
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((
                k.trim().to_string(),
                v.trim_start_matches('.').parse().ok()?,
            ))
        })
        .collect()
}

/// Switch ports without a link (issue 35.1): their PMA answers for them, so
/// they have readings, equal to perfquery's, from the first sweep on; a
/// reading stands while the switch's PortSelect 255 sum stands (it covers
/// them) and is read again in the sweep the sum moves; without sums it is
/// read every `detail_every` sweeps. An HCA port without a link has no PMA
/// anyone can reach: absent, never zeros.
#[test]
fn unlinked_switch_ports_are_read() {
    if !in_child() {
        return parent("unlinked_switch_ports_are_read");
    }
    child_console("PerformanceSet \"Switch2\"[4] PortCounters.SymbolErrorCounter=7");
    child_console("PerformanceSet \"Switch2\"[4] PortCounters.PortRcvErrors=5");
    child_console("PerformanceSet \"Switch1\"[7] PortCounters.LinkDownedCounter=3");
    let every = 4;
    let mut o = UmadOptions::default();
    o.pma.detail_every = every;
    let mut s = open_source(o);
    let first = s.sweep().unwrap();
    for (desc, num, field, want) in [
        ("Switch2", 4, "SymbolErrorCounter", 7),
        ("Switch2", 4, "PortRcvErrors", 5),
        ("Switch1", 7, "LinkDownedCounter", 3),
    ] {
        let r = port_reading(&first, desc, num).expect("an unlinked switch port is read");
        let ours = match field {
            "SymbolErrorCounter" => u64::from(r.counters.symbol_error_counter),
            "PortRcvErrors" => u64::from(r.counters.port_rcv_errors),
            _ => u64::from(r.counters.link_downed_counter),
        };
        assert_eq!(ours, want, "{desc}[{num}] {field}");
        assert_eq!(perfquery(&first, desc, num)[field], want, "perfquery");
    }
    assert!(
        port_reading(&first, "Hca1", 2).is_none(),
        "an HCA port without a link has no reading"
    );
    let second = s.sweep().unwrap();
    let steady = s.sweep().unwrap();
    // A steady sweep stands the unlinked ports on the sums: no MAD for them.
    assert!(
        steady.sweep.cost.pma.sent < second.sweep.cost.pma.sent,
        "steady {:?}, second {:?}",
        steady.sweep.cost.pma,
        second.sweep.cost.pma
    );
    assert_eq!(
        port_reading(&steady, "Switch2", 4).map(|r| r.counters.symbol_error_counter),
        Some(7)
    );
    // The sum moves: the unlinked port is read in the same sweep.
    child_console("PerformanceSet \"Switch2\"[4] PortCounters.SymbolErrorCounter=9");
    let next = s.sweep().unwrap();
    assert_eq!(
        port_reading(&next, "Switch2", 4).map(|r| r.counters.symbol_error_counter),
        Some(9),
        "read in the sweep its switch's sum moved"
    );
    assert!(ib::model::diff(&steady, &next)
        .iter()
        .all(|e| !matches!(e.kind, FabricEventKind::NodeAdded { .. })));
    assert_eq!(s.stats().discoveries, 1, "{:?}", s.stats());
}

/// Without switch sums, an unlinked port's reading stands between the
/// periodic full reads and is read again at the next one (`detail_every`).
#[test]
fn unlinked_switch_ports_without_sums_follow_detail_every() {
    if !in_child() {
        return parent("unlinked_switch_ports_without_sums_follow_detail_every");
    }
    let every = 3;
    let mut o = UmadOptions::default();
    o.pma.detail_every = every;
    o.pma.switch_sums = false;
    let mut s = open_source(o);
    s.sweep().unwrap();
    s.sweep().unwrap();
    child_console("PerformanceSet \"Switch1\"[6] PortCounters.PortXmitDiscards=11");
    let mut seen = None;
    for i in 0..every {
        let next = s.sweep().unwrap();
        let r = port_reading(&next, "Switch1", 6).expect("standing or read, never absent");
        if r.counters.port_xmit_discards == 11 {
            seen = Some(i);
            break;
        }
    }
    assert!(seen.is_some(), "read again within {every} sweeps");
}

/// IsSM (CapabilityMask bit 1) of `desc` port `num` as smpquery reads it at
/// directed route `path`.
fn smpquery_is_sm(path: &str, num: u8) -> bool {
    let mask = smpquery_portinfo(path, num)
        .get("CapMask")
        .and_then(|v| {
            u32::from_str_radix(v.split_whitespace().next()?.trim_start_matches("0x"), 16).ok()
        })
        .expect("CapMask");
    mask & 2 != 0
}

/// IsSM of `desc` port `num` in the snapshot.
fn is_sm(s: &Snapshot, desc: &str, num: u8) -> bool {
    let ni = s
        .nodes
        .iter()
        .position(|x| x.description == desc)
        .expect(desc) as u32;
    let pi = s.node_port(ni, ib::types::PortNum(num)).expect("port");
    s.port(pi).expect("port").info.capability_mask & 2 != 0
}

/// Issue 35.2: the ports of the SMs (those the SA lists and those whose
/// PortInfo says IsSM) are read again every sweep, so a second OpenSM that
/// stops shows in its port's CapabilityMask (IsSM) in the first sweep after
/// smpquery sees it, not at the next discovery.
#[test]
fn is_sm_of_a_stopped_standby_within_one_sweep() {
    if !in_child() {
        let mut cfg = ib_testbed::TestbedConfig::new(ib_testbed::SMALL_NET);
        cfg.sm_sweep_secs = 2;
        let mut tb = start(cfg);
        tb.opensm_console("priority 5").expect("console priority");
        tb.start_standby_opensm("Hca3", 1)
            .unwrap_or_else(|e| panic!("standby OpenSM: {e}"));
        let pid = tb.standby_pids()[0].to_string();
        println!(
            "{}",
            run_child(
                &tb,
                "is_sm_of_a_stopped_standby_within_one_sweep",
                &[("STANDBY_PID", pid)]
            )
        );
        return;
    }
    // Hca3 hangs on Switch1 port 2 (route 0,2 from Switch1, where we are).
    let path = "0,2";
    let mut s = open();
    let snap = s.sweep().unwrap();
    assert!(smpquery_is_sm(path, 1), "the standby's port has IsSM");
    assert!(is_sm(&snap, "Hca3", 1));
    let discoveries = s.stats().discoveries;
    let pid = std::env::var("STANDBY_PID").unwrap();
    let st = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(st.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while smpquery_is_sm(path, 1) {
        assert!(
            std::time::Instant::now() < deadline,
            "smpquery: IsSM never cleared"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let next = s.sweep().unwrap();
    assert!(
        !is_sm(&next, "Hca3", 1),
        "IsSM cleared within one sweep, as smpquery shows"
    );
    assert_eq!(s.stats().discoveries, discoveries, "without a discovery");
}

/// SMALL_NET with OpenSM's partitions.conf `partitions`.
fn small_net_with_partitions(partitions: &str) -> ib_testbed::Testbed {
    let mut cfg = ib_testbed::TestbedConfig::new(ib_testbed::SMALL_NET);
    cfg.partitions = partitions.into();
    start(cfg)
}

/// Five IPoIB partitions, the agent's port (Switch1 port 0) in all: five
/// groups, more than one SA packet holds (three MCMemberRecords).
const FIVE_GROUPS: &str = "Default=0x7fff, ipoib : ALL=full;\n\
    P1=0x0001, ipoib : ALL=full;\nP2=0x0002, ipoib : ALL=full;\n\
    P3=0x0003, ipoib : ALL=full;\nP4=0x0004, ipoib : ALL=full;\n";

/// Issue 35.4: an SA answer cut short (under umad2sim a GetTable answer is
/// cut to its first packet, as an RMPP transfer that did not complete would
/// be) is counted (`sa_answers_cut`, on /metrics) and never served as the
/// whole table: the group table is asked again per partition, each answer
/// whole, and the groups are every IPoIB group OpenSM made
/// (ff12:401b:PKEY::ffff:ffff per partition).
#[test]
fn a_cut_group_table_is_counted_and_asked_per_partition() {
    if !in_child() {
        let tb = small_net_with_partitions(FIVE_GROUPS);
        println!(
            "{}",
            run_child(
                &tb,
                "a_cut_group_table_is_counted_and_asked_per_partition",
                &[]
            )
        );
        return;
    }
    let mut s = open();
    let snap = s.sweep().unwrap();
    assert!(snap.sweep.cost.sa_answers_cut >= 1, "{:?}", snap.sweep.cost);
    let mut got: Vec<String> = snap
        .mcast_groups
        .iter()
        .map(|g| {
            let m = g.group.mgid.0;
            format!(
                "{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}",
                m[0], m[1], m[2], m[3], m[4], m[5]
            )
        })
        .collect();
    got.sort();
    let want: Vec<String> = ["8001", "8002", "8003", "8004", "ffff"]
        .iter()
        .map(|k| format!("ff12:401b:{k}"))
        .collect();
    assert_eq!(got, want, "every partition's IPoIB group");
    let next = s.sweep().unwrap();
    assert_eq!(next.mcast_groups.len(), 5);
    assert!(next.sweep.cost.sa_answers_cut > snap.sweep.cost.sa_answers_cut);
}

/// P2 (0x0002) holds the HCAs only: the agent's port (Switch1 port 0) is not
/// in it.
const P2_CAS: &str = "Default=0x7fff, ipoib : ALL=full;\nP2=0x0002, ipoib : ALL_CAS=full;\n";

/// The MGID of partition `pkey`'s IPoIB broadcast group (ff12:401b:PKEY::ffff:ffff).
fn ipoib_mgid(pkey: u16) -> ib::types::Gid {
    let k = (pkey | 0x8000).to_be_bytes();
    ib::types::Gid([
        0xff, 0x12, 0x40, 0x1b, k[0], k[1], 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
    ])
}

/// Run as a helper (env `JOIN_HELPER`, attached at Hca2): joins Hca2's
/// port to P2's IPoIB group, as IPoIB would.
#[test]
fn join_helper() {
    if std::env::var_os("JOIN_HELPER").is_none() {
        return;
    }
    use ib::mad::sa::{attr, comp::mc_member_record as c, McMemberRecord};
    use ib::source::umad::{ffi, req, transport::Transport};
    let pa = ffi::library().unwrap().resolve(None, None).unwrap();
    let mut t = Transport::open(&pa.ca, pa.port, Default::default()).unwrap();
    let r = McMemberRecord {
        mgid: ipoib_mgid(2),
        port_gid: ib::types::Gid::new(0xfe80_0000_0000_0000, ib::types::Guid(pa.port_guid)),
        join_state: 1,
        p_key: ib::types::PKey(0x8002),
        ..McMemberRecord::default()
    };
    let mut buf = [0u8; McMemberRecord::LEN];
    r.encode(&mut buf).unwrap();
    let mask = c::MGID | c::PORT_GID | c::JOIN_STATE | c::P_KEY;
    t.call(req::sa(
        req::SET,
        attr::MC_MEMBER_RECORD,
        pa.sm_lid,
        0,
        mask,
        &buf,
    ))
    .expect("join P2's group");
}

/// Issue 35.4: members are read as a trusted requester (the SM_Key), groups
/// untrusted too (OpenSM's trusted answer has one record per member, so no
/// group nobody joined). OpenSM 3.3 answers both only for the requester's
/// partitions: with the agent's port outside P2, neither `saquery -g` nor
/// `saquery --smkey 1 -m` shows P2's group, and the agent cannot either; as
/// a limited member of P2 (`ALL_SWITCHES=limited`, HUP) it serves the group
/// and Hca2's membership, as the trusted `saquery -m` shows them.
#[test]
fn groups_and_members_as_a_trusted_requester() {
    if !in_child() {
        let tb = small_net_with_partitions(P2_CAS);
        let join = [("JOIN_HELPER", "1".into()), ("SIM_HOST", "Hca2".into())];
        run_child(&tb, "join_helper", &join);
        println!(
            "{}",
            run_child(&tb, "groups_and_members_as_a_trusted_requester", &[])
        );
        return;
    }
    let p2 = ipoib_mgid(2);
    let p2_text = "ff12:401b:8002";
    let p2_group = |s: &Snapshot| s.mcast_groups.iter().find(|g| g.group.mgid == p2).cloned();
    let mut s = open();
    let snap = s.sweep().unwrap();
    assert!(!child_diag("saquery", &["-g"]).contains(p2_text));
    assert!(!child_diag("saquery", &["--smkey", "1", "-m"]).contains(p2_text));
    assert!(p2_group(&snap).is_none(), "what the SA does not say");

    let dir = std::env::var("UMAD_TESTBED_DIR").unwrap();
    std::fs::write(
        format!("{dir}/partitions.conf"),
        "Default=0x7fff, ipoib : ALL=full;\nP2=0x0002, ipoib : ALL_CAS=full, ALL_SWITCHES=limited;\n",
    )
    .unwrap();
    child_signal_opensm("HUP");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut trusted = String::new();
    while !trusted.contains(p2_text) {
        assert!(
            std::time::Instant::now() < deadline,
            "OpenSM never showed P2's member: {trusted}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
        trusted = child_diag("saquery", &["--smkey", "1", "-m"]);
    }
    let snap = s.sweep().unwrap();
    let g = p2_group(&snap).unwrap_or_else(|| panic!("P2's group in {:?}", snap.mcast_groups));
    assert_eq!(g.members.len(), 1, "{:?}", g.members);
    let hca2 = node(&snap, "Hca2").expect("Hca2");
    let port = snap.port(hca2.ports.start).unwrap();
    assert_eq!(g.members[0].port_gid.0[8..], port.guid.0.to_be_bytes());
    let gid = std::net::Ipv6Addr::from(g.members[0].port_gid.0).to_string();
    assert!(
        trusted.contains(&format!("PortGid.................{gid}")),
        "{gid} in saquery --smkey 1 -m: {trusted}"
    );
}
