//! Node contexts' names (issues 39 and 50): every node of a snapshot is an
//! SNMP context named by its node GUID as 16 lowercase hex digits
//! (`0002c90300a1b2c3`; `0x` and uppercase are accepted too), and also by
//! the name its operators use, read from its NodeDescription by the forms
//! clusters write ([`describe`]):
//!
//! - a switch is known by its name where no other switch has it;
//! - a channel adapter by its host name where no switch and no other
//!   adapter has it;
//! - the adapters of one host ("dgx01 mlx5_0" ... "dgx01 mlx5_7") are one
//!   context named by the host, holding every port of them
//!   ([`Target::Host`]), each adapter still reachable by its GUID.
//!
//! A name no rule gives to one context (two switches, a switch and hosts,
//! adapters of one name without distinct device words) is logged once
//! and the nodes keep their GUID contexts.
//!
//! A GUID resolves through the snapshot's own GUID index. Names need an
//! index of their own: [`ContextNames`] builds it once per snapshot, on
//! the first request that needs it (a name, or a walk of
//! vacmContextTable), and keeps nothing per node beyond it.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use ib::model::{Node, NodeIdx, Snapshot};
use ib::types::{Guid, NodeType};

/// The longest contextName (SnmpAdminString (SIZE(0..32))).
pub const NAME_MAX: usize = 32;

/// How far apart the ifIndexes of a host's adapters are: adapter k (by
/// device word) has ifIndex `k * HOST_IF_INDEX_STRIDE + port`.
pub const HOST_IF_INDEX_STRIDE: u32 = 1000;

/// What a node context is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// One node.
    Node(NodeIdx),
    /// The adapters of one host, ordered by device word.
    Host {
        name: Box<str>,
        members: Box<[NodeIdx]>,
    },
}

impl Target {
    /// The nodes whose ports the context serves, in ifIndex order.
    pub fn nodes(&self) -> &[NodeIdx] {
        match self {
            Target::Node(n) => std::slice::from_ref(n),
            Target::Host { members, .. } => members,
        }
    }
}

/// The node or host a node context's view is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeContext {
    pub target: Target,
    /// The GUID of its (first) node.
    pub guid: Guid,
}

impl NodeContext {
    /// The one node of a single-node context (None: a host's).
    pub fn single(&self) -> Option<NodeIdx> {
        match self.target {
            Target::Node(n) => Some(n),
            Target::Host { .. } => None,
        }
    }
}

/// A node's GUID context name: 16 lowercase hex digits.
pub fn guid_name(g: Guid) -> String {
    format!("{:016x}", g.0)
}

/// The GUID a GUID context name stands for, exactly as [`guid_name`]
/// writes it (16 lowercase hex digits): the names vacmContextTable lists.
pub fn parse_guid_name(name: &[u8]) -> Option<Guid> {
    if name.len() != 16 || !name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    parse_guid_spelling(name)
}

/// The GUID a context name spells, in any of the spellings operators
/// copy from tools: 16 hex digits in either case, with or without `0x`
/// (`0x0002C90300A1B2C3` as ibstat and saquery print it).
pub fn parse_guid_spelling(name: &[u8]) -> Option<Guid> {
    let digits = match name {
        [b'0', b'x' | b'X', rest @ ..] => rest,
        _ => name,
    };
    if digits.len() != 16 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let text = std::str::from_utf8(digits).ok()?;
    u64::from_str_radix(text, 16).ok().map(Guid)
}

/// What a NodeDescription says of its node, in the forms clusters write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Described<'a> {
    /// The node's (or its host's) name.
    pub name: Option<&'a str>,
    /// The RDMA device word of rdma-ndd's "HOST DEVICE" form (`mlx5_0`,
    /// `HCA-1`), channel adapters only.
    pub device: Option<&'a str>,
}

