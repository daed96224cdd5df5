//! The cabling plan's findings ([`crate::models::cabling_plan`]) and the
//! route check's ([`crate::models::route_check`]) on /metrics, with the
//! agent's own figures. Absent when the published snapshot was not compared
//! with a plan, or its routes not checked (no forwarding tables read, no
//! sweep yet).

use std::fmt::Write as _;

use super::{fabric::esc, header};
use crate::models::route_check::Switch;
use crate::models::source_thread::Published;

/// `infiniband_topology_mismatches{kind}` and, per port a finding
/// involves, `infiniband_topology_port_mismatch{guid,port,kind,node} 1`.
pub fn plan(out: &mut String, published: &Published) {
    let Some(r) = published.extra.topology.as_ref().and_then(|p| p.0.as_ref()) else {
        return;
    };
    header(
        out,
        "infiniband_topology_mismatches",
        "gauge",
        "Differences between the fabric and its cabling plan ([topology] expected), by kind",
    );
    for (k, n) in &r.counts {
        let _ = writeln!(out, "infiniband_topology_mismatches{{kind=\"{k}\"}} {n}");
    }
    header(
        out,
        "infiniband_topology_port_mismatch",
        "gauge",
        "1 for each port a difference from the cabling plan involves",
    );
    let mut ports = std::collections::BTreeSet::new();
    for f in &r.findings {
        for e in f.ports() {
            if let Some(g) = e.guid {
                ports.insert((g, e.port, f.kind(), e.node.as_str()));
            }
        }
    }
    for (g, p, k, node) in ports {
        let node = esc(node);
        let _ = writeln!(
            out,
            "infiniband_topology_port_mismatch{{guid=\"{g}\",port=\"{p}\",kind=\"{k}\",node=\"{node}\"}} 1"
        );
    }
}

/// `infiniband_routes_unreachable` (host pairs that cannot
/// talk), `infiniband_routes_broken{kind,switch,guid,port}` (destinations
/// whose routes end there) and `infiniband_routes_uplink_spread{switch,guid}`
/// per leaf.
pub fn routes(out: &mut String, published: &Published) {
    let Some(r) = published.extra.routes.as_ref().and_then(|p| p.0.as_ref()) else {
        return;
    };
    let at = |s: &Switch| format!("switch=\"{}\",guid=\"{}\"", esc(&s.switch), s.guid);
    header(out, "infiniband_routes_unreachable", "gauge", "Host pairs that cannot talk: for each leaf switch, its hosts times the end LIDs its forwarding table does not reach");
    let _ = writeln!(out, "infiniband_routes_unreachable {}", r.unreachable_pairs);
    header(out, "infiniband_routes_broken", "gauge", "Destinations whose routes end at a switch port: kind black_hole (port down or not linked), no_route (no table entry), misrouted (leads to another channel adapter), loop or credit_loop (a cycle of links that routes to channel adapters depend on: a deadlock risk)");
    for b in &r.broken {
        let (kind, port, n) = (&b.kind, b.port, b.destinations);
        let _ = writeln!(
            out,
            "infiniband_routes_broken{{kind=\"{kind}\",{},port=\"{port}\"}} {n}",
            at(&b.at)
        );
    }
    header(out, "infiniband_routes_uplink_spread", "gauge", "How unevenly a leaf switch's uplinks share the destinations routed up, (max - min) / mean: 0 is even");
    for b in &r.balance {
        let _ = writeln!(
            out,
            "infiniband_routes_uplink_spread{{{}}} {}",
            at(&b.at),
            b.spread
        );
    }
}
