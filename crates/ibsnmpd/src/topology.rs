//! The fabric against its cabling plan (docs/topology.md): the report
//! `ibsnmpd topology check` prints ([`crate::commands::topology`]), and in
//! the running agent (`[topology] expected`) the findings of every
//! published snapshot for the health report, /metrics, the log and the
//! notification sinks. The comparison itself is
//! `ib::model::check`'s (no MADs).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwapOption;
use ib::model::check::{check, count_by_kind, Finding};
use ib::model::Snapshot;
use ib::topology::Topology;
use serde::{Deserialize, Serialize};
use tracing::{info, warn};

/// Where the agent's topology findings go as notifications: set once the
/// notification layer is up (before, findings are only logged).
pub type Notifier = Arc<OnceLock<Box<dyn Fn(snmp::notify::Notification) + Send + Sync>>>;

/// A plan as loaded: its file and its topology.
#[derive(Debug)]
pub struct Plan {
    pub path: PathBuf,
    pub topo: Topology,
}

/// The plan in force; None: no `[topology] expected`. Swapped on SIGHUP.
pub type SharedPlan = Arc<ArcSwapOption<Plan>>;

impl Plan {
    /// Reads and parses `path`; the error names file, line and what was expected.
    pub fn load(path: &Path) -> Result<Plan, String> {
        let topo = ib::topology::parse_file(path).map_err(|e| format!("topology plan: {e}"))?;
        Ok(Plan {
            path: path.to_path_buf(),
            topo,
        })
    }
}

/// The plan at `path`, if any, ready to share.
pub fn load_plan(path: Option<&Path>) -> Result<Option<Arc<Plan>>, String> {
    path.map(|p| Plan::load(p).map(Arc::new)).transpose()
}

/// The agent's plan holder, loaded from `path`.
pub fn shared_plan(path: Option<&Path>) -> Result<SharedPlan, String> {
    Ok(Arc::new(ArcSwapOption::new(load_plan(path)?)))
}

/// One comparison of a snapshot with the plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopologyReport {
    /// The plan file.
    pub expected: String,
    /// The sweep compared.
    pub sweep: u64,
    /// No findings.
    pub matches: bool,
    /// Findings by kind (every kind, 0 when none).
    pub counts: BTreeMap<String, usize>,
    pub findings: Vec<Finding>,
}

impl TopologyReport {
    pub fn new(plan: &Plan, snap: &Snapshot) -> Self {
        let findings = check(&plan.topo, snap);
        TopologyReport {
            expected: plan.path.display().to_string(),
            sweep: snap.sweep.number,
            matches: findings.is_empty(),
            counts: count_by_kind(&findings)
                .iter()
                .map(|(k, n)| (k.to_string(), *n))
                .collect(),
            findings,
        }
    }

    /// One line saying whether the fabric matches, then one per finding.
    pub fn text(&self) -> String {
        let mut out = if self.matches {
            format!("topology: the fabric matches {}\n", self.expected)
        } else {
            format!(
                "topology: {} difference(s) from {}\n",
                self.findings.len(),
                self.expected
            )
        };
        for f in &self.findings {
            out.push_str("  ");
            out.push_str(&f.to_string());
            out.push('\n');
        }
        out
    }
}

/// What the agent publishes with each snapshot: the comparison, when a
/// plan is configured.
pub struct Published(pub Option<TopologyReport>);

/// The running agent's checker: compares each published snapshot with the
/// plan in force, logs each finding once when it appears and once when it
/// clears, and sends each as a notification when the layer is up.
pub fn deriver(plan: SharedPlan, traps: Notifier) -> mibs::publish::ExtraFn<Arc<Published>> {
    // Findings logged, and notified, as present.
    let mut seen: HashSet<Finding> = HashSet::new();
    let mut notified: HashSet<Finding> = HashSet::new();
    let mut plan_path: Option<PathBuf> = None;
    Box::new(move |snap: &Arc<Snapshot>| -> Arc<Published> {
        let current = plan.load_full();
        let path = current.as_ref().map(|p| p.path.clone());
        if path != plan_path {
            // A new plan (or none): its differences start afresh.
            seen.clear();
            notified.clear();
            plan_path = path;
        }
        // No sweep yet: nothing to compare.
        let report = current
            .as_deref()
            .filter(|_| snap.sweep.number > 0)
            .map(|p| TopologyReport::new(p, snap));
        if let Some(r) = &report {
            let now: HashSet<Finding> = r.findings.iter().cloned().collect();
            for f in now.difference(&seen) {
                warn!(kind = f.kind(), "topology: {f}");
            }
            for f in seen.difference(&now) {
                info!(kind = f.kind(), "topology cleared: {f}");
            }
            // Notified from the first sweep after coldStart on, which
            // notifies what was there before.
            if let Some(t) = traps.get() {
                let total = r.findings.len();
                for f in now.difference(&notified) {
                    t(notification(f, true, total));
                }
                for f in notified.difference(&now) {
                    t(notification(f, false, total));
                }
                notified.clone_from(&now);
            }
            seen = now;
        }
        Arc::new(Published(report))
    })
}

/// DISMAN-EVENT-MIB's mteTriggerFired when a finding appears,
/// mteTriggerFalling when it clears: mteHotTrigger `topology:KIND`,
/// mteHotValue the number of findings now, then IB-SM-MIB's
/// ibSmTrapNodeGUID1/PortNum1 (and 2) for the first two fabric ports the
/// finding involves. The finding's words go to the log, not the varbinds.
fn notification(f: &Finding, appeared: bool, total: usize) -> snmp::notify::Notification {
    use mibs::disman_event::{Fired, FiredKind};
    use mibs::oids::ib_sm_mib as sm;
    use snmp::oid::Oid;
    use snmp::value::{Value, VarBind};
    let inst = |o: &[u32]| Oid::from_slice(o).join(&[0]);
    let mut objects = Vec::new();
    let ends = f.ports();
    for (end, (g, p)) in ends.iter().zip([
        (sm::IB_SM_TRAP_NODE_GUID1, sm::IB_SM_TRAP_PORT_NUM1),
        (sm::IB_SM_TRAP_NODE_GUID2, sm::IB_SM_TRAP_PORT_NUM2),
    ]) {
        if let Some(guid) = end.guid {
            objects.push(VarBind::new(
                inst(g),
                Value::OctetString(guid.to_bytes().to_vec()),
            ));
            objects.push(VarBind::new(inst(p), Value::Gauge32(u32::from(end.port))));
        }
    }
    let fired = Fired {
        trigger: format!("topology:{}", f.kind()),
        context: Vec::new(),
        kind: if appeared {
            FiredKind::Fired
        } else {
            FiredKind::Falling
        },
        // zeroDotZero: no MIB object holds a cabling difference.
        oid: Oid::from_slice(&[0, 0]),
        value: i32::try_from(total).unwrap_or(i32::MAX),
        objects,
    };
    // Storm control keys on the trigger and OID: one key per finding.
    fired.notification().with_source(format!("topology:{f}"))
}
