//! Steering the OpenSM of the `[opensm]` section: IB-SM-MIB Sets of the
//! SM's settings ([`mibs::ib_sm_set`]) become edits of its configuration
//! file, then a console command (`priority N` at once; `resweep heavy`, on
//! which OpenSM re-reads the file), or a SIGHUP to the pid in `pid_file`
//! when there is no console. Without either, the file is edited and the
//! change waits for OpenSM's next start (said in the log).

pub mod conf;
pub mod console;
pub mod partitions;

use std::path::PathBuf;
use std::time::Duration;

use mibs::ib_sm_set::{PartitionOp, SmConfigSet, SmSetting};
use tracing::{info, warn};

/// The `[opensm]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSmSettings {
    /// opensm.conf (`conf`).
    pub conf: PathBuf,
    /// partitions.conf (`partitions`), for partition configuration.
    pub partitions: Option<PathBuf>,
    /// OpenSM's console (`console`, `HOST:PORT` of `--console loopback`).
    pub console: Option<std::net::SocketAddr>,
    /// A command that restarts OpenSM (`restart`), for options it reads only
    /// at start.
    pub restart: Option<String>,
    /// OpenSM's pid file (`pid_file`): SIGHUP makes it re-read its files.
    pub pid_file: Option<PathBuf>,
    /// Commands that start and stop OpenSM (`start`, `stop`), for
    /// ibSmConfigAdminSMState.
    pub start: Option<String>,
    pub stop: Option<String>,
}

/// How long a console command may take.
const CONSOLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Applies SM setting changes to one OpenSM.
#[derive(Debug)]
pub struct OpenSmControl {
    s: OpenSmSettings,
}

impl OpenSmControl {
    pub fn new(s: OpenSmSettings) -> Self {
        OpenSmControl { s }
    }

    /// Applies one request's changes (blocking: file and console I/O).
    pub fn apply(&self, sets: &[&SmConfigSet]) -> Result<(), String> {
        if sets.is_empty() {
            return Ok(());
        }
        let options: Vec<(&str, String)> = sets
            .iter()
            .map(|c| {
                let (k, v) = c.setting.option(c.value);
                (k, v.to_string())
            })
            .collect();
        conf::set_options(&self.s.conf, &options)
            .map_err(|e| format!("cannot edit {}: {e}", self.s.conf.display()))?;
        info!(conf = %self.s.conf.display(), ?options, "SM configuration changed over SNMP");
        if sets.iter().any(|c| c.setting.needs_restart()) {
            // OpenSM reads these only when it starts.
            return match &self.s.restart {
                Some(cmd) => run("restart", cmd),
                None => {
                    warn!("no [opensm] restart command: the change takes effect when OpenSM next starts");
                    Ok(())
                }
            };
        }
        let priority = sets.iter().rev().find(|c| c.setting == SmSetting::Priority);
        let others = sets.iter().any(|c| c.setting != SmSetting::Priority);
        match (self.s.console, &self.s.pid_file) {
            (Some(addr), _) => {
                if let Some(p) = priority {
                    self.console(addr, &format!("priority {}", p.value))?;
                }
                if others {
                    // OpenSM re-reads its configuration file on a heavy sweep.
                    self.console(addr, "resweep heavy")?;
                }
                Ok(())
            }
            (None, Some(pid_file)) => hup(pid_file),
            (None, None) => {
                warn!("no OpenSM console or pid_file in [opensm]: the change takes effect when OpenSM next starts");
                Ok(())
            }
        }
    }

    /// Applies one partition operation: partitions.conf edited atomically,
    /// then OpenSM told to re-read it (SIGHUP through `pid_file`, else a
    /// heavy resweep through the console).
    pub fn apply_partition(&self, op: &PartitionOp) -> Result<(), String> {
        let path = self
            .s
            .partitions
            .as_ref()
            .ok_or("no partitions in [opensm]: partitions cannot be configured")?;
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let new = partitions::apply(&text, op)?;
        conf::replace(path, new.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        info!(file = %path.display(), ?op, "partition configuration changed over SNMP");
        match (&self.s.pid_file, self.s.console) {
            (Some(pid_file), _) => hup(pid_file),
            (None, Some(addr)) => self.console(addr, "resweep heavy"),
            (None, None) => {
                warn!("no OpenSM pid_file or console in [opensm]: the partitions take effect when OpenSM next reads its files");
                Ok(())
            }
        }
    }

    fn console(&self, addr: std::net::SocketAddr, cmd: &str) -> Result<(), String> {
        console::command(addr, cmd, CONSOLE_TIMEOUT)
            .map(|_| ())
            .map_err(|e| format!("OpenSM console {addr}: {cmd:?}: {e}"))
    }
}

impl OpenSmControl {
    /// ibSmConfigSMKey: `sm_key` in opensm.conf, then the restart command
    /// (OpenSM reads it at start). The key is never logged.
    pub fn set_sm_key(&self, key: u64) -> Result<(), String> {
        conf::set_options(&self.s.conf, &[("sm_key", format!("0x{key:016x}"))])
            .map_err(|e| format!("cannot edit {}: {e}", self.s.conf.display()))?;
        info!(conf = %self.s.conf.display(), "SM_Key changed over SNMP");
        match &self.s.restart {
            Some(cmd) => run("restart", cmd),
            None => {
                warn!(
                    "no [opensm] restart command: the SM_Key takes effect when OpenSM next starts"
                );
                Ok(())
            }
        }
    }

    /// ibSmConfigAdminSMState: the start or stop command.
    pub fn admin(&self, enable: bool) -> Result<(), String> {
        let (what, cmd) = if enable {
            ("start", &self.s.start)
        } else {
            ("stop", &self.s.stop)
        };
        let cmd = cmd
            .as_ref()
            .ok_or_else(|| format!("no [opensm] {what} command"))?;
        run(what, cmd)?;
        info!(what, "OpenSM {what} requested over SNMP");
        Ok(())
    }
}

/// Runs an operator's command (`sh -c`); Err with its status or output.
fn run(what: &str, cmd: &str) -> Result<(), String> {
    let out = std::process::Command::new("sh")
        .args(["-c", cmd])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("[opensm] {what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "[opensm] {what} ({cmd:?}): {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// SIGHUP to the pid in `pid_file` (OpenSM re-reads its files and sweeps).
fn hup(pid_file: &std::path::Path) -> Result<(), String> {
    let pid = std::fs::read_to_string(pid_file)
        .map_err(|e| format!("cannot read {}: {e}", pid_file.display()))?;
    let pid = pid.trim();
    if pid.is_empty() || !pid.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("{}: not a pid: {pid:?}", pid_file.display()));
    }
    let st = std::process::Command::new("kill")
        .args(["-HUP", pid])
        .status()
        .map_err(|e| format!("kill -HUP {pid}: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("kill -HUP {pid}: {st}"))
    }
}
