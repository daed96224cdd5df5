//! The effective settings, after the file and the flags are merged.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use ipnet::IpNet;

use super::notify;

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

/// The effective settings after file and flags are merged: one struct per
/// part of the agent, each either [`Reloadable`] (a SIGHUP applies it) or
/// [`RestartOnly`] (a SIGHUP names its changed keys and keeps it as it
/// runs). [`Settings::restart_keys`] names every part, so a new one must
/// be placed; each part names every field of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub source: SourceSettings,
    pub agent: AgentSettings,
    pub system: SystemGroup,
    pub daemon: DaemonSettings,
    pub agentx: AgentxSettings,
    pub metrics: MetricsSettings,
    pub requests: RequestSettings,
    pub sm: SmSettings,
    /// Notification sinks, storm control and thresholds
    /// (docs/notifications.md): part reloadable, part restart-only
    /// ([`notify::NotifySettings::restart_keys`]).
    pub notify: notify::NotifySettings,
    /// The communities: the next request sees a reload's.
    pub communities: Communities,
    /// What the source thread checks each snapshot against.
    pub checks: CheckSettings,
    /// Problems worth a warning once logging is up (e.g. file mode); said
    /// again by each reload.
    pub warnings: Vec<String>,
}

/// A part a reload applies.
pub trait Reloadable {}

/// A part that changes only on restart.
pub trait RestartOnly {
    /// The keys (or flags) whose values differ in `new`, as the file names
    /// them.
    fn changed(&self, new: &Self) -> Vec<&'static str>;
}

/// The communities (`[[rocommunity]]`, `[[rwcommunity]]`, `--community`).
pub type Communities = Vec<Community>;

impl Reloadable for Communities {}

/// Where the fabric comes from and how often it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSettings {
    /// `source`/`--source`, as given.
    pub spec: String,
    /// Where `spec` was given, for errors (`--source` or
    /// `FILE:LINE: source`).
    pub origin: String,
    pub sweep_interval: Duration,
    pub local_node: Option<String>,
    /// Where `local_node` was given, for errors (`--local-node` or
    /// `FILE:LINE: local_node`).
    pub local_node_origin: String,
    /// The umad source's options (`[umad]`).
    pub umad: ib::source::umad::UmadOptions,
    /// `sim_partitions`: the simulator's partitions, an OpenSM
    /// partitions.conf-style file (docs/ib-sm.md).
    pub sim_partitions: Option<PathBuf>,
    /// `sim_services`: the services the simulator's SA holds, one per line
    /// (docs/ib-sm.md).
    pub sim_services: Option<PathBuf>,
}

/// The SNMP engine: its ports, protocol limits, SNMPv3 and access rules.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    pub listen: Vec<SocketAddr>,
    pub max_repetitions: u32,
    /// Cap on the varbinds of one GetBulk response (`max_getbulk_responses`,
    /// net-snmp's maxGetbulkResponses; default 100).
    pub max_getbulk_responses: usize,
    /// snmpEngineID from the file (`engine_id`, hex); None: generated once
    /// and kept in the state directory.
    pub engine_id: Option<Vec<u8>>,
    /// SNMPv3 USM users with their access (`[[user]]`, `[[rouser]]`,
    /// `[[rwuser]]`); passwords are localized when the agent starts.
    pub users: Vec<snmp::usm::UserConfig>,
    /// VACM tables from `[[view]]`, `[[group]]`, `[[access]]`.
    pub vacm: snmp::vacm::Vacm,
    /// `node_contexts`: whether every node of the fabric is served as an
    /// SNMP context, and whether the community and user shorthands reach
    /// those contexts (docs/contexts.md).
    pub node_contexts: NodeContexts,
    /// `admin_writable_below_authpriv`: the administrative MIBs (USM, VACM,
    /// SNMP-TARGET-MIB, SNMP-NOTIFICATION-MIB) writable by any writer the
    /// views allow, not only at authPriv. Default false: whoever writes the
    /// tables that grant access can grant themselves the secrets.
    pub admin_writable_below_authpriv: bool,
    /// `secrets = true`: IB-SM-MIB's SM_Key and M_Key columns read their
    /// values; off (default) they read as zeros. The SNMPv3 view of a request
    /// narrows this further (mibs::View::secrets).
    pub secrets: bool,
}

/// SNMPv2-MIB's system group (`syscontact`, `sysname`, `syslocation`).
#[derive(Debug, Clone, PartialEq)]
pub struct SystemGroup {
    pub contact: String,
    pub name: String,
    pub location: String,
}

/// The process: its state, its log, its control socket.
#[derive(Debug, Clone, PartialEq)]
pub struct DaemonSettings {
    pub state_dir: PathBuf,
    pub log_level: String,
    /// Operator control socket (`--control-socket`), none by default.
    pub control_socket: Option<PathBuf>,
}

/// AgentX subagent mode (docs/agentx.md).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentxSettings {
    /// `--agentx`, `agentx`: the master's address (None: not a subagent).
    pub master: Option<snmp::agentx::MasterAddress>,
    /// Also serve IF-MIB rows for the IB ports (`agentx_if_mib`).
    pub if_mib: bool,
    /// Register the node contexts with the master (`agentx_node_contexts`,
    /// default true; docs/agentx.md "Node contexts").
    pub node_contexts: bool,
    /// Added to every ifIndex (`agentx_if_index_offset`; 1,000,000 by
    /// default with `agentx_if_mib`, else 0).
    pub if_index_offset: u32,
}

