//! Trees as real hosts leave them: tests/fixtures/sysfs/faulty (see
//! make_fixtures.py there) and faults made in a copy of the good fixture.
//! Each checks that the good devices are served with their values, the bad
//! parts are absent, and each cause is logged once.
//!
//! The kernel's EINVAL, EACCES and ENODEV cannot come from a regular file:
//! the fixture puts a directory where `rate` should be (EISDIR, which the
//! source treats like EINVAL), and the classification of each errno is
//! unit-tested in src/source/sysfs/attr.rs.

use super::*;
use std::sync::{Arc, Mutex};

/// mlx5_0 of the faulty tree: HDR, no NodeDescription.
const BARE: Guid = Guid(0x0c42_a103_00a1_c3e0);
/// mlx5_2: counters `N/A (no PMA)`.
const NO_PMA: Guid = Guid(0x0c42_a103_00a1_c3f0);
/// mlx4_0: port 1 QDR, port 2 down with an unreadable `rate`.
const QDR: Guid = Guid(0x0002_c903_00f1_b3c0);

fn faulty() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/faulty")
}

/// The log lines written while a closure ran (info and up, no colours).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

/// Every log line of this test binary goes to one buffer through a global
/// subscriber: one scoped to a thread (`with_default`) missed lines when
/// other tests' threads met the same callsites first with none (tracing
/// caches a callsite's interest), which made the counts below flaky.
/// Lines carry their thread's name, which the harness gives each test.
static LINES: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static TURN: Mutex<()> = Mutex::new(());

struct Global;

impl std::io::Write for Global {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        LINES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let sub = tracing_subscriber::fmt()
            .with_writer(|| Global)
            .with_ansi(false)
            .with_thread_names(true)
            .with_max_level(tracing::Level::INFO)
            .finish();
        let _ = tracing::subscriber::set_global_default(sub);
    });
}

impl Logs {
    fn during<T>(&self, f: impl FnOnce() -> T) -> T {
        install();
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        LINES.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let r = f();
        let got = std::mem::take(&mut *LINES.lock().unwrap_or_else(|e| e.into_inner()));
        // This test's lines only (the harness names its thread after it):
        // other tests log meanwhile.
        let me = std::thread::current()
            .name()
            .unwrap_or_default()
            .to_string();
        let mine: String = String::from_utf8_lossy(&got)
            .lines()
            .filter(|l| l.contains(&me))
            .map(|l| format!("{l}\n"))
            .collect();
        self.0.lock().unwrap().extend_from_slice(mine.as_bytes());
        r
    }
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .map(str::to_string)
            .collect()
    }
    /// Lines containing every one of `needles`.
    fn count(&self, needles: &[&str]) -> usize {
        self.lines()
            .iter()
            .filter(|l| needles.iter().all(|n| l.contains(n)))
            .count()
    }
}

fn port(s: &Snapshot, node: Guid, num: u8) -> &ib::model::Port {
    s.port(s.port_of(node, PortNum(num)).unwrap()).unwrap()
}

