//! The subcommands: `dump`, `topology fat-tree` and `ctl`.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{CtlArgs, DumpArgs, DumpFormat, TopologyCommand};
use crate::config::ConfigError;

/// One sweep of the source `spec`, nodes renamed by the node-name-map.
pub fn one_sweep(
    spec: &str,
    node_name_map: Option<&std::path::Path>,
) -> Result<ib::model::Snapshot> {
    let names = match node_name_map {
        Some(p) => crate::nodemap::NodeNameMap::load(p).map_err(ConfigError)?,
        None => Default::default(),
    };
    let mut source = crate::sources::open_spec(spec, None)?;
    let mut snap = source
        .sweep()
        .map_err(|e| anyhow::anyhow!("sweep of {spec} failed: {e}"))?;
    names.apply(&mut snap);
    Ok(snap)
}

/// `ibsnmpd dump`: one sweep, printed.
pub fn dump(args: &DumpArgs) -> Result<()> {
    crate::logging::init(&args.sweep.log_level)?;
    let snap = one_sweep(&args.sweep.source, args.sweep.node_name_map.as_deref())?;
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
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")
}

/// `ibsnmpd topology fat-tree`.
pub fn topology(cmd: &TopologyCommand) -> Result<()> {
    match cmd {
        TopologyCommand::FatTree(a) => {
            let topo = ib::topology::fat_tree(a.hosts, a.radix, a.levels)
                .map_err(|e| ConfigError(format!("fat-tree: {e}")))?;
            let text = ib::topology::write_ibnetdiscover(&topo, &Default::default());
            match &a.output {
                Some(path) => std::fs::write(path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => std::io::stdout()
                    .lock()
                    .write_all(text.as_bytes())
                    .context("cannot write to stdout")?,
            }
            Ok(())
        }
        // main runs it for its own exit codes.
        TopologyCommand::Check(_) => Err(anyhow::anyhow!("topology check: not run here")),
    }
}

/// `ibsnmpd ctl`: one command to a running agent's control socket.
pub fn ctl(args: &CtlArgs) -> Result<()> {
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 86_400.0) {
        return Err(ConfigError(format!(
            "--timeout {}: expected a positive number of seconds",
            args.timeout
        ))
        .into());
    }
    crate::ctl::client(
        &args.socket,
        &args.command,
        std::time::Duration::from_secs_f64(args.timeout),
    )
}

/// `ibsnmpd man`: the man page (section 8) from the clap definition, so it
/// never drifts from `--help`; packaging/ibsnmpd.8 is its output, checked by
/// the tests.
pub fn man(config: bool) -> Result<()> {
    let out = if config {
        crate::man::config()
    } else {
        crate::man::agent()?
    };
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .context("cannot write to stdout")
}
