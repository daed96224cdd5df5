//! OpenSM's partitions.conf: one parser for the simulator's partitions
//! ([`parse`]) and for ibSmPartitionConfig's edits ([`apply`]).
//!
//! The file is a list of statements `Name[=PKey][,flags] [: members] ;`
//! with `#` comments anywhere, members as `0xPORTGUID[=full|limited|both]`
//! or keywords (ALL, ALL_CAS, ALL_SWITCHES, SELF). OpenSM merges the
//! statements of one P_Key, so an edit acts on all of them: delete removes
//! every one, a member is removed or retyped wherever it stands, a new
//! member joins the first.
//!
//! Parsing runs over a copy of the text with comments blanked byte for byte
//! ([`mask`]), so every offset found there is an offset in the operator's
//! file; an edit splices only the bytes it changes, and every comment,
//! blank and other statement stays as it was.

use std::ops::Range;

use crate::types::Guid;

/// The default partition's P_Key (membership bit cleared).
pub const DEFAULT_PKEY: u16 = 0x7fff;

/// One partition configuration operation (IB-SM-MIB's ibSmPartitionConfig),
/// members named by port GUID as partitions.conf names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionOp {
    Create {
        key: u16,
    },
    Delete {
        key: u16,
    },
    AddMembers {
        key: u16,
        ports: Vec<u64>,
        full: bool,
    },
    RemoveMembers {
        key: u16,
        ports: Vec<u64>,
    },
    UpdateMemberType {
        key: u16,
        port: u64,
        full: bool,
    },
}

impl PartitionOp {
    /// The P_Key it acts on, membership bit cleared.
    pub fn key(&self) -> u16 {
        match self {
            PartitionOp::Create { key }
            | PartitionOp::Delete { key }
            | PartitionOp::AddMembers { key, .. }
            | PartitionOp::RemoveMembers { key, .. }
            | PartitionOp::UpdateMemberType { key, .. } => key & 0x7fff,
        }
    }
}

/// As the audit log says it: P_Key and port GUIDs in hex.
impl std::fmt::Display for PartitionOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let guids = |ports: &[u64]| {
            ports
                .iter()
                .map(|g| Guid(*g).to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let kind = |full: bool| if full { "full" } else { "limited" };
        match self {
            PartitionOp::Create { key } => write!(f, "create partition 0x{key:04x}"),
            PartitionOp::Delete { key } => write!(f, "delete partition 0x{key:04x}"),
            PartitionOp::AddMembers { key, ports, full } => write!(
                f,
                "add {} to partition 0x{key:04x} as {} members",
                guids(ports),
                kind(*full)
            ),
            PartitionOp::RemoveMembers { key, ports } => {
                write!(f, "remove {} from partition 0x{key:04x}", guids(ports))
            }
            PartitionOp::UpdateMemberType { key, port, full } => write!(
                f,
                "make {} a {} member of partition 0x{key:04x}",
                Guid(*port),
                kind(*full)
            ),
        }
    }
}

/// Who a member entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    All,
    AllCas,
    AllSwitches,
    SelfPort,
    Guid(u64),
}

/// One statement, read: what the simulator builds partitions from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The 15-bit P_Key base.
    pub pkey: u16,
    /// An IPoIB broadcast group is created for it.
    pub ipoib: bool,
    /// (who, full); `both` counts as full.
    pub members: Vec<(Who, bool)>,
}

/// One statement: `span` covers it up to and including its `;`.
struct Statement {
    span: Range<usize>,
    key: Option<u16>,
    /// Where its member list starts (just after the `:`), if it has one.
    members_at: Option<usize>,
    /// Its member entries, trimmed.
    entries: Vec<Range<usize>>,
}

/// `text` with every comment's bytes replaced by spaces (newlines kept):
/// the same length and offsets, no `#...` left to mislead the parser.
fn mask(text: &str) -> Vec<u8> {
    let mut out = text.as_bytes().to_vec();
    let mut in_comment = false;
    for b in out.iter_mut() {
        match *b {
            b'\n' => in_comment = false,
            b'#' => {
                in_comment = true;
                *b = b' ';
            }
            _ if in_comment => *b = b' ',
            _ => {}
        }
    }
    out
}

