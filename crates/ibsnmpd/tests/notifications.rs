//! Notifications with the real binary on the simulated fabric and net-snmp's
//! snmptrapd as the receiver: coldStart at start, authenticationFailure only
//! while snmpEnableAuthenTraps is enabled(1), `ibsnmpd ctl link-flap` giving
//! IB-SM-MIB out-of-service/in-service and switch link state notifications
//! (and IF-MIB linkDown/linkUp for the agent's own port) with the same
//! content as SNMPv1 trap, SNMPv2c trap and inform; informs to a silent sink
//! retried, dropped and counted, then delivered once the sink is back; and a
//! flap storm held to the configured rate with the suppressed ones counted.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{ctl, Agent};
use trapd::{count, named, Trap, Trapd};

/// snmpEnableAuthenTraps.0.
const SNMP_ENABLE_AUTHEN_TRAPS: &str = ".1.3.6.1.2.1.11.30.0";
/// node01 (the local node of the default sim fabric).
const NODE01: &str = "0:0:0:0:0:10:0:0";
const WAIT: Duration = Duration::from_secs(15);

struct Setup {
    agent: Agent,
    socket: PathBuf,
    dir: tempfile::TempDir,
}

/// The agent with `config` as its config file, a control socket and a
/// one-second sweep.
fn agent(config: &str, extra: &[&str]) -> Setup {
    agent_sweeping(config, extra, "1")
}

fn agent_sweeping(config: &str, extra: &[&str], sweep: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let (agent, socket) = common::agent_with_socket_sweeping(dir.path(), config, sweep, extra);
    Setup { agent, socket, dir }
}

fn bad_community_get(agent: &Agent) {
    let _ = agent.tool(
        "snmpget",
        &["-v2c", "-c", "not-a-community", "-t", "0.3", "-r", "0"],
        &[".1.3.6.1.2.1.1.3.0"],
    );
}

fn set_auth_traps(agent: &Agent, v: &str) {
    agent.ok(
        "snmpset",
        "2c",
        "private",
        &[],
        &[SNMP_ENABLE_AUTHEN_TRAPS, "i", v],
    );
}

#[test]
fn cold_start_and_authentication_failure_only_when_enabled() {
    let trapd = Trapd::start();
    let s = agent("", &["--trap2sink", &trapd.addr()]);
    let t = trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    assert_eq!(t[0].pdu, "TRAP2");
    assert!(t[0].objects.is_empty(), "{:?}", t[0]);

    // snmpEnableAuthenTraps is disabled(2) by default: a bad community
    // gives nothing.
    bad_community_get(&s.agent);
    trapd.assert_count_after(Duration::from_secs(2), "authenticationFailure", 0);

    set_auth_traps(&s.agent, "1");
    bad_community_get(&s.agent);
    trapd.wait(WAIT, "authenticationFailure", |t| {
        count(t, "authenticationFailure") == 1
    });

    set_auth_traps(&s.agent, "2");
    bad_community_get(&s.agent);
    trapd.assert_count_after(Duration::from_secs(2), "authenticationFailure", 1);
    drop(s);
}

#[test]
fn authtrapenable_in_the_config_file() {
    let trapd = Trapd::start();
    let s = agent(
        &format!("authtrapenable = 1\ntrap2sink = [\"{}\"]\n", trapd.addr()),
        &[],
    );
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    bad_community_get(&s.agent);
    trapd.wait(WAIT, "authenticationFailure", |t| {
        count(t, "authenticationFailure") == 1
    });
}

/// The notifications of one form, by name, in arrival order.
fn of_pdu<'a>(t: &'a [Trap], pdu: &str) -> Vec<&'a Trap> {
    t.iter().filter(|x| x.pdu == pdu).collect()
}

