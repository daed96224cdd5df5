//! Edits of OpenSM's partitions.conf for ibSmPartitionConfig operations.
//!
//! The file is a list of statements `Name[=PKey][,flags] [: members] ;`
//! with `#` comments. An edit touches only the statement of the partition
//! it names (members as `0xPORTGUID=full|limited`); comments, blank lines
//! and every other statement are kept byte for byte.

use mibs::ib_sm_set::PartitionOp;

/// One statement's place in the text: `start..end` covers it up to and
/// including its `;`.
struct Statement {
    start: usize,
    end: usize,
    key: Option<u16>,
}

/// The statements of a partitions.conf (comments skipped).
fn statements(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut start = None;
    let mut in_comment = false;
    for (i, c) in text.char_indices() {
        match c {
            '\n' => in_comment = false,
            '#' => in_comment = true,
            _ if in_comment => {}
            ';' => {
                if let Some(s) = start.take() {
                    out.push(Statement {
                        start: s,
                        end: i + 1,
                        key: key_of(text.get(s..i).unwrap_or_default()),
                    });
                }
            }
            c if !c.is_whitespace() && start.is_none() => start = Some(i),
            _ => {}
        }
    }
    out
}

/// The P_Key of a statement's header (`Name=0x8001, ...`), membership bit
/// cleared.
fn key_of(stmt: &str) -> Option<u16> {
    let header = stmt.split(':').next()?.split(',').next()?;
    let v = header.split('=').nth(1)?.trim();
    let v = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"))?;
    u16::from_str_radix(v, 16).ok().map(|k| k & 0x7fff)
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

/// The statement rebuilt with `f` applied to its member entries.
fn edit_members(stmt: &str, f: impl FnOnce(Vec<String>) -> Vec<String>) -> String {
    let body = stmt.trim_end_matches(';');
    let (header, members) = match body.split_once(':') {
        Some((h, m)) => (h.trim_end(), m),
        None => (body.trim_end(), ""),
    };
    let entries: Vec<String> = members
        .split(',')
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect();
    let entries = f(entries);
    if entries.is_empty() {
        format!("{header} : ;")
    } else {
        format!("{header} : {};", entries.join(", "))
    }
}

/// `text` with `op` applied, or why it cannot be.
pub fn apply(text: &str, op: &PartitionOp) -> Result<String, String> {
    let key = match op {
        PartitionOp::Create { key }
        | PartitionOp::Delete { key }
        | PartitionOp::AddMembers { key, .. }
        | PartitionOp::RemoveMembers { key, .. }
        | PartitionOp::UpdateMemberType { key, .. } => key & 0x7fff,
    };
    let found = statements(text).into_iter().find(|s| s.key == Some(key));
    let splice = |s: &Statement, new: &str| {
        format!(
            "{}{new}{}",
            text.get(..s.start).unwrap_or_default(),
            text.get(s.end..).unwrap_or_default()
        )
    };
    let stmt = |s: &Statement| text.get(s.start..s.end).unwrap_or_default().to_string();
    match (op, found) {
        (PartitionOp::Create { .. }, Some(_)) => Err(format!("partition 0x{key:04x} exists")),
        (PartitionOp::Create { .. }, None) => {
            let mut t = text.to_string();
            if !t.is_empty() && !t.ends_with('\n') {
                t.push('\n');
            }
            t.push_str(&format!("P{key:04x}=0x{key:04x} : ;\n"));
            Ok(t)
        }
        (_, None) => Err(format!("no partition 0x{key:04x} in the file")),
        (PartitionOp::Delete { .. }, Some(s)) => {
            // The statement and the rest of its line when nothing else is on it.
            let rest = text.get(s.end..).unwrap_or_default();
            let end = match rest.find('\n') {
                Some(i) if rest.get(..i).is_some_and(|r| r.trim().is_empty()) => s.end + i + 1,
                _ => s.end,
            };
            Ok(format!(
                "{}{}",
                text.get(..s.start).unwrap_or_default(),
                text.get(end..).unwrap_or_default()
            ))
        }
        (PartitionOp::AddMembers { ports, full, .. }, Some(s)) => {
            let new = edit_members(&stmt(&s), |mut e| {
                e.retain(|x| member_guid(x).is_none_or(|g| !ports.contains(&g)));
                e.extend(ports.iter().map(|&g| member(g, *full)));
                e
            });
            Ok(splice(&s, &new))
        }
        (PartitionOp::RemoveMembers { ports, .. }, Some(s)) => {
            let st = stmt(&s);
            let before = st.matches("0x").count();
            let new = edit_members(&st, |mut e| {
                e.retain(|x| member_guid(x).is_none_or(|g| !ports.contains(&g)));
                e
            });
            if new.matches("0x").count() == before {
                return Err(format!("no such member of partition 0x{key:04x}"));
            }
            Ok(splice(&s, &new))
        }
        (PartitionOp::UpdateMemberType { port, full, .. }, Some(s)) => {
            let mut hit = false;
            let new = edit_members(&stmt(&s), |e| {
                e.into_iter()
                    .map(|x| {
                        if member_guid(&x) == Some(*port) {
                            hit = true;
                            member(*port, *full)
                        } else {
                            x
                        }
                    })
                    .collect()
            });
            if !hit {
                return Err(format!(
                    "0x{port:016x} is no member of partition 0x{key:04x}"
                ));
            }
            Ok(splice(&s, &new))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# site partitions\n\
                        Default=0x7fff, ipoib : ALL=full;\n\
                        # storage\n\
                        Storage=0x0002, ipoib : 0x0000000000100001=full ;\n";

    #[test]
    fn the_four_operations_touch_only_their_partition() {
        let t = apply(FILE, &PartitionOp::Create { key: 5 }).unwrap();
        assert_eq!(t, format!("{FILE}P0005=0x0005 : ;\n"));
        assert!(apply(&t, &PartitionOp::Create { key: 5 }).is_err());
        let t = apply(
            &t,
            &PartitionOp::AddMembers {
                key: 5,
                ports: vec![0x10_0004],
                full: true,
            },
        )
        .unwrap();
        assert!(
            t.ends_with("P0005=0x0005 : 0x0000000000100004=full;\n"),
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
            t.ends_with("P0005=0x0005 : 0x0000000000100004=limited;\n"),
            "{t}"
        );
        let t = apply(
            &t,
            &PartitionOp::RemoveMembers {
                key: 5,
                ports: vec![0x10_0004],
            },
        )
        .unwrap();
        assert!(t.ends_with("P0005=0x0005 : ;\n"), "{t}");
        let t = apply(&t, &PartitionOp::Delete { key: 5 }).unwrap();
        assert_eq!(t, FILE, "back to the operator's file");
        // Another partition's statement, with its odd spacing, is kept.
        let t = apply(
            FILE,
            &PartitionOp::AddMembers {
                key: 2,
                ports: vec![0x10_0007],
                full: false,
            },
        )
        .unwrap();
        assert!(t.starts_with("# site partitions\nDefault=0x7fff, ipoib : ALL=full;\n# storage\n"));
        assert!(t.contains(
            "Storage=0x0002, ipoib : 0x0000000000100001=full, 0x0000000000100007=limited;"
        ));
        assert!(apply(FILE, &PartitionOp::Delete { key: 9 }).is_err());
        assert!(apply(
            FILE,
            &PartitionOp::RemoveMembers {
                key: 2,
                ports: vec![0x99]
            }
        )
        .is_err());
    }
}
