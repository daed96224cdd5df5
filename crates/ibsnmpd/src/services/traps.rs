//! Notifications: the sinks of the configuration, and the task that turns
//! fabric events and snapshot differences into notifications
//! ([`mibs::modules::notifications`]) for the originator ([`snmp::notify`]).
//!
//! Nothing here runs on the request path but the authenticationFailure
//! hook, which only reads the agent state and queues without blocking.

use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use mibs::modules::notifications::{self as notif, Thresholds};
use mibs::SystemState;
use snmp::agent::AuthFailureHook;
use snmp::notify::{self, Notifier, NotifyStats, OriginatorConfig, Sink, SinkKind, SinkSource};
use snmp::usm::{InformWrapper, TrapWrapper, Usm};
use tracing::{info, warn};

use crate::config::notify::{NotifySettings, SinkSettings, SinkType};
use crate::models::source_thread::FabricHandle;

/// At most one authenticationFailure queued per this interval.
const AUTH_QUEUE_EVERY: Duration = Duration::from_millis(200);

pub(crate) fn resolve(s: &SinkSettings) -> Result<SocketAddr> {
    let host = s.host.trim_start_matches('[').trim_end_matches(']');
    (host, s.port)
        .to_socket_addrs()
        .with_context(|| format!("notification sink {}:{}", s.host, s.port))?
        .next()
        .with_context(|| format!("notification sink {}: no address", s.host))
}

/// An SNMPv3 inform sink: the receiver's engine discovered now (its
/// probes take up to timeout x (retries + 1)), the user's keys localized
/// to it.
async fn inform_v3(
    s: &SinkSettings,
    addr: SocketAddr,
    users: &[snmp::usm::UserConfig],
) -> Result<InformWrapper, String> {
    let user = users
        .iter()
        .find(|u| u.name == s.user)
        .ok_or_else(|| format!("no [[user]] named {:?}", s.user))?;
    let w = InformWrapper::new(user, s.level, addr, s.timeout, s.retries.saturating_add(1))?;
    // Logged either way; a receiver that does not answer now is
    // discovered again when informs to it go unanswered.
    let _ = w.discover().await;
    Ok(w)
}

/// The running notification layer; clones share it (e.g. the reload path
/// keeps one for [`Traps::warm_start`] and [`Traps::reconfigure`]).
#[derive(Clone)]
pub struct Traps {
    notifier: Notifier,
    /// The configured sinks, as the originator reads them at each
    /// notification (a reload swaps them).
    configured: Arc<Configured>,
    thresholds: Arc<ArcSwap<Thresholds>>,
    usm: Option<Arc<Usm>>,
}

/// The configured sinks in force, each with the settings it was made from
/// (an unchanged sink is kept across a reload: an inform receiver's
/// discovered engine and unacknowledged informs with it).
#[derive(Default)]
struct Configured {
    sinks: ArcSwap<Vec<(SinkSettings, Sink)>>,
}

impl std::fmt::Debug for Configured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Configured").finish_non_exhaustive()
    }
}

/// What the originator sends to beside its (empty) fixed sinks: the
/// configured sinks first, then the SNMP-TARGET-MIB rows' receivers.
#[derive(Debug)]
struct Receivers {
    configured: Arc<Configured>,
    table: Option<Arc<dyn SinkSource>>,
}

impl SinkSource for Receivers {
    fn sinks(&self, n: &snmp::notify::Notification) -> Vec<Sink> {
        let mut out: Vec<Sink> = self
            .configured
            .sinks
            .load()
            .iter()
            .map(|(_, s)| s.clone())
            .collect();
        if let Some(t) = &self.table {
            out.extend(t.sinks(n));
        }
        out
    }
}

