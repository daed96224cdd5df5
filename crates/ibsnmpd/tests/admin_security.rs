//! The administrative MIBs (USM, VACM, SNMP-TARGET-MIB,
//! SNMP-NOTIFICATION-MIB) against writers below authPriv (issue 36), with
//! net-snmp's tools as the attacker: the v2c read-write community and an
//! authNoPriv writer cannot create users, map themselves into a group or
//! add targets (notWritable, noSuchName over SNMPv1), and nothing changes;
//! with `admin_writable_below_authpriv` opened, a target that would carry
//! a configured sink's community elsewhere is still refused; and a guessed
//! community gets the same answer whether or not it exists.

mod common;

use std::path::Path;

use common::{text, Agent};

const CONFIG: &str = r#"
trap2sink = ["127.0.0.1:9"]

[[user]]
name = "weak"
auth = "SHA"
auth_pass = "weak-auth-1"

[[rwuser]]
user = "admin"
level = "priv"

[[rwuser]]
user = "weak"
level = "auth"
"#;

/// The authPriv administrator.
fn admin() -> Vec<&'static str> {
    common::admin_args()
}

/// A writer at authNoPriv.
fn weak() -> Vec<&'static str> {
    common::usm_args("weak", "weak-auth-1", None)
}

const RW_V2C: &[&str] = &["-v2c", "-c", "private", "-On", "-t", "2", "-r", "1"];
const RW_V1: &[&str] = &["-v1", "-c", "private", "-On", "-t", "2", "-r", "1"];

/// vacmSecurityToGroupStatus, snmpTargetAddrEntry.
const SEC2GROUP_STATUS: &str = ".1.3.6.1.6.3.16.1.2.1.5";
const ADDR: &str = ".1.3.6.1.6.3.12.1.2.1";
const PARAMS: &str = ".1.3.6.1.6.3.12.1.3.1";

fn agent_with(dir: &Path, more: &str) -> Agent {
    let conf = dir.join("ibsnmpd.toml");
    common::write_private(&conf, &format!("{more}{CONFIG}{}", common::ADMIN_USER));
    Agent::start_in(dir, &["--config", conf.to_str().unwrap()])
}

/// `.len.octets` (a length-prefixed string index).
fn string_index(s: &str) -> String {
    let octets: String = s.bytes().map(|b| format!(".{b}")).collect();
    format!(".{}{octets}", s.len())
}

/// An IMPLIED string index.
fn implied(s: &str) -> String {
    s.bytes().map(|b| format!(".{b}")).collect()
}

/// `tool` with `who`'s credentials, the agent, then `args` (snmpusm and
/// snmpvacm take their subcommand after the agent's address).
fn run(agent: &Agent, tool: &str, who: &[&str], args: &[&str]) -> String {
    text(&agent.tool(tool, who, args))
}

fn state_file(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("state.json")).unwrap_or_default()
}

/// snmpset's words for the columns `(column, type, value)` of the row
/// `entry`.`name` (an IMPLIED string index).
fn cells(entry: &str, name: &str, columns: &[(u32, &str, &str)]) -> Vec<String> {
    columns
        .iter()
        .flat_map(|(col, t, v)| {
            [
                format!("{entry}.{col}{}", implied(name)),
                t.to_string(),
                v.to_string(),
            ]
        })
        .collect()
}

/// The target row `name` at 127.0.0.1:`port` using params `params`.
fn target_row(name: &str, port: u16, params: &str) -> Vec<String> {
    let address = format!("7F000001{port:04X}");
    cells(
        ADDR,
        name,
        &[
            (2, "o", ".1.3.6.1.6.1.1"),
            (3, "x", &address),
            (7, "s", params),
            (9, "i", "4"),
        ],
    )
}

