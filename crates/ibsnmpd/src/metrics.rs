//! The Prometheus endpoint: HTTP GET /metrics in the text exposition format
//! (version 0.0.4), rendered from the published snapshot. No MAD is sent on
//! the request path: a scrape reads what the last sweep published.
//!
//! Names and labels follow treydock/infiniband_exporter where it has the
//! figure (`infiniband_switch_port_transmit_data_bytes_total{guid,port,switch}`),
//! so dashboards built for it work with little change; docs/metrics.md has
//! the mapping. Built on hyper (HTTP/1 server), see docs/metrics.md.
//!
//! The body is rendered as it is sent ([`fabric::Exposition`]), chunk by
//! chunk off the async workers ([`body`]): a scrape holds a few chunks at
//! a time, whatever the fabric's size. Gzipped, the fabric part of a
//! snapshot is compressed once (flate2) and shared by all its gzip scrapes
//! ([`gzip`]).

mod agent;
mod body;
mod checks;
pub mod fabric;
mod gzip;
mod limits;
mod text;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use snmp::agent::SnmpStats;
use tracing::debug;

use body::{Body, Scrape};
pub use fabric::{Families, Group, Shard};
pub use limits::Limits;

/// What one scrape asks for: the families (`collect[]`) and group of nodes
/// (`group`), and so which gzipped part it shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Selection {
    pub families: Families,
    /// One group of nodes ([`Shard`]); None: all of them.
    pub shard: Option<Shard>,
}

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
    /// (the fabric health report, [`crate::models::fabric_health::HealthReport`]).
    pub published: Box<dyn Fn() -> Arc<crate::models::source_thread::Published> + Send + Sync>,
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
/// The endpoint: its sources and the port labels of the published snapshot.
struct Endpoint {
    sources: Sources,
    /// Made once per snapshot, shared by its scrapes; one maker at a time.
    rows: tokio::sync::Mutex<Option<Arc<fabric::Rows>>>,
    /// The gzipped fabric parts of the published snapshot, for its gzip
    /// scrapes.
    kept: Arc<std::sync::Mutex<gzip::Kept>>,
    /// Scrapes rendering at once: each holds one until its body is sent
    /// (or its connection ends; one that starts compressing a part gives
    /// its slot to that), so rendering and gzip never take more than this
    /// many cores from SNMP.
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
    let bounds = crate::http::Bounds {
        max_connections: limits.max_connections,
        max_per_client: limits.max_per_client,
        stall: limits.stall_timeout,
    };
    crate::http::serve(listener, bounds, "metrics", move |req| {
        let endpoint = Arc::clone(&endpoint);
        async move { respond(&req, &endpoint).await }
    })
    .await;
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

/// What a scrape asks for in its query: the families of `collect[]=GROUP`
/// (node_exporter's parameter: one Prometheus job per group, each at its
/// own interval) among the configured ones, all the configured ones
/// without it; and with `group=INDEX&groups=COUNT` one group of nodes
/// ([`Shard`], listed by [`SD_PATH`]).
fn selection(query: Option<&str>, configured: Families) -> Result<Selection, &'static str> {
    let mut asked = Vec::new();
    let (mut index, mut count) = (None, None);
    for (key, value) in query
        .unwrap_or("")
        .split('&')
        .filter_map(|p| p.split_once('='))
    {
        if key == "collect[]" || key.eq_ignore_ascii_case("collect%5B%5D") {
            asked.push(Group::parse(value).ok_or(COLLECT_HELP)?);
        } else if key == "group" {
            index = Some(value.parse::<u16>().map_err(|_| GROUP_HELP)?);
        } else if key == "groups" {
            count = Some(value.parse::<u16>().map_err(|_| GROUP_HELP)?);
        }
    }
    let shard = match (index, count) {
        (None, None) => None,
        (Some(i), Some(n)) => Some(Shard::new(i, n).ok_or(GROUP_HELP)?),
        _ => return Err(GROUP_HELP),
    };
    let families = if asked.is_empty() {
        configured
    } else {
        Families::of(asked.into_iter().filter(|&g| configured.has(g)))
    };
    Ok(Selection { families, shard })
}

