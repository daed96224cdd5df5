use super::*;
use crate::oid::Oid;
use crate::value::{Value, VarBind};

use crate::message_v3::{flags, HeaderData, ScopedPdu, ScopedPduData, UsmParams, V3Message};
use crate::pdu::BulkBody;
use crate::table::Scalars;
use crate::usm::{Engine as UsmEngine, SecurityLevel, UserAccess, UserConfig};
use crate::vacm::{AccessEntry, MibView, ViewFamily};
use proptest::prelude::*;

const ENGINE: [u8; 6] = [0x80, 0, 0, 0, 5, 1];

/// The whole agent path (USM, access, VACM, dispatch) over scalars
/// under 1.3.6.1.2.1.1 and 1.3.6.1.2.1.2, without sockets.
fn inner(families: Vec<ViewFamily>) -> Engine<(), ()> {
    let mut d: Dispatcher<(), ()> = Dispatcher::new();
    for root in [[1, 3, 6, 1, 2, 1, 1], [1, 3, 6, 1, 2, 1, 2]] {
        let mut sc = Scalars::new(Oid::from_slice(&root));
        for sub in 1..=5u32 {
            sc = sc.read_write(sub, move |_: &()| Value::Integer(sub as i32), |_, _| Ok(()));
        }
        d.register_all(sc.into_objects()).unwrap();
    }
    let users = vec![
        UserConfig::without_keys("n", None),
        UserConfig::without_keys(
            "ro",
            Some(ro_access(Some(Oid::new(vec![1, 3, 6, 1, 2, 1, 2])))),
        ),
    ];
    let usm = Usm::new(UsmEngine::new(ENGINE.to_vec(), 1), &users).unwrap();
    let mut vacm = Vacm::default();
    vacm.views.insert("v".into(), MibView { families });
    vacm.groups
        .insert((SecurityModel::Usm, b"n".to_vec()), "g".into());
    vacm.access.push(AccessEntry {
        write: Some("v".into()),
        ..AccessEntry::read_only("g", SecurityLevel::NoAuthNoPriv, "v")
    });
    let mut d = d;
    d.set_secret_subtrees(vec![Oid::new(vec![1, 3, 6, 1, 2, 1, 1, 3])]);
    engine(d, usm, vacm, None, ContextMatch::default())
}

/// An engine over `d` with community "public" (read-only), `usm`, `vacm`
/// and `contexts`, the shorthands governing `shorthand`.
fn engine(
    d: Dispatcher<(), ()>,
    usm: Usm,
    vacm: Vacm,
    contexts: Option<Arc<dyn crate::context::Contexts<(), ()>>>,
    shorthand: ContextMatch,
) -> Engine<(), ()> {
    let controller: Arc<dyn SetController<()>> =
        Arc::new(|_: Vec<()>| async { Ok::<(), ApplyError>(()) });
    Engine::new(EngineConfig {
        communities: vec![Community::new("public", CommunityAccess::ReadOnly)],
        usm: Some(Arc::new(usm)),
        vacm: Some(Arc::new(vacm)),
        contexts,
        shorthand_context: shorthand,
        ..EngineConfig::new(Arc::new(d), Box::new(|| ()), controller, SnmpStats::new())
    })
}

/// rouser-like access at noAuthNoPriv to `subtree` (None: everything).
fn ro_access(subtree: Option<Oid>) -> UserAccess {
    UserAccess {
        write: false,
        min_level: SecurityLevel::NoAuthNoPriv,
        subtree,
    }
}

fn v3_request(user: &str, pdu: Pdu) -> Vec<u8> {
    v3_request_in(user, b"", pdu)
}

fn v3_request_in(user: &str, context: &[u8], pdu: Pdu) -> Vec<u8> {
    v3_request_scoped(user, &ENGINE, context, pdu)
}