#[test]
fn writers_below_auth_priv_cannot_touch_the_administrative_tables() {
    let dir = tempfile::tempdir().unwrap();
    let agent = agent_with(dir.path(), "");
    let before = state_file(dir.path());
    for who in [RW_V2C.to_vec(), weak()] {
        // A user cloned from the template, a mapping into admin's group.
        let o = run(&agent, "snmpusm", &who, &["create", "evil", "admin"]);
        assert!(o.contains("notWritable"), "snmpusm create: {o}");
        let o = run(
            &agent,
            "snmpvacm",
            &who,
            &["createSec2Group", "3", "evil", "ibsnmpd:user:admin"],
        );
        assert!(o.contains("notWritable"), "snmpvacm: {o}");
        // A target at the writer.
        let row = target_row("evil", 9, "internal0");
        let v: Vec<&str> = row.iter().map(String::as_str).collect();
        let o = run(&agent, "snmpset", &who, &v);
        assert!(o.contains("notWritable"), "target: {o}");
    }
    // SNMPv1: notWritable maps to noSuchName.
    let status = format!("{SEC2GROUP_STATUS}.3{}", string_index("evil"));
    let o = run(&agent, "snmpset", RW_V1, &[&status, "i", "4"]);
    assert!(o.contains("noSuchName"), "v1: {o}");
    // Nothing changed anywhere.
    assert_eq!(state_file(dir.path()), before);
    let o = run(&agent, "snmpget", &admin(), &[&status]);
    assert!(o.contains("No Such Instance"), "{o}");
    // The same tools at authPriv work.
    let o = run(
        &agent,
        "snmpvacm",
        &admin(),
        &["createSec2Group", "3", "newop", "ibsnmpd:user:admin"],
    );
    assert!(!o.contains("Error"), "snmpvacm as admin: {o}");
    let after = state_file(dir.path());
    assert!(
        after.contains("3.5.110.101.119.111.112"),
        "{o}\n{after}\n{}",
        agent.log_text()
    );
}

/// Item 7: createAndWait on a v1/v2c vacmSecurityToGroupTable row answers
/// the same for an existing community as for a guess, for any writer below
/// authPriv, whether or not the tables are opened to them.
#[test]
fn a_guessed_community_gets_the_same_answer_as_a_real_one() {
    for more in ["", "admin_writable_below_authpriv = true\n"] {
        let dir = tempfile::tempdir().unwrap();
        let agent = agent_with(dir.path(), more);
        let answer = |community: &str| {
            let oid = format!("{SEC2GROUP_STATUS}.2{}", string_index(community));
            let o = run(&agent, "snmpset", RW_V2C, &[&oid, "i", "5"]);
            // The error line, without the varbind (it names the guess).
            o.lines()
                .find(|l| l.contains("Reason:"))
                .unwrap_or_default()
                .to_string()
        };
        let real = answer("public");
        let guess = answer("not-a-community");
        assert!(real.contains("notWritable"), "{more}: {real}");
        assert_eq!(real, guess, "{more}");
    }
}

/// Item 4: with the tables opened below authPriv, a target may still not
/// use the configured sink's params (which carry its community) or point a
/// configured target elsewhere, nor may a community be written.
#[test]
fn opened_tables_still_refuse_to_redirect_a_hidden_value() {
    let dir = tempfile::tempdir().unwrap();
    let agent = agent_with(dir.path(), "admin_writable_below_authpriv = true\n");
    // Opened: the v2c writer maps a user (the risk the key names).
    let o = run(
        &agent,
        "snmpvacm",
        RW_V2C,
        &["createSec2Group", "3", "newop", "ibsnmpd:user:admin"],
    );
    assert!(!o.contains("Error"), "opened: {o}");
    let before = state_file(dir.path());
    let redirect = target_row("redir", 9, "internal0");
    let redirect: Vec<&str> = redirect.iter().map(String::as_str).collect();
    // The configured target itself pointed elsewhere; a community in a new
    // params row.
    let (target_addr, params_community, params_status) = (
        format!("{ADDR}.3{}", implied("internal0")),
        format!("{PARAMS}.4{}", implied("mine")),
        format!("{PARAMS}.7{}", implied("mine")),
    );
    let refused: [(&str, &[&str]); 3] = [
        ("redirect", &redirect),
        ("configured target", &[&target_addr, "x", "7F0000010009"]),
        (
            "community",
            &[&params_community, "s", "public", &params_status, "i", "5"],
        ),
    ];
    for who in [RW_V2C.to_vec(), weak()] {
        for (what, varbinds) in refused {
            let o = run(&agent, "snmpset", &who, varbinds);
            assert!(o.contains("notWritable"), "{what}: {o}");
        }
    }
    assert_eq!(state_file(dir.path()), before);
    // authPriv may still do it.
    let row = target_row("redir", 9, "internal0");
    let v: Vec<&str> = row.iter().map(String::as_str).collect();
    let o = run(&agent, "snmpset", &admin(), &v);
    assert!(!o.contains("Error"), "as admin: {o}");
}

