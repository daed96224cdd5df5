//! Test support: run the real `ibsnmpd` binary on a random loopback port and
//! drive it with net-snmp's command-line tools.
#![allow(dead_code)]

use std::collections::hash_map::RandomState;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_ibsnmpd");

/// Sends signal `sig` (`HUP`, `STOP`, ...) to process `pid`.
#[allow(dead_code)] // not every test binary signals
pub fn signal(pid: &str, sig: &str) {
    let st = Command::new("kill")
        .args([&format!("-{sig}"), pid.trim()])
        .status()
        .expect("kill");
    assert!(st.success(), "kill -{sig} {pid}");
}

/// SIGHUP to the testbed's OpenSM: it reads partitions.conf again and
/// resweeps.
#[allow(dead_code)] // not every test binary steers OpenSM
pub fn hup_opensm(tb: &ib_testbed::Testbed) {
    let pid = std::fs::read_to_string(tb.dir().join("opensm.pid")).expect("opensm.pid");
    signal(&pid, "HUP");
}

/// The repository's root: the MIB files, docs and packaging are there.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `-M <repo>/mibs:<repo>/mibs/ietf -m MODULE`: only the MIB files we ship
/// (`ALL` for all of them).
pub fn mib_args(module: &str) -> Vec<String> {
    let r = repo();
    vec![
        "-M".into(),
        format!(
            "{}:{}",
            r.join("mibs").display(),
            r.join("mibs/ietf").display()
        ),
        "-m".into(),
        module.into(),
    ]
}

/// A net-snmp `tool` with only the shipped MIB files, `module` loaded.
pub fn with_mib(tool: &str, module: &str) -> Command {
    require_tool(tool);
    let mut c = Command::new(tool);
    c.env("MIBS", "").env("MIBDIRS", "").args(mib_args(module));
    c
}

/// Polls `f` every `every` until it gives `Ok` (returned), panicking with
/// its last `Err` once `timeout` has passed.
pub fn poll<T>(timeout: Duration, every: Duration, mut f: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        match f() {
            Ok(v) => return v,
            Err(e) => assert!(Instant::now() < deadline, "timed out: {e}"),
        }
        std::thread::sleep(every);
    }
}

/// Polls `f` until it gives a value (returned), panicking naming `what`
/// once `timeout` has passed.
pub fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    poll(timeout, Duration::from_millis(100), || {
        f().ok_or_else(|| format!("waiting for {what}"))
    })
}

/// A numeric walk's output with the values net-snmp wraps over several
/// lines (long Hex-STRINGs) joined back on the line of their OID.
pub fn join_wrapped(out: &str) -> String {
    let mut joined = String::new();
    for line in out.lines() {
        if !line.starts_with('.') && !joined.is_empty() {
            joined.pop();
            joined.push(' ');
        }
        joined.push_str(line);
        joined.push('\n');
    }
    joined
}

/// `cmd` run, asserted to succeed (its stderr in the message).
pub fn output_ok(cmd: &mut Command) -> Output {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?}: {}", text(&o));
    o
}

/// GET `url` with curl (a real HTTP client), asserted to succeed.
pub fn curl(url: &str) -> String {
    require_tool("curl");
    let o = output_ok(Command::new("curl").args(["-sS", "--fail", "--max-time", "30", url]));
    String::from_utf8(o.stdout).expect("UTF-8 answer")
}

/// A net-snmp value as a number: Timeticks' hundredths, else the last word
/// with what is not a digit around it trimmed (`INTEGER: up(1)` is 1).
pub fn number(v: &str) -> u64 {
    if let Some(t) = v.strip_prefix("Timeticks: (") {
        return t
            .split(')')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("ticks");
    }
    let n = v.rsplit(' ').next().expect("value");
    n.trim_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {v}"))
}

/// `text` written to `name` in a fresh directory (kept while the returned
/// TempDir lives), mode 0600 (it may hold SNMPv3 passwords).
pub fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    write_private(&path, text);
    (dir, path)
}

