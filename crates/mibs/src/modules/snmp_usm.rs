//! SNMP-USER-BASED-SM-MIB (RFC 3414): usmUserTable and usmUserSpinLock, so
//! `snmpusm create/cloneFrom/passwd/delete` manage this agent's users.
//! (usmStats are the engine's own, served by `snmp::usm::mib_objects`.)
//!
//! Keys only ever exist localized: a user is created by cloning another
//! (its protocols and keys copied), then its keys changed with KeyChange
//! values, which carry no password. Configured users are permanent rows;
//! users created over SNMP are saved in the state file with their
//! localized keys (the file is 0600). Rows of this engine's ID are in force
//! at once ([`UsmState::user`]); rows of other engine IDs are kept, not used.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use snmp::mib::SetError;
use snmp::oid::Oid;
use snmp::usm::{AuthProtocol, PrivProtocol, User};
use snmp::value::Value;

use crate::core::oids::snmp_user_based_sm_mib as o;
use crate::core::state::PersistedState;
use crate::core::util::last as last_arc;
use crate::core::view::SysOrEntry;
use crate::modules::admin::{self, AdminRow, AdminRows, AdminState, AdminTable, SpinLock};
use crate::View;

/// snmpUsmMIB.
const SNMP_USM_MIB: &[u32] = &[1, 3, 6, 1, 6, 3, 15];

/// usmUserEntry's columns, by their MIB names.
const SECURITY_NAME: u32 = last_arc(o::USM_USER_SECURITY_NAME);
const CLONE_FROM: u32 = last_arc(o::USM_USER_CLONE_FROM);
const AUTH_PROTOCOL: u32 = last_arc(o::USM_USER_AUTH_PROTOCOL);
const AUTH_KEY_CHANGE: u32 = last_arc(o::USM_USER_AUTH_KEY_CHANGE);
const OWN_AUTH_KEY_CHANGE: u32 = last_arc(o::USM_USER_OWN_AUTH_KEY_CHANGE);
const PRIV_PROTOCOL: u32 = last_arc(o::USM_USER_PRIV_PROTOCOL);
const PRIV_KEY_CHANGE: u32 = last_arc(o::USM_USER_PRIV_KEY_CHANGE);
const OWN_PRIV_KEY_CHANGE: u32 = last_arc(o::USM_USER_OWN_PRIV_KEY_CHANGE);
const PUBLIC: u32 = last_arc(o::USM_USER_PUBLIC);

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    omitted: &[],
    ..crate::ModuleDef::plain(
        "SNMP-USER-BASED-SM-MIB",
        || {
            Some(SysOrEntry::new(
                SNMP_USM_MIB,
                "The management information definitions for the SNMP User-based Security Model (RFC 3414)",
            ))
        },
        objects,
    )
};

fn objects(_: &crate::Options) -> Vec<crate::Object> {
    vec![
        admin::spin_lock::<UsmState>(o::USM_USER_SPIN_LOCK, |s| s.spin_lock, |s| &mut s.spin_lock),
        Arc::new(AdminTable::<UsmUser>::new()),
    ]
}

/// A key as stored: the protocol's net-snmp name and the localized key in hex.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredKey {
    pub protocol: String,
    #[serde(with = "hex_octets")]
    pub key: Vec<u8>,
}

/// One usmUserEntry's columns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsmUser {
    /// usmUserAuthProtocol (None: usmNoAuthProtocol), with the key once
    /// there is one (cloned, then changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_hex")]
    pub auth_key: Option<Vec<u8>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priv_protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_hex")]
    pub priv_key: Option<Vec<u8>>,
    /// usmUserPublic.
    #[serde(default, with = "hex_octets")]
    pub public: Vec<u8>,
    /// usmUserCloneFrom was set once (later Sets do nothing, RFC 3414).
    #[serde(default)]
    pub cloned: bool,
}

impl UsmUser {
    fn auth(&self) -> Option<AuthProtocol> {
        self.auth_protocol.as_deref().and_then(AuthProtocol::parse)
    }

    fn privacy(&self) -> Option<PrivProtocol> {
        self.priv_protocol.as_deref().and_then(PrivProtocol::parse)
    }

    /// A configured user's row.
    pub fn configured(u: &User) -> Self {
        UsmUser {
            auth_protocol: u.auth().map(|(p, _)| p.name().to_string()),
            auth_key: u.auth().map(|(_, k)| k.to_vec()),
            priv_protocol: u.privacy().map(|(p, _)| p.name().to_string()),
            priv_key: u.privacy().map(|(_, k)| k.to_vec()),
            public: Vec::new(),
            cloned: true,
        }
    }

