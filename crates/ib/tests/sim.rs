//! The simulated fabric: bring-up, routing, counters, control operations, events,
//! sampling, dumps.

use ib::mad::pma::{
    counter_select, sample_select, sample_status, PortCounters, PortSamplesControl,
};
use ib::model::{diff, dump_ibnetdiscover, dump_json, FabricEventKind, Snapshot};
use ib::source::sim::{samples_request, SimConfig, SimSource};
use ib::source::{open, ControlOp, ControlReply, Source, SourceOptions, SourceSpec};
use ib::topology::{fat_tree, parse_str};
use ib::types::{Guid, Lid, LinkSpeed, NodeType, PortNum, PortState, SmState};
use std::time::Duration;

fn manual(seed: u64) -> SimConfig {
    SimConfig {
        seed,
        manual_clock: true,
        ..SimConfig::default()
    }
}

fn guid_of(s: &Snapshot, desc: &str) -> Guid {
    s.nodes
        .iter()
        .find(|n| n.description == desc)
        .map(|n| n.info.node_guid)
        .unwrap()
}

/// Follows LFTs from `from` (a switch) to the end port owning `lid`.
/// Whether `lid` is reached from switch `from` by its forwarding tables.
fn trace(s: &Snapshot, from: u32, lid: Lid) -> bool {
    let p0 = s.node_port(from, PortNum(0)).unwrap();
    ib::model::route::trace(s, p0, lid).is_ok()
}

#[test]
fn default_fabric_bring_up() {
    let mut sim = SimSource::default_fabric(manual(1)).unwrap();
    let s = sim.sweep().unwrap();
    assert_eq!(s.nodes.len(), 12);
    assert_eq!(s.local_node().unwrap().description, "node01 mlx5_0");
    // Every end port Active with a unique LID; LFTs route every switch to every LID.
    let mut lids = std::collections::BTreeSet::new();
    for (i, n) in s.nodes.iter().enumerate() {
        for p in s.node_ports(i as u32) {
            if s.is_end_port(p) {
                assert_eq!(p.info.port_state(), Some(PortState::Active));
                assert!(p.info.lid.is_unicast());
                assert!(lids.insert(p.info.lid.0));
                assert_eq!(s.port_by_lid(p.info.lid), s.port_by_guid(p.guid));
            }
        }
        if n.info.node_type() == Some(NodeType::Switch) {
            assert!(n.switch.is_some());
        }
    }
    for (i, n) in s.nodes.iter().enumerate() {
        if n.switch.is_some() {
            for &l in &lids {
                assert!(
                    trace(&s, i as u32, Lid(l)),
                    "switch {} lid {l}",
                    n.description
                );
            }
        }
    }
    // Links run 4x HDR.
    let p = s.port_of(guid_of(&s, "node01 mlx5_0"), PortNum(1)).unwrap();
    assert_eq!(
        s.port(p).unwrap().info.link_speed(false),
        Some(LinkSpeed::Hdr)
    );
    // The master SM, the default partition, the IPoIB broadcast group.
    let sm = s.master_sm().unwrap();
    assert_eq!(sm.info.sm_state(), Some(SmState::Master));
    assert_eq!(s.port(p).unwrap().info.master_sm_lid, sm.lid);
    assert_eq!(s.partitions[0].pkey.0, 0xFFFF);
    assert_eq!(s.partitions[0].members.len(), 14); // 10 HCA ports + 4 switch port 0
    let g = &s.mcast_groups[0];
    assert_eq!(g.group.mgid.to_string(), "ff12:401b:ffff::ffff:ffff");
    assert_eq!(g.group.mlid, Lid(0xC000));
    assert_eq!(g.members.len(), 10); // every HCA port, both of node01 and node05
}

