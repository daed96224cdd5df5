//! Helpers the crate's unit tests share.

use ib::source::sim::{SimConfig, SimSource};

/// The built-in simulated fabric under `name` (its own counters' source
/// name, so tests do not share state); `manual_clock`: time moves only
/// when the test says, so nothing depends on timing.
pub fn sim_source(name: &str, manual_clock: bool) -> SimSource {
    SimSource::default_fabric(SimConfig {
        source_name: name.into(),
        manual_clock,
        ..Default::default()
    })
    .unwrap()
}
