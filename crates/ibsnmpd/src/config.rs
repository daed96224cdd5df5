//! The TOML configuration file and its merge with the command line.
//!
//! Keys mirror snmpd.conf where snmpd has the concept (`agentaddress`,
//! `rocommunity`, `rwcommunity`, `syscontact`, `syslocation`, `sysname`,
//! `persistentdir`); ibsnmpd's own settings use snake_case names. Every
//! problem becomes a [`ConfigError`]: one line, naming file and line where
//! there is one. docs/config.md is the reference.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;
use serde::Deserialize;

use crate::cli::RunArgs;

pub mod engine_id;
pub mod health;
pub mod keys;
pub mod monitor;
pub mod notify;

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

/// What a community may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

/// One community, the source addresses it is accepted from, and its access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Community {
    pub name: String,
    /// `None`: any source (snmpd.conf's `default`).
    pub source: Option<IpNet>,
    pub access: Access,
}

/// The effective settings after file and flags are merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub listen: Vec<SocketAddr>,
    pub source: String,
    pub communities: Vec<Community>,
    pub state_dir: PathBuf,
    pub log_level: String,
    pub sweep_interval: Duration,
    pub local_node: Option<String>,
    /// Where `local_node` was given, for errors (`--local-node` or
    /// `FILE:LINE: local_node`).
    pub local_node_origin: String,
    pub max_repetitions: u32,
    pub sys_contact: String,
    pub sys_name: String,
    pub sys_location: String,
    /// Operator control socket (`--control-socket`), none by default.
    pub control_socket: Option<PathBuf>,
    /// AgentX subagent mode (`--agentx`, `agentx`): the master's address.
    pub agentx: Option<snmp::agentx::MasterAddress>,
    /// In AgentX mode, also serve IF-MIB rows for the IB ports (`agentx_if_mib`).
    pub agentx_if_mib: bool,
    /// Added to every ifIndex (`agentx_if_index_offset`; 1,000,000 by default
    /// with `agentx_if_mib`, else 0).
    pub agentx_if_index_offset: u32,
    /// Notification sinks, storm control and thresholds (docs/notifications.md).
    pub notify: notify::NotifySettings,
    /// snmpEngineID from the file (`engine_id`, hex); None: generated once
    /// and kept in the state directory.
    pub engine_id: Option<Vec<u8>>,
    /// SNMPv3 USM users with their access (`[[user]]`, `[[rouser]]`,
    /// `[[rwuser]]`); passwords are localized when the agent starts.
    pub users: Vec<snmp::usm::UserConfig>,
    /// VACM tables from `[[view]]`, `[[group]]`, `[[access]]`.
    pub vacm: snmp::vacm::Vacm,
    /// Cap on the varbinds of one GetBulk response (`max_getbulk_responses`,
    /// net-snmp's maxGetbulkResponses; default 100).
    pub max_getbulk_responses: usize,
    /// Problems worth a warning once logging is up (e.g. file mode).
    pub warnings: Vec<String>,
    /// Prometheus endpoint (`--metrics`), off by default.
    pub metrics_listen: Option<SocketAddr>,
    /// What the metrics endpoint lets clients hold (`metrics_max_connections`,
    /// `metrics_max_connections_per_client`, `metrics_max_renders`,
    /// `metrics_render_queue`, `metrics_stall_timeout`).
    pub metrics_limits: crate::metrics::Limits,
    /// The per-port families a scrape carries (`metrics_families`).
    pub metrics_families: crate::metrics::Families,
    /// infiniband-diags node-name-map (`--node-name-map`).
    pub node_name_map: Option<PathBuf>,
    /// The umad source's options (`[umad]`).
    pub umad: ib::source::umad::UmadOptions,
    /// The fabric health checks' thresholds (`[health]`, docs/health.md).
    pub health: ib::model::health::HealthConfig,
    /// DISMAN-EVENT-MIB triggers (`[[monitor]]`, docs/health.md).
    pub monitors: Vec<mibs::disman_event::Trigger>,
    /// The cabling plan (`[topology] expected`, docs/topology.md).
    pub topology_expected: Option<PathBuf>,
    /// `secrets = true`: IB-SM-MIB's SM_Key and M_Key columns read their
    /// values; off (default) they read as zeros. The SNMPv3 view of a request
    /// narrows this further (mibs::View::secrets).
    pub secrets: bool,
    /// `sim_partitions`: the simulator's partitions, an OpenSM
    /// partitions.conf-style file (docs/ib-sm.md).
    pub sim_partitions: Option<PathBuf>,
    /// `sim_services`: the services the simulator's SA holds, one per line
    /// (docs/ib-sm.md).
    pub sim_services: Option<PathBuf>,
    /// `opensm_conf`: OpenSM's configuration file, read at each publish for
    /// ibSmConfigTable's sweep interval, timeouts, LMC, M_Key lease period
    /// (`[opensm] conf` when that section is there).
    pub opensm_conf: Option<PathBuf>,
    /// `[opensm]`: the OpenSM the agent steers (ibSmConfigTable Sets);
    /// None: the SM columns are read-only.
    pub opensm: Option<crate::opensm::OpenSmSettings>,
    /// `port_writes`: ibSmPortInfoTable's safe columns may be set
    /// (Set(PortInfo) SMPs); default false (notWritable).
    pub port_writes: bool,
    /// `admin_writable_below_authpriv`: the administrative MIBs (USM, VACM,
    /// SNMP-TARGET-MIB, SNMP-NOTIFICATION-MIB) writable by any writer the
    /// views allow, not only at authPriv. Default false: whoever writes the
    /// tables that grant access can grant themselves the secrets.
    pub admin_writable_below_authpriv: bool,
    /// `request_session_timeout`: IB-SM-MIB request sessions no Set touched
    /// for this long are aged out (default 300 s).
    pub request_session_timeout: Duration,
    /// `request_sessions_max`: most live sessions per request table
    /// (default 256); a create past it is resourceUnavailable.
    pub request_sessions_max: usize,
    /// `request_result_rows_max`: result rows all request sessions hold
    /// together (default 32,768); an answer past it fails.
    pub request_result_rows_max: usize,
}

