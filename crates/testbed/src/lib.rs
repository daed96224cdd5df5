//! A real InfiniBand management plane for tests and benchmarks: ibsim + umad2sim (+ OpenSM).
//!
//! Each [`Testbed`] lives in its own temporary directory with its own `IBSIM_SOCKNAME`, so
//! parallel tests never see each other's fabric. It is torn down on drop (OpenSM SIGTERM,
//! `Quit` to ibsim, fifo holder killed, all by PID) and, if the test process dies hard, by a
//! small watchdog shell that also holds ibsim's console fifo open.
//!
//! ```no_run
//! use ib_testbed::{Testbed, TestbedConfig};
//! let tb = Testbed::start(TestbedConfig::new(ib_testbed::SMALL_NET)).unwrap();
//! tb.console("PerformanceSet \"Hca1\"[1] PortCounters.SymbolErrorCounter=5").unwrap();
//! let out = tb.run_diag("perfquery", &["2", "1"]).unwrap();
//! assert!(out.success(), "{}", out.stderr);
//! ```
//!
//! The tools come from Debian: `apt-get install ibsim-utils opensm infiniband-diags libibumad-dev`.
//! Pitfalls (see docs/umad.md): at most 10 clients per ibsim; keep <= 256 MADs outstanding
//! per client; multi-packet SA answers are cut to one packet; Reports are never delivered.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The umad2sim preload library that redirects libibumad to ibsim.
pub const UMAD2SIM: &str = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

/// A small fabric: two switches joined by two links, four single-port HCAs.
/// Switch1 port 0 is where clients (and OpenSM) attach by default.
pub const SMALL_NET: &str = "\
Switch\t8 \"Switch1\"
[1]\t\"Hca1\"[1]
[2]\t\"Hca3\"[1]
[3]\t\"Switch2\"[3]
[5]\t\"Switch2\"[5]

Switch\t8 \"Switch2\"
[1]\t\"Hca2\"[1]
[2]\t\"Hca4\"[1]
[3]\t\"Switch1\"[3]
[5]\t\"Switch1\"[5]

Hca\t2 \"Hca1\"
[1]\t\"Switch1\"[1]

Hca\t2 \"Hca2\"
[1]\t\"Switch2\"[1]

Hca\t2 \"Hca3\"
[1]\t\"Switch1\"[2]

Hca\t2 \"Hca4\"
[1]\t\"Switch2\"[2]
";

/// Dual-port HCAs cabled to both switches (dual-rail hosts): Hca1 and Hca2
/// have both ports linked, Hca3 has a second port that is not cabled (down,
/// polling), Hca4 is single-port.
pub const DUAL_PORT_NET: &str = "\
Switch\t8 \"Switch1\"
[1]\t\"Hca1\"[1]
[2]\t\"Hca3\"[1]
[3]\t\"Switch2\"[3]
[4]\t\"Hca2\"[2]

Switch\t8 \"Switch2\"
[1]\t\"Hca2\"[1]
[2]\t\"Hca4\"[1]
[3]\t\"Switch1\"[3]
[4]\t\"Hca1\"[2]

Hca\t2 \"Hca1\"
[1]\t\"Switch1\"[1]
[2]\t\"Switch2\"[4]

Hca\t2 \"Hca2\"
[1]\t\"Switch2\"[1]
[2]\t\"Switch1\"[4]

Hca\t2 \"Hca3\"
[1]\t\"Switch1\"[2]

Hca\t1 \"Hca4\"
[1]\t\"Switch2\"[2]
";

/// A two-level fabric in ibsim's net format: `spines` spine and `leaves`
/// leaf switches of `radix` ports; each leaf has `hosts` single-port HCAs
/// on its first ports and one uplink to each spine on its last ports (leaf
/// port `radix - spines + s` to spine `s`'s port `l`, both from 1). Named
/// spine1.., leaf1.. and h1.. (hosts leaf by leaf); spines come first.
pub fn leaf_spine_net(spines: u8, leaves: u8, hosts: u8, radix: u8) -> String {
    use std::fmt::Write as _;
    let up = |s: u8| radix - spines + s;
    let mut net = String::new();
    for s in 1..=spines {
        let _ = writeln!(net, "Switch\t{radix} \"spine{s}\"");
        for l in 1..=leaves {
            let _ = writeln!(net, "[{l}]\t\"leaf{l}\"[{}]", up(s));
        }
        net.push('\n');
    }
    for l in 1..=leaves {
        let _ = writeln!(net, "Switch\t{radix} \"leaf{l}\"");
        for h in 1..=hosts {
            let _ = writeln!(net, "[{h}]\t\"h{}\"[1]", (l - 1) * hosts + h);
        }
        for s in 1..=spines {
            let _ = writeln!(net, "[{}]\t\"spine{s}\"[{l}]", up(s));
        }
        net.push('\n');
    }
    for l in 1..=leaves {
        for h in 1..=hosts {
            let n = (l - 1) * hosts + h;
            let _ = writeln!(net, "Hca\t1 \"h{n}\"\n[1]\t\"leaf{l}\"[{h}]\n");
        }
    }
    net.pop();
    net
}

