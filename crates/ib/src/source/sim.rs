//! The built-in simulated fabric.
//!
//! A topology (the built-in default of 4 switches and 8 hosts, or a file) is
//! brought up once as a master SM would: deterministic GUIDs (ibsim's), LIDs
//! assigned in breadth-first order from the SM's node (LMC honoured, LIDs given
//! in the file kept), min-hop routing into linear forwarding tables, SMInfo of
//! the master, the default partition with every port and the IPoIB broadcast
//! group. Each sweep then reads counters from a seeded traffic model that is a
//! pure function of elapsed time (so counters follow the real clock between
//! sweeps and cost nothing between them); link flaps, error bursts, counter
//! Sets and sampling runs are the only state kept, per port that has them.
//!
//! - [`fabric`]: bring-up (LIDs, routing, SM records);
//! - [`traffic`]: the traffic and error model and PortCounters-family readings;
//! - [`sampling`]: PortSamplesControl/Result state machine.

mod fabric;
mod sampling;
mod services;
mod traffic;

use crate::mad::pma::{counter_select, PortCounters, PortSamplesControl};
use crate::model::snapshot::{Sampling, SweepInfo};
use crate::model::{CounterHistory, NodeIdx, PortIdx, Snapshot, SnapshotBuilder};
use crate::source::{ControlOp, ControlReply, Source, SourceError};
use crate::topology::{parse_file, parse_str, Topology};
use crate::types::{Guid, NodeType, PortNum};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

pub use fabric::{choose_local_node, Fabric};
pub use traffic::TrafficModel;

/// The built-in default fabric: 8 single-port hosts on two leaf switches,
/// each leaf linked to two spines, every link 4x HDR. The first node (node01)
/// is "this system" unless `--local-node` says otherwise.
pub const DEFAULT_TOPOLOGY: &str = include_str!("sim/default.net");

/// How to build a simulated fabric.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Seed of the traffic model.
    pub seed: u64,
    /// `--local-node` (name, description or GUID); default: the first node.
    pub local_node: Option<String>,
    /// LMC given to CA ports (0-7).
    pub lmc: u8,
    /// Name in SweepInfo::source.
    pub source_name: String,
    /// Drive the clock by hand ([`SimSource::advance_clock`]) instead of real time.
    pub manual_clock: bool,
    /// Partitions as an OpenSM partitions.conf text; None: the default
    /// partition (every end port full) and its IPoIB group.
    pub partitions: Option<String>,
    /// Services registered with the SA, one per line (`NAME SERVICE_ID
    /// PORT_GUID [pkey=..] [lease=..]`); None: none.
    pub services: Option<String>,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            local_node: None,
            lmc: 0,
            source_name: "sim".to_string(),
            manual_clock: false,
            partitions: None,
            services: None,
        }
    }
}

enum Clock {
    Real(Instant),
    Manual(Duration),
}

/// Down intervals of a port (seconds since start), for link flaps.
#[derive(Debug, Clone, Default)]
pub(crate) struct PortFaults {
    pub down: Vec<(f64, f64)>,
    /// Extra counts from error bursts, added to the model's (by PortCounters index).
    pub burst_symbol: u64,
    /// Counters set by PMA Set(PortCounters): (underlying count at the Set, value set).
    pub set: [Option<(u64, u64)>; traffic::PC_COUNT],
}

/// The simulated fabric as a [`Source`].
pub struct SimSource {
    fabric: Fabric,
    model: TrafficModel,
    config: SimConfig,
    clock: Clock,
    started: SystemTime,
    sweeps: u64,
    history: CounterHistory,
    faults: HashMap<PortIdx, PortFaults>,
    sampling: HashMap<NodeIdx, sampling::Engine>,
}

