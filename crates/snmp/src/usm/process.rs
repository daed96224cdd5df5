//! USM message processing for an authoritative (command responder) engine:
//! RFC 3414 3.2 for incoming messages, 3.1 for responses and Reports.

// Input path: messages come from the wire.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::{AuthProtocol, PrivProtocol};
use crate::message_v3::{
    flags, HeaderData, ScopedPdu, ScopedPduData, UsmParams, V3Message, USM_SECURITY_MODEL,
};
use crate::oid::Oid;
use crate::pdu::{Pdu, PduBody};
use crate::value::{Value, VarBind};

/// The time window of RFC 3414 3.2.7: 150 seconds.
pub const TIME_WINDOW: i64 = 150;

/// securityLevel (RFC 3411), ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecurityLevel {
    NoAuthNoPriv = 1,
    AuthNoPriv = 2,
    AuthPriv = 3,
}

impl SecurityLevel {
    /// net-snmp's words (`noauth`, `auth`, `priv`) and RFC names.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "noauth" | "noauthnopriv" => SecurityLevel::NoAuthNoPriv,
            "auth" | "authnopriv" => SecurityLevel::AuthNoPriv,
            "priv" | "authpriv" => SecurityLevel::AuthPriv,
            _ => return None,
        })
    }

    fn from_flags(f: u8) -> Option<Self> {
        match f & (flags::AUTH | flags::PRIV) {
            0 => Some(SecurityLevel::NoAuthNoPriv),
            flags::AUTH => Some(SecurityLevel::AuthNoPriv),
            3 => Some(SecurityLevel::AuthPriv),
            _ => None,
        }
    }

    fn flags(self) -> u8 {
        match self {
            SecurityLevel::NoAuthNoPriv => 0,
            SecurityLevel::AuthNoPriv => flags::AUTH,
            SecurityLevel::AuthPriv => flags::AUTH | flags::PRIV,
        }
    }
}

/// Why message processing (RFC 3412 7.2) dropped an SNMPv3 message, for the
/// SNMP-MPD-MIB counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpdDrop {
    /// snmpUnknownSecurityModels: a msgSecurityModel other than USM.
    UnknownSecurityModel,
    /// snmpInvalidMsgs: msgFlags asking for privacy without authentication.
    InvalidMsg,
}

/// The snmpEngine of this agent (SNMP-FRAMEWORK-MIB).
#[derive(Debug)]
pub struct Engine {
    pub id: Vec<u8>,
    pub boots: u32,
    started: Instant,
    /// snmpEngineTime at `started` (a remote engine's, once discovered).
    time_at_start: u32,
}

impl Engine {
    /// `boots` must already count this start (and be persisted).
    pub fn new(id: Vec<u8>, boots: u32) -> Self {
        Engine {
            id,
            boots: boots.min(i32::MAX as u32),
            started: Instant::now(),
            time_at_start: 0,
        }
    }

    /// A remote engine as discovered (RFC 3414 4): its ID, boots and
    /// time, the time then advancing with our clock.
    pub fn remote(id: Vec<u8>, boots: u32, time: u32) -> Self {
        Engine {
            time_at_start: time.min(i32::MAX as u32),
            ..Engine::new(id, boots)
        }
    }

    /// snmpEngineTime: seconds since this start.
    pub fn time(&self) -> u32 {
        u32::try_from(self.started.elapsed().as_secs())
            .unwrap_or(u32::MAX)
            .saturating_add(self.time_at_start)
            .min(i32::MAX as u32)
    }

    /// A new RFC 3411 engine ID: enterprise 8072 (net-snmp's arc, as
    /// net-snmp-derived agents use), format 5 (octets), 8 random octets.
    pub fn generate_id() -> Vec<u8> {
        let mut id = vec![0x80, 0x00, 0x1f, 0x88, 0x05];
        id.extend_from_slice(&rand::random::<[u8; 8]>());
        id
    }
}

