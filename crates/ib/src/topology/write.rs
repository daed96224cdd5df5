//! Writer printing a topology exactly as ibnetdiscover prints a fabric.

use super::{TopoNode, TopoPort, Topology};
use crate::types::{Guid, LinkSpeed, LinkWidth, NodeType};
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// The comment block at the top of ibnetdiscover's output.
#[derive(Debug, Clone, Default)]
pub struct WriteHeader {
    /// When the fabric was discovered (printed like ctime(3), in UTC).
    pub generated: Option<SystemTime>,
    /// `# Initiated from node <node guid> port <port guid>`.
    pub initiated_from: Option<(Guid, Guid)>,
}

/// ibnetdiscover's text: switches first, then CAs, then routers, each with
/// its connected ports (`[p] "remote"[q] ... # "remote desc" lid N 4xQDR`).
pub fn write_ibnetdiscover(topo: &Topology, header: &WriteHeader) -> String {
    let mut out = String::with_capacity(topo.nodes.len() * 256 + topo.num_ports_total() * 80);
    out.push_str("#\n# Topology file: generated on ");
    out.push_str(&ctime(header.generated.unwrap_or_else(SystemTime::now)));
    out.push_str("\n#\n");
    if let Some((n, p)) = header.initiated_from {
        let _ = writeln!(out, "# Initiated from node {:016x} port {:016x}", n.0, p.0);
    }
    for t in [NodeType::Switch, NodeType::Ca, NodeType::Router] {
        for node in topo.nodes.iter().filter(|n| n.node_type == t) {
            write_node(&mut out, topo, node);
        }
    }
    out
}

fn write_node(out: &mut String, topo: &Topology, node: &TopoNode) {
    let _ = write!(
        out,
        "\nvendid=0x{:x}\ndevid=0x{:x}\n",
        node.vendor_id, node.device_id
    );
    if node.sys_image_guid.0 != 0 {
        let _ = writeln!(out, "sysimgguid=0x{:x}", node.sys_image_guid.0);
    }
    match node.node_type {
        NodeType::Switch => {
            let _ = writeln!(
                out,
                "switchguid=0x{:x}({:x})",
                node.node_guid.0, node.port0_guid.0
            );
            let _ = writeln!(
                out,
                "Switch\t{} \"{}\"\t\t# \"{}\" {} port 0 lid {} lmc {}",
                node.num_ports,
                node.name,
                node.description(),
                if node.enhanced_port0 == Some(true) {
                    "enhanced"
                } else {
                    "base"
                },
                node.lid.map_or(0, |l| l.0),
                node.lmc.unwrap_or(0)
            );
        }
        t => {
            let (guid_key, type_word) = if t == NodeType::Router {
                ("rtguid", "Rt")
            } else {
                ("caguid", "Ca")
            };
            let _ = writeln!(out, "{guid_key}=0x{:x}", node.node_guid.0);
            let _ = writeln!(
                out,
                "{type_word}\t{} \"{}\"\t\t# \"{}\"",
                node.num_ports,
                node.name,
                node.description()
            );
        }
    }
    let mut ports: Vec<&TopoPort> = node.ports.iter().collect();
    ports.sort_by_key(|p| p.port);
    for p in ports {
        let Some(remote) = topo.node(&p.remote) else {
            continue;
        };
        let rport = remote.port(p.remote_port);
        let remote_is_switch = remote.node_type == NodeType::Switch;
        let remote_lid = if remote_is_switch {
            remote.lid.map_or(0, |l| l.0)
        } else {
            rport.and_then(|r| r.lid).map_or(0, |l| l.0)
        };
        let rate = rate_text(p.width, p.speed);
        if node.node_type == NodeType::Switch {
            let _ = write!(
                out,
                "[{}]\t\"{}\"[{}]",
                p.port.0, remote.name, p.remote_port.0
            );
            if !remote_is_switch {
                let _ = write!(out, "({:x}) ", remote.port_guid(p.remote_port).0);
            }
            let _ = writeln!(
                out,
                "\t\t# \"{}\" lid {} {}",
                remote.description(),
                remote_lid,
                rate
            );
        } else {
            let _ = write!(
                out,
                "[{}]({:x}) \t\"{}\"[{}]",
                p.port.0, p.guid.0, remote.name, p.remote_port.0
            );
            if !remote_is_switch {
                let _ = write!(out, " ({:x}) ", remote.port_guid(p.remote_port).0);
            }
            let _ = writeln!(
                out,
                "\t\t# lid {} lmc {} \"{}\" lid {} {}",
                p.lid.map_or(0, |l| l.0),
                p.lmc.unwrap_or(0),
                remote.description(),
                remote_lid,
                rate
            );
        }
    }
}

/// `4xQDR` as ibnetdiscover prints it (`??`/`???` for unknown parts).
fn rate_text(w: Option<LinkWidth>, s: Option<LinkSpeed>) -> String {
    let w = match w {
        Some(w) => format!("{}x", w.lanes()),
        None => "??".to_string(),
    };
    let s = s.map_or("???", LinkSpeed::name);
    format!("{w}{s}")
}

/// ctime(3) layout ("Sun Nov 22 05:50:39 2026"), in UTC.
pub(crate) fn ctime(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let wd = WD
        .get(days.rem_euclid(7) as usize)
        .copied()
        .unwrap_or("???");
    let mo = MO
        .get((m as usize).saturating_sub(1))
        .copied()
        .unwrap_or("???");
    format!(
        "{wd} {mo} {d:2} {:02}:{:02}:{:02} {y}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn ctime_format() {
        // 2026-11-22 05:50:39 UTC was a Sunday.
        let t = UNIX_EPOCH + Duration::from_secs(1_795_326_639);
        assert_eq!(ctime(t), "Sun Nov 22 05:50:39 2026");
        assert_eq!(ctime(UNIX_EPOCH), "Thu Jan  1 00:00:00 1970");
    }
}
