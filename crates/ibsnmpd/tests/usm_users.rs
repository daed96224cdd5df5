//! usmUserTable managed over SNMP (issue 29), with net-snmp's `snmpusm` and
//! pysnmp: a user cloned from a configured template, its keys changed with
//! KeyChange, in force at once and after a restart, deleted; configured
//! users are permanent rows that refuse Sets; nothing a refused Set names
//! reaches the state file.

mod common;

use std::path::Path;
use std::process::Output;

use common::Agent;

const ADMIN: [&str; 10] = [
    "-u",
    "admin",
    "-l",
    "authPriv",
    "-a",
    "SHA",
    "-A",
    "adminpass1",
    "-x",
    "AES",
];
const ADMIN_PRIV: [&str; 2] = ["-X", "adminpriv1"];
const SYS_DESCR: &str = ".1.3.6.1.2.1.1.1.0";
/// usmUserTable's entry.
const USM_USER_ENTRY: &str = ".1.3.6.1.6.3.15.1.2.2.1";

fn config(dir: &Path) -> String {
    let text = r#"
[[user]]
name = "admin"
auth = "SHA"
auth_pass = "adminpass1"
priv = "AES"
priv_pass = "adminpriv1"

# The template users are cloned from (net-snmp's habit: one passphrase).
[[user]]
name = "template"
auth = "SHA"
auth_pass = "templatepass"
priv = "AES"
priv_pass = "templatepass"

[[rwuser]]
user = "admin"
level = "priv"

# What the users created over SNMP may read.
[[view]]
name = "system"
type = "included"
oid = ".1.3.6.1.2.1.1"

# ... and may set: their own keys (RFC 3414's usmUserOwn*KeyChange).
[[view]]
name = "ownkeys"
type = "included"
oid = ".1.3.6.1.6.3.15.1.2.2.1.7"

[[view]]
name = "ownkeys"
type = "included"
oid = ".1.3.6.1.6.3.15.1.2.2.1.10"

[[view]]
name = "ownkeys"
type = "included"
oid = ".1.3.6.1.6.3.15.1.2.1"

[[group]]
name = "staff"
model = "usm"
security_name = "newbie"

[[group]]
name = "staff"
model = "usm"
security_name = "template"

[[group]]
name = "staff"
model = "usm"
security_name = "second"

[[access]]
group = "staff"
model = "usm"
level = "auth"
read = "system"
write = "ownkeys"
"#;
    let path = dir.join("ibsnmpd.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn out(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A net-snmp tool as the rwuser `admin`: `args`, the agent, `oids`.
fn admin(agent: &Agent, tool: &str, args: &[&str], oids: &[&str]) -> Output {
    let mut all = vec!["-v3", "-t", "2", "-r", "1"];
    all.extend_from_slice(&ADMIN);
    all.extend_from_slice(&ADMIN_PRIV);
    all.extend_from_slice(args);
    agent.tool(tool, &all, oids)
}

/// snmpusm SUBCOMMAND ... as `admin` (the agent's address before the
/// subcommand, as snmpusm takes it).
fn snmpusm(agent: &Agent, sub: &[&str]) -> Output {
    let mut creds = ADMIN.to_vec();
    creds.extend_from_slice(&ADMIN_PRIV);
    snmpusm_as(agent, &creds, sub)
}

/// snmpusm with the credentials `creds`.
fn snmpusm_as(agent: &Agent, creds: &[&str], sub: &[&str]) -> Output {
    let mut all = vec!["-v3", "-t", "2", "-r", "1"];
    all.extend_from_slice(creds);
    all.push(&agent.target);
    all.extend_from_slice(sub);
    std::process::Command::new("snmpusm")
        .args(&all)
        .output()
        .expect("snmpusm")
}

/// sysDescr.0 as `user` at authPriv with `pass` for both keys.
fn get_as(agent: &Agent, user: &str, pass: &str) -> Output {
    agent.tool(
        "snmpget",
        &[
            "-v3", "-t", "2", "-r", "0", "-On", "-u", user, "-l", "authPriv", "-a", "SHA", "-A",
            pass, "-x", "AES", "-X", pass,
        ],
        &[SYS_DESCR],
    )
}

fn reads(agent: &Agent, user: &str, pass: &str) -> bool {
    let o = get_as(agent, user, pass);
    o.status.success() && out(&o).contains("STRING")
}

fn state_file(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("state.json")).unwrap_or_default()
}

#[test]
fn snmpusm_create_passwd_delete_in_force_at_once_and_after_a_restart() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let cfg = config(cfg_dir.path());
    let mut agent = Agent::start_in(state.path(), &["--config", &cfg]);

    // The configured users are permanent rows.
    let o = admin(&agent, "snmpwalk", &["-On"], &[USM_USER_ENTRY]);
    let walk = out(&o);
    assert!(walk.matches("INTEGER: 4").count() >= 2, "{walk}");
    assert!(!reads(&agent, "newbie", "templatepass"));

    // create NAME CLONEFROM: the template's protocols and keys.
    let o = snmpusm(&agent, &["create", "newbie", "template"]);
    assert!(o.status.success(), "create: {}", out(&o));
    assert!(
        reads(&agent, "newbie", "templatepass"),
        "the clone has the template's keys"
    );

    // create NAME, then cloneFrom NAME CLONEFROM (snmpusm's two steps).
    let o = snmpusm(&agent, &["create", "second"]);
    assert!(o.status.success(), "create: {}", out(&o));
    assert!(!reads(&agent, "second", "templatepass"), "no keys yet");
    let o = snmpusm(&agent, &["cloneFrom", "second", "template"]);
    assert!(o.status.success(), "cloneFrom: {}", out(&o));
    assert!(reads(&agent, "second", "templatepass"), "{}", out(&o));

    // passwd OLD NEW NAME: KeyChange of both keys.
    let o = snmpusm(
        &agent,
        &["passwd", "templatepass", "newbie-pass-2", "newbie"],
    );
    assert!(o.status.success(), "passwd: {}", out(&o));
    assert!(reads(&agent, "newbie", "newbie-pass-2"));
    assert!(!reads(&agent, "newbie", "templatepass"));
    assert!(
        reads(&agent, "template", "templatepass"),
        "the template is untouched"
    );

    // A user changes its own keys (usmUserOwnAuthKeyChange and
    // usmUserOwnPrivKeyChange: passwd without a user name)...
    let own = |user: &str, pass: &str, sub: &[&str]| {
        let creds = [
            "-u", user, "-l", "authPriv", "-a", "SHA", "-A", pass, "-x", "AES", "-X", pass,
        ];
        snmpusm_as(&agent, &creds, sub)
    };
    let o = own(
        "newbie",
        "newbie-pass-2",
        &["passwd", "newbie-pass-2", "newbie-pass-3"],
    );
    assert!(o.status.success(), "own passwd: {}", out(&o));
    assert!(reads(&agent, "newbie", "newbie-pass-3"), "{}", out(&o));
    // ... and only its own: another user's keys stay.
    let o = own(
        "newbie",
        "newbie-pass-3",
        &["passwd", "templatepass", "stolen-pass-1", "second"],
    );
    assert!(
        !out(&o).contains("successfully"),
        "changed another user's keys: {}",
        out(&o)
    );
    assert!(reads(&agent, "second", "templatepass"));
    let o = snmpusm(
        &agent,
        &["passwd", "newbie-pass-3", "newbie-pass-2", "newbie"],
    );
    assert!(o.status.success(), "passwd: {}", out(&o));

    // Saved with localized keys only, in a file only the agent reads.
    let saved = state_file(state.path());
    assert!(saved.contains("SNMP-USER-BASED-SM-MIB"), "{saved}");
    assert!(!saved.contains("newbie-pass-2") && !saved.contains("templatepass"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(state.path().join("state.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "state file mode {mode:o}");

    // pysnmp as a second client, with the changed keys.
    pysnmp_reads(agent.port, "newbie", "newbie-pass-2");

    // A restart keeps the user (same engine ID, same localized keys).
    agent.restart();
    assert!(reads(&agent, "newbie", "newbie-pass-2"), "after a restart");

    // A configured user cannot be deleted over SNMP: wrongValue, still there.
    // (snmpusm exits 0 on an error answer: the text says it.)
    let o = snmpusm(&agent, &["delete", "template"]);
    assert!(out(&o).to_lowercase().contains("wrongvalue"), "{}", out(&o));
    assert!(reads(&agent, "template", "templatepass"));

    // A wrong-typed Set changes nothing, the file included.
    let before = state_file(state.path());
    let engine = engine_index(&agent);
    let status = format!("{USM_USER_ENTRY}.13.{engine}.6.110.101.119.98.105.101");
    let o = admin(&agent, "snmpset", &[], &[&status, "s", "6"]);
    assert!(out(&o).contains("wrongType"), "{}", out(&o));
    assert_eq!(state_file(state.path()), before);
    assert!(reads(&agent, "newbie", "newbie-pass-2"));

    // delete: gone at once, and from the file.
    let o = snmpusm(&agent, &["delete", "newbie"]);
    assert!(o.status.success(), "delete: {}", out(&o));
    assert!(!reads(&agent, "newbie", "newbie-pass-2"));
    assert!(!state_file(state.path()).contains(&engine_hex_of(&engine)));
}

/// snmpEngineID as a usmUserTable index part (length, then octets).
fn engine_index(agent: &Agent) -> String {
    let o = admin(
        agent,
        "snmpget",
        &["-On", "-Ox"],
        &[".1.3.6.1.6.3.10.2.1.1.0"],
    );
    let text = out(&o);
    let hex: Vec<u8> = text
        .split("Hex-STRING:")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"))
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect();
    let mut parts = vec![hex.len().to_string()];
    parts.extend(hex.iter().map(|b| b.to_string()));
    parts.join(".")
}

/// The dotted index part of the engine and "newbie" as the state file
/// writes a row's index.
fn engine_hex_of(engine_index: &str) -> String {
    format!("{engine_index}.6.110.101.119.98.105.101")
}

fn pysnmp_reads(port: u16, user: &str, pass: &str) {
    let o = common::pysnmp_get(
        port,
        SYS_DESCR,
        &[(user, pass, pass, "usmAesCfb128Protocol")],
    );
    assert!(o.status.success(), "pysnmp: {}", out(&o));
    assert!(out(&o).contains("ibsnmpd"), "{}", out(&o));
}
