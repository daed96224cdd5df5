//! PMA sweep benchmark body, run by scripts/bench-pma.sh under the umad2sim preload
//! against a large ibsim fabric (ignored in normal test runs).
use std::time::Instant;

use ib::source::umad::discover::{discover, DiscoverOptions};
use ib::source::umad::ffi;
use ib::source::umad::pma::{self, PmaOptions, Target};
use ib::source::umad::transport::{Transport, TransportConfig};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "benchmark: run by scripts/bench-pma.sh under LD_PRELOAD=libumad2sim.so"]
fn bench_pma_sweep() {
    let window = env_or("UMAD_BENCH_WINDOW", 128);
    let rounds = env_or("UMAD_BENCH_ROUNDS", 3);
    let lib = ffi::library().unwrap();
    let p = lib.resolve(None, None).unwrap();
    let cfg = TransportConfig {
        window,
        ..Default::default()
    };
    let mut t = Transport::open(&p.ca, p.port, cfg).unwrap();
    let t0 = Instant::now();
    let d = discover(&mut t, DiscoverOptions { lft: false });
    let disc = t0.elapsed();
    let smps = t.stats().sent;
    let targets: Vec<Target> = d
        .nodes
        .values()
        .map(|n| Target {
            node: n.info.node_guid,
            lid: n.lid(),
            ports: n
                .ports
                .values()
                .filter(|p| p.num != 0 && p.peer.is_some())
                .map(|p| p.num)
                .collect(),
        })
        .collect();
    let nports: usize = targets.iter().map(|t| t.ports.len()).sum();
    println!(
        "RESULT discovery nodes={} ports={} smps={} secs={:.3} failures={}",
        d.nodes.len(),
        nports,
        smps,
        disc.as_secs_f64(),
        d.failures
    );
    let mut caps = Default::default();
    // "full": PortCounters + PortCountersExtended of every port (what the source does);
    // "pc": PortCounters only, like for like with ibqueryerrors.
    for (mode, extended) in [("full", true), ("pc", false)] {
        let opts = PmaOptions {
            details: 0,
            extended,
            reset_threshold: None,
            ..PmaOptions::default()
        };
        for r in 0..rounds {
            let before = t.stats().sent;
            let t1 = Instant::now();
            let s = pma::sweep(&mut t, &targets, &mut caps, opts, pma::Schedule::default());
            let secs = t1.elapsed().as_secs_f64();
            let mads = t.stats().sent - before;
            println!(
                "RESULT pma mode={} round={} window={} ports={} mads={} secs={:.3} mads_per_sec={:.0} failures={} samples={}",
                mode, r, window, nports, mads, secs, mads as f64 / secs, s.failures(), s.samples.len()
            );
        }
    }
    println!("RESULT stats {:?}", t.stats());
}
