//! USM authentication: password to key (RFC 3414 A.2), key localization,
//! HMAC-MD5-96, HMAC-SHA-96 (RFC 3414 6, 7) and HMAC-SHA-2 (RFC 7860).

// Input path: keys and messages come from the wire and the config file.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use hmac::digest::core_api::BlockSizeUser;
use hmac::digest::{Digest, DynDigest, KeyInit};
use hmac::{Mac, SimpleHmac};
use subtle::ConstantTimeEq;

/// USM authentication protocols, as net-snmp's `-a` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuthProtocol {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

/// The 1 MiB of repeated password hashed by password-to-key (RFC 3414 A.2).
const EXPANDED_LEN: usize = 1_048_576;

impl AuthProtocol {
    /// Every protocol.
    pub const ALL: [AuthProtocol; 6] = [
        AuthProtocol::Md5,
        AuthProtocol::Sha1,
        AuthProtocol::Sha224,
        AuthProtocol::Sha256,
        AuthProtocol::Sha384,
        AuthProtocol::Sha512,
    ];

    /// Parses net-snmp's names (`MD5`, `SHA`, `SHA-224` ... `SHA-512`;
    /// `SHA1` and names without the dash are accepted too).
    pub fn parse(s: &str) -> Option<Self> {
        super::protocol_by_name(&Self::ALL, Self::name, &[("SHA1", AuthProtocol::Sha1)], s)
    }

