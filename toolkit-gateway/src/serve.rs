//! The gateway's life: start (configuration, sources, catalog refreshed, policy checked against
//! it), serve, and refresh the catalog on an interval while serving.

use std::time::{Duration, Instant};

use toolkit_mcp::ToolsChanged;
use toolkit_serve::{HttpOptions, McpServer, ServedToolkit};

use super::Gateway;
use super::auth::{Authenticator, CurrentAuth};
use super::changed_sources::ChangedSources;
use super::config::{Config, Transport};
use super::http::{self, Parts};
use super::reload::Reloads;

/// Starts the gateway `config` describes ([`Config::load`] reads it from a file) and serves until the client goes (stdin ends) or,
/// over HTTP, until SIGTERM or SIGINT: then no request is taken, calls in flight get
/// `shutdown_grace_seconds` to finish, and serving ends with `Ok` (the process exits 0).
///
/// A call of a tool the policy marks `approve` runs only once it is approved (`[approval]`): by
/// the calling client's person, asked through elicitation, or by the configured webhook; the
/// start logs which of the two approves each such tool.
///
/// Over HTTP, `/healthz`, `/readyz` and `/metrics` are served beside `/mcp`, and with
/// `[serve.auth]` every MCP request needs a bearer token (the protected resource metadata is
/// served in JWT mode).
///
/// Before serving, every problem is an error (the caller exits 1 with it): a bad
/// configuration, an unset variable, a catalog file that cannot be written. The start's refresh
/// failing for a source is not: its last known tools are served, and the failure is logged. A
/// policy rule that matches no tool is logged as a warning.
///
/// # Errors
///
/// A message for people, naming the file, source or rule at fault.
pub async fn serve(config: Config) -> Result<(), String> {
    serve_reloading(config, None).await
}

/// As [`serve`], `config` being the file `path` as [`Config::load`] read it, which is read again
/// on SIGHUP or when the file changes: a configuration that checks is applied to the running
/// gateway (see `reload.rs` for what a reload applies, and what needs a restart), its clients told
/// `notifications/tools/list_changed`; one that does not is refused, logged with its problems,
/// and the old one keeps serving.
///
/// # Errors
///
/// As [`serve`].
pub async fn serve_file(config: Config, path: &std::path::Path) -> Result<(), String> {
    serve_reloading(config, Some(Reloads::new(path.to_path_buf()))).await
}

