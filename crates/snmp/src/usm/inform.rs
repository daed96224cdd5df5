//! SNMPv3 informs (`trapsess -v3 -Ci`): the receiver is the authoritative
//! engine (RFC 3414 1.5.1), so its snmpEngineID, boots and time are
//! discovered first (RFC 3414 4: a reportable noAuthNoPriv probe with an
//! empty engine ID, answered by a usmStatsUnknownEngineIDs Report), then
//! the user's keys are localized to that engine ID. The receiver's
//! Response is authenticated (and decrypted) with the same keys.

use std::net::SocketAddr;
use std::sync::atomic::AtomicI32;
use std::time::Duration;

use tokio::net::UdpSocket;

use super::process::{Engine, Incoming, SecurityLevel, UserConfig, Usm};
use crate::message_v3::USM_SECURITY_MODEL;
use crate::message_v3::{flags, HeaderData, ScopedPdu, ScopedPduData, UsmParams, V3Message};
use crate::notify::MessageWrapper;
use crate::pdu::{Pdu, PduBody};

/// A remote engine's identity as its Report gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
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
/// the receiver's engine.
pub struct InformWrapper {
    usm: Usm,
    user: String,
    level: SecurityLevel,
    msg_id: AtomicI32,
}

impl InformWrapper {
    /// `user` with its passwords (localized here, to `remote`'s engine ID).
    pub fn new(
        user: &UserConfig,
        level: SecurityLevel,
        remote: &Discovered,
    ) -> Result<Self, String> {
        let cfg = UserConfig {
            access: None,
            ..user.clone()
        };
        let engine = Engine::remote(remote.engine_id.clone(), remote.boots, remote.time);
        let usm = Usm::new(engine, std::slice::from_ref(&cfg)).map_err(|e| e.to_string())?;
        if !usm
            .users()
            .any(|u| u.name == user.name.as_bytes() && level <= u.max_level())
        {
            return Err(format!(
                "user {:?} has no keys for level {level:?}",
                user.name
            ));
        }
        Ok(InformWrapper {
            usm,
            user: user.name.clone(),
            level,
            msg_id: AtomicI32::new(1),
        })
    }
}

impl MessageWrapper for InformWrapper {
    fn wrap(&self, pdu: &Pdu) -> Result<Vec<u8>, String> {
        super::trap::wrap_as(&self.usm, &self.user, self.level, &self.msg_id, pdu)
    }

    /// The receiver's Response, authenticated and decrypted with the
    /// user's keys for its engine (a Report, e.g. after the receiver
    /// restarted, is not an acknowledgement: the inform is sent again).
    fn unwrap_response(&self, datagram: &[u8]) -> Option<Pdu> {
        match self.usm.incoming(datagram) {
            Incoming::Request { ctx, pdu } if ctx.user.name == self.user.as_bytes() => Some(pdu),
            _ => None,
        }
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

        let w = InformWrapper::new(&user(), SecurityLevel::AuthPriv, &remote).unwrap();
        let inform = Pdu::InformRequest(PduBody::request(42, Vec::new()));
        let msg = w.wrap(&inform).unwrap();
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
