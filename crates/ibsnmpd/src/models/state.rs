//! Persisted agent state in `<state-dir>/state.json`: one JSON object per
//! MIB module, each the module's own typed state ([`mibs::core::state`]), e.g.
//! `{"SNMPv2-MIB": {"sysContact": "ops"}, "IF-MIB": {"ifAlias": {"3": "uplink"}}}`.
//! Version 1 files (flat `object.instance` keys) are read and migrated.
//! What node contexts hold is kept beside it ([`NodeStore`]), so that no
//! Set rewrites more than it changed. The file is replaced
//! atomically (write a temporary file, fsync it, rename it over the old one,
//! fsync the directory) before a Set is acknowledged, so a crash at any
//! moment leaves either the old or the new file, never a torn one.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use mibs::core::state::Persisted;
use mibs::modules::if_mib::NodeIfState;
use mibs::ModuleStates;
use serde::{Deserialize, Serialize};

const FILE_NAME: &str = "state.json";
const FORMAT_VERSION: u32 = 2;

#[derive(Debug, Serialize, Deserialize)]
struct OnDisk {
    version: u32,
    #[serde(default)]
    modules: Persisted,
    /// Version 1: flat keys and string values.
    #[serde(default, skip_serializing)]
    values: BTreeMap<String, String>,
}

/// The state file under one directory.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
    path: PathBuf,
    /// The node contexts' values, beside the file.
    nodes: NodeStore,
    /// False for [`StateStore::unwritable`].
    writable: bool,
}

impl StateStore {
    /// Creates the directory when missing.
    pub fn open(dir: &Path) -> Result<Self> {
        create_private_dir(dir)
            .with_context(|| format!("cannot create state directory {}", dir.display()))?;
        remove_stale_temp_files(dir);
        Ok(StateStore {
            dir: dir.to_path_buf(),
            path: dir.join(FILE_NAME),
            nodes: NodeStore::new(dir),
            writable: true,
        })
    }

    /// The store under `dir` without creating it: for an agent that cannot
    /// write anywhere and never persists (reads still find an existing file).
    pub fn unwritable(dir: &Path) -> Self {
        StateStore {
            dir: dir.to_path_buf(),
            path: dir.join(FILE_NAME),
            nodes: NodeStore::new(dir),
            writable: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The node contexts' values ([`NodeStore`]).
    pub fn nodes(&self) -> &NodeStore {
        &self.nodes
    }

    /// Whether this store is written ([`StateStore::open`]).
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// The stored values; empty when nothing was ever stored.
    pub fn load(&self) -> Result<Persisted> {
        let text = match fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Persisted::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", self.path.display()))
            }
        };
        let disk: OnDisk = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a valid state file", self.path.display()))?;
        match disk.version {
            FORMAT_VERSION => Ok(disk.modules),
            1 => ModuleStates::from_v1(&disk.values)
                .persisted()
                .map_err(|e| anyhow::anyhow!("{}: {e}", self.path.display())),
            v => anyhow::bail!(
                "{}: state file version {v} not supported (expected {FORMAT_VERSION})",
                self.path.display(),
            ),
        }
    }

    /// Durably replaces the stored values.
    pub fn save(&self, modules: &Persisted) -> io::Result<()> {
        let disk = OnDisk {
            version: FORMAT_VERSION,
            modules: modules.clone(),
            values: BTreeMap::new(),
        };
        let mut bytes = serde_json::to_vec_pretty(&disk).map_err(io::Error::other)?;
        bytes.push(b'\n');
        replace_durably(&self.dir, FILE_NAME, &bytes)
    }
}

/// The values set in node contexts (IF-MIB's ifAlias and
/// ifLinkUpDownTrapEnable of other nodes), kept apart from state.json so
/// that a Set writes what it changed only, whatever is stored:
///
/// - `node-contexts.log`: one line per Set that changed nodes, each a JSON
///   object of the nodes it changed with their values now (`null`: none),
///   appended and synced (fdatasync) before the Set is acknowledged;
/// - `node-contexts.json`: every node's values as of a compaction,
///   replaced atomically (temporary file, fsync, rename, fsync of the
///   directory); the log is emptied after it.
///
/// Reading: the compacted file, then the log's lines in order (each line
/// is a node's whole values, so lines written before a compaction the log
/// kept by a crash give the same values again). A last line cut short by
/// a crash was never acknowledged: it is dropped. The log is compacted
/// once it holds more lines than `max(LOG_LINES_MIN, nodes held)`, so a
/// compaction's cost is spread over at least as many Sets as it writes
/// nodes.
#[derive(Debug, Clone)]
pub struct NodeStore {
    dir: PathBuf,
    log: PathBuf,
    compacted: PathBuf,
    /// Lines in the log now.
    lines: Arc<AtomicUsize>,
}