#[test]
fn link_flap_in_v1_v2c_and_inform_form_with_the_same_content() {
    let trapd = Trapd::start();
    let a = trapd.addr();
    let s = agent(
        &format!(
            "trapsink = [\"{a}\"]\ntrap2sink = [\"{a}\"]\ninformsink = [{{ host = \"127.0.0.1\", port = {} }}]\n",
            trapd.port
        ),
        &[],
    );
    trapd.wait(WAIT, "coldStart x3", |t| count(t, "coldStart") == 3);

    // The agent's own port: node01 port 1.
    let started = Instant::now();
    ctl(&s.socket, &["link-flap", "node01", "1", "0.5"]);
    let t = trapd.wait(WAIT, "in service again", |t| {
        count(t, "ibSmTrapInService") == 3
            && count(t, "linkUp") == 3
            && count(t, "ibSmTrapSwitchLinkStateChanged") == 6
    });
    let out = named(&t, "ibSmTrapOutOfService");
    let latency = out.iter().filter_map(|x| x.seen).min().unwrap() - started;
    eprintln!(
        "link-flap -> ibSmTrapOutOfService arrival: {latency:?} (upper bound, 10 ms polling)"
    );
    for pdu in ["TRAP", "TRAP2", "INFORM"] {
        let names: Vec<&str> = of_pdu(&t, pdu).iter().map(|x| x.name.as_str()).collect();
        for want in [
            "SNMPv2-MIB::coldStart",
            "IF-MIB::linkDown",
            "IB-SM-MIB::ibSmTrapOutOfService",
            "IB-SM-MIB::ibSmTrapSwitchLinkStateChanged",
            "IF-MIB::linkUp",
            "IB-SM-MIB::ibSmTrapInService",
        ] {
            assert!(names.contains(&want), "{pdu}: no {want} in {names:?}");
        }
        assert_eq!(
            count(
                &of_pdu(&t, pdu).into_iter().cloned().collect::<Vec<_>>(),
                "SwitchLinkStateChanged"
            ),
            2
        );
    }
    // Same content in all three forms (RFC 3584 translation both ways).
    let v1: Vec<(String, Vec<String>)> = of_pdu(&t, "TRAP")
        .iter()
        .map(|x| (x.name.clone(), x.objects.clone()))
        .collect();
    for pdu in ["TRAP2", "INFORM"] {
        let v: Vec<(String, Vec<String>)> = of_pdu(&t, pdu)
            .iter()
            .map(|x| (x.name.clone(), x.objects.clone()))
            .collect();
        assert_eq!(v1, v, "{pdu} differs from SNMPv1");
    }
    assert!(of_pdu(&t, "TRAP")
        .iter()
        .all(|x| x.agent_addr == "127.0.0.1"));
    let o = out[0];
    assert_eq!(
        o.object("IB-SM-MIB::ibSmTrapNodeGUID1.0"),
        Some(&*format!("STRING: {NODE01}"))
    );
    assert_eq!(
        o.object("IB-SM-MIB::ibSmTrapPortNum1.0"),
        Some("Gauge32: 1")
    );
    assert_eq!(
        o.object("IB-SM-MIB::ibSmTrapType.0"),
        Some("INTEGER: subnetMgmt(3)")
    );
    assert_eq!(
        o.object("IB-SM-MIB::ibSmTrapProducerType.0"),
        Some("INTEGER: subnetMgmt(4)")
    );
    let down = named(&t, "linkDown")[0];
    assert_eq!(
        down.objects,
        vec![
            "IF-MIB::ifIndex.1 = INTEGER: 1",
            "IF-MIB::ifAdminStatus.1 = INTEGER: up(1)",
            "IF-MIB::ifOperStatus.1 = INTEGER: down(2)",
            // Appended (RFC 2863 allows it): which node and port.
            "IF-MIB::ifName.1 = STRING: mlx5_0/1",
            "IF-MIB::ifDescr.1 = STRING: mlx5_0 port 1",
            &format!("IB-SM-MIB::ibSmTrapNodeGUID1.0 = STRING: {NODE01}"),
        ]
    );
    let sw = named(&t, "ibSmTrapSwitchLinkStateChanged")[0];
    assert_eq!(
        sw.object("IB-SM-MIB::ibSmTrapType.0"),
        Some("INTEGER: urgent(1)")
    );
    assert_eq!(
        sw.object("IB-SM-MIB::ibSmTrapProducerType.0"),
        Some("INTEGER: switch(2)")
    );

    // Another node's port: service notifications, no IF-MIB ones.
    let before = t.len();
    ctl(&s.socket, &["link-flap", "node02", "1", "0.3"]);
    let t = trapd.wait(WAIT, "node02 back", |t| {
        count(t, "ibSmTrapInService") == 6 && count(t, "ibSmTrapSwitchLinkStateChanged") == 12
    });
    let new = &t[before..];
    assert_eq!(count(new, "ibSmTrapOutOfService"), 3);
    assert_eq!(count(new, "linkDown") + count(new, "linkUp"), 0, "{new:#?}");
    assert!(
        named(new, "ibSmTrapOutOfService")
            .iter()
            .all(|x| x.object("IB-SM-MIB::ibSmTrapNodeGUID1.0")
                != Some(&*format!("STRING: {NODE01}")))
    );

    // ifLinkUpDownTrapEnable.1 = disabled(2): no linkDown/linkUp for it.
    s.agent.ok(
        "snmpset",
        "2c",
        "private",
        &[],
        &[".1.3.6.1.2.1.31.1.1.1.14.1", "i", "2"],
    );
    let before = t.len();
    ctl(&s.socket, &["link-flap", "node01", "1", "0.3"]);
    let t = trapd.wait(WAIT, "node01 back", |t| count(t, "ibSmTrapInService") == 9);
    assert_eq!(
        count(&t[before..], "linkDown") + count(&t[before..], "linkUp"),
        0
    );
}

