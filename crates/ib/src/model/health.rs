//! Fabric health, evaluated per sweep from what every sweep already reads
//! (PortInfo and the PMAs' counters): no MAD of its own. A [`Health`] is
//! fed each published snapshot and keeps, per port, a short history of the
//! counters it needs for windowed rates; [`Health::observe`] returns the
//! report of that snapshot. docs/health.md gives every formula.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::model::{Port, Snapshot};
use crate::types::{Guid, LinkSpeed, LinkWidth, NodeType, PortState};

/// Thresholds and windows (config `[health]`); in reports with the window
/// as `window_s`, seconds, as the configuration gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthConfig {
    /// The window rates and flap counts are taken over.
    #[serde(rename = "window_s", with = "secs")]
    pub window: Duration,
    /// Symbol errors per bit the link carried above which a link is an
    /// error hot spot (IBTA's link quality target is 1e-12; 1e-12 is the
    /// default).
    pub max_symbol_ber: f64,
    /// LinkErrorRecovery events per hour above which a link is a hot spot.
    /// The default, 6, is one event in the default 600 s window: a single
    /// retraining is no finding, a second within ten minutes is.
    pub max_link_recovery_per_hour: f64,
    /// Link downs within the window (LinkDowned increments or the down
    /// transitions the sweeps saw, the larger) that make a port flapping.
    pub flap_count: u64,
    /// Share of transmit time spent waiting (congestion) above which a
    /// port is congested.
    pub max_xmit_wait_ratio: f64,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            window: Duration::from_secs(600),
            max_symbol_ber: 1e-12,
            max_link_recovery_per_hour: 6.0,
            flap_count: 2,
            max_xmit_wait_ratio: 0.05,
        }
    }
}

/// A [`Duration`] as fractional seconds.
mod secs {
    use std::time::Duration;

    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let x = f64::deserialize(d)?;
        Duration::try_from_secs_f64(x).map_err(|e| D::Error::custom(format!("{x} s: {e}")))
    }
}

/// A link running below what both ends could run: its width and speed and
/// the ones expected. The names are the types' own (borrowed) when
/// evaluated, owned when read back from a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Degraded {
    pub width: Cow<'static, str>,
    pub expected_width: Cow<'static, str>,
    pub speed: Cow<'static, str>,
    pub expected_speed: Cow<'static, str>,
}

/// One port's health in one snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortHealth {
    pub guid: Guid,
    pub node: String,
    pub port: u8,
    /// The other end: (node name, port), when linked.
    pub peer: Option<(String, u8)>,
    /// The peer's node GUID (with `peer`): what tells the two ends of one
    /// link apart from two links between same-named nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_guid: Option<Guid>,
    /// The port is active now.
    pub active: bool,
    /// It was active in an earlier snapshot and is not now (a link that went
    /// down; never-cabled ports are not reported).
    pub down_after_up: bool,
    /// DEGRADED: the active link trained below the widest width or fastest
    /// speed both ends enable (a fault: cable, connector, port).
    pub degraded: Option<Degraded>,
    /// LIMITED: what both ends enable is below what both support, and the
    /// link runs below what they support (a configuration, as iblinkinfo's
    /// "Could be ..." reports it); expected: what both ends support.
    #[serde(default)]
    pub limited: Option<Degraded>,
    /// Symbol errors per bit the link carried over the window: its active
    /// data rate times the time, idle included (the BER a link is specified
    /// by; errors per received data bit would make an idle link's one
    /// error look like a bad cable). Until the samples span a window, the
    /// errors so far count against a whole window (None: no history yet or
    /// no active link).
    pub symbol_ber: Option<f64>,
    /// LinkErrorRecovery events within the window, per hour (events over
    /// the longer of the samples' span and the window: one event in the
    /// first seconds is not 360 an hour).
    pub link_recovery_per_hour: Option<f64>,
    /// Link downs within the window: the larger of the LinkDowned increase
    /// and `down_transitions` (ibsim never moves LinkDowned; some PMAs
    /// saturate it or get cleared).
    pub link_downed: u64,
    /// The LinkDowned increase within the window.
    #[serde(default)]
    pub link_downed_counter: u64,
    /// Active -> Down transitions the sweeps saw within the window.
    #[serde(default)]
    pub down_transitions: u64,
    /// PortXmitWait / (PortXmitWait + PortXmitData) over the window: the
    /// share of transmit opportunities spent waiting for credits.
    pub xmit_wait_ratio: Option<f64>,
    /// A counter read lower than in the last sweep: cleared by someone
    /// (another performance manager, perfquery -R, this agent's Set).
    pub counters_cleared: bool,
}

