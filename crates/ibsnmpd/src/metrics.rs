//! The Prometheus endpoint: HTTP GET /metrics in the text exposition format
//! (version 0.0.4), rendered from the published snapshot. No MAD is sent on
//! the request path: a scrape reads what the last sweep published.
//!
//! Names and labels follow treydock/infiniband_exporter where it has the
//! figure (`infiniband_switch_port_transmit_data_bytes_total{guid,port,switch}`),
//! so dashboards built for it work with little change; docs/metrics.md has
//! the mapping. Built on hyper (HTTP/1 server), see docs/metrics.md.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use ib::model::accum::PortTotals;
use ib::model::health::{HealthConfig, PortHealth};
use ib::model::{Node, Port, Snapshot};
use ib::types::{data_rate_mbps, Guid, NodeType, PortNum};
use snmp::agent::SnmpStats;
use tracing::{debug, warn};

use crate::health::HealthReport;

/// The agent's own counters that live outside the snapshot and SnmpStats.
#[derive(Debug, Default)]
pub struct AgentCounters {
    /// The notification originator's counters (None: no sinks configured).
    pub notifications: std::sync::OnceLock<Arc<snmp::notify::NotifyStats>>,
    /// Successful SIGHUP reloads, and failed ones.
    pub reloads: AtomicU64,
    pub reload_failures: AtomicU64,
}

/// What a scrape renders from.
pub struct Sources {
    /// What is published now: the snapshot and what was derived from it
    /// (the fabric health report, [`crate::health::HealthReport`]).
    pub published: Box<dyn Fn() -> Arc<mibs::Published> + Send + Sync>,
    pub snmp: Arc<SnmpStats>,
    pub agent: Arc<AgentCounters>,
    pub started: Instant,
}

/// Connections the endpoint holds at once unless configured
/// (`metrics_max_connections`): a few Prometheus servers and operators.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;
/// A client must send its request headers within this time.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection's whole life, keep-alive included: a slow reader cannot
/// hold a connection (and its body) for ever.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(120);

/// The fabric part of the exposition, rendered once per published snapshot
/// and shared by every scrape of it (plain and gzipped): N slow readers
/// hold one body, not N.
#[derive(Default)]
struct Rendered {
    /// The snapshot it was rendered from (its address and sweep number).
    key: Option<(usize, u64)>,
    plain: Bytes,
    deflated: Option<Deflated>,
}

/// The fabric part as raw deflate blocks ending in a sync flush (so a
/// scrape's own part can follow as more blocks of the same stream), with
/// the CRC-32 of its text.
#[derive(Clone)]
struct Deflated {
    blocks: Bytes,
    crc: crc32fast::Hasher,
}

impl Deflated {
    fn of(text: &[u8]) -> Deflated {
        use std::io::Write as _;
        let mut z = flate2::write::DeflateEncoder::new(
            Vec::with_capacity(text.len() / 8),
            flate2::Compression::fast(),
        );
        // Writing to a Vec cannot fail; flush() is a sync flush: byte
        // aligned, no final block.
        let _ = z.write_all(text);
        let _ = z.flush();
        let mut crc = crc32fast::Hasher::new();
        crc.update(text);
        Deflated {
            blocks: Bytes::from(std::mem::take(z.get_mut())),
            crc,
        }
    }

    /// One gzip member (RFC 1952): header, the shared blocks, `tail`
    /// compressed as the final blocks, trailer.
    fn gzip_with(&self, shared_len: usize, tail: &[u8]) -> Vec<Bytes> {
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        use std::io::Write as _;
        let _ = z.write_all(tail);
        let tail_blocks = z.finish().unwrap_or_default();
        let mut crc = self.crc.clone();
        crc.update(tail);
        let mut trailer = Vec::with_capacity(8);
        trailer.extend_from_slice(&crc.finalize().to_le_bytes());
        // ISIZE: the length modulo 2^32.
        trailer.extend_from_slice(&((shared_len + tail.len()) as u32).to_le_bytes());
        vec![
            Bytes::from_static(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]),
            self.blocks.clone(),
            Bytes::from(tail_blocks),
            Bytes::from(trailer),
        ]
    }
}

/// The endpoint: its sources and the shared render.
struct Endpoint {
    sources: Sources,
    /// One render at a time; scrapes of the same snapshot share it.
    rendered: tokio::sync::Mutex<Rendered>,
}