const NODE_LOG: &str = "node-contexts.log";
const NODE_COMPACTED: &str = "node-contexts.json";
const LOG_LINES_MIN: usize = 1024;

/// Each node's values, by GUID context name.
pub type NodeValues = BTreeMap<String, Arc<NodeIfState>>;
/// What one Set changed: nodes with their values now (None: none).
pub type NodeChanges = BTreeMap<String, Option<NodeIfState>>;

/// A read that found no file: none there, or no directory to hold one.
fn absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

impl NodeStore {
    /// The store under `dir` (a state directory: [`StateStore::open`]).
    pub fn new(dir: &Path) -> Self {
        NodeStore {
            dir: dir.to_path_buf(),
            log: dir.join(NODE_LOG),
            compacted: dir.join(NODE_COMPACTED),
            lines: Arc::default(),
        }
    }

    /// The log's path.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// What is stored; a torn last line of the log (a crash while it was
    /// written) is cut off.
    pub fn load(&self) -> Result<NodeValues> {
        let mut nodes: NodeValues = match fs::read_to_string(&self.compacted) {
            Ok(t) => serde_json::from_str::<BTreeMap<String, NodeIfState>>(&t)
                .with_context(|| {
                    format!("{}: not a valid node state file", self.compacted.display())
                })?
                .into_iter()
                .map(|(k, v)| (k, Arc::new(v)))
                .collect(),
            // No file, or no state directory at all (a read-only agent's).
            Err(e) if absent(&e) => NodeValues::new(),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", self.compacted.display()))
            }
        };
        let text = match fs::read(&self.log) {
            Ok(t) => t,
            Err(e) if absent(&e) => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", self.log.display())),
        };
        let mut good = 0;
        let mut lines = 0;
        let mut rest = text.as_slice();
        while !rest.is_empty() {
            let (line, after, whole) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], &rest[i + 1..], true),
                None => (rest, &[][..], false),
            };
            match serde_json::from_slice::<NodeChanges>(line) {
                Ok(changes) => {
                    apply_changes(&mut nodes, changes);
                    lines += 1;
                    good = text.len() - after.len();
                }
                Err(_) if !whole => {
                    tracing::warn!(file = %self.log.display(), "dropped a last line cut short (a Set never acknowledged)");
                    break;
                }
                Err(e) => anyhow::bail!(
                    "{}: line {} is not a valid record: {e}",
                    self.log.display(),
                    lines + 1
                ),
            }
            rest = after;
        }
        if good < text.len() {
            let f = OpenOptions::new().write(true).open(&self.log)?;
            f.set_len(good as u64)?;
            f.sync_all()?;
        }
        self.lines.store(lines, Ordering::Relaxed);
        Ok(nodes)
    }

    /// Durably records `changes` (one Set's), then compacts when the log
    /// is long; `all` is every node's values after them.
    pub fn save(&self, changes: &NodeChanges, all: &NodeValues) -> io::Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        let mut line = serde_json::to_vec(changes).map_err(io::Error::other)?;
        line.push(b'\n');
        let new = !self.log.exists();
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .open(&self.log)?;
            f.write_all(&line)?;
            f.sync_data()?;
        }
        if new {
            File::open(&self.dir)?.sync_all()?;
        }
        let lines = self.lines.fetch_add(1, Ordering::Relaxed) + 1;
        if lines > LOG_LINES_MIN.max(all.len()) {
            self.compact(all)?;
        }
        Ok(())
    }

    /// Writes every node's values at once and empties the log.
    pub fn compact(&self, all: &NodeValues) -> io::Result<()> {
        let plain: BTreeMap<&String, &NodeIfState> = all.iter().map(|(k, v)| (k, &**v)).collect();
        let mut bytes = serde_json::to_vec(&plain).map_err(io::Error::other)?;
        bytes.push(b'\n');
        replace_durably(&self.dir, NODE_COMPACTED, &bytes)?;
        // Only once the compacted file is durable: a crash before leaves
        // the log, whose lines give the same values again.
        if let Ok(f) = OpenOptions::new().write(true).open(&self.log) {
            f.set_len(0)?;
            f.sync_all()?;
        }
        self.lines.store(0, Ordering::Relaxed);
        Ok(())
    }
}

