//! Shared helpers for the umad integration tests: re-running one test in a child process
//! under the umad2sim preload, and parsing ibnetdiscover's output.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use ib_testbed::Testbed;

/// True inside the preloaded child.
pub fn in_child() -> bool {
    std::env::var_os("UMAD_TEST_CHILD").is_some()
}

/// Re-runs test `name` of this test binary under the testbed's preload; fails if it fails.
/// Extra env pairs are passed to the child (e.g. the console fifo path).
pub fn run_child(tb: &Testbed, name: &str, extra: &[(&str, String)]) -> String {
    let mut c = tb.command(std::env::current_exe().unwrap());
    c.env("UMAD_TEST_CHILD", "1")
        .env("UMAD_TESTBED_DIR", tb.dir())
        .args(["--exact", name, "--nocapture", "--test-threads=1"]);
    for (k, v) in extra {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    let se = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "child test {name} failed:\n{so}\n{se}"
    );
    so
}

/// ibnetdiscover's view: links (node GUID, port) -> (node GUID, port), switch LIDs
/// (base port 0) and CA port LIDs, port GUIDs of CA ports.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct IbnetView {
    pub links: BTreeSet<((u64, u8), (u64, u8))>,
    pub switch_lids: BTreeMap<u64, u16>,
    pub ca_port_lids: BTreeMap<(u64, u8), u16>,
    pub ca_port_guids: BTreeMap<(u64, u8), u64>,
    pub switch_ports: BTreeMap<u64, u8>,
}

fn hex_after(s: &str, prefix: &str) -> Option<u64> {
    let i = s.find(prefix)? + prefix.len();
    let h: String = s[i..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    u64::from_str_radix(&h, 16).ok()
}

fn quoted_guid(s: &str) -> Option<u64> {
    // "S-0000000000200001" or "H-..."
    let i = s
        .find("\"S-")
        .or_else(|| s.find("\"H-"))
        .or_else(|| s.find("\"R-"))?
        + 3;
    u64::from_str_radix(s.get(i..i + 16)?, 16).ok()
}

fn num_after(s: &str, prefix: &str) -> Option<u64> {
    let i = s.find(prefix)? + prefix.len();
    let d: String = s[i..].chars().take_while(|c| c.is_ascii_digit()).collect();
    d.parse().ok()
}

pub fn parse_ibnetdiscover(text: &str) -> IbnetView {
    let mut v = IbnetView::default();
    let mut cur: Option<(u64, bool)> = None;
    for line in text.lines() {
        let l = line.trim_start();
        if l.starts_with("Switch") || l.starts_with("Ca") || l.starts_with("Rt") {
            let g = quoted_guid(l).unwrap();
            let sw = l.starts_with("Switch");
            let nports: u8 = l.split_whitespace().nth(1).unwrap().parse().unwrap();
            if sw {
                v.switch_lids
                    .insert(g, num_after(l, "base port 0 lid ").unwrap() as u16);
                v.switch_ports.insert(g, nports);
            }
            cur = Some((g, sw));
        } else if l.starts_with('[') {
            let (g, sw) = cur.unwrap();
            let port = num_after(l, "[").unwrap() as u8;
            let rest = &l[l.find(']').unwrap() + 1..];
            let (before_comment, comment) = rest.split_once('#').unwrap_or((rest, ""));
            let peer = quoted_guid(before_comment).unwrap();
            let q = before_comment.find('"').unwrap();
            let after_q = &before_comment[q + 1..];
            let close = after_q.find('"').unwrap();
            let pport = num_after(&after_q[close + 1..], "[").unwrap() as u8;
            v.links.insert(((g, port), (peer, pport)));
            if !sw {
                if let Some(pg) = hex_after(rest, "(") {
                    if rest.trim_start().starts_with('(') {
                        v.ca_port_guids.insert((g, port), pg);
                    }
                }
                v.ca_port_lids
                    .insert((g, port), num_after(comment, "lid ").unwrap() as u16);
            }
        }
    }
    v
}

/// Sends a command to the testbed's ibsim console from the preloaded child (the parent
/// owns the Testbed; the child only knows its directory).
pub fn child_console(cmd: &str) {
    use std::io::Write;
    let dir = std::env::var("UMAD_TESTBED_DIR").unwrap();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("{dir}/ctl"))
        .unwrap();
    writeln!(f, "{cmd}").unwrap();
    drop(f);
    // ibsim applies console commands asynchronously to MAD processing.
    std::thread::sleep(std::time::Duration::from_millis(300));
}