/// The sinks of `settings`, reusing those of `kept` made from the same
/// settings. A sink that cannot be made now (a name that does not
/// resolve, an unknown user) is left out, loudly: it must not keep the
/// agent from serving.
async fn make_sinks(
    settings: &NotifySettings,
    usm: Option<&Arc<Usm>>,
    kept: &[(SinkSettings, Sink)],
) -> Vec<(SinkSettings, Sink)> {
    let mut sinks = Vec::new();
    for s in &settings.sinks {
        if let Some(k) = kept.iter().find(|(k, _)| k == s) {
            sinks.push(k.clone());
            continue;
        }
        let addr = match resolve(s) {
            Ok(a) => a,
            Err(e) => {
                warn!(error = format!("{e:#}"), "notification sink left out");
                continue;
            }
        };
        let community = s.community.as_bytes().to_vec();
        let kind = match s.kind {
            SinkType::TrapV3 => {
                let wrapper = usm
                    .ok_or_else(|| "no SNMPv3 engine (no [[user]])".to_string())
                    .and_then(|u| TrapWrapper::new(Arc::clone(u), &s.user, s.level));
                match wrapper {
                    Ok(w) => SinkKind::Wrapped {
                        wrapper: Arc::new(w),
                        confirm: None,
                    },
                    Err(e) => {
                        warn!(sink = %addr, error = %e, "SNMPv3 notification sink left out");
                        continue;
                    }
                }
            }
            SinkType::InformV3 => match inform_v3(s, addr, &settings.inform_users).await {
                Ok(w) => SinkKind::Wrapped {
                    wrapper: Arc::new(w),
                    confirm: Some((s.timeout, s.retries)),
                },
                Err(e) => {
                    warn!(sink = %addr, error = %e, "SNMPv3 inform sink left out");
                    continue;
                }
            },
            SinkType::TrapV1 => SinkKind::TrapV1 { community },
            SinkType::TrapV2c => SinkKind::TrapV2c { community },
            SinkType::Inform => SinkKind::InformV2c {
                community,
                timeout: s.timeout,
                retries: s.retries,
            },
        };
        info!(sink = %addr, kind = ?kind, "notification sink");
        sinks.push((s.clone(), Sink { addr, kind }));
    }
    sinks
}

impl Traps {
    /// Starts the originator and the event task (on the current runtime).
    /// None when nothing can receive notifications: no sink configured, no
    /// AgentX master to forward to and no `targets` (the SNMP-TARGET-MIB
    /// rows, [`crate::services::targets`]). `agent_addr`: the v1 agent-addr.
    pub async fn start(
        settings: &NotifySettings,
        agent_addr: Ipv4Addr,
        system: Arc<ArcSwap<SystemState>>,
        fabric: FabricHandle,
        forward: Option<tokio::sync::mpsc::Sender<Vec<snmp::value::VarBind>>>,
        usm: Option<Arc<Usm>>,
        targets: Option<Arc<dyn SinkSource>>,
    ) -> Result<Option<Traps>> {
        // AgentX mode forwards notifications to the master even without sinks
        // of our own.
        if settings.sinks.is_empty() && forward.is_none() && targets.is_none() {
            return Ok(None);
        }
        let configured = Arc::new(Configured::default());
        configured
            .sinks
            .store(Arc::new(make_sinks(settings, usm.as_ref(), &[]).await));
        let config = OriginatorConfig {
            // Every receiver comes from `targets`: the configured sinks can
            // change on reload.
            sinks: Vec::new(),
            queue: settings.queue,
            agent_addr,
            storm: settings.storm,
            forward,
            targets: Some(Arc::new(Receivers {
                configured: Arc::clone(&configured),
                table: targets,
            })),
            ..OriginatorConfig::default()
        };
        let up_system = Arc::clone(&system);
        let up_time: notify::UpTime = Arc::new(move || up_system.load().up_time());
        let (notifier, _task) = notify::start(config, up_time)
            .await
            .context("cannot start the notification originator")?;
        fabric.subscribe();
        let thresholds = Arc::new(ArcSwap::from_pointee(settings.thresholds));
        tokio::spawn(event_task(
            notifier.clone(),
            Arc::clone(&thresholds),
            system,
            fabric,
            settings.fabric_link_traps,
        ));
        Ok(Some(Traps {
            notifier,
            configured,
            thresholds,
            usm,
        }))
    }

