//! IB-SM-MIB's read tables served by the real binary over the simulated
//! fabric: a walk with the shipped MIBs loaded is clean (no stderr, no
//! range or type complaints), and the numeric walk equals the sim's own
//! dump (`ibsnmpd dump --format json`) for every node, port, SM, link,
//! partition member and multicast member.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::{
    assert_increasing, number, parse_lines, require_tool, sm_cell, sm_col as col, Agent,
    SmCells as Cells, BIN, SM_PREFIX,
};
use serde_json::Value as Json;

const SM: &str = ".1.3.6.1.3.117.7";

fn dump() -> Json {
    let out = Command::new(BIN)
        .args(["dump", "--source", "sim", "--format", "json"])
        .output()
        .expect("run ibsnmpd dump");
    assert!(out.status.success(), "dump failed");
    serde_json::from_slice(&out.stdout).expect("dump JSON")
}

fn hex_u64(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex")
}

/// 8 octets as index sub-identifiers.
fn octets8(v: u64) -> Vec<u32> {
    v.to_be_bytes().iter().map(|&b| u32::from(b)).collect()
}

/// "Hex-STRING: 00 01 " -> bytes (also plain `STRING: "x"`).
fn bytes(v: &str) -> Vec<u8> {
    if let Some(h) = v.strip_prefix("Hex-STRING: ") {
        h.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex octet"))
            .collect()
    } else if let Some(s) = v.strip_prefix("STRING: ") {
        s.trim_matches('"').as_bytes().to_vec()
    } else if v == "\"\"" {
        Vec::new()
    } else {
        panic!("not an octet string: {v}")
    }
}

/// The numeric walk of IB-SM-MIB: every OID a table cell, in order.
fn walk(agent: &Agent) -> Cells {
    let out = agent.ok("snmpbulkwalk", "2c", "public", &["-Cr50"], &[SM]);
    // IB-SM-MIB is the last subtree served: the walk ends in endOfMibView,
    // which net-snmp prints against the last OID again.
    let rows: Vec<_> = parse_lines(&common::join_wrapped(&out))
        .into_iter()
        .filter(|(_, v)| !v.starts_with("No more variables"))
        .collect();
    assert_increasing(&rows);
    let mut cells = Cells::new();
    for (oid, v) in rows {
        // ibSmPartitionConfig's scalars (a write form, not a table).
        if oid[SM_PREFIX.len()..].starts_with(&[1, 5, 2]) {
            continue;
        }
        let cell = sm_cell(&oid).unwrap_or_else(|| panic!("unexpected OID {oid:?}"));
        cells.insert(cell, v);
    }
    cells
}

#[test]
fn walk_with_shipped_mibs_is_clean() {
    require_tool("snmpbulkwalk");
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let stdout = common::walk_with_shipped_mibs(&agent.target, "IB-SM-MIB::ibSmMIB");
    for name in [
        "ibSmConfigSMState",
        "ibSmNodeInfoDescription",
        "ibSmPortInfoInitTypeReply",
        "ibSmSwitchInfoEnhanced0",
        "ibSmPartitionVector",
        "ibSmMcastGroupScope",
        "ibSmMcastMemberVector",
        "ibSmSMInfoSMState",
        "ibSmLinkToPortNum",
        "ibSmGUIDInfoBlock",
    ] {
        assert!(stdout.contains(&format!("IB-SM-MIB::{name}.")), "no {name}");
    }
    // sysORTable lists the module.
    let or = common::with_shipped_mibs("snmpwalk")
        .args([&agent.target, "SNMPv2-MIB::sysORID"])
        .output()
        .expect("snmpwalk");
    assert!(String::from_utf8_lossy(&or.stdout).contains("IB-SM-MIB::ibSmMIB"));
}

