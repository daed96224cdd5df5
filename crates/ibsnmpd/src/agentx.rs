//! AgentX subagent mode: which modules go to the master, and the subagent
//! built over the daemon's dispatcher, views and control path.
//!
//! The InfiniBand modules (IB-IF-MIB, IB-PM-MIB, IB-SM-MIB) are always
//! registered; SNMPv2-MIB never (the master has its own system and snmp
//! groups); IF-MIB only with `agentx_if_mib`.

use std::sync::Arc;

use mibs::{Change, View};
use snmp::agentx::{MasterAddress, Subagent, SubagentConfig};
use snmp::dispatch::Dispatcher;
use snmp::oid::Oid;

/// What the master is told about one module.
pub struct Module {
    /// The subtree registered: the longest prefix of all the module's objects.
    pub subtree: Oid,
    /// sysORTable row (AddAgentCaps).
    pub caps: Option<(Oid, String)>,
}

impl Module {
    pub fn of(m: &mibs::Module) -> Module {
        let roots: Vec<&Oid> = m.objects.iter().map(|o| o.root()).collect();
        Module {
            subtree: common_prefix(&roots),
            caps: m.or_entry.as_ref().map(|e| (e.id.clone(), e.descr.clone())),
        }
    }
}

/// Whether module `name` is served through the master.
pub fn serves(name: &str, if_mib: bool) -> bool {
    match name {
        "SNMPv2-MIB" => false,
        "IF-MIB" => if_mib,
        _ => true,
    }
}

fn common_prefix(roots: &[&Oid]) -> Oid {
    let Some((first, rest)) = roots.split_first() else {
        return Oid::new(vec![]);
    };
    let mut n = first.len();
    for r in rest {
        n = first
            .as_slice()
            .iter()
            .zip(r.as_slice())
            .take(n)
            .take_while(|(a, b)| a == b)
            .count();
    }
    Oid::from_slice(first.as_slice().get(..n).unwrap_or(&[]))
}

/// The subagent for `modules`.
pub fn subagent(
    master: MasterAddress,
    modules: &[Module],
    dispatcher: Arc<Dispatcher<View, Change>>,
    view: impl Fn() -> View + Send + Sync + 'static,
    controller: Arc<dyn snmp::agent::SetController<Change>>,
    up_time: impl Fn() -> u32 + Send + Sync + 'static,
) -> Subagent<View, Change> {
    let mut config =
        SubagentConfig::new(master, modules.iter().map(|m| m.subtree.clone()).collect());
    config.id = Oid::from_slice(mibs::snmpv2::IBSNMPD_OBJECT_ID);
    config.descr = format!("ibsnmpd {}", env!("CARGO_PKG_VERSION"));
    config.agent_caps = modules.iter().filter_map(|m| m.caps.clone()).collect();
    Subagent::new(config, dispatcher, view, controller, up_time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let a: Oid = "1.3.6.1.3.117.1.1".parse().unwrap();
        let b: Oid = "1.3.6.1.3.117.1.4.1".parse().unwrap();
        assert_eq!(common_prefix(&[&a, &b]).to_string(), "1.3.6.1.3.117.1");
        assert_eq!(common_prefix(&[&a]).to_string(), "1.3.6.1.3.117.1.1");
    }
}
