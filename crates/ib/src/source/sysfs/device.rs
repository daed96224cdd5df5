//! One RDMA device, `/sys/class/infiniband/<dev>/`, and its ports.

use super::attr::{
    list_dir, parse_dec_u64, parse_enum_num, parse_err, parse_gid, parse_guid, parse_hex_u16,
    parse_hex_u32, parse_opt, read_opt, read_req, read_tolerant, SysfsError,
};
use super::counters::{read_counters, read_hw_counters, CounterFiles};
use super::notes::Note;
use super::rate::{parse_rate, Rate};
use crate::types::{Gid, Guid, Lid, NodeType, PKey, PhysPortState, PortNum, PortState};
use std::collections::BTreeMap;
use std::path::Path;
use tracing::debug;

/// A local RDMA device with its InfiniBand ports (RoCE ports left out).
#[derive(Debug, Clone, PartialEq)]
pub struct SysfsDevice {
    /// Kernel name (`mlx5_0`).
    pub name: String,
    pub node_type: NodeType,
    pub node_guid: Guid,
    pub sys_image_guid: Guid,
    /// `node_desc` (NodeDescription).
    pub node_desc: String,
    /// Every port directory, InfiniBand or not (NodeInfo:NumPorts).
    pub num_ports: u8,
    /// PCI device ID (`device/device`), which Mellanox/NVIDIA HCAs also
    /// report as NodeInfo:DeviceID; 0 when unknown.
    pub device_id: u16,
    /// `hw_rev`; 0 when unknown.
    pub revision: u32,
    pub ports: Vec<SysfsPort>,
    /// Ports left out as not InfiniBand, with why: their link layer
    /// (`Ethernet`: RoCE) or the device's node type (`node type 4: RNIC`).
    pub skipped: Vec<(u8, String)>,
}

impl SysfsDevice {
    /// The node description: `node_desc`, or the device name when that is
    /// empty (as `ibstat` and node_exporter name the device).
    pub fn description(&self) -> &str {
        if self.node_desc.is_empty() {
            &self.name
        } else {
            &self.node_desc
        }
    }
}

/// One InfiniBand port, `ports/<n>/`.
#[derive(Debug, Clone, PartialEq)]
pub struct SysfsPort {
    pub num: PortNum,
    pub state: PortState,
    pub phys_state: PhysPortState,
    /// Active width and speed (`None` when `rate` is absent or unreadable,
    /// as on some down ports).
    pub rate: Option<Rate>,
    pub lid: Lid,
    /// `lid_mask_count` (LMC).
    pub lmc: u8,
    pub sm_lid: Lid,
    pub sm_sl: u8,
    /// `cap_mask` (PortInfo:CapabilityMask).
    pub cap_mask: u32,
    /// `gids/0`: subnet prefix and port GUID.
    pub gid: Option<Gid>,
    /// `pkeys/<i>` in index order.
    pub pkeys: Vec<PKey>,
    /// `counters/` (and `counters_ext/`); `None` without a counters
    /// directory or when they cannot be read (`N/A (no PMA)`).
    pub counters: Option<CounterFiles>,
    /// `hw_counters/` by name.
    pub hw_counters: BTreeMap<String, u64>,
}

/// Reads `class_dir/<name>`. `is_wide(node_guid, port)` tells whether a
/// port's counters were seen 64-bit by value on an earlier sweep. Values
/// the kernel refuses to read are absent and go to `notes`; an error means
/// the device cannot be served (a required file missing or unreadable, text
/// that does not parse, the device gone).
pub fn read_device(
    class_dir: &Path,
    name: &str,
    is_wide: &dyn Fn(Guid, u8) -> bool,
    notes: &mut Vec<Note>,
) -> Result<SysfsDevice, SysfsError> {
    let dir = class_dir.join(name);
    let node_guid = {
        let p = dir.join("node_guid");
        parse_guid(&p, &read_req(&p)?)?
    };
    let sys_image_guid =
        parse_opt(&dir.join("sys_image_guid"), name, notes, parse_guid)?.unwrap_or(node_guid);
    let node_desc = read_tolerant(&dir.join("node_desc"), name, notes)?.unwrap_or_default();
    // iWARP (4: RNIC) and usNIC devices register here too: not InfiniBand.
    let (node_type, not_ib) = match parse_opt(&dir.join("node_type"), name, notes, |p, s| {
        Ok((parse_enum_num(p, s)?, s.to_string()))
    })? {
        None => (NodeType::Ca, None),
        Some((n, text)) => match NodeType::from_raw(n) {
            Some(t) => (t, None),
            None => (NodeType::Ca, Some(format!("node type {text}"))),
        },
    };
    let device_id = parse_opt(&dir.join("device").join("device"), name, notes, |p, s| {
        parse_hex_u16(p, s, "a 16-bit hex PCI device ID")
    })?
    .unwrap_or(0);
    // Informational only: a revision the driver formats oddly is not an error.
    let revision = match parse_opt(&dir.join("hw_rev"), name, notes, |p, s| {
        parse_hex_u32(p, s, "a hex hardware revision")
    }) {
        Ok(r) => r.unwrap_or(0),
        Err(e) if e.device_gone() => return Err(e),
        Err(_) => 0,
    };

    let pdir = dir.join("ports");
    let mut nums: Vec<u8> = Vec::new();
    for n in list_dir(&pdir)?.unwrap_or_default() {
        match n.parse::<u8>() {
            Ok(v) => nums.push(v),
            Err(_) => debug!(dir = %pdir.display(), entry = %n, "not a port number; ignored"),
        }
    }
    nums.sort_unstable();
    let mut ports = Vec::new();
    let mut skipped = Vec::new();
    for n in &nums {
        let pd = pdir.join(n.to_string());
        let subject = format!("{name} port {n}");
        let ll = read_tolerant(&pd.join("link_layer"), &subject, notes)?
            .unwrap_or_else(|| "InfiniBand".to_string());
        let why = match &not_ib {
            Some(t) => Some(t.clone()),
            None => (!ll.eq_ignore_ascii_case("InfiniBand")).then_some(ll),
        };
        if let Some(why) = why {
            // Logged once at info level by the source.
            debug!(device = name, port = n, why = %why, "not an InfiniBand port; left out");
            skipped.push((*n, why));
            continue;
        }
        ports.push(read_port(&pd, *n, is_wide(node_guid, *n), &subject, notes)?);
    }
    Ok(SysfsDevice {
        name: name.to_string(),
        node_type,
        node_guid,
        sys_image_guid,
        node_desc,
        num_ports: u8::try_from(nums.len()).unwrap_or(u8::MAX),
        device_id,
        revision,
        ports,
        skipped,
    })
}