#[test]
fn lmc_is_honoured() {
    let mut sim = SimSource::default_fabric(SimConfig {
        lmc: 2,
        ..manual(1)
    })
    .unwrap();
    let s = sim.sweep().unwrap();
    let p = s.port_of(guid_of(&s, "node05 mlx5_0"), PortNum(1)).unwrap();
    let info = &s.port(p).unwrap().info;
    assert_eq!(info.lmc, 2);
    assert_eq!(info.lid.0 % 4, 0);
    for l in info.lid.0..info.lid.0 + 4 {
        assert_eq!(s.port_by_lid(Lid(l)), Some(p));
        for (i, n) in s.nodes.iter().enumerate() {
            if n.switch.is_some() {
                assert!(trace(&s, i as u32, Lid(l)));
            }
        }
    }
}

#[test]
fn counters_follow_the_clock_and_never_go_back() {
    let mut sim = SimSource::default_fabric(manual(7)).unwrap();
    let s1 = sim.sweep().unwrap();
    sim.advance_clock(Duration::from_secs(10));
    let s2 = sim.sweep().unwrap();
    let p = s1
        .port_of(guid_of(&s1, "node01 mlx5_0"), PortNum(1))
        .unwrap();
    let c1 = s1.port(p).unwrap().counters.clone().unwrap();
    let c2 = s2.port(p).unwrap().counters.clone().unwrap();
    // HDR: the 32-bit data counter is saturated, the 64-bit one moves.
    assert_eq!(c1.readings.counters.port_xmit_data, u32::MAX);
    let e1 = c1.readings.extended.as_ref().unwrap();
    let e2 = c2.readings.extended.as_ref().unwrap();
    let words = e2.port_xmit_data - e1.port_xmit_data;
    // 10 s at 2%..65% of 200 Gb/s, in 4-octet words.
    assert!(words > 10 * 25_000_000_000 / 4 / 100, "{words}");
    assert!(words < 10 * 25_000_000_000 / 4, "{words}");
    assert_eq!(c2.totals.port_xmit_data - c1.totals.port_xmit_data, words);
    assert_eq!(c1.discontinuity, c2.discontinuity);
    // What a port receives is what its peer sent.
    let r = s2.port(p).unwrap().remote.unwrap();
    let rc = s2.port(r).unwrap().counters.clone().unwrap();
    assert_eq!(
        rc.readings.extended.as_ref().unwrap().port_rcv_data,
        e2.port_xmit_data
    );
    // Same seed, same counters.
    let mut again = SimSource::default_fabric(manual(7)).unwrap();
    let a1 = again.sweep().unwrap();
    assert_eq!(
        a1.port(p).unwrap().counters.as_ref().unwrap().readings,
        c1.readings
    );
}

#[test]
fn set_port_counters_clears_without_totals_going_back() {
    let mut sim = SimSource::default_fabric(manual(3)).unwrap();
    let s1 = sim.sweep().unwrap();
    let g = guid_of(&s1, "leaf01");
    let port = PortNum(37);
    let p = s1.port_of(g, port).unwrap();
    let before = s1.port(p).unwrap().counters.clone().unwrap();
    let reply = sim
        .control(ControlOp::SetPortCounters {
            node: g,
            port,
            counter_select: counter_select::PORT_XMIT_DATA | counter_select::SYMBOL_ERROR_COUNTER,
            counter_select2: 0,
            values: PortCounters::default(),
        })
        .unwrap();
    let ControlReply::PortCounters(c) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(c.port_xmit_data, 0);
    assert_eq!(c.symbol_error_counter, 0);
    sim.advance_clock(Duration::from_millis(100));
    let s2 = sim.sweep().unwrap();
    let after = s2.port(p).unwrap().counters.clone().unwrap();
    assert!(after.readings.counters.port_xmit_data > 0);
    assert!(after.readings.counters.port_xmit_data < before.readings.counters.port_xmit_data);
    assert!(after.totals.port_xmit_data >= before.totals.port_xmit_data);
    assert!(after.totals.symbol_error_counter >= before.totals.symbol_error_counter);
    assert_eq!(after.discontinuity, before.discontinuity);
    // PortSelect 255 on a switch (AllPortSelect) aggregates; a CA refuses it.
    assert!(sim
        .control(ControlOp::GetPortCounters {
            node: g,
            port: PortNum::ALL
        })
        .is_ok());
    let ca = guid_of(&s1, "node01 mlx5_0");
    assert!(sim
        .control(ControlOp::GetPortCounters {
            node: ca,
            port: PortNum::ALL
        })
        .is_err());
    assert!(sim
        .control(ControlOp::GetPortCounters {
            node: Guid(0xdead),
            port: PortNum(1)
        })
        .is_err());
}

