//! Helpers shared by the ib integration tests, whatever the source.
#![allow(dead_code)]

use ib::mad::pma::PortCounters;
use ib::source::{ControlOp, ControlReply, Source};
use ib::types::{Guid, PortNum};

/// PortCounters of `port` of `node`, read through the source's control path.
pub fn get_port_counters<S: Source + ?Sized>(
    src: &mut S,
    node: Guid,
    port: PortNum,
) -> PortCounters {
    let r = src
        .control(ControlOp::GetPortCounters { node, port })
        .unwrap();
    let ControlReply::PortCounters(pc) = r else {
        panic!("{r:?}")
    };
    pc
}
