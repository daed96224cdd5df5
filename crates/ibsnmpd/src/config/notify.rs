//! The notification settings: snmpd.conf's trapsink, trap2sink,
//! informsink and trapsess as TOML keys and flags, storm control and the
//! IB thresholds (docs/notifications.md); [`crate::services::traps`] runs them.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mibs::modules::notifications::Thresholds;
use serde::Deserialize;
use snmp::notify::StormControl;
use snmp::usm::SecurityLevel;

use super::ConfigError;

/// The port notifications go to when none is given (RFC 3417 snmptrap).
pub const DEFAULT_TRAP_PORT: u16 = 162;
/// Inform defaults: a second between tries, three retries.
pub const DEFAULT_INFORM_TIMEOUT_SECS: f64 = 1.0;
pub const DEFAULT_INFORM_RETRIES: u32 = 3;
/// Storm control defaults: 10 notifications a minute per source object.
pub const DEFAULT_RATE_LIMIT: u32 = 10;
pub const DEFAULT_RATE_INTERVAL_SECS: f64 = 60.0;
pub const DEFAULT_QUEUE: usize = 1024;

/// A sink as written in the file: snmpd.conf's `"HOST[:PORT] [COMMUNITY]"`
/// or a table.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SinkEntry {
    Line(String),
    Table(SinkTable),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SinkTable {
    host: String,
    port: Option<u16>,
    community: Option<String>,
    /// Informs only: seconds before a retry.
    timeout: Option<f64>,
    /// Informs only: sends after the first.
    retries: Option<u32>,
}

/// `[[trapsess]]`: an SNMPv3 trap sink, snmpd.conf's
/// `trapsess -v3 -u USER -l LEVEL HOST[:PORT]`; USER is a `[[user]]` whose
/// keys sign (and encrypt) the traps, this agent's engine authoritative.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrapSessEntry {
    host: String,
    port: Option<u16>,
    user: String,
    /// noauth | auth | priv (default priv).
    level: Option<String>,
    /// InformRequests (`trapsess -Ci`) after discovering the receiver's
    /// engine; default false (traps).
    inform: Option<bool>,
    /// Informs only: seconds before a retry (also per discovery probe).
    timeout: Option<f64>,
    /// Informs only: sends after the first.
    retries: Option<u32>,
}

/// Which PDU a sink gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkType {
    TrapV1,
    TrapV2c,
    Inform,
    /// SNMPv2-Trap in an SNMPv3 message (`[[trapsess]]`).
    TrapV3,
    /// InformRequest in an SNMPv3 message (`[[trapsess]]` with `inform`).
    InformV3,
}

/// One configured sink (resolved when the agent starts).
#[derive(Debug, Clone, PartialEq)]
pub struct SinkSettings {
    pub kind: SinkType,
    pub host: String,
    pub port: u16,
    pub community: String,
    pub timeout: Duration,
    pub retries: u32,
    /// TrapV3: the USM user and securityLevel.
    pub user: String,
    pub level: SecurityLevel,
}

/// The notification settings.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifySettings {
    pub sinks: Vec<SinkSettings>,
    /// snmpEnableAuthenTraps' default (`authtrapenable`; a value set over
    /// SNMP and persisted wins).
    pub auth_traps: bool,
    pub storm: StormControl,
    pub queue: usize,
    pub thresholds: Thresholds,
    /// The `[[user]]`s of InformV3 sinks: their keys are localized to each
    /// receiver's engine ID once discovered.
    pub inform_users: Vec<snmp::usm::UserConfig>,
    /// `fabric_link_traps`: linkUp/linkDown for any fabric port, not only
    /// the local node's (default false; restart only).
    pub fabric_link_traps: bool,
}

impl Default for NotifySettings {
    fn default() -> Self {
        NotifySettings {
            sinks: Vec::new(),
            auth_traps: false,
            storm: StormControl {
                max_per_interval: DEFAULT_RATE_LIMIT,
                interval: Duration::from_secs_f64(DEFAULT_RATE_INTERVAL_SECS),
                // Set to the sweep interval where the originator starts.
                quiet: Duration::ZERO,
            },
            queue: DEFAULT_QUEUE,
            thresholds: Thresholds::default(),
            inform_users: Vec::new(),
            fabric_link_traps: false,
        }
    }
}

