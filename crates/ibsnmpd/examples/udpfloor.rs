//! The kernel's floor under an SNMP agent: a UDP responder that does
//! nothing but answer each datagram with one of a given size, and a client
//! that drives it one request at a time, as the bulk walks do. Its CPU per
//! datagram is what any agent pays the kernel for the same exchange
//! (scripts/bench-walk.sh prints it beside the agents').
//!
//! With WORK_NS the responder also spends that long in user space per
//! datagram (a busy loop on the clock), before it answers: a known amount
//! of user time, against which the split of /proc's CPU figures into user
//! and system time can be checked on a given machine (bench-walk's
//! "accounting check").
//!
//!   udpfloor serve ADDR RESPONSE_OCTETS [WORK_NS]
//!   udpfloor drive ADDR REQUEST_OCTETS COUNT

mod common;

use std::net::UdpSocket;
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    common::main("udpfloor", run)
}

fn number(args: &[String], i: usize, what: &str) -> Result<usize, String> {
    args.get(i)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{what}: expected a number"))
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: udpfloor serve ADDR RESPONSE_OCTETS [WORK_NS] | udpfloor drive ADDR REQUEST_OCTETS COUNT";
    let addr = args.get(1).ok_or(usage)?;
    match args.first().map(String::as_str) {
        Some("serve") => {
            let reply = vec![0x30u8; number(&args, 2, "RESPONSE_OCTETS")?.clamp(1, 65507)];
            let work = match args.get(3) {
                Some(_) => Duration::from_nanos(number(&args, 3, "WORK_NS")? as u64),
                None => Duration::ZERO,
            };
            let sock = UdpSocket::bind(addr).map_err(|e| format!("{addr}: {e}"))?;
            let mut buf = vec![0u8; 65536];
            loop {
                let (_, peer) = sock.recv_from(&mut buf).map_err(|e| e.to_string())?;
                let start = Instant::now();
                while start.elapsed() < work {
                    std::hint::spin_loop();
                }
                let _ = sock.send_to(&reply, peer);
            }
        }
        Some("drive") => {
            let request = vec![0x30u8; number(&args, 2, "REQUEST_OCTETS")?.clamp(1, 65507)];
            let count = number(&args, 3, "COUNT")?;
            let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
            sock.connect(addr).map_err(|e| format!("{addr}: {e}"))?;
            sock.set_read_timeout(Some(Duration::from_secs(2)))
                .map_err(|e| e.to_string())?;
            let mut buf = vec![0u8; 65536];
            let start = Instant::now();
            for _ in 0..count {
                sock.send(&request).map_err(|e| e.to_string())?;
                sock.recv(&mut buf).map_err(|e| e.to_string())?;
            }
            println!(
                "datagrams={count} seconds={:.4}",
                start.elapsed().as_secs_f64()
            );
            Ok(())
        }
        _ => Err(usage.into()),
    }
}
