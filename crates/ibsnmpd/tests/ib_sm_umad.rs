//! IB-SM-MIB on the umad source over ibsim + OpenSM, compared with what
//! infiniband-diags report on the same fabric: nodes (ibnetdiscover), the
//! master SM (sminfo), CA PortInfo (smpquery portinfo), partitions from a
//! partitions.conf with full and limited members (and a member added by
//! editing the file + SIGHUP, with LastChange moved), OpenSM's IPoIB groups;
//! a second OpenSM at a lower priority shows as standby beside the master
//! (saquery SMIR); GUIDInfo blocks (saquery GIR per LID) and links
//! (ibnetdiscover, and saquery LinkRecord per from-LID, both directions);
//! NodeRecord, PortInfoRecord and SwitchInfoRecord per LID; OpenSM killed
//! (sminfo fails): its row reads notActive without ActCount, its port's
//! CapabilityMask change (IsSM cleared) is notified, and OpenSM started
//! again reads master as sminfo says.

mod common;
#[path = "notifications_support/mod.rs"]
mod trapd;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::{number, sm_col as col, snmp, SmCells as Cells, UmadAgent};
use ib_testbed::{Testbed, TestbedConfig, SMALL_NET};

const SM: &str = ".1.3.6.1.3.117.7";

/// Default partition for all; 0x0001: OpenSM's own port (Switch1 port 0)
/// full, the CAs limited.
const PARTITIONS: &str = "Default=0x7fff, ipoib : ALL=full;\n\
                          P1=0x0001, ipoib : SELF=full, ALL_CAS=limited;\n";
/// The same with every switch a full member of 0x0001 (adds Switch2).
const PARTITIONS_MORE: &str = "Default=0x7fff, ipoib : ALL=full;\n\
                               P1=0x0001, ipoib : ALL_SWITCHES=full, ALL_CAS=limited;\n";

