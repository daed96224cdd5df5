//! The cabling plan's findings ([`crate::topology`]) on /metrics.

/// /metrics: `infiniband_topology_mismatches{kind}` and, per port a
/// finding involves, `infiniband_topology_port_mismatch{guid,port,kind,node} 1`.
/// Absent when no plan is configured or no sweep was compared.
pub fn render(out: &mut String, published: &crate::models::source_thread::Published) {
    use std::fmt::Write as _;
    let Some(r) = published.extra.topology.as_ref().and_then(|p| p.0.as_ref()) else {
        return;
    };
    out.push_str("# HELP infiniband_topology_mismatches Differences between the fabric and its cabling plan ([topology] expected), by kind\n# TYPE infiniband_topology_mismatches gauge\n");
    for (k, n) in &r.counts {
        let _ = writeln!(out, "infiniband_topology_mismatches{{kind=\"{k}\"}} {n}");
    }
    out.push_str("# HELP infiniband_topology_port_mismatch 1 for each port a difference from the cabling plan involves\n# TYPE infiniband_topology_port_mismatch gauge\n");
    let mut ports = std::collections::BTreeSet::new();
    for f in &r.findings {
        for e in f.ports() {
            if let Some(g) = e.guid {
                ports.insert((g, e.port, f.kind(), e.node.as_str()));
            }
        }
    }
    for (g, p, k, node) in ports {
        let node = super::fabric::esc(node);
        let _ = writeln!(
            out,
            "infiniband_topology_port_mismatch{{guid=\"{g}\",port=\"{p}\",kind=\"{k}\",node=\"{node}\"}} 1"
        );
    }
}
