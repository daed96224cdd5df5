//! PortSamplesControl / PortSamplesResult as IBA 16.1.3 describes them, driven
//! by the simulator's clock.
//!
//! The state machine is the shared one ([`crate::source::sample_run`]);
//! here the results come from the traffic model over the run's window:
//! zero before it, running inside it, frozen after it.

use super::fabric::{Fabric, SAMPLE_TICK};
use super::traffic::TrafficModel;
use super::PortFaults;
use crate::mad::pma::{PortSamplesControl, PortSamplesResult};
use crate::model::PortIdx;
use crate::source::sample_run::SampleRun;
use crate::types::PortNum;
use std::collections::HashMap;

/// One node's sampling mechanism: the shared state machine over the
/// simulator's clock (seconds since start).
#[derive(Debug, Clone)]
pub(crate) struct Engine {
    node: u32,
    run: SampleRun<f64>,
}

/// CounterWidth 4 = 32-bit results.
const COUNTER_WIDTH: u8 = 4;

impl Engine {
    pub(crate) fn new(node: u32) -> Self {
        Self {
            node,
            run: SampleRun::new(PortSamplesControl::default()),
        }
    }

    /// Applies a Set at time `t` (seconds); `tick` is seconds per tick.
    pub(crate) fn set(&mut self, req: &PortSamplesControl, t: f64, tick: f64) {
        self.run.set(req, t, |t, n| t + f64::from(n) * tick);
    }

    /// Control and result as a Get at `t` would return them.
    pub(crate) fn state_at(
        &self,
        model: &TrafficModel,
        f: &Fabric,
        t: f64,
        faults: &HashMap<PortIdx, PortFaults>,
    ) -> (PortSamplesControl, PortSamplesResult) {
        let status = self.run.status(t);
        let mut c = self.run.control().clone();
        describe(&mut c);
        c.sample_status = status;
        let mut r = PortSamplesResult {
            tag: c.tag,
            sample_status: status,
            ..PortSamplesResult::default()
        };
        let Some((start, end)) = self.run.window() else {
            return (c, r);
        };
        if t < start {
            return (c, r);
        }
        let upto = t.min(end);
        let ports = self.ports(f);
        for (slot, sel) in r.counter.iter_mut().zip(c.counter_select.iter()) {
            let mut sum: u64 = 0;
            for p in &ports {
                let (Some(a), Some(b)) = (
                    model.sample_quantity(f, *p, *sel, start, faults),
                    model.sample_quantity(f, *p, *sel, upto, faults),
                ) else {
                    continue;
                };
                sum = sum.saturating_add(b.saturating_sub(a));
            }
            *slot = sum.min(u64::from(u32::MAX)) as u32;
        }
        (c, r)
    }

    fn ports(&self, f: &Fabric) -> Vec<PortIdx> {
        select_ports(f, self.node, self.run.control().port_select)
    }
}

/// The port(s) a node's PortSelect names.
pub(crate) fn select_ports(f: &Fabric, node: u32, sel: u8) -> Vec<PortIdx> {
    if sel == PortNum::ALL.0 {
        return f.node_port_range(node).collect();
    }
    f.node_port(node, PortNum(sel)).into_iter().collect()
}

/// The read-only fields of our PortSamplesControl (Tick, CounterWidth, masks).
fn describe(c: &mut PortSamplesControl) {
    c.tick = SAMPLE_TICK;
    c.counter_width = COUNTER_WIDTH;
    for i in 0..15 {
        // Bit 0: all mandatory quantities supported.
        c.set_counter_mask(i, 1);
    }
    c.sample_mechanisms = 0;
}

/// What a PMA shows before any sampling run: status 0, results zero.
pub(crate) fn idle() -> (PortSamplesControl, PortSamplesResult) {
    let mut c = PortSamplesControl::default();
    describe(&mut c);
    (c, PortSamplesResult::default())
}
