use std::path::Path;
use std::time::Duration;

use super::file::parse_file;
use super::merge::parse_listen;
use super::*;
/// The keys serde knows in `text`'s table (from its unknown-key error).
fn known_keys(text: &str) -> std::collections::BTreeSet<String> {
    let e = toml::from_str::<FileConfig>(text).unwrap_err().to_string();
    let list = e
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("{e}"));
    let list = list.split('\n').next().unwrap_or_default();
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// docs/config.md's key table (the man page's source) lists exactly
/// the keys the loader accepts: top-level keys and tables, and each
/// `[table]`'s keys ([[table]] rows list theirs in prose).
#[test]
fn the_key_table_is_the_loaders() {
    let table = keys::table();
    let documented: std::collections::BTreeSet<String> = table
        .iter()
        .flat_map(|k| k.top_level().chain(k.tables()))
        .map(str::to_string)
        .collect();
    assert_eq!(documented, known_keys("zz_no_such_key = 1\n"));
    for section in ["umad", "health", "opensm"] {
        let documented: std::collections::BTreeSet<String> = table
            .iter()
            .filter(|k| k.key.starts_with(&format!("`[{section}]`")))
            .flat_map(|k| names_of(k.key).skip(1))
            .collect();
        assert_eq!(
            documented,
            known_keys(&format!("[{section}]\nzz_no_such_key = 1\n")),
            "[{section}]"
        );
    }
}

/// docs/config.md's "Keys" table says what the code's table says, row
/// for row (the code's is the one compiled in).
#[test]
fn the_docs_key_table_is_the_codes() {
    let doc = include_str!("../../../../docs/config.md");
    let rows = doc
        .split("\n## Keys\n")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("docs/config.md has a \"## Keys\" section");
    let documented: Vec<[&str; 4]> = rows
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            cells[..]
                .try_into()
                .unwrap_or_else(|_| panic!("not 4 cells: {row}"))
        })
        .collect();
    let code: Vec<[&str; 4]> = keys::table()
        .iter()
        .map(|k| [k.key, k.flag, k.default, k.meaning])
        .collect();
    for (d, c) in documented.iter().zip(&code) {
        assert_eq!(d, c, "docs/config.md and config/keys.rs differ");
    }
    assert_eq!(
        documented.len(),
        code.len(),
        "docs/config.md and config/keys.rs differ in rows"
    );
}

fn names_of(cell: &str) -> impl Iterator<Item = String> + '_ {
    cell.split('`').skip(1).step_by(2).map(str::to_string)
}

#[test]
fn a_top_level_key_after_a_table_is_named_as_such() {
    let e = parse_file(
        "[[rocommunity]]\ncommunity = \"x\"\nmetrics_listen = \"127.0.0.1:9\"\n",
        "c.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.0,
        "c.toml:3: `metrics_listen` is a top-level key: it must come before the first \
         table (here TOML reads it as part of [[rocommunity]])"
    );
}

fn args() -> RunArgs {
    RunArgs::default()
}

#[test]
fn routes_max_spread_defaults_and_is_checked() {
    let s = merge(FileConfig::default(), "", &args()).unwrap();
    assert_eq!(s.checks.routes_max_spread, 0.5);
    let f = parse_file("[routes]\nmax_spread = 0.25\n", "c.toml").unwrap();
    let s = merge(f, "c.toml", &args()).unwrap();
    assert_eq!(s.checks.routes_max_spread, 0.25);
    let text = "[routes]\nmax_spread = -1.0\n";
    let e = merge(parse_file(text, "c.toml").unwrap(), "c.toml", &args()).unwrap_err();
    assert!(
        e.0.contains("max_spread = -1: expected a ratio of 0 or more"),
        "{}",
        e.0
    );
}

#[test]
fn defaults() {
    let s = merge(FileConfig::default(), "", &args()).unwrap();
    assert_eq!(s.agent.listen, vec!["127.0.0.1:1161".parse().unwrap()]);
    assert_eq!(s.source.spec, "sim");
    assert_eq!(s.communities.len(), 1);
    assert_eq!(s.communities[0].name, "public");
    assert_eq!(s.communities[0].access, Access::ReadOnly);
    assert_eq!(s.source.sweep_interval, Duration::from_secs(10));
    assert_eq!(s.agent.max_repetitions, DEFAULT_MAX_REPETITIONS);
}