/// Serves /metrics on `listener` until the runtime stops, at most
/// `max_connections` connections at once (more are closed as they come).
pub async fn serve(listener: tokio::net::TcpListener, sources: Sources, max_connections: usize) {
    let endpoint = Arc::new(Endpoint {
        sources,
        rendered: tokio::sync::Mutex::new(Rendered::default()),
    });
    let slots = Arc::new(tokio::sync::Semaphore::new(max_connections.max(1)));
    let mut refused = 0u64;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // Out of descriptors and the like: back off, keep serving.
                warn!(error = %e, "metrics: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            // Closed at once: the descriptor goes back now.
            refused += 1;
            if refused.is_power_of_two() {
                warn!(%peer, refused, limit = max_connections, "metrics: connection limit reached; closing new connections");
            }
            drop(stream);
            continue;
        };
        let endpoint = Arc::clone(&endpoint);
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let endpoint = Arc::clone(&endpoint);
                async move { Ok::<_, Infallible>(respond(&req, &endpoint).await) }
            });
            let conn = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), svc);
            match tokio::time::timeout(CONNECTION_LIFETIME, conn).await {
                Ok(Err(e)) => debug!(%peer, error = %e, "metrics: connection ended"),
                Err(_) => debug!(%peer, "metrics: connection closed after its lifetime"),
                Ok(Ok(())) => {}
            }
            drop(slot);
        });
    }
}

/// A body of a few shared chunks (the cached fabric part, this scrape's
/// agent part).
struct Chunks(std::collections::VecDeque<Bytes>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::task::Poll::Ready(self.0.pop_front().map(|b| Ok(hyper::body::Frame::data(b))))
    }
    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.0.iter().map(|b| b.len() as u64).sum())
    }
}

fn accepts_gzip(req: &Request<Incoming>) -> bool {
    req.headers()
        .get_all(hyper::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|e| {
            let mut parts = e.split(';').map(str::trim);
            parts.next() == Some("gzip") && !parts.any(|q| q == "q=0" || q == "q=0.0")
        })
}

async fn respond(req: &Request<Incoming>, e: &Arc<Endpoint>) -> Response<Chunks> {
    let text = |status: StatusCode, body: &'static str| {
        let mut r = Response::new(Chunks([Bytes::from_static(body.as_bytes())].into()));
        *r.status_mut() = status;
        r
    };
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET /metrics\n");
    }
    match req.uri().path() {
        "/metrics" => {
            let gz = accepts_gzip(req);
            let published = (e.sources.published)();
            let snap = Arc::clone(&published.snapshot);
            let (plain, deflated) = {
                let mut r = e.rendered.lock().await;
                let key = (Arc::as_ptr(&snap) as usize, snap.sweep.number);
                if r.key != Some(key) {
                    // Rendering a large fabric takes a while: off the async workers.
                    let p = Arc::clone(&published);
                    let plain = tokio::task::spawn_blocking(move || Bytes::from(render_shared(&p)))
                        .await
                        .unwrap_or_default();
                    *r = Rendered {
                        key: Some(key),
                        plain,
                        deflated: None,
                    };
                }
                if gz && r.deflated.is_none() {
                    let plain = r.plain.clone();
                    r.deflated = tokio::task::spawn_blocking(move || Deflated::of(&plain))
                        .await
                        .ok();
                }
                (r.plain.clone(), r.deflated.clone().filter(|_| gz))
            };
            // The agent's own figures change by the scrape: rendered now
            // (small), after the shared part.
            let mut agent = String::with_capacity(8192);
            render_agent(&mut agent, &snap, &e.sources);
            let chunks = match &deflated {
                Some(d) => d.gzip_with(plain.len(), agent.as_bytes()),
                None => vec![plain, Bytes::from(agent)],
            };
            let mut r = Response::new(Chunks(chunks.into()));
            let h = r.headers_mut();
            h.insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            h.insert(
                hyper::header::VARY,
                hyper::header::HeaderValue::from_static("Accept-Encoding"),
            );
            if deflated.is_some() {
                h.insert(
                    hyper::header::CONTENT_ENCODING,
                    hyper::header::HeaderValue::from_static("gzip"),
                );
            }
            r
        }
        "/" => text(StatusCode::OK, "ibsnmpd: Prometheus metrics at /metrics\n"),
        _ => text(StatusCode::NOT_FOUND, "not found; try /metrics\n"),
    }
}

