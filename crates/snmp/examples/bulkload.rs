//! Engine throughput over real UDP: serves a 10,000-row, 4-column table on
//! loopback and walks it with GetBulk from client threads in the same
//! process, printing PDUs/s and varbinds/s.
//!
//! `cargo run --release -p snmp --example bulkload -- [SECONDS] [CLIENTS] [MAXREP] [PORT]`
//!
//! With a PORT, it only serves (for net-snmp's snmpbulkwalk) until killed.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snmp::agent::{Agent, AgentConfig, ApplyError, SnmpStats};
use snmp::message::{Message, Version};
use snmp::oid::Oid;
use snmp::pdu::{BulkBody, Pdu};
use snmp::value::{Value, VarBind};

mod port_table;

use port_table::{View, ENTRY};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let clients: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let maxrep: i32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(50);
    let fixed_port: Option<u16> = args.get(4).and_then(|s| s.parse().ok());

    let rows: View = port_table::view(10_000);
    let d = port_table::dispatcher();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let cfg = AgentConfig {
        listen: vec![format!("127.0.0.1:{}", fixed_port.unwrap_or(0))
            .parse()
            .expect("addr")],
        workers_per_socket: 1,
        ..AgentConfig::default()
    };
    let controller = Arc::new(|_c: Vec<()>| async { Ok::<(), ApplyError>(()) });
    let agent = rt
        .block_on(Agent::bind(
            cfg,
            Arc::new(d),
            move || Arc::clone(&rows),
            controller,
            SnmpStats::new(),
        ))
        .expect("bind");
    let addr = agent.local_addrs()[0];
    rt.spawn(agent.run());
    if fixed_port.is_some() {
        println!("serving on {addr}");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    let pdus = Arc::new(AtomicU64::new(0));
    let vbs = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for c in 0..clients {
        let (stop, pdus, vbs) = (stop.clone(), pdus.clone(), vbs.clone());
        handles.push(std::thread::spawn(move || {
            let s = UdpSocket::bind("127.0.0.1:0").expect("client socket");
            s.connect(addr).expect("connect");
            s.set_read_timeout(Some(Duration::from_secs(2))).ok();
            let mut buf = vec![0u8; 65536];
            let mut cur = Oid::from_slice(&ENTRY);
            let mut rid = (c as i32) << 24;
            while !stop.load(Ordering::Relaxed) {
                rid = rid.wrapping_add(1);
                let req = Message {
                    version: Version::V2c,
                    community: b"public".to_vec(),
                    pdu: Pdu::GetBulkRequest(BulkBody {
                        request_id: rid,
                        non_repeaters: 0,
                        max_repetitions: maxrep,
                        varbinds: vec![VarBind::new(cur.clone(), Value::Null)],
                    }),
                };
                s.send(&req.to_bytes()).expect("send");
                let Ok(n) = s.recv(&mut buf) else { continue };
                let m = Message::decode(&buf[..n]).expect("decode");
                let Pdu::Response(b) = m.pdu else {
                    panic!("not a response")
                };
                pdus.fetch_add(1, Ordering::Relaxed);
                vbs.fetch_add(b.varbinds.len() as u64, Ordering::Relaxed);
                match b.varbinds.last() {
                    Some(vb) if vb.oid.starts_with(&ENTRY) && !vb.value.is_exception() => {
                        cur = vb.oid.clone()
                    }
                    _ => cur = Oid::from_slice(&ENTRY),
                }
            }
        }));
    }
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().ok();
    }
    let dt = t0.elapsed().as_secs_f64();
    let p = pdus.load(Ordering::Relaxed) as f64;
    let v = vbs.load(Ordering::Relaxed) as f64;
    println!(
        "{clients} clients, max-repetitions {maxrep}: {:.0} GetBulk PDUs/s, {:.0} varbinds/s",
        p / dt,
        v / dt
    );
}
