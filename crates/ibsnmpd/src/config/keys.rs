//! The configuration's keys, one table: docs/config.md's "Keys" table,
//! compiled in. ibsnmpd.toml(5) is made from it ([`crate::man::config`]),
//! the loader names a misplaced top-level key from it, and a test checks
//! that it lists exactly the keys the loader accepts, so the page, the
//! docs and the parser cannot drift.

/// docs/config.md, as built.
const DOC: &str = include_str!("../../../../docs/config.md");

/// One row: the key (with its `[table]`), its flag, default and meaning,
/// as written in the docs (Markdown).
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub key: &'static str,
    pub flag: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

impl Key {
    /// The `[table]` or `[[table]]` names of the row (without brackets).
    pub fn tables(&self) -> impl Iterator<Item = &'static str> {
        names(self.key).filter_map(|n| {
            n.strip_prefix('[')
                .map(|t| t.trim_start_matches('[').trim_end_matches(']'))
        })
    }

    /// The top-level keys the row names (none when it is a table's).
    pub fn top_level(&self) -> impl Iterator<Item = &'static str> {
        let in_table = self.key.trim_start().starts_with("`[");
        names(self.key).filter(move |n| !in_table && !n.starts_with('['))
    }
}

/// The backquoted names of a cell.
fn names(cell: &'static str) -> impl Iterator<Item = &'static str> {
    cell.split('`').skip(1).step_by(2)
}

/// Every row of the table, in the docs' order.
pub fn table() -> Vec<Key> {
    let rows = DOC
        .split("\n## Keys\n")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .unwrap_or_default();
    rows.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            let [key, flag, default, meaning] = cells[..] else {
                return None;
            };
            Some(Key {
                key,
                flag,
                default,
                meaning,
            })
        })
        .collect()
}

/// Whether `name` is a key of the file's top level.
pub fn is_top_level(name: &str) -> bool {
    table()
        .iter()
        .any(|k| k.top_level().any(|n| n == name) || k.tables().any(|t| t == name))
}