/// `text` written to `path`, mode 0600 (the agent warns about SNMPv3
/// passwords in a file others may read).
pub fn write_private(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write the config file");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

/// `entry.c.index` for each column `c` of `cols`: one row's cells.
pub fn row_oids(entry: &str, cols: std::ops::RangeInclusive<u32>, index: &str) -> Vec<String> {
    cols.map(|c| format!("{entry}.{c}.{index}")).collect()
}

/// IB-SM-MIB's prefix, 1.3.6.1.3.117.7.
pub const SM_PREFIX: [u32; 7] = [1, 3, 6, 1, 3, 117, 7];

/// IB-SM-MIB's table cells of a walk: (group * 10 + table, column, index)
/// -> value.
pub type SmCells = BTreeMap<(u32, u32, Vec<u32>), String>;

/// The cell an OID below IB-SM-MIB names: ibSmMIBObjects(1) . group .
/// table(1|2) . entry(1) . column . index; None for anything else.
pub fn sm_cell(oid: &[u32]) -> Option<(u32, u32, Vec<u32>)> {
    let rest = oid.strip_prefix(&SM_PREFIX[..])?;
    match rest.split_at_checked(5)? {
        (&[1, group, table, 1, col], index) => Some((group * 10 + table, col, index.to_vec())),
        _ => None,
    }
}

/// One column of `table` (as in [`SmCells`]): index -> value.
pub fn sm_col(cells: &SmCells, table: u32, c: u32) -> BTreeMap<Vec<u32>, String> {
    cells
        .iter()
        .filter(|((t, cc, _), _)| *t == table && *cc == c)
        .map(|((_, _, i), v)| (i.clone(), v.clone()))
        .collect()
}

/// Stops, when dropped, the process whose pid `0` holds, if it was written:
/// a daemon a test had started in the background (nohup), which nothing
/// else would stop when the test fails or ends. Declared after the
/// testbed, it drops first.
pub struct PidFileGuard(pub PathBuf);

impl Drop for PidFileGuard {
    fn drop(&mut self) {
        let Ok(pid) = std::fs::read_to_string(&self.0) else {
            return;
        };
        let pid = pid.trim();
        // Gone already is fine: only a live process is stopped. It is
        // waited for while the fabric it talks to still runs: an OpenSM
        // told to stop after ibsim has quit waits for an answer forever.
        let _ = Command::new("kill").arg(pid).status();
        // A zombie (no parent to reap it here) counts as gone.
        let alive = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
                st.rsplit_once(')')
                    .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
            })
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while alive() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if alive() {
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
    }
}

/// The agent run to its end with `args` and a state directory: for the
/// ways it must refuse to start.
#[allow(dead_code)] // not every test binary checks refusals
pub fn run_agent(args: &[&str], state_dir: &std::path::Path) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--state-dir")
        .arg(state_dir)
        .output()
        .expect("ibsnmpd")
}

/// The agent log's warnings naming the settings a SIGHUP could not apply
/// (docs/usage.md, "Signals").
#[allow(dead_code)] // not every test binary reloads
pub fn restart_warnings(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("only on restart"))
        .collect()
}

/// An ibsim testbed of `net` (the tools checked first: a missing one fails
/// with its install hint).
pub fn testbed(net: &str) -> ib_testbed::Testbed {
    if let Err(e) = ib_testbed::check_tools() {
        panic!("{e}");
    }
    ib_testbed::Testbed::start(ib_testbed::TestbedConfig::new(net))
        .unwrap_or_else(|e| panic!("testbed: {e}"))
}

/// An infiniband-diags `tool` run on the testbed, asserted to succeed: its
/// stdout.
pub fn diag(tb: &ib_testbed::Testbed, tool: &str, args: &[&str]) -> String {
    let out = tb
        .run_diag(tool, args)
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(out.success(), "{tool} {args:?}: {}", out.stderr);
    out.stdout
}

/// `ibsnmpd topology fat-tree` of `hosts` hosts and `radix`-port switches
/// written into `dir`; the `--source` spec that serves it.
#[allow(dead_code)] // not every test binary serves a generated fabric
pub fn fat_tree(dir: &std::path::Path, hosts: u32, radix: u32) -> String {
    let topo = dir.join("fat-tree.net");
    output_ok(
        Command::new(BIN)
            .args(["topology", "fat-tree", "--hosts", &hosts.to_string()])
            .args(["--radix", &radix.to_string(), "-o"])
            .arg(&topo),
    );
    format!("sim:{}", topo.display())
}

