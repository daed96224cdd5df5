//! SNMP-TARGET-MIB (RFC 3413): where notifications go. snmpTargetAddrTable
//! (transport addresses, tagged) and snmpTargetParamsTable (message
//! processing and security to use), RowStatus tables managed over SNMP
//! ([`crate::modules::admin`]) and read by the notification originator at each
//! notification (SNMP-NOTIFICATION-MIB selects the rows,
//! [`crate::modules::snmp_notification`]); snmpTargetSpinLock; and the two context
//! counters. The agent has only the default context, so a request for
//! another is unknown (snmpUnknownContexts) and none is ever unavailable.
//!
//! Transport domains: snmpUDPDomain (RFC 3417) and RFC 3419's
//! transportDomainUdpIpv4 with 6-octet addresses, transportDomainUdpIpv6
//! (net-snmp's snmpUDPIPv6Domain) with 18 octets (address, then port).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use snmp::message::{Version, SNMP_V3};
use snmp::mib::{MibObject, SetError};
use snmp::table::Scalars;
use snmp::vacm::SecurityModel;
use snmp::value::Value;

use crate::core::oids::snmp_target_mib as o;
use crate::core::state::PersistedState;
use crate::core::util::{last, oid};
use crate::core::view::SysOrEntry;
use crate::modules::admin::{self, AdminRow, AdminRows, AdminState, AdminTable, SpinLock};
use crate::Change;
use crate::View;

/// snmpUDPDomain (SNMPv2-TM).
pub const SNMP_UDP_DOMAIN: &[u32] = &[1, 3, 6, 1, 6, 1, 1];
/// transportDomainUdpIpv4 (TRANSPORT-ADDRESS-MIB, RFC 3419).
pub const TRANSPORT_DOMAIN_UDP_IPV4: &[u32] = &[1, 3, 6, 1, 2, 1, 100, 1, 1];
/// transportDomainUdpIpv6 (RFC 3419; net-snmp's snmpUDPIPv6Domain).
pub const TRANSPORT_DOMAIN_UDP_IPV6: &[u32] = &[1, 3, 6, 1, 2, 1, 100, 1, 2];

/// The TAddress length of a supported domain (None: not supported).
fn address_len(domain: &[u32]) -> Option<usize> {
    match domain {
        SNMP_UDP_DOMAIN | TRANSPORT_DOMAIN_UDP_IPV4 => Some(6),
        TRANSPORT_DOMAIN_UDP_IPV6 => Some(18),
        _ => None,
    }
}

/// A TAddress of a supported domain as a socket address.
pub fn socket_addr(domain: &[u32], address: &[u8]) -> Option<SocketAddr> {
    if address_len(domain)? != address.len() {
        return None;
    }
    let (ip, port) = address.split_at(address.len() - 2);
    let port = u16::from_be_bytes([*port.first()?, *port.get(1)?]);
    Some(match <[u8; 4]>::try_from(ip) {
        Ok(v4) => SocketAddr::from((Ipv4Addr::from(v4), port)),
        Err(_) => SocketAddr::from((Ipv6Addr::from(<[u8; 16]>::try_from(ip).ok()?), port)),
    })
}

/// A socket address as (domain, TAddress): snmpUDPDomain for IPv4.
pub fn t_address(addr: SocketAddr) -> (&'static [u32], Vec<u8>) {
    let port = addr.port().to_be_bytes();
    match addr {
        SocketAddr::V4(a) => (SNMP_UDP_DOMAIN, [&a.ip().octets()[..], &port].concat()),
        SocketAddr::V6(a) => (
            TRANSPORT_DOMAIN_UDP_IPV6,
            [&a.ip().octets()[..], &port].concat(),
        ),
    }
}

fn delimiter(b: &u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The tags of a SnmpTagList (RFC 3413): delimited by space, tab, CR or LF.
pub fn tags(list: &[u8]) -> impl Iterator<Item = &[u8]> {
    list.split(delimiter).filter(|t| !t.is_empty())
}

/// Whether `list` is a SnmpTagList: empty, or tags with one delimiter
/// between two (none leading, trailing or adjacent).
pub fn valid_tag_list(list: &[u8]) -> bool {
    list.is_empty() || list.split(delimiter).all(|t| !t.is_empty())
}

/// Serde for octet strings an operator reads in the state file (tags,
/// names): text when they are UTF-8, else the octets.
pub(crate) mod text_octets {
    use serde::{Deserialize, Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Text(String),
        Octets(Vec<u8>),
    }

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(v) {
            Ok(t) => s.serialize_str(t),
            Err(_) => s.collect_seq(v),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        Ok(match Stored::deserialize(d)? {
            Stored::Text(t) => t.into_bytes(),
            Stored::Octets(o) => o,
        })
    }

    /// The same for an optional value.
    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => super::serialize(v, s),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
            Ok(Option::<super::Stored>::deserialize(d)?.map(|s| match s {
                super::Stored::Text(t) => t.into_bytes(),
                super::Stored::Octets(o) => o,
            }))
        }
    }
}