/// A noAuthNoPriv request naming `context_engine_id` and `context`.
fn v3_request_scoped(user: &str, context_engine_id: &[u8], context: &[u8], pdu: Pdu) -> Vec<u8> {
    let m = V3Message {
        header: HeaderData {
            msg_id: 1,
            max_size: 65507,
            flags: flags::REPORTABLE,
            security_model: 3,
        },
        usm: UsmParams {
            engine_id: ENGINE.to_vec(),
            engine_boots: 1,
            engine_time: 0,
            user_name: user.as_bytes().to_vec(),
            ..Default::default()
        },
        data: ScopedPduData::Plain(ScopedPdu {
            context_engine_id: context_engine_id.to_vec(),
            context_name: context.to_vec(),
            pdu,
        }),
    };
    let mut out = Vec::new();
    m.encode(&mut out);
    out
}

fn answer(inner: &Engine<(), ()>, req: &[u8]) -> Option<Pdu> {
    let mut out = Vec::new();
    let src = SocketAddr::from(([127, 0, 0, 1], 9));
    match inner.process(src, req, &mut out) {
        Action::Send => {}
        Action::Set(p) => return Some(Pdu::Response(p.response)),
        Action::None => return None,
    }
    match V3Message::decode(&out).unwrap().0.data {
        ScopedPduData::Plain(s) => Some(s.pdu),
        ScopedPduData::Encrypted(_) => panic!("encrypted noAuth answer"),
    }
}

#[test]
fn message_processing_counters() {
    let inner = inner(vec![]);
    let get = || {
        Pdu::GetRequest(PduBody::request(
            1,
            vec![VarBind::new(
                Oid::new(vec![1, 3, 6, 1, 2, 1, 1, 1, 0]),
                Value::Null,
            )],
        ))
    };
    let rewrite = |f: &dyn Fn(&mut V3Message)| {
        let (mut m, _) = V3Message::decode(&v3_request("n", get())).unwrap();
        f(&mut m);
        let mut out = Vec::new();
        m.encode(&mut out);
        out
    };
    // A security model other than USM: snmpUnknownSecurityModels.
    let other_model = rewrite(&|m| m.header.security_model = 99);
    assert!(answer(&inner, &other_model).is_none());
    // Privacy without authentication: snmpInvalidMsgs.
    let priv_only = rewrite(&|m| m.header.flags = flags::PRIV | flags::REPORTABLE);
    assert!(answer(&inner, &priv_only).is_none());
    // A PDU no application here takes (a Report sent to the agent).
    let report = v3_request("n", Pdu::Report(PduBody::request(1, vec![])));
    assert!(answer(&inner, &report).is_none());
    let s = &inner.stats;
    assert_eq!(SnmpStats::load(&s.unknown_security_models), 1);
    assert_eq!(SnmpStats::load(&s.invalid_msgs), 1);
    assert_eq!(SnmpStats::load(&s.unknown_pdu_handlers), 1);
    assert_eq!(SnmpStats::load(&s.in_asn_parse_errs), 0);
}

fn walk(inner: &Engine<(), ()>, user: &str) -> Vec<Oid> {
    let mut seen = Vec::new();
    let mut cur = Oid::new(vec![1]);
    loop {
        let req = v3_request(
            user,
            Pdu::GetNextRequest(PduBody::request(
                1,
                vec![VarBind::new(cur.clone(), Value::Null)],
            )),
        );
        let Some(Pdu::Response(b)) = answer(inner, &req) else {
            panic!("no response")
        };
        let vb = &b.varbinds[0];
        if vb.value == Value::EndOfMibView {
            return seen;
        }
        assert!(vb.oid > cur, "walk went backwards");
        cur = vb.oid.clone();
        seen.push(cur.clone());
    }
}

