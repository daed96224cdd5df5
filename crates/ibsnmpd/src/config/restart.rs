//! What each restart-only part names when a reload finds it changed: every
//! field of each part is destructured, so a new one must be named here
//! (or said to be applied).

use super::notify::NotifySettings;
use super::settings::{
    AgentSettings, AgentxSettings, DaemonSettings, MetricsSettings, RequestSettings, RestartOnly,
    SmSettings, SourceSettings, SystemGroup,
};

/// Collects the keys whose values differ.
#[derive(Default)]
struct Changed(Vec<&'static str>);

impl Changed {
    fn check(&mut self, differs: bool, key: &'static str) -> &mut Self {
        if differs {
            self.0.push(key);
        }
        self
    }
}

impl RestartOnly for DaemonSettings {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let DaemonSettings {
            state_dir,
            log_level,
            control_socket,
        } = self;
        let mut c = Changed::default();
        c.check(*state_dir != new.state_dir, "persistentdir")
            .check(*log_level != new.log_level, "log_level")
            .check(*control_socket != new.control_socket, "control_socket");
        c.0
    }
}

impl RestartOnly for SourceSettings {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let SourceSettings {
            spec,
            // Where they came from: for errors only.
            origin: _,
            local_node_origin: _,
            sweep_interval,
            local_node,
            umad,
            sim_partitions,
            sim_services,
        } = self;
        // metrics_families also decides which detail attributes the umad
        // source reads (`remote_details`): named as metrics_families, not
        // again as [umad].
        let mut new_umad = new.umad.clone();
        new_umad.pma.remote_details = umad.pma.remote_details;
        let mut c = Changed::default();
        c.check(*spec != new.spec, "source")
            .check(*sweep_interval != new.sweep_interval, "sweep_interval")
            .check(*local_node != new.local_node, "local_node")
            .check(*umad != new_umad, "[umad]")
            .check(*sim_partitions != new.sim_partitions, "sim_partitions")
            .check(*sim_services != new.sim_services, "sim_services");
        c.0
    }
}

impl RestartOnly for AgentSettings {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let AgentSettings {
            listen,
            max_repetitions,
            max_getbulk_responses,
            engine_id,
            users,
            vacm,
            node_contexts,
            admin_writable_below_authpriv,
            secrets,
        } = self;
        let mut c = Changed::default();
        c.check(*listen != new.listen, "agentaddress/--listen")
            .check(*max_repetitions != new.max_repetitions, "max_repetitions")
            .check(*engine_id != new.engine_id, "engine_id")
            // Keys are localized at start, for the engine ID of this start.
            .check(*users != new.users, "[[user]]/[[rouser]]/[[rwuser]]")
            .check(*vacm != new.vacm, "[[view]]/[[group]]/[[access]]")
            .check(
                *max_getbulk_responses != new.max_getbulk_responses,
                "max_getbulk_responses",
            )
            .check(*secrets != new.secrets, "secrets")
            // The engine's access entries and its resolver are built at start.
            .check(*node_contexts != new.node_contexts, "node_contexts")
            // The dispatcher's write rule is set at start.
            .check(
                *admin_writable_below_authpriv != new.admin_writable_below_authpriv,
                "admin_writable_below_authpriv",
            );
        c.0
    }
}

impl RestartOnly for SystemGroup {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let SystemGroup {
            contact,
            name,
            location,
        } = self;
        let mut c = Changed::default();
        c.check(*contact != new.contact, "syscontact")
            .check(*name != new.name, "sysname")
            .check(*location != new.location, "syslocation");
        c.0
    }
}

impl RestartOnly for AgentxSettings {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let AgentxSettings {
            master,
            if_mib,
            node_contexts,
            if_index_offset,
        } = self;
        let mut c = Changed::default();
        c.check(*master != new.master, "agentx/--agentx")
            .check(*if_mib != new.if_mib, "agentx_if_mib")
            .check(*node_contexts != new.node_contexts, "agentx_node_contexts")
            .check(
                *if_index_offset != new.if_index_offset,
                "agentx_if_index_offset",
            );
        c.0
    }
}

impl RestartOnly for MetricsSettings {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let MetricsSettings {
            listen,
            limits,
            families,
        } = self;
        let mut c = Changed::default();
        c.check(*listen != new.listen, "metrics_listen")
            .check(
                *limits != new.limits,
                "metrics_max_connections/metrics_max_connections_per_client/metrics_max_renders/metrics_render_queue/metrics_stall_timeout",
            )
            .check(*families != new.families, "metrics_families");
        c.0
    }
}

impl RestartOnly for RequestSettings {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let RequestSettings {
            session_timeout,
            sessions_max,
            result_rows_max,
        } = self;
        let mut c = Changed::default();
        c.check(
            *session_timeout != new.session_timeout,
            "request_session_timeout",
        )
        .check(*sessions_max != new.sessions_max, "request_sessions_max")
        .check(
            *result_rows_max != new.result_rows_max,
            "request_result_rows_max",
        );
        c.0
    }
}

impl RestartOnly for SmSettings {
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let SmSettings {
            opensm_conf,
            opensm,
            port_writes,
        } = self;
        let mut c = Changed::default();
        c.check(*opensm_conf != new.opensm_conf, "opensm_conf")
            .check(*opensm != new.opensm, "[opensm]")
            .check(*port_writes != new.port_writes, "port_writes");
        c.0
    }
}

impl NotifySettings {
    /// What a reload applies of `new`, in place: snmpEnableAuthenTraps'
    /// default, and with a notification layer running the sinks, their
    /// users and the thresholds.
    pub fn take_reloadable(&mut self, new: NotifySettings, notifying: bool) {
        let NotifySettings {
            sinks,
            auth_traps,
            storm: _,
            queue: _,
            thresholds,
            inform_users,
            fabric_link_traps: _,
        } = new;
        self.auth_traps = auth_traps;
        if notifying {
            self.sinks = sinks;
            self.inform_users = inform_users;
            self.thresholds = thresholds;
        }
    }

    /// The notification settings that differ in `new` and change only on
    /// restart. `notifying`: a notification layer runs; without one, the
    /// sinks and thresholds a reload would apply need a restart too.
    pub fn restart_keys(&self, new: &Self, notifying: bool) -> Vec<&'static str> {
        let NotifySettings {
            sinks,
            // Applied: snmpEnableAuthenTraps' default (a value Set over
            // SNMP still wins).
            auth_traps: _,
            storm,
            queue,
            thresholds,
            // Applied with the sinks (their users).
            inform_users: _,
            fabric_link_traps,
        } = self;
        let mut c = Changed::default();
        c.check(
            !notifying && *sinks != new.sinks,
            "trapsink/trap2sink/informsink/[[trapsess]] (no notification layer running)",
        )
        .check(
            *storm != new.storm,
            "notification_rate_limit/notification_rate_interval",
        )
        .check(*queue != new.queue, "notification_queue")
        // The event task reads it once, at start.
        .check(
            *fabric_link_traps != new.fabric_link_traps,
            "fabric_link_traps",
        )
        .check(
            !notifying && *thresholds != new.thresholds,
            "link_integrity_threshold/buffer_overrun_threshold (no notification layer running)",
        );
        c.0
    }
}
