//! The sysfs source (`--source sysfs[:ROOT]`): this host's own InfiniBand
//! ports as the Linux kernel shows them under `ROOT/sys/class/infiniband`,
//! and its IPoIB interfaces under `ROOT/sys/class/net`. No MADs are sent; it
//! needs no privileges. Documented in docs/sysfs.md.
//!
//! Each sweep reads every device into a [`SysfsScan`], then builds one
//! snapshot node per device that has InfiniBand ports (RoCE ports are left
//! out), feeding the counters through the model's accumulators so totals stay
//! monotonic across sweeps, saturation and resets by others.
//!
//! - [`attr`]: reading and parsing attribute files ([`SysfsError`]);
//! - [`rate`]: the `rate` file;
//! - [`counters`]: `counters/`, `counters_ext/`, `hw_counters/` and the
//!   64-bit rule;
//! - [`device`]: one device and its ports;
//! - [`ipoib`]: IPoIB netdevs and the port each runs over;
//! - [`notes`]: what a sweep left out, logged once per cause.
//!
//! One device's or one file's trouble never takes the others down: what
//! could not be read is absent (a value, a port's counters, a netdev, a
//! device) and noted; only a host with nothing to serve fails the sweep.

pub mod attr;
pub mod counters;
pub mod device;
pub mod ipoib;
pub mod notes;
pub mod rate;

pub use attr::SysfsError;
pub use counters::{CounterFiles, CounterWidthRule};
pub use device::{SysfsDevice, SysfsPort};
pub use ipoib::SysfsNetdev;
pub use notes::{Note, NoteKind};
pub use rate::{parse_rate, Rate};

use crate::mad::pma::{cap, ClassPortInfo};
use crate::mad::smp::{NodeInfo, PortInfo};
use crate::model::{
    CounterHistory, IpoibInterface, Node, NodeIdx, Port, PortIdx, Snapshot, SnapshotBuilder,
    SweepInfo,
};
use crate::source::{ControlOp, ControlReply, Source, SourceError};
use crate::types::{Gid, Guid, Mtu, PortNum};
use notes::NoteLog;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use tracing::{info, warn};

/// Everything one sweep read.
#[derive(Debug, Clone, PartialEq)]
pub struct SysfsScan {
    /// Devices in name order, InfiniBand ports only.
    pub devices: Vec<SysfsDevice>,
    pub netdevs: Vec<SysfsNetdev>,
    /// What was left out, and why (logged once per cause by the source).
    pub notes: Vec<Note>,
}

impl SysfsScan {
    /// The device and port with this name and number.
    pub fn port(&self, dev: &str, num: u8) -> Option<&SysfsPort> {
        self.devices
            .iter()
            .find(|d| d.name == dev)?
            .ports
            .iter()
            .find(|p| p.num.0 == num)
    }
}

/// `ROOT/sys/class/infiniband`.
pub fn class_dir(root: &Path) -> PathBuf {
    root.join("sys").join("class").join("infiniband")
}

/// Whether `root` shows RDMA devices at all (the class directory has
/// entries): what both the sysfs and the umad source say first when
/// there is no hardware.
pub fn require_devices(root: &Path) -> Result<(), SysfsError> {
    let class = class_dir(root);
    match attr::list_dir(&class)? {
        None => Err(SysfsError::NoClassDir(class)),
        Some(names) if names.is_empty() => Err(SysfsError::NoDevices(class)),
        Some(_) => Ok(()),
    }
}