    /// A reload: the sinks (and their communities, users) and the
    /// thresholds of `settings` in force from the next notification.
    /// Storm control and the queue length change only on restart.
    pub async fn reconfigure(&self, settings: &NotifySettings) {
        let kept = self.configured.sinks.load_full();
        let sinks = make_sinks(settings, self.usm.as_ref(), &kept).await;
        self.configured.sinks.store(Arc::new(sinks));
        self.thresholds.store(Arc::new(settings.thresholds));
    }

    /// The originator's counters (for /metrics).
    pub fn stats(&self) -> Arc<snmp::notify::NotifyStats> {
        Arc::clone(self.notifier.stats())
    }

    /// Queues `n` for the sinks; false when the queue is full (dropped).
    pub fn notify(&self, n: snmp::notify::Notification) -> bool {
        self.notifier.notify(n)
    }

    /// coldStart: the agent (re)initialised with a possibly new configuration.
    pub fn cold_start(&self) {
        self.notifier.notify(notif::cold_start());
    }

    /// warmStart: the configuration was reloaded (SIGHUP).
    pub fn warm_start(&self) {
        self.notifier.notify(notif::warm_start());
    }

    /// The hook for [`snmp::agent::Agent::with_auth_failure_hook`]: an
    /// authenticationFailure when snmpEnableAuthenTraps is enabled(1),
    /// rate-limited by storm control.
    pub fn auth_failure_hook(&self, system: Arc<ArcSwap<SystemState>>) -> AuthFailureHook {
        let n = self.notifier.clone();
        // A flood of bad packets queues at most one notification per
        // AUTH_QUEUE_EVERY (lock-free), so it cannot crowd fabric
        // notifications out of the queue; storm control limits the rest.
        let started = std::time::Instant::now();
        let next = Arc::new(AtomicU64::new(0));
        Arc::new(move |failure| {
            if !mibs::modules::snmpv2::authen_traps_enabled(&system.load()) {
                return;
            }
            let now = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let due = next.load(Ordering::Relaxed);
            let every = u64::try_from(AUTH_QUEUE_EVERY.as_millis()).unwrap_or(1000);
            if now >= due
                && next
                    .compare_exchange(
                        due,
                        now.saturating_add(every),
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                n.notify(notif::authentication_failure(failure.source.ip()));
            }
        })
    }

    /// Logs the originator's counters (at shutdown).
    pub fn log_stats(&self) {
        let s = self.notifier.stats();
        let g = NotifyStats::get;
        info!(
            queued = g(&s.queued),
            queue_drops = g(&s.queue_drops),
            suppressed = g(&s.suppressed),
            traps_sent = g(&s.traps_sent),
            informs_sent = g(&s.informs_sent),
            inform_retries = g(&s.inform_retries),
            informs_acked = g(&s.informs_acked),
            informs_dropped = g(&s.informs_dropped),
            "notification totals"
        );
    }
}

/// Fabric events (port in/out of service, link state), snapshot
/// differences (multicast groups, thresholds, masks, keys) and the derived
/// findings' changes (cabling plan, routes) to notifications,
/// each update read against the snapshot it came from.
async fn event_task(
    notifier: Notifier,
    thresholds: Arc<ArcSwap<Thresholds>>,
    system: Arc<ArcSwap<SystemState>>,
    fabric: FabricHandle,
    fabric_wide: bool,
) {
    // Findings already notified: those present at the first update after
    // coldStart are notified then.
    let mut said = crate::models::findings::Tracker::default();
    loop {
        let u = fabric.next_update().await;
        if u.missed > 0 {
            warn!(
                missed = u.missed,
                "notification layer fell behind the fabric events; some were not notified"
            );
        }
        for ev in &u.events {
            for n in notif::from_event(ev, &u.next.snapshot) {
                notifier.notify(n);
            }
            if let Some(n) = notif::link_up_down_for(ev, &u.next, &system.load(), fabric_wide) {
                notifier.notify(n);
            }
        }
        for n in notif::from_changes(&u.changes, &u.next.snapshot, &thresholds.load()) {
            notifier.notify(n);
        }
        for c in said.update(
            u.next.extra.topology.as_deref(),
            u.next.extra.routes.as_deref(),
        ) {
            notifier.notify(c.notification());
        }
    }
}