/// A port's `state`-style file ("4: ACTIVE") as the wire enum it numbers.
fn read_state<T>(
    dir: &Path,
    name: &str,
    from_raw: fn(u8) -> Option<T>,
    expected: &'static str,
) -> Result<T, SysfsError> {
    let p = dir.join(name);
    let s = read_req(&p)?;
    let n = parse_enum_num(&p, &s)?;
    from_raw(n).ok_or_else(|| parse_err(&p, expected, &s))
}

fn read_port(
    dir: &Path,
    num: u8,
    known_wide: bool,
    subject: &str,
    notes: &mut Vec<Note>,
) -> Result<SysfsPort, SysfsError> {
    let state = read_state(
        dir,
        "state",
        PortState::from_raw,
        "a port state 0..4 (\"4: ACTIVE\")",
    )?;
    let phys_state = read_state(
        dir,
        "phys_state",
        PhysPortState::from_raw,
        "a physical port state 1..7 (\"5: LinkUp\")",
    )?;
    // The kernel answers EINVAL for the rate of a port whose width is not
    // (yet) known: no rate then, but text that does not parse is an error.
    let rate = parse_opt(&dir.join("rate"), subject, notes, parse_rate)?;
    let lid16 = |f: &str, notes: &mut Vec<Note>| -> Result<Lid, SysfsError> {
        Ok(Lid(parse_opt(&dir.join(f), subject, notes, |p, s| {
            parse_hex_u16(p, s, "a hex LID (0x1a)")
        })?
        .unwrap_or(0)))
    };
    let lid = lid16("lid", notes)?;
    let sm_lid = lid16("sm_lid", notes)?;
    let small = |f: &str,
                 max: u64,
                 expected: &'static str,
                 notes: &mut Vec<Note>|
     -> Result<u8, SysfsError> {
        parse_opt(&dir.join(f), subject, notes, |p, s| {
            let v = parse_dec_u64(p, s)?;
            if v > max {
                return Err(parse_err(p, expected, s));
            }
            Ok(u8::try_from(v).unwrap_or(0))
        })
        .map(Option::unwrap_or_default)
    };
    let lmc = small("lid_mask_count", 7, "an LMC from 0 to 7", notes)?;
    let sm_sl = small("sm_sl", 15, "an SL from 0 to 15", notes)?;
    let cap_mask = parse_opt(&dir.join("cap_mask"), subject, notes, |p, s| {
        parse_hex_u32(p, s, "a hex capability mask (0xa651e848)")
    })?
    .unwrap_or(0);
    let gid = parse_opt(&dir.join("gids").join("0"), subject, notes, parse_gid)?;
    let pkeys = read_pkeys(&dir.join("pkeys"))?;
    let counters = read_counters(dir, num, known_wide, subject, notes)?;
    let hw_counters = read_hw_counters(dir)?;
    Ok(SysfsPort {
        num: PortNum(num),
        state,
        phys_state,
        rate,
        lid,
        lmc,
        sm_lid,
        sm_sl,
        cap_mask,
        gid,
        pkeys,
        counters,
        hw_counters,
    })
}

fn read_pkeys(dir: &Path) -> Result<Vec<PKey>, SysfsError> {
    let mut idx: Vec<u32> = list_dir(dir)?
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    idx.sort_unstable();
    let mut out = Vec::with_capacity(idx.len());
    for i in idx {
        let p = dir.join(i.to_string());
        match read_opt(&p) {
            Ok(Some(s)) => out.push(PKey(parse_hex_u16(&p, &s, "a hex P_Key (0xffff)")?)),
            Ok(None) => {}
            Err(e) if e.device_gone() => return Err(e),
            // An entry the HCA refuses to report reads as an invalid P_Key.
            Err(SysfsError::Io { .. }) => out.push(PKey::INVALID),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