#[test]
fn vacm_walks_skip_excluded_and_secrets() {
    let fam = |s: &[u32], included: bool| ViewFamily {
        subtree: Oid::from_slice(s),
        mask: vec![],
        included,
    };
    let inner = inner(vec![
        fam(&[1, 3, 6, 1], true),
        fam(&[1, 3, 6, 1, 2, 1, 1], false),
        fam(&[1, 3, 6, 1, 2, 1, 1, 4], true),
    ]);
    let got: Vec<String> = walk(&inner, "n").iter().map(|o| o.to_string()).collect();
    let mut want = vec!["1.3.6.1.2.1.1.4.0".to_string()];
    want.extend((1..=5).map(|i| format!("1.3.6.1.2.1.2.{i}.0")));
    assert_eq!(got, want);
    // The shorthand user limited to 1.3.6.1.2.1.2 cannot write.
    let set = v3_request(
        "ro",
        Pdu::SetRequest(PduBody::request(
            1,
            vec![VarBind::new(
                Oid::new(vec![1, 3, 6, 1, 2, 1, 2, 1, 0]),
                Value::Integer(1),
            )],
        )),
    );
    let Some(Pdu::Response(b)) = answer(&inner, &set) else {
        panic!()
    };
    assert_eq!(b.error_status, ErrorStatus::AuthorizationError);
    // The secret sysUpTime-like scalar stays hidden at noAuthNoPriv.
    let get = v3_request(
        "n",
        Pdu::GetRequest(PduBody::request(
            1,
            vec![VarBind::new(
                Oid::new(vec![1, 3, 6, 1, 2, 1, 1, 3, 0]),
                Value::Null,
            )],
        )),
    );
    let Some(Pdu::Response(b)) = answer(&inner, &get) else {
        panic!()
    };
    assert_eq!(b.varbinds[0].value, Value::NoSuchObject);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any view and any bulk request: an answer, no panic, no loop.
    #[test]
    fn agent_path_never_panics(
        fams in proptest::collection::vec(
            (proptest::collection::vec(0u32..8, 0..9), proptest::collection::vec(any::<u8>(), 0..2), any::<bool>()),
            0..6),
        oids in proptest::collection::vec(proptest::collection::vec(0u32..8, 0..10), 1..4),
        reps in 0i32..30,
        junk in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let families = fams.into_iter().map(|(s, mask, included)| ViewFamily {
            subtree: Oid::new(s), mask, included,
        }).collect();
        let inner = inner(families);
        let vbs: Vec<VarBind> = oids.into_iter().map(|o| VarBind::new(Oid::new(o), Value::Null)).collect();
        let bulk = Pdu::GetBulkRequest(BulkBody { request_id: 1, non_repeaters: 1, max_repetitions: reps, varbinds: vbs.clone() });
        for user in ["n", "ro", "x"] {
            let _ = answer(&inner, &v3_request(user, bulk.clone()));
            let _ = answer(&inner, &v3_request(user, Pdu::SetRequest(PduBody::request(2, vbs.clone()))));
        }
        let mut out = Vec::new();
        let _ = inner.process(SocketAddr::from(([127, 0, 0, 1], 9)), &junk, &mut out);
    }
}

#[test]
fn wire_text_is_escaped_and_cut() {
    assert_eq!(escape_wire(b"ab\ncd\x1b[31m", 64), "ab\\ncd\\x1b[31m");
    assert_eq!(escape_wire(b"a\nb", 64), "a\\nb");
    let long = vec![b'x'; 100];
    assert_eq!(escape_wire(&long, 4), "xxxx...(100 octets)");
}

/// Contexts "leaf01", "leaf02" and "0002c90300a1b2c3" with an object set
/// of their own (sysName.0 = 5); the default context has sysDescr.0 = 1.
struct Nodes(Arc<Dispatcher<(), ()>>);

impl crate::context::Contexts<(), ()> for Nodes {
    fn resolve(&self, name: &[u8]) -> Option<ContextView<(), ()>> {
        [&b"leaf01"[..], b"leaf02", b"0002c90300a1b2c3"]
            .contains(&name)
            .then(|| ContextView {
                view: (),
                dispatcher: Arc::clone(&self.0),
            })
    }
}

fn scalar_dispatcher(sub: u32, value: i32) -> Dispatcher<(), ()> {
    let mut d = Dispatcher::new();
    let sc = Scalars::new(Oid::new(vec![1, 3, 6, 1, 2, 1, 1]))
        .read_only(sub, move |_: &()| Value::Integer(value));
    d.register_all(sc.into_objects()).unwrap();
    d
}

