//! The file as written: its tables and keys (serde, unknown keys refused)
//! and its reading, with the line of each key for errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::wording::{key_lines, line_of, misplaced_top_level_key, operator_words};
use super::{health_section, monitor, notify, ConfigError};

/// The file as written. Unknown keys are errors (a typo must not be ignored).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileConfig {
    /// The line each top-level key or table starts on (for errors).
    #[serde(skip)]
    pub(super) lines: BTreeMap<String, usize>,
    /// The line of each `[[monitor]]` header, in order (for errors).
    #[serde(skip)]
    pub(super) monitor_lines: Vec<usize>,
    pub(super) agentaddress: Option<StringOrList>,
    pub(super) rocommunity: Option<Vec<CommunityEntry>>,
    pub(super) rwcommunity: Option<Vec<CommunityEntry>>,
    pub(super) syscontact: Option<String>,
    pub(super) syslocation: Option<String>,
    pub(super) sysname: Option<String>,
    #[serde(alias = "state_dir")]
    pub(super) persistentdir: Option<PathBuf>,
    pub(super) source: Option<String>,
    pub(super) sweep_interval: Option<f64>,
    pub(super) local_node: Option<String>,
    pub(super) max_repetitions: Option<u32>,
    pub(super) log_level: Option<String>,
    pub(super) control_socket: Option<PathBuf>,
    pub(super) agentx: Option<String>,
    pub(super) agentx_if_mib: Option<bool>,
    pub(super) agentx_node_contexts: Option<bool>,
    pub(super) agentx_if_index_offset: Option<u32>,
    // Notifications (docs/notifications.md), read by [`notify::settings`].
    pub(super) trapsink: Option<Vec<notify::SinkEntry>>,
    pub(super) trap2sink: Option<Vec<notify::SinkEntry>>,
    pub(super) informsink: Option<Vec<notify::SinkEntry>>,
    pub(super) trapsess: Option<Vec<notify::TrapSessEntry>>,
    pub(super) trapcommunity: Option<String>,
    pub(super) authtrapenable: Option<u8>,
    pub(super) notification_rate_limit: Option<u32>,
    pub(super) notification_rate_interval: Option<f64>,
    pub(super) notification_queue: Option<usize>,
    pub(super) link_integrity_threshold: Option<u64>,
    pub(super) buffer_overrun_threshold: Option<u64>,
    pub(super) engine_id: Option<String>,
    pub(super) engine_id_type: Option<String>,
    pub(super) engine_id_nic: Option<String>,
    pub(super) engine_id_text: Option<String>,
    pub(super) max_getbulk_responses: Option<u32>,
    pub(super) view: Option<Vec<ViewEntry>>,
    pub(super) group: Option<Vec<GroupEntry>>,
    pub(super) access: Option<Vec<AccessConfigEntry>>,
    pub(super) user: Option<Vec<UserEntry>>,
    pub(super) rouser: Option<Vec<UserAccessEntry>>,
    pub(super) rwuser: Option<Vec<UserAccessEntry>>,
    pub(super) metrics_listen: Option<String>,
    pub(super) metrics_max_connections: Option<u32>,
    pub(super) metrics_max_connections_per_client: Option<u32>,
    pub(super) metrics_max_renders: Option<u32>,
    pub(super) metrics_render_queue: Option<u32>,
    pub(super) metrics_stall_timeout: Option<f64>,
    pub(super) metrics_families: Option<Vec<String>>,
    pub(super) node_name_map: Option<PathBuf>,
    pub(super) umad: Option<crate::config::umad_section::UmadSection>,
    pub(super) health: Option<health_section::HealthSection>,
    pub(super) topology: Option<TopologySection>,
    pub(super) routes: Option<RoutesSection>,
    pub(super) monitor: Option<Vec<monitor::MonitorEntry>>,
    pub(super) secrets: Option<bool>,
    pub(super) sim_partitions: Option<PathBuf>,
    pub(super) sim_services: Option<PathBuf>,
    pub(super) opensm_conf: Option<PathBuf>,
    pub(super) opensm: Option<OpenSmSection>,
    pub(super) port_writes: Option<bool>,
    pub(super) node_contexts: Option<String>,
    pub(super) fabric_link_traps: Option<bool>,
    pub(super) admin_writable_below_authpriv: Option<bool>,
    pub(super) request_session_timeout: Option<f64>,
    pub(super) request_sessions_max: Option<u32>,
    pub(super) request_result_rows_max: Option<u32>,
}

/// `[topology]`: the cabling plan the fabric is held against.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TopologySection {
    pub(super) expected: Option<PathBuf>,
}

/// `[routes]`: the running agent's check of the forwarding tables.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RoutesSection {
    pub(super) max_spread: Option<f64>,
}