impl SimSource {
    /// A simulated fabric over `topo`.
    pub fn new(topo: &Topology, config: SimConfig) -> Result<Self, SourceError> {
        let local = choose_local_node(topo, config.local_node.as_deref())?;
        let mut fabric = Fabric::build(topo, local, config.lmc)?;
        if let Some(text) = &config.partitions {
            let parts = crate::opensm::partitions::parse(text)
                .map_err(|e| SourceError::Invalid(format!("partitions {e}")))?;
            fabric.apply_partitions(&parts);
        }
        if let Some(text) = &config.services {
            fabric.apply_services(&services::parse(text)?)?;
        }
        let model = TrafficModel::new(&fabric, config.seed);
        let clock = if config.manual_clock {
            Clock::Manual(Duration::ZERO)
        } else {
            Clock::Real(Instant::now())
        };
        Ok(Self {
            fabric,
            model,
            config,
            clock,
            started: SystemTime::now(),
            sweeps: 0,
            history: CounterHistory::new(),
            faults: HashMap::new(),
            sampling: HashMap::new(),
        })
    }

    /// The built-in default fabric ([`DEFAULT_TOPOLOGY`]).
    pub fn default_fabric(config: SimConfig) -> Result<Self, SourceError> {
        let topo = parse_str(DEFAULT_TOPOLOGY, "built-in default fabric")?;
        Self::new(&topo, config)
    }

    /// A fabric from a topology file (`sim:FILE`).
    pub fn from_file(path: impl AsRef<Path>, mut config: SimConfig) -> Result<Self, SourceError> {
        let topo = parse_file(path.as_ref())?;
        if config.source_name == "sim" {
            config.source_name = format!("sim:{}", path.as_ref().display());
        }
        Self::new(&topo, config)
    }

    /// The static fabric (nodes, ports, LIDs, routes).
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// Moves a manual clock forward (no effect on a real clock).
    pub fn advance_clock(&mut self, d: Duration) {
        if let Clock::Manual(t) = &mut self.clock {
            *t += d;
        }
    }

    /// Seconds since the simulation started.
    fn now_secs(&self) -> f64 {
        match &self.clock {
            Clock::Real(i) => i.elapsed().as_secs_f64(),
            Clock::Manual(d) => d.as_secs_f64(),
        }
    }

    fn wall(&self, secs: f64) -> SystemTime {
        self.started + Duration::from_secs_f64(secs.max(0.0))
    }

    fn node_idx(&self, g: Guid) -> Result<NodeIdx, SourceError> {
        self.fabric
            .node_by_guid(g)
            .ok_or(SourceError::NoSuchNode(g))
    }

    fn port_idx(&self, g: Guid, p: PortNum) -> Result<PortIdx, SourceError> {
        let n = self.node_idx(g)?;
        self.fabric
            .node_port(n, p)
            .ok_or(SourceError::NoSuchPort(g, p))
    }

    /// Ports a PortSelect names: one port, or all of a node's (255) when its
    /// PMA supports AllPortSelect.
    fn selected_ports(&self, g: Guid, p: PortNum) -> Result<Vec<PortIdx>, SourceError> {
        let n = self.node_idx(g)?;
        if p == PortNum::ALL {
            if !self.fabric.all_port_select(n) {
                return Err(SourceError::Unsupported(format!(
                    "node {g}: PMA does not support AllPortSelect (PortSelect 255)"
                )));
            }
            return Ok(self.fabric.node_port_range(n).collect());
        }
        Ok(vec![self.port_idx(g, p)?])
    }

    fn port_counters_at(&self, p: PortIdx, t: f64) -> PortCounters {
        self.model
            .readings(&self.fabric, p, t, &self.faults)
            .counters
    }
}

impl Source for SimSource {
    fn sweep(&mut self) -> Result<Snapshot, SourceError> {
        let begun = Instant::now();
        let t = self.now_secs();
        self.sweeps += 1;
        let time = self.wall(t);
        let mut b: SnapshotBuilder = self.fabric.builder(t, &self.faults);
        for (n, e) in &self.sampling {
            if let Some(node) = b.nodes.get_mut(*n as usize) {
                let (control, result) = e.state_at(&self.model, &self.fabric, t, &self.faults);
                node.sampling = Some(Box::new(Sampling { control, result }));
            }
        }
        for sm in &mut b.sms {
            sm.info.act_count = sm.info.act_count.wrapping_add(self.sweeps as u32);
        }
        let (model, fabric, faults) = (&self.model, &self.fabric, &self.faults);
        let mut snap = b.build_with(
            SweepInfo {
                number: self.sweeps,
                time,
                duration: Duration::ZERO,
                source: self.config.source_name.clone(),
                cost: Default::default(),
            },
            &mut self.history,
            |p| Some(model.readings(fabric, p, t, faults)),
        );
        snap.sweep.duration = begun.elapsed();
        Ok(snap)
    }