    /// The user this row puts in force (an active row of this engine).
    fn user(&self, name: &[u8]) -> Option<User> {
        let auth = match (self.auth(), &self.auth_key) {
            (Some(p), Some(k)) => Some((p, k.clone())),
            (None, _) => None,
            (Some(_), None) => return None,
        };
        let privacy = match (self.privacy(), &self.priv_key) {
            (Some(p), Some(k)) if auth.is_some() => Some((p, k.clone())),
            (None, _) => None,
            _ => return None,
        };
        Some(User::from_keys(name, auth, privacy))
    }

    /// RFC 3414 usmUserCloneFrom: protocols and keys of the clone-from
    /// user, the first time only.
    fn clone_from(&mut self, view: &View, index: &[u32], target: &[u32]) -> Result<(), SetError> {
        if self.cloned {
            return Ok(());
        }
        // Any column of an active row of the same engine.
        let source = target
            .strip_prefix(o::USM_USER_ENTRY)
            .and_then(<[u32]>::split_first)
            .map(|(_, i)| i)
            .filter(|i| same_engine(i, index))
            .and_then(|i| UsmUser::rows(view.system.modules.get::<UsmState>()).get(i))
            .filter(|r| r.status == snmp::rowstatus::RowStatus::Active)
            .ok_or(SetError::InconsistentName)?;
        let s = &source.data.data;
        self.auth_protocol = s.auth_protocol.clone();
        self.auth_key = s.auth_key.clone();
        self.priv_protocol = s.priv_protocol.clone();
        self.priv_key = s.priv_key.clone();
        self.cloned = true;
        Ok(())
    }
}

/// Whether two usmUserTable indexes name the same engine ID.
fn same_engine(a: &[u32], b: &[u32]) -> bool {
    match (admin::split_string(a), admin::split_string(b)) {
        (Some((x, _)), Some((y, _))) => x == y,
        _ => false,
    }
}

/// The index: usmUserEngineID (5..32 octets), usmUserName (1..32).
fn parse_index(index: &[u32]) -> Option<(Vec<u8>, Vec<u8>)> {
    let (engine, rest) = admin::split_string(index)?;
    let (name, rest) = admin::split_string(rest)?;
    (rest.is_empty() && admin::sized(&engine, 5, 32) && admin::sized(&name, 1, 32))
        .then_some((engine, name))
}

/// The usmUserTable index of `engine` and `name`.
pub fn user_index(engine: &[u8], name: &[u8]) -> Vec<u32> {
    let mut i = Vec::with_capacity(engine.len() + name.len() + 2);
    admin::string_index(engine, &mut i);
    admin::string_index(name, &mut i);
    i
}

fn oid_value(o: &[u32]) -> Value {
    Value::ObjectId(Oid::from_slice(o))
}

/// The new key a KeyChange value makes of `old`.
fn changed_key(
    auth: Option<AuthProtocol>,
    old: &Option<Vec<u8>>,
    value: &Value,
) -> Result<Vec<u8>, SetError> {
    let Value::OctetString(change) = value else {
        return Err(SetError::WrongType);
    };
    // A key to change needs a protocol and a key (cloned) first.
    let (Some(auth), Some(old)) = (auth, old) else {
        return Err(SetError::InconsistentValue);
    };
    auth.key_change(old, change).ok_or(SetError::WrongLength)
}

impl AdminRow for UsmUser {
    type State = UsmState;
    const ENTRY: &'static [u32] = o::USM_USER_ENTRY;
    const STATUS: u32 = last_arc(o::USM_USER_STATUS);
    const STORAGE: u32 = last_arc(o::USM_USER_STORAGE_TYPE);

    fn rows(s: &UsmState) -> &AdminRows<Self> {
        &s.users
    }
    fn rows_mut(s: &mut UsmState) -> &mut AdminRows<Self> {
        &mut s.users
    }

    fn valid_index(index: &[u32]) -> bool {
        parse_index(index).is_some()
    }

