//! The TOML configuration file and its merge with the command line.
//!
//! Keys mirror snmpd.conf where snmpd has the concept (`agentaddress`,
//! `rocommunity`, `rwcommunity`, `syscontact`, `syslocation`, `sysname`,
//! `persistentdir`); ibsnmpd's own settings use snake_case names. Every
//! problem becomes a [`ConfigError`]: one line, naming file and line where
//! there is one. docs/config.md is the reference.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;
use serde::Deserialize;

use crate::cli::RunArgs;

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
    pub max_repetitions: u32,
    pub sys_contact: String,
    pub sys_name: String,
    pub sys_location: String,
    /// Operator control socket (`--control-socket`), none by default.
    pub control_socket: Option<PathBuf>,
    /// `secrets = true`: IB-SM-MIB's SM_Key and M_Key columns read their
    /// values; off (default) they read as zeros. The SNMPv3 view of a request
    /// narrows this further (mibs::View::secrets).
    pub secrets: bool,
    /// `sim_partitions`: the simulator's partitions, an OpenSM
    /// partitions.conf-style file (docs/ib-sm.md).
    pub sim_partitions: Option<PathBuf>,
    /// `opensm_conf`: OpenSM's configuration file, read at each publish for
    /// ibSmConfigTable's sweep interval, timeouts, LMC, M_Key lease period.
    pub opensm_conf: Option<PathBuf>,
}

/// The file as written. Unknown keys are errors (a typo must not be ignored).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
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
    secrets: Option<bool>,
    sim_partitions: Option<PathBuf>,
    opensm_conf: Option<PathBuf>,
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
    merge(file, &origin, args)
}

fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("{}: cannot read config file: {e}", path.display())))?;
    parse_file(&text, &path.display().to_string())
}

fn parse_file(text: &str, origin: &str) -> Result<FileConfig, ConfigError> {
    toml::from_str::<FileConfig>(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| line_of(text, s.start))
            .map(|l| format!(":{l}"))
            .unwrap_or_default();
        let msg = e.message().replace('\n', " ");
        ConfigError(format!("{origin}{line}: {}", msg.trim()))
    })
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()
        .get(..end)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count() + 1)
        .unwrap_or(1)
}

fn merge(file: FileConfig, origin: &str, args: &RunArgs) -> Result<Settings, ConfigError> {
    let in_file = |key: &str, msg: String| ConfigError(format!("{origin}: {key}: {msg}"));

    let listen = if !args.listen.is_empty() {
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
                    communities.push(file_community("rocommunity", origin, e, Access::ReadOnly)?);
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
                communities.push(file_community("rwcommunity", origin, e, Access::ReadWrite)?);
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
            seconds(secs).map_err(|m| ConfigError(format!("--sweep-interval {s:?}: {m}")))?
        }
        None => match file.sweep_interval {
            Some(secs) => seconds(secs).map_err(|m| in_file("sweep_interval", m))?,
            None => seconds(DEFAULT_SWEEP_SECS).map_err(|m| in_file("sweep_interval", m))?,
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

    Ok(Settings {
        secrets: file.secrets.unwrap_or(false),
        sim_partitions: file.sim_partitions,
        opensm_conf: file.opensm_conf,
        listen,
        source,
        communities,
        state_dir,
        log_level: args
            .log_level
            .clone()
            .or(file.log_level)
            .unwrap_or_else(|| "info".to_string()),
        sweep_interval,
        local_node: args.local_node.clone().or(file.local_node),
        max_repetitions,
        sys_contact,
        sys_name,
        sys_location,
        control_socket: args.control_socket.clone().or(file.control_socket),
    })
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
    origin: &str,
    e: CommunityEntry,
    access: Access,
) -> Result<Community, ConfigError> {
    let err = |m: String| ConfigError(format!("{origin}: {key} {:?}: {m}", e.community));
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

#[cfg(test)]
mod tests {
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
    }
}
