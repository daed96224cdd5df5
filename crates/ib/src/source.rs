//! Sources sweep a fabric into [`Snapshot`]s and carry out control operations
//! (PMA Sets, simulator faults).
//!
//! A source is blocking: the daemon runs each one on its own thread and
//! serialises control operations with sweeps, so [`Source::control`] is the one
//! path every SNMP Set takes to the fabric.
//!
//! - [`sim`]: the built-in simulated fabric (the default);
//! - umad (MADs through libibumad) and sysfs (a host's own ports) are written
//!   by their own modules and plugged into [`open`].

pub mod demand;
pub mod sim;
pub mod sysfs;
pub mod umad;

use crate::mad::pma::{PortCounters, PortSamplesControl};
use crate::model::Snapshot;
use crate::types::{Guid, PortNum};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// Why a sweep or control operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("no node with GUID {0}")]
    NoSuchNode(Guid),
    #[error("node {0} has no port {1}")]
    NoSuchPort(Guid, PortNum),
    /// The operation is valid but this source or PMA cannot do it.
    #[error("not supported: {0}")]
    Unsupported(String),
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// The local node asked for (`local_node`) is not there.
    #[error("no node {wanted:?} (by name, node description or GUID) in {have}")]
    NoSuchLocalNode { wanted: String, have: String },
    #[error(transparent)]
    Topology(#[from] crate::topology::TopologyError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A MAD or transport failure (umad).
    #[error("{0}")]
    Fabric(String),
    /// A source of this host's hardware on a host without any (umad,
    /// sysfs): what is missing, the same for both.
    #[error("{0}; to try the agent without hardware: --source sim")]
    NoHardware(String),
}

/// A change or live query the daemon's control path sends to a source.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlOp {
    /// PMA Get(PortCounters) of `port` (255 = all ports, when AllPortSelect is supported).
    GetPortCounters { node: Guid, port: PortNum },
    /// PMA Set(PortCounters): the counters selected by `counter_select`
    /// (bit per counter, IBA table 182) and `counter_select2` (bit 0: PortXmitWait)
    /// take the values in `values` (0 clears). `port` 255 = all ports.
    SetPortCounters {
        node: Guid,
        port: PortNum,
        counter_select: u16,
        counter_select2: u8,
        values: PortCounters,
    },
    /// PMA Set(PortSamplesControl): OpCode, PortSelect, SampleStart,
    /// SampleInterval, Tag and CounterSelect0..14 are taken from `control`.
    SetPortSamplesControl {
        node: Guid,
        control: PortSamplesControl,
    },
    /// Simulator: take the link at (node, port) down for `down_for`, then up again.
    SimLinkFlap {
        node: Guid,
        port: PortNum,
        down_for: Duration,
    },
    /// Simulator: `count` symbol errors at (node, port), with the link error
    /// recoveries, receive errors and local physical errors they cause.
    SimErrorBurst {
        node: Guid,
        port: PortNum,
        count: u32,
    },
    /// SA GetTable(PathRecord) to the master SM: the records matching
    /// `template` in the components of `comp_mask` (IBA 15.2.5.16). Sources
    /// without an SA answer Unsupported (the caller computes the paths from
    /// the snapshot's forwarding tables instead).
    SaPathRecords {
        template: Box<crate::mad::sa::PathRecord>,
        comp_mask: u64,
    },
    /// SMP Set(PortInfo) of `port` of `node` (IBA 14.2.5.6), as ibportstate
    /// sends it: `info` is the port's PortInfo with the fields to change set
    /// and the state fields that are not to change at 0 (NoStateChange).
    SetPortInfo {
        node: Guid,
        port: PortNum,
        info: Box<crate::mad::smp::PortInfo>,
    },
    /// SA GetMulti(MultiPathRecord) to the master SM (IBA 15.2.5.20): the
    /// PathRecords joining the record's source and destination GIDs. SMs
    /// without MultiPathRecord answer with an error status.
    SaMultiPathRecords {
        record: Box<crate::mad::sa::MultiPathRecord>,
        comp_mask: u64,
    },
}

impl ControlOp {
    /// Whether the operation may change what a sweep reads (then the
    /// caller sweeps after it so the next reader sees the effect). SA
    /// queries only read.
    pub fn changes_fabric(&self) -> bool {
        !matches!(
            self,
            ControlOp::SaPathRecords { .. } | ControlOp::SaMultiPathRecords { .. }
        )
    }
}

