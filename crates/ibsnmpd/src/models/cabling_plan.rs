//! The fabric against its cabling plan (docs/topology.md): the report
//! `ibsnmpd topology check` prints ([`crate::commands::topology`]), and in
//! the running agent (`[topology] expected`) the findings of every
//! published snapshot for the health report, /metrics, the log and the
//! notification sinks. The comparison itself is
//! `ib::model::check`'s (no MADs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use ib::model::check::{check, count_by_kind, Finding};
use ib::model::Snapshot;
use ib::topology::Topology;
use serde::{Deserialize, Serialize};
use tracing::warn;

/// A plan as loaded: its file and its topology.
#[derive(Debug)]
pub struct Plan {
    pub path: PathBuf,
    pub topo: Topology,
}

/// The plan in force; None: no `[topology] expected`. Swapped on SIGHUP.
pub type SharedPlan = Arc<ArcSwapOption<Plan>>;

impl Plan {
    /// Reads and parses `path` off this thread within [`PLAN_READ_LIMIT`]
    /// (and ib's [`ib::topology::Limits`]); the error names file, line and
    /// what was expected.
    pub fn load(path: &Path) -> Result<Plan, String> {
        Self::load_with(path, PLAN_READ_LIMIT, Plan::read)
    }

    /// [`Plan::load`] with `read` as the reader, within `limit`.
    fn load_with(
        path: &Path,
        limit: Duration,
        read: fn(&Path) -> Result<Plan, String>,
    ) -> Result<Plan, String> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let r = Read::start(path, read, limit, move |r| {
            let _ = tx.send(r);
        })?;
        match rx.recv_timeout(limit) {
            Ok(r) => r,
            Err(_) => Err(r.timed_out()),
        }
    }

    /// [`Plan::load`] for the agent's reload: the wait does not hold up
    /// the runtime's other tasks.
    pub async fn load_async(path: &Path) -> Result<Plan, String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let read = Read::start(path, Plan::read, PLAN_READ_LIMIT, move |r| {
            let _ = tx.send(r);
        })?;
        match tokio::time::timeout(PLAN_READ_LIMIT, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(format!(
                "topology plan: {}: the read stopped without an answer",
                path.display()
            )),
            Err(_) => Err(read.timed_out()),
        }
    }

    /// Reads and parses `path` on this thread.
    fn read(path: &Path) -> Result<Plan, String> {
        let topo = ib::topology::parse_file(path).map_err(|e| format!("topology plan: {e}"))?;
        Ok(Plan {
            path: path.to_path_buf(),
            topo,
        })
    }
}

/// How long reading a plan may take (a file on a hung NFS mount blocks its
/// reader in the kernel, where no limit of ib's applies): past it, the
/// start or the reload is refused and the reader is left to return.
pub const PLAN_READ_LIMIT: Duration = Duration::from_secs(30);

/// Readers left waiting after [`PLAN_READ_LIMIT`] at most: past them a
/// read is refused at once, as is one of a file whose earlier read waits.
const MAX_STUCK: usize = 4;

/// Plan files whose read outlived the limit and has not returned yet.
/// Process-wide on purpose: what it counts is threads blocked in the
/// kernel, a resource of the process that outlives the load (the start's,
/// a reload's, `topology check`'s) that left them; each reader's thread
/// removes its own entry when it returns. A list held by any one caller
/// would forget them when that caller goes, and could not bound them.
static STUCK: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn stuck() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    STUCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// One plan read on its own thread.
struct Read {
    path: PathBuf,
    limit: Duration,
    /// (returned, outlived the limit), under one lock.
    state: Arc<Mutex<(bool, bool)>>,
}

impl Read {
    fn start(
        path: &Path,
        read: fn(&Path) -> Result<Plan, String>,
        limit: Duration,
        answer: impl FnOnce(Result<Plan, String>) + Send + 'static,
    ) -> Result<Read, String> {
        {
            let s = stuck();
            if s.iter().any(|p| p == path) {
                return Err(format!(
                    "topology plan: {}: an earlier read of it has not returned after {} s \
                     (a hung file system?): not read again until it does",
                    path.display(),
                    limit.as_secs_f64()
                ));
            }
            if s.len() >= MAX_STUCK {
                return Err(format!(
                    "topology plan: {}: {} earlier plan reads have not returned (a hung file \
                     system?): no other is started",
                    path.display(),
                    s.len()
                ));
            }
        }
        let state = Arc::new(Mutex::new((false, false)));
        let (p, st) = (path.to_path_buf(), Arc::clone(&state));
        std::thread::Builder::new()
            .name("plan-read".into())
            .spawn(move || {
                let r = read(&p);
                let mut s = st.lock().unwrap_or_else(|e| e.into_inner());
                s.0 = true;
                if s.1 {
                    let mut list = stuck();
                    if let Some(i) = list.iter().position(|x| *x == p) {
                        list.swap_remove(i);
                    }
                    warn!(plan = %p.display(), "topology plan: a read that outlived its limit returned");
                }
                drop(s);
                answer(r);
            })
            .map_err(|e| format!("topology plan: {}: no thread to read it: {e}", path.display()))?;
        Ok(Read {
            path: path.to_path_buf(),
            limit,
            state,
        })
    }