    fn control(&mut self, op: ControlOp) -> Result<ControlReply, SourceError> {
        let t = self.now_secs();
        match op {
            ControlOp::GetPortCounters { node, port } => {
                let ports = self.selected_ports(node, port)?;
                let mut agg: Option<PortCounters> = None;
                for p in ports {
                    let c = self.port_counters_at(p, t);
                    agg = Some(match agg {
                        None => c,
                        Some(a) => traffic::add_counters(&a, &c),
                    });
                }
                let mut c = agg.unwrap_or_default();
                c.port_select = port.0;
                Ok(ControlReply::PortCounters(c))
            }
            ControlOp::SetPortCounters {
                node,
                port,
                counter_select,
                counter_select2,
                values,
            } => {
                let ports = self.selected_ports(node, port)?;
                for p in &ports {
                    let under = self.model.underlying(&self.fabric, *p, t, &self.faults);
                    let f = self.faults.entry(*p).or_default();
                    for (i, slot) in f.set.iter_mut().enumerate() {
                        let selected = if i < 16 {
                            counter_select & (1 << i) != 0
                        } else {
                            counter_select2 & counter_select::SELECT2_PORT_XMIT_WAIT != 0
                        };
                        if selected {
                            let u = under.get(i).copied().unwrap_or(0);
                            *slot = Some((u, traffic::pc_value(&values, i)));
                        }
                    }
                }
                self.control(ControlOp::GetPortCounters { node, port })
            }
            ControlOp::SetPortSamplesControl { node, control } => {
                let n = self.node_idx(node)?;
                let tick = self.fabric.sample_tick_secs();
                let e = self
                    .sampling
                    .entry(n)
                    .or_insert_with(|| sampling::Engine::new(n));
                e.set(&control, t, tick);
                let (c, _) = e.state_at(&self.model, &self.fabric, t, &self.faults);
                Ok(ControlReply::PortSamplesControl(c))
            }
            ControlOp::SimLinkFlap {
                node,
                port,
                down_for,
            } => {
                let p = self.port_idx(node, port)?;
                let remote = self.fabric.remote(p).ok_or_else(|| {
                    SourceError::Invalid(format!("node {node} port {}: no link to flap", port.0))
                })?;
                let until = t + down_for.as_secs_f64();
                for q in [p, remote] {
                    self.faults.entry(q).or_default().down.push((t, until));
                }
                Ok(ControlReply::Done)
            }
            ControlOp::SimErrorBurst { node, port, count } => {
                let p = self.port_idx(node, port)?;
                if self.fabric.node_type_of_port(p) == Some(NodeType::Switch) && port.0 == 0 {
                    return Err(SourceError::Invalid(
                        "switch port 0 has no physical link".into(),
                    ));
                }
                let f = self.faults.entry(p).or_default();
                f.burst_symbol = f.burst_symbol.saturating_add(u64::from(count));
                Ok(ControlReply::Done)
            }
            // No SA here: paths come from the snapshot's forwarding tables.
            ControlOp::SetPortInfo { .. } => Err(SourceError::Unsupported(
                "PortInfo writes need --source umad (the simulator's links are flapped with ctl)"
                    .into(),
            )),
            ControlOp::SaPathRecords { .. } | ControlOp::SaMultiPathRecords { .. } => {
                Err(SourceError::Unsupported(
                    "the simulator has no SA: paths are computed from its routing".into(),
                ))
            }
        }
    }
}

/// PortSamplesControl with only what a Set carries (for tests and the MIB layer).
pub fn samples_request(
    port: PortNum,
    start_ticks: u32,
    interval_ticks: u32,
    tag: u16,
    selects: &[u16],
) -> PortSamplesControl {
    let mut c = PortSamplesControl {
        port_select: port.0,
        sample_start: start_ticks,
        sample_interval: interval_ticks,
        tag,
        ..PortSamplesControl::default()
    };
    for (slot, s) in c.counter_select.iter_mut().zip(selects) {
        *slot = *s;
    }
    c
}
