//! Services registered with the simulator's SA, one per line of a text:
//! `NAME SERVICE_ID PORT_GUID [pkey=P_KEY] [lease=SECONDS|infinite]`, as an
//! application registers a ServiceRecord (IBA 15.2.5.14) for the port it
//! serves on. Comments start with `#`. ServiceKey and ServiceData are zero.

use crate::mad::sa::ServiceRecord;
use crate::source::SourceError;
use crate::types::{Gid, PKey};

/// The longest ServiceName (64 octets on the wire).
const MAX_NAME: usize = 64;
/// ServiceLease 0xFFFFFFFF: the record never expires.
pub const LEASE_INFINITE: u32 = u32::MAX;

/// One service line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServiceSpec {
    pub name: String,
    pub id: u64,
    pub port_guid: u64,
    pub pkey: u16,
    pub lease: u32,
}

impl ServiceSpec {
    /// The record the SA holds for it on a subnet.
    pub fn record(&self, subnet_prefix: u64) -> ServiceRecord {
        ServiceRecord {
            service_id: self.id,
            service_gid: Gid::new(subnet_prefix, crate::types::Guid(self.port_guid)),
            service_p_key: PKey(self.pkey),
            service_lease: self.lease,
            service_name: self.name.clone(),
            ..ServiceRecord::default()
        }
    }
}

fn bad(line: usize, msg: &str) -> SourceError {
    SourceError::Invalid(format!("services line {line}: {msg}"))
}

fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parses the whole text; errors name the line.
pub(crate) fn parse(text: &str) -> Result<Vec<ServiceSpec>, SourceError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let words: Vec<&str> = raw
            .split('#')
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let [name, id, guid, options @ ..] = words.as_slice() else {
            if words.is_empty() {
                continue;
            }
            return Err(bad(
                n,
                "expected NAME SERVICE_ID PORT_GUID [pkey=..] [lease=..]",
            ));
        };
        if name.len() > MAX_NAME {
            return Err(bad(n, "the name is longer than 64 octets"));
        }
        let mut spec = ServiceSpec {
            name: (*name).to_string(),
            id: number(id).ok_or_else(|| bad(n, "the service ID is not a number"))?,
            port_guid: number(guid).ok_or_else(|| bad(n, "the port GUID is not a number"))?,
            pkey: PKey::DEFAULT.raw(),
            lease: LEASE_INFINITE,
        };
        for o in options {
            match o.split_once('=') {
                Some(("pkey", v)) => {
                    spec.pkey = number(v)
                        .and_then(|p| u16::try_from(p).ok())
                        .ok_or_else(|| bad(n, "pkey is not a 16-bit number"))?;
                }
                Some(("lease", "infinite")) => spec.lease = LEASE_INFINITE,
                Some(("lease", v)) => {
                    spec.lease = number(v)
                        .and_then(|l| u32::try_from(l).ok())
                        .ok_or_else(|| bad(n, "lease is not seconds or `infinite`"))?;
                }
                _ => return Err(bad(n, &format!("unknown option {o:?}"))),
            }
        }
        out.push(spec);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_options_and_errors() {
        let text = "# name id port\n\
                    SRP.T10:0002c903000a0b0c 0x0002c903000a0b0c 0x10001 # a target\n\
                    \n\
                    dapl 7 65538 pkey=0x8001 lease=60\n";
        let s = parse(text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "SRP.T10:0002c903000a0b0c");
        assert_eq!((s[0].id, s[0].port_guid), (0x0002c903000a0b0c, 0x10001));
        assert_eq!((s[0].pkey, s[0].lease), (0xffff, LEASE_INFINITE));
        assert_eq!(
            (s[1].id, s[1].port_guid, s[1].pkey, s[1].lease),
            (7, 65538, 0x8001, 60)
        );
        let r = s[1].record(0xfe80_0000_0000_0000);
        assert_eq!(
            r.service_gid,
            Gid::new(0xfe80_0000_0000_0000, crate::types::Guid(65538))
        );
        for (bad_text, why) in [
            ("x 1\n", "expected"),
            ("x y 1\n", "service ID"),
            ("x 1 z\n", "port GUID"),
            ("x 1 2 pkey=0x10000\n", "pkey"),
            ("x 1 2 lease=never\n", "lease"),
            ("x 1 2 colour=blue\n", "unknown option"),
        ] {
            let e = parse(&format!("\n{bad_text}")).unwrap_err().to_string();
            assert!(e.contains("services line 2") && e.contains(why), "{e}");
        }
        let long = format!("{} 1 2\n", "n".repeat(65));
        assert!(parse(&long).unwrap_err().to_string().contains("64 octets"));
    }
}
