//! A deserializer's errors in an operator's words: what a key wants, what
//! it got, the nearest known key, and the file and line it is on.

use std::collections::BTreeMap;

use super::keys;

/// A top-level key written after a `[table]` belongs to that table in
/// TOML: say so, rather than "unknown key".
pub(super) fn misplaced_top_level_key(msg: &str, table: Option<&str>) -> Option<String> {
    let table = table?;
    let rest = msg.trim().strip_prefix("unknown field `")?;
    let (name, _) = rest.split_once('`')?;
    keys::is_top_level(name).then(|| {
        format!(
            "`{name}` is a top-level key: it must come before the first table \
             (here TOML reads it as part of {table})"
        )
    })
}

/// A deserializer's message in an operator's words: what the key wants, in
/// TOML's terms, and what it got; an unknown key with the nearest known one.
pub(super) fn operator_words(msg: &str, key: Option<&str>) -> String {
    let msg = msg.replace('\n', " ");
    let msg = msg.trim();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let (name, known) = rest.split_once('`').unwrap_or((rest, ""));
        let known: Vec<&str> = known.split('`').skip(1).step_by(2).collect();
        let hint = nearest(name, &known)
            .map(|k| format!(" (did you mean `{k}`?)"))
            .unwrap_or_default();
        return format!("unknown key `{name}`{hint}; docs/config.md lists every key");
    }
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        if let Some((got, want)) = rest.split_once(", expected ") {
            let key = key.map(|k| format!("{k}: ")).unwrap_or_default();
            return format!("{key}expected {}, found {}", wanted(want), found(got));
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        let (name, known) = rest.split_once('`').unwrap_or((rest, ""));
        let known = known.trim_start_matches(", expected ").replace('`', "");
        let key = key.map(|k| format!("{k}: ")).unwrap_or_default();
        return format!("{key}{name:?} is not one of {known}");
    }
    let key = key.map(|k| format!("{k}: ")).unwrap_or_default();
    if let Some(e) = msg.strip_prefix("data did not match any variant of untagged enum ") {
        return format!("{key}expected {}", wanted(e));
    }
    format!("{key}{msg}")
}

/// What serde says a key wants, as TOML calls it.
pub(super) fn wanted(want: &str) -> String {
    let w = want
        .trim()
        .trim_start_matches("a ")
        .trim_start_matches("an ");
    match w {
        "f64" | "f32" => "a number (e.g. 10 or 0.5)".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" => "a whole number".into(),
        "sequence" => "a list (e.g. [\"a\", \"b\"])".into(),
        "boolean" | "bool" => "true or false".into(),
        "path string" | "string" => "a string in quotes".into(),
        w if w.contains("StringOrList") => "a string or a list of strings".into(),
        w if w.starts_with("struct ") || w == "map" => "a table".into(),
        w => w.to_string(),
    }
}

/// What serde says a key got, as TOML calls it.
pub(super) fn found(got: &str) -> String {
    let g = got.trim();
    for (prefix, what) in [
        ("integer ", "the number "),
        ("floating point ", "the number "),
        ("string ", "the string "),
        ("boolean ", ""),
    ] {
        if let Some(v) = g.strip_prefix(prefix) {
            return format!("{what}{}", v.trim_matches('`'));
        }
    }
    match g {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        g => g.to_string(),
    }
}

/// The known key nearest to `name` (a typo), if near enough.
pub(super) fn nearest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::levenshtein(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min()
        .map(|(_, k)| k)
}

/// `FILE:LINE: key` for an error about a file setting (`key` for a table:
/// its header's line), or `FILE: key` when the line is unknown.
pub(super) fn place(origin: &str, lines: &BTreeMap<String, usize>, key: &str) -> String {
    let name = key.trim_matches(|c| c == '[' || c == ']');
    match (origin.is_empty(), lines.get(name)) {
        (true, _) => key.to_string(),
        (false, Some(l)) => format!("{origin}:{l}: {key}"),
        (false, None) => format!("{origin}: {key}"),
    }
}

/// The line of each top-level key (`key = ...`) and table (`[key]`,
/// `[[key]]`, first occurrence) of a TOML text.
pub(super) fn key_lines(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut top = true;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let name = if let Some(h) = t.strip_prefix('[') {
            top = false;
            h.trim_start_matches('[').split(']').next().map(str::trim)
        } else if top {
            t.split_once('=').map(|(k, _)| k.trim())
        } else {
            None
        };
        if let Some(n) = name.filter(|n| !n.is_empty() && !n.starts_with('#')) {
            out.entry(n.trim_matches('"').to_string()).or_insert(i + 1);
        }
    }
    out
}

/// 1-based line number of a byte offset.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()
        .get(..end)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count() + 1)
        .unwrap_or(1)
}
