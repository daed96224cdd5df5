//! The config file's `[[monitor]]` entries: DISMAN-EVENT-MIB triggers as
//! net-snmp's `monitor` directive defines them (docs/health.md, "Threshold
//! monitors"), each checked into a [`Trigger`].
//!
//! net-snmp's options map to keys: `-D` `delta`, `-I` `wildcard = false`,
//! `-r` `frequency`, `-o` `objects`, `-i` `exact_objects`; its expression
//! forms to exactly one of `existence`, `boolean`, `threshold`.

use mibs::modules::disman_event::{Comparison, Existence, Startup, Test, Trigger};
use serde::Deserialize;
use snmp::oid::Oid;

/// net-snmp's default sampling interval (`-r`).
pub const DEFAULT_FREQUENCY: u32 = 600;
/// Longest mteTriggerName / mteObjectsName (SnmpAdminString SIZE (1..32)).
const MAX_NAME: usize = 32;

/// `existence = "present"` or a list of `present`, `absent`, `changed`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMore {
    One(String),
    More(Vec<String>),
}

/// `boolean = { op = "!=", value = 1 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BooleanEntry {
    op: String,
    value: i32,
    /// mteTriggerBooleanStartup (default true).
    startup: Option<bool>,
}

/// `threshold = { rising = 10, falling = 0 }` (net-snmp's MAX and MIN).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdEntry {
    rising: i32,
    falling: i32,
    /// mteTriggerThresholdStartup: "rising" (default, as net-snmp),
    /// "falling", "risingOrFalling".
    startup: Option<String>,
}

/// One `[[monitor]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorEntry {
    name: String,
    oid: String,
    comment: Option<String>,
    existence: Option<OneOrMore>,
    boolean: Option<BooleanEntry>,
    threshold: Option<ThresholdEntry>,
    delta: Option<bool>,
    wildcard: Option<bool>,
    frequency: Option<u32>,
    objects: Option<Vec<String>>,
    exact_objects: Option<Vec<String>>,
    /// mteTriggerContextName: one node context (`"leaf01"`).
    context: Option<String>,
    /// mteTriggerContextName with mteTriggerContextNameWildcard: `"*"`
    /// (every node) or `"PREFIX*"`.
    contexts: Option<String>,
}

/// The longest contextName (SnmpAdminString (SIZE(0..32))).
const MAX_CONTEXT: usize = 32;

/// `context` / `contexts` into (mteTriggerContextName, wildcard).
fn trigger_context(one: Option<String>, many: Option<String>) -> Result<(Vec<u8>, bool), String> {
    let (name, wildcard) = match (one, many) {
        (None, None) => return Ok((Vec::new(), false)),
        (Some(c), None) => (c, false),
        (None, Some(c)) => match c.strip_suffix('*') {
            Some(prefix) if !prefix.contains('*') => (prefix.to_string(), true),
            _ => {
                return Err(format!(
                    "contexts = {c:?}: expected \"*\" (every node) or \"PREFIX*\""
                ))
            }
        },
        (Some(_), Some(_)) => {
            return Err("context and contexts: give one (a node's context, or a wildcard)".into())
        }
    };
    if name.len() > MAX_CONTEXT {
        return Err(format!(
            "context {name:?}: longer than {MAX_CONTEXT} octets (SnmpAdminString (SIZE(0..32)))"
        ));
    }
    Ok((name.into_bytes(), wildcard))
}

fn resolve(key: &str, text: &str) -> Result<Oid, String> {
    mibs::core::oids::lookup(text).map(Oid::new).ok_or_else(|| {
        format!(
            "{key} = {text:?}: not a numeric OID nor an object of the shipped MIBs \
             (e.g. \"IB-PM-MIB::pmPortCountersSymbolErrors\" or \"1.3.6.1.2.1.2.2.1.8\")"
        )
    })
}

fn comparison(op: &str) -> Result<Comparison, String> {
    Ok(match op {
        "!=" => Comparison::Unequal,
        "==" => Comparison::Equal,
        "<" => Comparison::Less,
        "<=" => Comparison::LessOrEqual,
        ">" => Comparison::Greater,
        ">=" => Comparison::GreaterOrEqual,
        o => {
            return Err(format!(
                "boolean op = {o:?}: expected one of != == < <= > >="
            ))
        }
    })
}

fn existence(e: OneOrMore) -> Result<Existence, String> {
    let words = match e {
        OneOrMore::One(w) => vec![w],
        OneOrMore::More(ws) => ws,
    };
    let mut x = Existence::default();
    for w in &words {
        match w.as_str() {
            "present" => x.present = true,
            "absent" => x.absent = true,
            "changed" => x.changed = true,
            o => {
                return Err(format!(
                    "existence = {o:?}: expected \"present\", \"absent\" or \"changed\""
                ))
            }
        }
    }
    if words.is_empty() {
        return Err("existence = []: name at least one of present, absent, changed".into());
    }
    Ok(x)
}

