//! Writing OpenSM's files: the new text (made by [`ib::opensm`]) replaces
//! the old atomically and privately (a temporary file beside it with the
//! original's mode, owner and group from its creation, fsync, rename, fsync
//! of the directory).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// The temporary files [`replace`] makes beside `path` start with this.
fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.ibsnmpd.")
}

/// Replaces the file at `path` with `bytes` atomically: a temporary file
/// beside it, created exclusively (O_EXCL, never through a link) with the
/// original's mode from the first byte (0600 for a new file: opensm.conf
/// may hold sm_key), given the original's owner and group, fsynced, renamed
/// over it; then the directory is fsynced.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let dir = path.parent().unwrap_or(Path::new("."));
    let old = fs::metadata(path).ok();
    let mode = old.as_ref().map_or(0o600, |m| m.mode() & 0o7777);
    let tmp = dir.join(format!("{}{}.tmp", temp_prefix(path), std::process::id()));
    // A leftover of an earlier process with our pid (or of a crash).
    let _ = fs::remove_file(&tmp);
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode & 0o777)
            .open(&tmp)?;
        // The umask may have narrowed the mode; it only ever takes bits away.
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        // Keep the owner and group (an agent that may not give them fails
        // here, before anything is replaced).
        if let Some(m) = &old {
            let new = f.metadata()?;
            if (new.uid(), new.gid()) != (m.uid(), m.gid()) {
                std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()))?;
            }
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

/// Removes temporary files [`replace`] left beside `path` (a crash between
/// create and rename); returns how many.
pub fn remove_stale_temps(path: &Path) -> usize {
    let dir = path.parent().unwrap_or(Path::new("."));
    let prefix = temp_prefix(path);
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(&prefix) && n.ends_with(".tmp")
        })
        .filter(|e| fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets options in the file at `path` atomically.
    pub fn set_options(path: &Path, options: &[(&str, String)]) -> io::Result<()> {
        let mut text = fs::read_to_string(path)?;
        for (k, v) in options {
            text = ib::opensm::conf::with_option(&text, k, v);
        }
        replace(path, text.as_bytes())
    }

    /// (The option editing itself is `ib::opensm::conf`'s, tested there.)
    const CONF: &str = "# site\nsweep_interval 10 # ours\n";

    /// CONF as `opensm.conf` in a fresh directory, with permissions `mode`.
    fn conf_file(mode: u32) -> (tempfile::TempDir, std::path::PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("opensm.conf");
        fs::write(&p, CONF).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        (dir, p)
    }

    #[test]
    fn file_is_replaced_atomically_keeping_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, p) = conf_file(0o600);
        set_options(&p, &[("sweep_interval", "7".into())]).unwrap();
        let t = fs::read_to_string(&p).unwrap();
        assert_eq!(t, "# site\nsweep_interval 7 # ours\n");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left");
        assert!(set_options(&dir.path().join("missing"), &[("a", "1".into())]).is_err());
    }

    /// The temporary file never has more permissions than the original,
    /// whatever the umask: it is created with them (watched from another
    /// thread while edits run), and the owner and group stay.
    #[test]
    fn the_temporary_file_is_born_with_the_final_mode() {
        use std::os::unix::fs::MetadataExt;
        let (dir, p) = conf_file(0o640);
        // As root (CI), an owner other than the agent's must stay too.
        let _ = std::os::unix::fs::chown(&p, Some(65534), Some(65534));
        let before = fs::metadata(&p).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = {
            let (d, stop) = (dir.path().to_path_buf(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for e in fs::read_dir(&d).unwrap().flatten() {
                        if let Ok(m) = e.metadata() {
                            seen.push(m.mode() & 0o777);
                        }
                    }
                }
                seen
            })
        };
        for i in 0..200 {
            set_options(&p, &[("sweep_interval", i.to_string())]).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let seen = watcher.join().unwrap();
        assert!(
            seen.iter().all(|m| m & !0o640 == 0),
            "mode {:o} seen",
            seen.iter().fold(0, |a, m| a | m)
        );
        let after = fs::metadata(&p).unwrap();
        assert_eq!(after.mode() & 0o777, 0o640);
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
        // A new file is 0600.
        let new = dir.path().join("partitions.conf");
        replace(&new, b"Default=0x7fff : ALL;\n").unwrap();
        assert_eq!(fs::metadata(&new).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn stale_temporary_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("opensm.conf");
        fs::write(&p, CONF).unwrap();
        fs::write(dir.path().join(".opensm.conf.ibsnmpd.4242.tmp"), "x").unwrap();
        fs::write(dir.path().join(".other.ibsnmpd.1.tmp"), "x").unwrap();
        assert_eq!(remove_stale_temps(&p), 1);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
