//! The shown ports of a published snapshot and their labels, made once
//! per snapshot and shared by every family and scrape.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use ib::model::{Node, Port, Snapshot};
use ib::types::{Guid, NodeType, PortNum};

use super::families::{counters, CounterFn, HEALTH_GAUGES, STATE_GAUGES};
use super::{Families, Group};
use crate::models::fabric_health::HealthReport;

/// Node types, in the order the exposition lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Switch,
    Hca,
}

impl Kind {
    pub(super) const BOTH: [Kind; 2] = [Kind::Switch, Kind::Hca];
    pub(super) fn of(n: &Node) -> Kind {
        if n.info.node_type == NodeType::Switch as u8 {
            Kind::Switch
        } else {
            Kind::Hca
        }
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Switch => "switch",
            Kind::Hca => "hca",
        }
    }
}

/// One shown port: where it is in the snapshot, its labels (written once
/// per snapshot, shared by every family and scrape) and its health entry.
pub(super) struct Row {
    pub(super) port: usize,
    /// Where its `{labels} ` (as a sample line holds them between its
    /// name and its value: one copy a line instead of three) are in
    /// [`Rows::labels`].
    pub(super) braced: Range<usize>,
    pub(super) health: Option<u32>,
    /// Whether the port's PMA was read (its counters are in the columns).
    pub(super) counted: bool,
    /// Its node's GUID hash, for scrapes of a group ([`super::Shard`]).
    pub(super) mix: u64,
}

/// The shown ports of one published snapshot, by node type.
pub struct Rows {
    /// The snapshot they were made from (its address and sweep number).
    key: (usize, u64),
    by_kind: [Vec<Row>; 2],
    /// Every row's `{labels} `, back to back in row order: a family reads
    /// them in order (one allocation a row put them where the allocator
    /// had room, and each line's copy waited on memory).
    labels: String,
    /// The counter families' values ([`counters`]) of the configured
    /// groups, by node type, each family a column of that type's rows: a
    /// family reads its column in order instead of each port's counters
    /// where the sweep left them (two cache misses a port and family on a
    /// large fabric: a third of a 48,000-host scrape). Empty: not made.
    columns: [Vec<Vec<u64>>; 2],
    /// The health gauges' values ([`HEALTH_GAUGES`]; [`NO_VALUE`]: none),
    /// as columns for the same reason (each port's health entry is some
    /// hundreds of octets). Empty: not made.
    health: [Vec<Vec<f64>>; 2],
    /// The state gauges' values ([`STATE_GAUGES`]) as columns: each a
    /// field of the snapshot's port, hundreds of octets apart. Empty: the
    /// group is not configured.
    state: [Vec<Vec<u64>>; 2],
    /// Whether each row has a `link_degraded` and a `link_limited` finding, for the
    /// same reason. Empty: no health report or the group not configured.
    links: [Vec<[bool; 2]>; 2],
}

/// A health gauge without a value, in its column: a NaN no computation
/// makes (its payload).
pub(super) const NO_VALUE: f64 = f64::from_bits(0x7ff8_dead_beef_0001);

impl Rows {
    /// Whether these rows belong to `published`'s snapshot.
    pub fn of_same(&self, published: &crate::models::source_thread::Published) -> bool {
        self.key == key(&published.snapshot)
    }

    pub(super) fn kind(&self, k: Kind) -> &[Row] {
        &self.by_kind[k as usize]
    }

    /// Counter family `c`'s values of the rows of type `k` (empty: its
    /// group is not configured).
    pub(super) fn column(&self, k: Kind, c: usize) -> &[u64] {
        self.columns[k as usize].get(c).map_or(&[], |v| &v[..])
    }

    /// Health gauge `g`'s values of the rows of type `k` (empty: the
    /// group is not configured, or the snapshot has no health report).
    pub(super) fn health(&self, k: Kind, g: usize) -> &[f64] {
        self.health[k as usize].get(g).map_or(&[], |v| &v[..])
    }

    /// State gauge `g`'s values of the rows of type `k` (empty: the group
    /// is not configured).
    pub(super) fn state(&self, k: Kind, g: usize) -> &[u64] {
        self.state[k as usize].get(g).map_or(&[], |v| &v[..])
    }

    /// The `link_degraded` and `link_limited` samples of the rows of type
    /// `k` (empty: no health report, or the group is not configured).
    pub(super) fn links(&self, k: Kind) -> &[[bool; 2]] {
        &self.links[k as usize]
    }

    /// Row `r`'s `{labels} `.
    #[inline(always)]
    pub(super) fn braced(&self, r: &Row) -> &[u8] {
        self.labels.as_bytes().get(r.braced.clone()).unwrap_or(&[])
    }

    /// Row `r`'s labels without the braces (for lines that add labels).
    pub(super) fn labels(&self, r: &Row) -> &str {
        unbraced(&self.labels, r)
    }
}

fn unbraced<'a>(labels: &'a str, r: &Row) -> &'a str {
    labels
        .get(r.braced.start + 1..r.braced.end.saturating_sub(2))
        .unwrap_or("")
}

fn key(snap: &Arc<Snapshot>) -> (usize, u64) {
    (Arc::as_ptr(snap) as usize, snap.sweep.number)
}