/// Panics with a clear message when a net-snmp tool is missing.
pub fn require_tool(name: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "net-snmp tool `{name}` not found in PATH: install the Debian package `snmp` \
         (apt-get install snmp), or run .ci/run which installs it"
    );
}

/// A random number without a rand dependency.
pub fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// A port in 20000..32768 free on `host` right now for both UDP and TCP
/// (callers use it for either). Below Linux's ephemeral range (32768 and
/// up): a port there can be taken by any test's outgoing connection
/// between this check and the bind.
pub fn free_port(host: &str) -> u16 {
    for _ in 0..200 {
        let port = 20000 + (random_u64() % 12768) as u16;
        if UdpSocket::bind((host, port)).is_ok()
            && std::net::TcpListener::bind((host, port)).is_ok()
        {
            return port;
        }
    }
    panic!("no free port found on {host}");
}

/// A running agent; killed (SIGKILL) when dropped.
pub struct Agent {
    child: Option<Child>,
    /// `host:port` as net-snmp tools want it (`udp6:[::1]:p` for IPv6).
    pub target: String,
    pub port: u16,
    pub state_dir: PathBuf,
    pub extra: Vec<String>,
    log: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl Agent {
    /// Starts on 127.0.0.1 with a fresh temporary state directory.
    pub fn start(extra: &[&str]) -> Agent {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().to_path_buf();
        let mut a = Agent::start_in(&dir, extra);
        a._tmp = Some(tmp);
        a
    }

    /// Starts on 127.0.0.1 with the given state directory.
    pub fn start_in(state_dir: &Path, extra: &[&str]) -> Agent {
        require_tool("snmpget");
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port("127.0.0.1");
            let mut a = Agent {
                child: None,
                target: format!("127.0.0.1:{port}"),
                port,
                state_dir: state_dir.to_path_buf(),
                extra: extra.iter().map(|s| s.to_string()).collect(),
                log: state_dir.join(format!("agent-{port}.log")),
                _tmp: None,
            };
            let listen = format!("127.0.0.1:{port}");
            match a.spawn(&["--listen", &listen]) {
                Ok(()) => return a,
                Err(e) => last = e,
            }
        }
        panic!("agent did not start: {last}");
    }

