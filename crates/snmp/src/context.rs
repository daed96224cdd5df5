//! SNMP contexts (RFC 3411 contextName): the engine asks a [`Contexts`]
//! resolver, for each request naming a context other than the default
//! one (""), which view answers it and from which registered objects.
//!
//! A context is derived on request: the resolver keeps nothing per context
//! (a fabric of 48,000 nodes costs nothing until one of them is asked), and
//! the default context is always the engine's own view and dispatcher.
//! The engine asks the resolver only for a request its access control
//! (VACM, from the context's name) allows: a refused request derives
//! nothing.
//!
//! Addressing: SNMPv3 names the context in the scopedPDU; SNMPv1/v2c use
//! the `community@context` convention of net-snmp's and Cisco's users
//! ([`split_community`]).

use std::sync::Arc;

use crate::dispatch::Dispatcher;
use crate::pdu::Pdu;

mod table;

pub use table::{ContextTable, VACM_CONTEXT_ENTRY};

/// What a context serves: one consistent view and the object set that
/// answers from it (a node context may register fewer modules than the
/// default one).
pub struct ContextView<V, K> {
    pub view: V,
    pub dispatcher: Arc<Dispatcher<V, K>>,
}

/// The contexts besides the default one.
pub trait Contexts<V, K>: Send + Sync {
    /// The context named `name` (never "": the engine answers the default
    /// context itself), derived now from the current state; None when
    /// there is no such context (SNMPv3: an snmpUnknownContexts report).
    fn resolve(&self, name: &[u8]) -> Option<ContextView<V, K>>;

    /// [`Contexts::resolve`] for one request, `pdu`: a resolver may
    /// derive only what `pdu` reads (the engine asks this for every
    /// request VACM allows). By default the whole context.
    fn resolve_for(&self, name: &[u8], pdu: &Pdu) -> Option<ContextView<V, K>> {
        let _ = pdu;
        self.resolve(name)
    }

    /// Whether the context `name` (never "") exists, without deriving
    /// its view: the engine asks it where a request is answered without
    /// reading the context (a Set its access refuses). By default
    /// [`Contexts::resolve`] decides; a resolver whose views cost
    /// something to derive answers from the name alone.
    fn exists(&self, name: &[u8]) -> bool {
        self.resolve(name).is_some()
    }

    /// The first context name after `after` (which need not be one) in
    /// the order of vacmContextTable's index: shorter names first, then
    /// by octets; None past the last. [`ContextTable`] lists the contexts
    /// with it, one at a time. By default none is listed.
    fn next_name(&self, after: &[u8]) -> Option<Vec<u8>> {
        let _ = after;
        None
    }
}

/// The `community@context` convention: `s` split at its last '@' into the
/// community and the contextName, when it has one. The caller tries the
/// whole string as a community first (a community may contain '@').
pub fn split_community(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = s.iter().rposition(|&b| b == b'@')?;
    Some((s.get(..at)?, s.get(at + 1..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn community_splits_at_the_last_at_sign() {
        assert_eq!(
            split_community(b"public@leaf01"),
            Some((&b"public"[..], &b"leaf01"[..]))
        );
        assert_eq!(split_community(b"a@b@c"), Some((&b"a@b"[..], &b"c"[..])));
        assert_eq!(
            split_community(b"public@"),
            Some((&b"public"[..], &b""[..]))
        );
        assert_eq!(split_community(b"public"), None);
    }
}