/// `r` without the ASCII white space at either end (in `m`).
fn trim(m: &[u8], r: Range<usize>) -> Range<usize> {
    let (mut s, mut e) = (r.start, r.end);
    while s < e && m.get(s).is_some_and(u8::is_ascii_whitespace) {
        s += 1;
    }
    while e > s && m.get(e - 1).is_some_and(u8::is_ascii_whitespace) {
        e -= 1;
    }
    s..e
}

fn text_of(m: &[u8], r: Range<usize>) -> &str {
    m.get(r)
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or_default()
}

/// The statements of a partitions.conf.
fn statements(text: &str) -> Vec<Statement> {
    let m = mask(text);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in m.iter().enumerate() {
        if *b != b';' {
            continue;
        }
        let body = trim(&m, start..i);
        start = i + 1;
        if body.is_empty() {
            continue;
        }
        let colon = m
            .get(body.clone())
            .and_then(|b| b.iter().position(|&c| c == b':'))
            .map(|p| body.start + p);
        let header = body.start..colon.unwrap_or(body.end);
        let mut entries = Vec::new();
        if let Some(c) = colon {
            let mut from = c + 1;
            for j in c + 1..=i {
                if j == i || m.get(j) == Some(&b',') {
                    let e = trim(&m, from..j);
                    if !e.is_empty() {
                        entries.push(e);
                    }
                    from = j + 1;
                }
            }
        }
        out.push(Statement {
            span: body.start..i + 1,
            key: key_of(text_of(&m, header)),
            members_at: colon.map(|c| c + 1),
            entries,
        });
    }
    out
}

/// The P_Key of a statement's header (`Name=0x8001, ...`), membership bit
/// cleared.
fn key_of(header: &str) -> Option<u16> {
    let name = header.split(',').next()?;
    let Some((_, v)) = name.split_once('=') else {
        // OpenSM's default partition needs no key.
        return (name.trim() == "Default").then_some(DEFAULT_PKEY);
    };
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
    .map(|k| k & 0x7fff)
}

/// A member entry's port GUID (`0x0002c9...=full`).
fn member_guid(entry: &str) -> Option<u64> {
    let g = entry.split('=').next()?.trim();
    let g = g.strip_prefix("0x").or_else(|| g.strip_prefix("0X"))?;
    u64::from_str_radix(g, 16).ok()
}

fn member(guid: u64, full: bool) -> String {
    format!("0x{guid:016x}={}", if full { "full" } else { "limited" })
}

/// Byte-range replacements, applied back to front.
struct Splices(Vec<(Range<usize>, String)>);

impl Splices {
    fn apply(mut self, text: &str) -> String {
        self.0.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
        let mut out = text.to_string();
        for (r, new) in self.0 {
            if out.is_char_boundary(r.start) && out.is_char_boundary(r.end) && r.end <= out.len() {
                out.replace_range(r, &new);
            }
        }
        out
    }
}

/// The ranges that remove the entries of `s` that `gone` picks, with their
/// commas: each run of removed entries up to the next kept entry (comments
/// on their lines go with them), or, a run at the end, from the comma after
/// the kept entry before it.
fn removals(
    text: &str,
    m: &[u8],
    s: &Statement,
    gone: impl Fn(&Range<usize>) -> bool,
) -> Vec<Range<usize>> {
    let e = &s.entries;
    let mut out = Vec::new();
    let mut k = 0;
    while k < e.len() {
        if !e.get(k).is_some_and(&gone) {
            k += 1;
            continue;
        }
        let i = k;
        while e.get(k).is_some_and(&gone) {
            k += 1;
        }
        let (Some(first), Some(last)) = (e.get(i), e.get(k - 1)) else {
            break;
        };
        let (first, last) = (first.start, last.end);
        out.push(match (e.get(k), i.checked_sub(1).and_then(|p| e.get(p))) {
            (Some(next), _) => first..next.start,
            (None, Some(prev)) => {
                let comma = (prev.end..first)
                    .find(|&j| m.get(j) == Some(&b','))
                    .unwrap_or(prev.end);
                comma..last
            }
            // All of them: with the blanks after the last, or else all but
            // one before the first, so `: a ;` becomes `: ;` (never a
            // newline, which may end a comment).
            (None, None) => {
                let b = text.as_bytes();
                let blank = |j: usize| matches!(b.get(j), Some(b' ' | b'\t'));
                let mut l = last;
                while blank(l) {
                    l += 1;
                }
                let mut f = first;
                if l == last {
                    while f > 1 && blank(f - 1) && blank(f - 2) {
                        f -= 1;
                    }
                }
                f..l
            }
        });
    }
    out
}