/// A user as configured: protocols and passwords (localized in [`Usm::new`]).
#[derive(Clone, PartialEq)]
pub struct UserConfig {
    pub name: String,
    pub auth: Option<(AuthProtocol, String)>,
    pub privacy: Option<(PrivProtocol, String)>,
    pub access: Option<UserAccess>,
}

impl UserConfig {
    /// A user without keys (noAuthNoPriv only) with `access`.
    pub fn without_keys(name: impl Into<String>, access: Option<UserAccess>) -> Self {
        UserConfig {
            name: name.into(),
            auth: None,
            privacy: None,
            access,
        }
    }
}

impl std::fmt::Debug for UserConfig {
    // Passwords never reach a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserConfig")
            .field("name", &self.name)
            .field("auth", &self.auth.as_ref().map(|a| a.0))
            .field("privacy", &self.privacy.as_ref().map(|p| p.0))
            .field("access", &self.access)
            .finish()
    }
}

/// What a user may do (rouser/rwuser).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserAccess {
    pub write: bool,
    pub min_level: SecurityLevel,
    /// The one subtree the user may see (None: everything).
    pub subtree: Option<Oid>,
}

/// A user with keys localized to this engine.
pub struct User {
    pub name: Vec<u8>,
    auth: Option<(AuthProtocol, Vec<u8>)>,
    privacy: Option<(PrivProtocol, Vec<u8>)>,
    pub access: Option<UserAccess>,
}

impl User {
    /// A user from keys already localized to this engine (a usmUserTable row).
    pub fn from_keys(
        name: &[u8],
        auth: Option<(AuthProtocol, Vec<u8>)>,
        privacy: Option<(PrivProtocol, Vec<u8>)>,
    ) -> Self {
        User {
            name: name.to_vec(),
            auth,
            privacy,
            access: None,
        }
    }

    /// The authentication protocol and localized key.
    pub fn auth(&self) -> Option<(AuthProtocol, &[u8])> {
        self.auth.as_ref().map(|(p, k)| (*p, k.as_slice()))
    }

    /// The privacy protocol and localized key.
    pub fn privacy(&self) -> Option<(PrivProtocol, &[u8])> {
        self.privacy.as_ref().map(|(p, k)| (*p, k.as_slice()))
    }

    /// The highest securityLevel the user has keys for.
    pub fn max_level(&self) -> SecurityLevel {
        match (&self.auth, &self.privacy) {
            (Some(_), Some(_)) => SecurityLevel::AuthPriv,
            (Some(_), None) => SecurityLevel::AuthNoPriv,
            _ => SecurityLevel::NoAuthNoPriv,
        }
    }
}

/// Why a user could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum UserError {
    #[error("user {0:?}: a password is empty")]
    EmptyPassword(String),
    #[error("user {0:?}: privacy needs authentication")]
    PrivWithoutAuth(String),
}

/// usmStats (SNMP-USER-BASED-SM-MIB), Counter32.
#[derive(Debug, Default)]
pub struct UsmStats {
    pub unsupported_sec_levels: AtomicU32,
    pub not_in_time_windows: AtomicU32,
    pub unknown_user_names: AtomicU32,
    pub unknown_engine_ids: AtomicU32,
    pub wrong_digests: AtomicU32,
    pub decryption_errors: AtomicU32,
}

/// usmStats OID prefix: 1.3.6.1.6.3.15.1.1.
pub const USM_STATS: &[u32] = &[1, 3, 6, 1, 6, 3, 15, 1, 1];
/// snmpEngine OID prefix: 1.3.6.1.6.3.10.2.1.
pub const SNMP_ENGINE: &[u32] = &[1, 3, 6, 1, 6, 3, 10, 2, 1];

/// How to answer an accepted request.
#[derive(Debug)]
pub struct ReplyContext {
    pub msg_id: i32,
    /// The smaller of the requester's msgMaxSize and ours is applied by the caller.
    pub max_size: usize,
    pub level: SecurityLevel,
    pub user: Arc<User>,
    /// The request's contextEngineID: the response carries it back (RFC
    /// 3412 7.1 (3): the contextEngineID of the request), as net-snmp's
    /// snmpd answers; empty when the request's was (the response then
    /// carries this engine's).
    pub context_engine_id: Vec<u8>,
    pub context_name: Vec<u8>,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("name", &String::from_utf8_lossy(&self.name))
            .finish()
    }
}

