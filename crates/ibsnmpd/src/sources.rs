//! Turning a `--source` spec into a running source.

use ib::source::{Source, SourceOptions, SourceSpec};

use crate::config::{ConfigError, Settings};

/// Parses and opens the configured source. A malformed spec, or one naming
/// something that cannot be opened (a missing or bad topology file, no such
/// CA), is a configuration error (exit 2).
pub fn open(settings: &Settings) -> Result<Box<dyn Source>, ConfigError> {
    open_with(
        &settings.source,
        SourceOptions {
            local_node: settings.local_node.clone(),
            sim_partitions: settings.sim_partitions.clone(),
            sim_services: settings.sim_services.clone(),
            umad: settings.umad.clone(),
            ..SourceOptions::default()
        },
    )
}

pub fn open_spec(spec: &str, local_node: Option<String>) -> Result<Box<dyn Source>, ConfigError> {
    open_with(
        spec,
        SourceOptions {
            local_node,
            ..SourceOptions::default()
        },
    )
}

fn open_with(spec: &str, opts: SourceOptions) -> Result<Box<dyn Source>, ConfigError> {
    let parsed: SourceSpec = spec
        .trim()
        .parse()
        .map_err(|e| ConfigError(format!("--source: {e}")))?;
    ib::source::open(&parsed, &opts)
        .map_err(|e| ConfigError(format!("--source {spec}: {e}").replace('\n', " ")))
}