    /// Starts with explicit listen addresses (`target` is what tools use).
    pub fn start_listen(listen: &str, target: &str, port: u16, extra: &[&str]) -> Agent {
        require_tool("snmpget");
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut a = Agent {
            child: None,
            target: target.to_string(),
            port,
            state_dir: tmp.path().to_path_buf(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            log: tmp.path().join("agent.log"),
            _tmp: None,
        };
        a._tmp = Some(tmp);
        if let Err(e) = a.spawn(&["--listen", listen]) {
            panic!("agent did not start: {e}");
        }
        a
    }

    fn spawn(&mut self, listen: &[&str]) -> Result<(), String> {
        let log = std::fs::File::create(&self.log).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(BIN);
        cmd.args(listen)
            .arg("--state-dir")
            .arg(&self.state_dir)
            .args(["--rw-community", "private", "--log-level", "debug"])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        let child = cmd.spawn().map_err(|e| format!("spawn {BIN}: {e}"))?;
        self.child = Some(child);
        self.wait_ready()
    }

    /// Polls sysUpTime until the agent answers (or exits).
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    return Err(format!("agent exited with {status}: {}", self.log_text()));
                }
            }
            let out = probe(&self.target, ".1.3.6.1.2.1.1.3.0", &["-On"]);
            if out.status.success() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("agent did not answer in 20 s: {}", self.log_text()))
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).expect("agent running")
    }

    /// SIGKILL and reap.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM; returns the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut c = self.child.take().expect("agent running");
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(st)) = c.try_wait() {
                return st;
            }
            if Instant::now() > deadline {
                let _ = c.kill();
                let _ = c.wait();
                panic!("agent did not exit within 10 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the agent again with the same port, state dir and flags.
    pub fn restart(&mut self) {
        self.kill9();
        let listen = format!("127.0.0.1:{}", self.port);
        let mut last = String::new();
        for _ in 0..20 {
            match self.spawn(&["--listen", &listen]) {
                Ok(()) => return,
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("agent did not restart: {last}");
    }

    /// Runs a net-snmp tool against this agent: `tool [args] target [oids]`.
    pub fn tool(&self, tool: &str, args: &[&str], oids: &[&str]) -> Output {
        let mut all: Vec<&str> = args.to_vec();
        all.push(&self.target);
        all.extend_from_slice(oids);
        snmp(tool, &all)
    }

    /// A v2c Get of `oids` with community public, asserted to succeed.
    #[allow(dead_code)] // not every test binary gets this way
    pub fn get(&self, oids: &[&str]) -> String {
        self.get_in("public", oids)
    }

    /// A v2c Get of `oids` with `community` (`public@CONTEXT` and the
    /// like), asserted to succeed.
    #[allow(dead_code)] // not every test binary gets this way
    pub fn get_in(&self, community: &str, oids: &[&str]) -> String {
        self.ok("snmpget", "2c", community, &[], oids)
    }

    /// `tool` with `-v VERSION -c COMMUNITY -On -t 2 -r 1`, expecting success;
    /// returns stdout.
    pub fn ok(
        &self,
        tool: &str,
        version: &str,
        community: &str,
        extra: &[&str],
        oids: &[&str],
    ) -> String {
        let mut args = vec!["-v", version, "-c", community, "-On", "-t", "2", "-r", "1"];
        args.extend_from_slice(extra);
        let out = self.tool(tool, &args, oids);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{tool} {args:?} {oids:?} failed: {}\nstdout: {stdout}\nstderr: {stderr}\nagent log:\n{}",
            out.status,
            self.log_text()
        );
        stdout
    }

    /// Reads one integer-like scalar (Counter32, INTEGER, ...).
    pub fn get_number(&self, oid: &str) -> u64 {
        let out = self.ok("snmpget", "2c", "public", &["-Oqv", "-Oe"], &[oid]);
        out.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{oid}: not a number: {out:?}"))
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// net-snmp tool arguments for the SNMPv3 user `user` with SHA and, given
/// a privacy passphrase, AES (authPriv; authNoPriv without), numeric
/// output, a 2 s timeout and one retry.
#[allow(dead_code)] // not every test binary speaks SNMPv3
pub fn usm_args(
    user: &'static str,
    auth_pass: &'static str,
    priv_pass: Option<&'static str>,
) -> Vec<&'static str> {
    let mut a = vec!["-v3", "-u", user, "-a", "SHA", "-A", auth_pass];
    match priv_pass {
        Some(p) => a.extend(["-l", "authPriv", "-x", "AES", "-X", p]),
        None => a.extend(["-l", "authNoPriv"]),
    }
    a.extend(["-On", "-t", "2", "-r", "1"]);
    a
}

/// The authPriv administrator (SHA, AES) of the admin tables' tests, as
/// `[[user]]` of a configuration file.
pub const ADMIN_USER: &str = r#"
[[user]]
name = "admin"
auth = "SHA"
auth_pass = "admin-auth-1"
priv = "AES"
priv_pass = "admin-priv-1"
"#;

/// The net-snmp arguments of [`ADMIN_USER`].
pub fn admin_args() -> Vec<&'static str> {
    usm_args("admin", "admin-auth-1", Some("admin-priv-1"))
}

/// A tool's exit status, stdout and stderr, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs a net-snmp tool (no MIBs loaded, so output is numeric and stable).
pub fn snmp(tool: &str, args: &[&str]) -> Output {
    require_tool(tool);
    Command::new(tool)
        .env("MIBS", "")
        .env("MIBDIRS", "")
        .args(["-m", ""])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"))
}

/// A v2c walk of `root` with community public (numeric OIDs, `extra`
/// options before the target): its stdout.
pub fn walk(target: &str, root: &str, extra: &[&str]) -> String {
    let mut args = vec!["-v2c", "-c", "public", "-On"];
    args.extend_from_slice(extra);
    args.extend([target, root]);
    String::from_utf8_lossy(&snmp("snmpwalk", &args).stdout).into_owned()
}

/// One quick v2c `snmpget` of `oid` with community public (half a
/// second, no retry): how tests wait for an agent to answer.
pub fn probe(target: &str, oid: &str, extra: &[&str]) -> Output {
    let mut args = vec!["-v2c", "-c", "public", "-t", "0.5", "-r", "0"];
    args.extend_from_slice(extra);
    args.extend([target, oid]);
    snmp("snmpget", &args)
}

/// A net-snmp `tool` run from the repository with the shipped MIB files
/// loaded (`-M mibs:mibs/ietf -m ALL`), v2c with community public.
pub fn with_shipped_mibs(tool: &str) -> Command {
    require_tool(tool);
    let mut c = Command::new(tool);
    c.current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args([
            "-M",
            "mibs:mibs/ietf",
            "-m",
            "ALL",
            "-v",
            "2c",
            "-c",
            "public",
        ]);
    c
}

/// One `-On` output line: numeric OID and the rest after ` = `.
/// A bulk walk of `root` with the shipped MIBs (`-m ALL`), asserted clean:
/// it succeeds, nothing on stderr, no value net-snmp finds off its syntax.
/// Returns the walk's output.
pub fn walk_with_shipped_mibs(target: &str, root: &str) -> String {
    let out = with_shipped_mibs("snmpbulkwalk")
        .args(["-t", "5", "-r", "1", target, root])
        .output()
        .expect("snmpbulkwalk");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "walk of {root} failed: {stderr}");
    assert!(stderr.is_empty(), "stderr not empty:\n{stderr}");
    for bad in ["Wrong Type", "Bad value", "No Such", "out of range"] {
        assert!(!stdout.contains(bad), "{bad} in:\n{stdout}");
    }
    stdout
}

pub fn parse_lines(out: &str) -> Vec<(Vec<u32>, String)> {
    out.lines()
        .filter(|l| l.starts_with('.'))
        .filter_map(|l| {
            let (oid, val) = l.split_once(" = ")?;
            let oid = oid
                .trim_start_matches('.')
                .split('.')
                .map(|s| s.parse::<u32>())
                .collect::<Result<Vec<_>, _>>()
                .ok()?;
            Some((oid, val.to_string()))
        })
        .collect()
}

/// Asserts that OIDs are strictly increasing in lexicographic order.
pub fn assert_increasing(rows: &[(Vec<u32>, String)]) {
    for w in rows.windows(2) {
        assert!(
            w[0].0 < w[1].0,
            "OIDs not increasing: {:?} then {:?}",
            w[0].0,
            w[1].0
        );
    }
}

/// The agent on the umad source under an ibsim testbed's preload
/// (`ib_testbed`), with a fresh state directory; killed on drop. Tests add
/// their own query helpers in `impl UmadAgent` blocks.
pub struct UmadAgent {
    child: Child,
    /// `127.0.0.1:port` as net-snmp tools want it.
    pub target: String,
    /// In the testbed's directory, so it outlives the agent.
    log: PathBuf,
    _state: tempfile::TempDir,
}

impl UmadAgent {
    /// Spawns `ibsnmpd --source umad` on a free loopback port with `args`
    /// added (`SIM_HOST=host` attaches it there; None: ibsim's default
    /// attach point, Switch1 port 0), then polls `ready` until it holds;
    /// panics when the agent exits or `wait` passes first.
    pub fn start(
        tb: &ib_testbed::Testbed,
        host: Option<&str>,
        args: &[&str],
        wait: Duration,
        ready: impl Fn(&UmadAgent) -> bool,
    ) -> UmadAgent {
        let state = tempfile::tempdir().expect("tempdir");
        let port = free_port("127.0.0.1");
        let target = format!("127.0.0.1:{port}");
        let log = tb.dir().join(format!("agent-{port}.log"));
        let mut cmd = tb.command(BIN);
        if let Some(h) = host {
            cmd.env("SIM_HOST", h);
        }
        let child = cmd
            .args(["--source", "umad", "--listen", &target])
            .args(["--rw-community", "private", "--log-level", "debug"])
            .arg("--state-dir")
            .arg(state.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("agent log"))
            .spawn()
            .expect("spawn ibsnmpd");
        let mut a = UmadAgent {
            child,
            target,
            log,
            _state: state,
        };
        poll(wait, Duration::from_millis(200), || {
            if let Ok(Some(st)) = a.child.try_wait() {
                panic!("agent exited with {st}: {}", a.log_text());
            }
            ready(&a)
                .then_some(())
                .ok_or_else(|| format!("agent not ready: {}", a.log_text()))
        });
        a
    }

    /// `start` until the agent answers a sysUpTime `probe`.
    #[allow(dead_code)] // not every test binary waits this way
    pub fn start_answering(
        tb: &ib_testbed::Testbed,
        host: Option<&str>,
        args: &[&str],
        wait: Duration,
    ) -> UmadAgent {
        UmadAgent::start(tb, host, args, wait, |a| {
            probe(&a.target, ".1.3.6.1.2.1.1.3.0", &[]).status.success()
        })
    }

    /// `start_answering` sweeping every second with the config file
    /// `conf`, the control socket `socket` and /metrics on `metrics`.
    #[allow(dead_code)] // not every test binary runs an operated agent
    pub fn start_operated(
        tb: &ib_testbed::Testbed,
        host: Option<&str>,
        conf: &Path,
        socket: &Path,
        metrics: &str,
        wait: Duration,
    ) -> UmadAgent {
        let args = [
            "--sweep-interval",
            "1",
            "--config",
            conf.to_str().unwrap(),
            "--control-socket",
            socket.to_str().unwrap(),
            "--metrics",
            metrics,
        ];
        UmadAgent::start_answering(tb, host, &args, wait)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The instances right under `root` walked with `community` (`-Oqe`):
    /// (last sub-identifier, value with net-snmp's quotes taken off).
    #[allow(dead_code)] // not every test binary walks a column
    pub fn column(&self, community: &str, root: &str) -> Vec<(u32, String)> {
        let o = self.v2c(
            "snmpwalk",
            community,
            &["-On", "-Oqe", "-t", "2", "-r", "1"],
            &[root],
        );
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(' ')?;
                let i = k.strip_prefix(root)?.strip_prefix('.')?.parse().ok()?;
                Some((i, v.trim().trim_matches('"').to_string()))
            })
            .collect()
    }

    /// A v2c `tool` to the agent with `community`: `opts`, the target,
    /// then `rest`.
    pub fn v2c(&self, tool: &str, community: &str, opts: &[&str], rest: &[&str]) -> Output {
        let mut args = vec!["-v2c", "-c", community];
        args.extend_from_slice(opts);
        args.push(&self.target);
        args.extend_from_slice(rest);
        snmp(tool, &args)
    }
}