/// Reads every RDMA device and IPoIB netdev under `root`. `is_wide(node,
/// port)`: the port's counters were 64-bit by value on an earlier sweep.
pub fn scan(root: &Path, is_wide: &dyn Fn(Guid, u8) -> bool) -> Result<SysfsScan, SysfsError> {
    if !root.is_dir() {
        return Err(SysfsError::NoRoot(root.to_path_buf()));
    }
    let class = class_dir(root);
    let Some(names) = attr::list_dir(&class)? else {
        return Err(SysfsError::NoClassDir(class));
    };
    if names.is_empty() {
        return Err(SysfsError::NoDevices(class));
    }
    let mut notes = Vec::new();
    let mut devices = Vec::with_capacity(names.len());
    let mut failed = Vec::new();
    for n in &names {
        let mut dev_notes = Vec::new();
        match device::read_device(&class, n, is_wide, &mut dev_notes) {
            Ok(d) => {
                devices.push(d);
                notes.append(&mut dev_notes);
            }
            Err(e) => {
                // Hot unplug between listing and reading: say so, not ENOENT.
                let cause = if class.join(n).exists() {
                    e.to_string()
                } else {
                    "removed while being read".to_string()
                };
                failed.push(format!("{n} ({cause})"));
                notes.push(Note::new(NoteKind::DeviceLeftOut, n.as_str(), cause));
            }
        }
    }
    if devices.iter().all(|d| d.ports.is_empty()) {
        let left_out: Vec<String> = devices
            .iter()
            .flat_map(|d| {
                d.skipped
                    .iter()
                    .map(move |(n, why)| format!("{} port {n} ({why})", d.name))
            })
            .chain(failed)
            .collect();
        return Err(SysfsError::NoIbPorts {
            dir: class,
            skipped: format!(" (left out: {})", left_out.join(", ")),
        });
    }
    let netdevs = ipoib::read_netdevs(&root.join("sys").join("class").join("net"), &mut notes);
    Ok(SysfsScan {
        devices,
        netdevs,
        notes,
    })
}

