//! ibSmLinkTable: every link, from each data port's side.

use super::*;

pub(super) const LINK_COLS: &[Col<(PortIdx, PortIdx)>] = &[
    ro_octets(o::IB_SM_LINK_TO_NODE_GUID, |v, &(_, r), out| {
        let p = port(v, r)?;
        put(out, &node(v, p.node)?.info.node_guid.to_bytes())
    }),
    ro(o::IB_SM_LINK_TO_PORT_NUM, |v, &(_, r)| u(port(v, r)?.num.0)),
];
