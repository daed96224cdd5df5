//! The configuration's keys, one table, declared here: ibsnmpd.toml(5)
//! is made from it ([`crate::commands::man::config`]), the loader names a misplaced
//! top-level key from it, and tests check that it lists exactly the keys
//! the loader accepts and that docs/config.md's "Keys" table says the
//! same, so the page, the docs and the parser cannot drift.

/// One row: the key (with its `[table]`), its flag, default and meaning,
/// as written in the docs (Markdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub key: &'static str,
    pub flag: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

impl Key {
    /// The `[table]` or `[[table]]` names of the row (without brackets).
    pub fn tables(&self) -> impl Iterator<Item = &'static str> {
        names(self.key).filter_map(|n| {
            n.strip_prefix('[')
                .map(|t| t.trim_start_matches('[').trim_end_matches(']'))
        })
    }

    /// The top-level keys the row names (none when it is a table's).
    pub fn top_level(&self) -> impl Iterator<Item = &'static str> {
        let in_table = self.key.trim_start().starts_with("`[");
        names(self.key).filter(move |n| !in_table && !n.starts_with('['))
    }
}

/// The backquoted names of a cell.
fn names(cell: &'static str) -> impl Iterator<Item = &'static str> {
    cell.split('`').skip(1).step_by(2)
}

/// Every row of the table, in the docs' order.
pub fn table() -> &'static [Key] {
    TABLE
}

/// Whether `name` is a key of the file's top level.
pub fn is_top_level(name: &str) -> bool {
    table()
        .iter()
        .any(|k| k.top_level().any(|n| n == name) || k.tables().any(|t| t == name))
}

