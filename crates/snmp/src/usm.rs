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
