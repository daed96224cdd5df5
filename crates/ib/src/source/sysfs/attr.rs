//! Reading and parsing single sysfs attribute files. Every error names the
//! file and what was expected in it.

// Input path: bytes from the wire or files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use super::notes::{Note, NoteKind};
use crate::types::{Gid, Guid};
use std::io;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};

/// Why the sysfs source could not read the host's InfiniBand devices.
#[derive(Debug, thiserror::Error)]
pub enum SysfsError {
    #[error("sysfs root {0} does not exist or is not a directory")]
    NoRoot(PathBuf),
    #[error("no RDMA devices: {0} does not exist; is the InfiniBand driver loaded?")]
    NoClassDir(PathBuf),
    #[error("no RDMA devices: {0} is empty; is the InfiniBand driver loaded?")]
    NoDevices(PathBuf),
    #[error("no InfiniBand ports under {dir}{skipped}")]
    NoIbPorts { dir: PathBuf, skipped: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}: missing (required)", path.display())]
    Missing { path: PathBuf },
    #[error("{}: expected {expected}, found {found:?}", path.display())]
    Parse {
        path: PathBuf,
        expected: &'static str,
        found: String,
    },
    #[error("local node {wanted:?} matches no local device (have: {have})")]
    NoSuchLocalNode { wanted: String, have: String },
}

pub(crate) fn parse_err(path: &Path, expected: &'static str, found: &str) -> SysfsError {
    SysfsError::Parse {
        path: path.to_path_buf(),
        expected,
        found: found.chars().take(80).collect(),
    }
}

/// What a failed read of a sysfs file means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFailure {
    /// ENOENT, ENOTDIR: there is no such file (e.g. `bonding_masters/type`,
    /// `bonding_masters` being a file).
    Missing,
    /// ENODEV, ENXIO: the device went away between listing and reading.
    Gone,
    /// Anything else (EINVAL on the `rate` of some down ports, EACCES,
    /// EIO, EISDIR...): the kernel refused this one value.
    Refused,
}

// Linux errno values (sysfs exists only there; std names no errno).
const ENOENT: i32 = 2;
const ENXIO: i32 = 6;
const ENODEV: i32 = 19;
const ENOTDIR: i32 = 20;

/// Classifies a failed read: whether the file is missing, its device is
/// gone, or only this value is refused.
pub fn classify(e: &io::Error) -> ReadFailure {
    match e.raw_os_error() {
        Some(ENOENT | ENOTDIR) => ReadFailure::Missing,
        Some(ENODEV | ENXIO) => ReadFailure::Gone,
        _ if e.kind() == io::ErrorKind::NotFound => ReadFailure::Missing,
        _ => ReadFailure::Refused,
    }
}

impl SysfsError {
    /// The read failed because the device went away (ENODEV, ENXIO).
    pub fn device_gone(&self) -> bool {
        matches!(self, SysfsError::Io { source, .. } if classify(source) == ReadFailure::Gone)
    }
}

/// Contents of an attribute file, trimmed; `None` when it does not exist.
pub(crate) fn read_opt(path: &Path) -> Result<Option<String>, SysfsError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).trim().to_string())),
        Err(e) if classify(&e) == ReadFailure::Missing => Ok(None),
        Err(e) => Err(SysfsError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

/// Contents of an optional attribute file; a read the kernel refuses is
/// `None` too, noted about `subject`. Only a device gone is an error.
pub(crate) fn read_tolerant(
    path: &Path,
    subject: &str,
    notes: &mut Vec<Note>,
) -> Result<Option<String>, SysfsError> {
    match read_opt(path) {
        Err(e @ SysfsError::Io { .. }) if !e.device_gone() => {
            notes.push(Note::new(NoteKind::ValueAbsent, subject, e));
            Ok(None)
        }
        r => r,
    }
}

/// Contents of an attribute file that must exist.
pub(crate) fn read_req(path: &Path) -> Result<String, SysfsError> {
    read_opt(path)?.ok_or_else(|| SysfsError::Missing {
        path: path.to_path_buf(),
    })
}

/// Reads and parses an optional file ([`read_tolerant`]); text that does
/// not parse is an error.
pub(crate) fn parse_opt<T>(
    path: &Path,
    subject: &str,
    notes: &mut Vec<Note>,
    parse: impl FnOnce(&Path, &str) -> Result<T, SysfsError>,
) -> Result<Option<T>, SysfsError> {
    read_tolerant(path, subject, notes)?
        .map(|s| parse(path, &s))
        .transpose()
}

/// Names in a directory, sorted; `None` when it does not exist.
pub(crate) fn list_dir(path: &Path) -> Result<Option<Vec<String>>, SysfsError> {
    let rd = match std::fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) if classify(&e) == ReadFailure::Missing => return Ok(None),
        Err(e) => {
            return Err(SysfsError::Io {
                path: path.to_path_buf(),
                source: e,
            })
        }
    };
    let mut names = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| SysfsError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        names.push(ent.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(Some(names))
}

