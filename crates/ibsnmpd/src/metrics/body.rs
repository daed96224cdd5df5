//! A scrape's response body, encoded chunk by chunk on the blocking pool
//! as the connection takes more (rendering never holds an async worker
//! that SNMP requests need), one chunk ahead of the one being sent,
//! gzipped on the way when the client asks.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::{Bytes, Frame};
use std::convert::Infallible;

use super::deflate::Source;
use super::fabric::Exposition;
use super::gzip::{self, Deflated, Keeper, Part};
use super::text::{Pool, Text};

/// Octets of text encoded per chunk of the body. Each chunk is a hand-off
/// to the blocking pool and back (two thread wake-ups): at 128 KiB those
/// took more than a quarter of a plain 48k-host scrape's CPU. A 1 MiB
/// chunk costs about a millisecond of the pool with gzip; a scrape holds
/// two in flight (the one sent, the next being made).
const CHUNK: usize = 1 << 20;
/// Octets of gzip a hand-off to the blocking pool makes at least (some
/// fifteen chunks of text; the last may be short). At 256 KiB the
/// hand-offs' wake-ups cost a 48,000-host gzip scrape 7% more CPU, with
/// the same SNMP latency under a flood of scrapes.
const GZIP_CHUNK: usize = 1 << 20;
/// A chunk's room: its last line may pass [`CHUNK`] (a port's sample line
/// is some hundreds of octets; the text grows for a longer one).
const ROOM: usize = CHUNK + 4096;

/// Where the fabric part of a scrape comes from.
pub(super) enum Fabric {
    /// Rendered as it is sent.
    Render(Box<Exposition>),
    /// The gzip kept from an earlier scrape of the snapshot: the next
    /// chunk to send.
    Kept(Arc<Deflated>, usize),
    Sent,
}

/// A gzipped body's state.
pub(super) struct Gzip {
    header_sent: bool,
    /// The fabric part's compressor while it is rendered.
    part: Option<Part>,
    /// The CRC of the fabric part, once all of it is out.
    crc: Option<crc32fast::Hasher>,
    /// Where the fabric part is kept for the next scrapes (None: it is
    /// not, or it grew past the bound).
    keeper: Option<Keeper>,
}

impl Gzip {
    pub fn new(keeper: Option<Keeper>) -> Gzip {
        Gzip {
            header_sent: false,
            part: None,
            crc: None,
            keeper,
        }
    }

    /// Compresses a chunk of the fabric part (`end`: the last one) that
    /// `x` filled `text` with (and the lines it noted for the encoder),
    /// onto the end of `out`.
    fn fabric(&mut self, text: &[u8], x: &Exposition, end: bool, out: &mut Vec<u8>) {
        // Made at the first chunk: a kept part needs no compressor.
        let part = self.part.get_or_insert_with(Part::new);
        let src = Source {
            text,
            toks: x.toks(),
            labels: x.labels(),
        };
        part.push_fused(src, x.fused(), out);
        if end {
            if let Some(part) = self.part.take() {
                let (tail, crc) = part.end(false);
                out.extend_from_slice(&tail);
                self.crc = Some(crc);
            }
        }
    }

    /// The fabric part's gzip of one hand-off (`end`: its last), as it is
    /// sent and collected to keep.
    fn hand_off(&mut self, out: Vec<u8>, end: bool) -> Bytes {
        let out = match self.keeper.as_mut() {
            None => Bytes::from(out),
            Some(k) => {
                let (b, keeping) = k.add(out);
                if !keeping {
                    self.keeper = None;
                }
                b
            }
        };
        if end {
            if let (Some(k), Some(crc)) = (self.keeper.take(), self.crc.as_ref()) {
                k.keep(crc);
            }
        }
        out
    }

    /// The agent's part and the trailer: the end of the body.
    fn finish(&mut self, agent: &str) -> Bytes {
        let mut part = Part::new();
        let mut out = part.push(agent.as_bytes());
        let (tail, crc) = part.end(true);
        out.extend_from_slice(&tail);
        let mut all = self.crc.take().unwrap_or_default();
        all.combine(&crc);
        out.extend_from_slice(&gzip::trailer(all));
        Bytes::from(out)
    }
}

/// What one scrape still has to send.
pub(super) struct Work {
    pub fabric: Fabric,
    /// The agent's own figures, rendered when the scrape began (small),
    /// sent last.
    pub agent: Option<String>,
    pub gzip: Option<Gzip>,
    /// The text of the chunk being encoded (kept between gzipped chunks).
    pub text: Option<Text>,
    /// Where chunk buffers come from and go back to.
    pub pool: Arc<Pool>,
    /// The render slot, given back when the body is sent or dropped.
    pub _render: tokio::sync::OwnedSemaphorePermit,
}

