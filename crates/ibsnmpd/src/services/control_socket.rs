//! The operator control socket (`--control-socket PATH`; its client is
//! [`crate::commands::ctl`]): link flaps and error bursts on the simulated fabric, a
//! sweep on demand, and the fabric's health report (`ibsnmpd health
//! --socket`), one command per line, each answered with one line (`ok ...`
//! or `error: ...`). docs/usage.md is the reference.
//!
//! Commands go to the source thread through [`FabricHandle::control`], the
//! same path as SNMP Sets, so they are serialised with sweeps and Sets.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use ib::model::Snapshot;
use ib::source::ControlOp;
use ib::types::{Guid, PortNum};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tracing::{debug, info, warn};

use crate::config::ConfigError;
use crate::models::fabric_health::Report;
use crate::models::source_thread::FabricHandle;

/// Longest command line accepted (a node description is at most 64 octets).
const MAX_LINE: usize = 1024;
/// Default down time of `link-flap` without SECONDS.
const DEFAULT_FLAP_SECS: f64 = 5.0;
/// Longest flap accepted (as long as the longest sweep interval).
const MAX_FLAP_SECS: f64 = 86_400.0;

/// One line of `help`.
const HELP: &str = "commands: link-flap NODE PORT [SECONDS] | error-burst NODE PORT COUNT | \
sweep | status | health | help; NODE is a node description (quoted if it has spaces), its first word, \
or a GUID (0x...)";

/// A parsed command.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    LinkFlap {
        node: String,
        port: PortNum,
        down_for: Duration,
    },
    ErrorBurst {
        node: String,
        port: PortNum,
        count: u32,
    },
    Sweep,
    Status,
    /// The health report of the published snapshot, as one JSON line.
    Health,
    Help,
}

/// Splits a line into words; `"..."` or `'...'` quote a word with spaces.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&c) = chars.peek() else { break };
        let mut w = String::new();
        if c == '"' || c == '\'' {
            chars.next();
            loop {
                match chars.next() {
                    Some(x) if x == c => break,
                    Some(x) => w.push(x),
                    None => return Err(format!("unterminated {c}quote")),
                }
            }
        } else {
            while let Some(x) = chars.next_if(|x| !x.is_whitespace()) {
                w.push(x);
            }
        }
        words.push(w);
    }
    Ok(words)
}

/// Quotes a word for [`split_words`] when it needs it.
pub fn quote_word(w: &str) -> String {
    if !w.is_empty() && !w.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        w.to_string()
    } else if w.contains('"') {
        format!("'{w}'")
    } else {
        format!("\"{w}\"")
    }
}

fn parse_port(s: &str) -> Result<PortNum, String> {
    s.parse::<u8>()
        .ok()
        .filter(|p| *p != 255)
        .map(PortNum)
        .ok_or_else(|| format!("PORT {s:?}: expected a port number from 0 to 254"))
}

/// Parses one command line.
pub fn parse(line: &str) -> Result<Command, String> {
    let words = split_words(line)?;
    let Some((verb, args)) = words.split_first() else {
        return Err("empty command (try help)".into());
    };
    let arity = |min: usize, max: usize, usage: &str| {
        if args.len() < min || args.len() > max {
            Err(format!("usage: {usage}"))
        } else {
            Ok(())
        }
    };
    match verb.as_str() {
        "link-flap" => {
            arity(2, 3, "link-flap NODE PORT [SECONDS]")?;
            let secs = match args.get(2) {
                None => DEFAULT_FLAP_SECS,
                Some(s) => s
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0 && *x <= MAX_FLAP_SECS)
                    .ok_or_else(|| {
                        format!("SECONDS {s:?}: expected a positive number up to {MAX_FLAP_SECS}")
                    })?,
            };
            Ok(Command::LinkFlap {
                node: args[0].clone(),
                port: parse_port(&args[1])?,
                down_for: Duration::from_secs_f64(secs),
            })
        }
        "error-burst" => {
            arity(3, 3, "error-burst NODE PORT COUNT")?;
            let count = args[2]
                .parse::<u32>()
                .ok()
                .filter(|c| *c > 0)
                .ok_or_else(|| format!("COUNT {:?}: expected a positive number", args[2]))?;
            Ok(Command::ErrorBurst {
                node: args[0].clone(),
                port: parse_port(&args[1])?,
                count,
            })
        }
        "sweep" => arity(0, 0, "sweep").map(|()| Command::Sweep),
        "status" => arity(0, 0, "status").map(|()| Command::Status),
        "health" => arity(0, 0, "health").map(|()| Command::Health),
        "help" => Ok(Command::Help),
        other => Err(format!("unknown command {other:?} (try help)")),
    }
}