impl PortHealth {
    /// Whether anything about the port is worth an operator's look as a
    /// fault (LIMITED is a configuration: a finding, not a fault).
    pub fn is_unhealthy(&self, c: &HealthConfig) -> bool {
        self.down_after_up
            || self.degraded.is_some()
            || self.symbol_ber.is_some_and(|b| b > c.max_symbol_ber)
            || self
                .link_recovery_per_hour
                .is_some_and(|r| r > c.max_link_recovery_per_hour)
            || self.link_downed >= c.flap_count
            || self
                .xmit_wait_ratio
                .is_some_and(|r| r > c.max_xmit_wait_ratio)
    }
}

/// The counters a port's health needs, at one sweep.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: SystemTime,
    symbol_errors: u64,
    link_recovery: u64,
    link_downed: u64,
    xmit_data: u64,
    xmit_wait: u64,
    /// The PMA's own PortCounters readings: lower than last time means a
    /// clear (the totals above carry on over it).
    raw: [u64; 5],
}

/// Summary readings a clear resets (32-bit data/packet and the error
/// counters an operator clears).
fn raw(c: &crate::mad::pma::PortCounters) -> [u64; 5] {
    [
        c.symbol_error_counter.into(),
        c.link_error_recovery_counter.into(),
        c.port_rcv_errors.into(),
        c.port_xmit_data.into(),
        c.port_rcv_data.into(),
    ]
}

/// Health across snapshots: per-port history over the window.
#[derive(Debug, Default)]
pub struct Health {
    config: HealthConfig,
    history: HashMap<(Guid, u8), VecDeque<Sample>>,
    ever_active: HashSet<(Guid, u8)>,
    /// Whether each port was Active in the last snapshot it was in.
    was_active: HashMap<(Guid, u8), bool>,
    /// When the sweeps saw each port go from Active to Down, within the
    /// window. Kept while the port is out of the fabric (its far end gone
    /// with it), so a link that comes back still counts its flaps.
    downs: HashMap<(Guid, u8), VecDeque<SystemTime>>,
}

impl Health {
    pub fn new(config: HealthConfig) -> Self {
        Health {
            config,
            ..Health::default()
        }
    }

    pub fn config(&self) -> &HealthConfig {
        &self.config
    }