/// The statements of a partitions.conf, read (errors name the line): what
/// OpenSM would configure, statement by statement.
pub fn parse(text: &str) -> Result<Vec<Partition>, String> {
    let m = mask(text);
    let line = |at: usize| text.get(..at).map_or(1, |t| t.matches('\n').count() + 1);
    // Text after the last ';' must be blank.
    let end = statements(text).last().map_or(0, |s| s.span.end);
    if m.get(end..)
        .is_some_and(|r| !r.iter().all(u8::is_ascii_whitespace))
    {
        return Err(format!("line {}: missing ';'", line(end + 1)));
    }
    statements(text)
        .iter()
        .map(|s| read(&m, s).map_err(|e| format!("line {}: {e}", line(s.span.start))))
        .collect()
}

fn read(m: &[u8], s: &Statement) -> Result<Partition, String> {
    let header_end = s.members_at.map_or(s.span.end - 1, |a| a - 1);
    let header = text_of(m, s.span.start..header_end);
    let mut flags = header.split(',').map(str::trim);
    let name = flags.next().unwrap_or_default();
    let pkey = match (s.key, name.split_once('=')) {
        (Some(k), _) => k,
        (None, Some((_, k))) => return Err(format!("bad P_Key {:?}", k.trim())),
        (None, None) => return Err("a partition other than Default needs `=PKey`".into()),
    };
    if s.members_at.is_none() {
        return Err("expected `Name[=PKey][,flags] : members`".into());
    }
    let ipoib = flags.any(|f| f == "ipoib");
    let mut members = Vec::new();
    for r in &s.entries {
        let e = text_of(m, r.clone());
        let (who, kind) = match e.split_once('=') {
            Some((w, k)) => (w.trim(), k.trim()),
            None => (e, "limited"),
        };
        let full = match kind {
            "full" | "both" => true,
            "limited" => false,
            other => return Err(format!("bad membership {other:?}")),
        };
        let who = match who {
            "ALL" => Who::All,
            "ALL_CAS" => Who::AllCas,
            "ALL_SWITCHES" => Who::AllSwitches,
            "SELF" => Who::SelfPort,
            g => Who::Guid(member_guid(g).ok_or_else(|| format!("bad member {g:?}"))?),
        };
        members.push((who, full));
    }
    Ok(Partition {
        pkey,
        ipoib,
        members,
    })
}

/// `text` with `op` applied, or why it cannot be.
pub fn apply(text: &str, op: &PartitionOp) -> Result<String, String> {
    let key = op.key();
    let m = mask(text);
    let all = statements(text);
    let mine: Vec<&Statement> = all.iter().filter(|s| s.key == Some(key)).collect();
    let guid_at = |r: &Range<usize>| member_guid(text_of(&m, r.clone()));
    let mut splices = Splices(Vec::new());
    match op {
        PartitionOp::Create { .. } if !mine.is_empty() => {
            return Err(format!("partition 0x{key:04x} exists"))
        }
        PartitionOp::Create { .. } => {
            let mut t = text.to_string();
            if !t.is_empty() && !t.ends_with('\n') {
                t.push('\n');
            }
            t.push_str(&format!("P{key:04x}=0x{key:04x} : ;\n"));
            return Ok(t);
        }
        _ if mine.is_empty() => return Err(format!("no partition 0x{key:04x} in the file")),
        PartitionOp::Delete { .. } => {
            for s in &mine {
                // The statement, and the rest of its line when nothing else is on it.
                let rest = text.get(s.span.end..).unwrap_or_default();
                let end = match rest.find('\n') {
                    Some(i)
                        if m.get(s.span.end..s.span.end + i)
                            .is_some_and(|r| r.iter().all(u8::is_ascii_whitespace)) =>
                    {
                        s.span.end + i + 1
                    }
                    _ => s.span.end,
                };
                splices.0.push((s.span.start..end, String::new()));
            }
        }
        PartitionOp::AddMembers { ports, full, .. } => {
            // Already a member somewhere: retyped in place; else joins the first.
            let mut new = Vec::new();
            for &g in ports {
                let mut found = false;
                for s in &mine {
                    for r in s.entries.iter().filter(|r| guid_at(r) == Some(g)) {
                        splices.0.push((r.clone(), member(g, *full)));
                        found = true;
                    }
                }
                if !found {
                    new.push(member(g, *full));
                }
            }
            if let (Some(first), false) = (mine.first(), new.is_empty()) {
                let list = new.join(", ");
                let insert = match (first.entries.last(), first.members_at) {
                    (Some(last), _) => (last.end..last.end, format!(", {list}")),
                    (None, Some(at)) => (at..at, format!(" {list}")),
                    (None, None) => {
                        let semi = first.span.end - 1;
                        (semi..semi, format!(" : {list}"))
                    }
                };
                splices.0.push(insert);
            }
        }
        PartitionOp::RemoveMembers { ports, .. } => {
            for s in &mine {
                let gone = |r: &Range<usize>| guid_at(r).is_some_and(|g| ports.contains(&g));
                splices.0.extend(
                    removals(text, &m, s, gone)
                        .into_iter()
                        .map(|r| (r, String::new())),
                );
            }
            if splices.0.is_empty() {
                return Err(format!("no such member of partition 0x{key:04x}"));
            }
        }
        PartitionOp::UpdateMemberType { port, full, .. } => {
            for s in &mine {
                for r in s.entries.iter().filter(|r| guid_at(r) == Some(*port)) {
                    splices.0.push((r.clone(), member(*port, *full)));
                }
            }
            if splices.0.is_empty() {
                return Err(format!(
                    "0x{port:016x} is no member of partition 0x{key:04x}"
                ));
            }
        }
    }
    Ok(splices.apply(text))
}

