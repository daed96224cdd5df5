//! The agent's persisted state: what one module's part is and how it is
//! read and written.
//!
//! Each module that keeps values set over SNMP declares one serde type for
//! them ([`PersistedState`]); the crate root's [`crate::ModuleStates`] holds
//! one typed field per such module, and the daemon writes them to its state
//! file as one JSON object per module name. This file names no module.

use std::collections::{BTreeMap, BTreeSet};
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

/// One module's value of a state file (`None`: absent), parsed; what does not
/// parse is named in `problems` and leaves the default.
pub fn load<T: PersistedState>(p: &Persisted, problems: &mut Vec<Unreadable>) -> Arc<T> {
    match p
        .get(T::MODULE)
        .map(|v| serde_json::from_value::<T>(v.clone()))
    {
        None => Arc::default(),
        Some(Ok(t)) => Arc::new(t),
        Some(Err(e)) => {
            problems.push(Unreadable {
                module: T::MODULE.to_string(),
                error: e.to_string(),
            });
            Arc::default()
        }
    }
}

/// Writes one module's value into what the state file holds: taken out when
/// it is the default (nothing set), kept as it was when the file's part
/// could not be read (`unreadable`).
pub fn store<T: PersistedState>(
    t: &T,
    unreadable: &BTreeSet<String>,
    kv: &mut Persisted,
) -> Result<(), String> {
    if unreadable.contains(T::MODULE) {
        return Ok(());
    }
    let json = to_json(t)?;
    // Nothing set, or nothing of it kept in this file (a part a module
    // keeps apart).
    let empty = json.as_object().is_some_and(serde_json::Map::is_empty);
    if *t == T::default() || empty {
        kv.remove(T::MODULE);
    } else {
        kv.insert(T::MODULE.to_string(), json);
    }
    Ok(())
}

/// One module's value as the state file holds it.
pub fn to_json<T: PersistedState>(t: &T) -> Result<serde_json::Value, String> {
    serde_json::to_value(t).map_err(|e| e.to_string())
}