/// Default partition file: the default partition with IPoIB, everyone full member.
pub const DEFAULT_PARTITIONS: &str = "Default=0x7fff, ipoib : ALL=full;\n";

/// Errors starting or driving a testbed.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    /// A required program is not installed.
    #[error("{tool} not found in PATH: install it with `apt-get install {package}` (the testbed needs ibsim-utils, opensm, infiniband-diags, libibumad-dev)")]
    ToolMissing { tool: String, package: String },
    /// An I/O error, with what we were doing.
    #[error("testbed: {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// Something did not happen in time; the directory holds the logs.
    #[error("testbed: timed out after {secs:.1}s waiting for {what} (logs in {dir})")]
    Timeout {
        what: String,
        secs: f64,
        dir: String,
    },
    /// OpenSM is not running (never started or stopped).
    #[error("testbed: OpenSM is not running")]
    NoOpenSm,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> TestbedError {
    let what = what.into();
    move |source| TestbedError::Io { what, source }
}

/// How to start a testbed.
#[derive(Debug, Clone)]
pub struct TestbedConfig {
    /// The ibsim "net" topology text.
    pub net: String,
    /// Start OpenSM as master SM/SA (default true).
    pub opensm: bool,
    /// OpenSM sweep interval in seconds (default 5).
    pub sm_sweep_secs: u32,
    /// OpenSM partition file text.
    pub partitions: String,
    /// Extra ibsim arguments, e.g. `["-N","8192","-S","512","-P","32768"]` for big fabrics.
    pub ibsim_args: Vec<String>,
    /// How long to wait for ibsim readiness and OpenSM's "SUBNET UP" (default 120 s).
    pub up_timeout: Duration,
    /// An opensm.conf for OpenSM (`-F`, written as `opensm.conf` in the
    /// testbed directory); OpenSM re-reads it on a heavy sweep. None: none.
    pub opensm_conf: Option<String>,
}

impl TestbedConfig {
    /// Defaults for the given topology text.
    pub fn new(net: impl Into<String>) -> Self {
        TestbedConfig {
            net: net.into(),
            opensm: true,
            sm_sweep_secs: 5,
            partitions: DEFAULT_PARTITIONS.to_string(),
            ibsim_args: Vec::new(),
            up_timeout: Duration::from_secs(120),
            opensm_conf: None,
        }
    }

    /// Without OpenSM (LIDs stay unassigned: only directed-route SMPs work).
    pub fn without_opensm(mut self) -> Self {
        self.opensm = false;
        self
    }

    /// Raise ibsim's node/switch/port limits (`-N -S -P`).
    pub fn limits(mut self, nodes: u32, switches: u32, ports: u32) -> Self {
        self.ibsim_args.extend([
            "-N".to_string(),
            nodes.to_string(),
            "-S".to_string(),
            switches.to_string(),
            "-P".to_string(),
            ports.to_string(),
        ]);
        self
    }
}

