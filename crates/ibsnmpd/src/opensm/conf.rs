//! Edits of OpenSM's configuration file that keep the operator's file: one
//! option's line is replaced in place (its trailing comment kept), or the
//! option appended when the file has none; every other line, comment and
//! blank stays as it was. The new file replaces the old atomically (write a
//! temporary file beside it, fsync, rename, fsync the directory).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// `text` with option `key` set to `value` (`key value`, as opensm.conf
/// writes options).
pub fn with_option(text: &str, key: &str, value: &str) -> String {
    let mut out = String::with_capacity(text.len() + key.len() + value.len() + 2);
    let mut done = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let code = body.split('#').next().unwrap_or_default();
        let is_key = code.split_whitespace().next() == Some(key);
        if is_key && !done {
            let comment = body.find('#').map(|i| &body[i..]);
            out.push_str(key);
            out.push(' ');
            out.push_str(value);
            if let Some(c) = comment {
                out.push(' ');
                out.push_str(c);
            }
            out.push_str(&line[body.len()..]);
            done = true;
        } else if !is_key {
            out.push_str(line);
        }
        // A later duplicate of the option is dropped: OpenSM would take it.
    }
    if !done {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{key} {value}\n"));
    }
    out
}

/// Sets options in the file at `path` atomically.
pub fn set_options(path: &Path, options: &[(&str, String)]) -> io::Result<()> {
    let mut text = fs::read_to_string(path)?;
    for (k, v) in options {
        text = with_option(&text, k, v);
    }
    replace(path, text.as_bytes())
}

/// Replaces the file at `path` with `bytes` atomically.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.ibsnmpd.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        // Keep the operator's mode (opensm.conf may hold keys).
        if let Ok(m) = fs::metadata(path) {
            f.set_permissions(m.permissions())?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "# OpenSM configuration\n\
                        # sm_priority 3 (a commented example stays)\n\
                        sm_priority 1   # ours\n\
                        \n\
                        sweep_interval 10\n\
                        lmc 0\n";

    #[test]
    fn replaces_in_place_and_keeps_the_rest() {
        let t = with_option(CONF, "sm_priority", "7");
        assert_eq!(
            t,
            "# OpenSM configuration\n\
             # sm_priority 3 (a commented example stays)\n\
             sm_priority 7 # ours\n\
             \n\
             sweep_interval 10\n\
             lmc 0\n"
        );
        let t = with_option(&t, "polling_retry_number", "4");
        assert!(t.ends_with("lmc 0\npolling_retry_number 4\n"), "{t}");
        assert_eq!(with_option("a 1", "b", "2"), "a 1\nb 2\n");
        // A later duplicate goes: OpenSM would read it last.
        assert_eq!(with_option("x 1\nx 2\n", "x", "3"), "x 3\n");
    }

    #[test]
    fn file_is_replaced_atomically_keeping_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("opensm.conf");
        fs::write(&p, CONF).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        set_options(&p, &[("sweep_interval", "7".into())]).unwrap();
        let t = fs::read_to_string(&p).unwrap();
        assert!(
            t.contains("\nsweep_interval 7\n") && t.contains("# ours"),
            "{t}"
        );
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left");
        assert!(set_options(&dir.path().join("missing"), &[("a", "1".into())]).is_err());
    }
}