/// Applies one record: each node's values replaced (or taken out).
pub fn apply_changes(nodes: &mut NodeValues, changes: NodeChanges) {
    for (k, v) in changes {
        match v {
            Some(v) => nodes.insert(k, Arc::new(v)),
            None => nodes.remove(&k),
        };
    }
}

/// Removes the temp files a crash mid-write leaves behind
/// (`.state.json.<pid>.tmp`, `.snmp-engine-*.<pid>.tmp`) of other processes.
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let ours = format!(".{}.tmp", std::process::id());
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours_by_name = name.starts_with(&format!(".{FILE_NAME}."))
            || name.starts_with(&format!(".{NODE_COMPACTED}."))
            || name.starts_with(".snmp-engine-");
        if ours_by_name && name.ends_with(".tmp") && !name.ends_with(&ours) {
            match fs::remove_file(e.path()) {
                Ok(()) => tracing::info!(file = %e.path().display(), "removed a stale temp file"),
                Err(err) => {
                    tracing::warn!(file = %e.path().display(), error = %err, "cannot remove a stale temp file")
                }
            }
        }
    }
}

/// Creates `dir` and its missing parents 0700 from the start, whatever the
/// umask (which only takes bits away); an existing directory is kept as
/// the operator made it.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Replaces `dir/name` with `bytes` atomically and durably: a temp file
/// of ours (removed when the write or the rename fails), synced, renamed
/// over it, then the directory synced (the rename is durable only once
/// the directory entry is).
fn replace_durably(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = write_synced(&tmp, bytes).and_then(|()| fs::rename(&tmp, dir.join(name)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    File::open(dir)?.sync_all()
}

/// Writes a file of the state directory: 0600 from its creation.
pub fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_and_files_are_private_from_the_start() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        let store = StateStore::open(&sub).unwrap();
        store.save(&Persisted::new()).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&sub), 0o700);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(store.path()), 0o600);
    }

    #[test]
    fn round_trip_and_replace() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(&dir.path().join("sub")).unwrap();
        assert!(store.load().unwrap().is_empty());
        let mut p = Persisted::new();
        p.insert(
            "SNMPv2-MIB".into(),
            serde_json::json!({"sysContact": "a \"quoted\" é"}),
        );
        store.save(&p).unwrap();
        assert_eq!(store.load().unwrap(), p);
        p.insert(
            "IF-MIB".into(),
            serde_json::json!({"ifAlias": {"1": "uplink"}}),
        );
        store.save(&p).unwrap();
        assert_eq!(store.load().unwrap(), p);
        let leftovers: Vec<_> = fs::read_dir(store.dir.clone())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn stale_temp_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(format!(".{FILE_NAME}.999999.tmp"));
        let other = dir.path().join("keep.tmp");
        fs::write(&stale, "x").unwrap();
        fs::write(&other, "x").unwrap();
        StateStore::open(dir.path()).unwrap();
        assert!(!stale.exists());
        assert!(other.exists());
    }

    #[test]
    fn version_1_files_migrate() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        fs::write(
            store.path(),
            r#"{"version":1,"values":{"sysContact":"ops","ifAlias.3":"uplink",
               "pmPortCountersPortSelect.0002c90300000001":"2"}}"#,
        )
        .unwrap();
        let p = store.load().unwrap();
        assert_eq!(p["SNMPv2-MIB"], serde_json::json!({"sysContact": "ops"}));
        assert_eq!(p["IF-MIB"], serde_json::json!({"ifAlias": {"3": "uplink"}}));
        assert_eq!(
            p["IB-PM-MIB"],
            serde_json::json!({"pmPortCountersPortSelect": {"0x0002c90300000001": 2}})
        );
    }

    /// A state file written by the agent before the typed module states
    /// (main at d5058a0: sysContact, snmpEnableAuthenTraps, ifAlias,
    /// ifLinkUpDownTrapEnable set over SNMP, the VACM tables as configured)
    /// loads into the same values and is written back unchanged.
    #[test]
    fn a_state_file_of_the_erased_states_loads_identically() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        let written = include_str!("../../tests/data/state-v2-main-d5058a0.json");
        fs::write(store.path(), written).unwrap();
        let p = store.load().unwrap();
        let mut system = mibs::SystemState::new("d".into(), snmp::oid::Oid::new(vec![1, 3]));
        assert_eq!(system.restore(&p), vec![]);
        let m = &system.modules;
        assert_eq!(m.system.sys_contact.as_deref(), Some("ops@site"));
        assert_eq!(m.system.snmp_enable_authen_traps, Some(true));
        assert_eq!(m.if_mib.if_alias[&1], "uplink");
        assert_eq!(m.if_mib.if_link_up_down_trap_enable[&2], 2);
        // The VACM part holds no row set over SNMP (the configuration's rows,
        // never stored, made it non-default in that agent); here it is the
        // default, left out as before.
        assert_eq!(*m.vacm, mibs::modules::snmp_vacm::VacmState::default());
        let mut without_vacm = p.clone();
        without_vacm.remove("SNMP-VIEW-BASED-ACM-MIB");
        assert_eq!(m.persisted().unwrap(), without_vacm);
        let mut kv = p.clone();
        let mut configured = system.modules.clone();
        configured.update::<mibs::modules::snmp_vacm::VacmState>(|v| {
            let mut vacm = snmp::vacm::Vacm::default();
            vacm.groups.insert(
                (snmp::vacm::SecurityModel::V2c, b"public".to_vec()),
                "g".to_string(),
            );
            v.configure(&vacm);
        });
        configured.persist_into(&mut kv).unwrap();
        assert_eq!(kv, p);
        store.save(&kv).unwrap();
        assert_eq!(fs::read_to_string(store.path()).unwrap(), written);
    }

    fn node(alias: &str) -> NodeIfState {
        let mut n = NodeIfState::default();
        n.if_alias.insert(1, alias.to_string());
        n
    }

    /// Each Set appends what it changed; the log replays over the
    /// compacted file; a compaction empties the log; a last line cut
    /// short by a crash is dropped, one in the middle is an error.
    #[test]
    fn node_values_are_logged_compacted_and_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        let nodes = store.nodes();
        assert!(nodes.load().unwrap().is_empty());
        let mut all = NodeValues::new();
        let set = |k: &str, v: Option<NodeIfState>, all: &mut NodeValues| {
            let changes: NodeChanges = [(k.to_string(), v)].into();
            apply_changes(all, changes.clone());
            nodes.save(&changes, all).unwrap();
        };
        set("a", Some(node("1")), &mut all);
        set("b", Some(node("2")), &mut all);
        set("a", None, &mut all);
        let log = fs::read_to_string(nodes.log_path()).unwrap();
        assert_eq!(log.lines().count(), 3, "{log}");
        assert_eq!(NodeStore::new(dir.path()).load().unwrap(), all);
        // The line of each Set holds its nodes only, whatever is stored.
        let sizes: Vec<usize> = log.lines().map(str::len).collect();
        assert_eq!(sizes[0], sizes[1]);

        // A crash while a line was written: dropped, cut off the file.
        let mut f = OpenOptions::new()
            .append(true)
            .open(nodes.log_path())
            .unwrap();
        f.write_all(br#"{"c":{"ifAlias":{"1":"#).unwrap();
        drop(f);
        let again = NodeStore::new(dir.path());
        assert_eq!(again.load().unwrap(), all);
        assert_eq!(fs::read_to_string(nodes.log_path()).unwrap(), log);

        // A compaction: the whole values at once, the log emptied; a crash
        // between the two leaves lines that give the same values again.
        nodes.compact(&all).unwrap();
        assert_eq!(fs::read_to_string(nodes.log_path()).unwrap(), "");
        assert_eq!(NodeStore::new(dir.path()).load().unwrap(), all);
        fs::write(nodes.log_path(), &log).unwrap();
        assert_eq!(NodeStore::new(dir.path()).load().unwrap(), all);

        // Past LOG_LINES_MIN lines, a Set compacts.
        let nodes = NodeStore::new(dir.path());
        nodes.load().unwrap();
        for i in 0..=LOG_LINES_MIN {
            let changes: NodeChanges = [("d".to_string(), Some(node(&i.to_string())))].into();
            apply_changes(&mut all, changes.clone());
            nodes.save(&changes, &all).unwrap();
        }
        let lines = fs::read_to_string(nodes.log_path())
            .unwrap()
            .lines()
            .count();
        assert!(lines < LOG_LINES_MIN, "{lines}");
        assert_eq!(NodeStore::new(dir.path()).load().unwrap(), all);

        // A bad line before the last: not a crash's, an error.
        fs::write(nodes.log_path(), "{not json\n{}\n").unwrap();
        let e = NodeStore::new(dir.path()).load().unwrap_err();
        assert!(format!("{e:#}").contains("line 1"), "{e:#}");
    }

    #[test]
    fn corrupt_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        fs::write(store.path(), "{not json").unwrap();
        let e = store.load().unwrap_err();
        assert!(format!("{e:#}").contains("not a valid state file"));
    }
}
