//! The simulator's traffic and error model.
//!
//! Each link direction carries a utilisation that swings smoothly around a
//! per-port base (u(t) = base + amp * sin(w t + phase), never negative), so the
//! octets sent up to time T are a closed form: rate * integral of u. What a port
//! receives is what its peer sent. Packets follow from a per-port mean packet
//! size, flow-control packets from a fixed update rate, VL counters from fixed
//! per-VL shares, errors from a per-port error rate (most ports have none).
//! Every port also starts with its own "uptime" of earlier traffic, so 32-bit
//! data counters of fast links are saturated from the start, as on hardware.
//! Everything is seeded and a pure function of time, link flaps (time frozen
//! while down) and error bursts.

use super::fabric::Fabric;
use super::PortFaults;
use crate::mad::pma::{
    PortCounters, PortCountersExtended, PortFlowCtlCounters, PortRcvErrorDetails, PortVlOpData,
    PortVlOpPackets, PortVlXmitWaitCounters, PortXmitDiscardDetails,
};
use crate::model::counters::detail;
use crate::model::{ExtendedFields, PortIdx, PortReadings};
use crate::types::{data_rate_mbps, LinkWidth, NodeType, PortState};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// PortCounters counters in CounterSelect bit order; index 16 is PortXmitWait.
pub(crate) const PC_COUNT: usize = PORT_COUNTERS.len();
use crate::mad::port_counters::PORT_COUNTERS;
/// Widths of the PortCounters fields, from the one descriptor table.
const PC_WIDTH: [u8; PC_COUNT] = {
    let mut w = [0u8; PC_COUNT];
    let mut i = 0;
    while i < PC_COUNT {
        w[i] = PORT_COUNTERS[i].bits;
        i += 1;
    }
    w
};
const XMIT_DATA: usize = 12;
const RCV_DATA: usize = 13;
const XMIT_PKTS: usize = 14;
const RCV_PKTS: usize = 15;
const XMIT_WAIT: usize = 16;

/// Link-level flow-control packets per second per direction (8 data VLs).
const FLOW_PKTS_PER_SEC: f64 = 30_000.0;
/// Share of each VL in data traffic (VL0 carries most; VL15 is management).
const VL_SHARE: [f64; 8] = [0.86, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02];

#[derive(Debug, Clone, Copy, Default)]
struct PortParams {
    /// Link data rate, octets per second (0: no link).
    rate: f64,
    base: f64,
    amp: f64,
    omega: f64,
    phase: f64,
    cos_phase: f64,
    pkt_octets: f64,
    uptime: f64,
    /// Symbol errors per second (0 for clean ports).
    err_rate: f64,
    /// Transmit discards per second (congested switch ports).
    discard_rate: f64,
    multicast_share: f64,
}

/// Seeded per-port parameters of the model.
pub struct TrafficModel {
    /// All-zero readings to fill in (cheaper than decoding defaults per port).
    zero: PortReadings,
    params: Vec<PortParams>,
    remote: Vec<u32>,
    is_switch_port: Vec<bool>,
}

fn sat(v: u64, bits: u8) -> u64 {
    if bits >= 64 {
        v
    } else {
        v.min((1u64 << bits) - 1)
    }
}