/// The file as written. Unknown keys are errors (a typo must not be ignored).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    /// The line each top-level key or table starts on (for errors).
    #[serde(skip)]
    lines: BTreeMap<String, usize>,
    /// The line of each `[[monitor]]` header, in order (for errors).
    #[serde(skip)]
    monitor_lines: Vec<usize>,
    agentaddress: Option<StringOrList>,
    rocommunity: Option<Vec<CommunityEntry>>,
    rwcommunity: Option<Vec<CommunityEntry>>,
    syscontact: Option<String>,
    syslocation: Option<String>,
    sysname: Option<String>,
    #[serde(alias = "state_dir")]
    persistentdir: Option<PathBuf>,
    source: Option<String>,
    sweep_interval: Option<f64>,
    local_node: Option<String>,
    max_repetitions: Option<u32>,
    log_level: Option<String>,
    control_socket: Option<PathBuf>,
    agentx: Option<String>,
    agentx_if_mib: Option<bool>,
    agentx_if_index_offset: Option<u32>,
    // Notifications (docs/notifications.md), read by [`notify::settings`].
    trapsink: Option<Vec<notify::SinkEntry>>,
    trap2sink: Option<Vec<notify::SinkEntry>>,
    informsink: Option<Vec<notify::SinkEntry>>,
    trapsess: Option<Vec<notify::TrapSessEntry>>,
    trapcommunity: Option<String>,
    authtrapenable: Option<u8>,
    notification_rate_limit: Option<u32>,
    notification_rate_interval: Option<f64>,
    notification_queue: Option<usize>,
    link_integrity_threshold: Option<u64>,
    buffer_overrun_threshold: Option<u64>,
    engine_id: Option<String>,
    engine_id_type: Option<String>,
    engine_id_nic: Option<String>,
    engine_id_text: Option<String>,
    max_getbulk_responses: Option<u32>,
    view: Option<Vec<ViewEntry>>,
    group: Option<Vec<GroupEntry>>,
    access: Option<Vec<AccessConfigEntry>>,
    user: Option<Vec<UserEntry>>,
    rouser: Option<Vec<UserAccessEntry>>,
    rwuser: Option<Vec<UserAccessEntry>>,
    metrics_listen: Option<String>,
    metrics_max_connections: Option<u32>,
    metrics_max_connections_per_client: Option<u32>,
    metrics_max_renders: Option<u32>,
    metrics_render_queue: Option<u32>,
    metrics_stall_timeout: Option<f64>,
    metrics_families: Option<Vec<String>>,
    node_name_map: Option<PathBuf>,
    umad: Option<crate::umad_config::UmadSection>,
    health: Option<health::HealthSection>,
    topology: Option<TopologySection>,
    monitor: Option<Vec<monitor::MonitorEntry>>,
    secrets: Option<bool>,
    sim_partitions: Option<PathBuf>,
    sim_services: Option<PathBuf>,
    opensm_conf: Option<PathBuf>,
    opensm: Option<OpenSmSection>,
    port_writes: Option<bool>,
    admin_writable_below_authpriv: Option<bool>,
    request_session_timeout: Option<f64>,
    request_sessions_max: Option<u32>,
    request_result_rows_max: Option<u32>,
}

/// `[topology]`: the cabling plan the fabric is held against.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologySection {
    expected: Option<PathBuf>,
}

/// `[[view]]`: snmpd's `view NAME included|excluded OID [MASK]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ViewEntry {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    oid: String,
    mask: Option<String>,
}

/// `[[group]]`: snmpd's `group NAME MODEL SECNAME`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupEntry {
    name: String,
    model: String,
    security_name: String,
}

/// `[[access]]`: snmpd's `access GROUP "" MODEL LEVEL exact READ WRITE none`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AccessConfigEntry {
    group: String,
    model: Option<String>,
    level: Option<String>,
    read: Option<String>,
    write: Option<String>,
}

fn parse_oid(o: &str) -> Option<snmp::oid::Oid> {
    o.trim_start_matches('.')
        .split('.')
        .map(|x| x.parse::<u32>())
        .collect::<Result<Vec<u32>, _>>()
        .ok()
        .filter(|v| !v.is_empty())
        .map(snmp::oid::Oid::new)
}

