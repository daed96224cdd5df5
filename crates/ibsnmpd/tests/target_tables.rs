//! Notification targets managed over SNMP (SNMP-TARGET-MIB and
//! SNMP-NOTIFICATION-MIB, RFC 3413) with the real binary: rows created with
//! net-snmp's snmpset (several columns in one PDU, createAndGo and
//! createAndWait then active) send the agent's notifications to snmptrapd
//! at once; a destroyed snmpNotifyTable row stops them; a filter profile
//! holds some back; nonVolatile rows come back after a restart, volatile
//! ones do not; an SNMPv3 target as a configured USM user; informs;
//! configured sinks shown as permanent rows; a TAddress of the wrong length
//! refused with nothing stored; an IPv6 target; pysnmp creating rows of
//! three tables in one SNMPv3 request.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::path::Path;
use std::time::Duration;

use common::Agent;
use trapd::{Trap, Trapd};

const WAIT: Duration = Duration::from_secs(15);

/// snmpTargetAddrEntry, snmpTargetParamsEntry.
const ADDR: &str = ".1.3.6.1.6.3.12.1.2.1";
const PARAMS: &str = ".1.3.6.1.6.3.12.1.3.1";
/// snmpNotifyEntry, snmpNotifyFilterProfileEntry, snmpNotifyFilterEntry.
const NOTIFY: &str = ".1.3.6.1.6.3.13.1.1.1";
const PROFILE: &str = ".1.3.6.1.6.3.13.1.2.1";
const FILTER: &str = ".1.3.6.1.6.3.13.1.3.1";
/// snmpUDPDomain.
const UDP: &str = ".1.3.6.1.6.1.1";
/// snmpTraps.authenticationFailure.
const AUTH_FAILURE: &str = ".1.3.6.1.6.3.1.1.5.5";

/// An IMPLIED string index: its octets.
fn implied(name: &str) -> String {
    name.bytes().map(|b| format!(".{b}")).collect()
}

/// `entry.column.index`.
fn cell(entry: &str, column: u32, name: &str) -> String {
    format!("{entry}.{column}{}", implied(name))
}

/// 127.0.0.1 and `port` as a snmpUDPDomain TAddress in hex.
fn t_address(port: u16) -> String {
    format!("7F000001{port:04X}")
}

/// The writer of the tables: an authPriv user (the administrative MIBs are
/// writable only at authPriv, docs/snmpv3.md).
const TABLES_ADMIN: &str = "\n[[user]]\nname = \"tables\"\nauth = \"SHA\"\n\
     auth_pass = \"tables-auth-1\"\npriv = \"AES\"\npriv_pass = \"tables-priv-1\"\n\
     [[rwuser]]\nuser = \"tables\"\nlevel = \"priv\"\n";
fn as_tables_admin() -> Vec<&'static str> {
    common::usm_args("tables", "tables-auth-1", Some("tables-priv-1"))
}

/// The agent with `config` plus [`TABLES_ADMIN`] (mode 0600: it holds
/// passwords) and its state in `dir`.
fn agent_in(dir: &Path, config: &str) -> Agent {
    use std::os::unix::fs::PermissionsExt;
    let conf = dir.join("ibsnmpd.toml");
    std::fs::write(&conf, format!("{config}{TABLES_ADMIN}")).unwrap();
    std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o600)).unwrap();
    Agent::start_in(dir, &["--config", conf.to_str().unwrap()])
}