impl TrafficModel {
    pub fn new(f: &Fabric, seed: u64) -> Self {
        let n = f.ports.len();
        let mut params = Vec::with_capacity(n);
        let mut remote = Vec::with_capacity(n);
        let mut is_switch_port = Vec::with_capacity(n);
        for p in &f.ports {
            // Per-port stream: the seed and the port's identity, so a port's
            // traffic does not depend on the rest of the topology.
            let mut rng = ChaCha8Rng::seed_from_u64(
                seed ^ p.guid.0.rotate_left(17) ^ (u64::from(p.num.0) << 56),
            );
            let switch = f
                .nodes
                .get(p.node as usize)
                .is_some_and(|x| x.info.node_type() == Some(NodeType::Switch));
            is_switch_port.push(switch);
            remote.push(p.remote.unwrap_or(u32::MAX));
            let linked = p.remote.is_some() && p.info.port_state() == Some(PortState::Active);
            let rate = match (p.info.link_width(), p.info.link_speed(false), linked) {
                (Some(w), Some(s), true) => data_rate_mbps(w, s) as f64 * 1e6 / 8.0,
                (None, Some(s), true) => data_rate_mbps(LinkWidth::X4, s) as f64 * 1e6 / 8.0,
                _ => 0.0,
            };
            let base: f64 = rng.gen_range(0.02..0.35);
            let period: f64 = rng.gen_range(60.0..900.0);
            let phase: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
            let err = rng.gen_bool(0.05) && linked;
            params.push(PortParams {
                rate,
                base,
                amp: base * rng.gen_range(0.2..0.95),
                omega: std::f64::consts::TAU / period,
                phase,
                cos_phase: phase.cos(),
                pkt_octets: rng.gen_range(600.0..4100.0),
                uptime: rng.gen_range(600.0..7200.0),
                err_rate: if err { rng.gen_range(0.002..0.2) } else { 0.0 },
                discard_rate: if switch && linked && rng.gen_bool(0.1) {
                    rng.gen_range(0.01..2.0)
                } else {
                    0.0
                },
                multicast_share: rng.gen_range(0.005..0.05),
            });
        }
        Self {
            zero: PortReadings {
                counters: PortCounters::default(),
                extended: Some(PortCountersExtended::default()),
                extended_fields: ExtendedFields::All,
                rcv_error_details: Some(PortRcvErrorDetails::default()),
                xmit_discard_details: Some(PortXmitDiscardDetails::default()),
                flow_ctl: Some(PortFlowCtlCounters::default()),
                vl_op_packets: Some(PortVlOpPackets::default()),
                vl_op_data: Some(PortVlOpData::default()),
                vl_xmit_wait: Some(PortVlXmitWaitCounters::default()),
                lacking: 0,
            },
            params,
            remote,
            is_switch_port,
        }
    }

    /// Seconds of link-up traffic a port has had by `t` (its uptime, then the
    /// elapsed time minus the time its link was down).
    fn effective_time(&self, p: PortIdx, t: f64, faults: Option<&PortFaults>) -> f64 {
        let up = self.params.get(p as usize).map_or(0.0, |x| x.uptime);
        let down: f64 = faults.map_or(0.0, |f| {
            f.down.iter().map(|(s, e)| (t.min(*e) - s).max(0.0)).sum()
        });
        up + t - down
    }

    fn octets_sent(&self, p: PortIdx, t_eff: f64) -> f64 {
        let Some(x) = self.params.get(p as usize) else {
            return 0.0;
        };
        if x.rate == 0.0 {
            return 0.0;
        }
        let integral =
            x.base * t_eff + x.amp / x.omega * (x.cos_phase - (x.omega * t_eff + x.phase).cos());
        x.rate * integral.max(0.0)
    }

    /// Underlying (never saturated, never reset) counts of the PortCounters
    /// counters at `t`, in CounterSelect bit order (16 = PortXmitWait).
    pub(crate) fn underlying(
        &self,
        _f: &Fabric,
        p: PortIdx,
        t: f64,
        faults: &HashMap<PortIdx, PortFaults>,
    ) -> [u64; PC_COUNT] {
        let mut u = [0u64; PC_COUNT];
        let Some(x) = self.params.get(p as usize).copied() else {
            return u;
        };
        let my = faults.get(&p);
        let te = self.effective_time(p, t, my);
        let sent = self.octets_sent(p, te);
        let r = self.remote.get(p as usize).copied().unwrap_or(u32::MAX);
        let (rcvd, rpkt) = if r != u32::MAX {
            let rte = self.effective_time(r, t, faults.get(&r));
            (
                self.octets_sent(r, rte),
                self.params.get(r as usize).map_or(1.0, |y| y.pkt_octets),
            )
        } else {
            (0.0, 1.0)
        };
        let flaps = my.map_or(0, |f| f.down.iter().filter(|(s, _)| *s <= t).count()) as u64;
        let burst = my.map_or(0, |f| f.burst_symbol);
        let errs = x.err_rate * te;
        u[0] = errs as u64 + burst + 3 * flaps;
        u[1] = (errs / 200.0) as u64 + burst / 50 + flaps;
        u[2] = flaps + u64::from(x.err_rate > 0.1);
        u[3] = (errs / 20.0) as u64 + burst / 4;
        u[4] = (errs / 100.0) as u64;
        u[5] = if self
            .is_switch_port
            .get(p as usize)
            .copied()
            .unwrap_or(false)
        {
            (x.discard_rate * te * 0.1) as u64
        } else {
            0
        };
        u[6] = (x.discard_rate * te) as u64;
        u[9] = (errs / 1000.0) as u64 + burst / 100;
        u[XMIT_DATA] = (sent / 4.0) as u64;
        u[RCV_DATA] = (rcvd / 4.0) as u64;
        u[XMIT_PKTS] = (sent / x.pkt_octets) as u64;
        u[RCV_PKTS] = (rcvd / rpkt) as u64;
        u[XMIT_WAIT] = (x.base * x.base * te * 2.0e6) as u64;
        u
    }

