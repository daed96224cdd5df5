//! snmpEngineID from the configuration, the ways net-snmp's snmpd.conf
//! offers (`engineID`, `engineIDType`, `engineIDNic`): hex octets as they
//! are, or an RFC 3411 ID built from a text, an interface's IPv4 or IPv6
//! address, or its MAC address. None of them: generated once and kept in
//! the state directory (crate::models::engine_state).

use std::net::IpAddr;

/// RFC 3411 SnmpEngineID: the first bit set, then net-snmp's enterprise
/// number (8072), then the format octet and its data.
const PREFIX: [u8; 4] = [0x80, 0x00, 0x1f, 0x88];

/// How the ID is made (`engine_id_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ipv4,
    Ipv6,
    Mac,
    Text,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        // net-snmp's engineIDType numbers (1, 2, 3) are taken too.
        Some(match s.to_ascii_lowercase().as_str() {
            "ipv4" | "1" => Kind::Ipv4,
            "ipv6" | "2" => Kind::Ipv6,
            "mac" | "3" => Kind::Mac,
            "text" | "4" => Kind::Text,
            _ => return None,
        })
    }

    /// RFC 3411's format octet.
    fn format(self) -> u8 {
        match self {
            Kind::Ipv4 => 1,
            Kind::Ipv6 => 2,
            Kind::Mac => 3,
            Kind::Text => 4,
        }
    }
}

/// The configured engine ID keys, as the file has them.
#[derive(Debug, Default)]
pub struct EngineIdKeys<'a> {
    pub hex: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub nic: Option<&'a str>,
    pub text: Option<&'a str>,
}

/// The configured snmpEngineID (None: generate and keep one), or the key
/// at fault and why.
pub fn resolve(k: &EngineIdKeys<'_>) -> Result<Option<Vec<u8>>, (&'static str, String)> {
    let kind = match k.kind {
        None => None,
        Some(s) => Some(Kind::parse(s).ok_or((
            "engine_id_type",
            format!("{s:?}: expected \"ipv4\", \"ipv6\", \"mac\" or \"text\""),
        ))?),
    };
    match (k.hex, kind) {
        (Some(_), Some(_)) => Err((
            "engine_id_type",
            "engine_id gives the ID itself: set one of the two".into(),
        )),
        (Some(h), None) => parse_hex(h).map(Some).map_err(|m| ("engine_id", m)),
        (None, None) if k.text.is_some() || k.nic.is_some() => Err((
            "engine_id_type",
            "engine_id_text and engine_id_nic need engine_id_type".into(),
        )),
        (None, None) => Ok(None),
        (None, Some(Kind::Text)) => {
            let t = k.text.unwrap_or_default();
            // 5 + 27 = 32 octets, the most RFC 3411 allows.
            if t.is_empty() || t.len() > 27 {
                return Err(("engine_id_text", "must be 1 to 27 octets".into()));
            }
            Ok(Some(build(Kind::Text, t.as_bytes())))
        }
        (None, Some(kind)) => {
            let data = interface_data(kind, k.nic).map_err(|m| ("engine_id_nic", m))?;
            Ok(Some(build(kind, &data)))
        }
    }
}

fn build(kind: Kind, data: &[u8]) -> Vec<u8> {
    let mut id = PREFIX.to_vec();
    id.push(kind.format());
    id.extend_from_slice(data);
    id
}

/// The address of `nic` (or, without one, of the first interface by name
/// that has such an address, loopback last) that the ID is built from.
fn interface_data(kind: Kind, nic: Option<&str>) -> Result<Vec<u8>, String> {
    let mut names: Vec<String> = match nic {
        Some(n) => vec![n.to_string()],
        None => {
            let mut n: Vec<String> = std::fs::read_dir("/sys/class/net")
                .map_err(|e| format!("cannot list interfaces: {e}"))?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            n.sort_by_key(|name| (name == "lo", name.clone()));
            n
        }
    };
    let addrs = if kind == Kind::Mac {
        Vec::new()
    } else {
        if_addrs::get_if_addrs().map_err(|e| format!("cannot read interface addresses: {e}"))?
    };
    for name in names.drain(..) {
        let found = match kind {
            Kind::Mac => mac_of(&name).filter(|m| m.iter().any(|&b| b != 0)),
            _ => addrs
                .iter()
                .filter(|a| a.name == name)
                .find_map(|a| match (kind, a.ip()) {
                    (Kind::Ipv4, IpAddr::V4(v4)) => Some(v4.octets().to_vec()),
                    (Kind::Ipv6, IpAddr::V6(v6)) => Some(v6.octets().to_vec()),
                    _ => None,
                }),
        };
        if let Some(d) = found {
            return Ok(d);
        }
    }
    let what = match kind {
        Kind::Ipv4 => "an IPv4 address",
        Kind::Ipv6 => "an IPv6 address",
        _ => "a MAC address",
    };
    Err(match nic {
        Some(n) => format!("interface {n:?} has no {what}"),
        None => format!("no interface has {what}"),
    })
}