#[test]
fn tables_equal_the_sim_dump() {
    let agent = Agent::start(&["--sweep-interval", "3600"]);
    let cells = walk(&agent);
    let d = dump();
    let prefix = octets8(hex_u64(d["subnet_prefix"].as_str().expect("prefix")));
    let nodes = d["nodes"].as_array().expect("nodes");

    // ibSmNodeInfoTable (group 2): one row per node.
    let types = col(&cells, 21, 5);
    let descr = col(&cells, 21, 12);
    let nports = col(&cells, 21, 6);
    assert_eq!(types.len(), nodes.len());
    // ibSmPortInfoTable (group 3): every port 1..254 of every node.
    let lids = col(&cells, 31, 6);
    let mut want_ports = 0;
    // PortInfo columns compared field by field with the dump's port_info.
    let fields: &[(u32, &str)] = &[
        (6, "lid"),
        (7, "master_sm_lid"),
        (10, "m_key_lease_period"),
        (11, "link_width_enabled"),
        (12, "link_width_supported"),
        (13, "link_width_active"),
        (14, "link_speed_supported"),
        (15, "port_state"),
        (16, "port_physical_state"),
        (17, "link_down_default_state"),
        (18, "m_key_protect_bits"),
        (19, "lmc"),
        (20, "link_speed_active"),
        (21, "link_speed_enabled"),
        (22, "neighbor_mtu"),
        (23, "master_sm_sl"),
        (24, "vl_cap"),
        (25, "vl_high_limit"),
        (26, "vl_arbitration_high_cap"),
        (27, "vl_arbitration_low_cap"),
        (28, "mtu_cap"),
        (29, "vl_stall_count"),
        (30, "hoq_life"),
        (31, "operational_vls"),
        (36, "m_key_violations"),
        (37, "p_key_violations"),
        (38, "q_key_violations"),
        (39, "guid_cap"),
        (40, "subnet_timeout"),
        (41, "resp_time_value"),
        (42, "local_phy_errors"),
        (43, "overrun_errors"),
    ];
    let by_col: BTreeMap<u32, BTreeMap<Vec<u32>, String>> = fields
        .iter()
        .map(|&(c, _)| (c, col(&cells, 31, c)))
        .collect();
    let links = col(&cells, 81, 5);
    let mut want_links = 0;
    for n in nodes {
        let g = hex_u64(n["guid"].as_str().expect("guid"));
        let mut idx = prefix.clone();
        idx.extend(octets8(g));
        let ty = n["node_info"]["node_type"].as_u64().expect("type");
        assert_eq!(number(&types[&idx]), ty);
        assert_eq!(
            number(&nports[&idx]),
            n["node_info"]["num_ports"].as_u64().unwrap()
        );
        assert_eq!(
            bytes(&descr[&idx]),
            n["description"].as_str().unwrap().as_bytes()
        );
        for p in n["ports"].as_array().expect("ports") {
            let num = p["num"].as_u64().unwrap() as u32;
            let mut pidx = idx.clone();
            pidx.push(num);
            if num == 0 {
                assert!(!lids.contains_key(&pidx), "port 0 is no IbDataPort");
                continue;
            }
            want_ports += 1;
            for &(c, f) in fields {
                let got = by_col[&c]
                    .get(&pidx)
                    .unwrap_or_else(|| panic!("no column {c} for {pidx:?}"));
                assert_eq!(
                    number(got),
                    p["port_info"][f].as_u64().unwrap(),
                    "{f} of {g:#x}/{num}"
                );
            }
            if let Some(r) = p["remote"].as_object() {
                want_links += 1;
                assert_eq!(number(&links[&pidx]), r["port"].as_u64().unwrap());
            }
        }
    }
    assert_eq!(lids.len(), want_ports);
    assert_eq!(links.len(), want_links);

    // M_Key and SM_Key read as zeros (secrets off; the sim's SM_Key is 1).
    for v in col(&cells, 31, 4).values() {
        assert_eq!(bytes(v), vec![0; 8]);
    }
    for v in col(&cells, 71, 3).values() {
        assert_eq!(bytes(v), vec![0; 8]);
    }

    // ibSmGUIDInfoTable: block 0 of every CA port holds the dump's GUIDs
    // (port GUID, then its alias), the rest of the block zero.
    let blocks = col(&cells, 131, 5);
    let mut ca_ports = 0;
    for n in nodes.iter().filter(|n| n["type"] != "Switch") {
        let g = hex_u64(n["guid"].as_str().unwrap());
        for p in n["ports"].as_array().unwrap() {
            let mut idx = prefix.clone();
            idx.extend(octets8(g));
            idx.push(p["num"].as_u64().unwrap() as u32);
            idx.push(0);
            let b = bytes(&blocks[&idx]);
            assert_eq!(b.len(), 64);
            let guids = p["guids"].as_array().unwrap();
            assert_eq!(guids.len(), 2, "port GUID and one alias");
            for (k, want) in guids.iter().enumerate() {
                let got = u64::from_be_bytes(b[k * 8..k * 8 + 8].try_into().unwrap());
                assert_eq!(got, hex_u64(want.as_str().unwrap()));
            }
            assert!(b[16..].iter().all(|&x| x == 0));
            ca_ports += 1;
        }
    }
    assert_eq!(
        blocks.len(),
        ca_ports,
        "one block per CA port, none for switches"
    );

    // ibSmSwitchInfoTable: the switches.
    let sw = col(&cells, 41, 3);
    assert_eq!(
        sw.len(),
        nodes.iter().filter(|n| n["type"] == "Switch").count()
    );

    // ibSmSMInfoTable and ibSmConfigTable.
    let sms = d["sms"].as_array().expect("sms");
    let states = col(&cells, 71, 6);
    assert_eq!(states.len(), sms.len());
    for s in sms {
        let mut idx = prefix.clone();
        idx.extend(octets8(hex_u64(s["guid"].as_str().unwrap())));
        let want = match s["state"].as_str().unwrap() {
            "master" => 3,
            "standby" => 2,
            "discovering" => 1,
            _ => 0,
        };
        assert_eq!(number(&states[&idx]), want);
        assert_eq!(
            number(&col(&cells, 71, 5)[&idx]),
            s["priority"].as_u64().unwrap()
        );
    }
    let cfg = col(&cells, 11, 6);
    assert_eq!(cfg.len(), 1);
    assert_eq!(number(&cfg[&prefix]), 3, "the config row is the master");

    // ibSmPartitionTable: the vectors decode to the dump's members.
    // Port GUID -> (node GUID, port number); a switch is named by port 0.
    let mut ports_of: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for n in nodes {
        let g = hex_u64(n["guid"].as_str().unwrap());
        for p in n["ports"].as_array().unwrap() {
            ports_of
                .entry(hex_u64(p["guid"].as_str().unwrap()))
                .or_insert((g, p["num"].as_u64().unwrap()));
        }
    }
    let vecs = col(&cells, 51, 4);
    for part in d["partitions"].as_array().unwrap() {
        let key = (hex_u64(part["pkey"].as_str().unwrap()) & 0x7fff) as u32;
        let mut got = BTreeSet::new();
        for (idx, v) in &vecs {
            if idx.get(8) == Some(&key) {
                let b = bytes(v);
                assert!(b.len() <= 255 && b.len().is_multiple_of(10));
                for e in b.chunks(10) {
                    let g = u64::from_be_bytes(e[..8].try_into().unwrap());
                    got.insert((g, u64::from(e[8]), e[9]));
                }
            }
        }
        let want: BTreeSet<(u64, u64, u8)> = part["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let pg = hex_u64(m["port_guid"].as_str().unwrap());
                let (g, num) = ports_of.get(&pg).copied().unwrap_or((pg, 0));
                (g, num, if m["full"].as_bool().unwrap() { 1 } else { 2 })
            })
            .collect();
        assert_eq!(got, want, "partition {key:#x}");
    }
    for v in col(&cells, 51, 7).values() {
        assert_eq!(number(v), 0, "LastChange 0: unchanged since start");
    }

    // ibSmMcastGroupTable / ibSmMcastMemberTable.
    let groups = d["multicast_groups"].as_array().unwrap();
    assert_eq!(col(&cells, 61, 4).len(), groups.len());
    let members = col(&cells, 62, 4);
    let total: usize = members.values().map(|v| bytes(v).len() / 18).sum();
    let want: usize = groups
        .iter()
        .map(|g| g["members"].as_array().unwrap().len())
        .sum();
    assert_eq!(total, want);
}

