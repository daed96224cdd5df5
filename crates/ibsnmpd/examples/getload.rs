//! An open-loop SNMPv2c GET load: requests go out at a fixed rate whatever
//! the answers do (as many managers polling at once would), and each
//! answer's latency is taken from its own send time, so a slow agent cannot
//! hide its queueing behind a slower client (no coordinated omission).
//! Used by scripts/bench-latency.sh.
//!
//! Usage: getload HOST:PORT COMMUNITY RATE SECONDS OID...
//! Prints `sent=N answered=N lost=N p50_us=.. p90_us=.. p99_us=.. p999_us=.. max_us=..`.
//!
//! With `GETLOAD_COMMUNITIES=FILE` in the environment, request i uses line
//! i (cycling) of FILE as its community instead of COMMUNITY: e.g. one
//! `public@NODE` per node context, to ask many contexts in turn
//! (scripts/bench-context-cost.sh).

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snmp::message::{Message, Version};
use snmp::oid::Oid;
use snmp::pdu::{Pdu, PduBody};
use snmp::value::{Value, VarBind};

mod common;

fn main() -> ExitCode {
    common::main("getload", run)
}

fn run() -> Result<(), String> {
    let (sock, community, args) = common::connect(
        "getload HOST:PORT COMMUNITY RATE SECONDS OID...",
        5,
        Duration::from_millis(100),
    )?;
    let rate: f64 = args[0].parse().map_err(|_| "bad RATE")?;
    let secs: f64 = args[1].parse().map_err(|_| "bad SECONDS")?;
    let oids: Vec<Oid> = args[2..]
        .iter()
        .map(|o| o.parse().map_err(|e| format!("{o}: {e}")))
        .collect::<Result<_, _>>()?;
    let communities: Vec<Vec<u8>> = match std::env::var_os("GETLOAD_COMMUNITIES") {
        Some(f) => std::fs::read_to_string(&f)
            .map_err(|e| format!("{}: {e}", f.to_string_lossy()))?
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.as_bytes().to_vec())
            .collect(),
        None => vec![community],
    };
    if communities.is_empty() {
        return Err("GETLOAD_COMMUNITIES names an empty file".into());
    }
    if !(rate > 0.0 && secs > 0.0) {
        return Err("RATE and SECONDS must be positive".into());
    }

    let sock = Arc::new(sock);
    // request id -> send time
    let pending: Arc<Mutex<HashMap<i32, Instant>>> = Arc::default();
    let latencies: Arc<Mutex<Vec<u64>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));

    let receiver = {
        let (sock, pending, latencies, done) = (
            Arc::clone(&sock),
            Arc::clone(&pending),
            Arc::clone(&latencies),
            Arc::clone(&done),
        );
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            while !done.load(Ordering::Relaxed) {
                let Ok(n) = sock.recv(&mut buf) else { continue };
                let now = Instant::now();
                let Ok(m) = Message::decode(&buf[..n]) else {
                    continue;
                };
                if let Pdu::Response(b) = m.pdu {
                    let sent = pending
                        .lock()
                        .ok()
                        .and_then(|mut p| p.remove(&b.request_id));
                    if let (Some(t), Ok(mut l)) = (sent, latencies.lock()) {
                        l.push(now.duration_since(t).as_micros() as u64);
                    }
                }
            }
        })
    };

    let period = Duration::from_secs_f64(1.0 / rate);
    let total = (rate * secs) as u64;
    let start = Instant::now();
    let mut sent = 0u64;
    for i in 0..total {
        let due = start + period.mul_f64(i as f64);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        let id = (i % i32::MAX as u64) as i32 + 1;
        let oid = oids[i as usize % oids.len()].clone();
        let m = Message {
            version: Version::V2c,
            community: communities[i as usize % communities.len()].clone(),
            pdu: Pdu::GetRequest(PduBody::request(id, vec![VarBind::new(oid, Value::Null)])),
        };
        if let Ok(mut p) = pending.lock() {
            p.insert(id, Instant::now());
        }
        if sock.send(&m.to_bytes()).is_ok() {
            sent += 1;
        }
    }
    // Late answers: up to a second.
    std::thread::sleep(Duration::from_secs(1));
    done.store(true, Ordering::Relaxed);
    let _ = receiver.join();
    let mut l = latencies.lock().map_err(|_| "poisoned")?.clone();
    l.sort_unstable();
    let q = |f: f64| {
        l.get(((l.len() as f64 * f) as usize).min(l.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "sent={sent} answered={} lost={} rate={:.0}/s p50_us={} p90_us={} p99_us={} p999_us={} max_us={}",
        l.len(),
        sent.saturating_sub(l.len() as u64),
        sent as f64 / start.elapsed().as_secs_f64().max(1e-9),
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        l.last().copied().unwrap_or(0)
    );
    Ok(())
}
