//! The umad source on ibsim + OpenSM: discovery equals ibnetdiscover, counters set in
//! ibsim appear, Unlink/ReLink give events within one sweep, failures are survived.
mod common;
mod umad_util;

use common::get_port_counters;
use ib::model::{dump_ibnetdiscover, FabricEventKind};
use ib::source::umad::{UmadOptions, UmadSource};
use ib::types::PortNum;
use ib_testbed::sorted_lines;
use umad_util::*;

fn open() -> UmadSource {
    open_with(UmadOptions::default())
}

fn open_with(o: UmadOptions) -> UmadSource {
    open_source(o)
}

fn parent(name: &str) {
    run_on_small_net(name)
}

#[test]
fn dump_equals_ibnetdiscover() {
    if !in_child() {
        return parent("dump_equals_ibnetdiscover");
    }
    let mut s = open_with(UmadOptions {
        subscribe_traps: true,
        ..UmadOptions::default()
    });
    let snap = s.sweep().unwrap();
    // The CA the source opened names the local node's device.
    assert_eq!(
        snap.local_ca.as_deref(),
        Some(s.local_port().ca.as_str()),
        "{}",
        s.spec()
    );
    assert!(s.spec().contains(snap.local_ca.as_deref().unwrap_or("?")));
    let ours = dump_ibnetdiscover(&snap);
    let theirs = child_diag("ibnetdiscover", &[]);
    let (a, b) = (parse_ibnetdiscover(&ours), parse_ibnetdiscover(&theirs));
    assert!(!b.links.is_empty());
    assert_eq!(a, b, "ours:\n{ours}\nibnetdiscover:\n{theirs}");
    assert_eq!(
        sorted_lines(&ours),
        sorted_lines(&theirs),
        "ours:\n{ours}\nibnetdiscover:\n{theirs}"
    );
    // SA: the master SM is known, with the IPoIB multicast groups of the default partition.
    assert!(snap.master_sm().is_some(), "no master SM in {:?}", snap.sms);
    assert!(!snap.mcast_groups.is_empty());
    assert!(
        snap.partitions.iter().any(|p| p.pkey.0 & 0x7fff == 0x7fff),
        "{:?}",
        snap.partitions
    );
    // PathRecord on demand, between two HCAs.
    let lid = |d: &str| port_of(&snap, d, 1).info.lid;
    let pr = s
        .path_record(lid("Hca1").0, lid("Hca4").0)
        .unwrap()
        .expect("a path");
    assert_eq!((pr.slid, pr.dlid), (lid("Hca1"), lid("Hca4")));
    // OpenSM accepts the InformInfo subscriptions (ibsim never delivers the Reports).
    assert!(s.is_subscribed());
    println!("{ours}");
}

fn port_of<'a>(snap: &'a ib::model::Snapshot, desc: &str, port: u8) -> &'a ib::model::Port {
    let n = snap
        .nodes
        .iter()
        .position(|n| n.description == desc)
        .unwrap();
    let pi = snap.node_port(n as u32, PortNum(port)).unwrap();
    snap.port(pi).unwrap()
}

