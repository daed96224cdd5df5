//! SIGHUP: read the configuration file and the node-name-map again and apply
//! what can change while the agent runs, keeping the snapshot and sockets.
//!
//! Applied at once: the communities (the next request sees them), the
//! node-name-map (a sweep is asked for, so the names show within one sweep)
//! and the cabling plan (`[topology] expected`, held against the next sweep).
//! Everything else needs a restart; a reload that changes any of it names
//! those keys in one log line. A file that no longer loads changes nothing.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use snmp::agent::CommunityTable;
use tracing::{info, warn};

use crate::config::{ConfigError, Settings};
use crate::fabric::FabricHandle;
use crate::metrics::AgentCounters;
use crate::nodemap::{NodeNameMap, SharedNodeNameMap};

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
    /// Called after each applied reload: the notification layer's seam
    /// (a warmStart notification, RFC 3418).
    pub after_reload: Option<Box<dyn Fn() + Send + Sync>>,
    /// Called with each new community table: the VACM tables show its
    /// groups ([`crate::vacm_tables::on_reload`]).
    pub communities_changed: Option<crate::vacm_tables::OnReload>,
    /// The cabling plan in force (`[topology] expected`), read again.
    pub plan: Option<crate::topology::SharedPlan>,
}

impl Reloader {
    /// One reload; errors are logged and counted, the old settings stay.
    pub fn reload(&mut self) {
        match self.try_reload() {
            Ok(()) => {
                self.counters.reloads.fetch_add(1, Ordering::Relaxed);
                if let Some(hook) = &self.after_reload {
                    hook();
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

    fn try_reload(&mut self) -> Result<(), String> {
        let new = (self.load)().map_err(|e| e.0)?;
        // Load everything before applying anything: all or nothing.
        let names = match &new.node_name_map {
            Some(p) => NodeNameMap::load(p)?,
            None => NodeNameMap::default(),
        };
        let plan = crate::topology::load_plan(new.topology_expected.as_deref())?;
        let fixed = restart_keys(&self.current, &new);
        if !fixed.is_empty() {
            warn!(
                keys = %fixed.join(", "),
                "SIGHUP: these settings change only on restart; running with the old values"
            );
        }
        let communities = Arc::new(crate::config::agent_communities(&new.communities));
        if let Some(hook) = &self.communities_changed {
            hook(&communities);
        }
        self.communities.store(communities);
        if let Some(shared) = &self.plan {
            shared.store(plan);
        }
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
        info!(
            communities = new.communities.len(),
            node_names = count,
            "SIGHUP: configuration reloaded"
        );
        // What a restart would apply stays as it runs now.
        let mut kept = self.current.clone();
        kept.communities = new.communities;
        kept.node_name_map = new.node_name_map;
        kept.topology_expected = new.topology_expected;
        self.current = kept;
        Ok(())
    }
}

/// The settings that differ and cannot change at run time.
fn restart_keys(old: &Settings, new: &Settings) -> Vec<&'static str> {
    let mut v = Vec::new();
    let mut check = |differs: bool, key: &'static str| {
        if differs {
            v.push(key);
        }
    };
    check(old.listen != new.listen, "agentaddress/--listen");
    check(old.source != new.source, "source");
    check(old.state_dir != new.state_dir, "persistentdir");
    check(old.log_level != new.log_level, "log_level");
    check(old.sweep_interval != new.sweep_interval, "sweep_interval");
    check(old.local_node != new.local_node, "local_node");
    check(
        old.max_repetitions != new.max_repetitions,
        "max_repetitions",
    );
    check(old.sys_contact != new.sys_contact, "syscontact");
    check(old.sys_name != new.sys_name, "sysname");
    check(old.sys_location != new.sys_location, "syslocation");
    check(old.control_socket != new.control_socket, "control_socket");
    check(old.metrics_listen != new.metrics_listen, "metrics_listen");
    // metrics_families decides which detail attributes the umad source reads
    // for other nodes' ports (`remote_details`): named as what was changed.
    let remote = |s: &Settings| s.umad.pma.remote_details;
    let mut umad = new.umad.clone();
    umad.pma.remote_details = remote(old);
    check(old.umad != umad, "[umad]");
    check(
        remote(old) != remote(new),
        "metrics_families detail/vl (what the umad source reads)",
    );
    check(old.sim_partitions != new.sim_partitions, "sim_partitions");
    check(old.sim_services != new.sim_services, "sim_services");
    check(old.monitors != new.monitors, "[[monitor]]");
    check(old.vacm != new.vacm, "[[view]]/[[group]]/[[access]]");
    // Keys are localized at start, for the engine ID of this start.
    check(old.users != new.users, "[[user]]/[[rouser]]/[[rwuser]]");
    check(old.engine_id != new.engine_id, "engine_id");
    v
}
