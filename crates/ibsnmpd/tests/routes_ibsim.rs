//! Routing truth on ibsim + OpenSM (issue 55, docs/routing.md): the
//! forwarding tables the agent reads equal `ibroute` for every switch;
//! every route `ibsnmpd routes check` calls good, `ibtracert` completes.
//! With OpenSM stopped (nothing reroutes) and a spine link pulled, the
//! check names the switches whose tables point at the dead ports, counts
//! the host pairs that cannot talk, and `ibtracert` fails for exactly the
//! routes it calls broken; once OpenSM runs again and reroutes, the
//! findings clear. The running agent checks every sweep's tables: the
//! same findings on /metrics, in its health report and as mteTriggerFired
//! `routes:KIND` notifications, cleared (mteTriggerFalling) after the
//! reroute.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{curl, text, UmadAgent};
use serde_json::Value as Json;
use trapd::{named, of_trigger, Trapd};

const WAIT: Duration = Duration::from_secs(120);

/// Two leaves, two spines (leaf ports 7 and 8), two hosts on each leaf:
/// spine1 port 2 and leaf2 port 7 are the link the test pulls.
fn net() -> String {
    ib_testbed::leaf_spine_net(2, 2, 2, 8)
}

/// `ibsnmpd ARGS --source umad` at h1: (exit code, stdout).
fn ibsnmpd(tb: &ib_testbed::Testbed, args: &[&str]) -> (i32, String) {
    let out = tb
        .command(common::BIN)
        .args(args)
        .args(["--source", "umad"])
        .env("SIM_HOST", "h1")
        .output()
        .expect("ibsnmpd");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.code().is_some(), "{}", text(&out));
    (out.status.code().unwrap_or(-1), stdout)
}

/// The routes check as JSON, and its exit code (balance out of the way:
/// this test is about routes).
fn check(tb: &ib_testbed::Testbed) -> (i32, Json) {
    let (code, out) = ibsnmpd(
        tb,
        &["routes", "check", "--format", "json", "--max-spread", "100"],
    );
    let json = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (code, json)
}

