//! Notifications: the sinks of the configuration, and the task that turns
//! fabric events and snapshot differences into notifications
//! ([`mibs::notifications`]) for the originator ([`snmp::notify`]).
//!
//! Nothing here runs on the request path but the authenticationFailure
//! hook, which only reads the agent state and queues without blocking.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use mibs::notifications::{self as notif, Thresholds};
use mibs::SystemState;
use serde::Deserialize;
use snmp::agent::AuthFailureHook;
use snmp::notify::{self, Notifier, NotifyStats, OriginatorConfig, Sink, SinkKind, StormControl};
use snmp::usm::{InformWrapper, SecurityLevel, TrapWrapper, Usm};
use tracing::{info, warn};

use crate::config::ConfigError;
use crate::fabric::FabricHandle;

/// The port notifications go to when none is given (RFC 3417 snmptrap).
pub const DEFAULT_TRAP_PORT: u16 = 162;
/// Inform defaults: a second between tries, three retries.
pub const DEFAULT_INFORM_TIMEOUT_SECS: f64 = 1.0;
pub const DEFAULT_INFORM_RETRIES: u32 = 3;
/// Storm control defaults: 10 notifications a minute per source object.
pub const DEFAULT_RATE_LIMIT: u32 = 10;
pub const DEFAULT_RATE_INTERVAL_SECS: f64 = 60.0;
pub const DEFAULT_QUEUE: usize = 1024;
/// At most one authenticationFailure queued per this interval.
const AUTH_QUEUE_EVERY: Duration = Duration::from_millis(200);

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
}

