//! USM privacy: CBC-DES (RFC 3414 8), CFB128-AES-128 (RFC 3826) and
//! AES-192/256 with either key extension in use: the one net-snmp uses for
//! `-x AES-192` and `-x AES-256` (draft-blumenthal-aes-usm-04: Kul ||
//! H(Kul) || ...), and the one Cisco and many other vendors use, called
//! AES192C/AES256C (draft-reeder-snmpv3-usm-3desede-00: the key so far is
//! taken as a passphrase, turned into a key and localized again). The
//! cipher is the same; only the key differs.

// Input path: ciphertext and parameters come from the wire.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use aes::cipher::{AsyncStreamCipher, BlockDecryptMut, BlockEncryptMut, KeyIvInit};

use super::AuthProtocol;

/// USM privacy protocols, as net-snmp's `-x` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrivProtocol {
    Des,
    Aes128,
    Aes192,
    Aes256,
    /// AES-192 with the Reeder key extension ("AES192C").
    Aes192C,
    /// AES-256 with the Reeder key extension ("AES256C").
    Aes256C,
}

/// Why a scopedPDU could not be decrypted (usmStatsDecryptionErrors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("decryption error")]
pub struct DecryptError;

impl PrivProtocol {
    /// Every protocol.
    pub const ALL: [PrivProtocol; 6] = [
        PrivProtocol::Des,
        PrivProtocol::Aes128,
        PrivProtocol::Aes192,
        PrivProtocol::Aes256,
        PrivProtocol::Aes192C,
        PrivProtocol::Aes256C,
    ];

    /// Parses net-snmp's names (`DES`, `AES`, `AES128`, `AES192`, `AES-192`,
    /// `AES256`, `AES-256`, and `AES192C`, `AES256C` for the Reeder
    /// extension).
    pub fn parse(s: &str) -> Option<Self> {
        super::protocol_by_name(
            &Self::ALL,
            Self::name,
            &[("AES128", PrivProtocol::Aes128)],
            s,
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            PrivProtocol::Des => "DES",
            PrivProtocol::Aes128 => "AES",
            PrivProtocol::Aes192 => "AES192",
            PrivProtocol::Aes256 => "AES256",
            PrivProtocol::Aes192C => "AES192C",
            PrivProtocol::Aes256C => "AES256C",
        }
    }

