//! Storm control: at most so many notifications per interval for one
//! source object, held-back states sent when the burst is over.

use std::time::{Duration, Instant};

use std::sync::atomic::Ordering;

use tracing::{debug, info, warn};

use super::notification::Notification;
use super::NotifyStats;

/// Storm control: at most `max_per_interval` notifications per `interval`
/// for one source object (0: no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StormControl {
    pub max_per_interval: u32,
    pub interval: Duration,
    /// A source with states held back that has sent nothing for this long
    /// gets them at once, not at the interval's end (the agent's sweep
    /// interval: a sweep without news means the burst is over). Zero: only
    /// at the interval's end.
    pub quiet: Duration,
}

impl Default for StormControl {
    fn default() -> Self {
        StormControl {
            max_per_interval: 10,
            interval: Duration::from_secs(60),
            quiet: Duration::ZERO,
        }
    }
}

/// Storm control state of one source object.
pub(super) struct Window {
    pub(super) start: Instant,
    /// The source's last notification, sent or held back.
    pub(super) last: Instant,
    pub(super) sent: u32,
    pub(super) suppressed: u32,
    /// Per state: the last notification held back, sent as the window ends
    /// unless it is what the manager last received.
    pub(super) held: Vec<Notification>,
}

impl Window {
    pub(super) fn new(start: Instant) -> Self {
        Window {
            start,
            last: start,
            sent: 0,
            suppressed: 0,
            held: Vec::new(),
        }
    }
}

impl super::Task {
    /// When the first storm window with something held back ends, or the
    /// first source holding states back has been quiet long enough.
    pub(super) fn next_window_end(&self) -> Option<Instant> {
        let storm = self.config.storm;
        self.windows
            .values()
            .filter(|w| w.suppressed > 0)
            .map(|w| {
                let end = w.start + storm.interval;
                match w.held.is_empty() || storm.quiet.is_zero() {
                    true => end,
                    false => end.min(w.last + storm.quiet),
                }
            })
            .min()
    }

    /// Storm control: true when `n` may go out now.
    pub(super) fn admit(&mut self, n: &Notification) -> bool {
        let storm = self.config.storm;
        let Some(key) = &n.source else {
            return true;
        };
        if storm.max_per_interval == 0 {
            return true;
        }
        let now = Instant::now();
        let w = self
            .windows
            .entry(key.clone())
            .or_insert_with(|| Window::new(now));
        if now.duration_since(w.start) >= storm.interval {
            if w.suppressed > 0 {
                log_suppressed(key, w.suppressed, NotifyStats::get(&self.stats.suppressed));
            }
            *w = Window::new(now);
        }
        w.last = now;
        if w.sent < storm.max_per_interval {
            w.sent += 1;
            // A newer state than any held back: nothing to send later.
            if let Some(state) = n.state {
                w.held.retain(|h| h.state != Some(state));
            }
            return true;
        }
        w.suppressed += 1;
        if n.state.is_some() {
            w.held.retain(|h| h.state != n.state);
            w.held.push(n.clone());
        }
        let total = self.stats.suppressed.fetch_add(1, Ordering::Relaxed) + 1;
        if w.suppressed == 1 {
            warn!(
                source = %key,
                limit = storm.max_per_interval,
                interval_s = storm.interval.as_secs_f64(),
                total_suppressed = total,
                "notification storm: suppressing notifications from this source for the rest of the interval"
            );
        }
        debug!(source = %key, trap = %n.trap_oid, total_suppressed = total, "notification suppressed");
        false
    }

    /// Ends the windows that are over: logs them, sends each source's
    /// held-back states the manager does not have, and forgets them (keeps
    /// the map small).
    pub(super) async fn close_windows(&mut self, now: Instant) {
        let interval = self.config.storm.interval;
        let total = NotifyStats::get(&self.stats.suppressed);
        let mut catch_up = Vec::new();
        self.windows.retain(|key, w| {
            if now.duration_since(w.start) < interval {
                return true;
            }
            if w.suppressed > 0 {
                log_suppressed(key, w.suppressed, total);
            }
            catch_up.append(&mut w.held);
            false
        });
        for n in catch_up {
            if self.is_news(&n) {
                info!(source = ?n.source, trap = %n.trap_oid, "notification storm over: sending the state held back");
                self.originate(n).await;
            }
        }
    }

    /// Sends the held-back states of sources quiet for `storm.quiet`
    /// (their burst is over) at once; their windows go on, so the limit
    /// still holds for the rest of the interval.
    pub(super) async fn send_when_quiet(&mut self, now: Instant) {
        let quiet = self.config.storm.quiet;
        if quiet.is_zero() {
            return;
        }
        let mut catch_up = Vec::new();
        for w in self.windows.values_mut() {
            if now.duration_since(w.last) >= quiet {
                catch_up.append(&mut w.held);
            }
        }
        for n in catch_up {
            if self.is_news(&n) {
                info!(source = ?n.source, trap = %n.trap_oid, "notification source quiet: sending the state held back");
                self.deliver(n).await;
            }
        }
    }

    /// Whether a held-back state is not what the manager last received.
    pub(super) fn is_news(&self, n: &Notification) -> bool {
        let (Some(source), Some(state)) = (&n.source, n.state) else {
            return false;
        };
        self.last_state.get(&(source.clone(), state)) != Some(&n.trap_oid)
    }
}
pub(super) fn log_suppressed(key: &str, n: u32, total: u64) {
    info!(source = %key, suppressed = n, total_suppressed = total, "notification storm over: notifications suppressed in the interval");
}
