//! Steering the OpenSM of the `[opensm]` section: IB-SM-MIB Sets of the
//! SM's settings ([`mibs::modules::ib_sm_mib`]) become edits of its configuration
//! file, then a console command (`priority N` at once; `resweep heavy`, on
//! which OpenSM re-reads the file), or a SIGHUP to the pid in `pid_file`
//! when there is no console. Without either, the file is edited and the
//! change waits for OpenSM's next start (said in the log).

pub mod console;
pub mod files;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ib::opensm::{conf, partitions, Applied, PartitionOp, SmOp, SmOption};
use tracing::{error, info, warn};

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

/// One Set PDU's SM operations by kind, applied together.
#[derive(Default)]
struct SmRequest {
    /// opensm.conf options, MIB units.
    options: Vec<(SmOption, u32)>,
    /// ibSmConfigSMKey (never logged).
    sm_keys: Vec<u64>,
    /// ibSmConfigAdminSMState: start (true) or stop.
    admin: Vec<bool>,
    partitions: Vec<PartitionOp>,
}

impl SmRequest {
    /// Every kind of [`SmOp`] has its place here: a new one is a compile
    /// error until it has.
    fn of(ops: &[SmOp]) -> SmRequest {
        let mut r = SmRequest::default();
        for op in ops {
            match op {
                SmOp::SetOption { option, value } => r.options.push((*option, *value)),
                SmOp::SetSmKey(k) => r.sm_keys.push(*k),
                SmOp::Admin { enable } => r.admin.push(*enable),
                SmOp::Partition(p) => r.partitions.push(p.clone()),
            }
        }
        r
    }
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmFailure {
    /// Nothing changed: every file is as it was (commitFailed).
    Failed(String),
    /// A file could not be put back (undoFailed).
    NotUndone(String),
}

impl SmFailure {
    pub fn reason(&self) -> &str {
        match self {
            SmFailure::Failed(r) | SmFailure::NotUndone(r) => r,
        }
    }
}

/// How OpenSM is told to take up an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reload {
    /// The `restart` command (options read only at start, sm_key).
    Restart,
    /// Console `priority N`, at once.
    Priority(u32),
    /// Console `resweep heavy`: OpenSM re-reads both files.
    Resweep,
    /// SIGHUP to the pid in `pid_file`: likewise.
    Hup,
}

/// The files one request edited and what they held before.
#[derive(Default)]
struct Edits {
    originals: Vec<(PathBuf, Vec<u8>)>,
}

/// What one applied request did, so that it can be taken back when a later
/// operation of the same Set fails (RFC 3416: commitFailed only when
/// nothing is left changed).
#[derive(Default)]
pub struct SmUndo {
    edits: Edits,
    /// How OpenSM was told to take up the edits.
    reloaded: Vec<Reload>,
    /// A start or stop command ran.
    started_or_stopped: bool,
}

/// Names the files only: their contents may hold the SM_Key.
impl std::fmt::Debug for SmUndo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files: Vec<_> = self.edits.originals.iter().map(|(p, _)| p).collect();
        f.debug_struct("SmUndo")
            .field("files", &files)
            .field("reloaded", &self.reloaded)
            .field("started_or_stopped", &self.started_or_stopped)
            .finish()
    }
}

impl Edits {
    /// `path`'s text as this request sees it (its own edits included).
    fn read(path: &Path) -> Result<String, String> {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    fn write(&mut self, path: &Path, text: &str) -> Result<(), String> {
        if !self.originals.iter().any(|(p, _)| p == path) {
            let old =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            self.originals.push((path.to_path_buf(), old));
        }
        files::replace(path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// What `path` held before this request edited it (None when it did not).
    fn original(&self, path: &Path) -> Option<String> {
        self.originals
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, old)| String::from_utf8_lossy(old).into_owned())
    }

    /// Puts every edited file back as it was.
    fn restore(&self) -> Result<(), String> {
        for (path, old) in &self.originals {
            files::replace(path, old)
                .map_err(|e| format!("cannot restore {}: {e}", path.display()))?;
            info!(file = %path.display(), "put back as it was");
        }
        Ok(())
    }
}

/// Applies SM setting changes to one OpenSM.
#[derive(Debug)]
pub struct OpenSmControl {
    s: OpenSmSettings,
}

impl OpenSmControl {
    /// Also removes temporary files an earlier run left beside the files it
    /// edits (a crash between writing and renaming).
    pub fn new(s: OpenSmSettings) -> Self {
        for path in std::iter::once(&s.conf).chain(s.partitions.as_ref()) {
            let n = files::remove_stale_temps(path);
            if n > 0 {
                warn!(file = %path.display(), removed = n, "removed temporary files an earlier run left");
            }
        }
        OpenSmControl { s }
    }

