//! Node contexts' names (issue 39): every node of a snapshot is an SNMP
//! context named by its node GUID as 16 lowercase hex digits
//! (`0002c90300a1b2c3`), and also by its name (the first word of its
//! NodeDescription, which the node-name-map has already replaced) where
//! that name is unique in the snapshot and fits a contextName
//! (SnmpAdminString (SIZE(0..32))).
//!
//! A GUID resolves through the snapshot's own GUID index. Names need an
//! index of their own: [`ContextNames`] builds it once per snapshot, on
//! the first request that needs it (a name, or a walk of
//! vacmContextTable), and keeps nothing per node beyond it.

use std::collections::HashMap;
use std::sync::OnceLock;

use ib::model::{Node, NodeIdx, Snapshot};
use ib::types::Guid;

/// The longest contextName (SnmpAdminString (SIZE(0..32))).
pub const NAME_MAX: usize = 32;

/// The node a node context's view is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeContext {
    pub idx: NodeIdx,
    pub guid: Guid,
}

/// A node's GUID context name: 16 lowercase hex digits.
pub fn guid_name(g: Guid) -> String {
    format!("{:016x}", g.0)
}

/// The GUID a GUID context name stands for (exactly 16 lowercase hex
/// digits, as [`guid_name`] writes them).
pub fn parse_guid_name(name: &[u8]) -> Option<Guid> {
    if name.len() != 16 || !name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let text = std::str::from_utf8(name).ok()?;
    u64::from_str_radix(text, 16).ok().map(Guid)
}

/// A node's name as a context name candidate: the first word of its
/// description, when it fits a contextName and cannot be read as a GUID
/// name (so that a name never shadows a node's GUID).
pub fn node_name(node: &Node) -> Option<&str> {
    let word = node.description.split_whitespace().next()?;
    (word.len() <= NAME_MAX && parse_guid_name(word.as_bytes()).is_none()).then_some(word)
}

/// The order of vacmContextTable's index: shorter names first, then by
/// octets.
fn index_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The names index of one snapshot.
#[derive(Debug, Default)]
struct NameIndex {
    /// The unique names, in vacmContextTable order (binary-searched).
    names: Vec<(Box<str>, NodeIdx)>,
    /// Every node GUID, ascending (the order of their 16-digit names).
    guids: Vec<u64>,
}

impl NameIndex {
    fn build(s: &Snapshot) -> NameIndex {
        let mut count: HashMap<&str, (u32, NodeIdx)> = HashMap::with_capacity(s.nodes.len());
        for (i, n) in s.nodes.iter().enumerate() {
            if let (Some(name), Ok(idx)) = (node_name(n), NodeIdx::try_from(i)) {
                count.entry(name).or_insert((0, idx)).0 += 1;
            }
        }
        let mut names: Vec<(Box<str>, NodeIdx)> = count
            .into_iter()
            .filter(|(_, (c, _))| *c == 1)
            .map(|(name, (_, idx))| (Box::from(name), idx))
            .collect();
        names.sort_unstable_by(|a, b| index_order(a.0.as_bytes(), b.0.as_bytes()));
        let mut guids: Vec<u64> = s.nodes.iter().map(|n| n.info.node_guid.0).collect();
        guids.sort_unstable();
        guids.dedup();
        NameIndex { names, guids }
    }

    fn by_name(&self, name: &[u8]) -> Option<NodeIdx> {
        self.names
            .binary_search_by(|(n, _)| index_order(n.as_bytes(), name))
            .ok()
            .and_then(|i| self.names.get(i))
            .map(|(_, idx)| *idx)
    }

    fn next_name(&self, after: &[u8]) -> Option<Vec<u8>> {
        let i = self
            .names
            .partition_point(|(n, _)| index_order(n.as_bytes(), after).is_le());
        let name = self.names.get(i).map(|(n, _)| n.as_bytes().to_vec());
        let guid = self
            .next_guid(after)
            .map(|g| guid_name(Guid(g)).into_bytes());
        match (name, guid) {
            (Some(a), Some(b)) => Some(std::cmp::min_by(a, b, |a, b| index_order(a, b))),
            (a, b) => a.or(b),
        }
    }

    /// The first GUID whose name comes after `after`.
    fn next_guid(&self, after: &[u8]) -> Option<u64> {
        let first = match after.len() {
            0..=15 => 0,
            16 => match parse_guid_name(after) {
                Some(g) => g.0.checked_add(1)?,
                // A 16-octet name that is no GUID name: the first GUID name
                // above it in octet order.
                // GUID names sort as their GUIDs do: search, not scan.
                None => {
                    let i = self
                        .guids
                        .partition_point(|g| guid_name(Guid(*g)).as_bytes() <= after);
                    return self.guids.get(i).copied();
                }
            },
            _ => return None,
        };
        let i = self.guids.partition_point(|g| *g < first);
        self.guids.get(i).copied()
    }
}

/// The context names of one snapshot, indexed on first use.
#[derive(Debug, Default)]
pub struct ContextNames {
    index: OnceLock<NameIndex>,
}

impl ContextNames {
    fn index(&self, s: &Snapshot) -> &NameIndex {
        self.index.get_or_init(|| NameIndex::build(s))
    }

    /// The node a context name (never "") names in `s`.
    pub fn resolve(&self, s: &Snapshot, name: &[u8]) -> Option<NodeIdx> {
        match parse_guid_name(name) {
            Some(g) => s.node_by_guid(g),
            None if name.is_empty() || name.len() > NAME_MAX => None,
            None => self.index(s).by_name(name),
        }
    }

    /// The first node context name after `after` in vacmContextTable's
    /// order.
    pub fn next_name(&self, s: &Snapshot, after: &[u8]) -> Option<Vec<u8>> {
        self.index(s).next_name(after)
    }

    /// A node's name context, when it has one (its name is unique).
    pub fn name_of<'s>(&self, s: &'s Snapshot, n: NodeIdx) -> Option<&'s str> {
        let name = node_name(s.node(n)?)?;
        (self.index(s).by_name(name.as_bytes()) == Some(n)).then_some(name)
    }
}
