//! The VACM tables (SNMP-VIEW-BASED-ACM-MIB, [`mibs::modules::snmp_vacm`]) in the
//! daemon: the configuration's VACM shown as permanent rows, and the rows
//! managed over SNMP put in force for every request.

use std::sync::Arc;

use arc_swap::ArcSwap;
use mibs::modules::snmp_vacm::VacmState;
use mibs::SystemState;
use snmp::engine::{Community, ManagedVacm};
use snmp::oid::Oid;
use snmp::usm::Usm;
use snmp::vacm::Vacm;
use tracing::warn;

use crate::config::Settings;
use crate::services::controller::Controller;

/// Adds what the configuration puts in force (the configured VACM with the
/// community and user shorthands, as the engine builds it) to the tables
/// as permanent rows, over what the state file restored.
pub fn add_configured(system: &mut SystemState, settings: &Settings, usm: &Usm) {
    let communities = crate::config::agent_communities(&settings.communities);
    let shorthand = settings.agent.node_contexts.shorthand_context();
    configure(system, &settings.agent.vacm, usm, &communities, &shorthand);
}

fn configure(
    system: &mut SystemState,
    vacm: &Vacm,
    usm: &Usm,
    communities: &[Community],
    shorthand: &snmp::vacm::ContextMatch,
) {
    let configured =
        snmp::engine::configured_vacm(Some(vacm), Some(usm), communities, shorthand.clone());
    system.modules.update::<VacmState>(|s| {
        let displaced = s.configure(&configured);
        if displaced > 0 {
            warn!(
                rows = displaced,
                "VACM rows created over SNMP give way to configured rows at the same index"
            );
        }
    });
}

/// A reload's new community table in the tables: the permanent rows again
/// (the community shorthands' groups; the VACM sections and the users
/// change only on restart, so `running` has them), in turn with Sets.
pub async fn reconfigure(
    controller: &Controller,
    running: &Settings,
    usm: &Usm,
    communities: &[Community],
) {
    let shorthand = running.agent.node_contexts.shorthand_context();
    controller
        .update_runtime(|system| {
            configure(system, &running.agent.vacm, usm, communities, &shorthand);
            true
        })
        .await;
}

/// The rows created over SNMP that are in force, as the engine reads them
/// at each request (the same `Arc` until a Set changes them).
pub fn managed(system: Arc<ArcSwap<SystemState>>) -> ManagedVacm {
    Box::new(move || {
        Some(Arc::clone(
            system.load().modules.get::<VacmState>().in_force(),
        ))
    })
}

/// vacmSecurityToGroupTable's SNMPv1 and SNMPv2c rows: their securityNames
/// are community strings, readable only at authPriv (as SM_Key), so a
/// read-only community cannot learn the others; a read-write one may still
/// create them.
pub fn hidden_subtrees() -> Vec<Oid> {
    use mibs::core::oids::snmp_view_based_acm_mib as o;
    [
        o::VACM_GROUP_NAME,
        o::VACM_SECURITY_TO_GROUP_STORAGE_TYPE,
        o::VACM_SECURITY_TO_GROUP_STATUS,
    ]
    .iter()
    .flat_map(|column| [1, 2].map(|model| Oid::from_slice(column).join(&[model])))
    .collect()
}
