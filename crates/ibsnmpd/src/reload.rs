//! SIGHUP: read the configuration file and the node-name-map again and apply
//! what can change while the agent runs, keeping the snapshot and sockets.
//!
//! Applied at once: the communities (the next request sees them), the
//! node-name-map (a sweep is asked for, so the names show within one
//! sweep), the cabling plan (`[topology] expected`, held against the next
//! sweep), the route check's `[routes] max_spread` (the next snapshot's
//! check), the notification sinks (trapsink, trap2sink, informsink,
//! `[[trapsess]]`, trapcommunity: the next notification goes to them and
//! snmpTargetAddrTable shows them as `permanent` rows), the threshold
//! notifications' thresholds, `authtrapenable` (snmpEnableAuthenTraps'
//! default), the `[health]` checks (from the next
//! snapshot, their window starting again) and the `[[monitor]]` triggers
//! (sampling anew). Every other setting needs a restart: a
//! reload that changes any of them names them all in one warning line
//! ([`restart_keys`], which lists every field of [`Settings`], so a new
//! one cannot be forgotten). A file that no longer loads changes nothing.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use snmp::agent::CommunityTable;
use tracing::{info, warn};

use crate::config::{ConfigError, Settings};
use crate::fabric::FabricHandle;
use crate::metrics::AgentCounters;
use crate::nodemap::{NodeNameMap, SharedNodeNameMap};
use crate::traps::Traps;

/// Reads the settings as at startup (file and flags).
pub type LoadSettings = Box<dyn Fn() -> Result<Settings, ConfigError> + Send + Sync>;

pub struct Reloader {
    pub load: LoadSettings,
    /// The settings in force.
    pub current: Settings,
    pub communities: CommunityTable,
    pub names: SharedNodeNameMap,
    pub fabric: FabricHandle,
    pub counters: Arc<AgentCounters>,
    /// The notification layer whose sinks and thresholds a reload changes;
    /// it says warmStart (RFC 3418) after each applied reload.
    pub traps: Option<Traps>,
    /// Shows the configured sinks as SNMP-TARGET-MIB rows, and each new
    /// community table's groups in the VACM tables.
    pub controller: Arc<crate::controller::Controller>,
    /// The engine the VACM tables' user rows are made for.
    pub usm: Arc<snmp::usm::Usm>,
    /// The health checks' settings, read at each snapshot.
    pub health: crate::health::SharedHealthConfig,
    /// The DISMAN-EVENT-MIB triggers' task.
    pub monitors: crate::monitor::MonitorTask,
    /// The cabling plan in force (`[topology] expected`), read again.
    pub plan: crate::topology::SharedPlan,
    /// The route check's `[routes] max_spread`, read at each snapshot.
    pub routes_max_spread: crate::routes::SharedSpread,
}

impl Reloader {
    /// One reload; errors are logged and counted, the old settings stay.
    pub async fn reload(&mut self) {
        match self.try_reload().await {
            Ok(()) => {
                self.counters.reloads.fetch_add(1, Ordering::Relaxed);
                if let Some(t) = &self.traps {
                    t.warm_start();
                }
            }
            Err(e) => {
                self.counters
                    .reload_failures
                    .fetch_add(1, Ordering::Relaxed);
                warn!(error = %e, "SIGHUP: reload refused; the running settings stay");
            }
        }
    }