#[test]
fn file_and_flags() {
    let text = r#"
agentaddress = ["udp:127.0.0.1:2000", "[::1]:2001"]
syscontact = "ops@example.org"
sweep_interval = 0.5

[[rocommunity]]
community = "public"
source = "10.0.0.0/8"

[[rwcommunity]]
community = "private"
source = "127.0.0.1"
"#;
    let f = parse_file(text, "x.toml").unwrap();
    let s = merge(f, "x.toml", &args()).unwrap();
    assert_eq!(s.agent.listen.len(), 2);
    assert_eq!(s.agent.listen[1], "[::1]:2001".parse().unwrap());
    assert_eq!(s.source.sweep_interval, Duration::from_millis(500));
    assert_eq!(s.system.contact, "ops@example.org");
    assert_eq!(s.communities.len(), 2);
    assert_eq!(s.communities[1].access, Access::ReadWrite);
    assert_eq!(
        s.communities[1].source,
        Some("127.0.0.1/32".parse().unwrap())
    );

    let f = parse_file(text, "x.toml").unwrap();
    let mut a = args();
    a.listen = vec!["127.0.0.1:3000".into()];
    a.community = Some("other".into());
    a.sweep_interval = Some("2".into());
    let s = merge(f, "x.toml", &a).unwrap();
    assert_eq!(s.agent.listen, vec!["127.0.0.1:3000".parse().unwrap()]);
    assert_eq!(s.communities[0].name, "other");
    assert_eq!(s.communities[0].source, None);
    assert_eq!(s.source.sweep_interval, Duration::from_secs(2));
}

#[test]
fn errors_name_file_and_line() {
    let e = parse_file("syscontact = \"a\"\nbogus = 1\n", "c.toml").unwrap_err();
    assert!(e.0.starts_with("c.toml:2: "), "{e}");
    assert!(!e.0.contains('\n'));
    // Operator words, file:line and key, a nearest key for a typo.
    for (text, want) in [
        (
            "rocommunity = 5\n",
            "c.toml:1: rocommunity: expected a list",
        ),
        ("a = 1\n", "c.toml:1: unknown key `a`"),
        (
            "\nsweep_intervall = 3\n",
            "c.toml:2: unknown key `sweep_intervall` (did you mean `sweep_interval`?)",
        ),
        (
            "agentaddress = 5\n",
            "c.toml:1: agentaddress: expected a string or a list of strings",
        ),
        (
            "[opensm]\nconf = 3\n",
            "c.toml:2: [opensm] conf: expected a string in quotes, found the number 3",
        ),
        (
            "sweep_interval = \"x\"\n",
            "c.toml:1: sweep_interval: expected a number (e.g. 10 or 0.5), found the string \"x\"",
        ),
    ] {
        let e = parse_file(text, "c.toml").unwrap_err().to_string();
        assert!(e.starts_with(want), "{text:?}: {e}");
        assert!(!e.contains("untagged") && !e.contains("f64"), "{e}");
    }
    // Settings the file gave are blamed on the file, with their line.
    let f = parse_file("syscontact = \"x\"\nlog_level = \"loud\"\n", "c.toml").unwrap();
    let e = merge(f, "c.toml", &args()).unwrap_err().to_string();
    assert!(e.starts_with("c.toml:2: log_level \"loud\""), "{e}");
    let f = parse_file("\n\nlocal_node = \"x\"\n", "c.toml").unwrap();
    assert_eq!(
        merge(f, "c.toml", &args())
            .unwrap()
            .source
            .local_node_origin,
        "c.toml:3: local_node"
    );
    let mut a = args();
    a.log_level = Some("loud".into());
    let e = merge(FileConfig::default(), "", &a)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--log-level \"loud\""), "{e}");
    let e = parse_file("sweep_interval = \"x\"\n", "c.toml").unwrap_err();
    assert!(e.0.starts_with("c.toml:1: "), "{e}");
    let f = parse_file(
        "[[rocommunity]]\ncommunity = \"p\"\nsource = \"nope\"\n",
        "c.toml",
    )
    .unwrap();
    let e = merge(f, "c.toml", &args()).unwrap_err();
    assert!(e.0.contains("nope"), "{e}");
}

