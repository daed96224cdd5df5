//! The VACM tables (SNMP-VIEW-BASED-ACM-MIB) managed over SNMP, against the
//! real binary: net-snmp's `snmpvacm` creates a group, a view and an access
//! entry for a configured user with no access of its own, which then reads
//! inside the view only; the rows survive a restart; the configuration's
//! rows are permanent and refuse Sets; pysnmp walks the access table.

mod common;

use std::path::Path;

use common::{parse_lines, text, with_shipped_mibs, Agent};

/// `admin` may write everything (authPriv); `operator` has no access line.
const CONFIG: &str = r#"
[[user]]
name = "operator"
auth = "SHA"
auth_pass = "oper-auth-1"
priv = "AES"
priv_pass = "oper-priv-1"

[[rwuser]]
user = "admin"
level = "priv"

[[view]]
name = "configured"
type = "included"
oid = "1.3.6.1.2.1.1"
"#;

fn operator() -> Vec<&'static str> {
    common::usm_args("operator", "oper-auth-1", Some("oper-priv-1"))
}

const SYSTEM: &str = ".1.3.6.1.2.1.1";
const SYS_DESCR: &str = ".1.3.6.1.2.1.1.1.0";
const SYS_NAME: &str = ".1.3.6.1.2.1.1.5.0";
const IF_NUMBER: &str = ".1.3.6.1.2.1.2.1.0";
const VACM_OBJECTS: &str = ".1.3.6.1.6.3.16.1";
const ACCESS_TABLE: &str = ".1.3.6.1.6.3.16.1.4";

fn start() -> (Agent, tempfile::TempDir) {
    start_with("")
}

/// The agent with [`common::ADMIN_USER`], [`CONFIG`] and `more` in its configuration file
/// (`ibsnmpd.toml` in the returned directory).
fn start_with(more: &str) -> (Agent, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), more);
    (Agent::start(&["--config", &cfg]), dir)
}

fn write_config(dir: &Path, more: &str) -> String {
    let path = dir.join("ibsnmpd.toml");
    common::write_private(&path, &format!("{}{CONFIG}{more}", common::ADMIN_USER));
    path.display().to_string()
}