/// The result of processing an incoming v3 message.
// Request, the large variant, is the common one (every accepted request):
// boxing it would allocate for each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Incoming {
    /// Not usable and nothing to answer (counted by the caller as a parse
    /// error when `parse_error`).
    Drop {
        parse_error: bool,
        auth_failure: bool,
        /// A message-processing counter (SNMP-MPD-MIB) the drop counts in.
        mpd: Option<MpdDrop>,
    },
    /// A Report (already encoded) to send back; `auth_failure` for a
    /// wrong digest or unknown user (authenticationFailure, RFC 3414 3.2).
    Report { msg: Vec<u8>, auth_failure: bool },
    /// Authenticated (at its level) and decrypted: dispatch `pdu`.
    Request { ctx: ReplyContext, pdu: Pdu },
}

/// Users managed at run time (usmUserTable rows created over SNMP), beside
/// the configured ones.
pub trait ManagedUsers: Send + Sync {
    /// The active user `name` of this engine, if there is one.
    fn user(&self, name: &[u8]) -> Option<Arc<User>>;
}

/// The USM of one engine: its users and counters.
pub struct Usm {
    pub engine: Engine,
    users: HashMap<Vec<u8>, Arc<User>>,
    managed: std::sync::OnceLock<Arc<dyn ManagedUsers>>,
    pub stats: UsmStats,
    salt: AtomicU64,
}

impl std::fmt::Debug for Usm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Usm")
            .field("engine", &self.engine)
            .field("users", &self.users.len())
            .finish()
    }
}

impl Usm {
    /// Localizes every user's keys to `engine` (RFC 3414 A.2; about 1 MiB
    /// of hashing per password).
    pub fn new(engine: Engine, users: &[UserConfig]) -> Result<Self, UserError> {
        let mut map = HashMap::new();
        for u in users {
            let auth = match &u.auth {
                Some((p, pass)) => Some((
                    *p,
                    p.localized_key(pass.as_bytes(), &engine.id)
                        .ok_or_else(|| UserError::EmptyPassword(u.name.clone()))?,
                )),
                None => None,
            };
            let privacy = match (&u.privacy, &auth) {
                (Some((p, pass)), Some((a, _))) => Some((
                    *p,
                    p.localized_key(*a, pass.as_bytes(), &engine.id)
                        .ok_or_else(|| UserError::EmptyPassword(u.name.clone()))?,
                )),
                (Some(_), None) => return Err(UserError::PrivWithoutAuth(u.name.clone())),
                (None, _) => None,
            };
            map.insert(
                u.name.as_bytes().to_vec(),
                Arc::new(User {
                    name: u.name.as_bytes().to_vec(),
                    auth,
                    privacy,
                    access: u.access.clone(),
                }),
            );
        }
        Ok(Usm {
            engine,
            users: map,
            managed: std::sync::OnceLock::new(),
            stats: UsmStats::default(),
            salt: AtomicU64::new(rand::random()),
        })
    }

    /// The configured users (for their rouser/rwuser access).
    pub fn users(&self) -> impl Iterator<Item = &Arc<User>> {
        self.users.values()
    }

    /// Where users created over SNMP are found (once, at start).
    pub fn set_managed(&self, managed: Arc<dyn ManagedUsers>) {
        let _ = self.managed.set(managed);
    }

