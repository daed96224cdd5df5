//! Notification receivers: how each is sent to, and the receivers chosen
//! per notification beside the fixed ones.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::notification::Notification;
use crate::message::{Message, Version};
use crate::pdu::{Pdu, PduBody};

/// The message processing of a sink other than SNMPv1/v2c: SNMPv3 plugs in
/// here (the PDU wrapped in a scoped PDU with USM security parameters).
pub trait MessageWrapper: Send + Sync {
    /// The whole datagram carrying `pdu` (an SNMPv2-Trap or InformRequest)
    /// about context `context` (RFC 3411 contextName; empty: the default).
    fn wrap(&self, pdu: &Pdu, context: &[u8]) -> Result<Vec<u8>, String>;
    /// The PDU of an answer datagram, if it is one of this wrapper's
    /// messages and authentic (a Response to an inform); None otherwise.
    fn unwrap_response(&self, datagram: &[u8]) -> Option<Pdu>;
    /// Called when an inform to the sink went unanswered or the sink
    /// answered with something that is no acknowledgement: work that
    /// brings `wrap` up to date (an SNMPv3 receiver discovered again), run
    /// on its own task; None when there is nothing to do (the default) or
    /// it is already under way. Retries are wrapped anew.
    fn refresh(self: Arc<Self>) -> Option<RefreshFuture> {
        None
    }
}

/// What [`MessageWrapper::refresh`] runs.
pub type RefreshFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// How a sink is sent to.
#[derive(Clone)]
pub enum SinkKind {
    /// SNMPv1 Trap-PDU (snmpd.conf `trapsink`).
    TrapV1 { community: Vec<u8> },
    /// SNMPv2c SNMPv2-Trap (`trap2sink`).
    TrapV2c { community: Vec<u8> },
    /// SNMPv2c InformRequest (`informsink`), sent again after `timeout`
    /// up to `retries` times until acknowledged.
    InformV2c {
        community: Vec<u8>,
        timeout: Duration,
        retries: u32,
    },
    /// A message wrapped by another message processing model (SNMPv3);
    /// `confirm`: send InformRequests with (timeout, retries).
    Wrapped {
        wrapper: Arc<dyn MessageWrapper>,
        confirm: Option<(Duration, u32)>,
    },
}

impl fmt::Debug for SinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SinkKind::TrapV1 { .. } => f.write_str("trapsink"),
            SinkKind::TrapV2c { .. } => f.write_str("trap2sink"),
            SinkKind::InformV2c { .. } => f.write_str("informsink"),
            SinkKind::Wrapped { .. } => f.write_str("wrapped"),
        }
    }
}

/// A notification as one sink is sent it.
pub(super) struct Encoded {
    /// The datagram; Err(why) when a wrapper could not wrap it (an SNMPv3
    /// receiver not discovered yet).
    pub(super) datagram: Result<Vec<u8>, String>,
    /// An inform's request-id, timeout and retries (None: a trap).
    pub(super) confirm: Option<(i32, Duration, u32)>,
    /// A wrapped inform's PDU, wrapped anew for each retry.
    pub(super) pdu: Option<Pdu>,
}

impl Encoded {
    fn trap(m: Message) -> Self {
        Encoded {
            datagram: Ok(m.to_bytes()),
            confirm: None,
            pdu: None,
        }
    }
}

impl SinkKind {
    /// Whether the sink acknowledges what it is sent (informs).
    pub(super) fn informs(&self) -> bool {
        matches!(
            self,
            SinkKind::InformV2c { .. }
                | SinkKind::Wrapped {
                    confirm: Some(_),
                    ..
                }
        )
    }

    /// The wrapper of a wrapped sink.
    pub(super) fn wrapper(&self) -> Option<&Arc<dyn MessageWrapper>> {
        match self {
            SinkKind::Wrapped { wrapper, .. } => Some(wrapper),
            _ => None,
        }
    }

