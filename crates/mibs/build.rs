//! Generates `$OUT_DIR/oids.rs` from the MIB module files the project ships
//! (`mibs/` at the workspace root), so that the OIDs the code serves can never
//! drift from the OIDs the MIB files declare.
//!
//! A purpose-built parser of value assignments
//! `name <MACRO> ... ::= { parent n }` (OBJECT IDENTIFIER, MODULE-IDENTITY,
//! OBJECT-IDENTITY, OBJECT-TYPE, NOTIFICATION-TYPE, OBJECT-GROUP,
//! NOTIFICATION-GROUP, MODULE-COMPLIANCE, AGENT-CAPABILITIES).  Strings and
//! comments are skipped, macro definitions (`X MACRO ::= BEGIN ... END`) too.
//! Parents resolve in the module itself, then through its IMPORTS, then the
//! three ASN.1 roots.  Depends on nothing but std.
//!
//! The parser is also compiled into the library's unit tests
//! (`src/core/oids.rs`, `#[path = "../../build.rs"]`), hence `pub(crate)` items.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The files parsed, relative to the workspace `mibs/` directory, in an order
/// where nothing matters: resolution is by name, across all of them.
pub(crate) const MIB_FILES: &[&str] = &[
    "ietf/SNMPv2-SMI",
    "ietf/SNMPv2-TC",
    "ietf/SNMPv2-MIB",
    "ietf/IF-MIB",
    "ietf/DISMAN-EVENT-MIB",
    "ietf/SNMP-FRAMEWORK-MIB",
    "ietf/SNMP-USER-BASED-SM-MIB",
    "ietf/SNMP-VIEW-BASED-ACM-MIB",
    "ietf/SNMP-TARGET-MIB",
    "ietf/SNMP-NOTIFICATION-MIB",
    "IB-TC-MIB",
    "IB-IF-MIB",
    "IB-PM-MIB",
    "IB-SM-MIB",
];

/// Extra names for descriptors whose seed spelling is a typo the MIB file
/// keeps (managers were built against it): (module, alias, descriptor).
pub(crate) const ALIASES: &[(&str, &str, &str)] =
    &[("IB-PM-MIB", "pmPortCountersEntry", "pmPortCountersoEntry")];

/// Macros whose value is an OID and whose name is a descriptor.
const OID_MACROS: &[&str] = &[
    "MODULE-IDENTITY",
    "OBJECT-IDENTITY",
    "OBJECT-TYPE",
    "NOTIFICATION-TYPE",
    "OBJECT-GROUP",
    "NOTIFICATION-GROUP",
    "MODULE-COMPLIANCE",
    "AGENT-CAPABILITIES",
];

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Word(String),
    Num(u32),
    Assign,
    Punct(char),
    Str,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) line: usize,
}

/// One OID component: a name (only first), a number, or `name(number)`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Component {
    Name(String),
    Num(u32),
}

