//! Small helpers the MIB modules share over the generated OID constants
//! ([`crate::core::oids`]).

use snmp::oid::Oid;

/// An owned OID from a generated constant.
pub(crate) fn oid(s: &[u32]) -> Oid {
    Oid::from_slice(s)
}

/// The last sub-identifier of an OID: a column's number from the column
/// object's OID (0 for an empty OID).
pub(crate) const fn last(s: &[u32]) -> u32 {
    match s {
        [.., x] => *x,
        [] => 0,
    }
}

/// Serde for maps keyed by GUID: the keys as `0x` and 16 hex digits, the way
/// operators read GUIDs (JSON object keys are strings).
pub(crate) mod guid_keys {
    use std::collections::BTreeMap;

    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<V: Serialize, S: Serializer>(
        m: &BTreeMap<u64, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_map(m.iter().map(|(k, v)| (format!("{k:#018x}"), v)))
    }

    pub fn deserialize<'de, V: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<u64, V>, D::Error> {
        BTreeMap::<String, V>::deserialize(d)?
            .into_iter()
            .map(|(k, v)| {
                let hex = k.strip_prefix("0x").unwrap_or(&k);
                u64::from_str_radix(hex, 16)
                    .map(|g| (g, v))
                    .map_err(|_| D::Error::custom(format!("not a GUID: {k:?}")))
            })
            .collect()
    }
}
