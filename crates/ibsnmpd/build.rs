//! Build facts for `ibsnmpd_build_info` on /metrics: the commit built and
//! the compiler. A tree that is not a git checkout (a source tarball) says
//! `unknown`; IBSNMPD_REVISION overrides (packagers).

use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let o = Command::new(cmd).args(args).output().ok()?;
    let s = String::from_utf8(o.stdout).ok()?.trim().to_string();
    (o.status.success() && !s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=IBSNMPD_REVISION");
    // A new commit changes the revision: watch HEAD and the ref it names.
    for path in ["HEAD", "index"] {
        if let Some(p) = output("git", &["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(r) = output("git", &["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = output("git", &["rev-parse", "--git-path", &r]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    let revision = std::env::var("IBSNMPD_REVISION")
        .ok()
        .filter(|r| !r.is_empty())
        .or_else(|| output("git", &["describe", "--always", "--dirty", "--abbrev=12"]))
        .unwrap_or_else(|| "unknown".into());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = output(&rustc, &["--version"])
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=IBSNMPD_REVISION={revision}");
    println!("cargo:rustc-env=IBSNMPD_RUSTC_VERSION={rustc_version}");
}
