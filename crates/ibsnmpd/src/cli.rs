//! Command line: the agent's flags and the `dump` / `topology` / `ctl` /
//! `health` subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// SNMP agent for InfiniBand fabrics.
///
/// Without a subcommand, runs the agent. Flags override the config file.
#[derive(Debug, Parser)]
#[command(name = "ibsnmpd", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub run: RunArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags of the agent itself (no subcommand).
#[derive(Debug, Default, Args)]
pub struct RunArgs {
    /// UDP address to listen on, ADDR:PORT or [IPV6]:PORT (repeatable;
    /// default 127.0.0.1:1161).
    #[arg(long = "listen", value_name = "ADDR:PORT")]
    pub listen: Vec<String>,

    /// Where fabric snapshots come from: sim, sim:FILE, umad[:CA[:PORT]],
    /// sysfs[:ROOT] (default sim).
    #[arg(long, value_name = "SPEC")]
    pub source: Option<String>,

    /// TOML configuration file (keys mirror snmpd.conf; see docs/config.md).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Read-only community, accepted from any source address (replaces the
    /// config file's rocommunity entries; default public).
    #[arg(long, value_name = "NAME")]
    pub community: Option<String>,

    /// Read-write community, accepted from any source address (replaces the
    /// config file's rwcommunity entries; default none: no write access).
    #[arg(long = "rw-community", value_name = "NAME")]
    pub rw_community: Option<String>,

    /// Directory for persisted state (writable objects set over SNMP).
    #[arg(long = "state-dir", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Log filter: error, warn, info, debug, trace, or tracing directives.
    #[arg(long = "log-level", value_name = "L")]
    pub log_level: Option<String>,

    /// Seconds between fabric sweeps (fractions allowed; default 10).
    #[arg(long = "sweep-interval", value_name = "SECONDS")]
    pub sweep_interval: Option<String>,

    /// The node that is "this system" for IF-MIB: node description or GUID.
    #[arg(long = "local-node", value_name = "NAME|GUID")]
    pub local_node: Option<String>,

    /// Cap on GetBulk max-repetitions (default 100).
    #[arg(long = "max-repetitions", value_name = "N")]
    pub max_repetitions: Option<u32>,

    /// Unix socket for operator commands (link flaps and error bursts on
    /// the simulated fabric, sweeps on demand; see `ibsnmpd ctl`). Mode 0600.
    #[arg(long = "control-socket", value_name = "PATH")]
    pub control_socket: Option<PathBuf>,

    /// Serve the InfiniBand MIBs as an AgentX subagent of the master agent at
    /// ADDR (snmpd.conf's agentXSocket syntax: a Unix socket path, default
    /// /var/agentx/master, or tcp:HOST:PORT). Without --listen, no UDP port
    /// is opened.
    #[arg(long = "agentx", value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub agentx: Option<String>,
    /// Send SNMPv2c traps to HOST[:PORT] (default port 162; repeatable;
    /// added to the config file's trap2sink entries, community from
    /// trapcommunity, default public).
    #[arg(long = "trap2sink", value_name = "HOST[:PORT]")]
    pub trap2sink: Vec<String>,
    /// Serve Prometheus metrics (HTTP GET /metrics) on ADDR:PORT (default
    /// off; see docs/metrics.md).
    #[arg(long = "metrics", value_name = "ADDR:PORT")]
    pub metrics: Option<String>,

    /// infiniband-diags node-name-map (`0xGUID "name"` lines): names that
    /// replace node descriptions everywhere; reloaded on SIGHUP.
    #[arg(long = "node-name-map", value_name = "FILE")]
    pub node_name_map: Option<PathBuf>,
}

/// Default seconds a control socket client waits for the answer.
pub const CTL_TIMEOUT_SECS: f64 = 60.0;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Take one sweep of a source, print it and exit.
    Dump(DumpArgs),
    /// Generate topology files (fat-tree), or hold the fabric against its
    /// cabling plan (check: exit 1 when it differs, docs/topology.md).
    #[command(subcommand)]
    Topology(TopologyCommand),
    /// Check the routes the Subnet Manager programmed: every route from
    /// every switch to every end port through the forwarding tables
    /// (docs/routing.md): exit 0 clean, 1 findings, 2 cannot read.
    #[command(subcommand)]
    Routes(RoutesCommand),
    /// Send a command to a running agent's control socket and print the answer.
    Ctl(CtlArgs),
    /// Report the fabric's health: links below their speed or width, error
    /// hot spots, flapping, congestion, ports that went down, counters
    /// someone cleared, the SMs and the sweep (docs/health.md); from two
    /// sweeps of a source, or from a running agent (--socket).
    Health(HealthArgs),
    /// Print the man page (roff) generated from this command line:
    /// ibsnmpd(8), or with --config ibsnmpd.toml(5).
    #[command(hide = true)]
    Man {
        /// The configuration file's page, ibsnmpd.toml(5).
        #[arg(long)]
        config: bool,
    },
}

