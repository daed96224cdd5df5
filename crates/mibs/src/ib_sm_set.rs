//! IB-SM-MIB Sets that steer the Subnet Manager: ibSmConfigTable's SM
//! settings. A checked Set becomes an [`SmConfigSet`] with
//! [`Effect::Service`]: the daemon's OpenSM control applies it (console
//! command, opensm.conf edit, heavy resweep; docs/ib-sm.md says which per
//! column). The columns are writable only when the daemon steers an OpenSM
//! ([`crate::DeriveOptions::sm_control`]); otherwise notWritable, as
//! before.

use snmp::mib::SetError;
use snmp::table::Table;
use snmp::value::Value;

use crate::change::{Change, Effect, ModuleChange};
use crate::ib_sm_mib::sm_rows;
use crate::oids::ib_sm_mib as o;
use crate::util::last;
use crate::view::View;

/// An SM setting a manager may change, with the OpenSM option it maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmSetting {
    /// ibSmConfigPriority (0..15): `sm_priority`, at once through the
    /// console (`priority N`).
    Priority,
    /// ibSmConfigSweepInterval (seconds): `sweep_interval`.
    SweepInterval,
    /// ibSmConfigMasterPollInterval (seconds; OpenSM counts milliseconds):
    /// `sminfo_polling_timeout`.
    MasterPollInterval,
    /// ibSmConfigMasterPollRetries: `polling_retry_number`.
    MasterPollRetries,
    /// ibSmConfigMKeyLeasePeriod (seconds): `m_key_lease_period`.
    MKeyLeasePeriod,
}

impl SmSetting {
    /// The opensm.conf option and its value for a MIB value.
    pub fn option(self, value: u32) -> (&'static str, u64) {
        match self {
            SmSetting::Priority => ("sm_priority", value.into()),
            SmSetting::SweepInterval => ("sweep_interval", value.into()),
            SmSetting::MasterPollInterval => ("sminfo_polling_timeout", u64::from(value) * 1000),
            SmSetting::MasterPollRetries => ("polling_retry_number", value.into()),
            SmSetting::MKeyLeasePeriod => ("m_key_lease_period", value.into()),
        }
    }

    /// The MIB column.
    fn column(self) -> &'static [u32] {
        match self {
            SmSetting::Priority => o::IB_SM_CONFIG_PRIORITY,
            SmSetting::SweepInterval => o::IB_SM_CONFIG_SWEEP_INTERVAL,
            SmSetting::MasterPollInterval => o::IB_SM_CONFIG_MASTER_POLL_INTERVAL,
            SmSetting::MasterPollRetries => o::IB_SM_CONFIG_MASTER_POLL_RETRIES,
            SmSetting::MKeyLeasePeriod => o::IB_SM_CONFIG_M_KEY_LEASE_PERIOD,
        }
    }

    /// The values the MIB (and OpenSM) allow.
    fn range(self) -> std::ops::RangeInclusive<u32> {
        match self {
            SmSetting::Priority => 0..=15,
            // OpenSM: 0 turns periodic sweeps off.
            SmSetting::SweepInterval => 0..=86_400,
            SmSetting::MasterPollInterval => 1..=3_600,
            SmSetting::MasterPollRetries => 1..=100,
            SmSetting::MKeyLeasePeriod => 0..=65_535,
        }
    }
}

const SETTINGS: [SmSetting; 5] = [
    SmSetting::Priority,
    SmSetting::SweepInterval,
    SmSetting::MasterPollInterval,
    SmSetting::MasterPollRetries,
    SmSetting::MKeyLeasePeriod,
];

/// A checked Set of one SM setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmConfigSet {
    pub setting: SmSetting,
    pub value: u32,
}

impl ModuleChange for SmConfigSet {
    fn effect(&self) -> Effect {
        Effect::Service
    }
}

/// Phase 1 of a Set of `setting`: the daemon must steer the SM, the value be
/// an Unsigned32 in range.
fn check_setting(v: &View, setting: SmSetting, value: &Value) -> Result<Change, SetError> {
    if !sm_rows(v).sm_control {
        return Err(SetError::NotWritable);
    }
    let value = match value {
        Value::Gauge32(x) => *x,
        _ => return Err(SetError::WrongType),
    };
    if !setting.range().contains(&value) {
        return Err(SetError::WrongValue);
    }
    Ok(Change::new(SmConfigSet { setting, value }))
}

/// ibSmConfigTable with its SM settings writable (when the daemon steers an
/// SM; [`check_setting`]).
pub fn writable<R: Send + Sync + 'static>(mut t: Table<View, Change, R>) -> Table<View, Change, R> {
    for s in SETTINGS {
        t = t.read_write(last(s.column()), move |v: &View, _, _, value| {
            check_setting(v, s, value)
        });
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_ranges() {
        assert_eq!(SmSetting::Priority.option(7), ("sm_priority", 7));
        assert_eq!(
            SmSetting::MasterPollInterval.option(3),
            ("sminfo_polling_timeout", 3000)
        );
        assert!(SmSetting::Priority.range().contains(&15));
        assert!(!SmSetting::Priority.range().contains(&16));
    }
}
