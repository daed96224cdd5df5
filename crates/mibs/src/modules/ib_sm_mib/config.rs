//! ibSmConfigTable: the SM's configuration (read from the SM's records and
//! opensm.conf) and the Sets that steer it. A checked Set becomes a
//! [`crate::Change::Sm`] carrying an [`SmOp`] (the plan's SM part): the
//! daemon's OpenSM control applies it (console command, opensm.conf edit, heavy
//! resweep; docs/ib-sm.md says which per column). The columns are writable
//! only when the daemon steers an OpenSM
//! ([`crate::Options::sm_control`]); otherwise notWritable.

use snmp::mib::SetError;
use snmp::table::check;

use super::*;

fn config_sm(v: &View, i: usize) -> Option<&ib::model::SmRecord> {
    v.snapshot.sms.get(i)
}
fn config_port(v: &View, i: usize) -> Option<&Port> {
    config_sm(v, i)
        .and_then(|r| r.port)
        .and_then(|p| port(v, p))
}

/// Columns no source carries: OpenSM keeps them in its own configuration,
/// which IBA attributes do not expose.
pub(super) const CONFIG_OMITTED: &[(&[u32], &str)] = &[
    (
        o::IB_SM_CONFIG_PORT_AGING_TIME,
        "OpenSM has no port aging option",
    ),
    (
        o::IB_SM_CONFIG_MIN_UNICAST_LID,
        "OpenSM 3.3 has no min unicast LID option",
    ),
    (
        o::IB_SM_CONFIG_MAX_UNICAST_LID,
        "OpenSM 3.3 has no max unicast LID option",
    ),
];

fn conf(v: &View) -> Option<&OpenSmConf> {
    sm_rows(v).opensm.as_ref()
}

/// A setting only opensm.conf carries: read from it, written to it.
macro_rules! conf_only {
    ($oid:expr, $option:ident) => {
        rw(
            $oid,
            |v, _| u(conf(v)?.mib(SmOption::$option)?),
            |v, _, _, x| set_option(v, SmOption::$option, x),
        )
    };
}

/// A setting read from opensm.conf when configured, else from the SM
/// port's PortInfo field; written to opensm.conf.
macro_rules! conf_or_port {
    ($oid:expr, $option:ident, $field:ident) => {
        rw(
            $oid,
            |v, &i| match conf(v).and_then(|c| c.mib(SmOption::$option)) {
                Some(x) => u(x),
                None => u(config_port(v, i)?.info.$field),
            },
            |v, _, _, x| set_option(v, SmOption::$option, x),
        )
    };
}

pub(super) const CONFIG_COLS: &[Col<usize>] = &[
    ro(o::IB_SM_CONFIG_SUBNET_GUID, |v, &i| {
        octets(&config_sm(v, i)?.info.guid.to_bytes())
    }),
    rw(
        o::IB_SM_CONFIG_PRIORITY,
        |v, &i| u(config_sm(v, i)?.info.priority),
        |v, _, _, x| set_option(v, SmOption::Priority, x),
    ),
    rw(
        o::IB_SM_CONFIG_SM_KEY,
        |v, &i| secret(v, config_sm(v, i)?.info.sm_key),
        |_, _, _, x| set_sm_key(x),
    ),
    // enable(1): the row is an SM that runs.
    rw(
        o::IB_SM_CONFIG_ADMIN_SM_STATE,
        |v, &i| {
            config_sm(v, i)?;
            int(1)
        },
        |_, _, _, x| set_admin(x),
    ),
    ro(o::IB_SM_CONFIG_SM_STATE, |v, &i| {
        int(sm_state(config_sm(v, i)?))
    }),
    ro(o::IB_SM_CONFIG_ACT_COUNT, |v, &i| {
        act_count(config_sm(v, i)?)
    }),
    // active(1)
    ro(o::IB_SM_CONFIG_STATUS, |v, &i| {
        config_sm(v, i)?;
        int(1)
    }),
    // From opensm.conf when configured, else the SM port's PortInfo.
    conf_or_port!(o::IB_SM_CONFIG_DEFAULT_LMC, DefaultLmc, lmc),
    conf_or_port!(
        o::IB_SM_CONFIG_M_KEY_LEASE_PERIOD,
        MKeyLeasePeriod,
        m_key_lease_period
    ),
    // Only opensm.conf carries these; absent (noSuchInstance) without it.
    conf_only!(o::IB_SM_CONFIG_SWEEP_INTERVAL, SweepInterval),
    conf_only!(o::IB_SM_CONFIG_RESPONSE_TIMEOUT, ResponseTimeout),
    conf_only!(o::IB_SM_CONFIG_MASTER_POLL_INTERVAL, MasterPollInterval),
    conf_only!(o::IB_SM_CONFIG_MASTER_POLL_RETRIES, MasterPollRetries),
];

/// The values OpenSM takes where it allows fewer than the MIB (whose
/// ranges the table checks first).
fn opensm_limit(option: SmOption) -> Option<std::ops::RangeInclusive<u32>> {
    match option {
        SmOption::MasterPollInterval => Some(1..=3_600),
        SmOption::MasterPollRetries => Some(1..=100),
        SmOption::ResponseTimeout => Some(1..=60_000),
        _ => None,
    }
}

/// A checked Set of an SM column: one [`SmOp`], applied by the daemon's
/// OpenSM control ([`crate::Plan::sm`]).
pub(super) fn sm_change(op: SmOp) -> Change {
    Change::Sm(op)
}

/// Phase 1 of a Set of an ibSmConfigTable setting (the table is writable
/// only while the daemon steers the SM, and has checked the MIB's range).
pub fn set_option(_v: &View, option: SmOption, value: &Value) -> Result<Change, SetError> {
    let value = check::unsigned32(value)?;
    if opensm_limit(option).is_some_and(|r| !r.contains(&value)) {
        return Err(SetError::WrongValue);
    }
    Ok(sm_change(SmOp::SetOption { option, value }))
}

/// ibSmConfigSMKey: eight octets (SIZE checked by the table).
pub fn set_sm_key(value: &Value) -> Result<Change, SetError> {
    let k = <[u8; 8]>::try_from(check::octets(value, 8..=8)?).map_err(|_| SetError::WrongLength)?;
    Ok(sm_change(SmOp::SetSmKey(u64::from_be_bytes(k))))
}

/// ibSmConfigAdminSMState: enable(1) or disable(2).
pub fn set_admin(value: &Value) -> Result<Change, SetError> {
    let enable = check::integer(value)? == 1;
    Ok(sm_change(SmOp::Admin { enable }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opensm_limits_convert_to_the_file() {
        for o in [
            SmOption::MasterPollInterval,
            SmOption::MasterPollRetries,
            SmOption::ResponseTimeout,
        ] {
            let r = opensm_limit(o).unwrap();
            assert!(o.to_file(*r.end()) > 0);
        }
    }
}