    /// Takes in one snapshot and reports every port of it (switch port 0
    /// excepted: it has no link).
    pub fn observe(&mut self, snap: &Snapshot) -> Vec<PortHealth> {
        let mut out = Vec::with_capacity(snap.ports.len());
        let mut seen = HashSet::with_capacity(snap.ports.len());
        // Down transitions older than the window are forgotten, also those
        // of ports out of the fabric now.
        let (now, window) = (snap.sweep.time, self.config.window);
        self.downs.retain(|_, d| {
            d.retain(|t| now.duration_since(*t).map_or(true, |age| age < window));
            !d.is_empty()
        });
        for p in &snap.ports {
            let Some(node) = snap.node(p.node) else {
                continue;
            };
            if node.info.node_type() == Some(NodeType::Switch) && p.num.0 == 0 {
                continue;
            }
            let key = (node.info.node_guid, p.num.0);
            seen.insert(key);
            let active = p.info.port_state() == Some(PortState::Active);
            if active {
                self.ever_active.insert(key);
            }
            let was_active = self.was_active.insert(key, active) == Some(true);
            let went_down = was_active && p.info.port_state() == Some(PortState::Down);
            if went_down {
                self.downs.entry(key).or_default().push_back(now);
            }
            let down_transitions = self.downs.get(&key).map_or(0, |d| d.len() as u64);
            let peer_node = p
                .remote
                .and_then(|r| snap.port(r))
                .and_then(|r| snap.node(r.node).map(|n| (n, r.num.0)));
            let peer = peer_node.map(|(n, q)| (n.description.clone(), q));
            let peer_guid = peer_node.map(|(n, _)| n.info.node_guid);
            let mut h = PortHealth {
                guid: node.info.node_guid,
                node: node.description.clone(),
                port: p.num.0,
                peer,
                peer_guid,
                active,
                down_after_up: !active && self.ever_active.contains(&key),
                degraded: if active { degraded(snap, p) } else { None },
                limited: if active { limited(snap, p) } else { None },
                symbol_ber: None,
                link_recovery_per_hour: None,
                link_downed: 0,
                link_downed_counter: 0,
                down_transitions,
                xmit_wait_ratio: None,
                counters_cleared: false,
            };
            if let Some(c) = &p.counters {
                let t = &c.totals;
                let s = Sample {
                    at: c.read_at,
                    symbol_errors: t.symbol_error_counter,
                    link_recovery: t.link_error_recovery_counter,
                    link_downed: t.link_downed_counter,
                    xmit_data: t.port_xmit_data,
                    xmit_wait: t.port_xmit_wait,
                    raw: raw(&c.readings.counters),
                };
                let hist = self.history.entry(key).or_default();
                h.counters_cleared = hist
                    .back()
                    .is_some_and(|b| b.at < s.at && b.raw.iter().zip(s.raw).any(|(o, n)| n < *o));
                slide(hist, s, self.config.window);
                let line_bps = p
                    .info
                    .link_width()
                    .zip(snap.port_speed(p))
                    .map(|(w, sp)| crate::types::data_rate_mbps(w, sp) as f64 * 1e6)
                    .filter(|b| *b > 0.0);
                rates(&mut h, hist, line_bps, self.config.window);
                if !active {
                    // No link, no traffic to judge: only flaps and clears count.
                    h.symbol_ber = None;
                    h.link_recovery_per_hour = None;
                    h.xmit_wait_ratio = None;
                }
            }
            h.link_downed = h.link_downed.max(down_transitions);
            out.push(h);
        }
        // Ports gone from the fabric keep no counter history (their down
        // transitions age out with the window, above).
        self.history.retain(|k, _| seen.contains(k));
        self.was_active.retain(|k, _| seen.contains(k));
        out
    }
}

/// Samples a port keeps a window, besides the one before the window and
/// the newest: rates need only the oldest and the newest, and those
/// between only move the oldest on as the window slides. Every sweep's
/// (60 a port at the default 10 s sweeps and 600 s window: some 1.8 GB at
/// 289,000 ports) came to a third of a 48,000-host agent's memory; kept a
/// sixteenth of the window apart, the span a rate covers passes the
/// window by at most that.
const KEPT_PER_WINDOW: u32 = 16;

/// Takes `s` into a port's samples (unless it is no newer than the
/// newest) and drops those the window has passed, keeping the last before
/// it. The newest goes first when it came less than a
/// [`KEPT_PER_WINDOW`]th of the window after the one before it.
fn slide(hist: &mut VecDeque<Sample>, s: Sample, window: Duration) {
    let at = s.at;
    if hist.back().is_none_or(|b| b.at < at) {
        let n = hist.len();
        let close = match (n.checked_sub(2).and_then(|i| hist.get(i)), hist.back()) {
            (Some(before), Some(newest)) => newest
                .at
                .duration_since(before.at)
                .is_ok_and(|gap| gap < window / KEPT_PER_WINDOW),
            _ => false,
        };
        if close {
            hist.pop_back();
        }
        hist.push_back(s);
    }
    while hist.len() > 2
        && hist
            .get(1)
            .and_then(|second| at.duration_since(second.at).ok())
            .is_some_and(|age| age >= window)
    {
        hist.pop_front();
    }
}