#[test]
fn a_real_hosts_faults_leave_out_only_the_faulty_parts() {
    let logs = Logs::default();
    let mut src = SysfsSource::new(faulty())
        .unwrap()
        .with_local_node(Some("mlx5_0".into()));
    let s = logs.during(|| src.sweep_snapshot()).unwrap();

    // mlx5_1 (no node_guid) and the iWARP device are not nodes; the others are.
    let descs: Vec<_> = s.nodes.iter().map(|n| n.description.as_str()).collect();
    assert_eq!(
        descs,
        ["node02 mlx4_0", "mlx5_0", "node02 mlx5_2"],
        "mlx5_0 has no NodeDescription: its name stands in"
    );
    assert_eq!(s.local_node().unwrap().info.node_guid, BARE);
    assert_eq!(s.local_ca.as_deref(), Some("mlx5_0"));

    // The good HCA with its values.
    let p = port(&s, BARE, 1);
    assert_eq!(p.info.port_state(), Some(PortState::Active));
    assert_eq!(p.info.link_speed(false), Some(LinkSpeed::Hdr));
    assert_eq!(p.info.neighbor_mtu(), Some(Mtu::Mtu2048), "ib0 over it");
    let t = &p.counters.as_ref().unwrap().totals;
    assert_eq!((t.port_xmit_data, t.port_rcv_pkts), (1_000_000, 20_000));

    // No PMA: state and rate served, counters absent (never 0).
    let p = port(&s, NO_PMA, 1);
    assert_eq!(p.info.port_state(), Some(PortState::Active));
    assert_eq!(p.info.link_width(), Some(LinkWidth::X4));
    assert_eq!(p.info.link_speed(false), Some(LinkSpeed::Edr));
    assert!(p.counters.is_none());
    assert!(s
        .node(s.node_by_guid(NO_PMA).unwrap())
        .unwrap()
        .pma
        .is_none());

    // The down port whose rate is refused: no width or speed; the rest stays.
    let p2 = port(&s, QDR, 2);
    assert_eq!(p2.info.port_state(), Some(PortState::Down));
    assert_eq!(p2.info.link_width(), None);
    assert!(p2.counters.is_some());
    assert_eq!(
        port(&s, QDR, 1).info.link_speed(false),
        Some(LinkSpeed::Qdr)
    );

    // bonding_masters (a file) and the bond are not IPoIB interfaces.
    let names: Vec<_> = s.ipoib.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["ib0", "ib1"]);

    // One line per cause, naming it.
    assert_eq!(logs.count(&["mlx5_1", "node_guid: missing"]), 1);
    assert_eq!(logs.count(&["mlx5_1"]), 1);
    assert_eq!(logs.count(&["mlx5_2 port 1", "N/A (no PMA)"]), 1);
    assert_eq!(logs.count(&["N/A (no PMA)"]), 1);
    assert_eq!(logs.count(&["mlx4_0 port 2", "ports/2/rate"]), 1);
    assert_eq!(logs.count(&["iwp59s0f4", "node type 4: RNIC"]), 1);
    assert!(
        !logs.lines().iter().any(|l| l.contains("bond")),
        "{:#?}",
        logs.lines()
    );
    let kinds: Vec<_> = src
        .last_scan()
        .unwrap()
        .notes
        .iter()
        .map(|n| (n.kind, n.subject.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (NoteKind::ValueAbsent, "mlx4_0 port 2"),
            (NoteKind::DeviceLeftOut, "mlx5_1"),
            (NoteKind::CountersAbsent, "mlx5_2 port 1"),
        ]
    );

    // The next sweep logs nothing new.
    let before = logs.lines().len();
    logs.during(|| src.sweep_snapshot()).unwrap();
    assert_eq!(logs.lines().len(), before, "{:#?}", logs.lines());
}