    async fn try_reload(&mut self) -> Result<(), String> {
        let new = (self.load)().map_err(|e| e.0)?;
        // Load everything before applying anything: all or nothing.
        let names = match &new.node_name_map {
            Some(p) => NodeNameMap::load(p)?,
            None => NodeNameMap::default(),
        };
        // Off the runtime's threads, within a time limit (a hung mount).
        let plan = crate::topology::load_plan_async(new.topology_expected.as_deref()).await?;
        let fixed = restart_keys(&self.current, &new, self.traps.is_some());
        if !fixed.is_empty() {
            warn!(
                keys = %fixed.join(", "),
                "SIGHUP: these settings change only on restart; running with the old values"
            );
        }
        for w in &new.warnings {
            warn!("{w}");
        }
        let communities = Arc::new(crate::config::agent_communities(&new.communities));
        crate::vacm_tables::reconfigure(&self.controller, &self.current, &self.usm, &communities)
            .await;
        self.communities.store(communities);
        self.plan.store(plan);
        let renamed = **self.names.load() != names;
        let count = names.len();
        self.names.store(Arc::new(names));
        if renamed {
            // The names show in the next snapshot: take it now.
            let fabric = self.fabric.clone();
            tokio::spawn(async move {
                let _ = fabric.sweep_now().await;
            });
        }
        if let Some(traps) = &self.traps {
            traps.reconfigure(&new.notify).await;
            let sinks = new.notify.sinks.clone();
            self.controller
                .update_runtime(|system| {
                    crate::targets::show_configured(system, &sinks);
                    true
                })
                .await;
        }
        if self.current.notify.auth_traps != new.notify.auth_traps {
            // snmpEnableAuthenTraps' default: a value Set over SNMP still wins.
            let enabled = new.notify.auth_traps;
            self.controller
                .update_runtime(|system| {
                    system.enable_authen_traps = enabled;
                    true
                })
                .await;
        }
        self.routes_max_spread.set(new.routes_max_spread);
        if **self.health.load() != new.health {
            self.health.store(Arc::new(new.health.clone()));
        }
        if self.current.monitors != new.monitors {
            // mteTriggerTable shows the new triggers as they start sampling.
            let monitors = Arc::new(mibs::disman_event::Monitors::new(new.monitors.clone()));
            let shown = Arc::clone(&monitors);
            self.controller
                .update_runtime(|system| {
                    system.monitors = shown;
                    true
                })
                .await;
            self.monitors.replace(monitors);
        }
        info!(
            communities = new.communities.len(),
            node_names = count,
            sinks = new.notify.sinks.len(),
            "SIGHUP: configuration reloaded"
        );
        // What a restart would apply stays as it runs now.
        let mut kept = self.current.clone();
        kept.communities = new.communities;
        kept.node_name_map = new.node_name_map;
        kept.health = new.health;
        kept.monitors = new.monitors;
        kept.notify.auth_traps = new.notify.auth_traps;
        if self.traps.is_some() {
            kept.notify.sinks = new.notify.sinks;
            kept.notify.inform_users = new.notify.inform_users;
            kept.notify.thresholds = new.notify.thresholds;
        }
        kept.topology_expected = new.topology_expected;
        kept.routes_max_spread = new.routes_max_spread;
        self.current = kept;
        Ok(())
    }
}

