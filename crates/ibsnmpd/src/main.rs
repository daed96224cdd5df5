//! ibsnmpd: an SNMP agent for InfiniBand fabrics.
//!
//! Exit codes: 0 clean stop (SIGTERM/SIGINT) or subcommand done; 2 a bad
//! command line or configuration (one line on stderr); 78 (EX_CONFIG) a
//! UDP port another agent holds (snmpd on 161); 1 any other failure. The
//! unit restarts on neither 2 nor 78.

#![forbid(unsafe_code)]

mod cli;
mod commands;
mod config;
mod daemon;
mod http;
mod metrics;
mod models;
mod services;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use crate::cli::{Cli, Command, RoutesCommand, TopologyCommand};
use crate::config::ConfigError;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    let result = match cli.command {
        // Its own exit codes: 1 says the fabric differs from the plan.
        Some(Command::Topology(TopologyCommand::Check(args))) => {
            return commands::topology::check(&args)
        }
        // Its own exit codes too: 1 says some routes are broken.
        Some(Command::Routes(RoutesCommand::Check(args))) => return commands::routes::check(&args),
        Some(Command::Dump(args)) => commands::dump(&args),
        Some(Command::Topology(cmd)) => commands::topology::run(&cmd),
        Some(Command::Ctl(args)) => commands::ctl::run(&args),
        Some(Command::Health(args)) => commands::health::run(&args),
        Some(Command::Man { config }) => commands::man(config),
        None => run(cli.run),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Settings the operator must fix (a bad log level included).
            let config = e
                .downcast_ref::<ConfigError>()
                .map(ToString::to_string)
                .or_else(|| {
                    e.downcast_ref::<models::logging::LogError>()
                        .map(ToString::to_string)
                })
                .or_else(|| {
                    e.downcast_ref::<commands::UsageError>()
                        .map(ToString::to_string)
                });
            if let Some(c) = config {
                eprintln!("ibsnmpd: {c}");
                return ExitCode::from(2);
            }
            if let Some(p) = e.downcast_ref::<daemon::PortInUse>() {
                eprintln!("ibsnmpd: {p}");
                return ExitCode::from(daemon::EXIT_PORT_IN_USE);
            }
            eprintln!("ibsnmpd: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(1)
        }
    }
}

fn run(args: cli::RunArgs) -> anyhow::Result<()> {
    let settings = config::load(&args)?;
    models::logging::init(&settings.daemon.log_level)?;
    let source = services::sources::open(&settings)?;
    daemon::run(settings, source, Box::new(move || config::load(&args)))
}

/// `--help`/`--version` print as clap renders them; real errors become one
/// line on stderr and exit 2: clap's first paragraph, so a missing
/// argument is named (`... not provided: --plan <FILE>`). A command that
/// needs a subcommand and got none (`ibsnmpd topology`) prints its help on
/// stdout, then says so in that line.
fn usage_error(e: &clap::Error) -> ExitCode {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let text = e.render().to_string();
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        print!("{text}");
        let command: Vec<String> = std::env::args()
            .skip(1)
            .take_while(|a| !a.starts_with('-'))
            .collect();
        eprintln!(
            "ibsnmpd: {}: a subcommand is needed (listed above)",
            command.join(" ")
        );
        return ExitCode::from(2);
    }
    eprintln!("ibsnmpd: {} (see --help)", first_paragraph(&text));
    ExitCode::from(2)
}

/// The first paragraph of a clap error, on one line, without "error: ".
fn first_paragraph(text: &str) -> String {
    let words: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let line = words.join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line).to_string();
    if line.is_empty() {
        "invalid command line".into()
    } else {
        line
    }
}
