//! The Prometheus endpoint: HTTP GET /metrics in the text exposition format
//! (version 0.0.4), rendered from the published snapshot. No MAD is sent on
//! the request path: a scrape reads what the last sweep published.
//!
//! Names and labels follow treydock/infiniband_exporter where it has the
//! figure (`infiniband_switch_port_transmit_data_bytes_total{guid,port,switch}`),
//! so dashboards built for it work with little change; docs/metrics.md has
//! the mapping. Built on hyper (HTTP/1 server), see docs/metrics.md.
//!
//! The body is encoded as it is sent ([`fabric::Exposition`]), chunk by
//! chunk on the blocking pool ([`body`]), gzipped on the way when the
//! client asks: a scrape holds one chunk at a time, whatever the fabric's
//! size. The gzipped fabric part of a snapshot is kept for its next gzip
//! scrapes ([`gzip`]).

mod agent;
mod body;
mod crc;
mod deflate;
pub mod fabric;
mod gzip;
mod limits;
mod routes;
mod text;
mod topology;

use std::convert::Infallible;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use snmp::agent::SnmpStats;
use tracing::{debug, warn};

use body::{Body, Work};
pub use fabric::{Families, Group};
pub use limits::Limits;
use limits::{ClientSlots, Stalling};

/// The agent's own counters that live outside the snapshot and SnmpStats.
#[derive(Debug, Default)]
pub struct AgentCounters {
    /// The notification originator's counters (None: no sinks configured).
    pub notifications: Option<Arc<snmp::notify::NotifyStats>>,
    /// Successful SIGHUP reloads, and failed ones.
    pub reloads: AtomicU64,
    pub reload_failures: AtomicU64,
}

/// What a scrape renders from.
pub struct Sources {
    /// What is published now: the snapshot and what was derived from it
    /// (the fabric health report, [`crate::health::HealthReport`]).
    pub published: Box<dyn Fn() -> Arc<crate::fabric::Published> + Send + Sync>,
    /// Changes at each publication: the port rows are made then.
    pub publications: tokio::sync::watch::Receiver<u64>,
    pub snmp: Arc<SnmpStats>,
    pub agent: Arc<AgentCounters>,
    pub started: Instant,
    /// The per-port families a scrape carries (`metrics_families`).
    pub families: Families,
}

/// Connections the endpoint holds at once unless configured
/// (`metrics_max_connections`): a few Prometheus servers and operators.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;
/// A client must send its request headers within this time.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection's whole life, keep-alive included: a slow reader cannot
/// hold a connection (and its body) for ever.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(120);

/// The endpoint: its sources and the port labels of the published snapshot.
struct Endpoint {
    sources: Sources,
    /// Made once per snapshot, shared by its scrapes; one maker at a time.
    rows: tokio::sync::Mutex<Option<Arc<fabric::Rows>>>,
    /// The gzipped fabric parts of the published snapshot, for its next
    /// scrapes.
    kept: Arc<std::sync::Mutex<gzip::Kept>>,
    /// Scrapes rendering at once: each holds one until its body is sent
    /// (or its connection ends), so rendering and gzip never take more
    /// than this many cores from SNMP.
    renders: Arc<tokio::sync::Semaphore>,
    /// Scrapes waiting for a render slot now.
    waiting: std::sync::atomic::AtomicUsize,
    limits: Limits,
    /// The bodies' chunk buffers, used again.
    chunks: Arc<text::Pool>,
}

/// Serves /metrics on `listener` until the runtime stops, within `limits`:
/// connections in all and per client address (more are closed as they
/// come), scrapes rendering at once (the rest wait in a short queue, or get
/// 503 with Retry-After), connections that stall (a slow reader, an idle
/// keep-alive) closed.
pub async fn serve(listener: tokio::net::TcpListener, sources: Sources, limits: Limits) {
    let max_connections = limits.max_connections;
    let endpoint = Arc::new(Endpoint {
        sources,
        rows: tokio::sync::Mutex::new(None),
        kept: Arc::default(),
        renders: Arc::new(tokio::sync::Semaphore::new(limits.max_renders.max(1))),
        waiting: std::sync::atomic::AtomicUsize::new(0),
        limits: limits.clone(),
        chunks: Arc::default(),
    });
    tokio::spawn(make_rows(Arc::clone(&endpoint)));
    let slots = Arc::new(tokio::sync::Semaphore::new(max_connections.max(1)));
    let clients = ClientSlots::new(limits.max_per_client);
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
        let Some(client) = clients.take(peer.ip()) else {
            refused += 1;
            if refused.is_power_of_two() {
                warn!(%peer, refused, limit = limits.max_per_client, "metrics: per-client connection limit reached; closing new connections");
            }
            drop(stream);
            continue;
        };
        let stall = limits.stall_timeout;
        let endpoint = Arc::clone(&endpoint);
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let endpoint = Arc::clone(&endpoint);
                async move { Ok::<_, Infallible>(respond(&req, &endpoint).await) }
            });
            let conn = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(Stalling::new(stream, stall)), svc);
            match tokio::time::timeout(CONNECTION_LIFETIME, conn).await {
                Ok(Err(e)) => debug!(%peer, error = %e, "metrics: connection ended"),
                Err(_) => debug!(%peer, "metrics: connection closed after its lifetime"),
                Ok(Ok(())) => {}
            }
            drop(client);
            drop(slot);
        });
    }
}

