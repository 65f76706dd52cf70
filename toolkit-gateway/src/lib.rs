#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod approval_webhook;
pub mod audit;
pub mod auth;
pub mod catalog;
pub mod changed_sources;
pub mod config;
mod event_deliveries;
mod event_errors;
mod event_log;
mod event_webhooks;
mod grant_store;
mod http;
pub mod lifetimes;
pub mod metrics;
pub mod oauth_connect;
mod on_behalf;
mod per_person;
pub mod person_secrets;
pub mod policy;
#[cfg(feature = "process")]
pub mod process;
mod redis_secrets;
mod reload;
pub mod resilience;
mod resource_updates;
mod resources;
mod result_uris;
mod sealing_key;
mod secrets_file;
pub mod serve;
pub mod served_names;
mod served_tasks;
mod server_card;
mod sources;
mod standard_webhooks;
mod task_statuses;
mod tasks;
mod token_store;
mod views;
mod webhook_inbox;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use toolkit_core::context::Clients;
use toolkit_core::{Assembly, Member, ToolSource, Toolkit};
use toolkit_mcp::ToolsChanged;
use toolkit_runtime::code::{CodeMode, CodeModeOptions, QuickJs};
use toolkit_runtime::search::{SearchOptions, ToolSearch};

use self::audit::Audit;
use self::catalog::{Catalog, RefreshFailure};
use self::config::{Config, ConfigError, Presentation};
use self::metrics::{Metered, Metrics};
use self::policy::Policy;

/// A configured gateway: its sources made, its policy compiled, its catalog as last known.
#[derive(Clone)]
pub struct Gateway {
    config: Config,
    policy: Policy,
    /// Each source, with how long it may take to list its tools.
    sources: Vec<(Arc<dyn ToolSource>, Duration)>,
    catalog: Catalog,
    metrics: Arc<Metrics>,
    readiness: Readiness,
    /// Where every call's record goes (`[audit]`), when configured.
    audit: Option<Audit>,
    /// The MCP sources, whose resources and prompts are served too: `(name, prefixed, source)`.
    upstreams: Vec<(String, bool, Arc<toolkit_mcp::Mcp>)>,
    /// The clients of the sessions served, for what an upstream asks outside any call.
    clients: Arc<Clients>,
    /// What wakes when a source says its lists changed, by the source's name, taken once by
    /// whoever refreshes.
    changes: Arc<Mutex<Vec<(String, ToolsChanged)>>>,
    /// Where each MCP source keeps the lifetime of its last listing, by the source's name.
    lifetimes: Vec<(String, toolkit_mcp::ListLifetimeHandle)>,
    /// People's connections of their own accounts, pending, when a source has
    /// `oauth.per_person`.
    connects: Option<Arc<oauth_connect::Connects>>,
    /// The gateway's own skills (`serve.skills`), read at the start.
    own_skills: Option<Arc<toolkit_serve::SkillFolder>>,
    /// The webhooks it receives itself (`[sources.webhooks]`), read at the start.
    inbox: Arc<webhook_inbox::Inbox>,
    /// The webhook subscriptions it holds at its MCP sources.
    event_webhooks: Arc<event_webhooks::EventWebhooks>,
    /// The webhook subscriptions its own clients hold.
    event_deliveries: Arc<event_deliveries::EventDeliveries>,
    /// The model searches rank by meaning with (`serve.search_model`), loaded once.
    #[cfg(feature = "search-embeddings")]
    meaning: Option<toolkit_runtime::search::MeaningModel>,
}

/// Whether the gateway is ready to serve, as `/readyz` says: its catalog loaded (the start's
/// refresh done) and, at the last refresh, one source at least answering (or none configured).
/// Shared by the clones of a [`Gateway`].
#[derive(Clone, Debug, Default)]
pub struct Readiness(Arc<Mutex<ReadyState>>);

/// What [`Readiness`] knows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadyState {
    /// Whether a refresh has run (the catalog is loaded).
    pub loaded: bool,
    /// How many sources there are.
    pub sources: usize,
    /// The sources that did not answer at the last refresh, by name.
    pub unreachable: Vec<String>,
    /// How many tools the catalog holds.
    pub tools: usize,
    /// Why the audit records cannot be written now (`audit.file`), when they cannot: they are
    /// kept and tried again (`audit.rs`), and the gateway takes no traffic meanwhile.
    pub audit: Option<String>,
}

