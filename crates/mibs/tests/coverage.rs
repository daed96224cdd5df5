//! Every table a registered module serves, checked against the MIB file it
//! comes from (the generated `OBJECT_TYPES`: MAX-ACCESS, INDEX): each
//! accessible column is served or listed in the module's `omitted` with a
//! reason, no column is served that the entry lacks, and none is served
//! with more access than the MIB gives it.

use mibs::core::oids::{columns, object_type};
use snmp::table::Access;

#[test]
fn every_accessible_column_is_served_or_omitted_with_a_reason() {
    let mut tables = 0;
    let mut problems = Vec::new();
    for def in mibs::REGISTRY {
        for obj in (def.objects)(&mibs::Options::default()) {
            let declared = obj.declared_columns();
            if declared.is_empty() {
                continue;
            }
            tables += 1;
            let entry = obj.root().as_slice();
            let Some(spec) = object_type(entry) else {
                problems.push(format!(
                    "{}: table at {entry:?} is not in the MIB",
                    def.name
                ));
                continue;
            };
            assert!(!spec.index.is_empty(), "{} has no INDEX", spec.name);
            let served = |id: u32| declared.iter().any(|&(c, a)| c == id && a.readable());
            for col in columns(entry) {
                let id = *col.oid.last().unwrap();
                let omitted = def
                    .omitted
                    .iter()
                    .find(|(o, _)| *o == col.oid)
                    .map(|(_, why)| *why);
                match col.access {
                    Access::NotAccessible | Access::AccessibleForNotify => {
                        if served(id) {
                            problems.push(format!("{} is {:?} but served", col.name, col.access));
                        }
                    }
                    _ => match omitted {
                        Some(why) if served(id) => {
                            problems.push(format!("{} is served and omitted ({why})", col.name))
                        }
                        Some(why) if why.trim().is_empty() => {
                            problems.push(format!("{} is omitted with no reason", col.name))
                        }
                        Some(_) => {}
                        None if served(id) => {}
                        None => problems.push(format!(
                            "{}: {} ({:?}) is neither served nor listed as omitted",
                            def.name, col.name, col.access
                        )),
                    },
                }
            }
            for &(id, access) in &declared {
                let mut oid = entry.to_vec();
                oid.push(id);
                let Some(col) = object_type(&oid) else {
                    problems.push(format!("{}: column {id} is not in the MIB", spec.name));
                    continue;
                };
                if access.writable() && !col.access.writable() {
                    problems.push(format!(
                        "{} served writable, MIB says {:?}",
                        col.name, col.access
                    ));
                }
            }
        }
    }
    assert!(tables >= 20, "only {tables} tables found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