/// The Prometheus endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsSettings {
    /// `--metrics`, `metrics_listen`; off by default.
    pub listen: Option<SocketAddr>,
    /// What the endpoint lets clients hold (`metrics_max_connections`,
    /// `metrics_max_connections_per_client`, `metrics_max_renders`,
    /// `metrics_render_queue`, `metrics_stall_timeout`).
    pub limits: crate::metrics::Limits,
    /// The per-port families a scrape carries (`metrics_families`).
    pub families: crate::metrics::Families,
}

/// IB-SM-MIB's request sessions (docs/ib-sm.md).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSettings {
    /// `request_session_timeout`: sessions no Set touched for this long
    /// are aged out (default 300 s).
    pub session_timeout: Duration,
    /// `request_sessions_max`: most live sessions per request table
    /// (default 256); a create past it is resourceUnavailable.
    pub sessions_max: usize,
    /// `request_result_rows_max`: result rows all sessions hold together
    /// (default 32,768); an answer past it fails.
    pub result_rows_max: usize,
}

/// The subnet manager's side of IB-SM-MIB.
#[derive(Debug, Clone, PartialEq)]
pub struct SmSettings {
    /// `opensm_conf`: OpenSM's configuration file, read at each publish for
    /// ibSmConfigTable's sweep interval, timeouts, LMC, M_Key lease period
    /// (`[opensm] conf` when that section is there).
    pub opensm_conf: Option<PathBuf>,
    /// `[opensm]`: the OpenSM the agent steers (ibSmConfigTable Sets);
    /// None: the SM columns are read-only.
    pub opensm: Option<crate::models::opensm::OpenSmSettings>,
    /// `port_writes`: ibSmPortInfoTable's safe columns may be set
    /// (Set(PortInfo) SMPs); default false (notWritable).
    pub port_writes: bool,
}

/// What the source thread holds each snapshot against; a reload applies
/// all of it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckSettings {
    /// infiniband-diags node-name-map (`--node-name-map`): read again, a
    /// sweep asked for.
    pub node_name_map: Option<PathBuf>,
    /// The fabric health checks' thresholds (`[health]`, docs/health.md):
    /// the next snapshot's checks, their window starting again.
    pub health: ib::model::health::HealthConfig,
    /// DISMAN-EVENT-MIB triggers (`[[monitor]]`, docs/health.md): the old
    /// ones stop, the new ones start sampling.
    pub monitors: Vec<mibs::modules::disman_event::Trigger>,
    /// The cabling plan (`[topology] expected`, docs/topology.md): held
    /// against the next sweep.
    pub topology_expected: Option<PathBuf>,
    /// A leaf's uplink spread above which the agent's route check calls
    /// it unbalanced (`[routes] max_spread`, docs/routing.md): the next
    /// snapshot's check.
    pub routes_max_spread: f64,
}

impl Reloadable for CheckSettings {}

impl Settings {
    /// The settings that differ in `new` and cannot change at run time,
    /// named as in the file (or the flag). `notifying`: a notification
    /// layer runs (without one, sinks added need a restart).
    pub fn restart_keys(&self, new: &Settings, notifying: bool) -> Vec<&'static str> {
        fn applied<T: Reloadable>(_: &T) {}
        let Settings {
            source,
            agent,
            system,
            daemon,
            agentx,
            metrics,
            requests,
            sm,
            notify,
            communities,
            checks,
            // Logged again by the reload.
            warnings: _,
        } = self;
        applied(communities);
        applied(checks);
        let mut v = Vec::new();
        v.extend(daemon.changed(&new.daemon));
        v.extend(source.changed(&new.source));
        v.extend(agent.changed(&new.agent));
        v.extend(system.changed(&new.system));
        v.extend(agentx.changed(&new.agentx));
        v.extend(notify.restart_keys(&new.notify, notifying));
        v.extend(metrics.changed(&new.metrics));
        v.extend(sm.changed(&new.sm));
        v.extend(requests.changed(&new.requests));
        v
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

/// `node_contexts`: what the community and user shorthands get in the
/// node contexts (issue 39).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeContexts {
    /// `"all"` (the default): every node context, with the views and write
    /// access they have in the default context.
    #[default]
    All,
    /// `"none"`: node contexts are served, but only configured `[[access]]`
    /// entries reach them.
    None,
    /// `"off"`: no node contexts at all (every context name but "" is
    /// unknown).
    Off,
}

impl NodeContexts {
    /// The key's value as written in the file.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(NodeContexts::All),
            "none" => Ok(NodeContexts::None),
            "off" => Ok(NodeContexts::Off),
            _ => Err(format!("{s:?}: expected \"all\", \"none\" or \"off\"")),
        }
    }

    /// The contexts the shorthands' access entries govern.
    pub fn shorthand_context(self) -> snmp::vacm::ContextMatch {
        match self {
            NodeContexts::All => snmp::vacm::ContextMatch::all(),
            NodeContexts::None | NodeContexts::Off => snmp::vacm::ContextMatch::default(),
        }
    }
}
