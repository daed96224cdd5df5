//! The fabric part of /metrics, encoded while the body is sent: a cursor
//! over the published snapshot writes the next chunk of samples each time
//! the connection takes more. A scrape of a 289k-port fabric holds one
//! chunk, never the whole text, and a slow reader pins nothing else.
//!
//! Which families are written is the operator's choice (`metrics_families`):
//! a 48k-host fabric has millions of port samples per family.

mod families;
mod groups;
mod rows;

use std::fmt::Write as _;
use std::sync::Arc;

use ib::model::health::{Degraded, PortHealth};
use ib::model::{Node, Snapshot};

use super::header;
use super::text::{Name, Text};
use crate::models::fabric_health::HealthReport;
use families::{CounterFamily, DETAIL_COUNTERS, HEALTH_GAUGES, STATE_GAUGES, VL_COUNTERS};
pub use groups::{Families, Group, Shard};
pub(crate) use rows::esc;
pub use rows::{rows, Rows};
use rows::{Kind, Row, NO_VALUE};

/// One family of the fabric part.
#[derive(Debug, Clone, Copy)]
enum Step {
    Info(Kind),
    /// A counter family and its index in [`families::counters`] (its
    /// column in [`Rows`]).
    Counter(Kind, &'static CounterFamily, usize),
    Detail(Kind, usize),
    Vl(Kind, usize),
    State(Kind, usize),
    /// `link_degraded` (false) or `link_limited` (true).
    Link(Kind, bool),
    Health(Kind, usize),
    HealthSettings,
    Sms,
}

/// The families of one scrape, in exposition order: the fabric-wide ones
/// (health settings, SMs) in the first group only (`first`).
fn plan(families: Families, health: bool, first: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    for k in Kind::BOTH {
        if families.has(Group::State) {
            steps.push(Step::Info(k));
        }
        for (i, (g, c)) in families::counters().enumerate() {
            if families.has(g) {
                steps.push(Step::Counter(k, c, i));
            }
        }
        if families.has(Group::Detail) {
            steps.extend((0..DETAIL_COUNTERS.len()).map(|i| Step::Detail(k, i)));
        }
        if families.has(Group::Vl) {
            steps.extend((0..VL_COUNTERS.len()).map(|i| Step::Vl(k, i)));
        }
        if families.has(Group::State) {
            steps.extend((0..STATE_GAUGES.len()).map(|i| Step::State(k, i)));
        }
        if health && families.has(Group::Health) {
            steps.push(Step::Link(k, false));
            steps.push(Step::Link(k, true));
            steps.extend((0..HEALTH_GAUGES.len()).map(|i| Step::Health(k, i)));
        }
    }
    // Every group: alert rules compare each port with its own target's
    // thresholds.
    if health && families.has(Group::Health) {
        steps.push(Step::HealthSettings);
    }
    if first {
        steps.push(Step::Sms);
    }
    steps
}

/// A cursor over the fabric part of one scrape.
pub struct Exposition {
    published: Arc<crate::models::source_thread::Published>,
    rows: Arc<Rows>,
    steps: Vec<Step>,
    step: usize,
    /// The next row (or node, or SM) of the current step.
    pos: usize,
    /// Whether the current step's HELP and TYPE are written.
    started: bool,
    /// The current family's metric name.
    name: Name,
    /// The group of nodes asked for (None: all).
    shard: Option<Shard>,
}

/// What a family's items are to a group of nodes: their node's GUID hash.
trait Member {
    fn mix(&self) -> u64;
}

impl Member for Row {
    fn mix(&self) -> u64 {
        self.mix
    }
}

impl Member for Node {
    fn mix(&self) -> u64 {
        groups::mix(self.info.node_guid.0)
    }
}

/// SMs are fabric-wide: written in the first group only ([`plan`]).
impl Member for ib::model::SmRecord {
    fn mix(&self) -> u64 {
        0
    }
}

/// Where a family's lines go: the chunk's text.
struct Lines<'a> {
    out: &'a mut Text,
    /// The row (or node, or SM) being written.
    pos: usize,
    rows: &'a Rows,
    /// The family's metric name.
    name: &'a Name,
}

