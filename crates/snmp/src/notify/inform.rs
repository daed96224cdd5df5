//! Informs waiting for their Response: one queue per receiver, retries,
//! acknowledgements.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use super::inc;
use super::sink::{refresh, wrapper_key, Sink, SinkKind};
use crate::message::{Message, Version};
use crate::oid::Oid;
use crate::pdu::Pdu;

/// An InformRequest waiting for its Response.
pub(super) struct PendingInform {
    pub(super) request_id: i32,
    pub(super) datagram: Vec<u8>,
    /// For a wrapped (SNMPv3) sink: the InformRequest, wrapped anew for
    /// each retry (the receiver may have been discovered again since).
    pub(super) pdu: Option<Pdu>,
    pub(super) tries_left: u32,
    pub(super) timeout: Duration,
    pub(super) deadline: Instant,
    pub(super) trap_oid: Oid,
    /// The notification's contextName, for each wrapping.
    pub(super) context: Vec<u8>,
}

/// One receiver's unacknowledged informs, oldest first.
pub(super) struct Queue {
    pub(super) sink: Sink,
    pub(super) informs: VecDeque<PendingInform>,
}

impl super::Task {
    /// The queue of a target's informs (a new one for a new target).
    pub(super) fn queue_for(&mut self, sink: &Sink) -> usize {
        let fixed = self.config.sinks.len();
        match self
            .pending
            .iter()
            .skip(fixed)
            .position(|q| q.sink.same(sink))
        {
            Some(i) => fixed + i,
            None => {
                self.pending.push(Queue {
                    sink: sink.clone(),
                    informs: VecDeque::new(),
                });
                self.pending.len() - 1
            }
        }
    }

    /// Forgets the queues of targets with nothing left to acknowledge.
    pub(super) fn prune(&mut self) {
        let fixed = self.config.sinks.len();
        let mut i = 0;
        self.pending.retain(|q| {
            i += 1;
            i <= fixed || !q.informs.is_empty()
        });
    }

    pub(super) fn track(&mut self, queue: usize, p: PendingInform) {
        let max = self.config.max_pending_informs.max(1);
        let Some(Queue { sink, informs: q }) = self.pending.get_mut(queue) else {
            return;
        };
        let addr = sink.addr;
        while q.len() >= max {
            if let Some(old) = q.pop_front() {
                let total = self.stats.informs_dropped.fetch_add(1, Ordering::Relaxed) + 1;
                warn!(sink = %addr, trap = %old.trap_oid, total_dropped = total,
                      "inform dropped: too many unacknowledged informs to this sink");
            }
        }
        q.push_back(p);
    }

    /// A datagram on the originator's socket: a Response acknowledges the
    /// inform with its request-id, from the sink it was sent to.
    pub(super) fn on_datagram(&mut self, src: SocketAddr, data: &[u8]) {
        for Queue { sink, informs: q } in &mut self.pending {
            if !same_endpoint(sink.addr, src) {
                continue;
            }
            let pdu = match &sink.kind {
                SinkKind::InformV2c { community, .. } => match Message::decode(data) {
                    Ok(m) if m.version == Version::V2c && &m.community == community => m.pdu,
                    _ => continue,
                },
                SinkKind::Wrapped { wrapper, .. } => match wrapper.unwrap_response(data) {
                    Some(p) => p,
                    None => {
                        // E.g. a Report from a receiver that restarted.
                        refresh(wrapper, &self.refreshed);
                        continue;
                    }
                },
                _ => continue,
            };
            let Pdu::Response(body) = pdu else { continue };
            if let Some(pos) = q.iter().position(|p| p.request_id == body.request_id) {
                q.remove(pos);
                inc(&self.stats.informs_acked);
                debug!(sink = %src, request_id = body.request_id, "inform acknowledged");
                self.prune();
                return;
            }
        }
        debug!(%src, len = data.len(), "unexpected datagram on the notification socket");
    }

    /// A wrapper's refresh is over (an SNMPv3 receiver discovered): the
    /// informs to it that could not be wrapped yet go out now rather than at
    /// their next retry (a receiver of a new target is discovered with its
    /// first inform), their timeout starting again.
    pub(super) async fn on_refreshed(&mut self, key: usize) {
        let now = Instant::now();
        let mut send = Vec::new();
        for Queue { sink, informs } in &mut self.pending {
            let SinkKind::Wrapped { wrapper, .. } = &sink.kind else {
                continue;
            };
            if wrapper_key(wrapper) != key {
                continue;
            }
            for p in informs.iter_mut().filter(|p| p.datagram.is_empty()) {
                let Some(Ok(d)) = p.pdu.as_ref().map(|pdu| wrapper.wrap(pdu, &p.context)) else {
                    continue;
                };
                p.datagram = d;
                p.deadline = now + p.timeout;
                send.push((sink.addr, p.datagram.clone()));
            }
        }
        for (addr, d) in send {
            self.send(addr, &d).await;
        }
    }

    /// Resends or gives up the informs whose timeout passed.
    pub(super) async fn expire(&mut self) {
        let now = Instant::now();
        let mut resend = Vec::new();
        for Queue { sink, informs: q } in &mut self.pending {
            let addr = sink.addr;
            let wrapper = match &sink.kind {
                SinkKind::Wrapped { wrapper, .. } => Some(wrapper),
                _ => None,
            };
            q.retain_mut(|p| {
                if p.deadline > now {
                    return true;
                }
                if p.tries_left == 0 {
                    let total = self.stats.informs_dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    warn!(sink = %addr, trap = %p.trap_oid, request_id = p.request_id,
                          total_dropped = total,
                          "inform not acknowledged after its retries; dropped");
                    return false;
                }
                p.tries_left -= 1;
                p.deadline = now + p.timeout;
                debug!(sink = %addr, request_id = p.request_id, tries_left = p.tries_left, "inform retry");
                if let (Some(w), Some(pdu)) = (wrapper, &p.pdu) {
                    // Unanswered: the receiver may have restarted.
                    refresh(w, &self.refreshed);
                    match w.wrap(pdu, &p.context) {
                        Ok(d) => p.datagram = d,
                        Err(e) => debug!(sink = %addr, error = %e, "inform not wrapped yet"),
                    }
                }
                if !p.datagram.is_empty() {
                    resend.push((addr, p.datagram.clone()));
                }
                true
            });
        }
        self.prune();
        for (addr, d) in resend {
            inc(&self.stats.inform_retries);
            self.send(addr, &d).await;
        }
    }
}
/// Same address and port, IPv4-mapped IPv6 equal to IPv4.
pub(super) fn same_endpoint(a: SocketAddr, b: SocketAddr) -> bool {
    let canon = |s: SocketAddr| match s {
        SocketAddr::V6(v6) => v6
            .ip()
            .to_ipv4_mapped()
            .map_or(s, |v4| SocketAddr::from((v4, v6.port()))),
        v4 => v4,
    };
    canon(a) == canon(b)
}
