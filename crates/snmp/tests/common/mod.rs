//! What the integration tests share: running net-snmp's tools and a
//! runtime for an agent under test.

use std::process::Command;

use snmp::oid::Oid;

/// Runs one of net-snmp's tools with numeric OIDs, one try of one second
/// and `args`: (success, stdout and stderr).
pub fn run(tool: &str, args: &[&str]) -> (bool, String) {
    let o = Command::new(tool)
        .args(["-On", "-t", "1", "-r", "0"])
        .args(args)
        .output()
        .expect("net-snmp tools installed");
    let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    (o.status.success(), s)
}

/// A runtime for an agent under test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `tool` (see [`run`]) and checks that it succeeds, or fails, as
/// `ok` says, and that its output holds `want`; returns the output.
#[allow(dead_code)] // not every test binary uses it
pub fn expect(tool: &str, args: &[&str], ok: bool, want: &str) -> String {
    let (succeeded, out) = run(tool, args);
    assert!(
        succeeded == ok && out.contains(want),
        "{tool} {args:?}: {out}"
    );
    out
}

/// A dotted OID of the test's own writing.
#[allow(dead_code)] // not every test binary uses it
pub fn oid(s: &str) -> Oid {
    s.parse().unwrap()
}

/// Starts `agent` on `rt`: the ports it listens on, in its configuration's
/// order.
#[allow(dead_code)] // not every test binary uses it
pub fn serve<V, K>(rt: &tokio::runtime::Runtime, agent: snmp::agent::Agent<V, K>) -> Vec<u16>
where
    V: Send + Sync + 'static,
    K: Send + Sync + 'static,
{
    let ports = agent.local_addrs().iter().map(|a| a.port()).collect();
    rt.spawn(agent.run());
    ports
}