/// The example in docs/config.md and packaging/ibsnmpd.toml load as written.
#[test]
fn shipped_examples_load() {
    let doc = include_str!("../../../../docs/config.md");
    let start = doc.find("```toml\n").expect("toml block") + 8;
    let len = doc[start..].find("```").expect("block end");
    let f = parse_file(&doc[start..start + len], "docs/config.md").unwrap();
    let s = merge(f, "docs/config.md", &args()).unwrap();
    assert_eq!(s.communities.len(), 4);
    assert_eq!(
        s.daemon.control_socket.as_deref(),
        Some(Path::new("/run/ibsnmpd/ctl.sock"))
    );
    assert!(s.metrics.listen.is_some());
    assert_eq!(s.source.umad, ib::source::umad::UmadOptions::default());

    let pkg = include_str!("../../../../packaging/ibsnmpd.toml");
    let f = parse_file(pkg, "packaging/ibsnmpd.toml").unwrap();
    merge(f, "packaging/ibsnmpd.toml", &args()).unwrap();
}

/// Other nodes' detail attributes are read for a metrics endpoint that
/// serves them, and only then.
#[test]
fn metrics_detail_families_are_what_the_umad_source_reads() {
    use ib::source::umad::pma::detail;
    let remote = |text: &str| {
        let f = parse_file(text, "c.toml").unwrap();
        merge(f, "c.toml", &args())
            .unwrap()
            .source
            .umad
            .pma
            .remote_details
    };
    let listen = "metrics_listen = \"127.0.0.1:9683\"\n";
    assert_eq!(remote("metrics_families = [\"detail\", \"vl\"]\n"), 0);
    assert_eq!(remote(listen), 0, "default families");
    assert_eq!(
        remote(&format!(
            "{listen}metrics_families = [\"errors\", \"vl\"]\n"
        )),
        detail::VL_OP_PACKETS | detail::VL_OP_DATA | detail::VL_XMIT_WAIT
    );
    assert_eq!(
        remote(&format!(
            "{listen}metrics_families = [\"detail\", \"vl\"]\n"
        )),
        detail::ALL
    );
}

#[test]
fn request_sessions() {
    let s = merge(parse_file("", "c.toml").unwrap(), "c.toml", &args()).unwrap();
    assert_eq!(s.requests.session_timeout, Duration::from_secs(300));
    assert_eq!(s.requests.sessions_max, 256);
    let f = parse_file(
        "request_session_timeout = 2.5\nrequest_sessions_max = 3\n",
        "c.toml",
    )
    .unwrap();
    let s = merge(f, "c.toml", &args()).unwrap();
    assert_eq!(s.requests.session_timeout, Duration::from_millis(2500));
    assert_eq!(s.requests.sessions_max, 3);
    for bad in [
        "request_session_timeout = 0",
        "request_sessions_max = 0",
        "request_result_rows_max = 0",
        "metrics_max_renders = 0",
        "metrics_max_connections_per_client = 0",
        "metrics_stall_timeout = 0",
    ] {
        let f = parse_file(bad, "c.toml").unwrap();
        let e = merge(f, "c.toml", &args()).unwrap_err().to_string();
        assert!(e.contains(bad.split(' ').next().unwrap()), "{e}");
    }
}

#[test]
fn security_round_3_keys() {
    let s = merge(parse_file("", "c.toml").unwrap(), "c.toml", &args()).unwrap();
    assert!(!s.agent.admin_writable_below_authpriv);
    assert_eq!(s.metrics.limits, crate::metrics::Limits::default());
    assert_eq!(
        s.requests.result_rows_max,
        mibs::modules::ib_sm_req::MAX_RESULT_ROWS
    );
    let f = parse_file(
        "admin_writable_below_authpriv = true
metrics_max_renders = 3
\
         metrics_render_queue = 0
metrics_stall_timeout = 2.5
\
         metrics_max_connections_per_client = 4
request_result_rows_max = 10
",
        "c.toml",
    )
    .unwrap();
    let s = merge(f, "c.toml", &args()).unwrap();
    assert!(s.agent.admin_writable_below_authpriv);
    let l = &s.metrics.limits;
    assert_eq!((l.max_renders, l.render_queue, l.max_per_client), (3, 0, 4));
    assert_eq!(l.stall_timeout, Duration::from_millis(2500));
    assert_eq!(s.requests.result_rows_max, 10);
}