const COLLECT_HELP: &str =
    "collect[] takes the family groups data, casts, errors, state, health, detail, vl\n";
const GROUP_HELP: &str =
    "group=INDEX&groups=COUNT: both, with INDEX below COUNT and COUNT from 1 to 1024\n";

/// Prometheus' HTTP service discovery (`http_sd_configs`): the scrapes of
/// the fabric's groups of nodes, whose union is the whole scrape.
pub const SD_PATH: &str = "/sd";

/// Nodes per group when the discovery request does not say how many
/// groups (`groups=COUNT`): a group's scrape is then some tens of MB of
/// text.
const NODES_PER_GROUP: usize = 1000;

/// The discovery response for `groups=COUNT` (or one group per
/// [`NODES_PER_GROUP`] nodes of `snap`), each target the agent at `host`
/// (the address the request came to) with `__param_group`/`__param_groups`
/// for its query and a `group` label to tell the targets' series apart.
fn sd(query: Option<&str>, host: &str, snap: &ib::model::Snapshot) -> Result<String, &'static str> {
    let asked = query
        .unwrap_or("")
        .split('&')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == "groups")
        .map(|(_, v)| {
            v.parse::<u16>()
                .ok()
                .filter(|n| (1..=Shard::MAX).contains(n))
        });
    let count = match asked {
        Some(Some(n)) => n,
        Some(None) => return Err(GROUP_HELP),
        None => u16::try_from(snap.nodes.len().div_ceil(NODES_PER_GROUP))
            .unwrap_or(Shard::MAX)
            .clamp(1, Shard::MAX),
    };
    let groups: Vec<serde_json::Value> = (0..count)
        .map(|i| {
            serde_json::json!({
                "targets": [host],
                "labels": {
                    "__metrics_path__": "/metrics",
                    "__param_group": i.to_string(),
                    "__param_groups": count.to_string(),
                    "group": i.to_string(),
                },
            })
        })
        .collect();
    Ok(serde_json::Value::Array(groups).to_string())
}

