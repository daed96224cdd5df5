//! The agent's route check ([`crate::routes`]) on /metrics.

use std::fmt::Write as _;

/// /metrics: `infiniband_routes_unreachable` (host pairs that cannot
/// talk), `infiniband_routes_broken{kind,switch,guid,port}` (destinations
/// whose routes end there) and `infiniband_routes_uplink_spread{switch,guid}`
/// per leaf. Absent when the published snapshot's routes were not checked
/// (no forwarding tables read, no sweep yet).
pub fn render(out: &mut String, published: &crate::models::source_thread::Published) {
    let Some(r) = published.extra.routes.as_ref().and_then(|p| p.0.as_ref()) else {
        return;
    };
    let _ = writeln!(
        out,
        "# HELP infiniband_routes_unreachable Host pairs that cannot talk: for each leaf switch, its hosts times the end LIDs its forwarding table does not reach\n# TYPE infiniband_routes_unreachable gauge\ninfiniband_routes_unreachable {}",
        r.unreachable_pairs
    );
    out.push_str("# HELP infiniband_routes_broken Destinations whose routes end at a switch port: kind black_hole (port down or not linked), no_route (no table entry), misrouted (leads to another channel adapter) or loop\n# TYPE infiniband_routes_broken gauge\n");
    for b in &r.broken {
        let _ = writeln!(
            out,
            "infiniband_routes_broken{{kind=\"{}\",switch=\"{}\",guid=\"{}\",port=\"{}\"}} {}",
            b.kind,
            super::fabric::esc(&b.at.switch),
            b.at.guid,
            b.port,
            b.destinations
        );
    }
    out.push_str("# HELP infiniband_routes_uplink_spread How unevenly a leaf switch's uplinks share the destinations routed up, (max - min) / mean: 0 is even\n# TYPE infiniband_routes_uplink_spread gauge\n");
    for b in &r.balance {
        let _ = writeln!(
            out,
            "infiniband_routes_uplink_spread{{switch=\"{}\",guid=\"{}\"}} {}",
            super::fabric::esc(&b.at.switch),
            b.at.guid,
            b.spread
        );
    }
}