fn vacm(
    views: Vec<ViewEntry>,
    groups: Vec<GroupEntry>,
    access: Vec<AccessConfigEntry>,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<snmp::vacm::Vacm, ConfigError> {
    use snmp::usm::SecurityLevel;
    use snmp::vacm::{AccessEntry, SecurityModel, Vacm, ViewFamily};
    let mut v = Vacm::default();
    for e in views {
        let included = match e.kind.as_str() {
            "included" => true,
            "excluded" => false,
            k => {
                return Err(in_file(
                    "view",
                    format!("type {k:?}: expected included or excluded"),
                ))
            }
        };
        let subtree = parse_oid(&e.oid)
            .ok_or_else(|| in_file("view", format!("oid {:?}: expected dotted numbers", e.oid)))?;
        let mask = match e.mask.as_deref() {
            None | Some("") => Vec::new(),
            Some(m) => {
                let h: String = m
                    .trim_start_matches("0x")
                    .chars()
                    .filter(|c| *c != ':' && *c != '.')
                    .collect();
                (0..h.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(h.get(i..i + 2).unwrap_or("zz"), 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|_| in_file("view", format!("mask {m:?}: expected hex octets")))?
            }
        };
        v.views
            .entry(e.name)
            .or_default()
            .families
            .push(ViewFamily {
                subtree,
                mask,
                included,
            });
    }
    for g in groups {
        let model = SecurityModel::parse(&g.model).ok_or_else(|| {
            in_file(
                "group",
                format!("model {:?}: expected v1, v2c or usm", g.model),
            )
        })?;
        v.groups
            .insert((model, g.security_name.into_bytes()), g.name);
    }
    for a in access {
        let model = match a.model.as_deref() {
            None | Some("any") => None,
            Some(m) => Some(SecurityModel::parse(m).ok_or_else(|| {
                in_file(
                    "access",
                    format!("model {m:?}: expected any, v1, v2c or usm"),
                )
            })?),
        };
        let level = match a.level.as_deref() {
            None => SecurityLevel::NoAuthNoPriv,
            Some(l) => SecurityLevel::parse(l).ok_or_else(|| {
                in_file(
                    "access",
                    format!("level {l:?}: expected noauth, auth or priv"),
                )
            })?,
        };
        let name = |n: Option<String>| n.filter(|x| x != "none" && !x.is_empty());
        for n in [&a.read, &a.write].into_iter().flatten() {
            if n != "none" && !v.views.contains_key(n) {
                return Err(in_file("access", format!("view {n:?} is not a [[view]]")));
            }
        }
        v.access.push(AccessEntry {
            group: a.group,
            context: Default::default(),
            model,
            level,
            read: name(a.read),
            write: name(a.write),
        });
    }
    Ok(v)
}

/// `[[user]]`: snmpd's `createUser NAME AUTH AUTHPASS PRIV PRIVPASS`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserEntry {
    name: String,
    auth: Option<String>,
    auth_pass: Option<String>,
    #[serde(rename = "priv")]
    privacy: Option<String>,
    priv_pass: Option<String>,
}

/// `[[rouser]]` / `[[rwuser]]`: snmpd's `rouser USER LEVEL [OID]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserAccessEntry {
    user: String,
    level: Option<String>,
    oid: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum StringOrList {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommunityEntry {
    community: String,
    /// CIDR, a bare address, or "default" (any source).
    source: Option<String>,
}

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

/// `[opensm]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenSmSection {
    conf: Option<PathBuf>,
    partitions: Option<PathBuf>,
    console: Option<String>,
    restart: Option<String>,
    pid_file: Option<PathBuf>,
    start: Option<String>,
    stop: Option<String>,
}

impl OpenSmSection {
    fn settings(self) -> Result<crate::opensm::OpenSmSettings, String> {
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
        Ok(crate::opensm::OpenSmSettings {
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

/// `[[user]]`, `[[rouser]]`, `[[rwuser]]` into USM users with access.
fn usm_users(
    users: Vec<UserEntry>,
    ro: Vec<UserAccessEntry>,
    rw: Vec<UserAccessEntry>,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<Vec<snmp::usm::UserConfig>, ConfigError> {
    use snmp::usm::{AuthProtocol, PrivProtocol, SecurityLevel, UserAccess, UserConfig};
    let mut out: Vec<UserConfig> = Vec::new();
    for u in users {
        if u.name.is_empty() || u.name.len() > 32 {
            return Err(in_file(
                "user",
                format!("name {:?}: 1 to 32 octets", u.name),
            ));
        }
        if out.iter().any(|x| x.name == u.name) {
            return Err(in_file("user", format!("{:?} defined twice", u.name)));
        }
        let who = |m: &str| in_file("user", format!("{:?}: {m}", u.name));
        let auth = match (u.auth, u.auth_pass) {
            (Some(a), Some(p)) => {
                let proto = AuthProtocol::parse(&a).ok_or_else(|| {
                    who(&format!(
                        "auth {a:?}: expected MD5, SHA, SHA-224, SHA-256, SHA-384 or SHA-512"
                    ))
                })?;
                if p.len() < 8 {
                    return Err(who(
                        "auth_pass: at least 8 characters (as net-snmp requires)",
                    ));
                }
                Some((proto, p))
            }
            (None, None) => None,
            _ => return Err(who("auth and auth_pass go together")),
        };
        let privacy = match (u.privacy, u.priv_pass) {
            (Some(x), Some(p)) => {
                let proto = PrivProtocol::parse(&x).ok_or_else(|| {
                    who(&format!("priv {x:?}: expected DES, AES, AES192 or AES256"))
                })?;
                if auth.is_none() {
                    return Err(who("priv needs auth"));
                }
                if p.len() < 8 {
                    return Err(who(
                        "priv_pass: at least 8 characters (as net-snmp requires)",
                    ));
                }
                Some((proto, p))
            }
            (None, None) => None,
            _ => return Err(who("priv and priv_pass go together")),
        };
        out.push(UserConfig {
            name: u.name,
            auth,
            privacy,
            access: None,
        });
    }
    for (key, list, write) in [("rouser", ro, false), ("rwuser", rw, true)] {
        for a in list {
            let Some(u) = out.iter_mut().find(|u| u.name == a.user) else {
                return Err(in_file(key, format!("{:?} is not a [[user]]", a.user)));
            };
            let min_level = match a.level.as_deref() {
                None => SecurityLevel::AuthNoPriv,
                Some(l) => SecurityLevel::parse(l).ok_or_else(|| {
                    in_file(key, format!("level {l:?}: expected noauth, auth or priv"))
                })?,
            };
            let subtree = match a.oid.as_deref() {
                None => None,
                Some(o) => Some(
                    o.trim_start_matches('.')
                        .split('.')
                        .map(|x| x.parse::<u32>())
                        .collect::<Result<Vec<u32>, _>>()
                        .map(snmp::oid::Oid::new)
                        .map_err(|_| in_file(key, format!("oid {o:?}: expected dotted numbers")))?,
                ),
            };
            if u.access.is_some() {
                return Err(in_file(key, format!("{:?} has access twice", a.user)));
            }
            u.access = Some(UserAccess {
                write,
                min_level,
                subtree,
            });
        }
    }
    Ok(out)
}

fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("{}: cannot read config file: {e}", path.display())))?;
    parse_file(&text, &path.display().to_string())
}

fn parse_file(text: &str, origin: &str) -> Result<FileConfig, ConfigError> {
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

/// A top-level key written after a `[table]` belongs to that table in
/// TOML: say so, rather than "unknown key".
fn misplaced_top_level_key(msg: &str, table: Option<&str>) -> Option<String> {
    let table = table?;
    let rest = msg.trim().strip_prefix("unknown field `")?;
    let (name, _) = rest.split_once('`')?;
    keys::is_top_level(name).then(|| {
        format!(
            "`{name}` is a top-level key: it must come before the first table \
             (here TOML reads it as part of {table})"
        )
    })
}

/// A deserializer's message in an operator's words: what the key wants, in
/// TOML's terms, and what it got; an unknown key with the nearest known one.
fn operator_words(msg: &str, key: Option<&str>) -> String {
    let msg = msg.replace('\n', " ");
    let msg = msg.trim();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let (name, known) = rest.split_once('`').unwrap_or((rest, ""));
        let known: Vec<&str> = known.split('`').skip(1).step_by(2).collect();
        let hint = nearest(name, &known)
            .map(|k| format!(" (did you mean `{k}`?)"))
            .unwrap_or_default();
        return format!("unknown key `{name}`{hint}; docs/config.md lists every key");
    }
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        if let Some((got, want)) = rest.split_once(", expected ") {
            let key = key.map(|k| format!("{k}: ")).unwrap_or_default();
            return format!("{key}expected {}, found {}", wanted(want), found(got));
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        let (name, known) = rest.split_once('`').unwrap_or((rest, ""));
        let known = known.trim_start_matches(", expected ").replace('`', "");
        let key = key.map(|k| format!("{k}: ")).unwrap_or_default();
        return format!("{key}{name:?} is not one of {known}");
    }
    let key = key.map(|k| format!("{k}: ")).unwrap_or_default();
    if let Some(e) = msg.strip_prefix("data did not match any variant of untagged enum ") {
        return format!("{key}expected {}", wanted(e));
    }
    format!("{key}{msg}")
}

/// What serde says a key wants, as TOML calls it.
fn wanted(want: &str) -> String {
    let w = want
        .trim()
        .trim_start_matches("a ")
        .trim_start_matches("an ");
    match w {
        "f64" | "f32" => "a number (e.g. 10 or 0.5)".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" => "a whole number".into(),
        "sequence" => "a list (e.g. [\"a\", \"b\"])".into(),
        "boolean" | "bool" => "true or false".into(),
        "path string" | "string" => "a string in quotes".into(),
        w if w.contains("StringOrList") => "a string or a list of strings".into(),
        w if w.starts_with("struct ") || w == "map" => "a table".into(),
        w => w.to_string(),
    }
}

/// What serde says a key got, as TOML calls it.
fn found(got: &str) -> String {
    let g = got.trim();
    for (prefix, what) in [
        ("integer ", "the number "),
        ("floating point ", "the number "),
        ("string ", "the string "),
        ("boolean ", ""),
    ] {
        if let Some(v) = g.strip_prefix(prefix) {
            return format!("{what}{}", v.trim_matches('`'));
        }
    }
    match g {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        g => g.to_string(),
    }
}

/// The known key nearest to `name` (a typo), if near enough.
fn nearest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::levenshtein(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min()
        .map(|(_, k)| k)
}

/// `FILE:LINE: key` for an error about a file setting (`key` for a table:
/// its header's line), or `FILE: key` when the line is unknown.
fn place(origin: &str, lines: &BTreeMap<String, usize>, key: &str) -> String {
    let name = key.trim_matches(|c| c == '[' || c == ']');
    match (origin.is_empty(), lines.get(name)) {
        (true, _) => key.to_string(),
        (false, Some(l)) => format!("{origin}:{l}: {key}"),
        (false, None) => format!("{origin}: {key}"),
    }
}

/// The line of each top-level key (`key = ...`) and table (`[key]`,
/// `[[key]]`, first occurrence) of a TOML text.
fn key_lines(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut top = true;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let name = if let Some(h) = t.strip_prefix('[') {
            top = false;
            h.trim_start_matches('[').split(']').next().map(str::trim)
        } else if top {
            t.split_once('=').map(|(k, _)| k.trim())
        } else {
            None
        };
        if let Some(n) = name.filter(|n| !n.is_empty() && !n.starts_with('#')) {
            out.entry(n.trim_matches('"').to_string()).or_insert(i + 1);
        }
    }
    out
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()
        .get(..end)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count() + 1)
        .unwrap_or(1)
}

fn merge(mut file: FileConfig, origin: &str, args: &RunArgs) -> Result<Settings, ConfigError> {
    let lines = std::mem::take(&mut file.lines);
    let monitor_lines = std::mem::take(&mut file.monitor_lines);
    let in_file =
        |key: &str, msg: String| ConfigError(format!("{}: {msg}", place(origin, &lines, key)));
    let metrics_limits = metrics_limits(&file, &in_file)?;
    let mut notify = notify::settings(
        notify::FileKeys {
            trapsink: file.trapsink.take(),
            trap2sink: file.trap2sink.take(),
            informsink: file.informsink.take(),
            trapsess: file.trapsess.take(),
            trapcommunity: file.trapcommunity.take(),
            authtrapenable: file.authtrapenable.take(),
            rate_limit: file.notification_rate_limit.take(),
            rate_interval: file.notification_rate_interval.take(),
            queue: file.notification_queue.take(),
            link_integrity_threshold: file.link_integrity_threshold.take(),
            buffer_overrun_threshold: file.buffer_overrun_threshold.take(),
        },
        &in_file,
        &args.trap2sink,
    )?;

    // AgentX: the flag wins over the file; in AgentX mode UDP is opened only when
    // asked for (--listen or agentaddress).
    let agentx = match args.agentx.as_deref().or(file.agentx.as_deref()) {
        Some(a) => Some(a.parse::<snmp::agentx::MasterAddress>().map_err(|m| {
            if args.agentx.is_some() {
                ConfigError(format!("--agentx: {m}"))
            } else {
                in_file("agentx", m)
            }
        })?),
        None => None,
    };
    let listen = if agentx.is_some() && args.listen.is_empty() && file.agentaddress.is_none() {
        Vec::new()
    } else if !args.listen.is_empty() {
        args.listen
            .iter()
            .map(|a| parse_listen(a).map_err(|m| ConfigError(format!("--listen {a:?}: {m}"))))
            .collect::<Result<Vec<_>, _>>()?
    } else if let Some(list) = file.agentaddress {
        let items: Vec<String> = match list {
            StringOrList::One(s) => s.split(',').map(|x| x.trim().to_string()).collect(),
            StringOrList::Many(v) => v,
        };
        if items.is_empty() {
            return Err(in_file("agentaddress", "empty list".into()));
        }
        items
            .iter()
            .map(|a| parse_listen(a).map_err(|m| in_file("agentaddress", format!("{a:?}: {m}"))))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        vec![SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT))]
    };

    let mut communities = Vec::new();
    match &args.community {
        Some(name) => communities.push(flag_community("--community", name, Access::ReadOnly)?),
        None => match file.rocommunity {
            Some(list) => {
                for e in list {
                    communities.push(file_community(
                        "rocommunity",
                        &in_file,
                        e,
                        Access::ReadOnly,
                    )?);
                }
            }
            None => communities.push(Community {
                name: "public".into(),
                source: None,
                access: Access::ReadOnly,
            }),
        },
    }
    match &args.rw_community {
        Some(name) => communities.push(flag_community("--rw-community", name, Access::ReadWrite)?),
        None => {
            for e in file.rwcommunity.unwrap_or_default() {
                communities.push(file_community(
                    "rwcommunity",
                    &in_file,
                    e,
                    Access::ReadWrite,
                )?);
            }
        }
    }

    let sweep_interval = match &args.sweep_interval {
        Some(s) => {
            let secs: f64 = s.trim().parse().map_err(|_| {
                ConfigError(format!(
                    "--sweep-interval {s:?}: expected seconds, e.g. 10 or 0.5"
                ))
            })?;
            sweep_seconds(secs).map_err(|m| ConfigError(format!("--sweep-interval {s:?}: {m}")))?
        }
        None => match file.sweep_interval {
            Some(secs) => sweep_seconds(secs).map_err(|m| in_file("sweep_interval", m))?,
            None => sweep_seconds(DEFAULT_SWEEP_SECS).map_err(|m| in_file("sweep_interval", m))?,
        },
    };

    let max_repetitions = args
        .max_repetitions
        .or(file.max_repetitions)
        .unwrap_or(DEFAULT_MAX_REPETITIONS);
    if max_repetitions == 0 {
        return Err(ConfigError(
            "max-repetitions: must be at least 1".to_string(),
        ));
    }

    let state_dir = match args.state_dir.clone().or(file.persistentdir) {
        Some(d) => d,
        None => default_state_dir(),
    };

    let source = args
        .source
        .clone()
        .or(file.source)
        .unwrap_or_else(|| "sim".to_string());
    if source.trim().is_empty() {
        return Err(ConfigError("source: empty source spec".into()));
    }

    let engine_id = engine_id::resolve(&engine_id::EngineIdKeys {
        hex: file.engine_id.as_deref(),
        kind: file.engine_id_type.as_deref(),
        nic: file.engine_id_nic.as_deref(),
        text: file.engine_id_text.as_deref(),
    })
    .map_err(|(key, m)| in_file(key, m))?;
    let users = usm_users(
        file.user.unwrap_or_default(),
        file.rouser.unwrap_or_default(),
        file.rwuser.unwrap_or_default(),
        &in_file,
    )?;
    notify::check_trapsess_users(&mut notify, &users).map_err(|m| in_file("trapsess", m))?;
    // A source quiet for one sweep has ended its burst: storm control sends
    // the state it held back then, not at the interval's end. One and a
    // half intervals after its last notification: past the next sweep's
    // publication (which would have carried news), before the one after.
    notify.storm.quiet = sweep_interval.mul_f64(1.5);
    let (metrics_listen, node_name_map, umad) = merge_ops(
        file.metrics_listen,
        file.node_name_map,
        file.umad,
        &in_file,
        args,
    )?;

    let vacm = vacm(
        file.view.unwrap_or_default(),
        file.group.unwrap_or_default(),
        file.access.unwrap_or_default(),
        &in_file,
    )?;

    let sys_name = file.sysname.unwrap_or_else(hostname);
    let sys_contact = file.syscontact.unwrap_or_default();
    let sys_location = file.syslocation.unwrap_or_default();
    for (key, v) in [
        ("syscontact", &sys_contact),
        ("sysname", &sys_name),
        ("syslocation", &sys_location),
    ] {
        if v.len() > 255 {
            return Err(in_file(key, "longer than 255 octets".into()));
        }
    }

    let opensm = file
        .opensm
        .map(OpenSmSection::settings)
        .transpose()
        .map_err(|m| in_file("opensm", m))?;
    // Checked here, where it is known whether the flag or the file said it.
    let log_level = match (&args.log_level, file.log_level) {
        (Some(l), _) => {
            crate::logging::parse_filter(l, "--log-level")?;
            l.clone()
        }
        (None, Some(l)) => {
            crate::logging::parse_filter(&l, &place(origin, &lines, "log_level"))?;
            l
        }
        (None, None) => "info".to_string(),
    };
    let metrics_families = match &file.metrics_families {
        Some(names) => metrics_families(names).map_err(|m| in_file("metrics_families", m))?,
        None => crate::metrics::Families::DEFAULT,
    };
    let mut umad = umad;
    // The umad source reads other nodes' detail attributes only for a
    // metrics endpoint that serves them (docs/umad.md "Detail attributes and tables").
    if metrics_listen.is_some() {
        umad.pma.remote_details = metrics_families.pma_details();
    }
    let agentx_if_index_offset = match (&agentx, file.agentx_if_mib) {
        (Some(_), Some(true)) => file
            .agentx_if_index_offset
            .unwrap_or(crate::agentx::DEFAULT_IF_INDEX_OFFSET),
        _ => 0,
    };
    // linkUp/linkDown name the rows as served.
    notify.if_index_offset = agentx_if_index_offset;
    Ok(Settings {
        secrets: file.secrets.unwrap_or(false),
        sim_partitions: file.sim_partitions,
        sim_services: file.sim_services,
        opensm_conf: file
            .opensm_conf
            .or_else(|| opensm.as_ref().map(|o| o.conf.clone())),
        opensm,
        port_writes: file.port_writes.unwrap_or(false),
        admin_writable_below_authpriv: file.admin_writable_below_authpriv.unwrap_or(false),
        request_session_timeout: match file.request_session_timeout {
            Some(secs) => seconds(secs).map_err(|m| in_file("request_session_timeout", m))?,
            None => mibs::ib_sm_req::DEFAULT_SESSION_TIMEOUT,
        },
        request_sessions_max: match file.request_sessions_max {
            Some(0) => return Err(in_file("request_sessions_max", "must be at least 1".into())),
            Some(n) => n as usize,
            None => mibs::ib_sm_req::DEFAULT_SESSIONS_MAX,
        },
        request_result_rows_max: at_least_one(
            "request_result_rows_max",
            file.request_result_rows_max,
            mibs::ib_sm_req::MAX_RESULT_ROWS,
            &in_file,
        )?,
        listen,
        source,
        communities,
        state_dir,
        log_level,
        sweep_interval,
        local_node_origin: if args.local_node.is_some() {
            "--local-node".to_string()
        } else {
            place(origin, &lines, "local_node")
        },
        local_node: args.local_node.clone().or(file.local_node),
        max_repetitions,
        sys_contact,
        sys_name,
        sys_location,
        control_socket: args.control_socket.clone().or(file.control_socket),
        agentx_if_index_offset,
        agentx,
        agentx_if_mib: file.agentx_if_mib.unwrap_or(false),
        notify,
        engine_id,
        users,
        vacm,
        max_getbulk_responses: match file.max_getbulk_responses {
            Some(0) => {
                return Err(in_file(
                    "max_getbulk_responses",
                    "must be at least 1".into(),
                ))
            }
            Some(n) => n as usize,
            None => snmp::dispatch::DEFAULT_MAX_BULK_VARBINDS,
        },
        warnings: Vec::new(),
        metrics_listen,
        metrics_limits,
        metrics_families,
        node_name_map,
        umad,
        health: file
            .health
            .unwrap_or_default()
            .config()
            .map_err(|m| in_file("health", m))?,
        topology_expected: file.topology.take().and_then(|t| t.expected),
        monitors: monitor::triggers(file.monitor.take().unwrap_or_default(), |n, m| {
            match monitor_lines.get(n) {
                Some(l) if !origin.is_empty() => format!("{origin}:{l}: monitor {m}"),
                _ => format!("{}: monitor {m}", place(origin, &lines, "monitor")),
            }
        })
        .map_err(ConfigError)?,
    })
}