    /// `n` (at sysUpTime `up`) as this kind of sink is sent it; `rid` gives
    /// the request-id of an SNMPv2 PDU (an SNMPv1 trap takes none).
    pub(super) fn encode(
        &self,
        n: &Notification,
        up: u32,
        agent_addr: Ipv4Addr,
        rid: impl FnOnce() -> i32,
    ) -> Encoded {
        match self {
            SinkKind::TrapV1 { community } => Encoded::trap(Message {
                version: Version::V1,
                community: community.clone(),
                pdu: Pdu::TrapV1(n.to_v1(up, agent_addr)),
            }),
            SinkKind::TrapV2c { community } => Encoded::trap(Message {
                version: Version::V2c,
                community: community.clone(),
                pdu: Pdu::SnmpV2Trap(PduBody::request(rid(), n.v2_varbinds(up))),
            }),
            SinkKind::InformV2c {
                community,
                timeout,
                retries,
            } => inform_v2c(community, (*timeout, *retries), rid(), n.v2_varbinds(up)),
            SinkKind::Wrapped { wrapper, confirm } => {
                wrapped(wrapper.as_ref(), *confirm, rid(), n, up)
            }
        }
    }
}

/// An SNMPv2c InformRequest with request-id `rid`.
fn inform_v2c(
    community: &[u8],
    (timeout, retries): (Duration, u32),
    rid: i32,
    varbinds: Vec<crate::value::VarBind>,
) -> Encoded {
    let m = Message {
        version: Version::V2c,
        community: community.to_vec(),
        pdu: Pdu::InformRequest(PduBody::request(rid, varbinds)),
    };
    Encoded {
        datagram: Ok(m.to_bytes()),
        confirm: Some((rid, timeout, retries)),
        pdu: None,
    }
}

/// An SNMPv2-Trap, or an InformRequest when the sink `confirm`s, wrapped by
/// `wrapper` (SNMPv3).
fn wrapped(
    wrapper: &dyn MessageWrapper,
    confirm: Option<(Duration, u32)>,
    rid: i32,
    n: &Notification,
    up: u32,
) -> Encoded {
    let body = PduBody::request(rid, n.v2_varbinds(up));
    let pdu = match confirm {
        Some(_) => Pdu::InformRequest(body),
        None => Pdu::SnmpV2Trap(body),
    };
    Encoded {
        datagram: wrapper.wrap(&pdu, &n.context),
        confirm: confirm.map(|(t, r)| (rid, t, r)),
        pdu: Some(pdu),
    }
}

/// A notification receiver.
#[derive(Clone, Debug)]
pub struct Sink {
    pub addr: SocketAddr,
    pub kind: SinkKind,
}

impl Sink {
    /// The same receiver sent to the same way (a wrapper is the same one),
    /// so informs to it share one queue.
    pub(super) fn same(&self, other: &Sink) -> bool {
        self.addr == other.addr
            && match (&self.kind, &other.kind) {
                (SinkKind::TrapV1 { community: a }, SinkKind::TrapV1 { community: b })
                | (SinkKind::TrapV2c { community: a }, SinkKind::TrapV2c { community: b }) => {
                    a == b
                }
                (
                    SinkKind::InformV2c {
                        community: a,
                        timeout: ta,
                        retries: ra,
                    },
                    SinkKind::InformV2c {
                        community: b,
                        timeout: tb,
                        retries: rb,
                    },
                ) => a == b && ta == tb && ra == rb,
                (
                    SinkKind::Wrapped {
                        wrapper: a,
                        confirm: ca,
                    },
                    SinkKind::Wrapped {
                        wrapper: b,
                        confirm: cb,
                    },
                ) => Arc::ptr_eq(a, b) && ca == cb,
                _ => false,
            }
    }
}

/// Receivers chosen when each notification is sent, beside the fixed
/// sinks: SNMP-TARGET-MIB rows managed over SNMP, read at that moment.
pub trait SinkSource: Send + Sync + fmt::Debug {
    /// Where `n` goes now, besides the fixed sinks. A receiver informs go
    /// to should come back as the same [`Sink`] (the same wrapper) while it
    /// is unchanged: its unacknowledged informs are kept with it.
    fn sinks(&self, n: &Notification) -> Vec<Sink>;
}

/// Which wrapper a refresh was for (its address while the sink holds it).
pub(super) fn wrapper_key(wrapper: &Arc<dyn MessageWrapper>) -> usize {
    Arc::as_ptr(wrapper).cast::<()>() as usize
}

/// Runs a wrapper's refresh, if it has one to run, on its own task, and
/// says on `done` when it is over.
pub(super) fn refresh(wrapper: &Arc<dyn MessageWrapper>, done: &mpsc::UnboundedSender<usize>) {
    if let Some(f) = Arc::clone(wrapper).refresh() {
        let (done, key) = (done.clone(), wrapper_key(wrapper));
        tokio::spawn(async move {
            f.await;
            let _ = done.send(key);
        });
    }
}