/// The `n` numbers of a `-Oqv` answer, one a line.
pub fn numbers(out: &str, n: usize) -> Vec<u64> {
    let v: Vec<u64> = out
        .lines()
        .map(|l| {
            l.trim()
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {l:?}\n{out}"))
        })
        .collect();
    assert_eq!(v.len(), n, "{out}");
    v
}

impl Drop for UmadAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ----- ibsim fabric facts, from infiniband-diags ---------------------------

/// The LID of each port, from smpquery.
pub fn port_lid(tb: &ib_testbed::Testbed, node_lid: u16, port: u8) -> u16 {
    let out = tb
        .run_diag(
            "smpquery",
            &["portinfo", &node_lid.to_string(), &port.to_string()],
        )
        .unwrap();
    assert!(out.success(), "{}", out.stderr);
    field(&out.stdout, "Lid") as u16
}

pub fn field(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim_start_matches('.').trim().to_string())
        })
        .and_then(|v| {
            v.strip_prefix("0x")
                .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        })
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// (GUID, LID) of a node, from smpquery nodeinfo by its description.
pub fn node_by_name(
    tb: &ib_testbed::Testbed,
    lids: &BTreeMap<String, u16>,
    name: &str,
) -> (u64, u16) {
    let lid = lids[name];
    let out = tb
        .run_diag("smpquery", &["nodeinfo", &lid.to_string()])
        .unwrap();
    assert!(out.success(), "{}", out.stderr);
    (field(&out.stdout, "Guid"), lid)
}

