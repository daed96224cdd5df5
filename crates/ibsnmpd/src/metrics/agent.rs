//! The agent's own figures on /metrics: sweeps, SNMP, notifications,
//! reloads. Rendered per scrape (they change by the second).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use ib::model::Snapshot;
use snmp::agent::SnmpStats;

use super::{header, AgentCounters, Sources};

type PhaseFn = fn(&ib::model::PhaseCost) -> f64;

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// One family of one unlabelled sample.
fn one(out: &mut String, name: &str, help: &str, kind: &str, v: f64) {
    header(out, name, kind, help);
    let _ = writeln!(out, "{name} {v}");
}

/// `ibsnmpd_build_info{version,revision,rustc_version} 1`, as every
/// exporter has: which build answers (crates/ibsnmpd/build.rs).
fn build_info(out: &mut String) {
    let name = "ibsnmpd_build_info";
    header(
        out,
        name,
        "gauge",
        "The agent's build: version, git revision and compiler (value 1)",
    );
    let _ = writeln!(
        out,
        "{name}{{version=\"{}\",revision=\"{}\",rustc_version=\"{}\"}} 1",
        super::fabric::esc(env!("CARGO_PKG_VERSION")),
        super::fabric::esc(env!("IBSNMPD_REVISION")),
        super::fabric::esc(env!("IBSNMPD_RUSTC_VERSION")),
    );
}

pub(super) fn render(out: &mut String, snap: &Snapshot, s: &Sources) {
    last_sweep(out, snap);
    snapshot(out, snap, s);
    snmp(out, &s.snmp);
    notifications_and_reloads(out, &s.agent);
}

/// The last published sweep: when, how long, and its cost by phase.
fn last_sweep(out: &mut String, snap: &Snapshot) {
    let sweep = &snap.sweep;
    let swept = sweep.number > 0;
    one(
        out,
        "ibsnmpd_sweeps_total",
        "Sweeps published since the source started (the snapshot's sweep number)",
        "counter",
        sweep.number as f64,
    );
    one(
        out,
        "ibsnmpd_sweep_duration_seconds",
        "Duration of the last published sweep (all phases)",
        "gauge",
        sweep.duration.as_secs_f64(),
    );
    one(
        out,
        "ibsnmpd_last_successful_sweep_timestamp_seconds",
        "When the published snapshot was taken (Unix time; 0 before the first sweep)",
        "gauge",
        if swept { secs(sweep.time) } else { 0.0 },
    );
    // The last sweep's cost per phase (MAD class); sources without MADs
    // (sim, sysfs) report zeros.
    let cost = &sweep.cost;
    let phases = [
        ("discovery", &cost.discovery),
        ("sa", &cost.sa),
        ("pma", &cost.pma),
    ];
    let per_phase: [(&str, &str, PhaseFn); 4] = [
        (
            "ibsnmpd_sweep_phase_duration_seconds",
            "Duration of each phase of the last sweep",
            |p| p.duration.as_secs_f64(),
        ),
        (
            "ibsnmpd_sweep_mads_sent",
            "MADs sent in the last sweep by phase (SMP discovery, SA, PMA), retries included",
            |p| p.sent as f64,
        ),
        (
            "ibsnmpd_sweep_mads_failed",
            "Queries that failed for good in the last sweep, by phase",
            |p| p.failed as f64,
        ),
        (
            "ibsnmpd_sweep_mads_timeouts",
            "MAD attempts that got no answer in time in the last sweep, by phase",
            |p| p.timeouts as f64,
        ),
    ];
    for (name, help, value) in per_phase {
        header(out, name, "gauge", help);
        for (phase, c) in phases {
            let _ = writeln!(out, "{name}{{phase=\"{phase}\"}} {}", value(c));
        }
    }
    one(
        out,
        "ibsnmpd_sa_answers_cut_total",
        "SA answers cut short (RMPP transfers that did not complete) since the source started; the last whole answer stands",
        "counter",
        cost.sa_answers_cut as f64,
    );
}

