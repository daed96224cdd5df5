//! The SNMP engine, independent of any transport: message processing
//! (v1, v2c, v3: RFC 3412, [`mp`]), then security (the community model of
//! RFC 3584, [`community`], or USM, RFC 3414) naming a securityName at a
//! securityLevel, then access control (VACM, RFC 3415, [`access`]), then
//! dispatch over the MIB objects; the snmp group counters (RFC 3418) along
//! the way. A transport hands [`Engine::process`] each datagram and sends
//! what it writes; a Set that passes phase 1 comes back as a
//! [`PendingSet`] for the transport to finish off its receive path
//! ([`Engine::finish_set`]), so reads never wait for a Set.

// Input path: datagrams come from the wire.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tracing::{debug, warn};

use crate::context::{split_community, ContextView, Contexts};
use crate::dispatch::{Clearance, Dispatcher, Outcome};
use crate::message::{peek_version, response_overhead, Message, Version, SNMP_V3};
use crate::pdu::{ErrorStatus, Pdu, PduBody};
use crate::usm::{SecurityLevel, Usm};
use crate::vacm::{ContextMatch, SecurityModel, Vacm};

pub(crate) mod access;
pub mod community;
mod mp;
mod v3;

pub use access::ManagedVacm;
pub use community::{Community, CommunityAccess, CommunityTable};
use mp::Reply;

/// The largest UDP payload over IPv4.
pub const MAX_UDP_PAYLOAD: usize = 65507;

/// The snmp group counters (RFC 3418 section 2), plus the cheap obsolete
/// RFC 1213 ones. Counter32 semantics: they wrap.
#[derive(Debug, Default)]
pub struct SnmpStats {
    pub in_pkts: AtomicU32,
    pub out_pkts: AtomicU32,
    pub in_bad_versions: AtomicU32,
    pub in_bad_community_names: AtomicU32,
    pub in_bad_community_uses: AtomicU32,
    pub in_asn_parse_errs: AtomicU32,
    pub silent_drops: AtomicU32,
    pub proxy_drops: AtomicU32,
    pub in_get_requests: AtomicU32,
    /// snmpInGetNexts: GetNext PDUs only (RFC 1213; RFC 3418 counts no
    /// GetBulk anywhere).
    pub in_get_nexts: AtomicU32,
    /// GetBulk PDUs: in no MIB; the agent's metrics show them.
    pub in_get_bulks: AtomicU32,
    pub in_set_requests: AtomicU32,
    pub in_total_req_vars: AtomicU32,
    pub in_total_set_vars: AtomicU32,
    pub out_too_bigs: AtomicU32,
    pub out_no_such_names: AtomicU32,
    pub out_bad_values: AtomicU32,
    pub out_gen_errs: AtomicU32,
    pub out_get_responses: AtomicU32,
    /// SNMP-MPD-MIB (RFC 3412) snmpMPDStats.
    pub unknown_security_models: AtomicU32,
    pub invalid_msgs: AtomicU32,
    pub unknown_pdu_handlers: AtomicU32,
    /// SNMP-TARGET-MIB (RFC 3413) snmpUnknownContexts: requests naming a
    /// context this agent does not have.
    pub unknown_contexts: AtomicU32,
}

