//! SNMPv3 informs (`trapsess -v3 -Ci`): the receiver is the authoritative
//! engine (RFC 3414 1.5.1), so its snmpEngineID, boots and time are
//! discovered first (RFC 3414 4: a reportable noAuthNoPriv probe with an
//! empty engine ID, answered by a usmStatsUnknownEngineIDs Report), then
//! the user's keys are localized to that engine ID. The receiver's
//! Response is authenticated (and decrypted) with the same keys.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use tokio::net::UdpSocket;
use tracing::{debug, info, warn};

use super::process::{Engine, Incoming, SecurityLevel, UserConfig, Usm};
use crate::message_v3::USM_SECURITY_MODEL;
use crate::message_v3::{flags, HeaderData, ScopedPdu, ScopedPduData, UsmParams, V3Message};
use crate::notify::{MessageWrapper, RefreshFuture};
use crate::pdu::{Pdu, PduBody};

/// A remote engine's identity as its Report gave it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovered {
    pub engine_id: Vec<u8>,
    pub boots: u32,
    pub time: u32,
}

/// The discovery probe: reportable, noAuthNoPriv, empty engine ID and user.
fn probe(msg_id: i32) -> Vec<u8> {
    let m = V3Message {
        header: HeaderData {
            msg_id,
            max_size: 65507,
            flags: flags::REPORTABLE,
            security_model: USM_SECURITY_MODEL,
        },
        usm: UsmParams::default(),
        data: ScopedPduData::Plain(ScopedPdu {
            context_engine_id: Vec::new(),
            context_name: Vec::new(),
            pdu: Pdu::GetRequest(PduBody::request(msg_id, Vec::new())),
        }),
    };
    let mut out = Vec::new();
    m.encode(&mut out);
    out
}

/// RFC 3414 4 discovery of the engine at `addr`: `tries` probes, `timeout`
/// each.
pub async fn discover(
    addr: SocketAddr,
    timeout: Duration,
    tries: u32,
) -> Result<Discovered, String> {
    let local: SocketAddr = if addr.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let sock = UdpSocket::bind(local)
        .await
        .map_err(|e| format!("discovery socket: {e}"))?;
    let msg_id = i32::from(rand::random::<u16>()) + 1;
    let mut buf = vec![0u8; 65536];
    for _ in 0..tries.max(1) {
        sock.send_to(&probe(msg_id), addr)
            .await
            .map_err(|e| format!("discovery probe to {addr}: {e}"))?;
        let deadline = tokio::time::Instant::now() + timeout;
        while let Ok(r) = tokio::time::timeout_at(deadline, sock.recv_from(&mut buf)).await {
            let Ok((n, from)) = r else { break };
            if from != addr {
                continue;
            }
            let Some(Ok((m, _))) = buf.get(..n).map(V3Message::decode) else {
                continue;
            };
            let report =
                matches!(&m.data, ScopedPduData::Plain(s) if matches!(s.pdu, Pdu::Report(_)));
            if m.header.msg_id == msg_id && report && !m.usm.engine_id.is_empty() {
                return Ok(Discovered {
                    engine_id: m.usm.engine_id,
                    boots: u32::try_from(m.usm.engine_boots).unwrap_or(0),
                    time: u32::try_from(m.usm.engine_time).unwrap_or(0),
                });
            }
        }
    }
    Err(format!("no discovery Report from {addr}"))
}

/// Wraps InformRequest PDUs for one user at one level, keys localized to
/// the receiver's engine. The receiver is discovered again whenever the
/// originator asks ([`MessageWrapper::refresh`]: an inform went
/// unacknowledged, or the receiver answered with a Report): it may have
/// been down at the first discovery, or restarted with new boots and time
/// or a new engine ID.
pub struct InformWrapper {
    user: UserConfig,
    level: SecurityLevel,
    addr: SocketAddr,
    /// Per discovery probe, and how many probes.
    timeout: Duration,
    tries: u32,
    /// The user's keys for the receiver's engine as last discovered; None
    /// until a discovery succeeds.
    usm: ArcSwapOption<Usm>,
    msg_id: AtomicI32,
    /// A discovery is under way.
    discovering: AtomicBool,
    /// The last discovery failed (its warning is not repeated).
    failing: AtomicBool,
}

impl InformWrapper {
    /// A wrapper for informs to `addr` as `user` at `level`, not yet
    /// discovered ([`InformWrapper::discover`]). Discovery sends up to
    /// `tries` probes, `timeout` apart.
    pub fn new(
        user: &UserConfig,
        level: SecurityLevel,
        addr: SocketAddr,
        timeout: Duration,
        tries: u32,
    ) -> Result<Self, String> {
        let user = UserConfig {
            access: None,
            ..user.clone()
        };
        // The user's keys for some engine tell whether it has the level.
        localize(&user, level, &Discovered::default())?;
        Ok(InformWrapper {
            user,
            level,
            addr,
            timeout,
            tries,
            usm: ArcSwapOption::empty(),
            msg_id: AtomicI32::new(1),
            discovering: AtomicBool::new(false),
            failing: AtomicBool::new(false),
        })
    }

