//! OID constants generated at build time from the MIB files in `mibs/`
//! (see `build.rs`), so the code and the shipped MIB files cannot drift apart.
//!
//! One module per MIB module (`ib_pm_mib`, `ib_if_mib`, `ib_sm_mib`,
//! `ib_tc_mib`, `if_mib`, `disman_event_mib`, `snmpv2_mib`, `snmpv2_smi`), each with a
//! `pub const` per descriptor in SCREAMING_SNAKE_CASE
//! (`if_mib::IF_HC_IN_OCTETS`), `MODULE` (the module name) and `OBJECTS`,
//! every descriptor with its OID.

include!(concat!(env!("OUT_DIR"), "/oids.rs"));

/// One OBJECT-TYPE as the MIB file declares it (generated `OBJECT_TYPES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectType {
    pub name: &'static str,
    pub oid: &'static [u32],
    /// MAX-ACCESS (SMIv1's ACCESS read the same).
    pub access: snmp::mib::Access,
    /// The SMI base type through textual conventions ("OCTET STRING",
    /// "Unsigned32", "INTEGER", "BITS", ...); a table reads `SEQUENCE OF X`.
    pub syntax: &'static str,
    /// An entry's INDEX clause (`IMPLIED x` as one item); empty otherwise.
    pub index: &'static [&'static str],
    /// The SYNTAX as a Set checks it: base type and range, SIZE or
    /// enumeration, through textual conventions.
    pub check: snmp::syntax::Syntax,
}

/// The syntax a Set of the object at `oid` must match.
pub fn syntax(oid: &[u32]) -> Option<snmp::syntax::Syntax> {
    object_type(oid).map(|o| o.check)
}

/// Every OBJECT-TYPE of every shipped module.
pub fn object_types() -> impl Iterator<Item = &'static ObjectType> {
    [
        snmpv2_mib::OBJECT_TYPES,
        if_mib::OBJECT_TYPES,
        ib_if_mib::OBJECT_TYPES,
        ib_pm_mib::OBJECT_TYPES,
        ib_sm_mib::OBJECT_TYPES,
        disman_event_mib::OBJECT_TYPES,
        snmp_user_based_sm_mib::OBJECT_TYPES,
        snmp_view_based_acm_mib::OBJECT_TYPES,
        snmp_target_mib::OBJECT_TYPES,
        snmp_notification_mib::OBJECT_TYPES,
    ]
    .into_iter()
    .flatten()
}

/// A module's generated `OBJECTS`: every descriptor with its OID.
type Descriptors = &'static [(&'static str, &'static [u32])];

/// Every descriptor of every shipped module, by module.
const DESCRIPTORS: &[(&str, Descriptors)] = &[
    (snmpv2_smi::MODULE, snmpv2_smi::OBJECTS),
    (snmpv2_mib::MODULE, snmpv2_mib::OBJECTS),
    (if_mib::MODULE, if_mib::OBJECTS),
    (disman_event_mib::MODULE, disman_event_mib::OBJECTS),
    (snmp_framework_mib::MODULE, snmp_framework_mib::OBJECTS),
    (
        snmp_user_based_sm_mib::MODULE,
        snmp_user_based_sm_mib::OBJECTS,
    ),
    (
        snmp_view_based_acm_mib::MODULE,
        snmp_view_based_acm_mib::OBJECTS,
    ),
    (snmp_target_mib::MODULE, snmp_target_mib::OBJECTS),
    (
        snmp_notification_mib::MODULE,
        snmp_notification_mib::OBJECTS,
    ),
    (ib_tc_mib::MODULE, ib_tc_mib::OBJECTS),
    (ib_if_mib::MODULE, ib_if_mib::OBJECTS),
    (ib_pm_mib::MODULE, ib_pm_mib::OBJECTS),
    (ib_sm_mib::MODULE, ib_sm_mib::OBJECTS),
];