impl MonitorEntry {
    /// The trigger, or one line naming the bad key.
    pub fn trigger(self) -> Result<Trigger, String> {
        if self.name.is_empty() || self.name.len() > MAX_NAME {
            return Err(format!(
                "name = {:?}: expected 1 to {MAX_NAME} characters",
                self.name
            ));
        }
        let value_id = resolve("oid", &self.oid)?;
        let test = match (self.existence, self.boolean, self.threshold) {
            (Some(e), None, None) => {
                let test = existence(e)?;
                // Startup fires what the test has of present/absent.
                let startup = Existence {
                    changed: false,
                    ..test
                };
                Test::Existence { test, startup }
            }
            (None, Some(b), None) => Test::Boolean {
                op: comparison(&b.op)?,
                value: b.value,
                startup: b.startup.unwrap_or(true),
            },
            (None, None, Some(t)) => {
                let startup = match t.startup.as_deref() {
                    None | Some("rising") => Startup::Rising,
                    Some("falling") => Startup::Falling,
                    Some("risingOrFalling") => Startup::RisingOrFalling,
                    Some(o) => {
                        return Err(format!(
                            "threshold startup = {o:?}: expected \"rising\", \"falling\" or \"risingOrFalling\""
                        ))
                    }
                };
                if t.falling > t.rising {
                    return Err(format!(
                        "threshold: falling = {} is above rising = {}",
                        t.falling, t.rising
                    ));
                }
                Test::Threshold {
                    rising: t.rising,
                    falling: t.falling,
                    startup,
                }
            }
            _ => {
                return Err(
                    "expected exactly one of existence, boolean, threshold (the test)".into(),
                )
            }
        };
        let (context, context_wildcard) = trigger_context(self.context, self.contexts)?;
        let frequency = self.frequency.unwrap_or(DEFAULT_FREQUENCY);
        if frequency == 0 {
            return Err("frequency = 0: expected seconds, 1 or more".into());
        }
        let wildcard = self.wildcard.unwrap_or(true);
        let mut objects = Vec::new();
        for o in self.objects.unwrap_or_default() {
            objects.push((resolve("objects", &o)?, wildcard));
        }
        for o in self.exact_objects.unwrap_or_default() {
            objects.push((resolve("exact_objects", &o)?, false));
        }
        Ok(Trigger {
            name: self.name,
            comment: self.comment.unwrap_or_default(),
            value_id,
            wildcard,
            context,
            context_wildcard,
            test,
            delta: self.delta.unwrap_or(false),
            frequency,
            objects,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The triggers of every `[[monitor]]`; `at(n, msg)` places an error in
/// the n-th entry.
pub fn triggers(
    entries: Vec<MonitorEntry>,
    at: impl Fn(usize, String) -> String,
) -> Result<Vec<Trigger>, String> {
    let mut out: Vec<Trigger> = Vec::new();
    for (n, e) in entries.into_iter().enumerate() {
        let name = e.name().to_string();
        let t = e.trigger().map_err(|m| at(n, m))?;
        if out.iter().any(|x| x.name == name) {
            return Err(at(
                n,
                format!("name = {name:?}: another [[monitor]] has it"),
            ));
        }
        out.push(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> Result<Trigger, String> {
        crate::config::parse_section(t, MonitorEntry::trigger)
    }

    #[test]
    fn tests_names_and_defaults() {
        let t = parse(
            "name = \"sym\"\noid = \"IB-PM-MIB::pmPortCountersSymbolErrors\"\n\
             threshold = { rising = 10, falling = 0 }\ndelta = true\nfrequency = 60\n\
             objects = [\"pmPortCountersLinkDown\"]\n",
        )
        .unwrap();
        assert_eq!(
            t.value_id.as_slice(),
            mibs::core::oids::ib_pm_mib::PM_PORT_COUNTERS_SYMBOL_ERRORS
        );
        assert!(t.wildcard && t.delta);
        assert_eq!(t.frequency, 60);
        assert_eq!(
            t.test,
            Test::Threshold {
                rising: 10,
                falling: 0,
                startup: Startup::Rising
            }
        );
        assert_eq!(t.objects.len(), 1);
        let b = parse("name = \"b\"\noid = \"1.3.6.1.2.1.2.2.1.8\"\nboolean = { op = \"!=\", value = 1 }\nwildcard = false\n").unwrap();
        assert_eq!(b.frequency, DEFAULT_FREQUENCY);
        assert!(!b.wildcard);
        let x = parse("name = \"x\"\noid = \"ifIndex\"\nexistence = [\"absent\", \"changed\"]\n")
            .unwrap();
        assert!(matches!(
            x.test,
            Test::Existence { test, startup } if test.absent && test.changed && !startup.changed
        ));
    }

    #[test]
    fn errors_name_the_key() {
        for (t, want) in [
            ("name = \"a\"\noid = \"nope\"\nexistence = \"present\"", "oid = \"nope\""),
            ("name = \"a\"\noid = \"1.3\"", "exactly one of"),
            (
                "name = \"a\"\noid = \"1.3\"\nexistence = \"present\"\nboolean = { op = \"==\", value = 1 }",
                "exactly one of",
            ),
            ("name = \"a\"\noid = \"1.3\"\nboolean = { op = \"=\", value = 1 }", "boolean op"),
            ("name = \"a\"\noid = \"1.3\"\nthreshold = { rising = 0, falling = 5 }", "above rising"),
            ("name = \"a\"\noid = \"1.3\"\nexistence = \"gone\"", "existence = \"gone\""),
            ("name = \"\"\noid = \"1.3\"\nexistence = \"present\"", "name"),
            ("name = \"a\"\noid = \"1.3\"\nexistence = \"present\"\nfrequency = 0", "frequency"),
        ] {
            let e = parse(t).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
    }
}
