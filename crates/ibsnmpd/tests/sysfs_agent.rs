//! The real binary on the sysfs fixture tree (crates/ib/tests/fixtures/sysfs/host):
//! `ibsnmpd --source sysfs:<fixture>` walked with net-snmp's snmpwalk, and the
//! clear errors of `ibsnmpd dump --source sysfs:...` on bad roots, and the
//! agent on a tree with faulty devices beside good ones (fixtures/sysfs/faulty).
//! (Counter formulas, resets and discontinuities over sysfs: if_mib.rs.)

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{curl, free_port, Agent, BIN};

const IF_NUMBER: &str = ".1.3.6.1.2.1.2.1.0";
const IF_TABLE: &str = ".1.3.6.1.2.1.2.2";
const IF_X_TABLE: &str = ".1.3.6.1.2.1.31.1.1";
const IB_IPOIB_ADDR: &str = ".1.3.6.1.3.117.2.1.3.1.3";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ib/tests/fixtures/sysfs/host")
}

/// A numeric walk as `OID -> value` (`-On -Oe -OQ`: numbers; text without
/// quotes; hex strings, which net-snmp wraps over lines, joined).
fn walk(agent: &Agent, oid: &str) -> BTreeMap<String, String> {
    let out = agent.ok("snmpwalk", "2c", "public", &["-Oe", "-OQ"], &[oid]);
    let mut t = BTreeMap::new();
    let mut last: Option<String> = None;
    for l in out.lines() {
        if l.contains("No more variables left") || l.contains("End of MIB") {
            last = None;
        } else if let Some((k, v)) = l.split_once(" = ") {
            let k = k.trim().to_string();
            t.insert(k.clone(), v.trim().trim_matches('"').trim().to_string());
            last = Some(k);
        } else if let Some(v) = last.as_ref().and_then(|k| t.get_mut(k)) {
            v.push(' ');
            v.push_str(l.trim().trim_matches('"').trim());
        }
    }
    t
}

fn get<'a>(t: &'a BTreeMap<String, String>, oid: &str) -> &'a str {
    t.get(oid)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("{oid} missing in {t:#?}"))
}

/// The agent on the sysfs tree at `root`, mlx5_0 as "this system", one
/// sweep an hour, with `extra` arguments.
fn mlx5_agent(root: &Path, extra: &[&str]) -> Agent {
    let spec = format!("sysfs:{}", root.display());
    let mut args = vec![
        "--source",
        &spec,
        "--local-node",
        "mlx5_0",
        "--sweep-interval",
        "3600",
    ];
    args.extend_from_slice(extra);
    Agent::start(&args)
}

#[test]
fn if_table_of_the_hdr_hca_walks() {
    let agent = mlx5_agent(&fixture(), &[]);
    assert_eq!(agent.get_number(IF_NUMBER), 1);
    let t = walk(&agent, IF_TABLE);
    let e = ".1.3.6.1.2.1.2.2.1";
    assert_eq!(get(&t, &format!("{e}.1.1")), "1");
    assert!(
        get(&t, &format!("{e}.2.1")).contains("mlx5_0 port 1 4x HDR"),
        "{t:#?}"
    );
    // (column, value, what it says).
    for (c, want, what) in [
        (3, "199", "ifType infiniband"),
        (4, "4096", "ifMtu from ib0's datagram MTU"),
        (5, "4294967295", "ifSpeed at its maximum"),
        (6, "001A", "ifPhysAddress = LID 0x1a"),
        (8, "1", "ifOperStatus up"),
    ] {
        assert_eq!(
            get(&t, &format!("{e}.{c}.1")).replace(' ', ""),
            want,
            "{what}"
        );
    }
    assert!(
        !t.keys().any(|k| k.ends_with(".2")),
        "only the local device's one port: {t:#?}"
    );
    let x = walk(&agent, IF_X_TABLE);
    let xe = ".1.3.6.1.2.1.31.1.1.1";
    assert_eq!(
        get(&x, &format!("{xe}.15.1")),
        "200000",
        "ifHighSpeed 4x HDR"
    );
    // ifHCOutOctets = PortXmitData*4 + PortXmitPkts*4 from counters/ (64-bit).
    assert_eq!(
        get(&x, &format!("{xe}.10.1")),
        (73_728_374_651_234u64 * 4 + 45_678_901_234 * 4).to_string()
    );

    // ib0 and its P_Key child ib0.8001 over port 1; the RoCE netdev is absent.
    let a = walk(&agent, IB_IPOIB_ADDR);
    assert_eq!(a.len(), 2, "{a:#?}");
    assert!(
        a.keys()
            .all(|k| k.starts_with(&format!("{IB_IPOIB_ADDR}.1."))),
        "{a:#?}"
    );
    for v in a.values() {
        let flat = v.replace(' ', "").to_uppercase();
        assert!(flat.contains("FE800000000000000C42A10300A1B2C4"), "{v}");
    }
}