/// Windowed rates from the oldest and newest samples; `line_bps`: the
/// link's effective data rate in bit/s. Events are counted over the
/// samples' span and spread over at least a window, so a short span just
/// after the agent starts (or the port appears) cannot inflate a rate.
fn rates(h: &mut PortHealth, hist: &VecDeque<Sample>, line_bps: Option<f64>, window: Duration) {
    let (Some(a), Some(b)) = (hist.front(), hist.back()) else {
        return;
    };
    let Ok(dt) = b.at.duration_since(a.at) else {
        return;
    };
    if dt.is_zero() {
        return;
    }
    let d = |f: fn(&Sample) -> u64| f(b).saturating_sub(f(a));
    h.link_downed_counter = d(|s| s.link_downed);
    h.link_downed = h.link_downed_counter;
    let span = dt.max(window).as_secs_f64();
    if let Some(bps) = line_bps {
        h.symbol_ber = Some(d(|s| s.symbol_errors) as f64 / (bps * span));
    }
    h.link_recovery_per_hour = Some(d(|s| s.link_recovery) as f64 * 3600.0 / span);
    let (wait, data) = (d(|s| s.xmit_wait) as f64, d(|s| s.xmit_data) as f64);
    if wait + data > 0.0 {
        h.xmit_wait_ratio = Some(wait / (wait + data));
    }
}

/// The widest width in a LinkWidthSupported/Enabled mask.
fn widest(mask: u8) -> Option<LinkWidth> {
    LinkWidth::from_mask(mask).last()
}

/// The speeds a port supports and has enabled (LinkSpeed*, and the
/// extended ones when the port says they are valid), fastest last: what it
/// is able and allowed to run.
fn speeds(snap: &Snapshot, p: &Port) -> Vec<LinkSpeed> {
    port_speeds(snap, p, true)
}

/// The speeds a port supports (enabled or not), fastest last.
fn supported_speeds(snap: &Snapshot, p: &Port) -> Vec<LinkSpeed> {
    port_speeds(snap, p, false)
}

/// The speeds a port supports, only those it enables when `enabled`.
fn port_speeds(snap: &Snapshot, p: &Port, enabled: bool) -> Vec<LinkSpeed> {
    let cap = snap
        .node(p.node)
        .filter(|n| n.info.node_type() == Some(NodeType::Switch))
        .and_then(|_| snap.node_port(p.node, crate::types::PortNum(0)))
        .and_then(|p0| snap.port(p0))
        .map_or(p.info.capability_mask, |p0| p0.info.capability_mask);
    let i = &p.info;
    // Enabled 0xF: "set to LinkSpeedSupported" (IBA 14.2.5.6).
    let base = match i.link_speed_enabled {
        _ if !enabled => i.link_speed_supported,
        0xF => i.link_speed_supported,
        e => e & i.link_speed_supported,
    };
    let ext = if cap & crate::mad::smp::port_cap::IS_EXTENDED_SPEEDS_SUPPORTED != 0 {
        let supported = i.link_speed_ext_supported_combined();
        // Ext enabled 0x1F: "set to supported"; 0x1E: extended speeds off.
        match i.link_speed_ext_enabled {
            _ if !enabled => supported,
            0x1F => supported,
            0x1E => 0,
            e => ((e & 0x0F) | ((i.link_speed_ext_enabled2 & 0x03) << 4)) & supported,
        }
    } else {
        0
    };
    LinkSpeed::ALL
        .iter()
        .copied()
        .filter(|s| match s.encoding() {
            crate::types::SpeedEncoding::LinkSpeed(b) => base & b != 0,
            crate::types::SpeedEncoding::LinkSpeedExt(b) => ext & b != 0,
            // FDR10 is a vendor attribute the sweep does not read.
            crate::types::SpeedEncoding::MlnxExtPortInfo(_) => false,
        })
        .collect()
}

