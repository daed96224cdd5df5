//! The USM users created over SNMP (usmUserTable), as the engine finds them:
//! read from the published agent state at each request, so a user created,
//! re-keyed or deleted by a Set is in force from the next request on.

use std::sync::Arc;

use arc_swap::ArcSwap;
use mibs::modules::snmp_usm::UsmState;
use mibs::SystemState;
use snmp::usm::{ManagedUsers, User};

/// [`ManagedUsers`] over the agent's state.
pub struct StateUsers(pub Arc<ArcSwap<SystemState>>);

impl ManagedUsers for StateUsers {
    fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        self.0.load().modules.get::<UsmState>().user(name)
    }
}

/// Puts this engine's ID and the configured users into usmUserTable (as
/// permanent rows) at start; a saved row of a configured user's name gives
/// way, with a warning.
pub fn start(system: &mut SystemState, usm: &snmp::usm::Usm) {
    let mut shadowed = Vec::new();
    system
        .modules
        .update::<UsmState>(|s| shadowed = s.start(&usm.engine.id, usm.users()));
    for name in shadowed {
        tracing::warn!(user = %name, "a user created over SNMP has the name of a configured one: the configured one is in force");
    }
}
