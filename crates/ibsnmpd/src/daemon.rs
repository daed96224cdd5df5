//! The agent: settings in, sockets served until SIGTERM/SIGINT.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use ib::source::Source;
use mibs::{Published, Publisher, SystemState, View};
use snmp::agent::{Agent, AgentConfig, Community as AgentCommunity, CommunityAccess, SnmpStats};
use snmp::dispatch::Dispatcher;
use snmp::oid::Oid;
use tracing::info;

use crate::config::{Access, Settings};
use crate::controller::Controller;
use crate::fabric::{self, FabricThread};
use crate::state::StateStore;

/// sysDescr: what, which version, on which platform.
fn sys_descr(source: &str) -> String {
    format!(
        "ibsnmpd {} - SNMP agent for InfiniBand fabrics ({} {}, source {})",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
        source
    )
}

/// The initial agent state: defaults from settings, then what was persisted.
fn initial_state(settings: &Settings, stored: &BTreeMap<String, String>) -> SystemState {
    let mut st = SystemState::new(
        sys_descr(&settings.source),
        Oid::from_slice(mibs::snmpv2::IBSNMPD_OBJECT_ID),
    );
    st.contact = settings.sys_contact.clone();
    st.name = settings.sys_name.clone();
    st.location = settings.sys_location.clone();
    st.secrets = settings.secrets;
    st.restore(stored);
    st
}

/// Runs the agent until a termination signal.
pub fn run(settings: Settings, source: Box<dyn Source>) -> Result<()> {
    let store = StateStore::open(&settings.state_dir)?;
    let stored = store.load()?;
    if !stored.is_empty() {
        info!(path = %store.path().display(), values = stored.len(), "loaded persisted state");
    }
    let mut system = initial_state(&settings, &stored);
    if let Some(p) = &settings.opensm_conf {
        let _ = mibs::ib_sm_mib::OPENSM_CONF.set(p.clone());
    }

    let mut dispatcher: Dispatcher<View, mibs::Change> = Dispatcher::new();
    dispatcher.set_max_repetitions(settings.max_repetitions);
    let mut or_entries = Vec::new();
    for m in mibs::modules() {
        dispatcher
            .register_all(m.objects)
            .with_context(|| format!("registering {}", m.name))?;
        or_entries.extend(m.or_entry);
    }
    system.set_or_table(or_entries);
    let system = Arc::new(ArcSwap::from_pointee(system));

    // The current snapshot with what the modules derive from it, swapped
    // atomically: readers never block a sweep, a sweep never blocks readers.
    let current = Arc::new(ArcSwap::from_pointee(Published::new(Arc::new(
        fabric::empty_snapshot(&settings.source, 0),
    ))));
    let publish: fabric::Publish = {
        let current = Arc::clone(&current);
        // The publisher owns IF-MIB's history from one snapshot to the next;
        // only the source thread publishes, so this lock is never contended.
        let publisher = std::sync::Mutex::new(Publisher::new());
        Arc::new(move |snap| {
            let t0 = std::time::Instant::now();
            let published = match publisher.lock() {
                Ok(mut p) => p.publish(snap),
                Err(poisoned) => poisoned.into_inner().publish(snap),
            };
            tracing::debug!(
                derive_ms = t0.elapsed().as_secs_f64() * 1e3,
                "derived the modules' rows"
            );
            current.store(Arc::new(published))
        })
    };
    // The source thread sweeps at once; the agent answers after that first
    // sweep, so the first walk sees the fabric.
    let (fabric, first_sweep) = FabricThread::start(source, publish, settings.sweep_interval)
        .context("cannot start the source thread")?;

    let stats = SnmpStats::new();
    let controller = Arc::new(Controller::new(
        Arc::clone(&system),
        stored,
        store,
        fabric.handle(),
    ));

    let config = AgentConfig {
        listen: settings.listen.clone(),
        communities: settings
            .communities
            .iter()
            .map(|c| AgentCommunity {
                name: c.name.as_bytes().to_vec(),
                access: match c.access {
                    Access::ReadOnly => CommunityAccess::ReadOnly,
                    Access::ReadWrite => CommunityAccess::ReadWrite,
                },
                sources: c.source.into_iter().collect(),
            })
            .collect(),
        ..AgentConfig::default()
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("ibsnmpd-agent")
        .build()
        .context("cannot start the async runtime")?;
    let view_stats = Arc::clone(&stats);
    let view_system = Arc::clone(&system);
    let view = move || {
        View::from_published(
            &current.load(),
            view_system.load_full(),
            Arc::clone(&view_stats),
        )
    };
    // Bind first: a bad or busy address fails at once, not after a sweep.
    let agent = match runtime.block_on(Agent::bind(
        config,
        Arc::new(dispatcher),
        view,
        controller as Arc<dyn snmp::agent::SetController<mibs::Change>>,
        Arc::clone(&stats),
    )) {
        Ok(a) => a,
        Err(e) => {
            fabric.stop();
            return Err(e.into());
        }
    };
    // The operator control socket (docs/usage.md), when configured;
    // removed again when `control` drops at the end of run().
    let control = match settings.control_socket.as_deref().map(|p| {
        let _rt = runtime.enter();
        crate::ctl::ControlSocket::start(p, fabric.handle())
    }) {
        Some(Err(e)) => {
            fabric.stop();
            return Err(e);
        }
        c => c.and_then(Result::ok),
    };
    // The sockets queue requests meanwhile.
    let _ = first_sweep.recv();
    let result = runtime.block_on(async {
        let addrs = agent.local_addrs();
        info!(?addrs, source = %settings.source, "ibsnmpd listening");
        tokio::select! {
            r = agent.run() => r.context("agent stopped"),
            s = shutdown_signal() => {
                let name = s?;
                info!(signal = name, "shutting down");
                Ok(())
            }
        }
    });
    // Any Set in flight was persisted before its response; nothing to flush.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    drop(control);
    fabric.stop();
    result
}

async fn shutdown_signal() -> Result<&'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("SIGINT handler")?;
    Ok(tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    })
}