#[derive(Debug, Clone)]
pub(crate) struct Assignment {
    pub(crate) name: String,
    /// The macro, e.g. "OBJECT-TYPE" or "OBJECT IDENTIFIER".
    pub(crate) kind: String,
    pub(crate) value: Vec<Component>,
    pub(crate) line: usize,
    /// OBJECT-TYPE only: MAX-ACCESS, SYNTAX (as written: a base type, a
    /// textual convention or a SEQUENCE) and the INDEX clause of an entry
    /// (`IMPLIED x` kept as one item).
    pub(crate) access: String,
    pub(crate) syntax: String,
    pub(crate) index: Vec<String>,
    /// The SYNTAX clause's own range, SIZE or enumeration, as inclusive
    /// ranges (empty: none written here).
    pub(crate) ranges: Vec<(i64, i64)>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Module {
    pub(crate) name: String,
    pub(crate) file: String,
    /// descriptor -> module it is imported from
    pub(crate) imports: HashMap<String, String>,
    pub(crate) assignments: Vec<Assignment>,
    /// TEXTUAL-CONVENTION name -> its SYNTAX as written.
    pub(crate) conventions: HashMap<String, String>,
    /// TEXTUAL-CONVENTION name -> the ranges its SYNTAX carries.
    pub(crate) convention_ranges: HashMap<String, Vec<(i64, i64)>>,
}

/// Splits MIB text into tokens; `--` comments run to the end of the line,
/// strings are one `Str` token.  Characters SMI does not use are skipped.
pub(crate) fn lex(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut line = 1;
    while let Some(&c) = chars.get(i) {
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '"' => {
                let start = line;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(format!("line {start}: unterminated string")),
                        Some('"') => break,
                        Some('\n') => line += 1,
                        Some(_) => {}
                    }
                    i += 1;
                }
                i += 1;
                out.push(Token {
                    tok: Tok::Str,
                    line: start,
                });
            }
            '-' if chars.get(i + 1) == Some(&'-') => {
                while chars.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            ':' if chars.get(i + 1) == Some(&':') && chars.get(i + 2) == Some(&'=') => {
                out.push(Token {
                    tok: Tok::Assign,
                    line,
                });
                i += 3;
            }
            c if c.is_ascii_digit() => {
                let start = i;
                while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
                let digits: String = chars.get(start..i).unwrap_or_default().iter().collect();
                // Sub-identifiers are 32-bit; bigger numbers only occur in ranges.
                let tok = digits.parse::<u32>().map_or(Tok::Punct('#'), Tok::Num);
                out.push(Token { tok, line });
            }
            c if c.is_ascii_alphabetic() => {
                let start = i;
                // A hyphen belongs to the word unless it starts a comment.
                while let Some(&c) = chars.get(i) {
                    let hyphen_ok = c == '-' && chars.get(i + 1) != Some(&'-');
                    if c.is_ascii_alphanumeric() || c == '_' || hyphen_ok {
                        i += 1;
                    } else {
                        break;
                    }
                }
                let word: String = chars.get(start..i).unwrap_or_default().iter().collect();
                out.push(Token {
                    tok: Tok::Word(word),
                    line,
                });
            }
            c => {
                out.push(Token {
                    tok: Tok::Punct(c),
                    line,
                });
                i += 1;
            }
        }
    }
    Ok(out)
}

fn word(t: Option<&Token>) -> Option<&str> {
    match t.map(|t| &t.tok) {
        Some(Tok::Word(w)) => Some(w.as_str()),
        _ => None,
    }
}

fn is_descriptor(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Parses one module file into its name, imports and OID assignments.
pub(crate) fn parse_module(file: &str, text: &str) -> Result<Module, String> {
    let toks = lex(text).map_err(|e| format!("{file}: {e}"))?;
    let p = Parser { file, toks: &toks };
    let (name, mut i) = p.header()?;
    let mut m = Module {
        name,
        file: file.to_string(),
        ..Module::default()
    };
    while i < toks.len() {
        i = match p.word(i) {
            Some("IMPORTS") => p.imports(i + 1, &mut m.imports)?,
            Some(tc) if p.is_convention(i, tc) => p.convention(i, tc, &mut m),
            Some("MACRO") => p.skip_macro(i),
            Some(name) if is_descriptor(name) => match p.oid_macro(i) {
                Some((kind, skip)) => {
                    let (a, next) = p.assignment(i, name, kind, skip)?;
                    m.assignments.push(a);
                    next
                }
                None => i + 1,
            },
            _ => i + 1,
        };
    }
    Ok(m)
}

/// One module file's tokens. Each step reads from the index it is given
/// and returns the index after what it read.
struct Parser<'a> {
    file: &'a str,
    toks: &'a [Token],
}