impl ReadyState {
    /// Whether to take traffic: loaded, not every source unreachable, and the audit records
    /// written.
    pub fn ready(&self) -> bool {
        self.loaded
            && (self.sources == 0 || self.unreachable.len() < self.sources)
            && self.audit.is_none()
    }
}

impl Readiness {
    /// What is known now.
    pub fn get(&self) -> ReadyState {
        self.0
            .lock()
            .map(|state| state.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// Sets what a refresh found (what the audit says is kept).
    fn set(&self, mut state: ReadyState) {
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.audit = guard.audit.take();
        *guard = state;
    }

    /// Sets why the audit records cannot be written now (`None`: they are).
    pub(crate) fn set_audit(&self, problem: Option<String>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).audit = problem;
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("sources", &self.sources.len())
            .field("tools", &self.catalog.len())
            .finish_non_exhaustive()
    }
}

/// A source as the gateway serves it: its calls counted in `metrics`, recorded in `audit`, and,
/// when it wears resilience layers, told which layer answered.
fn served(
    source: Arc<dyn ToolSource>,
    metrics: &Arc<Metrics>,
    audit: Option<&Audit>,
    resilient: &Option<Arc<toolkit_runtime::resilience::Resilient>>,
) -> Arc<dyn ToolSource> {
    let mut served: Arc<dyn ToolSource> = Arc::new(Metered::new(source, Arc::clone(metrics)));
    if let Some(audit) = audit {
        served = Arc::new(audit::Audited::new(served, audit.clone()));
    }
    if resilient.is_some() {
        served = Arc::new(resilience::Answering(served));
    }
    served
}

/// The source `made` of `source` as the gateway serves it ([`served`]); an MCP source's results'
/// URIs served under its name, as its resources are.
fn serving(
    source: &config::SourceConfig,
    made: &sources::BuiltSource,
    metrics: &Arc<Metrics>,
    audit: Option<&Audit>,
) -> Arc<dyn ToolSource> {
    let served = served(Arc::clone(&made.source), metrics, audit, &made.resilient);
    if made.mcp.is_some() && source.prefix {
        Arc::new(result_uris::ResultUris::new(served))
    } else {
        served
    }
}

/// What happened when the catalog was refreshed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Sources that did not answer and kept their last known tools.
    pub failures: Vec<RefreshFailure>,
    /// Whether the catalog differs from the one before.
    pub changed: bool,
    /// Why the changed catalog could not be written to its file (it is served all the same).
    pub unsaved: Option<String>,
}

