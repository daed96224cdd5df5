//! `ibsnmpd dump --source umad --format ibnetdiscover`, run as an operator
//! would under umad2sim, prints what ibnetdiscover prints for the same ibsim
//! fabric: the same nodes, GUIDs, port numbers, LIDs and links.

use ib_testbed::{sorted_lines, Testbed, TestbedConfig, SMALL_NET};

/// `ibsnmpd dump --source umad ARGS` on the testbed, which must succeed.
fn dump(tb: &Testbed, args: &[&str]) -> std::process::Output {
    let out = tb
        .command(env!("CARGO_BIN_EXE_ibsnmpd"))
        .args(["dump", "--source", "umad"])
        .args(args)
        .output()
        .expect("run ibsnmpd dump");
    assert!(
        out.status.success(),
        "ibsnmpd dump {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn dump_equals_ibnetdiscover(net: &str) {
    let tb = Testbed::start(TestbedConfig::new(net))
        .unwrap_or_else(|e| panic!("cannot start the ibsim testbed: {e}"));
    let ours = dump(&tb, &["--format", "ibnetdiscover"]);
    let theirs = tb
        .run_diag("ibnetdiscover", &[])
        .expect("run ibnetdiscover");
    assert_eq!(theirs.code, Some(0), "ibnetdiscover: {}", theirs.stderr);
    let ours = String::from_utf8_lossy(&ours.stdout);
    let (a, b) = (sorted_lines(&ours), sorted_lines(&theirs.stdout));
    assert!(
        b.iter().any(|l| l.starts_with('[')),
        "ibnetdiscover printed no ports:\n{}",
        theirs.stdout
    );
    assert_eq!(a, b, "ours:\n{ours}\nibnetdiscover:\n{}", theirs.stdout);
}

#[test]
fn dump_umad_equals_ibnetdiscover_small_fabric() {
    dump_equals_ibnetdiscover(SMALL_NET);
}

#[test]
fn dump_umad_equals_ibnetdiscover_fat_tree() {
    let topo = ib::topology::fat_tree(64, 16, 2).expect("fat tree");
    let net = ib::topology::write_ibnetdiscover(&topo, &Default::default());
    dump_equals_ibnetdiscover(&net);
}

/// Ports of a JSON dump whose PortRcvErrorDetails was read, and ports whose
/// counters were.
fn ports_with_details(tb: &Testbed, extra: &[&str]) -> (usize, usize) {
    let args: Vec<&str> = ["--format", "json"].iter().chain(extra).copied().collect();
    let dump: serde_json::Value =
        serde_json::from_slice(&dump(tb, &args).stdout).expect("dump JSON");
    let ports: Vec<&serde_json::Value> = dump["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .flat_map(|n| n["ports"].as_array().expect("ports"))
        .filter(|p| !p["counters"].is_null())
        .collect();
    let detailed = ports
        .iter()
        .filter(|p| !p["counters"]["raw"]["rcv_error_details"].is_null())
        .count();
    (detailed, ports.len())
}

/// A dump reads what the agent serves: other nodes' detail attributes
/// only with `--remote-details`, which reads them for every port.
#[test]
fn remote_details_are_read_on_request() {
    let tb = Testbed::start(TestbedConfig::new(SMALL_NET))
        .unwrap_or_else(|e| panic!("cannot start the ibsim testbed: {e}"));
    let (plain, ports) = ports_with_details(&tb, &[]);
    let (asked, ports_asked) = ports_with_details(&tb, &["--remote-details"]);
    eprintln!(
        "details: {plain} of {ports} ports plain, {asked} of {ports_asked} with --remote-details"
    );
    assert_eq!(ports, ports_asked, "the same ports were read both times");
    assert!(
        plain < ports,
        "without --remote-details only the local node's ports have details: {plain} of {ports}"
    );
    assert_eq!(
        asked, ports,
        "with --remote-details every read port has its PortRcvErrorDetails"
    );
}