/// A node by GUID, by exact description, or by the first word of its
/// description (the host name in `node01 mlx5_0`) when that is unique.
pub fn resolve_node(snap: &Snapshot, key: &str) -> Result<(Guid, String), String> {
    let found = |i: usize| {
        snap.nodes
            .get(i)
            .map(|n| (n.info.node_guid, n.description.clone()))
    };
    if let Ok(g) = key.parse::<Guid>() {
        if let Some(n) = snap.node_by_guid(g).and_then(|i| found(i as usize)) {
            return Ok(n);
        }
    }
    if let Some(i) = snap.nodes.iter().position(|n| n.description == key) {
        if let Some(n) = found(i) {
            return Ok(n);
        }
    }
    let by_name: Vec<usize> = snap
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.description.split_whitespace().next() == Some(key))
        .map(|(i, _)| i)
        .collect();
    match by_name.as_slice() {
        [i] => found(*i).ok_or_else(|| format!("no node {key:?}")),
        [] => Err(format!(
            "no node {key:?} in the current snapshot (give a node description, its first word, or a GUID)"
        )),
        many => Err(format!(
            "{} nodes are named {key:?}: give the full description or the GUID",
            many.len()
        )),
    }
}

/// Carries out one command line; the answer line (without newline).
pub async fn execute(fabric: &FabricHandle, line: &str) -> String {
    match run(fabric, line).await {
        Ok(s) => format!("ok {s}"),
        Err(e) => format!("error: {}", e.replace('\n', " ")),
    }
}

async fn run(fabric: &FabricHandle, line: &str) -> Result<String, String> {
    match parse(line)? {
        Command::Help => Ok(HELP.to_string()),
        Command::Status => {
            let s = fabric.snapshot();
            Ok(format!(
                "sweep {} nodes {} ports {} events {}",
                s.sweep.number,
                s.nodes.len(),
                s.port_count(),
                fabric.events_total()
            ))
        }
        Command::Sweep => fabric.sweep_now().await.map(|n| format!("sweep {n} done")),
        Command::Health => health(fabric),
        Command::LinkFlap {
            node,
            port,
            down_for,
        } => {
            let (guid, desc) = sim_control(fabric, &node, |node| ControlOp::SimLinkFlap {
                node,
                port,
                down_for,
            })
            .await?;
            info!(node = ?desc, %guid, port = port.0, seconds = down_for.as_secs_f64(), "control: link flap");
            Ok(format!(
                "link-flap {} ({guid}) port {} down for {} s",
                quote_word(&desc),
                port.0,
                down_for.as_secs_f64()
            ))
        }
        Command::ErrorBurst { node, port, count } => {
            let (guid, desc) = sim_control(fabric, &node, |node| ControlOp::SimErrorBurst {
                node,
                port,
                count,
            })
            .await?;
            info!(node = ?desc, %guid, port = port.0, count, "control: error burst");
            Ok(format!(
                "error-burst {} ({guid}) port {} {count} symbol errors",
                quote_word(&desc),
                port.0
            ))
        }
    }
}

/// Sends the simulated fabric the operation `op` makes of the node `key`
/// names (`resolve_node`); that node's GUID and description.
async fn sim_control(
    fabric: &FabricHandle,
    key: &str,
    op: impl FnOnce(Guid) -> ControlOp,
) -> Result<(Guid, String), String> {
    let (guid, desc) = resolve_node(&fabric.snapshot(), key)?;
    fabric.control(op(guid)).await?;
    Ok((guid, desc))
}

/// The published snapshot's health report (the agent's tracker evaluated
/// it when it was published), as one line of JSON.
fn health(fabric: &FabricHandle) -> Result<String, String> {
    let published = fabric.published();
    let snap = &published.snapshot;
    if snap.sweep.number == 0 {
        return Err("no sweep has succeeded yet: no fabric to report on".into());
    }
    let h = published
        .extra
        .health
        .as_deref()
        .ok_or("the agent's health tracker has not reported")?;
    let mut report = Report::new(snap, None, h.config.clone(), h.ports.clone());
    report.topology = published.extra.topology.as_ref().and_then(|p| p.0.clone());
    report.routes = published.extra.routes.as_ref().and_then(|p| p.0.clone());
    serde_json::to_string(&report).map_err(|e| format!("cannot encode the report: {e}"))
}

/// The listening control socket; removes its file when dropped.
pub struct ControlSocket {
    path: PathBuf,
}

