//! MAD transport over one umad port: agents for directed-route SMPs, SA and PerfMgt; a
//! pipelining window; our own expiry and retries; responses matched on the low 32 bits of
//! the TransactionID.
//!
//! Why our own timers: umad2sim ignores libibumad's timeouts and retries, and both the
//! kernel and umad2sim overwrite the upper 32 TID bits, so only the low 32 are ours.
//! Runs on the source's own thread with a blocking `umad_recv`; no async runtime.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::ffi::{self, Address, Port, UmadError};

/// Management classes we send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Directed-route SMPs (class 0x81, QP0).
    Smp,
    /// LID-routed SMPs (class 0x01, QP0): SMInfo of an SM at its port's LID.
    SmpLid,
    /// Subnet administration (class 0x03).
    Sa,
    /// Performance management (class 0x04).
    PerfMgt,
}

/// One MAD to send: `mad` is the whole 256-byte MAD; its TransactionID is assigned here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub agent: Agent,
    pub addr: Address,
    pub mad: Vec<u8>,
}

/// Why a request got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TxError {
    #[error("no answer after {0} attempts")]
    Timeout(u32),
    #[error("send failed: {0}")]
    Send(UmadError),
    /// The answer's MAD status field (DR direction bit masked off) was not 0.
    #[error("MAD status {0:#06x}")]
    Status(u16),
}

/// Transport settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportConfig {
    /// Most MADs outstanding at once. Real hardware takes hundreds (OpenSM's PerfMgr keeps
    /// ~500); umad2sim freezes at >= 384, so it is capped at [`UMAD2SIM_MAX_WINDOW`] there.
    pub window: usize,
    /// Per-attempt timeout.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
}

/// The largest window used when umad2sim is preloaded.
pub const UMAD2SIM_MAX_WINDOW: usize = 256;

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            window: 512,
            timeout: Duration::from_millis(500),
            retries: 2,
        }
    }
}

/// Counters of what the transport did (cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransportStats {
    pub sent: u64,
    pub received: u64,
    /// Attempts that got no answer in time (or status 110 from the kernel/umad2sim).
    pub timeouts: u64,
    pub retries: u64,
    /// Requests that failed for good (after retries, or with a MAD status).
    pub failed: u64,
    /// Answers with a non-zero MAD status.
    pub status_errors: u64,
    /// Answers that matched nothing outstanding (late answers after a retry).
    pub stale: u64,
    /// Unsolicited SA Reports received (and acknowledged with ReportResp).
    pub reports: u64,
}

struct Outstanding<K> {
    key: K,
    req: Request,
    deadline: Instant,
    attempt: u32,
}

/// The open port with its three agents.
pub struct Transport {
    port: Port,
    smp: i32,
    /// The LID-routed SMP agent (None: the port refused it; those requests fail).
    smp_lid: Option<i32>,
    sa: i32,
    pma: i32,
    cfg: TransportConfig,
    next_tid: u32,
    stats: TransportStats,
    reports: Vec<Vec<u8>>,
}

/// True when umad2sim is preloaded into this process.
pub fn under_umad2sim() -> bool {
    std::env::var("LD_PRELOAD")
        .map(|p| p.contains("umad2sim"))
        .unwrap_or(false)
}

const TID_LOW: std::ops::Range<usize> = 12..16;
const METHOD_REPORT: u8 = 0x06;
/// Reports kept for the source between sweeps (further ones are acknowledged, not kept).
const MAX_REPORTS: usize = 1024;
const MGMT_CLASS_DR: u8 = 0x81;
const MGMT_CLASS_LID: u8 = 0x01;

fn tid_low(mad: &[u8]) -> Option<u32> {
    mad.get(TID_LOW)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_be_bytes)
}

fn mad_status(mad: &[u8]) -> u16 {
    let s = mad
        .get(4..6)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .unwrap_or(0);
    // Directed-route SMPs carry the direction bit in the status field's top bit.
    if mad.get(1) == Some(&MGMT_CLASS_DR) {
        s & 0x7fff
    } else {
        s
    }
}