#[test]
fn secrets_switch_reveals_keys_only_at_auth_priv() {
    let (_dir, conf) = common::temp_file(
        "ibsnmpd.toml",
        "secrets = true\n\
         [[user]]\nname = \"ops\"\nauth = \"SHA\"\nauth_pass = \"authpass123\"\n\
         priv = \"AES\"\npriv_pass = \"privpass123\"\n\
         [[rouser]]\nuser = \"ops\"\nlevel = \"auth\"\n",
    );
    let conf = conf.to_string_lossy().into_owned();
    let agent = Agent::start(&["--sweep-interval", "3600", "--config", &conf]);
    // Below authPriv (v2c here) the key columns are outside every view.
    let cells = walk(&agent);
    assert!(
        col(&cells, 11, 4).is_empty(),
        "ibSmConfigSMKey hidden from v2c"
    );
    assert!(
        col(&cells, 71, 3).is_empty(),
        "ibSmSMInfoSMKey hidden from v2c"
    );
    assert!(
        col(&cells, 31, 4).is_empty(),
        "ibSmPortInfoMKey hidden from v2c"
    );
    // At authPriv, with the switch on, they read their values: the sim's SM
    // runs with OpenSM's default SM_Key 0x1.
    let key = "1.3.6.1.3.117.7.1.1.1.1.4";
    let v3 = |level: &str| {
        let mut args = vec![
            "-v3",
            "-u",
            "ops",
            "-l",
            level,
            "-a",
            "SHA",
            "-A",
            "authpass123",
        ];
        if level == "authPriv" {
            args.extend(["-x", "AES", "-X", "privpass123"]);
        }
        args.extend(["-On", "-Ox", &agent.target, key]);
        let out = Command::new("snmpwalk")
            .args(&args)
            .output()
            .expect("snmpwalk");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = v3("authPriv");
    let line = text.lines().next().unwrap_or_default();
    let value = line.split_once(" = ").map(|x| x.1).unwrap_or_default();
    assert_eq!(bytes(value), vec![0, 0, 0, 0, 0, 0, 0, 1], "{text}");
    assert!(
        !v3("authNoPriv").contains("Hex-STRING"),
        "authNoPriv sees no key"
    );
}

/// The agent on the sim (no sweeps after the first) with `key = FILE` in
/// its configuration, FILE holding `text` (both in the returned directory,
/// the file named after the key).
fn agent_with_file(key: &str, text: &str) -> (Agent, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(key);
    std::fs::write(&file, text).expect("write the file");
    let conf = dir.path().join("ibsnmpd.toml");
    std::fs::write(&conf, format!("{key} = {:?}\n", file.display().to_string()))
        .expect("write config");
    let conf = conf.to_string_lossy().into_owned();
    let agent = Agent::start(&["--sweep-interval", "3600", "--config", &conf]);
    (agent, dir)
}

#[test]
fn sim_partitions_file_and_standby_sm() {
    let (agent, _dir) = agent_with_file(
        "sim_partitions",
        "Default=0x7fff, ipoib : ALL=full;\nP1=0x8001, ipoib : SELF=full, ALL_CAS=limited;\n",
    );
    let cells = walk(&agent);

    // Master and standby.
    let mut states: Vec<u64> = col(&cells, 71, 6).values().map(|v| number(v)).collect();
    states.sort();
    assert_eq!(states, vec![2, 3]);

    // P1: the SM's port full, every other CA port limited.
    let d = dump();
    let ca_ports: usize = d["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] != "Switch")
        .map(|n| {
            n["ports"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["lid"].as_u64().unwrap_or(0) > 0)
                .count()
        })
        .sum();
    let mut full = 0;
    let mut limited = 0;
    for (idx, v) in col(&cells, 51, 4) {
        if idx.get(8) == Some(&1) {
            for e in bytes(&v).chunks(10) {
                match e[9] {
                    1 => full += 1,
                    2 => limited += 1,
                    x => panic!("membership {x}"),
                }
            }
        }
    }
    assert_eq!((full, limited), (1, ca_ports - 1));
    // Two IPoIB groups (P_Keys 0xffff, 0x8001), CA ports as members.
    let mut pkeys: Vec<u64> = col(&cells, 61, 7).values().map(|v| number(v)).collect();
    pkeys.sort();
    assert_eq!(pkeys, vec![0x8001, 0xffff]);
    let members: usize = col(&cells, 62, 4)
        .values()
        .map(|v| bytes(v).len() / 18)
        .sum();
    assert_eq!(members, 2 * ca_ports);
}

/// The sim's SA services (`sim_services`, one per line): each is a row of
/// ibSmServiceTable indexed by ID, GID (subnet prefix + port GUID) and
/// P_Key, with its lease, key, name and data, and of
/// ibSmServiceAssocTable (key, name), active(1).
#[test]
fn sim_services_file() {
    let d = dump();
    let ca_port = |node: usize| -> u64 {
        hex_u64(
            d["nodes"][node]["ports"][0]["guid"]
                .as_str()
                .expect("port guid"),
        )
    };
    let (a, b) = (ca_port(1), ca_port(2));
    let (agent, dir) = agent_with_file(
        "sim_services",
        &format!(
            "# name id port options\n\
             SRP.T10:{a:016x} {a:#x} {a:#x}\n\
             dapl 7 {b:#x} pkey=0x8001 lease=60  # a leased one\n"
        ),
    );
    let cells = walk(&agent);

    let prefix = octets8(0xfe80_0000_0000_0000);
    let index = |id: u64, port: u64, pkey: u32| {
        let mut i = prefix.clone();
        i.extend(octets8(id));
        i.extend(octets8(0xfe80_0000_0000_0000));
        i.extend(octets8(port));
        i.push(pkey);
        i
    };
    let (ia, ib) = (index(a, a, 0xffff), index(7, b, 0x8001));
    let lease = col(&cells, 121, 5);
    assert_eq!(lease.len(), 2, "{lease:?}");
    assert_eq!(number(&lease[&ia]), 4_294_967_295, "infinite");
    assert_eq!(number(&lease[&ib]), 60);
    let names = col(&cells, 121, 7);
    assert_eq!(bytes(&names[&ia]), format!("SRP.T10:{a:016x}").into_bytes());
    assert_eq!(bytes(&names[&ib]), b"dapl".to_vec());
    assert_eq!(bytes(&col(&cells, 121, 6)[&ia]), vec![0; 16]);
    assert_eq!(bytes(&col(&cells, 121, 8)[&ib]), vec![0; 64]);
    // Associations: (key, IMPLIED name), both active(1) (RowStatus, column 4).
    let assoc = col(&cells, 122, 4);
    let mut names: Vec<Vec<u32>> = assoc
        .iter()
        .map(|(i, v)| {
            assert_eq!(number(v), 1, "active");
            assert_eq!(&i[8..24], &[0; 16][..], "zero key");
            i[24..].to_vec()
        })
        .collect();
    names.sort();
    let as_subids = |n: &str| n.bytes().map(u32::from).collect::<Vec<u32>>();
    let mut want = vec![as_subids(&format!("SRP.T10:{a:016x}")), as_subids("dapl")];
    want.sort();
    assert_eq!(names, want);
    // With the shipped MIBs: names as strings, no type or range complaint.
    let text = common::walk_with_shipped_mibs(&agent.target, "IB-SM-MIB::ibSmServiceInfo");
    assert!(
        text.contains("ibSmServiceName") && text.contains("STRING: dapl"),
        "{text}"
    );
    assert_eq!(
        text.matches("ibSmServiceAssocRowStatus").count(),
        2,
        "{text}"
    );

    // A service on a port the fabric does not have: a clear error, exit 2.
    std::fs::write(dir.path().join("sim_services"), "ghost 1 0xdead\n").expect("write services");
    let conf = dir.path().join("ibsnmpd.toml");
    let out = Command::new(BIN)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--config",
            conf.to_str().unwrap(),
        ])
        .output()
        .expect("run ibsnmpd");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no port with GUID 0x000000000000dead"),
        "{err}"
    );
}