/// The MAC address of `nic` from sysfs ("aa:bb:cc:dd:ee:ff").
fn mac_of(nic: &str) -> Option<Vec<u8>> {
    if nic.contains('/') {
        return None;
    }
    let text = std::fs::read_to_string(format!("/sys/class/net/{nic}/address")).ok()?;
    let mac = text
        .trim()
        .split(':')
        .map(|x| u8::from_str_radix(x, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    (mac.len() == 6).then_some(mac)
}

/// An snmpEngineID in hex (`0x` and `:` allowed), 5 to 32 octets (RFC 3411).
fn parse_hex(h: &str) -> Result<Vec<u8>, String> {
    let h: String = h
        .trim()
        .trim_start_matches("0x")
        .chars()
        .filter(|c| *c != ':')
        .collect();
    if !h.len().is_multiple_of(2) {
        return Err("expected an even number of hex digits".into());
    }
    let bytes = (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2).unwrap_or("zz"), 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| "expected hex digits".to_string())?;
    if !(5..=32).contains(&bytes.len()) {
        return Err("must be 5 to 32 octets".into());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys<'a>(kind: &'a str, nic: Option<&'a str>, text: Option<&'a str>) -> EngineIdKeys<'a> {
        EngineIdKeys {
            hex: None,
            kind: Some(kind),
            nic,
            text,
        }
    }

    #[test]
    fn each_kind_builds_an_rfc3411_id() {
        assert_eq!(resolve(&EngineIdKeys::default()), Ok(None));
        let hex = EngineIdKeys {
            hex: Some("80:00:1f:88:05:01"),
            ..Default::default()
        };
        assert_eq!(resolve(&hex), Ok(Some(vec![0x80, 0, 0x1f, 0x88, 5, 1])));
        let t = resolve(&keys("text", None, Some("fabric-a")))
            .unwrap()
            .unwrap();
        assert_eq!(t, [&PREFIX[..], &[4], b"fabric-a"].concat());
        // Loopback always has 127.0.0.1 and ::1 (net-snmp's engineIDType 1 and 2).
        let v4 = resolve(&keys("1", Some("lo"), None)).unwrap().unwrap();
        assert_eq!(v4, [&PREFIX[..], &[1, 127, 0, 0, 1]].concat());
        if let Ok(Some(v6)) = resolve(&keys("ipv6", Some("lo"), None)) {
            assert_eq!(v6.len(), 5 + 16);
        }
    }

    #[test]
    fn mistakes_name_their_key() {
        let both = EngineIdKeys {
            hex: Some("8000000001"),
            kind: Some("mac"),
            ..Default::default()
        };
        assert_eq!(resolve(&both).unwrap_err().0, "engine_id_type");
        assert_eq!(
            resolve(&keys("ethernet", None, None)).unwrap_err().0,
            "engine_id_type"
        );
        assert_eq!(
            resolve(&keys("text", None, None)).unwrap_err().0,
            "engine_id_text"
        );
        let e = resolve(&keys("ipv4", Some("no-such-nic0"), None)).unwrap_err();
        assert_eq!(e.0, "engine_id_nic");
        assert!(e.1.contains("no-such-nic0"), "{}", e.1);
        let lone_nic = EngineIdKeys {
            nic: Some("lo"),
            ..Default::default()
        };
        assert_eq!(resolve(&lone_nic).unwrap_err().0, "engine_id_type");
    }
}
