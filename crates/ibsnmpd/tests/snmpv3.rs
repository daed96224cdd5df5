//! SNMPv3 with USM against the real binary, driven by net-snmp's tools and
//! pysnmp: every auth and privacy protocol, the error Reports and their
//! usmStats counters, per-user access, and snmpEngineBoots persistence.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{parse_lines, snmp, text, Agent};

const AUTHS: [&str; 6] = ["MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512"];
const PRIVS: [&str; 4] = ["DES", "AES", "AES-192", "AES-256"];
const AUTH_PASS: &str = "authpass-1";
const PRIV_PASS: &str = "privpass-1";
const SYS_DESCR: &str = ".1.3.6.1.2.1.1.1.0";
const SYS_NAME: &str = ".1.3.6.1.2.1.1.5.0";

fn user_name(auth: &str, privacy: Option<&str>) -> String {
    let a = auth.replace('-', "").to_lowercase();
    match privacy {
        Some(p) => format!("{a}_{}", p.replace('-', "").to_lowercase()),
        None => a,
    }
}

/// Users for every auth protocol (authNoPriv) and every auth x priv pair,
/// plus the special cases the tests below use.
fn config() -> String {
    let mut c = String::new();
    let mut user = |name: &str, auth: Option<&str>, privacy: Option<&str>| {
        c.push_str(&format!("[[user]]\nname = \"{name}\"\n"));
        if let Some(a) = auth {
            // The config takes net-snmp's spellings ("AES-192" is "AES192").
            c.push_str(&format!("auth = \"{a}\"\nauth_pass = \"{AUTH_PASS}\"\n"));
        }
        if let Some(p) = privacy {
            let p = p.replace('-', "");
            c.push_str(&format!("priv = \"{p}\"\npriv_pass = \"{PRIV_PASS}\"\n"));
        }
    };
    let mut access = Vec::new();
    for a in AUTHS {
        user(&user_name(a, None), Some(a), None);
        access.push(("rwuser", user_name(a, None), "auth", None));
        for p in PRIVS {
            user(&user_name(a, Some(p)), Some(a), Some(p));
            access.push(("rouser", user_name(a, Some(p)), "priv", None));
        }
    }
    user("plain", None, None);
    access.push(("rouser", "plain".into(), "noauth", None));
    user("sysonly", Some("SHA"), None);
    access.push(("rouser", "sysonly".into(), "auth", Some("1.3.6.1.2.1.1")));
    user("noaccess", Some("SHA"), None);
    // The Reeder key extension (Cisco's AES192C/AES256C), which net-snmp's
    // tools lack and pysnmp has.
    for p in ["AES192C", "AES256C"] {
        let name = user_name("SHA", Some(p));
        user(&name, Some("SHA"), Some(p));
        access.push(("rouser", name, "priv", None));
    }
    for (kind, name, level, oid) in access {
        c.push_str(&format!(
            "[[{kind}]]\nuser = \"{name}\"\nlevel = \"{level}\"\n"
        ));
        if let Some(o) = oid {
            c.push_str(&format!("oid = \"{o}\"\n"));
        }
    }
    c
}

fn write_config(dir: &Path) -> String {
    write_config_with(dir, "")
}

/// The test users' config after `head` (top-level keys), mode 0600.
fn write_config_with(dir: &Path, head: &str) -> String {
    let path = dir.join("ibsnmpd.toml");
    common::write_private(&path, &format!("{head}{}", config()));
    path.display().to_string()
}

fn start() -> (Agent, tempfile::TempDir) {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = write_config(cfg_dir.path());
    (Agent::start(&["--config", &cfg]), cfg_dir)
}

/// `tool -v3 -u USER [-l/-a/-A/-x/-X as the user needs] -On -t 2 -r 1`.
fn v3(agent: &Agent, tool: &str, user: &str, level: &[&str], oids: &[&str]) -> Output {
    let mut args = vec!["-v3", "-u", user, "-On", "-t", "2", "-r", "1"];
    args.extend_from_slice(level);
    agent.tool(tool, &args, oids)
}

