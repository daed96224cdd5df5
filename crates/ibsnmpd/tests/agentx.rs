//! AgentX subagent mode against net-snmp's snmpd as the master (its own
//! configuration in a temp dir): walks through snmpd equal walks of
//! ibsnmpd's own UDP port; snmpd's sysORTable lists the modules; Sets through
//! snmpd's rw community reach the agent, a Set failing TestSet changes
//! nothing; the session survives snmpd restarts and an snmpd that comes up
//! after ibsnmpd; a walk of more than 10,000 varbinds through snmpd never
//! times out.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, parse_lines, require_tool, snmp, Agent};

const IB_PM: &str = ".1.3.6.1.3.117.1";
const IB_IF: &str = ".1.3.6.1.3.117.2";
const SYS_OR_DESCR: &str = ".1.3.6.1.2.1.1.9.1.3";
const PM_NODE_GUID: &str = ".1.3.6.1.3.117.1.1.1.1";
const PM_PORT_SELECT: &str = ".1.3.6.1.3.117.1.4.1.2";

/// snmpd as AgentX master on a private UDP port and Unix socket.
struct Master {
    child: Option<Child>,
    dir: PathBuf,
    /// More snmpd.conf lines (trap sinks...).
    extra: String,
    pub socket: PathBuf,
    pub target: String,
}

impl Master {
    fn start(dir: &Path) -> Master {
        Master::start_with(dir, "")
    }

    fn start_with(dir: &Path, extra: &str) -> Master {
        require_tool("snmpd");
        let port = free_port("127.0.0.1");
        let mut m = Master {
            child: None,
            dir: dir.to_path_buf(),
            extra: extra.to_string(),
            socket: dir.join("master"),
            target: format!("127.0.0.1:{port}"),
        };
        m.spawn();
        m
    }