/// One testbed at a time in this file: two OpenSMs on one ibsim lose MADs
/// when other fabrics load the machine (see the two-SM test).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn walk(target: &str) -> Cells {
    let out = snmp(
        "snmpbulkwalk",
        &[
            "-v2c", "-c", "public", "-On", "-t", "3", "-r", "1", "-Cr50", target, SM,
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    common::parse_lines(&common::join_wrapped(&text))
        .into_iter()
        .filter(|(_, v)| !v.starts_with("No more variables"))
        .filter_map(|(oid, v)| Some((common::sm_cell(&oid)?, v)))
        .collect()
}

fn bytes(v: &str) -> Vec<u8> {
    match v.strip_prefix("Hex-STRING: ") {
        Some(h) => h
            .split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex"))
            .collect(),
        None => v
            .strip_prefix("STRING: ")
            .map(|s| s.trim_matches('"').as_bytes().to_vec())
            .unwrap_or_default(),
    }
}

fn guid_of(index: &[u32], at: usize) -> u64 {
    index
        .get(at..at + 8)
        .expect("GUID index")
        .iter()
        .fold(0, |a, &b| (a << 8) | u64::from(b))
}

/// (node GUID, port, 1 full / 2 limited) of a partition key's vectors.
fn members(cells: &Cells, key: u32) -> BTreeSet<(u64, u8, u8)> {
    col(cells, 51, 4)
        .iter()
        .filter(|(i, _)| i.get(8) == Some(&key))
        .flat_map(|(_, v)| {
            bytes(v)
                .chunks(10)
                .map(|e| {
                    let g = e[..8].iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
                    (g, e[8], e[9])
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn last_change(cells: &Cells, key: u32) -> u64 {
    col(cells, 51, 7)
        .iter()
        .find(|(i, _)| i.get(8) == Some(&key))
        .map(|(_, v)| number(v))
        .expect("LastChange")
}

#[test]
fn umad_tables_equal_infiniband_diags() {
    let _serial = one_at_a_time();
    let tb = small_fabric(Some(PARTITIONS));
    let agent = agent_once(&tb, |c| {
        col(c, 21, 5).len() >= 6 && !col(c, 51, 4).is_empty()
    });
    let cells = walk(&agent.target);

    // Nodes: the GUIDs ibnetdiscover reports, with their types.
    let disc = tb.run_diag("ibnetdiscover", &[]).expect("ibnetdiscover");
    let mut want = BTreeMap::new();
    for l in disc.stdout.lines() {
        let ty = if l.starts_with("Switch") {
            2
        } else if l.starts_with("Ca") {
            1
        } else {
            continue;
        };
        let g = l
            .split('"')
            .nth(1)
            .and_then(|s| s.split('-').nth(1))
            .map(|h| u64::from_str_radix(h, 16).expect("guid"))
            .expect("node id");
        want.insert(g, ty);
    }
    let got: BTreeMap<u64, u64> = col(&cells, 21, 5)
        .iter()
        .map(|(i, v)| (guid_of(i, 8), number(v)))
        .collect();
    assert_eq!(got, want, "ibnetdiscover:\n{}", disc.stdout);

    // The master SM: sminfo's GUID, priority and state.
    let si = tb.run_diag("sminfo", &[]).expect("sminfo");
    let words: Vec<&str> = si.stdout.split_whitespace().collect();
    let after = |k: &str| {
        words
            .iter()
            .position(|w| *w == k)
            .and_then(|i| words.get(i + 1))
            .map(|w| w.trim_end_matches(','))
            .unwrap_or_else(|| panic!("no {k} in {}", si.stdout))
    };
    let sm_guid = u64::from_str_radix(after("guid").trim_start_matches("0x"), 16).unwrap();
    let states = col(&cells, 71, 6);
    let (idx, st) = states
        .iter()
        .find(|(i, _)| guid_of(i, 8) == sm_guid)
        .unwrap_or_else(|| panic!("SM {sm_guid:#x} not in {states:?}"));
    assert_eq!(number(st), after("state").parse::<u64>().unwrap());
    assert_eq!(
        number(&col(&cells, 71, 5)[idx]),
        after("priority").parse::<u64>().unwrap()
    );

    // CA ports: LID, state, LMC, MTUCap as smpquery portinfo reads them.
    let lids = col(&cells, 31, 6);
    let mut checked = 0;
    for (idx, lid) in &lids {
        // CAs' port 1 (port 2 of the two-port HCAs is unlinked, LID 0).
        if got.get(&guid_of(idx, 8)) != Some(&1) || idx.last() != Some(&1) {
            continue;
        }
        let lid = number(lid).to_string();
        let pq = tb
            .run_diag("smpquery", &["portinfo", &lid, "1"])
            .expect("smpquery");
        let field = |name: &str| -> u64 {
            pq.stdout
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.rsplit('.').next())
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| {
                    v.strip_prefix("0x")
                        .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
                })
                .unwrap_or_else(|| panic!("{name} in {}", pq.stdout))
        };
        assert_eq!(field("Lid:"), lid.parse::<u64>().unwrap());
        assert_eq!(number(&col(&cells, 31, 7)[idx]), field("SMLid:"));
        assert_eq!(number(&col(&cells, 31, 19)[idx]), field("LMC:"));
        // Its P_Key table (PKeyTableRecord, trusted with SM_Key 0x1) holds
        // 0x0001 without the full bit: the limited member the vector says.
        let pk = tb
            .run_diag("saquery", &["--smkey", "1", "PKeyTableRecord", &lid])
            .expect("saquery PKTR");
        let keys: BTreeSet<u64> = pk
            .stdout
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter_map(|w| w.strip_prefix("0x"))
            .filter(|h| h.len() == 4)
            .filter_map(|h| u64::from_str_radix(h, 16).ok())
            .collect();
        assert!(
            keys.contains(&0x0001) && keys.contains(&0xffff),
            "{}",
            pk.stdout
        );
        let node = guid_of(idx, 8);
        assert!(members(&cells, 1).contains(&(node, 1, 2)));
        checked += 1;
    }
    assert_eq!(checked, 4);

    // Switches: SwitchInfo and NodeInfo as smpquery reads them at the
    // switch's LID (ibnetdiscover's "lid N" of its port 0).
    let mut switches = 0;
    for l in disc.stdout.lines().filter(|l| l.starts_with("Switch")) {
        let g = l
            .split('"')
            .nth(1)
            .and_then(|s| s.split('-').nth(1))
            .map(|h| u64::from_str_radix(h, 16).expect("guid"))
            .expect("switch id");
        let lid = l
            .split_whitespace()
            .skip_while(|w| *w != "lid")
            .nth(1)
            .expect("switch lid");
        let mut idx: Vec<u32> = col(&cells, 41, 3)
            .keys()
            .find(|i| guid_of(i, 8) == g)
            .cloned()
            .unwrap_or_else(|| panic!("switch {g:#x} not in ibSmSwitchInfoTable"));
        let smp = |attr: &str| {
            tb.run_diag("smpquery", &[attr, lid])
                .expect("smpquery")
                .stdout
        };
        let field = |text: &str, name: &str| -> u64 {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.rsplit('.').next())
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| {
                    v.strip_prefix("0x")
                        .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
                })
                .unwrap_or_else(|| panic!("{name} in {text}"))
        };
        let si = smp("switchinfo");
        for (c, name) in [
            (3, "LinearFdbCap:"),
            (4, "RandomFdbCap:"),
            (5, "McastFdbCap:"),
            (6, "LinearFdbTop:"),
            (7, "DefPort:"),
            (10, "LifeTime:"),
            (12, "LidsPerPort:"),
            (13, "PartEnforceCap:"),
        ] {
            assert_eq!(
                number(&col(&cells, 41, c)[&idx]),
                field(&si, name),
                "{name} of {g:#x}"
            );
        }
        let ni = smp("nodeinfo");
        idx.truncate(16);
        assert_eq!(number(&col(&cells, 21, 6)[&idx]), field(&ni, "NumPorts:"));
        assert_eq!(number(&col(&cells, 21, 3)[&idx]), field(&ni, "BaseVers:"));
        switches += 1;
    }
    assert_eq!(switches, 2);

    // Partition 0x0001: Switch1 port 0 full, the four CAs limited.
    let p1 = members(&cells, 1);
    assert_eq!(p1.iter().filter(|m| m.2 == 1).count(), 1, "{p1:?}");
    assert_eq!(p1.iter().filter(|m| m.2 == 2).count(), 4, "{p1:?}");
    assert!(
        p1.contains(&(sm_guid_node(&cells, sm_guid), 0, 1)),
        "{p1:?}"
    );

    // OpenSM's IPoIB broadcast groups of both partitions.
    let pkeys: BTreeSet<u64> = col(&cells, 61, 7).values().map(|v| number(v)).collect();
    assert!(
        pkeys.contains(&0xffff) && pkeys.contains(&0x8001),
        "{pkeys:?}"
    );
    assert!(!col(&cells, 62, 4).is_empty());
    // The groups are saquery MCMemberRecord's MGIDs.
    let mc = tb.run_diag("saquery", &["-m"]).expect("saquery -m");
    let want: BTreeSet<[u8; 16]> = mc
        .stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("MGID"))
        .map(|v| {
            v.trim_start_matches('.')
                .trim()
                .parse::<std::net::Ipv6Addr>()
                .expect("MGID")
                .octets()
        })
        .collect();
    let got: BTreeSet<[u8; 16]> = col(&cells, 61, 4)
        .keys()
        .map(|i| {
            let mut g = [0u8; 16];
            for (d, s) in g.iter_mut().zip(&i[8..24]) {
                *d = *s as u8;
            }
            g
        })
        .collect();
    assert!(!want.is_empty(), "{}", mc.stdout);
    assert_eq!(got, want, "saquery -m:\n{}", mc.stdout);

    // Add Switch2 as a full member, SIGHUP: within a sweep the vector shows
    // it and LastChange moves; the default partition's does not.
    let before = last_change(&cells, 1);
    let default_before = last_change(&cells, 0x7fff);
    std::fs::write(tb.dir().join("partitions.conf"), PARTITIONS_MORE).expect("write");
    common::hup_opensm(&tb);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = walk(&agent.target);
        let m = members(&c, 1);
        if m.iter().filter(|m| m.2 == 1).count() == 2 {
            assert!(last_change(&c, 1) > before, "LastChange did not move");
            assert_eq!(last_change(&c, 0x7fff), default_before);
            break;
        }
        assert!(Instant::now() < deadline, "new member never showed: {m:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The node GUID of the SM's port (SMInfo carries the port GUID; on a
/// switch port 0 it equals the node GUID).
fn sm_guid_node(cells: &Cells, sm_port_guid: u64) -> u64 {
    let nodes: BTreeSet<u64> = col(cells, 21, 5).keys().map(|i| guid_of(i, 8)).collect();
    if nodes.contains(&sm_port_guid) {
        sm_port_guid
    } else {
        panic!("SM port {sm_port_guid:#x} is not a switch port 0")
    }
}

/// `saquery SMIR`: (SM port GUID, priority, state) of every record.
fn sm_info_records(text: &str) -> BTreeSet<(u64, u64, u64)> {
    let field = |block: &str, name: &str| -> Option<u64> {
        let v = block
            .lines()
            .find(|l| l.trim_start().starts_with(name))?
            .trim()
            .trim_start_matches(name)
            .trim_start_matches('.')
            .trim()
            .to_string();
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    };
    text.split("SMInfoRecord dump:")
        .filter_map(|b| {
            Some((
                field(b, "GUID")?,
                field(b, "Priority")?,
                field(b, "SMState")?,
            ))
        })
        .collect()
}

#[test]
fn two_sms_show_as_master_and_standby() {
    let _serial = one_at_a_time();
    let mut tb = small_fabric(None);
    // The master at priority 5 (console), a second OpenSM at priority 1 on a
    // host: it stays standby (OpenSM's default priority 0 would hand over).
    tb.opensm_console("priority 5").expect("console priority");
    tb.start_standby_opensm("Hca3", 1)
        .unwrap_or_else(|e| panic!("standby OpenSM: {e}"));
    let want_from_sa = |tb: &Testbed| {
        let out = tb.run_diag("saquery", &["SMIR"]).expect("saquery SMIR");
        sm_info_records(&out.stdout)
    };
    // The master learns of the standby at its next sweep, first as
    // discovering(1), then standby(2).
    let settled = |w: &BTreeSet<(u64, u64, u64)>| {
        w.iter().map(|r| r.2).collect::<BTreeSet<_>>() == BTreeSet::from([2, 3])
    };
    //
    // Under umad2sim an SMInfo Get that reaches the standby while it starts
    // can be lost, and the master then waits for the answer forever
    // (umad2sim delivers no send timeouts). If so, both are started again,
    // once.
    let deadline = Instant::now() + Duration::from_secs(90);
    let restart_at = Instant::now() + Duration::from_secs(15);
    let mut restarted = false;
    let mut want = want_from_sa(&tb);
    while !settled(&want) && Instant::now() < deadline {
        if !restarted && Instant::now() > restart_at {
            tb.stop_standby_opensms();
            tb.stop_opensm();
            tb.start_opensm()
                .unwrap_or_else(|e| panic!("restart OpenSM: {e}"));
            tb.opensm_console("priority 5").expect("console priority");
            tb.start_standby_opensm("Hca3", 1)
                .unwrap_or_else(|e| panic!("standby OpenSM: {e}"));
            restarted = true;
        }
        std::thread::sleep(Duration::from_secs(1));
        want = want_from_sa(&tb);
    }
    assert!(
        settled(&want),
        "saquery SMIR never showed one standby(2) and one master(3): {want:?}"
    );

    let rows = |c: &Cells| -> BTreeSet<(u64, u64, u64)> {
        col(c, 71, 6)
            .iter()
            .map(|(i, st)| {
                let prio = col(c, 71, 5).get(i).map(|p| number(p)).unwrap_or(999);
                (guid_of(i, 8), prio, number(st))
            })
            .collect()
    };
    let agent = agent_once(&tb, |c| rows(c) == want);
    let cells = walk(&agent.target);
    assert_eq!(rows(&cells), want, "ibSmSMInfoTable vs saquery SMIR");
}

/// SMALL_NET with OpenSM sweeping every 2 s, and the agent on it once its
/// walk satisfies `ready`.
fn small_fabric_agent(ready: impl Fn(&Cells) -> bool) -> (Testbed, UmadAgent) {
    let tb = small_fabric(None);
    let agent = agent_once(&tb, ready);
    (tb, agent)
}

/// SMALL_NET, with `partitions` when given, and OpenSM sweeping every 2 s.
fn small_fabric(partitions: Option<&str>) -> Testbed {
    let mut cfg = TestbedConfig::new(SMALL_NET);
    if let Some(p) = partitions {
        cfg.partitions = p.to_string();
    }
    cfg.sm_sweep_secs = 2;
    Testbed::start(cfg).unwrap_or_else(|e| panic!("testbed: {e}"))
}

/// The agent on `tb` (ibsim's default attach point), sweeping every
/// second, once its walk satisfies `ready`.
fn agent_once(tb: &Testbed, ready: impl Fn(&Cells) -> bool) -> UmadAgent {
    UmadAgent::start(
        tb,
        None,
        &["--sweep-interval", "1"],
        Duration::from_secs(60),
        |a: &UmadAgent| ready(&walk(&a.target)),
    )
}

/// `saquery GIR LID`: block number -> the 8 GUIDs of the block.
fn guid_info_records(text: &str) -> BTreeMap<u64, Vec<u64>> {
    let value = |l: &str| -> Option<u64> {
        let v = l.rsplit('.').next()?.trim();
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    };
    text.split("GUIDInfo Record dump:")
        .filter_map(|b| {
            let lines: Vec<&str> = b.lines().map(str::trim).collect();
            let block = value(lines.iter().find(|l| l.starts_with("Block"))?)?;
            let guids: Vec<u64> = lines
                .iter()
                .filter(|l| l.starts_with("GUID "))
                .filter_map(|l| value(l))
                .collect();
            Some((block, guids))
        })
        .collect()
}

/// ibnetdiscover's links: (node GUID, port) -> (remote node GUID, remote port).
fn discovered_links(text: &str) -> BTreeMap<(u64, u64), (u64, u64)> {
    let id = |s: &str| -> Option<u64> {
        let hex = s.split('"').nth(1)?.split('-').nth(1)?;
        u64::from_str_radix(hex, 16).ok()
    };
    let mut links = BTreeMap::new();
    let mut node = None;
    for l in text.lines() {
        if l.starts_with("Switch") || l.starts_with("Ca") {
            node = id(l);
        } else if let (Some(n), Some(rest)) = (node, l.strip_prefix('[')) {
            let port: u64 = rest.split(']').next().and_then(|p| p.parse().ok()).unwrap();
            // The remote: its quoted id, then "[port]".
            let remote = &rest[rest.find('"').unwrap()..];
            let rport: u64 = remote
                .split('[')
                .nth(1)
                .and_then(|p| p.split(']').next())
                .and_then(|p| p.parse().ok())
                .unwrap();
            links.insert((n, port), (id(remote).unwrap(), rport));
        }
    }
    links
}

#[test]
fn guid_info_and_links_equal_the_diags() {
    let _serial = one_at_a_time();
    let (tb, agent) = small_fabric_agent(|c| !col(c, 131, 5).is_empty());
    let cells = walk(&agent.target);
    let blocks = col(&cells, 131, 5);
    let nodes = col(&cells, 21, 5);
    let mut checked = 0;
    for (idx, lid) in col(&cells, 31, 6) {
        let (node, port) = (guid_of(&idx, 8), idx.last().copied().unwrap_or(0));
        let is_ca = nodes
            .iter()
            .any(|(i, t)| guid_of(i, 8) == node && number(t) == 1);
        let lid = number(&lid);
        if !is_ca || lid == 0 {
            continue;
        }
        // Block by block (`saquery GIR LID/BLOCK`): a port's whole table
        // takes more than one packet, which umad2sim cuts to the first (the
        // agent reads the table from the port's SMA when it sees the cut).
        let mut want = BTreeMap::new();
        for b in 0..32 {
            let sa = tb
                .run_diag("saquery", &["GIR", &format!("{lid}/{b}")])
                .expect("saquery GIR");
            let one = guid_info_records(&sa.stdout);
            if one.is_empty() {
                break;
            }
            want.extend(one);
        }
        let got: BTreeMap<u64, Vec<u64>> = blocks
            .iter()
            .filter(|(i, _)| guid_of(i, 8) == node && i.get(16) == Some(&port))
            .map(|(i, v)| {
                let guids = bytes(v)
                    .chunks(8)
                    .map(|c| c.iter().fold(0u64, |a, &b| a << 8 | u64::from(b)))
                    .collect();
                (u64::from(*i.last().unwrap()), guids)
            })
            .collect();
        assert!(!want.is_empty(), "saquery GIR {lid}/0: nothing");
        assert_eq!(got, want, "node {node:#x} port {port} (LID {lid})");
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} CA ports compared");

    // ibSmLinkTable: every link ibnetdiscover reports, both directions.
    let disc = tb.run_diag("ibnetdiscover", &[]).expect("ibnetdiscover");
    let want = discovered_links(&disc.stdout);
    let to_node = col(&cells, 81, 4);
    let got: BTreeMap<(u64, u64), (u64, u64)> = col(&cells, 81, 5)
        .iter()
        .map(|(i, p)| {
            let g = bytes(&to_node[i])
                .iter()
                .fold(0u64, |a, &b| a << 8 | u64::from(b));
            ((guid_of(i, 8), u64::from(i[16])), (g, number(p)))
        })
        .collect();
    assert!(want.len() >= 10, "ibnetdiscover:\n{}", disc.stdout);
    assert_eq!(
        got, want,
        "ibSmLinkTable vs ibnetdiscover:\n{}",
        disc.stdout
    );

    // ibSmLinkTable vs the SA's LinkRecords, asked per from-LID (a
    // whole-table GetTable is cut to one packet under umad2sim): every LID
    // ibnetdiscover -p reports, its node GUID from the SA's NodeRecord.
    let ports = tb
        .run_diag("ibnetdiscover", &["-p"])
        .expect("ibnetdiscover -p");
    let lids: BTreeSet<u64> = ports
        .stdout
        .lines()
        .filter(|l| l.starts_with("SW ") || l.starts_with("CA "))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .filter(|&lid| lid != 0)
        .collect();
    assert!(lids.len() >= 6, "ibnetdiscover -p:\n{}", ports.stdout);
    let mut node_of_lid = BTreeMap::new();
    let mut records = BTreeSet::new();
    for lid in &lids {
        let lid_arg = lid.to_string();
        let nr = tb
            .run_diag("saquery", &["NR", &lid_arg])
            .expect("saquery NR");
        let node = record(&nr.stdout)
            .get("node_guid")
            .map(|g| sa_number(g))
            .unwrap_or_else(|| panic!("saquery NR {lid}:\n{}", nr.stdout));
        node_of_lid.insert(*lid, node);
        let lr = tb
            .run_diag("saquery", &["LR", &lid_arg])
            .expect("saquery LR");
        let got = link_records(&lr.stdout);
        assert!(!got.is_empty(), "saquery LR {lid}:\n{}", lr.stdout);
        for r in got {
            assert_eq!(r.0, *lid, "saquery LR {lid}:\n{}", lr.stdout);
            records.insert(r);
        }
    }
    // Both directions: each record's reverse came back from the other end.
    for &(fl, fp, tl, tp) in &records {
        assert!(
            records.contains(&(tl, tp, fl, fp)),
            "LinkRecord {fl}/{fp} -> {tl}/{tp} has no reverse: {records:?}"
        );
    }
    let guid = |lid: u64| -> u64 {
        *node_of_lid
            .get(&lid)
            .unwrap_or_else(|| panic!("LID {lid} of a LinkRecord not in ibnetdiscover -p"))
    };
    let from_sa: BTreeMap<(u64, u64), (u64, u64)> = records
        .iter()
        .map(|&(fl, fp, tl, tp)| ((guid(fl), fp), (guid(tl), tp)))
        .collect();
    assert_eq!(from_sa.len(), records.len(), "{records:?}");
    assert_eq!(
        from_sa, got,
        "ibSmLinkTable vs saquery LR per LID: {records:?}"
    );
}

/// `saquery LR LID`: (FromLID, FromPort, ToLID, ToPort) of every record.
fn link_records(text: &str) -> BTreeSet<(u64, u64, u64, u64)> {
    text.split("LinkRecord dump:")
        .skip(1)
        .map(|b| {
            let r = record(b);
            let f = |name: &str| {
                sa_number(
                    r.get(name)
                        .unwrap_or_else(|| panic!("no {name} in LinkRecord:\n{b}")),
                )
            };
            (f("FromLID"), f("FromPort"), f("ToLID"), f("ToPort"))
        })
        .collect()
}

/// The `name....value` lines of one saquery record (nested dumps flattened;
/// names as saquery prints them, trailing colons dropped).
fn record(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let dots = l.find("..")?;
            let name = l[..dots].trim_end_matches(':').to_string();
            let value = l[dots..].trim_start_matches(['.', ':']).trim().to_string();
            Some((name, value))
        })
        .collect()
}

/// A saquery number (decimal or 0x hex).
fn sa_number(v: &str) -> u64 {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("hex {v}")),
        None => v.parse().unwrap_or_else(|_| panic!("number {v}")),
    }
}

