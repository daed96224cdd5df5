//! OpenSM's configuration files as text, parsed and edited in one place
//! for every user: the daemon's steering of the SM, IB-SM-MIB's read side
//! and the simulator. File I/O stays with the callers.

pub mod conf;
pub mod partitions;

pub use conf::{Applied, OpenSmConf, SmOption};
pub use partitions::PartitionOp;

/// One operation on the Subnet Manager, beside the fabric's
/// [`crate::source::ControlOp`]: what a Set of IB-SM-MIB's SM columns asks.
#[derive(Clone, PartialEq, Eq)]
pub enum SmOp {
    /// An opensm.conf option, in the MIB's unit.
    SetOption { option: SmOption, value: u32 },
    /// `sm_key` in opensm.conf (read by OpenSM at start; a secret).
    SetSmKey(u64),
    /// Start (true) or stop OpenSM (ibSmConfigAdminSMState).
    Admin { enable: bool },
    /// A partitions.conf edit (ibSmPartitionConfig).
    Partition(PartitionOp),
}

/// Never shows an SM_Key (operations are logged).
impl std::fmt::Debug for SmOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SmOp::SetOption { option, value } => write!(f, "SetOption({option:?} = {value})"),
            SmOp::SetSmKey(_) => f.write_str("SetSmKey(<secret>)"),
            SmOp::Admin { enable } => write!(f, "Admin {{ enable: {enable} }}"),
            SmOp::Partition(p) => write!(f, "Partition({p})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sm_key_is_never_shown() {
        let s = format!("{:?}", SmOp::SetSmKey(0x1234_5678_9abc_def0));
        assert!(
            !s.contains("123456789abcdef0") && !s.contains("1311768467463790320"),
            "{s}"
        );
    }
}