    /// Applies one request (blocking: file, console and command I/O): the
    /// file edits first, then what makes OpenSM take them up, then the
    /// start/stop commands. When a step fails, every file is put back as it
    /// was (and OpenSM told again if it had already re-read them), so an
    /// error answer leaves nothing changed. On success, what it did, for
    /// [`OpenSmControl::undo`] when a later part of the same Set fails.
    pub fn apply(&self, ops: &[SmOp]) -> Result<SmUndo, SmFailure> {
        let req = &SmRequest::of(ops);
        let mut undo = SmUndo::default();
        let mut reloads = Vec::new();
        let result = self
            .edit(req, &mut undo.edits, &mut reloads)
            .and_then(|()| {
                for r in &reloads {
                    self.reload(*r)?;
                    undo.reloaded.push(*r);
                }
                req.admin.iter().try_for_each(|&e| {
                    self.admin(e)?;
                    undo.started_or_stopped = true;
                    Ok(())
                })
            });
        match result {
            Ok(()) => {
                self.log_applied(req);
                Ok(undo)
            }
            Err(reason) => match self.undo(undo) {
                Ok(()) => Err(SmFailure::Failed(reason)),
                Err(e) => Err(SmFailure::NotUndone(format!("{reason}; {e}"))),
            },
        }
    }

    /// Puts back what one applied request did: every edited file as it was,
    /// and OpenSM told to read them again if it had read the new ones. A
    /// start or stop of OpenSM cannot be taken back (Err).
    pub fn undo(&self, undo: SmUndo) -> Result<(), String> {
        if undo.started_or_stopped {
            return Err("OpenSM was started or stopped: that cannot be taken back".into());
        }
        if undo.edits.originals.is_empty() {
            return Ok(());
        }
        undo.edits.restore().inspect_err(|e| {
            error!(error = %e, "an SM Set could not be undone");
        })?;
        // The console's priority back to the file's: a heavy resweep would
        // not restore it, since OpenSM applies only options whose value in
        // the file changed since it last read it, and it never read the new
        // one. Without a value in the file, the resweep is the best there is.
        let priority = undo
            .edits
            .original(&self.s.conf)
            .and_then(|text| conf::OpenSmConf::parse(&text).get(SmOption::Priority));
        let mut again: Vec<Reload> = undo
            .reloaded
            .into_iter()
            .map(|r| match (r, priority) {
                (Reload::Priority(_), Some(p)) => Reload::Priority(p as u32),
                (Reload::Priority(_), None) => Reload::Resweep,
                (r, _) => r,
            })
            .collect();
        again.sort();
        again.dedup();
        for r in again {
            self.reload(r).map_err(|e| {
                error!(error = %e, "OpenSM could not be told the files were put back");
                format!("OpenSM could not be told the files were put back: {e}")
            })?;
        }
        Ok(())
    }