/// Reads a NodeDescription:
///
/// | form | name | device |
/// |---|---|---|
/// | `MF0;ib-leaf-07:MQM8790/U1` (NVIDIA/Mellanox managed switch) | `ib-leaf-07` | - |
/// | `leaf-a.rack01 SB7800`, `ib-spine-02 QM8700 (row B)` (switch) | the first word | - |
/// | `dgx01 mlx5_0`, `cn001 HCA-1`, `stor-1 mlx5_0 (dual)` (adapter) | the first word | the second word |
/// | `cn002 compute node` (adapter, no device word) | the first word | - |
/// | `MT4123 ConnectX6 Mellanox Technologies` (firmware default) | the first word | - |
///
/// A device word starts with a letter, ends with a digit and holds only
/// letters, digits, `_` and `-` (what the kernel names RDMA devices).
pub fn describe(description: &str, switch: bool) -> Described<'_> {
    let mut words = description.split_whitespace();
    let first = words.next();
    let managed = first.and_then(|w| {
        let (_, rest) = w.split_once(';')?;
        let (host, _) = rest.split_once(':')?;
        (!host.is_empty()).then_some(host)
    });
    // rdma-ndd's form is two words; a comment in parentheses may follow.
    // A firmware's default ("MT4123 ConnectX6 Mellanox Technologies") is
    // not that form.
    let device = if switch || managed.is_some() {
        None
    } else {
        let second = words.next().filter(|w| is_device_word(w));
        let rest_is_comment = words.next().is_none_or(|w| w.starts_with('('));
        second.filter(|_| rest_is_comment)
    };
    Described {
        name: managed.or(first),
        device,
    }
}

fn is_device_word(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() <= NAME_MAX
        && b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.last().is_some_and(u8::is_ascii_digit)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
}

fn is_switch(node: &Node) -> bool {
    node.info.node_type == NodeType::Switch as u8
}

/// What a node's NodeDescription says of it ([`describe`]).
pub fn described(node: &Node) -> Described<'_> {
    describe(&node.description, is_switch(node))
}

/// A node's name as a context name candidate: its described name, when it
/// fits a contextName, holds no control character and cannot be read as a
/// GUID (so that a name never shadows a node's GUID).
pub fn node_name(node: &Node) -> Option<&str> {
    described(node).name.filter(|w| usable_name(w))
}

fn usable_name(w: &str) -> bool {
    !w.is_empty()
        && w.len() <= NAME_MAX
        && !w.chars().any(char::is_control)
        && parse_guid_spelling(w.as_bytes()).is_none()
}

