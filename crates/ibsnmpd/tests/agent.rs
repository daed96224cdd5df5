//! The real `ibsnmpd` binary driven by net-snmp's command-line tools.

mod common;

use std::net::UdpSocket;
use std::process::Command;
use std::time::Duration;

use common::{assert_increasing, free_port, parse_lines, snmp, text, Agent, BIN};

const SYS_DESCR: &str = ".1.3.6.1.2.1.1.1.0";
const SYS_OBJECT_ID: &str = ".1.3.6.1.2.1.1.2.0";
const SYS_UPTIME: &str = ".1.3.6.1.2.1.1.3.0";
const SYS_CONTACT: &str = ".1.3.6.1.2.1.1.4.0";
const SYS_NAME: &str = ".1.3.6.1.2.1.1.5.0";
const SYS_LOCATION: &str = ".1.3.6.1.2.1.1.6.0";
const SYS_OR_TABLE: &str = ".1.3.6.1.2.1.1.9";
const SNMP_IN_PKTS: &str = ".1.3.6.1.2.1.11.1.0";
const SNMP_IN_BAD_COMMUNITY_NAMES: &str = ".1.3.6.1.2.1.11.4.0";
const SNMP_IN_BAD_COMMUNITY_USES: &str = ".1.3.6.1.2.1.11.5.0";
const SNMP_IN_ASN_PARSE_ERRS: &str = ".1.3.6.1.2.1.11.6.0";
const SNMP_ENABLE_AUTHEN_TRAPS: &str = ".1.3.6.1.2.1.11.30.0";

fn set(
    agent: &Agent,
    version: &str,
    community: &str,
    oid: &str,
    ty: &str,
    val: &str,
) -> std::process::Output {
    agent.tool(
        "snmpset",
        &["-v", version, "-c", community, "-On", "-t", "2", "-r", "0"],
        &[oid, ty, val],
    )
}

/// The agent started with only `args`, a free loopback port and a state
/// directory (none of the harness's communities): the child and its target.
fn spawn_bare(args: &[&str], state_dir: &std::path::Path) -> (std::process::Child, String) {
    let target = format!("127.0.0.1:{}", free_port("127.0.0.1"));
    let child = Command::new(BIN)
        .args(args)
        .args(["--listen", &target])
        .arg("--state-dir")
        .arg(state_dir)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    (child, target)
}

#[test]
fn system_group_answers() {
    let agent = Agent::start(&[]);
    let out = agent.get(&[SYS_DESCR, SYS_OBJECT_ID, SYS_UPTIME, SYS_NAME]);
    let rows = parse_lines(&out);
    assert_eq!(rows.len(), 4, "{out}");
    assert!(rows[0].1.starts_with("STRING: \"ibsnmpd"), "{out}");
    assert!(rows[1].1.starts_with("OID: .1.3.6.1."), "{out}");
    assert!(rows[2].1.starts_with("Timeticks:"), "{out}");
    let or = agent.ok("snmpwalk", "2c", "public", &[], &[SYS_OR_TABLE]);
    assert!(parse_lines(&or).len() >= 3, "sysORTable empty: {or}");
}

fn whole_walk(agent: &Agent, tool: &str, version: &str, extra: &[&str]) -> Vec<(Vec<u32>, String)> {
    // -Cc: let the tool go on when OIDs do not increase, so that *we* check.
    let mut args = vec!["-Cc"];
    args.extend_from_slice(extra);
    let out = agent.ok(tool, version, "public", &args, &[".1"]);
    let rows: Vec<_> = parse_lines(&out)
        .into_iter()
        .filter(|(_, v)| !v.starts_with("No more variables"))
        .collect();
    assert_increasing(&rows);
    rows
}