    /// Edits the files and says how OpenSM takes them up.
    fn edit(
        &self,
        req: &SmRequest,
        edits: &mut Edits,
        reloads: &mut Vec<Reload>,
    ) -> Result<(), String> {
        if !req.options.is_empty() || !req.sm_keys.is_empty() {
            let mut text = Edits::read(&self.s.conf)?;
            for (o, v) in &req.options {
                text = conf::with_option(&text, o.name(), &o.to_file(*v).to_string());
            }
            for k in &req.sm_keys {
                text = conf::with_option(&text, conf::SM_KEY, &format!("0x{k:016x}"));
            }
            edits.write(&self.s.conf, &text)?;
            // OpenSM reads sm_key only at start.
            let restart = !req.sm_keys.is_empty()
                || req
                    .options
                    .iter()
                    .any(|(o, _)| o.applied() == Applied::Restart);
            if restart {
                reloads.push(Reload::Restart);
            } else if self.s.console.is_some() {
                // The last console-applied value of the request, at once;
                // the rest on a heavy sweep, when OpenSM re-reads the file.
                let console = |(o, _): &&(SmOption, u32)| o.applied() == Applied::Console;
                if let Some((_, v)) = req.options.iter().rev().find(console) {
                    reloads.push(Reload::Priority(*v));
                }
                if req.options.iter().any(|x| !console(&x)) {
                    reloads.push(Reload::Resweep);
                }
            } else {
                reloads.push(Reload::Hup);
            }
        }
        if !req.partitions.is_empty() {
            let path = self
                .s
                .partitions
                .as_ref()
                .ok_or("no partitions in [opensm]: partitions cannot be configured")?;
            let mut text = Edits::read(path)?;
            for op in &req.partitions {
                text = partitions::apply(&text, op)?;
            }
            edits.write(path, &text)?;
            reloads.push(if self.s.pid_file.is_some() {
                Reload::Hup
            } else {
                Reload::Resweep
            });
        }
        reloads.sort();
        reloads.dedup();
        Ok(())
    }

    /// Tells OpenSM to take up the edited files.
    fn reload(&self, r: Reload) -> Result<(), String> {
        let later = |what: &str| {
            warn!("no OpenSM {what} in [opensm]: the change takes effect when OpenSM next starts or reads its files");
            Ok(())
        };
        match r {
            Reload::Restart => match &self.s.restart {
                Some(cmd) => run("restart", cmd),
                None => later("restart command"),
            },
            Reload::Priority(p) => match self.s.console {
                Some(addr) => self.console(addr, &format!("priority {p}")),
                None => later("console"),
            },
            Reload::Resweep | Reload::Hup => match (self.s.console, &self.s.pid_file) {
                (_, Some(pid_file)) if r == Reload::Hup => hup(pid_file),
                (Some(addr), _) => self.console(addr, "resweep heavy"),
                (None, Some(pid_file)) => hup(pid_file),
                (None, None) => later("console or pid_file"),
            },
        }
    }

    fn log_applied(&self, req: &SmRequest) {
        if !req.options.is_empty() {
            let options: Vec<String> = req
                .options
                .iter()
                .map(|(o, v)| format!("{} {}", o.name(), o.to_file(*v)))
                .collect();
            info!(conf = %self.s.conf.display(), options = %options.join(", "), "SM configuration changed over SNMP");
        }
        if !req.sm_keys.is_empty() {
            info!(conf = %self.s.conf.display(), "SM_Key changed over SNMP");
        }
        for op in &req.partitions {
            info!(file = ?self.s.partitions.as_deref().map(Path::display).map(|d| d.to_string()), %op, "partition configuration changed over SNMP");
        }
        for e in &req.admin {
            info!(
                "OpenSM {} requested over SNMP",
                if *e { "start" } else { "stop" }
            );
        }
    }

    fn console(&self, addr: std::net::SocketAddr, cmd: &str) -> Result<(), String> {
        console::command(addr, cmd, CONSOLE_TIMEOUT)
            .map(|_| ())
            .map_err(|e| format!("OpenSM console {addr}: {cmd:?}: {e}"))
    }