/// The published snapshot's age and size, and the agent's build and uptime.
fn snapshot(out: &mut String, snap: &Snapshot, s: &Sources) {
    let sweep = &snap.sweep;
    let swept = sweep.number > 0;
    let age = SystemTime::now()
        .duration_since(sweep.time)
        .map_or(0.0, |d| d.as_secs_f64());
    one(
        out,
        "ibsnmpd_snapshot_age_seconds",
        "Age of the published snapshot",
        "gauge",
        if swept { age } else { 0.0 },
    );
    one(
        out,
        "ibsnmpd_fabric_nodes",
        "Nodes in the published snapshot",
        "gauge",
        snap.nodes.len() as f64,
    );
    one(
        out,
        "ibsnmpd_fabric_ports",
        "Ports in the published snapshot, switch port 0 (management, no link) not counted, as ibsnmpd health counts them",
        "gauge",
        snap.port_count() as f64,
    );
    build_info(out);
    one(
        out,
        "ibsnmpd_uptime_seconds",
        "Seconds since the agent started",
        "gauge",
        s.started.elapsed().as_secs_f64(),
    );
}

/// The SNMP engine's counters.
fn snmp(out: &mut String, st: &SnmpStats) {
    let ld = |c: &std::sync::atomic::AtomicU32| f64::from(SnmpStats::load(c));
    let name = "ibsnmpd_snmp_requests_total";
    header(out, name, "counter", "SNMP request PDUs received, by type: get, getnext, getbulk, set (getnext is snmpInGetNexts; GetBulk has no MIB counter)");
    for (pdu, c) in [
        ("get", &st.in_get_requests),
        ("getnext", &st.in_get_nexts),
        ("getbulk", &st.in_get_bulks),
        ("set", &st.in_set_requests),
    ] {
        let _ = writeln!(out, "{name}{{pdu=\"{pdu}\"}} {}", ld(c));
    }
    let name = "ibsnmpd_snmp_varbinds_total";
    header(
        out,
        name,
        "counter",
        "Variable bindings served by Get/GetNext/GetBulk (read) and Set (set)",
    );
    let _ = writeln!(out, "{name}{{pdu=\"read\"}} {}", ld(&st.in_total_req_vars));
    let _ = writeln!(out, "{name}{{pdu=\"set\"}} {}", ld(&st.in_total_set_vars));
    one(
        out,
        "ibsnmpd_snmp_packets_received_total",
        "SNMP messages received (snmpInPkts)",
        "counter",
        ld(&st.in_pkts),
    );
    one(
        out,
        "ibsnmpd_snmp_packets_sent_total",
        "SNMP messages sent (snmpOutPkts)",
        "counter",
        ld(&st.out_pkts),
    );
    one(
        out,
        "ibsnmpd_snmp_auth_failures_total",
        "Requests with an unknown community or one used beyond its rights (snmpInBadCommunityNames + snmpInBadCommunityUses)",
        "counter",
        ld(&st.in_bad_community_names) + ld(&st.in_bad_community_uses),
    );
    one(
        out,
        "ibsnmpd_snmp_parse_errors_total",
        "Undecodable SNMP messages (snmpInASNParseErrs)",
        "counter",
        ld(&st.in_asn_parse_errs),
    );
}

/// The notification originator's counters and the configuration reloads.
fn notifications_and_reloads(out: &mut String, a: &AgentCounters) {
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64;
    let ns = a.notifications.as_ref();
    let nz = |f: fn(&snmp::notify::NotifyStats) -> &AtomicU64| ns.map_or(0.0, |x| n(f(x)));
    one(
        out,
        "ibsnmpd_notifications_sent_total",
        "Notification messages sent (traps per sink, informs the first time)",
        "counter",
        nz(|x| &x.traps_sent) + nz(|x| &x.informs_sent),
    );
    one(
        out,
        "ibsnmpd_notifications_dropped_total",
        "Notifications dropped (queue full, informs never acknowledged)",
        "counter",
        nz(|x| &x.queue_drops) + nz(|x| &x.informs_dropped),
    );
    one(
        out,
        "ibsnmpd_notifications_suppressed_total",
        "Notifications held back by storm control",
        "counter",
        nz(|x| &x.suppressed),
    );
    one(
        out,
        "ibsnmpd_reloads_total",
        "Configuration reloads (SIGHUP) applied",
        "counter",
        n(&a.reloads),
    );
    one(
        out,
        "ibsnmpd_reload_failures_total",
        "Configuration reloads (SIGHUP) refused: the old settings stay",
        "counter",
        n(&a.reload_failures),
    );
}