impl<'a> Parser<'a> {
    fn tok(&self, i: usize) -> Option<&'a Tok> {
        self.toks.get(i).map(|t| &t.tok)
    }

    fn word(&self, i: usize) -> Option<&'a str> {
        word(self.toks.get(i))
    }

    /// "NAME DEFINITIONS ::= BEGIN": the module's name, and the index of
    /// `DEFINITIONS`.
    fn header(&self) -> Result<(String, usize), String> {
        (0..self.toks.len())
            .find_map(|i| match (self.word(i), self.word(i + 1)) {
                (Some(name), Some("DEFINITIONS")) => Some((name.to_string(), i + 1)),
                _ => None,
            })
            .ok_or_else(|| format!("{}: no `NAME DEFINITIONS ::= BEGIN` header", self.file))
    }

    /// The IMPORTS clause from `i` (after `IMPORTS`) to its `;`: each
    /// descriptor with the module it comes FROM.
    fn imports(
        &self,
        mut i: usize,
        imports: &mut HashMap<String, String>,
    ) -> Result<usize, String> {
        let mut pending = Vec::new();
        loop {
            match self.tok(i) {
                None => return Err(format!("{}: IMPORTS without `;`", self.file)),
                Some(Tok::Punct(';')) => return Ok(i + 1),
                Some(Tok::Word(f)) if f == "FROM" => {
                    let src = self.word(i + 1).ok_or_else(|| {
                        format!(
                            "{}:{}: FROM without a module name",
                            self.file,
                            line_of(self.toks, i)
                        )
                    })?;
                    for p in pending.drain(..) {
                        imports.insert(p, src.to_string());
                    }
                    i += 1;
                }
                Some(Tok::Word(n)) => pending.push(n.clone()),
                _ => {}
            }
            i += 1;
        }
    }

    /// Whether `tc` at `i` starts `Name ::= TEXTUAL-CONVENTION`.
    fn is_convention(&self, i: usize, tc: &str) -> bool {
        !is_descriptor(tc)
            && self.tok(i + 1) == Some(&Tok::Assign)
            && self.word(i + 2) == Some("TEXTUAL-CONVENTION")
    }

    /// `Name ::= TEXTUAL-CONVENTION ... SYNTAX x` at `i`: its syntax and
    /// ranges into `m`. The body runs to the next assignment; SYNTAX is its
    /// last clause. Returns the index of SYNTAX.
    fn convention(&self, i: usize, name: &str, m: &mut Module) -> usize {
        let start = i + 3;
        let syntax = (start..self.toks.len())
            .find(|&j| self.word(j) == Some("SYNTAX"))
            .unwrap_or(self.toks.len());
        // The body ends before the next assignment's name.
        let end = (syntax..self.toks.len())
            .find(|&j| self.tok(j) == Some(&Tok::Assign))
            .unwrap_or(self.toks.len());
        let body = self
            .toks
            .get(start..end.saturating_sub(1).max(syntax))
            .unwrap_or_default();
        m.conventions.insert(name.to_string(), syntax_of(body));
        m.convention_ranges
            .insert(name.to_string(), ranges_of(body));
        syntax
    }

    /// A macro definition at `i`: skipped to after its END.
    fn skip_macro(&self, i: usize) -> usize {
        (i..self.toks.len())
            .find(|&j| self.word(j) == Some("END"))
            .unwrap_or(self.toks.len())
            + 1
    }

    /// The OID macro after the descriptor at `i` and how many tokens the
    /// descriptor and macro take (None: not an OID assignment).
    fn oid_macro(&self, i: usize) -> Option<(&'static str, usize)> {
        match (self.word(i + 1), self.word(i + 2)) {
            // `x OBJECT IDENTIFIER ::=` only: SEQUENCE and CHOICE members
            // also read `x OBJECT IDENTIFIER`.
            (Some("OBJECT"), Some("IDENTIFIER")) if self.tok(i + 3) == Some(&Tok::Assign) => {
                Some(("OBJECT IDENTIFIER", 3))
            }
            (Some(k), _) => OID_MACROS.iter().find(|m| **m == k).map(|m| (*m, 2)),
            _ => None,
        }
    }

    /// The assignment of `name`, a `kind` macro, at `i`: its clauses up to
    /// `::=`, then its value.
    fn assignment(
        &self,
        i: usize,
        name: &str,
        kind: &str,
        skip: usize,
    ) -> Result<(Assignment, usize), String> {
        let line = line_of(self.toks, i);
        let body_start = i + skip;
        let body_end = self.body_end(body_start, name, kind, line)?;
        let body = self.toks.get(body_start..body_end).unwrap_or_default();
        let (access, syntax, index, ranges) = if kind == "OBJECT-TYPE" {
            (
                clause_word(body, &["MAX-ACCESS", "ACCESS"]),
                syntax_of(body),
                index_of(body),
                ranges_of(body),
            )
        } else {
            Default::default()
        };
        let (value, next) = parse_value(self.toks, body_end + 1)
            .map_err(|e| format!("{}:{line}: value of `{name}`: {e}", self.file))?;
        let a = Assignment {
            name: name.to_string(),
            kind: kind.to_string(),
            value,
            line,
            access,
            syntax,
            index,
            ranges,
        };
        Ok((a, next))
    }

    /// The index of the `::=` ending the macro body from `i`; an error when
    /// another assignment starts first (a body without its value).
    fn body_end(&self, mut i: usize, name: &str, kind: &str, line: usize) -> Result<usize, String> {
        while i < self.toks.len() && self.tok(i) != Some(&Tok::Assign) {
            if let Some(w) = self.word(i) {
                let next_is_macro = matches!(self.word(i + 1), Some(k) if OID_MACROS.contains(&k))
                    || (self.word(i + 1) == Some("OBJECT")
                        && self.word(i + 2) == Some("IDENTIFIER")
                        && self.tok(i + 3) == Some(&Tok::Assign));
                if is_descriptor(w) && next_is_macro && w != name {
                    return Err(format!(
                        "{}:{line}: `{name} {kind}` has no `::= {{ parent n }}` before `{w}`",
                        self.file
                    ));
                }
            }
            i += 1;
        }
        Ok(i)
    }
}

