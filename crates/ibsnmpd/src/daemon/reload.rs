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
//! ([`Settings::restart_keys`]: each part of the settings is typed
//! reloadable or restart-only and names every field of its own, so a new
//! one cannot be forgotten). A file that no longer loads changes nothing.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use snmp::agent::CommunityTable;
use tracing::{info, warn};

use crate::config::{ConfigError, Settings};
use crate::metrics::AgentCounters;
use crate::models::nodemap::{NodeNameMap, SharedNodeNameMap};
use crate::models::source_thread::FabricHandle;
use crate::services::traps::Traps;

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
    pub controller: Arc<crate::services::controller::Controller>,
    /// The engine the VACM tables' user rows are made for.
    pub usm: Arc<snmp::usm::Usm>,
    /// The health checks' settings, read at each snapshot.
    pub health: crate::models::fabric_health::SharedHealthConfig,
    /// The DISMAN-EVENT-MIB triggers' task.
    pub monitors: crate::services::triggers::MonitorTask,
    /// The cabling plan in force (`[topology] expected`), read again.
    pub plan: crate::models::cabling_plan::SharedPlan,
    /// The route check's `[routes] max_spread`, read at each snapshot.
    pub routes_max_spread: crate::models::route_check::SharedSpread,
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
        let names = match &new.checks.node_name_map {
            Some(p) => NodeNameMap::load(p)?,
            None => NodeNameMap::default(),
        };
        // Off the runtime's threads, within a time limit (a hung mount).
        let plan =
            crate::models::cabling_plan::load_plan_async(new.checks.topology_expected.as_deref())
                .await?;
        let fixed = self.current.restart_keys(&new, self.traps.is_some());
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
        crate::services::vacm_tables::reconfigure(
            &self.controller,
            &self.current,
            &self.usm,
            &communities,
        )
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
                    crate::services::targets::show_configured(system, &sinks);
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
        self.routes_max_spread.set(new.checks.routes_max_spread);
        if **self.health.load() != new.checks.health {
            self.health.store(Arc::new(new.checks.health.clone()));
        }
        if self.current.checks.monitors != new.checks.monitors {
            // mteTriggerTable shows the new triggers as they start sampling.
            let monitors = Arc::new(mibs::modules::disman_event::Monitors::new(
                new.checks.monitors.clone(),
            ));
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
        kept.checks = new.checks;
        kept.notify
            .take_reloadable(new.notify, self.traps.is_some());
        self.current = kept;
        Ok(())
    }
}