/// The module's state: both tables and the spin lock.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetState {
    /// snmpTargetSpinLock: for this run only (RFC 2579 TestAndIncr).
    #[serde(skip)]
    pub spin_lock: SpinLock,
    #[serde(default)]
    pub addrs: AdminRows<TargetAddr>,
    #[serde(default)]
    pub params: AdminRows<TargetParams>,
}

impl PersistedState for TargetState {
    const MODULE: &'static str = "SNMP-TARGET-MIB";
}

/// Nothing derived: the originator reads the rows at each notification.
impl AdminState for TargetState {}

/// A name index (`IMPLIED SnmpAdminString (SIZE(1..32))`).
pub fn valid_name(index: &[u32]) -> bool {
    admin::index_octets(index).is_some_and(|n| admin::sized(&n, 1, 32))
}

/// A Set's OCTET STRING value (the syntax is checked before).
pub(crate) fn octets(v: &Value) -> Result<&[u8], SetError> {
    match v {
        Value::OctetString(s) => Ok(s),
        _ => Err(SetError::WrongType),
    }
}

/// A Set's INTEGER value.
pub(crate) fn integer(v: &Value) -> Result<i32, SetError> {
    match v {
        Value::Integer(i) => Ok(*i),
        _ => Err(SetError::WrongType),
    }
}

/// One snmpTargetAddrEntry's columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetAddr {
    /// snmpTargetAddrTDomain (empty until set: no DEFVAL).
    pub t_domain: Vec<u32>,
    /// snmpTargetAddrTAddress (empty until set).
    pub t_address: Vec<u8>,
    /// snmpTargetAddrTimeout, centiseconds.
    pub timeout: i32,
    pub retry_count: i32,
    #[serde(with = "text_octets")]
    pub tag_list: Vec<u8>,
    /// snmpTargetAddrParams (empty until set).
    #[serde(with = "text_octets")]
    pub params: Vec<u8>,
}

/// snmpTargetAddrTimeout this agent accepts, centiseconds (1 s to 60 s;
/// DEFVAL 1500): an inform retried at once is an amplifier. Outside:
/// wrongValue.
pub const TIMEOUT_RANGE: std::ops::RangeInclusive<i32> = 100..=6000;
/// snmpTargetAddrRetryCount this agent accepts (DEFVAL 3, net-snmp's
/// default too). Outside: wrongValue.
pub const RETRY_COUNT_RANGE: std::ops::RangeInclusive<i32> = 0..=10;

impl Default for TargetAddr {
    /// The MIB's DEFVALs: 1500 centiseconds, 3 retries, no tags.
    fn default() -> Self {
        TargetAddr {
            t_domain: Vec::new(),
            t_address: Vec::new(),
            timeout: 1500,
            retry_count: 3,
            tag_list: Vec::new(),
            params: Vec::new(),
        }
    }
}

impl TargetAddr {
    /// The transport address, when the domain and address agree.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        socket_addr(&self.t_domain, &self.t_address)
    }

    /// The inform timeout in force: the row's, within [`TIMEOUT_RANGE`] (a
    /// row restored from an older state file may be outside).
    pub fn timeout(&self) -> std::time::Duration {
        let centis = self
            .timeout
            .clamp(*TIMEOUT_RANGE.start(), *TIMEOUT_RANGE.end());
        std::time::Duration::from_millis(u64::try_from(centis).unwrap_or(0) * 10)
    }

    /// The inform retries in force, within [`RETRY_COUNT_RANGE`].
    pub fn retries(&self) -> u32 {
        let r = (self.retry_count).clamp(*RETRY_COUNT_RANGE.start(), *RETRY_COUNT_RANGE.end());
        u32::try_from(r).unwrap_or(0)
    }
}