/// Output of a diag tool run under the preload.
#[derive(Debug, Clone)]
pub struct DiagOutput {
    /// Exit code (None if killed by a signal or the timeout).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl DiagOutput {
    /// True when the tool exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// A running ibsim (+ OpenSM) fabric. Dropping it tears everything down.
pub struct Testbed {
    dir: PathBuf,
    sockname: String,
    ibsim: Child,
    holder: Child,
    opensm: Option<Child>,
    /// Second OpenSMs (standby), each attached at its own node.
    standby: Vec<Child>,
    console_port: u16,
    config: TestbedConfig,
    keep: bool,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

fn require(tool: &str, package: &str) -> Result<PathBuf, TestbedError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or_else(|| TestbedError::ToolMissing {
            tool: tool.to_string(),
            package: package.to_string(),
        })
}

/// Checks that ibsim, umad2sim, OpenSM and infiniband-diags are installed.
pub fn check_tools() -> Result<(), TestbedError> {
    require("ibsim", "ibsim-utils")?;
    require("opensm", "opensm")?;
    require("ibnetdiscover", "infiniband-diags")?;
    if !Path::new(UMAD2SIM).is_file() {
        return Err(TestbedError::ToolMissing {
            tool: UMAD2SIM.to_string(),
            package: "ibsim-utils".to_string(),
        });
    }
    Ok(())
}

fn wait_for<T>(
    what: &str,
    dir: &Path,
    timeout: Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> Result<T, TestbedError> {
    let start = Instant::now();
    loop {
        if let Some(v) = probe() {
            return Ok(v);
        }
        if start.elapsed() >= timeout {
            return Err(TestbedError::Timeout {
                what: what.to_string(),
                secs: timeout.as_secs_f64(),
                dir: dir.display().to_string(),
            });
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn free_loopback_port() -> Result<u16, TestbedError> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(io("bind a free loopback port"))?;
    Ok(l.local_addr().map_err(io("read bound port"))?.port())
}

fn sigterm(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Waits up to `timeout` for the child to exit; SIGKILLs it otherwise.
fn reap(child: &mut Child, timeout: Duration) {
    let start = Instant::now();
    while start.elapsed() < timeout {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Testbed {
    /// Starts ibsim (and OpenSM unless disabled) and waits until the subnet is up.
    pub fn start(config: TestbedConfig) -> Result<Testbed, TestbedError> {
        check_tools()?;
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let sockname = format!("ibsnmpd-{}-{}-{:x}", std::process::id(), seq, nanos);
        let dir = std::env::temp_dir().join(format!("ibsnmpd-testbed-{sockname}"));
        fs::create_dir_all(dir.join("osm")).map_err(io("create testbed dir"))?;
        fs::write(dir.join("net"), &config.net).map_err(io("write net file"))?;
        fs::write(dir.join("partitions.conf"), &config.partitions)
            .map_err(io("write partitions.conf"))?;
        let fifo = dir.join("ctl");
        let st = Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .map_err(io("run mkfifo"))?;
        if !st.success() {
            return Err(TestbedError::Io {
                what: "mkfifo failed".into(),
                source: std::io::Error::other(format!("{st}")),
            });
        }
        // The holder keeps ibsim's console stdin open (ibsim spins at EOF) and doubles as a
        // watchdog: if this process dies without dropping us, it stops OpenSM and ibsim.
        let watchdog = format!(
            "exec 3>ctl; while kill -0 {parent} 2>/dev/null; do sleep 1; done; \
             [ -f opensm.pid ] && kill -TERM $(cat opensm.pid) 2>/dev/null; sleep 1; \
             echo Quit >&3; sleep 1",
            parent = std::process::id()
        );
        let holder = Command::new("sh")
            .args(["-c", &watchdog])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(io("spawn fifo holder"))?;
        let mut ibsim_cmd = String::from("exec ibsim -s");
        for a in &config.ibsim_args {
            ibsim_cmd.push(' ');
            ibsim_cmd.push_str(&shell_quote(a));
        }
        ibsim_cmd.push_str(" net < ctl > ibsim.out 2>&1");
        let ibsim = match Command::new("sh")
            .args(["-c", &ibsim_cmd])
            .current_dir(&dir)
            .env("IBSIM_SOCKNAME", &sockname)
            .stdin(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                let mut h = holder;
                let _ = h.kill();
                let _ = h.wait();
                return Err(TestbedError::Io {
                    what: "spawn ibsim".into(),
                    source: e,
                });
            }
        };
        let keep = std::env::var_os("IBSNMPD_KEEP_TESTBED").is_some();
        let mut tb = Testbed {
            dir,
            sockname,
            ibsim,
            holder,
            opensm: None,
            standby: Vec::new(),
            console_port: 0,
            config,
            keep,
        };
        let out = tb.dir.join("ibsim.out");
        // Ready, or dead (a net file it cannot parse): either ends the wait.
        let text = wait_for(
            "ibsim 'Network simulator ready'",
            &tb.dir,
            tb.config.up_timeout,
            || {
                fs::read_to_string(&out)
                    .ok()
                    .filter(|s| s.contains("Network simulator ready") || s.contains("ibpanic"))
            },
        )?;
        if !text.contains("Network simulator ready") {
            return Err(TestbedError::Io {
                what: format!("ibsim did not start: {}", text.trim()),
                source: std::io::Error::other("ibsim exited"),
            });
        }
        if tb.config.opensm {
            tb.start_opensm()?;
        }
        Ok(tb)
    }

    /// The testbed's directory (net file, ibsim.out, osm/osm.log, sys-PID folders).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The `IBSIM_SOCKNAME` that isolates this fabric.
    pub fn sockname(&self) -> &str {
        &self.sockname
    }

    /// Environment for a client of this fabric: `LD_PRELOAD` (umad2sim) and `IBSIM_SOCKNAME`.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        vec![
            ("LD_PRELOAD".into(), UMAD2SIM.into()),
            ("IBSIM_SOCKNAME".into(), self.sockname.clone().into()),
        ]
    }

    /// A command for `program` under the preload, run in the testbed dir (umad2sim leaves
    /// its ./sys-PID folders there).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.envs(self.env()).current_dir(&self.dir);
        c
    }

    /// Runs an infiniband-diags tool under the preload (60 s limit; killed after that).
    pub fn run_diag(&self, cmd: &str, args: &[&str]) -> Result<DiagOutput, TestbedError> {
        self.run_diag_timeout(cmd, args, Duration::from_secs(60))
    }

    /// [`Testbed::run_diag`] with an explicit time limit.
    pub fn run_diag_timeout(
        &self,
        cmd: &str,
        args: &[&str],
        timeout: Duration,
    ) -> Result<DiagOutput, TestbedError> {
        let package = "infiniband-diags";
        let prog = require(cmd, package)?;
        let mut child = self
            .command(prog)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(io(format!("spawn {cmd}")))?;
        // Drain pipes on threads so a chatty tool cannot block on a full pipe.
        let mut so = child.stdout.take();
        let mut se = child.stderr.take();
        let t_out = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(p) = so.as_mut() {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let t_err = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(p) = se.as_mut() {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let start = Instant::now();
        let code = loop {
            match child.try_wait().map_err(io(format!("wait {cmd}")))? {
                Some(st) => break st.code(),
                None if start.elapsed() >= timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        };
        Ok(DiagOutput {
            code,
            stdout: t_out.join().unwrap_or_default(),
            stderr: t_err.join().unwrap_or_default(),
        })
    }

    /// Sends one command to ibsim's console and returns what ibsim printed in answer
    /// (up to its next `sim> ` prompt, 10 s limit).
    pub fn console(&self, cmd: &str) -> Result<String, TestbedError> {
        let out_path = self.dir.join("ibsim.out");
        let before = fs::metadata(&out_path).map(|m| m.len()).unwrap_or(0);
        {
            let mut f = open_console(&self.dir).map_err(io("open ibsim console fifo"))?;
            f.write_all(format!("{}\n", cmd.trim_end()).as_bytes())
                .map_err(io("write ibsim console"))?;
        }
        wait_for(
            &format!("ibsim console answer to {cmd:?}"),
            &self.dir,
            Duration::from_secs(10),
            || {
                let mut f = File::open(&out_path).ok()?;
                f.seek(SeekFrom::Start(before)).ok()?;
                let mut s = String::new();
                f.read_to_string(&mut s).ok()?;
                s.rfind("sim> ").map(|i| s[..i].to_string())
            },
        )
    }

    /// The loopback console's TCP port of the running OpenSM.
    pub fn console_port(&self) -> u16 {
        self.console_port
    }

    /// Sends one command to OpenSM's loopback console and returns its answer.
    pub fn opensm_console(&self, cmd: &str) -> Result<String, TestbedError> {
        if self.opensm.is_none() {
            return Err(TestbedError::NoOpenSm);
        }
        let mut s = TcpStream::connect(("127.0.0.1", self.console_port))
            .map_err(io("connect OpenSM console"))?;
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .map_err(io("set console timeout"))?;
        let prompt = "OpenSM $ ";
        let read_prompt = |s: &mut TcpStream| -> Result<String, TestbedError> {
            let mut acc = Vec::new();
            let mut buf = [0u8; 8192];
            wait_for(
                "OpenSM console prompt",
                &self.dir,
                Duration::from_secs(20),
                || {
                    match s.read(&mut buf) {
                        Ok(0) => return Some(()),
                        Ok(n) => acc.extend_from_slice(buf.get(..n).unwrap_or(&[])),
                        Err(_) => {}
                    }
                    acc.ends_with(prompt.as_bytes()).then_some(())
                },
            )?;
            Ok(String::from_utf8_lossy(&acc).into_owned())
        };
        read_prompt(&mut s)?;
        s.write_all(format!("{}\n", cmd.trim_end()).as_bytes())
            .map_err(io("write OpenSM console"))?;
        let ans = read_prompt(&mut s)?;
        let _ = s.write_all(b"logout\n");
        Ok(ans.strip_suffix(prompt).unwrap_or(&ans).to_string())
    }

    /// OpenSM's log so far (empty if none).
    pub fn opensm_log(&self) -> String {
        fs::read_to_string(self.dir.join("osm/osm.log")).unwrap_or_default()
    }

    /// Waits until OpenSM's log contains `needle` at least `count` times.
    pub fn wait_opensm_log(
        &self,
        needle: &str,
        count: usize,
        timeout: Duration,
    ) -> Result<(), TestbedError> {
        wait_for(
            &format!("{count}x {needle:?} in osm.log"),
            &self.dir,
            timeout,
            || (self.opensm_log().matches(needle).count() >= count).then_some(()),
        )
    }

    /// Starts OpenSM (again) and waits for "SUBNET UP".
    pub fn start_opensm(&mut self) -> Result<(), TestbedError> {
        if self.opensm.is_some() {
            return Ok(());
        }
        let ups = self.opensm_log().matches("SUBNET UP").count();
        self.console_port = free_loopback_port()?;
        let osm = self.dir.join("osm");
        let out = File::create(self.dir.join("osm.out")).map_err(io("create osm.out"))?;
        let err = out.try_clone().map_err(io("dup osm.out"))?;
        let mut cmd = self.command("opensm");
        if let Some(text) = &self.config.opensm_conf {
            let conf = self.dir.join("opensm.conf");
            if !conf.exists() {
                fs::write(&conf, text).map_err(io("write opensm.conf"))?;
            }
            cmd.arg("-F").arg(conf);
        }
        let child = cmd
            .env("OSM_TMP_DIR", &osm)
            .env("OSM_CACHE_DIR", &osm)
            .args(["-d2", "-f"])
            .arg(osm.join("osm.log"))
            .arg("-P")
            .arg(self.dir.join("partitions.conf"))
            .args(["-s", &self.config.sm_sweep_secs.to_string()])
            .args(["--console", "loopback", "--console-port"])
            .arg(self.console_port.to_string())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(io("spawn opensm"))?;
        let _ = fs::write(self.dir.join("opensm.pid"), child.id().to_string());
        self.opensm = Some(child);
        self.wait_opensm_log("SUBNET UP", ups + 1, self.config.up_timeout)
    }

    /// Starts another OpenSM attached at node `host` (ibsim's SIM_HOST, a node
    /// name of the net file) with priority `priority`, and waits until it
    /// reports its state (STANDBY below the master's priority). Its files are
    /// in `osm-<host>/`; it reads the testbed's opensm.conf too when
    /// [`TestbedConfig::opensm_conf`] is set (e.g. a short
    /// `sminfo_polling_timeout` for a quick takeover).
    pub fn start_standby_opensm(&mut self, host: &str, priority: u8) -> Result<(), TestbedError> {
        self.start_standby(host, priority, None)
    }

    /// [`Testbed::start_standby_opensm`] with its own partitions.conf text
    /// (`-P`; written in `osm-<host>/`): what it configures once it is master.
    pub fn start_standby_opensm_with_partitions(
        &mut self,
        host: &str,
        priority: u8,
        partitions: &str,
    ) -> Result<(), TestbedError> {
        self.start_standby(host, priority, Some(partitions))
    }

    fn start_standby(
        &mut self,
        host: &str,
        priority: u8,
        partitions: Option<&str>,
    ) -> Result<(), TestbedError> {
        let osm = self.dir.join(format!("osm-{host}"));
        fs::create_dir_all(&osm).map_err(io("create standby osm dir"))?;
        let out = File::create(osm.join("osm.out")).map_err(io("create osm.out"))?;
        let err = out.try_clone().map_err(io("dup osm.out"))?;
        let mut cmd = self.command("opensm");
        if let Some(text) = &self.config.opensm_conf {
            let conf = self.dir.join("opensm.conf");
            if !conf.exists() {
                fs::write(&conf, text).map_err(io("write opensm.conf"))?;
            }
            cmd.arg("-F").arg(conf);
        }
        if let Some(text) = partitions {
            let file = osm.join("partitions.conf");
            fs::write(&file, text).map_err(io("write standby partitions.conf"))?;
            cmd.arg("-P").arg(file);
        }
        let child = cmd
            .env("SIM_HOST", host)
            .env("OSM_TMP_DIR", &osm)
            .env("OSM_CACHE_DIR", &osm)
            .args(["-d2", "-f"])
            .arg(osm.join("osm.log"))
            .args(["-p", &priority.to_string()])
            .args(["-s", &self.config.sm_sweep_secs.to_string()])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(io("spawn standby opensm"))?;
        self.standby.push(child);
        let log = osm.join("osm.log");
        wait_for(
            "the standby OpenSM's state in its osm.log",
            &self.dir,
            self.config.up_timeout,
            || {
                let text = fs::read_to_string(&log).unwrap_or_default();
                (text.contains("Entering STANDBY state") || text.contains("Entering MASTER state"))
                    .then_some(())
            },
        )
    }

    /// The PIDs of the standby OpenSMs ([`Testbed::start_standby_opensm`]),
    /// for a test that stops one itself (from a preloaded child process).
    pub fn standby_pids(&self) -> Vec<u32> {
        self.standby.iter().map(Child::id).collect()
    }

    /// Stops the standby OpenSMs ([`Testbed::start_standby_opensm`]).
    pub fn stop_standby_opensms(&mut self) {
        for mut c in self.standby.drain(..) {
            sigterm(c.id());
            reap(&mut c, Duration::from_secs(10));
        }
    }

    /// Stops OpenSM (SIGTERM, then SIGKILL after 10 s) - "dead SM" tests.
    pub fn stop_opensm(&mut self) {
        if let Some(mut c) = self.opensm.take() {
            sigterm(c.id());
            reap(&mut c, Duration::from_secs(10));
            let _ = fs::remove_file(self.dir.join("opensm.pid"));
        }
    }

    /// True while OpenSM runs.
    pub fn opensm_running(&self) -> bool {
        self.opensm.is_some()
    }

    /// Keeps the directory after drop (also: env `IBSNMPD_KEEP_TESTBED`, or a panicking test).
    pub fn keep_dir(&mut self) {
        self.keep = true;
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        self.stop_opensm();
        self.stop_standby_opensms();
        if let Ok(mut f) = open_console(&self.dir) {
            let _ = f.write_all(b"Quit\n");
        }
        reap(&mut self.ibsim, Duration::from_secs(5));
        let _ = self.holder.kill();
        let _ = self.holder.wait();
        if self.keep || std::thread::panicking() {
            eprintln!("testbed kept in {}", self.dir.display());
        } else {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// ibsim's console fifo for writing. Non-blocking: with ibsim alive (it
/// holds the read end) the open succeeds at once; with ibsim dead (a net
/// file it panicked on) it fails (ENXIO) instead of blocking for ever.
fn open_console(dir: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    /// Linux's O_NONBLOCK (no libc dependency for one flag).
    const O_NONBLOCK: i32 = 0o4000;
    OpenOptions::new()
        .write(true)
        .custom_flags(O_NONBLOCK)
        .open(dir.join("ctl"))
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// One hop of `ibtracert`'s output: the text naming the node (the "From"
/// line, or what follows "] -> "), the port the path enters it by and the
/// port it leaves by (None at the ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceHop<'a> {
    pub node: &'a str,
    pub entry: Option<u8>,
    pub exit: Option<u8>,
}

/// The hops of `ibtracert` text, in order (the diag is the truth tests
/// compare traces with; `None` for a line it does not shape as a hop).
pub fn ibtracert_hops(text: &str) -> Option<Vec<TraceHop<'_>>> {
    let mut hops: Vec<TraceHop<'_>> = Vec::new();
    for l in text.lines() {
        if l.starts_with("From ") {
            hops.push(TraceHop {
                node: l,
                entry: None,
                exit: None,
            });
        } else if let Some((exit, rest)) = l.split_once("] -> ") {
            let exit: u8 = exit.trim_start_matches('[').parse().ok()?;
            if let Some(h) = hops.last_mut() {
                h.exit = Some(exit);
            }
            let entry: u8 = rest
                .split_once("}[")
                .and_then(|(_, r)| r.split_once(']'))
                .and_then(|(p, _)| p.parse().ok())?;
            hops.push(TraceHop {
                node: rest,
                entry: Some(entry),
                exit: None,
            });
        }
    }
    Some(hops)
}

/// Non-comment lines of ibnetdiscover-format text, sorted: tools walk a
/// fabric in different orders, and ibnetdiscover's header comments carry a
/// timestamp.
pub fn sorted_lines(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim_end().to_string())
        .collect();
    v.sort();
    v
}