    fn spawn(&mut self) {
        let conf = self.dir.join("snmpd.conf");
        std::fs::write(
            &conf,
            format!(
                "master agentx\nagentXSocket {}\nagentXTimeout 1\nagentXRetries 0\n\
                 rocommunity public 127.0.0.1\nrwcommunity private 127.0.0.1\n{}\n",
                self.socket.display(),
                self.extra
            ),
        )
        .unwrap();
        let persist = self.dir.join("persist");
        std::fs::create_dir_all(&persist).unwrap();
        let snmpd = ["/usr/sbin/snmpd", "snmpd"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .unwrap_or("snmpd");
        let child = Command::new(snmpd)
            .env("SNMP_PERSISTENT_DIR", &persist)
            .env("MIBS", "")
            .args(["-f", "-Lf"])
            .arg(self.dir.join("snmpd.log"))
            .arg("-C")
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(self.dir.join("snmpd.pid"))
            .arg(format!("udp:{}", self.target))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn snmpd");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.socket.exists() {
            assert!(
                Instant::now() < deadline,
                "snmpd did not open {}",
                self.socket.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").arg(c.id().to_string()).status();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        self.stop();
    }
}

fn walk(target: &str, community: &str, oid: &str) -> Vec<(Vec<u32>, String)> {
    let out = snmp(
        "snmpbulkwalk",
        &[
            "-v2c", "-c", community, "-On", "-t", "5", "-r", "0", "-Cr25", target, oid,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "walk {oid} via {target}: {stderr}"
    );
    // A walk that reaches the end of an agent's tree shows endOfMibView.
    parse_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .filter(|(_, v)| !v.starts_with("No more variables"))
        .collect()
}

/// Whether the subagent's subtree answers through the master at `target`.
fn registered(target: &str) -> bool {
    let out = snmp(
        "snmpgetnext",
        &[
            "-v2c",
            "-c",
            "public",
            "-On",
            "-t",
            "1",
            "-r",
            "0",
            target,
            PM_NODE_GUID,
        ],
    );
    String::from_utf8_lossy(&out.stdout).contains(&PM_NODE_GUID[1..])
}

/// Waits until the subagent's subtree answers through the master.
fn wait_registered(m: &Master, agent: &Agent) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !registered(&m.target) {
        assert!(
            Instant::now() < deadline,
            "subagent never registered:\n{}",
            agent.log_text()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn subagent(m: &Master, extra: &[&str]) -> Agent {
    let sock = m.socket.display().to_string();
    let mut args = vec!["--agentx", sock.as_str(), "--sweep-interval", "3600"];
    args.extend_from_slice(extra);
    Agent::start(&args)
}

/// A Set of `oid` (type letter and value as snmpset takes them) through
/// snmpd with `community`.
fn set_via(m: &Master, community: &str, oid: &str, ty: &str, value: &str) -> std::process::Output {
    snmp(
        "snmpset",
        &[
            "-v2c", "-c", community, "-On", "-t", "5", "-r", "0", &m.target, oid, ty, value,
        ],
    )
}

/// An INTEGER Set through snmpd's rw community, asserted to succeed
/// (`context` goes with a failure).
fn set_through(m: &Master, oid: &str, value: &str, context: &str) {
    let out = set_via(m, "private", oid, "i", value);
    assert!(
        out.status.success(),
        "{}\n{context}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn walks_through_snmpd_equal_direct_walks_and_sets_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start(dir.path());
    let agent = subagent(&m, &[]);
    wait_registered(&m, &agent);

    for oid in [IB_PM, IB_IF] {
        let via_master = walk(&m.target, "public", oid);
        let direct = walk(&agent.target, "public", oid);
        assert!(!direct.is_empty(), "{oid}");
        assert_eq!(via_master, direct, "{oid} through snmpd vs direct");
    }
    // GET and GETNEXT of single instances too.
    let first = walk(&agent.target, "public", PM_NODE_GUID)[0].0.clone();
    let first: String = first.iter().map(|x| format!(".{x}")).collect();
    for tool in ["snmpget", "snmpgetnext"] {
        let a = snmp(tool, &["-v2c", "-c", "public", "-On", &m.target, &first]);
        let b = snmp(
            tool,
            &["-v2c", "-c", "public", "-On", &agent.target, &first],
        );
        assert_eq!(a.stdout, b.stdout, "{tool}");
    }

    // snmpd's sysORTable lists the modules (AddAgentCaps).
    let or: Vec<String> = walk(&m.target, "public", SYS_OR_DESCR)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    for module in ["IB-PM-MIB", "IB-IF-MIB"] {
        assert!(or.iter().any(|d| d.contains(module)), "{module} in {or:?}");
    }

    // A Set through snmpd's rw community reaches the agent: PortSelect of the
    // first node (agent state), read back on the agent's own port.
    let guid = first.trim_start_matches(&format!("{PM_NODE_GUID}."));
    let sel = format!("{PM_PORT_SELECT}.{guid}");
    set_through(&m, &sel, "1", "");
    // A Set that fails TestSet (wrong type) is refused and changes nothing.
    let before = snmp(
        "snmpget",
        &["-v2c", "-c", "public", "-On", &agent.target, &sel],
    );
    let bad = set_via(&m, "private", &sel, "s", "x");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("wrongType"), "{err}");
    let after = snmp(
        "snmpget",
        &["-v2c", "-c", "public", "-On", &agent.target, &sel],
    );
    assert_eq!(before.stdout, after.stdout);
    // The master's own read-only community cannot write through to us.
    let ro = set_via(&m, "public", &sel, "i", "1");
    assert!(!ro.status.success());
}

/// IB-SM-MIB's secret columns (SM_Key, M_Key) are for SNMPv3 authPriv
/// only; a master cannot say how its manager authenticated, so through
/// AgentX they are never answered, even with `secrets = true`: the walk
/// through snmpd equals a direct v2c walk, and neither shows them.
#[test]
fn secret_columns_never_cross_agentx() {
    const IB_SM: &str = ".1.3.6.1.3.117.7";
    const SECRETS: [&str; 3] = [
        "1.3.6.1.3.117.7.1.1.1.1.4.",
        "1.3.6.1.3.117.7.1.7.1.1.3.",
        "1.3.6.1.3.117.7.1.3.1.1.4.",
    ];
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start(dir.path());
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(&conf, "secrets = true\n").unwrap();
    let agent = subagent(&m, &["--config", conf.to_str().unwrap()]);
    wait_registered(&m, &agent);

    let via_master = walk(&m.target, "public", IB_SM);
    let direct = walk(&agent.target, "public", IB_SM);
    assert!(direct.len() > 100, "{} cells", direct.len());
    assert_eq!(via_master, direct, "IB-SM-MIB through snmpd vs direct v2c");
    let dotted = |o: &[u32]| {
        o.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(".")
    };
    for (oid, _) in &via_master {
        let o = dotted(oid);
        assert!(
            !SECRETS.iter().any(|s| o.starts_with(s)),
            "secret {o} answered"
        );
    }
    // Asked by name, through snmpd: no such object; a Set: refused.
    // ibSmPortInfoEntry: column 12, then the row's index.
    let index = via_master
        .iter()
        .find(|(o, _)| o.len() > 12 && o[..11] == [1, 3, 6, 1, 3, 117, 7, 1, 3, 1, 1])
        .map(|(o, _)| dotted(&o[12..]))
        .expect("a PortInfo row");
    let m_key = format!(".{}{index}", SECRETS[2]);
    let get = snmp(
        "snmpget",
        &["-v2c", "-c", "public", "-On", &m.target, &m_key],
    );
    let out = String::from_utf8_lossy(&get.stdout);
    assert!(out.contains("No Such"), "{out}");
    let set = set_via(&m, "private", &m_key, "x", "0102030405060708");
    assert!(!set.status.success(), "M_Key Set through AgentX accepted");
}

#[test]
fn the_session_survives_snmpd_restarts_and_late_masters() {
    let dir = tempfile::tempdir().unwrap();
    // ibsnmpd first: no master yet. It keeps trying (logged once).
    let sock = dir.path().join("master");
    let sock_s = sock.display().to_string();
    let agent = Agent::start(&["--agentx", &sock_s, "--sweep-interval", "3600"]);
    std::thread::sleep(Duration::from_secs(2));
    let mut m = Master::start(dir.path());
    wait_registered(&m, &agent);
    let log = agent.log_text();
    assert_eq!(
        log.matches("AgentX master not reachable").count(),
        1,
        "one line per state change:\n{log}"
    );
    // The first session is opened, not "re-established".
    assert!(log.contains("AgentX session open"), "{log}");
    assert!(!log.contains("re-established"), "{log}");
    // Each subtree registered once: snmpd refuses none.
    let snmpd_log = std::fs::read_to_string(dir.path().join("snmpd.log")).unwrap_or_default();
    assert!(!snmpd_log.to_lowercase().contains("refused"), "{snmpd_log}");

    // snmpd restarts: the walk works again without restarting ibsnmpd.
    let before = walk(&m.target, "public", IB_PM);
    m.stop();
    m.spawn();
    wait_registered(&m, &agent);
    assert_eq!(walk(&m.target, "public", IB_PM), before);
    assert!(agent.log_text().contains("re-established"));
}

#[test]
fn a_walk_of_ten_thousand_varbinds_through_snmpd_never_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let source = common::fat_tree(dir.path(), 512, 32);
    let m = Master::start(dir.path());
    let agent = subagent(&m, &["--source", &source]);
    wait_registered(&m, &agent);
    let started = Instant::now();
    // snmpwalk (GetNext, one varbind per request): the master's agentXTimeout
    // is 1 s and it gives up on a subagent after one timeout (agentXRetries 0).
    let out = snmp(
        "snmpbulkwalk",
        &[
            "-v2c", "-c", "public", "-On", "-t", "5", "-r", "0", "-Cr50", &m.target, IB_PM,
        ],
    );
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{stderr}");
    let rows = parse_lines(&String::from_utf8_lossy(&out.stdout));
    assert!(rows.len() > 10_000, "{} varbinds", rows.len());
    assert!(rows
        .iter()
        .all(|(o, _)| o.starts_with(&[1, 3, 6, 1, 3, 117, 1])));
    println!(
        "walk through snmpd: {} varbinds in {:.2} s ({:.0}/s)",
        rows.len(),
        took.as_secs_f64(),
        rows.len() as f64 / took.as_secs_f64()
    );
}

#[test]
fn a_counter_clear_through_snmpd_reaches_the_fabric() {
    use common::{guid_index, node_by_name, node_lids, UmadAgent};
    use ib_testbed::SMALL_NET;
    let tb = common::testbed(SMALL_NET);
    tb.console("PerformanceSet \"Hca2\"[1] PortCounters.SymbolErrorCounter=9")
        .unwrap();
    tb.console("PerformanceSet \"Hca2\"[1] PortCounters.PortRcvErrors=4")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start(dir.path());
    let sock = m.socket.display().to_string();
    let target = m.target.clone();
    let agent = UmadAgent::start(
        &tb,
        None,
        &["--agentx", &sock, "--sweep-interval", "3600"],
        Duration::from_secs(30),
        move |_| registered(&target),
    );
    let lids = node_lids(&tb);
    let (hca2, lid) = node_by_name(&tb, &lids, "Hca2");
    let idx = guid_index(hca2);
    let perf = |name: &str| {
        let out = tb.run_diag("perfquery", &[&lid.to_string(), "1"]).unwrap();
        common::field(&out.stdout, name)
    };
    assert_eq!(perf("SymbolErrorCounter"), 9);
    // pmPortCountersSymbolErrorCounter := 0 through snmpd's rw community.
    let oid = format!(".1.3.6.1.3.117.1.4.1.3.{idx}");
    set_through(&m, &oid, "0", &agent.log_text());
    assert_eq!(perf("SymbolErrorCounter"), 0, "the PMA was cleared");
    assert_eq!(perf("PortRcvErrors"), 4, "only what was selected");
    // A Set that fails TestSet (a non-zero counter value) reaches nothing.
    let out = set_via(
        &m,
        "private",
        &format!(".1.3.6.1.3.117.1.4.1.6.{idx}"),
        "i",
        "3",
    );
    assert!(!out.status.success());
    assert_eq!(perf("PortRcvErrors"), 4);
}

/// A config file in `dir` for a subagent of `m` that also serves IF-MIB,
/// its ifIndex numbered from 5001.
fn if_mib_config(dir: &Path, m: &Master) -> PathBuf {
    let conf = dir.join("ibsnmpd.toml");
    std::fs::write(
        &conf,
        format!(
            "agentx = \"{}\"\nagentx_if_mib = true\nagentx_if_index_offset = 5000\n",
            m.socket.display()
        ),
    )
    .unwrap();
    conf
}

#[test]
fn ib_ports_join_the_masters_if_table_above_its_own_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start(dir.path());
    let conf = if_mib_config(dir.path(), &m);
    let conf_s = conf.display().to_string();
    // --listen too: the same rows on the agent's own port.
    let agent = Agent::start(&["--config", &conf_s, "--sweep-interval", "3600"]);
    wait_registered(&m, &agent);
    let types: Vec<(Vec<u32>, String)> = walk(&m.target, "public", ".1.3.6.1.2.1.2.2.1.3");
    // snmpd's own interfaces (lo at least) and ours, numbered past the offset.
    assert!(types.iter().any(|(o, _)| o.last() == Some(&1)), "{types:?}");
    let ours: Vec<_> = types
        .iter()
        .filter(|(o, _)| o.last() > Some(&5000))
        .collect();
    assert_eq!(ours.len(), 2, "the local dual-port HCA: {types:?}");
    assert!(ours.iter().all(|(_, v)| v == "INTEGER: 199"), "{ours:?}");
    // ifXTable rows and IB-IF-MIB use the same ifIndex.
    for oid in [
        ".1.3.6.1.2.1.31.1.1.1.1.5001",
        ".1.3.6.1.3.117.2.1.1.1.2.5002",
    ] {
        let out = snmp("snmpget", &["-v2c", "-c", "public", "-On", &m.target, oid]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !text.contains("No Such"),
            "{oid}: {text}"
        );
    }
    assert_eq!(
        walk(&m.target, "public", ".1.3.6.1.2.1.31.1.1.1.1.5001"),
        walk(&agent.target, "public", ".1.3.6.1.2.1.31.1.1.1.1.5001"),
    );
}

#[test]
fn notifications_in_agentx_mode_go_out_through_the_masters_sinks() {
    let trapd = trapd::Trapd::start();
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start_with(dir.path(), &format!("trap2sink {} public", trapd.addr()));
    let ctl_sock = dir.path().join("ctl.sock");
    let (sock, ctl_s) = (
        m.socket.display().to_string(),
        ctl_sock.display().to_string(),
    );
    let agent = Agent::start(&[
        "--agentx",
        &sock,
        "--control-socket",
        &ctl_s,
        "--sweep-interval",
        "0.5",
    ]);
    wait_registered(&m, &agent);
    common::ctl(
        std::path::Path::new(&ctl_s),
        &["link-flap", "node02", "1", "0.5"],
    );
    let traps = trapd.wait(
        Duration::from_secs(20),
        "ibSmTrapOutOfService via snmpd",
        |t| !trapd::named(t, "ibSmTrapOutOfService").is_empty(),
    );
    let t = trapd::named(&traps, "ibSmTrapOutOfService")[0];
    assert_eq!(t.pdu, "TRAP2", "{t:?}");
    assert!(t.object("IB-SM-MIB::ibSmTrapPortNum1").is_some(), "{t:?}");
}

/// linkUp/linkDown through snmpd name the ifIndex the master serves (the
/// `agentx_if_index_offset` added, as the served rows have it), and
/// ifLinkUpDownTrapEnable set through snmpd on a served row silences that
/// row's traps.
#[test]
fn link_traps_through_snmpd_name_the_served_if_index() {
    let trapd = trapd::Trapd::start();
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start_with(dir.path(), &format!("trap2sink {} public", trapd.addr()));
    let conf = if_mib_config(dir.path(), &m);
    let ctl_sock = dir.path().join("ctl.sock");
    let (conf_s, ctl_s) = (conf.display().to_string(), ctl_sock.display().to_string());
    let agent = Agent::start(&[
        "--config",
        &conf_s,
        "--control-socket",
        &ctl_s,
        "--sweep-interval",
        "0.5",
    ]);
    wait_registered(&m, &agent);
    // ifLinkUpDownTrapEnable of the local HCA's port 2 (ifIndex 5002): disabled(2).
    set_through(
        &m,
        ".1.3.6.1.2.1.31.1.1.1.14.5002",
        "2",
        "ifLinkUpDownTrapEnable through snmpd",
    );
    // Port 2 first: its traps, were any sent, would come before port 1's.
    let ctl = |port: &str| common::ctl(Path::new(&ctl_s), &["link-flap", "node01", port, "0.5"]);
    ctl("2");
    std::thread::sleep(Duration::from_secs(2));
    ctl("1");
    let traps = trapd.wait(Duration::from_secs(20), "linkUp of port 1", |t| {
        !trapd::named(t, "linkUp").is_empty()
    });
    let link: Vec<_> = traps
        .iter()
        .filter(|t| t.name.ends_with("linkUp") || t.name.ends_with("linkDown"))
        .collect();
    assert_eq!(
        link.len(),
        2,
        "port 1's linkDown and linkUp only: {link:#?}"
    );
    for t in link {
        assert_eq!(
            t.object("IF-MIB::ifIndex"),
            Some("INTEGER: 5001"),
            "the row the master serves: {t:?}"
        );
        assert!(t.objects[0].starts_with("IF-MIB::ifIndex.5001 "), "{t:?}");
    }
}

/// A fabric for the node contexts through snmpd: a switch and two hosts;
/// the agent sits at Hca1.
const CONTEXTS_NET: &str = "\
Switch\t8 \"leaf01\"
[1]\t\"Hca1\"[1]
[2]\t\"Hca2\"[1]

Hca\t1 \"Hca1\"
[1]\t\"leaf01\"[1]

Hca\t1 \"Hca2\"
[1]\t\"leaf01\"[2]
";

/// snmpd's side of node contexts (docs/agentx.md "Node contexts"): a v2c
/// community per context (`com2sec -Cn`), and access to every context by
/// prefix "" for the v2c and the v3 group.
const CONTEXTS_CONF: &str = "\
com2sec -Cn leaf01 ctxsec 127.0.0.1 public@leaf01
com2sec -Cn Hca2 ctxsec 127.0.0.1 public@Hca2
group ctxgroup v2c ctxsec
view everything included .1
access ctxgroup \"\" any noauth prefix everything none none
createUser ops SHA authpass AES privpass
group opsgroup usm ops
access opsgroup \"\" usm priv prefix everything none none
";

const SYS_NAME: &str = ".1.3.6.1.2.1.1.5.0";
const IF_NAME: &str = ".1.3.6.1.2.1.31.1.1.1.1";
const ENT_LOGICAL_CONTEXT_NAME: &str = ".1.3.6.1.2.1.47.1.2.1.1.8";

/// `snmpget -Oqv` of sysName through the master with `args` (the version,
/// security and context options); None when it has no such instance or
/// does not answer.
fn sys_name_via(m: &Master, args: &[&str]) -> Option<String> {
    let mut a = args.to_vec();
    a.extend(["-Oqv", "-t", "2", "-r", "0", &m.target, SYS_NAME]);
    let out = snmp("snmpget", &a);
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !v.is_empty() && !v.starts_with("No Such")).then_some(v)
}

const V3: [&str; 11] = [
    "-v3", "-u", "ops", "-l", "authPriv", "-a", "SHA", "-A", "authpass", "-x", "AES",
];

#[test]
fn node_contexts_through_snmpd_follow_the_fabric() {
    let tb = common::testbed(CONTEXTS_NET);
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start_with(dir.path(), CONTEXTS_CONF);
    let sock = m.socket.display().to_string();
    let leaf = |m: &Master| sys_name_via(m, &["-v2c", "-c", "public@leaf01"]);
    let agent = common::UmadAgent::start(
        &tb,
        Some("Hca1"),
        &["--agentx", &sock, "--sweep-interval", "1"],
        Duration::from_secs(60),
        |_| leaf(&m).is_some(),
    );

    // v2c community@context and v3 -n, through snmpd's port.
    assert_eq!(leaf(&m).as_deref(), Some("\"leaf01\""));
    let mut v3 = V3.to_vec();
    v3.extend(["-X", "privpass", "-n", "leaf01"]);
    assert_eq!(sys_name_via(&m, &v3).as_deref(), Some("\"leaf01\""));
    let names = walk(&m.target, "public@leaf01", IF_NAME);
    assert!(
        names.iter().any(|(_, v)| v.contains("leaf01/2")),
        "{names:?}\n{}",
        agent.log_text()
    );
    // entLogicalTable in snmpd's default context lists the node contexts.
    let listed = walk(&m.target, "public", ENT_LOGICAL_CONTEXT_NAME);
    assert_eq!(listed.len(), 3, "{listed:?}");

    // A node that leaves: its context goes; it comes back with the node.
    let hca2 = |m: &Master| sys_name_via(m, &["-v2c", "-c", "public@Hca2"]);
    assert_eq!(hca2(&m).as_deref(), Some("\"Hca2\""));
    tb.console("Unlink \"Hca2\"[1]").unwrap();
    common::wait_for("Hca2's context to go", Duration::from_secs(60), || {
        hca2(&m).is_none().then_some(())
    });
    tb.console("ReLink \"Hca2\"[1]").unwrap();
    common::wait_for("Hca2's context back", Duration::from_secs(60), || {
        hca2(&m).filter(|v| v == "\"Hca2\"")
    });
    assert!(
        agent.log_text().contains("node contexts registered"),
        "{}",
        agent.log_text()
    );
}

/// `agentx_node_contexts = false`: the default context through snmpd as
/// before, no node context registered (they stay on the agent's own port).
#[test]
fn node_contexts_can_stay_off_the_master() {
    let dir = tempfile::tempdir().unwrap();
    let m = Master::start_with(dir.path(), CONTEXTS_CONF);
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(&conf, "agentx_node_contexts = false\n").unwrap();
    let agent = subagent(&m, &["--config", conf.to_str().unwrap()]);
    wait_registered(&m, &agent);
    assert_eq!(sys_name_via(&m, &["-v2c", "-c", "public@leaf01"]), None);
    assert!(!agent.log_text().contains("node contexts registered"));
    // The agent's own port still serves them.
    let own = snmp(
        "snmpget",
        &[
            "-v2c",
            "-c",
            "public@leaf01",
            "-Oqv",
            &agent.target,
            SYS_NAME,
        ],
    );
    assert!(
        String::from_utf8_lossy(&own.stdout).contains("leaf01"),
        "{}",
        agent.log_text()
    );
}