/// Every external port (switch port 0 is the management port and has no
/// link) with its labels, once per snapshot.
pub fn rows(published: &crate::models::source_thread::Published, families: Families) -> Rows {
    let snap = &published.snapshot;
    let health: HashMap<(Guid, u8), u32> = published
        .extra
        .health
        .as_deref()
        .map(|r| {
            r.ports
                .iter()
                .enumerate()
                .map(|(i, h)| ((h.guid, h.port), i as u32))
                .collect()
        })
        .unwrap_or_default();
    let mut by_kind: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
    let mut labels = String::new();
    // The state gauges' columns, filled with the rows.
    let gauges = if families.has(Group::State) {
        STATE_GAUGES
    } else {
        &[]
    };
    let mut state: [Vec<Vec<u64>>; 2] = [0, 1].map(|_| vec![Vec::new(); gauges.len()]);
    for node in &snap.nodes {
        let range = node.ports.start as usize..node.ports.end as usize;
        for (i, p) in snap
            .ports
            .get(range.clone())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            if p.num == PortNum(0) {
                continue;
            }
            let at = labels.len();
            port_labels(&mut labels, snap, node, p);
            let k = Kind::of(node) as usize;
            for (col, &(_, _, value)) in state[k].iter_mut().zip(gauges) {
                col.push(value(snap, p));
            }
            by_kind[k].push(Row {
                port: range.start + i,
                braced: at..labels.len(),
                health: health.get(&(node.info.node_guid, p.num.0)).copied(),
                counted: p.counters.is_some(),
                mix: super::groups::mix(node.info.node_guid.0),
            });
        }
    }
    labels.shrink_to_fit();
    let columns = by_kind.each_ref().map(|rows| columns(snap, rows, families));
    let report = published.extra.health.as_deref();
    let report = report.filter(|_| families.has(Group::Health));
    let health = by_kind
        .each_ref()
        .map(|rows| report.map_or_else(Vec::new, |r| health_columns(r, rows)));
    let links = by_kind
        .each_ref()
        .map(|rows| report.map_or_else(Vec::new, |r| link_column(r, rows)));
    Rows {
        key: key(snap),
        by_kind,
        labels,
        columns,
        health,
        state,
        links,
    }
}

/// The counter families' columns of `rows` (0 where a port has no
/// counters), for the configured groups (the others empty): each port's
/// counters read once.
fn columns(snap: &Snapshot, rows: &[Row], families: Families) -> Vec<Vec<u64>> {
    // Each family's value, None for a group not configured.
    let values: Vec<Option<CounterFn>> = counters()
        .map(|(group, &(_, _, value))| families.has(group).then_some(value))
        .collect();
    let mut cols: Vec<Vec<u64>> = values
        .iter()
        .map(|v| Vec::with_capacity(if v.is_some() { rows.len() } else { 0 }))
        .collect();
    for r in rows {
        let c = snap.ports.get(r.port).and_then(|p| p.counters.as_ref());
        for (col, value) in cols.iter_mut().zip(&values) {
            if let Some(value) = value {
                col.push(c.map_or(0, |c| value(&c.totals)));
            }
        }
    }
    cols
}

/// The health gauges' columns of `rows`: each port's entry read once.
fn health_columns(report: &HealthReport, rows: &[Row]) -> Vec<Vec<f64>> {
    let mut cols = vec![Vec::with_capacity(rows.len()); HEALTH_GAUGES.len()];
    for r in rows {
        let h = r.health.and_then(|i| report.ports.get(i as usize));
        for (col, &(_, _, value)) in cols.iter_mut().zip(HEALTH_GAUGES) {
            col.push(h.and_then(value).unwrap_or(NO_VALUE));
        }
    }
    cols
}

/// Whether each of `rows` has a `link_degraded` and a `link_limited`
/// finding (an active port's, read from the health report).
fn link_column(report: &HealthReport, rows: &[Row]) -> Vec<[bool; 2]> {
    rows.iter()
        .map(
            |r| match r.health.and_then(|i| report.ports.get(i as usize)) {
                Some(h) if h.active => [h.degraded.is_some(), h.limited.is_some()],
                _ => [false; 2],
            },
        )
        .collect()
}

/// Appends the labels of one port, in braces and followed by a space: its
/// node, number, and the far end of its link.
fn port_labels(l: &mut String, snap: &Snapshot, node: &Node, p: &Port) {
    let kind = Kind::of(node).name();
    let _ = write!(
        l,
        "{{guid=\"{}\",{kind}=\"{}\",port=\"{}\"",
        node.info.node_guid,
        esc(&node.description),
        p.num.0
    );
    if let Some(r) = p.remote.and_then(|r| snap.port(r)) {
        if let Some(rn) = snap.node(r.node) {
            let _ = write!(
                l,
                ",uplink=\"{}\",uplink_guid=\"{}\",uplink_port=\"{}\",uplink_type=\"{}\"",
                esc(&rn.description),
                rn.info.node_guid,
                r.num.0,
                match Kind::of(rn) {
                    Kind::Switch => "SW",
                    Kind::Hca => "CA",
                }
            );
        }
    }
    l.push_str("} ");
}

/// A label value escaped as the text format requires.
pub(crate) fn esc(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    crate::metrics::text::escape(v, |p| s.push_str(p));
    s
}