/// An OID as operators write it: dotted numbers (`.1.3.6.1.2.1.2.2.1.8`),
/// or a descriptor of a shipped module, optionally qualified and with an
/// instance (`IF-MIB::ifOperStatus`, `ifOperStatus.3`), the way net-snmp
/// tools take them. None when a name is unknown or a part is not a number.
pub fn lookup(text: &str) -> Option<Vec<u32>> {
    let t = text.trim();
    let (module, rest) = match t.split_once("::") {
        Some((m, r)) => (Some(m), r),
        None => (None, t),
    };
    let (head, suffix) = match rest.split_once('.') {
        Some((h, s)) => (h, Some(s)),
        None => (rest, None),
    };
    let mut oid = if module.is_none() && head.chars().all(|c| c.is_ascii_digit()) {
        // Numeric: `head` is the first sub-identifier ("" for a leading dot).
        if head.is_empty() {
            Vec::new()
        } else {
            vec![head.parse().ok()?]
        }
    } else {
        DESCRIPTORS
            .iter()
            .filter(|(m, _)| module.is_none_or(|x| x == *m))
            .flat_map(|(_, objs)| objs.iter())
            .find(|(n, _)| *n == head)?
            .1
            .to_vec()
    };
    for part in suffix.into_iter().flat_map(|s| s.split('.')) {
        oid.push(part.parse().ok()?);
    }
    (!oid.is_empty()).then_some(oid)
}

/// The OBJECT-TYPE at `oid`.
pub fn object_type(oid: &[u32]) -> Option<&'static ObjectType> {
    object_types().find(|o| o.oid == oid)
}

/// The columns of the entry at `entry`, in OID order of the file.
pub fn columns(entry: &[u32]) -> impl Iterator<Item = &'static ObjectType> + '_ {
    object_types().filter(move |o| o.oid.len() == entry.len() + 1 && o.oid.starts_with(entry))
}

/// The parser of `build.rs`, compiled here so its unit tests run.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../build.rs"]
mod build_script;

#[cfg(test)]
mod tests {
    use super::build_script::{parse_module, resolve, screaming_snake, Component, Module};
    use super::*;
    use snmp::mib::Access;