impl Lines<'_> {
    /// A port's sample, `name{labels} value`, written in place
    /// ([`Text::sample`]): at millions of samples a scrape, `write!`'s
    /// formatting machinery, then pushing the pieces on a `String`, cost
    /// more than the text itself.
    #[inline(always)]
    fn sample(&mut self, r: &Row, value: u64) {
        self.out.sample(self.name, self.rows.braced(r), value);
    }

    /// A port's float gauge ([`value_f64`]).
    fn sample_f64(&mut self, r: &Row, v: f64) {
        value_f64(self.out, self.name, self.rows.braced(r), v);
    }
}

impl Exposition {
    /// `rows` must be [`rows`] of `published`.
    pub fn new(
        published: Arc<crate::models::source_thread::Published>,
        rows: Arc<Rows>,
        families: Families,
        shard: Option<Shard>,
    ) -> Self {
        let health = published.extra.health.is_some();
        let first = shard.is_none_or(Shard::is_first);
        Exposition {
            published,
            rows,
            steps: plan(families, health, first),
            shard,
            step: 0,
            pos: 0,
            started: false,
            name: Name::default(),
        }
    }

    /// Appends samples to `out` until it holds at least `want` octets or
    /// the fabric part ends; false once it has ended.
    pub(super) fn fill(&mut self, out: &mut Text, want: usize) -> bool {
        while let Some(&step) = self.steps.get(self.step) {
            if !self.started {
                self.begin(out, step);
                self.started = true;
            }
            if self.write(out, want, step) {
                self.step += 1;
                self.pos = 0;
                self.started = false;
            }
            if out.len() >= want {
                return self.step < self.steps.len();
            }
        }
        false
    }

    /// Writes `step`'s samples from the cursor on until `out` holds `want`
    /// octets; true when the step has no more.
    fn write(&mut self, out: &mut Text, want: usize, step: Step) -> bool {
        let published = Arc::clone(&self.published);
        let rows = Arc::clone(&self.rows);
        let snap = &published.snapshot;
        let report = published.extra.health.as_deref();
        match step {
            Step::Info(k) => self.each(out, want, &snap.nodes, |w, n| {
                if Kind::of(n) == k {
                    info(w.out, w.name.as_str(), k, snap, n);
                }
            }),
            // The rows hold a column for each family of the configured
            // groups, and a scrape's families are among them
            // (`metrics_families` takes a restart).
            Step::Counter(k, _, i) => {
                let column = rows.column(k, i);
                self.each(out, want, rows.kind(k), |w, r| {
                    if let Some(&v) = column.get(w.pos).filter(|_| r.counted) {
                        w.sample(r, v);
                    }
                })
            }
            Step::Detail(k, i) => {
                let Some(&((_, _, value), read)) = DETAIL_COUNTERS.get(i) else {
                    return true;
                };
                self.each(out, want, rows.kind(k), |w, r| {
                    if let Some(c) = snap.ports.get(r.port).and_then(|p| p.counters.as_ref()) {
                        if read(&c.readings) {
                            w.sample(r, value(&c.totals));
                        }
                    }
                })
            }
            Step::Vl(k, i) => {
                let Some(&(_, _, vls, unit)) = VL_COUNTERS.get(i) else {
                    return true;
                };
                self.each(out, want, rows.kind(k), |w, r| {
                    let Some(c) = snap.ports.get(r.port).and_then(|p| p.counters.as_ref()) else {
                        return;
                    };
                    let counts = vls(&c.totals);
                    if counts.is_present() {
                        for (vl, v) in counts.to_array().iter().enumerate() {
                            sample_vl(
                                w.out,
                                w.name.as_str(),
                                w.rows.labels(r),
                                vl,
                                v.wrapping_mul(unit),
                            );
                        }
                    }
                })
            }
            Step::State(k, i) => {
                let column = rows.state(k, i);
                self.each(out, want, rows.kind(k), |w, r| {
                    if let Some(&v) = column.get(w.pos) {
                        w.sample(r, v);
                    }
                })
            }
            Step::Link(k, limited) => {
                let links = rows.links(k);
                self.each(out, want, rows.kind(k), |w, r| {
                    // A link with nothing found has no sample.
                    if links.get(w.pos).is_some_and(|l| l[usize::from(limited)]) {
                        let Some(h) = health_of(report, r) else {
                            return;
                        };
                        let finding = if limited { &h.limited } else { &h.degraded };
                        if let Some(d) = finding {
                            below(w.out, w.name.as_str(), w.rows.labels(r), d);
                        }
                    }
                })
            }
            Step::Health(k, i) => {
                let column = rows.health(k, i);
                self.each(out, want, rows.kind(k), |w, r| {
                    // A zero (no errors, no flaps, no flag) tells
                    // nothing: a healthy port has no health samples.
                    if let Some(&v) = column.get(w.pos) {
                        if v.to_bits() != NO_VALUE.to_bits() && v != 0.0 {
                            w.sample_f64(r, v);
                        }
                    }
                })
            }
            Step::HealthSettings => {
                if let Some(r) = report {
                    health_settings(out, r);
                }
                true
            }
            Step::Sms => self.each(out, want, &snap.sms, |w, sm| {
                let node = sm
                    .port
                    .and_then(|p| snap.port(p))
                    .and_then(|p| snap.node(p.node));
                let _ = writeln!(
                    w.out,
                    "{}{{guid=\"{}\",lid=\"{}\",node=\"{}\",priority=\"{}\"}} {}",
                    w.name.as_str(),
                    sm.info.guid,
                    sm.lid.0,
                    esc(node.map_or("", |n| n.description.as_str())),
                    sm.info.priority,
                    sm.info.sm_state
                );
            }),
        }
    }

