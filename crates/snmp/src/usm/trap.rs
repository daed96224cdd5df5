//! SNMPv3 notification sinks (snmpd.conf's `trapsess -v3`): traps sent as
//! one USM user with this engine authoritative, so a receiver configured
//! with `createUser -e <our snmpEngineID> USER ...` authenticates and
//! decrypts them without discovery.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use super::{SecurityLevel, Usm};
use crate::notify::MessageWrapper;
use crate::pdu::Pdu;

/// Wraps SNMPv2-Trap PDUs for one user at one securityLevel.
pub struct TrapWrapper {
    usm: Arc<Usm>,
    user: String,
    level: SecurityLevel,
    msg_id: AtomicI32,
}

impl TrapWrapper {
    /// Err when the user is unknown (configured or created over SNMP) or
    /// has no keys for `level`.
    pub fn new(usm: Arc<Usm>, user: &str, level: SecurityLevel) -> Result<Self, String> {
        let known = usm
            .user(user.as_bytes())
            .ok_or_else(|| format!("no [[user]] named {user:?}"))?;
        if level > known.max_level() {
            return Err(format!(
                "user {user:?} has no keys for securityLevel {level:?}"
            ));
        }
        Ok(TrapWrapper {
            usm,
            user: user.to_string(),
            level,
            msg_id: AtomicI32::new(1),
        })
    }
}

/// `pdu` in a message from `user` at `level` with the next msgID of
/// `msg_id` (traps and informs alike).
pub(super) fn wrap_as(
    usm: &Usm,
    user: &str,
    level: SecurityLevel,
    msg_id: &AtomicI32,
    (pdu, context): (&Pdu, &[u8]),
) -> Result<Vec<u8>, String> {
    let id = msg_id.fetch_add(1, Ordering::Relaxed) & i32::MAX;
    let mut out = Vec::with_capacity(512);
    if usm.encode_notification_in(user, level, id, context, pdu.clone(), &mut out) {
        Ok(out)
    } else {
        Err(format!("cannot send as user {user:?}"))
    }
}

impl MessageWrapper for TrapWrapper {
    fn wrap(&self, pdu: &Pdu, context: &[u8]) -> Result<Vec<u8>, String> {
        wrap_as(
            &self.usm,
            &self.user,
            self.level,
            &self.msg_id,
            (pdu, context),
        )
    }

    /// Traps only: nothing comes back.
    fn unwrap_response(&self, _datagram: &[u8]) -> Option<Pdu> {
        None
    }
}