/// Node description -> a LID of it, from `ibnetdiscover -p` (one line per port:
/// type, LID, port, GUID, ..., then the description in quotes). SA tables are cut
/// to one packet under umad2sim, so `saquery NodeRecord` would miss nodes.
pub fn node_lids(tb: &ib_testbed::Testbed) -> BTreeMap<String, u16> {
    let out = tb.run_diag("ibnetdiscover", &["-p"]).unwrap();
    assert!(out.success(), "{}", out.stderr);
    let mut m = BTreeMap::new();
    for l in out.stdout.lines() {
        let mut w = l.split_whitespace();
        let (Some(_), Some(lid)) = (w.next(), w.next()) else {
            continue;
        };
        let desc = l.split('\'').nth(1).unwrap_or("").to_string();
        if let (Ok(lid), false) = (lid.parse::<u16>(), desc.is_empty()) {
            m.entry(desc).or_insert(lid);
        }
    }
    m
}

/// [`guid_index`] of a GUID written `0x...` (as the dump's JSON has it).
pub fn guid_hex_index(g: &str) -> String {
    guid_index(u64::from_str_radix(g.trim_start_matches("0x"), 16).expect("hex GUID"))
}

pub fn guid_index(g: u64) -> String {
    g.to_be_bytes()
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

/// perfquery's `Name:....value` lines (any mode: `-x`, `-E`, ...), run
/// against the testbed.
pub fn perfquery(tb: &ib_testbed::Testbed, args: &[&str]) -> BTreeMap<String, u64> {
    let out = tb.run_diag("perfquery", args).unwrap();
    assert!(
        out.success(),
        "perfquery {args:?}: {}{}",
        out.stdout,
        out.stderr
    );
    out.stdout
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let v = v.trim_start_matches('.').trim();
            let v = v
                .strip_prefix("0x")
                .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())?;
            Some((k.trim().to_string(), v))
        })
        .collect()
}