/// `0c42:a103:00a1:b2c4` (node_guid, sys_image_guid): four groups of 16 bits.
pub(crate) fn parse_guid(path: &Path, s: &str) -> Result<Guid, SysfsError> {
    const EXP: &str = "a GUID as four colon-separated 16-bit hex groups (0c42:a103:00a1:b2c4)";
    let mut v: u64 = 0;
    let mut n = 0;
    for g in s.split(':') {
        if g.is_empty() || g.len() > 4 {
            return Err(parse_err(path, EXP, s));
        }
        let x = u16::from_str_radix(g, 16).map_err(|_| parse_err(path, EXP, s))?;
        v = (v << 16) | u64::from(x);
        n += 1;
    }
    if n != 4 {
        return Err(parse_err(path, EXP, s));
    }
    Ok(Guid(v))
}

/// `4: ACTIVE`, `5: LinkUp`, `1: CA`: the number before the colon (a bare
/// number is accepted too).
pub(crate) fn parse_enum_num(path: &Path, s: &str) -> Result<u8, SysfsError> {
    const EXP: &str = "\"N: NAME\" with a decimal N (e.g. \"4: ACTIVE\")";
    let num = s.split(':').next().unwrap_or("").trim();
    num.parse::<u8>().map_err(|_| parse_err(path, EXP, s))
}

/// A hex number with optional 0x (lid, sm_lid, cap_mask, pkeys, dev_id).
pub(crate) fn parse_hex_u32(
    path: &Path,
    s: &str,
    expected: &'static str,
) -> Result<u32, SysfsError> {
    let h = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if h.is_empty() {
        return Err(parse_err(path, expected, s));
    }
    u32::from_str_radix(h, 16).map_err(|_| parse_err(path, expected, s))
}

/// A 16-bit hex value (LIDs, P_Keys).
pub(crate) fn parse_hex_u16(
    path: &Path,
    s: &str,
    expected: &'static str,
) -> Result<u16, SysfsError> {
    let v = parse_hex_u32(path, s, expected)?;
    u16::try_from(v).map_err(|_| parse_err(path, expected, s))
}

/// A decimal counter or small number.
pub(crate) fn parse_dec_u64(path: &Path, s: &str) -> Result<u64, SysfsError> {
    s.parse::<u64>()
        .map_err(|_| parse_err(path, "an unsigned decimal number", s))
}

/// A GID as the kernel prints it (`fe80:0000:0000:0000:0c42:a103:00a1:b2c4`).
pub(crate) fn parse_gid(path: &Path, s: &str) -> Result<Gid, SysfsError> {
    s.parse::<Ipv6Addr>()
        .map(|a| Gid::from_bytes(a.octets()))
        .map_err(|_| parse_err(path, "a GID in IPv6 notation (fe80:0000:...)", s))
}