/// The notification keys of the file (see config.rs).
#[derive(Debug, Default)]
pub struct FileKeys {
    pub trapsink: Option<Vec<SinkEntry>>,
    pub trap2sink: Option<Vec<SinkEntry>>,
    pub informsink: Option<Vec<SinkEntry>>,
    pub trapsess: Option<Vec<TrapSessEntry>>,
    pub trapcommunity: Option<String>,
    pub authtrapenable: Option<u8>,
    pub rate_limit: Option<u32>,
    pub rate_interval: Option<f64>,
    pub queue: Option<usize>,
    pub link_integrity_threshold: Option<u64>,
    pub buffer_overrun_threshold: Option<u64>,
}

/// `HOST`, `HOST:PORT`, `[V6]:PORT` or a bare IPv6 address.
fn host_port(s: &str) -> Result<(String, u16), String> {
    let t = s.trim();
    let t = t
        .strip_prefix("udp6:")
        .or_else(|| t.strip_prefix("udp:"))
        .unwrap_or(t);
    if t.is_empty() {
        return Err("empty host".into());
    }
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok((a.ip().to_string(), a.port()));
    }
    if let Ok(ip) = t
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return Ok((ip.to_string(), DEFAULT_TRAP_PORT));
    }
    match t.rsplit_once(':') {
        Some((h, p)) => {
            let port = p.parse::<u16>().map_err(|_| format!("bad port {p:?}"))?;
            Ok((h.to_string(), port))
        }
        None => Ok((t.to_string(), DEFAULT_TRAP_PORT)),
    }
}

fn secs(v: f64, what: &str) -> Result<Duration, String> {
    if !v.is_finite() || v <= 0.0 || v > 86_400.0 {
        return Err(format!("{what}: must be between 0 and 86400 seconds"));
    }
    Ok(Duration::from_secs_f64(v))
}

fn sink(kind: SinkType, e: SinkEntry, community: &str) -> Result<SinkSettings, String> {
    let (host, port, comm, timeout, retries) = match e {
        SinkEntry::Line(l) => {
            let mut w = l.split_whitespace();
            let (h, p) = host_port(w.next().unwrap_or(""))?;
            let c = w.next().map(str::to_string);
            if w.next().is_some() {
                return Err(format!("{l:?}: expected \"HOST[:PORT] [COMMUNITY]\""));
            }
            (h, p, c, None, None)
        }
        SinkEntry::Table(t) => {
            let (h, p) = host_port(&t.host)?;
            (h, t.port.unwrap_or(p), t.community, t.timeout, t.retries)
        }
    };
    if kind != SinkType::Inform && (timeout.is_some() || retries.is_some()) {
        return Err("timeout and retries are for informsink only".into());
    }
    let community = comm.unwrap_or_else(|| community.to_string());
    if community.is_empty() || community.len() > 255 {
        return Err("community must be 1 to 255 octets".into());
    }
    Ok(SinkSettings {
        kind,
        host,
        port,
        community,
        timeout: secs(timeout.unwrap_or(DEFAULT_INFORM_TIMEOUT_SECS), "timeout")?,
        retries: retries.unwrap_or(DEFAULT_INFORM_RETRIES),
        user: String::new(),
        level: SecurityLevel::NoAuthNoPriv,
    })
}

fn trapsess(e: TrapSessEntry) -> Result<SinkSettings, String> {
    let (host, port) = host_port(&e.host)?;
    let level = match e.level.as_deref() {
        None => SecurityLevel::AuthPriv,
        Some(l) => SecurityLevel::parse(l)
            .ok_or_else(|| format!("level {l:?}: expected noauth, auth or priv"))?,
    };
    if e.user.is_empty() {
        return Err("user must name a [[user]]".into());
    }
    let inform = e.inform.unwrap_or(false);
    if !inform && (e.timeout.is_some() || e.retries.is_some()) {
        return Err("timeout and retries are for inform = true only".into());
    }
    Ok(SinkSettings {
        kind: if inform {
            SinkType::InformV3
        } else {
            SinkType::TrapV3
        },
        host,
        port: e.port.unwrap_or(port),
        community: String::new(),
        timeout: secs(e.timeout.unwrap_or(DEFAULT_INFORM_TIMEOUT_SECS), "timeout")?,
        retries: e.retries.unwrap_or(DEFAULT_INFORM_RETRIES),
        user: e.user,
        level,
    })
}