/// Item 2: about a thousand inform targets at one receiver, then one datagram
/// with a bad community (the kind anyone can spoof): the agent sends a
/// bounded number of datagrams (the per-notification cap, 64 by default),
/// not one per target and retry. Out-of-range Timeout and RetryCount are
/// refused first.
#[test]
fn a_thousand_targets_and_one_bad_datagram_give_a_bounded_burst() {
    let receiver = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = receiver.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let agent = agent_with(dir.path(), "authtrapenable = 1\n");
    let set = |varbinds: &[String]| {
        let v: Vec<&str> = varbinds.iter().map(String::as_str).collect();
        run(&agent, "snmpset", &admin(), &v)
    };
    // Timeout 0 and RetryCount 255: wrongValue, nothing created.
    for (col, value) in [(4, "0"), (5, "255"), (4, "6001"), (5, "11")] {
        let mut row = target_row("bad", port, "amp");
        row.extend(cells(ADDR, "bad", &[(col, "i", value)]));
        let o = set(&row);
        assert!(o.contains("wrongValue"), "column {col} = {value}: {o}");
    }
    // The params (SNMPv2c), the notify row (inform), then the targets at
    // the shortest timeout and the most retries accepted.
    let o = set(&cells(
        PARAMS,
        "amp",
        &[
            (2, "i", "1"),
            (3, "i", "2"),
            (4, "s", "public"),
            (5, "i", "1"),
            (7, "i", "4"),
        ],
    ));
    assert!(!o.contains("Error"), "{o}");
    let notify = ".1.3.6.1.6.3.13.1.1.1";
    let o = set(&cells(
        notify,
        "amp",
        &[(2, "s", "amp"), (3, "i", "2"), (5, "i", "4")],
    ));
    assert!(!o.contains("Error"), "{o}");
    // Near the 1,000 rows a table holds (the configured sink has one).
    const TARGETS: usize = 990;
    // 7 varbinds a row, snmpset sends at most 128.
    for batch in 0..TARGETS.div_ceil(18) {
        let mut varbinds = Vec::new();
        for i in batch * 18..((batch + 1) * 18).min(TARGETS) {
            let name = format!("amp{i}");
            varbinds.extend(target_row(&name, port, "amp"));
            varbinds.extend(cells(
                ADDR,
                &name,
                &[(4, "i", "100"), (5, "i", "10"), (6, "s", "amp")],
            ));
        }
        let o = set(&varbinds);
        assert!(
            !o.contains("Error") && o.contains("status exit status: 0"),
            "batch {batch}: {o}"
        );
    }
    // One datagram with a bad community.
    let o = agent.tool(
        "snmpget",
        &["-v2c", "-c", "guess", "-t", "1", "-r", "0"],
        &[".1.3.6.1.2.1.1.3.0"],
    );
    assert!(!o.status.success());
    // Count until the agent has been quiet for longer than an inform
    // timeout (1 s): the retries are over.
    receiver
        .set_read_timeout(Some(std::time::Duration::from_secs(3)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let mut received = 0usize;
    while receiver.recv_from(&mut buf).is_ok() {
        received += 1;
        assert!(
            received <= 64,
            "more than 64 datagrams for one notification"
        );
    }
    eprintln!("{TARGETS} inform targets, one bad datagram: {received} datagrams received");
    assert!(received > 0, "nothing sent:\n{}", agent.log_text());
    assert!(
        agent
            .log_text()
            .contains("datagram or outstanding-inform cap"),
        "{}",
        agent.log_text()
    );
}

/// Item 3: one unreadable row in the VACM part of state.json. The agent
/// does not start (it would lose an exclusion added over SNMP and let a
/// read-only community read what it excluded), says which file and part,
/// and leaves the file as it was. An unreadable part elsewhere (targets)
/// starts, keeps that part as the file has it through unrelated Sets,
/// and refuses Sets of it.
#[test]
fn a_corrupt_security_part_never_widens_access() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = agent_with(dir.path(), "");
    // An exclusion added over SNMP: the public community's view loses
    // sysName (a family excluded from ibsnmpd:all).
    let o = run(
        &agent,
        "snmpvacm",
        &admin(),
        &["createView", "-Ce", "ibsnmpd:all", ".1.3.6.1.2.1.1.5", "ff"],
    );
    assert!(!o.contains("Error"), "{o}");
    let sys_name = ".1.3.6.1.2.1.1.5.0";
    let o = run(&agent, "snmpget", RW_V2C, &[sys_name]);
    assert!(o.contains("No Such Object"), "excluded: {o}");
    // A target row, for the second half.
    let row = target_row("kept", 9, "kept");
    let v: Vec<&str> = row.iter().map(String::as_str).collect();
    let o = run(&agent, "snmpset", &admin(), &v);
    assert!(!o.contains("Error"), "{o}");
    agent.kill9();

    let path = dir.path().join("state.json");
    let good = std::fs::read_to_string(&path).unwrap();
    let mut state: serde_json::Value = serde_json::from_str(&good).unwrap();
    let vacm = &mut state["modules"]["SNMP-VIEW-BASED-ACM-MIB"]["views"][0];
    vacm["included"] = serde_json::json!("sideways");
    let conf = dir.path().join("ibsnmpd.toml");
    // A wrong-typed value, then the field missing (read as included, the
    // exclusion would become an inclusion): the agent refuses both and
    // leaves the file as it is.
    let mut missing = state.clone();
    if let Some(row) = missing["modules"]["SNMP-VIEW-BASED-ACM-MIB"]["views"][0].as_object_mut() {
        row.remove("included");
    }
    for bad in [&missing, &state] {
        let corrupt = serde_json::to_string_pretty(bad).unwrap();
        std::fs::write(&path, &corrupt).unwrap();
        // Under `timeout`: an agent that wrongly starts must not hang the test.
        let o = std::process::Command::new("timeout")
            .args(["30", common::BIN, "--config", conf.to_str().unwrap()])
            .args([
                "--listen",
                &format!("127.0.0.1:{}", common::free_port("127.0.0.1")),
            ])
            .arg("--state-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = text(&o);
        assert!(
            !o.status.success(),
            "started with a corrupt VACM part: {err}"
        );
        assert!(
            err.contains("state.json") && err.contains("SNMP-VIEW-BASED-ACM-MIB"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), corrupt);
    }

    // The VACM part repaired, the targets part corrupt: the agent starts,
    // the exclusion holds, unrelated Sets keep the targets part, its own
    // Sets fail and change nothing.
    let mut state: serde_json::Value = serde_json::from_str(&good).unwrap();
    state["modules"]["SNMP-TARGET-MIB"]["addrs"][0]["timeout"] = serde_json::json!("soon");
    let targets_part = state["modules"]["SNMP-TARGET-MIB"].clone();
    std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    agent.restart();
    let o = run(&agent, "snmpget", RW_V2C, &[sys_name]);
    assert!(o.contains("No Such Object"), "the exclusion holds: {o}");
    agent.ok(
        "snmpset",
        "2c",
        "private",
        &[],
        &[".1.3.6.1.2.1.1.4.0", "s", "ops"],
    );
    let row = target_row("new", 9, "kept");
    let v: Vec<&str> = row.iter().map(String::as_str).collect();
    let o = run(&agent, "snmpset", &admin(), &v);
    assert!(o.contains("commitFailed"), "{o}");
    let o = run(
        &agent,
        "snmpget",
        &admin(),
        &[&format!("{ADDR}.9{}", implied("new"))],
    );
    assert!(o.contains("No Such Instance"), "{o}");
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(after["modules"]["SNMP-TARGET-MIB"], targets_part);
    assert!(after["modules"]["SNMP-VIEW-BASED-ACM-MIB"]["views"][0].is_object());
    assert_eq!(after["modules"]["SNMPv2-MIB"]["sysContact"], "ops");
}
