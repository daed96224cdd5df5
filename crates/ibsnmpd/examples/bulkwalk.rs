//! A minimal, fast GetBulk walker used by scripts/bench-walk.sh, so that the
//! benchmark measures the agents rather than net-snmp's client-side parsing
//! and printing.
//!
//! Usage: bulkwalk HOST:PORT COMMUNITY ROOT_OID [MAX_REPETITIONS] [PASSES]
//! Prints one line per pass: `varbinds=N seconds=S vbps=R`.

use std::net::UdpSocket;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use snmp::message::{Message, Version};
use snmp::oid::Oid;
use snmp::pdu::{BulkBody, Pdu};
use snmp::value::{Value, VarBind};

mod common;

fn main() -> ExitCode {
    common::main("bulkwalk", run)
}

fn run() -> Result<(), String> {
    // $BULKWALK_TIMEOUT (seconds, default 2): longer for an agent under
    // valgrind, which would otherwise be sent retries and count them.
    let timeout = std::env::var("BULKWALK_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let (sock, community, args) = common::connect(
        "bulkwalk HOST:PORT COMMUNITY ROOT_OID [MAX_REP] [PASSES]",
        3,
        Duration::from_secs(timeout),
    )?;
    let root: Oid = args[0].parse().map_err(|e| format!("{e}"))?;
    let max_rep: i32 = args
        .get(1)
        .map(|s| s.parse())
        .transpose()
        .map_err(|_| "bad MAX_REP")?
        .unwrap_or(50);
    let passes: u32 = args
        .get(2)
        .map(|s| s.parse())
        .transpose()
        .map_err(|_| "bad PASSES")?
        .unwrap_or(1);

    let mut buf = vec![0u8; 65536];
    let mut request_id: i32 = 1;
    for _ in 0..passes {
        let start = Instant::now();
        let mut count: u64 = 0;
        // Datagrams and octets each way, for the kernel floor (udpfloor).
        let (mut datagrams, mut sent, mut received) = (0u64, 0usize, 0usize);
        let mut cursor = root.clone();
        'walk: loop {
            request_id = request_id.wrapping_add(1) & 0x7fff_ffff;
            let msg = Message {
                version: Version::V2c,
                community: community.clone(),
                pdu: Pdu::GetBulkRequest(BulkBody {
                    request_id,
                    non_repeaters: 0,
                    max_repetitions: max_rep,
                    varbinds: vec![VarBind::new(cursor.clone(), Value::Null)],
                }),
            };
            let bytes = msg.to_bytes();
            let (resp, n) = exchange(&sock, &bytes, &mut buf, request_id)?;
            datagrams += 1;
            sent += bytes.len();
            received += n;
            let vbs = resp.pdu.varbinds();
            if vbs.is_empty() {
                return Err("empty response".into());
            }
            for vb in vbs {
                if vb.value == Value::EndOfMibView || !vb.oid.starts_with(root.as_slice()) {
                    break 'walk;
                }
                if vb.oid <= cursor {
                    return Err(format!("OID not increasing: {} after {}", vb.oid, cursor));
                }
                count += 1;
                cursor = vb.oid.clone();
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let per = |octets: usize| octets as u64 / datagrams.max(1);
        println!(
            "varbinds={count} seconds={secs:.4} vbps={:.0} datagrams={datagrams} request_octets={} response_octets={}",
            count as f64 / secs.max(1e-9),
            per(sent),
            per(received)
        );
    }
    Ok(())
}

/// The response to request `id` and its size on the wire.
fn exchange(
    sock: &UdpSocket,
    req: &[u8],
    buf: &mut [u8],
    id: i32,
) -> Result<(Message, usize), String> {
    for _ in 0..3 {
        sock.send(req).map_err(|e| e.to_string())?;
        while let Ok(n) = sock.recv(buf) {
            let m = Message::decode(buf.get(..n).unwrap_or_default())
                .map_err(|e| format!("bad response: {e}"))?;
            if m.pdu.request_id() == Some(id) {
                return Ok((m, n));
            }
        }
    }
    Err("timeout".into())
}