/// `-l authNoPriv` with `auth` (protocol, password), or `-l authPriv`
/// with `privacy` (protocol, password) as well.
fn level_args<'a>(auth: (&'a str, &'a str), privacy: Option<(&'a str, &'a str)>) -> Vec<&'a str> {
    let mut args = vec!["-l", "authNoPriv", "-a", auth.0, "-A", auth.1];
    if let Some((p, pass)) = privacy {
        args[1] = "authPriv";
        args.extend(["-x", p, "-X", pass]);
    }
    args
}

fn auth_args(auth: &str) -> Vec<&str> {
    level_args((auth, AUTH_PASS), None)
}

fn priv_args<'a>(auth: &'a str, p: &'a str) -> Vec<&'a str> {
    level_args((auth, AUTH_PASS), Some((p, PRIV_PASS)))
}

/// snmpEngineID as served, in upper-case hex.
fn engine_hex(agent: &Agent) -> String {
    let got = agent.ok(
        "snmpget",
        "2c",
        "public",
        &["-Oqvx"],
        &[".1.3.6.1.6.3.10.2.1.1.0"],
    );
    got.chars()
        .filter(char::is_ascii_hexdigit)
        .collect::<String>()
        .to_uppercase()
}

fn assert_ok(agent: &Agent, o: &Output, what: &str) -> String {
    assert!(
        o.status.success() && !String::from_utf8_lossy(&o.stdout).contains("Error"),
        "{what}: {}\nagent log tail: {}",
        text(o),
        agent
            .log_text()
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A usmStats counter (1..6) read over v2c.
fn usm_stat(agent: &Agent, n: u32) -> u64 {
    agent.get_number(&format!(".1.3.6.1.6.3.15.1.1.{n}.0"))
}

#[test]
fn every_auth_protocol_auth_no_priv() {
    let (agent, _cfg) = start();
    for a in AUTHS {
        let o = v3(
            &agent,
            "snmpget",
            &user_name(a, None),
            &auth_args(a),
            &[SYS_DESCR],
        );
        let out = assert_ok(&agent, &o, a);
        assert!(out.contains("ibsnmpd"), "{a}: {out}");
    }
}

#[test]
fn every_auth_and_priv_protocol_auth_priv() {
    let (agent, _cfg) = start();
    for a in AUTHS {
        for p in PRIVS {
            let o = v3(
                &agent,
                "snmpget",
                &user_name(a, Some(p)),
                &priv_args(a, p),
                &[SYS_DESCR, SYS_NAME],
            );
            let out = assert_ok(&agent, &o, &format!("{a}/{p}"));
            assert_eq!(parse_lines(&out).len(), 2, "{a}/{p}: {out}");
        }
    }
}

#[test]
fn walks_at_every_level_match_v2c() {
    let (agent, _cfg) = start();
    let v2 = agent.ok("snmpwalk", "2c", "public", &[], &[".1.3.6.1.2.1.1"]);
    let want = parse_lines(&v2);
    assert!(want.len() >= 7);
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("plain", vec!["-l", "noAuthNoPriv"]),
        ("sha256", auth_args("SHA-256")),
        ("sha256_aes", priv_args("SHA-256", "AES")),
        ("sha_aes256", priv_args("SHA", "AES-256")),
        ("md5_des", priv_args("MD5", "DES")),
    ];
    for (user, level) in cases {
        for tool in ["snmpwalk", "snmpbulkwalk"] {
            let o = v3(&agent, tool, user, &level, &[".1.3.6.1.2.1.1"]);
            let got = parse_lines(&assert_ok(&agent, &o, &format!("{tool} {user}")));
            // sysUpTime moves: compare names only.
            let names =
                |v: &[(Vec<u32>, String)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
            assert_eq!(names(&got), names(&want), "{tool} {user}");
        }
    }
    // A longer bulk walk, authPriv, across many PDUs.
    let o = v3(
        &agent,
        "snmpbulkwalk",
        "sha512_aes256",
        &priv_args("SHA-512", "AES-256"),
        &[".1.3.6.1.2.1.2"],
    );
    let rows = parse_lines(&assert_ok(&agent, &o, "bulkwalk ifTable"));
    let v2 = parse_lines(&agent.ok("snmpbulkwalk", "2c", "public", &[], &[".1.3.6.1.2.1.2"]));
    assert_eq!(rows.len(), v2.len());
}

/// pysnmp as a second client: AES-128, both AES-256 key extensions
/// (Blumenthal as net-snmp, Reeder as Cisco: pysnmp's usmAesCfb256Protocol)
/// and AES192C.
#[test]
fn pysnmp_aes_key_extensions() {
    let (agent, _cfg) = start();
    let users: Vec<(&str, &str, &str, &str)> = [
        ("sha_aes", "usmAesCfb128Protocol"),
        ("sha_aes256", "usmAesBlumenthalCfb256Protocol"),
        ("sha_aes256c", "usmAesCfb256Protocol"),
        ("sha_aes192c", "usmAesCfb192Protocol"),
    ]
    .into_iter()
    .map(|(n, p)| (n, AUTH_PASS, PRIV_PASS, p))
    .collect();
    let o = common::pysnmp_get(agent.port, SYS_DESCR, &users);
    assert!(o.status.success(), "pysnmp: {}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for name in ["sha_aes ", "sha_aes256 ", "sha_aes256c ", "sha_aes192c "] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.contains("ibsnmpd")),
            "{out}"
        );
    }
}

#[test]
fn errors_are_reported_and_counted() {
    let (agent, _cfg) = start();
    // Engine discovery: every v3 tool run starts with an unknownEngineID probe.
    let before = usm_stat(&agent, 4);
    assert_ok(
        &agent,
        &v3(&agent, "snmpget", "sha", &auth_args("SHA"), &[SYS_DESCR]),
        "sha",
    );
    assert!(
        usm_stat(&agent, 4) > before,
        "usmStatsUnknownEngineIDs not counted"
    );

    // Wrong password: usmStatsWrongDigests Report.
    let before = usm_stat(&agent, 5);
    let o = v3(
        &agent,
        "snmpget",
        "sha",
        &level_args(("SHA", "wrong-pass"), None),
        &[SYS_DESCR],
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Authentication failure"), "{}", text(&o));
    assert_eq!(usm_stat(&agent, 5), before + 1);

    // A context other than the default one: snmpUnknownContexts Report
    // (RFC 3413 3.2), counted and served; the default context answers.
    let unknown_contexts = ".1.3.6.1.6.3.12.1.5.0";
    let before = agent.get_number(unknown_contexts);
    let mut level = auth_args("SHA");
    level.extend(["-n", "fabric-b"]);
    let o = v3(&agent, "snmpget", "sha", &level, &[SYS_DESCR]);
    assert!(!o.status.success(), "{}", text(&o));
    // net-snmp's words for a snmpUnknownContexts Report.
    assert!(text(&o).contains("Bad context specified"), "{}", text(&o));
    assert_eq!(agent.get_number(unknown_contexts), before + 1);
    assert_eq!(agent.get_number(".1.3.6.1.6.3.12.1.4.0"), 0);

    // Unknown user; a level the user has no keys for: (usmStats column,
    // user, level, what net-snmp says).
    for (stat, user, level, says) in [
        (3, "nobody", auth_args("SHA"), "Unknown user name"),
        (
            1,
            "sha",
            priv_args("SHA", "AES"),
            "Unsupported security level",
        ),
    ] {
        let before = usm_stat(&agent, stat);
        let o = v3(&agent, "snmpget", user, &level, &[SYS_DESCR]);
        assert!(text(&o).contains(says), "{}", text(&o));
        assert_eq!(usm_stat(&agent, stat), before + 1);
    }

    // Wrong privacy password: decryption fails (or the PDU does not parse).
    let before = usm_stat(&agent, 6);
    let o = v3(
        &agent,
        "snmpget",
        "sha_aes",
        &level_args(("SHA", AUTH_PASS), Some(("AES", "wrong-priv"))),
        &[SYS_DESCR],
    );
    assert!(
        !o.status.success() || text(&o).contains("Error"),
        "{}",
        text(&o)
    );
    assert_eq!(usm_stat(&agent, 6), before + 1);

    // Outside the time window: net-snmp resynchronises from the Report.
    let engine_hex = engine_hex(&agent);
    let before = usm_stat(&agent, 2);
    let engine = format!("0x{engine_hex}");
    let mut level = auth_args("SHA");
    level.extend(["-e", &engine, "-Z", "7,100000"]);
    let o = v3(&agent, "snmpget", "sha", &level, &[SYS_DESCR]);
    assert_ok(&agent, &o, "time window resync");
    assert_eq!(usm_stat(&agent, 2), before + 1);
}

#[test]
fn access_is_enforced() {
    let (agent, _cfg) = start();
    // rwuser: Set works.
    let o = v3(
        &agent,
        "snmpset",
        "sha",
        &auth_args("SHA"),
        &[SYS_NAME, "s", "v3-set"],
    );
    assert_ok(&agent, &o, "rwuser set");
    // authorizationError: a rouser's Set, a rouser whose minimum is priv
    // asking at authNoPriv, a user without rouser/rwuser.
    for (tool, user, level, oids) in [
        (
            "snmpset",
            "sha_aes",
            priv_args("SHA", "AES"),
            &[SYS_NAME, "s", "x"][..],
        ),
        ("snmpget", "sha_aes", auth_args("SHA"), &[SYS_DESCR]),
        ("snmpget", "noaccess", auth_args("SHA"), &[SYS_DESCR]),
    ] {
        let o = v3(&agent, tool, user, &level, oids);
        assert!(
            text(&o).contains("authorizationError"),
            "{user}: {}",
            text(&o)
        );
    }
    // A user limited to the system group walks only that.
    let o = v3(
        &agent,
        "snmpwalk",
        "sysonly",
        &auth_args("SHA"),
        &[".1.3.6.1"],
    );
    let out = assert_ok(&agent, &o, "sysonly walk");
    let rows: Vec<_> = parse_lines(&out)
        .into_iter()
        .filter(|r| !r.1.contains("No more variables"))
        .collect();
    assert!(rows.len() >= 7);
    assert!(
        rows.iter().all(|r| r.0.starts_with(&[1, 3, 6, 1, 2, 1, 1])),
        "{rows:?}"
    );
    let o = v3(
        &agent,
        "snmpget",
        "sysonly",
        &auth_args("SHA"),
        &[".1.3.6.1.2.1.2.1.0"],
    );
    assert!(text(&o).contains("No Such Object"), "{}", text(&o));
}

#[test]
fn engine_boots_grow_per_restart_also_after_kill9() {
    let (mut agent, _cfg) = start();
    let boots = |a: &Agent| {
        let o = v3(
            a,
            "snmpget",
            "sha",
            &{
                let mut v = auth_args("SHA");
                v.push("-Oqv");
                v
            },
            &[".1.3.6.1.6.3.10.2.1.2.0"],
        );
        assert_ok(a, &o, "boots").trim().parse::<u64>().unwrap()
    };
    let id = |a: &Agent| {
        a.ok(
            "snmpget",
            "2c",
            "public",
            &["-Oqv"],
            &[".1.3.6.1.6.3.10.2.1.1.0"],
        )
    };
    assert_eq!(boots(&agent), 1);
    let id1 = id(&agent);
    agent.restart(); // SIGKILL, then start again
    assert_eq!(boots(&agent), 2);
    agent.terminate();
    agent.restart();
    assert_eq!(boots(&agent), 3);
    assert_eq!(id(&agent), id1, "engine ID must persist");
}

#[test]
fn secrets_file_mode_warning() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = write_config(cfg_dir.path());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();
    let agent = Agent::start(&["--config", &cfg]);
    let log = agent.log_text();
    // The fix that keeps the packaged unit's user able to read it.
    assert!(
        log.contains(&format!("chmod 0640 {cfg}; chgrp ibsnmpd {cfg}")),
        "{log}"
    );
    assert!(!log.contains("0600"), "{log}");
    assert!(
        !log.contains(AUTH_PASS) && !log.contains(PRIV_PASS),
        "a password was logged"
    );
    let _ = snmp;
}

/// The packaged unit's way: a dynamic user (no root, no name) whose only
/// access to the root-owned configuration is the ibsnmpd group. A file
/// with SNMPv3 passwords, 0640 root:ibsnmpd's gid, is read at start and
/// again on SIGHUP without a warning, and its user answers. The agent runs
/// under `setpriv` with a uid and the group as the unit's only
/// supplementary one (the test runs as root; nothing is added to
/// /etc/passwd or /etc/group: the ibsnmpd group's gid where this host has
/// one, else a gid no group names, which the kernel checks the same way).
#[test]
fn secrets_file_0640_root_group_is_read_by_the_units_user_without_warning() {
    use std::os::unix::fs::{chown, PermissionsExt};
    common::require_tool("setpriv");
    assert!(
        std::fs::metadata("/proc/self").is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() == 0
        }),
        "this test runs as root (chown, setpriv), as CI does"
    );
    let gid = Command::new("getent")
        .args(["group", "ibsnmpd"])
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split(':')
                .nth(2)
                .and_then(|g| g.trim().parse::<u32>().ok())
        })
        .unwrap_or(61_235);
    let uid = 61_234u32;
    let dir = tempfile::tempdir().unwrap();
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(dir.path(), 0o755);
    let cfg = dir.path().join("ibsnmpd.toml");
    std::fs::write(
        &cfg,
        format!(
            "[[user]]\nname = \"ops\"\nauth = \"SHA\"\nauth_pass = \"{AUTH_PASS}\"\n\
             priv = \"AES\"\npriv_pass = \"{PRIV_PASS}\"\n\n\
             [[rouser]]\nuser = \"ops\"\nlevel = \"priv\"\n"
        ),
    )
    .unwrap();
    chown(&cfg, Some(0), Some(gid)).unwrap();
    mode(&cfg, 0o640);
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    chown(&state, Some(uid), Some(uid)).unwrap();
    mode(&state, 0o700);
    let log = dir.path().join("agent.log");
    let port = common::free_port("127.0.0.1");
    let target = format!("127.0.0.1:{port}");
    let child = Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            &format!("--groups={gid}"),
            "--",
            common::BIN,
            "--config",
        ])
        .arg(&cfg)
        .arg("--state-dir")
        .arg(&state)
        .args(["--listen", &target, "--log-level", "info"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut agent = Killed(child);
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    let get = || {
        snmp(
            "snmpget",
            &[
                "-v3", "-u", "ops", "-l", "authPriv", "-a", "SHA", "-A", AUTH_PASS, "-x", "AES",
                "-X", PRIV_PASS, "-On", "-t", "0.5", "-r", "0", &target, SYS_NAME,
            ],
        )
    };
    common::poll(
        std::time::Duration::from_secs(30),
        std::time::Duration::from_millis(200),
        || {
            if let Ok(Some(st)) = agent.0.try_wait() {
                panic!("the agent exited {st}: {}", log_text());
            }
            get()
                .status
                .success()
                .then_some(())
                .ok_or_else(|| format!("no answer yet: {}", log_text()))
        },
    );
    common::signal(&agent.0.id().to_string(), "HUP");
    let after = common::wait_for(
        "the reload's outcome",
        std::time::Duration::from_secs(20),
        || {
            let l = log_text();
            (l.contains("SIGHUP: configuration reloaded") || l.contains("reload refused"))
                .then_some(l)
        },
    );
    assert!(after.contains("SIGHUP: configuration reloaded"), "{after}");
    assert!(get().status.success(), "{}", text(&get()));
    assert!(!after.contains("WARN"), "{after}");
    assert!(!after.contains("passwords"), "{after}");
    let _ = agent.0.kill();
}

/// A process this test started, killed and reaped when dropped.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn hardening_bulk_cap_no_such_instance_stale_temp_files() {
    let state = tempfile::tempdir().unwrap();
    let stale = state.path().join(".state.json.999999.tmp");
    std::fs::write(&stale, "{").unwrap();
    let agent = Agent::start_in(state.path(), &[]);
    assert!(!stale.exists(), "stale temp file left at start");
    // GetBulk: 10 repeaters x 100 repetitions stops at 100 varbinds.
    let roots: Vec<&str> = std::iter::repeat_n(".1.3", 10).collect();
    let out = agent.ok("snmpbulkget", "2c", "public", &["-Cn0", "-Cr100"], &roots);
    let n = parse_lines(&out).len();
    assert!((10..=100).contains(&n), "bulk returned {n} varbinds");
    // A scalar without its .0: noSuchInstance (RFC 3416 4.2.1).
    let out = agent.ok("snmpget", "2c", "public", &[], &[".1.3.6.1.2.1.1.1"]);
    assert!(out.contains("No Such Instance"), "{out}");
}