/// A 20-octet IPoIB hardware address `00:00:10:87:fe:80:...`.
pub(crate) fn parse_ipoib_addr(path: &Path, s: &str) -> Result<[u8; 20], SysfsError> {
    const EXP: &str = "a 20-octet IPoIB address as colon-separated hex octets";
    let mut out = [0u8; 20];
    let mut n = 0usize;
    for g in s.split(':') {
        if g.is_empty() || g.len() > 2 {
            return Err(parse_err(path, EXP, s));
        }
        let slot = out.get_mut(n).ok_or_else(|| parse_err(path, EXP, s))?;
        *slot = u8::from_str_radix(g, 16).map_err(|_| parse_err(path, EXP, s))?;
        n += 1;
    }
    if n != 20 {
        return Err(parse_err(path, EXP, s));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("/x")
    }

    #[test]
    fn guids() {
        assert_eq!(
            parse_guid(p(), "0c42:a103:00a1:b2c4").unwrap(),
            Guid(0x0c42_a103_00a1_b2c4)
        );
        assert!(parse_guid(p(), "0c42:a103:00a1").is_err());
        assert!(parse_guid(p(), "0c42:a103:00a1:b2c4:1").is_err());
        assert!(parse_guid(p(), "0c42a10300a1b2c4").is_err());
        assert!(parse_guid(p(), "zz42:a103:00a1:b2c4").is_err());
        let e = parse_guid(Path::new("/s/node_guid"), "bad").unwrap_err();
        assert!(
            e.to_string().starts_with("/s/node_guid: expected a GUID"),
            "{e}"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_enum_num(p(), "4: ACTIVE").unwrap(), 4);
        assert_eq!(parse_enum_num(p(), "5").unwrap(), 5);
        assert!(parse_enum_num(p(), "ACTIVE").is_err());
        assert_eq!(parse_hex_u16(p(), "0x1a", "lid").unwrap(), 0x1a);
        assert!(parse_hex_u16(p(), "0x10000", "lid").is_err());
        assert!(parse_hex_u16(p(), "0x", "lid").is_err());
        assert_eq!(parse_hex_u32(p(), "0xa651e848", "m").unwrap(), 0xa651_e848);
        assert_eq!(
            parse_dec_u64(p(), "18446744073709551615").unwrap(),
            u64::MAX
        );
        assert!(parse_dec_u64(p(), "-1").is_err());
    }

    #[test]
    fn read_failures_are_classified() {
        // Regular files cannot make the kernel's errors: fed directly here.
        let c = |n| classify(&io::Error::from_raw_os_error(n));
        assert_eq!(c(2), ReadFailure::Missing, "ENOENT");
        assert_eq!(c(20), ReadFailure::Missing, "ENOTDIR: bonding_masters/type");
        assert_eq!(c(19), ReadFailure::Gone, "ENODEV");
        assert_eq!(c(6), ReadFailure::Gone, "ENXIO");
        assert_eq!(c(22), ReadFailure::Refused, "EINVAL");
        assert_eq!(c(13), ReadFailure::Refused, "EACCES");
        assert_eq!(c(5), ReadFailure::Refused, "EIO");
        assert_eq!(c(21), ReadFailure::Refused, "EISDIR");
        let io = |n| SysfsError::Io {
            path: "/x".into(),
            source: io::Error::from_raw_os_error(n),
        };
        assert!(io(19).device_gone());
        assert!(!io(22).device_gone());
        assert!(!SysfsError::Missing { path: "/x".into() }.device_gone());
    }

    #[test]
    fn refused_reads_are_absent_and_noted() {
        let t = tempfile::tempdir().unwrap();
        // A directory where a file should be: EISDIR, as a refused read.
        std::fs::create_dir(t.path().join("rate")).unwrap();
        let mut notes = Vec::new();
        let r = read_tolerant(&t.path().join("rate"), "mlx5_0 port 1", &mut notes).unwrap();
        assert_eq!(r, None);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].kind, NoteKind::ValueAbsent);
        assert!(notes[0].cause.contains("rate"), "{:?}", notes[0]);
        // A missing file is absent without a note.
        let r = read_tolerant(&t.path().join("lid"), "mlx5_0 port 1", &mut notes).unwrap();
        assert_eq!((r, notes.len()), (None, 1));
        // A path through a file (bonding_masters/type): missing, not an error.
        std::fs::write(t.path().join("bonding_masters"), "bond0\n").unwrap();
        assert_eq!(
            read_opt(&t.path().join("bonding_masters/type")).unwrap(),
            None
        );
        assert_eq!(list_dir(&t.path().join("bonding_masters")).unwrap(), None);
    }

    #[test]
    fn gids_and_addresses() {
        let g = parse_gid(p(), "fe80:0000:0000:0000:0c42:a103:00a1:b2c4").unwrap();
        assert_eq!(g.prefix(), 0xfe80_0000_0000_0000);
        assert_eq!(g.guid(), Guid(0x0c42_a103_00a1_b2c4));
        assert!(parse_gid(p(), "fe80:0000").is_err());
        let a = parse_ipoib_addr(
            p(),
            "00:00:10:87:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:a1:b2:c4",
        )
        .unwrap();
        assert_eq!(a[3], 0x87);
        assert_eq!(a[19], 0xc4);
        assert!(parse_ipoib_addr(p(), "00:11:22:33:44:55").is_err());
        assert!(parse_ipoib_addr(
            p(),
            "00:00:10:87:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:a1:b2:c4:00"
        )
        .is_err());
    }
}