    /// usmUserPrivProtocol's value for this protocol: RFC 3414 (DES),
    /// RFC 3826 (AES), draft-blumenthal-aes-usm (AES-192/256, as net-snmp),
    /// Cisco's arcs for the Reeder variants.
    pub fn oid(self) -> &'static [u32] {
        match self {
            PrivProtocol::Des => &[1, 3, 6, 1, 6, 3, 10, 1, 2, 2],
            PrivProtocol::Aes128 => &[1, 3, 6, 1, 6, 3, 10, 1, 2, 4],
            PrivProtocol::Aes192 => &[1, 3, 6, 1, 4, 1, 14832, 1, 3],
            PrivProtocol::Aes256 => &[1, 3, 6, 1, 4, 1, 14832, 1, 4],
            PrivProtocol::Aes192C => &[1, 3, 6, 1, 4, 1, 9, 12, 6, 1, 1],
            PrivProtocol::Aes256C => &[1, 3, 6, 1, 4, 1, 9, 12, 6, 1, 2],
        }
    }

    /// The protocol usmUserPrivProtocol names.
    pub fn from_oid(oid: &[u32]) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.oid() == oid)
    }

    /// Octets of localized key the protocol uses (DES: key and pre-IV).
    pub fn key_len(self) -> usize {
        match self {
            PrivProtocol::Des | PrivProtocol::Aes128 => 16,
            PrivProtocol::Aes192 | PrivProtocol::Aes192C => 24,
            PrivProtocol::Aes256 | PrivProtocol::Aes256C => 32,
        }
    }

    /// The localized privacy key from `password`, hashed with the user's
    /// authentication protocol and extended when the digest is too short.
    pub fn localized_key(
        self,
        auth: AuthProtocol,
        password: &[u8],
        engine_id: &[u8],
    ) -> Option<Vec<u8>> {
        let mut k = auth.localized_key(password, engine_id)?;
        while k.len() < self.key_len() {
            let more = match self {
                // Reeder: the key so far as a passphrase, localized again.
                PrivProtocol::Aes192C | PrivProtocol::Aes256C => {
                    auth.localized_key(&k, engine_id)?
                }
                // Blumenthal: the hash of the key so far.
                _ => auth.hash(&[&k]),
            };
            k.extend_from_slice(&more);
        }
        k.truncate(self.key_len());
        Some(k)
    }

    /// Encrypts `plain` (an encoded scopedPDU). `salt` is 64 bits that must
    /// not repeat under one key; `boots`/`time` are the authoritative
    /// engine's. Returns (ciphertext, msgPrivacyParameters).
    pub fn encrypt(
        self,
        key: &[u8],
        boots: u32,
        time: u32,
        salt: u64,
        plain: &[u8],
    ) -> (Vec<u8>, [u8; 8]) {
        match self {
            PrivProtocol::Des => {
                // RFC 3414 8.1.1.1: salt = boots || counter; IV = pre-IV xor salt.
                let mut params = [0u8; 8];
                params[..4].copy_from_slice(&boots.to_be_bytes());
                params[4..].copy_from_slice(&(salt as u32).to_be_bytes());
                let iv = des_iv(key, &params);
                let mut buf = plain.to_vec();
                // Pad to the block size; the receiver ignores trailing octets.
                let padded = buf.len().div_ceil(8) * 8;
                buf.resize(padded, 0);
                let dk = key.get(..8).unwrap_or(&[0; 8]);
                let enc = cbc::Encryptor::<des::Des>::new_from_slices(dk, &iv);
                if let Ok(mut enc) = enc {
                    for chunk in buf.chunks_exact_mut(8) {
                        enc.encrypt_block_mut(chunk.into());
                    }
                }
                (buf, params)
            }
            _ => {
                let params = salt.to_be_bytes();
                let iv = aes_iv(boots, time, &params);
                let mut buf = plain.to_vec();
                aes_cfb(key, &iv, &mut buf, true);
                (buf, params)
            }
        }
    }

    /// Decrypts an encryptedPDU.
    pub fn decrypt(
        self,
        key: &[u8],
        boots: u32,
        time: u32,
        params: &[u8],
        cipher: &[u8],
    ) -> Result<Vec<u8>, DecryptError> {
        let params: [u8; 8] = params.try_into().map_err(|_| DecryptError)?;
        match self {
            PrivProtocol::Des => {
                if !cipher.len().is_multiple_of(8) || key.len() < 16 {
                    return Err(DecryptError);
                }
                let iv = des_iv(key, &params);
                let dk = key.get(..8).ok_or(DecryptError)?;
                let mut dec = cbc::Decryptor::<des::Des>::new_from_slices(dk, &iv)
                    .map_err(|_| DecryptError)?;
                let mut buf = cipher.to_vec();
                for chunk in buf.chunks_exact_mut(8) {
                    dec.decrypt_block_mut(chunk.into());
                }
                Ok(buf)
            }
            _ => {
                if key.len() < self.key_len() {
                    return Err(DecryptError);
                }
                let iv = aes_iv(boots, time, &params);
                let mut buf = cipher.to_vec();
                aes_cfb(
                    key.get(..self.key_len()).ok_or(DecryptError)?,
                    &iv,
                    &mut buf,
                    false,
                );
                Ok(buf)
            }
        }
    }
}

fn des_iv(key: &[u8], salt: &[u8; 8]) -> [u8; 8] {
    let mut iv = [0u8; 8];
    for (i, b) in iv.iter_mut().enumerate() {
        let pre = key.get(8 + i).copied().unwrap_or(0);
        *b = pre ^ salt.get(i).copied().unwrap_or(0);
    }
    iv
}

