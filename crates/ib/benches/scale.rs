//! Scale: a 48,000-host fat tree (radix 240, 3 levels: 1,000 switches, 49,000
//! LIDs) brought up by the simulator and swept. Prints bring-up and first-sweep
//! times and the peak resident memory (VmHWM), then lets criterion time sweeps.
//!
//!     cargo bench -p ib --bench scale
//!     SCALE_HOSTS=4000 cargo bench -p ib --bench scale   # smaller fabric

use criterion::{criterion_group, criterion_main, Criterion};
use ib::model::{diff, SnapshotCell};
use ib::source::sim::{SimConfig, SimSource};
use ib::source::Source;
use ib::topology::fat_tree;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn vm_hwm_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn scale(c: &mut Criterion) {
    let hosts: usize = std::env::var("SCALE_HOSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48_000);
    let radix: u8 = if hosts > 20_000 { 240 } else { 36 };
    let t0 = Instant::now();
    let topo = fat_tree(hosts, radix, 3).expect("fat tree");
    let t_topo = t0.elapsed();
    let t1 = Instant::now();
    let mut sim = SimSource::new(&topo, SimConfig::default()).expect("sim");
    let t_bring_up = t1.elapsed();
    drop(topo);
    let cell = SnapshotCell::new();
    let t2 = Instant::now();
    let s1 = sim.sweep().expect("sweep");
    let t_first = t2.elapsed();
    let nodes = s1.nodes.len();
    let ports = s1.ports.len();
    let lids = s1
        .ports
        .iter()
        .filter(|p| s1.is_end_port(p) && p.info.lid.0 != 0)
        .count();
    cell.store(Arc::new(s1));
    // A second sweep while the first is published: the steady state (two
    // snapshots alive at once, as when readers hold the old one).
    let t3 = Instant::now();
    let s2 = Arc::new(sim.sweep().expect("sweep"));
    let t_second = t3.elapsed();
    let t4 = Instant::now();
    let prev = cell.store(Arc::clone(&s2)).expect("previous");
    let events = diff(&prev, &s2).len();
    let t_diff = t4.elapsed();
    drop(prev);
    // Only the cell's snapshot stays alive from here on, as in the daemon.
    drop(s2);
    println!(
        "scale: {hosts} hosts, radix {radix}: {nodes} nodes, {ports} ports, {lids} LIDs\n\
         scale: topology {:.3} s, bring-up (LIDs, min-hop LFTs) {:.3} s\n\
         scale: first sweep (snapshot build) {:.3} s, second sweep {:.3} s, diff {:.3} s ({events} events)\n\
         scale: VmHWM {:.0} MiB",
        t_topo.as_secs_f64(),
        t_bring_up.as_secs_f64(),
        t_first.as_secs_f64(),
        t_second.as_secs_f64(),
        t_diff.as_secs_f64(),
        vm_hwm_mib()
    );
    let mut g = c.benchmark_group("scale");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function(format!("sweep_{hosts}_hosts"), |b| {
        b.iter(|| {
            let s = Arc::new(sim.sweep().expect("sweep"));
            cell.store(s);
        })
    });
    g.finish();
    println!("scale: VmHWM after sweeps {:.0} MiB", vm_hwm_mib());
}

criterion_group!(benches, scale);
criterion_main!(benches);