/// The word after the first of `keys` in a macro body ("" if none).
fn clause_word(body: &[Token], keys: &[&str]) -> String {
    body.iter()
        .position(|t| matches!(&t.tok, Tok::Word(w) if keys.contains(&w.as_str())))
        .and_then(|k| word(body.get(k + 1)))
        .unwrap_or_default()
        .to_string()
}

/// The SYNTAX clause's type: `OCTET STRING`, `OBJECT IDENTIFIER`,
/// `SEQUENCE OF X`, or one word (a base type or a convention); ranges,
/// sizes and enumerations are left out.
fn syntax_of(body: &[Token]) -> String {
    let Some(k) = body
        .iter()
        .position(|t| matches!(&t.tok, Tok::Word(w) if w == "SYNTAX"))
    else {
        return String::new();
    };
    match (
        word(body.get(k + 1)),
        word(body.get(k + 2)),
        word(body.get(k + 3)),
    ) {
        (Some("OCTET"), Some("STRING"), _) => "OCTET STRING".into(),
        (Some("OBJECT"), Some("IDENTIFIER"), _) => "OBJECT IDENTIFIER".into(),
        (Some("SEQUENCE"), Some("OF"), Some(x)) => format!("SEQUENCE OF {x}"),
        (Some(w), _, _) => w.to_string(),
        _ => String::new(),
    }
}

