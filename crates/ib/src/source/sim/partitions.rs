//! Partitions for the simulator from an OpenSM partitions.conf-style text:
//! `Name[=PKey][,ipoib][,flag=..] : member[=full|limited|both], ... ;`
//! with members `ALL`, `ALL_CAS`, `ALL_SWITCHES`, `SELF` (the SM's port) or
//! a port GUID. Comments start with `#`. What the sim needs only: no
//! `defmember`, QoS or multicast-group lines (their flags are ignored).

use crate::source::SourceError;

/// Who a member entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Who {
    All,
    AllCas,
    AllSwitches,
    SelfPort,
    Guid(u64),
}

/// One partition line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartitionSpec {
    /// The 15-bit P_Key base.
    pub pkey: u16,
    /// An IPoIB broadcast group is created for it.
    pub ipoib: bool,
    /// (who, full); `both` counts as full.
    pub members: Vec<(Who, bool)>,
}

fn bad(line: usize, msg: &str) -> SourceError {
    SourceError::Invalid(format!("partitions line {line}: {msg}"))
}

/// Parses the whole text; errors name the line.
pub(crate) fn parse(text: &str) -> Result<Vec<PartitionSpec>, SourceError> {
    let mut out = Vec::new();
    // Statements end with ';' and may span lines: track each one's first line.
    let mut stmt = String::new();
    let mut first_line = 0;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default();
        for ch in line.chars() {
            if stmt.trim().is_empty() && !ch.is_whitespace() {
                first_line = n + 1;
            }
            if ch == ';' {
                out.push(statement(&stmt, first_line)?);
                stmt.clear();
            } else {
                stmt.push(ch);
            }
        }
        stmt.push(' ');
    }
    if !stmt.trim().is_empty() {
        return Err(bad(first_line, "missing ';'"));
    }
    Ok(out)
}

fn statement(s: &str, line: usize) -> Result<PartitionSpec, SourceError> {
    let (head, body) = s
        .split_once(':')
        .ok_or_else(|| bad(line, "expected `Name[=PKey][,flags] : members`"))?;
    let mut flags = head.split(',').map(str::trim);
    let name = flags.next().unwrap_or_default();
    let pkey = match name.split_once('=') {
        Some((_, k)) => {
            let k = k.trim();
            let v = k
                .strip_prefix("0x")
                .map_or_else(|| k.parse().ok(), |h| u16::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad(line, &format!("bad P_Key {k:?}")))?;
            v & 0x7fff
        }
        None if name == "Default" => 0x7fff,
        None => return Err(bad(line, "a partition other than Default needs `=PKey`")),
    };
    let ipoib = flags.any(|f| f == "ipoib");
    let mut members = Vec::new();
    for m in body.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let (who, kind) = match m.split_once('=') {
            Some((w, k)) => (w.trim(), k.trim()),
            None => (m, "limited"),
        };
        let full = match kind {
            "full" | "both" => true,
            "limited" => false,
            other => return Err(bad(line, &format!("bad membership {other:?}"))),
        };
        let who = match who {
            "ALL" => Who::All,
            "ALL_CAS" => Who::AllCas,
            "ALL_SWITCHES" => Who::AllSwitches,
            "SELF" => Who::SelfPort,
            g => Who::Guid(
                g.strip_prefix("0x")
                    .and_then(|h| u64::from_str_radix(h, 16).ok())
                    .ok_or_else(|| bad(line, &format!("bad member {g:?}")))?,
            ),
        };
        members.push((who, full));
    }
    Ok(PartitionSpec {
        pkey,
        ipoib,
        members,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_opensm_style_lines() {
        let p = parse(
            "# comment\nDefault=0x7fff, ipoib : ALL=full;\n\
             P1=0x8001, ipoib, mtu=4 : SELF=full,\n  0x0000000000100003=limited, ALL_SWITCHES=both ;\n\
             P2=0x2 : ALL_CAS;\n",
        )
        .unwrap();
        assert_eq!(p.len(), 3);
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
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("Default : ALL=full;\nP1 : ALL;\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(parse("P=0x1 : ALL=sometimes;").is_err());
        assert!(parse("P=0x1 : ALL").is_err());
        assert!(parse("P=0xZZ : ALL;").is_err());
    }
}
