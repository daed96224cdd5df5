//! ibSmMcastGroupTable and ibSmMcastMemberTable (membership vectors by MGID).

use super::*;

pub(super) const MCAST_MEMBER_COLS: &[Col<VectorRow>] = &vector_cols(
    o::IB_SM_MCAST_MEMBER_VECTOR,
    o::IB_SM_MCAST_MEMBER_VECTOR_SIZE,
    o::IB_SM_MCAST_MEMBER_VECTOR_ELEMENT_SIZE,
    o::IB_SM_MCAST_MEMBER_LAST_CHANGE,
);

fn group(v: &View, i: usize) -> Option<&ib::mad::sa::McMemberRecord> {
    v.snapshot.mcast_groups.get(i).map(|g| &g.group)
}

pub(super) const MCAST_GROUP_COLS: &[Col<usize>] = &[
    ro(o::IB_SM_MCAST_GROUP_Q_KEY, |v, &i| {
        octets(&group(v, i)?.q_key.to_be_bytes())
    }),
    ro(o::IB_SM_MCAST_GROUP_MLID, |v, &i| u(group(v, i)?.mlid.0)),
    ro(o::IB_SM_MCAST_GROUP_MTU, |v, &i| int(group(v, i)?.mtu)),
    ro(
        o::IB_SM_MCAST_GROUP_T_CLASS,
        |v, &i| u(group(v, i)?.t_class),
    ),
    ro(o::IB_SM_MCAST_GROUP_P_KEY, |v, &i| u(group(v, i)?.p_key.0)),
    ro(o::IB_SM_MCAST_GROUP_RATE, |v, &i| u(group(v, i)?.rate)),
    ro(o::IB_SM_MCAST_GROUP_PACKET_LIFE_TIME, |v, &i| {
        u(group(v, i)?.packet_life_time)
    }),
    ro(o::IB_SM_MCAST_GROUP_SL, |v, &i| u(group(v, i)?.sl)),
    ro(o::IB_SM_MCAST_GROUP_FLOW_LABEL, |v, &i| {
        let b = group(v, i)?.flow_label.to_be_bytes();
        octets(b.get(1..).unwrap_or_default())
    }),
    ro(o::IB_SM_MCAST_GROUP_HOP_LIMIT, |v, &i| {
        u(group(v, i)?.hop_limit)
    }),
    ro(o::IB_SM_MCAST_GROUP_SCOPE, |v, &i| u(group(v, i)?.scope)),
];
