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
    crate::logging::init(&args.log_level)?;
    let snap = one_sweep(&args.source, args.node_name_map.as_deref())?;
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
    let out = if config { man_config() } else { man_agent()? };
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .context("cannot write to stdout")
}

/// ibsnmpd(8): clap's title, synopsis, description and options, then what
/// clap does not know: the subcommands (no pages of their own), files,
/// signals, exit status and pages that exist.
fn man_agent() -> Result<String> {
    use clap::CommandFactory;
    let cmd = crate::cli::Cli::command();
    let subs: Vec<(String, String)> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| {
            (
                c.get_name().to_string(),
                c.get_about().map(|a| a.to_string()).unwrap_or_default(),
            )
        })
        .collect();
    let man = clap_mangen::Man::new(cmd)
        .section("8")
        .manual("System Manager's Manual");
    let mut out = Vec::new();
    let render = |out: &mut Vec<u8>| -> std::io::Result<()> {
        man.render_title(out)?;
        man.render_name_section(out)?;
        man.render_synopsis_section(out)?;
        man.render_description_section(out)?;
        man.render_options_section(out)?;
        Ok(())
    };
    render(&mut out).context("cannot render the man page")?;
    let mut s = String::from_utf8_lossy(&out).into_owned();
    s.push_str(".SH SUBCOMMANDS\n");
    for (name, about) in subs {
        s.push_str(&format!(".TP\n\\fBibsnmpd {name}\\fR\n{}\n", roff(&about)));
    }
    s.push_str(MAN_TAIL);
    Ok(s)
}

/// The sections of ibsnmpd(8) after the options.
const MAN_TAIL: &str = r#".SH FILES
.TP
\fI/etc/ibsnmpd/ibsnmpd.toml\fR
The configuration file (\fBibsnmpd.toml\fR(5)); given with \fB\-\-config\fR.
.TP
\fI/var/lib/ibsnmpd/\fR
The state directory (\fB\-\-state\-dir\fR; the unit's StateDirectory): values Set over SNMP, the SNMPv3 engine ID and boots. Without \fB\-\-state\-dir\fR: $STATE_DIRECTORY, else $XDG_STATE_HOME/ibsnmpd, else ~/.local/state/ibsnmpd.
.TP
\fI/run/ibsnmpd/\fR
The unit's runtime directory, for the control socket (\fB\-\-control\-socket\fR).
.TP
\fI/usr/share/snmp/mibs/IB\-*\-MIB\fR
The MIB modules served, for managers (\fBsnmpwalk \-m ALL\fR).
.TP
\fI/lib/udev/rules.d/92\-ibsnmpd.rules\fR
Gives the ibsnmpd group /dev/infiniband/umad* and starts the unit when such a device appears.
.TP
\fI/usr/share/doc/ibsnmpd/\fR
The documentation, and examples: the OpenSM\-host drop\-in, the Grafana dashboard, Prometheus alert rules.
.SH SIGNALS
.TP
\fBSIGHUP\fR
Reads the configuration file, the node\-name\-map and the cabling plan again; the communities, names and plan apply at once, settings that need a restart are named in a warning; a file that does not load changes nothing.
.TP
\fBSIGTERM\fR, \fBSIGINT\fR
Stop cleanly (AgentX session closed, state persisted); exit status 0.
.SH "EXIT STATUS"
.TP
\fB0\fR
A clean stop, or a subcommand that finished.
.TP
\fB1\fR
A failure at run time (for example a listen address already in use), one line on standard error; for \fBtopology check\fR, a fabric that differs from its plan.
.TP
\fB2\fR
A bad command line, configuration file or source specification, one line on standard error naming the file, line and key.
.SH "SEE ALSO"
\fBibsnmpd.toml\fR(5), \fBsnmpd\fR(8), \fBsnmpd.conf\fR(5), \fBsnmpwalk\fR(1), \fBopensm\fR(8), \fBibnetdiscover\fR(8), \fBperfquery\fR(8)
"#;

/// Text for roff: backslashes and hyphens escaped.
fn roff(s: &str) -> String {
    s.replace('\\', "\\\\").replace('-', "\\-")
}

/// ibsnmpd.toml(5), made from docs/config.md's key table: one source for
/// the page and the docs.
fn man_config() -> String {
    const DOC: &str = include_str!("../../../docs/config.md");
    let version = env!("CARGO_PKG_VERSION");
    let mut s = format!(
        ".TH ibsnmpd.toml 5 \"ibsnmpd {version}\" \"File Formats Manual\"\n\
         .SH NAME\nibsnmpd.toml \\- configuration file of ibsnmpd\n\
         .SH DESCRIPTION\n\
         \\fBibsnmpd\\fR(8) reads a TOML file given with \\fB\\-\\-config\\fR \
         (the package installs /etc/ibsnmpd/ibsnmpd.toml). Its keys mirror \
         snmpd.conf's where snmpd has one. Top\\-level keys come before the \
         first [table] or [[table]]. Command\\-line flags override the file. \
         Unknown keys are errors: every error names the file, line and key, \
         and the agent exits 2.\n.SH KEYS\n"
    );
    let table = DOC
        .split("\n## Keys\n")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .unwrap_or_default();
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        let [key, flag, default, meaning] = cells[..] else {
            continue;
        };
        let plain = |c: &str| roff(&c.replace('`', ""));
        s.push_str(&format!(".TP\n\\fB{}\\fR", plain(key)));
        if flag != "-" && !flag.is_empty() {
            s.push_str(&format!(" (flag \\fB{}\\fR)", plain(flag)));
        }
        s.push_str(&format!(
            "\nDefault: {}. {}\n",
            plain(default),
            plain(meaning)
        ));
    }
    s.push_str(
        ".SH FILES\n\\fI/etc/ibsnmpd/ibsnmpd.toml\\fR\n\
         .SH \"SEE ALSO\"\n\\fBibsnmpd\\fR(8), \\fBsnmpd.conf\\fR(5)\n",
    );
    s
}
