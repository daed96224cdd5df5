//! Logging to stderr with tracing-subscriber, filtered by --log-level.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::ConfigError;

/// `level` is a level (error..trace) or tracing directives
/// (`info,snmp=debug`).
pub fn init(level: &str) -> Result<(), ConfigError> {
    let filter = EnvFilter::try_new(level)
        .map_err(|e| ConfigError(format!("--log-level {level:?}: {e}")))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init()
        .map_err(|e| ConfigError(format!("cannot start logging: {e}")))
}