/// Signals the testbed's OpenSM from the child (`STOP` freezes it: a dead SM for the
/// fabric; `CONT` brings it back).
pub fn child_signal_opensm(sig: &str) {
    let dir = std::env::var("UMAD_TESTBED_DIR").unwrap();
    let pid = std::fs::read_to_string(format!("{dir}/opensm.pid")).unwrap();
    let st = std::process::Command::new("kill")
        .args([&format!("-{sig}"), pid.trim()])
        .status()
        .unwrap();
    assert!(st.success());
}

/// Runs an infiniband-diags tool from the child (the preload env is inherited).
pub fn child_diag(cmd: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(cmd).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Starts a testbed or fails the test with the reason in words (e.g. which package to
/// install when ibsim or OpenSM is missing).
pub fn start(cfg: ib_testbed::TestbedConfig) -> Testbed {
    Testbed::start(cfg).unwrap_or_else(|e| panic!("cannot start the ibsim testbed: {e}"))
}

/// A umad source with the tests' transport settings: window 64 (well under
/// umad2sim's limit) and 200 ms timeouts.
pub fn open_source(mut o: ib::source::umad::UmadOptions) -> ib::source::umad::UmadSource {
    o.transport.window = 64;
    o.transport.timeout = std::time::Duration::from_millis(200);
    ib::source::umad::UmadSource::open(None, None, o).unwrap()
}

/// `o` reading every port's detail attributes (what the daemon does for the
/// metrics families `detail` and `vl`, and dumps) every `detail_every` sweeps.
pub fn with_details(
    mut o: ib::source::umad::UmadOptions,
    detail_every: u32,
) -> ib::source::umad::UmadOptions {
    o.pma.remote_details = ib::source::umad::pma::detail::ALL;
    o.pma.detail_every = detail_every;
    o
}

/// The parent side of a test on `SMALL_NET`: starts the testbed and re-runs
/// test `name` in the preloaded child.
pub fn run_on_small_net(name: &str) {
    run_on_net(ib_testbed::SMALL_NET, name)
}

/// The parent side of a test on the fabric `net` (ibsim's net format):
/// starts the testbed and re-runs test `name` in the preloaded child.
pub fn run_on_net(net: impl Into<String>, name: &str) {
    let tb = start(ib_testbed::TestbedConfig::new(net));
    println!("{}", run_child(&tb, name, &[]));
}

/// [`run_on_net`] on a three-level fat tree of 8-port switches (parallel
/// paths, 4 hops deep) with `hosts` hosts, as the topology module writes it.
pub fn run_on_fat_tree(hosts: usize, name: &str) {
    let topo = ib::topology::fat_tree(hosts, 8, 3).unwrap();
    run_on_net(
        ib::topology::write_ibnetdiscover(&topo, &Default::default()),
        name,
    )
}

/// The node with this description.
pub fn node<'a>(s: &'a ib::model::Snapshot, desc: &str) -> Option<&'a ib::model::Node> {
    s.nodes.iter().find(|n| n.description == desc)
}

/// The GUID of the node with this description.
pub fn guid(s: &ib::model::Snapshot, desc: &str) -> ib::types::Guid {
    node(s, desc).expect(desc).info.node_guid
}

/// Hops as ibtracert shows them: (node description, entry, exit).
pub fn named_hops(
    s: &ib::model::Snapshot,
    hops: &[ib::model::route::Hop],
) -> Vec<(String, Option<u8>, Option<u8>)> {
    hops.iter()
        .map(|h| {
            (
                s.node(h.node).unwrap().description.clone(),
                h.entry.map(|p| p.0),
                h.exit.map(|p| p.0),
            )
        })
        .collect()
}
