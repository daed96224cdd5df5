//! The subcommands: `dump`, `topology`, `ctl`, `health` and `man` (the
//! agent itself is [`crate::daemon`]).

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{DumpArgs, DumpFormat};
use crate::config::ConfigError;

pub mod ctl;
pub mod health;
pub mod man;
pub mod routes;
pub mod topology;

/// `text` on stdout.
pub fn print(text: &str) -> Result<()> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")
}

/// A report on stdout, as JSON or as `text` words it.
pub fn print_report<R: serde::Serialize>(
    format: crate::cli::HealthFormat,
    report: &R,
    text: impl FnOnce(&R) -> String,
) -> Result<()> {
    let text = match format {
        crate::cli::HealthFormat::Json => {
            serde_json::to_string_pretty(report).context("cannot encode the report")? + "\n"
        }
        crate::cli::HealthFormat::Text => text(report),
    };
    print(&text)
}

/// A subcommand's argument that cannot be used: one line, exit 2, as a
/// configuration problem ([`ConfigError`] is the configuration's own).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// One sweep of the source `spec`, nodes renamed by the node-name-map;
/// other nodes' detail attributes read too with `remote_details`.
pub fn one_sweep(
    spec: &str,
    node_name_map: Option<&std::path::Path>,
    remote_details: bool,
) -> Result<ib::model::Snapshot> {
    let names = match node_name_map {
        Some(p) => crate::models::nodemap::NodeNameMap::load(p).map_err(ConfigError)?,
        None => Default::default(),
    };
    let mut source = crate::services::sources::open_spec(spec, None, remote_details)?;
    let mut snap = source
        .sweep()
        .map_err(|e| anyhow::anyhow!("sweep of {spec} failed: {e}"))?;
    names.apply(&mut snap);
    Ok(snap)
}

/// A check command's exit: 0 clean, 1 findings, 2 it could not tell (the
/// error on one line).
pub fn check_exit(clean: Result<bool>) -> std::process::ExitCode {
    match clean {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(1),
        Err(e) => {
            eprintln!("ibsnmpd: {}", format!("{e:#}").replace('\n', " "));
            std::process::ExitCode::from(2)
        }
    }
}

/// `ibsnmpd dump`: one sweep, printed.
pub fn dump(args: &DumpArgs) -> Result<()> {
    crate::models::logging::init(&args.sweep.log_level)?;
    let snap = one_sweep(
        &args.sweep.source,
        args.sweep.node_name_map.as_deref(),
        args.remote_details,
    )?;
    let text = match args.format {
        DumpFormat::Ibnetdiscover => ib::model::dump_ibnetdiscover(&snap),
        DumpFormat::Json => {
            // Streamed: one node's JSON at a time, never the whole document.
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            serde_json::to_writer_pretty(&mut out, &ib::model::dump::JsonDump(&snap))
                .context("cannot write JSON to stdout")?;
            out.write_all(b"\n").context("cannot write to stdout")?;
            return out.flush().context("cannot write to stdout");
        }
    };
    print(&text)
}

/// `ibsnmpd man`: the man page (section 8) from the clap definition, so it
/// never drifts from `--help`; packaging/ibsnmpd.8 is its output, checked by
/// the tests.
pub fn man(config: bool) -> Result<()> {
    let out = if config {
        crate::commands::man::config()
    } else {
        crate::commands::man::agent()?
    };
    print(&out)
}
