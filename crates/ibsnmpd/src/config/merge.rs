//! Defaults < config file < flags: the merge into [`Settings`].

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::RunArgs;

use super::access::{file_community, flag_community, usm_users, vacm};
use super::file::{FileConfig, OpenSmSection, RoutesSection, StringOrList};
use super::wording::{nearest, place};
use super::{
    engine_id, monitor, notify, Access, AgentSettings, AgentxSettings, CheckSettings, Community,
    ConfigError, DaemonSettings, MetricsSettings, RequestSettings, Settings, SmSettings,
    SourceSettings, SystemGroup, DEFAULT_MAX_REPETITIONS, DEFAULT_PORT, DEFAULT_SWEEP_SECS,
};

pub(super) fn merge(
    mut file: FileConfig,
    origin: &str,
    args: &RunArgs,
) -> Result<Settings, ConfigError> {
    let lines = std::mem::take(&mut file.lines);
    let monitor_lines = std::mem::take(&mut file.monitor_lines);
    let in_file =
        |key: &str, msg: String| ConfigError(format!("{}: {msg}", place(origin, &lines, key)));
    let metrics_limits = metrics_limits(&file, &in_file)?;
    let (health, routes_max_spread) = checks(&mut file, &in_file)?;
    let mut notify = notify_settings(&mut file, &in_file, args)?;
    let (agent, agentx, requests) = agent_settings(&mut file, &in_file, args)?;
    let communities = communities(&mut file, &in_file, args)?;
    let sweep_interval = sweep_interval(file.sweep_interval, &in_file, args)?;
    let (source, source_at) = source(args, file.source.take(), || place(origin, &lines, "source"))?;
    notify::check_trapsess_users(&mut notify, &agent.users).map_err(|m| in_file("trapsess", m))?;
    // A source quiet for one sweep has ended its burst: storm control sends
    // the state it held back then, not at the interval's end. One and a
    // half intervals after its last notification: past the next sweep's
    // publication (which would have carried news), before the one after.
    notify.storm.quiet = sweep_interval.mul_f64(1.5);
    let (metrics_listen, node_name_map, mut umad) = merge_ops(
        file.metrics_listen.take(),
        file.node_name_map.take(),
        file.umad.take(),
        &in_file,
        args,
    )?;
    let (name, contact, location) = system_group(&mut file, &in_file)?;
    let metrics_families = match &file.metrics_families {
        Some(names) => metrics_families(names).map_err(|m| in_file("metrics_families", m))?,
        None => crate::metrics::Families::DEFAULT,
    };
    // The umad source reads other nodes' detail attributes only for a
    // metrics endpoint that serves them (docs/umad.md "Detail attributes and tables").
    if metrics_listen.is_some() {
        umad.pma.remote_details = metrics_families.pma_details();
    }
    Ok(Settings {
        source: SourceSettings {
            spec: source,
            origin: source_at,
            sweep_interval,
            local_node_origin: if args.local_node.is_some() {
                "--local-node".to_string()
            } else {
                place(origin, &lines, "local_node")
            },
            local_node: args.local_node.clone().or(file.local_node.take()),
            umad,
            sim_partitions: file.sim_partitions.take(),
            sim_services: file.sim_services.take(),
        },
        agent,
        system: SystemGroup {
            contact,
            name,
            location,
        },
        daemon: DaemonSettings {
            state_dir: (args.state_dir.clone().or(file.persistentdir.take()))
                .unwrap_or_else(default_state_dir),
            log_level: log_level(args, file.log_level.take(), origin, &lines)?,
            control_socket: args.control_socket.clone().or(file.control_socket.take()),
        },
        agentx,
        metrics: MetricsSettings {
            listen: metrics_listen,
            limits: metrics_limits,
            families: metrics_families,
        },
        requests,
        sm: sm_settings(&mut file, &in_file)?,
        notify,
        communities,
        checks: CheckSettings {
            node_name_map,
            health,
            topology_expected: file.topology.take().and_then(|t| t.expected),
            routes_max_spread,
            monitors: monitor::triggers(file.monitor.take().unwrap_or_default(), |n, m| {
                match monitor_lines.get(n) {
                    Some(l) if !origin.is_empty() => format!("{origin}:{l}: monitor {m}"),
                    _ => format!("{}: monitor {m}", place(origin, &lines, "monitor")),
                }
            })
            .map_err(ConfigError)?,
        },
        warnings: Vec::new(),
    })
}

