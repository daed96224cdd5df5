//! IPoIB network interfaces, `/sys/class/net/<if>/` with `type` 32
//! (ARPHRD_INFINIBAND), and the (device, port) each runs over.

use super::attr::{
    list_dir, parse_dec_u64, parse_hex_u32, parse_ipoib_addr, parse_opt, read_tolerant, SysfsError,
};
use super::device::SysfsDevice;
use super::notes::{Note, NoteKind};
use crate::types::{Gid, PortNum};
use std::path::Path;
use tracing::debug;

/// ARPHRD_INFINIBAND: the `type` of an IPoIB netdev.
const ARPHRD_INFINIBAND: u64 = 32;

/// An IPoIB netdev as sysfs shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysfsNetdev {
    /// `ib0`, `ib0.8001`, ...
    pub name: String,
    /// `address`: 4 octets of flags and QPN, then the port GID.
    pub address: [u8; 20],
    /// The RDMA device under `device/infiniband/`, when linked.
    pub device: Option<String>,
    /// `dev_port` (or, on older kernels, `dev_id`) + 1.
    pub port: Option<PortNum>,
    pub mtu: Option<u32>,
    /// `mode`: `datagram` or `connected`.
    pub mode: Option<String>,
}

impl SysfsNetdev {
    /// The GID part of the address.
    pub fn gid(&self) -> Gid {
        let mut g = [0u8; 16];
        if let Some(src) = self.address.get(4..20) {
            g.copy_from_slice(src);
        }
        Gid::from_bytes(g)
    }

    /// The (device, port) it runs over: the port whose GID 0 is in its
    /// address, else the device it links to and its `dev_port`.
    pub fn locate<'a>(&self, devices: &'a [SysfsDevice]) -> Option<(&'a SysfsDevice, PortNum)> {
        let gid = self.gid();
        for d in devices {
            if let Some(p) = d.ports.iter().find(|p| p.gid == Some(gid)) {
                return Some((d, p.num));
            }
        }
        let d = devices
            .iter()
            .find(|d| Some(&d.name) == self.device.as_ref())?;
        let port = self.port?;
        d.ports.iter().any(|p| p.num == port).then_some((d, port))
    }
}

/// Every IPoIB netdev under `net_dir` (`ROOT/sys/class/net`). Entries that
/// are not netdevs (`bonding_masters`, a file) and bonding masters are
/// skipped; a netdev that cannot be read is left out and noted. Never fails:
/// the ports are served without their IPoIB interfaces at worst.
pub fn read_netdevs(net_dir: &Path, notes: &mut Vec<Note>) -> Vec<SysfsNetdev> {
    let names = match list_dir(net_dir) {
        Ok(n) => n.unwrap_or_default(),
        Err(e) => {
            notes.push(Note::new(NoteKind::NetdevLeftOut, "(all)", e));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for name in names {
        let dir = net_dir.join(&name);
        if !dir.is_dir() {
            continue;
        }
        // A bond (bond0 over ib0 and ib1) runs over no port of its own and
        // shows its active slave's address: the slaves are listed instead.
        if dir.join("bonding").is_dir() {
            debug!(netdev = %name, "bonding master; its IPoIB slaves are listed instead");
            continue;
        }
        match read_netdev(&dir, &name, notes) {
            Ok(Some(nd)) => out.push(nd),
            Ok(None) => {}
            Err(e) => notes.push(Note::new(NoteKind::NetdevLeftOut, name, e)),
        }
    }
    out
}

/// One netdev; `None` when it is not IPoIB or has no address.
fn read_netdev(
    dir: &Path,
    name: &str,
    notes: &mut Vec<Note>,
) -> Result<Option<SysfsNetdev>, SysfsError> {
    let ty = parse_opt(&dir.join("type"), name, notes, parse_dec_u64)?;
    if ty != Some(ARPHRD_INFINIBAND) {
        return Ok(None);
    }
    let Some(addr) = parse_opt(&dir.join("address"), name, notes, parse_ipoib_addr)? else {
        debug!(netdev = %name, "IPoIB netdev without an address; left out");
        return Ok(None);
    };
    let device =
        list_dir(&dir.join("device").join("infiniband"))?.and_then(|v| v.into_iter().next());
    let port0 = match parse_opt(&dir.join("dev_port"), name, notes, parse_dec_u64)? {
        Some(p) => Some(p),
        None => parse_opt(&dir.join("dev_id"), name, notes, |p, s| {
            parse_hex_u32(p, s, "a hex dev_id (0x0)").map(u64::from)
        })?,
    };
    let port = port0
        .and_then(|p| u8::try_from(p.checked_add(1)?).ok())
        .map(PortNum);
    let mtu = parse_opt(&dir.join("mtu"), name, notes, parse_dec_u64)?
        .and_then(|m| u32::try_from(m).ok());
    let mode = read_tolerant(&dir.join("mode"), name, notes)?;
    Ok(Some(SysfsNetdev {
        name: name.to_string(),
        address: addr,
        device,
        port,
        mtu,
        mode,
    }))
}