/// One line for logs: what is done to which port, GUIDs in hex; never a
/// key (M_Key, SM_Key) or a whole attribute.
impl std::fmt::Display for ControlOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlOp::GetPortCounters { node, port } => {
                write!(f, "Get(PortCounters) {node} port {}", port.0)
            }
            ControlOp::SetPortCounters {
                node,
                port,
                counter_select,
                counter_select2,
                ..
            } => write!(
                f,
                "Set(PortCounters) {node} port {} CounterSelect 0x{counter_select:04x} CounterSelect2 0x{counter_select2:02x}",
                port.0
            ),
            ControlOp::SetPortSamplesControl { node, control } => write!(
                f,
                "Set(PortSamplesControl) {node} port {} OpCode {} SampleInterval {} Tag {}",
                control.port_select, control.op_code, control.sample_interval, control.tag
            ),
            ControlOp::SimLinkFlap {
                node,
                port,
                down_for,
            } => write!(
                f,
                "link flap {node} port {} for {:?}",
                port.0, down_for
            ),
            ControlOp::SimErrorBurst { node, port, count } => {
                write!(f, "error burst {node} port {}: {count} symbol errors", port.0)
            }
            ControlOp::SaPathRecords { comp_mask, .. } => {
                write!(f, "SA PathRecord query (ComponentMask 0x{comp_mask:x})")
            }
            ControlOp::SaMultiPathRecords { record, comp_mask } => write!(
                f,
                "SA MultiPathRecord query of {} GIDs (ComponentMask 0x{comp_mask:x})",
                record.len()
            ),
            ControlOp::SetPortInfo { node, port, info } => write!(
                f,
                "Set(PortInfo) {node} port {}: PortState {} PortPhysicalState {} LinkWidthEnabled 0x{:x} LinkSpeedEnabled 0x{:x}",
                port.0,
                info.port_state,
                info.port_physical_state,
                info.link_width_enabled,
                info.link_speed_enabled
            ),
        }
    }
}

/// What a control operation returns (the PMA's GetResp where there is one).
#[derive(Debug, Clone, PartialEq)]
pub enum ControlReply {
    PortCounters(PortCounters),
    PortSamplesControl(PortSamplesControl),
    PathRecords(Vec<crate::mad::sa::PathRecord>),
    /// The SMA's answer to a Set(PortInfo).
    PortInfo(Box<crate::mad::smp::PortInfo>),
    Done,
}

/// A source of snapshots.
pub trait Source: Send {
    /// One sweep of the fabric: a new snapshot (counter totals continue from the
    /// previous sweep of this source).
    fn sweep(&mut self) -> Result<Snapshot, SourceError>;
    /// A control operation, serialised with sweeps by the caller.
    fn control(&mut self, op: ControlOp) -> Result<ControlReply, SourceError>;
    /// When the source next needs [`Source::wake`] between sweeps (timers,
    /// e.g. software sampling); None: no timer pending.
    fn wake_at(&self) -> Option<std::time::Instant> {
        None
    }
    /// Runs the timers due by now; true when what a snapshot shows changed
    /// (the caller then sweeps to publish it).
    fn wake(&mut self) -> bool {
        false
    }
    /// Where consumers say what they read of other nodes now, for a source
    /// that reads it for them (umad: node contexts' detail attributes);
    /// None: the source reads everything it has anyway.
    fn demand(&self) -> Option<std::sync::Arc<demand::Demand>> {
        None
    }
}

/// `--source` as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// `sim` (built-in default fabric) or `sim:FILE` (a topology file).
    Sim { file: Option<PathBuf> },
    /// `umad[:CA[:PORT]]`.
    Umad {
        ca: Option<String>,
        port: Option<u8>,
    },
    /// `sysfs[:ROOT]` (ROOT defaults to /).
    Sysfs { root: PathBuf },
}

/// A `--source` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid source {input:?}: {reason} (expected sim, sim:FILE, umad[:CA[:PORT]] or sysfs[:ROOT])"
)]
pub struct SourceSpecError {
    pub input: String,
    pub reason: String,
}