/// Makes the port rows (labels and value columns) of each snapshot
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
async fn rows_of(
    e: &Endpoint,
    published: &Arc<crate::models::source_thread::Published>,
) -> Arc<fabric::Rows> {
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

/// A scrape's body: the fabric part of `published` (rendered, or when
/// gzipped the part compressed once for the snapshot), then `agent`.
fn scrape(
    e: &Endpoint,
    published: Arc<crate::models::source_thread::Published>,
    rows: Arc<fabric::Rows>,
    selection: Selection,
    gz: bool,
    agent: String,
    render: tokio::sync::OwnedSemaphorePermit,
) -> Scrape {
    let text = |p| {
        Box::new(fabric::Exposition::new(
            p,
            rows,
            selection.families,
            selection.shard,
        ))
    };
    let fabric = if gz {
        match gzip::find(&e.kept, &published, selection) {
            gzip::Found::Kept(part) => body::Fabric::Gzip(part, None),
            gzip::Found::Make(tx, part) => body::Fabric::Gzip(
                part,
                Some(body::Maker {
                    text: text(published),
                    part: tx,
                    kept: Arc::clone(&e.kept),
                }),
            ),
        }
    } else {
        body::Fabric::Plain(text(published))
    };
    Scrape {
        fabric,
        agent,
        pool: Arc::clone(&e.chunks),
        render,
    }
}

/// 503 with Retry-After: every render slot busy and the queue full (or
/// its wait over).
fn busy(limits: &Limits) -> Response<Body> {
    debug!("metrics: render slots busy; 503");
    let busy = "busy: too many scrapes at once; retry later\n";
    let mut r = fixed(StatusCode::SERVICE_UNAVAILABLE, busy, "text/plain");
    let secs = limits.queue_wait.as_secs().max(1).to_string();
    if let Ok(v) = hyper::header::HeaderValue::from_str(&secs) {
        r.headers_mut().insert(hyper::header::RETRY_AFTER, v);
    }
    r
}

/// A short answer: `status` and `body` of type `content_type`.
fn fixed(status: StatusCode, body: impl Into<Bytes>, content_type: &'static str) -> Response<Body> {
    let mut r = Response::new(Body::Fixed(Some(body.into())));
    *r.status_mut() = status;
    let v = hyper::header::HeaderValue::from_static(content_type);
    r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    r
}

async fn respond(req: &Request<Incoming>, e: &Arc<Endpoint>) -> Response<Body> {
    let text = |status, body: &'static str| fixed(status, body, "text/plain");
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET /metrics\n");
    }
    match req.uri().path() {
        "/metrics" => {
            let selection = match selection(req.uri().query(), e.sources.families) {
                Ok(s) => s,
                Err(help) => return text(StatusCode::BAD_REQUEST, help),
            };
            let gz = accepts_gzip(req);
            let Some(render) = render_slot(e).await else {
                return busy(&e.limits);
            };
            let published = (e.sources.published)();
            let rows = rows_of(e, &published).await;
            // The agent's own figures change by the scrape: taken now, sent
            // last (by the first group's scrapes only).
            let mut agent = String::new();
            if selection.shard.is_none_or(Shard::is_first) {
                agent.reserve(8192);
                agent::render(&mut agent, &published.snapshot, &e.sources);
                checks::plan(&mut agent, &published);
                checks::routes(&mut agent, &published);
            }
            let body = scrape(e, published, rows, selection, gz, agent, render).start();
            let mut r = Response::new(body);
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
        SD_PATH => {
            let host = req
                .headers()
                .get(hyper::header::HOST)
                .and_then(|h| h.to_str().ok())
                .filter(|h| !h.is_empty());
            let Some(host) = host else {
                return text(StatusCode::BAD_REQUEST, "a Host header is needed\n");
            };
            let published = (e.sources.published)();
            match sd(req.uri().query(), host, &published.snapshot) {
                Ok(json) => fixed(StatusCode::OK, json, "application/json"),
                Err(help) => text(StatusCode::BAD_REQUEST, help),
            }
        }
        "/" => text(
            StatusCode::OK,
            "ibsnmpd: Prometheus metrics at /metrics, its groups for http_sd_configs at /sd\n",
        ),
        _ => text(StatusCode::NOT_FOUND, "not found; try /metrics\n"),
    }
}

/// A metric family's HELP and TYPE (`kind`: gauge or counter), written
/// once before its samples.
pub(crate) fn header(out: &mut impl std::fmt::Write, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_selects_families_and_a_group() {
        let conf = Families::DEFAULT;
        let s = selection(None, conf).unwrap();
        assert_eq!(s, Selection::default());
        let s = selection(Some("collect[]=errors&group=2&groups=5"), conf).unwrap();
        assert_eq!(s.families, Families::of([Group::Errors]));
        assert_eq!(s.shard, Shard::new(2, 5));
        // A group not configured is not served.
        let s = selection(Some("collect%5B%5D=vl"), conf).unwrap();
        assert_eq!(s.families, Families::of([]));
        for bad in [
            "collect[]=nope",
            "group=1",
            "groups=4",
            "group=4&groups=4",
            "group=0&groups=0",
            "group=0&groups=1025",
            "group=-1&groups=2",
            "group=x&groups=2",
        ] {
            assert!(selection(Some(bad), conf).is_err(), "{bad}");
        }
    }

    #[test]
    fn discovery_lists_every_group_of_the_agent() {
        let snap = crate::models::source_thread::empty_snapshot("sim", 1);
        let groups = |q: Option<&str>| -> Vec<serde_json::Value> {
            serde_json::from_str(&sd(q, "agent:9683", &snap).unwrap()).unwrap()
        };
        // An empty fabric: one group.
        assert_eq!(groups(None).len(), 1);
        let g = groups(Some("groups=3"));
        assert_eq!(g.len(), 3);
        for (i, t) in g.iter().enumerate() {
            assert_eq!(t["targets"], serde_json::json!(["agent:9683"]));
            assert_eq!(t["labels"]["__param_group"], i.to_string());
            assert_eq!(t["labels"]["__param_groups"], "3");
            assert_eq!(t["labels"]["group"], i.to_string());
        }
        assert!(sd(Some("groups=0"), "a", &snap).is_err());
        assert!(sd(Some("groups=x"), "a", &snap).is_err());
    }

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
