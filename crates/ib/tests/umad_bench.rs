//! PMA sweep benchmark body, run by scripts/bench-pma.sh under the umad2sim preload
//! against a large ibsim fabric (ignored in normal test runs).
use std::time::Instant;

use ib::source::umad::discover::{self, discover, DiscoverOptions};
use ib::source::umad::ffi;
use ib::source::umad::pma::{self, PmaOptions, Target};
use ib::source::umad::transport::{Transport, TransportConfig};
use ib::source::umad::{UmadOptions, UmadSource};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `UMAD_BENCH_WINDOW` (else `window`) and `UMAD_BENCH_ROUNDS` (else 3).
fn window_and_rounds(window: usize) -> (usize, usize) {
    (
        env_or("UMAD_BENCH_WINDOW", window),
        env_or("UMAD_BENCH_ROUNDS", 3),
    )
}

/// A transport on the default CA and port with `window` MADs outstanding.
fn open_transport(window: usize) -> Transport {
    let lib = ffi::library().unwrap();
    let p = lib.resolve(None, None).unwrap();
    let cfg = TransportConfig {
        window,
        ..Default::default()
    };
    Transport::open(&p.ca, p.port, cfg).unwrap()
}

#[test]
#[ignore = "benchmark: run by scripts/bench-pma.sh under LD_PRELOAD=libumad2sim.so"]
fn bench_pma_sweep() {
    let (window, rounds) = window_and_rounds(128);
    let mut t = open_transport(window);
    let t0 = Instant::now();
    let d = discover(&mut t, DiscoverOptions { lft: false });
    let disc = t0.elapsed();
    let smps = t.stats().sent;
    let targets: Vec<Target> = ib::source::umad::assemble::pma_targets(&d);
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

/// Whole sweeps of the source: the first sweep (quick start: topology and
/// PortCounters(Extended) only; and without quick start, everything), the
/// second (details, forwarding and P_Key tables), then steady sweeps with the
/// default policy (discovery only on a sign of change or every
/// `topology_every` sweeps) and with a discovery every sweep.
#[test]
#[ignore = "benchmark: run by scripts/bench-pma.sh under LD_PRELOAD=libumad2sim.so"]
fn bench_source_sweeps() {
    let (window, rounds) = window_and_rounds(256);
    for (mode, topology_every, quick_start) in [
        ("default", 30u32, true),
        ("no_quick_start", 30, false),
        ("topology_every=1", 1, true),
    ] {
        let mut opts = UmadOptions {
            topology_every,
            quick_start,
            ..UmadOptions::default()
        };
        opts.transport.window = window;
        let mut s = UmadSource::open(None, None, opts).unwrap();
        for r in 0..=rounds + 1 {
            let t = Instant::now();
            let snap = s.sweep().unwrap();
            let secs = t.elapsed().as_secs_f64();
            let c = snap.sweep.cost;
            let mads = c.discovery.sent + c.sa.sent + c.pma.sent;
            let kind = match r {
                0 => "cold",
                1 => "second",
                _ => "steady",
            };
            println!(
                "RESULT sweep window={window} mode={mode} kind={kind} round={r} secs={secs:.3} mads={mads} smp={} sa={} pma={} pma_secs={:.3} mads_per_sec={:.0} discoveries={} smp_secs={:.3} sa_secs={:.3}",
                c.discovery.sent,
                c.sa.sent,
                c.pma.sent,
                c.pma.duration.as_secs_f64(),
                mads as f64 / secs,
                s.stats().discoveries,
                c.discovery.duration.as_secs_f64(),
                c.sa.duration.as_secs_f64()
            );
        }
        if mode == "default" {
            cycle(&mut s, window, env_or("UMAD_BENCH_CYCLE", 30));
        }
    }
}

/// `n` consecutive steady sweeps of the default policy (one refresh period
/// at the default `topology_every`: every periodic read falls in it as
/// often as it does in the long run), each reported, then their average.
fn cycle(s: &mut UmadSource, window: usize, n: usize) {
    let (mut secs, mut mads) = (0.0, 0u64);
    for r in 0..n {
        let t = Instant::now();
        let snap = s.sweep().unwrap();
        let took = t.elapsed().as_secs_f64();
        let c = snap.sweep.cost;
        let m = c.discovery.sent + c.sa.sent + c.pma.sent;
        println!(
            "RESULT cycle window={window} round={r} secs={took:.3} mads={m} smp={} sa={} pma={}",
            c.discovery.sent, c.sa.sent, c.pma.sent
        );
        secs += took;
        mads += m;
    }
    let n = n.max(1) as f64;
    println!(
        "RESULT average window={window} sweeps={n} secs={:.3} mads={:.0}",
        secs / n,
        mads as f64 / n
    );
}

/// What reading every switch's LinearForwardingTable costs (docs/umad.md):
/// a discovery without tables, then the first full read of the tables
/// (SubnGet, 64 LIDs a block, up to each switch's LinearFDBTop), MADs and
/// seconds, `UMAD_BENCH_ROUNDS` times.
#[test]
#[ignore = "benchmark: run under LD_PRELOAD=libumad2sim.so against a large ibsim fabric"]
fn bench_lft_read() {
    let (window, rounds) = window_and_rounds(256);
    let mut t = open_transport(window);
    let mut d = discover(&mut t, DiscoverOptions { lft: false });
    let switches = d.nodes.values().filter(|n| n.switch_info.is_some()).count();
    let top = d
        .nodes
        .values()
        .filter_map(|n| n.switch_info.as_ref())
        .map(|si| si.linear_fdb_top)
        .max()
        .unwrap_or(0);
    for r in 0..rounds {
        let before = t.stats().sent;
        let t0 = Instant::now();
        discover::fetch_lfts(&mut t, &mut d, |_| true);
        let secs = t0.elapsed().as_secs_f64();
        let mads = t.stats().sent - before;
        let entries: usize = d.nodes.values().map(|n| n.lft.len()).sum();
        println!(
            "RESULT lft round={r} window={window} switches={switches} top={top} mads={mads} secs={secs:.3} mads_per_sec={:.0} entries={entries} failures={}",
            mads as f64 / secs,
            d.failures
        );
    }
}
