//! The agent against net-snmp's own tools (snmpget, snmpgetnext, snmpwalk,
//! snmpbulkwalk, snmpset), v1 and v2c.

mod common;

use std::sync::{Arc, Mutex};

use common::{expect, oid, run, serve};
use snmp::agent::{
    Agent, AgentConfig, ApplyError, ApplyErrorKind, Community, CommunityAccess, SnmpStats,
};
use snmp::dispatch::Dispatcher;
use snmp::index::{IndexCodec, Unsigned32};
use snmp::oid::Oid;
use snmp::table::{check, RowSet, Scalars, Table};
use snmp::value::Value;

#[derive(Clone)]
struct Row {
    n: u32,
    bytes: u64,
}

struct State {
    contact: String,
    rows: RowSet<Row>,
}

type View = Arc<State>;

#[derive(Debug)]
enum Change {
    Contact(String),
    Fail,
}

fn dispatcher() -> Dispatcher<View, Change> {
    let mut d = Dispatcher::new();
    let sys = Scalars::<View, Change>::new(oid("1.3.6.1.2.1.1"))
        .read_only(1, |_| Value::OctetString(b"test agent".to_vec()))
        .read_only(3, |_| Value::TimeTicks(4242))
        .read_write(
            4,
            |v| Value::OctetString(v.contact.clone().into_bytes()),
            |_, val| Ok(Change::Contact(check::display_string(val, 255)?)),
        )
        .read_write(
            6,
            |_| Value::OctetString(b"loc".to_vec()),
            |_, val| {
                check::octets(val, 0..=255)?;
                Ok(Change::Fail)
            },
        );
    d.register_all(sys.into_objects()).unwrap();
    let t = Table::<View, Change, Row>::new(
        oid("1.3.6.1.2.1.31.1.1.1"),
        |v: &View| &v.rows,
        |_, r, c| match c {
            1 => Some(Value::OctetString(format!("port{}", r.n).into_bytes())),
            6 => Some(Value::Counter64(r.bytes)),
            15 => Some(Value::Gauge32(r.n * 1000)),
            _ => None,
        },
    )
    .read_only(&[1, 6, 15]);
    d.register(Arc::new(t)).unwrap();
    d
}

struct Harness {
    port: u16,
    port6: u16,
    stats: Arc<SnmpStats>,
    state: Arc<Mutex<View>>,
    _rt: tokio::runtime::Runtime,
}

fn start() -> Harness {
    let rt = common::runtime();
    let rows = RowSet::from_rows(
        (1..=20u32).map(|n| Row {
            n,
            bytes: u64::from(n) << 33,
        }),
        |r, o| Unsigned32::encode(&r.n, o),
    );
    let state = Arc::new(Mutex::new(Arc::new(State {
        contact: "nobody".into(),
        rows,
    })));
    let stats = SnmpStats::new();
    let st = Arc::clone(&state);
    let st2 = Arc::clone(&state);
    let controller = Arc::new(move |changes: Vec<Change>| {
        let st2 = Arc::clone(&st2);
        async move {
            for (i, c) in changes.into_iter().enumerate() {
                match c {
                    Change::Contact(s) => {
                        let mut g = st2.lock().unwrap();
                        let rows = g.rows.clone();
                        *g = Arc::new(State { contact: s, rows });
                    }
                    Change::Fail => {
                        return Err(ApplyError {
                            index: i,
                            kind: ApplyErrorKind::CommitFailed,
                            reason: "test".into(),
                        })
                    }
                }
            }
            Ok(())
        }
    });
    let cfg = AgentConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()],
        communities: vec![
            Community::new("public", CommunityAccess::ReadOnly),
            Community::new("private", CommunityAccess::ReadWrite),
            Community {
                name: b"elsewhere".to_vec(),
                access: CommunityAccess::ReadWrite,
                sources: vec!["10.0.0.0/8".parse().unwrap()],
            },
        ],
        ..AgentConfig::default()
    };
    let agent = rt
        .block_on(Agent::bind(
            cfg,
            Arc::new(dispatcher()),
            move || st.lock().unwrap().clone(),
            controller,
            Arc::clone(&stats),
        ))
        .unwrap();
    let ports = serve(&rt, agent);
    Harness {
        port: ports[0],
        port6: ports[1],
        stats,
        state,
        _rt: rt,
    }
}