async fn serve_reloading(config: Config, reloads: Option<Reloads>) -> Result<(), String> {
    let auth = match &config.serve.auth {
        Some(auth) if config.serve.transport == Transport::Http => Some(CurrentAuth::new(
            Authenticator::new(auth).map_err(|error| error.to_string())?,
        )),
        _ => None,
    };
    let webhook = super::approval_webhook::Webhook::from_config(&config.approval)
        .map_err(|e| e.to_string())?;
    let mut gateway = Gateway::new(config).map_err(|error| error.to_string())?;
    let start = gateway.refresh().await;
    if let Some(problem) = start.unsaved {
        return Err(problem);
    }
    for failure in &start.failures {
        tracing::warn!(source = %failure.source, "tools not listed at start, serving the last known ones: {}", failure.problem);
    }
    for rule in gateway.unknowable_rules() {
        tracing::warn!("policy rule {rule}");
    }
    let toolkit = gateway.toolkit()?;
    for (source, tool) in gateway.approve_tools() {
        match &webhook {
            Some(webhook) => {
                tracing::info!(%source, %tool, webhook = webhook.host(), "a call of this tool runs once the approval webhook approves it")
            }
            None => {
                tracing::info!(%source, %tool, "a call of this tool runs once its client's person approves it (elicitation)")
            }
        }
    }
    tracing::info!(
        tools = toolkit.len(),
        catalog = gateway.catalog().len(),
        "serving"
    );
    let serve = gateway.config().serve.clone();
    let audit = gateway.audit().cloned();
    // The MCP sources' resources and prompts, offered as far as they have them: the start waits
    // for the sources' answers a little (a source that has not answered yet counts as having
    // them), and the rest are heard in the background.
    let interval = gateway.refresh_interval();
    let changes = gateway.take_tools_changed();
    let resources = gateway
        .resources()
        .watched(lists_watched(interval, &changes));
    let probing = resources.clone();
    let probe = tokio::spawn(async move { probing.probe().await });
    let _ = tokio::time::timeout(PROBE_WAIT, probe).await;
    // A rule may name a prompt or an event type rather than a tool: it is dead when it names
    // none of them either, which the sources' lists say (waited for a little, as the probe is).
    if !gateway.dead_rules(&[]).is_empty() {
        for rule in gateway.dead_rules(&resources.named().await) {
            tracing::warn!(
                "policy rule {rule} matches no tool, prompt or event type of the sources"
            );
        }
    }
    let tasks = std::sync::Arc::new(gateway.tasks());
    let server = McpServer::new(toolkit)
        .name(serve.name.clone())
        .version(env!("CARGO_PKG_VERSION"))
        .resources(std::sync::Arc::new(resources.clone()))
        .tasks(std::sync::Arc::clone(&tasks) as std::sync::Arc<dyn toolkit_serve::Tasks>)
        .clients(std::sync::Arc::clone(gateway.clients()));
    // A call of an `approve` tool runs only once someone approves it: the webhook, else the
    // calling client's person (`[approval]`).
    let by_webhook = webhook
        .as_ref()
        .map(|webhook| format!("webhook:{}", webhook.host()));
    let server = match webhook {
        Some(webhook) => server.approver(webhook),
        None => server.approval_by_client(),
    };
    // A call declined reaches no source: the audit records it as its verdict is given.
    let server = match gateway.audit().cloned() {
        Some(audit) => server.on_verdict(move |request, verdict| {
            if let toolkit_core::approval::Verdict::Decline { .. } = verdict {
                let (source, tool) = request.origin().unwrap_or(("", request.tool_name()));
                let by = by_webhook.clone().or_else(|| {
                    request
                        .context()
                        .principal()
                        .map(|principal| principal.id().to_owned())
                });
                let (audit, context, input) = (
                    audit.clone(),
                    request.context().clone(),
                    request.input().clone(),
                );
                let (source, tool) = (source.to_owned(), tool.to_owned());
                tokio::spawn(async move {
                    audit.declined(&context, (&source, &tool), &input, by).await;
                });
            }
        }),
        None => server,
    };
    if let Some(views) = gateway.views() {
        server.toolkit_handle().replace_views(views);
    }
    tell_freshness(&gateway, &server.toolkit_handle());
    // The bound address is a `Host` its clients send (any loopback address, not only the
    // loopback names rmcp accepts by default).
    let mut options = HttpOptions::default();
    options.session_limits.max_sessions = serve.max_sessions;
    options.session_limits.max_sessions_per_principal = serve.max_sessions_per_principal;
    let bound = match serve.address.ip() {
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    };
    let resource_host = serve
        .auth
        .as_ref()
        .and_then(|auth| auth.resource.as_deref())
        .and_then(|resource| url::Url::parse(resource).ok())
        .and_then(|url| url.host_str().map(str::to_owned));
    // People's browsers reach the connection pages at the public origin.
    let public_host = gateway
        .connects()
        .and_then(|_| serve.public_origin().ok())
        .and_then(|url| url.host_str().map(str::to_owned));
    let hosts = std::iter::once(bound)
        .chain(resource_host)
        .chain(public_host)
        .chain(serve.allowed_hosts.iter().cloned());
    for host in hosts {
        if !options.allowed_hosts.contains(&host) {
            options.allowed_hosts.push(host);
        }
    }
    let parts = Parts {
        auth: auth.clone(),
        metrics: std::sync::Arc::clone(gateway.metrics()),
        readiness: gateway.readiness().clone(),
        grace: Duration::from_secs(serve.shutdown_grace_seconds),
        allowed_hosts: options.allowed_hosts.clone(),
        connects: gateway.connects().cloned(),
        metrics_token: match serve.transport {
            Transport::Http => serve.metrics_token().map_err(|error| error.to_string())?,
            Transport::Stdio => None,
        },
        card: super::server_card::ServerCard::new(&serve, std::sync::Arc::new(resources.clone())),
        inbox: std::sync::Arc::clone(gateway.inbox()),
        event_webhooks: std::sync::Arc::clone(gateway.event_webhooks()),
    };
    if lists_watched(interval, &changes) || reloads.is_some() {
        tokio::spawn(keep_refreshed(
            gateway,
            Served {
                toolkit: server.toolkit_handle(),
                resources,
                tasks,
                auth,
            },
            interval,
            changes,
            reloads,
        ));
    }
    let served = match serve.transport {
        Transport::Stdio => server
            .serve_stdio()
            .await
            .map_err(|error| error.to_string()),
        Transport::Http => {
            let server = server.http_options(options);
            let listener = tokio::net::TcpListener::bind(serve.address)
                .await
                .map_err(|error| format!("cannot listen on {}: {error}", serve.address))?;
            tracing::info!(
                authentication = serve.auth.is_some(),
                "listening on http://{}{}",
                serve.address,
                http::MCP_PATH
            );
            http::serve(server, listener, parts, stop_signal()).await
        }
    };
    // Every call's record is written before the process ends.
    if let Some(audit) = audit {
        let unwritten = audit.finish(AUDIT_FINISH_WAIT).await;
        if unwritten > 0 {
            tracing::error!(
                unwritten,
                "audit records could not be written: they are on standard error"
            );
        }
    }
    if served.is_ok() && serve.transport == Transport::Http {
        tracing::info!("stopped");
    }
    served
}

