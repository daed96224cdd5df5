//! ibSmSMInfoTable: every SM the sweep found.

use super::*;

fn sm(v: &View, i: usize) -> Option<&ib::model::SmRecord> {
    v.snapshot.sms.get(i)
}

pub(super) const SM_COLS: &[Col<usize>] = &[
    ro(o::IB_SM_SM_INFO_SM_KEY, |v, &i| {
        secret(v, sm(v, i)?.info.sm_key)
    }),
    ro(o::IB_SM_SM_INFO_ACT_COUNT, |v, &i| act_count(sm(v, i)?)),
    ro(o::IB_SM_SM_INFO_PRIORITY, |v, &i| {
        u(sm(v, i)?.info.priority)
    }),
    ro(o::IB_SM_SM_INFO_SM_STATE, |v, &i| int(sm_state(sm(v, i)?))),
];