/// The order of vacmContextTable's index: shorter names first, then by
/// octets.
fn index_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Why a name names no context (logged once per name and reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Clash {
    /// Several switches (or routers) have it.
    Switches,
    /// One switch has it, and adapters too: the switch keeps it.
    SwitchAndHosts,
    /// Several adapters have it without distinct device words.
    Adapters,
}

/// The names already logged, kept across snapshots by the publisher so
/// that each clash is logged once, not at every sweep.
pub type Reported = Arc<Mutex<HashSet<(Box<str>, &'static str)>>>;

/// The names index of one snapshot.
#[derive(Debug, Default)]
struct NameIndex {
    /// The names that name a context, in vacmContextTable order
    /// (binary-searched).
    names: Vec<(Box<str>, Target)>,
    /// Every node GUID, ascending (the order of their 16-digit names).
    guids: Vec<u64>,
}

/// The nodes of one name, by kind.
#[derive(Default)]
struct Claimants<'s> {
    switches: Vec<NodeIdx>,
    adapters: Vec<(Option<&'s str>, NodeIdx)>,
}

impl NameIndex {
    fn build(s: &Snapshot, reported: &Reported) -> NameIndex {
        let mut by_name: BTreeMap<&str, Claimants> = BTreeMap::new();
        for (i, n) in s.nodes.iter().enumerate() {
            let (Some(name), Ok(idx)) = (node_name(n), NodeIdx::try_from(i)) else {
                continue;
            };
            let c = by_name.entry(name).or_default();
            if is_switch(n) || n.info.node_type == NodeType::Router as u8 {
                c.switches.push(idx);
            } else {
                c.adapters.push((described(n).device, idx));
            }
        }
        let mut names: Vec<(Box<str>, Target)> = Vec::with_capacity(by_name.len());
        for (name, c) in by_name {
            let (target, clash) = name_target(name, c);
            if let Some((clash, count)) = clash {
                report(reported, name, clash, count);
            }
            if let Some(t) = target {
                names.push((Box::from(name), t));
            }
        }
        names.sort_unstable_by(|a, b| index_order(a.0.as_bytes(), b.0.as_bytes()));
        let mut guids: Vec<u64> = s.nodes.iter().map(|n| n.info.node_guid.0).collect();
        guids.sort_unstable();
        guids.dedup();
        NameIndex { names, guids }
    }

    fn by_name(&self, name: &[u8]) -> Option<&Target> {
        self.names
            .binary_search_by(|(n, _)| index_order(n.as_bytes(), name))
            .ok()
            .and_then(|i| self.names.get(i))
            .map(|(_, t)| t)
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

/// The context a name gives, by the rules of the module docs, and the
/// clash to log (with how many nodes have the name) where nodes lose it.
fn name_target(name: &str, c: Claimants<'_>) -> (Option<Target>, Option<(Clash, usize)>) {
    match (c.switches.as_slice(), c.adapters.len()) {
        ([one], 0) => (Some(Target::Node(*one)), None),
        ([one], n) => (
            Some(Target::Node(*one)),
            Some((Clash::SwitchAndHosts, n + 1)),
        ),
        ([], 1) => (c.adapters.first().map(|a| Target::Node(a.1)), None),
        ([], n) => match host(name, c.adapters) {
            Some(h) => (Some(h), None),
            None => (None, Some((Clash::Adapters, n))),
        },
        (many, n) => (None, Some((Clash::Switches, many.len() + n))),
    }
}

/// The adapters of one host, when each has a device word of its own.
fn host(name: &str, mut adapters: Vec<(Option<&str>, NodeIdx)>) -> Option<Target> {
    if adapters.iter().any(|(d, _)| d.is_none()) {
        return None;
    }
    adapters.sort_unstable_by(|a, b| device_order(a.0, b.0));
    if adapters.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    Some(Target::Host {
        name: Box::from(name),
        members: adapters.into_iter().map(|(_, n)| n).collect(),
    })
}

/// Device words in the order their numbers count (`mlx5_2` before
/// `mlx5_10`): shorter first, then by octets.
fn device_order(a: Option<&str>, b: Option<&str>) -> std::cmp::Ordering {
    let (a, b) = (a.unwrap_or(""), b.unwrap_or(""));
    index_order(a.as_bytes(), b.as_bytes())
}

fn report(reported: &Reported, name: &str, clash: Clash, count: usize) {
    let (key, rule) = match clash {
        Clash::Switches => (
            "switches",
            "several switches: each is reachable by its GUID context only",
        ),
        Clash::SwitchAndHosts => (
            "switch+hosts",
            "a switch and channel adapters: the name is the switch's context; the adapters are reachable by their GUID contexts",
        ),
        Clash::Adapters => (
            "adapters",
            "channel adapters without distinct device words: each is reachable by its GUID context only",
        ),
    };
    let first = reported
        .lock()
        .map(|mut r| r.insert((Box::from(name), key)))
        .unwrap_or(true);
    if first {
        tracing::warn!(
            "node context name {} is shared by {count} nodes, {rule}",
            name.escape_debug()
        );
    }
}

/// The context names of one snapshot, indexed on first use.
#[derive(Debug, Default)]
pub struct ContextNames {
    index: OnceLock<NameIndex>,
    reported: Reported,
}

impl ContextNames {
    /// Names whose clashes are logged once across snapshots: `reported`
    /// is shared by every snapshot's names of one publisher.
    pub fn new(reported: Reported) -> Self {
        ContextNames {
            index: OnceLock::new(),
            reported,
        }
    }

    fn index(&self, s: &Snapshot) -> &NameIndex {
        self.index
            .get_or_init(|| NameIndex::build(s, &self.reported))
    }

    /// What a context name (never "") names in `s`.
    pub fn resolve(&self, s: &Snapshot, name: &[u8]) -> Option<Target> {
        match parse_guid_spelling(name) {
            Some(g) => s.node_by_guid(g).map(Target::Node),
            None if name.is_empty() || name.len() > NAME_MAX => None,
            None => self.index(s).by_name(name).cloned(),
        }
    }

    /// The first node context name after `after` in vacmContextTable's
    /// order.
    pub fn next_name(&self, s: &Snapshot, after: &[u8]) -> Option<Vec<u8>> {
        self.index(s).next_name(after)
    }

    /// A node's own name context, when it has one (the name is its alone).
    pub fn name_of<'s>(&self, s: &'s Snapshot, n: NodeIdx) -> Option<&'s str> {
        let name = node_name(s.node(n)?)?;
        (self.index(s).by_name(name.as_bytes()) == Some(&Target::Node(n))).then_some(name)
    }
}