/// `tool` as `who`, asserted to succeed with no error in the answer.
fn ok(agent: &Agent, who: &[&str], tool: &str, args: &[&str]) -> String {
    let o = agent.tool(tool, who, args);
    let out = text(&o);
    assert!(
        o.status.success() && !out.contains("Error in packet"),
        "{tool} {args:?}: {out}\nagent log:\n{}",
        agent.log_text()
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `snmpvacm` as admin.
fn vacm(agent: &Agent, args: &[&str]) -> String {
    ok(agent, &common::admin_args(), "snmpvacm", args)
}

/// The (OID, value) lines of a walk, without the endOfMibView line.
fn rows(out: &str) -> Vec<(Vec<u32>, String)> {
    parse_lines(out)
        .into_iter()
        .filter(|(_, v)| !v.starts_with("No more variables"))
        .collect()
}

fn oid(s: &str) -> Vec<u32> {
    s.trim_start_matches('.')
        .split('.')
        .map(|x| x.parse().unwrap())
        .collect()
}

/// What the operator reads: sysDescr, sysName and ifNumber by Get, and a
/// walk of the system group.
struct Reads {
    descr: String,
    name: String,
    if_number: String,
    walk: Vec<Vec<u32>>,
}

fn operator_reads(agent: &Agent) -> Result<Reads, String> {
    let o = agent.tool("snmpget", &operator(), &[SYS_DESCR, SYS_NAME, IF_NUMBER]);
    let out = text(&o);
    if !o.status.success() || out.contains("Error in packet") {
        return Err(out);
    }
    let got = parse_lines(&String::from_utf8_lossy(&o.stdout));
    let value = |i: usize| got.get(i).map(|r| r.1.clone()).unwrap_or_default();
    let walk = rows(&ok(agent, &operator(), "snmpwalk", &[SYSTEM]));
    Ok(Reads {
        descr: value(0),
        name: value(1),
        if_number: value(2),
        walk: walk.into_iter().map(|r| r.0).collect(),
    })
}

/// The operator reads inside its view (the system group but sysName) and
/// nothing outside it.
fn assert_in_view(agent: &Agent) {
    let r = operator_reads(agent).unwrap_or_else(|e| panic!("operator refused: {e}"));
    assert!(r.descr.contains("ibsnmpd"), "{}", r.descr);
    assert!(r.name.contains("No Such Object"), "excluded: {}", r.name);
    assert!(
        r.if_number.contains("No Such Object"),
        "outside: {}",
        r.if_number
    );
    let system = oid(SYSTEM);
    assert!(r.walk.len() > 3, "{:?}", r.walk);
    assert!(
        r.walk.iter().all(|o| o.starts_with(&system)),
        "{:?}",
        r.walk
    );
    assert!(!r.walk.contains(&oid(SYS_NAME)), "{:?}", r.walk);
    assert!(r.walk.contains(&oid(SYS_DESCR)), "{:?}", r.walk);
}

fn assert_refused(agent: &Agent) {
    let e = operator_reads(agent)
        .err()
        .expect("operator must be refused");
    assert!(e.contains("authorizationError"), "{e}");
}

fn state_file(agent: &Agent) -> String {
    std::fs::read_to_string(agent.state_dir.join("state.json")).unwrap_or_default()
}

fn file_mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn snmpvacm_rows_take_effect_at_once_and_survive_a_restart() {
    let (mut agent, _cfg) = start();
    assert_refused(&agent);
    vacm(&agent, &["createSec2Group", "3", "operator", "operators"]);
    // net-snmp's advice: the excluded part first.
    vacm(
        &agent,
        &["createView", "-Ce", "opview", ".1.3.6.1.2.1.1.5", "ff"],
    );
    vacm(&agent, &["createView", "opview", ".1.3.6.1.2.1.1", "ff"]);
    // No access entry yet: still refused.
    assert_refused(&agent);
    vacm(
        &agent,
        &[
            "createAccess",
            "operators",
            "3",
            "3",
            "1",
            "opview",
            "none",
            "opview",
        ],
    );
    assert_in_view(&agent);
    // A write view that does not exist gives no write access.
    let o = agent.tool("snmpset", &operator(), &[SYS_NAME, "s", "x"]);
    assert!(text(&o).contains("authorizationError"), "{}", text(&o));

    // Persisted (nonVolatile, 0600), and in force again after a restart.
    let saved = state_file(&agent);
    assert!(
        saved.contains("operators") && saved.contains("opview"),
        "{saved}"
    );
    assert_eq!(file_mode(&agent.state_dir.join("state.json")), 0o600);
    agent.restart();
    assert_in_view(&agent);
    let table = rows(&ok(
        &agent,
        &common::admin_args(),
        "snmpwalk",
        &[VACM_OBJECTS],
    ));
    // vacmSecurityToGroupStorageType.3."operator": nonVolatile(3).
    let mut storage = oid(".1.3.6.1.6.3.16.1.2.1.4.3.8");
    storage.extend(b"operator".iter().map(|&b| u32::from(b)));
    assert!(
        table.iter().any(|(o, v)| *o == storage && v.contains('3')),
        "{table:?}"
    );

    // Deleting the access entry refuses the operator again, at once.
    vacm(&agent, &["deleteAccess", "operators", "3", "3"]);
    assert_refused(&agent);
    vacm(&agent, &["deleteView", "opview", ".1.3.6.1.2.1.1.5"]);
    vacm(&agent, &["deleteView", "opview", ".1.3.6.1.2.1.1"]);
    vacm(&agent, &["deleteSec2Group", "3", "operator"]);
    let saved = state_file(&agent);
    assert!(
        !saved.contains("operators") && !saved.contains("opview"),
        "{saved}"
    );
    agent.restart();
    assert_refused(&agent);
}

#[test]
fn configured_rows_are_permanent_and_refuse_sets() {
    let (agent, _cfg) = start();
    // The shipped MIB files name the rows: permanent(4), active(1).
    let o = with_shipped_mibs("snmpwalk")
        .args(common::admin_args())
        .args([
            "-OS",
            &agent.target,
            "SNMP-VIEW-BASED-ACM-MIB::vacmMIBObjects",
        ])
        .output()
        .unwrap();
    let walk = text(&o);
    assert!(o.status.success(), "{walk}");
    for want in [
        "vacmContextName.\"\" = STRING: ",
        "vacmGroupName.3.\"admin\" = STRING: ibsnmpd:user:admin",
        "vacmSecurityToGroupStorageType.3.\"admin\" = INTEGER: permanent(4)",
        "vacmSecurityToGroupStorageType.2.\"public\" = INTEGER: permanent(4)",
        "vacmAccessReadViewName.\"ibsnmpd:user:admin\".\"\".3.authPriv = STRING: ibsnmpd:all",
        "vacmAccessContextMatch.\"ibsnmpd:user:admin\".\"\".3.authPriv = INTEGER: prefix(2)",
        "vacmAccessStorageType.\"ibsnmpd:rocommunity\".\"\".0.noAuthNoPriv = INTEGER: permanent(4)",
        "vacmViewTreeFamilyType.\"configured\".7.1.3.6.1.2.1.1 = INTEGER: included(1)",
        "vacmViewTreeFamilyStorageType.\"configured\".7.1.3.6.1.2.1.1 = INTEGER: permanent(4)",
        "vacmViewTreeFamilyStatus.\"ibsnmpd:all\".1.1 = INTEGER: active(1)",
    ] {
        assert!(walk.contains(want), "{want} missing from:\n{walk}");
    }
    // The community rows name community strings: not for a community.
    let public = rows(&agent.ok("snmpwalk", "2c", "public", &[], &[VACM_OBJECTS]));
    let group_of = |model: u32| {
        let mut p = oid(".1.3.6.1.6.3.16.1.2.1.3");
        p.push(model);
        p
    };
    assert!(public.iter().any(|(o, _)| o.starts_with(&group_of(3))));
    assert!(
        !public.iter().any(|(o, _)| o.starts_with(&group_of(2))),
        "{public:?}"
    );

    // vacmGroupName.3."admin": a Set of a configured row is wrongValue.
    let admin_group = ".1.3.6.1.6.3.16.1.2.1.3.3.5.97.100.109.105.110";
    let o = agent.tool(
        "snmpset",
        &common::admin_args(),
        &[admin_group, "s", "other"],
    );
    assert!(text(&o).contains("wrongValue"), "{}", text(&o));
    // A wrong type on a new row changes nothing, not even the state file
    // (which a first row made).
    vacm(&agent, &["createView", "some", ".1.3.6.1.2.1.1", "ff"]);
    let before = state_file(&agent);
    let saved: serde_json::Value = serde_json::from_str(&before).unwrap();
    let views = &saved["modules"]["SNMP-VIEW-BASED-ACM-MIB"]["views"];
    assert_eq!(views.as_array().map(Vec::len), Some(1), "{before}");
    let new_row = ".1.3.6.1.6.3.16.1.2.1.3.3.8.111.112.101.114.97.116.111.114";
    let o = agent.tool(
        "snmpset",
        &common::admin_args(),
        &[
            new_row,
            "i",
            "1",
            ".1.3.6.1.6.3.16.1.2.1.5.3.8.111.112.101.114.97.116.111.114",
            "i",
            "4",
        ],
    );
    assert!(text(&o).contains("wrongType"), "{}", text(&o));
    assert_eq!(state_file(&agent), before);
    let o = agent.tool("snmpget", &common::admin_args(), &[new_row]);
    assert!(text(&o).contains("No Such Instance"), "{}", text(&o));
    // vacmViewSpinLock: TestAndIncr.
    let spin = ".1.3.6.1.6.3.16.1.5.1.0";
    ok(&agent, &common::admin_args(), "snmpset", &[spin, "i", "0"]);
    let o = agent.tool("snmpset", &common::admin_args(), &[spin, "i", "0"]);
    assert!(text(&o).contains("inconsistentValue"), "{}", text(&o));
}

/// A reload's community table shows at once: its groups are the
/// permanent v2c rows (the operator's rows stay).
#[test]
fn a_reload_shows_the_new_communities() {
    // "public": the community the agent's start waits with.
    let communities = |name: &str| {
        format!(
            "[[rocommunity]]\ncommunity = \"public\"\n[[rocommunity]]\ncommunity = \"{name}\"\n"
        )
    };
    let (agent, cfg) = start_with(&communities("before"));
    vacm(&agent, &["createSec2Group", "3", "operator", "operators"]);
    // vacmGroupName.2."before" / ."after".
    let group = |name: &str| {
        let mut o = oid(".1.3.6.1.6.3.16.1.2.1.3.2");
        o.push(name.len() as u32);
        o.extend(name.bytes().map(u32::from));
        o
    };
    let groups = || {
        rows(&ok(
            &agent,
            &common::admin_args(),
            "snmpwalk",
            &[".1.3.6.1.6.3.16.1.2.1.3"],
        ))
    };
    assert!(groups().iter().any(|(o, _)| *o == group("before")));
    write_config(cfg.path(), &communities("after"));
    common::signal(&agent.pid().to_string(), "HUP");
    // The reload is asynchronous: wait for it to be applied.
    let mut got = groups();
    for _ in 0..100 {
        if got.iter().any(|(o, _)| *o == group("after")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        got = groups();
    }
    assert!(got.iter().any(|(o, _)| *o == group("after")), "{got:?}");
    assert!(!got.iter().any(|(o, _)| *o == group("before")), "{got:?}");
    let mut operator = oid(".1.3.6.1.6.3.16.1.2.1.3.3.8");
    operator.extend(b"operator".iter().map(|&b| u32::from(b)));
    assert!(
        got.iter()
            .any(|(o, v)| *o == operator && v.contains("operators")),
        "{got:?}"
    );
}

/// pysnmp as a second client: a walk of vacmAccessTable as the admin user
/// sees the same rows net-snmp does.
#[test]
fn pysnmp_walks_the_access_table() {
    let (agent, _cfg) = start();
    let script = format!(
        r#"
import pysnmp.hlapi as h
user = h.UsmUserData('admin', 'admin-auth-1', 'admin-priv-1',
                     authProtocol=h.usmHMACSHAAuthProtocol, privProtocol=h.usmAesCfb128Protocol)
for e, s, i, vbs in h.nextCmd(h.SnmpEngine(), user,
        h.UdpTransportTarget(('127.0.0.1', {port}), timeout=2, retries=1), h.ContextData(),
        h.ObjectType(h.ObjectIdentity('{table}')), lexicographicMode=False):
    assert e is None and not s, (e, s)
    for oid, value in vbs:
        print('.' + str(oid), '=', value.prettyPrint())
"#,
        port = agent.port,
        table = ACCESS_TABLE.trim_start_matches('.'),
    );
    let o = std::process::Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .output()
        .expect("python3");
    assert!(o.status.success(), "pysnmp: {}", text(&o));
    let py: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split(" = ").next().unwrap_or_default().to_string())
        .collect();
    let net = rows(&ok(
        &agent,
        &common::admin_args(),
        "snmpwalk",
        &[ACCESS_TABLE],
    ));
    let net: Vec<String> = net
        .iter()
        .map(|(o, _)| {
            format!(
                ".{}",
                o.iter().map(u32::to_string).collect::<Vec<_>>().join(".")
            )
        })
        .collect();
    assert!(!net.is_empty());
    assert_eq!(py, net);
}
