//! Scalar objects and scalar groups.

use std::sync::Arc;

use crate::mib::{MibObject, SetError};
use crate::oid::Oid;
use crate::value::{Value, VarBind};

/// Read of a scalar; an exception value (e.g. `NoSuchObject`) means absent.
pub type ScalarGetFn<V> = dyn Fn(&V) -> Value + Send + Sync;
/// Phase-1 Set check of a scalar.
pub type ScalarCheckFn<V, K> = dyn Fn(&V, &Value) -> Result<K, SetError> + Send + Sync;

/// One scalar object (instance `oid.0`); root is the object's OID.
pub struct Scalar<V, K> {
    oid: Oid,
    instance: Oid,
    get: Box<ScalarGetFn<V>>,
    check: Option<Box<ScalarCheckFn<V, K>>>,
}

impl<V, K> Scalar<V, K> {
    pub fn read_only<G>(oid: Oid, get: G) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
    {
        Scalar {
            instance: oid.join(&[0]),
            oid,
            get: Box::new(get),
            check: None,
        }
    }

    pub fn read_write<G, C>(oid: Oid, get: G, check: C) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
        C: Fn(&V, &Value) -> Result<K, SetError> + Send + Sync + 'static,
    {
        let mut s = Self::read_only(oid, get);
        s.check = Some(Box::new(check));
        s
    }
}

impl<V, K> MibObject<V, K> for Scalar<V, K> {
    fn root(&self) -> &Oid {
        &self.oid
    }

    fn get(&self, view: &V, oid: &[u32]) -> Value {
        if oid == self.instance.as_slice() {
            match (self.get)(view) {
                v if v.is_exception() => Value::NoSuchObject,
                v => v,
            }
        } else if oid.starts_with(self.oid.as_slice()) {
            // The object exists; the name is not its instance (RFC 3416
            // 4.2.1, also for the object's own OID without `.0`, as net-snmp).
            Value::NoSuchInstance
        } else {
            Value::NoSuchObject
        }
    }

    fn next(&self, view: &V, oid: &[u32]) -> Option<VarBind> {
        if oid >= self.instance.as_slice() {
            return None;
        }
        let v = (self.get)(view);
        (!v.is_exception()).then(|| VarBind::new(self.instance.clone(), v))
    }

    fn check_set(&self, view: &V, oid: &[u32], value: &Value) -> Result<K, SetError> {
        let check = self.check.as_ref().ok_or(SetError::NotWritable)?;
        if oid != self.instance.as_slice() {
            return Err(SetError::NoCreation);
        }
        check(view, value)
    }
}

/// A group of scalars under one root (e.g. the snmp group). When a table
/// lives under the same root (sysORTable under system), register
/// [`Scalars::into_objects`] instead, one object per scalar, so that
/// registrations do not overlap.
pub struct Scalars<V, K> {
    root: Oid,
    items: Vec<(u32, Scalar<V, K>)>,
}

impl<V, K> Scalars<V, K> {
    pub fn new(root: Oid) -> Self {
        Scalars {
            root,
            items: Vec::new(),
        }
    }

    fn insert(mut self, sub: u32, s: Scalar<V, K>) -> Self {
        match self.items.binary_search_by_key(&sub, |x| x.0) {
            Ok(i) => {
                if let Some(slot) = self.items.get_mut(i) {
                    *slot = (sub, s);
                }
            }
            Err(i) => self.items.insert(i, (sub, s)),
        }
        self
    }

    /// A read-only scalar `root.sub` (instance `root.sub.0`).
    pub fn read_only<G>(self, sub: u32, get: G) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
    {
        let oid = self.root.join(&[sub]);
        self.insert(sub, Scalar::read_only(oid, get))
    }

    /// A read-write scalar `root.sub` with its phase-1 check.
    pub fn read_write<G, C>(self, sub: u32, get: G, check: C) -> Self
    where
        G: Fn(&V) -> Value + Send + Sync + 'static,
        C: Fn(&V, &Value) -> Result<K, SetError> + Send + Sync + 'static,
    {
        let oid = self.root.join(&[sub]);
        self.insert(sub, Scalar::read_write(oid, get, check))
    }

    /// One registrable object per scalar.
    pub fn into_objects(self) -> Vec<Arc<dyn MibObject<V, K>>>
    where
        V: 'static,
        K: 'static,
    {
        self.items
            .into_iter()
            .map(|(_, s)| Arc::new(s) as Arc<dyn MibObject<V, K>>)
            .collect()
    }

    fn item(&self, oid: &[u32]) -> Option<&Scalar<V, K>> {
        let c = *oid.strip_prefix(self.root.as_slice())?.first()?;
        let i = self.items.binary_search_by_key(&c, |x| x.0).ok()?;
        self.items.get(i).map(|x| &x.1)
    }
}

impl<V, K> MibObject<V, K> for Scalars<V, K> {
    fn root(&self) -> &Oid {
        &self.root
    }

    fn get(&self, view: &V, oid: &[u32]) -> Value {
        match self.item(oid) {
            Some(s) => s.get(view, oid),
            None => Value::NoSuchObject,
        }
    }

    fn next(&self, view: &V, oid: &[u32]) -> Option<VarBind> {
        let start = match oid.strip_prefix(self.root.as_slice()) {
            Some(rest) => match rest.first() {
                Some(&c) => self.items.partition_point(|x| x.0 < c),
                None => 0,
            },
            None if oid < self.root.as_slice() => 0,
            None => return None,
        };
        self.items
            .get(start..)
            .unwrap_or(&[])
            .iter()
            .find_map(|(_, s)| s.next(view, oid))
    }

    fn check_set(&self, view: &V, oid: &[u32], value: &Value) -> Result<K, SetError> {
        self.item(oid)
            .ok_or(SetError::NotWritable)?
            .check_set(view, oid, value)
    }
}
