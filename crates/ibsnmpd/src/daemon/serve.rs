//! The serving loop: requests until SIGTERM/SIGINT, a reload on SIGHUP, the
//! AgentX session closed before the agent goes.

use std::time::Duration;

use anyhow::{Context, Result};
use mibs::{Change, View};
use snmp::agent::Agent;
use snmp::agentx::Subagent;
use tokio::signal::unix::{signal, SignalKind};
use tracing::info;

use crate::daemon::reload::Reloader;

/// Serves until `shutdown` (Ok: a termination signal, named) or the agent
/// stops (its error).
pub(super) async fn serve(
    agent: Agent<View, Change>,
    subagent: Option<Subagent<View, Change>>,
    mut reloader: Reloader,
    source: &str,
    shutdown: impl std::future::Future<Output = Result<&'static str>>,
) -> Result<()> {
    let udp = !agent.local_addrs().is_empty();
    if udp {
        info!(addrs = ?agent.local_addrs(), source = %source, "ibsnmpd listening");
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let subagent = subagent.map(|s| {
        let mut stop = stop_rx.clone();
        tokio::spawn(s.run(async move {
            let _ = stop.wait_for(|v| *v).await;
        }))
    });
    let mut hup = signal(SignalKind::hangup()).context("SIGHUP handler")?;
    tokio::pin!(shutdown);
    let serve = async {
        if udp {
            agent.run().await
        } else {
            std::future::pending().await
        }
    };
    tokio::pin!(serve);
    let r = 'serving: loop {
        tokio::select! {
            r = &mut serve => break r.context("agent stopped"),
            s = &mut shutdown => {
                let name = s?;
                info!(signal = name, "shutting down");
                break Ok(());
            }
            _ = hup.recv() => {
                // The reload runs beside the requests and the termination
                // signals: one that waits (a plan on a hung mount, up to its
                // time limit) holds up neither.
                let reload = reloader.reload();
                tokio::pin!(reload);
                tokio::select! {
                    _ = &mut reload => {}
                    r = &mut serve => break 'serving r.context("agent stopped"),
                    s = &mut shutdown => {
                        let name = s?;
                        info!(signal = name, "shutting down during a reload");
                        break 'serving Ok(());
                    }
                }
            }
        }
    };
    // The subagent closes its session with the master before we go.
    let _ = stop_tx.send(true);
    if let Some(t) = subagent {
        let _ = tokio::time::timeout(Duration::from_secs(2), t).await;
    }
    r
}

/// SIGTERM or SIGINT, named.
pub(super) async fn shutdown_signal() -> Result<&'static str> {
    let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("SIGINT handler")?;
    Ok(tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    })
}