#[test]
fn informs_to_a_silent_sink_are_retried_dropped_counted_then_delivered() {
    let port = common::free_port("127.0.0.1");
    let s = agent(
        &format!(
            "informsink = [{{ host = \"127.0.0.1\", port = {port}, timeout = 0.2, retries = 2 }}]\n"
        ),
        &[],
    );
    // coldStart goes to nobody: sent, retried twice, dropped.
    let deadline = Instant::now() + WAIT;
    while !s.agent.log_text().contains("total_dropped=1") {
        assert!(Instant::now() < deadline, "{}", s.agent.log_text());
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = s.agent.log_text();
    assert_eq!(log.matches("inform retry").count(), 2, "{log}");
    // The sink comes back: the next ones arrive and are acknowledged.
    let trapd = Trapd::start_on(port);
    ctl(&s.socket, &["link-flap", "node02", "1", "0.3"]);
    let t = trapd.wait(WAIT, "in service", |t| {
        count(t, "ibSmTrapInService") == 1 && count(t, "ibSmTrapSwitchLinkStateChanged") == 2
    });
    // snmptrapd answers each inform before printing it.
    assert!(t.iter().all(|x| x.pdu == "INFORM"));
    assert_eq!(count(&t, "coldStart"), 0, "the dropped one is not resent");
    let mut agent = s.agent;
    agent.terminate();
    let totals = totals_line(&agent.log_text());
    let totals = totals.as_str();
    assert!(totals.contains("informs_dropped=1"), "{totals}");
    assert!(totals.contains("informs_acked=4"), "{totals}");
    drop(s.dir);
}

/// The log's "notification totals" line (said when the agent stops).
fn totals_line(log: &str) -> String {
    log.lines()
        .find(|l| l.contains("notification totals"))
        .unwrap_or_else(|| panic!("no notification totals in {log}"))
        .to_string()
}

fn total(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

/// 100 flaps within a minute: per source object (node01 port 1: in/out of
/// service and linkUp/linkDown; the leaf switch port: link state) at most
/// the configured 4 notifications per minute; everything else suppressed
/// and counted.
#[test]
fn flap_storm_stays_within_the_rate() {
    let (trapd, s) = storm_setup(4, 120);
    let started = Instant::now();
    const FLAPS: u64 = 100;
    flap_until_up(&s, FLAPS as usize);
    let took = started.elapsed();
    eprintln!("{FLAPS} flaps in {took:?}");
    assert!(took < Duration::from_secs(60), "flaps took {took:?}");
    std::thread::sleep(Duration::from_secs(1));
    let status = ctl(&s.socket, &["status"]);
    let mut agent = s.agent;
    agent.terminate();
    let log = agent.log_text();
    // A source quiet for 1.5 sweeps gets its held-back state at once
    // (a_storm_sends_the_final_state_once_the_source_is_quiet): on a busy
    // machine the gap between two flaps can be that long. Those settled
    // states are the only sends beyond the limit, each one logged.
    let settled = log
        .matches("notification source quiet: sending the state held back")
        .count() as u64;
    let t = trapd.traps();
    // node01:1 gets 4 of its 400, the switch port 4 of its 200.
    assert_eq!(
        t.len() as u64,
        1 + 8 + settled,
        "{status}\n{}",
        trapd.text()
    );
    assert!(
        settled <= 6 * FLAPS / 2,
        "{settled} settled states for {FLAPS} flaps"
    );
    let totals = totals_line(&log);
    let totals = totals.as_str();
    // Per flap: out of service, in service, linkDown, linkUp, and the
    // switch port's two link state changes.
    assert_eq!(total(totals, "queued"), 1 + 6 * FLAPS, "{totals}\n{status}");
    assert_eq!(total(totals, "traps_sent"), 9 + settled, "{totals}");
    // A settled state was suppressed first, then sent.
    let handled = total(totals, "suppressed") + total(totals, "traps_sent");
    assert!(
        (1 + 6 * FLAPS..=1 + 6 * FLAPS + settled).contains(&handled),
        "{totals}"
    );
    assert!(log.contains("notification storm"), "storm not logged");
    drop(s.dir);
}

/// A flap burst that ends with the link up: the notifications held back
/// are followed, when the storm window ends, by the current state, so the
/// manager's last word on the port is linkUp and ibSmTrapInService (with a
/// limit of 2 it received only the first flap's going down).
#[test]
fn a_storm_ends_with_the_current_state() {
    let (trapd, s) = storm_setup(2, 4);
    flap_until_up(&s, 6);
    let t = trapd.wait(Duration::from_secs(30), "the final state", |t| {
        final_state_up(t) && count(t, "linkDown") > 0
    });
    // Within the window it got the first ones, states held back once the
    // port was quiet for a sweep (a_storm_sends_the_final_state_once_the_
    // source_is_quiet), then the window's end.
    assert!(
        count(&t, "linkUp") + count(&t, "linkDown") < 12,
        "{}",
        trapd.text()
    );
    let log = s.agent.log_text();
    assert!(log.contains("sending the state held back"), "{log}");
    let deadline = Instant::now() + WAIT;
    while !s.agent.log_text().contains("notification storm over") {
        assert!(Instant::now() < deadline, "{}", s.agent.log_text());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `flaps` short flaps of node01 port 1, each waited out until ifOperStatus
/// says up again (the source brought it back and swept).
fn flap_until_up(s: &Setup, flaps: usize) {
    for _ in 0..flaps {
        ctl(&s.socket, &["link-flap", "node01", "1", "0.05"]);
        let deadline = Instant::now() + Duration::from_secs(5);
        while s
            .agent
            .ok(
                "snmpget",
                "2c",
                "public",
                &["-Oqv", "-Oe"],
                &[".1.3.6.1.2.1.2.2.1.8.1"],
            )
            .trim()
            != "1"
        {
            assert!(Instant::now() < deadline, "port did not come back");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// snmptrapd, and the agent sweeping every 0.2 s with a storm limit of
/// `limit` per `interval` seconds, once coldStart arrived.
fn storm_setup(limit: u32, interval: u32) -> (Trapd, Setup) {
    let trapd = Trapd::start();
    let s = agent_sweeping(
        &format!(
            "trap2sink = [\"{}\"]\nnotification_rate_limit = {limit}\nnotification_rate_interval = {interval}\n",
            trapd.addr()
        ),
        &[],
        "0.2",
    );
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    (trapd, s)
}

/// The manager's last word on the port is linkUp and ibSmTrapInService.
fn final_state_up(t: &[Trap]) -> bool {
    last(t, &["linkUp", "linkDown"]).is_some_and(|n| n.ends_with("linkUp"))
        && last(t, &["ibSmTrapInService", "ibSmTrapOutOfService"])
            .is_some_and(|n| n.ends_with("ibSmTrapInService"))
}

/// The name of the last trap among `names` received.
fn last(t: &[Trap], names: &[&str]) -> Option<String> {
    t.iter()
        .rev()
        .find(|x| names.iter().any(|n| x.name.ends_with(n)))
        .map(|x| x.name.clone())
}

/// A burst of flaps ending up with an hour-long storm interval: the
/// manager gets the final linkUp and ibSmTrapInService once the port has
/// been quiet for a sweep, not at the interval's end (the test would wait
/// an hour). In order: the burst's first notifications, then the final
/// state, nothing in between.
#[test]
fn a_storm_sends_the_final_state_once_the_source_is_quiet() {
    let (trapd, s) = storm_setup(2, 3600);
    flap_until_up(&s, 20);
    let t = trapd.wait(WAIT, "the final state", |t| {
        final_state_up(t) && count(t, "linkDown") > 0
    });
    // The storm held most back: 20 flaps are 80 notifications of the port.
    let of_port = |x: &&Trap| {
        [
            "linkUp",
            "linkDown",
            "ibSmTrapInService",
            "ibSmTrapOutOfService",
        ]
        .iter()
        .any(|n| x.name.ends_with(n))
    };
    assert!(t.iter().filter(of_port).count() < 40, "{}", trapd.text());
    let log = s.agent.log_text();
    assert!(
        log.contains("notification source quiet: sending the state held back"),
        "{log}"
    );
    assert!(
        !log.contains("notification storm over"),
        "the interval is an hour: {log}"
    );
}

/// The originator's counters reach /metrics.
#[test]
fn notifications_are_counted_in_the_metrics() {
    let trapd = Trapd::start();
    let port = common::free_port("127.0.0.1");
    let metrics = format!("127.0.0.1:{port}");
    let s = agent(
        &format!("trap2sink = [\"{}\"]\n", trapd.addr()),
        &["--metrics", &metrics],
    );
    trapd.wait(WAIT, "coldStart", |t| count(t, "coldStart") == 1);
    ctl(&s.socket, &["link-flap", "node02", "1", "0.3"]);
    trapd.wait(WAIT, "in service again", |t| {
        count(t, "ibSmTrapInService") == 1
    });
    let out = Command::new("curl")
        .args(["-sf", &format!("http://{metrics}/metrics")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let sent: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("ibsnmpd_notifications_sent_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sent counter in {text}"));
    // coldStart, out of service, two switch link changes, in service, ...
    assert!(sent >= 3, "{sent}");
    assert!(
        text.contains("ibsnmpd_notifications_dropped_total 0"),
        "{text}"
    );
}

/// `[[trapsess]]`: SNMPv3 traps as a USM user at authPriv, this agent's
/// engine authoritative; snmptrapd knows the user under our engine ID
/// (`createUser -e`), as with snmpd's `trapsess -v3`.
#[test]
fn v3_trapsess_delivers_auth_priv_traps() {
    let engine = "8000000005aabbccdd";
    let trapd = Trapd::start_v3(engine);
    let config = format!(
        "engine_id = \"{engine}\"\n\
         [[user]]\nname = \"trapops\"\nauth = \"SHA-256\"\nauth_pass = \"authpass-1\"\n\
         priv = \"AES\"\npriv_pass = \"privpass-1\"\n\
         [[trapsess]]\nhost = \"{}\"\nuser = \"trapops\"\nlevel = \"priv\"\n",
        trapd.addr()
    );
    let s = agent(&config, &[]);
    let t = trapd.wait(WAIT, "coldStart over SNMPv3", |t| {
        count(t, "coldStart") == 1
    });
    assert_eq!(t[0].pdu, "TRAP2", "{}", trapd.text());
    // snmptrapd names the USM user it authenticated and decrypted with.
    assert!(trapd.text().contains("trapops"), "{}", trapd.text());
    drop(s);
}

/// An SNMPv3 inform receiver that is down when the agent starts, then one
/// that restarts with a new engine ID: each is discovered again when
/// informs to it go unanswered (or it answers with a Report), the user's
/// keys localized to its engine, and the informs still due arrive.
#[test]
fn v3_inform_receivers_down_at_start_or_restarted_are_discovered_again() {
    let port = common::free_port("127.0.0.1");
    let users = "createUser trapops SHA-256 authpass-1 AES privpass-1\n";
    let config = format!(
        "[[user]]\nname = \"trapops\"\nauth = \"SHA-256\"\nauth_pass = \"authpass-1\"\n\
         priv = \"AES\"\npriv_pass = \"privpass-1\"\n\
         [[trapsess]]\nhost = \"127.0.0.1:{port}\"\nuser = \"trapops\"\nlevel = \"priv\"\n\
         inform = true\ntimeout = 0.3\nretries = 10\n"
    );
    let mut s = agent(&config, &[]);
    let deadline = Instant::now() + WAIT;
    while !s
        .agent
        .log_text()
        .contains("SNMPv3 inform receiver not discovered")
    {
        assert!(Instant::now() < deadline, "{}", s.agent.log_text());
        std::thread::sleep(Duration::from_millis(50));
    }
    // The receiver comes up: the next notification's inform is held until
    // a retry finds it.
    let trapd = Trapd::start_with(port, users);
    ctl(&s.socket, &["link-flap", "node02", "1", "0.3"]);
    let t = trapd.wait(WAIT, "an inform after the late discovery", |t| {
        count(t, "ibSmTrapInService") >= 1
    });
    assert!(t.iter().all(|t| t.pdu == "INFORM"), "{}", trapd.text());
    drop(trapd);
    // It restarts with a new engine ID (a fresh persistent directory).
    let trapd = Trapd::start_with(port, users);
    ctl(&s.socket, &["link-flap", "node03", "1", "0.3"]);
    trapd.wait(WAIT, "an inform after the restart", |t| {
        count(t, "ibSmTrapInService") >= 1
    });
    let log = s.agent.log_text();
    assert!(
        log.matches("SNMPv3 inform receiver discovered").count() >= 2,
        "{log}"
    );
    s.agent.terminate();
    drop(s.dir);
}

/// `[[trapsess]]` with `inform = true` (snmpd's `trapsess -v3 -Ci`): the
/// receiver is authoritative, so the agent discovers snmptrapd's engine
/// ID, boots and time first and localizes the user's keys to it;
/// snmptrapd knows the user under its own engine (plain `createUser`),
/// decrypts the authPriv InformRequests and acknowledges them with
/// authenticated Responses the agent counts as acknowledged.
#[test]
fn v3_trapsess_informs_discover_the_receiver_and_are_acknowledged() {
    let trapd = Trapd::start_with(
        common::free_port("127.0.0.1"),
        "createUser trapops SHA-512 authpass-1 AES256 privpass-1\n",
    );
    let config = format!(
        "[[user]]\nname = \"trapops\"\nauth = \"SHA-512\"\nauth_pass = \"authpass-1\"\n\
         priv = \"AES256\"\npriv_pass = \"privpass-1\"\n\
         [[trapsess]]\nhost = \"{}\"\nuser = \"trapops\"\nlevel = \"priv\"\ninform = true\n\
         timeout = 0.5\nretries = 2\n",
        trapd.addr()
    );
    let s = agent(&config, &[]);
    let t = trapd.wait(WAIT, "coldStart inform over SNMPv3", |t| {
        count(t, "coldStart") == 1
    });
    assert_eq!(t[0].pdu, "INFORM", "{}", trapd.text());
    ctl(&s.socket, &["link-flap", "node02", "1", "0.3"]);
    trapd.wait(WAIT, "in service", |t| count(t, "ibSmTrapInService") == 1);
    let mut agent = s.agent;
    assert!(
        agent
            .log_text()
            .contains("SNMPv3 inform receiver discovered"),
        "{}",
        agent.log_text()
    );
    agent.terminate();
    let log = agent.log_text();
    let totals = totals_line(&log);
    let totals = totals.as_str();
    assert_eq!(total(totals, "informs_dropped"), 0, "{totals}");
    assert!(total(totals, "informs_acked") >= 2, "{totals}");
    assert_eq!(
        log.matches("inform retry").count(),
        0,
        "every inform acknowledged at once: {log}"
    );
    drop(s.dir);
}