/// pmPortCounters columns and perfquery's names for them.
pub const PM_COLUMNS: [(u32, &str); 16] = [
    (3, "SymbolErrorCounter"),
    (4, "LinkErrorRecoveryCounter"),
    (5, "LinkDownedCounter"),
    (6, "PortRcvErrors"),
    (7, "PortRcvRemotePhysicalErrors"),
    (8, "PortRcvSwitchRelayErrors"),
    (9, "PortXmitDiscards"),
    (10, "PortXmitConstraintErrors"),
    (11, "PortRcvConstraintErrors"),
    (12, "LocalLinkIntegrityErrors"),
    (13, "ExcessiveBufferOverrunErrors"),
    (14, "VL15Dropped"),
    (15, "PortXmitData"),
    (16, "PortRcvData"),
    (17, "PortXmitPkts"),
    (18, "PortRcvPkts"),
];

/// An agent whose config file holds `config` and whose control socket is
/// `ctl.sock`, both in `dir`, sweeping every second; `extra` flags after.
#[allow(dead_code)] // not every test binary drives the control socket
pub fn agent_with_socket(dir: &Path, config: &str, extra: &[&str]) -> (Agent, std::path::PathBuf) {
    agent_with_socket_sweeping(dir, config, "1", extra)
}

/// `agent_with_socket` sweeping every `sweep` seconds.
#[allow(dead_code)] // not every test binary drives the control socket
pub fn agent_with_socket_sweeping(
    dir: &Path,
    config: &str,
    sweep: &str,
    extra: &[&str],
) -> (Agent, std::path::PathBuf) {
    let conf = dir.join("ibsnmpd.toml");
    std::fs::write(&conf, config).expect("config");
    let socket = dir.join("ctl.sock");
    let conf = conf.display().to_string();
    let sock = socket.display().to_string();
    let mut args = vec![
        "--config",
        &conf,
        "--control-socket",
        &sock,
        "--sweep-interval",
        sweep,
    ];
    args.extend_from_slice(extra);
    (Agent::start(&args), socket)
}