    fn mibs_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mibs")
    }

    #[test]
    fn known_oids() {
        assert_eq!(if_mib::IF_HC_IN_OCTETS, &[1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6]);
        assert_eq!(snmpv2_mib::SYS_DESCR, &[1, 3, 6, 1, 2, 1, 1, 1]);
        assert_eq!(
            ib_pm_mib::PM_PORT_COUNTERS_ENTRY,
            &[1, 3, 6, 1, 3, 117, 1, 4, 1]
        );
        assert_eq!(
            ib_pm_mib::PM_PORT_COUNTERSO_ENTRY,
            ib_pm_mib::PM_PORT_COUNTERS_ENTRY
        );
        assert_eq!(ib_tc_mib::IB_TC_MIB, &[1, 3, 6, 1, 3, 117, 1]);
        assert_eq!(
            ib_if_mib::IB_IF_VL_TRAFFIC_IF_INDEX,
            &[1, 3, 6, 1, 3, 117, 2, 1, 2, 1, 1]
        );
        assert_eq!(
            ib_if_mib::IB_IF_PORT_STAT_VL15_DROPPED,
            &[1, 3, 6, 1, 3, 117, 2, 1, 1, 1, 15]
        );
        assert_eq!(ib_sm_mib::IB_SM_MIB, &[1, 3, 6, 1, 3, 117, 7]);
        assert_eq!(snmpv2_smi::MIB_2, &[1, 3, 6, 1, 2, 1]);
        assert_eq!(ib_pm_mib::MODULE, "IB-PM-MIB");
    }

    #[test]
    fn objects_tables_are_complete_and_consistent() {
        // 90 = the object-by-object listing of seed 001.
        assert_eq!(ib_pm_mib::OBJECTS.len(), 90);
        fn find(t: &'static [(&str, &'static [u32])], n: &str) -> Option<&'static [u32]> {
            t.iter().find(|o| o.0 == n).map(|o| o.1)
        }
        assert_eq!(
            find(if_mib::OBJECTS, "ifHCInOctets"),
            Some(if_mib::IF_HC_IN_OCTETS)
        );
        assert_eq!(
            find(snmpv2_mib::OBJECTS, "sysDescr"),
            Some(snmpv2_mib::SYS_DESCR)
        );
        for table in [
            ib_pm_mib::OBJECTS,
            ib_if_mib::OBJECTS,
            ib_sm_mib::OBJECTS,
            ib_tc_mib::OBJECTS,
        ] {
            for (name, oid) in table {
                assert!(oid.starts_with(&[1, 3, 6, 1, 3, 117]), "{name} outside 117");
            }
        }
    }

    #[test]
    fn parser_resolves_across_imports_and_skips_strings_and_comments() {
        let smi = "SNMPv2-SMI DEFINITIONS ::= BEGIN
            org OBJECT IDENTIFIER ::= { iso 3 }  -- fooBar OBJECT IDENTIFIER ::= { org 9 }
            dod OBJECT IDENTIFIER ::= { org 6 }
            internet OBJECT IDENTIFIER ::= { dod 1 }
            mgmt OBJECT IDENTIFIER ::= { internet 2 }
            mib-2 OBJECT IDENTIFIER ::= { mgmt 1 }
            zeroDotZero OBJECT-IDENTITY STATUS current DESCRIPTION \"x ::= { y 1 }\" ::= { 0 0 }
            END";
        let mib = "X-MIB DEFINITIONS ::= BEGIN
            IMPORTS MODULE-IDENTITY, OBJECT-TYPE, mib-2 FROM SNMPv2-SMI;
            xMIB MODULE-IDENTITY LAST-UPDATED \"200001010000Z\" DESCRIPTION \"--\" ::= { mib-2 99 }
            xTable OBJECT-TYPE SYNTAX SEQUENCE OF XEntry INDEX { xIndex } ::= { xMIB 1 }
            XEntry ::= SEQUENCE { xIndex INTEGER, xOid OBJECT IDENTIFIER }
            xCol OBJECT-TYPE SYNTAX INTEGER { up(1), down(2) } ::= { xTable iso(1) 7 }
            END";
        let mods: Vec<Module> = vec![
            parse_module("SMI", smi).unwrap(),
            parse_module("X", mib).unwrap(),
        ];
        assert_eq!(mods[0].assignments.len(), 6);
        assert_eq!(mods[1].assignments.len(), 3);
        assert_eq!(
            mods[1].assignments[2].value,
            vec![
                Component::Name("xTable".into()),
                Component::Num(1),
                Component::Num(7)
            ]
        );
        let r = resolve(&mods).unwrap();
        let x = &r["X-MIB"];
        assert_eq!(x[0].2, vec![1, 3, 6, 1, 2, 1, 99]);
        assert_eq!(x[2].2, vec![1, 3, 6, 1, 2, 1, 99, 1, 1, 7]);
        assert_eq!(r["SNMPv2-SMI"][5].2, vec![0, 0]);
    }

    #[test]
    fn unresolvable_parent_names_file_and_line() {
        let mib = "Y-MIB DEFINITIONS ::= BEGIN\n\nyObj OBJECT IDENTIFIER ::= { nowhere 1 }\nEND";
        let mods = vec![parse_module("mibs/Y-MIB", mib).unwrap()];
        let e = resolve(&mods).unwrap_err();
        assert!(e.contains("mibs/Y-MIB:3") && e.contains("nowhere"), "{e}");
    }

    #[test]
    fn parser_reads_the_shipped_files() {
        let (src, paths) = build_script::generate(&mibs_dir()).unwrap();
        assert_eq!(paths.len(), build_script::MIB_FILES.len());
        assert!(src.contains("pub const PM_PORT_COUNTERS_ENTRY: &[u32] = PM_PORT_COUNTERSO_ENTRY;"));
    }

    #[test]
    fn object_types_carry_access_syntax_and_index() {
        let e = object_type(ib_sm_mib::IB_SM_PORT_INFO_ENTRY).unwrap();
        assert_eq!(
            e.index,
            &[
                "ibSmPortInfoSubnetPrefix",
                "ibSmPortInfoNodeGUID",
                "ibSmPortInfoPortNum"
            ]
        );
        let c = object_type(ib_sm_mib::IB_SM_PORT_INFO_M_KEY).unwrap();
        assert_eq!((c.access, c.syntax), (Access::ReadOnly, "OCTET STRING"));
        let p = object_type(ib_sm_mib::IB_SM_PORT_INFO_SUBNET_PREFIX).unwrap();
        assert_eq!(
            (p.access, p.syntax),
            (Access::NotAccessible, "OCTET STRING")
        );
        let g = object_type(ib_sm_mib::IB_SM_NODE_INFO_NODE_GUID).unwrap();
        assert_eq!(g.syntax, "OCTET STRING");
        let t = object_type(ib_sm_mib::IB_SM_PORT_INFO_IN_PART_ENFORCE).unwrap();
        assert_eq!((t.access, t.syntax), (Access::ReadWrite, "INTEGER"));
        assert_eq!(
            object_type(ib_sm_mib::IB_SM_PORT_INFO_CAP_MASK)
                .unwrap()
                .syntax,
            "BITS"
        );
        let a = object_type(ib_sm_mib::IB_SM_SERVICE_ASSOC_ENTRY).unwrap();
        // The MIB names the service table's column here (same syntax as
        // ibSmServiceAssocName); the encoding is the same.
        assert_eq!(a.index.last(), Some(&"IMPLIED ibSmServiceName"));
        assert_eq!(columns(ib_sm_mib::IB_SM_PORT_INFO_ENTRY).count(), 45);
        assert_eq!(object_type(if_mib::IF_INDEX).unwrap().syntax, "Integer32");
        assert_eq!(
            object_type(if_mib::IF_ALIAS).unwrap().access,
            Access::ReadWrite
        );
    }

    #[test]
    fn lookup_names_and_numbers() {
        assert_eq!(
            lookup("ifOperStatus"),
            Some(if_mib::IF_OPER_STATUS.to_vec())
        );
        let mut x = if_mib::IF_OPER_STATUS.to_vec();
        x.push(3);
        assert_eq!(lookup("IF-MIB::ifOperStatus.3"), Some(x));
        assert_eq!(lookup(".1.3.6.1"), Some(vec![1, 3, 6, 1]));
        assert_eq!(lookup("1.3"), Some(vec![1, 3]));
        assert_eq!(lookup("IB-PM-MIB::ifOperStatus"), None);
        assert_eq!(lookup("noSuchThing"), None);
        assert_eq!(lookup("ifOperStatus.x"), None);
        assert_eq!(lookup(""), None);
    }

    #[test]
    fn snake_case_names() {
        assert_eq!(screaming_snake("ifHCInOctets"), "IF_HC_IN_OCTETS");
        assert_eq!(screaming_snake("mib-2"), "MIB_2");
        assert_eq!(
            screaming_snake("ibIfPortStatVL15Dropped"),
            "IB_IF_PORT_STAT_VL15_DROPPED"
        );
        assert_eq!(
            screaming_snake("pmPortSampleCntrlCounter0Mask"),
            "PM_PORT_SAMPLE_CNTRL_COUNTER0_MASK"
        );
        assert_eq!(screaming_snake("ibSmGUIDInfo"), "IB_SM_GUID_INFO");
    }
}