    /// A user by name: a configured one, else one created over SNMP.
    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        match self.users.get(name) {
            Some(u) => Some(Arc::clone(u)),
            None => self.managed.get()?.user(name),
        }
    }

    /// Value of a usmStats or snmpEngine scalar (`oid` without `.0`).
    pub fn scalar(&self, oid: &[u32]) -> Option<Value> {
        let l = |c: &AtomicU32| Value::Counter32(c.load(Ordering::Relaxed));
        let s = &self.stats;
        if let Some(rest) = oid.strip_prefix(USM_STATS) {
            return Some(match rest {
                [1] => l(&s.unsupported_sec_levels),
                [2] => l(&s.not_in_time_windows),
                [3] => l(&s.unknown_user_names),
                [4] => l(&s.unknown_engine_ids),
                [5] => l(&s.wrong_digests),
                [6] => l(&s.decryption_errors),
                _ => return None,
            });
        }
        let rest = oid.strip_prefix(SNMP_ENGINE)?;
        let int = |v: u32| Value::Integer(i32::try_from(v).unwrap_or(i32::MAX));
        Some(match rest {
            [1] => Value::OctetString(self.engine.id.clone()),
            [2] => int(self.engine.boots),
            [3] => int(self.engine.time()),
            [4] => Value::Integer(65507),
            _ => return None,
        })
    }

    /// RFC 3414 3.2 for one datagram.
    pub fn incoming(&self, buf: &[u8]) -> Incoming {
        let Ok((msg, auth_range)) = V3Message::decode(buf) else {
            return Incoming::Drop {
                parse_error: true,
                auth_failure: false,
                mpd: None,
            };
        };
        let V3Message { header, usm, data } = msg;
        let reportable = header.flags & flags::REPORTABLE != 0;
        let Some(level) = SecurityLevel::from_flags(header.flags) else {
            // RFC 3412 7.2 step 5: priv without auth.
            return Incoming::Drop {
                parse_error: false,
                auth_failure: false,
                mpd: Some(MpdDrop::InvalidMsg),
            };
        };
        if header.security_model != USM_SECURITY_MODEL {
            // RFC 3412 7.2 step 4.
            return Incoming::Drop {
                parse_error: false,
                auth_failure: false,
                mpd: Some(MpdDrop::UnknownSecurityModel),
            };
        }
        let plain_rid = match &data {
            ScopedPduData::Plain(s) => s.pdu.request_id().unwrap_or(0),
            ScopedPduData::Encrypted(_) => 0,
        };
        let report =
            |counter: &AtomicU32, oid_last: u32, keys: Option<(&Arc<User>, SecurityLevel)>| {
                let n = counter.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
                // Unknown user (3) and wrong digest (5) are authentication failures.
                let auth_failure = matches!(oid_last, 3 | 5);
                if !reportable {
                    return Incoming::Drop {
                        parse_error: false,
                        auth_failure,
                        mpd: None,
                    };
                }
                let mut oid = USM_STATS.to_vec();
                oid.extend_from_slice(&[oid_last, 0]);
                let pdu = Pdu::Report(PduBody {
                    request_id: plain_rid,
                    error_status: crate::pdu::ErrorStatus::NoError,
                    error_index: 0,
                    varbinds: vec![VarBind::new(Oid::new(oid), Value::Counter32(n))],
                });
                let mut out = Vec::with_capacity(200);
                self.encode_message(
                    &header,
                    keys,
                    &usm.user_name,
                    Scope::ours(Vec::new()),
                    pdu,
                    &mut out,
                );
                Incoming::Report {
                    msg: out,
                    auth_failure,
                }
            };
        // 3.2.3: the engine ID must be ours (discovery sends an empty one).
        if usm.engine_id != self.engine.id {
            return report(&self.stats.unknown_engine_ids, 4, None);
        }
        // 3.2.4, 3.2.5: known user, level supported.
        let Some(user) = self.user(&usm.user_name) else {
            return report(&self.stats.unknown_user_names, 3, None);
        };
        let user = &user;
        if level > user.max_level() {
            return report(&self.stats.unsupported_sec_levels, 1, None);
        }
        // 3.2.6: authentication.
        if let Some((proto, key)) = &user.auth {
            if level >= SecurityLevel::AuthNoPriv {
                let mut copy = buf.to_vec();
                let ok = usm.auth_params.len() == proto.mac_len()
                    && match copy.get_mut(auth_range) {
                        Some(f) => {
                            f.fill(0);
                            proto.verify(key, &copy, &usm.auth_params)
                        }
                        None => false,
                    };
                if !ok {
                    return report(&self.stats.wrong_digests, 5, None);
                }
                // 3.2.7: time window (this engine is authoritative).
                let now = i64::from(self.engine.time());
                if self.engine.boots >= i32::MAX as u32
                    || i64::from(usm.engine_boots) != i64::from(self.engine.boots)
                    || (i64::from(usm.engine_time) - now).abs() > TIME_WINDOW
                {
                    return report(
                        &self.stats.not_in_time_windows,
                        2,
                        Some((user, SecurityLevel::AuthNoPriv)),
                    );
                }
            }
        }
        // 3.2.8: privacy.
        let scoped = match (data, level) {
            (ScopedPduData::Encrypted(c), SecurityLevel::AuthPriv) => {
                let Some((proto, key)) = &user.privacy else {
                    return report(&self.stats.unsupported_sec_levels, 1, None);
                };
                // RFC 3826 3.2.4.1: the IV uses the message's boots and time.
                let plain = proto.decrypt(
                    key,
                    u32::try_from(usm.engine_boots).unwrap_or(0),
                    u32::try_from(usm.engine_time).unwrap_or(0),
                    &usm.priv_params,
                    &c,
                );
                match plain.ok().and_then(|p| ScopedPdu::decode(&p).ok()) {
                    Some(s) => s,
                    None => return report(&self.stats.decryption_errors, 6, None),
                }
            }
            (ScopedPduData::Plain(s), l) if l < SecurityLevel::AuthPriv => s,
            // Encryption flag and data disagree.
            _ => {
                return Incoming::Drop {
                    parse_error: true,
                    auth_failure: false,
                    mpd: None,
                }
            }
        };
        Incoming::Request {
            ctx: ReplyContext {
                msg_id: header.msg_id,
                max_size: usize::try_from(header.max_size).unwrap_or(484),
                level,
                user: Arc::clone(user),
                context_engine_id: scoped.context_engine_id,
                context_name: scoped.context_name,
            },
            pdu: scoped.pdu,
        }
    }

    /// Encodes a response to an accepted request at its level.
    pub fn encode_response(&self, ctx: &ReplyContext, pdu: Pdu, out: &mut Vec<u8>) {
        let header = HeaderData {
            msg_id: ctx.msg_id,
            max_size: 65507,
            flags: ctx.level.flags(),
            security_model: USM_SECURITY_MODEL,
        };
        let scope = Scope {
            engine_id: Some(ctx.context_engine_id.as_slice()).filter(|id| !id.is_empty()),
            name: ctx.context_name.clone(),
        };
        self.encode_message(
            &header,
            Some((&ctx.user, ctx.level)),
            &ctx.user.name,
            scope,
            pdu,
            out,
        );
    }

    /// Encodes a notification (SNMPv2-Trap, or an Inform's first try) from
    /// this engine as the authoritative sender (RFC 3414 1.5.2, what
    /// snmpd's `trapsess -v3 -u USER -l LEVEL` sends): our engine ID, boots
    /// and time, the user's keys localized to our engine ID. False when the
    /// user is unknown or has no keys for `level`. The seam for the
    /// notification originator.
    pub fn encode_notification(
        &self,
        user: &str,
        level: SecurityLevel,
        msg_id: i32,
        pdu: Pdu,
        out: &mut Vec<u8>,
    ) -> bool {
        self.encode_notification_in(user, level, msg_id, b"", pdu, out)
    }

    /// [`Usm::encode_notification`] about context `context` (the
    /// scopedPDU's contextName).
    pub fn encode_notification_in(
        &self,
        user: &str,
        level: SecurityLevel,
        msg_id: i32,
        context: &[u8],
        pdu: Pdu,
        out: &mut Vec<u8>,
    ) -> bool {
        let Some(u) = self.user(user.as_bytes()) else {
            return false;
        };
        let u = &u;
        if level > u.max_level() {
            return false;
        }
        let header = HeaderData {
            msg_id: msg_id.max(0),
            max_size: 65507,
            flags: 0,
            security_model: USM_SECURITY_MODEL,
        };
        let name = u.name.clone();
        let scope = Scope::ours(context.to_vec());
        self.encode_message(&header, Some((u, level)), &name, scope, pdu, out);
        true
    }

    /// Octets a response needs beyond its VarBindList content (generous).
    pub fn response_overhead(&self, ctx: &ReplyContext) -> usize {
        // Headers, msgID/maxSize/flags/model, engine ID twice, boots/time,
        // user name, MAC (48 max), salt, context name, DES padding, PDU fields.
        120 + self.engine.id.len()
            + self.engine.id.len().max(ctx.context_engine_id.len())
            + ctx.user.name.len()
            + ctx.context_name.len()
    }

    fn encode_message(
        &self,
        req_header: &HeaderData,
        keys: Option<(&Arc<User>, SecurityLevel)>,
        user_name: &[u8],
        scope: Scope<'_>,
        pdu: Pdu,
        out: &mut Vec<u8>,
    ) {
        let level = keys.map_or(SecurityLevel::NoAuthNoPriv, |k| k.1);
        // RFC 3412 6.1: reportable for the Confirmed class we send (informs).
        let reportable = if matches!(pdu, Pdu::InformRequest(_)) {
            flags::REPORTABLE
        } else {
            0
        };
        let boots = self.engine.boots;
        let time = self.engine.time();
        let scoped = ScopedPdu {
            context_engine_id: scope.engine_id.unwrap_or(&self.engine.id).to_vec(),
            context_name: scope.name,
            pdu,
        };
        let auth = keys.and_then(|(u, _)| u.auth.as_ref());
        let mut priv_params = Vec::new();
        let data = match (level, keys.and_then(|(u, _)| u.privacy.as_ref())) {
            (SecurityLevel::AuthPriv, Some((proto, key))) => {
                let mut plain = Vec::with_capacity(256);
                scoped.encode(&mut plain);
                let salt = self.salt.fetch_add(1, Ordering::Relaxed);
                let (c, p) = proto.encrypt(key, boots, time, salt, &plain);
                priv_params = p.to_vec();
                ScopedPduData::Encrypted(c)
            }
            _ => ScopedPduData::Plain(scoped),
        };
        let msg = V3Message {
            header: HeaderData {
                msg_id: req_header.msg_id,
                max_size: 65507,
                flags: level.flags() | reportable,
                security_model: USM_SECURITY_MODEL,
            },
            usm: UsmParams {
                engine_id: self.engine.id.clone(),
                engine_boots: i32::try_from(boots).unwrap_or(i32::MAX),
                engine_time: i32::try_from(time).unwrap_or(i32::MAX),
                user_name: user_name.to_vec(),
                auth_params: match (level, auth) {
                    (SecurityLevel::NoAuthNoPriv, _) | (_, None) => Vec::new(),
                    (_, Some((p, _))) => vec![0; p.mac_len()],
                },
                priv_params,
            },
            data,
        };
        let start = out.len();
        let range = msg.encode(out);
        if let (SecurityLevel::AuthNoPriv | SecurityLevel::AuthPriv, Some((p, key))) = (level, auth)
        {
            let mac = p.mac(key, out.get(start..).unwrap_or(&[]));
            if let Some(f) = out.get_mut(range) {
                if f.len() == mac.len() {
                    f.copy_from_slice(&mac);
                }
            }
        }
    }
}