#[test]
fn whole_tree_walks_increase_in_v1_and_v2c() {
    let agent = Agent::start(&[]);
    let v2 = whole_walk(&agent, "snmpwalk", "2c", &[]);
    assert!(v2.len() > 20, "walk too short: {}", v2.len());
    assert!(v2.iter().any(|(o, _)| o == &[1, 3, 6, 1, 2, 1, 1, 1, 0]));
    let v1 = whole_walk(&agent, "snmpwalk", "1", &[]);
    assert!(v1.len() > 20);
    assert!(
        !v1.iter().any(|(_, v)| v.starts_with("Counter64")),
        "v1 walk must skip Counter64"
    );
    let bulk = whole_walk(&agent, "snmpbulkwalk", "2c", &["-Cr50"]);
    // The snapshot may move between walks (counters); the OIDs must not.
    let oids = |r: &[(Vec<u32>, String)]| r.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    let (a, b) = (oids(&v2), oids(&bulk));
    let static_part = |v: &[Vec<u32>]| {
        v.iter()
            .filter(|o| {
                o.starts_with(&[1, 3, 6, 1, 2, 1, 1]) || o.starts_with(&[1, 3, 6, 1, 2, 1, 11])
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(static_part(&a), static_part(&b));
}

#[test]
fn v2c_exceptions() {
    let agent = Agent::start(&[]);
    let out = agent.get(&[
        ".1.3.6.1.2.1.1.1.1",
        ".1.3.6.1.2.1.1.99.0",
        ".1.3.6.1.4.1.99999.1.0",
    ]);
    let rows = parse_lines(&out);
    assert_eq!(rows.len(), 3, "{out}");
    assert!(rows[0].1.contains("No Such Instance"), "{out}");
    assert!(rows[1].1.contains("No Such Object"), "{out}");
    assert!(rows[2].1.contains("No Such Object"), "{out}");
    let out = agent.ok("snmpgetnext", "2c", "public", &[], &[".1.4"]);
    assert!(
        out.contains("No more variables left in this MIB View"),
        "{out}"
    );
}

#[test]
fn v1_no_such_name() {
    let agent = Agent::start(&[]);
    let o = agent.tool(
        "snmpget",
        &["-v1", "-c", "public", "-On", "-t", "2", "-r", "0"],
        &[SYS_DESCR, ".1.3.6.1.2.1.1.1.1"],
    );
    let t = text(&o);
    assert!(t.contains("noSuchName"), "{t}");
    assert!(t.contains("Failed object: .1.3.6.1.2.1.1.1.1"), "{t}");
    let o = agent.tool(
        "snmpgetnext",
        &["-v1", "-c", "public", "-On", "-t", "2", "-r", "0"],
        &[".1.4"],
    );
    let t = text(&o);
    assert!(t.contains("noSuchName") || t.contains("End of MIB"), "{t}");
}

#[test]
fn bad_sets_are_refused_with_the_right_error() {
    let agent = Agent::start(&[]);
    let cases: &[(&str, &str, String, &str)] = &[
        (SYS_DESCR, "s", "x".into(), "notWritable"),
        (SYS_UPTIME, "t", "5".into(), "notWritable"),
        (SYS_CONTACT, "i", "5".into(), "wrongType"),
        (SYS_CONTACT, "s", "x".repeat(256), "wrongLength"),
        (SYS_CONTACT, "x", "41 01 42".into(), "wrongValue"),
        (SNMP_ENABLE_AUTHEN_TRAPS, "i", "3".into(), "wrongValue"),
        (".1.3.6.1.2.1.1.4.1", "s", "x".into(), "noCreation"),
    ];
    for (oid, ty, val, want) in cases {
        let o = set(&agent, "2c", "private", oid, ty, val);
        let t = text(&o);
        assert!(!o.status.success(), "{oid} {ty} accepted: {t}");
        assert!(t.contains(want), "{oid} {ty} {val:?}: want {want}: {t}");
    }
    // v1 maps per RFC 3584: notWritable -> noSuchName, wrongType -> badValue.
    let t = text(&set(&agent, "1", "private", SYS_DESCR, "s", "x"));
    assert!(t.contains("noSuchName"), "{t}");
    let t = text(&set(&agent, "1", "private", SYS_CONTACT, "i", "5"));
    assert!(t.contains("badValue"), "{t}");
    // Nothing changed.
    let out = agent.ok("snmpget", "2c", "public", &["-Oqv"], &[SYS_CONTACT]);
    assert!(!out.contains('x'), "{out}");
}

#[test]
fn good_sets_apply_in_v1_and_v2c() {
    let agent = Agent::start(&[]);
    let o = set(&agent, "2c", "private", SYS_NAME, "s", "node-a");
    assert!(o.status.success(), "{}", text(&o));
    let o = set(&agent, "1", "private", SYS_LOCATION, "s", "rack 7");
    assert!(o.status.success(), "{}", text(&o));
    let o = set(&agent, "2c", "private", SNMP_ENABLE_AUTHEN_TRAPS, "i", "1");
    assert!(o.status.success(), "{}", text(&o));
    let out = agent.ok(
        "snmpget",
        "2c",
        "public",
        &["-Oqv"],
        &[SYS_NAME, SYS_LOCATION, SNMP_ENABLE_AUTHEN_TRAPS],
    );
    let v: Vec<&str> = out.lines().collect();
    assert_eq!(v, ["\"node-a\"", "\"rack 7\"", "1"], "{out}");
}

#[test]
fn wrong_community_is_unanswered_and_counted() {
    let agent = Agent::start(&[]);
    let before = agent.get_number(SNMP_IN_BAD_COMMUNITY_NAMES);
    let o = agent.tool(
        "snmpget",
        &["-v2c", "-c", "wrong", "-On", "-t", "0.5", "-r", "0"],
        &[SYS_DESCR],
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("Timeout"), "{}", text(&o));
    let o = agent.tool(
        "snmpget",
        &["-v1", "-c", "wrong", "-On", "-t", "0.5", "-r", "0"],
        &[SYS_DESCR],
    );
    assert!(text(&o).contains("Timeout"), "{}", text(&o));
    let after = agent.get_number(SNMP_IN_BAD_COMMUNITY_NAMES);
    assert_eq!(after, before + 2);
}

#[test]
fn set_with_read_only_community_is_refused_and_counted() {
    let agent = Agent::start(&[]);
    let before = agent.get_number(SNMP_IN_BAD_COMMUNITY_USES);
    for v in ["2c", "1"] {
        let o = set(&agent, v, "public", SYS_CONTACT, "s", "intruder");
        assert!(!o.status.success(), "v{v} set accepted: {}", text(&o));
    }
    let after = agent.get_number(SNMP_IN_BAD_COMMUNITY_USES);
    assert_eq!(after, before + 2);
    let out = agent.ok("snmpget", "2c", "public", &["-Oqv"], &[SYS_CONTACT]);
    assert!(!out.contains("intruder"));
}

#[test]
fn no_write_access_without_rw_community() {
    let tmp = tempfile::tempdir().unwrap();
    // The harness passes --rw-community private; a later flag wins, so use
    // a config run instead: start plainly and try "private".
    let (mut child, target) = spawn_bare(&[], tmp.path());
    let mut answered = false;
    for _ in 0..100 {
        let o = snmp(
            "snmpget",
            &[
                "-v2c", "-c", "public", "-t", "0.3", "-r", "0", &target, SYS_UPTIME,
            ],
        );
        if o.status.success() {
            answered = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = snmp(
        "snmpset",
        &[
            "-v2c",
            "-c",
            "private",
            "-t",
            "0.5",
            "-r",
            "0",
            &target,
            SYS_CONTACT,
            "s",
            "x",
        ],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(answered, "agent did not answer");
    assert!(!o.status.success(), "{}", text(&o));
}

#[test]
fn set_survives_restart_and_kill9() {
    let tmp = tempfile::tempdir().unwrap();
    let mut agent = Agent::start_in(tmp.path(), &[]);
    let o = set(&agent, "2c", "private", SYS_CONTACT, "s", "ops@example.org");
    assert!(o.status.success(), "{}", text(&o));
    // Clean stop (SIGTERM) and start again.
    let st = agent.terminate();
    assert!(st.success(), "SIGTERM exit: {st}");
    agent.restart();
    let out = agent.ok("snmpget", "2c", "public", &["-Oqv"], &[SYS_CONTACT]);
    assert_eq!(out.trim(), "\"ops@example.org\"");
    // kill -9 right after the response: what was acknowledged is kept.
    for i in 0..3 {
        let val = format!("after-kill-{i}");
        let o = set(&agent, "2c", "private", SYS_CONTACT, "s", &val);
        assert!(o.status.success(), "{}", text(&o));
        agent.kill9();
        agent.restart();
        let out = agent.ok("snmpget", "2c", "public", &["-Oqv"], &[SYS_CONTACT]);
        assert_eq!(out.trim(), format!("\"{val}\""));
    }
}

#[test]
fn malformed_datagrams_are_dropped_and_counted() {
    let agent = Agent::start(&[]);
    let before = agent.get_number(SNMP_IN_ASN_PARSE_ERRS);
    let pkts_before = agent.get_number(SNMP_IN_PKTS);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let garbage: [&[u8]; 5] = [
        b"hello",
        &[0x30, 0x82, 0xff, 0xff, 0x02, 0x01],
        &[0x30, 0x03, 0x02, 0x01],
        &[0x30, 0x05, 0x02, 0x01, 0x01, 0x04, 0x10],
        &[0xff; 64],
    ];
    for g in garbage {
        sock.send_to(g, ("127.0.0.1", agent.port)).unwrap();
    }
    let mut buf = [0u8; 1500];
    assert!(sock.recv_from(&mut buf).is_err(), "garbage got an answer");
    let after = agent.get_number(SNMP_IN_ASN_PARSE_ERRS);
    assert_eq!(after, before + 5);
    assert!(agent.get_number(SNMP_IN_PKTS) > pkts_before);
}

#[test]
fn getbulk_is_capped_by_max_repetitions() {
    let agent = Agent::start(&["--max-repetitions", "5"]);
    let out = agent.ok(
        "snmpbulkget",
        "2c",
        "public",
        &["-Cn0", "-Cr1000"],
        &[".1.3.6.1.2.1.1"],
    );
    let rows = parse_lines(&out);
    assert_eq!(rows.len(), 5, "{out}");
    assert_increasing(&rows);
    // A walk still completes, just in more round trips.
    let rows = whole_walk(&agent, "snmpbulkwalk", "2c", &["-Cr1000"]);
    assert!(rows.len() > 20);
}

/// Sends one request built with the snmp crate and decodes the answer.
fn raw_request(agent: &Agent, pdu: snmp::pdu::Pdu) -> snmp::message::Message {
    use snmp::message::{Message, Version};
    let msg = Message {
        version: Version::V2c,
        community: b"public".to_vec(),
        pdu,
    };
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    sock.send_to(&msg.to_bytes(), ("127.0.0.1", agent.port))
        .unwrap();
    let mut buf = vec![0u8; 65536];
    let (n, _) = sock.recv_from(&mut buf).expect("no answer");
    Message::decode(&buf[..n]).expect("undecodable answer")
}

fn resp_len_ok(vbs: &[snmp::value::VarBind]) -> bool {
    vbs.iter().map(snmp::ber::varbind_len).sum::<usize>() <= 65507
}

#[test]
fn too_big_responses() {
    use snmp::pdu::{BulkBody, ErrorStatus, Pdu, PduBody};
    use snmp::value::{Value, VarBind};
    let agent = Agent::start(&[]);
    let descr: snmp::oid::Oid = SYS_DESCR.parse().unwrap();
    // 1200 x sysDescr.0 cannot fit in one UDP datagram (net-snmp's tools
    // send at most 128 varbinds, hence a hand-built request).
    let vbs: Vec<VarBind> = (0..1200)
        .map(|_| VarBind::new(descr.clone(), Value::Null))
        .collect();
    let resp = raw_request(&agent, Pdu::GetRequest(PduBody::request(7, vbs.clone())));
    match resp.pdu {
        Pdu::Response(b) => {
            assert_eq!(b.request_id, 7);
            assert_eq!(b.error_status, ErrorStatus::TooBig);
            assert!(b.varbinds.is_empty(), "v2 tooBig carries no varbinds");
        }
        other => panic!("not a response: {other:?}"),
    }
    // GetBulk is truncated to fit instead (RFC 3416 4.2.3): 600 repeaters
    // just before sysDescr.0, 100 repetitions.
    let system: snmp::oid::Oid = ".1.3.6.1.2.1.1.1".parse().unwrap();
    let reps: Vec<VarBind> = (0..600)
        .map(|_| VarBind::new(system.clone(), Value::Null))
        .collect();
    let resp = raw_request(
        &agent,
        Pdu::GetBulkRequest(BulkBody {
            request_id: 8,
            non_repeaters: 0,
            max_repetitions: 100,
            varbinds: reps,
        }),
    );
    match resp.pdu {
        Pdu::Response(b) => {
            assert_eq!(b.error_status, ErrorStatus::NoError);
            let n = b.varbinds.len();
            assert!((600..600 * 100).contains(&n), "{n}");
            assert!(resp_len_ok(&b.varbinds), "response larger than a datagram");
        }
        other => panic!("not a response: {other:?}"),
    }
    // net-snmp's own client sees the truncation as a shorter answer.
    let roots: Vec<&str> = std::iter::repeat_n(".1", 128).collect();
    let out = agent.ok("snmpbulkget", "2c", "public", &["-Cn0", "-Cr100"], &roots);
    let n = parse_lines(&out).len();
    assert!(n > 0 && n < 128 * 100, "bulk returned {n} varbinds");
}

#[test]
fn ipv6_listen() {
    common::require_tool("snmpget");
    let port = free_port("::1");
    let agent = Agent::start_listen(
        &format!("[::1]:{port}"),
        &format!("udp6:[::1]:{port}"),
        port,
        &[],
    );
    let out = agent.ok("snmpget", "2c", "public", &[], &[SYS_DESCR]);
    assert!(out.contains("ibsnmpd"), "{out}");
}

fn run_bad(args: &[&str]) -> String {
    let o = Command::new(BIN).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn bad_config_and_flags_exit_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "syscontact = \"ok\"\nagentaddress = 5\n").unwrap();
    let e = run_bad(&["--config", bad.to_str().unwrap()]);
    assert!(e.contains("bad.toml:2"), "{e}");
    std::fs::write(&bad, "nosuchkey = 1\n").unwrap();
    let e = run_bad(&["--config", bad.to_str().unwrap()]);
    assert!(e.contains("bad.toml:1") && e.contains("nosuchkey"), "{e}");
    std::fs::write(
        &bad,
        "[[rocommunity]]\ncommunity = \"x\"\nsource = \"300.1.1.1/8\"\n",
    )
    .unwrap();
    let e = run_bad(&["--config", bad.to_str().unwrap()]);
    assert!(e.contains("300.1.1.1"), "{e}");
    let e = run_bad(&[
        "--config",
        tmp.path().join("missing.toml").to_str().unwrap(),
    ]);
    assert!(e.contains("missing.toml"), "{e}");
    let e = run_bad(&["--listen", "nonsense"]);
    assert!(e.contains("nonsense"), "{e}");
    let e = run_bad(&["--sweep-interval", "soon"]);
    assert!(e.contains("soon"), "{e}");
    run_bad(&["--no-such-flag"]);
    run_bad(&["--log-level", "loud=verbose=x"]);
    run_bad(&["--source", "nosuchsource"]);
}

#[test]
fn config_file_communities_with_sources() {
    let (tmp, conf) = common::temp_file(
        "ibsnmpd.toml",
        r#"
syscontact = "from-config"
sysname = "cfg-name"

[[rocommunity]]
community = "loopro"
source = "127.0.0.0/8"

[[rocommunity]]
community = "farro"
source = "10.0.0.0/8"
"#,
    );
    let conf = conf.to_str().unwrap().to_string();
    // The harness probes with "public": keep it, from the flag... but flags
    // replace the file's rocommunity list, so probe via the file instead.
    let (mut child, target) = spawn_bare(&["--config", &conf], tmp.path());
    let get = |community: &str, timeout: &str| {
        snmp(
            "snmpget",
            &[
                "-v2c",
                "-c",
                community,
                "-t",
                timeout,
                "-r",
                "0",
                "-Oqv",
                &target,
                SYS_CONTACT,
                SYS_NAME,
            ],
        )
    };
    let mut ok = None;
    for _ in 0..100 {
        let o = get("loopro", "0.3");
        if o.status.success() {
            ok = Some(o);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let far = get("farro", "0.5");
    let public = get("public", "0.5");
    let _ = child.kill();
    let _ = child.wait();
    let ok = ok.expect("agent did not answer the configured community");
    assert_eq!(
        String::from_utf8_lossy(&ok.stdout)
            .lines()
            .collect::<Vec<_>>(),
        ["\"from-config\"", "\"cfg-name\""]
    );
    assert!(
        !far.status.success(),
        "community restricted to 10/8 answered"
    );
    assert!(
        !public.status.success(),
        "public answered though the file replaced it"
    );
}
