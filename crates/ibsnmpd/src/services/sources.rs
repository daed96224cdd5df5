//! Turning a source spec (`--source`, or `source` in the configuration
//! file) into a running source.

use ib::source::{Source, SourceOptions, SourceSpec};

use crate::config::{ConfigError, Settings};

/// What a source can do besides sweeping, asked of its parsed spec (not
/// of the spec's text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// It answers SA queries (PathRecords) on the source thread: the umad
    /// source, which talks MADs; the others compute paths from the snapshot.
    pub subnet_administrator: bool,
}

impl Capabilities {
    pub fn of(spec: &SourceSpec) -> Self {
        Capabilities {
            subnet_administrator: matches!(spec, SourceSpec::Umad { .. }),
        }
    }
}

/// The configured source, opened, with what it can do.
pub struct Opened {
    pub source: Box<dyn Source>,
    pub can: Capabilities,
}

/// Parses and opens the configured source. A malformed spec, or one naming
/// something that cannot be opened (a missing or bad topology file, no such
/// CA), is a configuration error (exit 2).
pub fn open(settings: &Settings) -> Result<Opened, ConfigError> {
    let spec = parse(&settings.source.spec, &settings.source.origin)?;
    let source = open_parsed(
        &spec,
        &settings.source.spec,
        &settings.source.origin,
        &settings.source.local_node_origin,
        SourceOptions {
            local_node: settings.source.local_node.clone(),
            sim_partitions: settings.source.sim_partitions.clone(),
            sim_services: settings.source.sim_services.clone(),
            umad: settings.source.umad.clone(),
            ..SourceOptions::default()
        },
    )?;
    Ok(Opened {
        source,
        can: Capabilities::of(&spec),
    })
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
    open_parsed(
        &parse(spec, "--source")?,
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

/// The spec as given at `origin`, parsed.
fn parse(spec: &str, origin: &str) -> Result<SourceSpec, ConfigError> {
    spec.trim()
        .parse()
        .map_err(|e| ConfigError(format!("{origin}: {e}")))
}

/// `origin` says where the spec was given (`--source`, or the
/// configuration file's line: `FILE:LINE: source`), `local_node_origin`
/// where the local node was named, for their errors.
fn open_parsed(
    parsed: &SourceSpec,
    spec: &str,
    origin: &str,
    local_node_origin: &str,
    opts: SourceOptions,
) -> Result<Box<dyn Source>, ConfigError> {
    ib::source::open(parsed, &opts).map_err(|e| match e {
        ib::source::SourceError::NoSuchLocalNode { wanted, have } => ConfigError(format!(
            "{local_node_origin} {wanted:?}: no such node (by name, node description or GUID) in {have}"
        )),
        e => ConfigError(format!("{origin} {spec}: {e}").replace('\n', " ")),
    })
}