/// `v` when inside `range`, else wrongValue.
fn in_range(v: i32, range: &std::ops::RangeInclusive<i32>) -> Result<i32, SetError> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(SetError::WrongValue)
    }
}

const ADDR_T_DOMAIN: u32 = last(o::SNMP_TARGET_ADDR_T_DOMAIN);
const ADDR_T_ADDRESS: u32 = last(o::SNMP_TARGET_ADDR_T_ADDRESS);
const ADDR_TIMEOUT: u32 = last(o::SNMP_TARGET_ADDR_TIMEOUT);
const ADDR_RETRY_COUNT: u32 = last(o::SNMP_TARGET_ADDR_RETRY_COUNT);
const ADDR_TAG_LIST: u32 = last(o::SNMP_TARGET_ADDR_TAG_LIST);
const ADDR_PARAMS: u32 = last(o::SNMP_TARGET_ADDR_PARAMS);

impl AdminRow for TargetAddr {
    type State = TargetState;
    const ENTRY: &'static [u32] = o::SNMP_TARGET_ADDR_ENTRY;
    const STATUS: u32 = last(o::SNMP_TARGET_ADDR_ROW_STATUS);
    const STORAGE: u32 = last(o::SNMP_TARGET_ADDR_STORAGE_TYPE);

    fn rows(s: &TargetState) -> &AdminRows<Self> {
        &s.addrs
    }
    fn rows_mut(s: &mut TargetState) -> &mut AdminRows<Self> {
        &mut s.addrs
    }

    fn valid_index(index: &[u32]) -> bool {
        valid_name(index)
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        let set = |s: &[u8]| (!s.is_empty()).then(|| Value::OctetString(s.to_vec()));
        match column {
            ADDR_T_DOMAIN => {
                (!self.t_domain.is_empty()).then(|| Value::ObjectId(oid(&self.t_domain)))
            }
            ADDR_T_ADDRESS => set(&self.t_address),
            ADDR_TIMEOUT => Some(Value::Integer(self.timeout)),
            ADDR_RETRY_COUNT => Some(Value::Integer(self.retry_count)),
            ADDR_TAG_LIST => Some(Value::OctetString(self.tag_list.clone())),
            ADDR_PARAMS => set(&self.params),
            _ => None,
        }
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        match column {
            ADDR_T_DOMAIN => {
                let Value::ObjectId(d) = value else {
                    return Err(SetError::WrongType);
                };
                let len = address_len(d.as_slice()).ok_or(SetError::WrongValue)?;
                // An address already set for another domain.
                if !self.t_address.is_empty() && self.t_address.len() != len {
                    return Err(SetError::InconsistentValue);
                }
                self.t_domain = d.as_slice().to_vec();
            }
            ADDR_T_ADDRESS => {
                let a = octets(value)?;
                let fits = match address_len(&self.t_domain) {
                    Some(len) => a.len() == len,
                    // The domain may follow in the same PDU.
                    None => matches!(a.len(), 6 | 18),
                };
                if !fits {
                    return Err(SetError::WrongLength);
                }
                self.t_address = a.to_vec();
            }
            ADDR_TIMEOUT => self.timeout = in_range(integer(value)?, &TIMEOUT_RANGE)?,
            ADDR_RETRY_COUNT => {
                self.retry_count = in_range(integer(value)?, &RETRY_COUNT_RANGE)?;
            }
            ADDR_TAG_LIST => {
                let list = octets(value)?;
                if !valid_tag_list(list) {
                    return Err(SetError::WrongValue);
                }
                self.tag_list = list.to_vec();
            }
            ADDR_PARAMS => self.params = octets(value)?.to_vec(),
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }

    /// RFC 3413: TDomain, TAddress and Params set (and agreeing).
    fn ready(&self) -> bool {
        self.socket_addr().is_some() && !self.params.is_empty()
    }

    /// A target whose params carry a hidden value, or would: pointing it
    /// elsewhere (or at such params) would send the community where the
    /// writer says. So would naming params not there yet, which an
    /// authPriv writer may later fill in.
    fn needs_clearance(row: Option<&Self>, view: &View, column: u32, value: &Value) -> bool {
        let params = &view.system.modules.get::<TargetState>().params;
        let carries = |name: &[u8]| {
            let index: Vec<u32> = name.iter().map(|&b| u32::from(b)).collect();
            params
                .get(&index)
                .is_none_or(|r| r.data.storage.fixed() || r.data.data.carries_hidden())
        };
        if row.is_some_and(|r| !r.params.is_empty() && carries(&r.params)) {
            return true;
        }
        match (column, value) {
            (ADDR_PARAMS, Value::OctetString(name)) => carries(name),
            _ => false,
        }
    }
}

/// snmpTargetParamsMPModel values this agent sends with (RFC 3411
/// SnmpMessageProcessingModel: the msgVersion numbers).
pub const MP_V1: i32 = Version::V1 as i32;
pub const MP_V2C: i32 = Version::V2c as i32;
pub const MP_V3: i32 = SNMP_V3 as i32;

/// SnmpSecurityModel values (the VACM's).
pub const SM_V1: i32 = SecurityModel::V1 as i32;
pub const SM_V2C: i32 = SecurityModel::V2c as i32;
pub const SM_USM: i32 = SecurityModel::Usm as i32;

/// One snmpTargetParamsEntry's columns (none has a DEFVAL: all must be set).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetParams {
    pub mp_model: Option<i32>,
    pub security_model: Option<i32>,
    /// The community (SNMPv1/v2c, RFC 3584's convention as net-snmp has it)
    /// or the USM user.
    #[serde(default, with = "text_octets::option")]
    pub security_name: Option<Vec<u8>>,
    /// SnmpSecurityLevel: noAuthNoPriv(1), authNoPriv(2), authPriv(3).
    pub security_level: Option<i32>,
}