impl ControlSocket {
    /// Binds `path` (mode 0600) and serves it on the current tokio runtime.
    /// A stale socket file (nobody listening) is replaced; a live one, or a
    /// file that is not a socket, is an error.
    pub fn start(path: &Path, fabric: FabricHandle) -> Result<Self> {
        let err = |m: String| ConfigError(format!("--control-socket {}: {m}", path.display()));
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.file_type().is_socket() {
                return Err(err("exists and is not a socket".into()).into());
            }
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(err("in use by another process".into()).into());
            }
            std::fs::remove_file(path)
                .map_err(|e| err(format!("cannot remove the stale socket: {e}")))?;
        }
        let std_listener = bind_private(path).map_err(|e| err(format!("cannot bind: {e}")))?;
        let me = ControlSocket {
            path: path.to_path_buf(),
        };
        std_listener
            .set_nonblocking(true)
            .map_err(|e| err(e.to_string()))?;
        let listener =
            tokio::net::UnixListener::from_std(std_listener).map_err(|e| err(e.to_string()))?;
        info!(path = %path.display(), "control socket listening");
        tokio::spawn(accept_loop(listener, fabric));
        Ok(me)
    }
}

/// Binds a Unix socket at `path` that only the daemon's user can ever
/// reach (only it may flap links): bound inside a fresh 0700 directory
/// beside `path`, made 0600 there, then renamed into place, so there is no
/// moment when the socket is open to others, whatever the umask.
fn bind_private(path: &Path) -> std::io::Result<std::os::unix::net::UnixListener> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let private = tempfile::Builder::new()
        .prefix(".ibsnmpd-ctl.")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(parent.unwrap_or(Path::new(".")))?;
    let inner = private.path().join("s");
    let listener = std::os::unix::net::UnixListener::bind(&inner)?;
    std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o600))?;
    std::fs::rename(&inner, path)?;
    Ok(listener)
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            debug!(path = %self.path.display(), error = %e, "cannot remove the control socket");
        }
    }
}

async fn accept_loop(listener: tokio::net::UnixListener, fabric: FabricHandle) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(serve_conn(stream, fabric.clone()));
            }
            Err(e) => {
                // Out of descriptors and the like: back off, keep serving.
                warn!(error = %e, "control socket accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// One connection: a command per line, an answer per command, until EOF.
async fn serve_conn(stream: tokio::net::UnixStream, fabric: FabricHandle) {
    let (rd, mut wr) = stream.into_split();
    let mut rd = tokio::io::BufReader::new(rd);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = match (&mut rd)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .await
        {
            Ok(n) => n,
            Err(e) => {
                debug!(error = %e, "control connection read failed");
                return;
            }
        };
        if n == 0 {
            return;
        }
        if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
            // Too long: answer, then drop the connection (the rest of the
            // line would read as more commands).
            let msg = format!("error: line longer than {MAX_LINE} octets\n");
            let _ = wr.write_all(msg.as_bytes()).await;
            return;
        }
        let answer = match std::str::from_utf8(&buf) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => execute(&fabric, line.trim()).await,
            Err(_) => "error: not UTF-8".to_string(),
        };
        if wr
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_quotes() {
        assert_eq!(
            split_words(" link-flap  \"node01 mlx5_0\" 1 ").unwrap(),
            ["link-flap", "node01 mlx5_0", "1"]
        );
        assert_eq!(split_words("a 'b \"c' d").unwrap(), ["a", "b \"c", "d"]);
        assert!(split_words("a \"b").is_err());
        for w in ["node01", "node01 mlx5_0", "say \"hi\"", ""] {
            assert_eq!(split_words(&quote_word(w)).unwrap(), [w]);
        }
    }

    #[test]
    fn commands() {
        let flap = |node: &str, port, down_for| Command::LinkFlap {
            node: node.into(),
            port: PortNum(port),
            down_for,
        };
        for (line, want) in [
            (
                "link-flap node01 1",
                flap("node01", 1, Duration::from_secs(5)),
            ),
            (
                "link-flap 0x2 3 0.5",
                flap("0x2", 3, Duration::from_millis(500)),
            ),
            (
                "error-burst leaf01 37 100",
                Command::ErrorBurst {
                    node: "leaf01".into(),
                    port: PortNum(37),
                    count: 100,
                },
            ),
            ("sweep", Command::Sweep),
            ("health", Command::Health),
            ("help", Command::Help),
        ] {
            assert_eq!(parse(line).unwrap(), want, "{line:?}");
        }
        for bad in [
            "",
            "flap node01 1",
            "link-flap node01",
            "link-flap node01 x",
            "link-flap node01 255",
            "link-flap node01 1 0",
            "link-flap node01 1 -1",
            "link-flap node01 1 nan",
            "link-flap node01 1 2 3",
            "error-burst node01 1",
            "error-burst node01 1 0",
            "error-burst node01 1 many",
            "sweep now",
            "health json",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }
}
