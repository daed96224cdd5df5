//! Logging to stderr with tracing-subscriber, filtered by --log-level.

use std::io::IsTerminal;

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::EnvFilter;

/// A log level or filter that cannot be used, in operator words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LogError(pub String);

/// `level` is a level (off, error..trace) or tracing directives
/// (`info,snmp=debug`).
pub fn init(level: &str) -> Result<(), LogError> {
    let filter = parse_filter(level, "log level")?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init()
        .map_err(|e| LogError(format!("cannot start logging: {e}")))
}

/// Checks a filter before using it. EnvFilter takes a bare word such as
/// `verbose` as a target name, which silences every other message; here a
/// bare word must be a level, and a directive naming a target must say its
/// level (`snmp=debug`).
/// `what` says where the level was given (`--log-level`, `FILE:LINE: log_level`).
pub fn parse_filter(level: &str, what: &str) -> Result<EnvFilter, LogError> {
    let bad = |m: &str| LogError(format!("{what} {level:?}: {m}"));
    if level.trim().is_empty() {
        return Err(bad(
            "empty; expected off, error, warn, info, debug or trace",
        ));
    }
    for d in level.split(',').map(str::trim) {
        if d.is_empty() {
            return Err(bad("empty directive"));
        }
        let lvl = match d.rsplit_once('=') {
            Some((target, lvl)) if !target.is_empty() => lvl,
            Some(_) => return Err(bad(&format!("{d:?} names no target"))),
            None => d,
        };
        if lvl.parse::<LevelFilter>().is_err() {
            return Err(bad(&format!(
                "{lvl:?} is not a level (off, error, warn, info, debug, trace)"
            )));
        }
    }
    EnvFilter::try_new(level).map_err(|e| bad(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::parse_filter;

    #[test]
    fn levels_and_directives() {
        for ok in [
            "info",
            "warn",
            "off",
            "TRACE",
            "info,snmp=debug",
            "ib::source=trace",
        ] {
            assert!(parse_filter(ok, "--log-level").is_ok(), "{ok}");
        }
        for bad in ["verbose", "", "info,", "snmp=loud", "=debug", "infoo"] {
            assert!(parse_filter(bad, "--log-level").is_err(), "{bad}");
        }
    }
}