/// The rows: key (with its `[table]`), flag, default, meaning (Markdown,
/// as docs/config.md's "Keys" table shows them).
const TABLE: &[Key] = &[
    Key {
        key: "`agentaddress`",
        flag: "`--listen ADDR:PORT` (repeatable)",
        default: "`127.0.0.1:1161`",
        meaning: "UDP addresses to serve; a string (comma-separated) or a list",
    },
    Key {
        key: "`[[rocommunity]]` `community`, `source`",
        flag: "`--community NAME`",
        default: "`public` from any source",
        meaning: "read-only communities",
    },
    Key {
        key: "`[[rwcommunity]]` `community`, `source`",
        flag: "`--rw-community NAME`",
        default: "none: no write access",
        meaning: "read-write communities",
    },
    Key {
        key: "`admin_writable_below_authpriv`",
        flag: "-",
        default: "`false`",
        meaning: "`true` lets any writer the views allow (read-write communities, authNoPriv users) write SNMP-USER-BASED-SM-MIB, SNMP-VIEW-BASED-ACM-MIB, SNMP-TARGET-MIB and SNMP-NOTIFICATION-MIB, as net-snmp does; by default only SNMPv3 authPriv requests may (docs/snmpv3.md, \"Who may write the administrative tables\"). Community strings and targets that would carry one stay authPriv-only",
    },
    Key {
        key: "`syscontact`",
        flag: "-",
        default: "empty",
        meaning: "sysContact.0 default",
    },
    Key {
        key: "`sysname`",
        flag: "-",
        default: "host name",
        meaning: "sysName.0 default",
    },
    Key {
        key: "`syslocation`",
        flag: "-",
        default: "empty",
        meaning: "sysLocation.0 default",
    },
    Key {
        key: "`persistentdir` (`state_dir`)",
        flag: "`--state-dir DIR`",
        default: "`$STATE_DIRECTORY`, else `$XDG_STATE_HOME/ibsnmpd`, else `~/.local/state/ibsnmpd`",
        meaning: "persisted state",
    },
    Key {
        key: "`source`",
        flag: "`--source SPEC`",
        default: "`sim`",
        meaning: "where snapshots come from",
    },
    Key {
        key: "`sweep_interval`",
        flag: "`--sweep-interval SECONDS`",
        default: "`10`",
        meaning: "seconds between sweeps (0.1 <= s <= 86400, fractions allowed; shorter would keep a core busy sweeping)",
    },
    Key {
        key: "`local_node`",
        flag: "`--local-node NAME\\|GUID`",
        default: "first node of the topology",
        meaning: "the node IF-MIB describes",
    },
    Key {
        key: "`max_repetitions`",
        flag: "`--max-repetitions N`",
        default: "`100`",
        meaning: "GetBulk max-repetitions cap (>= 1)",
    },
    Key {
        key: "`log_level`",
        flag: "`--log-level L`",
        default: "`info`",
        meaning: "log filter (stderr)",
    },
    Key {
        key: "`control_socket`",
        flag: "`--control-socket PATH`",
        default: "none",
        meaning: "Unix socket for operator commands: link flaps, error bursts, sweeps (docs/usage.md)",
    },
    Key {
        key: "`trapsink`",
        flag: "-",
        default: "none",
        meaning: "SNMPv1 trap receivers: `\"HOST[:PORT] [COMMUNITY]\"` strings or tables `{ host, port, community }` (port 162) (docs/notifications.md)",
    },
    Key {
        key: "`trap2sink`",
        flag: "`--trap2sink HOST[:PORT]` (repeatable, added to the file's)",
        default: "none",
        meaning: "SNMPv2c trap receivers, same forms",
    },
    Key {
        key: "`informsink`",
        flag: "-",
        default: "none",
        meaning: "SNMPv2c inform receivers, same forms plus `timeout` (seconds, default 1) and `retries` (default 3)",
    },
    Key {
        key: "`[[trapsess]]`",
        flag: "-",
        default: "none",
        meaning: "SNMPv3 trap receivers: `host` (`HOST[:PORT]`), `port`, `user` (a `[[user]]`), `level` (`noauth`/`auth`/`priv`, default `priv`), `inform` (true: InformRequests after discovering the receiver's engine, default false), `timeout`/`retries` (informs only, defaults as `informsink`); docs/notifications.md",
    },
    Key {
        key: "`trapcommunity`",
        flag: "-",
        default: "`public`",
        meaning: "community of sinks that name none",
    },
    Key {
        key: "`authtrapenable`",
        flag: "-",
        default: "`2`",
        meaning: "snmpEnableAuthenTraps default: 1 enabled, 2 disabled (a value Set over SNMP wins)",
    },
    Key {
        key: "`notification_rate_limit`",
        flag: "-",
        default: "`10`",
        meaning: "storm control: notifications per interval per source object (0: no limit)",
    },
    Key {
        key: "`notification_rate_interval`",
        flag: "-",
        default: "`60`",
        meaning: "storm control interval, seconds",
    },
    Key {
        key: "`notification_queue`",
        flag: "-",
        default: "`1024`",
        meaning: "notifications waiting to be sent before new ones are dropped (counted)",
    },
    Key {
        key: "`link_integrity_threshold`",
        flag: "-",
        default: "`1`",
        meaning: "LocalLinkIntegrityErrors increase in one sweep that raises ibSmTrapLinkIntegrityThreasholdReached (0: never)",
    },
    Key {
        key: "`buffer_overrun_threshold`",
        flag: "-",
        default: "`1`",
        meaning: "ExcessiveBufferOverrunErrors increase in one sweep that raises ibSmTrapBufferOverrunThresholdReached (0: never)",
    },
    Key {
        key: "`agentx`",
        flag: "`--agentx [ADDR]`",
        default: "none",
        meaning: "AgentX subagent of the master at ADDR (`agentXSocket` syntax; docs/agentx.md)",
    },
    Key {
        key: "`agentx_if_mib`",
        flag: "-",
        default: "`false`",
        meaning: "in AgentX mode, also put the IB ports into the master's ifTable/ifXTable",
    },
    Key {
        key: "`agentx_node_contexts`",
        flag: "-",
        default: "`true`",
        meaning: "in AgentX mode, register every node context with the master (docs/agentx.md \"Node contexts\"; false: node contexts only on the agent's own port)",
    },
    Key {
        key: "`agentx_if_index_offset`",
        flag: "-",
        default: "`1000000` with `agentx_if_mib`",
        meaning: "added to every ifIndex",
    },
    Key {
        key: "`metrics_listen`",
        flag: "`--metrics ADDR:PORT`",
        default: "none: off",
        meaning: "Prometheus endpoint, HTTP GET /metrics (docs/metrics.md)",
    },
    Key {
        key: "`metrics_max_connections`",
        flag: "-",
        default: "`64`",
        meaning: "connections the /metrics endpoint holds at once; more are closed at once (docs/metrics.md)",
    },
    Key {
        key: "`metrics_max_connections_per_client`",
        flag: "-",
        default: "`8`",
        meaning: "connections one client address may hold on /metrics (docs/metrics.md)",
    },
    Key {
        key: "`metrics_max_renders`",
        flag: "-",
        default: "half the cores, at least 1",
        meaning: "/metrics scrapes rendering at once (docs/metrics.md)",
    },
    Key {
        key: "`metrics_render_queue`",
        flag: "-",
        default: "`8`",
        meaning: "/metrics scrapes waiting for a render slot (at most 5 s); past it, 503 with Retry-After (0: no waiting)",
    },
    Key {
        key: "`metrics_stall_timeout`",
        flag: "-",
        default: "`15`",
        meaning: "seconds a /metrics connection may go without progress (slow reader, idle keep-alive) before it is closed",
    },
    Key {
        key: "`metrics_families`",
        flag: "-",
        default: "`[\"data\", \"errors\", \"state\", \"health\"]`",
        meaning: "the per-port families a scrape carries, by group: `data`, `errors`, `state`, `health` (22 samples a healthy port), opt-in `casts` (unicast and multicast packets), `detail`, `vl` (docs/metrics.md \"Families\")",
    },
    Key {
        key: "`node_name_map`",
        flag: "`--node-name-map FILE`",
        default: "none",
        meaning: "infiniband-diags node-name-map: `0xGUID \"name\"` per line, `#` comments; replaces node descriptions everywhere; reloaded on SIGHUP",
    },
    Key {
        key: "`[umad]` `window`",
        flag: "-",
        default: "`512`",
        meaning: "MADs outstanding at once (1..=4096; capped at 256 under umad2sim)",
    },
    Key {
        key: "`[umad]` `timeout`",
        flag: "-",
        default: "`0.5`",
        meaning: "seconds per MAD attempt (0 < s <= 60)",
    },
    Key {
        key: "`[umad]` `retries`",
        flag: "-",
        default: "`3`",
        meaning: "retries after the first attempt (0..=20)",
    },
    Key {
        key: "`[umad]` `sm_key`",
        flag: "-",
        default: "`\"0x1\"`",
        meaning: "SM_Key presented to the SA to read partition tables; `\"none\"` skips them",
    },
    Key {
        key: "`[umad]` `details`",
        flag: "-",
        default: "all six",
        meaning: "detail attributes polled from PMAs: `rcv_error`, `xmit_discard`, `flow_ctl`, `vl_op_packets`, `vl_op_data`, `vl_xmit_wait` (`[]`: counters only). The local node's ports get them all (IF-MIB, IB-IF-MIB); other nodes' ports only those a `metrics_families` group serves (`detail`: the first three, `vl`: the last three) when `metrics_listen` is set (docs/umad.md \"Detail attributes and tables\")",
    },
    Key {
        key: "`[umad]` `lft`",
        flag: "-",
        default: "`true`",
        meaning: "read switch linear forwarding tables",
    },
    Key {
        key: "`[umad]` `topology_every`",
        flag: "-",
        default: "`30`",
        meaning: "every node's part of the topology (NodeInfo, NodeDescription, SwitchInfo, PortInfo, links) is checked once every Nth sweep, a slice of the nodes each sweep (1..=1000; 1: a full discovery every sweep). Sweeps poll the PMAs of the last topology and discover, in the same sweep, only on a sign of change: a check saw one, a PortInfo of our port or of a port that was not Active moved, a LinkDownedCounter moved, a PMA did not answer, SA Reports (docs/umad.md \"Steady sweeps\", \"The periodic check\")",
    },
    Key {
        key: "`[umad]` `quick_start`",
        flag: "-",
        default: "`true`",
        meaning: "the first sweep publishes the topology and every port's PortCounters/PortCountersExtended only; other nodes' detail attributes, forwarding tables and P_Key tables follow in the second sweep and are absent until then (`ibsnmpd dump` and `health` read everything at once)",
    },
    Key {
        key: "`[umad]` `tables_every`",
        flag: "-",
        default: "`30`",
        meaning: "read forwarding and P_Key tables again every Nth sweep even when the subnet did not change (1..=1000; docs/umad.md)",
    },
    Key {
        key: "`[umad]` `m_key`",
        flag: "-",
        default: "`\"0x0\"`",
        meaning: "M_Key carried by the SMPs that set attributes (PortInfo writes, `port_writes`)",
    },
    Key {
        key: "`[umad]` `detail_every`",
        flag: "-",
        default: "`30`",
        meaning: "read every port in full every Nth sweep: each port's PortCounters (no switch sum standing for them) and the wanted detail attributes whether or not their summary counter moved (1..=1000; docs/umad.md \"Detail attributes and tables\")",
    },
    Key {
        key: "`[umad]` `switch_sums`",
        flag: "-",
        default: "`true`",
        meaning: "ask each switch whose PMA has AllPortSelect for the sum of its ports' PortCounters first, and read its ports' PortCounters only when an error counter of the sum moved (PortCountersExtended is still read per port; those ports' 32-bit data and packet counters are the 64-bit ones saturated at 0xFFFFFFFF); docs/umad.md",
    },
    Key {
        key: "`[umad]` `sysfs_root`",
        flag: "-",
        default: "`/`",
        meaning: "where the sysfs libibumad reads is found, as the agent reads it to say what is missing when the source cannot open (libibumad itself always reads `/sys`); for tests (docs/install.md, \"Without InfiniBand hardware\")",
    },
    Key {
        key: "`[umad]` `subscribe_traps`",
        flag: "-",
        default: "`false`",
        meaning: "subscribe to traps (InformInfo) at the SM",
    },
    Key {
        key: "`[umad]` `reset_threshold`",
        flag: "-",
        default: "unset: never",
        meaning: "reset a PMA's 32-bit data/packet counters past this fraction of their range (0 < f < 1), on PMAs without PortCountersExtended",
    },
    Key {
        key: "`[health]` `window`",
        flag: "-",
        default: "`600`",
        meaning: "seconds the health rates and flap counts are taken over (10..=86400; docs/health.md)",
    },
    Key {
        key: "`[health]` `max_symbol_ber`",
        flag: "-",
        default: "`1e-12`",
        meaning: "symbol errors per bit the link carried (its data rate over the window, idle time included) above which a port is an error hot spot",
    },
    Key {
        key: "`[health]` `max_link_recovery_per_hour`",
        flag: "-",
        default: "`6`",
        meaning: "LinkErrorRecovery events per hour, counted over at least the window, above which a port is an error hot spot (6: a second recovery within the default 600 s window)",
    },
    Key {
        key: "`[health]` `flap_count`",
        flag: "-",
        default: "`2`",
        meaning: "LinkDowned increments within the window that make a port flapping",
    },
    Key {
        key: "`[health]` `max_xmit_wait_ratio`",
        flag: "-",
        default: "`0.05`",
        meaning: "share of transmit time spent waiting for credits above which a port is congested (0 < r < 1)",
    },
    Key {
        key: "`[topology]` `expected`",
        flag: "-",
        default: "none",
        meaning: "the cabling plan the fabric is held against every sweep (ibnetdiscover's format, `ibnetdiscover -p` or iblinkinfo output, or an ibdiagnet topology file; read within limits, reloaded on SIGHUP; docs/topology.md)",
    },
    Key {
        key: "`[routes]` `max_spread`",
        flag: "-",
        default: "`0.5`",
        meaning: "a leaf switch whose uplinks' shares of the destinations routed up differ by more than this, as (max - min) / mean, is UNBALANCED in the agent's route check of every sweep's forwarding tables (0 or more; reloaded on SIGHUP; docs/routing.md)",
    },
    Key {
        key: "`max_getbulk_responses`",
        flag: "-",
        default: "`100`",
        meaning: "cap on the varbinds of one GetBulk response beyond its first repetition (net-snmp's maxGetbulkResponses)",
    },
    Key {
        key: "`engine_id`",
        flag: "-",
        default: "generated once, kept in the state directory",
        meaning: "snmpEngineID in hex (docs/snmpv3.md)",
    },
    Key {
        key: "`engine_id_type`",
        flag: "-",
        default: "none",
        meaning: "build snmpEngineID as net-snmp's engineIDType does: `\"ipv4\"`, `\"ipv6\"`, `\"mac\"` (from `engine_id_nic`) or `\"text\"` (from `engine_id_text`); not with `engine_id` (docs/snmpv3.md)",
    },
    Key {
        key: "`engine_id_nic`",
        flag: "-",
        default: "the first interface with such an address",
        meaning: "the interface `engine_id_type` takes the address from",
    },
    Key {
        key: "`engine_id_text`",
        flag: "-",
        default: "none",
        meaning: "the text of a `\"text\"` engine ID, 1-27 octets",
    },
    Key {
        key: "`[[user]]` `name`, `auth`, `auth_pass`, `priv`, `priv_pass`",
        flag: "-",
        default: "none",
        meaning: "SNMPv3 USM users (docs/snmpv3.md)",
    },
    Key {
        key: "`[[rouser]]`, `[[rwuser]]` `user`, `level`, `oid`",
        flag: "-",
        default: "none",
        meaning: "what each SNMPv3 user may do (docs/snmpv3.md)",
    },
    Key {
        key: "`[[view]]`, `[[group]]`, `[[access]]`",
        flag: "-",
        default: "none",
        meaning: "VACM views, groups and access entries (docs/snmpv3.md)",
    },
    Key {
        key: "`sim_partitions`",
        flag: "—",
        default: "none",
        meaning: "the sim source's partitions: an OpenSM partitions.conf-style file (docs/ib-sm.md)",
    },
    Key {
        key: "`sim_services`",
        flag: "—",
        default: "none",
        meaning: "the sim source's SA services, one per line: `NAME SERVICE_ID PORT_GUID [pkey=..] [lease=..]` (docs/ib-sm.md)",
    },
    Key {
        key: "`opensm_conf`",
        flag: "—",
        default: "none",
        meaning: "OpenSM's opensm.conf, read at each publish for ibSmConfigTable (docs/ib-sm.md)",
    },
    Key {
        key: "`[opensm]` `conf`",
        flag: "—",
        default: "none",
        meaning: "the opensm.conf of the OpenSM the agent steers (required in the section; also read as `opensm_conf`); docs/ib-sm.md \"Steering OpenSM\"",
    },
    Key {
        key: "`[opensm]` `console`",
        flag: "—",
        default: "none",
        meaning: "`HOST:PORT` of OpenSM's console (`--console loopback --console-port N`): `priority N`, `resweep heavy`",
    },
    Key {
        key: "`[opensm]` `pid_file`",
        flag: "—",
        default: "none",
        meaning: "OpenSM's pid file: SIGHUP when there is no console",
    },
    Key {
        key: "`node_contexts`",
        flag: "—",
        default: "`\"all\"`",
        meaning: "every node of the fabric as an SNMP context (its GUID, its unique name): `\"all\"` gives communities and users the same access there as in the default context, `\"none\"` only configured `[[access]]` entries with a context match reach them, `\"off\"` serves none; restart only (docs/contexts.md)",
    },
    Key {
        key: "`fabric_link_traps`",
        flag: "—",
        default: "`false`",
        meaning: "linkUp/linkDown for every port of the fabric, with that node's ifIndex and, for SNMPv3 sinks, its contextName; off: the local node's ports only; restart only (docs/contexts.md)",
    },
    Key {
        key: "`port_writes`",
        flag: "—",
        default: "`false`",
        meaning: "let managers set ibSmPortInfoTable's safe columns (Set(PortInfo) SMPs; docs/ib-sm.md \"Port writes\")",
    },
    Key {
        key: "`[opensm]` `partitions`",
        flag: "—",
        default: "none",
        meaning: "OpenSM's partitions.conf: ibSmPartitionConfig operations edit it (docs/ib-sm.md)",
    },
    Key {
        key: "`[opensm]` `restart`",
        flag: "—",
        default: "none",
        meaning: "a command (`sh -c`) that restarts OpenSM, run after Sets of options it reads only at start (ResponseTimeout, DefaultLMC)",
    },
    Key {
        key: "`[opensm]` `start`, `stop`",
        flag: "—",
        default: "none",
        meaning: "commands (`sh -c`) that start and stop OpenSM: ibSmConfigAdminSMState enable(1) / disable(2)",
    },
    Key {
        key: "`request_session_timeout`",
        flag: "—",
        default: "300",
        meaning: "seconds: IB-SM-MIB request sessions (path, multipath, trace) no Set touched for this long are aged out with their results (docs/ib-sm.md)",
    },
    Key {
        key: "`request_sessions_max`",
        flag: "—",
        default: "256",
        meaning: "most live request sessions per request table; a create past it gets resourceUnavailable (docs/ib-sm.md)",
    },
    Key {
        key: "`request_result_rows_max`",
        flag: "—",
        default: "32768",
        meaning: "result rows all request sessions hold together; a request whose answer would pass it goes notInService (docs/ib-sm.md)",
    },
    Key {
        key: "`secrets`",
        flag: "—",
        default: "false",
        meaning: "IB-SM-MIB's SM_Key and M_Key columns read their values (at authPriv only; below it they are outside every view); off, they read as zeros (docs/ib-sm.md)",
    },
    Key {
        key: "`[[monitor]]` `name`",
        flag: "—",
        default: "required",
        meaning: "mteTriggerName, 1 to 32 characters, unique (docs/health.md \"Threshold monitors\")",
    },
    Key {
        key: "`[[monitor]]` `oid`",
        flag: "—",
        default: "required",
        meaning: "the object sampled: a numeric OID or a name of the shipped MIBs (`IB-PM-MIB::pmPortCountersSymbolErrors`, `ifOperStatus.1`)",
    },
    Key {
        key: "`[[monitor]]` `existence`",
        flag: "—",
        default: "—",
        meaning: "existence test: `\"present\"`, `\"absent\"`, `\"changed\"` or a list of them (net-snmp's `OID`, `! OID`, `!= OID`)",
    },
    Key {
        key: "`[[monitor]]` `boolean`",
        flag: "—",
        default: "—",
        meaning: "boolean test `{ op = \"!=\", value = 1, startup = true }`; op one of `!= == < <= > >=`",
    },
    Key {
        key: "`[[monitor]]` `threshold`",
        flag: "—",
        default: "—",
        meaning: "threshold test `{ rising = MAX, falling = MIN, startup = \"rising\" }` (startup `rising`, `falling` or `risingOrFalling`); exactly one of the three tests",
    },
    Key {
        key: "`[[monitor]]` `delta`",
        flag: "—",
        default: "false",
        meaning: "test the difference between successive samples (net-snmp's `-D`)",
    },
    Key {
        key: "`[[monitor]]` `wildcard`",
        flag: "—",
        default: "true",
        meaning: "every instance under `oid`; false: `oid` is one instance (net-snmp's `-I`)",
    },
    Key {
        key: "`[[monitor]]` `frequency`",
        flag: "—",
        default: "600",
        meaning: "seconds between samples (net-snmp's `-r`)",
    },
    Key {
        key: "`[[monitor]]` `objects`",
        flag: "—",
        default: "none",
        meaning: "extra varbinds, each with the fired instance's suffix when wildcarded (net-snmp's `-o`)",
    },
    Key {
        key: "`[[monitor]]` `exact_objects`",
        flag: "—",
        default: "none",
        meaning: "extra varbinds used as given (net-snmp's `-i`)",
    },
    Key {
        key: "`[[monitor]]` `comment`",
        flag: "—",
        default: "empty",
        meaning: "mteTriggerComment",
    },
    Key {
        key: "`[[monitor]]` `context`",
        flag: "—",
        default: "`\"\"`",
        meaning: "the context sampled (mteTriggerContextName): a node's context, `\"leaf01\"` or its GUID (docs/contexts.md); the default context when unset",
    },
    Key {
        key: "`[[monitor]]` `contexts`",
        flag: "—",
        default: "none",
        meaning: "every node context, `\"*\"`, or those whose name starts with a prefix, `\"leaf*\"` (mteTriggerContextNameWildcard): each node once, by its GUID context; the notification names the instance's context (mteHotContextName, and the contextName for SNMPv3 sinks); not with `context`",
    },
];