/// `ibsnmpd ctl --socket SOCKET WORDS...`, expecting success; returns stdout.
pub fn ctl(socket: &Path, words: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("ctl")
        .arg("--socket")
        .arg(socket)
        .args(words)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "ctl {words:?}: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// pysnmp (Debian's, under /usr/bin/python3) as a second client: a Get of
/// `oid` by each of `users` (name, auth password, priv password, pysnmp's
/// privacy protocol name), SHA authentication, at authPriv. Prints one line
/// per user: its name and the value. Either pysnmp API (4.x or 6+).
#[allow(dead_code)]
pub fn pysnmp_get(port: u16, oid: &str, users: &[(&str, &str, &str, &str)]) -> Output {
    let list: Vec<String> = users
        .iter()
        .map(|(n, a, p, proto)| format!("({n:?}, {a:?}, {p:?}, h.{proto})"))
        .collect();
    let script = format!(
        r#"
import pysnmp.hlapi as h
try:
    getCmd = h.getCmd
    new_api = False
except AttributeError:  # pysnmp 6+ (Debian's python3-pysnmp after 12): asyncio API
    import pysnmp.hlapi.v3arch.asyncio as h
    new_api = True
oid = h.ObjectType(h.ObjectIdentity('{oid}'))
for name, a, p, proto in [{list}]:
    user = h.UsmUserData(name, a, p, authProtocol=h.usmHMACSHAAuthProtocol, privProtocol=proto)
    if new_api:
        import asyncio
        async def main():
            target = await h.UdpTransportTarget.create(('127.0.0.1', {port}), timeout=2, retries=1)
            return await h.get_cmd(h.SnmpEngine(), user, target, h.ContextData(), oid)
        e, s, i, vbs = asyncio.run(main())
    else:
        e, s, i, vbs = next(h.getCmd(h.SnmpEngine(), user,
            h.UdpTransportTarget(('127.0.0.1', {port}), timeout=2, retries=1), h.ContextData(), oid))
    assert e is None and not s, (name, e, s)
    print(name, vbs[0][1].prettyPrint())
"#,
        list = list.join(", ")
    );
    std::process::Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .output()
        .expect("python3")
}

/// Prometheus' snmp_exporter (Debian's prometheus-snmp-exporter) on the
/// generator's output: `generator_yml` through prometheus-snmp-generator
/// with the shipped MIBs (in `dir`), then one scrape of `module` at
/// `target`; the scrape's body.
#[allow(dead_code)] // not every test binary runs snmp_exporter
pub fn snmp_exporter_scrape(dir: &Path, generator_yml: &str, module: &str, target: &str) -> String {
    require_tool("prometheus-snmp-generator");
    require_tool("prometheus-snmp-exporter");
    std::fs::write(dir.join("generator.yml"), generator_yml).expect("generator.yml");
    let r = repo();
    let o = Command::new("prometheus-snmp-generator")
        .args(["--fail-on-parse-errors", "generate"])
        .current_dir(dir)
        .env(
            "MIBDIRS",
            format!(
                "{}:{}",
                r.join("mibs").display(),
                r.join("mibs/ietf").display()
            ),
        )
        .output()
        .expect("prometheus-snmp-generator");
    assert!(o.status.success(), "{}", text(&o));
    let port = free_port("127.0.0.1");
    let mut exporter = Command::new("prometheus-snmp-exporter")
        .arg(format!("--config.file={}", dir.join("snmp.yml").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stderr(std::fs::File::create(dir.join("exporter.log")).expect("exporter.log"))
        .spawn()
        .expect("prometheus-snmp-exporter");
    let url = format!("http://127.0.0.1:{port}/snmp?module={module}&target={target}");
    let body = poll(Duration::from_secs(20), Duration::from_millis(200), || {
        let o = Command::new("curl")
            .args(["-sS", "--max-time", "20", &url])
            .output()
            .expect("curl");
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
            .ok_or_else(|| text(&o))
    });
    let _ = exporter.kill();
    let _ = exporter.wait();
    assert!(!body.contains("An error has occurred"), "{body}");
    body
}