#[test]
fn link_flap_gives_events_and_bumps_link_downed() {
    let mut sim = SimSource::default_fabric(manual(5)).unwrap();
    let s1 = sim.sweep().unwrap();
    let host = guid_of(&s1, "node03 mlx5_0");
    sim.control(ControlOp::SimLinkFlap {
        node: host,
        port: PortNum(1),
        down_for: Duration::from_secs(5),
    })
    .unwrap();
    sim.advance_clock(Duration::from_secs(1));
    let s2 = sim.sweep().unwrap();
    let ev = diff(&s1, &s2);
    assert!(ev.iter().any(|e| matches!(e.kind,
        FabricEventKind::PortOutOfService { node_guid, port, .. } if node_guid == host && port == PortNum(1))), "{ev:?}");
    assert!(ev.iter().any(|e| matches!(&e.kind,
        FabricEventKind::LinkStateChange { node_guid, to, .. } if *node_guid != host && *to == Some(PortState::Down))), "{ev:?}");
    sim.advance_clock(Duration::from_secs(10));
    let s3 = sim.sweep().unwrap();
    let ev = diff(&s2, &s3);
    assert!(
        ev.iter().any(|e| matches!(e.kind,
        FabricEventKind::PortInService { node_guid, .. } if node_guid == host)),
        "{ev:?}"
    );
    let p = s3.port_of(host, PortNum(1)).unwrap();
    let c1 = s1.port(p).unwrap().counters.clone().unwrap();
    let c3 = s3.port(p).unwrap().counters.clone().unwrap();
    assert_eq!(
        c3.readings.counters.link_downed_counter,
        c1.readings.counters.link_downed_counter + 1
    );
    // No changes, no events.
    let s4 = sim.sweep().unwrap();
    assert!(diff(&s3, &s4).is_empty());
}

#[test]
fn error_burst_moves_error_counters() {
    let mut sim = SimSource::default_fabric(manual(5)).unwrap();
    let s1 = sim.sweep().unwrap();
    let host = guid_of(&s1, "node02 mlx5_0");
    sim.control(ControlOp::SimErrorBurst {
        node: host,
        port: PortNum(1),
        count: 400,
    })
    .unwrap();
    let s2 = sim.sweep().unwrap();
    let p = s2.port_of(host, PortNum(1)).unwrap();
    let a = s1.port(p).unwrap().counters.clone().unwrap();
    let b = s2.port(p).unwrap().counters.clone().unwrap();
    assert_eq!(
        b.totals.symbol_error_counter - a.totals.symbol_error_counter,
        400
    );
    assert_eq!(b.totals.port_rcv_errors - a.totals.port_rcv_errors, 100);
}

/// SetPortSamplesControl on `node`; what the PMA answers.
fn set_samples_control(
    sim: &mut SimSource,
    node: Guid,
    control: PortSamplesControl,
) -> PortSamplesControl {
    let op = ControlOp::SetPortSamplesControl { node, control };
    let ControlReply::PortSamplesControl(c) = sim.control(op).unwrap() else {
        panic!()
    };
    c
}