fn accepts_gzip(req: &Request<Incoming>) -> bool {
    req.headers()
        .get_all(hyper::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(gzip_accepted)
}

/// Whether one Accept-Encoding field value accepts gzip (RFC 9110 12.5.3):
/// codings are case-insensitive, and a weight of 0 (`q=0`, `q=0.000`, in
/// any case) refuses one.
fn gzip_accepted(field: &str) -> bool {
    field.split(',').any(|e| {
        let mut parts = e.split(';').map(str::trim);
        let gzip = parts.next().is_some_and(|c| c.eq_ignore_ascii_case("gzip"));
        let refused = parts.any(|p| {
            let Some((k, v)) = p.split_once('=') else {
                return false;
            };
            k.trim().eq_ignore_ascii_case("q") && v.trim().parse::<f64>().is_ok_and(|q| q <= 0.0)
        });
        gzip && !refused
    })
}

/// The families a scrape asks for with `collect[]=GROUP` (node_exporter's
/// parameter: one Prometheus job per group, each at its own interval),
/// among the configured ones; all the configured ones without it.
fn collect(query: Option<&str>, configured: Families) -> Result<Families, ()> {
    let mut asked = Vec::new();
    for pair in query.unwrap_or("").split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            continue;
        };
        if key == "collect[]" || key.eq_ignore_ascii_case("collect%5B%5D") {
            asked.push(Group::parse(value).ok_or(())?);
        }
    }
    Ok(if asked.is_empty() {
        configured
    } else {
        Families::of(asked.into_iter().filter(|&g| configured.has(g)))
    })
}

/// Makes the port rows (labels and their deflate tokens) of each snapshot
/// when it is published, as exporters keep their label sets up to
/// date with the data rather than at scrape time: the first scrape of a
/// snapshot then only renders (and compresses). The cost is paid once per
/// published snapshot, scraped or not (docs/metrics.md gives it), in a
/// render slot.
async fn make_rows(e: Arc<Endpoint>) {
    let mut publications = e.sources.publications.clone();
    // The snapshot published before the endpoint started counts too.
    publications.mark_changed();
    while publications.changed().await.is_ok() {
        let published = (e.sources.published)();
        let fresh = e
            .rows
            .lock()
            .await
            .as_ref()
            .is_some_and(|r| r.of_same(&published));
        if fresh {
            continue;
        }
        // Made within a render slot, as a scrape makes them: the cores
        // that rendering takes from SNMP stay within the slots.
        let Ok(_slot) = e.renders.acquire().await else {
            return;
        };
        // The gzip kept for the snapshot before is of no use now.
        let stale = gzip::stale(&e.kept, &published);
        if !stale.is_empty() {
            let _ = tokio::task::spawn_blocking(move || drop(stale)).await;
        }
        rows_of(&e, &published).await;
    }
}

/// The port rows of the published snapshot: made once per snapshot (off
/// the async workers) by [`make_rows`] or the first scrape that comes
/// before it, shared by the rest.
async fn rows_of(e: &Endpoint, published: &Arc<crate::fabric::Published>) -> Arc<fabric::Rows> {
    let mut cached = e.rows.lock().await;
    if let Some(r) = cached.as_ref().filter(|r| r.of_same(published)) {
        return Arc::clone(r);
    }
    let p = Arc::clone(published);
    let families = e.sources.families;
    let rows = match tokio::task::spawn_blocking(move || fabric::rows(&p, families)).await {
        Ok(r) => Arc::new(r),
        // The pool is shutting down: make them here.
        Err(_) => Arc::new(fabric::rows(published, families)),
    };
    *cached = Some(Arc::clone(&rows));
    rows
}