#[test]
fn a_down_port_and_a_qdr_port_of_the_dual_port_hca() {
    let spec = format!("sysfs:{}", fixture().display());
    let agent = Agent::start(&["--source", &spec, "--sweep-interval", "3600"]);
    // Default "this system": the first device in name order, mlx4_0.
    assert_eq!(agent.get_number(IF_NUMBER), 2);
    let t = walk(&agent, IF_TABLE);
    let e = ".1.3.6.1.2.1.2.2.1";
    assert!(
        get(&t, &format!("{e}.2.1")).contains("mlx4_0 port 1 4x QDR"),
        "{t:#?}"
    );
    assert_eq!(get(&t, &format!("{e}.8.1")), "1");
    assert_eq!(get(&t, &format!("{e}.8.2")), "2", "port 2 is down");
    assert_eq!(
        get(&t, &format!("{e}.6.2")),
        "",
        "no LID, empty ifPhysAddress"
    );
    let x = walk(&agent, IF_X_TABLE);
    assert_eq!(get(&x, ".1.3.6.1.2.1.31.1.1.1.15.1"), "32000", "4x QDR");
}

/// A host with faulty devices beside good ones: the agent serves the good
/// ones with their values, leaves out what could not be read, and logs
/// each cause once.
#[test]
fn faulty_devices_leave_the_good_ones_served() {
    let faulty = fixture().join("../faulty");
    let mport = free_port("127.0.0.1");
    let agent = mlx5_agent(&faulty, &["--metrics", &format!("127.0.0.1:{mport}")]);
    assert_eq!(agent.get_number(IF_NUMBER), 1, "mlx5_0's one port");
    let m = curl(&format!("http://127.0.0.1:{mport}/metrics"));
    let lines = |needles: &[&str]| -> Vec<&str> {
        m.lines()
            .filter(|l| needles.iter().all(|n| l.contains(n)))
            .collect()
    };
    // mlx5_0 has no NodeDescription: its device name is the hca label.
    let bare = "guid=\"0x0c42a10300a1c3e0\",hca=\"mlx5_0\",port=\"1\"";
    assert_eq!(
        lines(&["infiniband_hca_port_transmit_data_bytes_total{", bare]),
        [format!(
            "infiniband_hca_port_transmit_data_bytes_total{{{bare}}} 4000000"
        )],
        "{m}"
    );
    // mlx5_2 has no PMA: its state is served, its counters are absent.
    let no_pma = "guid=\"0x0c42a10300a1c3f0\",hca=\"node02 mlx5_2\",port=\"1\"";
    assert_eq!(
        lines(&["infiniband_hca_port_state_id{", no_pma]),
        [format!("infiniband_hca_port_state_id{{{no_pma}}} 4")]
    );
    assert!(lines(&["_total{", no_pma]).is_empty(), "{m}");
    // mlx5_1 (no node_guid) is not served; mlx4_0 is, both ports.
    assert!(!m.contains("mlx5_1"), "{m}");
    assert_eq!(
        lines(&["infiniband_hca_port_state_id{", "node02 mlx4_0"]).len(),
        2
    );

    let log = agent.log_text();
    let count = |needles: &[&str]| {
        log.lines()
            .filter(|l| needles.iter().all(|n| l.contains(n)))
            .count()
    };
    assert_eq!(count(&["mlx5_1", "node_guid: missing"]), 1, "{log}");
    assert_eq!(count(&["mlx5_2 port 1", "N/A (no PMA)"]), 1, "{log}");
    assert_eq!(count(&["mlx4_0 port 2", "rate"]), 1, "{log}");
}