#[test]
fn sampling_state_machine() {
    let mut sim = SimSource::default_fabric(manual(9)).unwrap();
    let s0 = sim.sweep().unwrap();
    let node = guid_of(&s0, "node01 mlx5_0");
    let tick_us = 1.024; // Tick 0xFF
    let ticks = |secs: f64| (secs * 1e6 / tick_us) as u32;
    let req = samples_request(
        PortNum(1),
        ticks(1.0),
        ticks(2.0),
        0x1234,
        &[
            sample_select::PORT_XMIT_DATA,
            sample_select::PORT_RCV_PKTS,
            0x7777,
        ],
    );
    let c = set_samples_control(&mut sim, node, req.clone());
    assert_eq!(c.sample_status, sample_status::STARTED);
    assert_eq!(c.tag, 0x1234);
    assert_eq!(c.tick, 0xFF);
    // Another requester's Set collides and leaves the run alone.
    let mut other = req.clone();
    other.tag = 0x9999;
    let c = set_samples_control(&mut sim, node, other);
    assert_eq!(c.tag, 0x1234);

    let n = s0.node_by_guid(node).unwrap();
    let s1 = sim.sweep().unwrap();
    let st = s1.node(n).unwrap().sampling.clone().unwrap();
    assert_eq!(st.result.sample_status, sample_status::STARTED);
    assert_eq!(st.result.counter[0], 0);
    sim.advance_clock(Duration::from_millis(1500));
    let s2 = sim.sweep().unwrap();
    let st = s2.node(n).unwrap().sampling.clone().unwrap();
    assert_eq!(st.control.sample_status, sample_status::RUNNING);
    assert!(st.result.counter[0] > 0);
    sim.advance_clock(Duration::from_secs(3));
    let s3 = sim.sweep().unwrap();
    let st = s3.node(n).unwrap().sampling.clone().unwrap();
    assert_eq!(st.result.sample_status, sample_status::DONE);
    assert_eq!(st.result.tag, 0x1234);
    assert_eq!(st.result.counter[2], 0, "unimplemented quantity reads zero");
    // The result equals the extended counter's movement over the 2 s window,
    // which (at a fixed utilisation swing) is close to 2/4.5 of what moved here.
    let p = s0.port_of(node, PortNum(1)).unwrap();
    let moved = s3
        .port(p)
        .unwrap()
        .counters
        .as_ref()
        .unwrap()
        .totals
        .port_xmit_data
        - s0.port(p)
            .unwrap()
            .counters
            .as_ref()
            .unwrap()
            .totals
            .port_xmit_data;
    let got = st.result.counter[0] as f64;
    let expect = moved as f64 * 2.0 / 4.5;
    assert!((got - expect).abs() / expect < 0.2, "{got} vs {expect}");
    // A finished run accepts a new Tag.
    let mut next = req;
    next.tag = 0x4321;
    let c = set_samples_control(&mut sim, node, next);
    assert_eq!(c.tag, 0x4321);
}

#[test]
fn local_node_choice() {
    let by_name = SimSource::default_fabric(SimConfig {
        local_node: Some("spine02".into()),
        ..manual(1)
    })
    .unwrap()
    .sweep()
    .unwrap();
    assert_eq!(by_name.local_node().unwrap().description, "spine02");
    let g = guid_of(&by_name, "node04 mlx5_0");
    let by_guid = SimSource::default_fabric(SimConfig {
        local_node: Some(g.to_string()),
        ..manual(1)
    })
    .unwrap()
    .sweep()
    .unwrap();
    assert_eq!(by_guid.local_node().unwrap().info.node_guid, g);
    assert!(SimSource::default_fabric(SimConfig {
        local_node: Some("nope".into()),
        ..manual(1)
    })
    .is_err());
}

