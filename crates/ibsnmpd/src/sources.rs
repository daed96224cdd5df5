//! Turning a source spec (`--source`, or `source` in the configuration
//! file) into a running source.

use ib::source::{Source, SourceOptions, SourceSpec};

use crate::config::{ConfigError, Settings};

/// Parses and opens the configured source. A malformed spec, or one naming
/// something that cannot be opened (a missing or bad topology file, no such
/// CA), is a configuration error (exit 2).
pub fn open(settings: &Settings) -> Result<Box<dyn Source>, ConfigError> {
    open_with(
        &settings.source,
        &settings.source_origin,
        &settings.local_node_origin,
        SourceOptions {
            local_node: settings.local_node.clone(),
            sim_partitions: settings.sim_partitions.clone(),
            sim_services: settings.sim_services.clone(),
            umad: settings.umad.clone(),
            ..SourceOptions::default()
        },
    )
}

/// A source for one-shot commands (`dump`, `health`): their one sweep reads
/// everything the agent serves at its defaults, not a quick start, and no
/// more: other nodes' detail attributes only feed /metrics families that are
/// off by default, so they are read only when `remote_details` asks for them
/// (`dump --remote-details`; docs/umad.md "Which ports").
pub fn open_spec(
    spec: &str,
    local_node: Option<String>,
    remote_details: bool,
) -> Result<Box<dyn Source>, ConfigError> {
    let mut umad = ib::source::umad::UmadOptions {
        quick_start: false,
        ..Default::default()
    };
    if remote_details {
        umad.pma.remote_details = ib::source::umad::pma::detail::ALL;
    }
    open_with(
        spec,
        "--source",
        "--local-node",
        SourceOptions {
            local_node,
            umad,
            ..SourceOptions::default()
        },
    )
}

/// `origin` says where the spec was given (`--source`, or the
/// configuration file's line: `FILE:LINE: source`), `local_node_origin`
/// where the local node was named, for their errors.
fn open_with(
    spec: &str,
    origin: &str,
    local_node_origin: &str,
    opts: SourceOptions,
) -> Result<Box<dyn Source>, ConfigError> {
    let parsed: SourceSpec = spec
        .trim()
        .parse()
        .map_err(|e| ConfigError(format!("{origin}: {e}")))?;
    ib::source::open(&parsed, &opts).map_err(|e| match e {
        ib::source::SourceError::NoSuchLocalNode { wanted, have } => ConfigError(format!(
            "{local_node_origin} {wanted:?}: no such node (by name, node description or GUID) in {have}"
        )),
        e => ConfigError(format!("{origin} {spec}: {e}").replace('\n', " ")),
    })
}