fn dump(spec: &str) -> std::process::Output {
    Command::new(BIN)
        .args(["dump", "--source", spec, "--format", "json"])
        .output()
        .unwrap()
}

#[test]
fn dump_reads_the_fixture_and_bad_roots_fail_clearly() {
    let out = dump(&format!("sysfs:{}", fixture().display()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        j["nodes"].as_array().unwrap().len(),
        2,
        "RoCE-only mlx5_1 left out"
    );

    let out = dump("sysfs:/nonexistent/sysfs-root");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/sysfs-root"), "{err}");

    let empty = tempfile::tempdir().unwrap();
    let out = dump(&format!("sysfs:{}", empty.path().display()));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sys/class/infiniband does not exist"), "{err}");
}

/// A host without InfiniBand hardware (an empty sysfs root): the agent
/// with either source of this host's hardware refuses to start alike
/// (exit 2, one line) saying what is missing and how to try it anyway;
/// under systemd the udev rule starts it when a device appears
/// (docs/install.md). `dump` and `health` say the same.
#[test]
fn without_rdma_devices_umad_and_sysfs_say_so_alike() {
    let empty = tempfile::tempdir().unwrap();
    let conf = empty.path().join("ibsnmpd.toml");
    common::write_private(
        &conf,
        &format!("[umad]\nsysfs_root = {:?}\n", empty.path().display()),
    );
    let conf = conf.to_str().unwrap();
    let sysfs = format!("sysfs:{}", empty.path().display());
    let class = format!("{}/sys/class/infiniband", empty.path().display());
    let expected = format!(
        "no RDMA devices: {class} does not exist; is the InfiniBand driver loaded?; \
         to try the agent without hardware: --source sim"
    );
    let mut runs: Vec<Vec<&str>> = vec![
        vec!["--source", &sysfs, "--listen", "127.0.0.1:0"],
        vec!["dump", "--source", &sysfs],
        vec!["health", "--source", &sysfs],
    ];
    // libibumad reads the real /sys: on a host with RDMA devices it opens
    // one, and only the sysfs source can be shown an empty host.
    if Path::new("/sys/class/infiniband").exists() {
        eprintln!("this host has RDMA devices: the umad source is not checked");
    } else {
        runs.push(vec![
            "--config",
            conf,
            "--source",
            "umad",
            "--listen",
            "127.0.0.1:0",
        ]);
    }
    for args in runs {
        let o = Command::new(BIN).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(&expected), "{args:?}: {err}");
        assert!(!err.contains("mthca0"), "{args:?}: {err}");
    }
    // The spec from the configuration file: the file's line and key are
    // blamed, not a --source flag nobody gave.
    let from_file = empty.path().join("source.toml");
    common::write_private(
        &from_file,
        &format!("log_level = \"info\"\nsource = {sysfs:?}\n"),
    );
    let o = Command::new(BIN)
        .arg("--config")
        .arg(&from_file)
        .args(["--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(&format!(
            "ibsnmpd: {}:2: source {sysfs}: ",
            from_file.display()
        )),
        "{err}"
    );
    assert!(!err.contains("--source sysfs"), "{err}");
    assert!(err.contains(&expected), "{err}");
}
