//! ibSmNodeInfoTable: every node's NodeInfo and description.

use super::*;

pub(super) const NODE_COLS: &[Col<NodeIdx>] = &[
    ro(o::IB_SM_NODE_INFO_BASE_VERSION, |v, &n| {
        u(node(v, n)?.info.base_version)
    }),
    ro(o::IB_SM_NODE_INFO_CLASS_VERSION, |v, &n| {
        u(node(v, n)?.info.class_version)
    }),
    ro(o::IB_SM_NODE_INFO_TYPE, |v, &n| {
        let t = node(v, n)?.info.node_type;
        int(if t <= 3 { t } else { 0 })
    }),
    ro(o::IB_SM_NODE_INFO_NUM_PORTS, |v, &n| {
        u(node(v, n)?.info.num_ports)
    }),
    ro_octets(o::IB_SM_NODE_INFO_SYSTEM_IMAGE_GUID, |v, &n, out| {
        put(out, &node(v, n)?.info.system_image_guid.to_bytes())
    }),
    ro(o::IB_SM_NODE_INFO_PARTITION_CAP, |v, &n| {
        u(node(v, n)?.info.partition_cap)
    }),
    ro_octets(o::IB_SM_NODE_INFO_DEVICE_ID, |v, &n, out| {
        put(out, &node(v, n)?.info.device_id.to_be_bytes())
    }),
    ro_octets(o::IB_SM_NODE_INFO_REVISION, |v, &n, out| {
        put(out, &node(v, n)?.info.revision.to_be_bytes())
    }),
    ro_octets(o::IB_SM_NODE_INFO_VENDOR_ID, |v, &n, out| {
        let b = node(v, n)?.info.vendor_id.to_be_bytes();
        put(out, b.get(1..).unwrap_or_default())
    }),
    ro_octets(o::IB_SM_NODE_INFO_DESCRIPTION, |v, &n, out| {
        put(out, node(v, n)?.description.as_bytes())
    }),
];