#[test]
fn usm_users_and_vacm() {
    let text = r#"
engine_id = "80:00:1f:88:05:01:02:03"
max_getbulk_responses = 50
[[user]]
name = "ops"
auth = "SHA-256"
auth_pass = "authpass1"
priv = "AES256"
priv_pass = "privpass1"
[[user]]
name = "plain"
[[rouser]]
user = "plain"
level = "noauth"
oid = ".1.3.6.1.2.1.1"
[[rwuser]]
user = "ops"
level = "priv"
[[view]]
name = "all"
type = "included"
oid = "1"
mask = "80"
[[group]]
name = "g"
model = "v2c"
security_name = "public"
[[access]]
group = "g"
read = "all"
"#;
    let s = merge(parse_file(text, "c").unwrap(), "c", &args()).unwrap();
    assert_eq!(
        s.agent.engine_id,
        Some(vec![0x80, 0, 0x1f, 0x88, 5, 1, 2, 3])
    );
    assert_eq!(s.agent.max_getbulk_responses, 50);
    assert_eq!(s.agent.users.len(), 2);
    let ops = &s.agent.users[0];
    assert!(ops.access.as_ref().unwrap().write);
    assert_eq!(
        s.agent.users[1]
            .access
            .as_ref()
            .unwrap()
            .subtree
            .as_ref()
            .unwrap()
            .to_string(),
        "1.3.6.1.2.1.1"
    );
    // Passwords never show in Debug output.
    assert!(!format!("{s:?}").contains("authpass1"));
    assert_eq!(s.agent.vacm.access.len(), 1);
    for (bad, what) in [
        (
            "[[user]]\nname = \"a\"\nauth = \"SHA\"\nauth_pass = \"short\"\n",
            "at least 8",
        ),
        (
            "[[user]]\nname = \"a\"\nauth = \"SHA-1024\"\nauth_pass = \"longenough\"\n",
            "expected MD5",
        ),
        (
            "[[user]]\nname = \"a\"\npriv = \"AES\"\npriv_pass = \"longenough\"\n",
            "priv needs auth",
        ),
        ("[[rouser]]\nuser = \"ghost\"\n", "not a [[user]]"),
        (
            "[[access]]\ngroup = \"g\"\nread = \"nope\"\n",
            "not a [[view]]",
        ),
        ("engine_id = \"80\"\n", "5 to 32 octets"),
        (
            "metrics_families = [\"erors\"]\n",
            "unknown family group \"erors\" (did you mean \"errors\"?)",
        ),
        ("metrics_families = []\n", "names no family group"),
    ] {
        let e = merge(parse_file(bad, "c").unwrap(), "c", &args()).unwrap_err();
        assert!(e.0.contains(what), "{bad}: {e}");
    }
}

#[test]
fn listen_forms() {
    assert_eq!(
        parse_listen("[::1]:1161").unwrap(),
        "[::1]:1161".parse().unwrap()
    );
    assert_eq!(parse_listen("::1").unwrap(), "[::1]:1161".parse().unwrap());
    assert_eq!(
        parse_listen("udp6:[::1]:5").unwrap(),
        "[::1]:5".parse().unwrap()
    );
    assert!(parse_listen("localhost:1").is_err());
    let mut a = args();
    a.sweep_interval = Some("-1".into());
    assert!(merge(FileConfig::default(), "", &a).is_err());
    for tiny in ["1e-300", "0.01", "0.099"] {
        a.sweep_interval = Some(tiny.into());
        let e = merge(FileConfig::default(), "", &a).unwrap_err();
        assert!(e.to_string().contains("at least 0.1 seconds"), "{e}");
    }
    a.sweep_interval = Some("0.1".into());
    assert!(merge(FileConfig::default(), "", &a).is_ok());
    let e = parse_file("sweep_interval = 1e-300\n", "c.toml")
        .and_then(|f| merge(f, "c.toml", &args()))
        .unwrap_err();
    assert!(e.to_string().contains("at least 0.1 seconds"), "{e}");
}