/// How long the end waits for the calls still running to be recorded and every audit record to
/// be written (a failing file's records are tried again meanwhile).
const AUDIT_FINISH_WAIT: Duration = Duration::from_secs(5);

/// Whether the gateway finds its sources' lists changing, and so keeps refreshing and tells its
/// clients: it refreshes every `interval`, or some source can say its lists changed (`changes`).
pub(crate) fn lists_watched(
    interval: Option<Duration>,
    changes: &[(String, ToolsChanged)],
) -> bool {
    interval.is_some() || !changes.is_empty()
}

/// How long the start waits for the MCP sources to say whether they have resources and prompts.
const PROBE_WAIT: Duration = Duration::from_secs(2);

/// Completes at the first SIGTERM or SIGINT (never, when neither can be listened for).
async fn stop_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    () = interrupt => {}
                }
            }
            Err(_) => interrupt.await,
        }
    }
    #[cfg(not(unix))]
    interrupt.await;
}

/// What the gateway serves, refreshed: the toolkit, and the sources' resources and prompts.
pub(crate) struct Served {
    pub(crate) toolkit: ServedToolkit,
    pub(crate) resources: super::resources::Upstreams,
    pub(crate) tasks: std::sync::Arc<super::tasks::UpstreamTasks>,
    /// What checks each request's credentials, over HTTP with `[serve.auth]`.
    pub(crate) auth: Option<CurrentAuth>,
}

/// Refreshes the catalog every `interval` (if any), a source whose list expires (its `ttlMs`,
/// within the configured bounds, see [`Lifetimes`](super::lifetimes::Lifetimes)) when it does,
/// and a source that says its lists changed no sooner than `catalog.min_refresh_seconds` after it
/// was last asked, once however often it says it in between
/// ([`ChangedSources`](super::changed_sources::ChangedSources)); and serves the new toolkit when
/// it changed (its clients hear `notifications/tools/list_changed`). A source's expiry or change
/// lists that source only. Each refresh lists the resources and prompts of the sources it lists
/// again too (their clients hear `notifications/resources/list_changed` or
/// `notifications/prompts/list_changed` when what is served changed). Whatever fails here is
/// logged, and the last good toolkit goes on being served.
pub(crate) async fn keep_refreshed(
    mut gateway: Gateway,
    served: Served,
    interval: Option<Duration>,
    changes: Vec<(String, ToolsChanged)>,
    mut reloads: Option<Reloads>,
) {
    // What the clients were first served, to tell the changes from (no source listed again:
    // those not listed yet are listed once).
    served.resources.relist(Some(&[])).await;
    let mut every = gateway.source_names();
    let mut changed = ChangedSources::new(gateway.min_refresh());
    // The start's listing counts: a change heard now waits for the floor after it.
    changed.asking(&every, Instant::now());
    changed.hear(changes);
    let mut ticks = interval.map(ticks_every);
    let mut lifetimes = gateway.lifetimes();
    loop {
        let expiry = lifetimes
            .as_ref()
            .and_then(super::lifetimes::Lifetimes::next_due);
        let change = changed.next_due(Instant::now());
        let at = |due: Option<Instant>| async move {
            match due {
                Some(due) => tokio::time::sleep_until(due.into()).await,
                None => std::future::pending().await,
            }
        };
        let tick = async {
            match ticks.as_mut() {
                Some(ticks) => {
                    ticks.tick().await;
                }
                None => std::future::pending().await,
            }
        };
        let names = tokio::select! {
            () = tick => None,
            () = at(expiry) => {
                let names = lifetimes
                    .as_mut()
                    .map(|lifetimes| lifetimes.take_due(Instant::now()))
                    .unwrap_or_default();
                tracing::info!(sources = ?names, "a source's list expired, refreshing it");
                Some(names)
            }
            () = at(change) => {
                let names = changed.take_due(Instant::now());
                tracing::info!(sources = ?names, "a source's lists changed, refreshing it");
                Some(names)
            }
            // A change heard: its listing is due at its floor, found at the loop's top.
            () = changed.woken() => continue,
            why = async {
                match reloads.as_mut() {
                    Some(reloads) => reloads.next().await,
                    None => std::future::pending().await,
                }
            } => {
                if let Some(path) = reloads.as_ref().map(|reloads| reloads.path().to_path_buf()) {
                    reload(&mut gateway, &served, &path, why).await;
                    // The catalog's settings may have changed (the interval and the bounds), and
                    // the sources: those made anew are heard from now on.
                    ticks = gateway.refresh_interval().map(ticks_every);
                    lifetimes = gateway.lifetimes();
                    every = gateway.source_names();
                    changed.hear(gateway.take_tools_changed());
                }
                continue;
            }
        };
        match names {
            None => {
                changed.asking(&every, Instant::now());
                let refresh = gateway.refresh().await;
                serve_refreshed(&gateway, &served.toolkit, &refresh);
                served.resources.relist(None).await;
            }
            Some(names) if names.is_empty() => {}
            Some(names) => {
                changed.asking(&names, Instant::now());
                let refresh = gateway.refresh_sources(&names).await;
                serve_refreshed(&gateway, &served.toolkit, &refresh);
                served.resources.relist(Some(&names)).await;
            }
        }
    }
}