/// The part of the exposition that depends on the published snapshot alone.
fn render_shared(published: &mibs::Published) -> String {
    let snap = &published.snapshot;
    let mut out = String::with_capacity(snap.ports.len() * 2048 + 8192);
    render_fabric(&mut out, snap, published.get::<HealthReport>());
    render_sms(&mut out, snap);
    out
}

/// One metric family: HELP and TYPE once, then its samples.
struct Family<'a> {
    name: &'a str,
    help: &'a str,
    kind: &'a str,
}

impl<'a> Family<'a> {
    fn gauge(name: &'a str, help: &'a str) -> Self {
        Family {
            name,
            help,
            kind: "gauge",
        }
    }
    fn counter(name: &'a str, help: &'a str) -> Self {
        Family {
            name,
            help,
            kind: "counter",
        }
    }
}

fn header(out: &mut String, f: &Family<'_>) {
    let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
    let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
}

/// A label value escaped as the text format requires.
fn esc(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// Per-port counters: (name after `infiniband_<type>_port_`, help, value).
/// Data counters are octets (PortXmitData/PortRcvData count 4-octet words).
type CounterFn = fn(&PortTotals) -> u64;
type GaugeFn = fn(&Snapshot, &Port) -> u64;
type PhaseFn = fn(&ib::model::PhaseCost) -> f64;
const PORT_COUNTERS: &[(&str, &str, CounterFn)] = &[
    (
        "transmit_data_bytes_total",
        "Octets transmitted (PortXmitData x 4)",
        |t| t.port_xmit_data.wrapping_mul(4),
    ),
    (
        "receive_data_bytes_total",
        "Octets received (PortRcvData x 4)",
        |t| t.port_rcv_data.wrapping_mul(4),
    ),
    (
        "transmit_packets_total",
        "Packets transmitted (PortXmitPkts)",
        |t| t.port_xmit_pkts,
    ),
    (
        "receive_packets_total",
        "Packets received (PortRcvPkts)",
        |t| t.port_rcv_pkts,
    ),
    (
        "unicast_transmit_packets_total",
        "Unicast packets transmitted (PortUnicastXmitPkts)",
        |t| t.port_unicast_xmit_pkts,
    ),
    (
        "unicast_receive_packets_total",
        "Unicast packets received (PortUnicastRcvPkts)",
        |t| t.port_unicast_rcv_pkts,
    ),
    (
        "multicast_transmit_packets_total",
        "Multicast packets transmitted (PortMulticastXmitPkts)",
        |t| t.port_multicast_xmit_pkts,
    ),
    (
        "multicast_receive_packets_total",
        "Multicast packets received (PortMulticastRcvPkts)",
        |t| t.port_multicast_rcv_pkts,
    ),
    (
        "symbol_error_total",
        "Minor link errors (SymbolErrorCounter)",
        |t| t.symbol_error_counter,
    ),
    (
        "link_error_recovery_total",
        "Successful link error recoveries (LinkErrorRecoveryCounter)",
        |t| t.link_error_recovery_counter,
    ),
    (
        "link_downed_total",
        "Failed link error recoveries that downed the link (LinkDownedCounter)",
        |t| t.link_downed_counter,
    ),
    (
        "receive_errors_total",
        "Packets received with errors (PortRcvErrors)",
        |t| t.port_rcv_errors,
    ),
    (
        "receive_remote_physical_errors_total",
        "Packets received marked with EBP (PortRcvRemotePhysicalErrors)",
        |t| t.port_rcv_remote_physical_errors,
    ),
    (
        "receive_switch_relay_errors_total",
        "Packets the switch could not relay (PortRcvSwitchRelayErrors)",
        |t| t.port_rcv_switch_relay_errors,
    ),
    (
        "transmit_discards_total",
        "Outbound packets discarded (PortXmitDiscards)",
        |t| t.port_xmit_discards,
    ),
    (
        "transmit_constraint_errors_total",
        "Packets not transmitted: partition or raw constraint (PortXmitConstraintErrors)",
        |t| t.port_xmit_constraint_errors,
    ),
    (
        "receive_constraint_errors_total",
        "Packets received and discarded: partition or raw constraint (PortRcvConstraintErrors)",
        |t| t.port_rcv_constraint_errors,
    ),
    (
        "local_link_integrity_errors_total",
        "Local physical errors past the threshold (LocalLinkIntegrityErrors)",
        |t| t.local_link_integrity_errors,
    ),
    (
        "excessive_buffer_overrun_errors_total",
        "Consecutive flow control update overruns (ExcessiveBufferOverrunErrors)",
        |t| t.excessive_buffer_overrun_errors,
    ),
    (
        "vl15_dropped_total",
        "Incoming VL15 packets dropped (VL15Dropped)",
        |t| t.vl15_dropped,
    ),
    (
        "transmit_wait_total",
        "Ticks with data to send and no credit (PortXmitWait)",
        |t| t.port_xmit_wait,
    ),
    ("qp1_dropped_total", "QP1 MADs dropped (QP1Dropped)", |t| {
        t.qp1_dropped
    }),
];

/// The ports a scrape shows: every external port (switch port 0 is the
/// management port and has no link).
fn shown_ports<'a>(snap: &'a Snapshot, node: &'a Node) -> impl Iterator<Item = &'a Port> + 'a {
    let range = node.ports.start as usize..node.ports.end as usize;
    snap.ports
        .get(range)
        .unwrap_or(&[])
        .iter()
        .filter(|p| p.num != PortNum(0))
}