/// The scopedPDU's contextEngineID (None: this engine's snmpEngineID) and
/// contextName of a message this engine sends.
struct Scope<'a> {
    engine_id: Option<&'a [u8]>,
    name: Vec<u8>,
}

impl Scope<'_> {
    /// This engine's context `name`.
    fn ours(name: Vec<u8>) -> Self {
        Scope {
            engine_id: None,
            name,
        }
    }
}

/// usmStats (SNMP-USER-BASED-SM-MIB) and snmpEngine (SNMP-FRAMEWORK-MIB)
/// scalars for any dispatcher, read from `usm`.
pub fn mib_objects<V: 'static, K: 'static>(
    usm: &Arc<Usm>,
) -> Vec<Arc<dyn crate::mib::MibObject<V, K>>> {
    vec![
        Arc::new(scalars_of(usm, USM_STATS, 6)),
        Arc::new(scalars_of(usm, SNMP_ENGINE, 4)),
    ]
}

/// The scalars `root.1` .. `root.count` as `usm` reads them.
fn scalars_of<V: 'static, K: 'static>(
    usm: &Arc<Usm>,
    root: &[u32],
    count: u32,
) -> crate::table::Scalars<V, K> {
    let mut group = crate::table::Scalars::new(Oid::from_slice(root));
    for sub in 1..=count {
        let u = Arc::clone(usm);
        let oid: Vec<u32> = root.iter().copied().chain([sub]).collect();
        group = group.read_only(sub, move |_: &V| {
            u.scalar(&oid).unwrap_or(Value::NoSuchObject)
        });
    }
    group
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn usm() -> Usm {
        let users = vec![
            UserConfig {
                name: "a".into(),
                auth: Some((AuthProtocol::Sha256, "authpass1".into())),
                privacy: Some((PrivProtocol::Aes128, "privpass1".into())),
                access: None,
            },
            UserConfig {
                name: "d".into(),
                auth: Some((AuthProtocol::Md5, "authpass1".into())),
                privacy: Some((PrivProtocol::Des, "privpass1".into())),
                access: None,
            },
        ];
        Usm::new(
            Engine::new(vec![0x80, 0, 0x1f, 0x88, 5, 1, 2, 3], 4),
            &users,
        )
        .unwrap()
    }

    /// A request as a client would send it (the layout is symmetric).
    fn request(u: &Usm, user: &str, level: SecurityLevel) -> Vec<u8> {
        let user = Arc::clone(u.users.get(user.as_bytes()).unwrap());
        let header = HeaderData {
            msg_id: 9,
            max_size: 1500,
            flags: 0,
            security_model: USM_SECURITY_MODEL,
        };
        let pdu = Pdu::GetRequest(PduBody::request(
            42,
            vec![VarBind::new(
                Oid::new(vec![1, 3, 6, 1, 2, 1, 1, 1, 0]),
                Value::Null,
            )],
        ));
        let mut out = Vec::new();
        let name = user.name.clone();
        u.encode_message(
            &header,
            Some((&user, level)),
            &name,
            Scope::ours(Vec::new()),
            pdu,
            &mut out,
        );
        out
    }

    #[test]
    fn accepts_its_own_layout_and_rejects_tampering() {
        let u = usm();
        for (user, level) in [
            ("a", SecurityLevel::AuthPriv),
            ("a", SecurityLevel::AuthNoPriv),
            ("d", SecurityLevel::AuthPriv),
        ] {
            let m = request(&u, user, level);
            match u.incoming(&m) {
                Incoming::Request { ctx, pdu } => {
                    assert_eq!(ctx.level, level);
                    assert_eq!(pdu.request_id(), Some(42));
                }
                other => panic!("{user} {level:?}: {other:?}"),
            }
            // Any single flipped bit: never a panic, never a Request.
            for i in 0..m.len() {
                let mut t = m.clone();
                t[i] ^= 0x10;
                let r = u.incoming(&t);
                if let Incoming::Request { .. } = r {
                    // Only the reportable flag bit or a length-neutral
                    // change outside MAC coverage could pass: there is none.
                    panic!("tampered byte {i} accepted");
                }
            }
        }
        assert!(u.stats.wrong_digests.load(Ordering::Relaxed) > 0);
    }

    proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            static U: std::sync::OnceLock<Usm> = std::sync::OnceLock::new();
            let _ = U.get_or_init(usm).incoming(&data);
        }
    }
}