    /// ibSmConfigAdminSMState: the start or stop command.
    fn admin(&self, enable: bool) -> Result<(), String> {
        let (what, cmd) = if enable {
            ("start", &self.s.start)
        } else {
            ("stop", &self.s.stop)
        };
        let cmd = cmd
            .as_ref()
            .ok_or_else(|| format!("no [opensm] {what} command"))?;
        run(what, cmd)
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

/// The pid in `pid_file`, if it names a running OpenSM: never 0, 1 or a
/// negative number (kill would signal a process group or init), never
/// another program (a stale file whose pid was reused).
fn opensm_pid(pid_file: &Path) -> Result<u32, String> {
    let text = std::fs::read_to_string(pid_file)
        .map_err(|e| format!("cannot read {}: {e}", pid_file.display()))?;
    let pid = text.trim();
    let n: u32 = pid
        .parse()
        .ok()
        .filter(|n| *n > 1 && i32::try_from(*n).is_ok())
        .ok_or_else(|| format!("{}: {pid:?} is not a process id", pid_file.display()))?;
    let comm = std::fs::read_to_string(format!("/proc/{n}/comm"))
        .map_err(|_| format!("{}: no process {n}", pid_file.display()))?;
    if comm.trim() != "opensm" {
        return Err(format!(
            "{}: process {n} is {:?}, not opensm",
            pid_file.display(),
            comm.trim()
        ));
    }
    Ok(n)
}

/// SIGHUP to the OpenSM in `pid_file` (it re-reads its files and sweeps).
fn hup(pid_file: &Path) -> Result<(), String> {
    let pid = opensm_pid(pid_file)?.to_string();
    let st = std::process::Command::new("kill")
        .args(["-HUP", "--", &pid])
        .status()
        .map_err(|e| format!("kill -HUP {pid}: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("kill -HUP {pid}: {st}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_files_that_name_no_opensm_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("opensm.pid");
        let own = std::process::id().to_string();
        for bad in [
            "0",
            "1",
            "-1",
            "-4242",
            "",
            "abc",
            "4294967295",
            own.as_str(),
        ] {
            std::fs::write(&f, format!("{bad}\n")).unwrap();
            let e = opensm_pid(&f).expect_err(bad);
            assert!(e.contains("opensm.pid"), "{e}");
        }
        assert!(opensm_pid(&dir.path().join("missing")).is_err());
    }

    fn control(dir: &Path, pid: &str) -> (OpenSmControl, PathBuf, PathBuf) {
        let conf = dir.join("opensm.conf");
        let parts = dir.join("partitions.conf");
        std::fs::write(&conf, "# site\nsm_priority 1\n").unwrap();
        std::fs::write(&parts, "Default=0x7fff : ALL=full;\n").unwrap();
        std::fs::write(dir.join("opensm.pid"), pid).unwrap();
        let c = OpenSmControl::new(OpenSmSettings {
            conf: conf.clone(),
            partitions: Some(parts.clone()),
            console: None,
            restart: None,
            pid_file: Some(dir.join("opensm.pid")),
            start: None,
            stop: None,
        });
        (c, conf, parts)
    }

    /// A reload that fails leaves both files as they were, and the same
    /// request fails the same way again (never "exists").
    #[test]
    fn a_failed_reload_puts_every_file_back() {
        let dir = tempfile::tempdir().unwrap();
        let (c, conf, parts) = control(dir.path(), "1\n");
        let before = (
            std::fs::read(&conf).unwrap(),
            std::fs::read(&parts).unwrap(),
        );
        let req = [
            SmOp::SetOption {
                option: SmOption::SweepInterval,
                value: 7,
            },
            SmOp::Partition(PartitionOp::Create { key: 5 }),
        ];
        for _ in 0..2 {
            let e = c.apply(&req).unwrap_err();
            assert!(matches!(e, SmFailure::Failed(_)), "{e:?}");
            assert!(e.reason().contains("not a process id"), "{e:?}");
            assert_eq!(
                (
                    std::fs::read(&conf).unwrap(),
                    std::fs::read(&parts).unwrap()
                ),
                before
            );
        }
        // A partition operation that cannot apply changes nothing either.
        let e = c
            .apply(&[SmOp::Partition(PartitionOp::Delete { key: 9 })])
            .unwrap_err();
        assert!(matches!(e, SmFailure::Failed(_)), "{e:?}");
        assert_eq!(std::fs::read(&parts).unwrap(), before.1);
        // No temporary file is left beside them.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }
}
