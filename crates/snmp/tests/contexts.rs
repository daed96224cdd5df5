//! SNMP contexts against real clients: net-snmp's tools (SNMPv3 `-n`,
//! SNMPv2c `-c community@context`) and pysnmp (contextName, and the
//! community convention), on an agent whose resolver derives each node
//! context on request, and only for a request its access allows.

mod common;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{oid, run, serve};
use snmp::agent::{Agent, AgentConfig, ApplyError, Community, CommunityAccess, SnmpStats};
use snmp::context::{ContextTable, ContextView, Contexts};
use snmp::dispatch::Dispatcher;
use snmp::index::{IndexCodec, Unsigned32};
use snmp::table::{RowSet, Scalars, Table};
use snmp::usm::{Engine as UsmEngine, SecurityLevel, UserAccess, UserConfig, Usm};
use snmp::vacm::{AccessEntry, ContextMatch, MibView, SecurityModel, Vacm, ViewFamily};
use snmp::value::Value;

/// One context's state: the node's name and its ports (the default
/// context: the agent's own name, no ports).
struct Node {
    name: String,
    ports: RowSet<u32>,
}

type View = Arc<Node>;

/// (node GUID as 16 hex digits, name, port count): the fabric the
/// resolver reads; nothing is kept per context.
const FABRIC: &[(&str, &str, u32)] = &[
    ("0002c90300a1b2c3", "leaf01", 4),
    ("0002c90300a1b2c4", "leaf02", 2),
];

struct Fabric {
    nodes: Arc<Dispatcher<View, ()>>,
    /// How many views `resolve` derived: a request VACM refuses must
    /// derive none.
    resolved: Arc<AtomicUsize>,
}

impl Contexts<View, ()> for Fabric {
    fn next_name(&self, after: &[u8]) -> Option<Vec<u8>> {
        let key = |n: &[u8]| (n.len(), n.to_vec());
        FABRIC
            .iter()
            .flat_map(|(guid, node, _)| [guid.as_bytes(), node.as_bytes()])
            .filter(|n| key(n) > key(after))
            .min_by_key(|n| key(n))
            .map(<[u8]>::to_vec)
    }

    fn exists(&self, name: &[u8]) -> bool {
        FABRIC
            .iter()
            .any(|(guid, node, _)| guid.as_bytes() == name || node.as_bytes() == name)
    }

    fn resolve(&self, name: &[u8]) -> Option<ContextView<View, ()>> {
        self.resolved.fetch_add(1, Ordering::SeqCst);
        let &(_, node, ports) = FABRIC
            .iter()
            .find(|(guid, node, _)| guid.as_bytes() == name || node.as_bytes() == name)?;
        Some(ContextView {
            view: Arc::new(Node {
                name: node.to_string(),
                ports: RowSet::from_rows(1..=ports, Unsigned32::encode),
            }),
            dispatcher: Arc::clone(&self.nodes),
        })
    }
}

/// sysDescr.0 and sysName.0; the default context also has sysContact.0
/// and vacmContextTable listing the contexts of `listed`, the node
/// contexts (`listed` None) an ifXTable with ifName (1) and ifHCInOctets
/// (6).
fn dispatcher(listed: Option<&Arc<dyn Contexts<View, ()>>>) -> Dispatcher<View, ()> {
    let node = listed.is_none();
    let mut d = Dispatcher::new();
    let mut sys = Scalars::<View, ()>::new(oid("1.3.6.1.2.1.1"))
        .read_only(1, |_| Value::OctetString(b"test agent".to_vec()))
        .read_only(5, |v| Value::OctetString(v.name.clone().into_bytes()));
    if !node {
        sys = sys.read_only(4, |_| Value::OctetString(b"ops".to_vec()));
    }
    d.register_all(sys.into_objects()).unwrap();
    if let Some(contexts) = listed {
        let table = ContextTable::new(Some(Arc::clone(contexts)));
        d.register(Arc::new(table)).unwrap();
    }
    if node {
        let t = Table::<View, (), u32>::new(
            oid("1.3.6.1.2.1.31.1.1.1"),
            |v: &View| &v.ports,
            |v, p, c| match c {
                1 => Some(Value::OctetString(format!("{}/{p}", v.name).into_bytes())),
                6 => Some(Value::Counter64(u64::from(*p) << 33)),
                _ => None,
            },
        )
        .read_only(&[1, 6]);
        d.register(Arc::new(t)).unwrap();
    }
    d
}