fn oids_of(out: &str) -> Vec<Oid> {
    out.lines()
        .filter(|l| l.contains(" = ") && !l.contains("No more variables"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|t| t.parse().ok())
        .collect()
}

#[test]
fn net_snmp_tools() {
    let h = start();
    let agent = format!("127.0.0.1:{}", h.port);
    let a = agent.as_str();

    // sysDescr.0 over v2c.
    let sys_descr = |community: &str, agent: &str, ok: bool, want: &str| {
        expect(
            "snmpget",
            &["-v2c", "-c", community, agent, "1.3.6.1.2.1.1.1.0"],
            ok,
            want,
        )
    };

    // Get in both versions.
    sys_descr("public", a, true, "\"test agent\"");
    let (_, out) = run(
        "snmpget",
        &[
            "-v2c",
            "-c",
            "public",
            a,
            "1.3.6.1.2.1.1.2.0",
            "1.3.6.1.2.1.1.1.5",
        ],
    );
    assert!(out.contains("No Such Object"), "{out}");
    assert!(out.contains("No Such Instance"), "{out}");
    expect(
        "snmpget",
        &["-v1", "-c", "public", a, "1.3.6.1.2.1.1.2.0"],
        false,
        "noSuchName",
    );
    expect(
        "snmpget",
        &["-v1", "-c", "public", a, "1.3.6.1.2.1.31.1.1.1.6.1"],
        false,
        "noSuchName",
    );

    // Walks: strictly increasing, complete; v1 skips Counter64.
    let walk = |tool: &str, args: &[&str]| oids_of(&expect(tool, args, true, ""));
    let v2 = walk("snmpwalk", &["-v2c", "-c", "public", a, "1.3"]);
    assert!(v2.windows(2).all(|w| w[0] < w[1]), "{v2:?}");
    assert_eq!(v2.len(), 4 + 60, "{v2:?}");
    let v1 = walk("snmpwalk", &["-v1", "-c", "public", a, "1.3"]);
    assert!(v1.windows(2).all(|w| w[0] < w[1]), "{v1:?}");
    assert_eq!(v1.len(), 4 + 40, "{v1:?}");
    let bulk = walk("snmpbulkwalk", &["-v2c", "-c", "public", "-Cr50", a, "1.3"]);
    assert_eq!(bulk, v2);
    expect(
        "snmpgetnext",
        &["-v2c", "-c", "public", a, "1.3.6.1.2.1.31.1.1.1.15.20"],
        true,
        "No more variables",
    );

    // Sets.
    let set = [
        "-v2c",
        "-c",
        "private",
        a,
        "1.3.6.1.2.1.1.4.0",
        "s",
        "ops@x",
    ];
    expect("snmpset", &set, true, "");
    assert_eq!(h.state.lock().unwrap().contact, "ops@x");
    expect(
        "snmpget",
        &["-v2c", "-c", "public", a, "1.3.6.1.2.1.1.4.0"],
        true,
        "ops@x",
    );
    // Refused Sets, each with the error net-snmp names: (version,
    // community, OID, type, value, error).
    for (v, c, o, t, x, err) in [
        (
            "-v2c",
            "private",
            "1.3.6.1.2.1.1.4.0",
            "i",
            "3",
            "wrongType",
        ),
        ("-v1", "private", "1.3.6.1.2.1.1.4.0", "i", "3", "badValue"),
        (
            "-v2c",
            "private",
            "1.3.6.1.2.1.1.1.0",
            "s",
            "x",
            "notWritable",
        ),
        (
            "-v1",
            "private",
            "1.3.6.1.2.1.1.1.0",
            "s",
            "x",
            "noSuchName",
        ),
        ("-v2c", "public", "1.3.6.1.2.1.1.4.0", "s", "y", "noAccess"),
        (
            "-v2c",
            "private",
            "1.3.6.1.2.1.1.6.0",
            "s",
            "y",
            "commitFailed",
        ),
    ] {
        expect("snmpset", &[v, "-c", c, a, o, t, x], false, err);
    }
    assert_eq!(h.state.lock().unwrap().contact, "ops@x");

    // Unknown community and disallowed source: no answer, counted.
    let before = SnmpStats::load(&h.stats.in_bad_community_names);
    sys_descr("wrong", a, false, "Timeout");
    sys_descr("elsewhere", a, false, "");
    assert_eq!(SnmpStats::load(&h.stats.in_bad_community_names), before + 2);
    assert_eq!(SnmpStats::load(&h.stats.in_bad_community_uses), 1);

    // IPv6.
    let a6 = format!("udp6:[::1]:{}", h.port6);
    sys_descr("public", &a6, true, "\"test agent\"");
}