#[test]
fn dumps() {
    let mut sim = SimSource::default_fabric(manual(1)).unwrap();
    let s = sim.sweep().unwrap();
    let text = dump_ibnetdiscover(&s);
    let t = parse_str(&text, "dump").unwrap();
    assert_eq!(t.nodes.len(), 12);
    assert!(text.contains("# \"node01 mlx5_0\""));
    assert!(text.contains("4xHDR"));
    let j = dump_json(&s);
    assert_eq!(j["schema"], "ibsnmpd-dump/1");
    assert_eq!(j["nodes"].as_array().unwrap().len(), 12);
    let port = &j["nodes"][0]["ports"][0];
    assert_eq!(port["state"], "Active");
    assert!(
        port["counters"]["totals"]["port_xmit_data"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(port["counters"]["raw"]["counters"]["port_xmit_data"].is_u64());
    assert!(port["counters"]["if"]["in_octets"].is_u64());
    assert_eq!(j["multicast_groups"][0]["mlid"], "0xc000");
    // The sim names no CA (IF-MIB falls back to the node description).
    assert!(j["local_ca"].is_null());
    let ipoib = j["ipoib"].as_array().unwrap();
    assert_eq!(ipoib.len(), s.ipoib.len());
    assert!(!ipoib.is_empty());
    assert_eq!(j["ipoib"][0]["node_guid"], j["local_node"]);
    let addr = j["ipoib"][0]["address"].as_str().unwrap();
    assert_eq!(addr.split(':').count(), 20, "{addr}");
}

#[test]
fn spec_parsing_and_open() {
    assert_eq!(
        "sim".parse::<SourceSpec>().unwrap(),
        SourceSpec::Sim { file: None }
    );
    assert_eq!(
        "umad:mlx5_0:1".parse::<SourceSpec>().unwrap(),
        SourceSpec::Umad {
            ca: Some("mlx5_0".into()),
            port: Some(1)
        }
    );
    assert_eq!(
        "sysfs".parse::<SourceSpec>().unwrap(),
        SourceSpec::Sysfs { root: "/".into() }
    );
    for bad in [
        "",
        "sim:",
        "umad:",
        "umad:mlx5_0:x",
        "umad:mlx5_0:0",
        "bogus",
        "sysfs:",
    ] {
        let e = bad.parse::<SourceSpec>().unwrap_err().to_string();
        assert!(e.contains("expected sim, sim:FILE"), "{bad}: {e}");
    }
    let mut s = open(&SourceSpec::Sim { file: None }, &SourceOptions::default()).unwrap();
    assert_eq!(s.sweep().unwrap().sweep.number, 1);
    assert!(open(
        &"sim:/nonexistent".parse().unwrap(),
        &SourceOptions::default()
    )
    .is_err());
}

#[test]
fn generated_fat_tree_routes() {
    let topo = fat_tree(200, 12, 3).unwrap();
    let mut sim = SimSource::new(&topo, manual(1)).unwrap();
    let s = sim.sweep().unwrap();
    let cas: Vec<Lid> = s
        .ports
        .iter()
        .filter(|p| s.is_end_port(p))
        .map(|p| p.info.lid)
        .collect();
    assert_eq!(cas.len(), s.nodes.len());
    for (i, n) in s
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.switch.is_some())
        .step_by(7)
    {
        for l in cas.iter().step_by(13) {
            assert!(trace(&s, i as u32, *l), "{} -> {}", n.description, l.0);
        }
    }
}

#[test]
fn snapshot_cell_readers_and_writer_run_together() {
    use ib::model::SnapshotCell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let mut sim = SimSource::default_fabric(manual(2)).unwrap();
    let cell = Arc::new(SnapshotCell::new());
    assert!(cell.load().is_none());
    cell.store(Arc::new(sim.sweep().unwrap()));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (cell, done) = (Arc::clone(&cell), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut last = 0;
                let mut reads = 0u64;
                while !done.load(Ordering::Relaxed) {
                    let s = cell.load().unwrap();
                    // A held snapshot never changes under the reader.
                    assert!(s.sweep.number >= last);
                    last = s.sweep.number;
                    assert_eq!(s.nodes.len(), 12);
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for _ in 0..30 {
        sim.advance_clock(Duration::from_secs(1));
        let old = cell.store(Arc::new(sim.sweep().unwrap())).unwrap();
        assert!(old.sweep.number < cell.load().unwrap().sweep.number);
    }
    done.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(cell.load().unwrap().sweep.number, 31);
}
