//! Who may do what: communities, SNMPv3 users and the VACM views, groups
//! and access entries of the file and flags.

use std::net::IpAddr;

use ipnet::IpNet;

use super::file::{
    AccessConfigEntry, CommunityEntry, GroupEntry, UserAccessEntry, UserEntry, ViewEntry,
};
use super::{Access, Community, ConfigError};

pub(super) fn parse_oid(o: &str) -> Option<snmp::oid::Oid> {
    o.trim_start_matches('.')
        .split('.')
        .map(|x| x.parse::<u32>())
        .collect::<Result<Vec<u32>, _>>()
        .ok()
        .filter(|v| !v.is_empty())
        .map(snmp::oid::Oid::new)
}

pub(super) fn vacm(
    views: Vec<ViewEntry>,
    groups: Vec<GroupEntry>,
    access: Vec<AccessConfigEntry>,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<snmp::vacm::Vacm, ConfigError> {
    use snmp::usm::SecurityLevel;
    use snmp::vacm::{AccessEntry, SecurityModel, Vacm, ViewFamily};
    let mut v = Vacm::default();
    for e in views {
        let included = match e.kind.as_str() {
            "included" => true,
            "excluded" => false,
            k => {
                return Err(in_file(
                    "view",
                    format!("type {k:?}: expected included or excluded"),
                ))
            }
        };
        let subtree = parse_oid(&e.oid)
            .ok_or_else(|| in_file("view", format!("oid {:?}: expected dotted numbers", e.oid)))?;
        let mask = match e.mask.as_deref() {
            None | Some("") => Vec::new(),
            Some(m) => {
                let h: String = m
                    .trim_start_matches("0x")
                    .chars()
                    .filter(|c| *c != ':' && *c != '.')
                    .collect();
                (0..h.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(h.get(i..i + 2).unwrap_or("zz"), 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|_| in_file("view", format!("mask {m:?}: expected hex octets")))?
            }
        };
        v.views
            .entry(e.name)
            .or_default()
            .families
            .push(ViewFamily {
                subtree,
                mask,
                included,
            });
    }
    for g in groups {
        let model = SecurityModel::parse(&g.model).ok_or_else(|| {
            in_file(
                "group",
                format!("model {:?}: expected v1, v2c or usm", g.model),
            )
        })?;
        v.groups
            .insert((model, g.security_name.into_bytes()), g.name);
    }
    for a in access {
        let model = match a.model.as_deref() {
            None | Some("any") => None,
            Some(m) => Some(SecurityModel::parse(m).ok_or_else(|| {
                in_file(
                    "access",
                    format!("model {m:?}: expected any, v1, v2c or usm"),
                )
            })?),
        };
        let level = match a.level.as_deref() {
            None => SecurityLevel::NoAuthNoPriv,
            Some(l) => SecurityLevel::parse(l).ok_or_else(|| {
                in_file(
                    "access",
                    format!("level {l:?}: expected noauth, auth or priv"),
                )
            })?,
        };
        let name = |n: Option<String>| n.filter(|x| x != "none" && !x.is_empty());
        for n in [&a.read, &a.write].into_iter().flatten() {
            if n != "none" && !v.views.contains_key(n) {
                return Err(in_file("access", format!("view {n:?} is not a [[view]]")));
            }
        }
        v.access.push(AccessEntry {
            group: a.group,
            context: Default::default(),
            model,
            level,
            read: name(a.read),
            write: name(a.write),
        });
    }
    Ok(v)
}

/// A user's `key` protocol and its password (`key`, `key_pass`): both or
/// neither; the protocol one that `parse` knows (`expected` names them),
/// then `allowed` (why the key may not be given), then the password at
/// least 8 characters. Errors as the words after the user's name.
fn key_pair<P>(
    (key, protocol, pass): (&str, Option<String>, Option<String>),
    parse: impl Fn(&str) -> Option<P>,
    expected: &str,
    allowed: Result<(), &str>,
) -> Result<Option<(P, String)>, String> {
    match (protocol, pass) {
        (Some(x), Some(p)) => {
            let proto = parse(&x).ok_or_else(|| format!("{key} {x:?}: expected {expected}"))?;
            allowed?;
            if p.len() < 8 {
                return Err(format!(
                    "{key}_pass: at least 8 characters (as net-snmp requires)"
                ));
            }
            Ok(Some((proto, p)))
        }
        (None, None) => Ok(None),
        _ => Err(format!("{key} and {key}_pass go together")),
    }
}

/// `[[user]]`, `[[rouser]]`, `[[rwuser]]` into USM users with access.
pub(super) fn usm_users(
    users: Vec<UserEntry>,
    ro: Vec<UserAccessEntry>,
    rw: Vec<UserAccessEntry>,
    in_file: &dyn Fn(&str, String) -> ConfigError,
) -> Result<Vec<snmp::usm::UserConfig>, ConfigError> {
    use snmp::usm::{AuthProtocol, PrivProtocol, SecurityLevel, UserAccess, UserConfig};
    let mut out: Vec<UserConfig> = Vec::new();
    for u in users {
        if u.name.is_empty() || u.name.len() > 32 {
            return Err(in_file(
                "user",
                format!("name {:?}: 1 to 32 octets", u.name),
            ));
        }
        if out.iter().any(|x| x.name == u.name) {
            return Err(in_file("user", format!("{:?} defined twice", u.name)));
        }
        let who = |m: &str| in_file("user", format!("{:?}: {m}", u.name));
        let auth = key_pair(
            ("auth", u.auth, u.auth_pass),
            AuthProtocol::parse,
            "MD5, SHA, SHA-224, SHA-256, SHA-384 or SHA-512",
            Ok(()),
        )
        .map_err(|m| who(&m))?;
        let privacy = key_pair(
            ("priv", u.privacy, u.priv_pass),
            PrivProtocol::parse,
            "DES, AES, AES192 or AES256",
            if auth.is_none() {
                Err("priv needs auth")
            } else {
                Ok(())
            },
        )
        .map_err(|m| who(&m))?;
        out.push(UserConfig {
            name: u.name,
            auth,
            privacy,
            access: None,
        });
    }
    for (key, list, write) in [("rouser", ro, false), ("rwuser", rw, true)] {
        for a in list {
            let Some(u) = out.iter_mut().find(|u| u.name == a.user) else {
                return Err(in_file(key, format!("{:?} is not a [[user]]", a.user)));
            };
            let min_level = match a.level.as_deref() {
                None => SecurityLevel::AuthNoPriv,
                Some(l) => SecurityLevel::parse(l).ok_or_else(|| {
                    in_file(key, format!("level {l:?}: expected noauth, auth or priv"))
                })?,
            };
            let subtree = match a.oid.as_deref() {
                None => None,
                Some(o) => Some(
                    o.trim_start_matches('.')
                        .split('.')
                        .map(|x| x.parse::<u32>())
                        .collect::<Result<Vec<u32>, _>>()
                        .map(snmp::oid::Oid::new)
                        .map_err(|_| in_file(key, format!("oid {o:?}: expected dotted numbers")))?,
                ),
            };
            if u.access.is_some() {
                return Err(in_file(key, format!("{:?} has access twice", a.user)));
            }
            u.access = Some(UserAccess {
                write,
                min_level,
                subtree,
            });
        }
    }
    Ok(out)
}

pub(super) fn flag_community(
    flag: &str,
    name: &str,
    access: Access,
) -> Result<Community, ConfigError> {
    check_community_name(name).map_err(|m| ConfigError(format!("{flag} {name:?}: {m}")))?;
    Ok(Community {
        name: name.to_string(),
        source: None,
        access,
    })
}

pub(super) fn file_community(
    key: &str,
    in_file: &dyn Fn(&str, String) -> ConfigError,
    e: CommunityEntry,
    access: Access,
) -> Result<Community, ConfigError> {
    let err = |m: String| in_file(key, format!("{:?}: {m}", e.community));
    check_community_name(&e.community).map_err(err)?;
    let source = match e.source.as_deref().map(str::trim) {
        None | Some("default") => None,
        Some(s) => Some(parse_source(s).map_err(err)?),
    };
    Ok(Community {
        name: e.community,
        source,
        access,
    })
}

pub(super) fn check_community_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("community name is empty".into());
    }
    if name.len() > 255 {
        return Err("community name longer than 255 octets".into());
    }
    Ok(())
}

/// A source restriction: a CIDR (`10.0.0.0/8`, `fd00::/8`) or one address.
pub(super) fn parse_source(s: &str) -> Result<IpNet, String> {
    if let Ok(net) = s.parse::<IpNet>() {
        return Ok(net.trunc());
    }
    s.parse::<IpAddr>()
        .map(IpNet::from)
        .map_err(|_| format!("source {s:?} is not an address, a CIDR or \"default\""))
}
