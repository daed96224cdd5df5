//! infiniband-diags' node-name-map: `0xGUID "name"` per line, `#` comments.
//!
//! The names replace node descriptions in each snapshot as the source thread
//! publishes it (one place), so every reader sees them: IF-MIB ifDescr,
//! IB-SM-MIB, metrics labels, event logs and dumps. The map is swapped on
//! SIGHUP; the next sweep carries the new names.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arc_swap::ArcSwap;
use ib::model::Snapshot;

/// Node GUID to name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NodeNameMap {
    names: HashMap<u64, String>,
}

/// The map in force, swappable at run time.
pub type SharedNodeNameMap = Arc<ArcSwap<NodeNameMap>>;

impl NodeNameMap {
    /// Reads a map file; errors name the file and line.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read node-name-map: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}:{e}", path.display()))
    }

    /// Parses the text of a map: `GUID NAME` where GUID is hex with `0x`
    /// (as ibnetdiscover prints it) and NAME is quoted or the rest of the
    /// line. Later lines win, as in infiniband-diags.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut names = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let lineno = i + 1;
            let (guid, rest) = line
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("{lineno}: expected 0xGUID \"name\""))?;
            let hex = guid
                .strip_prefix("0x")
                .or_else(|| guid.strip_prefix("0X"))
                .unwrap_or(guid);
            let guid = u64::from_str_radix(hex, 16)
                .map_err(|_| format!("{lineno}: {guid:?} is not a GUID"))?;
            let name = unquote(rest.trim())
                .ok_or_else(|| format!("{lineno}: unterminated quoted name"))?;
            if name.is_empty() {
                return Err(format!("{lineno}: empty name"));
            }
            names.insert(guid, name.to_string());
        }
        Ok(NodeNameMap { names })
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn get(&self, guid: u64) -> Option<&str> {
        self.names.get(&guid).map(String::as_str)
    }

    /// Replaces the description of every mapped node.
    pub fn apply(&self, snap: &mut Snapshot) {
        if self.names.is_empty() {
            return;
        }
        for n in &mut snap.nodes {
            if let Some(name) = self.get(n.info.node_guid.0) {
                if n.description != name {
                    n.description = name.to_string();
                }
            }
        }
    }
}

/// `"name"` (a `#` after the closing quote starts a comment) or a bare name
/// up to a `#` comment.
fn unquote(s: &str) -> Option<&str> {
    match s.strip_prefix('"') {
        Some(q) => q.find('"').and_then(|end| q.get(..end)),
        None => Some(s.split('#').next().unwrap_or("").trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infiniband_diags_format() {
        let m = NodeNameMap::parse(
            "# comment\n\n0x0002c90300001234 \"leaf01 (rack 3)\"\n\
             0xABCDEF   spine-1  # trailing\n0x1 \"a\" # c\n0x1 \"b\"\n",
        )
        .unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m.get(0x0002c90300001234), Some("leaf01 (rack 3)"));
        assert_eq!(m.get(0xabcdef), Some("spine-1"));
        assert_eq!(m.get(1), Some("b"));
        for bad in ["0xzz \"x\"", "0x1", "0x1 \"open", "0x1 \"\""] {
            let e = NodeNameMap::parse(bad).unwrap_err();
            assert!(e.starts_with("1: "), "{bad}: {e}");
        }
    }
}