impl Default for NotifySettings {
    fn default() -> Self {
        NotifySettings {
            sinks: Vec::new(),
            auth_traps: false,
            storm: StormControl {
                max_per_interval: DEFAULT_RATE_LIMIT,
                interval: Duration::from_secs_f64(DEFAULT_RATE_INTERVAL_SECS),
            },
            queue: DEFAULT_QUEUE,
            thresholds: Thresholds::default(),
            inform_users: Vec::new(),
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

fn resolve(s: &SinkSettings) -> Result<SocketAddr> {
    let host = s.host.trim_start_matches('[').trim_end_matches(']');
    (host, s.port)
        .to_socket_addrs()
        .with_context(|| format!("notification sink {}:{}", s.host, s.port))?
        .next()
        .with_context(|| format!("notification sink {}: no address", s.host))
}

/// An SNMPv3 inform sink: the receiver's engine discovered now (its
/// probes take up to timeout x (retries + 1)), the user's keys localized
/// to it.
async fn inform_v3(
    s: &SinkSettings,
    addr: SocketAddr,
    users: &[snmp::usm::UserConfig],
) -> Result<InformWrapper, String> {
    let user = users
        .iter()
        .find(|u| u.name == s.user)
        .ok_or_else(|| format!("no [[user]] named {:?}", s.user))?;
    let w = InformWrapper::new(user, s.level, addr, s.timeout, s.retries.saturating_add(1))?;
    // Logged either way; a receiver that does not answer now is
    // discovered again when informs to it go unanswered.
    let _ = w.discover().await;
    Ok(w)
}

/// The running notification layer; clones share it (e.g. the reload path
/// keeps one for [`Traps::warm_start`]).
#[derive(Clone)]
pub struct Traps {
    notifier: Notifier,
}

impl Traps {
    /// Starts the originator and the event task (on the current runtime).
    /// None when no sink is configured. `agent_addr`: the v1 agent-addr.
    pub async fn start(
        settings: &NotifySettings,
        agent_addr: Ipv4Addr,
        system: Arc<ArcSwap<SystemState>>,
        fabric: FabricHandle,
        forward: Option<tokio::sync::mpsc::Sender<Vec<snmp::value::VarBind>>>,
        usm: Option<Arc<Usm>>,
    ) -> Result<Option<Traps>> {
        // AgentX mode forwards notifications to the master even without sinks
        // of our own.
        if settings.sinks.is_empty() && forward.is_none() {
            return Ok(None);
        }
        let mut sinks = Vec::new();
        for s in &settings.sinks {
            // A name that does not resolve now must not keep the agent
            // from serving: that sink is left out, loudly.
            let addr = match resolve(s) {
                Ok(a) => a,
                Err(e) => {
                    warn!(error = format!("{e:#}"), "notification sink left out");
                    continue;
                }
            };
            let community = s.community.as_bytes().to_vec();
            let kind = match s.kind {
                SinkType::TrapV3 => {
                    let wrapper = usm
                        .as_ref()
                        .ok_or_else(|| "no SNMPv3 engine (no [[user]])".to_string())
                        .and_then(|u| TrapWrapper::new(Arc::clone(u), &s.user, s.level));
                    match wrapper {
                        Ok(w) => SinkKind::Wrapped {
                            wrapper: Arc::new(w),
                            confirm: None,
                        },
                        Err(e) => {
                            warn!(sink = %addr, error = %e, "SNMPv3 notification sink left out");
                            continue;
                        }
                    }
                }
                SinkType::InformV3 => match inform_v3(s, addr, &settings.inform_users).await {
                    Ok(w) => SinkKind::Wrapped {
                        wrapper: Arc::new(w),
                        confirm: Some((s.timeout, s.retries)),
                    },
                    Err(e) => {
                        warn!(sink = %addr, error = %e, "SNMPv3 inform sink left out");
                        continue;
                    }
                },
                SinkType::TrapV1 => SinkKind::TrapV1 { community },
                SinkType::TrapV2c => SinkKind::TrapV2c { community },
                SinkType::Inform => SinkKind::InformV2c {
                    community,
                    timeout: s.timeout,
                    retries: s.retries,
                },
            };
            info!(sink = %addr, kind = ?kind, "notification sink");
            sinks.push(Sink { addr, kind });
        }
        let config = OriginatorConfig {
            sinks,
            queue: settings.queue,
            agent_addr,
            storm: settings.storm,
            forward,
            ..OriginatorConfig::default()
        };
        let up_system = Arc::clone(&system);
        let up_time: notify::UpTime = Arc::new(move || up_system.load().up_time());
        let (notifier, _task) = notify::start(config, up_time)
            .await
            .context("cannot start the notification originator")?;
        fabric.subscribe();
        tokio::spawn(event_task(
            notifier.clone(),
            settings.thresholds,
            system,
            fabric,
        ));
        Ok(Some(Traps { notifier }))
    }

    /// The originator's counters (for /metrics).
    pub fn stats(&self) -> Arc<snmp::notify::NotifyStats> {
        Arc::clone(self.notifier.stats())
    }

    /// coldStart: the agent (re)initialised with a possibly new configuration.
    pub fn cold_start(&self) {
        self.notifier.notify(notif::cold_start());
    }

    /// warmStart: the configuration was reloaded (SIGHUP).
    #[allow(dead_code)] // called by the reload path (operator tools)
    pub fn warm_start(&self) {
        self.notifier.notify(notif::warm_start());
    }

    /// The hook for [`snmp::agent::Agent::with_auth_failure_hook`]: an
    /// authenticationFailure when snmpEnableAuthenTraps is enabled(1),
    /// rate-limited by storm control.
    pub fn auth_failure_hook(&self, system: Arc<ArcSwap<SystemState>>) -> AuthFailureHook {
        let n = self.notifier.clone();
        // A flood of bad packets queues at most one notification per
        // AUTH_QUEUE_EVERY (lock-free), so it cannot crowd fabric
        // notifications out of the queue; storm control limits the rest.
        let started = std::time::Instant::now();
        let next = Arc::new(AtomicU64::new(0));
        Arc::new(move |_| {
            if !mibs::snmpv2::authen_traps_enabled(&system.load()) {
                return;
            }
            let now = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let due = next.load(Ordering::Relaxed);
            let every = u64::try_from(AUTH_QUEUE_EVERY.as_millis()).unwrap_or(1000);
            if now >= due
                && next
                    .compare_exchange(
                        due,
                        now.saturating_add(every),
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                n.notify(notif::authentication_failure());
            }
        })
    }

    /// Logs the originator's counters (at shutdown).
    pub fn log_stats(&self) {
        let s = self.notifier.stats();
        let g = NotifyStats::get;
        info!(
            queued = g(&s.queued),
            queue_drops = g(&s.queue_drops),
            suppressed = g(&s.suppressed),
            traps_sent = g(&s.traps_sent),
            informs_sent = g(&s.informs_sent),
            inform_retries = g(&s.inform_retries),
            informs_acked = g(&s.informs_acked),
            informs_dropped = g(&s.informs_dropped),
            "notification totals"
        );
    }
}

/// Fabric events (port in/out of service, link state) and snapshot
/// differences (multicast groups, thresholds, masks, keys) to notifications,
/// each update read against the snapshot it came from.
async fn event_task(
    notifier: Notifier,
    thresholds: Thresholds,
    system: Arc<ArcSwap<SystemState>>,
    fabric: FabricHandle,
) {
    loop {
        let u = fabric.next_update().await;
        if u.missed > 0 {
            warn!(
                missed = u.missed,
                "notification layer fell behind the fabric events; some were not notified"
            );
        }
        for ev in &u.events {
            for n in notif::from_event(ev, &u.next) {
                notifier.notify(n);
            }
            if let Some(n) = notif::link_up_down_for(ev, &u.next, &system.load()) {
                notifier.notify(n);
            }
        }
        for n in notif::from_snapshots(&u.prev, &u.next, &thresholds) {
            notifier.notify(n);
        }
    }
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
