//! What the /metrics endpoint lets clients hold, so that scrapes stay fair
//! to SNMP: connections in all and per client address, scrapes rendering
//! at once, and how long a connection may stall (a reader that stops
//! reading, an idle keep-alive).

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Default scrapes rendering at once (`metrics_max_renders`): half the
/// cores, at least one, whatever the number of scrapers: the other half
/// stays with SNMP.
pub fn default_max_renders() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}
/// Default scrapes that may wait for a render slot (`metrics_render_queue`).
pub const DEFAULT_RENDER_QUEUE: usize = 8;
/// How long a scrape waits in the queue before its 503.
pub const DEFAULT_QUEUE_WAIT: Duration = Duration::from_secs(5);
/// Default connections per client address (`metrics_max_connections_per_client`).
pub const DEFAULT_MAX_PER_CLIENT: usize = 8;
/// Default time a connection may go without reading or writing a byte
/// (`metrics_stall_timeout`).
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(15);

/// The endpoint's limits (docs/metrics.md, "What a client can hold").
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub max_connections: usize,
    pub max_per_client: usize,
    pub max_renders: usize,
    pub render_queue: usize,
    pub queue_wait: Duration,
    pub stall_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: super::DEFAULT_MAX_CONNECTIONS,
            max_per_client: DEFAULT_MAX_PER_CLIENT,
            max_renders: default_max_renders(),
            render_queue: DEFAULT_RENDER_QUEUE,
            queue_wait: DEFAULT_QUEUE_WAIT,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
        }
    }
}

/// Connections held per client address.
#[derive(Clone)]
pub struct ClientSlots {
    max: usize,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One connection of a client, given back when dropped.
pub struct ClientSlot {
    ip: IpAddr,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl ClientSlots {
    pub fn new(max: usize) -> Self {
        ClientSlots {
            max: max.max(1),
            held: Arc::default(),
        }
    }

    /// A slot for a new connection from `ip`; None when it holds the most.
    pub fn take(&self, ip: IpAddr) -> Option<ClientSlot> {
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
pub struct Stalling<S> {
    inner: S,
    stall: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// Whether `timer` runs from the first wait since the last progress.
    armed: bool,
}

impl<S> Stalling<S> {
    pub fn new(inner: S, stall: Duration) -> Self {
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
                "metrics connection stalled",
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

use std::future::Future as _;

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