/// Turns a scan into a snapshot builder: one node per device with InfiniBand
/// ports, "this system" chosen by `local` (device name, node GUID or node
/// description; default the first device).
pub fn to_builder(scan: &SysfsScan, local: Option<&str>) -> Result<SnapshotBuilder, SysfsError> {
    let subnet_prefix = scan
        .devices
        .iter()
        .flat_map(|d| d.ports.iter())
        .find_map(|p| p.gid.map(|g| g.prefix()))
        .unwrap_or(Gid::DEFAULT_SUBNET_PREFIX);
    let nports = scan.devices.iter().map(|d| d.ports.len()).sum();
    let mut b = SnapshotBuilder::with_capacity(subnet_prefix, scan.devices.len(), nports);
    let mut where_: HashMap<(&str, PortNum), PortIdx> = HashMap::new();
    let mut local_idx: Option<NodeIdx> = None;
    // IPoIB datagram MTU = IB MTU - 4: the only hint of the active MTU in sysfs.
    let mut mtu_hint: HashMap<(&str, PortNum), Mtu> = HashMap::new();
    for nd in &scan.netdevs {
        if let (Some((d, p)), Some(m)) = (nd.locate(&scan.devices), nd.mtu) {
            let datagram = nd.mode.as_deref().is_none_or(|m| m == "datagram");
            if let (true, Some(mtu)) = (datagram, m.checked_add(4).and_then(Mtu::from_bytes)) {
                mtu_hint.insert((d.name.as_str(), p), mtu);
            }
        }
    }

    for d in scan.devices.iter().filter(|d| !d.ports.is_empty()) {
        let port_guid = d
            .ports
            .first()
            .and_then(|p| p.gid)
            .map(|g| g.guid())
            .unwrap_or(d.node_guid);
        let info = NodeInfo {
            base_version: 1,
            class_version: 1,
            node_type: d.node_type.raw(),
            num_ports: d.num_ports,
            system_image_guid: d.sys_image_guid,
            node_guid: d.node_guid,
            port_guid,
            partition_cap: d
                .ports
                .first()
                .map(|p| u16::try_from(p.pkeys.len()).unwrap_or(u16::MAX))
                .unwrap_or(0),
            device_id: d.device_id,
            revision: d.revision,
            local_port_num: d.ports.first().map(|p| p.num.0).unwrap_or(0),
            // The EUI-64 company ID of the node GUID: sysfs has no VendorID.
            vendor_id: u32::try_from(d.node_guid.0 >> 40).unwrap_or(0),
        };
        let pma = d.ports.iter().find_map(|p| p.counters.as_ref()).map(|c| {
            let mut capability_mask = cap::IS_PORT_COUNTERS_XMIT_WAIT_SUPPORTED;
            capability_mask |= match c.rule {
                CounterWidthRule::Ietf64 | CounterWidthRule::CountersExt64 => {
                    cap::IS_EXTENDED_WIDTH_SUPPORTED
                }
                CounterWidthRule::Wide64 => cap::IS_EXTENDED_WIDTH_SUPPORTED_NO_IETF,
                CounterWidthRule::Legacy32 => 0,
            };
            Box::new(ClassPortInfo {
                base_version: 1,
                class_version: 1,
                capability_mask,
                ..ClassPortInfo::default()
            })
        });
        let ports = d
            .ports
            .iter()
            .map(|p| sysfs_port(p, mtu_hint.get(&(d.name.as_str(), p.num)).copied()))
            .collect();
        let node = Node {
            info,
            description: d.description().to_string(),
            ports: 0..0,
            switch: None,
            pma,
            sampling: None,
        };
        let ni = b.add_node(node, ports);
        let is_local = match local {
            None => local_idx.is_none(),
            Some(sel) => {
                sel == d.name
                    || sel == d.description()
                    || sel.parse::<Guid>().is_ok_and(|g| g == d.node_guid)
            }
        };
        if is_local && local_idx.is_none() {
            local_idx = Some(ni);
            b.local_ca = Some(d.name.clone());
        }
        let range = b
            .nodes
            .get(ni as usize)
            .map(|n| n.ports.clone())
            .unwrap_or(0..0);
        for (pi, p) in range.zip(d.ports.iter()) {
            if let Some(c) = &p.counters {
                b.set_readings(pi, c.readings.clone());
            }
            where_.insert((d.name.as_str(), p.num), pi);
        }
    }
    if let (None, Some(sel)) = (local_idx, local) {
        return Err(SysfsError::NoSuchLocalNode {
            wanted: sel.to_string(),
            have: scan
                .devices
                .iter()
                .map(|d| format!("{} ({}, {:?})", d.name, d.node_guid, d.node_desc))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    b.local_node = local_idx;
    for nd in &scan.netdevs {
        let Some((d, pn)) = nd.locate(&scan.devices) else {
            tracing::debug!(netdev = %nd.name, "IPoIB netdev over no known InfiniBand port");
            continue;
        };
        if let Some(pi) = where_.get(&(d.name.as_str(), pn)) {
            b.ipoib.push(IpoibInterface {
                port: *pi,
                name: nd.name.clone(),
                address: nd.address,
            });
        }
    }
    Ok(b)
}

/// A snapshot port from a sysfs port.
fn sysfs_port(p: &SysfsPort, mtu: Option<Mtu>) -> Port {
    let mut info = PortInfo {
        gid_prefix: p
            .gid
            .map(|g| g.prefix())
            .unwrap_or(Gid::DEFAULT_SUBNET_PREFIX),
        lid: p.lid,
        master_sm_lid: p.sm_lid,
        capability_mask: p.cap_mask,
        local_port_num: p.num.0,
        port_state: p.state.raw(),
        port_physical_state: p.phys_state.raw(),
        lmc: p.lmc,
        master_sm_sl: p.sm_sl,
        neighbor_mtu: mtu.map(|m| m.raw()).unwrap_or(0),
        ..PortInfo::default()
    };
    if let Some(r) = p.rate {
        info.link_width_active = r.width.raw();
        // FDR10 reads as QDR here: the snapshot has no MlnxExtPortInfo.
        let _fdr10 = info.set_link_speed(r.speed);
        // set_link_speed may add IsExtendedSpeedsSupported; sysfs's cap_mask is the truth.
        info.capability_mask = p.cap_mask
            | (info.capability_mask & crate::mad::smp::port_cap::IS_EXTENDED_SPEEDS_SUPPORTED);
    }
    let guid = p.gid.map(|g| g.guid()).unwrap_or(Guid(0));
    Port {
        node: 0,
        num: p.num,
        guid,
        info,
        remote: None,
        pkeys: Arc::from(p.pkeys.as_slice()),
        guids: Arc::from(vec![guid]),
        counters: None,
    }
}

/// The sysfs source: sweeps re-read sysfs; counters accumulate in the
/// model's [`CounterHistory`].
#[derive(Debug)]
pub struct SysfsSource {
    root: PathBuf,
    name: String,
    local_node: Option<String>,
    history: CounterHistory,
    number: u64,
    /// Ports whose counters were 64-bit by value (rule 3): sticky.
    wide: HashSet<(Guid, u8)>,
    /// Ports already warned about for saturated legacy counters.
    warned: HashSet<(Guid, u8)>,
    /// Non-InfiniBand ports already logged as left out.
    noted: HashSet<(Guid, u8)>,
    /// What was left out, logged once per cause.
    log: NoteLog,
    last: Option<SysfsScan>,
}

impl SysfsSource {
    /// A source reading `root` (`/` on a real host). Fails when `root` is
    /// not a directory; a missing or empty class directory fails each sweep.
    pub fn new(root: impl Into<PathBuf>) -> Result<Self, SysfsError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(SysfsError::NoRoot(root));
        }
        Ok(Self {
            name: format!("sysfs:{}", root.display()),
            root,
            local_node: None,
            history: CounterHistory::new(),
            number: 0,
            wide: HashSet::new(),
            warned: HashSet::new(),
            noted: HashSet::new(),
            log: NoteLog::default(),
            last: None,
        })
    }

    /// "This system" for IF-MIB: device name (`mlx5_0`), node GUID or node
    /// description. Default: the first device in name order.
    pub fn with_local_node(mut self, sel: Option<String>) -> Self {
        self.local_node = sel;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The last sweep's raw readings (vendor `hw_counters` included).
    pub fn last_scan(&self) -> Option<&SysfsScan> {
        self.last.as_ref()
    }

    /// Reads sysfs once (updating the sticky 64-bit memory).
    pub fn scan(&mut self) -> Result<SysfsScan, SysfsError> {
        let wide = &self.wide;
        let s = scan(&self.root, &|g, p| wide.contains(&(g, p)))?;
        for d in &s.devices {
            for (n, ll) in &d.skipped {
                if self.noted.insert((d.node_guid, *n)) {
                    info!(device = %d.name, port = n, why = %ll, "not an InfiniBand port (RoCE, iWARP?); left out");
                }
            }
            for p in &d.ports {
                let Some(c) = &p.counters else { continue };
                let key = (d.node_guid, p.num.0);
                if c.rule == CounterWidthRule::Wide64 {
                    self.wide.insert(key);
                }
                if c.saturated && self.warned.insert(key) {
                    warn!(
                        device = %d.name,
                        port = p.num.0,
                        "legacy 32-bit data/packet counters are saturated; their totals stall until someone resets them (this kernel/HCA shows no 64-bit counters)"
                    );
                }
            }
        }
        Ok(s)
    }

    /// One sweep into a snapshot.
    pub fn sweep_snapshot(&mut self) -> Result<Snapshot, SysfsError> {
        let time = SystemTime::now();
        let t0 = Instant::now();
        let mut s = self.scan()?;
        let b = match to_builder(&s, self.local_node.as_deref()) {
            Ok(b) => b,
            // The local device went away after an earlier sweep: serve the
            // others (a wrong --local-node still fails the first sweep).
            Err(SysfsError::NoSuchLocalNode { wanted, .. }) if self.number > 0 => {
                s.notes.push(Note::new(
                    NoteKind::LocalNodeAbsent,
                    wanted,
                    "not among this host's devices",
                ));
                let mut b = to_builder(&s, None)?;
                b.local_node = None;
                b.local_ca = None;
                b
            }
            Err(e) => return Err(e),
        };
        self.log.update(&s.notes);
        self.number += 1;
        let snap = b.build(
            SweepInfo {
                number: self.number,
                time,
                duration: t0.elapsed(),
                source: self.name.clone(),
                cost: Default::default(),
            },
            &mut self.history,
        );
        self.last = Some(s);
        Ok(snap)
    }
}

impl From<SysfsError> for SourceError {
    fn from(e: SysfsError) -> Self {
        match e {
            SysfsError::NoSuchLocalNode { wanted, have } => SourceError::NoSuchLocalNode {
                wanted,
                have: format!("this host's devices ({have})"),
            },
            e => SourceError::Fabric(e.to_string()),
        }
    }
}

impl Source for SysfsSource {
    fn sweep(&mut self) -> Result<Snapshot, SourceError> {
        Ok(self.sweep_snapshot()?)
    }

    /// Only reads: PortCounters of a local port, straight from sysfs. The
    /// kernel offers no counter writes, and there is no fabric to fault.
    fn control(&mut self, op: ControlOp) -> Result<ControlReply, SourceError> {
        match op {
            ControlOp::GetPortCounters { node, port } => {
                let s = self.scan()?;
                let d = s
                    .devices
                    .iter()
                    .find(|d| d.node_guid == node)
                    .ok_or(SourceError::NoSuchNode(node))?;
                let p = d
                    .ports
                    .iter()
                    .find(|p| p.num == port)
                    .ok_or(SourceError::NoSuchPort(node, port))?;
                let c = p.counters.as_ref().ok_or_else(|| {
                    SourceError::Unsupported(format!(
                        "{} port {} has no counters in sysfs",
                        d.name, port
                    ))
                })?;
                Ok(ControlReply::PortCounters(c.readings.counters.clone()))
            }
            other => Err(SourceError::Unsupported(format!(
                "the sysfs source is read-only (use --source umad for PMA Sets): {other:?}"
            ))),
        }
    }
}