/// The SYNTAX clause's constraint as inclusive ranges: `(a..b | c)`,
/// `(SIZE(a..b | c))`, or an enumeration `{ x(1), y(2) }` (one range per
/// value; BITS names bits, not values, and gives none). Empty when the
/// clause has none or a bound does not fit (then nothing is checked).
fn ranges_of(body: &[Token]) -> Vec<(i64, i64)> {
    let Some(k) = body
        .iter()
        .position(|t| matches!(&t.tok, Tok::Word(w) if w == "SYNTAX"))
    else {
        return Vec::new();
    };
    let mut i = k + 1;
    if word(body.get(i)) == Some("BITS") {
        return Vec::new();
    }
    // The type: one word, or two for OCTET STRING / OBJECT IDENTIFIER.
    while matches!(word(body.get(i)), Some(w) if !is_descriptor(w) && w != "SIZE") {
        i += 1;
    }
    let tok = |i: usize| body.get(i).map(|t| &t.tok);
    let mut out = Vec::new();
    match tok(i) {
        Some(Tok::Punct('{')) => {
            // name(n), ...
            while let Some(t) = tok(i) {
                match t {
                    Tok::Punct('}') => break,
                    Tok::Punct('(') => {
                        if let Some((n, next)) = number(body, i + 1) {
                            out.push((n, n));
                            i = next;
                            continue;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        Some(Tok::Punct('(')) => {
            i += 1;
            let size = word(body.get(i)) == Some("SIZE");
            if size {
                i += 2;
            }
            loop {
                let Some((lo, next)) = number(body, i) else {
                    return Vec::new();
                };
                i = next;
                let hi = if tok(i) == Some(&Tok::Punct('.')) && tok(i + 1) == Some(&Tok::Punct('.'))
                {
                    let Some((hi, next)) = number(body, i + 2) else {
                        return Vec::new();
                    };
                    i = next;
                    hi
                } else {
                    lo
                };
                out.push((lo, hi));
                if tok(i) != Some(&Tok::Punct('|')) {
                    break;
                }
                i += 1;
            }
        }
        _ => {}
    }
    out
}

/// A number at `i` (`-` and digits); the value and the index after it.
fn number(body: &[Token], i: usize) -> Option<(i64, usize)> {
    match body.get(i).map(|t| &t.tok) {
        Some(Tok::Num(n)) => Some((i64::from(*n), i + 1)),
        Some(Tok::Punct('-')) => match body.get(i + 1).map(|t| &t.tok) {
            Some(Tok::Num(n)) => Some((-i64::from(*n), i + 2)),
            _ => None,
        },
        _ => None,
    }
}

/// The INDEX clause's items (`IMPLIED x` as one item), or
/// `AUGMENTS x` for an entry that augments another.
fn index_of(body: &[Token]) -> Vec<String> {
    let Some(k) = body
        .iter()
        .position(|t| matches!(&t.tok, Tok::Word(w) if w == "INDEX"))
    else {
        let aug = body
            .iter()
            .position(|t| matches!(&t.tok, Tok::Word(w) if w == "AUGMENTS"));
        return aug
            .and_then(|k| word(body.get(k + 2)))
            .map(|w| vec![format!("AUGMENTS {w}")])
            .unwrap_or_default();
    };
    let mut out = Vec::new();
    let mut implied = false;
    for t in body.iter().skip(k + 2) {
        match &t.tok {
            Tok::Punct('}') => break,
            Tok::Word(w) if w == "IMPLIED" => implied = true,
            Tok::Word(w) => {
                out.push(if implied {
                    format!("IMPLIED {w}")
                } else {
                    w.clone()
                });
                implied = false;
            }
            _ => {}
        }
    }
    out
}

/// SNMPv2-TC / SNMP-FRAMEWORK-MIB conventions the shipped files import but
/// the parser does not read, with their base types.
const KNOWN_CONVENTIONS: &[(&str, &str)] = &[
    ("TruthValue", "INTEGER"),
    ("RowStatus", "INTEGER"),
    ("StorageType", "INTEGER"),
    ("TestAndIncr", "INTEGER"),
    ("AutonomousType", "OBJECT IDENTIFIER"),
    ("TimeStamp", "TimeTicks"),
    ("DisplayString", "OCTET STRING"),
    ("PhysAddress", "OCTET STRING"),
    ("MacAddress", "OCTET STRING"),
    ("SnmpAdminString", "OCTET STRING"),
    ("SnmpTagValue", "OCTET STRING"),
];

/// The ranges of [`KNOWN_CONVENTIONS`] that carry one (RFC 2579, RFC 3411).
const KNOWN_RANGES: &[(&str, &[(i64, i64)])] = &[
    ("TruthValue", &[(1, 1), (2, 2)]),
    ("RowStatus", &[(1, 6)]),
    ("StorageType", &[(1, 5)]),
    ("TestAndIncr", &[(0, 2_147_483_647)]),
    ("DisplayString", &[(0, 255)]),
    ("MacAddress", &[(6, 6)]),
    ("SnmpAdminString", &[(0, 255)]),
];

/// The constraint of a SYNTAX: its own, else the nearest convention's.
fn ranges_through(
    conventions: &HashMap<&str, &str>,
    ranges: &HashMap<&str, &[(i64, i64)]>,
    syntax: &str,
    own: &[(i64, i64)],
) -> Vec<(i64, i64)> {
    let mut s = syntax;
    let mut r = own;
    for _ in 0..8 {
        if !r.is_empty() {
            break;
        }
        r = ranges.get(s).copied().unwrap_or_default();
        match conventions.get(s) {
            Some(next) => s = next,
            None => break,
        }
    }
    r.to_vec()
}

/// The `snmp::syntax::Base` variant of an SMI base type.
fn base_variant(base: &str) -> &'static str {
    match base {
        "INTEGER" | "Integer32" => "Integer",
        "Unsigned32" | "Gauge32" => "Unsigned",
        "Counter32" => "Counter32",
        "Counter64" => "Counter64",
        "TimeTicks" => "TimeTicks",
        "OCTET STRING" | "BITS" => "OctetString",
        "OBJECT IDENTIFIER" => "ObjectId",
        "IpAddress" => "IpAddress",
        "Opaque" => "Opaque",
        _ => "Other",
    }
}

/// The SMI base type of a SYNTAX, through conventions.
fn base_syntax(conventions: &HashMap<&str, &str>, syntax: &str) -> String {
    let mut s = syntax;
    for _ in 0..8 {
        match conventions.get(s) {
            Some(next) => s = next,
            None => break,
        }
    }
    s.to_string()
}

fn line_of(toks: &[Token], i: usize) -> usize {
    toks.get(i).or_else(|| toks.last()).map_or(0, |t| t.line)
}

/// Parses `{ comp comp ... }` at `i`; returns the components and the index
/// after `}`.
fn parse_value(toks: &[Token], mut i: usize) -> Result<(Vec<Component>, usize), String> {
    if toks.get(i).map(|t| &t.tok) != Some(&Tok::Punct('{')) {
        return Err("expected `{` after `::=`".to_string());
    }
    i += 1;
    let mut comps = Vec::new();
    loop {
        match toks.get(i).map(|t| &t.tok) {
            None => return Err("unterminated `{`".to_string()),
            Some(Tok::Punct('}')) => break,
            Some(Tok::Num(n)) => comps.push(Component::Num(*n)),
            Some(Tok::Word(w)) => {
                // name(number): the number is what counts
                let paren = toks.get(i + 1).map(|t| &t.tok) == Some(&Tok::Punct('('));
                match (
                    paren,
                    toks.get(i + 2).map(|t| &t.tok),
                    toks.get(i + 3).map(|t| &t.tok),
                ) {
                    (true, Some(Tok::Num(n)), Some(Tok::Punct(')'))) => {
                        comps.push(Component::Num(*n));
                        i += 3;
                    }
                    (false, _, _) if comps.is_empty() => comps.push(Component::Name(w.clone())),
                    _ => return Err(format!("unexpected `{w}` inside the OID value")),
                }
            }
            Some(other) => return Err(format!("unexpected {other:?} inside the OID value")),
        }
        i += 1;
    }
    if comps.is_empty() {
        return Err("empty OID value".to_string());
    }
    Ok((comps, i + 1))
}

/// Resolves every assignment of every module to a numeric OID.
/// Result: module name -> ordered (descriptor, kind, oid, line).
pub(crate) type Resolved = BTreeMap<String, Vec<(String, String, Vec<u32>, usize)>>;

pub(crate) fn resolve(modules: &[Module]) -> Result<Resolved, String> {
    let by_name: HashMap<&str, &Module> = modules.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut cache: HashMap<(String, String), Vec<u32>> = HashMap::new();
    let mut out = Resolved::new();
    for m in modules {
        let mut rows = Vec::new();
        for a in &m.assignments {
            let oid = resolve_name(&by_name, &m.name, &a.name, &mut cache, &mut HashSet::new())?;
            rows.push((a.name.clone(), a.kind.clone(), oid, a.line));
        }
        out.insert(m.name.clone(), rows);
    }
    Ok(out)
}

fn resolve_name(
    by_name: &HashMap<&str, &Module>,
    module: &str,
    name: &str,
    cache: &mut HashMap<(String, String), Vec<u32>>,
    visiting: &mut HashSet<(String, String)>,
) -> Result<Vec<u32>, String> {
    match name {
        "ccitt" => return Ok(vec![0]),
        "iso" => return Ok(vec![1]),
        "joint-iso-ccitt" => return Ok(vec![2]),
        _ => {}
    }
    let key = (module.to_string(), name.to_string());
    if let Some(o) = cache.get(&key) {
        return Ok(o.clone());
    }
    let m = by_name.get(module).ok_or_else(|| {
        format!("module {module} (needed for `{name}`) is not among the parsed files")
    })?;
    if !visiting.insert(key.clone()) {
        return Err(format!(
            "{}: `{name}` is defined in terms of itself",
            m.file
        ));
    }
    let oid = if let Some(a) = m.assignments.iter().find(|a| a.name == name) {
        let mut oid = Vec::new();
        for (k, c) in a.value.iter().enumerate() {
            match c {
                Component::Num(n) => oid.push(*n),
                Component::Name(p) if k == 0 => {
                    let parent =
                        resolve_name(by_name, module, p, cache, visiting).map_err(|e| {
                            format!(
                                "{}:{}: cannot resolve parent `{p}` of `{name}`: {e}",
                                m.file, a.line
                            )
                        })?;
                    oid.extend(parent);
                }
                Component::Name(p) => {
                    return Err(format!(
                        "{}:{}: bad component `{p}` of `{name}`",
                        m.file, a.line
                    ))
                }
            }
        }
        oid
    } else if let Some(src) = m.imports.get(name) {
        resolve_name(by_name, src, name, cache, visiting)?
    } else {
        return Err(format!(
            "{}: `{name}` is neither defined nor imported in {module}",
            m.file
        ));
    };
    visiting.remove(&key);
    cache.insert(key, oid.clone());
    Ok(oid)
}

/// `ifHCInOctets` -> `IF_HC_IN_OCTETS`, `mib-2` -> `MIB_2`,
/// `ibIfPortStatVL15Dropped` -> `IB_IF_PORT_STAT_VL15_DROPPED`.
pub(crate) fn screaming_snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut s = String::new();
    for (k, &c) in chars.iter().enumerate() {
        if c == '-' || c == '_' {
            s.push('_');
            continue;
        }
        if c.is_ascii_uppercase() && k > 0 {
            let prev = chars.get(k - 1).copied().unwrap_or('_');
            let next = chars.get(k + 1).copied().unwrap_or('_');
            let boundary = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next.is_ascii_lowercase());
            if boundary && !s.ends_with('_') {
                s.push('_');
            }
        }
        s.push(c.to_ascii_uppercase());
    }
    s
}

/// `IB-PM-MIB` -> `ib_pm_mib`, `SNMPv2-MIB` -> `snmpv2_mib`.
pub(crate) fn module_ident(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

fn oid_literal(oid: &[u32]) -> String {
    let parts: Vec<String> = oid.iter().map(u32::to_string).collect();
    format!("&[{}]", parts.join(", "))
}

fn dotted(oid: &[u32]) -> String {
    let parts: Vec<String> = oid.iter().map(u32::to_string).collect();
    parts.join(".")
}

/// Every textual convention's syntax and ranges: the known ones, then the
/// modules' own.
type Conventions<'a> = (
    HashMap<&'a str, &'a str>,
    HashMap<&'a str, &'a [(i64, i64)]>,
);

fn conventions(modules: &[Module]) -> Conventions<'_> {
    let mut syntax: HashMap<&str, &str> = KNOWN_CONVENTIONS.iter().copied().collect();
    let mut ranges: HashMap<&str, &[(i64, i64)]> = KNOWN_RANGES.iter().copied().collect();
    for m in modules {
        for (k, v) in &m.conventions {
            syntax.insert(k, v);
        }
        for (k, v) in &m.convention_ranges {
            ranges.insert(k, v);
        }
    }
    (syntax, ranges)
}

/// Renders the Rust source of `oids.rs`.
pub(crate) fn render(modules: &[Module], resolved: &Resolved) -> Result<String, String> {
    let mut src = String::from(
        "// @generated by crates/mibs/build.rs from the files in mibs/; do not edit.\n",
    );
    let conventions = conventions(modules);
    for m in modules {
        let rows = resolved.get(&m.name).map(Vec::as_slice).unwrap_or_default();
        let _ = writeln!(src, "\n/// OIDs of {} (`{}`).", m.name, m.file);
        let _ = writeln!(src, "pub mod {} {{", module_ident(&m.name));
        let _ = writeln!(src, "    /// The MIB module's name.");
        let _ = writeln!(src, "    pub const MODULE: &str = {:?};", m.name);
        render_constants(&mut src, m, rows)?;
        render_object_types(&mut src, m, rows, &conventions)?;
        let _ = writeln!(
            src,
            "    /// Every descriptor of the module with its OID, in file order."
        );
        let _ = writeln!(src, "    pub const OBJECTS: &[(&str, &[u32])] = &[");
        for (name, _, _, _) in rows {
            let _ = writeln!(src, "        ({name:?}, {}),", screaming_snake(name));
        }
        let _ = writeln!(src, "    ];");
        let _ = writeln!(src, "}}");
    }
    Ok(src)
}

/// One constant per descriptor of `m` (`rows`, resolved), then its aliases.
fn render_constants(
    src: &mut String,
    m: &Module,
    rows: &[(String, String, Vec<u32>, usize)],
) -> Result<(), String> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for (name, kind, oid, line) in rows {
        let c = screaming_snake(name);
        if let Some(prev) = seen.insert(c.clone(), name) {
            return Err(format!(
                "{}:{line}: `{name}` and `{prev}` both map to the constant {c}",
                m.file
            ));
        }
        let _ = writeln!(
            src,
            "    /// `{name}` ({kind}), {} (`{}` line {line}).",
            dotted(oid),
            m.file
        );
        let _ = writeln!(src, "    pub const {c}: &[u32] = {};", oid_literal(oid));
    }
    for (module, alias, target) in ALIASES.iter().filter(|a| a.0 == m.name) {
        let c = screaming_snake(alias);
        let t = screaming_snake(target);
        if !rows.iter().any(|r| r.0 == *target) {
            return Err(format!(
                "alias {alias}: `{target}` is not defined in {module}"
            ));
        }
        if seen.contains_key(&c) {
            return Err(format!(
                "alias {alias} collides with a descriptor of {module}"
            ));
        }
        let _ = writeln!(
            src,
            "    /// Alias of [`{t}`]: the MIB spells the descriptor `{target}` (seed typo, kept)."
        );
        let _ = writeln!(src, "    pub const {c}: &[u32] = {t};");
    }
    Ok(())
}