/// The widest width and fastest speed both ends of `p`'s link run at most:
/// by what they enable (and support) or, `enabled` false, by what they
/// support. With the link's active width and speed; None without a link.
fn expected(snap: &Snapshot, p: &Port, enabled: bool) -> Option<(LinkWidth, LinkSpeed, Degraded)> {
    let r = p.remote.and_then(|r| snap.port(r))?;
    let width = p.info.link_width()?;
    let speed = snap.port_speed(p)?;
    let mask = |q: &Port| {
        let on = match q.info.link_width_enabled {
            _ if !enabled => q.info.link_width_supported,
            // 0xFF: "set to LinkWidthSupported".
            0xFF => q.info.link_width_supported,
            e => e,
        };
        on & q.info.link_width_supported
    };
    let expected_width = widest(mask(p) & mask(r)).unwrap_or(width);
    let list = if enabled { speeds } else { supported_speeds };
    let (ours, theirs) = (list(snap, p), list(snap, r));
    let expected_speed = ours
        .iter()
        .rev()
        .find(|s| theirs.contains(s))
        .copied()
        .unwrap_or(speed);
    let below = width.lanes() < expected_width.lanes() || speed < expected_speed;
    below.then_some((
        expected_width,
        expected_speed,
        Degraded {
            width: width.name().into(),
            expected_width: expected_width.name().into(),
            speed: speed.name().into(),
            expected_speed: expected_speed.name().into(),
        },
    ))
}

/// DEGRADED: an active link below the widest width both ends have enabled
/// and supported, or below the fastest speed both enable.
fn degraded(snap: &Snapshot, p: &Port) -> Option<Degraded> {
    expected(snap, p, true).map(|(_, _, d)| d)
}

/// LIMITED: an active link below what both ends support, whose ends enable
/// less than that (so it trained as configured). DEGRADED and LIMITED
/// together are the links below what both ends support: iblinkinfo's
/// "Could be ...".
fn limited(snap: &Snapshot, p: &Port) -> Option<Degraded> {
    let (w, s, d) = expected(snap, p, false)?;
    // Not DEGRADED: the link runs at least as wide and fast as both ends
    // enable, so what they enable is below what they support. DEGRADED
    // too: LIMITED only when enabled is below supported as well.
    let enabled_below = match expected(snap, p, true) {
        None => true,
        Some((ew, es, _)) => ew.lanes() < w.lanes() || es < s,
    };
    enabled_below.then_some(d)
}

/// Whether no master Subnet Manager answers: the sweep looked for SMs
/// (found some, or asked the SA or the SMs: MADs in its SA phase) and none
/// is an answering master; or it could not look (a source that reads no
/// SMInfo, like sysfs) and no port is Active (an SM would have made them
/// so: every port waits in Init).
pub fn no_master_sm(snap: &Snapshot) -> bool {
    use crate::types::SmState;
    if snap
        .sms
        .iter()
        .any(|s| s.answering && s.info.sm_state() == Some(SmState::Master))
    {
        return false;
    }
    let looked = !snap.sms.is_empty() || snap.sweep.cost.sa.sent > 0;
    // A switch's port 0 is its management port, no link: ibsim shows it
    // Active with no SM at all.
    let link_active = |p: &crate::model::Port| {
        p.info.port_state() == Some(PortState::Active)
            && !(p.num.0 == 0 && snap.node(p.node).is_some_and(|n| n.switch.is_some()))
    };
    looked || !snap.ports.iter().any(link_active)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sweeps every 10 s for two hours, a 600 s window: a port keeps some
    /// twenty samples, and the oldest is never more than a window, a
    /// sixteenth of one and a sweep before the newest, nor less than a
    /// window once there has been one.
    #[test]
    fn samples_are_kept_a_sixteenth_of_the_window_apart() {
        let window = Duration::from_secs(600);
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut hist = VecDeque::new();
        for k in 0..720u64 {
            let at = t0 + Duration::from_secs(10 * k);
            let s = Sample {
                at,
                symbol_errors: k,
                link_recovery: 0,
                link_downed: 0,
                xmit_data: 0,
                xmit_wait: 0,
                raw: [0; 5],
            };
            slide(&mut hist, s, window);
            assert!(hist.len() <= KEPT_PER_WINDOW as usize + 3, "{}", hist.len());
            let (a, b) = (hist.front().unwrap(), hist.back().unwrap());
            assert_eq!(b.at, at);
            let span = b.at.duration_since(a.at).unwrap();
            assert!(span <= window + window / KEPT_PER_WINDOW + Duration::from_secs(10));
            if k >= 60 {
                assert!(span >= window, "{span:?}");
            }
        }
    }
}
