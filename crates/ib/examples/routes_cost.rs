//! Times the routes walk (`ib::model::routes::check`, credit loops
//! included) on a generated fat tree brought up by the sim, as
//! docs/routing.md "Cost" reports it:
//!
//!     cargo run --release -p ib --example routes_cost -- HOSTS RADIX LEVELS [RUNS]

use std::time::Instant;

use ib::model::routes::check;
use ib::source::sim::{SimConfig, SimSource};
use ib::source::Source;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let &[hosts, radix, levels, ..] = args.as_slice() else {
        return Err("usage: routes_cost HOSTS RADIX LEVELS [RUNS]".into());
    };
    let runs = args.get(3).copied().unwrap_or(3);
    let topo = ib::topology::fat_tree(hosts, u8::try_from(radix)?, u8::try_from(levels)?)?;
    let mut sim = SimSource::new(&topo, SimConfig::default())?;
    let s = sim.sweep()?;
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let c = check(&s, 0.5);
        let secs = t.elapsed().as_secs_f64();
        best = best.min(secs);
        println!(
            "{hosts} hosts: {} switches x {} end LIDs = {} routes, {} good, {} broken; walk {secs:.3} s",
            c.switches,
            c.destinations,
            c.routes,
            c.good,
            c.broken.len()
        );
    }
    println!("best of {runs}: {best:.3} s");
    Ok(())
}