type OpsSettings = (
    Option<SocketAddr>,
    Option<PathBuf>,
    ib::source::umad::UmadOptions,
);

/// The operations keys: metrics endpoint, node-name-map, `[umad]`.
fn merge_ops(
    metrics: Option<String>,
    node_name_map: Option<PathBuf>,
    umad: Option<crate::umad_config::UmadSection>,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    args: &RunArgs,
) -> Result<OpsSettings, ConfigError> {
    let metrics_listen = match (&args.metrics, metrics) {
        (Some(a), _) => {
            Some(parse_listen(a).map_err(|m| ConfigError(format!("--metrics {a:?}: {m}")))?)
        }
        (None, Some(a)) => {
            Some(parse_listen(&a).map_err(|m| in_file("metrics_listen", format!("{a:?}: {m}")))?)
        }
        (None, None) => None,
    };
    let umad = umad
        .unwrap_or_default()
        .options()
        .map_err(|m| in_file("umad", m))?;
    Ok((
        metrics_listen,
        args.node_name_map.clone().or(node_name_map),
        umad,
    ))
}

/// `metrics_families`: group names, each known, at least one.
fn metrics_families(names: &[String]) -> Result<crate::metrics::Families, String> {
    use crate::metrics::Group;
    let groups = names
        .iter()
        .map(|n| {
            Group::parse(n).ok_or_else(|| {
                let known: Vec<&str> = Group::NAMES.iter().map(|(k, _)| *k).collect();
                let hint = nearest(n, &known)
                    .map(|k| format!(" (did you mean \"{k}\"?)"))
                    .unwrap_or_default();
                format!(
                    "unknown family group \"{n}\"{hint}; the groups are {}",
                    known.join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if groups.is_empty() {
        return Err("names no family group; leave it out for the default".into());
    }
    Ok(crate::metrics::Families::of(groups))
}

/// The shortest sweep interval: below it the source would sweep back to
/// back and keep a core busy (1e-300 once did).
pub const MIN_SWEEP_SECS: f64 = 0.1;

fn sweep_seconds(secs: f64) -> Result<Duration, String> {
    if secs.is_finite() && secs > 0.0 && secs < MIN_SWEEP_SECS {
        return Err(format!("must be at least {MIN_SWEEP_SECS} seconds"));
    }
    seconds(secs)
}

fn seconds(secs: f64) -> Result<Duration, String> {
    if !secs.is_finite() || secs <= 0.0 {
        return Err("must be a positive number of seconds".into());
    }
    if secs > 86_400.0 {
        return Err("must be at most 86400 seconds".into());
    }
    Ok(Duration::from_secs_f64(secs))
}

fn flag_community(flag: &str, name: &str, access: Access) -> Result<Community, ConfigError> {
    check_community_name(name).map_err(|m| ConfigError(format!("{flag} {name:?}: {m}")))?;
    Ok(Community {
        name: name.to_string(),
        source: None,
        access,
    })
}

fn file_community(
    key: &str,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    e: CommunityEntry,
    access: Access,
) -> Result<Community, ConfigError> {
    let err = |m: String| in_file(key, format!("{:?}: {m}", e.community));
    check_community_name(&e.community).map_err(err)?;
    let source = match e.source.as_deref().map(str::trim) {
        None | Some("default") => None,
        Some(s) => Some(parse_source(s).map_err(err)?),
    };
    Ok(Community {
        name: e.community,
        source,
        access,
    })
}

fn check_community_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("community name is empty".into());
    }
    if name.len() > 255 {
        return Err("community name longer than 255 octets".into());
    }
    Ok(())
}

/// A source restriction: a CIDR (`10.0.0.0/8`, `fd00::/8`) or one address.
fn parse_source(s: &str) -> Result<IpNet, String> {
    if let Ok(net) = s.parse::<IpNet>() {
        return Ok(net.trunc());
    }
    s.parse::<IpAddr>()
        .map(IpNet::from)
        .map_err(|_| format!("source {s:?} is not an address, a CIDR or \"default\""))
}

/// `ADDR:PORT`, `[V6]:PORT`, a bare address (port 1161), optionally with
/// snmpd's `udp:` / `udp6:` transport prefix.
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    let t = s.trim();
    let t = t
        .strip_prefix("udp6:")
        .or_else(|| t.strip_prefix("udp:"))
        .unwrap_or(t);
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    let bare = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(t);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    Err("expected ADDR:PORT or [IPV6]:PORT".into())
}

/// systemd's $STATE_DIRECTORY, else $XDG_STATE_HOME/ibsnmpd, else
/// ~/.local/state/ibsnmpd, else ./ibsnmpd-state.
fn default_state_dir() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = env("STATE_DIRECTORY") {
        return PathBuf::from(d);
    }
    if let Some(d) = env("XDG_STATE_HOME") {
        return PathBuf::from(d).join("ibsnmpd");
    }
    if let Some(h) = env("HOME") {
        return PathBuf::from(h).join(".local/state/ibsnmpd");
    }
    PathBuf::from("ibsnmpd-state")
}

/// The host name, as snmpd uses for the default sysName.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl From<crate::logging::LogError> for ConfigError {
    fn from(e: crate::logging::LogError) -> Self {
        ConfigError(e.0)
    }
}