impl RoutesSection {
    /// `max_spread`: a ratio of 0 or more (default 0.5, as `routes check`).
    pub(super) fn max_spread(section: Option<&RoutesSection>) -> Result<f64, String> {
        match section.and_then(|s| s.max_spread) {
            None => Ok(DEFAULT_ROUTES_MAX_SPREAD),
            Some(r) if r.is_finite() && r >= 0.0 => Ok(r),
            Some(r) => Err(format!("max_spread = {r}: expected a ratio of 0 or more")),
        }
    }
}

/// `[routes] max_spread` when unset: `routes check --max-spread`'s default.
const DEFAULT_ROUTES_MAX_SPREAD: f64 = 0.5;

/// `[[view]]`: snmpd's `view NAME included|excluded OID [MASK]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ViewEntry {
    pub(super) name: String,
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) oid: String,
    pub(super) mask: Option<String>,
}

/// `[[group]]`: snmpd's `group NAME MODEL SECNAME`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GroupEntry {
    pub(super) name: String,
    pub(super) model: String,
    pub(super) security_name: String,
}

/// `[[access]]`: snmpd's `access GROUP "" MODEL LEVEL exact READ WRITE none`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AccessConfigEntry {
    pub(super) group: String,
    pub(super) model: Option<String>,
    pub(super) level: Option<String>,
    pub(super) read: Option<String>,
    pub(super) write: Option<String>,
}

/// `[[user]]`: snmpd's `createUser NAME AUTH AUTHPASS PRIV PRIVPASS`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UserEntry {
    pub(super) name: String,
    pub(super) auth: Option<String>,
    pub(super) auth_pass: Option<String>,
    #[serde(rename = "priv")]
    pub(super) privacy: Option<String>,
    pub(super) priv_pass: Option<String>,
}

/// `[[rouser]]` / `[[rwuser]]`: snmpd's `rouser USER LEVEL [OID]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UserAccessEntry {
    pub(super) user: String,
    pub(super) level: Option<String>,
    pub(super) oid: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum StringOrList {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CommunityEntry {
    pub(super) community: String,
    /// CIDR, a bare address, or "default" (any source).
    pub(super) source: Option<String>,
}

/// `[opensm]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OpenSmSection {
    pub(super) conf: Option<PathBuf>,
    pub(super) partitions: Option<PathBuf>,
    pub(super) console: Option<String>,
    pub(super) restart: Option<String>,
    pub(super) pid_file: Option<PathBuf>,
    pub(super) start: Option<String>,
    pub(super) stop: Option<String>,
}

impl OpenSmSection {
    pub(super) fn settings(self) -> Result<crate::models::opensm::OpenSmSettings, String> {
        let conf = self
            .conf
            .ok_or("conf (the opensm.conf the agent edits) is required")?;
        let console = match self.console {
            None => None,
            Some(c) => Some(
                std::net::ToSocketAddrs::to_socket_addrs(c.as_str())
                    .ok()
                    .and_then(|mut a| a.next())
                    .ok_or_else(|| format!("console {c:?}: expected HOST:PORT"))?,
            ),
        };
        Ok(crate::models::opensm::OpenSmSettings {
            conf,
            partitions: self.partitions,
            console,
            restart: self.restart,
            pid_file: self.pid_file,
            start: self.start,
            stop: self.stop,
        })
    }
}

pub(super) fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let p = path.display();
        let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
            // The packaged unit's dynamic user reads it through its group.
            format!(
                " (the packaged unit runs as a user in group {g}: chgrp {g} {p}; chmod 0640 {p})",
                g = super::SERVICE_GROUP
            )
        } else {
            String::new()
        };
        ConfigError(format!("{p}: cannot read config file: {e}{hint}"))
    })?;
    parse_file(&text, &path.display().to_string())
}

pub(super) fn parse_file(text: &str, origin: &str) -> Result<FileConfig, ConfigError> {
    let mut file = toml::from_str::<FileConfig>(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| line_of(text, s.start))
            .map(|l| format!(":{l}"))
            .unwrap_or_default();
        // The key the error is about: the one its line sets, with its
        // table (`[opensm] conf`).
        let before = e.span().and_then(|s| text.get(..s.start.min(text.len())));
        let table = before
            .and_then(|b| b.lines().rev().find(|l| l.trim_start().starts_with('[')))
            .map(|l| l.trim().to_string());
        let key = before
            .and_then(|b| b.lines().last())
            .and_then(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
            .filter(|k| !k.is_empty() && !k.starts_with('['))
            .map(|k| match &table {
                Some(t) => format!("{t} {k}"),
                None => k,
            });
        let msg = misplaced_top_level_key(e.message(), table.as_deref())
            .unwrap_or_else(|| operator_words(e.message(), key.as_deref()));
        ConfigError(format!("{origin}{line}: {msg}"))
    })?;
    file.lines = key_lines(text);
    file.monitor_lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "[[monitor]]")
        .map(|(i, _)| i + 1)
        .collect();
    Ok(file)
}