/// IB-PM-MIB's objects (pmMIBObjects).
const IB_PM: &[u32] = &[1, 3, 6, 1, 3, 117, 1];

#[test]
fn vacm_views_for_users_and_communities() {
    let (_cfg_dir, path) = common::temp_file(
        "vacm.toml",
        r#"
[[rocommunity]]
community = "public"
[[rocommunity]]
community = "pmless"

[[user]]
name = "viewer"
auth = "SHA-256"
auth_pass = "authpass-1"
priv = "AES"
priv_pass = "privpass-1"

[[view]]
name = "noPM"
type = "included"
oid = "1.3.6.1"
[[view]]
name = "noPM"
type = "excluded"
oid = "1.3.6.1.3.117.1"
[[view]]
name = "sysName"
type = "included"
oid = "1.3.6.1.2.1.1.5"

[[group]]
name = "watchers"
model = "usm"
security_name = "viewer"
[[group]]
name = "watchers"
model = "v2c"
security_name = "pmless"

[[access]]
group = "watchers"
level = "noauth"
read = "noPM"
[[access]]
group = "watchers"
model = "usm"
level = "priv"
read = "noPM"
write = "sysName"
"#,
    );
    let cfg = path.display().to_string();
    let agent = Agent::start(&["--config", &cfg]);
    let full = parse_lines(&agent.ok("snmpbulkwalk", "2c", "public", &["-Cr50"], &[".1.3.6.1"]));
    assert!(
        full.iter().any(|r| r.0.starts_with(IB_PM)),
        "the sim fabric has IB-PM-MIB rows"
    );
    let want: Vec<Vec<u32>> = full
        .iter()
        .filter(|r| !r.0.starts_with(IB_PM))
        .map(|r| r.0.clone())
        .collect();
    let names = |rows: Vec<(Vec<u32>, String)>| -> Vec<Vec<u32>> {
        rows.into_iter().map(|r| r.0).collect()
    };
    // A community mapped to the group walks past IB-PM-MIB.
    for tool in ["snmpwalk", "snmpbulkwalk"] {
        let got = names(parse_lines(&agent.ok(
            tool,
            "2c",
            "pmless",
            &[],
            &[".1.3.6.1"],
        )));
        assert_eq!(got.len(), want.len(), "{tool} pmless");
        assert_eq!(got, want, "{tool} pmless");
    }
    // The user, at authPriv, the same.
    let o = v3(
        &agent,
        "snmpbulkwalk",
        "viewer",
        &priv_args("SHA-256", "AES"),
        &[".1.3.6.1"],
    );
    let got = names(parse_lines(&assert_ok(&agent, &o, "viewer walk")));
    // At authPriv the viewer also sees IB-SM-MIB's key columns and the
    // community rows of vacmSecurityToGroupTable (columns 3-5, models 1
    // and 2); v2c does not.
    let secret = |o: &Vec<u32>| {
        let keys = [
            [1, 3, 6, 1, 3, 117, 7, 1, 1, 1, 1, 4],
            [1, 3, 6, 1, 3, 117, 7, 1, 3, 1, 1, 4],
            [1, 3, 6, 1, 3, 117, 7, 1, 7, 1, 1, 3],
        ];
        let community_group = matches!(
            o.strip_prefix(&[1, 3, 6, 1, 6, 3, 16, 1, 2, 1][..]),
            Some([3..=5, 1 | 2, ..])
        );
        community_group || keys.iter().any(|p| o.starts_with(p))
    };
    let got: Vec<Vec<u32>> = got.into_iter().filter(|o| !secret(o)).collect();
    assert_eq!(got, want, "viewer walk");
    // Reads inside the excluded subtree: noSuchObject.
    let first_pm: Vec<String> = full
        .iter()
        .find(|r| r.0.starts_with(IB_PM))
        .map(|r| r.0.iter().map(|x| x.to_string()).collect())
        .unwrap();
    let pm_oid = format!(".{}", first_pm.join("."));
    let out = agent.ok("snmpget", "2c", "pmless", &[], &[&pm_oid]);
    assert!(out.contains("No Such Object"), "{out}");
    // Writes: only sysName, only at priv; the community has no write view.
    let o = v3(
        &agent,
        "snmpset",
        "viewer",
        &priv_args("SHA-256", "AES"),
        &[SYS_NAME, "s", "vacm"],
    );
    assert_ok(&agent, &o, "viewer sets sysName");
    let o = v3(
        &agent,
        "snmpset",
        "viewer",
        &priv_args("SHA-256", "AES"),
        &[".1.3.6.1.2.1.1.6.0", "s", "x"],
    );
    assert!(text(&o).contains("noAccess"), "{}", text(&o));
    let o = agent.tool(
        "snmpset",
        &["-v2c", "-c", "pmless", "-On", "-t", "2", "-r", "0"],
        &[SYS_NAME, "s", "y"],
    );
    assert!(text(&o).contains("noAccess"), "{}", text(&o));
    // authNoPriv picks the noauth entry: no write view -> authorizationError.
    let o = v3(
        &agent,
        "snmpset",
        "viewer",
        &auth_args("SHA-256"),
        &[SYS_NAME, "s", "z"],
    );
    assert!(text(&o).contains("authorizationError"), "{}", text(&o));
}

