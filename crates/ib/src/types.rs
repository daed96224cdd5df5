//! IBA domain types with their wire encodings.
//!
//! Every conversion from a raw wire value is fallible (`from_raw` -> `Option`,
//! `TryFrom` -> `Result<_, InvalidValue>`): a malformed MAD never panics.
//! Names follow the InfiniBand Architecture Specification (IBA), volume 1.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::net::Ipv6Addr;
use std::str::FromStr;

/// A raw value that is not a valid encoding of the named IBA type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {type_name} value {value:#x}")]
pub struct InvalidValue {
    pub type_name: &'static str,
    pub value: u64,
}

impl InvalidValue {
    fn new(type_name: &'static str, value: impl Into<u64>) -> Self {
        Self {
            type_name,
            value: value.into(),
        }
    }
}

/// A string that does not parse as the named IBA type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse {type_name} from {input:?}: {reason}")]
pub struct ParseError {
    pub type_name: &'static str,
    pub input: String,
    pub reason: &'static str,
}

fn parse_hex_u64(s: &str, type_name: &'static str) -> Result<u64, ParseError> {
    let err = |reason| ParseError {
        type_name,
        input: s.to_string(),
        reason,
    };
    let t = s.trim();
    let digits = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .ok_or_else(|| err("expected a 0x-prefixed hexadecimal number"))?;
    if digits.is_empty() || digits.len() > 16 {
        return Err(err("expected 1 to 16 hexadecimal digits"));
    }
    u64::from_str_radix(digits, 16).map_err(|_| err("not a hexadecimal number"))
}

// ---------------------------------------------------------------------------
// Guid / Gid
// ---------------------------------------------------------------------------

/// An EUI-64 GUID (NodeGUID, PortGUID, SystemImageGUID). Displayed as `0x%016x`,
/// serialized as that string (JSON numbers lose precision above 2^53).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Guid(pub u64);

impl Guid {
    pub const fn new(v: u64) -> Self {
        Self(v)
    }
    pub const fn raw(self) -> u64 {
        self.0
    }
    /// Network byte order octets, as on the wire and in IbGuid.
    pub const fn to_bytes(self) -> [u8; 8] {
        self.0.to_be_bytes()
    }
    pub const fn from_bytes(b: [u8; 8]) -> Self {
        Self(u64::from_be_bytes(b))
    }
}

/// Conversions both ways between a newtype and the integer it wraps, and
/// (`decimal`) its Display as that integer.
macro_rules! newtype_int {
    ($name:ident, $int:ty) => {
        impl From<$int> for $name {
            fn from(v: $int) -> Self {
                Self(v)
            }
        }
        impl From<$name> for $int {
            fn from(v: $name) -> Self {
                v.0
            }
        }
    };
    ($name:ident, $int:ty, decimal) => {
        newtype_int!($name, $int);
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

newtype_int!(Guid, u64);
newtype_int!(Lid, u16, decimal);
newtype_int!(PortNum, u8, decimal);
newtype_int!(PKey, u16);

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#018x}", self.0)
    }
}

impl fmt::LowerHex for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl FromStr for Guid {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_hex_u64(s, "GUID").map(Guid)
    }
}

impl Serialize for Guid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Guid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Guid;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 0x-prefixed hexadecimal GUID or an unsigned integer")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Guid, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Guid, E> {
                Ok(Guid(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// A 128-bit GID: subnet prefix (upper 64 bits) + interface ID (a port GUID).
/// Displayed and serialized in IPv6 notation, as ibstat and saquery print it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gid(pub [u8; 16]);

impl Gid {
    /// The default subnet prefix fe80::/64.
    pub const DEFAULT_SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

    pub fn new(prefix: u64, guid: Guid) -> Self {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&prefix.to_be_bytes());
        b[8..].copy_from_slice(&guid.0.to_be_bytes());
        Self(b)
    }
    pub const fn from_bytes(b: [u8; 16]) -> Self {
        Self(b)
    }
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0
    }
    pub fn prefix(&self) -> u64 {
        let [a, b, c, d, e, f, g, h, ..] = self.0;
        u64::from_be_bytes([a, b, c, d, e, f, g, h])
    }
    pub fn guid(&self) -> Guid {
        let [.., a, b, c, d, e, f, g, h] = self.0;
        Guid(u64::from_be_bytes([a, b, c, d, e, f, g, h]))
    }
    /// Multicast GIDs start with 0xFF (IBA 4.1.1).
    pub fn is_multicast(&self) -> bool {
        self.0[0] == 0xff
    }
}

