//! vacmContextTable (SNMP-VIEW-BASED-ACM-MIB) listed from a [`Contexts`]
//! resolver: the default context "", then each name
//! [`Contexts::next_name`] gives, one at a time; nothing is held per
//! context, so a walk over 48,000 node contexts costs one step each.

use std::sync::Arc;

use super::Contexts;
use crate::mib::{Access, MibObject};
use crate::oid::Oid;
use crate::value::{Value, VarBind};

/// vacmContextEntry: 1.3.6.1.6.3.16.1.1.1; its one column, vacmContextName
/// (.1), is its index (an OCTET STRING: its length, then its octets).
pub const VACM_CONTEXT_ENTRY: &[u32] = &[1, 3, 6, 1, 6, 3, 16, 1, 1, 1];

/// SnmpAdminString's largest size: no longer name is an instance.
const MAX_NAME: u32 = 255;

/// The table; register it instead of a table of the default context only.
pub struct ContextTable<V, K> {
    entry: Oid,
    contexts: Option<Arc<dyn Contexts<V, K>>>,
}

impl<V, K> ContextTable<V, K> {
    /// The contexts `contexts` resolves besides "" (None: "" alone).
    pub fn new(contexts: Option<Arc<dyn Contexts<V, K>>>) -> Self {
        ContextTable {
            entry: Oid::from_slice(VACM_CONTEXT_ENTRY),
            contexts,
        }
    }

    fn exists(&self, name: &[u8]) -> bool {
        name.is_empty()
            || self
                .contexts
                .as_ref()
                .is_some_and(|c| c.resolve(name).is_some())
    }

    /// The first context name after `name` in index order.
    fn after(&self, name: &[u8]) -> Option<Vec<u8>> {
        self.contexts.as_ref()?.next_name(name)
    }

    fn instance(&self, name: Vec<u8>) -> VarBind {
        let mut oid = self.entry.as_slice().to_vec();
        oid.push(1);
        oid.push(name.len() as u32);
        oid.extend(name.iter().map(|&b| u32::from(b)));
        VarBind::new(Oid::new(oid), Value::OctetString(name))
    }

    /// The first name whose index is after `index` (the sub-identifiers
    /// after the column).
    fn first_after(&self, index: &[u32]) -> Option<Vec<u8>> {
        let Some((&len, octets)) = index.split_first() else {
            return Some(Vec::new());
        };
        if len > MAX_NAME {
            return None;
        }
        let len = len as usize;
        // The longest run of `octets` that can stand in a name.
        let fit = octets.iter().take(len).take_while(|&&s| s <= 255).count();
        let mut bound: Vec<u8> = octets.iter().take(fit).map(|&s| s as u8).collect();
        if fit == len {
            // A whole name (or deeper than one): the next name after it.
            return self.after(&bound);
        }
        if octets.len() > fit {
            // An arc above 255: past every name with this beginning.
            bound.resize(len, u8::MAX);
            return self.after(&bound);
        }
        // A beginning: the first name of this length that starts with it.
        bound.resize(len, 0);
        if self.exists(&bound) {
            Some(bound)
        } else {
            self.after(&bound)
        }
    }
}

impl<V, K> MibObject<V, K> for ContextTable<V, K> {
    fn root(&self) -> &Oid {
        &self.entry
    }

    fn get(&self, _: &V, oid: &[u32]) -> Value {
        let Some(rest) = oid.strip_prefix(self.entry.as_slice()) else {
            return Value::NoSuchObject;
        };
        let Some((1, index)) = rest.split_first() else {
            return Value::NoSuchObject;
        };
        let name: Option<Vec<u8>> = match index.split_first() {
            Some((&len, octets)) if octets.len() == len as usize => {
                octets.iter().map(|&s| u8::try_from(s).ok()).collect()
            }
            _ => None,
        };
        match name {
            Some(n) if self.exists(&n) => Value::OctetString(n),
            _ => Value::NoSuchInstance,
        }
    }

    fn next(&self, _: &V, oid: &[u32]) -> Option<VarBind> {
        let name = match oid.strip_prefix(self.entry.as_slice()) {
            None if oid < self.entry.as_slice() => Some(Vec::new()),
            None => None,
            Some([]) | Some([0, ..]) => Some(Vec::new()),
            Some([1, index @ ..]) => self.first_after(index),
            Some(_) => None,
        }?;
        Some(self.instance(name))
    }

    fn declared_columns(&self) -> Vec<(u32, Access)> {
        vec![(1, Access::ReadOnly)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ContextView;

    /// Contexts "ab" and "leaf01" (no objects: the table asks only names).
    struct Two;

    impl Contexts<(), ()> for Two {
        fn resolve(&self, name: &[u8]) -> Option<ContextView<(), ()>> {
            [&b"ab"[..], b"leaf01"]
                .contains(&name)
                .then(|| ContextView {
                    view: (),
                    dispatcher: Arc::new(crate::dispatch::Dispatcher::new()),
                })
        }

        fn next_name(&self, after: &[u8]) -> Option<Vec<u8>> {
            let key = |n: &[u8]| (n.len(), n.to_vec());
            [&b"ab"[..], b"leaf01"]
                .into_iter()
                .find(|n| key(n) > key(after))
                .map(<[u8]>::to_vec)
        }
    }

    fn at(index: &[u32]) -> Vec<u32> {
        [VACM_CONTEXT_ENTRY, index].concat()
    }

    #[test]
    fn walks_and_reads_from_the_resolver() {
        let t = ContextTable::new(Some(Arc::new(Two) as Arc<dyn Contexts<(), ()>>));
        let next = |index: &[u32]| match t.next(&(), &at(index)) {
            Some(VarBind {
                value: Value::OctetString(n),
                ..
            }) => Some(String::from_utf8(n).unwrap()),
            _ => None,
        };
        assert_eq!(next(&[]).as_deref(), Some(""));
        assert_eq!(next(&[1, 0]).as_deref(), Some("ab"));
        // A beginning: the first name of that length starting with it.
        assert_eq!(next(&[1, 2, 97]).as_deref(), Some("ab"));
        // An arc above 255 passes every name with that beginning.
        assert_eq!(next(&[1, 2, 97, 300]).as_deref(), Some("leaf01"));
        assert_eq!(next(&[1, 2, 97, 98]).as_deref(), Some("leaf01"));
        assert_eq!(next(&[1, 6, 108, 101, 97, 102, 48, 49]), None);
        assert_eq!(next(&[1, 300]), None);
        assert_eq!(next(&[2]), None);
        assert_eq!(
            t.get(&(), &at(&[1, 2, 97, 98])),
            Value::OctetString(b"ab".to_vec())
        );
        assert_eq!(t.get(&(), &at(&[1, 2, 97, 99])), Value::NoSuchInstance);
        assert_eq!(t.get(&(), &at(&[1, 1, 256])), Value::NoSuchInstance);
        assert_eq!(t.get(&(), &at(&[2, 0])), Value::NoSuchObject);
        // Without a resolver: the default context alone.
        let alone = ContextTable::<(), ()>::new(None);
        assert_eq!(alone.get(&(), &at(&[1, 0])), Value::OctetString(vec![]));
        assert!(alone.next(&(), &at(&[1, 0])).is_none());
    }
}
