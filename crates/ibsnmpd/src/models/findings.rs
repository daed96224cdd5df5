//! The derived findings' events: what appeared and what cleared between two
//! publications' cabling-plan comparisons ([`crate::models::cabling_plan`]) and route
//! checks ([`crate::models::route_check`]). Derivation stays pure; the source thread
//! logs these changes as it logs fabric events, and the notification layer
//! ([`crate::services::traps`]) sends them, each keeping its own [`Tracker`] (what it
//! has said so far).

use std::collections::HashSet;

use ib::model::check::Finding as PlanFinding;
use tracing::{info, warn};

use crate::models::route_check::RouteKey;

/// The findings said so far, to diff the next publication's against.
#[derive(Default)]
pub struct Tracker {
    /// The plan file the topology findings came from: another plan's
    /// differences start afresh (nothing cleared, all appear).
    plan: Option<String>,
    topology: HashSet<PlanFinding>,
    routes: HashSet<RouteKey>,
}

/// A finding that appeared or cleared.
#[derive(Debug, Clone)]
pub enum Change {
    /// `total`: the plan's findings now.
    Topology {
        finding: Box<PlanFinding>,
        appeared: bool,
        total: usize,
    },
    /// `words`: the finding as the report says it (None when cleared);
    /// `pairs`: the host pairs that cannot talk now.
    Route {
        key: RouteKey,
        words: Option<String>,
        pairs: u64,
    },
}

impl Tracker {
    /// What changed from the findings said so far to those of a
    /// publication's plan comparison and route check.
    /// A publication without a report (no sweep, no tables read) changes
    /// nothing: its findings are unknown, not gone. A publication with no
    /// plan forgets the old plan's findings.
    pub fn update(
        &mut self,
        topology: Option<&crate::models::cabling_plan::Published>,
        routes: Option<&crate::models::route_check::Published>,
    ) -> Vec<Change> {
        let mut out = Vec::new();
        if let Some(t) = topology {
            self.topology_update(t.0.as_ref(), &mut out);
        }
        if let Some(r) = routes.and_then(|r| r.0.as_ref()) {
            let findings = r.findings();
            let now: HashSet<RouteKey> = findings.iter().map(|f| f.key()).collect();
            let pairs = r.unreachable_pairs;
            for f in findings.iter().filter(|f| !self.routes.contains(&f.key())) {
                out.push(Change::Route {
                    key: f.key(),
                    words: Some(f.words.clone()),
                    pairs,
                });
            }
            for k in self.routes.difference(&now) {
                out.push(Change::Route {
                    key: k.clone(),
                    words: None,
                    pairs,
                });
            }
            self.routes = now;
        }
        out
    }

    fn topology_update(
        &mut self,
        report: Option<&crate::models::cabling_plan::TopologyReport>,
        out: &mut Vec<Change>,
    ) {
        let plan = report.map(|r| r.expected.clone());
        if plan != self.plan {
            self.topology.clear();
            self.plan = plan;
        }
        let Some(r) = report else { return };
        let now: HashSet<PlanFinding> = r.findings.iter().cloned().collect();
        let total = r.findings.len();
        let change = |f: &PlanFinding, appeared| Change::Topology {
            finding: Box::new(f.clone()),
            appeared,
            total,
        };
        out.extend(now.difference(&self.topology).map(|f| change(f, true)));
        out.extend(self.topology.difference(&now).map(|f| change(f, false)));
        self.topology = now;
    }
}

impl Change {
    /// One log line: a warning when a finding appears, info when it clears.
    pub fn log(&self) {
        match self {
            Change::Topology {
                finding: f,
                appeared: true,
                ..
            } => warn!(kind = f.kind(), "topology: {f}"),
            Change::Topology { finding: f, .. } => info!(kind = f.kind(), "topology cleared: {f}"),
            Change::Route {
                key,
                words: Some(w),
                ..
            } => warn!(kind = %key.kind, "routes: {w}"),
            Change::Route { key, .. } => info!(
                kind = %key.kind,
                "routes cleared: {} at {} port {}", key.kind, key.guid, key.port
            ),
        }
    }

