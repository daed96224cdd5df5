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

/// The effective settings after file and flags are merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub listen: Vec<SocketAddr>,
    pub source: String,
    /// Where `source` was given, for errors (`--source` or
    /// `FILE:LINE: source`).
    pub source_origin: String,
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
    /// In AgentX mode, register the node contexts with the master
    /// (`agentx_node_contexts`, default true; docs/agentx.md "Node contexts").
    pub agentx_node_contexts: bool,
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
    pub monitors: Vec<mibs::modules::disman_event::Trigger>,
    /// The cabling plan (`[topology] expected`, docs/topology.md).
    pub topology_expected: Option<PathBuf>,
    /// A leaf's uplink spread above which the agent's route check calls
    /// it unbalanced (`[routes] max_spread`, docs/routing.md).
    pub routes_max_spread: f64,
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
    /// `node_contexts`: whether every node of the fabric is served as an
    /// SNMP context, and whether the community and user shorthands reach
    /// those contexts (docs/contexts.md).
    pub node_contexts: NodeContexts,
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