    /// What the port's PMA answers at `t`.
    pub(crate) fn readings(
        &self,
        f: &Fabric,
        p: PortIdx,
        t: f64,
        faults: &HashMap<PortIdx, PortFaults>,
    ) -> PortReadings {
        let u = self.underlying(f, p, t, faults);
        let x = self.params.get(p as usize).copied().unwrap_or_default();
        let my = faults.get(&p);
        // PMA Set(PortCounters) moved some counters: value set + growth since.
        let mut v = u;
        if let Some(fl) = my {
            for (i, s) in fl.set.iter().enumerate() {
                if let (Some((base, val)), Some(slot)) = (s, v.get_mut(i)) {
                    *slot = val.saturating_add(u[i].saturating_sub(*base));
                }
            }
        }
        let w = |i: usize| sat(v[i], PC_WIDTH[i]);
        let z = &self.zero;
        let linked = x.rate > 0.0;
        let te = self.effective_time(p, t, my);
        let mut counters = z.counters.clone();
        for (i, f) in PORT_COUNTERS.iter().enumerate() {
            (f.set)(&mut counters, w(i));
        }
        let mc = |pk: u64| (pk as f64 * x.multicast_share) as u64;
        let extended = PortCountersExtended {
            port_xmit_data: u[XMIT_DATA],
            port_rcv_data: u[RCV_DATA],
            port_xmit_pkts: u[XMIT_PKTS],
            port_rcv_pkts: u[RCV_PKTS],
            port_unicast_xmit_pkts: u[XMIT_PKTS] - mc(u[XMIT_PKTS]),
            port_unicast_rcv_pkts: u[RCV_PKTS] - mc(u[RCV_PKTS]),
            port_multicast_xmit_pkts: mc(u[XMIT_PKTS]),
            port_multicast_rcv_pkts: mc(u[RCV_PKTS]),
            symbol_error_counter: u[0],
            link_error_recovery_counter: u[1],
            link_downed_counter: u[2],
            port_rcv_errors: u[3],
            port_rcv_remote_physical_errors: u[4],
            port_rcv_switch_relay_errors: u[5],
            port_xmit_discards: u[6],
            local_link_integrity_errors: u[9],
            port_xmit_wait: u[XMIT_WAIT],
            ..z.extended.clone().unwrap_or_default()
        };
        let s16 = |v: u64| sat(v, 16) as u16;
        let s32 = |v: u64| sat(v, 32) as u32;
        let rcv_error_details = PortRcvErrorDetails {
            port_local_physical_errors: s16(u[3] - u[3] / 5),
            port_malformed_packet_errors: s16(u[3] / 5),
            ..z.rcv_error_details.clone().unwrap_or_default()
        };
        let xmit_discard_details = PortXmitDiscardDetails {
            port_sw_hoq_lifetime_limit_discards: s16(u[6]),
            ..z.xmit_discard_details.clone().unwrap_or_default()
        };
        let flows = |linked: bool, te: f64| {
            if linked {
                (te * FLOW_PKTS_PER_SEC) as u64
            } else {
                0
            }
        };
        let r = self.remote.get(p as usize).copied().unwrap_or(u32::MAX);
        let rlinked = r != u32::MAX && self.params.get(r as usize).is_some_and(|y| y.rate > 0.0);
        let rte = if rlinked {
            self.effective_time(r, t, faults.get(&r))
        } else {
            0.0
        };
        let flow_ctl = PortFlowCtlCounters {
            port_xmit_flow_pkts: s32(flows(linked, te)),
            port_rcv_flow_pkts: s32(flows(rlinked, rte)),
            ..z.flow_ctl.clone().unwrap_or_default()
        };
        let mut vl_op_packets = z.vl_op_packets.clone().unwrap_or_default();
        let mut vl_op_data = z.vl_op_data.clone().unwrap_or_default();
        let mut vl_xmit_wait = z.vl_xmit_wait.clone().unwrap_or_default();
        let per_vl = !self
            .is_switch_port
            .get(p as usize)
            .copied()
            .unwrap_or(false);
        for (i, share) in VL_SHARE.iter().enumerate().filter(|_| per_vl) {
            let pk = (u[RCV_PKTS] as f64 * share) as u64;
            let d = (u[RCV_DATA] as f64 * share) as u64;
            let wt = (u[XMIT_WAIT] as f64 * share) as u64;
            if let Some(s) = vl_op_packets.port_vl_op_packets.get_mut(i) {
                *s = s16(pk);
            }
            if let Some(s) = vl_op_data.port_vl_op_data.get_mut(i) {
                *s = s32(d);
            }
            if let Some(s) = vl_xmit_wait.port_vl_xmit_wait.get_mut(i) {
                *s = s16(wt);
            }
        }
        if linked {
            // VL15: subnet management, a couple of SMPs a second.
            if let Some(s) = vl_op_packets.port_vl_op_packets.get_mut(15) {
                *s = s16((te * 2.0) as u64);
            }
            if let Some(s) = vl_op_data.port_vl_op_data.get_mut(15) {
                *s = s32((te * 2.0 * 64.0) as u64);
            }
        }
        // Switch PMAs commonly lack the optional per-VL attributes; so do ours.
        PortReadings {
            counters,
            extended: Some(extended),
            extended_fields: ExtendedFields::All,
            rcv_error_details: Some(rcv_error_details),
            xmit_discard_details: Some(xmit_discard_details),
            flow_ctl: Some(flow_ctl),
            vl_op_packets: per_vl.then_some(vl_op_packets),
            vl_op_data: per_vl.then_some(vl_op_data),
            vl_xmit_wait: per_vl.then_some(vl_xmit_wait),
            lacking: if per_vl {
                0
            } else {
                detail::VL_OP_PACKETS | detail::VL_OP_DATA | detail::VL_XMIT_WAIT
            },
        }
    }

    /// A PortSamplesControl quantity (CounterSelect value) of a port at `t`;
    /// None for quantities the simulator does not implement.
    pub(crate) fn sample_quantity(
        &self,
        f: &Fabric,
        p: PortIdx,
        select: u16,
        t: f64,
        faults: &HashMap<PortIdx, PortFaults>,
    ) -> Option<u64> {
        let i = match select {
            0x0001 => XMIT_DATA,
            0x0002 => RCV_DATA,
            0x0003 => XMIT_PKTS,
            0x0004 => RCV_PKTS,
            0x0005 => XMIT_WAIT,
            _ => return None,
        };
        Some(self.underlying(f, p, t, faults)[i])
    }
}

/// PortCounters field number `i` (CounterSelect bit order, 16 = PortXmitWait).
pub(crate) fn pc_value(c: &PortCounters, i: usize) -> u64 {
    PORT_COUNTERS.get(i).map_or(0, |f| (f.get)(c))
}

/// Saturating per-counter sum (what a PMA reports for PortSelect 255).
pub(crate) fn add_counters(a: &PortCounters, b: &PortCounters) -> PortCounters {
    crate::mad::port_counters::add_saturating(a, b)
}