/// The SNMP engine's part, AgentX's and the request sessions': the
/// transport, the SNMPv3 engine and users, the access rules and limits.
fn agent_settings(
    file: &mut FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    args: &RunArgs,
) -> Result<(AgentSettings, AgentxSettings, RequestSettings), ConfigError> {
    let (master, listen) = transport(file, in_file, args)?;
    let engine_id = engine_id::resolve(&engine_id::EngineIdKeys {
        hex: file.engine_id.as_deref(),
        kind: file.engine_id_type.as_deref(),
        nic: file.engine_id_nic.as_deref(),
        text: file.engine_id_text.as_deref(),
    })
    .map_err(|(key, m)| in_file(key, m))?;
    let users = usm_users(
        file.user.take().unwrap_or_default(),
        file.rouser.take().unwrap_or_default(),
        file.rwuser.take().unwrap_or_default(),
        in_file,
    )?;
    let vacm = vacm(
        file.view.take().unwrap_or_default(),
        file.group.take().unwrap_or_default(),
        file.access.take().unwrap_or_default(),
        in_file,
    )?;
    // Only IF-MIB rows served through a master share its ifIndex space
    // (docs/agentx.md); linkUp/linkDown name the ifIndexes as served.
    let if_index_offset = match (&master, file.agentx_if_mib) {
        (Some(_), Some(true)) => file
            .agentx_if_index_offset
            .unwrap_or(super::DEFAULT_IF_INDEX_OFFSET),
        _ => 0,
    };
    let Limits {
        request_session_timeout,
        request_sessions_max,
        request_result_rows_max,
        max_getbulk_responses,
    } = limits(file, in_file)?;
    let agent = AgentSettings {
        listen,
        max_repetitions: max_repetitions(args, file.max_repetitions.take())?,
        max_getbulk_responses,
        engine_id,
        users,
        vacm,
        node_contexts: node_contexts(file.node_contexts.take(), in_file)?,
        admin_writable_below_authpriv: file.admin_writable_below_authpriv.take().unwrap_or(false),
        secrets: file.secrets.take().unwrap_or(false),
    };
    let agentx = AgentxSettings {
        master,
        if_mib: file.agentx_if_mib.take().unwrap_or(false),
        node_contexts: file.agentx_node_contexts.take().unwrap_or(true),
        if_index_offset,
    };
    let requests = RequestSettings {
        session_timeout: request_session_timeout,
        sessions_max: request_sessions_max,
        result_rows_max: request_result_rows_max,
    };
    Ok((agent, agentx, requests))
}