impl Transport {
    /// Opens `ca`/`port` and registers the SMP (DR), SA and PerfMgt agents.
    pub fn open(ca: &str, port: u8, mut cfg: TransportConfig) -> Result<Self, UmadError> {
        let lib = ffi::library()?;
        let mut p = lib.open(ca, port)?;
        let smp = p.register(MGMT_CLASS_DR, 1, 0, &[])?;
        let smp_lid = match p.register(MGMT_CLASS_LID, 1, 0, &[]) {
            Ok(a) => Some(a),
            Err(e) => {
                tracing::warn!(
                    "LID-routed SMP registration refused ({e}): SMInfo of SMs is not asked"
                );
                None
            }
        };
        // The SA agent also takes unsolicited Reports (trap subscriptions). Another
        // agent on this port may own them already: then answers only.
        let sa = match p.register(0x03, 2, 1, &[METHOD_REPORT]) {
            Ok(a) => a,
            Err(e) => {
                tracing::debug!("SA Report registration refused ({e}): answers only");
                p.register(0x03, 2, 1, &[])?
            }
        };
        let pma = p.register(0x04, 1, 0, &[])?;
        if under_umad2sim() && cfg.window > UMAD2SIM_MAX_WINDOW {
            tracing::info!(
                window = cfg.window,
                "umad2sim preloaded: capping the MAD window at {UMAD2SIM_MAX_WINDOW}"
            );
            cfg.window = UMAD2SIM_MAX_WINDOW;
        }
        cfg.window = cfg.window.max(1);
        Ok(Transport {
            port: p,
            smp,
            smp_lid,
            sa,
            pma,
            cfg,
            next_tid: rand::random::<u32>() | 1,
            stats: TransportStats::default(),
            reports: Vec::new(),
        })
    }

    /// The settings in force (window possibly capped).
    pub fn config(&self) -> TransportConfig {
        self.cfg
    }

    /// Cumulative counters.
    pub fn stats(&self) -> TransportStats {
        self.stats
    }

    /// The registered agent for `a` (None: not registered).
    fn agent_id(&self, a: Agent) -> Option<i32> {
        match a {
            Agent::Smp => Some(self.smp),
            Agent::SmpLid => self.smp_lid,
            Agent::Sa => Some(self.sa),
            Agent::PerfMgt => Some(self.pma),
        }
    }

    /// Sends one request and waits for its answer.
    pub fn call(&mut self, req: Request) -> Result<Vec<u8>, TxError> {
        let mut out = None;
        self.pipeline([((), req)], |_, r| {
            out = Some(r);
            Vec::new()
        });
        out.unwrap_or(Err(TxError::Timeout(0)))
    }

    /// Runs requests through the window until all are answered or failed. `handle` gets
    /// each outcome and may return follow-up requests (BFS discovery, PMA after
    /// ClassPortInfo), which join the queue.
    pub fn pipeline<K, I, F>(&mut self, initial: I, mut handle: F)
    where
        I: IntoIterator<Item = (K, Request)>,
        F: FnMut(K, Result<Vec<u8>, TxError>) -> Vec<(K, Request)>,
    {
        let mut queue: VecDeque<(K, Request, u32)> =
            initial.into_iter().map(|(k, r)| (k, r, 0)).collect();
        let mut outstanding: HashMap<u32, Outstanding<K>> = HashMap::new();
        loop {
            // Fill the window.
            while outstanding.len() < self.cfg.window {
                let Some((key, req, attempt)) = queue.pop_front() else {
                    break;
                };
                match self.send_one(&req) {
                    Ok(tid) => {
                        outstanding.insert(
                            tid,
                            Outstanding {
                                key,
                                req,
                                deadline: Instant::now() + self.cfg.timeout,
                                attempt,
                            },
                        );
                    }
                    Err(e) => {
                        self.stats.failed += 1;
                        let more = handle(key, Err(TxError::Send(e)));
                        queue.extend(more.into_iter().map(|(k, r)| (k, r, 0)));
                    }
                }
            }
            if outstanding.is_empty() {
                if queue.is_empty() {
                    return;
                }
                continue;
            }
            let now = Instant::now();
            let next = outstanding
                .values()
                .map(|o| o.deadline)
                .min()
                .unwrap_or(now);
            let wait_ms = next.saturating_duration_since(now).as_millis().min(1000) as i32;
            let got = match self.port.recv(wait_ms) {
                Ok(g) => g,
                Err(e) => {
                    tracing::warn!(error = %e, "umad_recv failed");
                    std::thread::sleep(Duration::from_millis(10));
                    None
                }
            };
            if let Some(r) = got {
                self.stats.received += 1;
                let entry = tid_low(&r.mad).and_then(|t| outstanding.remove(&t));
                match entry {
                    None if r.mad.get(3) == Some(&METHOD_REPORT) => self.on_report(r),
                    None => self.stats.stale += 1,
                    Some(o) if r.status != 0 => {
                        // The kernel (or umad2sim at once) gave our request back unanswered.
                        self.stats.timeouts += 1;
                        self.retry_or_fail(o, &mut queue, &mut handle);
                    }
                    Some(o) => {
                        let st = mad_status(&r.mad);
                        let more = if st & 0x1 != 0 && o.attempt < self.cfg.retries {
                            // Busy: try again later.
                            self.stats.retries += 1;
                            queue.push_back((o.key, o.req, o.attempt + 1));
                            Vec::new()
                        } else if st != 0 {
                            self.stats.status_errors += 1;
                            self.stats.failed += 1;
                            handle(o.key, Err(TxError::Status(st)))
                        } else {
                            handle(o.key, Ok(r.mad))
                        };
                        queue.extend(more.into_iter().map(|(k, r)| (k, r, 0)));
                    }
                }
            }
            // Expire what is overdue.
            let now = Instant::now();
            let overdue: Vec<u32> = outstanding
                .iter()
                .filter(|(_, o)| o.deadline <= now)
                .map(|(&t, _)| t)
                .collect();
            for t in overdue {
                if let Some(o) = outstanding.remove(&t) {
                    self.stats.timeouts += 1;
                    self.retry_or_fail(o, &mut queue, &mut handle);
                }
            }
        }
    }

