//! snmpEngineID and snmpEngineBoots kept in the state directory
//! (RFC 3414 2.2: boots must grow at every start, also after a crash).

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};

const ID_FILE: &str = "snmp-engine-id";
const BOOTS_FILE: &str = "snmp-engine-boots";

/// Writes `text` to `dir/name` atomically and durably (temp file, fsync,
/// rename, fsync of the directory).
fn write_durable(dir: &Path, name: &str, text: &str) -> Result<()> {
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let path = dir.join(name);
    crate::models::state::write_synced(&tmp, text.as_bytes())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) || s.is_empty() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|x| u8::from_str_radix(x, 16).ok()))
        .collect()
}

/// The engine ID (configured, else persisted, else generated and
/// persisted) and this start's snmpEngineBoots, already durably stored.
pub fn start(dir: &Path, configured: Option<Vec<u8>>) -> Result<(Vec<u8>, u32)> {
    let id = match configured {
        Some(id) => id,
        None => match fs::read_to_string(dir.join(ID_FILE)) {
            Ok(t) => match unhex(&t) {
                Some(id) => id,
                None => bail!("{}: not a hex engine ID", dir.join(ID_FILE).display()),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let id = snmp::usm::Engine::generate_id();
                write_durable(dir, ID_FILE, &format!("{}\n", hex(&id)))?;
                id
            }
            Err(e) => return Err(e).context("cannot read the engine ID"),
        },
    };
    let prev: u32 = match fs::read_to_string(dir.join(BOOTS_FILE)) {
        Ok(t) => match t.trim().parse() {
            Ok(n) => n,
            Err(_) => bail!("{}: not a number", dir.join(BOOTS_FILE).display()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(e).context("cannot read snmpEngineBoots"),
    };
    // 2147483647 is final (RFC 3414 2.2.2): the engine then needs a new ID.
    let boots = prev.saturating_add(1).min(i32::MAX as u32);
    write_durable(dir, BOOTS_FILE, &format!("{boots}\n"))?;
    Ok((id, boots))
}

/// An engine for this run only (no writable state directory, no SNMPv3 users):
/// the configured or a fresh engine ID, snmpEngineBoots 1.
pub fn ephemeral(configured: Option<Vec<u8>>) -> (Vec<u8>, u32) {
    (configured.unwrap_or_else(snmp::usm::Engine::generate_id), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boots_grow_and_id_stays() {
        let d = tempfile::tempdir().unwrap();
        let (id1, b1) = start(d.path(), None).unwrap();
        let (id2, b2) = start(d.path(), None).unwrap();
        assert_eq!(id1, id2);
        assert_eq!((b1, b2), (1, 2));
        let (id3, b3) = start(d.path(), Some(vec![0x80, 0, 0, 0, 1])).unwrap();
        assert_eq!(id3, vec![0x80, 0, 0, 0, 1]);
        assert_eq!(b3, 3);
    }
}