#[test]
fn sm_key_and_m_key_need_auth_priv() {
    let (agent, _cfg) = start();
    const SM_KEY: &str = ".1.3.6.1.3.117.7.1.1.1.1.4";
    const M_KEY: &str = ".1.3.6.1.3.117.7.1.3.1.1.4";
    let rows = |out: &str| {
        parse_lines(out)
            .into_iter()
            .filter(|r| !r.1.contains("No Such") && !r.1.contains("No more"))
            .count()
    };
    // The sim fabric serves IB-SM-MIB: other columns are there over v2c...
    let other = agent.ok(
        "snmpwalk",
        "2c",
        "public",
        &[],
        &[".1.3.6.1.3.117.7.1.1.1.1.2"],
    );
    assert!(rows(&other) > 0, "{other}");
    for col in [SM_KEY, M_KEY] {
        // ...but not the keys, at noAuthNoPriv (v2c) or authNoPriv.
        let v2 = agent.ok("snmpwalk", "2c", "public", &[], &[col]);
        assert_eq!(rows(&v2), 0, "{col} over v2c: {v2}");
        let o = v3(&agent, "snmpwalk", "sha256", &auth_args("SHA-256"), &[col]);
        assert_eq!(
            rows(&String::from_utf8_lossy(&o.stdout)),
            0,
            "{col} authNoPriv: {}",
            text(&o)
        );
        // authPriv reads them.
        let o = v3(
            &agent,
            "snmpwalk",
            "sha256_aes",
            &priv_args("SHA-256", "AES"),
            &[col],
        );
        let out = assert_ok(&agent, &o, "keys at authPriv");
        assert!(rows(&out) > 0, "{col} at authPriv: {out}");
    }
}

