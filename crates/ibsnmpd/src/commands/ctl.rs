//! `ibsnmpd ctl`: one command line to a running agent's control socket
//! ([`crate::services::control_socket`] serves it), one answer line back.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::UsageError;
use crate::cli::CtlArgs;
use crate::services::control_socket::quote_word;

/// `ibsnmpd ctl`: one command to a running agent's control socket.
pub fn run(args: &CtlArgs) -> Result<()> {
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 86_400.0) {
        return Err(UsageError(format!(
            "--timeout {}: expected a positive number of seconds",
            args.timeout
        ))
        .into());
    }
    client(
        &args.socket,
        &args.command,
        std::time::Duration::from_secs_f64(args.timeout),
    )
}

/// `ibsnmpd ctl --socket PATH COMMAND...`: sends one command, prints the
/// answer; an `error:` answer is an error (exit 1).
pub fn client(socket: &Path, words: &[String], timeout: Duration) -> Result<()> {
    println!("{}", request(socket, words, timeout)?);
    Ok(())
}

/// Sends one command to the control socket at `socket` and returns its
/// answer line (`ok ...`); an `error:` answer is an error.
pub fn request(socket: &Path, words: &[String], timeout: Duration) -> Result<String> {
    let line = words
        .iter()
        .map(|w| quote_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    let mut stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| {
        UsageError(format!(
            "--socket {}: cannot connect: {e} (is ibsnmpd running with --control-socket?)",
            socket.display()
        ))
    })?;
    stream
        .set_read_timeout(Some(timeout))
        .context("cannot set a timeout")?;
    stream
        .write_all(format!("{line}\n").as_bytes())
        .context("cannot send the command")?;
    stream
        .shutdown(std::net::Shutdown::Write)
        .context("cannot send the command")?;
    let mut answer = String::new();
    BufReader::new(&stream)
        .read_line(&mut answer)
        .context("no answer from the control socket")?;
    let answer = answer.trim_end();
    if answer.is_empty() {
        anyhow::bail!("the control socket closed without an answer");
    }
    if let Some(msg) = answer.strip_prefix("error: ") {
        anyhow::bail!("{msg}");
    }
    Ok(answer.to_string())
}
