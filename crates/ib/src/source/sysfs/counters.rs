//! A port's PMA counters as the kernel shows them (`counters/`,
//! `counters_ext/`) and the vendor's extras (`hw_counters/`).
//!
//! The kernel fills `counters/` from the PMA: the error counters always from
//! PortCounters (their IBA widths: they saturate), and `port_xmit_data`,
//! `port_rcv_data`, `port_xmit_packets`, `port_rcv_packets` from
//! PortCountersExtended (64 bits) when the PMA's ClassPortInfo says it has
//! them, else from PortCounters (32 bits, saturating). Data counters stay in
//! IBA's 4-octet units; the model converts them once.
//!
//! The 64-bit rule, first match wins (see docs/sysfs.md):
//! 1. `counters_ext/` exists (older kernels/OFED): its `*_64` and
//!    unicast/multicast files are the 64-bit data and packet counters;
//! 2. `counters/` has `unicast_xmit_packets`, `unicast_rcv_packets`,
//!    `multicast_xmit_packets` or `multicast_rcv_packets`: the kernel chose
//!    its extended (IETF) group, so the four data/packet files are 64-bit;
//! 3. one of the four data/packet values exceeds 2^32-1, or did on an earlier
//!    sweep of this port: the kernel's extended group without the IETF
//!    counters (64-bit data/packets, no unicast/multicast);
//! 4. otherwise the legacy 32-bit PortCounters values (saturating).
//!
//! A port whose counter files cannot all be read (`N/A (no PMA)`, a refused
//! read, text that is not a number) has no counters this sweep: the model
//! keeps its last totals, where a 0 would read as a reset.

use super::attr::{list_dir, parse_dec_u64, read_opt, SysfsError};
use super::notes::{Note, NoteKind};
use crate::mad::pma::{PortCounters, PortCountersExtended};
use crate::mad::port_counters::PORT_COUNTERS;
use crate::model::{ExtendedFields, PortReadings};
use std::collections::BTreeMap;
use std::path::Path;
use tracing::debug;

/// Where a port's 64-bit (or not) data and packet counters came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CounterWidthRule {
    /// Rule 1: `counters_ext/*_64`.
    CountersExt64,
    /// Rule 2: `counters/` is the kernel's extended group with IETF counters.
    Ietf64,
    /// Rule 3: 64-bit by value (the kernel's extended group without IETF counters).
    Wide64,
    /// Rule 4: legacy 32-bit PortCounters values, which saturate.
    Legacy32,
}

impl CounterWidthRule {
    pub fn is_64(self) -> bool {
        self != CounterWidthRule::Legacy32
    }
}

/// What one sweep read from a port's counter files.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterFiles {
    pub readings: PortReadings,
    pub rule: CounterWidthRule,
    /// Legacy 32-bit data/packet counters stuck at 2^32-1: totals stall until
    /// someone resets them.
    pub saturated: bool,
}

/// Reads counter files, remembering the first that could not be read:
/// then the port's counters are absent (never 0, which the accumulators
/// would take for a reset).
#[derive(Default)]
struct Reader {
    trouble: Option<String>,
}

impl Reader {
    /// `Ok(None)` when the file does not exist or could not be read (the
    /// kernel answers EINVAL when the PMA query fails, and writes `N/A (no
    /// PMA)` for a device without a PMA); an error only when the device is gone.
    fn get(&mut self, dir: &Path, name: &str) -> Result<Option<u64>, SysfsError> {
        let path = dir.join(name);
        let text = match read_opt(&path) {
            Ok(Some(s)) => s,
            Ok(None) => return Ok(None),
            Err(e) if e.device_gone() => return Err(e),
            Err(e) => {
                self.trouble.get_or_insert(e.to_string());
                return Ok(None);
            }
        };
        match parse_dec_u64(&path, &text) {
            Ok(v) => Ok(Some(v)),
            // The kernel's text for a device whose driver has no PMA.
            Err(_) if text.starts_with("N/A") => {
                self.trouble.get_or_insert(format!(
                    "{}: {text:?} (the kernel cannot read this device's counters)",
                    path.display()
                ));
                Ok(None)
            }
            Err(e) => {
                self.trouble.get_or_insert(e.to_string());
                Ok(None)
            }
        }
    }

    /// A counter whose file may not exist on older kernels: 0 then.
    fn val(&mut self, dir: &Path, name: &str) -> Result<u64, SysfsError> {
        Ok(self.get(dir, name)?.unwrap_or(0))
    }
}

/// The kernel's `counters/` file of each [`PORT_COUNTERS`] entry, in its
/// order (CounterSelect bits, then PortXmitWait).
const COUNTER_FILES: [&str; 17] = [
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_discards",
    "port_xmit_constraint_errors",
    "port_rcv_constraint_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "VL15_dropped",
    "port_xmit_data",
    "port_rcv_data",
    "port_xmit_packets",
    "port_rcv_packets",
    "port_xmit_wait",
];