    /// Reports received so far (Notice data in the MAD), oldest first.
    pub fn take_reports(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.reports)
    }

    /// Waits up to `timeout` for unsolicited Reports alone (between sweeps).
    pub fn poll_reports(&mut self, timeout: Duration) {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.port.recv(left.as_millis().min(1000) as i32) {
                Ok(Some(r)) if r.mad.get(3) == Some(&METHOD_REPORT) => self.on_report(r),
                Ok(Some(_)) => self.stats.stale += 1,
                Ok(None) | Err(_) => {}
            }
            if Instant::now() >= end {
                return;
            }
        }
    }

    /// Acknowledges a Report with ReportResp (else the SA retransmits it) and keeps it.
    fn on_report(&mut self, r: ffi::Received) {
        self.stats.reports += 1;
        match crate::mad::build::sa_report_resp(&r.mad) {
            Ok(resp) => {
                // A response expects no answer: timeout 0.
                if let Err(e) = self.port.send(self.sa, &resp, Address::gsi(r.slid), 0, 0) {
                    tracing::warn!("ReportResp not sent: {e}");
                }
            }
            Err(e) => tracing::warn!("bad Report MAD: {e}"),
        }
        if self.reports.len() < MAX_REPORTS {
            self.reports.push(r.mad);
        }
    }

    fn retry_or_fail<K, F>(
        &mut self,
        o: Outstanding<K>,
        queue: &mut VecDeque<(K, Request, u32)>,
        handle: &mut F,
    ) where
        F: FnMut(K, Result<Vec<u8>, TxError>) -> Vec<(K, Request)>,
    {
        if o.attempt < self.cfg.retries {
            self.stats.retries += 1;
            // A fresh TID: a late answer to the old one is then counted stale, not mistaken.
            queue.push_front((o.key, o.req, o.attempt + 1));
        } else {
            self.stats.failed += 1;
            let more = handle(o.key, Err(TxError::Timeout(o.attempt + 1)));
            queue.extend(more.into_iter().map(|(k, r)| (k, r, 0)));
        }
    }

    fn send_one(&mut self, req: &Request) -> Result<u32, UmadError> {
        let tid = self.next_tid;
        self.next_tid = self.next_tid.wrapping_add(1).max(1);
        let mut mad = req.mad.clone();
        if mad.len() < 256 {
            mad.resize(256, 0);
        }
        if let Some(b) = mad.get_mut(8..16) {
            b.copy_from_slice(&u64::from(tid).to_be_bytes());
        }
        let agent = self
            .agent_id(req.agent)
            .ok_or_else(|| UmadError::Invalid(format!("no {:?} agent registered", req.agent)))?;
        let tmo = self.cfg.timeout.as_millis().min(u128::from(u32::MAX)) as u32;
        self.port.send(agent, &mad, req.addr, tmo, 0)?;
        self.stats.sent += 1;
        Ok(tid)
    }
}