/// `node_contexts`, `fabric_link_traps` and `[[monitor]]`'s context keys:
/// their values, and a bad one named with its line.
#[test]
fn node_context_keys() {
    let s = merge(FileConfig::default(), "", &args()).unwrap();
    assert_eq!(s.agent.node_contexts, super::NodeContexts::All);
    assert!(!s.notify.fabric_link_traps);
    let f = parse_file(
        "node_contexts = \"none\"\nfabric_link_traps = true\n",
        "c.toml",
    )
    .unwrap();
    let s = merge(f, "c.toml", &args()).unwrap();
    assert_eq!(s.agent.node_contexts, super::NodeContexts::None);
    assert!(s.notify.fabric_link_traps);
    let f = parse_file("\nnode_contexts = \"some\"\n", "c.toml").unwrap();
    let e = merge(f, "c.toml", &args()).unwrap_err().to_string();
    assert!(
        e.starts_with("c.toml:2: node_contexts: \"some\": expected \"all\", \"none\" or \"off\""),
        "{e}"
    );
    let monitor = |keys: &str| {
        let text = format!(
            "[[monitor]]\nname = \"m\"\noid = \"IF-MIB::ifInErrors\"\nboolean = {{ op = \">\", value = 0 }}\n{keys}"
        );
        merge(parse_file(&text, "c.toml").unwrap(), "c.toml", &args())
    };
    let t = &monitor("contexts = \"leaf*\"\n").unwrap().checks.monitors[0];
    assert_eq!(
        (t.context.as_slice(), t.context_wildcard),
        (&b"leaf"[..], true)
    );
    let t = &monitor("context = \"leaf01\"\n").unwrap().checks.monitors[0];
    assert_eq!(
        (t.context.as_slice(), t.context_wildcard),
        (&b"leaf01"[..], false)
    );
    for (keys, want) in [
        ("contexts = \"leaf\"\n", "expected \"*\""),
        ("context = \"a\"\ncontexts = \"*\"\n", "give one"),
        (
            &format!("context = \"{}\"\n", "x".repeat(33)),
            "longer than 32",
        ),
    ] {
        let e = monitor(keys).unwrap_err().to_string();
        assert!(e.contains(want), "{keys:?}: {e}");
    }
}

/// A file holding SNMPv3 passwords: group-readable is what the packaged
/// unit needs (0640 root:ibsnmpd); only access by others is warned about,
/// with the commands that fix it without locking the unit's user out.
#[test]
fn secrets_warning_only_for_other_users() {
    let p = Path::new("/etc/ibsnmpd/ibsnmpd.toml");
    for ok in [0o600, 0o640, 0o660, 0o100640, 0o400, 0o440] {
        assert_eq!(secrets_mode_warning(p, ok), None, "{ok:o}");
    }
    for bad in [0o644, 0o604, 0o666, 0o642, 0o641, 0o100644] {
        let w = secrets_mode_warning(p, bad).unwrap_or_else(|| panic!("{bad:o}"));
        assert!(
            w.contains(
                "chmod 0640 /etc/ibsnmpd/ibsnmpd.toml; chgrp ibsnmpd /etc/ibsnmpd/ibsnmpd.toml"
            ),
            "{w}"
        );
        assert!(!w.contains("0600") && !w.contains("chmod 600"), "{w}");
        assert!(w.contains(&format!("mode {:04o}", bad & 0o777)), "{w}");
    }
}

/// A reload applies the reloadable parts and names each restart-only key
/// that changed, in the parts' order.
#[test]
fn a_reload_names_the_restart_only_keys_and_applies_the_rest() {
    let old = merge(FileConfig::default(), "c.toml", &args()).unwrap();
    let mut new = old.clone();
    new.checks.routes_max_spread += 1.0;
    new.communities.clear();
    new.notify.auth_traps = !new.notify.auth_traps;
    assert!(old.restart_keys(&new, true).is_empty());
    new.source.sweep_interval *= 2;
    new.agentx.if_mib = true;
    new.notify.queue += 1;
    assert_eq!(
        old.restart_keys(&new, true),
        ["sweep_interval", "agentx_if_mib", "notification_queue"]
    );
    let mut kept = old.notify.clone();
    kept.take_reloadable(new.notify.clone(), true);
    assert_eq!(kept.auth_traps, new.notify.auth_traps);
    assert_eq!(kept.queue, old.notify.queue);
}
