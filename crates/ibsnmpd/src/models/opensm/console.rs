//! A client of OpenSM's console (`--console loopback|socket`): plain text
//! over TCP, prompt `OpenSM $ `, one client at a time.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const PROMPT: &[u8] = b"OpenSM $ ";

/// Runs one command and returns what OpenSM printed before its next prompt.
pub fn command(addr: SocketAddr, cmd: &str, timeout: Duration) -> io::Result<String> {
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(Duration::from_millis(100)))?;
    let deadline = Instant::now() + timeout;
    read_prompt(&mut s, deadline)?;
    s.write_all(format!("{}\n", cmd.trim()).as_bytes())?;
    let answer = read_prompt(&mut s, deadline)?;
    let _ = s.write_all(b"logout\n");
    Ok(answer)
}

fn read_prompt(s: &mut TcpStream, deadline: Instant) -> io::Result<String> {
    let mut acc = Vec::new();
    let mut buf = [0u8; 4096];
    while !acc.ends_with(PROMPT) {
        if Instant::now() > deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no prompt from the OpenSM console",
            ));
        }
        match s.read(&mut buf) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => acc.extend_from_slice(buf.get(..n).unwrap_or_default()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    acc.truncate(acc.len() - PROMPT.len());
    Ok(String::from_utf8_lossy(&acc).into_owned())
}