    fn read(&self, _: &View, index: &[u32], column: u32) -> Option<Value> {
        Some(match column {
            SECURITY_NAME => Value::OctetString(parse_index(index)?.1),
            CLONE_FROM => Value::ObjectId(Oid::new(vec![0, 0])),
            AUTH_PROTOCOL => match self.auth() {
                Some(p) => oid_value(p.oid()),
                None => oid_value(o::USM_NO_AUTH_PROTOCOL),
            },
            PRIV_PROTOCOL => match self.privacy() {
                Some(p) => oid_value(p.oid()),
                None => oid_value(o::USM_NO_PRIV_PROTOCOL),
            },
            // KeyChange objects read as the empty string (RFC 3414).
            AUTH_KEY_CHANGE | OWN_AUTH_KEY_CHANGE | PRIV_KEY_CHANGE | OWN_PRIV_KEY_CHANGE => {
                Value::OctetString(Vec::new())
            }
            PUBLIC => Value::OctetString(self.public.clone()),
            _ => return None,
        })
    }

    fn set(
        &mut self,
        view: &View,
        index: &[u32],
        column: u32,
        value: &Value,
    ) -> Result<(), SetError> {
        let oid_of = |v: &Value| match v {
            Value::ObjectId(x) => Ok(x.as_slice().to_vec()),
            _ => Err(SetError::WrongType),
        };
        match column {
            CLONE_FROM => self.clone_from(view, index, &oid_of(value)?),
            AUTH_PROTOCOL => {
                let v = oid_of(value)?;
                if v == o::USM_NO_AUTH_PROTOCOL {
                    if self.priv_protocol.is_some() {
                        return Err(SetError::InconsistentValue);
                    }
                    self.auth_protocol = None;
                    self.auth_key = None;
                    return Ok(());
                }
                let p = AuthProtocol::from_oid(&v).ok_or(SetError::WrongValue)?;
                match self.auth() {
                    Some(cur) if cur == p => {}
                    // Once there is a protocol, only usmNoAuthProtocol.
                    Some(_) => return Err(SetError::InconsistentValue),
                    None if self.cloned => return Err(SetError::InconsistentValue),
                    None => self.auth_protocol = Some(p.name().to_string()),
                }
                Ok(())
            }
            PRIV_PROTOCOL => {
                let v = oid_of(value)?;
                if v == o::USM_NO_PRIV_PROTOCOL {
                    self.priv_protocol = None;
                    self.priv_key = None;
                    return Ok(());
                }
                let p = PrivProtocol::from_oid(&v).ok_or(SetError::WrongValue)?;
                match self.privacy() {
                    Some(cur) if cur == p => {}
                    Some(_) => return Err(SetError::InconsistentValue),
                    None if self.cloned || self.auth().is_none() => {
                        return Err(SetError::InconsistentValue)
                    }
                    None => self.priv_protocol = Some(p.name().to_string()),
                }
                Ok(())
            }
            // The own-key columns: only for the user itself (RFC 3414:
            // noAccess for anyone else, and where the requester is not
            // known, as through AgentX).
            OWN_AUTH_KEY_CHANGE | OWN_PRIV_KEY_CHANGE
                if view.user.as_deref() != parse_index(index).map(|i| i.1).as_deref() =>
            {
                Err(SetError::NoAccess)
            }
            AUTH_KEY_CHANGE | OWN_AUTH_KEY_CHANGE => {
                self.auth_key = Some(changed_key(self.auth(), &self.auth_key, value)?);
                Ok(())
            }
            // Hashed with the authentication protocol (RFC 3414 5); the new
            // key has the old one's length, the privacy protocol's.
            PRIV_KEY_CHANGE | OWN_PRIV_KEY_CHANGE => {
                self.priv_key = Some(changed_key(self.auth(), &self.priv_key, value)?);
                Ok(())
            }
            PUBLIC => match value {
                Value::OctetString(b) => {
                    self.public = b.clone();
                    Ok(())
                }
                _ => Err(SetError::WrongType),
            },
            _ => Err(SetError::NotWritable),
        }
    }

    fn ready(&self) -> bool {
        let keyed = |p: &Option<String>, k: &Option<Vec<u8>>| p.is_none() || k.is_some();
        keyed(&self.auth_protocol, &self.auth_key)
            && keyed(&self.priv_protocol, &self.priv_key)
            && (self.priv_protocol.is_none() || self.auth_protocol.is_some())
    }
}

/// The module's state: usmUserTable's rows, this engine's ID and the users
/// in force.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct UsmState {
    users: AdminRows<UsmUser>,
    #[serde(skip)]
    spin_lock: SpinLock,
    /// This engine's snmpEngineID (set at start, not saved).
    #[serde(skip)]
    engine_id: Vec<u8>,
    /// The active users of this engine created over SNMP, by name.
    #[serde(skip)]
    in_force: Arc<HashMap<Vec<u8>, Arc<User>>>,
}