/// Checks that every `[[trapsess]]` names a user with keys for its level,
/// and keeps the users of inform sinks (their keys are localized later).
pub fn check_trapsess_users(
    n: &mut NotifySettings,
    users: &[snmp::usm::UserConfig],
) -> Result<(), String> {
    let v3 = |s: &&SinkSettings| matches!(s.kind, SinkType::TrapV3 | SinkType::InformV3);
    for s in n.sinks.iter().filter(v3) {
        let u = users
            .iter()
            .find(|u| u.name == s.user)
            .ok_or_else(|| format!("trapsess {}: no [[user]] named {:?}", s.host, s.user))?;
        let max = match (&u.auth, &u.privacy) {
            (None, _) => SecurityLevel::NoAuthNoPriv,
            (Some(_), None) => SecurityLevel::AuthNoPriv,
            (Some(_), Some(_)) => SecurityLevel::AuthPriv,
        };
        if s.level > max {
            return Err(format!(
                "trapsess {}: user {:?} has no keys for level {:?}",
                s.host, s.user, s.level
            ));
        }
        if s.kind == SinkType::InformV3 && !n.inform_users.iter().any(|x| x.name == u.name) {
            n.inform_users.push(u.clone());
        }
    }
    Ok(())
}

/// The notification settings from the file's keys and `--trap2sink` flags.
pub fn settings(
    f: FileKeys,
    err: &dyn Fn(&str, String) -> ConfigError,
    trap2sink_flags: &[String],
) -> Result<NotifySettings, ConfigError> {
    let community = f.trapcommunity.unwrap_or_else(|| "public".to_string());
    let mut out = NotifySettings::default();
    for (key, kind, list) in [
        ("trapsink", SinkType::TrapV1, f.trapsink),
        ("trap2sink", SinkType::TrapV2c, f.trap2sink),
        ("informsink", SinkType::Inform, f.informsink),
    ] {
        for e in list.unwrap_or_default() {
            out.sinks
                .push(sink(kind, e, &community).map_err(|m| err(key, m))?);
        }
    }
    for e in f.trapsess.unwrap_or_default() {
        out.sinks.push(trapsess(e).map_err(|m| err("trapsess", m))?);
    }
    for a in trap2sink_flags {
        out.sinks.push(
            sink(SinkType::TrapV2c, SinkEntry::Line(a.clone()), &community)
                .map_err(|m| ConfigError(format!("--trap2sink {a:?}: {m}")))?,
        );
    }
    out.auth_traps = match f.authtrapenable {
        None | Some(2) => false,
        Some(1) => true,
        Some(v) => {
            return Err(err(
                "authtrapenable",
                format!("{v}: expected 1 (enabled) or 2 (disabled)"),
            ))
        }
    };
    if let Some(n) = f.rate_limit {
        out.storm.max_per_interval = n;
    }
    if let Some(s) = f.rate_interval {
        out.storm.interval = secs(s, "").map_err(|m| err("notification_rate_interval", m))?;
    }
    if let Some(q) = f.queue {
        if q == 0 {
            return Err(err("notification_queue", "must be at least 1".into()));
        }
        out.queue = q;
    }
    if let Some(t) = f.link_integrity_threshold {
        out.thresholds.link_integrity = t;
    }
    if let Some(t) = f.buffer_overrun_threshold {
        out.thresholds.buffer_overrun = t;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Errors as the config loader words them.
    fn at(origin: &'static str) -> impl Fn(&str, String) -> ConfigError {
        move |k, m| ConfigError(format!("{origin}: {k}: {m}"))
    }

    fn keys(text: &str) -> FileKeys {
        #[derive(Deserialize)]
        struct F {
            trapsink: Option<Vec<SinkEntry>>,
            trap2sink: Option<Vec<SinkEntry>>,
            informsink: Option<Vec<SinkEntry>>,
            trapcommunity: Option<String>,
        }
        let f: F = toml::from_str(text).unwrap();
        FileKeys {
            trapsink: f.trapsink,
            trap2sink: f.trap2sink,
            informsink: f.informsink,
            trapcommunity: f.trapcommunity,
            ..FileKeys::default()
        }
    }

    #[test]
    fn trapsess_needs_a_user_with_keys_for_its_level() {
        let keys = |t: &str| FileKeys {
            trapsess: Some(vec![toml::from_str::<TrapSessEntry>(t).unwrap()]),
            ..FileKeys::default()
        };
        let n = settings(keys("host = \"h:1162\"\nuser = \"ops\""), &at("f"), &[]).unwrap();
        assert_eq!(n.sinks[0].kind, SinkType::TrapV3);
        assert_eq!(n.sinks[0].port, 1162);
        assert_eq!(n.sinks[0].level, SecurityLevel::AuthPriv, "priv by default");
        let user = |auth: bool, privacy: bool| snmp::usm::UserConfig {
            name: "ops".into(),
            auth: auth.then(|| (snmp::usm::AuthProtocol::Sha256, "authpass-1".into())),
            privacy: privacy.then(|| (snmp::usm::PrivProtocol::Aes128, "privpass-1".into())),
            access: None,
        };
        assert!(check_trapsess_users(&mut n.clone(), &[user(true, true)]).is_ok());
        let e = check_trapsess_users(&mut n.clone(), &[user(true, false)]).unwrap_err();
        assert!(e.contains("no keys"), "{e}");
        let e = check_trapsess_users(&mut n.clone(), &[]).unwrap_err();
        assert!(e.contains("no [[user]]"), "{e}");
        assert!(settings(
            keys("host = \"h\"\nuser = \"ops\"\nlevel = \"x\""),
            &at("f"),
            &[]
        )
        .is_err());
        // Informs: their users are kept for key localization; timeout and
        // retries belong to informs only.
        let mut i = settings(
            keys("host = \"h\"\nuser = \"ops\"\ninform = true\ntimeout = 0.5\nretries = 1"),
            &at("f"),
            &[],
        )
        .unwrap();
        assert_eq!(i.sinks[0].kind, SinkType::InformV3);
        assert_eq!(i.sinks[0].retries, 1);
        check_trapsess_users(&mut i, &[user(true, true)]).unwrap();
        assert_eq!(i.inform_users.len(), 1);
        assert!(settings(
            keys("host = \"h\"\nuser = \"ops\"\nretries = 1"),
            &at("f"),
            &[]
        )
        .is_err());
    }

    #[test]
    fn sinks_in_both_forms() {
        let s = settings(
            keys(
                r#"
trapcommunity = "traps"
trapsink = ["192.0.2.1 v1c"]
trap2sink = ["[::1]:1162", { host = "localhost", port = 2000 }]
informsink = [{ host = "127.0.0.1:3000", community = "inf", timeout = 0.5, retries = 2 }]
"#,
            ),
            &at("x.toml"),
            &["127.0.0.1:4000".to_string()],
        )
        .unwrap();
        let k: Vec<_> = s
            .sinks
            .iter()
            .map(|s| (s.kind, s.host.as_str(), s.port, s.community.as_str()))
            .collect();
        assert_eq!(
            k,
            vec![
                (SinkType::TrapV1, "192.0.2.1", 162, "v1c"),
                (SinkType::TrapV2c, "::1", 1162, "traps"),
                (SinkType::TrapV2c, "localhost", 2000, "traps"),
                (SinkType::Inform, "127.0.0.1", 3000, "inf"),
                (SinkType::TrapV2c, "127.0.0.1", 4000, "traps"),
            ]
        );
        assert_eq!(s.sinks[3].timeout, Duration::from_millis(500));
        assert_eq!(s.sinks[3].retries, 2);
        assert_eq!(s.storm.max_per_interval, DEFAULT_RATE_LIMIT);
        let e = settings(
            keys("trap2sink = [{ host = \"h\", retries = 1 }]"),
            &at("x.toml"),
            &[],
        )
        .unwrap_err();
        assert!(e.0.starts_with("x.toml: trap2sink: "), "{e}");
        let e = settings(FileKeys::default(), &at(""), &["h:notaport".into()]).unwrap_err();
        assert!(e.0.contains("--trap2sink"), "{e}");
    }
}