/// The settings that differ and cannot change at run time, named as in
/// the file (or the flag). Every field of [`Settings`] is here, either
/// compared or said to be applied by a reload, so a new setting must be
/// placed. `notifying`: a notification layer runs (without one, sinks
/// added need a restart).
fn restart_keys(old: &Settings, new: &Settings, notifying: bool) -> Vec<&'static str> {
    let Settings {
        listen,
        source,
        // Applied: the next request sees them.
        communities: _,
        state_dir,
        log_level,
        sweep_interval,
        local_node,
        // Where local_node came from: for errors only.
        local_node_origin: _,
        source_origin: _,
        max_repetitions,
        sys_contact,
        sys_name,
        sys_location,
        control_socket,
        agentx,
        agentx_if_mib,
        agentx_node_contexts,
        agentx_if_index_offset,
        notify,
        engine_id,
        users,
        vacm,
        max_getbulk_responses,
        // Logged again by the reload.
        warnings: _,
        metrics_listen,
        metrics_limits,
        metrics_families,
        // Applied: read again, a sweep asked for.
        node_name_map: _,
        umad,
        // Applied: the next snapshot's checks (their window starts again).
        health: _,
        // Applied: the old triggers stop, the new ones start sampling.
        monitors: _,
        // Applied: held against the next sweep.
        topology_expected: _,
        // Applied: the next snapshot's route check.
        routes_max_spread: _,
        secrets,
        sim_partitions,
        sim_services,
        opensm_conf,
        opensm,
        port_writes,
        node_contexts,
        request_session_timeout,
        request_sessions_max,
        request_result_rows_max,
        admin_writable_below_authpriv,
    } = old;
    let mut v = Vec::new();
    let mut check = |differs: bool, key: &'static str| {
        if differs {
            v.push(key);
        }
    };
    check(*listen != new.listen, "agentaddress/--listen");
    check(*source != new.source, "source");
    check(*state_dir != new.state_dir, "persistentdir");
    check(*log_level != new.log_level, "log_level");
    check(*sweep_interval != new.sweep_interval, "sweep_interval");
    check(*local_node != new.local_node, "local_node");
    check(*max_repetitions != new.max_repetitions, "max_repetitions");
    check(*sys_contact != new.sys_contact, "syscontact");
    check(*sys_name != new.sys_name, "sysname");
    check(*sys_location != new.sys_location, "syslocation");
    check(*control_socket != new.control_socket, "control_socket");
    check(*agentx != new.agentx, "agentx/--agentx");
    check(*agentx_if_mib != new.agentx_if_mib, "agentx_if_mib");
    check(
        *agentx_node_contexts != new.agentx_node_contexts,
        "agentx_node_contexts",
    );
    check(
        *agentx_if_index_offset != new.agentx_if_index_offset,
        "agentx_if_index_offset",
    );
    check(
        !notifying && notify.sinks != new.notify.sinks,
        "trapsink/trap2sink/informsink/[[trapsess]] (no notification layer running)",
    );
    check(
        notify.storm != new.notify.storm,
        "notification_rate_limit/notification_rate_interval",
    );
    check(notify.queue != new.notify.queue, "notification_queue");
    // The event task reads it once, at start.
    check(
        notify.fabric_link_traps != new.notify.fabric_link_traps,
        "fabric_link_traps",
    );
    check(
        !notifying && notify.thresholds != new.notify.thresholds,
        "link_integrity_threshold/buffer_overrun_threshold (no notification layer running)",
    );
    check(*engine_id != new.engine_id, "engine_id");
    // Keys are localized at start, for the engine ID of this start.
    check(*users != new.users, "[[user]]/[[rouser]]/[[rwuser]]");
    check(*vacm != new.vacm, "[[view]]/[[group]]/[[access]]");
    check(
        *max_getbulk_responses != new.max_getbulk_responses,
        "max_getbulk_responses",
    );
    check(*metrics_listen != new.metrics_listen, "metrics_listen");
    check(
        *metrics_limits != new.metrics_limits,
        "metrics_max_connections/metrics_max_connections_per_client/metrics_max_renders/metrics_render_queue/metrics_stall_timeout",
    );
    check(
        *metrics_families != new.metrics_families,
        "metrics_families",
    );
    // metrics_families also decides which detail attributes the umad source
    // reads (`remote_details`): named above, not again as [umad].
    let mut new_umad = new.umad.clone();
    new_umad.pma.remote_details = umad.pma.remote_details;
    check(*umad != new_umad, "[umad]");
    check(*secrets != new.secrets, "secrets");
    check(*sim_partitions != new.sim_partitions, "sim_partitions");
    check(*sim_services != new.sim_services, "sim_services");
    check(*opensm_conf != new.opensm_conf, "opensm_conf");
    check(*opensm != new.opensm, "[opensm]");
    check(*port_writes != new.port_writes, "port_writes");
    // The engine's access entries and its resolver are built at start.
    check(*node_contexts != new.node_contexts, "node_contexts");
    check(
        *request_session_timeout != new.request_session_timeout,
        "request_session_timeout",
    );
    check(
        *request_sessions_max != new.request_sessions_max,
        "request_sessions_max",
    );
    check(
        *request_result_rows_max != new.request_result_rows_max,
        "request_result_rows_max",
    );
    // The dispatcher's write rule is set at start.
    check(
        *admin_writable_below_authpriv != new.admin_writable_below_authpriv,
        "admin_writable_below_authpriv",
    );
    v
}