    /// Writes a step's HELP and TYPE and remembers its metric name.
    fn begin(&mut self, out: &mut Text, step: Step) {
        self.name = Name::default();
        let Some((name, help, counter)) = describe(step) else {
            // HealthSettings: two families of their own, written whole.
            return;
        };
        header(out, &name, if counter { "counter" } else { "gauge" }, help);
        self.name = Name::new(name);
    }

    /// Writes `items` from the cursor on until `out` is full; true when the
    /// step has no more. Not inlined: a loop of its own (one per family
    /// kind) keeps its values in registers.
    #[inline(never)]
    fn each<T: Member>(
        &mut self,
        out: &mut Text,
        want: usize,
        items: &[T],
        mut write: impl FnMut(&mut Lines, &T),
    ) -> bool {
        let mut lines = Lines {
            out,
            pos: self.pos,
            rows: &self.rows,
            name: &self.name,
        };
        let shard = self.shard;
        while let Some(item) = items.get(lines.pos) {
            if lines.out.len() >= want {
                break;
            }
            if shard.is_none_or(|s| s.has(item.mix())) {
                write(&mut lines, item);
            }
            lines.pos += 1;
        }
        self.pos = lines.pos;
        self.pos >= items.len()
    }
}

/// A step's metric name, help and whether it is a counter.
fn describe(step: Step) -> Option<(String, &'static str, bool)> {
    let port = |k: Kind, suffix: &str| format!("infiniband_{}_port_{suffix}", k.name());
    Some(match step {
        Step::Info(k) => (
            format!("infiniband_{}_info", k.name()),
            match k {
                Kind::Switch => "Each switch in the fabric (value 1)",
                Kind::Hca => "Each hca in the fabric (value 1)",
            },
            false,
        ),
        Step::Counter(k, &(suffix, help, _), _) => (port(k, suffix), help, true),
        Step::Detail(k, i) => {
            let ((suffix, help, _), _) = DETAIL_COUNTERS.get(i)?;
            (port(k, suffix), *help, true)
        }
        Step::Vl(k, i) => {
            let (suffix, help, _, _) = VL_COUNTERS.get(i)?;
            (port(k, suffix), *help, true)
        }
        Step::State(k, i) => {
            let (suffix, help, _) = STATE_GAUGES.get(i)?;
            (port(k, suffix), *help, false)
        }
        Step::Link(k, false) => (
            port(k, "link_degraded"),
            "1: the active link trained below the width or speed both ends support and enable, a fault (labels: actual and expected)",
            false,
        ),
        Step::Link(k, true) => (
            port(k, "link_limited"),
            "1: both ends enable less width or speed than both support and the active link runs below that, a configuration as iblinkinfo's Could be (labels: actual and supported)",
            false,
        ),
        Step::Health(k, i) => {
            let (suffix, help, _) = HEALTH_GAUGES.get(i)?;
            (port(k, suffix), *help, false)
        }
        Step::HealthSettings => return None,
        Step::Sms => (
            "infiniband_sm_state".into(),
            "SMState of each Subnet Manager: 0 notActive (not answering), 1 discovering, 2 standby, 3 master",
            false,
        ),
    })
}