/// Communities: "public" by the shorthand (every context: the agent
/// gives the shorthands all contexts), "local" only the default context,
/// "racks" the contexts starting with "leaf". Users: "ops" by the
/// shorthand, "guid" only context 0002c90300a1b2c3.
fn vacm() -> Vacm {
    let mut v = Vacm::default();
    let all = ViewFamily {
        subtree: oid("1"),
        mask: vec![],
        included: true,
    };
    v.views.insert(
        "all".into(),
        MibView {
            families: vec![all],
        },
    );
    let grants = [
        (SecurityModel::V2c, "local", ContextMatch::default()),
        (
            SecurityModel::V2c,
            "racks",
            ContextMatch::Prefix(b"leaf".to_vec()),
        ),
        (
            SecurityModel::Usm,
            "guid",
            ContextMatch::Exact(b"0002c90300a1b2c3".to_vec()),
        ),
    ];
    for (model, name, context) in grants {
        v.groups
            .insert((model, name.as_bytes().to_vec()), name.into());
        v.access.push(AccessEntry {
            context,
            model: Some(model),
            ..AccessEntry::read_only(name, SecurityLevel::NoAuthNoPriv, "all")
        });
    }
    v
}

struct Harness {
    port: u16,
    stats: Arc<SnmpStats>,
    /// The resolver's count of views derived.
    resolved: Arc<AtomicUsize>,
    _rt: tokio::runtime::Runtime,
}

fn start() -> Harness {
    let rt = common::runtime();
    let ops = UserAccess {
        write: false,
        min_level: SecurityLevel::NoAuthNoPriv,
        subtree: None,
    };
    let users = [
        UserConfig::without_keys("ops", Some(ops)),
        UserConfig::without_keys("guid", None),
    ];
    let engine_id = vec![0x80, 0, 0x1f, 0x88, 0x04, b'c', b't', b'x'];
    let usm = Usm::new(UsmEngine::new(engine_id, 1), &users).unwrap();
    let cfg = AgentConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        communities: ["public", "local", "racks"]
            .map(|c| Community::new(c, CommunityAccess::ReadOnly))
            .to_vec(),
        ..AgentConfig::default()
    };
    let stats = SnmpStats::new();
    let default = Arc::new(Node {
        name: "default".into(),
        ports: RowSet::default(),
    });
    let resolved = Arc::new(AtomicUsize::new(0));
    let fabric: Arc<dyn Contexts<View, ()>> = Arc::new(Fabric {
        nodes: Arc::new(dispatcher(None)),
        resolved: Arc::clone(&resolved),
    });
    let agent = rt
        .block_on(Agent::bind(
            cfg,
            Arc::new(dispatcher(Some(&fabric))),
            move || Arc::clone(&default),
            Arc::new(|_: Vec<()>| async { Ok::<(), ApplyError>(()) }),
            Arc::clone(&stats),
        ))
        .unwrap()
        .with_usm(Arc::new(usm))
        .with_vacm(Arc::new(vacm()))
        .with_contexts(fabric)
        .with_shorthand_context(ContextMatch::all());
    Harness {
        port: serve(&rt, agent)[0],
        stats,
        resolved,
        _rt: rt,
    }
}

const SYS_NAME: &str = "1.3.6.1.2.1.1.5.0";
const IF_NAME: &str = "1.3.6.1.2.1.31.1.1.1.1";

fn count(c: &std::sync::atomic::AtomicU32) -> u32 {
    c.load(Ordering::Relaxed)
}

