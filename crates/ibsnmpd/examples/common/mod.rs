//! What the load examples share: the exit-code wrapper and a socket
//! connected to the agent named on the command line.

use std::net::{ToSocketAddrs, UdpSocket};
use std::process::ExitCode;
use std::time::Duration;

/// Runs `run`, printing its error as `NAME: error` and exiting 1.
pub fn main(name: &str, run: fn() -> Result<(), String>) -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::from(1)
        }
    }
}

/// The arguments after HOST:PORT COMMUNITY, and a UDP socket connected to
/// HOST:PORT with `timeout` on reads; at least `min` arguments or `usage`.
#[allow(dead_code)] // udpfloor speaks plain UDP and connects its own way
pub fn connect(
    usage: &str,
    min: usize,
    timeout: Duration,
) -> Result<(UdpSocket, Vec<u8>, Vec<String>), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < min {
        return Err(format!("usage: {usage}"));
    }
    let target = args[0]
        .to_socket_addrs()
        .map_err(|e| format!("{}: {e}", args[0]))?
        .next()
        .ok_or("no address")?;
    let bind = if target.is_ipv6() {
        "[::1]:0"
    } else {
        "127.0.0.1:0"
    };
    let sock = UdpSocket::bind(bind).map_err(|e| e.to_string())?;
    sock.connect(target).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    Ok((sock, args[1].as_bytes().to_vec(), args[2..].to_vec()))
}