/// An agent cell as a number: integers, or octets (GUIDs, IDs) big-endian.
fn cell_number(v: &str) -> u64 {
    if v.starts_with("Hex-STRING: ") {
        bytes(v).iter().fold(0u64, |a, &b| a << 8 | u64::from(b))
    } else {
        number(v)
    }
}

/// Asserts that the row `idx` of table `table` holds, in each listed column,
/// the number the saquery record names.
fn assert_row_equals_record(
    cells: &Cells,
    (table, idx): (u32, &[u32]),
    columns: &[(u32, &str)],
    rec: &BTreeMap<String, String>,
    what: &str,
) {
    for (c, name) in columns {
        let got = col(cells, table, *c).get(idx).map(|v| cell_number(v));
        assert_eq!(got, Some(sa_number(&rec[*name])), "{what} {name}");
    }
}

#[test]
fn node_port_switch_records_equal_saquery_per_lid() {
    let _serial = one_at_a_time();
    let (tb, agent) = small_fabric_agent(|c| col(c, 21, 5).len() >= 6);
    let cells = walk(&agent.target);

    // The whole module walks clean with the shipped MIBs.
    let stdout = common::walk_with_shipped_mibs(&agent.target, "IB-SM-MIB::ibSmMIB");
    assert!(stdout.contains("IB-SM-MIB::ibSmPortInfoInitTypeReply."));

    let sa = |args: &[&str]| {
        let out = tb.run_diag("saquery", args).expect("saquery");
        let r = record(&out.stdout);
        assert!(!r.is_empty(), "saquery {args:?}:\n{}", out.stdout);
        r
    };
    let node_col = |c: u32, node: u64| -> String {
        col(&cells, 21, c)
            .into_iter()
            .find(|(i, _)| guid_of(i, 8) == node)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no ibSmNodeInfo column {c} for {node:#x}"))
    };
    let types = col(&cells, 21, 5);
    let (mut cas, mut switches) = (0, 0);
    for (idx, lid) in col(&cells, 31, 6) {
        let (node, port) = (guid_of(&idx, 8), idx.last().copied().unwrap_or(0));
        let lid = number(&lid);
        let is_ca = types
            .iter()
            .any(|(i, t)| guid_of(i, 8) == node && number(t) == 1);
        if !is_ca || lid == 0 {
            continue;
        }
        // NodeRecord: ibSmNodeInfoTable.
        let nr = sa(&["NR", &lid.to_string()]);
        assert_eq!(sa_number(&nr["node_guid"]), node);
        for (c, name) in [
            (6, "num_ports"),
            (7, "sys_guid"),
            (8, "partition_cap"),
            (9, "device_id"),
            (10, "revision"),
            (11, "vendor_id"),
        ] {
            assert_eq!(
                cell_number(&node_col(c, node)),
                sa_number(&nr[name]),
                "NodeRecord {name} of LID {lid}"
            );
        }
        assert_eq!(
            String::from_utf8_lossy(&bytes(&node_col(12, node))),
            nr["NodeDescription"],
            "NodeDescription of LID {lid}"
        );
        // PortInfoRecord: ibSmPortInfoTable's numeric columns.
        let pir = sa(&["PIR", &lid.to_string()]);
        assert_eq!(sa_number(&pir["PortNum"]), u64::from(port));
        // CapMask is BITS in the MIB: IBA bit n is BITS bit n (octet n / 8,
        // most significant bit first).
        let cap = sa_number(&pir["CapMask"]);
        let bits: Vec<u8> = (0..4)
            .map(|o| {
                (0..8).fold(0u8, |a, b| {
                    a | (((cap >> (o * 8 + b)) & 1) as u8) << (7 - b)
                })
            })
            .collect();
        assert_eq!(
            bytes(&col(&cells, 31, 8)[&idx]),
            bits,
            "CapMask of LID {lid}"
        );
        let columns = [
            (6, "Lid"),
            (7, "SMLid"),
            (10, "MkeyLeasePeriod"),
            (19, "LMC"),
            (25, "VLHighLimit"),
            (26, "VLArbHighCap"),
            (27, "VLArbLowCap"),
            (29, "VLStallCount"),
            (30, "HoqLife"),
            (36, "MkeyViolations"),
            (37, "PkeyViolations"),
            (38, "QkeyViolations"),
            (39, "GuidCap"),
            (40, "SubnetTimeout"),
            (41, "RespTimeVal"),
            (42, "LocalPhysErr"),
            (43, "OverrunErr"),
        ];
        let what = format!("PortInfoRecord of LID {lid}:");
        assert_row_equals_record(&cells, (31, &idx), &columns, &pir, &what);
        cas += 1;
    }
    // SwitchInfoRecord: ibSmSwitchInfoTable, at each switch's LID (port 0).
    let disc = tb
        .run_diag("ibnetdiscover", &["-p"])
        .expect("ibnetdiscover -p");
    let switch_lids: BTreeMap<u64, u64> = disc
        .stdout
        .lines()
        .filter(|l| l.starts_with("SW "))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let lid = w.get(1)?.parse().ok()?;
            let guid = u64::from_str_radix(w.get(3)?.trim_start_matches("0x"), 16).ok()?;
            Some((guid, lid))
        })
        .collect();
    for (idx, _) in col(&cells, 41, 3) {
        let node = guid_of(&idx, 8);
        let lid = switch_lids.get(&node).unwrap_or_else(|| {
            panic!("switch {node:#x} not in ibnetdiscover -p:\n{}", disc.stdout)
        });
        let swir = sa(&["SWIR", &lid.to_string()]);
        let columns = [
            (3, "LinearFDBCap"),
            (4, "RandomFDBCap"),
            (5, "MulticastFDBCap"),
            (6, "LinearFDBTop"),
            (7, "DefaultPort"),
            (8, "DefaultMulticastPrimaryPort"),
            (9, "DefaultMulticastNotPrimaryPort"),
            (12, "LIDsPerPort"),
            (13, "PartitionEnforcementCap"),
        ];
        let what = format!("SwitchInfoRecord of LID {lid}:");
        assert_row_equals_record(&cells, (41, &idx), &columns, &swir, &what);
        switches += 1;
    }
    assert!(
        cas >= 4 && switches >= 2,
        "compared {cas} CA ports, {switches} switches"
    );
}