const PARAMS_MP_MODEL: u32 = last(o::SNMP_TARGET_PARAMS_MP_MODEL);
const PARAMS_SECURITY_MODEL: u32 = last(o::SNMP_TARGET_PARAMS_SECURITY_MODEL);
const PARAMS_SECURITY_NAME: u32 = last(o::SNMP_TARGET_PARAMS_SECURITY_NAME);
const PARAMS_SECURITY_LEVEL: u32 = last(o::SNMP_TARGET_PARAMS_SECURITY_LEVEL);

impl TargetParams {
    /// Whether the row's securityName is a community (SNMPv1/v2c): hidden
    /// below authPriv.
    pub fn carries_hidden(&self) -> bool {
        matches!(self.security_model, Some(SM_V1 | SM_V2C))
            || matches!(self.mp_model, Some(MP_V1 | MP_V2C))
    }

    /// Whether the message processing and security models go together and
    /// the level is one the model has (SNMPv1/v2c: noAuthNoPriv only).
    fn consistent(&self) -> bool {
        matches!(
            (self.mp_model, self.security_model, self.security_level),
            (Some(MP_V1), Some(SM_V1), Some(1))
                | (Some(MP_V2C), Some(SM_V2C), Some(1))
                | (Some(MP_V3), Some(SM_USM), Some(1..=3))
        )
    }
}

impl AdminRow for TargetParams {
    type State = TargetState;
    const ENTRY: &'static [u32] = o::SNMP_TARGET_PARAMS_ENTRY;
    const STATUS: u32 = last(o::SNMP_TARGET_PARAMS_ROW_STATUS);
    const STORAGE: u32 = last(o::SNMP_TARGET_PARAMS_STORAGE_TYPE);

    fn rows(s: &TargetState) -> &AdminRows<Self> {
        &s.params
    }
    fn rows_mut(s: &mut TargetState) -> &mut AdminRows<Self> {
        &mut s.params
    }

    fn valid_index(index: &[u32]) -> bool {
        valid_name(index)
    }

    fn read(&self, _: &View, _: &[u32], column: u32) -> Option<Value> {
        match column {
            PARAMS_MP_MODEL => self.mp_model.map(Value::Integer),
            PARAMS_SECURITY_MODEL => self.security_model.map(Value::Integer),
            PARAMS_SECURITY_NAME => self.security_name.clone().map(Value::OctetString),
            PARAMS_SECURITY_LEVEL => self.security_level.map(Value::Integer),
            _ => None,
        }
    }

    fn set(&mut self, _: &View, _: &[u32], column: u32, value: &Value) -> Result<(), SetError> {
        match column {
            PARAMS_MP_MODEL => match integer(value)? {
                m @ (MP_V1 | MP_V2C | MP_V3) => self.mp_model = Some(m),
                // A model this agent does not send with.
                _ => return Err(SetError::WrongValue),
            },
            PARAMS_SECURITY_MODEL => match integer(value)? {
                m @ (SM_V1 | SM_V2C | SM_USM) => self.security_model = Some(m),
                _ => return Err(SetError::WrongValue),
            },
            PARAMS_SECURITY_NAME => self.security_name = Some(octets(value)?.to_vec()),
            PARAMS_SECURITY_LEVEL => self.security_level = Some(integer(value)?),
            _ => return Err(SetError::NotWritable),
        }
        Ok(())
    }