impl FromStr for SourceSpec {
    type Err = SourceSpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| SourceSpecError {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let (kind, rest) = match s.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (s, None),
        };
        match kind {
            "sim" => match rest {
                None => Ok(SourceSpec::Sim { file: None }),
                Some("") => Err(err("sim: expects a topology file after ':'")),
                Some(f) => Ok(SourceSpec::Sim {
                    file: Some(PathBuf::from(f)),
                }),
            },
            "umad" => {
                let Some(rest) = rest else {
                    return Ok(SourceSpec::Umad {
                        ca: None,
                        port: None,
                    });
                };
                let (ca, port) = match rest.split_once(':') {
                    Some((c, p)) => (c, Some(p)),
                    None => (rest, None),
                };
                if ca.is_empty() {
                    return Err(err(
                        "umad: expects a CA name after ':' (e.g. umad:mlx5_0:1)",
                    ));
                }
                let port = port
                    .map(|p| {
                        p.parse::<u8>()
                            .ok()
                            .filter(|p| (1..=254).contains(p))
                            .ok_or_else(|| err("umad: the port must be a number from 1 to 254"))
                    })
                    .transpose()?;
                Ok(SourceSpec::Umad {
                    ca: Some(ca.to_string()),
                    port,
                })
            }
            "sysfs" => match rest {
                None => Ok(SourceSpec::Sysfs {
                    root: PathBuf::from("/"),
                }),
                Some("") => Err(err("sysfs: expects a root directory after ':'")),
                Some(r) => Ok(SourceSpec::Sysfs {
                    root: PathBuf::from(r),
                }),
            },
            "" => Err(err("empty source")),
            other => Err(err(&format!("unknown source kind {other:?}"))),
        }
    }
}

impl std::fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceSpec::Sim { file: None } => write!(f, "sim"),
            SourceSpec::Sim { file: Some(p) } => write!(f, "sim:{}", p.display()),
            SourceSpec::Umad { ca: None, .. } => write!(f, "umad"),
            SourceSpec::Umad {
                ca: Some(c),
                port: None,
            } => write!(f, "umad:{c}"),
            SourceSpec::Umad {
                ca: Some(c),
                port: Some(p),
            } => write!(f, "umad:{c}:{p}"),
            SourceSpec::Sysfs { root } => write!(f, "sysfs:{}", root.display()),
        }
    }
}

/// Options every source takes.
#[derive(Debug, Clone, Default)]
pub struct SourceOptions {
    /// `--local-node NAME|GUID`: "this system" for IF-MIB (sim: default first node).
    pub local_node: Option<String>,
    /// Seed of the simulator's traffic model (reproducible runs).
    pub seed: u64,
    /// The umad source's options (config `[umad]`).
    pub umad: umad::UmadOptions,
    /// The simulator's partitions, from an OpenSM partitions.conf-style file
    /// (None: the default partition only).
    pub sim_partitions: Option<std::path::PathBuf>,
    /// The simulator's SA services, one per line (None: none).
    pub sim_services: Option<std::path::PathBuf>,
}

/// Opens the source a spec names.
pub fn open(spec: &SourceSpec, opts: &SourceOptions) -> Result<Box<dyn Source>, SourceError> {
    match spec {
        SourceSpec::Sim { file } => {
            let read = |path: &Option<std::path::PathBuf>| -> Result<_, SourceError> {
                path.as_ref()
                    .map(|p| {
                        std::fs::read_to_string(p).map_err(|e| {
                            SourceError::Invalid(format!("{}: cannot read: {e}", p.display()))
                        })
                    })
                    .transpose()
            };
            let cfg = sim::SimConfig {
                seed: opts.seed,
                local_node: opts.local_node.clone(),
                partitions: read(&opts.sim_partitions)?,
                services: read(&opts.sim_services)?,
                ..sim::SimConfig::default()
            };
            let s = match file {
                Some(f) => sim::SimSource::from_file(f, cfg)?,
                None => sim::SimSource::default_fabric(cfg)?,
            };
            Ok(Box::new(s))
        }
        // The umad and sysfs sources plug in here when their modules land.
        // PMAs without PortSamplesControl get IB-PM-MIB sampling in software.
        // Without RDMA devices libibumad's own error misleads (it invents
        // a CA name): the sysfs class directory it reads says what is
        // missing, as the sysfs source says it.
        SourceSpec::Umad { ca, port } => {
            let umad =
                umad::UmadSource::open(ca.as_deref(), *port, opts.umad.clone()).map_err(|e| {
                    match sysfs::require_devices(&opts.umad.sysfs_root) {
                        Err(none) => SourceError::NoHardware(none.to_string()),
                        Ok(()) => e.into(),
                    }
                })?;
            Ok(Box::new(sampler::SoftSampling::new(umad)))
        }
        SourceSpec::Sysfs { root } => {
            let source = sysfs::SysfsSource::new(root)?;
            sysfs::require_devices(root).map_err(|e| SourceError::NoHardware(e.to_string()))?;
            Ok(Box::new(source.with_local_node(opts.local_node.clone())))
        }
    }
}
pub mod sample_run;
pub mod sampler;