/// User "n" in group "g": the default context exactly and every context
/// starting with "leaf"; user "ro" and community "public" by the
/// shorthands, which govern `shorthand`.
fn context_engine(shorthand: ContextMatch) -> Engine<(), ()> {
    let users = [
        UserConfig::without_keys("n", None),
        UserConfig::without_keys("ro", Some(ro_access(None))),
    ];
    let usm = Usm::new(UsmEngine::new(ENGINE.to_vec(), 1), &users).unwrap();
    let mut vacm = Vacm::default();
    let all = ViewFamily {
        subtree: Oid::new(vec![1]),
        mask: vec![],
        included: true,
    };
    vacm.views.insert(
        "v".into(),
        MibView {
            families: vec![all],
        },
    );
    vacm.groups
        .insert((SecurityModel::Usm, b"n".to_vec()), "g".into());
    for context in [
        ContextMatch::default(),
        ContextMatch::Prefix(b"leaf".to_vec()),
    ] {
        vacm.access.push(AccessEntry {
            context,
            ..AccessEntry::read_only("g", SecurityLevel::NoAuthNoPriv, "v")
        });
    }
    let nodes = Nodes(Arc::new(scalar_dispatcher(5, 5)));
    engine(
        scalar_dispatcher(1, 1),
        usm,
        vacm,
        Some(Arc::new(nodes)),
        shorthand,
    )
}

fn get_sys(sub: u32) -> Pdu {
    Pdu::GetRequest(PduBody::request(
        7,
        vec![VarBind::new(
            Oid::new(vec![1, 3, 6, 1, 2, 1, 1, sub, 0]),
            Value::Null,
        )],
    ))
}

/// The scoped PDU of an SNMPv3 answer.
fn v3_answer(e: &Engine<(), ()>, user: &str, context: &[u8], pdu: Pdu) -> Option<ScopedPdu> {
    v3_scoped_answer(e, &v3_request_in(user, context, pdu))
}

fn v3_scoped_answer(e: &Engine<(), ()>, req: &[u8]) -> Option<ScopedPdu> {
    let mut out = Vec::new();
    let src = SocketAddr::from(([127, 0, 0, 1], 9));
    match e.process(src, req, &mut out) {
        Action::Send => {}
        _ => return None,
    }
    match V3Message::decode(&out).unwrap().0.data {
        ScopedPduData::Plain(s) => Some(s),
        ScopedPduData::Encrypted(_) => panic!("encrypted noAuth answer"),
    }
}

fn v2c_answer(e: &Engine<(), ()>, community: &[u8], pdu: Pdu) -> Option<Message> {
    let req = Message {
        version: Version::V2c,
        community: community.to_vec(),
        pdu,
    };
    let mut out = Vec::new();
    let src = SocketAddr::from(([127, 0, 0, 1], 9));
    match e.process(src, &req.to_bytes(), &mut out) {
        Action::Send => Some(Message::decode(&out).unwrap()),
        _ => None,
    }
}

fn first_value(pdu: &Pdu) -> (&Oid, &Value, ErrorStatus) {
    let (Pdu::Response(b) | Pdu::Report(b)) = pdu else {
        panic!("not a response: {pdu:?}")
    };
    (&b.varbinds[0].oid, &b.varbinds[0].value, b.error_status)
}

#[test]
fn v3_context_answers_from_its_own_objects_and_names_itself() {
    let e = context_engine(ContextMatch::default());
    let s = v3_answer(&e, "n", b"leaf01", get_sys(5)).unwrap();
    assert_eq!(s.context_name, b"leaf01");
    assert_eq!(first_value(&s.pdu).1, &Value::Integer(5));
    // The node's object set has no sysDescr; the default context has.
    let s = v3_answer(&e, "n", b"leaf01", get_sys(1)).unwrap();
    assert_eq!(first_value(&s.pdu).1, &Value::NoSuchObject);
    let s = v3_answer(&e, "n", b"", get_sys(1)).unwrap();
    assert_eq!(first_value(&s.pdu).1, &Value::Integer(1));
}

