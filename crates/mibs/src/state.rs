//! The agent's persisted state, typed per module.
//!
//! Each module that keeps values set over SNMP declares one serde type for
//! them ([`PersistedState`]) and names it in its [`crate::ModuleDef::state`].
//! [`ModuleStates`] holds one value per module; the daemon writes them to its
//! state file as one JSON object per module name, and reads them back through
//! the registry, so this file names no module.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// What the state file holds: each module's state by module name.
pub type Persisted = BTreeMap<String, serde_json::Value>;

/// A module's persisted values. `Default` is "nothing was ever set", and such
/// a state is not written.
pub trait PersistedState:
    Clone + Default + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The owning module's name: its key in the state file.
    const MODULE: &'static str;

    /// The values of a version 1 state file (flat `object.instance` keys with
    /// string values), so an upgrade loses nothing.
    fn from_v1(kv: &BTreeMap<String, String>) -> Self {
        let _ = kv;
        Self::default()
    }
}

/// A module's state behind the type the registry cannot name.
pub trait ErasedState: Any + Debug + Send + Sync {
    fn to_json(&self) -> Result<serde_json::Value, String>;
    fn is_default(&self) -> bool;
    fn same_as(&self, other: &dyn ErasedState) -> bool;
}

impl<T: PersistedState> ErasedState for T {
    fn to_json(&self) -> Result<serde_json::Value, String> {
        serde_json::to_value(self).map_err(|e| e.to_string())
    }
    fn is_default(&self) -> bool {
        *self == T::default()
    }
    fn same_as(&self, other: &dyn ErasedState) -> bool {
        (other as &dyn Any).downcast_ref::<T>() == Some(self)
    }
}

/// How the registry loads one module's state without naming its type.
#[derive(Clone, Copy)]
pub struct StateCodec {
    pub module: &'static str,
    from_json: fn(serde_json::Value) -> Result<Arc<dyn ErasedState>, String>,
    from_v1: fn(&BTreeMap<String, String>) -> Arc<dyn ErasedState>,
}

impl StateCodec {
    /// The codec of `T`, for a module's `ModuleDef::state`.
    pub const fn of<T: PersistedState>() -> StateCodec {
        StateCodec {
            module: T::MODULE,
            from_json: |v| {
                serde_json::from_value::<T>(v)
                    .map(|t| Arc::new(t) as Arc<dyn ErasedState>)
                    .map_err(|e| e.to_string())
            },
            from_v1: |kv| Arc::new(T::from_v1(kv)),
        }
    }
}

/// Every module's persisted state. Cheap to clone (one `Arc` per module), so
/// a Set copies it, changes its module's value and publishes the copy.
#[derive(Clone, Debug, Default)]
pub struct ModuleStates(
    BTreeMap<&'static str, Arc<dyn ErasedState>>,
    /// Modules whose stored part could not be read: their part of the file
    /// is kept as it was, never rewritten from what is in memory.
    Arc<std::collections::BTreeSet<String>>,
);

/// A part of the state file that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// The module (the part's key).
    pub module: String,
    pub error: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.module, self.error)
    }
}

impl PartialEq for ModuleStates {
    fn eq(&self, other: &Self) -> bool {
        let live = |s: &Self| s.0.values().filter(|v| !v.is_default()).count();
        live(self) == live(other)
            && self
                .0
                .iter()
                .filter(|(_, v)| !v.is_default())
                .all(|(k, v)| other.0.get(k).is_some_and(|o| v.same_as(o.as_ref())))
    }
}

impl ModuleStates {
    /// Module `T`'s state, `None` when nothing was ever set.
    pub fn get<T: PersistedState>(&self) -> Option<&T> {
        let v: &dyn Any = self.0.get(T::MODULE)?.as_ref();
        v.downcast_ref::<T>()
    }

    /// Changes module `T`'s state (starting from its default).
    pub fn update<T: PersistedState>(&mut self, f: impl FnOnce(&mut T)) {
        let mut t = self.get::<T>().cloned().unwrap_or_default();
        f(&mut t);
        self.0.insert(T::MODULE, Arc::new(t));
    }

    /// What the state file holds for these states (modules with nothing set
    /// are left out).
    pub fn persisted(&self) -> Result<Persisted, String> {
        self.0
            .iter()
            .filter(|(_, v)| !v.is_default())
            .map(|(k, v)| Ok((k.to_string(), v.to_json()?)))
            .collect()
    }

    /// Writes these states over what a state file held: each module's value,
    /// a module set back to its default taken out; modules with no state
    /// here (never set, or a stored value this agent could not read) left
    /// as they were.
    pub fn persist_into(&self, kv: &mut Persisted) -> Result<(), String> {
        for (module, v) in &self.0 {
            if self.1.contains(*module) {
                continue;
            }
            if v.is_default() {
                kv.remove(*module);
            } else {
                kv.insert(module.to_string(), v.to_json()?);
            }
        }
        Ok(())
    }