/// Every switch's LID and forwarding table, from the agent's dump.
fn tables(tb: &ib_testbed::Testbed) -> BTreeMap<String, (u16, Vec<u64>)> {
    let (code, out) = ibsnmpd(tb, &["dump", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let d: Json = serde_json::from_str(&out).unwrap();
    let lids = common::node_lids(tb);
    d["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["switch"].is_object())
        .map(|n| {
            let lft = n["switch"]["lft"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            let name = n["description"].as_str().unwrap().to_string();
            (lids[&name], lft, name)
        })
        .map(|(lid, lft, name)| (name, (lid, lft)))
        .collect()
}

/// `ibroute LID`: LID -> out port, as infiniband-diags reads the table.
fn ibroute(tb: &ib_testbed::Testbed, lid: u16) -> BTreeMap<u64, u64> {
    let out = common::diag(tb, "ibroute", &[&lid.to_string()]);
    out.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let lid = u64::from_str_radix(w.next()?.strip_prefix("0x")?, 16).ok()?;
            Some((lid, w.next()?.parse().ok()?))
        })
        .collect()
}

/// Whether `ibtracert FROM TO`, run from h1 as the agent is, follows the
/// route to its end. (ibtracert reaches the ports it queries by LID routes
/// from its own port: from the tools' default attach point, a switch the
/// dead link cuts off, it could reach nothing.)
fn traces(tb: &ib_testbed::Testbed, from: u16, to: u16) -> bool {
    tb.command("ibtracert")
        .args([from.to_string(), to.to_string()])
        .env("SIM_HOST", "h1")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The end LIDs: every CA port's and switch's LID the dump shows.
fn end_lids(tb: &ib_testbed::Testbed) -> Vec<u16> {
    common::node_lids(tb).into_values().collect()
}

#[test]
fn routes_equal_ibroute_and_ibtracert_and_a_dead_spine_link_is_found() {
    let mut tb = common::testbed(&net());
    let (code, json) = check(&tb);
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(json["check"]["good"], json["check"]["routes"], "{json:#}");

    // The tables are what ibroute reads.
    let t = tables(&tb);
    assert_eq!(t.len(), 4);
    for (name, (lid, lft)) in &t {
        for (dlid, port) in ibroute(&tb, *lid) {
            assert_eq!(lft.get(dlid as usize), Some(&port), "{name} LID {dlid}");
        }
    }
    // Every route the check calls good, ibtracert completes.
    let ends = end_lids(&tb);
    for (name, (lid, _)) in &t {
        for &d in &ends {
            assert!(traces(&tb, *lid, d), "{name} -> LID {d}");
        }
    }

    // No SM to reroute: a spine link that routes use goes.
    tb.stop_opensm();
    tb.console("Unlink \"spine1\"[2]").unwrap();
    let (code, json) = check(&tb);
    assert_eq!(code, 1, "findings: {json:#}");
    let c = &json["check"];
    assert!(c["unreachable_pairs"].as_u64().unwrap() > 0, "{json:#}");
    let holes: Vec<&Json> = c["broken"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "black_hole")
        .collect();
    assert!(!holes.is_empty(), "{json:#}");
    // The switches named hold entries to the dead ports: leaf2's port 7
    // and spine1's port 2 are the pulled link's ends.
    let names: Vec<(String, u64)> = holes
        .iter()
        .map(|b| {
            let n = &json["nodes"][b["switch"].to_string()]["name"];
            (n.as_str().unwrap().to_string(), b["port"].as_u64().unwrap())
        })
        .collect();
    assert!(
        names.contains(&("spine1".to_string(), 2)) || names.contains(&("leaf2".to_string(), 7)),
        "{names:?}"
    );
    // What the check calls unreachable from a leaf, ibtracert cannot
    // follow from it; what it does not, ibtracert can.
    // From h1's leaf, which the tools reach (the other leaf they cannot:
    // leaf1 lost its route to it).
    let lids = common::node_lids(&tb);
    let leaf2_side = [lids["leaf2"], lids["h3"], lids["h4"]];
    let leaf2_lost: Vec<u64> = c["unreachable"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| json["nodes"][u["switch"].to_string()]["name"] == "leaf2")
        .flat_map(|u| {
            u["lids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
        })
        .collect();
    assert!(!leaf2_lost.is_empty(), "{json:#}");
    for u in c["unreachable"].as_array().unwrap() {
        let name = json["nodes"][u["switch"].to_string()]["name"]
            .as_str()
            .unwrap();
        if name != "leaf1" {
            continue;
        }
        let from = lids[name];
        let lost: Vec<u64> = u["lids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        for &d in &ends {
            // ibtracert's queries need answers: from leaf2's side the
            // replies to h1 fall into the same hole when the check says
            // leaf2 cannot reach h1.
            let reply_lost = leaf2_side.contains(&d) && leaf2_lost.contains(&u64::from(lids["h1"]));
            let ok = traces(&tb, from, d);
            assert_eq!(
                ok,
                !lost.contains(&u64::from(d)) && !reply_lost,
                "{name} -> LID {d}: {lost:?}"
            );
        }
    }

    // OpenSM again: it reroutes around the dead link; the findings clear.
    tb.start_opensm().unwrap();
    common::wait_for(
        "OpenSM to reroute",
        std::time::Duration::from_secs(60),
        || {
            let (code, json) = check(&tb);
            (code == 0).then_some(json)
        },
    );
}

/// `infiniband_routes_unreachable`'s value, None while the family is absent.
fn unreachable_pairs(metrics: &str) -> Option<u64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("infiniband_routes_unreachable "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn the_running_agent_reports_notifies_and_clears_a_dead_spine_link() {
    let mut tb = common::testbed(&net());
    let dir = tempfile::tempdir().unwrap();
    let trapd = Trapd::start();
    let conf = dir.path().join("ibsnmpd.toml");
    // Balance out of the way: this test is about routes.
    std::fs::write(
        &conf,
        format!(
            "trap2sink = [\"{}\"]\n[routes]\nmax_spread = 100\n",
            trapd.addr()
        ),
    )
    .unwrap();
    let socket = dir.path().join("ctl.sock");
    let metrics = format!("127.0.0.1:{}", common::free_port("127.0.0.1"));
    let agent = UmadAgent::start_operated(&tb, Some("h1"), &conf, &socket, &metrics, WAIT);
    trapd.wait(WAIT, "coldStart", |t| !named(t, "coldStart").is_empty());
    let url = format!("http://{metrics}/metrics");
    let health = |tb: &ib_testbed::Testbed| {
        let out = tb
            .command(common::BIN)
            .args(["health", "--socket", socket.to_str().unwrap()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };

    // The tables read (after the quick first sweep): every route arrives.
    let m = common::wait_for("the routes on /metrics", WAIT, || {
        let m = curl(&url);
        unreachable_pairs(&m).is_some().then_some(m)
    });
    assert_eq!(unreachable_pairs(&m), Some(0), "{m}");
    assert!(!m.contains("infiniband_routes_broken{"), "{m}");
    for leaf in ["leaf1", "leaf2"] {
        let spread = format!("infiniband_routes_uplink_spread{{switch=\"{leaf}\",guid=");
        assert!(m.contains(&spread), "{spread} not in\n{m}");
    }
    let h = health(&tb);
    assert!(h.contains("routes: 4 switches to"), "{h}");
    assert!(h.contains("0 host pairs cannot talk"), "{h}");

    // No SM to reroute: a spine link that routes use goes. Discovery sees
    // the changed subnet and reads every table again.
    tb.stop_opensm();
    tb.console("Unlink \"spine1\"[2]").unwrap();
    let m = common::wait_for("unreachable pairs on /metrics", WAIT, || {
        let m = curl(&url);
        (unreachable_pairs(&m).unwrap_or(0) > 0).then_some(m)
    });
    let holes: Vec<&str> = m
        .lines()
        .filter(|l| l.starts_with("infiniband_routes_broken{kind=\"black_hole\""))
        .collect();
    // The pulled link's ends: spine1's port 2, leaf2's port 7.
    assert!(
        holes.iter().any(|l| {
            (l.contains("switch=\"spine1\"") && l.contains("port=\"2\""))
                || (l.contains("switch=\"leaf2\"") && l.contains("port=\"7\""))
        }),
        "{m}"
    );
    let h = common::wait_for("the agent's report", WAIT, || {
        let h = health(&tb);
        h.contains("BLACK HOLE").then_some(h)
    });
    assert!(!h.contains(" 0 host pairs cannot talk"), "{h}");
    assert!(h.contains("UNREACHABLE \"leaf"), "{h}");
    let t = trapd.wait(WAIT, "routes notifications", |t| {
        !of_trigger(t, "mteTriggerFired", "routes:unreachable").is_empty()
            && !of_trigger(t, "mteTriggerFired", "routes:black_hole").is_empty()
    });
    let fired = of_trigger(&t, "mteTriggerFired", "routes:black_hole")[0];
    assert!(
        fired.object("IB-SM-MIB::ibSmTrapNodeGUID1.0").is_some(),
        "{fired:?}"
    );

    // OpenSM again: it reroutes around the dead link; the findings clear,
    // each notified once.
    tb.start_opensm().unwrap();
    common::wait_for("the reroute on /metrics", WAIT, || {
        let m = curl(&url);
        (unreachable_pairs(&m) == Some(0) && !m.contains("infiniband_routes_broken{")).then_some(())
    });
    trapd.wait(WAIT, "routes clearances", |t| {
        ["routes:unreachable", "routes:black_hole"].iter().all(|k| {
            let falling = of_trigger(t, "mteTriggerFalling", k).len();
            falling > 0 && falling == of_trigger(t, "mteTriggerFired", k).len()
        })
    });
    let h = health(&tb);
    assert!(h.contains(" 0 host pairs cannot talk"), "{h}");
    assert!(agent.log_text().contains("routes cleared: black_hole"));
}
