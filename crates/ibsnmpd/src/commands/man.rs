//! The man pages, generated from what the program itself uses, so they
//! cannot drift: ibsnmpd(8) from the clap definition (every subcommand
//! with its options), ibsnmpd.toml(5) from the configuration's key table
//! ([`crate::config::keys`], which the loader checks its keys against).
//! The packages install what these print; references to docs/*.md point
//! at the installed copies under /usr/share/doc/ibsnmpd.

use anyhow::{Context, Result};
use clap::{ArgAction, Command};

/// Where the packages install docs/*.md, compressed (`NAME.md.gz`:
/// packaging/stage.sh).
const DOC_DIR: &str = "/usr/share/doc/ibsnmpd";

/// ibsnmpd(8): title, a synopsis line per command with every option and
/// its argument, clap's options, then each subcommand with its own, and
/// what clap does not know: files, signals, exit status.
pub fn agent() -> Result<String> {
    use clap::CommandFactory;
    let cmd = crate::cli::Cli::command();
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone())
        .section("8")
        .manual("System Manager's Manual");
    man.render_title(&mut out)
        .and_then(|()| man.render_name_section(&mut out))
        .context("cannot render the man page")?;
    let mut s = String::from_utf8_lossy(&out).into_owned();
    s.push_str(".SH SYNOPSIS\n");
    let commands = leaves(&cmd, "ibsnmpd");
    let lines: Vec<String> = commands.iter().map(|(path, c)| synopsis(path, c)).collect();
    s.push_str(&lines.join("\n.br\n"));
    s.push('\n');
    let mut out = Vec::new();
    man.render_description_section(&mut out)
        .and_then(|()| man.render_options_section(&mut out))
        .context("cannot render the man page")?;
    s.push_str(&String::from_utf8_lossy(&out));
    s.push_str(".SH SUBCOMMANDS\n");
    for (path, c) in commands.iter().skip(1) {
        s.push_str(&format!(".SS \"{}\"\n", roff(path)));
        if let Some(about) = c.get_long_about().or(c.get_about()) {
            s.push_str(&format!("{}\n", roff(&about.to_string())));
        }
        let mut out = Vec::new();
        clap_mangen::Man::new(c.clone())
            .render_options_section(&mut out)
            .context("cannot render the man page")?;
        // Each subcommand's options under its own heading, not a new section.
        let options = String::from_utf8_lossy(&out).replace(".SH OPTIONS\n", ".PP\nOptions:\n");
        s.push_str(&options);
    }
    s.push_str(TAIL);
    Ok(installed_docs(&s))
}

/// The commands a user runs: the agent, then each subcommand (the leaves
/// of nested ones: `topology fat-tree`), hidden ones left out.
fn leaves(cmd: &Command, path: &str) -> Vec<(String, Command)> {
    let mut v = Vec::new();
    if cmd.get_subcommands().next().is_none() || path == "ibsnmpd" {
        v.push((path.to_string(), cmd.clone()));
    }
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        v.extend(leaves(sub, &format!("{path} {}", sub.get_name())));
    }
    v
}

/// One synopsis line: `ibsnmpd dump [--source SPEC] [--format FORMAT]`.
fn synopsis(path: &str, cmd: &Command) -> String {
    let mut words = vec![format!("\\fB{}\\fR", roff(path))];
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        if matches!(a.get_action(), ArgAction::Help | ArgAction::Version) {
            continue;
        }
        // The value's name, or its choices (`--format ibnetdiscover|json`).
        let choices: Vec<String> = a
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        let names: Vec<String> = match a.get_value_names() {
            Some(n) => n.iter().map(ToString::to_string).collect(),
            None if !choices.is_empty() => vec![choices.join("|")],
            None => vec![a.get_id().as_str().to_uppercase()],
        };
        let value = names
            .iter()
            .map(|n| format!("\\fI{}\\fR", roff(n)))
            .collect::<Vec<_>>()
            .join(" ");
        let repeated = matches!(a.get_action(), ArgAction::Append)
            || a.get_num_args().is_some_and(|n| n.max_values() > 1);
        let dots = if repeated { "..." } else { "" };
        let word = match a.get_long() {
            Some(long) => {
                let flag = format!("\\fB\\-\\-{}\\fR", roff(long));
                let takes = a.get_num_args().is_none_or(|n| n.takes_values());
                let given = match (takes, a.get_num_args().map(|n| n.min_values())) {
                    (false, _) => flag,
                    // `--agentx [ADDR]`: the value may be left out.
                    (true, Some(0)) => format!("{flag} [{value}]"),
                    (true, _) => format!("{flag} {value}"),
                };
                if a.is_required_set() {
                    format!("{given}{dots}")
                } else {
                    format!("[{given}]{dots}")
                }
            }
            None if a.is_required_set() => format!("{value}{dots}"),
            None => format!("[{value}]{dots}"),
        };
        words.push(word);
    }
    words.join(" ")
}