    /// The states a state file holds, through the registry's codecs. A
    /// module's value that does not parse is left at its default, named in
    /// the returned problems, and marked unreadable (its part of the file
    /// is kept as it was, [`ModuleStates::changed_unreadable`]); a module
    /// the registry does not know is kept out (and named).
    pub fn restore(p: &Persisted) -> (ModuleStates, Vec<Unreadable>) {
        let mut states = ModuleStates::default();
        let mut problems = Vec::new();
        let mut unreadable = std::collections::BTreeSet::new();
        for (name, value) in p {
            let error = match codecs().find(|c| c.module == name) {
                Some(c) => match (c.from_json)(value.clone()) {
                    Ok(s) => {
                        states.0.insert(c.module, s);
                        continue;
                    }
                    Err(e) => e,
                },
                None => "no such module".to_string(),
            };
            unreadable.insert(name.clone());
            problems.push(Unreadable {
                module: name.clone(),
                error,
            });
        }
        states.1 = Arc::new(unreadable);
        (states, problems)
    }

    /// The first module whose stored part could not be read and whose state
    /// differs from `before`'s: a change that could not be persisted (its
    /// part is kept as it was), so a Set of it must fail.
    pub fn changed_unreadable(&self, before: &ModuleStates) -> Option<&str> {
        self.1.iter().map(String::as_str).find(|m| {
            let now = self.0.get(*m);
            let was = before.0.get(*m);
            match (now, was) {
                (Some(a), Some(b)) => !a.same_as(b.as_ref()),
                (None, None) => false,
                (Some(a), None) | (None, Some(a)) => !a.is_default(),
            }
        })
    }

    /// The states of a version 1 state file (flat keys).
    pub fn from_v1(kv: &BTreeMap<String, String>) -> ModuleStates {
        ModuleStates(
            codecs().map(|c| (c.module, (c.from_v1)(kv))).collect(),
            Arc::default(),
        )
    }
}

fn codecs() -> impl Iterator<Item = &'static StateCodec> {
    crate::REGISTRY.iter().filter_map(|d| d.state.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::if_mib::IfMibState;
    use crate::snmpv2::SystemGroup;

    #[test]
    fn round_trip_through_json() {
        let mut s = ModuleStates::default();
        assert_eq!(s.persisted().unwrap(), Persisted::new());
        s.update::<SystemGroup>(|g| g.sys_contact = Some("ops".into()));
        s.update::<IfMibState>(|m| {
            m.if_alias.insert(3, "uplink".into());
        });
        let p = s.persisted().unwrap();
        assert_eq!(p.len(), 2);
        let (back, problems) = ModuleStates::restore(&p);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(back, s);
        assert_eq!(
            back.get::<SystemGroup>().unwrap().sys_contact.as_deref(),
            Some("ops")
        );
    }

    #[test]
    fn bad_values_are_named_and_skipped() {
        let mut p = Persisted::new();
        p.insert("SNMPv2-MIB".into(), serde_json::json!({"sysContact": 5}));
        p.insert("NO-SUCH-MIB".into(), serde_json::json!({}));
        let (s, problems) = ModuleStates::restore(&p);
        assert_eq!(problems.len(), 2);
        assert!(s.get::<SystemGroup>().is_none());
    }

    /// An unreadable part is kept as the file had it, whatever happens to
    /// the module in memory; a change to it is reported.
    #[test]
    fn unreadable_parts_are_kept_and_changes_to_them_reported() {
        let mut p = Persisted::new();
        let bad = serde_json::json!({"sysContact": 5});
        p.insert("SNMPv2-MIB".into(), bad.clone());
        p.insert("IF-MIB".into(), serde_json::json!({"ifAlias": {"3": "a"}}));
        let (before, problems) = ModuleStates::restore(&p);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].module, "SNMPv2-MIB");
        let mut after = before.clone();
        after.update::<IfMibState>(|m| {
            m.if_alias.insert(4, "b".into());
        });
        assert_eq!(after.changed_unreadable(&before), None);
        after.update::<SystemGroup>(|g| g.sys_contact = Some("ops".into()));
        assert_eq!(after.changed_unreadable(&before), Some("SNMPv2-MIB"));
        let mut kv = p.clone();
        after.persist_into(&mut kv).unwrap();
        assert_eq!(kv["SNMPv2-MIB"], bad, "the unreadable part is kept");
        assert_eq!(kv["IF-MIB"]["ifAlias"]["4"], "b");
        // Set back to its default: still kept.
        let mut kv = p.clone();
        before.persist_into(&mut kv).unwrap();
        assert_eq!(kv, p);
    }

    #[test]
    fn version_1_keys_migrate() {
        let kv: BTreeMap<String, String> = [
            ("sysName", "n"),
            ("snmpEnableAuthenTraps", "1"),
            ("ifAlias.7", "x"),
            ("ifLinkUpDownTrapEnable.7", "2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s = ModuleStates::from_v1(&kv);
        let g = s.get::<SystemGroup>().unwrap();
        assert_eq!(g.sys_name.as_deref(), Some("n"));
        assert_eq!(g.snmp_enable_authen_traps, Some(true));
        let m = s.get::<IfMibState>().unwrap();
        assert_eq!(m.if_alias.get(&7).map(String::as_str), Some("x"));
        assert_eq!(m.if_link_up_down_trap_enable.get(&7), Some(&2));
    }
}