#[derive(Debug, Args)]
pub struct CtlArgs {
    /// The agent's --control-socket.
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,

    /// Seconds to wait for the answer.
    #[arg(long, value_name = "SECONDS", default_value_t = CTL_TIMEOUT_SECS)]
    pub timeout: f64,

    /// The command: link-flap NODE PORT [SECONDS], error-burst NODE PORT
    /// COUNT, sweep, status, health (one JSON line) or help.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true,
          allow_hyphen_values = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Where a subcommand's sweeps come from, how they are logged and named
/// (dump, health, topology check).
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Source to sweep: sim, sim:FILE, umad[:CA[:PORT]], sysfs[:ROOT].
    #[arg(long, value_name = "SPEC", default_value = "sim")]
    pub source: String,

    /// Log filter for the sweeps' messages (stderr).
    #[arg(long = "log-level", value_name = "L", default_value = "warn")]
    pub log_level: String,

    /// infiniband-diags node-name-map: names replace node descriptions.
    #[arg(long = "node-name-map", value_name = "FILE")]
    pub node_name_map: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = DumpFormat::Ibnetdiscover)]
    pub format: DumpFormat,

    /// Also read every other node's PMA detail attributes (umad source):
    /// PortRcvErrorDetails, PortXmitDiscardDetails, PortFlowCtlCounters and
    /// the per-VL counters, which the agent reads only for the /metrics
    /// families that serve them: up to six more MADs a port.
    #[arg(long = "remote-details")]
    pub remote_details: bool,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,

    /// Ask the running agent at this --control-socket instead of sweeping a
    /// source: its last published sweep, rates over its [health] window.
    #[arg(long, value_name = "PATH",
          conflicts_with_all = ["source", "interval", "node_name_map"])]
    pub socket: Option<PathBuf>,

    /// Seconds between the two sweeps the rates are taken over.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub interval: f64,

    /// Output format: text (one line per finding) or json (every port).
    #[arg(long, value_enum, default_value_t = HealthFormat::Text)]
    pub format: HealthFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HealthFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DumpFormat {
    /// What `ibnetdiscover` prints.
    Ibnetdiscover,
    /// The snapshot as JSON (schema in docs/dump-json.md).
    Json,
}

#[derive(Debug, Subcommand)]
pub enum TopologyCommand {
    /// Write a fat tree in ibnetdiscover/ibsim format.
    FatTree(FatTreeArgs),
    /// Hold the fabric against its cabling plan (docs/topology.md): exit 0
    /// when it matches, 1 when it does not, 2 on errors.
    Check(TopologyCheckArgs),
}

#[derive(Debug, Subcommand)]
pub enum RoutesCommand {
    /// Walk every route of one sweep's forwarding tables: UNREACHABLE,
    /// BLACK HOLE, LOOP, UNBALANCED (docs/routing.md); exit 0 clean, 1
    /// findings, 2 cannot read.
    Check(RoutesCheckArgs),
}

#[derive(Debug, Args)]
pub struct RoutesCheckArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,

    /// A leaf is UNBALANCED when its uplinks' shares of the destinations
    /// routed up differ by more than this, as (max - min) / mean.
    #[arg(long = "max-spread", value_name = "RATIO", default_value_t = 0.5)]
    pub max_spread: f64,

    /// Output format: text (a summary, then one line per finding) or json.
    #[arg(long, value_enum, default_value_t = HealthFormat::Text)]
    pub format: HealthFormat,
}

#[derive(Debug, Args)]
pub struct TopologyCheckArgs {
    /// The plan: ibnetdiscover (ibsim "net"), `ibnetdiscover -p` or
    /// iblinkinfo output of a known-good fabric (`ibsnmpd dump` too), or
    /// nodes by name only (the "net" short form, an ibdiagnet topology
    /// file); the format is told from the content.
    #[arg(long, value_name = "FILE")]
    pub expected: PathBuf,

    #[command(flatten)]
    pub sweep: SweepArgs,

    /// Output format: text (one line per difference) or json.
    #[arg(long, value_enum, default_value_t = HealthFormat::Text)]
    pub format: HealthFormat,
}

#[derive(Debug, Args)]
pub struct FatTreeArgs {
    /// Number of host channel adapters.
    #[arg(long, value_name = "N")]
    pub hosts: usize,

    /// Switch radix (ports per switch).
    #[arg(long, value_name = "R", default_value_t = 36)]
    pub radix: u8,

    /// Switch levels (2 or 3).
    #[arg(long, value_name = "2|3", default_value_t = 2,
          value_parser = clap::value_parser!(u8).range(2..=3))]
    pub levels: u8,

    /// Output file (default: stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}