impl Gateway {
    /// Makes the gateway `config` describes: every source (reading credentials from the
    /// environment), the policy, and the catalog from its file (empty when there is none).
    ///
    /// # Errors
    ///
    /// Every problem found, each naming its source or rule: an unset variable, a bad pattern, an
    /// unreadable document or catalog.
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        let mut problems = Vec::new();
        let metrics = Arc::new(Metrics::default());
        let readiness = Readiness::default();
        let policy = Policy::new(&config.policy).map_err(|error| problems.push(error.0));
        let audit = config.audit.as_ref().and_then(|audit| {
            Audit::start(audit, &config.secrets(), readiness.clone())
                .map_err(|problem| problems.push(problem))
                .ok()
        });
        let mut sources = Vec::new();
        let mut changes = Vec::new();
        let mut lifetimes = Vec::new();
        let mut upstreams = Vec::new();
        let mut resilients = Vec::new();
        // People who authenticate share each upstream connection: none of them answers what it
        // asks outside a call (it would keep one person's answer for the next).
        let authenticates = matches!(config.serve.transport, config::Transport::Http)
            && config.serve.auth.is_some();
        let clients = Arc::new(if authenticates {
            Clients::shared()
        } else {
            Clients::default()
        });
        let connects = if config
            .sources
            .iter()
            .any(|source| source.oauth.as_ref().is_some_and(|oauth| oauth.per_person))
        {
            match config.serve.public_origin() {
                Ok(public) => Some(Arc::new(oauth_connect::Connects::new(public))),
                Err(problem) => {
                    problems.push(problem);
                    None
                }
            }
        } else {
            None
        };
        for source in &config.sources {
            match sources::made(source, &clients, connects.as_ref()) {
                Ok(made) => {
                    sources.push((
                        serving(source, &made, &metrics, audit.as_ref()),
                        source.timeout(),
                    ));
                    if let Some(resilient) = made.resilient {
                        resilients.push((source.name.clone(), resilient));
                    }
                    if let Some(mcp) = made.mcp {
                        upstreams.push((source.name.clone(), source.prefix, mcp));
                    }
                    changes.extend(made.changes.map(|changes| (source.name.clone(), changes)));
                    lifetimes.extend(made.lifetime.map(|handle| (source.name.clone(), handle)));
                }
                Err(error) => problems.push(error.0),
            }
        }
        let inbox = Arc::new(
            webhook_inbox::Inbox::read(&config.sources).unwrap_or_else(|found| {
                problems.extend(found);
                webhook_inbox::Inbox::default()
            }),
        );
        // Deliveries of webhook-only event types come to the public origin, over HTTP only.
        let origin = match config.serve.transport {
            config::Transport::Http => config.serve.public_origin().ok(),
            config::Transport::Stdio => None,
        };
        let event_webhooks = Arc::new(event_webhooks::EventWebhooks::new(origin.as_ref()));
        let event_deliveries = Arc::new(event_deliveries::EventDeliveries::new(
            config.serve.transport == config::Transport::Http,
            &config.serve.event_callback_hosts,
        ));
        let own_skills = config.serve.skills.as_ref().and_then(|folder| {
            toolkit_serve::SkillFolder::open(folder)
                .map(Arc::new)
                .map_err(|problem| problems.push(format!("serve.skills: {problem}")))
                .ok()
        });
        let catalog = Catalog::load(&config.catalog.file).map_err(|problem| problems.push(problem));
        // Which tools a retry is safe for, from the catalog kept (a listing teaches it anew).
        if let Ok(catalog) = &catalog {
            for (name, resilient) in &resilients {
                resilient.knowing(catalog.get(name).unwrap_or_default());
            }
        }
        #[cfg(feature = "search-embeddings")]
        let meaning = config.serve.search_model.as_ref().and_then(|model| {
            toolkit_runtime::search::MeaningModel::load(model)
                .map_err(|error| {
                    problems.push(format!("serve.search_model {}: {error}", model.display()));
                })
                .ok()
        });
        #[cfg(not(feature = "search-embeddings"))]
        if config.serve.search_model.is_some() {
            problems.push(
                "serve.search_model needs a gateway built with feature `search-embeddings`"
                    .to_owned(),
            );
        }
        tell_roots_changed(&clients, &upstreams);
        match (policy, catalog) {
            (Ok(policy), Ok(catalog)) if problems.is_empty() => Ok(Self {
                config,
                policy,
                sources,
                catalog,
                metrics,
                readiness,
                audit,
                upstreams,
                clients,
                changes: Arc::new(Mutex::new(changes)),
                lifetimes,
                connects,
                own_skills,
                inbox,
                event_webhooks,
                event_deliveries,
                #[cfg(feature = "search-embeddings")]
                meaning,
            }),
            _ => Err(ConfigError(problems.join("\n"))),
        }
    }

    /// The configuration the gateway was made from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The catalog as last known.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The gateway's metrics (its sources' calls are counted from the start).
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The audit every call is recorded in (`[audit]`), when configured.
    pub fn audit(&self) -> Option<&Audit> {
        self.audit.as_ref()
    }

    /// Whether the gateway is ready, as its last refresh left it.
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    /// The tools of the catalog the policy marks `approve`, as `(source, tool)` (the source's
    /// name for it).
    pub fn approve_tools(&self) -> Vec<(String, String)> {
        self.catalog
            .entries()
            .flat_map(|(source, definitions)| {
                definitions
                    .iter()
                    .filter(|definition| self.policy.may_approve(source, definition))
                    .map(|definition| (source.to_owned(), definition.name().to_owned()))
            })
            .collect()
    }

    /// The policy rules that match no tool of the catalog, as written.
    ///
    /// `named` are the `(source, name)` of what else a rule decides: the sources' prompts and
    /// event types, as the [`Gateway::resources`]' `named` lists them.
    pub fn dead_rules(&self, named: &[(String, String)]) -> Vec<String> {
        self.policy.dead_rules(&self.catalog, named)
    }

    /// The policy rules that name people no request can come from (a token name the
    /// configuration does not have, groups where no token carries claims), as written with why.
    pub fn unknowable_rules(&self) -> Vec<String> {
        let auth = match self.config.serve.transport {
            config::Transport::Http => self.config.serve.auth.as_ref(),
            config::Transport::Stdio => None,
        };
        self.policy.unknowable_rules(auth)
    }

    /// What each person is shown when the policy names people (their view of the catalog as it
    /// is now); `None` when every person is shown [`Gateway::toolkit`].
    pub fn views(&self) -> Option<Arc<dyn toolkit_serve::Views>> {
        self.policy
            .is_personal()
            .then(|| Arc::new(views::PolicyViews::new(self.clone())) as _)
    }

    /// Asks every source for its tools and keeps the answers (a source that fails keeps what it
    /// had), then writes the catalog file when the catalog changed. A file that cannot be written
    /// does not keep the new catalog from being served: [`Refresh::unsaved`] says why.
    pub async fn refresh(&mut self) -> Refresh {
        let (catalog, failures) = self.catalog.refreshed(&self.sources).await;
        let changed = catalog != self.catalog;
        let mut unsaved = None;
        if changed {
            self.catalog = catalog;
            unsaved = self.catalog.save(&self.config.catalog.file).err();
        }
        self.metrics.record_refresh(failures.is_empty());
        self.readiness.set(ReadyState {
            loaded: true,
            sources: self.sources.len(),
            unreachable: failures
                .iter()
                .map(|failure| failure.source.clone())
                .collect(),
            tools: self.catalog.len(),
            audit: None,
        });
        Refresh {
            failures,
            changed,
            unsaved,
        }
    }

    /// The clients of the sessions served, which a server of the gateway's toolkit joins
    /// ([`McpServer::clients`](toolkit_serve::McpServer::clients)): what an MCP
    /// source's server asks outside any call (`roots/list`) goes to the one client there is, and
    /// a client's `notifications/roots/list_changed` is told to every MCP source.
    pub fn clients(&self) -> &Arc<Clients> {
        &self.clients
    }

    /// People's connections of their own accounts, when a source has `oauth.per_person`.
    pub fn connects(&self) -> Option<&Arc<oauth_connect::Connects>> {
        self.connects.as_ref()
    }

    /// The resources, resource templates, prompts and completion of the MCP sources, served
    /// beside the tools under the same policy (`resources.rs`), each request counted in the
    /// gateway's metrics.
    pub fn resources(&self) -> resources::Upstreams {
        resources::Upstreams::new(self.upstreams.clone(), self.policy.clone())
            .metered(Arc::clone(&self.metrics))
            .audited(self.audit.clone())
            .with_own_skills(self.own_skills.clone())
            .with_inbox(Arc::clone(&self.inbox))
            .with_event_webhooks(Arc::clone(&self.event_webhooks))
            .with_event_deliveries(Arc::clone(&self.event_deliveries))
    }

    /// The webhook subscriptions it holds at its MCP sources (`event_webhooks.rs`).
    pub(crate) fn event_webhooks(&self) -> &Arc<event_webhooks::EventWebhooks> {
        &self.event_webhooks
    }

    /// The webhooks it receives itself (`webhook_inbox.rs`).
    pub(crate) fn inbox(&self) -> &Arc<webhook_inbox::Inbox> {
        &self.inbox
    }

    /// The tasks of the MCP sources, passed through for a client that drives them (see
    /// `tasks.rs`), their calls counted in the gateway's metrics.
    pub fn tasks(&self) -> tasks::UpstreamTasks {
        tasks::UpstreamTasks::new(
            self.upstreams
                .iter()
                .map(|(name, _, mcp)| (name.clone(), Arc::clone(mcp)))
                .collect(),
            Arc::clone(&self.metrics),
        )
        .audited(self.audit.clone())
    }

    /// The toolkit of the catalog under the policy, presented as the configuration says, for the
    /// one person of a gateway without authentication (where rules name people, each person is
    /// shown their own: [`Gateway::views`]). The `ui://` resource an MCP App's tool names
    /// (`_meta.ui.resourceUri`) is named as the gateway serves it ([`served_names`]).
    ///
    /// # Errors
    ///
    /// Two tools would share a name once named `source__tool` (or by their own names, for a
    /// source with `prefix = false`); every clash is listed.
    pub fn toolkit(&self) -> Result<Toolkit, String> {
        self.toolkit_for(
            &self
                .policy
                .view(&toolkit_core::context::Principal::loopback()),
        )
    }

    /// The toolkit of the catalog under the policy for the people of `view`.
    fn toolkit_for(&self, view: &policy::View) -> Result<Toolkit, String> {
        let members: Vec<Member> = self
            .sources
            .iter()
            .filter_map(|(source, _)| {
                let definitions = self.catalog.get(source.name())?;
                let prefixed_mcp = self
                    .upstreams
                    .iter()
                    .any(|(name, prefixed, _)| name == source.name() && *prefixed);
                let definitions = if prefixed_mcp {
                    definitions
                        .iter()
                        .map(|definition| served_names::with_served_app(source.name(), definition))
                        .collect()
                } else {
                    definitions.to_vec()
                };
                Some(Member::new(Arc::clone(source), definitions))
            })
            .collect();
        let assembly = self
            .config
            .sources
            .iter()
            .filter(|source| !source.prefix)
            .fold(Assembly::new(), |assembly, source| {
                assembly.unprefixed(source.name.clone())
            });
        let assembled = assembly
            .toolkit(&members, |source, definition| {
                self.policy.decide(view, source, definition)
            })
            .map_err(|error| error.to_string())?;
        Ok(match self.config.serve.presentation {
            Presentation::All => assembled,
            Presentation::Search => {
                let options = SearchOptions::default();
                #[cfg(feature = "search-embeddings")]
                let options = options.meaning(self.meaning.clone());
                ToolSearch::toolkit(&assembled, &options)
            }
            Presentation::Code => {
                let options = CodeModeOptions::default();
                #[cfg(feature = "search-embeddings")]
                let options = options.meaning(self.meaning.clone());
                CodeMode::toolkit(&assembled, Arc::new(QuickJs::default()), &options)
            }
        })
    }

    /// How often the catalog is refreshed after the start (`None`: never).
    pub fn refresh_interval(&self) -> Option<Duration> {
        match self.config.catalog.refresh_seconds {
            0 => None,
            seconds => Some(Duration::from_secs(seconds)),
        }
    }

    /// What wakes when a source says its lists changed (an MCP server's
    /// `notifications/tools/list_changed`, or of its resources or prompts, heard over stdio, the
    /// old HTTP+SSE transport and a Streamable HTTP session), one for each source that can say
    /// it, with the source's name. Taken: the first caller (the refresh loop) gets them.
    pub fn take_tools_changed(&self) -> Vec<(String, ToolsChanged)> {
        std::mem::take(
            &mut *self
                .changes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The configuration file's catalog path (for messages).
    pub fn catalog_file(&self) -> &PathBuf {
        &self.config.catalog.file
    }
}

/// Tells every MCP source of `upstreams` (on the connection it has) when a client of `clients`
/// says its roots changed.
fn tell_roots_changed(clients: &Clients, upstreams: &[(String, bool, Arc<toolkit_mcp::Mcp>)]) {
    let told: Vec<_> = upstreams
        .iter()
        .map(|(_, _, mcp)| Arc::downgrade(mcp))
        .collect();
    clients.on_roots_changed(move || {
        // Told from a session's handler, on its runtime; with none, there is nothing to tell.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for mcp in told.iter().filter_map(std::sync::Weak::upgrade) {
            runtime.spawn(async move { mcp.roots_changed().await });
        }
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use toolkit_core::ToolDefinition;

    /// A tool of no parameters named `name`.
    pub(super) fn tool(name: &str) -> ToolDefinition {
        let schema = serde_json::json!({ "type": "object" });
        ToolDefinition::new(name, schema.as_object().cloned().unwrap()).unwrap()
    }
}