impl fmt::Display for Gid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&Ipv6Addr::from(self.0), f)
    }
}

impl FromStr for Gid {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim()
            .parse::<Ipv6Addr>()
            .map(|a| Gid(a.octets()))
            .map_err(|_| ParseError {
                type_name: "GID",
                input: s.to_string(),
                reason: "expected an IPv6-style GID such as fe80::2:c903:0:1",
            })
    }
}

impl Serialize for Gid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Gid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

// ---------------------------------------------------------------------------
// Lid, PortNum, PKey, Sl, Vl
// ---------------------------------------------------------------------------

/// A 16-bit Local Identifier. 0 is reserved (unassigned), 0x0001..=0xBFFF unicast,
/// 0xC000..=0xFFFE multicast, 0xFFFF the permissive LID.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Lid(pub u16);

impl Lid {
    pub const UNASSIGNED: Lid = Lid(0);
    pub const UNICAST_MIN: Lid = Lid(0x0001);
    pub const UNICAST_MAX: Lid = Lid(0xBFFF);
    pub const MULTICAST_MIN: Lid = Lid(0xC000);
    pub const MULTICAST_MAX: Lid = Lid(0xFFFE);
    pub const PERMISSIVE: Lid = Lid(0xFFFF);

    pub const fn raw(self) -> u16 {
        self.0
    }
    pub const fn is_unicast(self) -> bool {
        self.0 >= 0x0001 && self.0 <= 0xBFFF
    }
    pub const fn is_multicast(self) -> bool {
        self.0 >= 0xC000 && self.0 <= 0xFFFE
    }
    pub const fn is_permissive(self) -> bool {
        self.0 == 0xFFFF
    }
    pub const fn is_unassigned(self) -> bool {
        self.0 == 0
    }
    /// The LID range a port answers to with LMC `lmc` (base..base + 2^lmc).
    pub fn lmc_range(self, lmc: u8) -> std::ops::RangeInclusive<u16> {
        let n = 1u32 << lmc.min(7);
        let base = u32::from(self.0) & !(n - 1);
        let top = (base + n - 1).min(0xFFFF);
        // Both bounds fit u16 after the min above.
        (base as u16)..=(top as u16)
    }
}

/// A port number on a node: 0 is a switch's management port, 255 is invalid/"all ports".
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct PortNum(pub u8);

impl PortNum {
    /// PortSelect value meaning every port (with ClassPortInfo AllPortSelect).
    pub const ALL: PortNum = PortNum(0xFF);
    pub const fn raw(self) -> u8 {
        self.0
    }
}

/// A 16-bit partition key: bit 15 full membership, bits 0..14 the partition (base).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct PKey(pub u16);

impl PKey {
    pub const FULL_MEMBER: u16 = 0x8000;
    /// The default partition, full member.
    pub const DEFAULT: PKey = PKey(0xFFFF);
    pub const INVALID: PKey = PKey(0x0000);

    pub const fn raw(self) -> u16 {
        self.0
    }
    pub const fn is_full_member(self) -> bool {
        self.0 & Self::FULL_MEMBER != 0
    }
    /// The 15-bit partition number (IB-TC-MIB IbPartition).
    pub const fn base(self) -> u16 {
        self.0 & 0x7FFF
    }
    pub const fn with_full_member(self, full: bool) -> PKey {
        if full {
            PKey(self.0 | Self::FULL_MEMBER)
        } else {
            PKey(self.0 & !Self::FULL_MEMBER)
        }
    }
    /// P_Keys 0x0000 and 0x8000 are invalid (IBA 10.9.1.2).
    pub const fn is_valid(self) -> bool {
        self.base() != 0
    }
}
impl fmt::Display for PKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#06x}", self.0)
    }
}

