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

    /// Names in any case, with or without dashes, and the older spellings
    /// (each name itself round-trips in the protocols' own tests).
    #[test]
    fn protocol_names() {
        assert_eq!(AuthProtocol::parse("sha-1"), Some(AuthProtocol::Sha1));
        assert_eq!(AuthProtocol::parse("Sha224"), Some(AuthProtocol::Sha224));
        assert_eq!(PrivProtocol::parse("aes-128"), Some(PrivProtocol::Aes128));
        assert_eq!(PrivProtocol::parse("AES-256c"), Some(PrivProtocol::Aes256C));
        assert_eq!(AuthProtocol::parse("SHA2"), None);
    }
}
