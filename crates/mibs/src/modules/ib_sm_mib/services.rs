//! ibSmServiceTable and ibSmServiceAssocTable: the SA's ServiceRecords.

use super::*;

fn service(v: &View, i: usize) -> Option<&ib::mad::sa::ServiceRecord> {
    v.snapshot.services.get(i)
}

/// ServiceData8/16/32/64 in wire order, 64 octets.
fn service_data(r: &ib::mad::sa::ServiceRecord) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&r.service_data8);
    for x in r.service_data16 {
        out.extend_from_slice(&x.to_be_bytes());
    }
    for x in r.service_data32 {
        out.extend_from_slice(&x.to_be_bytes());
    }
    for x in r.service_data64 {
        out.extend_from_slice(&x.to_be_bytes());
    }
    out
}

pub(super) const SERVICE_COLS: &[Col<usize>] = &[
    ro(o::IB_SM_SERVICE_LEASE, |v, &i| {
        u(service(v, i)?.service_lease)
    }),
    ro(o::IB_SM_SERVICE_KEY, |v, &i| {
        octets(&service(v, i)?.service_key)
    }),
    ro(o::IB_SM_SERVICE_NAME, |v, &i| {
        octets(service(v, i)?.service_name.as_bytes())
    }),
    ro(o::IB_SM_SERVICE_DATA, |v, &i| {
        octets(&service_data(service(v, i)?))
    }),
];

// active(1): every association the SA reports is in service.
pub(super) const SERVICE_ASSOC_COLS: &[Col<usize>] =
    &[ro(o::IB_SM_SERVICE_ASSOC_ROW_STATUS, |v, &i| {
        service(v, i)?;
        int(1)
    })];