pub(crate) fn inc(c: &AtomicU32) {
    c.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn add(c: &AtomicU32, n: usize) {
    c.fetch_add(n as u32, Ordering::Relaxed);
}

impl SnmpStats {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Reads a counter.
    pub fn load(c: &AtomicU32) -> u32 {
        c.load(Ordering::Relaxed)
    }
}

/// Why phase 2 of a Set failed (RFC 3416 4.2.5).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?} at varbind {index}: {reason}")]
pub struct ApplyError {
    /// 0-based position of the failing change (= varbind position).
    pub index: usize,
    pub kind: ApplyErrorKind,
    /// For the log.
    pub reason: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyErrorKind {
    /// Nothing (or everything undone) was changed.
    CommitFailed,
    /// Some changes could not be undone.
    UndoFailed,
}

/// A future returned by a [`SetController`].
pub type ApplyFuture = Pin<Box<dyn Future<Output = Result<(), ApplyError>> + Send>>;

/// The application's one control path for Sets (phase 2): apply all changes
/// of one request atomically, undoing on failure.
///
/// Both transports drive it: the UDP agent calls `apply` after phase 1 of a
/// SetRequest; the AgentX session calls `apply` on CommitSet and `undo_last`
/// on an UndoSet that follows a successful commit (another subagent's commit
/// failed).
pub trait SetController<K>: Send + Sync {
    fn apply(&self, changes: Vec<K>) -> ApplyFuture;

    /// `apply` for a request from `principal` (how the request authenticated:
    /// a USM user, or a redacted community), for the application's log.
    fn apply_as(&self, principal: &str, changes: Vec<K>) -> ApplyFuture {
        let _ = principal;
        self.apply(changes)
    }

    /// Takes back the last successful `apply`, if nothing was applied since and
    /// everything it did can be taken back; otherwise undoFailed.
    fn undo_last(&self) -> ApplyFuture {
        Box::pin(async {
            Err(ApplyError {
                index: 0,
                kind: ApplyErrorKind::UndoFailed,
                reason: "this control path cannot undo".into(),
            })
        })
    }
}

impl<K, F, Fut> SetController<K> for F
where
    F: Fn(Vec<K>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<(), ApplyError>> + Send + 'static,
{
    fn apply(&self, changes: Vec<K>) -> ApplyFuture {
        Box::pin(self(changes))
    }
}

/// Why a request failed authentication (for authenticationFailure traps).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthFailure {
    pub source: SocketAddr,
    pub community: Vec<u8>,
    /// False: unknown community, user or source; true: a request its access
    /// does not allow (a Set without write access).
    pub bad_use: bool,
}

pub type AuthFailureHook = Arc<dyn Fn(&AuthFailure) + Send + Sync>;

/// Wire text for a log line: escaped (no newlines or terminal escapes
/// reach the log) and cut to `max` octets.
pub fn escape_wire(b: &[u8], max: usize) -> String {
    let cut = b.get(..max).unwrap_or(b);
    let mut s: String = cut.escape_ascii().to_string();
    if b.len() > max {
        s.push_str(&format!("...({} octets)", b.len()));
    }
    s
}

/// Secret subtrees are for authPriv requests only.
pub(crate) fn clearance(level: SecurityLevel) -> Clearance {
    if level == SecurityLevel::AuthPriv {
        Clearance::Secret
    } else {
        Clearance::Public
    }
}

/// How often authentication failures are logged at warn level.
const AUTH_WARN_EVERY_MS: u64 = 60_000;

/// A Set waiting for phase 2.
pub struct PendingSet<K> {
    reply: Reply,
    changes: Vec<K>,
    response: PduBody,
}

/// What to do after [`Engine::process`].
pub enum Action<K> {
    /// Nothing to send.
    None,
    /// Send what `process` wrote.
    Send,
    /// Run phase 2 ([`Engine::finish_set`]), then send its answer.
    Set(PendingSet<K>),
}

/// The engine: everything between a received datagram and its answer.
pub struct Engine<V, K> {
    dispatcher: Arc<Dispatcher<V, K>>,
    view: Box<dyn Fn() -> V + Send + Sync>,
    controller: Arc<dyn SetController<K>>,
    stats: Arc<SnmpStats>,
    communities: CommunityTable,
    max_message_size: usize,
    auth_hook: Option<AuthFailureHook>,
    /// SNMPv3 with USM (None: v3 messages count as bad versions).
    usm: Option<Arc<Usm>>,
    user_hook: Option<UserHook<V>>,
    contexts: Option<Arc<dyn Contexts<V, K>>>,
    access: access::AccessControl,
    auth_failures: AtomicU64,
    /// When the engine started: the clock for `next_auth_warn`.
    started: Instant,
    /// Milliseconds after `started` before which auth failures are not
    /// logged again (lock-free: a flood of bad packets must not contend).
    next_auth_warn: AtomicU64,
}

/// What the configuration alone puts in force: the configured VACM with the
/// community and user shorthands added (as the engine builds it, their
/// entries governing `shorthand_context`), for the VACM tables to show.
pub fn configured_vacm(
    vacm: Option<&Vacm>,
    usm: Option<&Usm>,
    communities: &[Community],
    shorthand_context: ContextMatch,
) -> Vacm {
    access::AccessControl::new(vacm, usm, None)
        .with_shorthand_context(shorthand_context)
        .configured_with(communities)
}

/// What an [`Engine`] is built from.
pub struct EngineConfig<V, K> {
    pub dispatcher: Arc<Dispatcher<V, K>>,
    /// Called once per request; must not block (e.g. an `ArcSwap::load_full`).
    pub view: Box<dyn Fn() -> V + Send + Sync>,
    pub controller: Arc<dyn SetController<K>>,
    pub stats: Arc<SnmpStats>,
    pub communities: Vec<Community>,
    /// Largest response message (clamped to 484..=65507).
    pub max_message_size: usize,
    pub auth_hook: Option<AuthFailureHook>,
    pub usm: Option<Arc<Usm>>,
    /// Configured VACM tables; the shorthands are added to them.
    pub vacm: Option<Arc<Vacm>>,
    /// VACM rows managed over SNMP, added to the configured ones.
    pub managed_vacm: Option<access::ManagedVacm>,
    /// Tells an SNMPv3 request's view which USM user asks (objects only
    /// the user itself may set, as usmUserOwnAuthKeyChange).
    pub user_hook: Option<UserHook<V>>,
    /// The contexts besides the default one (None: only "").
    pub contexts: Option<Arc<dyn Contexts<V, K>>>,
    /// The contexts the community and user shorthands' access entries
    /// govern: exact "" (the default) or every context.
    pub shorthand_context: ContextMatch,
}

impl<V, K> EngineConfig<V, K> {
    /// An engine over `dispatcher` answering from `view`, with no
    /// communities, no USM, no VACM rows of its own, only the default
    /// context and the largest message size; the fields say the rest.
    pub fn new(
        dispatcher: Arc<Dispatcher<V, K>>,
        view: Box<dyn Fn() -> V + Send + Sync>,
        controller: Arc<dyn SetController<K>>,
        stats: Arc<SnmpStats>,
    ) -> Self {
        EngineConfig {
            dispatcher,
            view,
            controller,
            stats,
            communities: Vec::new(),
            max_message_size: MAX_UDP_PAYLOAD,
            auth_hook: None,
            usm: None,
            vacm: None,
            managed_vacm: None,
            user_hook: None,
            contexts: None,
            shorthand_context: ContextMatch::default(),
        }
    }
}

/// See [`EngineConfig::user_hook`]: the view and the requesting user's name.
pub type UserHook<V> = Box<dyn Fn(&mut V, &[u8]) + Send + Sync>;

impl<V, K> Engine<V, K> {
    pub fn new(c: EngineConfig<V, K>) -> Self {
        let communities = Arc::new(arc_swap::ArcSwap::from_pointee(c.communities.clone()));
        Engine::with_communities(c, communities)
    }

    /// An engine reading `communities` (a table its owner may replace at run
    /// time) instead of `c.communities`.
    pub fn with_communities(c: EngineConfig<V, K>, communities: CommunityTable) -> Self {
        Engine {
            access: access::AccessControl::new(c.vacm.as_deref(), c.usm.as_deref(), c.managed_vacm)
                .with_shorthand_context(c.shorthand_context),
            contexts: c.contexts,
            dispatcher: c.dispatcher,
            view: c.view,
            controller: c.controller,
            stats: c.stats,
            communities,
            max_message_size: c.max_message_size.clamp(484, MAX_UDP_PAYLOAD),
            auth_hook: c.auth_hook,
            usm: c.usm,
            user_hook: c.user_hook,
            auth_failures: AtomicU64::new(0),
            started: Instant::now(),
            next_auth_warn: AtomicU64::new(0),
        }
    }

    /// The community table, to replace it at run time.
    pub fn communities(&self) -> CommunityTable {
        Arc::clone(&self.communities)
    }

    /// The context named `name`, derived now for `pdu` (which VACM
    /// allowed): the default one ("") is the engine's own view and
    /// objects.
    fn context(&self, name: &[u8], pdu: &Pdu) -> Option<ContextView<V, K>> {
        if name.is_empty() {
            return Some(ContextView {
                view: (self.view)(),
                dispatcher: Arc::clone(&self.dispatcher),
            });
        }
        self.contexts.as_ref()?.resolve_for(name, pdu)
    }

    /// Whether the context named `name` exists, without deriving it.
    fn context_exists(&self, name: &[u8]) -> bool {
        name.is_empty() || self.contexts.as_ref().is_some_and(|c| c.exists(name))
    }

    /// Counts a request for a context that does not exist.
    fn unknown_context(&self, src: SocketAddr, name: &[u8]) -> u32 {
        let n = self.stats.unknown_contexts.fetch_add(1, Ordering::Relaxed);
        debug!(%src, context = %escape_wire(name, 32), "unknown context");
        n.wrapping_add(1)
    }

    fn auth_failure(&self, src: SocketAddr, community: &[u8], bad_use: bool) {
        let n = self.auth_failures.fetch_add(1, Ordering::Relaxed) + 1;
        debug!(%src, bad_use, "authentication failure");
        // At most one warning a minute; the thread that moves the deadline logs.
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let due = self.next_auth_warn.load(Ordering::Relaxed);
        if now >= due
            && self
                .next_auth_warn
                .compare_exchange(
                    due,
                    now.saturating_add(AUTH_WARN_EVERY_MS),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            // (No part of the community: it may be a real one, mistyped or
            // used from a source it is not allowed from.)
            warn!(
                %src,
                total = n,
                "SNMP authentication failure (unknown community or USM user, wrong USM digest, disallowed source, or a request its access does not allow)"
            );
        }
        if let Some(h) = &self.auth_hook {
            h(&AuthFailure {
                source: src,
                community: community.to_vec(),
                bad_use,
            });
        }
    }

    /// Processes one datagram from `src`; writes any immediate response into
    /// `out` (cleared first).
    pub fn process(&self, src: SocketAddr, data: &[u8], out: &mut Vec<u8>) -> Action<K> {
        out.clear();
        let s = &self.stats;
        inc(&s.in_pkts);
        if let (Some(usm), Ok(SNMP_V3)) = (&self.usm, peek_version(data)) {
            return self.process_v3(usm, src, data, out);
        }
        let msg = match Message::decode(data) {
            Ok(m) => m,
            Err(e) => {
                if e.is_bad_version() {
                    inc(&s.in_bad_versions);
                } else {
                    inc(&s.in_asn_parse_errs);
                }
                debug!(%src, error = %e, "dropped datagram");
                return Action::None;
            }
        };
        // Security: the community model (RFC 3584); a string that is no
        // community may be `community@context`.
        let table = self.communities.load_full();
        let auth = |c: &[u8]| community::authenticate(&table, c, src);
        let found = auth(&msg.community).map(|n| (n, Vec::new())).or_else(|| {
            let (c, context) = split_community(&msg.community)?;
            Some((auth(c)?, context.to_vec()))
        });
        let Some((name, context)) = found else {
            inc(&s.in_bad_community_names);
            self.auth_failure(src, &msg.community, false);
            return Action::None;
        };
        let Message {
            version,
            community,
            pdu,
        } = msg;
        debug!(%src, ?version, pdu = pdu.tag(), "request");
        self.count_request(&pdu);
        let rid = pdu.request_id().unwrap_or(0);
        let budget = self
            .max_message_size
            .saturating_sub(response_overhead(community.len(), rid));
        let model = match version {
            Version::V1 => SecurityModel::V1,
            Version::V2c => SecurityModel::V2c,
        };
        // Access: VACM for the community's securityName, decided from the
        // context's name before anything of the context is derived (a
        // refused request costs what a wrong community costs, and says
        // nothing of which contexts exist).
        let vacm = self.access.vacm(&table);
        let level = SecurityLevel::NoAuthNoPriv;
        let decision = access::decide(&vacm, &context, model, &name, level, &pdu);
        // As net-snmp: a request its access allows for a context that does
        // not exist is counted and dropped, with no answer of any kind
        // (RFC 3413 3.2).
        let unknown = |engine: &Self| {
            engine.unknown_context(src, &context);
            Action::None
        };
        let outcome = match decision {
            access::Decision::Denied => {
                inc(&s.in_bad_community_uses);
                self.auth_failure(src, &community, true);
                return Action::None;
            }
            access::Decision::ReadOnlySet => {
                if !self.context_exists(&context) {
                    return unknown(self);
                }
                // As net-snmp with a rocommunity: noAccess (v1: noSuchName)
                // on the first varbind.
                inc(&s.in_bad_community_uses);
                self.auth_failure(src, &community, true);
                let Pdu::SetRequest(req) = &pdu else {
                    return Action::None;
                };
                let index = usize::from(!req.varbinds.is_empty());
                crate::dispatch::error_response(version, req, ErrorStatus::NoAccess, index, budget)
            }
            access::Decision::Allowed(views) => {
                let Some(ContextView { view, dispatcher }) = self.context(&context, &pdu) else {
                    return unknown(self);
                };
                let level = clearance(level);
                let request = (version, community.as_slice(), &pdu);
                // A walk's requests: encoded straight into `out`.
                if self.respond_walk(&dispatcher, &view, request, budget, &views, level, out) {
                    return Action::Send;
                }
                dispatcher.process_with(&view, version, &pdu, budget, &views, level)
            }
        };
        let reply = Reply::Community { version, community };
        self.finish(src, &pdu, outcome, reply, out)
    }

    /// Sends a dispatch outcome or hands a Set to phase 2.
    fn finish(
        &self,
        src: SocketAddr,
        pdu: &Pdu,
        outcome: Outcome<K>,
        reply: Reply,
        out: &mut Vec<u8>,
    ) -> Action<K> {
        let s = &self.stats;
        match outcome {
            Outcome::Response(resp) => {
                if let (
                    Pdu::Response(b),
                    Pdu::GetRequest(_) | Pdu::GetNextRequest(_) | Pdu::GetBulkRequest(_),
                ) = (&resp, pdu)
                {
                    if b.error_status == ErrorStatus::NoError {
                        add(&s.in_total_req_vars, b.varbinds.len());
                    }
                }
                self.encode_response(reply, resp, out);
                Action::Send
            }
            Outcome::Set { changes, response } if changes.is_empty() => {
                self.encode_response(reply, Pdu::Response(response), out);
                Action::Send
            }
            Outcome::Set { changes, response } => Action::Set(PendingSet {
                reply,
                changes,
                response,
            }),
            Outcome::SilentDrop => {
                inc(&s.silent_drops);
                Action::None
            }
            Outcome::Ignore => {
                // No application here takes this PDU type (RFC 3412 4.2.2.1).
                inc(&s.unknown_pdu_handlers);
                debug!(%src, pdu = pdu.tag(), "ignored non-request PDU");
                Action::None
            }
        }
    }

    /// Phase 2 of a Set: applies it through the controller and returns the
    /// encoded response (commitFailed or undoFailed when it fails).
    pub async fn finish_set(&self, p: PendingSet<K>, src: SocketAddr) -> Vec<u8> {
        let PendingSet {
            reply,
            changes,
            mut response,
        } = p;
        let n = changes.len();
        let principal = match &reply {
            // A community is a password: none of it in logs.
            Reply::Community { version, .. } => format!("{version:?} community from {src}"),
            Reply::V3(ctx) => format!("USM user {}", escape_wire(&ctx.user.name, 32)),
        };
        match self.controller.apply_as(&principal, changes).await {
            Ok(()) => add(&self.stats.in_total_set_vars, n),
            Err(e) => {
                warn!(%src, error = %e, "SNMP Set failed in phase 2");
                let status = match e.kind {
                    ApplyErrorKind::CommitFailed => ErrorStatus::CommitFailed,
                    ApplyErrorKind::UndoFailed => ErrorStatus::UndoFailed,
                };
                response.error_status = match reply.version() {
                    Version::V1 => status.to_v1(),
                    Version::V2c => status,
                };
                response.error_index = i32::try_from(e.index.saturating_add(1)).unwrap_or(i32::MAX);
            }
        }
        let mut out = Vec::with_capacity(512);
        self.encode_response(reply, Pdu::Response(response), &mut out);
        out
    }

    /// The snmp group counters.
    pub fn stats(&self) -> &SnmpStats {
        &self.stats
    }
}
#[cfg(test)]
mod tests;