    /// The error for a read past the limit; the file is marked as waiting.
    fn timed_out(&self) -> String {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !s.0 {
            s.1 = true;
            stuck().push(self.path.clone());
        }
        format!(
            "topology plan: {}: not read within {} s (a hung file system?)",
            self.path.display(),
            self.limit.as_secs_f64()
        )
    }
}

/// The plan at `path`, if any, ready to share.
pub fn load_plan(path: Option<&Path>) -> Result<Option<Arc<Plan>>, String> {
    path.map(|p| Plan::load(p).map(Arc::new)).transpose()
}

/// [`load_plan`] for the agent's reload.
pub async fn load_plan_async(path: Option<&Path>) -> Result<Option<Arc<Plan>>, String> {
    match path {
        Some(p) => Plan::load_async(p).await.map(|p| Some(Arc::new(p))),
        None => Ok(None),
    }
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
/// plan in force. What appeared or cleared since is [`crate::models::findings`]'
/// to say.
pub fn deriver(plan: SharedPlan) -> mibs::core::publish::ExtraFn<Arc<Published>> {
    Box::new(move |snap: &Arc<Snapshot>| -> Arc<Published> {
        // No sweep yet: nothing to compare.
        let report = plan
            .load_full()
            .as_deref()
            .filter(|_| snap.sweep.number > 0)
            .map(|p| TopologyReport::new(p, snap));
        Arc::new(Published(report))
    })
}

/// DISMAN-EVENT-MIB's mteTriggerFired when a finding appears,
/// mteTriggerFalling when it clears: mteHotTrigger `topology:KIND`,
/// mteHotValue the number of findings now, then IB-SM-MIB's
/// ibSmTrapNodeGUID1/PortNum1 (and 2) for the first two fabric ports the
/// finding involves. The finding's words go to the log, not the varbinds.
pub fn notification(f: &Finding, appeared: bool, total: usize) -> snmp::notify::Notification {
    use mibs::core::oids::ib_sm_mib as sm;
    use mibs::modules::disman_event::Fired;
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
    let fired = Fired::finding(
        format!("topology:{}", f.kind()),
        appeared,
        total as u64,
        objects,
    );
    // Storm control keys on the trigger and OID: one key per finding.
    fired.notification().with_source(format!("topology:{f}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Released by the test: a read that blocks until then (what a file
    /// on a hung NFS mount does to its reader).
    static GATE: Mutex<Option<mpsc::Receiver<()>>> = Mutex::new(None);

    fn blocked_read(_: &Path) -> Result<Plan, String> {
        let rx = GATE.lock().unwrap().take().expect("gate set");
        let _ = rx.recv();
        Err("released".into())
    }

    fn good_read(p: &Path) -> Result<Plan, String> {
        Ok(Plan {
            path: p.to_path_buf(),
            topo: Topology::default(),
        })
    }

    #[test]
    fn a_read_past_its_limit_is_refused_and_not_started_again() {
        let path = Path::new("/hung/plan.net");
        let (release, rx) = mpsc::channel();
        *GATE.lock().unwrap() = Some(rx);
        let limit = Duration::from_millis(50);
        let e = Plan::load_with(path, limit, blocked_read).unwrap_err();
        assert!(
            e.ends_with("not read within 0.05 s (a hung file system?)"),
            "{e}"
        );
        // While that reader waits, the file is not read again.
        let e = Plan::load_with(path, limit, good_read).unwrap_err();
        assert!(e.contains("an earlier read of it has not returned"), "{e}");
        // Another file is.
        assert!(Plan::load_with(Path::new("/other.net"), limit, good_read).is_ok());
        // Once the reader returns, the file is read again.
        release.send(()).unwrap();
        while stuck().iter().any(|p| p == path) {
            std::thread::yield_now();
        }
        assert!(Plan::load_with(path, limit, good_read).is_ok());
    }
}