/// Reads `port_dir/counters` (and `counters_ext`). `None` when the port has
/// no `counters/` directory, or when a counter in it could not be read
/// (noted about `subject`). `known_wide`: rule 3 held on an earlier sweep.
pub fn read_counters(
    port_dir: &Path,
    port_num: u8,
    known_wide: bool,
    subject: &str,
    notes: &mut Vec<Note>,
) -> Result<Option<CounterFiles>, SysfsError> {
    let cdir = port_dir.join("counters");
    let names = match list_dir(&cdir) {
        Ok(Some(n)) => n,
        Ok(None) => return Ok(None),
        Err(e) if e.device_gone() => return Err(e),
        Err(e) => {
            notes.push(Note::new(NoteKind::CountersAbsent, subject, e));
            return Ok(None);
        }
    };
    let mut r = Reader::default();
    let c = cdir.as_path();

    // PortCounters at its IBA widths (what a PMA Get(PortCounters) would
    // show: counters/ holds the same values as the extended ones, or the
    // 32-bit ones beside counters_ext/); the values as read beside.
    let mut pc = PortCounters {
        port_select: port_num,
        ..PortCounters::default()
    };
    let mut read = [0u64; 17];
    for ((f, file), v) in PORT_COUNTERS.iter().zip(COUNTER_FILES).zip(&mut read) {
        *v = r.val(c, file)?;
        (f.set)(&mut pc, (*v).min(f.max()));
    }
    let [.., xmit_data, rcv_data, xmit_pkts, rcv_pkts, _] = read;

    let edir = port_dir.join("counters_ext");
    let ietf = [
        "unicast_xmit_packets",
        "unicast_rcv_packets",
        "multicast_xmit_packets",
        "multicast_rcv_packets",
    ];
    let wide = [xmit_data, rcv_data, xmit_pkts, rcv_pkts]
        .iter()
        .any(|v| *v > u64::from(u32::MAX));

    let (rule, ext) = if edir.is_dir() {
        let e = edir.as_path();
        let ext = PortCountersExtended {
            port_select: port_num,
            port_xmit_data: r.val(e, "port_xmit_data_64")?,
            port_rcv_data: r.val(e, "port_rcv_data_64")?,
            port_xmit_pkts: r.val(e, "port_xmit_packets_64")?,
            port_rcv_pkts: r.val(e, "port_rcv_packets_64")?,
            port_unicast_xmit_pkts: r.val(e, "port_unicast_xmit_packets")?,
            port_unicast_rcv_pkts: r.val(e, "port_unicast_rcv_packets")?,
            port_multicast_xmit_pkts: r.val(e, "port_multicast_xmit_packets")?,
            port_multicast_rcv_pkts: r.val(e, "port_multicast_rcv_packets")?,
            ..PortCountersExtended::default()
        };
        let fields = if r.get(e, "port_unicast_xmit_packets")?.is_some() {
            ExtendedFields::Ietf
        } else {
            ExtendedFields::Basic
        };
        (CounterWidthRule::CountersExt64, Some((ext, fields)))
    } else {
        let has_ietf = ietf.iter().any(|n| names.iter().any(|x| x == n));
        let rule = if has_ietf {
            CounterWidthRule::Ietf64
        } else if wide || known_wide {
            CounterWidthRule::Wide64
        } else {
            CounterWidthRule::Legacy32
        };
        let ext = if rule.is_64() {
            Some(PortCountersExtended {
                port_select: port_num,
                port_xmit_data: xmit_data,
                port_rcv_data: rcv_data,
                port_xmit_pkts: xmit_pkts,
                port_rcv_pkts: rcv_pkts,
                port_unicast_xmit_pkts: r.val(c, "unicast_xmit_packets")?,
                port_unicast_rcv_pkts: r.val(c, "unicast_rcv_packets")?,
                port_multicast_xmit_pkts: r.val(c, "multicast_xmit_packets")?,
                port_multicast_rcv_pkts: r.val(c, "multicast_rcv_packets")?,
                ..PortCountersExtended::default()
            })
            .map(|e| {
                let fields = if rule == CounterWidthRule::Ietf64 {
                    ExtendedFields::Ietf
                } else {
                    ExtendedFields::Basic
                };
                (e, fields)
            })
        } else {
            None
        };
        (rule, ext)
    };

    if let Some(cause) = r.trouble {
        notes.push(Note::new(NoteKind::CountersAbsent, subject, cause));
        return Ok(None);
    }
    let saturated = rule == CounterWidthRule::Legacy32
        && [
            pc.port_xmit_data,
            pc.port_rcv_data,
            pc.port_xmit_pkts,
            pc.port_rcv_pkts,
        ]
        .contains(&u32::MAX);
    Ok(Some(CounterFiles {
        readings: PortReadings {
            counters: pc,
            extended_fields: ext.as_ref().map(|e| e.1).unwrap_or_default(),
            extended: ext.map(|e| e.0),
            ..PortReadings::default()
        },
        rule,
        saturated,
    }))
}

/// `hw_counters/`: the vendor's extra counters by name (`lifespan` is a
/// setting, not a counter). Unreadable or non-numeric entries are left out;
/// an error only when the device is gone.
pub fn read_hw_counters(port_dir: &Path) -> Result<BTreeMap<String, u64>, SysfsError> {
    let dir = port_dir.join("hw_counters");
    let mut out = BTreeMap::new();
    let names = match list_dir(&dir) {
        Ok(n) => n.unwrap_or_default(),
        Err(e) if e.device_gone() => return Err(e),
        Err(e) => {
            debug!(error = %e, "vendor counters left out");
            return Ok(out);
        }
    };
    for n in names.into_iter().filter(|n| n != "lifespan") {
        let path = dir.join(&n);
        match read_opt(&path).map(|t| t.map(|t| parse_dec_u64(&path, &t))) {
            Ok(Some(Ok(v))) => {
                out.insert(n, v);
            }
            Ok(None) => {}
            Err(e) if e.device_gone() => return Err(e),
            Ok(Some(Err(e))) | Err(e) => debug!(error = %e, "vendor counter left out"),
        }
    }
    Ok(out)
}
