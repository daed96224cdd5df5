//! AgentX subagent mode: which modules go to the master, and the subagent
//! built over the daemon's dispatcher, views and control path.
//!
//! The InfiniBand modules (IB-IF-MIB, IB-PM-MIB, IB-SM-MIB) are always
//! registered; SNMPv2-MIB never (the master has its own system and snmp
//! groups). IF-MIB, only with `agentx_if_mib`, row by row: the ifTable and
//! ifXTable rows of the IB ports (ifEntry.1-22.i and ifXEntry.1-19.i, one
//! range registration each), numbered from `agentx_if_index_offset` + 1 so
//! they never collide with the master's own rows; ifNumber, ifTableLastChange
//! and ifStackTable stay the master's.

use std::sync::Arc;

use mibs::{Change, View};
use snmp::agentx::{ContextRegistrations, MasterAddress, Registration, Subagent, SubagentConfig};
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

/// Whether module `name` is registered whole with the master: the
/// InfiniBand modules only. SNMPv2-MIB, SNMP-MPD-MIB and SNMP-TARGET-MIB
/// are the master's own; IF-MIB is registered row by row ([`if_mib_rows`]).
pub fn serves(name: &str) -> bool {
    name.starts_with("IB-")
}

/// The subtrees to register, each once: two modules may share one (IB-SM-MIB
/// and its request tables both live under ibSmMIBObjects), and a subtree
/// inside another is already covered (net-snmp refuses the second
/// registration with a warning on every connect otherwise).
pub fn subtrees(modules: &[Module]) -> Vec<Oid> {
    let mut all: Vec<Oid> = modules.iter().map(|m| m.subtree.clone()).collect();
    all.sort();
    all.dedup();
    let mut out: Vec<Oid> = Vec::with_capacity(all.len());
    for s in all {
        // Sorted: a covering subtree comes before what it covers.
        if !out.iter().any(|o| s.starts_with(o.as_slice())) {
            out.push(s);
        }
    }
    out
}

/// ifEntry (RFC 2863) and its last column; ifXEntry likewise.
const IF_ENTRY: [u32; 9] = [1, 3, 6, 1, 2, 1, 2, 2, 1];
const IF_ENTRY_LAST: u32 = 22;
const IF_X_ENTRY: [u32; 10] = [1, 3, 6, 1, 2, 1, 31, 1, 1, 1];
const IF_X_ENTRY_LAST: u32 = 19;

/// The ifTable/ifXTable rows of the IB ports in `view`.
pub fn if_mib_rows(view: &View) -> Vec<Registration> {
    let (e, x) = (Oid::from_slice(&IF_ENTRY), Oid::from_slice(&IF_X_ENTRY));
    mibs::modules::if_mib::interfaces(view)
        .ifs
        .iter()
        .flat_map(|(index, _)| {
            [
                Registration::row(&e, 1, IF_ENTRY_LAST, index),
                Registration::row(&x, 1, IF_X_ENTRY_LAST, index),
            ]
        })
        .collect()
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

/// What a node's context registers with the master: mib-2 (its system
/// group, IF-MIB) and IB-IF-MIB. One registration per subtree and context
/// name (GUID and name): docs/agentx.md "Node contexts" gives the cost.
const NODE_CONTEXT_SUBTREES: [&[u32]; 2] = [&[1, 3, 6, 1, 2, 1], &[1, 3, 6, 1, 3, 117, 2]];

/// How often the node contexts registered are compared with the fabric's
/// nodes (about a sweep: nodes come and go with sweeps).
const CONTEXT_REFRESH: std::time::Duration = std::time::Duration::from_secs(5);

/// Registrations in flight at once: enough to register 20,000 contexts in
/// seconds, few enough that the master's answers to managers never queue
/// behind a burst of ours.
const CONTEXT_WINDOW: usize = 64;

/// The node contexts served through the master.
pub fn node_contexts(
    contexts: Arc<crate::services::contexts::NodeContexts>,
) -> ContextRegistrations<View, Change> {
    ContextRegistrations {
        resolver: contexts,
        subtrees: NODE_CONTEXT_SUBTREES
            .iter()
            .map(|s| Oid::from_slice(s))
            .collect(),
        refresh: CONTEXT_REFRESH,
        window: CONTEXT_WINDOW,
    }
}

/// The subagent for `modules`, and every node context when `contexts`.
#[allow(clippy::too_many_arguments)]
pub fn subagent(
    master: MasterAddress,
    modules: &[Module],
    dispatcher: Arc<Dispatcher<View, Change>>,
    view: impl Fn() -> View + Send + Sync + 'static,
    controller: Arc<dyn snmp::agent::SetController<Change>>,
    up_time: impl Fn() -> u32 + Send + Sync + 'static,
    if_mib: bool,
    contexts: Option<Arc<crate::services::contexts::NodeContexts>>,
) -> Subagent<View, Change> {
    let view = Arc::new(view);
    let mut config = SubagentConfig::new(
        master,
        subtrees(modules)
            .into_iter()
            .map(Registration::subtree)
            .collect(),
    );
    config.id = Oid::from_slice(mibs::modules::snmpv2::IBSNMPD_OBJECT_ID);
    config.descr = format!("ibsnmpd {}", env!("CARGO_PKG_VERSION"));
    config.agent_caps = modules.iter().filter_map(|m| m.caps.clone()).collect();
    if if_mib {
        let view = Arc::clone(&view);
        config.dynamic_regions = Some(Arc::new(move || if_mib_rows(&view())));
    }
    let agent = Subagent::new(config, dispatcher, move || view(), controller, up_time);
    match contexts {
        Some(c) => agent.with_contexts(node_contexts(c)),
        None => agent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_subtree_is_registered_once() {
        let m = |o: &str| Module {
            subtree: o.parse().unwrap(),
            caps: None,
        };
        let got = subtrees(&[
            m("1.3.6.1.3.117.7.1"),
            m("1.3.6.1.3.117.1"),
            m("1.3.6.1.3.117.7.1"),
            m("1.3.6.1.3.117.7.1.3"),
            m("1.3.6.1.3.117.2"),
        ]);
        let got: Vec<String> = got.iter().map(|o| o.to_string()).collect();
        assert_eq!(
            got,
            ["1.3.6.1.3.117.1", "1.3.6.1.3.117.2", "1.3.6.1.3.117.7.1"]
        );
        assert!(serves("IB-PM-MIB") && serves("IB-SM-MIB requests"));
        for own in ["SNMPv2-MIB", "SNMP-MPD-MIB", "SNMP-TARGET-MIB", "IF-MIB"] {
            assert!(!serves(own), "{own}");
        }
    }

    #[test]
    fn prefixes() {
        let a: Oid = "1.3.6.1.3.117.1.1".parse().unwrap();
        let b: Oid = "1.3.6.1.3.117.1.4.1".parse().unwrap();
        assert_eq!(common_prefix(&[&a, &b]).to_string(), "1.3.6.1.3.117.1");
        assert_eq!(common_prefix(&[&a]).to_string(), "1.3.6.1.3.117.1.1");
    }
}