/// `[opensm]`, `opensm_conf` (else `[opensm] conf`) and `port_writes`.
fn sm_settings(
    file: &mut FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<SmSettings, ConfigError> {
    let opensm = file
        .opensm
        .take()
        .map(OpenSmSection::settings)
        .transpose()
        .map_err(|m| in_file("opensm", m))?;
    Ok(SmSettings {
        opensm_conf: file
            .opensm_conf
            .take()
            .or_else(|| opensm.as_ref().map(|o| o.conf.clone())),
        opensm,
        port_writes: file.port_writes.take().unwrap_or(false),
    })
}

/// GetBulk's max-repetitions cap, at least 1.
fn max_repetitions(args: &RunArgs, file: Option<u32>) -> Result<u32, ConfigError> {
    let max_repetitions = args
        .max_repetitions
        .or(file)
        .unwrap_or(DEFAULT_MAX_REPETITIONS);
    if max_repetitions == 0 {
        return Err(ConfigError(
            "max-repetitions: must be at least 1".to_string(),
        ));
    }
    Ok(max_repetitions)
}

/// The source spec (`sim` by default), not empty, and where it was given
/// (`--source`, or the file's line from `in_file`).
fn source(
    args: &RunArgs,
    file: Option<String>,
    in_file: impl FnOnce() -> String,
) -> Result<(String, String), ConfigError> {
    let origin = if args.source.is_none() && file.is_some() {
        in_file()
    } else {
        "--source".to_string()
    };
    let source = args
        .source
        .clone()
        .or(file)
        .unwrap_or_else(|| "sim".to_string());
    if source.trim().is_empty() {
        return Err(ConfigError(format!("{origin}: empty source spec")));
    }
    Ok((source, origin))
}

/// `[[trapsink]]` and the other notification keys (see [`notify::settings`]).
fn notify_settings(
    file: &mut FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    args: &RunArgs,
) -> Result<notify::NotifySettings, ConfigError> {
    notify::settings(
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
        in_file,
        &args.trap2sink,
    )
    .map(|n| notify::NotifySettings {
        fabric_link_traps: file.fabric_link_traps.take().unwrap_or(false),
        ..n
    })
}

/// The AgentX master and the UDP addresses to listen on.
fn transport(
    file: &mut FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    args: &RunArgs,
) -> Result<(Option<snmp::agentx::MasterAddress>, Vec<SocketAddr>), ConfigError> {
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
    } else if let Some(list) = file.agentaddress.take() {
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
    Ok((agentx, listen))
}

/// The read-only community (default `public`) and the read-write ones.
fn communities(
    file: &mut FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    args: &RunArgs,
) -> Result<Vec<Community>, ConfigError> {
    let mut communities = Vec::new();
    match &args.community {
        Some(name) => communities.push(flag_community("--community", name, Access::ReadOnly)?),
        None => match file.rocommunity.take() {
            Some(list) => {
                for e in list {
                    communities.push(file_community("rocommunity", in_file, e, Access::ReadOnly)?);
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
            for e in file.rwcommunity.take().unwrap_or_default() {
                communities.push(file_community(
                    "rwcommunity",
                    in_file,
                    e,
                    Access::ReadWrite,
                )?);
            }
        }
    }
    Ok(communities)
}

/// `--sweep-interval` or `sweep_interval`, at least [`MIN_SWEEP_SECS`].
fn sweep_interval(
    file: Option<f64>,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    args: &RunArgs,
) -> Result<Duration, ConfigError> {
    Ok(match &args.sweep_interval {
        Some(s) => {
            let secs: f64 = s.trim().parse().map_err(|_| {
                ConfigError(format!(
                    "--sweep-interval {s:?}: expected seconds, e.g. 10 or 0.5"
                ))
            })?;
            sweep_seconds(secs).map_err(|m| ConfigError(format!("--sweep-interval {s:?}: {m}")))?
        }
        None => match file {
            Some(secs) => sweep_seconds(secs).map_err(|m| in_file("sweep_interval", m))?,
            None => sweep_seconds(DEFAULT_SWEEP_SECS).map_err(|m| in_file("sweep_interval", m))?,
        },
    })
}

/// sysName (the host name by default), sysContact, sysLocation.
fn system_group(
    file: &mut FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<(String, String, String), ConfigError> {
    let sys_name = file.sysname.take().unwrap_or_else(hostname);
    let sys_contact = file.syscontact.take().unwrap_or_default();
    let sys_location = file.syslocation.take().unwrap_or_default();
    for (key, v) in [
        ("syscontact", &sys_contact),
        ("sysname", &sys_name),
        ("syslocation", &sys_location),
    ] {
        if v.len() > 255 {
            return Err(in_file(key, "longer than 255 octets".into()));
        }
    }
    Ok((sys_name, sys_contact, sys_location))
}

/// The log filter, checked here, where it is known whether the flag or the
/// file said it.
fn log_level(
    args: &RunArgs,
    file: Option<String>,
    origin: &str,
    lines: &std::collections::BTreeMap<String, usize>,
) -> Result<String, ConfigError> {
    Ok(match (&args.log_level, file) {
        (Some(l), _) => {
            crate::models::logging::parse_filter(l, "--log-level")?;
            l.clone()
        }
        (None, Some(l)) => {
            crate::models::logging::parse_filter(&l, &place(origin, lines, "log_level"))?;
            l
        }
        (None, None) => "info".to_string(),
    })
}

/// The request sessions' and GetBulk's limits.
struct Limits {
    request_session_timeout: Duration,
    request_sessions_max: usize,
    request_result_rows_max: usize,
    max_getbulk_responses: usize,
}

/// `[health]` and `[routes]`: the agent's checks of each snapshot.
fn checks(
    file: &mut FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<(ib::model::health::HealthConfig, f64), ConfigError> {
    let health =
        (file.health.take().unwrap_or_default().config()).map_err(|m| in_file("health", m))?;
    let spread =
        RoutesSection::max_spread(file.routes.as_ref()).map_err(|m| in_file("routes", m))?;
    Ok((health, spread))
}

fn limits(
    file: &FileConfig,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<Limits, ConfigError> {
    let request_session_timeout = match file.request_session_timeout {
        Some(secs) => seconds(secs).map_err(|m| in_file("request_session_timeout", m))?,
        None => mibs::modules::ib_sm_req::DEFAULT_SESSION_TIMEOUT,
    };
    let request_sessions_max = match file.request_sessions_max {
        Some(0) => return Err(in_file("request_sessions_max", "must be at least 1".into())),
        Some(n) => n as usize,
        None => mibs::modules::ib_sm_req::DEFAULT_SESSIONS_MAX,
    };
    let request_result_rows_max = at_least_one(
        "request_result_rows_max",
        file.request_result_rows_max,
        mibs::modules::ib_sm_req::MAX_RESULT_ROWS,
        &in_file,
    )?;
    let max_getbulk_responses = match file.max_getbulk_responses {
        Some(0) => {
            return Err(in_file(
                "max_getbulk_responses",
                "must be at least 1".into(),
            ))
        }
        Some(n) => n as usize,
        None => snmp::dispatch::DEFAULT_MAX_BULK_VARBINDS,
    };
    Ok(Limits {
        request_session_timeout,
        request_sessions_max,
        request_result_rows_max,
        max_getbulk_responses,
    })
}

pub(super) type OpsSettings = (
    Option<SocketAddr>,
    Option<PathBuf>,
    ib::source::umad::UmadOptions,
);

/// The operations keys: metrics endpoint, node-name-map, `[umad]`.
pub(super) fn merge_ops(
    metrics: Option<String>,
    node_name_map: Option<PathBuf>,
    umad: Option<crate::config::umad_section::UmadSection>,
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
pub(super) fn metrics_families(names: &[String]) -> Result<crate::metrics::Families, String> {
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

pub(super) fn sweep_seconds(secs: f64) -> Result<Duration, String> {
    if secs.is_finite() && secs > 0.0 && secs < MIN_SWEEP_SECS {
        return Err(format!("must be at least {MIN_SWEEP_SECS} seconds"));
    }
    seconds(secs)
}

pub(super) fn seconds(secs: f64) -> Result<Duration, String> {
    if !secs.is_finite() || secs <= 0.0 {
        return Err("must be a positive number of seconds".into());
    }
    if secs > 86_400.0 {
        return Err("must be at most 86400 seconds".into());
    }
    Ok(Duration::from_secs_f64(secs))
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
pub(super) fn default_state_dir() -> PathBuf {
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
pub(super) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A count key that must be at least 1 (`default` when absent).
pub(super) fn at_least_one(
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
pub(super) fn metrics_limits(
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

/// `node_contexts` (default "all").
fn node_contexts(
    value: Option<String>,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<super::NodeContexts, ConfigError> {
    value.map_or(Ok(super::NodeContexts::default()), |s| {
        super::NodeContexts::parse(&s).map_err(|m| in_file("node_contexts", m))
    })
}
