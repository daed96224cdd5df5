//! The source thread: sweeps the fabric every interval and publishes each
//! snapshot (an atomic pointer swap, see [`Publish`]), and runs control
//! operations (the fabric side of Sets) in between sweeps, so sweeps and
//! Sets never race: the one control path.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use ib::model::{CounterHistory, Snapshot, SnapshotBuilder, SweepInfo};
use ib::source::{ControlOp, ControlReply, Source};
use tokio::sync::oneshot;
use tracing::{debug, info, warn};

/// Makes a new snapshot current (derives what the MIB modules need from it
/// and swaps it in); called on the source thread.
pub type Publish = Arc<dyn Fn(Arc<Snapshot>) + Send + Sync>;

/// A snapshot with no nodes (before the first sweep succeeds).
pub fn empty_snapshot(source: &str, number: u64) -> Snapshot {
    SnapshotBuilder::new(DEFAULT_SUBNET_PREFIX).build(
        SweepInfo {
            number,
            time: SystemTime::now(),
            duration: Duration::ZERO,
            source: source.to_string(),
        },
        &mut CounterHistory::new(),
    )
}

/// IBA's default GID prefix fe80::/64.
const DEFAULT_SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

enum Msg {
    Control(ControlOp, oneshot::Sender<Result<ControlReply, String>>),
    Stop,
}

/// Sends control operations to the source thread; cheap to clone.
#[derive(Clone)]
pub struct FabricHandle {
    tx: mpsc::Sender<Msg>,
}

impl FabricHandle {
    /// Runs `op` on the source thread (between sweeps) and waits for it.
    pub async fn control(&self, op: ControlOp) -> Result<ControlReply, String> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Msg::Control(op, tx))
            .map_err(|_| "source thread has stopped".to_string())?;
        rx.await
            .map_err(|_| "source thread dropped the request".to_string())?
    }
}

/// The running source thread.
pub struct FabricThread {
    handle: FabricHandle,
    join: Option<JoinHandle<()>>,
}

impl FabricThread {
    /// Starts sweeping `source`: once at once, then every `interval`,
    /// publishing each snapshot. The receiver gets a message when the first
    /// sweep is over (published or failed).
    pub fn start(
        mut source: Box<dyn Source>,
        publish: Publish,
        interval: Duration,
    ) -> std::io::Result<(Self, mpsc::Receiver<()>)> {
        let (tx, rx) = mpsc::channel::<Msg>();
        let (first_tx, first_rx) = mpsc::channel::<()>();
        let join = std::thread::Builder::new()
            .name("ibsnmpd-source".into())
            .spawn(move || {
                sweep_into(source.as_mut(), &publish);
                let _ = first_tx.send(());
                let mut next = Instant::now() + interval;
                loop {
                    // Wake for the next sweep, or earlier for the source's
                    // own timers (software sampling).
                    let until = match source.wake_at() {
                        Some(w) if w < next => w,
                        _ => next,
                    };
                    let wait = until.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Ok(Msg::Control(op, reply)) => {
                            let r = source.control(op).map_err(|e| e.to_string());
                            // Show the effect of the Set to the next reader:
                            // publish before answering, so a Get right after
                            // the Set's response sees it.
                            if r.is_ok() {
                                sweep_into(source.as_mut(), &publish);
                            }
                            let _ = reply.send(r);
                        }
                        Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                        Err(RecvTimeoutError::Timeout) if Instant::now() < next => {
                            if source.wake() {
                                sweep_into(source.as_mut(), &publish);
                            }
                        }
                        Err(RecvTimeoutError::Timeout) => {
                            sweep_into(source.as_mut(), &publish);
                            next += interval;
                            let now = Instant::now();
                            if next < now {
                                // A sweep longer than the interval: skip
                                // the missed ticks instead of sweeping back to back.
                                next = now + interval;
                            }
                        }
                    }
                }
                debug!("source thread stopped");
            })?;
        Ok((
            FabricThread {
                handle: FabricHandle { tx },
                join: Some(join),
            },
            first_rx,
        ))
    }

    pub fn handle(&self) -> FabricHandle {
        self.handle.clone()
    }

    /// Stops the thread after its current sweep or operation.
    pub fn stop(mut self) {
        let _ = self.handle.tx.send(Msg::Stop);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

/// One sweep, published on success; on failure the last snapshot stays.
pub fn sweep_into(source: &mut dyn Source, publish: &Publish) -> bool {
    let t = Instant::now();
    match source.sweep() {
        Ok(snap) => {
            debug!(
                nodes = snap.nodes.len(),
                ports = snap.ports.len(),
                ms = t.elapsed().as_millis() as u64,
                "sweep"
            );
            if snap.sweep.number == 1 {
                info!(
                    nodes = snap.nodes.len(),
                    ports = snap.ports.len(),
                    "first sweep done"
                );
            }
            publish(Arc::new(snap));
            true
        }
        Err(e) => {
            warn!(error = %e, "sweep failed; serving the previous snapshot");
            false
        }
    }
}
