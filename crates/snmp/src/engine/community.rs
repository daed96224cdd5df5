//! The community-based security model (RFC 3584): a community string, from
//! an allowed source, names a securityName at securityLevel noAuthNoPriv.
//! What that securityName may do is VACM's to say ([`super::access`]); the
//! `rocommunity`/`rwcommunity` shorthands become VACM entries there.

use std::borrow::Cow;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use ipnet::IpNet;

/// What a community may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommunityAccess {
    ReadOnly,
    ReadWrite,
}

/// A community string, its access, and the source prefixes allowed to use
/// it (empty: any source), like snmpd.conf's `rocommunity NAME [SOURCE]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Community {
    pub name: Vec<u8>,
    pub access: CommunityAccess,
    pub sources: Vec<IpNet>,
}

impl Community {
    pub fn new(name: impl Into<Vec<u8>>, access: CommunityAccess) -> Self {
        Community {
            name: name.into(),
            access,
            sources: Vec::new(),
        }
    }

    fn allows(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        self.sources.is_empty() || self.sources.iter().any(|n| n.contains(&ip))
    }
}

/// The community table, replaceable while the agent runs (a reload): each
/// request reads the table in force when it arrives.
pub type CommunityTable = Arc<arc_swap::ArcSwap<Vec<Community>>>;

/// The securityName of entry `i` of `table` (RFC 3584 snmpCommunityTable):
/// the community string itself, as VACM configurations name it; a later
/// entry repeating a string (other sources, other access) gets
/// `string` NUL `#i`, a name no configuration can write, so that each entry
/// keeps its own access without colliding with a community named `string#i`.
pub fn security_name(table: &[Community], i: usize) -> Vec<u8> {
    security_name_in(table, i).into_owned()
}

/// [`security_name`], the community string itself lent, not copied (the
/// name of almost every request).
fn security_name_in(table: &[Community], i: usize) -> Cow<'_, [u8]> {
    let Some(c) = table.get(i) else {
        return Cow::Borrowed(&[]);
    };
    if table.iter().position(|o| o.name == c.name) == Some(i) {
        Cow::Borrowed(&c.name)
    } else {
        let mut n = c.name.clone();
        n.extend_from_slice(format!("\0#{i}").as_bytes());
        Cow::Owned(n)
    }
}

/// The securityName a community string from `src` maps to, if any entry
/// allows it (the first that does).
pub fn authenticate<'a>(
    table: &'a [Community],
    community: &[u8],
    src: SocketAddr,
) -> Option<Cow<'a, [u8]>> {
    let i = table
        .iter()
        .position(|c| c.name == community && c.allows(src.ip()))?;
    Some(security_name_in(table, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_map_to_security_names_by_source() {
        let mut ro = Community::new("public", CommunityAccess::ReadOnly);
        ro.sources = vec!["10.0.0.0/8".parse().unwrap()];
        let rw = Community::new("public", CommunityAccess::ReadWrite);
        let table = vec![ro, rw];
        let from = |ip: [u8; 4]| SocketAddr::from((ip, 161));
        assert_eq!(
            authenticate(&table, b"public", from([10, 1, 2, 3])).as_deref(),
            Some(&b"public"[..])
        );
        assert_eq!(
            authenticate(&table, b"public", from([192, 0, 2, 1])).as_deref(),
            Some(&b"public\0#1"[..])
        );
        assert_eq!(authenticate(&table, b"other", from([10, 1, 2, 3])), None);
    }
}
