//! The TOML configuration file and its merge with the command line.
//!
//! Keys mirror snmpd.conf where snmpd has the concept (`agentaddress`,
//! `rocommunity`, `rwcommunity`, `syscontact`, `syslocation`, `sysname`,
//! `persistentdir`); ibsnmpd's own settings use snake_case names. Every
//! problem becomes a [`ConfigError`]: one line, naming file and line where
//! there is one. docs/config.md is the reference.

use std::fmt;

use crate::cli::RunArgs;

mod access;
pub mod engine_id;
mod file;
pub mod health;
pub mod keys;
mod merge;
pub mod monitor;
pub mod notify;
mod settings;
mod wording;

pub use settings::{agent_communities, Access, Community, NodeContexts, Settings};

use file::{read_file, FileConfig};
use merge::merge;

/// The port used when an address is given without one.
pub const DEFAULT_PORT: u16 = 1161;
/// Default GetBulk max-repetitions cap (keeps the agent from amplifying).
pub const DEFAULT_MAX_REPETITIONS: u32 = 100;
/// Default sweep interval.
pub const DEFAULT_SWEEP_SECS: f64 = 10.0;

/// A configuration or command-line problem: printed as one line, exit 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Reads and merges: defaults < config file < flags.
pub fn load(args: &RunArgs) -> Result<Settings, ConfigError> {
    let file = match &args.config {
        Some(path) => read_file(path)?,
        None => FileConfig::default(),
    };
    let origin = args
        .config
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let has_secrets = file.user.as_ref().is_some_and(|u| !u.is_empty());
    let mut settings = merge(file, &origin, args)?;
    if let (true, Some(path)) = (has_secrets, &args.config) {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path) {
            let mode = m.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                settings.warnings.push(format!(
                    "{}: holds SNMPv3 passwords but has mode {mode:04o}; make it 0600 (chmod 600)",
                    path.display()
                ));
            }
        }
    }
    Ok(settings)
}

impl From<crate::logging::LogError> for ConfigError {
    fn from(e: crate::logging::LogError) -> Self {
        ConfigError(e.0)
    }
}

#[cfg(test)]
mod tests;