#[test]
fn v3_unknown_context_is_reported_with_its_name() {
    let e = context_engine(ContextMatch::default());
    // "n" may use the contexts starting with "leaf": one of them that
    // does not exist is reported.
    let s = v3_answer(&e, "n", b"leafnosuch", get_sys(5)).unwrap();
    assert_eq!(s.context_name, b"leafnosuch");
    let (oid, value, _) = first_value(&s.pdu);
    assert!(matches!(s.pdu, Pdu::Report(_)));
    assert_eq!(oid.as_slice(), &[1, 3, 6, 1, 6, 3, 12, 1, 5, 0]);
    assert_eq!(value, &Value::Counter32(1));
    assert_eq!(SnmpStats::load(&e.stats.unknown_contexts), 1);
    // Outside its access, an unknown context and a real one get the same
    // authorizationError (no oracle of which contexts exist).
    for context in [&b"nosuch"[..], b"0002c90300a1b2c3"] {
        let s = v3_answer(&e, "n", context, get_sys(5)).unwrap();
        assert!(matches!(s.pdu, Pdu::Response(_)));
        assert_eq!(first_value(&s.pdu).2, ErrorStatus::AuthorizationError);
    }
    assert_eq!(SnmpStats::load(&e.stats.unknown_contexts), 1);
}

/// The response carries the request's contextEngineID back (as net-snmp's
/// snmpd does), so that a manager naming another contextEngineID
/// (`snmpget -E`) takes the answer as its own; an empty one gets this
/// engine's.
#[test]
fn v3_response_carries_the_requests_context_engine_id() {
    let e = context_engine(ContextMatch::default());
    let foreign = [0x80, 0, 0, 0, 9, 0xde, 0xad];
    let s = v3_scoped_answer(&e, &v3_request_scoped("n", &foreign, b"", get_sys(1))).unwrap();
    assert_eq!(s.context_engine_id, foreign);
    assert_eq!(first_value(&s.pdu).1, &Value::Integer(1));
    let s = v3_scoped_answer(&e, &v3_request_scoped("n", b"", b"", get_sys(1))).unwrap();
    assert_eq!(s.context_engine_id, ENGINE);
    let s = v3_answer(&e, "n", b"", get_sys(1)).unwrap();
    assert_eq!(s.context_engine_id, ENGINE);
}

#[test]
fn vacm_context_prefix_and_exact_match() {
    let e = context_engine(ContextMatch::default());
    let denied = |user: &str, context: &[u8]| {
        let s = v3_answer(&e, user, context, get_sys(5)).unwrap();
        first_value(&s.pdu).2 == ErrorStatus::AuthorizationError
    };
    // "g": exact "" and prefix "leaf".
    assert!(!denied("n", b"leaf02"));
    assert!(denied("n", b"0002c90300a1b2c3"));
    // The shorthands govern exact "" here: no node context.
    assert!(denied("ro", b"leaf01"));
    assert!(!denied("ro", b""));
    let all = context_engine(ContextMatch::all());
    let s = v3_answer(&all, "ro", b"0002c90300a1b2c3", get_sys(5)).unwrap();
    assert_eq!(first_value(&s.pdu).1, &Value::Integer(5));
}

#[test]
fn community_at_context() {
    let e = context_engine(ContextMatch::all());
    let m = v2c_answer(&e, b"public@leaf01", get_sys(5)).unwrap();
    assert_eq!(m.community, b"public@leaf01");
    assert_eq!(first_value(&m.pdu).1, &Value::Integer(5));
    // A bad community: the same failure as without a context.
    assert!(v2c_answer(&e, b"wrong@leaf01", get_sys(5)).is_none());
    assert_eq!(SnmpStats::load(&e.stats.in_bad_community_names), 1);
    // An unknown context: counted and dropped, as net-snmp does.
    assert!(v2c_answer(&e, b"public@nosuch", get_sys(5)).is_none());
    assert_eq!(SnmpStats::load(&e.stats.unknown_contexts), 1);
    assert_eq!(SnmpStats::load(&e.stats.in_bad_community_names), 1);
    assert_eq!(SnmpStats::load(&e.stats.in_bad_community_uses), 0);
    // A community whose access does not reach node contexts: refused as
    // any other access it does not have.
    let e = context_engine(ContextMatch::default());
    assert!(v2c_answer(&e, b"public@leaf01", get_sys(5)).is_none());
    assert_eq!(SnmpStats::load(&e.stats.in_bad_community_uses), 1);
    assert!(v2c_answer(&e, b"public", get_sys(1)).is_some());
}