/// `OBJECT_TYPES`: every OBJECT-TYPE of `m` with its MAX-ACCESS, base
/// syntax, INDEX and the syntax a Set is checked against.
fn render_object_types(
    src: &mut String,
    m: &Module,
    rows: &[(String, String, Vec<u32>, usize)],
    (conventions, tc_ranges): &Conventions<'_>,
) -> Result<(), String> {
    let _ = writeln!(
        src,
        "    /// Every OBJECT-TYPE of the module: OID, MAX-ACCESS, base syntax, INDEX."
    );
    let _ = writeln!(src, "    pub const OBJECT_TYPES: &[super::ObjectType] = &[");
    for (a, (name, _, _, _)) in m.assignments.iter().zip(rows) {
        if a.kind != "OBJECT-TYPE" {
            continue;
        }
        let access = access_variant(&a.access).ok_or_else(|| {
            format!(
                "{}:{}: `{name}` has MAX-ACCESS {:?}",
                m.file, a.line, a.access
            )
        })?;
        let index: Vec<String> = a.index.iter().map(|x| format!("{x:?}")).collect();
        let base = base_syntax(conventions, &a.syntax);
        let ranges: Vec<String> = ranges_through(conventions, tc_ranges, &a.syntax, &a.ranges)
            .iter()
            .map(|(lo, hi)| format!("({lo}, {hi})"))
            .collect();
        let _ = writeln!(
            src,
            "        super::ObjectType {{ name: {name:?}, oid: {}, access: snmp::mib::Access::{access}, \
             syntax: {base:?}, index: &[{}], \
             check: snmp::syntax::Syntax {{ base: snmp::syntax::Base::{}, ranges: &[{}] }} }},",
            screaming_snake(name),
            index.join(", "),
            base_variant(&base),
            ranges.join(", ")
        );
    }
    let _ = writeln!(src, "    ];");
    Ok(())
}