#[test]
fn v2c_community_at_context() {
    let h = start();
    let a = format!("127.0.0.1:{}", h.port);
    let v2c = |community: &str, tool: &str, oid: &str| {
        run(tool, &["-v2c", "-c", community, a.as_str(), oid])
    };
    let (ok, out) = v2c("public", "snmpget", SYS_NAME);
    assert!(ok && out.contains("\"default\""), "{out}");
    let (ok, out) = v2c("public@leaf01", "snmpget", SYS_NAME);
    assert!(ok && out.contains("\"leaf01\""), "{out}");
    // The node's GUID names the same context.
    let (ok, out) = v2c("public@0002c90300a1b2c3", "snmpwalk", IF_NAME);
    assert!(ok, "{out}");
    let names: Vec<&str> = out.lines().filter(|l| l.contains("STRING")).collect();
    assert_eq!(names.len(), 4, "{out}");
    assert!(names[3].contains("\"leaf01/4\""), "{out}");
    let (ok, out) = v2c("public@leaf02", "snmpbulkwalk", "1.3.6.1.2.1.31.1.1.1.6");
    assert!(ok && out.matches("Counter64").count() == 2, "{out}");
    // A node context has its own object set: no sysContact there.
    let (_, out) = v2c("public@leaf01", "snmpget", "1.3.6.1.2.1.1.4.0");
    assert!(out.contains("No Such Object"), "{out}");

    // An unknown context: counted and dropped, as net-snmp does; the
    // community was good, so no authentication failure.
    let (ok, out) = v2c("public@nosuch", "snmpget", SYS_NAME);
    assert!(!ok && out.contains("Timeout"), "{out}");
    assert_eq!(count(&h.stats.unknown_contexts), 1);
    assert_eq!(count(&h.stats.in_bad_community_names), 0);
    // A bad community with a context: the failure without one.
    let (ok, _) = v2c("nobody@leaf01", "snmpget", SYS_NAME);
    assert!(!ok);
    assert_eq!(count(&h.stats.in_bad_community_names), 1);

    // VACM: "racks" reaches the contexts starting with "leaf" only (not
    // the same node by its GUID), "local" only the default context.
    assert!(v2c("racks@leaf02", "snmpget", SYS_NAME).0);
    assert!(!v2c("racks@0002c90300a1b2c3", "snmpget", SYS_NAME).0);
    assert!(v2c("local", "snmpget", SYS_NAME).0);
    let (ok, out) = v2c("local@leaf01", "snmpget", SYS_NAME);
    assert!(!ok && out.contains("Timeout"), "{out}");
    assert_eq!(count(&h.stats.in_bad_community_uses), 2);
}

#[test]
fn v3_context_name() {
    let h = start();
    let a = format!("127.0.0.1:{}", h.port);
    // (net-snmp takes no `-n ""`: the default context is no -n.)
    let v3 = |user: &str, context: &str| {
        let mut args = vec!["-v3", "-l", "noAuthNoPriv", "-u", user, &a, SYS_NAME];
        if !context.is_empty() {
            args.splice(0..0, ["-n", context]);
        }
        run("snmpget", &args)
    };
    let (ok, out) = v3("ops", "leaf02");
    assert!(ok && out.contains("\"leaf02\""), "{out}");
    let (ok, out) = v3("ops", "");
    assert!(ok && out.contains("\"default\""), "{out}");
    // An unknown context: the snmpUnknownContexts report (net-snmp says
    // "Bad context specified").
    let (ok, out) = v3("ops", "nosuch");
    assert!(!ok && out.contains("Bad context specified"), "{out}");
    assert_eq!(count(&h.stats.unknown_contexts), 1);
    // "guid" may use its one context, exactly.
    let (ok, out) = v3("guid", "0002c90300a1b2c3");
    assert!(ok && out.contains("\"leaf01\""), "{out}");
    let (ok, out) = v3("guid", "leaf01");
    assert!(!ok && out.contains("authorizationError"), "{out}");
    let (ok, out) = v3("guid", "");
    assert!(!ok && out.contains("authorizationError"), "{out}");
    // snmpwalk of a node's ifXTable over SNMPv3.
    let args = [
        "-v3",
        "-l",
        "noAuthNoPriv",
        "-u",
        "ops",
        "-n",
        "leaf01",
        &a,
        IF_NAME,
    ];
    let (ok, out) = run("snmpwalk", &args);
    assert!(ok && out.matches("STRING").count() == 4, "{out}");
}

