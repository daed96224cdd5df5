//! A real ibsim for tests: one per test, isolated by IBSIM_SOCKNAME, always torn down.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const UMAD2SIM: &str = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

/// Whether ibsim, umad2sim and infiniband-diags are installed.
pub fn available() -> bool {
    Path::new(UMAD2SIM).exists()
        && Command::new("ibsim").arg("-h").output().is_ok()
        && Command::new("ibnetdiscover").arg("-h").output().is_ok()
}

pub struct IbSim {
    pub dir: tempfile::TempDir,
    pub sockname: String,
    child: Child,
    console: Option<ChildStdin>,
}

impl IbSim {
    /// Starts ibsim on `net` (without OpenSM) and waits until it is ready.
    pub fn start(net: &Path, extra_args: &[&str]) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let sockname = format!("ibsnmpd-model-{}-{}", std::process::id(), rand_suffix());
        let out = std::fs::File::create(dir.path().join("ibsim.out")).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        // The console's stdin stays open (a pipe we hold): at EOF ibsim would spin.
        let mut child = Command::new("ibsim")
            .args(["-s"])
            .args(extra_args)
            .arg(net)
            .current_dir(dir.path())
            .env("IBSIM_SOCKNAME", &sockname)
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("ibsim: {e}"))?;
        let console = child.stdin.take();
        let mut sim = IbSim {
            dir,
            sockname,
            child,
            console,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = sim.log();
            if log.contains("Network simulator ready") {
                return Ok(sim);
            }
            if log.contains("fatal") || log.contains("parsing failed") {
                return Err(format!("ibsim refused {}: {log}", net.display()));
            }
            if let Ok(Some(st)) = sim.child.try_wait() {
                return Err(format!("ibsim exited ({st}): {log}"));
            }
            if Instant::now() > deadline {
                return Err(format!("ibsim not ready after 60 s: {log}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("ibsim.out")).unwrap_or_default()
    }

    pub fn console(&mut self, cmd: &str) {
        if let Some(c) = self.console.as_mut() {
            let _ = writeln!(c, "{cmd}");
            let _ = c.flush();
        }
    }

    /// Runs an infiniband-diags tool against this fabric.
    pub fn run(&self, tool: &str, args: &[&str]) -> Output {
        Command::new(tool)
            .args(args)
            .current_dir(self.dir.path())
            .env("IBSIM_SOCKNAME", &self.sockname)
            .env("LD_PRELOAD", UMAD2SIM)
            .output()
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for IbSim {
    fn drop(&mut self) {
        self.console("Quit");
        self.console = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    t ^ (N.fetch_add(1, Ordering::Relaxed) << 32)
}
