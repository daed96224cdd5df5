//! An HTTP/1 server (hyper) that keeps what clients hold in bounds:
//! connections in all and per client address (more are closed as they
//! come, their descriptors back at once), a time to send the request
//! headers, a connection's whole life, and connections that stall (a
//! reader that stops reading, an idle keep-alive) closed. The Prometheus
//! endpoint serves on it.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tracing::{debug, warn};

/// A client must send its request headers within this time.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection's whole life, keep-alive included, after which it closes
/// once its response in flight is out: a client cannot hold a connection
/// for ever.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(120);

/// What clients may hold.
pub struct Bounds {
    pub max_connections: usize,
    pub max_per_client: usize,
    /// How long a connection may go without reading or writing a byte.
    pub stall: Duration,
}

/// Serves `handle` on `listener` within `bounds` until the runtime stops;
/// `name` is the server's in log lines.
pub async fn serve<H, F, B>(
    listener: tokio::net::TcpListener,
    bounds: Bounds,
    name: &'static str,
    handle: H,
) where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let slots = Arc::new(tokio::sync::Semaphore::new(bounds.max_connections.max(1)));
    let clients = ClientSlots::new(bounds.max_per_client);
    let mut refused = 0u64;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // Out of descriptors and the like: back off, keep serving.
                warn!(error = %e, "{name}: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let slot = Arc::clone(&slots).try_acquire_owned().ok();
        let client = slot.as_ref().and_then(|_| clients.take(peer.ip()));
        let (Some(slot), Some(client)) = (slot, client) else {
            // Closed at once: the descriptor goes back now.
            refused += 1;
            if refused.is_power_of_two() {
                warn!(%peer, refused, max_connections = bounds.max_connections, max_per_client = bounds.max_per_client, "{name}: connection limit reached; closing new connections");
            }
            drop(stream);
            continue;
        };
        let (stall, handle) = (bounds.stall, handle.clone());
        tokio::spawn(async move {
            let svc = service_fn(move |req| {
                let handle = handle.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(req).await) }
            });
            let conn = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(Stalling::new(stream, stall)), svc);
            let mut conn = std::pin::pin!(conn);
            let ended = tokio::select! {
                r = conn.as_mut() => r,
                () = tokio::time::sleep(CONNECTION_LIFETIME) => {
                    // Closed once the response in flight is out (cut, a
                    // scrape fails: Prometheus' up went 0 every few
                    // minutes); a reader that stops is the stall's.
                    debug!(%peer, "{name}: connection closing after its lifetime");
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = ended {
                debug!(%peer, error = %e, "{name}: connection ended");
            }
            drop((client, slot));
        });
    }
}

/// Connections held per client address.
#[derive(Clone)]
struct ClientSlots {
    max: usize,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One connection of a client, given back when dropped.
struct ClientSlot {
    ip: IpAddr,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl ClientSlots {
    fn new(max: usize) -> Self {
        ClientSlots {
            max: max.max(1),
            held: Arc::default(),
        }
    }

    /// A slot for a new connection from `ip`; None when it holds the most.
    fn take(&self, ip: IpAddr) -> Option<ClientSlot> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let n = held.entry(ip).or_default();
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            ip,
            held: Arc::clone(&self.held),
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = held.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.remove(&self.ip);
            }
        }
    }
}

/// A connection that fails (TimedOut) once it has waited `stall` without
/// reading or writing a byte: a client that stops reading a body, or keeps
/// an idle connection open, gives its connection (and render slot) back.
struct Stalling<S> {
    inner: S,
    stall: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// Whether `timer` runs from the first wait since the last progress.
    armed: bool,
}

impl<S> Stalling<S> {
    fn new(inner: S, stall: Duration) -> Self {
        Stalling {
            inner,
            stall,
            timer: Box::pin(tokio::time::sleep(stall)),
            armed: false,
        }
    }

    fn progress(&mut self) {
        self.armed = false;
    }

    /// A wait: Pending until the stall time since the last progress is up.
    fn wait<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if !self.armed {
            let deadline = tokio::time::Instant::now() + self.stall;
            self.timer.as_mut().reset(deadline);
            self.armed = true;
        }
        match self.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "connection stalled",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn after<T>(&mut self, r: Poll<io::Result<T>>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match r {
            Poll::Ready(x) => {
                self.progress();
                Poll::Ready(x)
            }
            Poll::Pending => self.wait(cx),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Stalling<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        this.after(r, cx)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Stalling<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.after(r, cx)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_flush(cx);
        this.after(r, cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.after(r, cx)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_slots_are_counted_per_address() {
        let slots = ClientSlots::new(2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let one = slots.take(a).unwrap();
        let _two = slots.take(a).unwrap();
        assert!(slots.take(a).is_none());
        assert!(slots.take(b).is_some());
        drop(one);
        assert!(slots.take(a).is_some());
    }

    /// A peer that neither sends nor reads: the read fails after the stall
    /// time; one that sends keeps it alive.
    #[test]
    fn a_stalled_connection_fails() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (a, mut b) = tokio::io::duplex(64);
            let mut s = Stalling::new(a, Duration::from_millis(100));
            b.write_all(b"x").await.unwrap();
            let mut buf = [0u8; 8];
            assert_eq!(s.read(&mut buf).await.unwrap(), 1);
            let e = s.read(&mut buf).await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        });
    }
}