/// sminfo's (GUID, priority, state, ActCount); None when it fails (no SM
/// answers at the port's SM LID).
fn sminfo(tb: &Testbed) -> Option<(u64, u64, u64, u64)> {
    let si = tb.run_diag("sminfo", &[]).expect("sminfo");
    if !si.success() {
        return None;
    }
    let words: Vec<&str> = si.stdout.split_whitespace().collect();
    let after = |k: &str| -> u64 {
        let w = words
            .iter()
            .position(|w| *w == k)
            .and_then(|i| words.get(i + 1))
            .map(|w| w.trim_end_matches(','))
            .unwrap_or_else(|| panic!("no {k} in {}", si.stdout));
        match w.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).expect("hex"),
            None => w.parse().expect("number"),
        }
    };
    Some((
        after("guid"),
        after("priority"),
        after("state"),
        after("count"),
    ))
}

/// The SM row of `guid` in ibSmSMInfoTable: (priority, state, ActCount if
/// present), and ibSmConfigTable's (state, ActCount if present).
type SmRow = (u64, u64, Option<u64>);
fn sm_rows(cells: &Cells, guid: u64) -> Option<(SmRow, (u64, Option<u64>))> {
    let (idx, st) = col(cells, 71, 6)
        .into_iter()
        .find(|(i, _)| guid_of(i, 8) == guid)?;
    let act = col(cells, 71, 4).get(&idx).map(|v| number(v));
    let prio = number(col(cells, 71, 5).get(&idx)?);
    let cfg_state = col(cells, 11, 6).into_values().next().map(|v| number(&v))?;
    let cfg_act = col(cells, 11, 7).into_values().next().map(|v| number(&v));
    Some(((prio, number(&st), act), (cfg_state, cfg_act)))
}

