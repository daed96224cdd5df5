use std::time::Duration;

use super::*;
use crate::message::{Message, Version};
use crate::pdu::Pdu;
use crate::value::Value;

const COLD_START: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5, 1];
const LINK_DOWN: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5, 3];
const LINK_UP: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 5, 4];
/// ibSmTrapOutOfService = ibSmGenericTrapsPrefix(.. ibSmGenericTraps 0) 2.
const OUT_OF_SERVICE: &[u32] = &[1, 3, 6, 1, 3, 117, 7, 3, 1, 0, 2];

#[test]
fn v2_varbinds_start_with_uptime_and_trap_oid() {
    let n = Notification::new(
        LINK_DOWN,
        vec![VarBind::new(
            Oid::from_slice(&[1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 3]),
            Value::Integer(3),
        )],
    );
    let v = n.v2_varbinds(42);
    assert_eq!(v[0].oid.as_slice(), SYS_UP_TIME_0);
    assert_eq!(v[0].value, Value::TimeTicks(42));
    assert_eq!(v[1].oid.as_slice(), SNMP_TRAP_OID_0);
    assert_eq!(v[1].value, Value::ObjectId(Oid::from_slice(LINK_DOWN)));
    assert_eq!(v.len(), 3);
}

#[test]
fn rfc3584_translation() {
    let ip = Ipv4Addr::new(10, 0, 0, 1);
    let t = Notification::new(COLD_START, vec![]).to_v1(7, ip);
    assert_eq!(t.enterprise.as_slice(), SNMP_TRAPS);
    assert_eq!((t.generic_trap, t.specific_trap, t.time_stamp), (0, 0, 7));
    assert_eq!(t.agent_addr, [10, 0, 0, 1]);
    let t = Notification::new(LINK_DOWN, vec![]).to_v1(7, ip);
    assert_eq!(t.generic_trap, 2);
    // Next-to-last 0 is dropped with the last sub-identifier.
    let vbs = vec![
        VarBind::new(Oid::from_slice(&[1, 3, 6, 1, 4, 1, 1]), Value::Integer(1)),
        VarBind::new(Oid::from_slice(&[1, 3, 6, 1, 4, 1, 2]), Value::Counter64(1)),
    ];
    let t = Notification::new(OUT_OF_SERVICE, vbs).to_v1(7, ip);
    assert_eq!(t.enterprise.as_slice(), &[1, 3, 6, 1, 3, 117, 7, 3, 1]);
    assert_eq!((t.generic_trap, t.specific_trap), (6, 2));
    assert_eq!(t.varbinds.len(), 1, "Counter64 removed");
    // Without the 0 only the last is removed.
    let t = Notification::new(&[1, 3, 6, 1, 4, 1, 9, 5], vec![]).to_v1(0, ip);
    assert_eq!(t.enterprise.as_slice(), &[1, 3, 6, 1, 4, 1, 9]);
    assert_eq!(t.specific_trap, 5);
    // snmpTrapEnterprise.0 names a generic trap's enterprise.
    let e = Oid::from_slice(&[1, 3, 6, 1, 4, 1, 99]);
    let vb = VarBind::new(
        Oid::from_slice(SNMP_TRAP_ENTERPRISE_0),
        Value::ObjectId(e.clone()),
    );
    let t = Notification::new(COLD_START, vec![vb]).to_v1(0, ip);
    assert_eq!(t.enterprise, e);
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Answers `m`, an SNMPv2c InformRequest for `trap`, as a receiver.
async fn acknowledge(rx: &UdpSocket, m: Message, from: SocketAddr, trap: &[u32]) {
    let Pdu::InformRequest(body) = m.pdu else {
        panic!("not an inform")
    };
    assert_eq!(
        body.varbinds[1].value,
        Value::ObjectId(Oid::from_slice(trap))
    );
    let resp = Message {
        version: Version::V2c,
        community: m.community,
        pdu: Pdu::Response(body),
    };
    rx.send_to(&resp.to_bytes(), from).await.unwrap();
}

/// An inform is retried until answered; a trap is sent once; a
/// receiver that never answers gets retries then the inform is dropped.
#[test]
fn informs_retry_until_acknowledged() {
    rt().block_on(async {
        let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let dead = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let cfg = OriginatorConfig {
            sinks: vec![
                inform_sink(&rx, Duration::from_millis(200), 3),
                inform_sink(&dead, Duration::from_millis(20), 2),
            ],
            ..OriginatorConfig::default()
        };
        let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
        assert!(n.notify(Notification::new(COLD_START, vec![])));
        let mut buf = vec![0u8; 2000];
        // Ignore the first copy: the originator must send it again.
        let (len, _) = rx.recv_from(&mut buf).await.unwrap();
        let first = Message::decode(&buf[..len]).unwrap();
        let (len, from) = rx.recv_from(&mut buf).await.unwrap();
        let again = Message::decode(&buf[..len]).unwrap();
        assert_eq!(first, again);
        acknowledge(&rx, again, from, COLD_START).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let s = n.stats();
        assert_eq!(NotifyStats::get(&s.informs_sent), 2);
        assert_eq!(NotifyStats::get(&s.informs_acked), 1);
        assert_eq!(NotifyStats::get(&s.informs_dropped), 1);
        assert!(NotifyStats::get(&s.inform_retries) >= 3);
    });
}

/// Sends `notifications` coldStarts to 20 receivers of one socket,
/// each an inform of (`timeout`, `retries`), under `cfg`'s caps: the
/// datagrams received until 500 ms pass without one, and the
/// receivers counted as capped.
fn capped_run(
    cfg: OriginatorConfig,
    timeout: Duration,
    retries: u32,
    notifications: usize,
) -> (usize, u64) {
    rt().block_on(async {
        let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let inform = inform_sink(&rx, timeout, retries);
        let cfg = OriginatorConfig {
            sinks: vec![inform; 20],
            ..cfg
        };
        let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
        for _ in 0..notifications {
            assert!(n.notify(Notification::new(COLD_START, vec![])));
        }
        let mut buf = vec![0u8; 2000];
        let mut received = 0;
        while let Ok(Ok(_)) =
            tokio::time::timeout(Duration::from_millis(500), rx.recv_from(&mut buf)).await
        {
            received += 1;
        }
        (received, NotifyStats::get(&n.stats().capped))
    })
}

/// One notification causes at most `max_datagrams_per_notification`
/// datagrams, first sends and retries together; informs past
/// `max_outstanding_informs` are not sent. Both counted in `capped`.
#[test]
fn datagrams_per_notification_and_outstanding_informs_are_capped() {
    let cfg = OriginatorConfig {
        max_datagrams_per_notification: 30,
        max_outstanding_informs: 25,
        ..OriginatorConfig::default()
    };
    // The first inform takes all 30 (1 + 29 retries), the other 19
    // receivers get nothing.
    let run = capped_run(cfg.clone(), Duration::from_millis(10), 255, 1);
    assert_eq!(run, (30, 19));
    // Two notifications of 20 informs each: 25 outstanding in all.
    let cfg = OriginatorConfig {
        max_datagrams_per_notification: DEFAULT_MAX_DATAGRAMS_PER_NOTIFICATION,
        ..cfg
    };
    let run = capped_run(cfg, Duration::from_secs(60), 0, 2);
    assert_eq!(run, (25, 15));
}

/// Receivers chosen per notification: each gets what the source names
/// at that moment; an inform to one is acknowledged through the queue
/// kept for it.
#[test]
fn targets_are_chosen_per_notification() {
    /// The sink for linkDown only.
    #[derive(Debug)]
    struct Chosen(Sink);
    impl SinkSource for Chosen {
        fn sinks(&self, n: &Notification) -> Vec<Sink> {
            match n.trap_oid.as_slice() {
                LINK_DOWN => vec![self.0.clone()],
                _ => Vec::new(),
            }
        }
    }
    rt().block_on(async {
        let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let inform = inform_sink(&rx, Duration::from_secs(30), 1);
        let cfg = OriginatorConfig {
            targets: Some(Arc::new(Chosen(inform))),
            ..OriginatorConfig::default()
        };
        let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
        // Nowhere to go: nothing sent.
        n.notify(Notification::new(COLD_START, vec![]));
        n.notify(Notification::new(LINK_DOWN, vec![]));
        let mut buf = vec![0u8; 2000];
        let (len, from) = rx.recv_from(&mut buf).await.unwrap();
        let m = Message::decode(&buf[..len]).unwrap();
        acknowledge(&rx, m, from, LINK_DOWN).await;
        let s = n.stats();
        while NotifyStats::get(&s.informs_acked) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(NotifyStats::get(&s.informs_sent), 1);
        assert_eq!(NotifyStats::get(&s.traps_sent), 0);
    });
}

#[test]
fn storm_control_counts_suppressed() {
    rt().block_on(async {
        let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let cfg = OriginatorConfig {
            storm: StormControl {
                max_per_interval: 3,
                interval: Duration::from_secs(60),
                ..StormControl::default()
            },
            ..one_sink(
                &rx,
                SinkKind::TrapV1 {
                    community: b"public".to_vec(),
                },
            )
        };
        let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
        for _ in 0..10 {
            n.notify(Notification::new(LINK_DOWN, vec![]).with_source("a"));
        }
        n.notify(Notification::new(LINK_DOWN, vec![]).with_source("b"));
        n.notify(Notification::new(COLD_START, vec![]));
        let mut buf = vec![0u8; 2000];
        for _ in 0..5 {
            let (len, _) = rx.recv_from(&mut buf).await.unwrap();
            let m = Message::decode(&buf[..len]).unwrap();
            assert!(matches!(m.pdu, Pdu::TrapV1(_)));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(NotifyStats::get(&n.stats().suppressed), 7);
        assert_eq!(NotifyStats::get(&n.stats().traps_sent), 5);
    });
}

/// An SNMPv2c trap sink at `rx`.
/// An SNMPv2c inform receiver on `rx`, community "public".
fn inform_sink(rx: &UdpSocket, timeout: Duration, retries: u32) -> Sink {
    Sink {
        addr: rx.local_addr().unwrap(),
        kind: SinkKind::InformV2c {
            community: b"public".to_vec(),
            timeout,
            retries,
        },
    }
}

fn v2c_sink(rx: &UdpSocket) -> Sink {
    Sink {
        addr: rx.local_addr().unwrap(),
        kind: SinkKind::TrapV2c {
            community: b"public".to_vec(),
        },
    }
}

/// One sink of `kind` on `rx`, the rest default.
fn one_sink(rx: &UdpSocket, kind: SinkKind) -> OriginatorConfig {
    OriginatorConfig {
        sinks: vec![Sink {
            addr: rx.local_addr().unwrap(),
            kind,
        }],
        ..OriginatorConfig::default()
    }
}

/// An originator sending SNMPv2c traps to a socket of its own (returned
/// first), its storm control letting two notifications of a source
/// through per `interval` and sending the state held back after `quiet`.
async fn storm_originator(
    interval: Duration,
    quiet: Duration,
) -> (UdpSocket, Notifier, JoinHandle<()>) {
    let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let config = OriginatorConfig {
        sinks: vec![v2c_sink(&rx)],
        storm: StormControl {
            max_per_interval: 2,
            interval,
            quiet,
        },
        ..OriginatorConfig::default()
    };
    let (n, task) = start(config, Arc::new(|| 5)).await.unwrap();
    (rx, n, task)
}

/// linkUp or linkDown from `source`, reporting its "link" state.
fn link_state(up: bool, source: &str) -> Notification {
    let oid = if up { LINK_UP } else { LINK_DOWN };
    Notification::new(oid, vec![])
        .with_source(source)
        .with_state("link")
}

/// A burst that ends with the link up, then a quiet source: the held
/// linkUp goes out once the source has been quiet for `quiet`, long
/// before the hour-long interval ends, and the interval's limit still
/// holds for a second burst (whose final state goes out the same way).
#[test]
fn storm_control_sends_the_state_held_back_once_the_source_is_quiet() {
    rt().block_on(async {
        let (rx, n, _task) =
            storm_originator(Duration::from_secs(3600), Duration::from_millis(100)).await;
        let link = |up: bool| link_state(up, "a");
        let mut buf = vec![0u8; 2000];
        let mut next = async || {
            // A safety net for a broken build, not a timing assertion:
            // the interval is an hour.
            let (len, _) = tokio::time::timeout(Duration::from_secs(600), rx.recv_from(&mut buf))
                .await
                .expect("the held-back state before the interval's end")
                .unwrap();
            let m = Message::decode(&buf[..len]).unwrap();
            let Pdu::SnmpV2Trap(b) = m.pdu else { panic!() };
            b.varbinds[1].value.clone()
        };
        let up = Value::ObjectId(Oid::from_slice(LINK_UP));
        let down = Value::ObjectId(Oid::from_slice(LINK_DOWN));
        // down, up (sent), then 19 more flaps ending up (held).
        for i in 0..40 {
            n.notify(link(i % 2 == 1));
        }
        assert_eq!(next().await, down);
        assert_eq!(next().await, up);
        // The manager's last word was up and the burst ended up: the
        // held linkUp is what it has, so nothing more. A burst ending
        // down then: its linkDown once quiet.
        for i in 0..5 {
            n.notify(link(i % 2 == 1));
        }
        assert_eq!(next().await, down, "the final state, held back");
        assert_eq!(NotifyStats::get(&n.stats().suppressed), 38 + 5);
        // Up again, still within the interval: held, then sent.
        n.notify(link(true));
        assert_eq!(next().await, up);
        assert_eq!(NotifyStats::get(&n.stats().traps_sent), 4);
    });
}

/// A storm that ends with the link up: the manager's last word is
/// linkUp, sent as the window ends; a source whose last held-back state
/// is what the manager already has gets nothing more; events are only
/// counted.
#[test]
fn storm_control_sends_the_state_held_back_when_the_window_ends() {
    rt().block_on(async {
        let quiet = StormControl::default().quiet;
        let (rx, n, _task) = storm_originator(Duration::from_millis(600), quiet).await;
        let link = link_state;
        // "a": up, down (sent), up, down, up (held): it ends up, the
        // manager's last word was down.
        for i in 0..5 {
            n.notify(link(i % 2 == 0, "a"));
        }
        // "b": down (sent), up (sent), down (held), up (held): the
        // manager's last is up, nothing more to send.
        for i in 0..4 {
            n.notify(link(i % 2 == 1, "b"));
        }
        // An event with no state, held back: only counted.
        for _ in 0..3 {
            n.notify(Notification::new(COLD_START, vec![]).with_source("c"));
        }
        let mut got = Vec::new();
        let mut buf = vec![0u8; 2000];
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        while let Ok(Ok((len, _))) = tokio::time::timeout_at(deadline, rx.recv_from(&mut buf)).await
        {
            let m = Message::decode(&buf[..len]).unwrap();
            let Pdu::SnmpV2Trap(b) = m.pdu else { panic!() };
            got.push(b.varbinds[1].value.clone());
        }
        let up = Value::ObjectId(Oid::from_slice(LINK_UP));
        let down = Value::ObjectId(Oid::from_slice(LINK_DOWN));
        let cold = Value::ObjectId(Oid::from_slice(COLD_START));
        // 2 + 2 + 2 within the windows, then a's linkUp.
        assert_eq!(got.len(), 7, "{got:?}");
        assert_eq!(got.last(), Some(&up));
        assert_eq!(got.iter().filter(|v| **v == cold).count(), 2);
        assert_eq!(got.iter().filter(|v| **v == down).count(), 2);
        assert_eq!(NotifyStats::get(&n.stats().suppressed), 6);
    });
}

/// Writes the contextName it is given as the datagram (after "ctx:").
struct ContextEcho;

impl MessageWrapper for ContextEcho {
    fn wrap(&self, _pdu: &Pdu, context: &[u8]) -> Result<Vec<u8>, String> {
        Ok([&b"ctx:"[..], context].concat())
    }

    fn unwrap_response(&self, _datagram: &[u8]) -> Option<Pdu> {
        None
    }
}

/// A notification about a context hands the wrapper (SNMPv3) its name.
#[test]
fn a_notification_names_its_context_to_the_wrapper() {
    rt().block_on(async {
        let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let cfg = one_sink(
            &rx,
            SinkKind::Wrapped {
                wrapper: Arc::new(ContextEcho),
                confirm: None,
            },
        );
        let (n, _task) = start(cfg, Arc::new(|| 5)).await.unwrap();
        assert!(n.notify(Notification::new(LINK_DOWN, vec![]).with_context("leaf01")));
        assert!(n.notify(Notification::new(COLD_START, vec![])));
        let mut buf = vec![0u8; 64];
        let (len, _) = rx.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..len], b"ctx:leaf01");
        let (len, _) = rx.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..len], b"ctx:", "the default context is empty");
    });
}