    /// Discovers the receiver (RFC 3414 4) and localizes the user's keys
    /// to its engine; until it succeeds the last engine (or none) stays.
    /// Logs the outcome: each success, and the first failure of a run of
    /// them.
    pub async fn discover(&self) -> Result<Discovered, String> {
        let found = match discover(self.addr, self.timeout, self.tries).await {
            Ok(remote) => localize(&self.user, self.level, &remote).map(|usm| (remote, usm)),
            Err(e) => Err(e),
        };
        match found {
            Ok((remote, usm)) => {
                self.usm.store(Some(Arc::new(usm)));
                self.failing.store(false, Ordering::Relaxed);
                info!(sink = %self.addr, engine_id = %hex(&remote.engine_id), boots = remote.boots,
                      "SNMPv3 inform receiver discovered");
                Ok(remote)
            }
            Err(e) => {
                if self.failing.swap(true, Ordering::Relaxed) {
                    debug!(sink = %self.addr, error = %e, "SNMPv3 inform receiver not discovered");
                } else {
                    warn!(sink = %self.addr, error = %e,
                          "SNMPv3 inform receiver not discovered; tried again when informs to it go unanswered");
                }
                Err(e)
            }
        }
    }
}

/// A USM holding `user`'s keys localized to `remote`'s engine, which must
/// give the user `level`.
fn localize(user: &UserConfig, level: SecurityLevel, remote: &Discovered) -> Result<Usm, String> {
    let engine = Engine::remote(remote.engine_id.clone(), remote.boots, remote.time);
    let usm = Usm::new(engine, std::slice::from_ref(user)).map_err(|e| e.to_string())?;
    if !usm
        .users()
        .any(|u| u.name == user.name.as_bytes() && level <= u.max_level())
    {
        return Err(format!(
            "user {:?} has no keys for level {level:?}",
            user.name
        ));
    }
    Ok(usm)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl MessageWrapper for InformWrapper {
    fn wrap(&self, pdu: &Pdu, context: &[u8]) -> Result<Vec<u8>, String> {
        let usm = self.usm.load();
        let usm = usm
            .as_deref()
            .ok_or_else(|| format!("SNMPv3 inform receiver {} not discovered yet", self.addr))?;
        super::trap::wrap_as(
            usm,
            &self.user.name,
            self.level,
            &self.msg_id,
            (pdu, context),
        )
    }

    /// The receiver's Response, authenticated and decrypted with the
    /// user's keys for its engine (a Report, e.g. after the receiver
    /// restarted, is not an acknowledgement: the inform is sent again).
    fn unwrap_response(&self, datagram: &[u8]) -> Option<Pdu> {
        match self.usm.load().as_deref()?.incoming(datagram) {
            Incoming::Request { ctx, pdu } if ctx.user.name == self.user.name.as_bytes() => {
                Some(pdu)
            }
            _ => None,
        }
    }

    /// Discovers the receiver again, unless a discovery is under way.
    fn refresh(self: Arc<Self>) -> Option<RefreshFuture> {
        if self.discovering.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(Box::pin(async move {
            // Logged by discover itself.
            let _ = self.discover().await;
            self.discovering.store(false, Ordering::Release);
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::ErrorStatus;
    use crate::usm::{AuthProtocol, PrivProtocol};

    fn user() -> UserConfig {
        UserConfig {
            name: "ops".into(),
            auth: Some((AuthProtocol::Sha512, "authpass-1".into())),
            privacy: Some((PrivProtocol::Aes256, "privpass-1".into())),
            access: None,
        }
    }

    /// Discovery, an authPriv inform the receiver's USM accepts, and its
    /// Response taken back as the acknowledgement; a forged one is not.
    #[tokio::test]
    async fn discovery_inform_and_acknowledgement() {
        let receiver = Usm::new(Engine::new(vec![0x80, 0, 0, 0, 5, 9, 9], 7), &[user()]).unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = sock.local_addr().unwrap();
        let serve = tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            // The probe, answered by a usmStatsUnknownEngineIDs Report.
            let (n, from) = sock.recv_from(&mut buf).await.unwrap();
            let Incoming::Report { msg, .. } = receiver.incoming(&buf[..n]) else {
                panic!("probe not reported")
            };
            sock.send_to(&msg, from).await.unwrap();
            receiver
        });
        let remote = discover(addr, Duration::from_secs(2), 1).await.unwrap();
        let receiver = serve.await.unwrap();
        assert_eq!(remote.engine_id, receiver.engine.id);
        assert_eq!(remote.boots, 7);

        let w = InformWrapper::new(
            &user(),
            SecurityLevel::AuthPriv,
            addr,
            Duration::from_secs(2),
            1,
        )
        .unwrap();
        assert!(w
            .wrap(&Pdu::InformRequest(PduBody::request(1, Vec::new())), b"")
            .is_err());
        w.usm.store(Some(Arc::new(
            localize(&user(), SecurityLevel::AuthPriv, &remote).unwrap(),
        )));
        let inform = Pdu::InformRequest(PduBody::request(42, Vec::new()));
        // About a node's context: the receiver sees its contextName.
        let msg = w.wrap(&inform, b"leaf01").unwrap();
        let (m, _) = V3Message::decode(&msg).unwrap();
        assert_ne!(
            m.header.flags & flags::REPORTABLE,
            0,
            "informs are reportable"
        );
        assert!(matches!(m.data, ScopedPduData::Encrypted(_)));
        let Incoming::Request { ctx, pdu } = receiver.incoming(&msg) else {
            panic!("the receiver rejected the inform")
        };
        assert_eq!(pdu, inform);
        assert_eq!(ctx.context_name, b"leaf01");
        let mut resp = Vec::new();
        let body = PduBody {
            request_id: 42,
            error_status: ErrorStatus::NoError,
            error_index: 0,
            varbinds: Vec::new(),
        };
        receiver.encode_response(&ctx, Pdu::Response(body.clone()), &mut resp);
        assert_eq!(w.unwrap_response(&resp), Some(Pdu::Response(body)));
        // One flipped octet in the MAC or ciphertext: no acknowledgement.
        let last = resp.len() - 1;
        resp[last] ^= 1;
        assert_eq!(w.unwrap_response(&resp), None);
    }
}