/// Only the rows matter: the rest is derived or of this run.
impl PartialEq for UsmState {
    fn eq(&self, other: &Self) -> bool {
        self.users == other.users
    }
}

impl PersistedState for UsmState {
    const MODULE: &'static str = "SNMP-USER-BASED-SM-MIB";
}

impl AdminState for UsmState {
    fn refresh(&mut self) {
        let mine = self.users.iter().filter(|(_, r)| {
            r.status == snmp::rowstatus::RowStatus::Active && !r.data.storage.fixed()
        });
        self.in_force = Arc::new(
            mine.filter_map(|(index, r)| {
                let (engine, name) = parse_index(index)?;
                (engine == self.engine_id)
                    .then(|| r.data.data.user(&name))
                    .flatten()
                    .map(|u| (name, Arc::new(u)))
            })
            .collect(),
        );
    }
}

impl UsmState {
    /// At start: this engine's ID and the configured users (permanent rows;
    /// a saved row of the same name gives way). Returns the names of saved
    /// rows that gave way.
    pub fn start<'a>(
        &mut self,
        engine_id: &[u8],
        configured: impl Iterator<Item = &'a Arc<User>>,
    ) -> Vec<String> {
        self.engine_id = engine_id.to_vec();
        let mut shadowed = Vec::new();
        for u in configured {
            if self
                .users
                .put_configured(user_index(engine_id, &u.name), UsmUser::configured(u))
            {
                shadowed.push(String::from_utf8_lossy(&u.name).into_owned());
            }
        }
        self.refresh();
        shadowed
    }

    /// The active user `name` of this engine created over SNMP.
    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        self.in_force.get(name).cloned()
    }
}

/// Octets as a hex string in the state file.
mod hex_octets {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&b.iter().map(|x| format!("{x:02x}")).collect::<String>())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let t = String::deserialize(d)?;
        parse(&t).ok_or_else(|| serde::de::Error::custom("not hex"))
    }

    pub fn parse(t: &str) -> Option<Vec<u8>> {
        if !t.len().is_multiple_of(2) {
            return None;
        }
        (0..t.len())
            .step_by(2)
            .map(|i| t.get(i..i + 2).and_then(|x| u8::from_str_radix(x, 16).ok()))
            .collect()
    }
}

/// An optional key as hex.
mod opt_hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match b {
            Some(b) => super::hex_octets::serialize(b, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let t: Option<String> = Option::deserialize(d)?;
        t.map(|t| super::hex_octets::parse(&t).ok_or_else(|| serde::de::Error::custom("not hex")))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3414 KeyChange round trip through the row: the key a manager
    /// computes from the old and new passwords is the one the row ends with.
    #[test]
    fn key_change_gives_the_new_localized_key() {
        let engine = [0x80, 0, 0x1f, 0x88, 0x05, 1, 2, 3];
        let p = AuthProtocol::Sha1;
        let old = p.localized_key(b"oldpassword", &engine).unwrap();
        let new = p.localized_key(b"newpassword", &engine).unwrap();
        let change = p.make_key_change(&old, &new, &[7u8; 20]);
        let got = changed_key(Some(p), &Some(old.clone()), &Value::OctetString(change));
        assert_eq!(got, Ok(new));
        assert_eq!(
            changed_key(Some(p), &Some(old), &Value::OctetString(vec![0; 10])),
            Err(SetError::WrongLength)
        );
        assert_eq!(
            changed_key(None, &None, &Value::OctetString(vec![0; 40])),
            Err(SetError::InconsistentValue)
        );
    }

    #[test]
    fn rows_save_keys_in_hex_and_come_back() {
        let mut s = UsmState::default();
        let u = User::from_keys(b"ops", Some((AuthProtocol::Sha256, vec![1; 32])), None);
        let engine = [0x80, 0, 0, 0, 5, 9];
        // A configured row is not saved.
        s.start(&engine, [Arc::new(u)].iter());
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(text, r#"{"users":[]}"#);
        assert!(
            s.user(b"ops").is_none(),
            "configured users are the engine's own"
        );
        assert_eq!(
            parse_index(&user_index(&engine, b"ops")),
            Some((engine.to_vec(), b"ops".to_vec()))
        );
        assert!(parse_index(&user_index(&engine[..4], b"ops")).is_none());
    }
}
