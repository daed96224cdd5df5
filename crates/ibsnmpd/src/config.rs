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
pub mod health_section;
pub mod keys;
mod merge;
pub mod monitor;
pub mod notify;
mod restart;
mod settings;
pub mod umad_section;
mod wording;

pub use settings::{
    agent_communities, Access, AgentSettings, AgentxSettings, CheckSettings, Community,
    DaemonSettings, MetricsSettings, NodeContexts, RequestSettings, Settings, SmSettings,
    SourceSettings, SystemGroup,
};

use file::{read_file, FileConfig};
use merge::merge;

/// The port used when an address is given without one.
pub const DEFAULT_PORT: u16 = 1161;
/// Default GetBulk max-repetitions cap (keeps the agent from amplifying).
pub const DEFAULT_MAX_REPETITIONS: u32 = 100;
/// ifIndex offset in AgentX mode with `agentx_if_mib`, unless configured
/// (the settings name their defaults: the settings layer uses no service).
pub const DEFAULT_IF_INDEX_OFFSET: u32 = 1_000_000;
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
            if let Some(w) = secrets_mode_warning(path, m.permissions().mode()) {
                settings.warnings.push(w);
            }
        }
    }
    Ok(settings)
}

/// The group the package creates and runs the unit's (dynamic) user in.
pub const SERVICE_GROUP: &str = "ibsnmpd";

/// The warning for a configuration file holding SNMPv3 passwords with
/// `mode`: only when other users may access it. The group may read it:
/// the packaged unit runs as a dynamic user whose only way to read a
/// root-owned file is group `ibsnmpd` (0640 root:ibsnmpd, what the package
/// installs); 0600 root-owned would lock the agent out of its own file at
/// the next start or reload.
pub fn secrets_mode_warning(path: &std::path::Path, mode: u32) -> Option<String> {
    let mode = mode & 0o777;
    (mode & 0o007 != 0).then(|| {
        let p = path.display();
        format!(
            "{p}: holds SNMPv3 passwords but every user may read it (mode {mode:04o}); \
             make it readable by root and the service's group only: \
             chmod 0640 {p}; chgrp {SERVICE_GROUP} {p}"
        )
    })
}

impl From<crate::models::logging::LogError> for ConfigError {
    fn from(e: crate::models::logging::LogError) -> Self {
        ConfigError(e.0)
    }
}

/// A section of the config file read from `text` and checked by `check`
/// (the sections' unit tests parse this way).
#[cfg(test)]
fn parse_section<S: serde::de::DeserializeOwned, T>(
    text: &str,
    check: impl FnOnce(S) -> Result<T, String>,
) -> Result<T, String> {
    check(toml::from_str::<S>(text).map_err(|e| e.to_string())?)
}

#[cfg(test)]
mod tests;