/// The config file's communities as the SNMP engine takes them.
pub fn agent_communities(list: &[Community]) -> Vec<snmp::agent::Community> {
    list.iter()
        .map(|c| snmp::agent::Community {
            name: c.name.as_bytes().to_vec(),
            access: match c.access {
                Access::ReadOnly => snmp::agent::CommunityAccess::ReadOnly,
                Access::ReadWrite => snmp::agent::CommunityAccess::ReadWrite,
            },
            sources: c.source.into_iter().collect(),
        })
        .collect()
}

/// A count key that must be at least 1 (`default` when absent).
fn at_least_one(
    key: &str,
    v: Option<u32>,
    default: usize,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<usize, ConfigError> {
    match v {
        Some(0) => Err(in_file(key, "must be at least 1".into())),
        Some(n) => Ok(n as usize),
        None => Ok(default),
    }
}

/// The /metrics endpoint's limits from the file (each at least 1; the
/// queue may be 0: no waiting, 503 at once).
fn metrics_limits(
    file: &FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<crate::metrics::Limits, ConfigError> {
    let d = crate::metrics::Limits::default();
    let at_least_one =
        |key: &str, v: Option<u32>, default: usize| at_least_one(key, v, default, in_file);
    Ok(crate::metrics::Limits {
        max_connections: at_least_one(
            "metrics_max_connections",
            file.metrics_max_connections,
            d.max_connections,
        )?,
        max_per_client: at_least_one(
            "metrics_max_connections_per_client",
            file.metrics_max_connections_per_client,
            d.max_per_client,
        )?,
        max_renders: at_least_one(
            "metrics_max_renders",
            file.metrics_max_renders,
            d.max_renders,
        )?,
        render_queue: file
            .metrics_render_queue
            .map_or(d.render_queue, |n| n as usize),
        queue_wait: d.queue_wait,
        stall_timeout: match file.metrics_stall_timeout {
            Some(secs) => seconds(secs).map_err(|m| in_file("metrics_stall_timeout", m))?,
            None => d.stall_timeout,
        },
    })
}

#[cfg(test)]
mod tests {

    /// The keys serde knows in `text`'s table (from its unknown-key error).
    fn known_keys(text: &str) -> std::collections::BTreeSet<String> {
        let e = toml::from_str::<FileConfig>(text).unwrap_err().to_string();
        let list = e
            .split("expected one of ")
            .nth(1)
            .unwrap_or_else(|| panic!("{e}"));
        let list = list.split('\n').next().unwrap_or_default();
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    /// docs/config.md's key table (the man page's source) lists exactly
    /// the keys the loader accepts: top-level keys and tables, and each
    /// `[table]`'s keys ([[table]] rows list theirs in prose).
    #[test]
    fn the_key_table_is_the_loaders() {
        let table = keys::table();
        let documented: std::collections::BTreeSet<String> = table
            .iter()
            .flat_map(|k| k.top_level().chain(k.tables()))
            .map(str::to_string)
            .collect();
        assert_eq!(documented, known_keys("zz_no_such_key = 1\n"));
        for section in ["umad", "health", "opensm"] {
            let documented: std::collections::BTreeSet<String> = table
                .iter()
                .filter(|k| k.key.starts_with(&format!("`[{section}]`")))
                .flat_map(|k| names_of(k.key).skip(1))
                .collect();
            assert_eq!(
                documented,
                known_keys(&format!("[{section}]\nzz_no_such_key = 1\n")),
                "[{section}]"
            );
        }
    }

    fn names_of(cell: &str) -> impl Iterator<Item = String> + '_ {
        cell.split('`').skip(1).step_by(2).map(str::to_string)
    }

    #[test]
    fn a_top_level_key_after_a_table_is_named_as_such() {
        let e = parse_file(
            "[[rocommunity]]\ncommunity = \"x\"\nmetrics_listen = \"127.0.0.1:9\"\n",
            "c.toml",
        )
        .unwrap_err();
        assert_eq!(
            e.0,
            "c.toml:3: `metrics_listen` is a top-level key: it must come before the first \
             table (here TOML reads it as part of [[rocommunity]])"
        );
    }

    use super::*;

    fn args() -> RunArgs {
        RunArgs::default()
    }

    #[test]
    fn defaults() {
        let s = merge(FileConfig::default(), "", &args()).unwrap();
        assert_eq!(s.listen, vec!["127.0.0.1:1161".parse().unwrap()]);
        assert_eq!(s.source, "sim");
        assert_eq!(s.communities.len(), 1);
        assert_eq!(s.communities[0].name, "public");
        assert_eq!(s.communities[0].access, Access::ReadOnly);
        assert_eq!(s.sweep_interval, Duration::from_secs(10));
        assert_eq!(s.max_repetitions, DEFAULT_MAX_REPETITIONS);
    }

    #[test]
    fn file_and_flags() {
        let text = r#"
agentaddress = ["udp:127.0.0.1:2000", "[::1]:2001"]
syscontact = "ops@example.org"
sweep_interval = 0.5

[[rocommunity]]
community = "public"
source = "10.0.0.0/8"

[[rwcommunity]]
community = "private"
source = "127.0.0.1"
"#;
        let f = parse_file(text, "x.toml").unwrap();
        let s = merge(f, "x.toml", &args()).unwrap();
        assert_eq!(s.listen.len(), 2);
        assert_eq!(s.listen[1], "[::1]:2001".parse().unwrap());
        assert_eq!(s.sweep_interval, Duration::from_millis(500));
        assert_eq!(s.sys_contact, "ops@example.org");
        assert_eq!(s.communities.len(), 2);
        assert_eq!(s.communities[1].access, Access::ReadWrite);
        assert_eq!(
            s.communities[1].source,
            Some("127.0.0.1/32".parse().unwrap())
        );

        let f = parse_file(text, "x.toml").unwrap();
        let mut a = args();
        a.listen = vec!["127.0.0.1:3000".into()];
        a.community = Some("other".into());
        a.sweep_interval = Some("2".into());
        let s = merge(f, "x.toml", &a).unwrap();
        assert_eq!(s.listen, vec!["127.0.0.1:3000".parse().unwrap()]);
        assert_eq!(s.communities[0].name, "other");
        assert_eq!(s.communities[0].source, None);
        assert_eq!(s.sweep_interval, Duration::from_secs(2));
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse_file("syscontact = \"a\"\nbogus = 1\n", "c.toml").unwrap_err();
        assert!(e.0.starts_with("c.toml:2: "), "{e}");
        assert!(!e.0.contains('\n'));
        // Operator words, file:line and key, a nearest key for a typo.
        for (text, want) in [
            ("rocommunity = 5\n", "c.toml:1: rocommunity: expected a list"),
            ("a = 1\n", "c.toml:1: unknown key `a`"),
            ("\nsweep_intervall = 3\n", "c.toml:2: unknown key `sweep_intervall` (did you mean `sweep_interval`?)"),
            ("agentaddress = 5\n", "c.toml:1: agentaddress: expected a string or a list of strings"),
            ("[opensm]\nconf = 3\n", "c.toml:2: [opensm] conf: expected a string in quotes, found the number 3"),
            ("sweep_interval = \"x\"\n", "c.toml:1: sweep_interval: expected a number (e.g. 10 or 0.5), found the string \"x\""),
        ] {
            let e = parse_file(text, "c.toml").unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
            assert!(!e.contains("untagged") && !e.contains("f64"), "{e}");
        }
        // Settings the file gave are blamed on the file, with their line.
        let f = parse_file("syscontact = \"x\"\nlog_level = \"loud\"\n", "c.toml").unwrap();
        let e = merge(f, "c.toml", &args()).unwrap_err().to_string();
        assert!(e.starts_with("c.toml:2: log_level \"loud\""), "{e}");
        let f = parse_file("\n\nlocal_node = \"x\"\n", "c.toml").unwrap();
        assert_eq!(
            merge(f, "c.toml", &args()).unwrap().local_node_origin,
            "c.toml:3: local_node"
        );
        let mut a = args();
        a.log_level = Some("loud".into());
        let e = merge(FileConfig::default(), "", &a)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--log-level \"loud\""), "{e}");
        let e = parse_file("sweep_interval = \"x\"\n", "c.toml").unwrap_err();
        assert!(e.0.starts_with("c.toml:1: "), "{e}");
        let f = parse_file(
            "[[rocommunity]]\ncommunity = \"p\"\nsource = \"nope\"\n",
            "c.toml",
        )
        .unwrap();
        let e = merge(f, "c.toml", &args()).unwrap_err();
        assert!(e.0.contains("nope"), "{e}");
    }

    /// The example in docs/config.md and packaging/ibsnmpd.toml load as written.
    #[test]
    fn shipped_examples_load() {
        let doc = include_str!("../../../docs/config.md");
        let start = doc.find("```toml\n").expect("toml block") + 8;
        let len = doc[start..].find("```").expect("block end");
        let f = parse_file(&doc[start..start + len], "docs/config.md").unwrap();
        let s = merge(f, "docs/config.md", &args()).unwrap();
        assert_eq!(s.communities.len(), 4);
        assert_eq!(
            s.control_socket.as_deref(),
            Some(Path::new("/run/ibsnmpd/ctl.sock"))
        );
        assert!(s.metrics_listen.is_some());
        assert_eq!(s.umad, ib::source::umad::UmadOptions::default());

        let pkg = include_str!("../../../packaging/ibsnmpd.toml");
        let f = parse_file(pkg, "packaging/ibsnmpd.toml").unwrap();
        merge(f, "packaging/ibsnmpd.toml", &args()).unwrap();
    }

    /// Other nodes' detail attributes are read for a metrics endpoint that
    /// serves them, and only then.
    #[test]
    fn metrics_detail_families_are_what_the_umad_source_reads() {
        use ib::source::umad::pma::detail;
        let remote = |text: &str| {
            let f = parse_file(text, "c.toml").unwrap();
            merge(f, "c.toml", &args()).unwrap().umad.pma.remote_details
        };
        let listen = "metrics_listen = \"127.0.0.1:9683\"\n";
        assert_eq!(remote("metrics_families = [\"detail\", \"vl\"]\n"), 0);
        assert_eq!(remote(listen), 0, "default families");
        assert_eq!(
            remote(&format!(
                "{listen}metrics_families = [\"errors\", \"vl\"]\n"
            )),
            detail::VL_OP_PACKETS | detail::VL_OP_DATA | detail::VL_XMIT_WAIT
        );
        assert_eq!(
            remote(&format!(
                "{listen}metrics_families = [\"detail\", \"vl\"]\n"
            )),
            detail::ALL
        );
    }

    #[test]
    fn request_sessions() {
        let s = merge(parse_file("", "c.toml").unwrap(), "c.toml", &args()).unwrap();
        assert_eq!(s.request_session_timeout, Duration::from_secs(300));
        assert_eq!(s.request_sessions_max, 256);
        let f = parse_file(
            "request_session_timeout = 2.5\nrequest_sessions_max = 3\n",
            "c.toml",
        )
        .unwrap();
        let s = merge(f, "c.toml", &args()).unwrap();
        assert_eq!(s.request_session_timeout, Duration::from_millis(2500));
        assert_eq!(s.request_sessions_max, 3);
        for bad in [
            "request_session_timeout = 0",
            "request_sessions_max = 0",
            "request_result_rows_max = 0",
            "metrics_max_renders = 0",
            "metrics_max_connections_per_client = 0",
            "metrics_stall_timeout = 0",
        ] {
            let f = parse_file(bad, "c.toml").unwrap();
            let e = merge(f, "c.toml", &args()).unwrap_err().to_string();
            assert!(e.contains(bad.split(' ').next().unwrap()), "{e}");
        }
    }

    #[test]
    fn security_round_3_keys() {
        let s = merge(parse_file("", "c.toml").unwrap(), "c.toml", &args()).unwrap();
        assert!(!s.admin_writable_below_authpriv);
        assert_eq!(s.metrics_limits, crate::metrics::Limits::default());
        assert_eq!(s.request_result_rows_max, mibs::ib_sm_req::MAX_RESULT_ROWS);
        let f = parse_file(
            "admin_writable_below_authpriv = true
metrics_max_renders = 3
\
             metrics_render_queue = 0
metrics_stall_timeout = 2.5
\
             metrics_max_connections_per_client = 4
request_result_rows_max = 10
",
            "c.toml",
        )
        .unwrap();
        let s = merge(f, "c.toml", &args()).unwrap();
        assert!(s.admin_writable_below_authpriv);
        let l = &s.metrics_limits;
        assert_eq!((l.max_renders, l.render_queue, l.max_per_client), (3, 0, 4));
        assert_eq!(l.stall_timeout, Duration::from_millis(2500));
        assert_eq!(s.request_result_rows_max, 10);
    }

    #[test]
    fn usm_users_and_vacm() {
        let text = r#"
engine_id = "80:00:1f:88:05:01:02:03"
max_getbulk_responses = 50
[[user]]
name = "ops"
auth = "SHA-256"
auth_pass = "authpass1"
priv = "AES256"
priv_pass = "privpass1"
[[user]]
name = "plain"
[[rouser]]
user = "plain"
level = "noauth"
oid = ".1.3.6.1.2.1.1"
[[rwuser]]
user = "ops"
level = "priv"
[[view]]
name = "all"
type = "included"
oid = "1"
mask = "80"
[[group]]
name = "g"
model = "v2c"
security_name = "public"
[[access]]
group = "g"
read = "all"
"#;
        let s = merge(parse_file(text, "c").unwrap(), "c", &args()).unwrap();
        assert_eq!(s.engine_id, Some(vec![0x80, 0, 0x1f, 0x88, 5, 1, 2, 3]));
        assert_eq!(s.max_getbulk_responses, 50);
        assert_eq!(s.users.len(), 2);
        let ops = &s.users[0];
        assert!(ops.access.as_ref().unwrap().write);
        assert_eq!(
            s.users[1]
                .access
                .as_ref()
                .unwrap()
                .subtree
                .as_ref()
                .unwrap()
                .to_string(),
            "1.3.6.1.2.1.1"
        );
        // Passwords never show in Debug output.
        assert!(!format!("{s:?}").contains("authpass1"));
        assert_eq!(s.vacm.access.len(), 1);
        for (bad, what) in [
            (
                "[[user]]\nname = \"a\"\nauth = \"SHA\"\nauth_pass = \"short\"\n",
                "at least 8",
            ),
            (
                "[[user]]\nname = \"a\"\nauth = \"SHA-1024\"\nauth_pass = \"longenough\"\n",
                "expected MD5",
            ),
            (
                "[[user]]\nname = \"a\"\npriv = \"AES\"\npriv_pass = \"longenough\"\n",
                "priv needs auth",
            ),
            ("[[rouser]]\nuser = \"ghost\"\n", "not a [[user]]"),
            (
                "[[access]]\ngroup = \"g\"\nread = \"nope\"\n",
                "not a [[view]]",
            ),
            ("engine_id = \"80\"\n", "5 to 32 octets"),
            (
                "metrics_families = [\"erors\"]\n",
                "unknown family group \"erors\" (did you mean \"errors\"?)",
            ),
            ("metrics_families = []\n", "names no family group"),
        ] {
            let e = merge(parse_file(bad, "c").unwrap(), "c", &args()).unwrap_err();
            assert!(e.0.contains(what), "{bad}: {e}");
        }
    }

    #[test]
    fn listen_forms() {
        assert_eq!(
            parse_listen("[::1]:1161").unwrap(),
            "[::1]:1161".parse().unwrap()
        );
        assert_eq!(parse_listen("::1").unwrap(), "[::1]:1161".parse().unwrap());
        assert_eq!(
            parse_listen("udp6:[::1]:5").unwrap(),
            "[::1]:5".parse().unwrap()
        );
        assert!(parse_listen("localhost:1").is_err());
        let mut a = args();
        a.sweep_interval = Some("-1".into());
        assert!(merge(FileConfig::default(), "", &a).is_err());
        for tiny in ["1e-300", "0.01", "0.099"] {
            a.sweep_interval = Some(tiny.into());
            let e = merge(FileConfig::default(), "", &a).unwrap_err();
            assert!(e.to_string().contains("at least 0.1 seconds"), "{e}");
        }
        a.sweep_interval = Some("0.1".into());
        assert!(merge(FileConfig::default(), "", &a).is_ok());
        let e = parse_file("sweep_interval = 1e-300\n", "c.toml")
            .and_then(|f| merge(f, "c.toml", &args()))
            .unwrap_err();
        assert!(e.to_string().contains("at least 0.1 seconds"), "{e}");
    }
}