/// The `snmp::mib::Access` variant of a MAX-ACCESS (or SMIv1 ACCESS)
/// value; None for one the agent has no variant for (write-only).
fn access_variant(access: &str) -> Option<&'static str> {
    Some(match access {
        "not-accessible" => "NotAccessible",
        "accessible-for-notify" => "AccessibleForNotify",
        "read-only" => "ReadOnly",
        "read-write" => "ReadWrite",
        "read-create" => "ReadCreate",
        _ => return None,
    })
}

/// Parses and resolves the files under `mib_dir`.
pub(crate) fn generate(mib_dir: &Path) -> Result<(String, Vec<PathBuf>), String> {
    let mut modules = Vec::new();
    let mut paths = Vec::new();
    for f in MIB_FILES {
        let path = mib_dir.join(f);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        modules.push(parse_module(&format!("mibs/{f}"), &text)?);
        paths.push(path);
    }
    let resolved = resolve(&modules)?;
    Ok((render(&modules, &resolved)?, paths))
}

#[allow(dead_code)] // also compiled as a module of the unit tests
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
    let (Some(manifest), Some(out_dir)) = (manifest, out_dir) else {
        eprintln!("error: CARGO_MANIFEST_DIR and OUT_DIR must be set (run through cargo)");
        std::process::exit(1);
    };
    let mib_dir = manifest.join("../../mibs");
    match generate(&mib_dir) {
        Ok((src, paths)) => {
            for p in &paths {
                println!("cargo:rerun-if-changed={}", p.display());
            }
            if let Err(e) = std::fs::write(out_dir.join("oids.rs"), src) {
                eprintln!("error: cannot write oids.rs: {e}");
                std::process::exit(1);
            }
        }
        Err(e) => {
            // Still watch the files, so fixing one re-runs the script.
            for f in MIB_FILES {
                println!("cargo:rerun-if-changed={}", mib_dir.join(f).display());
            }
            eprintln!("error: generating OID constants from the MIB files: {e}");
            std::process::exit(1);
        }
    }
}