#[test]
fn config_table_reads_opensm_conf() {
    let (agent, _dir) = agent_with_file(
        "opensm_conf",
        "sweep_interval 10\ntransaction_timeout 200\nsminfo_polling_timeout 10000\n\
         polling_retry_number 4\nlmc 0\nm_key_lease_period 60\n",
    );
    let cells = walk(&agent);
    let one = |c: u32| number(col(&cells, 11, c).values().next().expect("config column"));
    assert_eq!(one(9), 10, "SweepInterval");
    assert_eq!(one(10), 200, "ResponseTimeout (ms)");
    assert_eq!(one(14), 0, "DefaultLMC");
    assert_eq!(one(15), 10, "MasterPollInterval (s)");
    assert_eq!(one(16), 4, "MasterPollRetries");
    assert_eq!(one(17), 60, "MKeyLeasePeriod");
    // Without the file these columns are absent.
    let plain = Agent::start(&["--sweep-interval", "3600"]);
    assert!(col(&walk(&plain), 11, 9).is_empty());
}

/// On sysfs the snapshot holds the local node only: its node and port rows
/// (equal to `ibsnmpd dump`), and every fabric-wide table empty.
#[test]
fn sysfs_serves_local_rows_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ib/tests/fixtures/sysfs/host");
    let spec = format!("sysfs:{}", root.display());
    let agent = Agent::start(&["--source", &spec, "--sweep-interval", "3600"]);
    let cells = walk(&agent);
    let out = Command::new(BIN)
        .args(["dump", "--source", &spec, "--format", "json"])
        .output()
        .expect("dump");
    let d: Json = serde_json::from_slice(&out.stdout).expect("dump JSON");
    let nodes = d["nodes"].as_array().expect("nodes");
    assert_eq!(col(&cells, 21, 5).len(), nodes.len());
    let ports: usize = nodes
        .iter()
        .map(|n| {
            n["ports"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["num"].as_u64().unwrap_or(0) >= 1)
                .count()
        })
        .sum();
    assert!(ports >= 1);
    assert_eq!(col(&cells, 31, 6).len(), ports);
    for (idx, lid) in col(&cells, 31, 6) {
        let num = u64::from(*idx.last().unwrap());
        let g = idx[8..16]
            .iter()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b));
        let p = nodes
            .iter()
            .filter(|n| hex_u64(n["guid"].as_str().unwrap()) == g)
            .flat_map(|n| n["ports"].as_array().unwrap())
            .find(|p| p["num"].as_u64() == Some(num))
            .expect("port in dump");
        assert_eq!(number(&lid), p["lid"].as_u64().unwrap());
    }
    for table in [41, 51, 61, 62, 71, 81, 121, 122] {
        assert!(
            !cells.keys().any(|(t, _, _)| *t == table),
            "table {table} not empty on sysfs"
        );
    }
}