/// A render slot: at once, or after a wait in the queue (if it has room)
/// of at most the queue wait; None: busy.
async fn render_slot(e: &Endpoint) -> Option<tokio::sync::OwnedSemaphorePermit> {
    use std::sync::atomic::Ordering::Relaxed;
    if let Ok(p) = Arc::clone(&e.renders).try_acquire_owned() {
        return Some(p);
    }
    if e.waiting.fetch_add(1, Relaxed) >= e.limits.render_queue {
        e.waiting.fetch_sub(1, Relaxed);
        return None;
    }
    let got =
        tokio::time::timeout(e.limits.queue_wait, Arc::clone(&e.renders).acquire_owned()).await;
    e.waiting.fetch_sub(1, Relaxed);
    got.ok().and_then(Result::ok)
}

/// A scrape's body: the fabric part rendered from `published` (or, when
/// gzipped, the gzip kept from an earlier scrape of it), then `agent`.
fn work(
    e: &Endpoint,
    published: Arc<crate::fabric::Published>,
    rows: Arc<fabric::Rows>,
    families: Families,
    gz: bool,
    agent: String,
    render: tokio::sync::OwnedSemaphorePermit,
) -> Work {
    // Gzipped: the kept part, or rendered (and collected to keep).
    let (kept, keeper) = match gz.then(|| gzip::lookup(&e.kept, &published, families)) {
        Some(Ok(d)) => (Some(d), None),
        Some(Err(keeper)) => (None, keeper),
        None => (None, None),
    };
    let fabric = match kept {
        Some(d) => body::Fabric::Kept(d, 0),
        None => {
            let mut x = fabric::Exposition::new(published, rows, families);
            if gz {
                x.fuse();
            }
            body::Fabric::Render(Box::new(x))
        }
    };
    Work {
        fabric,
        agent: Some(agent),
        gzip: gz.then(|| body::Gzip::new(keeper)),
        text: None,
        pool: Arc::clone(&e.chunks),
        _render: render,
    }
}

/// 503 with Retry-After: every render slot busy and the queue full (or
/// its wait over).
fn busy(limits: &Limits) -> Response<Body> {
    debug!("metrics: render slots busy; 503");
    let mut r = Response::new(Body::Fixed(Some(Bytes::from_static(
        b"busy: too many scrapes at once; retry later\n",
    ))));
    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let secs = limits.queue_wait.as_secs().max(1).to_string();
    if let Ok(v) = hyper::header::HeaderValue::from_str(&secs) {
        r.headers_mut().insert(hyper::header::RETRY_AFTER, v);
    }
    r
}

async fn respond(req: &Request<Incoming>, e: &Arc<Endpoint>) -> Response<Body> {
    let text = |status: StatusCode, body: &'static str| {
        let mut r = Response::new(Body::Fixed(Some(Bytes::from_static(body.as_bytes()))));
        *r.status_mut() = status;
        r
    };
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET /metrics\n");
    }
    match req.uri().path() {
        "/metrics" => {
            let families = match collect(req.uri().query(), e.sources.families) {
                Ok(f) => f,
                Err(()) => return text(
                    StatusCode::BAD_REQUEST,
                    "collect[] takes the family groups data, errors, state, health, detail, vl\n",
                ),
            };
            let gz = accepts_gzip(req);
            let Some(render) = render_slot(e).await else {
                return busy(&e.limits);
            };
            let published = (e.sources.published)();
            let rows = rows_of(e, &published).await;
            // The agent's own figures change by the scrape: taken now, sent last.
            let mut agent = String::with_capacity(8192);
            agent::render(&mut agent, &published.snapshot, &e.sources);
            topology::render(&mut agent, &published);
            routes::render(&mut agent, &published);
            let work = work(e, published, rows, families, gz, agent, render);
            let mut r = Response::new(Body::Ready(Box::new(work)));
            let h = r.headers_mut();
            h.insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            h.insert(
                hyper::header::VARY,
                hyper::header::HeaderValue::from_static("Accept-Encoding"),
            );
            if gz {
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

/// One metric family: HELP and TYPE once, then its samples.
pub(crate) struct Family<'a> {
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

pub(crate) fn header(out: &mut impl std::fmt::Write, f: &Family<'_>) {
    let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
    let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
}

#[cfg(test)]
mod tests {
    use super::gzip_accepted;

    #[test]
    fn accept_encoding_as_rfc_9110_reads_it() {
        for yes in [
            "gzip",
            "GZIP",
            "deflate, Gzip;q=0.5",
            "gzip; q=1",
            "br, gzip",
        ] {
            assert!(gzip_accepted(yes), "{yes}");
        }
        for no in [
            "",
            "identity",
            "gzip;q=0",
            "gzip;q=0.0",
            "gzip;q=0.00",
            "GZIP; Q=0.000",
            "x-gzip",
        ] {
            assert!(!gzip_accepted(no), "{no}");
        }
    }
}
