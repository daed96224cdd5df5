//! `ibsnmpd topology`: `check` (the fabric against a cabling plan) and
//! `fat-tree` (a plan written).

use std::process::ExitCode;

use anyhow::{Context, Result};

use super::UsageError;
use crate::cli::{TopologyCheckArgs, TopologyCommand};

/// `ibsnmpd topology check`: exit 0 when the fabric matches the plan, 1
/// when it does not, 2 when it could not tell (bad plan, failed sweep).
pub fn check(args: &TopologyCheckArgs) -> ExitCode {
    super::check_exit(check_once(args))
}

fn check_once(args: &TopologyCheckArgs) -> anyhow::Result<bool> {
    crate::models::logging::init(&args.sweep.log_level)?;
    let plan =
        crate::models::cabling_plan::Plan::load(&args.expected).map_err(anyhow::Error::msg)?;
    let snap = super::one_sweep(
        &args.sweep.source,
        args.sweep.node_name_map.as_deref(),
        false,
    )?;
    let report = crate::models::cabling_plan::TopologyReport::new(&plan, &snap);
    super::print_report(
        args.format,
        &report,
        crate::models::cabling_plan::TopologyReport::text,
    )?;
    Ok(report.matches)
}

/// `ibsnmpd topology fat-tree`.
pub fn run(cmd: &TopologyCommand) -> Result<()> {
    match cmd {
        TopologyCommand::FatTree(a) => {
            let topo = ib::topology::fat_tree(a.hosts, a.radix, a.levels)
                .map_err(|e| UsageError(format!("fat-tree: {e}")))?;
            let text = ib::topology::write_ibnetdiscover(&topo, &Default::default());
            match &a.output {
                Some(path) => std::fs::write(path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => super::print(&text)?,
            }
            Ok(())
        }
        // main runs it for its own exit codes.
        TopologyCommand::Check(_) => Err(anyhow::anyhow!("topology check: not run here")),
    }
}
