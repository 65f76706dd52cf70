//! The gateway's life: start (configuration, sources, catalog refreshed, policy checked against
//! it), serve, and refresh the catalog on an interval while serving.

use std::path::Path;
use std::time::Duration;

use toolkit_runtime::serve::{HttpOptions, McpServer, ServedToolkit};

use super::Gateway;
use super::config::{Config, Transport};

/// Starts the gateway configured at `path` and serves until the client goes (stdin ends) or,
/// over HTTP, until the process is stopped.
///
/// Before serving, every problem is an error (the caller exits 1 with it): a bad
/// configuration, an unset variable, a catalog file that cannot be written. The start's refresh
/// failing for a source is not: its last known tools are served, and the failure is logged. A
/// policy rule that matches no tool is logged as a warning.
///
/// # Errors
///
/// A message for people, naming the file, source or rule at fault.
pub async fn serve(path: &Path) -> Result<(), String> {
    let config = Config::load(path).map_err(|error| error.to_string())?;
    let mut gateway = Gateway::new(config).map_err(|error| error.to_string())?;
    let start = gateway.refresh().await;
    if let Some(problem) = start.unsaved {
        return Err(problem);
    }
    for failure in &start.failures {
        tracing::warn!(source = %failure.source, "tools not listed at start, serving the last known ones: {}", failure.problem);
    }
    for rule in gateway.dead_rules() {
        tracing::warn!("policy rule {rule} matches no tool of the catalog");
    }
    let toolkit = gateway.toolkit()?;
    tracing::info!(
        tools = toolkit.len(),
        catalog = gateway.catalog().len(),
        "serving"
    );
    let serve = gateway.config().serve.clone();
    let server = McpServer::new(toolkit)
        .name(serve.name.clone())
        .version(env!("CARGO_PKG_VERSION"));
    if let Some(interval) = gateway.refresh_interval() {
        tokio::spawn(refresh_every(gateway, server.toolkit_handle(), interval));
    }
    match serve.transport {
        Transport::Stdio => server.serve_stdio().await,
        Transport::Http => {
            // The bound address is a `Host` its clients send (any loopback address, not only the
            // loopback names rmcp accepts by default).
            let mut options = HttpOptions::default();
            let bound = match serve.address.ip() {
                std::net::IpAddr::V4(ip) => ip.to_string(),
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            };
            if !options.allowed_hosts.contains(&bound) {
                options.allowed_hosts.push(bound);
            }
            let server = server.http_options(options);
            let listener = tokio::net::TcpListener::bind(serve.address)
                .await
                .map_err(|error| format!("cannot listen on {}: {error}", serve.address))?;
            tracing::info!("listening on http://{}/mcp", serve.address);
            server.serve_http(listener).await
        }
    }
    .map_err(|error| error.to_string())
}

/// Refreshes the catalog every `interval` and serves the new toolkit when it changed. Whatever
/// fails here is logged, and the last good toolkit goes on being served.
async fn refresh_every(mut gateway: Gateway, served: ServedToolkit, interval: Duration) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let refresh = gateway.refresh().await;
        for failure in &refresh.failures {
            tracing::warn!(source = %failure.source, "refresh failed, keeping the last known tools: {}", failure.problem);
        }
        if let Some(problem) = &refresh.unsaved {
            tracing::warn!("the refreshed catalog is served but not saved: {problem}");
        }
        if !refresh.changed {
            continue;
        }
        match gateway.toolkit() {
            Ok(toolkit) => {
                tracing::info!(tools = toolkit.len(), "catalog changed, serving it");
                served.replace(toolkit);
            }
            Err(problem) => {
                tracing::warn!(
                    "the refreshed catalog cannot be assembled, serving the last good one: {problem}"
                );
            }
        }
    }
}