    /// DISMAN-EVENT-MIB's mteTriggerFired when a finding appears,
    /// mteTriggerFalling when it clears ([`crate::models::cabling_plan::notification`],
    /// [`crate::models::route_check::notification`]).
    pub fn notification(&self) -> snmp::notify::Notification {
        match self {
            Change::Topology {
                finding,
                appeared,
                total,
            } => crate::models::cabling_plan::notification(finding, *appeared, *total),
            Change::Route { key, words, pairs } => {
                crate::models::route_check::notification(key, words.is_some(), *pairs)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::route_check::{deriver, Published, SharedSpread};
    use ib::model::{NodeIdx, Snapshot};
    use ib::source::sim::{SimConfig, SimSource};
    use ib::source::Source;
    use ib::types::NodeType;
    use std::sync::Arc;

    fn sim() -> Snapshot {
        let mut sim = SimSource::default_fabric(SimConfig::default()).unwrap();
        sim.sweep().unwrap()
    }

    /// A leaf (a switch with a CA on it) and a CA's LID on another switch.
    fn leaf_and_remote_lid(s: &Snapshot) -> (NodeIdx, u16) {
        let is_ca = |n: NodeIdx| s.node(n).unwrap().info.node_type != NodeType::Switch as u8;
        let ca_port = |p: &ib::model::Port| {
            p.num.0 != 0
                && is_ca(p.node)
                && p.remote.and_then(|r| s.port(r)).is_some()
                && p.info.lid.0 != 0
        };
        let a = s.ports.iter().find(|p| ca_port(p)).unwrap();
        let leaf = s.port(a.remote.unwrap()).unwrap().node;
        let b = s
            .ports
            .iter()
            .find(|p| ca_port(p) && s.port(p.remote.unwrap()).unwrap().node != leaf)
            .unwrap();
        (leaf, b.info.lid.0)
    }

    #[test]
    fn route_findings_appear_and_clear_with_one_notification_each() {
        let clean = sim();
        let (leaf, lid) = leaf_and_remote_lid(&clean);
        let mut broken = clean.clone();
        let data = broken.nodes[leaf as usize].switch.as_mut().unwrap();
        let mut lft = data.lft.to_vec();
        lft[usize::from(lid)] = 0xFF;
        data.lft = Arc::from(lft);

        let mut derive = deriver(SharedSpread::new(10.0));
        let mut said = Tracker::default();
        let mut notify = |p: &Arc<Published>| -> Vec<snmp::notify::Notification> {
            let changes = said.update(None, Some(p));
            changes.iter().map(|c| c.notification()).collect()
        };

        let p = derive(&Arc::new(clean.clone()));
        let r = p.0.as_ref().expect("tables read: checked");
        assert_eq!(r.unreachable_pairs, 0);
        assert!(r.broken.is_empty() && r.routes > 0 && r.good == r.routes);
        assert!(notify(&p).is_empty());

        let p = derive(&Arc::new(broken.clone()));
        let r = p.0.as_ref().unwrap();
        assert!(r.unreachable_pairs > 0);
        assert_eq!(r.broken.len(), 1);
        assert_eq!(r.broken[0].kind, "no_route");
        let guid = clean.node(leaf).unwrap().info.node_guid.to_string();
        assert_eq!(r.broken[0].at.guid, guid);
        let fired = notify(&p);
        let mut sources: Vec<_> = fired.iter().filter_map(|n| n.source.clone()).collect();
        sources.sort();
        assert_eq!(
            sources,
            vec![
                format!("routes:no_route:{guid}:0"),
                format!("routes:unreachable:{guid}:0")
            ]
        );
        // The same tables again: nothing new to say.
        let again = derive(&Arc::new(broken));
        assert_eq!(again.0.as_ref().unwrap().broken.len(), 1);
        assert!(notify(&again).is_empty());

        let p = derive(&Arc::new(clean.clone()));
        assert_eq!(p.0.as_ref().unwrap().unreachable_pairs, 0);
        let cleared = notify(&p);
        assert_eq!(cleared.len(), 2);
        assert!(cleared.iter().all(|c| c.trap_oid != fired[0].trap_oid));

        // No forwarding tables (a sysfs-like snapshot): not checked.
        let mut bare = clean;
        for n in &mut bare.nodes {
            if let Some(d) = n.switch.as_mut() {
                d.lft = Arc::from(Vec::new());
            }
        }
        assert!(derive(&Arc::new(bare)).0.is_none());
    }
}
