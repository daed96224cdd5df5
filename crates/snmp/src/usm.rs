//! The User-based Security Model (RFC 3414, with RFC 7860 SHA-2 and
//! RFC 3826 AES): key localization, message authentication and privacy.
//!
//! Crypto primitives come from RustCrypto; this module only arranges them
//! the way USM and net-snmp do.

pub mod auth;
pub mod inform;
pub mod privacy;
pub mod process;
pub mod trap;

pub use auth::AuthProtocol;
pub use inform::{discover, Discovered, InformWrapper};
pub use privacy::PrivProtocol;
pub use process::{
    mib_objects, Engine, Incoming, ManagedUsers, MpdDrop, ReplyContext, SecurityLevel, User,
    UserAccess, UserConfig, Usm,
};
pub use trap::TrapWrapper;

/// The protocol of `all` that net-snmp names `s` (case and dashes aside:
/// `SHA-256`, `sha256`), or the one an older spelling in `aliases` names.
fn protocol_by_name<P: Copy>(
    all: &[P],
    name: fn(P) -> &'static str,
    aliases: &[(&str, P)],
    s: &str,
) -> Option<P> {
    let key = |n: &str| n.to_ascii_uppercase().replace('-', "");
    let k = key(s);
    all.iter()
        .copied()
        .find(|&p| key(name(p)) == k)
        .or_else(|| aliases.iter().find(|(a, _)| *a == k).map(|&(_, p)| p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// net-snmp's names in any case, with or without dashes, and the
    /// older spellings.
    #[test]
    fn protocol_names() {
        for (s, p) in [
            ("MD5", AuthProtocol::Md5),
            ("sha", AuthProtocol::Sha1),
            ("SHA1", AuthProtocol::Sha1),
            ("SHA-1", AuthProtocol::Sha1),
            ("sha-224", AuthProtocol::Sha224),
            ("SHA512", AuthProtocol::Sha512),
        ] {
            assert_eq!(AuthProtocol::parse(s), Some(p), "{s}");
        }
        for (s, p) in [
            ("des", PrivProtocol::Des),
            ("AES", PrivProtocol::Aes128),
            ("AES128", PrivProtocol::Aes128),
            ("aes-192", PrivProtocol::Aes192),
            ("AES256C", PrivProtocol::Aes256C),
        ] {
            assert_eq!(PrivProtocol::parse(s), Some(p), "{s}");
        }
        assert_eq!(AuthProtocol::parse("SHA2"), None);
        assert_eq!(PrivProtocol::parse("AES512"), None);
    }
}