fn node_kind(n: &Node) -> &'static str {
    if n.info.node_type == NodeType::Switch as u8 {
        "switch"
    } else {
        "hca"
    }
}

/// The labels of one port: its node, number, and the far end of its link.
fn port_labels(snap: &Snapshot, node: &Node, p: &Port) -> String {
    let kind = node_kind(node);
    let mut l = format!(
        "guid=\"{}\",{kind}=\"{}\",port=\"{}\"",
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
                if node_kind(rn) == "switch" {
                    "SW"
                } else {
                    "CA"
                }
            );
        }
    }
    l
}

fn render_fabric(out: &mut String, snap: &Snapshot, health: Option<&HealthReport>) {
    // Labels computed once per port, reused by every family.
    let mut rows: Vec<(&'static str, &Port, String)> = Vec::with_capacity(snap.ports.len());
    for node in &snap.nodes {
        for p in shown_ports(snap, node) {
            rows.push((node_kind(node), p, port_labels(snap, node, p)));
        }
    }
    for kind in ["switch", "hca"] {
        let label = if kind == "switch" { "switch" } else { "hca" };
        header(
            out,
            &Family::gauge(
                &format!("infiniband_{kind}_info"),
                &format!("Each {label} in the fabric (value 1)"),
            ),
        );
        for node in snap.nodes.iter().filter(|n| node_kind(n) == kind) {
            // A switch's LID is port 0's; a CA's each port's own (the first shown).
            let lid = snap
                .ports
                .get(node.ports.start as usize..node.ports.end as usize)
                .unwrap_or(&[])
                .iter()
                .map(|p| p.info.lid.0)
                .find(|&l| l != 0)
                .unwrap_or(0);
            let _ = writeln!(
                out,
                "infiniband_{kind}_info{{guid=\"{}\",{label}=\"{}\",lid=\"{lid}\"}} 1",
                node.info.node_guid,
                esc(&node.description)
            );
        }
        for &(suffix, help, value) in PORT_COUNTERS {
            let name = format!("infiniband_{kind}_port_{suffix}");
            header(out, &Family::counter(&name, help));
            for (_, p, labels) in rows.iter().filter(|r| r.0 == kind) {
                if let Some(c) = &p.counters {
                    let _ = writeln!(out, "{name}{{{labels}}} {}", value(&c.totals));
                }
            }
        }
        let gauges: [(&str, &str, GaugeFn); 4] = [
            ("state_id", "PortState: 1 down, 2 init, 3 armed, 4 active", |_, p| {
                u64::from(p.info.port_state)
            }),
            (
                "physical_state_id",
                "PortPhysicalState: 1 sleep, 2 polling, 3 disabled, 4 training, 5 linkup, 6 error recovery, 7 phy test",
                |_, p| u64::from(p.info.port_physical_state),
            ),
            ("width_lanes", "Active link width in lanes (0: no link)", |_, p| {
                p.info.link_width().map_or(0, |w| u64::from(w.lanes()))
            }),
            (
                "rate_bytes_per_second",
                "Effective data rate of the link in octets/s (line coding removed; 0: no link)",
                |s, p| match (p.info.link_width(), s.port_speed(p)) {
                    (Some(w), Some(sp)) => data_rate_mbps(w, sp) * 1_000_000 / 8,
                    _ => 0,
                },
            ),
        ];
        for (suffix, help, value) in gauges {
            let name = format!("infiniband_{kind}_port_{suffix}");
            header(out, &Family::gauge(&name, help));
            for (_, p, labels) in rows.iter().filter(|r| r.0 == kind) {
                let _ = writeln!(out, "{name}{{{labels}}} {}", value(snap, p));
            }
        }
        if let Some(h) = health {
            render_health(out, snap, kind, &rows, h);
        }
    }
    if let Some(h) = health {
        render_health_settings(out, &h.config);
    }
}

type HealthFn = fn(&PortHealth) -> Option<f64>;
/// Per-port health gauges (docs/health.md): name after
/// `infiniband_<type>_port_`, help, value (None: no sample).
const HEALTH_GAUGES: &[(&str, &str, HealthFn)] = &[
    (
        "down_after_up",
        "1: the port was active in an earlier sweep and is not now (never-cabled ports stay 0)",
        |h| Some(f64::from(u8::from(h.down_after_up))),
    ),
    (
        "symbol_error_ratio",
        "Symbol errors per received bit over the health window (BER)",
        |h| h.symbol_ber,
    ),
    (
        "link_recoveries_per_hour",
        "LinkErrorRecovery events per hour over the health window",
        |h| h.link_recovery_per_hour,
    ),
    (
        "link_downed_in_window",
        "LinkDowned increments within the health window (flapping at flap_count)",
        |h| Some(h.link_downed as f64),
    ),
    (
        "xmit_wait_ratio",
        "Share of transmit time spent waiting for credits over the health window: PortXmitWait / (PortXmitWait + PortXmitData)",
        |h| h.xmit_wait_ratio,
    ),
    (
        "counters_cleared",
        "1: a counter read lower than in the sweep before (cleared by another manager or perfquery -R)",
        |h| Some(f64::from(u8::from(h.counters_cleared))),
    ),
];

/// The health gauges of one node type's ports.
fn render_health(
    out: &mut String,
    snap: &Snapshot,
    kind: &str,
    rows: &[(&'static str, &Port, String)],
    report: &HealthReport,
) {
    let by_port: std::collections::HashMap<(Guid, u8), &PortHealth> =
        report.ports.iter().map(|h| ((h.guid, h.port), h)).collect();
    let of = |p: &Port| {
        let g = snap.node(p.node)?.info.node_guid;
        by_port.get(&(g, p.num.0)).copied()
    };
    let name = format!("infiniband_{kind}_port_link_degraded");
    header(out, &Family::gauge(&name, "1: the active link runs below the width or speed both ends support and enable (labels: actual and expected)"));
    for (_, p, labels) in rows.iter().filter(|r| r.0 == kind) {
        let Some(h) = of(p).filter(|h| h.active) else {
            continue;
        };
        match &h.degraded {
            Some(d) => {
                let _ = writeln!(
                    out,
                    "{name}{{{labels},width=\"{}\",expected_width=\"{}\",speed=\"{}\",expected_speed=\"{}\"}} 1",
                    d.width, d.expected_width, d.speed, d.expected_speed
                );
            }
            None => {
                let _ = writeln!(out, "{name}{{{labels}}} 0");
            }
        }
    }
    for &(suffix, help, value) in HEALTH_GAUGES {
        let name = format!("infiniband_{kind}_port_{suffix}");
        header(out, &Family::gauge(&name, help));
        for (_, p, labels) in rows.iter().filter(|r| r.0 == kind) {
            if let Some(v) = of(p).and_then(value) {
                let _ = writeln!(out, "{name}{{{labels}}} {v}");
            }
        }
    }
}

/// The health window and thresholds in force, so alert rules compare with
/// the agent's own settings (`[health]`).
fn render_health_settings(out: &mut String, c: &HealthConfig) {
    header(
        out,
        &Family::gauge(
            "infiniband_health_window_seconds",
            "The window health rates and flap counts are taken over ([health] window)",
        ),
    );
    let _ = writeln!(
        out,
        "infiniband_health_window_seconds {}",
        c.window.as_secs_f64()
    );
    header(out, &Family::gauge("infiniband_health_threshold", "The [health] thresholds: above max_symbol_ber, max_link_recovery_per_hour or max_xmit_wait_ratio, or at flap_count, a port is unhealthy"));
    for (check, v) in [
        ("max_symbol_ber", c.max_symbol_ber),
        ("max_link_recovery_per_hour", c.max_link_recovery_per_hour),
        ("flap_count", c.flap_count as f64),
        ("max_xmit_wait_ratio", c.max_xmit_wait_ratio),
    ] {
        let _ = writeln!(out, "infiniband_health_threshold{{check=\"{check}\"}} {v}");
    }
}

/// The Subnet Managers the last sweep saw: each one's SMState (0
/// notActive: it no longer answers, 1 discovering, 2 standby, 3 master), so
/// "no master" is an alert (`InfiniBandNoMasterSM`).
fn render_sms(out: &mut String, snap: &Snapshot) {
    header(out, &Family::gauge("infiniband_sm_state", "SMState of each Subnet Manager: 0 notActive (not answering), 1 discovering, 2 standby, 3 master"));
    for sm in &snap.sms {
        let node = sm
            .port
            .and_then(|p| snap.port(p))
            .and_then(|p| snap.node(p.node));
        let _ = writeln!(
            out,
            "infiniband_sm_state{{guid=\"{}\",lid=\"{}\",node=\"{}\",priority=\"{}\"}} {}",
            sm.info.guid,
            sm.lid.0,
            esc(node.map_or("", |n| n.description.as_str())),
            sm.info.priority,
            sm.info.sm_state
        );
    }
}

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn render_agent(out: &mut String, snap: &Snapshot, s: &Sources) {
    let mut one = |name: &str, help: &str, kind: &str, labels: &str, v: f64| {
        header(out, &Family { name, help, kind });
        let _ = writeln!(out, "{name}{labels} {v}");
    };
    let sweep = &snap.sweep;
    let swept = sweep.number > 0;
    one(
        "ibsnmpd_sweeps_total",
        "Sweeps published since the source started (the snapshot's sweep number)",
        "counter",
        "",
        sweep.number as f64,
    );
    one(
        "ibsnmpd_sweep_duration_seconds",
        "Duration of the last published sweep (all phases)",
        "gauge",
        "",
        sweep.duration.as_secs_f64(),
    );
    one(
        "ibsnmpd_last_successful_sweep_timestamp_seconds",
        "When the published snapshot was taken (Unix time; 0 before the first sweep)",
        "gauge",
        "",
        if swept { secs(sweep.time) } else { 0.0 },
    );
    // The last sweep's cost per phase (MAD class); sources without MADs
    // (sim, sysfs) report zeros.
    let cost = &sweep.cost;
    let phases = [
        ("discovery", &cost.discovery),
        ("sa", &cost.sa),
        ("pma", &cost.pma),
    ];
    let per_phase: [(&str, &str, PhaseFn); 4] = [
        (
            "ibsnmpd_sweep_phase_duration_seconds",
            "Duration of each phase of the last sweep",
            |p| p.duration.as_secs_f64(),
        ),
        (
            "ibsnmpd_sweep_mads_sent",
            "MADs sent in the last sweep by phase (SMP discovery, SA, PMA), retries included",
            |p| p.sent as f64,
        ),
        (
            "ibsnmpd_sweep_mads_failed",
            "Queries that failed for good in the last sweep, by phase",
            |p| p.failed as f64,
        ),
        (
            "ibsnmpd_sweep_mads_timeouts",
            "MAD attempts that got no answer in time in the last sweep, by phase",
            |p| p.timeouts as f64,
        ),
    ];
    for (name, help, value) in per_phase {
        header(
            out,
            &Family {
                name,
                help,
                kind: "gauge",
            },
        );
        for (phase, c) in phases {
            let _ = writeln!(out, "{name}{{phase=\"{phase}\"}} {}", value(c));
        }
    }
    let mut one = |name: &str, help: &str, kind: &str, labels: &str, v: f64| {
        header(out, &Family { name, help, kind });
        let _ = writeln!(out, "{name}{labels} {v}");
    };
    let age = SystemTime::now()
        .duration_since(sweep.time)
        .map_or(0.0, |d| d.as_secs_f64());
    one(
        "ibsnmpd_snapshot_age_seconds",
        "Age of the published snapshot",
        "gauge",
        "",
        if swept { age } else { 0.0 },
    );
    one(
        "ibsnmpd_fabric_nodes",
        "Nodes in the published snapshot",
        "gauge",
        "",
        snap.nodes.len() as f64,
    );
    one(
        "ibsnmpd_fabric_ports",
        "Ports in the published snapshot",
        "gauge",
        "",
        snap.ports.len() as f64,
    );
    one(
        "ibsnmpd_uptime_seconds",
        "Seconds since the agent started",
        "gauge",
        "",
        s.started.elapsed().as_secs_f64(),
    );

    let st = &s.snmp;
    let ld = |c: &std::sync::atomic::AtomicU32| f64::from(SnmpStats::load(c));
    let name = "ibsnmpd_snmp_requests_total";
    header(
        out,
        &Family {
            name,
            help: "SNMP request PDUs received, by type (GetBulk is counted with neither)",
            kind: "counter",
        },
    );
    for (pdu, c) in [
        ("get", &st.in_get_requests),
        ("getnext", &st.in_get_nexts),
        ("set", &st.in_set_requests),
    ] {
        let _ = writeln!(out, "{name}{{pdu=\"{pdu}\"}} {}", ld(c));
    }
    let name = "ibsnmpd_snmp_varbinds_total";
    header(
        out,
        &Family {
            name,
            help: "Variable bindings served by Get/GetNext/GetBulk (read) and Set (set)",
            kind: "counter",
        },
    );
    let _ = writeln!(out, "{name}{{pdu=\"read\"}} {}", ld(&st.in_total_req_vars));
    let _ = writeln!(out, "{name}{{pdu=\"set\"}} {}", ld(&st.in_total_set_vars));
    let mut one = |name: &str, help: &str, v: f64| {
        header(
            out,
            &Family {
                name,
                help,
                kind: "counter",
            },
        );
        let _ = writeln!(out, "{name} {v}");
    };
    one(
        "ibsnmpd_snmp_packets_received_total",
        "SNMP messages received (snmpInPkts)",
        ld(&st.in_pkts),
    );
    one(
        "ibsnmpd_snmp_packets_sent_total",
        "SNMP messages sent (snmpOutPkts)",
        ld(&st.out_pkts),
    );
    one(
        "ibsnmpd_snmp_auth_failures_total",
        "Requests with an unknown community or one used beyond its rights (snmpInBadCommunityNames + snmpInBadCommunityUses)",
        ld(&st.in_bad_community_names) + ld(&st.in_bad_community_uses),
    );
    one(
        "ibsnmpd_snmp_parse_errors_total",
        "Undecodable SNMP messages (snmpInASNParseErrs)",
        ld(&st.in_asn_parse_errs),
    );
    let a = &s.agent;
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64;
    let ns = a.notifications.get();
    let nz = |f: fn(&snmp::notify::NotifyStats) -> &AtomicU64| ns.map_or(0.0, |x| n(f(x)));
    one(
        "ibsnmpd_notifications_sent_total",
        "Notification messages sent (traps per sink, informs the first time)",
        nz(|x| &x.traps_sent) + nz(|x| &x.informs_sent),
    );
    one(
        "ibsnmpd_notifications_dropped_total",
        "Notifications dropped (queue full, informs never acknowledged)",
        nz(|x| &x.queue_drops) + nz(|x| &x.informs_dropped),
    );
    one(
        "ibsnmpd_notifications_suppressed_total",
        "Notifications held back by storm control",
        nz(|x| &x.suppressed),
    );
    one(
        "ibsnmpd_reloads_total",
        "Configuration reloads (SIGHUP) applied",
        n(&a.reloads),
    );
    one(
        "ibsnmpd_reload_failures_total",
        "Configuration reloads (SIGHUP) refused: the old settings stay",
        n(&a.reload_failures),
    );
}