#[test]
fn performance_set_counters_appear() {
    if !in_child() {
        return parent("performance_set_counters_appear");
    }
    // Every other sweep polls counters only (reusing the topology): the second sweep
    // below is such a sweep.
    // Detail attributes every sweep here (what a default sweep reads of them is
    // `detail_attributes_follow_their_summary_counters`).
    let o = UmadOptions {
        topology_every: 2,
        ..UmadOptions::default()
    };
    let mut s = open_with(with_details(o, 1));
    s.sweep().unwrap();
    child_console("PerformanceSet \"Hca1\"[1] PortCounters.SymbolErrorCounter=5");
    child_console(
        "PerformanceSet \"Hca1\"[1] PortCountersExtended.PortUnicastXmitPkts=123456789012",
    );
    child_console("PerformanceSet \"Hca1\"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=3");
    child_console("PerformanceSet \"Hca1\"[1] PortVLXmitWaitCounters.PortVLXmitWaitCounters0=1000");
    let snap = s.sweep().unwrap();
    let p = port_of(&snap, "Hca1", 1);
    let c = p.counters.as_ref().expect("Hca1 port 1 read");
    assert_eq!(c.readings.counters.symbol_error_counter, 5);
    assert_eq!(c.totals.symbol_error_counter, 5);
    assert_eq!(
        c.readings.extended.as_ref().unwrap().port_unicast_xmit_pkts,
        123456789012
    );
    assert_eq!(
        c.readings
            .rcv_error_details
            .as_ref()
            .unwrap()
            .port_local_physical_errors,
        3
    );
    assert_eq!(
        c.readings.vl_xmit_wait.as_ref().unwrap().port_vl_xmit_wait[0],
        1000
    );
    // Switch ports are polled too.
    let sw = port_of(&snap, "Switch1", 3);
    assert!(sw.counters.is_some());
    // Totals keep growing, never reset by us.
    let before = c.totals.port_xmit_pkts;
    let snap2 = s.sweep().unwrap();
    let c2 = port_of(&snap2, "Hca1", 1).counters.as_ref().unwrap();
    assert!(c2.totals.port_xmit_pkts >= before);
    assert_eq!(c2.totals.symbol_error_counter, 5);

    // The control path: PMA Set(PortCounters) with a CounterSelect clears that counter.
    use ib::mad::pma::{counter_select, PortCounters, PortSamplesControl};
    use ib::source::{ControlOp, Source};
    let hca1 = guid(&snap2, "Hca1");
    Source::control(
        &mut s,
        ControlOp::SetPortCounters {
            node: hca1,
            port: PortNum(1),
            counter_select: counter_select::SYMBOL_ERROR_COUNTER,
            counter_select2: 0,
            values: PortCounters::default(),
        },
    )
    .unwrap();
    let pc = get_port_counters(&mut s, hca1, PortNum(1));
    assert_eq!(pc.symbol_error_counter, 0);
    // ibsim's PMA has no PortSamplesControl: a clear error, no panic.
    let e = Source::control(
        &mut s,
        ControlOp::SetPortSamplesControl {
            node: hca1,
            control: PortSamplesControl::default(),
        },
    );
    assert!(e.is_err());
    println!("PortSamplesControl on ibsim: {e:?}");
}

#[test]
fn detail_attributes_follow_their_summary_counters() {
    if !in_child() {
        return parent("detail_attributes_follow_their_summary_counters");
    }
    // The default schedule for details of a non-local port a consumer wants
    // (`remote_details`): read again when the summary counter they break down
    // moves (or every `detail_every` sweeps).
    let mut s = open_with(with_details(UmadOptions::default(), 1000));
    s.sweep().unwrap();
    s.sweep().unwrap();
    let sent = s.stats().transport.sent;
    s.sweep().unwrap();
    let steady = s.stats().transport.sent - sent;
    // A detail counter alone does not trigger a read...
    child_console("PerformanceSet \"Hca3\"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=4");
    let snap = s.sweep().unwrap();
    let c = port_of(&snap, "Hca3", 1).counters.clone().unwrap();
    let d = |c: &ib::model::PortCounterState| {
        c.readings
            .rcv_error_details
            .as_ref()
            .map_or(0, |d| d.port_local_physical_errors)
    };
    assert_eq!(d(&c), 0);
    // ...its summary counter moving does, in the same sweep.
    child_console("PerformanceSet \"Hca3\"[1] PortCounters.PortRcvErrors=2");
    let snap = s.sweep().unwrap();
    let c = port_of(&snap, "Hca3", 1).counters.clone().unwrap();
    assert_eq!(c.readings.counters.port_rcv_errors, 2);
    assert_eq!(d(&c), 4, "details read when PortRcvErrors moved");
    assert_eq!(c.totals.port_local_physical_errors, 4);
    println!("steady sweep: {steady} MADs");
}

