//! The PortSamplesControl state machine (IBA 16.1.3.2), one for every
//! source that runs it itself: the software sampler over real PMAs
//! ([`super::sampler`], wall-clock time) and the simulator (its own clock).
//!
//! A Set is accepted while no run is in progress, or from the run's owner
//! (same Tag: a restart); otherwise it is ignored, so the requester sees the
//! other Tag in the answer (the collision rule). An accepted Set loads the
//! writable fields and a window counted in Ticks from the Set: SampleStatus
//! is 1 (start timer running) before the window, 2 (sampling) inside it, 0
//! (done) after it.

use crate::mad::pma::{sample_status, PortSamplesControl};

/// One PMA's sampling run over a time type `T` (an `Instant`, simulated
/// seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRun<T> {
    control: PortSamplesControl,
    /// When sampling starts and stops (None: never run).
    window: Option<(T, T)>,
}

impl<T: PartialOrd + Copy> SampleRun<T> {
    /// An idle run with the PMA's read-only fields (Tick, CounterWidth,
    /// masks) in `control`.
    pub fn new(control: PortSamplesControl) -> Self {
        SampleRun {
            control,
            window: None,
        }
    }

    /// The control as last set (its SampleStatus is the owner's to keep).
    pub fn control(&self) -> &PortSamplesControl {
        &self.control
    }

    pub fn control_mut(&mut self) -> &mut PortSamplesControl {
        &mut self.control
    }

    /// The sampling window of the last accepted Set.
    pub fn window(&self) -> Option<(T, T)> {
        self.window
    }

    /// SampleStatus at `now`.
    pub fn status(&self, now: T) -> u8 {
        match self.window {
            Some((s, _)) if now < s => sample_status::STARTED,
            Some((_, e)) if now < e => sample_status::RUNNING,
            _ => sample_status::DONE,
        }
    }

    /// Set(PortSamplesControl) at `now`; `after(t, n)` is `n` Ticks after
    /// `t`. Whether the Set was accepted (else nothing changed).
    pub fn set(&mut self, req: &PortSamplesControl, now: T, after: impl Fn(T, u32) -> T) -> bool {
        if !self.control.accepts_set(req, self.status(now)) {
            return false;
        }
        self.control.apply_writable(req);
        let start = after(now, req.sample_start);
        self.window = Some((start, after(start, req.sample_interval)));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_follows_the_window_and_tags_collide() {
        let mut r = SampleRun::new(PortSamplesControl::default());
        let req = |start, interval, tag| PortSamplesControl {
            sample_start: start,
            sample_interval: interval,
            tag,
            ..PortSamplesControl::default()
        };
        let after = |t: u32, n: u32| t + n;
        assert_eq!(r.status(0), sample_status::DONE);
        assert!(r.set(&req(2, 3, 7), 10, after));
        assert_eq!(
            (r.status(11), r.status(12), r.status(15)),
            (
                sample_status::STARTED,
                sample_status::RUNNING,
                sample_status::DONE
            )
        );
        assert!(
            !r.set(&req(0, 1, 8), 13, after),
            "another Tag while running"
        );
        assert!(r.set(&req(0, 1, 7), 13, after), "the owner restarts");
        assert!(r.set(&req(0, 1, 8), 14, after), "done: anyone");
        assert_eq!(r.control().tag, 8);
    }
}
