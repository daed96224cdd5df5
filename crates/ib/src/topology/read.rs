//! Reading topology files within bounds (docs/topology.md, "Limits").
//!
//! A plan is data from outside the agent: a file of it may be a FIFO, a
//! device, a gzip bomb or a file including itself. Only regular files are
//! read (checked before the open, which never blocks: `O_NONBLOCK`, and
//! again on the open handle); each file, decompressed, and all of a plan's
//! files together are bounded in size, as are a line's length, the depth of
//! `include`s and the number of files; no file is read twice. What is
//! quoted of a file's text in an error is at most [`QUOTE_MAX`] octets,
//! escaped.

// Input path: bytes from files never panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use super::TopologyError;
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

/// How much of a plan is read at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Octets of one file, after decompression.
    pub max_file_bytes: u64,
    /// Octets of all of a plan's files together, after decompression.
    pub max_total_bytes: u64,
    /// Octets of one line.
    pub max_line_bytes: usize,
    /// How deep `include`s nest (the top file is depth 0).
    pub max_include_depth: usize,
    /// Files read for one plan, the top file included.
    pub max_files: usize,
}

/// 64 MiB a file and in all (a 48,000-host fabric's ibnetdiscover output is
/// about 27 MB), lines of 8 KiB (ibsim's own limit is 1 KiB), includes 8
/// deep (ibsim's limit) and 256 files.
pub const DEFAULT_LIMITS: Limits = Limits {
    max_file_bytes: 64 << 20,
    max_total_bytes: 64 << 20,
    max_line_bytes: 8 << 10,
    max_include_depth: 8,
    max_files: 256,
};

impl Default for Limits {
    fn default() -> Self {
        DEFAULT_LIMITS
    }
}

/// The most octets of a file's text an error message quotes.
pub const QUOTE_MAX: usize = 40;

/// `s` as an error quotes it: escaped (`{:?}`), cut to [`QUOTE_MAX`]
/// octets of the text (on a character boundary) with `...` after the
/// closing quote when cut.
pub fn quote(s: &str) -> String {
    if s.len() <= QUOTE_MAX {
        return format!("{s:?}");
    }
    let mut end = QUOTE_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}... ({} octets)", s.get(..end).unwrap_or(""), s.len())
}

/// The lines of a topology text with their numbers (from 1), `\r` ends cut
/// and `#` comments left out; a blank line is `None`, for the formats in
/// which it ends a record.
pub fn record_lines(text: &str) -> impl Iterator<Item = (usize, Option<&str>)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().starts_with('#'))
        .map(|(n, l)| (n, (!l.trim().is_empty()).then_some(l)))
}

/// A path as an error names it: at most 160 octets (an `include` line's
/// file name is text of the plan).
pub fn path_name(p: &Path) -> String {
    let s = p.display().to_string();
    if s.len() <= 160 {
        return s;
    }
    let mut end = 160;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", s.get(..end).unwrap_or(""))
}

/// One plan's reading: what was read so far, against the limits.
#[derive(Debug)]
pub(crate) struct Reader {
    pub(crate) limits: Limits,
    total: u64,
    files: usize,
    /// (device, inode) of every file read: none twice.
    seen: HashSet<(u64, u64)>,
}

fn kind_of(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

impl Reader {
    pub(crate) fn new(limits: Limits) -> Self {
        Reader {
            limits,
            total: 0,
            files: 0,
            seen: HashSet::new(),
        }
    }

    /// The text of `path`, gzip-compressed or not, within the limits.
    pub(crate) fn read(&mut self, path: &Path) -> Result<String, TopologyError> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let file = path_name(path);
        let refuse = |reason: String| TopologyError::Refused {
            file: file.clone(),
            reason,
        };
        let io = |source| TopologyError::Io {
            file: file.clone(),
            source,
        };
        if self.files >= self.limits.max_files {
            return Err(refuse(format!(
                "more than {} files in one plan (the limit)",
                self.limits.max_files
            )));
        }
        // Before the open: a FIFO or a device is never opened at all.
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(refuse(format!(
                "{}: only regular files are read",
                kind_of(meta.file_type())
            )));
        }
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(io)?;
        // The file opened may not be the one looked at (replaced between).
        let meta = f.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(refuse(format!(
                "{}: only regular files are read",
                kind_of(meta.file_type())
            )));
        }
        if !self.seen.insert((meta.dev(), meta.ino())) {
            return Err(refuse(
                "read twice in one plan (each file is read once: an include of a file already read)"
                    .to_string(),
            ));
        }
        self.files += 1;
        let left = self.limits.max_total_bytes.saturating_sub(self.total);
        let cap = self.limits.max_file_bytes.min(left);
        let too_big = |n: &str| {
            refuse(format!(
                "{n} more than {cap} octets (limits: {} a file, {} a plan)",
                self.limits.max_file_bytes, self.limits.max_total_bytes
            ))
        };
        if meta.len() > cap {
            return Err(too_big(&format!("{} octets:", meta.len())));
        }
        let mut raw = Vec::new();
        (&f).take(cap.saturating_add(1))
            .read_to_end(&mut raw)
            .map_err(io)?;
        if raw.len() as u64 > cap {
            return Err(too_big("it has"));
        }
        let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(raw.as_slice())
                .take(cap.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(io)?;
            if out.len() as u64 > cap {
                return Err(too_big("it decompresses to"));
            }
            out
        } else {
            raw
        };
        self.total = self.total.saturating_add(bytes.len() as u64);
        if let Some((i, l)) = bytes
            .split(|b| *b == b'\n')
            .enumerate()
            .find(|(_, l)| l.len() > self.limits.max_line_bytes)
        {
            return Err(TopologyError::Syntax {
                file: file.clone(),
                line: i + 1,
                message: format!(
                    "line of {} octets: longer than the limit of {}",
                    l.len(),
                    self.limits.max_line_bytes
                ),
            });
        }
        String::from_utf8(bytes).map_err(|e| {
            refuse(format!(
                "not UTF-8 text (invalid octet at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_cuts_and_escapes() {
        assert_eq!(quote("a\"b"), "\"a\\\"b\"");
        let long = "é".repeat(100);
        let q = quote(&long);
        assert!(q.len() < 70, "{q}");
        assert!(q.ends_with("(200 octets)"), "{q}");
        assert_eq!(quote(&"x".repeat(40)).len(), 42);
    }
}
