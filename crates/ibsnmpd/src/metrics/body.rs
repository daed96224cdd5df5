//! A scrape's response body: chunks made off the async workers (rendering
//! never holds a worker that SNMP requests need) and handed over a channel
//! of one chunk as the connection takes them, so a scrape holds a few
//! chunks whatever the fabric's size, and a reader that stops reading
//! stops the rendering.
//!
//! Plain, a scrape renders its fabric part itself. Gzipped, it reads the
//! part compressed once for the snapshot ([`gzip::Part`]): the first gzip
//! scrape of a snapshot starts making it, and every scrape of it, that one
//! included, sends the chunks as they come.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use hyper::body::{Bytes, Frame};
use std::convert::Infallible;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit};

use super::fabric::Exposition;
use super::gzip::{self, Deflate, Kept, Made};
use super::text::Pool;

/// Octets of text rendered per chunk. A 1 MiB chunk is a millisecond or
/// two of rendering; a scrape holds about three (the one rendered, the one
/// in the channel, the one being written).
const CHUNK: usize = 1 << 20;
/// A chunk's room: its last line may pass [`CHUNK`] (a port's sample line
/// is some hundreds of octets; the text grows for a longer one).
const ROOM: usize = CHUNK + 4096;
/// Octets of gzip per chunk of a compressed part (about ten chunks of
/// text): fewer, larger chunks to keep and to send.
const GZIP_CHUNK: usize = 1 << 20;

/// A response body: a short fixed text, or a scrape's chunks.
pub(super) enum Body {
    Fixed(Option<Bytes>),
    Chunks(mpsc::Receiver<Bytes>),
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Fixed(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Chunks(rx) => rx.poll_recv(cx).map(|c| c.map(|c| Ok(Frame::data(c)))),
        }
    }
}

/// Where a scrape's fabric part comes from.
pub(super) enum Fabric {
    /// Rendered by the scrape, sent as text.
    Plain(Box<Exposition>),
    /// A gzipped part to read (made by another scrape, or by `make`).
    Gzip(gzip::Part, Option<Maker>),
}

/// What makes a gzipped part: the text to compress, where it goes, and
/// the kept parts it leaves when it grows past their bound.
pub(super) struct Maker {
    pub text: Box<Exposition>,
    pub part: watch::Sender<Made>,
    pub kept: Arc<Mutex<Kept>>,
}

/// One scrape: its fabric part, then the agent's own figures (rendered
/// when it began, small), within a render slot given back once its body
/// is sent or dropped.
pub(super) struct Scrape {
    pub fabric: Fabric,
    pub agent: String,
    pub pool: Arc<Pool>,
    pub render: OwnedSemaphorePermit,
}

impl Scrape {
    /// The body, sent by a task of its own.
    pub fn start(self) -> Body {
        let (tx, rx) = mpsc::channel(1);
        match self.fabric {
            Fabric::Plain(text) => {
                let (agent, pool, slot) = (self.agent, self.pool, self.render);
                tokio::task::spawn_blocking(move || plain(*text, agent, &pool, &tx, slot));
            }
            Fabric::Gzip(part, maker) => {
                // The maker renders and compresses within this scrape's
                // slot; the scrape itself only sends.
                let slot = match maker {
                    Some(m) => {
                        let pool = Arc::clone(&self.pool);
                        tokio::task::spawn_blocking(move || make(m, &pool, self.render));
                        None
                    }
                    None => Some(self.render),
                };
                tokio::spawn(send_gzip(part, self.agent, tx, slot));
            }
        }
        Body::Chunks(rx)
    }
}

/// Renders and sends a plain body until it ends or its reader is gone.
fn plain(
    mut x: Exposition,
    agent: String,
    pool: &Arc<Pool>,
    tx: &mpsc::Sender<Bytes>,
    _slot: OwnedSemaphorePermit,
) {
    loop {
        let mut text = pool.text(ROOM);
        let more = x.fill(&mut text, CHUNK);
        if text.len() > 0 && tx.blocking_send(text.into_bytes()).is_err() {
            return;
        }
        if !more {
            let _ = tx.blocking_send(Bytes::from(agent));
            return;
        }
    }
}

/// Renders and compresses a gzipped part, chunk by chunk, until it ends
/// or nobody reads or keeps it.
fn make(mut m: Maker, pool: &Arc<Pool>, _slot: OwnedSemaphorePermit) {
    let mut z = Deflate::new();
    let mut text = pool.text(ROOM);
    let mut out = Vec::with_capacity(2 * GZIP_CHUNK);
    loop {
        text.clear();
        let more = m.text.fill(&mut text, CHUNK);
        z.push(text.as_bytes(), &mut out);
        if !more {
            let crc = z.end(false, &mut out);
            gzip::grow(&m.kept, &m.part, out);
            m.part.send_modify(|m| m.crc = Some(crc));
            return;
        }
        if out.len() >= GZIP_CHUNK {
            gzip::grow(&m.kept, &m.part, std::mem::take(&mut out));
            out.reserve(2 * GZIP_CHUNK);
            if m.part.is_closed() {
                return;
            }
        }
    }
}

/// Sends a gzip body: the header, the part's chunks as they are made, and
/// the agent's figures with the trailer.
async fn send_gzip(
    mut part: gzip::Part,
    agent: String,
    tx: mpsc::Sender<Bytes>,
    _slot: Option<OwnedSemaphorePermit>,
) {
    if tx.send(Bytes::from_static(gzip::HEADER)).await.is_err() {
        return;
    }
    let mut next = 0;
    let mut crc = loop {
        // Taken out of the guard: it is not held across a send.
        let (chunk, crc) = {
            let Ok(m) = part
                .wait_for(|m| m.chunks.len() > next || m.crc.is_some())
                .await
            else {
                // The maker ended early (it panicked): the body is cut,
                // never wrong.
                return;
            };
            (m.chunks.get(next).cloned(), m.crc.clone())
        };
        match (chunk, crc) {
            (Some(c), _) => {
                next += 1;
                if tx.send(c).await.is_err() {
                    return;
                }
            }
            (None, Some(crc)) => break crc,
            (None, None) => return,
        }
    };
    let mut z = Deflate::new();
    let mut out = Vec::new();
    z.push(agent.as_bytes(), &mut out);
    crc.combine(&z.end(true, &mut out));
    out.extend_from_slice(&gzip::trailer(crc));
    let _ = tx.send(Bytes::from(out)).await;
}