#[test]
fn devices_come_and_go_between_sweeps() {
    let (t, root) = writable();
    let class = root.join("sys/class/infiniband");
    let parked = t.path().join("mlx4_0-unplugged");
    let logs = Logs::default();
    let mut src = SysfsSource::new(&root)
        .unwrap()
        .with_local_node(Some("mlx4_0".into()));
    let mut sweep = || logs.during(|| src.sweep_snapshot()).unwrap();
    let s1 = sweep();
    assert_eq!(s1.nodes.len(), 2);

    // Unplugged: gone from the tables with its IPoIB netdev; it was the
    // local node, so IF-MIB has no ports (one line) instead of failing.
    fs::rename(class.join("mlx4_0"), &parked).unwrap();
    let s2 = sweep();
    assert!(s2.node_by_guid(MLX4).is_none());
    assert!(s2.node_by_guid(MLX5).is_some());
    assert_eq!(s2.local_node, None);
    assert_eq!(s2.local_ca, None);
    let names: Vec<_> = s2.ipoib.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["ib0", "ib0.8001"]);
    assert_eq!(logs.count(&["mlx4_0", "local node absent"]), 1);
    sweep();
    assert_eq!(logs.count(&["mlx4_0"]), 1, "logged once while it lasts");

    // A new device is served on the next sweep.
    let new = class.join("mlx5_9");
    copy_dir(&class.join("mlx5_0"), &new);
    fs::write(new.join("node_guid"), "0c42:a103:00a1:b2c9\n").unwrap();
    fs::write(
        new.join("ports/1/gids/0"),
        "fe80:0000:0000:0000:0c42:a103:00a1:b2c9\n",
    )
    .unwrap();
    let s3 = sweep();
    assert!(s3.node_by_guid(Guid(0x0c42_a103_00a1_b2c9)).is_some());

    // Back, its counters reset by the driver's reload: totals start over
    // from the new readings (no history kept from before), local again.
    fs::write(
        parked.join("ports/1/counters_ext/port_xmit_data_64"),
        "17\n",
    )
    .unwrap();
    fs::rename(&parked, class.join("mlx4_0")).unwrap();
    let s4 = sweep();
    assert_eq!(s4.local_node().unwrap().info.node_guid, MLX4);
    assert_eq!(totals(&s4, MLX4, 1).port_xmit_data, 17);

    // Gone again: the cause cleared and came back, so it is logged again.
    fs::remove_dir_all(class.join("mlx4_0")).unwrap();
    sweep();
    assert_eq!(logs.count(&["mlx4_0", "local node absent"]), 2);
}

#[test]
fn a_device_removed_while_being_read_is_left_out() {
    // /sys/class/infiniband/<dev> is a symlink into /sys/devices: a device
    // removed after the listing leaves it dangling.
    let (_t, root) = writable();
    let class = root.join("sys/class/infiniband");
    std::os::unix::fs::symlink(root.join("sys/devices/gone/mlx5_7"), class.join("mlx5_7")).unwrap();
    let mut src = SysfsSource::new(&root).unwrap();
    let s = src.sweep_snapshot().unwrap();
    assert_eq!(s.nodes.len(), 2);
    let n = notes_about(&src, "mlx5_7");
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].kind, NoteKind::DeviceLeftOut);
    assert_eq!(n[0].cause, "removed while being read");
}

#[test]
fn counters_that_turn_unreadable_keep_their_totals() {
    // A PMA that stops answering for a while: no 0 in between (which the
    // accumulators would take for a reset and count everything again).
    let (_t, root) = writable();
    let mut src = SysfsSource::new(&root).unwrap();
    let t1 = totals(&src.sweep_snapshot().unwrap(), MLX5, 1);
    let cdir = port_dir(&root, "mlx5_0", 1).join("counters");
    let saved = fs::read_to_string(cdir.join("port_xmit_data")).unwrap();
    for e in fs::read_dir(&cdir).unwrap() {
        fs::write(e.unwrap().path(), "N/A (no PMA)\n").unwrap();
    }
    let s2 = src.sweep_snapshot().unwrap();
    assert_eq!(totals(&s2, MLX5, 1), t1, "the last totals, unchanged");
    let n = notes_about(&src, "mlx5_0 port 1");
    assert_eq!(n.len(), 1, "one note for the port, not one a file: {n:?}");
    copy_dir(
        &fixture().join("sys/class/infiniband/mlx5_0/ports/1/counters"),
        &cdir,
    );
    let xmit: u64 = saved.trim().parse().unwrap();
    set(&root, "mlx5_0", 1, "counters/port_xmit_data", xmit + 5);
    let t3 = totals(&src.sweep_snapshot().unwrap(), MLX5, 1);
    assert_eq!(t3.port_xmit_data, t1.port_xmit_data + 5);
    assert_eq!(t3.port_rcv_data, t1.port_rcv_data);
}