impl Work {
    /// Whether the next chunk is at hand (the gzip header, a kept chunk):
    /// sent without a trip to the blocking pool.
    fn at_hand(&self) -> bool {
        self.gzip.as_ref().is_some_and(|g| !g.header_sent)
            || matches!(&self.fabric, Fabric::Kept(d, next) if *next < d.chunks.len())
    }

    /// The next chunk of the body; None once all of it is out.
    fn next(&mut self) -> Option<Bytes> {
        if let Some(g) = self.gzip.as_mut().filter(|g| !g.header_sent) {
            g.header_sent = true;
            return Some(Bytes::from_static(gzip::HEADER));
        }
        loop {
            match &mut self.fabric {
                Fabric::Render(x) => {
                    // Gzipped, the text is compressed and its buffer kept
                    // for the next chunk; plain, it is sent and its buffer
                    // goes back to the pool once out (no fresh megabyte to
                    // zero or fault in per chunk).
                    let mut text = self.text.take().unwrap_or_else(|| self.pool.text(ROOM));
                    text.clear();
                    let mut end = !x.fill(&mut text, CHUNK);
                    let out = match self.gzip.as_mut() {
                        None => text.into_bytes(),
                        Some(g) => {
                            // A chunk of text gzips to a fifteenth or so:
                            // several go in one hand-off (each is two
                            // wake-ups), up to GZIP_CHUNK octets, coded
                            // straight into the buffer sent.
                            let mut out = Vec::with_capacity(2 * GZIP_CHUNK);
                            g.fabric(text.as_bytes(), x, end, &mut out);
                            while !end && out.len() < GZIP_CHUNK {
                                text.clear();
                                end = !x.fill(&mut text, CHUNK);
                                g.fabric(text.as_bytes(), x, end, &mut out);
                            }
                            self.text = Some(text);
                            g.hand_off(out, end)
                        }
                    };
                    if end {
                        self.fabric = Fabric::Sent;
                    }
                    if !out.is_empty() {
                        return Some(out);
                    }
                }
                Fabric::Kept(d, next) => {
                    if let Some(c) = d.chunks.get(*next) {
                        *next += 1;
                        return Some(c.clone());
                    }
                    if let Some(g) = self.gzip.as_mut() {
                        g.crc = Some(d.crc.clone());
                    }
                    self.fabric = Fabric::Sent;
                }
                Fabric::Sent => {
                    let agent = self.agent.take()?;
                    return Some(match self.gzip.as_mut() {
                        None => Bytes::from(agent),
                        Some(g) => g.finish(&agent),
                    });
                }
            }
        }
    }
}

/// A response body: a short fixed text, or a scrape encoded chunk by
/// chunk on the blocking pool.
pub(super) enum Body {
    Fixed(Option<Bytes>),
    Ready(Box<Work>),
    Busy(tokio::task::JoinHandle<(Box<Work>, Option<Bytes>)>),
    Done,
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        loop {
            match std::mem::replace(this, Body::Done) {
                Body::Done => return Poll::Ready(None),
                Body::Fixed(b) => return Poll::Ready(b.map(|b| Ok(Frame::data(b)))),
                Body::Ready(mut w) if w.at_hand() => {
                    let chunk = w.next();
                    *this = Body::Ready(w);
                    return Poll::Ready(chunk.map(|c| Ok(Frame::data(c))));
                }
                Body::Ready(w) => *this = Body::Busy(render(w)),
                Body::Busy(mut h) => match Pin::new(&mut h).poll(cx) {
                    Poll::Pending => {
                        *this = Body::Busy(h);
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok((w, Some(chunk)))) => {
                        // The next chunk is rendered while this one is
                        // sent: the wake-ups of the hand-off and the
                        // socket's write are off the scrape's path.
                        *this = if matches!(w.fabric, Fabric::Render(_)) {
                            Body::Busy(render(w))
                        } else {
                            Body::Ready(w)
                        };
                        return Poll::Ready(Some(Ok(Frame::data(chunk))));
                    }
                    // The end, or a chunk that panicked: the body ends
                    // (the client sees a cut response, never a wrong one).
                    Poll::Ready(_) => return Poll::Ready(None),
                },
            }
        }
    }
    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Done | Body::Fixed(None))
    }
}

/// The next chunk of `w`, made on the blocking pool.
fn render(mut w: Box<Work>) -> tokio::task::JoinHandle<(Box<Work>, Option<Bytes>)> {
    tokio::task::spawn_blocking(move || {
        let chunk = w.next();
        (w, chunk)
    })
}