/// One snmpset PDU as [`TABLES_ADMIN`], asserted to succeed.
fn set(agent: &Agent, varbinds: &[String]) -> String {
    let v: Vec<&str> = varbinds.iter().map(String::as_str).collect();
    let out = agent.tool("snmpset", &as_tables_admin(), &v);
    assert!(
        out.status.success(),
        "snmpset {v:?}: {}\n{}",
        common::text(&out),
        agent.log_text()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One snmpset PDU as [`TABLES_ADMIN`] expected to fail; returns what
/// snmpset said.
fn set_fails(agent: &Agent, varbinds: &[String]) -> String {
    let mut args = as_tables_admin();
    args.push(&agent.target);
    args.extend(varbinds.iter().map(String::as_str));
    let out = common::snmp("snmpset", &args);
    assert!(!out.status.success(), "snmpset {varbinds:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The varbinds of one row: `(column, type, value)` at `entry.column.name`.
fn row(entry: &str, name: &str, cols: &[(u32, &str, String)]) -> Vec<String> {
    cols.iter()
        .map(|(col, t, v)| format!("{} {t} {v}", cell(entry, *col, name)))
        .collect()
}

/// The varbinds creating a target address row (createAndGo, every column
/// in the same PDU as net-snmp users write it).
fn addr_row(name: &str, port: u16, tags: &str, params: &str, storage: u32) -> Vec<String> {
    let cols = [
        (2, "o", UDP.to_string()),
        (3, "x", t_address(port)),
        (6, "s", tags.to_string()),
        (7, "s", params.to_string()),
        (8, "i", storage.to_string()),
        (9, "i", "4".to_string()),
    ];
    row(ADDR, name, &cols)
}

/// The varbinds creating a params row (createAndGo).
fn params_row(name: &str, mp: u32, sm: u32, security_name: &str, level: u32) -> Vec<String> {
    let cols = [
        (2, "i", mp.to_string()),
        (3, "i", sm.to_string()),
        (4, "s", security_name.to_string()),
        (5, "i", level.to_string()),
        (7, "i", "4".to_string()),
    ];
    row(PARAMS, name, &cols)
}

/// The varbinds creating a notify row (createAndGo).
fn notify_row(name: &str, tag: &str, kind: u32, storage: u32) -> Vec<String> {
    let cols = [
        (2, "s", tag.to_string()),
        (3, "i", kind.to_string()),
        (4, "i", storage.to_string()),
        (5, "i", "4".to_string()),
    ];
    row(NOTIFY, name, &cols)
}

fn split(v: Vec<String>) -> Vec<String> {
    v.into_iter()
        .flat_map(|s| s.splitn(3, ' ').map(str::to_string).collect::<Vec<_>>())
        .collect()
}

fn bad_community_get(agent: &Agent) {
    let _ = agent.tool(
        "snmpget",
        &["-v2c", "-c", "not-a-community", "-t", "0.3", "-r", "0"],
        &[".1.3.6.1.2.1.1.3.0"],
    );
}

/// An authenticationFailure reaches the SNMPv1 witness (its `nth`) and
/// not the SNMPv2c "ops" target, which is sent to first when selected.
fn witness_only(agent: &Agent, trapd: &Trapd, nth: usize) {
    bad_community_get(agent);
    let t = trapd.wait(WAIT, "the witness's authenticationFailure", |t| {
        count(t, "TRAP", "authenticationFailure") == nth
    });
    let v2c = count(&t, "TRAP2", "authenticationFailure");
    assert_eq!(v2c, 1, "{}", trapd.text());
}

/// Notifications named `name` in PDU form `pdu` ("TRAP", "TRAP2", "INFORM").
fn count(t: &[Trap], pdu: &str, name: &str) -> usize {
    t.iter()
        .filter(|x| x.pdu == pdu && x.name.ends_with(name))
        .count()
}

/// The value snmpget prints for `oid` (`-Oqv`), or its error.
fn get(agent: &Agent, oid: &str) -> String {
    let out = agent.tool(
        "snmpget",
        &["-v2c", "-c", "public", "-On", "-Oqv", "-t", "2", "-r", "1"],
        &[oid],
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Targets created over SNMPv2c get the agent's notifications at once:
/// authenticationFailure goes as SNMPv2c to "ops" targets and as SNMPv1 to
/// the "witness" target listed after them (its arrival says the others
/// were sent, or not). A destroyed notify row stops them; a filter that
/// excludes authenticationFailure holds them back; after a restart the
/// nonVolatile rows are back (coldStart arrives through them) and the
/// volatile one is gone.
#[test]
fn targets_created_over_snmp_get_notifications_and_survive_a_restart() {
    let trapd = Trapd::start();
    let dir = tempfile::tempdir().unwrap();
    let mut agent = agent_in(dir.path(), "authtrapenable = 1\n");

    // Params and address rows in one PDU each; the notify rows created
    // both ways.
    let mut pdu = split(params_row("p-v2c", 1, 2, "public", 1));
    pdu.extend(split(params_row("p-v1", 0, 1, "public", 1)));
    set(&agent, &pdu);
    let mut pdu = split(addr_row("t-ops", trapd.port, "ops other", "p-v2c", 3));
    pdu.extend(split(addr_row(
        "w-witness",
        trapd.port,
        "witness",
        "p-v1",
        3,
    )));
    set(&agent, &pdu);
    set(&agent, &split(notify_row("n-ops", "ops", 1, 3)));
    // createAndWait, then the tag, then active; volatile.
    let w = |col| cell(NOTIFY, col, "w-witness");
    set(
        &agent,
        &split(vec![format!("{} i 5", w(5)), format!("{} i 2", w(4))]),
    );
    // notInService: every column has a DEFVAL.
    assert_eq!(get(&agent, &w(5)), "2");
    set(&agent, &split(vec![format!("{} s witness", w(2))]));
    set(&agent, &split(vec![format!("{} i 1", w(5))]));
    assert_eq!(get(&agent, &w(5)), "1");
    assert_eq!(get(&agent, &cell(ADDR, 9, "t-ops")), "1");
    assert_eq!(get(&agent, &cell(ADDR, 4, "t-ops")), "1500", "DEFVAL");

    bad_community_get(&agent);
    trapd.wait(WAIT, "authenticationFailure to both targets", |t| {
        count(t, "TRAP2", "authenticationFailure") == 1
            && count(t, "TRAP", "authenticationFailure") == 1
    });

    // Destroyed: the witness gets the next one, the ops target does not.
    set(
        &agent,
        &split(vec![format!("{} i 6", cell(NOTIFY, 5, "n-ops"))]),
    );
    witness_only(&agent, &trapd, 2);

    // Back, with a filter on its params that excludes authenticationFailure
    // (snmpTraps included, .5 excluded).
    set(&agent, &split(notify_row("n-ops", "ops", 1, 3)));
    let profile = format!("{} s f1", cell(PROFILE, 1, "p-v2c"));
    let prof_status = format!("{} i 4", cell(PROFILE, 3, "p-v2c"));
    let f = |subtree: &str, col: u32| format!("{FILTER}.{col}.2.102.49{subtree}");
    set(
        &agent,
        &split(vec![
            profile,
            prof_status,
            format!("{} i 1", f(".1.3.6.1.6.3.1.1.5", 3)),
            format!("{} i 4", f(".1.3.6.1.6.3.1.1.5", 5)),
            format!("{} i 2", f(AUTH_FAILURE, 3)),
            format!("{} i 4", f(AUTH_FAILURE, 5)),
        ]),
    );
    witness_only(&agent, &trapd, 3);
    // The filter gone, the target gets them again.
    set(
        &agent,
        &split(vec![format!("{} i 6", cell(PROFILE, 3, "p-v2c"))]),
    );
    bad_community_get(&agent);
    trapd.wait(WAIT, "authenticationFailure after the filter", |t| {
        count(t, "TRAP2", "authenticationFailure") == 2
    });

    // Persisted (nonVolatile) rows come back; the volatile one does not.
    let before = count(&trapd.traps(), "TRAP2", "coldStart");
    agent.restart();
    trapd.wait(WAIT, "coldStart through the restored rows", |t| {
        count(t, "TRAP2", "coldStart") == before + 1
    });
    assert_eq!(get(&agent, &cell(NOTIFY, 5, "n-ops")), "1");
    assert_eq!(get(&agent, &cell(ADDR, 6, "t-ops")), "\"ops other\"");
    assert!(
        get(&agent, &w(5)).contains("No Such Instance"),
        "the volatile row survived"
    );
    let state = std::fs::read_to_string(dir.path().join("state.json")).unwrap_or_default();
    assert!(state.contains("SNMP-TARGET-MIB"), "{state}");
}

/// A TAddress that is not 6 octets for snmpUDPDomain: wrongLength, and the
/// row is not created; so with an unknown domain or a malformed tag list
/// (wrongValue); snmpTargetSpinLock is a TestAndIncr.
#[test]
fn a_bad_t_address_is_refused_and_nothing_stored() {
    let dir = tempfile::tempdir().unwrap();
    let agent = agent_in(dir.path(), "");
    let mut pdu = split(addr_row("bad", 162, "ops", "p", 3));
    pdu[5] = "7F00000100A2FF".into();
    let err = set_fails(&agent, &pdu);
    assert!(err.contains("wrongLength"), "{err}");
    assert!(get(&agent, &cell(ADDR, 9, "bad")).contains("No Such Instance"));
    // A domain other than the UDP ones: wrongValue.
    let mut pdu = split(addr_row("bad", 162, "ops", "p", 3));
    pdu[2] = ".1.3.6.1.6.1.4".into();
    let err = set_fails(&agent, &pdu);
    assert!(err.contains("wrongValue"), "{err}");
    // A tag list with a leading delimiter (RFC 3413 SnmpTagList): wrongValue.
    let err = set_fails(&agent, &split(addr_row("bad", 162, " ops", "p", 3)));
    assert!(err.contains("wrongValue"), "{err}");
    assert!(get(&agent, &cell(ADDR, 9, "bad")).contains("No Such Instance"));

    let lock = ".1.3.6.1.6.3.12.1.1.0";
    let v = get(&agent, lock);
    set(&agent, &[lock.into(), "i".into(), v.clone()]);
    let err = set_fails(&agent, &[lock.into(), "i".into(), v]);
    assert!(err.contains("inconsistentValue"), "{err}");
}

/// SNMPv3 targets: rows created by an SNMPv3 rwuser naming a configured
/// USM user at authPriv. Traps: snmptrapd knows the user under our engine
/// ID. Informs: a second snmptrapd knows the user under its own engine,
/// which the agent discovers. Informs over SNMPv2c through another notify
/// row. All acknowledged. The configured trap2sink shows as permanent rows
/// that refuse Sets.
#[test]
fn v3_and_inform_targets_and_the_configured_sinks_as_permanent_rows() {
    let engine = "8000000005aabbccee";
    let trapd = Trapd::start_v3(engine);
    let receiver = Trapd::start_with(
        common::free_port("127.0.0.1"),
        "createUser trapops SHA-256 authpass-1 AES privpass-1\n",
    );
    let sink = Trapd::start();
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "engine_id = \"{engine}\"\nauthtrapenable = 1\ntrap2sink = [\"{}\"]\n\
         [[user]]\nname = \"trapops\"\nauth = \"SHA-256\"\nauth_pass = \"authpass-1\"\n\
         priv = \"AES\"\npriv_pass = \"privpass-1\"\n",
        sink.addr()
    );
    let agent = agent_in(dir.path(), &config);
    let v3set = |varbinds: Vec<String>| {
        set(&agent, &split(varbinds));
    };
    let mut rows = params_row("p-v3", 3, 3, "trapops", 3);
    rows.extend(params_row("p-inform", 1, 2, "public", 1));
    v3set(rows);
    let mut rows = addr_row("t-v3", trapd.port, "v3", "p-v3", 3);
    rows.extend(addr_row("t-inform", trapd.port, "inf", "p-inform", 3));
    rows.extend(addr_row("t-v3-inform", receiver.port, "v3inf", "p-v3", 3));
    // Timeout stays at its DEFVAL (15 s): the first inform goes out as soon
    // as the receiver is discovered, not at its first retry.
    v3set(rows);
    let mut rows = notify_row("n-v3", "v3", 1, 3);
    rows.extend(notify_row("n-inform", "inf", 2, 3));
    rows.extend(notify_row("n-v3-inform", "v3inf", 2, 3));
    v3set(rows);

    bad_community_get(&agent);
    trapd.wait(
        WAIT,
        "authenticationFailure over SNMPv3 and as inform",
        |t| {
            count(t, "TRAP2", "authenticationFailure") == 1
                && count(t, "INFORM", "authenticationFailure") == 1
        },
    );
    assert!(trapd.text().contains("trapops"), "{}", trapd.text());
    receiver.wait(WAIT, "authenticationFailure as an SNMPv3 inform", |t| {
        count(t, "INFORM", "authenticationFailure") == 1
    });
    sink.wait(WAIT, "authenticationFailure at the configured sink", |t| {
        count(t, "TRAP2", "authenticationFailure") == 1
    });
    let log = || agent.log_text();
    assert!(
        log().contains("SNMPv3 inform receiver discovered"),
        "{}",
        log()
    );
    // Both informs acknowledged (the v3 one once its receiver was found).
    let acked = |l: &str| l.matches("inform acknowledged").count();
    let deadline = std::time::Instant::now() + WAIT;
    while acked(&log()) < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(acked(&log()), 2, "{}", log());

    // The trap2sink: internal0, permanent(4), active; Sets refused.
    assert_eq!(get(&agent, &cell(ADDR, 8, "internal0")), "4");
    assert!(!get(&agent, &cell(ADDR, 3, "internal0")).is_empty());
    // Its community: hidden from v2c readers, shown at authPriv only.
    assert!(
        !get(&agent, &cell(PARAMS, 4, "internal0")).contains("public"),
        "the trap community leaks to a read-only community"
    );
    assert_eq!(get(&agent, &cell(NOTIFY, 5, "internal0")), "1");
    let err = set_fails(
        &agent,
        &split(vec![format!("{} i 6", cell(NOTIFY, 5, "internal0"))]),
    );
    assert!(err.contains("wrongValue"), "{err}");
}

/// One `OID TYPE VALUE` varbind (snmpset's words) as a pysnmp ObjectType.
fn py_varbind(v: &str) -> String {
    let mut w = v.splitn(3, ' ');
    let (oid, t, value) = (w.next().unwrap(), w.next().unwrap(), w.next().unwrap());
    let value = match t {
        "i" => format!("h.Integer({value})"),
        "s" => format!("h.OctetString('{value}')"),
        "x" => format!("h.OctetString(hexValue='{value}')"),
        "o" => format!("h.ObjectIdentifier('{}')", value.trim_start_matches('.')),
        _ => panic!("type {t}"),
    };
    format!("ot('{}', {value})", oid.trim_start_matches('.'))
}

/// A target in transportDomainUdpIpv6 (net-snmp's snmpUDPIPv6Domain): an
/// 18-octet TAddress, ::1 and the port; snmptrapd on udp6 gets the trap.
#[test]
fn an_ipv6_target_gets_notifications() {
    let port = common::free_port("::1");
    let trapd = Trapd::start_at(&format!("udp6:[::1]:{port}"), port, "");
    let dir = tempfile::tempdir().unwrap();
    let agent = agent_in(dir.path(), "authtrapenable = 1\n");
    set(&agent, &split(params_row("p6", 1, 2, "public", 1)));
    let mut rows = addr_row("t6", port, "v6", "p6", 3);
    rows[0] = format!("{} o .1.3.6.1.2.1.100.1.2", cell(ADDR, 2, "t6"));
    rows[1] = format!("{} x {:032X}{port:04X}", cell(ADDR, 3, "t6"), 1u128);
    set(&agent, &split(rows));
    set(&agent, &split(notify_row("n6", "v6", 1, 3)));
    bad_community_get(&agent);
    trapd.wait(WAIT, "authenticationFailure over IPv6", |t| {
        count(t, "TRAP2", "authenticationFailure") == 1
    });
}

/// pysnmp as the manager: one SNMPv3 authPriv Set PDU creates the params,
/// address and notify rows together (three tables, two modules); the next
/// notification reaches snmptrapd; pysnmp reads the rows back.
#[test]
fn pysnmp_creates_a_target_in_one_request() {
    let trapd = Trapd::start();
    let dir = tempfile::tempdir().unwrap();
    let config = "authtrapenable = 1\n\
         [[user]]\nname = \"admin\"\nauth = \"SHA\"\nauth_pass = \"adminpass-1\"\n\
         priv = \"AES\"\npriv_pass = \"adminpriv-1\"\n\
         [[rwuser]]\nuser = \"admin\"\nlevel = \"priv\"\n";
    let agent = agent_in(dir.path(), config);
    // The rows as snmpset would send them, as pysnmp ObjectTypes.
    let mut rows = params_row("py", 1, 2, "public", 1);
    rows.extend(addr_row("py", trapd.port, "py", "py", 3));
    rows.extend(notify_row("py", "py", 1, 3));
    let py: Vec<String> = rows.iter().map(|r| py_varbind(r)).collect();
    let oid = |entry: &str, col: u32| cell(entry, col, "py").trim_start_matches('.').to_string();
    let script = format!(
        r#"
import pysnmp.hlapi as h
user = h.UsmUserData('admin', 'adminpass-1', 'adminpriv-1',
                     authProtocol=h.usmHMACSHAAuthProtocol, privProtocol=h.usmAesCfb128Protocol)
target = h.UdpTransportTarget(('127.0.0.1', {port}), timeout=2, retries=1)
def ot(o, v):
    return h.ObjectType(h.ObjectIdentity(o), v)
rows = [{rows}]
e, s, i, vbs = next(h.setCmd(h.SnmpEngine(), user, target, h.ContextData(), *rows))
assert e is None and not s, (e, s.prettyPrint() if s else s, i)
e, s, i, vbs = next(h.getCmd(h.SnmpEngine(), user, target, h.ContextData(),
    h.ObjectType(h.ObjectIdentity('{a_status}')), h.ObjectType(h.ObjectIdentity('{n_status}'))))
assert e is None and not s, (e, s)
print('status', ' '.join(str(int(v)) for _, v in vbs))
"#,
        port = agent.port,
        rows = py.join(", "),
        a_status = oid(ADDR, 9),
        n_status = oid(NOTIFY, 5),
    );
    let o = std::process::Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .output()
        .expect("python3");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "pysnmp: {text}\n{}", agent.log_text());
    assert!(text.contains("status 1 1"), "{text}");
    bad_community_get(&agent);
    trapd.wait(WAIT, "authenticationFailure to the pysnmp target", |t| {
        count(t, "TRAP2", "authenticationFailure") == 1
    });
}