#[test]
fn unlink_relink_events_within_one_sweep() {
    if !in_child() {
        return parent("unlink_relink_events_within_one_sweep");
    }
    let mut s = open();
    let mut prev = s.sweep().unwrap();
    let hca4 = guid(&prev, "Hca4");
    child_console("Unlink \"Hca4\"[1]");
    let mut next = s.sweep().unwrap();
    let ev = ib::model::diff(&prev, &next);
    assert!(
        ev.iter().any(|e| matches!(&e.kind, FabricEventKind::PortOutOfService { node_guid, .. } if *node_guid == hca4)),
        "no out-of-service event for Hca4: {ev:?}"
    );
    child_console("ReLink \"Hca4\"[1]");
    // OpenSM brings the port back to Active on its resweep (trap 128 makes it immediate).
    let mut seen = false;
    for _ in 0..20 {
        prev = std::mem::replace(&mut next, s.sweep().unwrap());
        let ev = ib::model::diff(&prev, &next);
        if ev.iter().any(|e| matches!(&e.kind, FabricEventKind::PortInService { node_guid, .. } if *node_guid == hca4)) {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert!(seen, "no in-service event for Hca4 after ReLink");
}

#[test]
fn dead_sm_and_packet_loss_are_survived() {
    if !in_child() {
        return parent("dead_sm_and_packet_loss_are_survived");
    }
    let mut s = open();
    let good = s.sweep().unwrap();
    let groups = good.mcast_groups.len();
    let master = good.master_sm().expect("a master").info.guid;
    // A frozen SM: SA queries fail, the snapshot keeps the last SA answers but
    // not the SM as master: it answers SMInfo at its port no more either.
    child_signal_opensm("STOP");
    let snap = s.sweep().unwrap();
    let st = s.stats();
    assert!(st.sa_failures > 0 && st.sa_stale_sweeps == 1, "{st:?}");
    assert_eq!(snap.mcast_groups.len(), groups);
    assert!(snap.master_sm().is_none(), "{:?}", snap.sms);
    let silent = snap
        .sms
        .iter()
        .find(|r| r.info.guid == master)
        .expect("kept");
    assert!(!silent.answering);
    assert_eq!(silent.info.sm_state, ib::types::SmState::NotActive.raw());
    child_signal_opensm("CONT");
    let snap = s.sweep().unwrap();
    assert_eq!(s.stats().sa_stale_sweeps, 1, "SA did not recover");
    let back = snap.master_sm().expect("master again");
    assert!(back.answering && back.info.guid == master, "{:?}", snap.sms);
    // 30% loss into Hca1's port: retries absorb most; failures are counted, never fatal.
    child_console("Error \"Hca1\"[1] 30");
    let mut ok = 0;
    for _ in 0..10 {
        match s.sweep() {
            Ok(_) => ok += 1,
            Err(e) => println!("sweep failed (expected now and then): {e}"),
        }
    }
    let st = s.stats();
    println!("after loss: ok {ok}/10, {st:?}");
    assert!(st.transport.retries > 0, "{st:?}");
    assert!(ok > 0);
    // All of it: Hca1's PMA does not answer, so its counters are absent
    // (never the last reading as if it were current) until it answers again.
    child_console("Error \"Hca1\"[1] 100");
    let snap = (0..3)
        .find_map(|_| s.sweep().ok())
        .expect("a sweep with Hca1 silent");
    assert!(s.stats().unreached_ports > 0, "{:?}", s.stats());
    assert!(port_of(&snap, "Hca1", 1).counters.is_none());
    // Loss off: once a sweep reaches every port again, Hca1's counters are
    // back. The loss may have left Hca1's port in Init (OpenSM's SMPs were
    // dropped too), where it passes no PMA traffic until OpenSM makes it
    // Active again at one of its sweeps: waited for, bounded.
    child_console("Error \"Hca1\"[1] 0");
    let back = (0..80).find_map(|_| {
        let snap = s.sweep().ok()?;
        if s.stats().unreached_ports == 0 {
            return Some(snap);
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
        None
    });
    let snap = back.unwrap_or_else(|| panic!("Hca1 never answered again: {:?}", s.stats()));
    assert!(port_of(&snap, "Hca1", 1).counters.is_some());
}