macro_rules! nibble_type {
    ($(#[$m:meta])* $name:ident, $tn:literal) => {
        $(#[$m])*
        #[derive(
            Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize,
            Deserialize,
        )]
        #[serde(try_from = "u8", into = "u8")]
        pub struct $name(u8);

        impl $name {
            pub const fn from_raw(v: u8) -> Option<Self> {
                if v <= 15 { Some(Self(v)) } else { None }
            }
            /// The low 4 bits of `v` (as a 4-bit wire field holds them).
            pub const fn from_bits(v: u8) -> Self {
                Self(v & 0x0F)
            }
            pub const fn raw(self) -> u8 {
                self.0
            }
        }
        impl TryFrom<u8> for $name {
            type Error = InvalidValue;
            fn try_from(v: u8) -> Result<Self, InvalidValue> {
                Self::from_raw(v).ok_or_else(|| InvalidValue::new($tn, v))
            }
        }
        impl From<$name> for u8 {
            fn from(v: $name) -> u8 {
                v.0
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

nibble_type!(
    /// Service Level, 0..=15.
    Sl,
    "SL"
);
nibble_type!(
    /// Virtual Lane, 0..=15: VL0-VL14 carry data, VL15 carries subnet management.
    Vl,
    "VL"
);

impl Vl {
    pub const VL15: Vl = Vl(15);
    pub const fn is_management(self) -> bool {
        self.0 == 15
    }
}

// ---------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------

/// Wire enumerations, one or several a call: each `Name : "IBA field" {
/// Variant = value => "printed name", ... }`.
macro_rules! wire_enum {
    ($( $(#[$m:meta])* $name:ident : $tn:literal { $($body:tt)* } )+) => {
        $( wire_enum!(@one $(#[$m])* $name : $tn { $($body)* }); )+
    };
    (@one
        $(#[$m:meta])* $name:ident : $tn:literal {
            $( $(#[$vm:meta])* $var:ident = $val:literal => $disp:literal ),+ $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vm])* $var = $val ),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            pub const fn from_raw(v: u8) -> Option<Self> {
                match v {
                    $( $val => Some($name::$var), )+
                    _ => None,
                }
            }
            pub const fn raw(self) -> u8 {
                self as u8
            }
            /// The name as IBA tools print it.
            pub const fn name(self) -> &'static str {
                match self { $( $name::$var => $disp, )+ }
            }
        }
        impl TryFrom<u8> for $name {
            type Error = InvalidValue;
            fn try_from(v: u8) -> Result<Self, InvalidValue> {
                Self::from_raw(v).ok_or_else(|| InvalidValue::new($tn, v))
            }
        }
        impl From<$name> for u8 {
            fn from(v: $name) -> u8 {
                v as u8
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

wire_enum! {
    /// NodeInfo:NodeType (IB-TC-MIB IbNodeType minus unknown(0)).
    NodeType : "NodeType" {
        Ca = 1 => "CA",
        Switch = 2 => "Switch",
        Router = 3 => "Router",
    }

    /// PortInfo:PortState (logical state).
    PortState : "PortState" {
        NoChange = 0 => "NoChange",
        Down = 1 => "Down",
        Init = 2 => "Initialize",
        Armed = 3 => "Armed",
        Active = 4 => "Active",
    }

    /// PortInfo:PortPhysicalState.
    PhysPortState : "PortPhysicalState" {
        Sleep = 1 => "Sleep",
        Polling = 2 => "Polling",
        Disabled = 3 => "Disabled",
        PortConfigurationTraining = 4 => "PortConfigurationTraining",
        LinkUp = 5 => "LinkUp",
        LinkErrorRecovery = 6 => "LinkErrorRecovery",
        PhyTest = 7 => "PhyTest",
    }

    /// SMInfo:SMState (IB-TC-MIB IbSmState).
    SmState : "SMState" {
        NotActive = 0 => "notActive",
        Discovering = 1 => "discovering",
        Standby = 2 => "standby",
        Master = 3 => "master",
    }

    /// An IBA MTU code (PortInfo NeighborMTU/MTUCap, PathRecord MTU; IB-TC-MIB IbMtu).
    Mtu : "MTU" {
        Mtu256 = 1 => "256",
        Mtu512 = 2 => "512",
        Mtu1024 = 3 => "1024",
        Mtu2048 = 4 => "2048",
        Mtu4096 = 5 => "4096",
    }
}

impl Mtu {
    pub const fn bytes(self) -> u32 {
        128 << (self as u32)
    }
    pub const fn from_bytes(n: u32) -> Option<Self> {
        match n {
            256 => Some(Mtu::Mtu256),
            512 => Some(Mtu::Mtu512),
            1024 => Some(Mtu::Mtu1024),
            2048 => Some(Mtu::Mtu2048),
            4096 => Some(Mtu::Mtu4096),
            _ => None,
        }
    }
}

wire_enum!(
    /// Link width. The discriminant is the PortInfo LinkWidthActive bit (IBA 14.2.5.6).
    LinkWidth : "LinkWidth" {
        X1 = 1 => "1X",
        X4 = 2 => "4X",
        X8 = 4 => "8X",
        X12 = 8 => "12X",
        X2 = 16 => "2X",
    }
);

impl LinkWidth {
    /// Number of physical lanes.
    pub const fn lanes(self) -> u32 {
        match self {
            LinkWidth::X1 => 1,
            LinkWidth::X2 => 2,
            LinkWidth::X4 => 4,
            LinkWidth::X8 => 8,
            LinkWidth::X12 => 12,
        }
    }
    /// PortInfo LinkWidthActive bit (same as `raw`).
    pub const fn port_info_bit(self) -> u8 {
        self as u8
    }
    /// The widths set in a LinkWidthSupported/Enabled mask, narrowest first.
    pub fn from_mask(mask: u8) -> impl Iterator<Item = LinkWidth> {
        const BY_LANES: [LinkWidth; 5] = [
            LinkWidth::X1,
            LinkWidth::X2,
            LinkWidth::X4,
            LinkWidth::X8,
            LinkWidth::X12,
        ];
        BY_LANES
            .into_iter()
            .filter(move |w| mask & w.port_info_bit() != 0)
    }
}

/// Link speed (per-lane signalling generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LinkSpeed {
    Sdr,
    Ddr,
    Qdr,
    Fdr10,
    Fdr,
    Edr,
    Hdr,
    Ndr,
    Xdr,
}

/// Where a speed is encoded in PortInfo and its value there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpeedEncoding {
    /// PortInfo:LinkSpeedActive/Supported/Enabled bit.
    LinkSpeed(u8),
    /// PortInfo:LinkSpeedExtActive/Supported/Enabled bit.
    LinkSpeedExt(u8),
    /// Mellanox vendor MLNX ExtendedPortInfo:LinkSpeedActive bit (FDR10 = 1).
    MlnxExtPortInfo(u8),
}

impl LinkSpeed {
    pub const ALL: &'static [LinkSpeed] = &[
        LinkSpeed::Sdr,
        LinkSpeed::Ddr,
        LinkSpeed::Qdr,
        LinkSpeed::Fdr10,
        LinkSpeed::Fdr,
        LinkSpeed::Edr,
        LinkSpeed::Hdr,
        LinkSpeed::Ndr,
        LinkSpeed::Xdr,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            LinkSpeed::Sdr => "SDR",
            LinkSpeed::Ddr => "DDR",
            LinkSpeed::Qdr => "QDR",
            LinkSpeed::Fdr10 => "FDR10",
            LinkSpeed::Fdr => "FDR",
            LinkSpeed::Edr => "EDR",
            LinkSpeed::Hdr => "HDR",
            LinkSpeed::Ndr => "NDR",
            LinkSpeed::Xdr => "XDR",
        }
    }

    pub const fn encoding(self) -> SpeedEncoding {
        match self {
            LinkSpeed::Sdr => SpeedEncoding::LinkSpeed(1),
            LinkSpeed::Ddr => SpeedEncoding::LinkSpeed(2),
            LinkSpeed::Qdr => SpeedEncoding::LinkSpeed(4),
            LinkSpeed::Fdr10 => SpeedEncoding::MlnxExtPortInfo(1),
            LinkSpeed::Fdr => SpeedEncoding::LinkSpeedExt(1),
            LinkSpeed::Edr => SpeedEncoding::LinkSpeedExt(2),
            LinkSpeed::Hdr => SpeedEncoding::LinkSpeedExt(4),
            LinkSpeed::Ndr => SpeedEncoding::LinkSpeedExt(8),
            LinkSpeed::Xdr => SpeedEncoding::LinkSpeedExt(16),
        }
    }

    /// The active speed from PortInfo: LinkSpeedExtActive wins when non-zero, then
    /// the Mellanox FDR10 bit, then LinkSpeedActive. `None` if nothing valid is set.
    pub const fn from_port_info(
        link_speed_active: u8,
        link_speed_ext_active: u8,
        mlnx_fdr10_active: bool,
    ) -> Option<LinkSpeed> {
        // The bits are those of `encoding`, its one table.
        let mut base = None;
        let mut i = 0;
        while i < Self::ALL.len() {
            let speed = Self::ALL[i];
            match speed.encoding() {
                SpeedEncoding::LinkSpeedExt(b) if b == link_speed_ext_active => return Some(speed),
                SpeedEncoding::LinkSpeed(b) if b == link_speed_active => base = Some(speed),
                _ => {}
            }
            i += 1;
        }
        if mlnx_fdr10_active {
            return Some(LinkSpeed::Fdr10);
        }
        base
    }

    /// Per-lane line (signalling) rate in kb/s, before line coding.
    pub const fn lane_signal_kbps(self) -> u64 {
        match self {
            LinkSpeed::Sdr => 2_500_000,
            LinkSpeed::Ddr => 5_000_000,
            LinkSpeed::Qdr => 10_000_000,
            LinkSpeed::Fdr10 => 10_312_500,
            LinkSpeed::Fdr => 14_062_500,
            LinkSpeed::Edr => 25_781_250,
            LinkSpeed::Hdr => 53_125_000,
            LinkSpeed::Ndr => 106_250_000,
            LinkSpeed::Xdr => 212_500_000,
        }
    }

    /// Line coding as (data bits, line bits): 8b/10b up to QDR, 64b/66b for
    /// FDR10/FDR/EDR; HDR and later (PAM4 with RS-FEC) carry exactly 50/100/200 Gb/s
    /// per lane, expressed here as the ratio of data to line rate.
    pub const fn line_code(self) -> (u64, u64) {
        match self {
            LinkSpeed::Sdr | LinkSpeed::Ddr | LinkSpeed::Qdr => (8, 10),
            LinkSpeed::Fdr10 | LinkSpeed::Fdr | LinkSpeed::Edr => (64, 66),
            // 50 / 53.125 = 16 / 17
            LinkSpeed::Hdr | LinkSpeed::Ndr | LinkSpeed::Xdr => (16, 17),
        }
    }

    /// Per-lane data rate in kb/s after line coding (FDR rounds down to 13,636,363).
    pub const fn lane_data_kbps(self) -> u64 {
        let (d, l) = self.line_code();
        self.lane_signal_kbps() * d / l
    }
}

impl fmt::Display for LinkSpeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LinkSpeed {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        by_name(LinkSpeed::ALL, LinkSpeed::name, s).ok_or_else(|| ParseError {
            type_name: "LinkSpeed",
            input: s.to_string(),
            reason: "expected SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR",
        })
    }
}

impl FromStr for LinkWidth {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        by_name(LinkWidth::ALL, LinkWidth::name, s).ok_or_else(|| ParseError {
            type_name: "LinkWidth",
            input: s.to_string(),
            reason: "expected 1X, 2X, 4X, 8X or 12X",
        })
    }
}

/// The value of `all` whose name is `s` (case and surrounding blanks aside).
fn by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, s: &str) -> Option<T> {
    all.iter()
        .copied()
        .find(|v| name(*v).eq_ignore_ascii_case(s.trim()))
}

/// Effective data rate of a link in Mb/s (after line coding), e.g. 4x SDR = 8,000
/// (as draft-ietf-ipoib-ibif-mib ifSpeed says), 4x QDR = 32,000, 4x FDR = 54,545,
/// 4x EDR = 100,000, 4x NDR = 400,000. 1x/2x/8x/12x scale by lane count.
pub const fn data_rate_mbps(width: LinkWidth, speed: LinkSpeed) -> u64 {
    width.lanes() as u64 * speed.lane_data_kbps() / 1000
}

/// Raw signalling rate of a link in Mb/s (before line coding), e.g. 4x SDR = 10,000.
pub const fn signal_rate_mbps(width: LinkWidth, speed: LinkSpeed) -> u64 {
    width.lanes() as u64 * speed.lane_signal_kbps() / 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_display_parse() {
        let g = Guid(0x0002_c903_0000_1234);
        assert_eq!(g.to_string(), "0x0002c90300001234");
        assert_eq!("0x0002c90300001234".parse::<Guid>().unwrap(), g);
        assert_eq!("0X2c90300001234".parse::<Guid>().unwrap(), g);
        assert!("2c90300001234".parse::<Guid>().is_err());
        assert!("0x".parse::<Guid>().is_err());
        assert!("0x1ffffffffffffffff".parse::<Guid>().is_err());
        assert!("0xzz".parse::<Guid>().is_err());
        let j = serde_json::to_string(&g).unwrap();
        assert_eq!(j, "\"0x0002c90300001234\"");
        assert_eq!(serde_json::from_str::<Guid>(&j).unwrap(), g);
        assert_eq!(serde_json::from_str::<Guid>("42").unwrap(), Guid(42));
    }

    #[test]
    fn gid_parts() {
        let g = Gid::new(Gid::DEFAULT_SUBNET_PREFIX, Guid(0x0002_c903_0000_0001));
        assert_eq!(g.prefix(), 0xfe80_0000_0000_0000);
        assert_eq!(g.guid(), Guid(0x0002_c903_0000_0001));
        assert_eq!(g.to_string(), "fe80::2:c903:0:1");
        assert_eq!("fe80::2:c903:0:1".parse::<Gid>().unwrap(), g);
        let j = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<Gid>(&j).unwrap(), g);
        assert!(!g.is_multicast());
        assert!("ff12:401b:ffff::1".parse::<Gid>().unwrap().is_multicast());
    }

    #[test]
    fn lid_ranges() {
        assert!(!Lid(0).is_unicast());
        assert!(Lid(1).is_unicast() && Lid(0xBFFF).is_unicast());
        assert!(!Lid(0xC000).is_unicast() && Lid(0xC000).is_multicast());
        assert!(Lid(0xFFFE).is_multicast() && !Lid(0xFFFF).is_multicast());
        assert!(Lid(0xFFFF).is_permissive());
        assert_eq!(Lid(0x11).lmc_range(2), 0x10..=0x13);
        assert_eq!(Lid(0xFFFF).lmc_range(7), 0xFF80..=0xFFFF);
        assert_eq!(Lid(5).lmc_range(200), 0..=127);
    }

    #[test]
    fn pkey_bits() {
        let p = PKey(0xFFFF);
        assert!(p.is_full_member());
        assert_eq!(p.base(), 0x7FFF);
        assert_eq!(p.with_full_member(false), PKey(0x7FFF));
        assert!(!PKey(0x8000).is_valid());
        assert_eq!(PKey(0x8001).to_string(), "0x8001");
    }

    #[test]
    fn sl_vl() {
        assert!(Sl::from_raw(16).is_none());
        assert_eq!(Vl::try_from(15).unwrap(), Vl::VL15);
        assert!(Vl::VL15.is_management());
        assert!(Vl::try_from(16).is_err());
        assert_eq!(serde_json::to_string(&Sl::from_bits(0x13)).unwrap(), "3");
        assert!(serde_json::from_str::<Vl>("16").is_err());
    }

    #[test]
    fn enums() {
        assert_eq!(NodeType::from_raw(2), Some(NodeType::Switch));
        assert_eq!(NodeType::from_raw(0), None);
        assert!(NodeType::try_from(4).is_err());
        assert_eq!(PortState::Active.raw(), 4);
        assert_eq!(PhysPortState::from_raw(5), Some(PhysPortState::LinkUp));
        assert_eq!(PhysPortState::from_raw(8), None);
        assert_eq!(SmState::Master.to_string(), "master");
        assert_eq!(Mtu::Mtu4096.bytes(), 4096);
        assert_eq!(Mtu::from_bytes(2048), Some(Mtu::Mtu2048));
        assert_eq!(Mtu::from_raw(6), None);
        for t in NodeType::ALL {
            assert_eq!(NodeType::from_raw(t.raw()), Some(*t));
        }
    }

    #[test]
    fn widths() {
        assert_eq!(LinkWidth::from_raw(2), Some(LinkWidth::X4));
        assert_eq!(LinkWidth::from_raw(3), None);
        assert_eq!(LinkWidth::X12.lanes(), 12);
        let m: Vec<_> = LinkWidth::from_mask(0x1f).collect();
        assert_eq!(
            m,
            [
                LinkWidth::X1,
                LinkWidth::X2,
                LinkWidth::X4,
                LinkWidth::X8,
                LinkWidth::X12
            ]
        );
        assert_eq!("4x".parse::<LinkWidth>().unwrap(), LinkWidth::X4);
    }

    #[test]
    fn speeds_and_rates() {
        use LinkSpeed::*;
        use LinkWidth::*;
        let cases = [
            (Sdr, 8_000),
            (Ddr, 16_000),
            (Qdr, 32_000),
            (Fdr10, 40_000),
            (Fdr, 54_545),
            (Edr, 100_000),
            (Hdr, 200_000),
            (Ndr, 400_000),
            (Xdr, 800_000),
        ];
        for (s, r) in cases {
            assert_eq!(data_rate_mbps(X4, s), r, "{s}");
        }
        assert_eq!(data_rate_mbps(X1, Sdr), 2_000);
        assert_eq!(data_rate_mbps(X12, Qdr), 96_000);
        assert_eq!(data_rate_mbps(X1, Fdr), 13_636);
        assert_eq!(data_rate_mbps(X12, Edr), 300_000);
        assert_eq!(signal_rate_mbps(X4, Sdr), 10_000);
        assert_eq!(signal_rate_mbps(X4, Fdr), 56_250);
        assert_eq!(LinkSpeed::from_port_info(4, 0, false), Some(Qdr));
        assert_eq!(LinkSpeed::from_port_info(4, 0, true), Some(Fdr10));
        assert_eq!(LinkSpeed::from_port_info(4, 2, false), Some(Edr));
        assert_eq!(LinkSpeed::from_port_info(1, 16, false), Some(Xdr));
        assert_eq!(LinkSpeed::from_port_info(0, 0, false), None);
        assert_eq!(LinkSpeed::from_port_info(3, 0, false), None);
        for s in LinkSpeed::ALL {
            assert_eq!(s.name().parse::<LinkSpeed>().unwrap(), *s);
            let back = match s.encoding() {
                SpeedEncoding::LinkSpeed(b) => LinkSpeed::from_port_info(b, 0, false),
                SpeedEncoding::LinkSpeedExt(b) => LinkSpeed::from_port_info(4, b, false),
                SpeedEncoding::MlnxExtPortInfo(_) => LinkSpeed::from_port_info(4, 0, true),
            };
            assert_eq!(back, Some(*s));
        }
    }
}
