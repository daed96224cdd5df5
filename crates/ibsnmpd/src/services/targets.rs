//! Notification targets managed over SNMP (SNMP-TARGET-MIB and
//! SNMP-NOTIFICATION-MIB, docs/notifications.md): the originator's receivers
//! chosen per notification from the rows in force, and the configured sinks
//! shown as `permanent` rows.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use mibs::modules::admin::AdminState;
use mibs::modules::snmp_notification::{
    self as notification, NotifyEntry, NotifyState, Security, Target,
};
use mibs::modules::snmp_target::{self as target, TargetAddr, TargetParams, TargetState};
use mibs::SystemState;
use snmp::notify::{Notification, Sink, SinkKind, SinkSource};
use snmp::usm::{InformWrapper, SecurityLevel, TrapWrapper, UserConfig, Usm};
use tracing::{debug, info, warn};

use crate::config::notify::{SinkSettings, SinkType};

/// The shortest inform timeout used (a row may say 0).
const MIN_INFORM_TIMEOUT: Duration = Duration::from_millis(100);

/// The receivers of the SNMP-TARGET-MIB rows, read at each notification.
pub struct TableTargets {
    system: Arc<ArcSwap<SystemState>>,
    usm: Arc<Usm>,
    /// The configured users with their passwords: an SNMPv3 inform's keys
    /// are localized to each receiver's engine.
    users: Vec<UserConfig>,
    sinks: Mutex<Sinks>,
}

/// The targets in force as the originator sends to them.
#[derive(Default)]
struct Sinks {
    /// Per target: its sink, kept while the target is unchanged (an inform
    /// receiver's discovered engine with it).
    ready: HashMap<Target, Sink>,
    /// Targets that cannot be sent to yet (e.g. their user does not exist):
    /// tried again at each notification, said once.
    failing: HashSet<Target>,
}

impl std::fmt::Debug for TableTargets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableTargets").finish_non_exhaustive()
    }
}

/// The receivers of the target rows, for the originator.
pub fn source(
    system: Arc<ArcSwap<SystemState>>,
    usm: Arc<Usm>,
    users: Vec<UserConfig>,
) -> Arc<dyn SinkSource> {
    Arc::new(TableTargets {
        system,
        usm,
        users,
        sinks: Mutex::new(Sinks::default()),
    })
}

impl SinkSource for TableTargets {
    fn sinks(&self, n: &Notification) -> Vec<Sink> {
        let selected = notification::targets(&self.system.load(), false);
        let mut sinks = self.sinks.lock().unwrap_or_else(PoisonError::into_inner);
        let Sinks { ready, failing } = &mut *sinks;
        let in_force: HashSet<&Target> = selected.iter().map(|s| &s.target).collect();
        ready.retain(|t, _| in_force.contains(t));
        failing.retain(|t| in_force.contains(t));
        let objects = || n.varbinds.iter().map(|v| v.oid.as_slice());
        let mut out = Vec::new();
        for s in selected
            .iter()
            .filter(|s| s.passes(n.trap_oid.as_slice(), objects()))
        {
            if let Some(sink) = ready.get(&s.target) {
                out.push(sink.clone());
                continue;
            }
            match self.sink(&s.target) {
                Ok(sink) => {
                    failing.remove(&s.target);
                    ready.insert(s.target.clone(), sink.clone());
                    out.push(sink);
                }
                Err(e) => {
                    let name = String::from_utf8_lossy(&s.target.name);
                    if failing.insert(s.target.clone()) {
                        warn!(target = %name, addr = %s.target.addr, error = %e,
                              "notification target left out until it can be sent to");
                    } else {
                        debug!(target = %name, error = %e, "notification target left out");
                    }
                }
            }
        }
        out
    }
}

impl TableTargets {
    /// How `t` is sent to.
    fn sink(&self, t: &Target) -> Result<Sink, String> {
        let name = String::from_utf8_lossy(&t.name);
        let timeout = t.timeout.max(MIN_INFORM_TIMEOUT);
        let kind = match (&t.security, t.inform) {
            // SNMPv1 has no informs: a trap it is.
            (Security::V1 { community }, _) => SinkKind::TrapV1 {
                community: community.clone(),
            },
            (Security::V2c { community }, false) => SinkKind::TrapV2c {
                community: community.clone(),
            },
            (Security::V2c { community }, true) => SinkKind::InformV2c {
                community: community.clone(),
                timeout,
                retries: t.retries,
            },
            (Security::Usm { user, level }, inform) => {
                self.usm_wrapper(user, *level, t, timeout, inform)?
            }
        };
        info!(target = %name, addr = %t.addr, kind = ?kind, "notification target");
        Ok(Sink { addr: t.addr, kind })
    }