/// RFC 3826 3.1.2.1: IV = boots || time || salt.
fn aes_iv(boots: u32, time: u32, salt: &[u8; 8]) -> [u8; 16] {
    let mut iv = [0u8; 16];
    iv[..4].copy_from_slice(&boots.to_be_bytes());
    iv[4..8].copy_from_slice(&time.to_be_bytes());
    iv[8..].copy_from_slice(salt);
    iv
}

fn aes_cfb(key: &[u8], iv: &[u8; 16], buf: &mut [u8], encrypt: bool) {
    macro_rules! run {
        ($aes:ty) => {
            if encrypt {
                if let Ok(c) = cfb_mode::Encryptor::<$aes>::new_from_slices(key, iv) {
                    c.encrypt(buf);
                }
            } else if let Ok(c) = cfb_mode::Decryptor::<$aes>::new_from_slices(key, iv) {
                c.decrypt(buf);
            }
        };
    }
    match key.len() {
        16 => run!(aes::Aes128),
        24 => run!(aes::Aes192),
        32 => run!(aes::Aes256),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let engine = [0x80, 0, 0x1f, 0x88, 4, 1, 2, 3];
        for auth in [AuthProtocol::Md5, AuthProtocol::Sha1, AuthProtocol::Sha512] {
            for p in PrivProtocol::ALL {
                let k = p.localized_key(auth, b"privpass1", &engine).unwrap();
                assert_eq!(k.len(), p.key_len());
                let plain = b"a scoped PDU of some length, 37 bytes".to_vec();
                let (c, params) = p.encrypt(&k, 7, 1234, 0xdead_beef_0000_0001, &plain);
                assert_ne!(&c[..plain.len()], &plain[..]);
                let d = p.decrypt(&k, 7, 1234, &params, &c).unwrap();
                assert_eq!(&d[..plain.len()], &plain[..]);
                assert!(p.decrypt(&k, 7, 1234, &params[..4], &c).is_err());
                assert_eq!(PrivProtocol::parse(p.name()), Some(p));
            }
        }
        assert!(PrivProtocol::Des
            .decrypt(&[0; 16], 0, 0, &[0; 8], &[0; 7])
            .is_err());
    }

    const EXT_ENGINE: [u8; 3] = [1, 2, 3];

    /// The SHA-1 localized key of "secretpw" and `p`'s key from it, longer
    /// than SHA-1 gives (the key extension tests).
    fn extended_key(p: PrivProtocol) -> (Vec<u8>, Vec<u8>) {
        let kul = AuthProtocol::Sha1
            .localized_key(b"secretpw", &EXT_ENGINE)
            .unwrap();
        let k = p
            .localized_key(AuthProtocol::Sha1, b"secretpw", &EXT_ENGINE)
            .unwrap();
        (kul, k)
    }

    /// Extension: the first 20 octets of a SHA-1 AES-256 key are the plain
    /// localized key, the rest SHA-1 of it.
    #[test]
    fn blumenthal_extension() {
        let (kul, k) = extended_key(PrivProtocol::Aes256);
        assert_eq!(&k[..20], &kul[..]);
        assert_eq!(&k[20..], &AuthProtocol::Sha1.hash(&[&kul])[..12]);
    }

    /// Reeder extension: the first 20 octets of a SHA-1 AES256C key are the
    /// plain localized key, the rest that key localized again as a
    /// passphrase (pysnmp's usmAesCfb256Protocol agrees in tests/snmpv3.rs).
    #[test]
    fn reeder_extension() {
        let (kul, k) = extended_key(PrivProtocol::Aes256C);
        assert_eq!(&k[..20], &kul[..]);
        let again = AuthProtocol::Sha1.localized_key(&kul, &EXT_ENGINE).unwrap();
        assert_eq!(&k[20..], &again[..12]);
        assert_ne!(k, extended_key(PrivProtocol::Aes256).1);
    }
}