/// Access is decided from the context's name before the context is
/// derived: a request VACM refuses costs no view (the resolver is not
/// asked), and a user or community without access to a name cannot tell
/// whether such a context exists (SNMPv3: authorizationError for both;
/// SNMPv1/v2c: dropped, counted in snmpInBadCommunityUses, for both).
#[test]
fn access_is_decided_before_the_context_is_derived() {
    let h = start();
    let a = format!("127.0.0.1:{}", h.port);
    let resolved = || h.resolved.load(Ordering::SeqCst);
    let v2c = |community: &str| run("snmpget", &["-v2c", "-c", community, &a, SYS_NAME]);
    let v3 = |user: &str, context: &str| {
        let args = [
            "-v3",
            "-l",
            "noAuthNoPriv",
            "-u",
            user,
            "-n",
            context,
            &a,
            SYS_NAME,
        ];
        run("snmpget", &args)
    };

    // Refused requests: no view derived, a real context and an unknown
    // one answered alike.
    for community in ["local@leaf01", "local@nosuch", "racks@0002c90300a1b2c3"] {
        let (ok, out) = v2c(community);
        assert!(!ok && out.contains("Timeout"), "{community}: {out}");
    }
    assert_eq!(count(&h.stats.in_bad_community_uses), 3);
    assert_eq!(count(&h.stats.unknown_contexts), 0);
    let (real, unknown) = (v3("guid", "leaf01"), v3("guid", "nosuch"));
    for (ok, out) in [&real, &unknown] {
        assert!(!ok && out.contains("authorizationError"), "{out}");
    }
    assert_eq!(
        real.1.replace("leaf01", "X"),
        unknown.1.replace("nosuch", "X")
    );
    assert_eq!(count(&h.stats.unknown_contexts), 0);
    // A read-only community's Set in a context: noAccess, nothing derived.
    let (ok, out) = run(
        "snmpset",
        &["-v2c", "-c", "public@leaf01", &a, SYS_NAME, "s", "x"],
    );
    assert!(!ok && out.contains("noAccess"), "{out}");
    assert_eq!(resolved(), 0, "a refused request derived a context");

    // Allowed: the context is derived (once a request), and an unknown
    // one is unknown to those whose access reaches its name.
    assert!(v2c("public@leaf01").0);
    assert!(v3("ops", "leaf02").0);
    assert_eq!(resolved(), 2);
    let (ok, out) = v3("ops", "nosuch");
    assert!(!ok && out.contains("Bad context specified"), "{out}");
    assert_eq!(count(&h.stats.unknown_contexts), 1);
}

/// pysnmp 4.x (Debian's, under /usr/bin/python3): SNMPv3 with a
/// contextName, SNMPv2c with `community@context`.
#[test]
fn pysnmp_context_name() {
    let h = start();
    let script = format!(
        r#"
import pysnmp.hlapi as h
target = h.UdpTransportTarget(('127.0.0.1', {port}), timeout=2, retries=1)
oid = h.ObjectType(h.ObjectIdentity('{SYS_NAME}'))
for auth, context in [(h.UsmUserData('ops'), b'leaf01'),
                      (h.UsmUserData('ops'), b'0002c90300a1b2c4'),
                      (h.CommunityData('public@leaf02', mpModel=1), b'')]:
    e, s, i, vbs = next(h.getCmd(h.SnmpEngine(), auth, target,
                                 h.ContextData(contextName=context), oid))
    print(context.decode() or '-', e, vbs[0][1].prettyPrint() if vbs else None)
"#,
        port = h.port
    );
    let o = Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .output()
        .expect("python3");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "leaf01 None leaf01",
            "0002c90300a1b2c4 None leaf02",
            "- None leaf02"
        ],
        "{out}"
    );
}

/// vacmContextTable lists the contexts from the resolver, one at a time.
#[test]
fn vacm_context_table_lists_the_contexts() {
    let h = start();
    let a = format!("127.0.0.1:{}", h.port);
    let (ok, out) = run(
        "snmpwalk",
        &["-v2c", "-c", "public", &a, "1.3.6.1.6.3.16.1.1"],
    );
    assert!(ok, "{out}");
    let names: Vec<&str> = out
        .lines()
        .filter(|l| !l.contains("No more variables"))
        .filter_map(|l| l.split_once(" = "))
        .map(|(_, v)| v.trim_start_matches("STRING: "))
        .collect();
    let expected = [
        "\"\"",
        "\"leaf01\"",
        "\"leaf02\"",
        "\"0002c90300a1b2c3\"",
        "\"0002c90300a1b2c4\"",
    ];
    assert_eq!(names, expected, "{out}");
    // leaf01's instance: its length, then its octets.
    let leaf01 = "1.3.6.1.6.3.16.1.1.1.1.6.108.101.97.102.48.49";
    let (ok, out) = run("snmpget", &["-v2c", "-c", "public", &a, leaf01]);
    assert!(ok && out.contains("\"leaf01\""), "{out}");
    let (_, out) = run(
        "snmpget",
        &["-v2c", "-c", "public", &a, &format!("{leaf01}.1")],
    );
    assert!(out.contains("No Such Instance"), "{out}");
    // After a beginning ("le" of a 6-octet name): the first such name.
    let (ok, out) = run(
        "snmpgetnext",
        &[
            "-v2c",
            "-c",
            "public",
            &a,
            "1.3.6.1.6.3.16.1.1.1.1.6.108.101",
        ],
    );
    assert!(ok && out.contains("\"leaf01\""), "{out}");
}