/// A float gauge's sample line, its value as `Display` writes it (whole
/// values, most health gauges, without a fraction).
fn value_f64(out: &mut Text, name: &Name, labels: &[u8], v: f64) {
    out.put(name.as_str().as_bytes());
    out.put(labels);
    let _ = writeln!(out, "{v}");
}

/// One sample of a per-VL family: the port's labels and `vl`.
fn sample_vl(out: &mut Text, name: &str, labels: &str, vl: usize, value: u64) {
    out.put(name.as_bytes());
    out.put(b"{");
    out.put(labels.as_bytes());
    out.put(b",vl=\"");
    out.put_u64(vl as u64);
    out.put(b"\"} ");
    out.put_u64(value);
    out.put(b"\n");
}

fn health_of<'a>(report: Option<&'a HealthReport>, r: &Row) -> Option<&'a PortHealth> {
    report?.ports.get(r.health? as usize)
}

/// `infiniband_<kind>_info` of one node: a switch's LID is port 0's, a
/// CA's its first port's with a LID.
fn info(out: &mut Text, name: &str, k: Kind, snap: &Snapshot, node: &Node) {
    let lid = snap
        .ports
        .get(node.ports.start as usize..node.ports.end as usize)
        .unwrap_or(&[])
        .iter()
        .map(|p| p.info.lid.0)
        .find(|&l| l != 0)
        .unwrap_or(0);
    // Piece by piece: through `writeln!` the GUID's padded hex and the
    // escaped description cost more than a port sample line.
    out.put(name.as_bytes());
    out.put(b"{guid=\"");
    out.put_guid(node.info.node_guid.0);
    out.put(b"\",");
    out.put(k.name().as_bytes());
    out.put(b"=\"");
    out.put_escaped(&node.description);
    out.put(b"\",lid=\"");
    out.put_u64(u64::from(lid));
    out.put(b"\"} 1\n");
}

/// A `link_degraded` or `link_limited` sample of a finding: 1 with the
/// actual and expected width and speed as labels (without one, none).
fn below(out: &mut Text, name: &str, labels: &str, d: &Degraded) {
    let _ = writeln!(
        out,
        "{name}{{{labels},width=\"{}\",expected_width=\"{}\",speed=\"{}\",expected_speed=\"{}\"}} 1",
        d.width, d.expected_width, d.speed, d.expected_speed
    );
}

/// The health window and thresholds in force, so alert rules compare with
/// the agent's own settings (`[health]`), and the fabric-wide finding
/// NO_MASTER_SM.
fn health_settings(out: &mut Text, r: &HealthReport) {
    let c = &r.config;
    header(
        out,
        "infiniband_health_window_seconds",
        "gauge",
        "The window health rates and flap counts are taken over ([health] window)",
    );
    let _ = writeln!(
        out,
        "infiniband_health_window_seconds {}",
        c.window.as_secs_f64()
    );
    header(
        out,
        "infiniband_health_no_master_sm",
        "gauge",
        "1: no master Subnet Manager answers (NO_MASTER_SM)",
    );
    let _ = writeln!(
        out,
        "infiniband_health_no_master_sm {}",
        u8::from(r.no_master_sm)
    );
    header(out, "infiniband_health_threshold", "gauge", "The [health] thresholds: above max_symbol_ber, max_link_recovery_per_hour or max_xmit_wait_ratio, or at flap_count, a port is unhealthy");
    for (check, v) in [
        ("max_symbol_ber", c.max_symbol_ber),
        ("max_link_recovery_per_hour", c.max_link_recovery_per_hour),
        ("flap_count", c.flap_count as f64),
        ("max_xmit_wait_ratio", c.max_xmit_wait_ratio),
    ] {
        let _ = writeln!(out, "infiniband_health_threshold{{check=\"{check}\"}} {v}");
    }
}

#[cfg(test)]
mod tests {
    /// A float gauge's text is what `Display` writes, on both paths.
    #[test]
    fn float_samples_are_written_as_display_writes_them() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -3.0,
            12.5,
            1e-12,
            3600.0,
            8.9e15,
            9.5e15,
            1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -12.5,
            0.5,
            -0.5,
            -8.9e15,
            4_503_599_627_370_497.0,
            f64::MIN_POSITIVE,
        ] {
            let mut out = super::Text::with_room(0);
            super::value_f64(&mut out, &super::Name::new("m".into()), b" ", v);
            assert_eq!(out.as_bytes(), format!("m {v}\n").as_bytes());
        }
    }
}
