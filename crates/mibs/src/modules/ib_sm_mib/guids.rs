//! ibSmGUIDInfoTable: every port's GUIDInfo blocks.

use super::*;

pub(super) const GUID_INFO_COLS: &[Col<(PortIdx, u32)>] =
    &[ro(o::IB_SM_GUID_INFO_BLOCK, |v, &(p, b)| {
        let guids = &port(v, p)?.guids;
        let mut out = vec![0u8; 64];
        let start = usize::try_from(b).ok()? * 8;
        for (k, g) in guids.iter().skip(start).take(8).enumerate() {
            if let Some(d) = out.get_mut(k * 8..k * 8 + 8) {
                d.copy_from_slice(&g.to_bytes());
            }
        }
        octets(&out)
    })];