    /// SNMPv3: traps as `user` with this engine authoritative; informs
    /// with the user's keys localized to the receiver once discovered (a
    /// configured user: its password is needed).
    fn usm_wrapper(
        &self,
        user: &[u8],
        level: SecurityLevel,
        t: &Target,
        timeout: Duration,
        inform: bool,
    ) -> Result<SinkKind, String> {
        let user = std::str::from_utf8(user).map_err(|_| "user name is not UTF-8".to_string())?;
        if !inform {
            let w = TrapWrapper::new(Arc::clone(&self.usm), user, level)?;
            return Ok(SinkKind::Wrapped {
                wrapper: Arc::new(w),
                confirm: None,
            });
        }
        let config = self
            .users
            .iter()
            .find(|u| u.name == user)
            .ok_or_else(|| format!("no [[user]] named {user:?} (informs need its password)"))?;
        let w = InformWrapper::new(config, level, t.addr, timeout, t.retries.saturating_add(1))?;
        // Discovered when the first inform cannot be wrapped yet.
        Ok(SinkKind::Wrapped {
            wrapper: Arc::new(w),
            confirm: Some((timeout, t.retries)),
        })
    }
}

/// The configured sinks as `permanent` rows, named `internalN` with the
/// same tag and params name (so a manager sees every receiver, as in
/// net-snmp). A sink whose name does not resolve is left out (as the
/// originator leaves it out). The rows of an earlier configuration go
/// first (a reload).
pub fn show_configured(system: &mut SystemState, sinks: &[SinkSettings]) {
    let configured: Vec<_> = sinks
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let addr = crate::services::traps::resolve(s).ok()?;
            Some((format!("internal{i}").into_bytes(), s, addr))
        })
        .collect();
    let index = |name: &[u8]| name.iter().map(|&b| u32::from(b)).collect::<Vec<u32>>();
    system.modules.update::<TargetState>(|t| {
        t.addrs.clear_configured();
        t.params.clear_configured();
        for (name, s, addr) in &configured {
            let (domain, address) = target::t_address(*addr);
            let centis = i32::try_from(s.timeout.as_millis() / 10).unwrap_or(i32::MAX);
            let row = TargetAddr {
                t_domain: domain.to_vec(),
                t_address: address,
                timeout: centis,
                retry_count: i32::try_from(s.retries).unwrap_or(255).min(255),
                tag_list: name.clone(),
                params: name.clone(),
            };
            t.addrs.put_configured(index(name), row);
            t.params.put_configured(index(name), params_of(s));
        }
        t.refresh();
    });
    system.modules.update::<NotifyState>(|n| {
        n.notify.clear_configured();
        for (name, s, _) in &configured {
            let inform = matches!(s.kind, SinkType::Inform | SinkType::InformV3);
            let row = NotifyEntry {
                tag: name.clone(),
                kind: if inform {
                    notification::INFORM
                } else {
                    notification::TRAP
                },
            };
            n.notify.put_configured(index(name), row);
        }
        n.refresh();
    });
}

/// snmpTargetParamsTable's view of a configured sink.
fn params_of(s: &SinkSettings) -> TargetParams {
    let (mp, sm, name, level) = match s.kind {
        SinkType::TrapV1 => (target::MP_V1, target::SM_V1, &s.community, 1),
        SinkType::TrapV2c | SinkType::Inform => (target::MP_V2C, target::SM_V2C, &s.community, 1),
        SinkType::TrapV3 | SinkType::InformV3 => {
            (target::MP_V3, target::SM_USM, &s.user, s.level as i32)
        }
    };
    TargetParams {
        mp_model: Some(mp),
        security_model: Some(sm),
        security_name: Some(name.as_bytes().to_vec()),
        security_level: Some(level),
    }
}

/// snmpTargetParamsSecurityName: for SNMPv1/v2c targets the community the
/// notifications carry, readable only at authPriv (the whole column: the
/// index does not say the model), writable by whoever may write there.
pub fn hidden_subtrees() -> Vec<snmp::oid::Oid> {
    vec![snmp::oid::Oid::from_slice(
        mibs::core::oids::snmp_target_mib::SNMP_TARGET_PARAMS_SECURITY_NAME,
    )]
}