/// Reads the configuration at `path` again (asked for by `why`) and applies it to `gateway` and
/// what it serves, or logs why not (the gateway goes on as it was).
async fn reload(gateway: &mut Gateway, served: &Served, path: &std::path::Path, why: &str) {
    let config = match Config::load(path) {
        Ok(config) => config,
        Err(error) => {
            tracing::error!(
                "the configuration was not reloaded ({why}); the running one is kept: {error}"
            );
            return;
        }
    };
    if config == *gateway.config() {
        tracing::info!("the configuration is unchanged ({why}): nothing to reload");
        return;
    }
    // A changed `[serve.auth]` is checked before anything is applied.
    let auth = match (&served.auth, &config.serve.auth) {
        (Some(_), Some(settings)) if gateway.config().serve.auth != config.serve.auth => {
            match Authenticator::new(settings) {
                Ok(authenticator) => Some(authenticator),
                Err(error) => {
                    tracing::error!(
                        "the configuration was not reloaded ({why}); the running one is kept: \
                         serve.auth: {error}"
                    );
                    return;
                }
            }
        }
        _ => None,
    };
    let reloaded = gateway.reloaded(config);
    let (new, listed) = match reloaded {
        Ok(reloaded) => reloaded,
        Err(problems) => {
            tracing::error!(
                "the configuration was not reloaded ({why}); the running one is kept: {problems}"
            );
            return;
        }
    };
    *gateway = new;
    if let (Some(current), Some(authenticator)) = (&served.auth, auth) {
        current.set(authenticator);
        tracing::info!("authentication's settings reloaded ({why})");
    }
    served.resources.set_policy(gateway.policy().clone());
    let upstreams = gateway.upstreams().to_vec();
    served.tasks.replace(
        upstreams
            .iter()
            .map(|(name, _, mcp)| (name.clone(), std::sync::Arc::clone(mcp)))
            .collect(),
    );
    served.resources.replace(upstreams).await;
    tell_freshness(gateway, &served.toolkit);
    let refresh = gateway.refresh_sources(&listed).await;
    for failure in &refresh.failures {
        tracing::warn!(source = %failure.source, "not listed after the reload: {}", failure.problem);
    }
    match gateway.toolkit() {
        Ok(toolkit) => {
            tracing::info!(tools = toolkit.len(), sources = ?listed, "configuration reloaded ({why})");
            match gateway.views() {
                Some(views) => served.toolkit.replace_views(views),
                None => served.toolkit.replace(toolkit),
            }
        }
        Err(problem) => {
            tracing::error!("the reloaded configuration's toolkit cannot be served: {problem}");
        }
    }
}

/// Ticks every `interval`, the first one `interval` from now.
fn ticks_every(interval: Duration) -> tokio::time::Interval {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks
}

/// Says on each `tools/list` answer how long it stays fresh, as the gateway knows now
/// ([`Gateway::served_freshness`]).
fn tell_freshness(gateway: &Gateway, served: &ServedToolkit) {
    match gateway.served_freshness() {
        (ttl, true) => served.cache_privately_for(ttl),
        (ttl, false) => served.cache_for(ttl),
    }
}

/// Logs what `refresh` left wrong, and serves the new toolkit when the catalog changed.
fn serve_refreshed(gateway: &Gateway, served: &ServedToolkit, refresh: &super::Refresh) {
    tell_freshness(gateway, served);
    for failure in &refresh.failures {
        tracing::warn!(source = %failure.source, "refresh failed, keeping the last known tools: {}", failure.problem);
    }
    if let Some(problem) = &refresh.unsaved {
        tracing::warn!("the refreshed catalog is served but not saved: {problem}");
    }
    if !refresh.changed {
        return;
    }
    match gateway.toolkit() {
        Ok(toolkit) => {
            tracing::info!(tools = toolkit.len(), "catalog changed, serving it");
            match gateway.views() {
                Some(views) => served.replace_views(views),
                None => served.replace(toolkit),
            }
        }
        Err(problem) => {
            tracing::warn!(
                "the refreshed catalog cannot be assembled, serving the last good one: {problem}"
            );
        }
    }
}