/// SNMP-MPD-MIB: a v3 message with another security model and one asking for
/// privacy without authentication are dropped and counted, as RFC 3412 says;
/// net-snmp reads the counters.
#[test]
fn message_processing_drops_are_counted() {
    use snmp::message_v3::{flags, HeaderData, ScopedPdu, ScopedPduData, UsmParams, V3Message};
    use snmp::pdu::{Pdu, PduBody};
    let (agent, _cfg) = start();
    let message = |flags: u8, security_model: i64| {
        let m = V3Message {
            header: HeaderData {
                msg_id: 7,
                max_size: 65507,
                flags,
                security_model,
            },
            usm: UsmParams {
                user_name: b"noauth".to_vec(),
                ..Default::default()
            },
            data: ScopedPduData::Plain(ScopedPdu {
                context_engine_id: vec![],
                context_name: vec![],
                pdu: Pdu::GetRequest(PduBody::request(7, vec![])),
            }),
        };
        let mut out = Vec::new();
        m.encode(&mut out);
        out
    };
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.send_to(&message(flags::REPORTABLE, 99), &agent.target)
        .unwrap();
    sock.send_to(&message(flags::PRIV | flags::REPORTABLE, 3), &agent.target)
        .unwrap();
    let mpd = |n: u32| agent.get_number(&format!(".1.3.6.1.6.3.11.2.1.{n}.0"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while (mpd(1), mpd(2)) != (1, 1) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(mpd(1), 1, "snmpUnknownSecurityModels");
    assert_eq!(mpd(2), 1, "snmpInvalidMsgs");
    assert_eq!(mpd(3), 0, "snmpUnknownPDUHandlers");
    // Neither is an ASN.1 parse error.
    assert_eq!(agent.get_number(".1.3.6.1.2.1.11.6.0"), 0);
}

/// net-snmp's engineIDType: an ID built from a text or an interface
/// address is served as snmpEngineID, and SNMPv3 tools discover it.
#[test]
fn engine_id_from_text_and_interface_address() {
    for (keys, want) in [
        (
            "engine_id_type = \"text\"\nengine_id_text = \"fabric-a\"\n",
            "80001F88046661627269632D61".to_string(),
        ),
        (
            "engine_id_type = \"ipv4\"\nengine_id_nic = \"lo\"\n",
            "80001F88017F000001".to_string(),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = write_config_with(dir.path(), keys);
        let agent = Agent::start(&["--config", &path]);
        let hex = engine_hex(&agent);
        assert_eq!(hex, want, "{keys}");
        // A v3 request discovers and uses it (-e would fail on a mismatch).
        let mut args: Vec<&str> = auth_args("SHA");
        args.extend(["-e", &want]);
        let o = v3(&agent, "snmpget", "sha", &args, &[SYS_DESCR]);
        assert_ok(&agent, &o, keys);
    }
}

/// A request naming another contextEngineID (`snmpset -E`) is answered
/// with that contextEngineID, as net-snmp's snmpd answers it: the tool
/// takes the answer (before, it discarded it and reported a timeout while
/// the Set had taken).
#[test]
fn a_foreign_context_engine_id_is_answered_with_it() {
    let (agent, _cfg) = start();
    let foreign = ["-E", "0x8000DEAD0102030405"];
    let mut level = auth_args("SHA");
    level.extend_from_slice(&foreign);
    let o = v3(
        &agent,
        "snmpset",
        "sha",
        &level,
        &[SYS_NAME, "s", "set-with-foreign-E"],
    );
    let out = assert_ok(&agent, &o, "snmpset -E");
    assert!(out.contains("set-with-foreign-E"), "{out}");
    let o = v3(&agent, "snmpget", "sha", &level, &[SYS_NAME]);
    let out = assert_ok(&agent, &o, "snmpget -E");
    assert!(out.contains("set-with-foreign-E"), "{out}");
}

/// Which contexts exist is told only to those whose access reaches them:
/// a user without access gets the same authorizationError for a node
/// context that exists and for a name that is none; a user with access
/// gets snmpUnknownContexts ("Bad context specified") for the unknown one.
#[test]
fn contexts_are_not_told_to_a_user_without_access() {
    let (agent, _cfg) = start();
    let get = |user: &str, context: &str| {
        let mut level = auth_args("SHA");
        level.extend_from_slice(&["-n"]);
        let mut args: Vec<&str> = level.clone();
        args.push(context);
        text(&v3(&agent, "snmpget", user, &args, &[SYS_NAME]))
    };
    let real = get("noaccess", "leaf01");
    let unknown = get("noaccess", "no-such-node");
    assert!(real.contains("authorizationError"), "{real}");
    assert_eq!(real, unknown);
    let unknown = get("sysonly", "no-such-node");
    assert!(unknown.contains("Bad context specified"), "{unknown}");
    let real = get("sysonly", "leaf01");
    assert!(real.contains("leaf01"), "{real}");
}