#[test]
fn a_dead_sm_reads_not_active_and_master_again_when_back() {
    let _serial = one_at_a_time();
    let mut tb = small_fabric(None);
    let traps = trapd::Trapd::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(&conf, format!("trap2sink = [\"{}\"]\n", traps.addr())).expect("config");
    let (sm_guid, prio, state, _) = sminfo(&tb).expect("sminfo with OpenSM up");
    assert_eq!(state, 3);
    let agent = UmadAgent::start(
        &tb,
        Some("Hca1"),
        &[
            "--sweep-interval",
            "1",
            "--config",
            conf.to_str().expect("path"),
        ],
        Duration::from_secs(60),
        |a: &UmadAgent| sm_rows(&walk(&a.target), sm_guid).is_some(),
    );
    let cells = walk(&agent.target);
    let (row, config) = sm_rows(&cells, sm_guid).expect("SM row");
    assert_eq!((row.0, row.1), (prio, 3), "ibSmSMInfoTable vs sminfo");
    assert!(row.2.is_some(), "ActCount of a live SM");
    assert_eq!(config.0, 3, "ibSmConfigSMState");

    // OpenSM killed: sminfo fails at once; the agent's row turns notActive
    // within a sweep or two, without an ActCount, and so does ibSmConfig.
    tb.stop_opensm();
    assert_eq!(sminfo(&tb), None, "sminfo with OpenSM gone");
    let deadline = Instant::now() + Duration::from_secs(60);
    let (row, config) = loop {
        let cells = walk(&agent.target);
        match sm_rows(&cells, sm_guid) {
            Some(r) if r.0 .1 == 0 => break r,
            r => assert!(
                Instant::now() < deadline,
                "SM row never notActive: {r:?}\n{}",
                agent.log_text()
            ),
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(row.0, prio, "its priority is kept");
    assert_eq!(row.2, None, "no ActCount while it does not answer");
    assert_eq!(
        config,
        (0, None),
        "ibSmConfigSMState notActive, no ActCount"
    );
    let act = format!(
        "{SM}.1.7.1.1.4.{}.{}",
        [254, 128, 0, 0, 0, 0, 0, 0]
            .map(|b| b.to_string())
            .join("."),
        sm_guid.to_be_bytes().map(|b| b.to_string()).join(".")
    );
    let got = snmp(
        "snmpget",
        &["-v2c", "-c", "public", "-On", &agent.target, &act],
    );
    let text = String::from_utf8_lossy(&got.stdout);
    assert!(text.contains("No Such Instance"), "{act}: {text}");
    // The SM's port no longer has IsSM: ibSmTrapCapabilityMaskChanged for
    // it (IBA trap 144), the notification IB-SM-MIB has for this; IsSM
    // (bit 1) of each one's ibSmTrapCapabilityMask, in order.
    let is_sm = |t: &[trapd::Trap]| -> Vec<bool> {
        trapd::named(t, "ibSmTrapCapabilityMaskChanged")
            .into_iter()
            .filter(|n| {
                n.object("IB-SM-MIB::ibSmTrapPortNum1.0") == Some("Gauge32: 0")
                    && n.object("IB-SM-MIB::ibSmTrapNodeGUID1.0").is_some_and(|g| {
                        g.trim_start_matches("STRING: ")
                            .split(':')
                            .filter_map(|h| u64::from_str_radix(h, 16).ok())
                            .fold(0u64, |a, b| a << 8 | b)
                            == sm_guid
                    })
            })
            .filter_map(|n| {
                let hex = n.object("IB-SM-MIB::ibSmTrapCapabilityMask.0")?;
                let last = hex.split_whitespace().last()?;
                Some(u8::from_str_radix(last, 16).ok()? & 0x2 != 0)
            })
            .collect()
    };
    let t = traps.wait(Duration::from_secs(60), "IsSM cleared", |t| {
        !is_sm(t).is_empty()
    });
    assert_eq!(is_sm(&t), [false], "{}", traps.text());

    // OpenSM back: master again, as sminfo says, with its ActCount.
    tb.start_opensm()
        .unwrap_or_else(|e| panic!("restart OpenSM: {e}"));
    let deadline = Instant::now() + Duration::from_secs(60);
    let row = loop {
        let cells = walk(&agent.target);
        match sm_rows(&cells, sm_guid) {
            Some(r) if r.0 .1 == 3 && r.1 .0 == 3 => break r.0,
            r => assert!(
                Instant::now() < deadline,
                "SM row never master again: {r:?}\n{}",
                agent.log_text()
            ),
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    let (g, p, st, _) = sminfo(&tb).expect("sminfo with OpenSM back");
    assert_eq!((g, p, st), (sm_guid, row.0, row.1), "vs sminfo");
    assert!(row.2.is_some(), "ActCount again");
    let t = traps.wait(Duration::from_secs(60), "IsSM set again", |t| {
        is_sm(t).len() >= 2
    });
    assert_eq!(is_sm(&t), [false, true], "{}", traps.text());
    let log = agent.log_text();
    assert_eq!(log.matches("SA not answering").count(), 1, "{log}");
    assert_eq!(log.matches("SA answers again").count(), 1, "{log}");
}