/// The sections of ibsnmpd(8) after the subcommands.
const TAIL: &str = r#".SH FILES
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
\fI/lib/udev/rules.d/92\-ibsnmpd.rules\fR (RPM: \fI/usr/lib/udev/rules.d/\fR)
Gives the ibsnmpd group /dev/infiniband/umad* and starts the unit when such a device appears.
.TP
\fI/usr/share/doc/ibsnmpd/\fR
The documentation (Markdown), and examples: the OpenSM\-host drop\-in, the Grafana dashboard, Prometheus alert rules.
.SH SIGNALS
.TP
\fBSIGHUP\fR
Reads the configuration file, the node\-name\-map and the cabling plan again: the communities, node names, cabling plan ([topology] expected), notification sinks, thresholds, authtrapenable, [health] and [[monitor]] apply at once; every changed setting that needs a restart is named in one warning; a file that does not load changes nothing (docs/usage.md, "Signals").
.TP
\fBSIGTERM\fR, \fBSIGINT\fR
Stop cleanly (AgentX session closed, state persisted); exit status 0.
.SH "EXIT STATUS"
The same for the agent and every subcommand.
.TP
\fB0\fR
A clean stop, or a subcommand that finished.
.TP
\fB1\fR
A failure at run time (for example a sweep that fails, an agent that cannot be reached), one line on standard error.
.TP
\fB2\fR
A bad command line, configuration file or source specification, or a source that cannot be opened (no such CA, no RDMA devices), one line on standard error naming the file, line and key where there is one. systemd does not restart the unit; the udev rule starts it when a device appears.
.TP
\fB78\fR
A UDP listen address that another process holds (on port 161 most often snmpd): one line naming the address, snmpd and the \fBagentx\fR setting that serves the IB MIBs through snmpd instead (docs/install.md, "Beside snmpd"). systemd does not restart the unit.
.SH "SEE ALSO"
\fBibsnmpd.toml\fR(5), \fBsnmpd\fR(8), \fBsnmpd.conf\fR(5), \fBsnmpwalk\fR(1), \fBopensm\fR(8), \fBibnetdiscover\fR(8), \fBperfquery\fR(8); the documentation in \fI/usr/share/doc/ibsnmpd/\fR
"#;

/// Text for roff: backslashes and hyphens escaped.
fn roff(s: &str) -> String {
    s.replace('\\', "\\\\").replace('-', "\\-")
}

/// `docs/NAME.md` as installed: `/usr/share/doc/ibsnmpd/NAME.md.gz`.
fn installed_docs(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut rest = page;
    while let Some(at) = rest.find("docs/") {
        out.push_str(&rest[..at]);
        out.push_str(DOC_DIR);
        out.push('/');
        rest = &rest[at + "docs/".len()..];
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '\\')))
            .unwrap_or(rest.len());
        let name = rest[..name_len].trim_end_matches('.');
        out.push_str(name);
        if name.ends_with(".md") {
            out.push_str(".gz");
        }
        rest = &rest[name.len()..];
    }
    out.push_str(rest);
    out
}

/// ibsnmpd.toml(5), made from the configuration's key table: one source
/// for the page, the docs and the loader's checks.
pub fn config() -> String {
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
         and the agent exits 2. SIGHUP reads the file again (\\fBibsnmpd\\fR(8), \
         SIGNALS).\n.SH KEYS\n"
    );
    for k in crate::config::keys::table() {
        let plain = |c: &str| roff(&c.replace('`', "").replace("\\|", "|"));
        s.push_str(&format!(".TP\n\\fB{}\\fR", plain(k.key)));
        if k.flag != "-" && !k.flag.is_empty() {
            s.push_str(&format!(" (flag \\fB{}\\fR)", plain(k.flag)));
        }
        s.push_str(&format!(
            "\nDefault: {}. {}\n",
            plain(k.default),
            plain(k.meaning)
        ));
    }
    s.push_str(
        ".SH FILES\n\\fI/etc/ibsnmpd/ibsnmpd.toml\\fR\n\
         .SH \"SEE ALSO\"\n\\fBibsnmpd\\fR(8), \\fBsnmpd.conf\\fR(5); \
         \\fI/usr/share/doc/ibsnmpd/config.md.gz\\fR and the other documentation there\n",
    );
    installed_docs(&s)
}