    fn ready(&self) -> bool {
        self.security_name.is_some() && self.consistent()
    }
}

/// This module in the registry ([`crate::REGISTRY`]).
pub const DEF: crate::ModuleDef = crate::ModuleDef {
    ..crate::ModuleDef::plain(
        "SNMP-TARGET-MIB",
        || {
            Some(SysOrEntry::new(
                o::SNMP_TARGET_MIB,
                "The MIB for SNMP notification targets managed over SNMP (RFC 3413)",
            ))
        },
        objects,
    )
};

fn objects(_: &crate::Options) -> Vec<Arc<dyn MibObject<View, Change>>> {
    use std::sync::atomic::Ordering::Relaxed;
    let counters = Scalars::new(oid(o::SNMP_TARGET_OBJECTS))
        // snmpUnavailableContexts: no known context is ever unavailable.
        .read_only(last(o::SNMP_UNAVAILABLE_CONTEXTS), |_: &View| {
            Value::Counter32(0)
        })
        .read_only(last(o::SNMP_UNKNOWN_CONTEXTS), |v: &View| {
            Value::Counter32(v.stats.unknown_contexts.load(Relaxed))
        });
    let mut objects = counters.into_objects();
    objects.push(admin::spin_lock::<TargetState>(
        o::SNMP_TARGET_SPIN_LOCK,
        |s| s.spin_lock,
        |s| &mut s.spin_lock,
    ));
    objects.push(Arc::new(AdminTable::<TargetAddr>::new()));
    objects.push(Arc::new(AdminTable::<TargetParams>::new()));
    objects
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_of_both_families() {
        let a: SocketAddr = "192.0.2.7:162".parse().unwrap();
        let (d, t) = t_address(a);
        assert_eq!(t, vec![192, 0, 2, 7, 0, 162]);
        assert_eq!(socket_addr(d, &t), Some(a));
        let a: SocketAddr = "[2001:db8::1]:10162".parse().unwrap();
        let (d, t) = t_address(a);
        assert_eq!(t.len(), 18);
        assert_eq!(socket_addr(d, &t), Some(a));
        assert_eq!(socket_addr(SNMP_UDP_DOMAIN, &t), None);
        assert_eq!(socket_addr(&[1, 3, 6], &[0; 6]), None);
    }

    #[test]
    fn names_are_text_in_the_state_file() {
        let p = TargetParams {
            mp_model: Some(MP_V2C),
            security_model: Some(SM_V2C),
            security_name: Some(b"public".to_vec()),
            security_level: Some(1),
        };
        let j = serde_json::to_value(&p).unwrap();
        assert_eq!(j["securityName"], "public");
        let back: TargetParams = serde_json::from_value(j).unwrap();
        assert_eq!(back, p);
        let a = TargetAddr {
            tag_list: vec![0xff, 0x20],
            ..TargetAddr::default()
        };
        let j = serde_json::to_value(&a).unwrap();
        assert_eq!(j["tagList"], serde_json::json!([255, 32]));
        assert_eq!(serde_json::from_value::<TargetAddr>(j).unwrap(), a);
    }

    #[test]
    fn tag_lists_split_on_any_delimiter() {
        let t: Vec<&[u8]> = tags(b" a\tbb\r\n c ").collect();
        assert_eq!(t, vec![&b"a"[..], b"bb", b"c"]);
        assert_eq!(tags(b"").count(), 0);
        assert!(valid_tag_list(b"") && valid_tag_list(b"host router\tbridge"));
        for bad in [&b" a"[..], b"a ", b"a  b", b" "] {
            assert!(!valid_tag_list(bad), "{bad:?}");
        }
    }

    #[test]
    fn params_models_must_agree() {
        let p = |mp, sm, lvl| TargetParams {
            mp_model: Some(mp),
            security_model: Some(sm),
            security_name: Some(b"x".to_vec()),
            security_level: Some(lvl),
        };
        assert!(p(MP_V2C, SM_V2C, 1).ready());
        assert!(!p(MP_V2C, SM_V2C, 3).ready());
        assert!(!p(MP_V1, SM_USM, 1).ready());
        assert!(p(MP_V3, SM_USM, 3).ready());
    }
}