    /// The net-snmp name.
    pub fn name(self) -> &'static str {
        match self {
            AuthProtocol::Md5 => "MD5",
            AuthProtocol::Sha1 => "SHA",
            AuthProtocol::Sha224 => "SHA-224",
            AuthProtocol::Sha256 => "SHA-256",
            AuthProtocol::Sha384 => "SHA-384",
            AuthProtocol::Sha512 => "SHA-512",
        }
    }

    /// Octets of msgAuthenticationParameters (the truncated MAC).
    pub fn mac_len(self) -> usize {
        match self {
            AuthProtocol::Md5 | AuthProtocol::Sha1 => 12,
            AuthProtocol::Sha224 => 16,
            AuthProtocol::Sha256 => 24,
            AuthProtocol::Sha384 => 32,
            AuthProtocol::Sha512 => 48,
        }
    }

    /// A fresh hasher of this protocol's digest: the one place that picks
    /// the digest type for hashing (the HMAC needs the type itself, see
    /// [`Self::mac`]).
    fn hasher(self) -> Box<dyn DynDigest> {
        match self {
            AuthProtocol::Md5 => Box::new(md5::Md5::new()),
            AuthProtocol::Sha1 => Box::new(sha1::Sha1::new()),
            AuthProtocol::Sha224 => Box::new(sha2::Sha224::new()),
            AuthProtocol::Sha256 => Box::new(sha2::Sha256::new()),
            AuthProtocol::Sha384 => Box::new(sha2::Sha384::new()),
            AuthProtocol::Sha512 => Box::new(sha2::Sha512::new()),
        }
    }

    /// The digest of `parts` concatenated.
    pub fn hash(self, parts: &[&[u8]]) -> Vec<u8> {
        let mut d = self.hasher();
        for p in parts {
            d.update(p);
        }
        d.finalize().to_vec()
    }

    /// usmUserAuthProtocol's value for this protocol (RFC 3414, RFC 7860).
    pub fn oid(self) -> &'static [u32] {
        match self {
            AuthProtocol::Md5 => &[1, 3, 6, 1, 6, 3, 10, 1, 1, 2],
            AuthProtocol::Sha1 => &[1, 3, 6, 1, 6, 3, 10, 1, 1, 3],
            AuthProtocol::Sha224 => &[1, 3, 6, 1, 6, 3, 10, 1, 1, 4],
            AuthProtocol::Sha256 => &[1, 3, 6, 1, 6, 3, 10, 1, 1, 5],
            AuthProtocol::Sha384 => &[1, 3, 6, 1, 6, 3, 10, 1, 1, 6],
            AuthProtocol::Sha512 => &[1, 3, 6, 1, 6, 3, 10, 1, 1, 7],
        }
    }

    /// The protocol usmUserAuthProtocol names.
    pub fn from_oid(oid: &[u32]) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.oid() == oid)
    }

    /// Octets of a localized key (the digest's length).
    pub fn key_len(self) -> usize {
        match self {
            AuthProtocol::Md5 => 16,
            AuthProtocol::Sha1 => 20,
            AuthProtocol::Sha224 => 28,
            AuthProtocol::Sha256 => 32,
            AuthProtocol::Sha384 => 48,
            AuthProtocol::Sha512 => 64,
        }
    }

    /// A KeyChange value (RFC 3414 section 5, the KeyChange textual
    /// convention) applied to `old`: the value is `random || delta`, each as
    /// long as the key; the new key is `delta` XORed with successive digests
    /// of the previous digest (at first `old`) and `random`. None when the
    /// value is not twice the key's length.
    pub fn key_change(self, old: &[u8], change: &[u8]) -> Option<Vec<u8>> {
        if old.is_empty() || change.len() != 2 * old.len() {
            return None;
        }
        let (random, delta) = change.split_at(old.len());
        Some(self.key_stream_xor(old, random, delta))
    }

    /// The KeyChange value a manager sends to turn `old` into `new` with
    /// `random` (as long as the keys).
    pub fn make_key_change(self, old: &[u8], new: &[u8], random: &[u8]) -> Vec<u8> {
        let mut v = random.to_vec();
        v.extend(self.key_stream_xor(old, random, new));
        v
    }

    /// `data` XOR the digests H(old || random), H(that || random), ...
    fn key_stream_xor(self, old: &[u8], random: &[u8], data: &[u8]) -> Vec<u8> {
        let mut temp = old.to_vec();
        let mut out = Vec::with_capacity(data.len());
        for chunk in data.chunks(self.key_len()) {
            temp = self.hash(&[&temp, random]);
            out.extend(chunk.iter().zip(&temp).map(|(d, t)| d ^ t));
        }
        out
    }

    /// Password to key (RFC 3414 A.2): the digest of the password repeated
    /// over 1 MiB. An empty password gives None (the algorithm needs one).
    pub fn password_to_key(self, password: &[u8]) -> Option<Vec<u8>> {
        if password.is_empty() {
            return None;
        }
        let mut d = self.hasher();
        // 64-octet blocks, as A.2 does; the rotation keeps the stream exact.
        let mut block = [0u8; 64];
        let mut idx = 0usize;
        let mut done = 0usize;
        while done < EXPANDED_LEN {
            for b in block.iter_mut() {
                *b = password.get(idx % password.len()).copied().unwrap_or(0);
                idx += 1;
            }
            d.update(&block);
            done += block.len();
        }
        Some(d.finalize().to_vec())
    }

    /// Key localization (RFC 3414 2.6): H(Ku || engineID || Ku).
    pub fn localize(self, ku: &[u8], engine_id: &[u8]) -> Vec<u8> {
        self.hash(&[ku, engine_id, ku])
    }

    /// Password to localized key in one step.
    pub fn localized_key(self, password: &[u8], engine_id: &[u8]) -> Option<Vec<u8>> {
        self.password_to_key(password)
            .map(|ku| self.localize(&ku, engine_id))
    }

    /// The truncated HMAC of `msg` under the localized key.
    pub fn mac(self, key: &[u8], msg: &[u8]) -> Vec<u8> {
        fn m<D: Digest + BlockSizeUser>(key: &[u8], msg: &[u8]) -> Vec<u8> {
            // HMAC accepts keys of any length.
            match <SimpleHmac<D> as KeyInit>::new_from_slice(key) {
                Ok(mut h) => {
                    h.update(msg);
                    h.finalize().into_bytes().to_vec()
                }
                Err(_) => Vec::new(),
            }
        }
        let mut full = match self {
            AuthProtocol::Md5 => m::<md5::Md5>(key, msg),
            AuthProtocol::Sha1 => m::<sha1::Sha1>(key, msg),
            AuthProtocol::Sha224 => m::<sha2::Sha224>(key, msg),
            AuthProtocol::Sha256 => m::<sha2::Sha256>(key, msg),
            AuthProtocol::Sha384 => m::<sha2::Sha384>(key, msg),
            AuthProtocol::Sha512 => m::<sha2::Sha512>(key, msg),
        };
        full.truncate(self.mac_len());
        full
    }

    /// Verifies `mac` over `msg` (whose MAC field the caller has zeroed),
    /// in constant time.
    pub fn verify(self, key: &[u8], msg: &[u8], mac: &[u8]) -> bool {
        let want = self.mac(key, msg);
        want.len() == mac.len() && bool::from(want.ct_eq(mac))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    const ENGINE: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    /// RFC 3414 A.3.1 (MD5) and A.3.2 (SHA-1): the key of "maplesyrup",
    /// then that key localized.
    #[test]
    fn rfc3414_vectors() {
        for (p, ku_hex, kul_hex) in [
            (
                AuthProtocol::Md5,
                "9faf3283884e92834ebc9847d8edd963",
                "526f5eed9fcce26f8964c2930787d82b",
            ),
            (
                AuthProtocol::Sha1,
                "9fb5cc0381497b3793528939ff788d5d79145211",
                "6695febc9288e36282235fc7151f128497b38f3f",
            ),
        ] {
            let ku = p.password_to_key(b"maplesyrup").unwrap();
            assert_eq!(hex(&ku), ku_hex, "{p:?}");
            assert_eq!(hex(&p.localize(&ku, &ENGINE)), kul_hex, "{p:?}");
        }
    }

    #[test]
    fn mac_lengths_and_verify() {
        for p in AuthProtocol::ALL {
            let k = p.localized_key(b"maplesyrup", &ENGINE).unwrap();
            let m = p.mac(&k, b"hello");
            assert_eq!(m.len(), p.mac_len());
            assert!(p.verify(&k, b"hello", &m));
            assert!(!p.verify(&k, b"hellp", &m));
            assert!(!p.verify(&k, b"hello", &m[1..]));
            assert_eq!(AuthProtocol::parse(p.name()), Some(p));
        }
        assert!(AuthProtocol::Md5.password_to_key(b"").is_none());
    }
}