/// The P_Keys the file configures (for tests and checks).
#[cfg(test)]
fn keys(text: &str) -> Vec<u16> {
    statements(text).iter().filter_map(|s| s.key).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# site partitions\n\
                        Default=0x7fff, ipoib : ALL=full;\n\
                        # storage\n\
                        Storage=0x0002, ipoib : 0x0000000000100001=full ;\n";

    fn add(key: u16, ports: &[u64], full: bool) -> PartitionOp {
        PartitionOp::AddMembers {
            key,
            ports: ports.to_vec(),
            full,
        }
    }

    fn remove(key: u16, ports: &[u64]) -> PartitionOp {
        PartitionOp::RemoveMembers {
            key,
            ports: ports.to_vec(),
        }
    }

    #[test]
    fn the_operations_touch_only_their_partition() {
        let t = apply(FILE, &PartitionOp::Create { key: 5 }).unwrap();
        assert_eq!(t, format!("{FILE}P0005=0x0005 : ;\n"));
        assert!(apply(&t, &PartitionOp::Create { key: 5 }).is_err());
        let t = apply(&t, &add(5, &[0x10_0004], true)).unwrap();
        assert!(
            t.ends_with("P0005=0x0005 : 0x0000000000100004=full ;\n"),
            "{t}"
        );
        let t = apply(
            &t,
            &PartitionOp::UpdateMemberType {
                key: 0x8005,
                port: 0x10_0004,
                full: false,
            },
        )
        .unwrap();
        assert!(
            t.ends_with("P0005=0x0005 : 0x0000000000100004=limited ;\n"),
            "{t}"
        );
        let t = apply(&t, &remove(5, &[0x10_0004])).unwrap();
        assert_eq!(t, format!("{FILE}P0005=0x0005 : ;\n"));
        let t = apply(&t, &PartitionOp::Delete { key: 5 }).unwrap();
        assert_eq!(t, FILE, "back to the operator's file");
        // Another partition's statement, with its odd spacing, is kept.
        let t = apply(FILE, &add(2, &[0x10_0007], false)).unwrap();
        assert_eq!(
            t,
            FILE.replace(
                "0x0000000000100001=full ;",
                "0x0000000000100001=full, 0x0000000000100007=limited ;"
            )
        );
        assert!(apply(FILE, &PartitionOp::Delete { key: 9 }).is_err());
        assert!(apply(FILE, &remove(2, &[0x99])).is_err());
    }

    /// OpenSM merges the statements of one P_Key: so do the edits.
    #[test]
    fn repeated_statements_of_one_key_act_as_one() {
        let file = "A=0x0003 : 0x0000000000000001=full;\n\
                    B=0x0004 : 0x0000000000000009;\n\
                    A2=0x8003, ipoib : 0x0000000000000002, 0x0000000000000001=limited;\n";
        let t = apply(file, &PartitionOp::Delete { key: 3 }).unwrap();
        assert_eq!(t, "B=0x0004 : 0x0000000000000009;\n");
        assert_eq!(keys(&t), vec![4]);
        // A member standing in both statements is removed from both.
        let t = apply(file, &remove(3, &[1])).unwrap();
        assert_eq!(
            t,
            "A=0x0003 : ;\n\
             B=0x0004 : 0x0000000000000009;\n\
             A2=0x8003, ipoib : 0x0000000000000002;\n"
        );
        // Retyped wherever it stands; adding an existing member retypes it.
        let t = apply(
            file,
            &PartitionOp::UpdateMemberType {
                key: 3,
                port: 1,
                full: true,
            },
        )
        .unwrap();
        assert_eq!(t.matches("0x0000000000000001=full").count(), 2, "{t}");
        let t = apply(file, &add(3, &[2, 5], true)).unwrap();
        assert!(
            t.starts_with("A=0x0003 : 0x0000000000000001=full, 0x0000000000000005=full;\n"),
            "{t}"
        );
        assert!(
            t.contains("A2=0x8003, ipoib : 0x0000000000000002=full,"),
            "{t}"
        );
        assert!(apply(file, &PartitionOp::Create { key: 3 }).is_err());
    }

    /// Comments inside a statement neither hide members nor get lost.
    #[test]
    fn comments_inside_statements_are_kept_and_skipped() {
        let file = "Storage=0x0002, ipoib :  # the servers\n\
                    \x20 # rack 1\n\
                    \x20 0x0000000000100001=full, # first\n\
                    \x20 0x0000000000100002 ;  # trailing; with a semicolon\n\
                    # Old=0x0009 : ALL;\n";
        assert_eq!(keys(file), vec![2], "a commented statement is no statement");
        // addMember of an existing member retypes, never duplicates.
        let t = apply(file, &add(2, &[0x10_0001], false)).unwrap();
        assert_eq!(
            t,
            file.replace("0x0000000000100001=full", "0x0000000000100001=limited")
        );
        let t = apply(file, &add(2, &[0x10_0003], true)).unwrap();
        assert_eq!(
            t,
            file.replace(
                "0x0000000000100002 ;",
                "0x0000000000100002, 0x0000000000100003=full ;"
            )
        );
        let t = apply(file, &remove(2, &[0x10_0001])).unwrap();
        assert_eq!(t, file.replace("0x0000000000100001=full, # first\n  ", ""));
        let t = apply(file, &remove(2, &[0x10_0002])).unwrap();
        assert_eq!(
            t,
            file.replace("=full, # first\n  0x0000000000100002", "=full")
        );
        let t = apply(file, &remove(2, &[0x10_0001, 0x10_0002])).unwrap();
        assert!(t.contains("# the servers\n  # rack 1\n  ;"), "{t:?}");
        assert!(t.contains("# Old=0x0009 : ALL;"), "{t}");
        let t = apply(file, &PartitionOp::Delete { key: 2 }).unwrap();
        assert!(!t.contains("0x0000000000100001=full"), "{t}");
        assert!(t.contains("# Old=0x0009 : ALL;"), "{t}");
    }

    #[test]
    fn parses_opensm_style_lines() {
        let p = parse(
            "# comment\nDefault=0x7fff, ipoib : ALL=full;\n\
             P1=0x8001, ipoib, mtu=4 : SELF=full,\n  0x0000000000100003=limited, ALL_SWITCHES=both ;\n\
             P2=0x2 : ALL_CAS; # a ; in a comment\nDefault : ALL;\n",
        )
        .unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].pkey, 0x7fff);
        assert_eq!(p[1].pkey, 1);
        assert!(p[1].ipoib && !p[2].ipoib);
        assert_eq!(
            p[1].members,
            vec![
                (Who::SelfPort, true),
                (Who::Guid(0x100003), false),
                (Who::AllSwitches, true)
            ]
        );
        assert_eq!(p[2].members, vec![(Who::AllCas, false)]);
        assert_eq!(p[3].pkey, DEFAULT_PKEY);
    }

    #[test]
    fn read_errors_name_the_line() {
        let e = parse("Default : ALL=full;\nP1 : ALL;\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(parse("P=0x1 : ALL=sometimes;").is_err());
        assert!(parse("P=0x1 : ALL").unwrap_err().contains("missing ';'"));
        assert!(parse("P=0xZZ : ALL;").is_err());
    }
}
