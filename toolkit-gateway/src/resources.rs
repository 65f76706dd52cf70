//! What the gateway serves beside tools: its MCP upstreams' resources, resource templates,
//! prompts and completion ([`Upstreams`], the runtime's [`Resources`]), each named as
//! [`served_names`](super::served_names) says and under the same policy rules as tools.
//!
//! A listing is served from what each upstream answered when last listed (`resources/listing.rs`),
//! never asked live per client request: an upstream is listed when first needed (once, however
//! many clients ask), then again when the gateway refreshes it; a list that fails keeps the last
//! one it answered (and is logged). Reads, prompts, completions and subscriptions are passed to
//! the upstream per request. What is offered is what the upstreams declared in their
//! `initialize` answers: resources when some upstream declares `resources` (with `subscribe` when
//! one of those declares it), prompts when some declares `prompts`, completion when some declares
//! `completions`. An upstream that had not answered within the start's wait of 2 s counts as
//! having them all; one that was spoken to in a way that tells no capabilities is asked instead
//! (only an upstream that says it has no such method, `-32601`, is taken to have none, and
//! completion goes with resources or prompts). An upstream that does not complete answers with no
//! values.
//!
//! When the gateway refreshes on an interval (`catalog.refresh_seconds`), or one upstream when it
//! says its lists changed, each refresh lists the resources, templates and prompts of the
//! upstreams it refreshes again ([`Upstreams::relist`]) and, when what is served changed, tells
//! the clients (`notifications/resources/list_changed`,
//! `notifications/prompts/list_changed`); only then is `listChanged` advertised
//! ([`Upstreams::watched`]).

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use futures_util::future::join_all;
use serde_json::{Value, json};
use toolkit_core::context::Principal;
use toolkit_core::{BoxFuture, CallContext, Decision, JsonObject, Reason, ToolSourceError};
use toolkit_mcp::{EVENTS_EXTENSION, Mcp, SKILLS_EXTENSION};
use toolkit_serve::{EventFeed, ListChanged, Offer, Refusal, Resources, SkillFolder};

use super::audit::{Audit, Entry, Kind, Open, outcome_label};
use super::metrics::Metrics;
use super::policy::{Policy, View};
use super::served_names::{climbs, served_prompt, served_uri, upstream_prompt, upstream_uri};

mod events;
mod listing;

use listing::{Listing, ListingSlot};

/// The gateway's MCP upstreams, served as one server's resources, prompts and completion.
#[derive(Clone, Debug)]
pub struct Upstreams {
    /// The upstreams, shared by every clone and replaced by a reload
    /// ([`Upstreams::replace`]).
    upstreams: Arc<RwLock<Arc<Vec<Arc<Upstream>>>>>,
    /// The policy, shared by every clone and replaced by a reload ([`Upstreams::set_policy`]).
    policy: Arc<RwLock<Arc<Policy>>>,
    /// Whose view of them these are (everyone's, until [`Resources::seen_by`] says whose).
    view: View,
    /// The sources' resource updates, under their served URIs (`resource_updates.rs`).
    updates: tokio::sync::broadcast::Sender<String>,
    /// Whether the lists are listed again at each refresh ([`Upstreams::relist`]), so that
    /// their changes are told.
    watched: bool,
    /// The changes of the lists served, found by [`Upstreams::relist`].
    list_changes: tokio::sync::broadcast::Sender<ListChanged>,
    /// What the last [`Upstreams::relist`] found served: the resources and templates, and the
    /// prompts (as JSON).
    last_listed: Arc<Mutex<Option<(String, String)>>>,
    /// Where each request passed to an upstream is counted.
    metrics: Arc<Metrics>,
    /// Where each read and prompt passed to an upstream is recorded (`[audit]`).
    audit: Option<Audit>,
    /// The gateway's own skills (`serve.skills`), served beside the upstreams' (and first, where
    /// a URI is both).
    own_skills: Option<Arc<SkillFolder>>,
    /// The push subscriptions each person holds open (`resources/events.rs`).
    streams: events::Streams,
    /// The webhooks the gateway receives itself, served as events beside the sources'.
    inbox: Arc<crate::webhook_inbox::Inbox>,
    /// The webhook subscriptions it holds at its sources, for the event types they deliver
    /// only by webhook.
    event_webhooks: Arc<crate::event_webhooks::EventWebhooks>,
    /// The webhook subscriptions its own clients hold (`events/subscribe`).
    event_deliveries: Arc<crate::event_deliveries::EventDeliveries>,
}

/// One MCP source, with what it was found to have.
#[derive(Debug)]
struct Upstream {
    name: String,
    /// Whether its names and URIs are served under its name (`prefix`, true unless configured
    /// otherwise).
    prefixed: bool,
    mcp: Arc<Mcp>,
    has: Mutex<Has>,
    /// Its lists as last asked, served to every client.
    kept: ListingSlot,
    /// Its event types as last listed (`resources/events.rs`), listed again at its refresh.
    event_types: Mutex<Option<Arc<Vec<toolkit_mcp::EventType>>>>,
}

/// What an upstream has, as far as is known (everything, until it says otherwise).
#[derive(Clone, Copy, Debug)]
struct Has {
    resources: bool,
    subscribe: bool,
    prompts: bool,
    completions: bool,
    /// The skills extension (SEP-2640), whose files are among its resources.
    skills: bool,
    /// The events extension (SEP-3415).
    events: bool,
}

impl Upstream {
    /// The upstream `(name, prefixed, source)`, taken to have everything until it says.
    fn new((name, prefixed, mcp): (String, bool, Arc<Mcp>)) -> Self {
        Self {
            name,
            prefixed,
            mcp,
            has: Mutex::new(Has::ALL),
            kept: ListingSlot::default(),
            event_types: Mutex::new(None),
        }
    }
}

impl Has {
    /// Everything: what an upstream is taken to have before it says.
    const ALL: Self = Self {
        resources: true,
        subscribe: true,
        prompts: true,
        completions: true,
        skills: true,
        events: true,
    };

    /// What `capabilities` (an `initialize` answer's) declares.
    fn declared(capabilities: &Value) -> Self {
        let declares = |key: &str| capabilities.get(key).is_some_and(Value::is_object);
        let extends = |extension: &str| {
            capabilities
                .get("extensions")
                .and_then(|extensions| extensions.get(extension))
                .is_some_and(Value::is_object)
        };
        Self {
            resources: declares("resources"),
            subscribe: capabilities.pointer("/resources/subscribe") == Some(&Value::Bool(true)),
            prompts: declares("prompts"),
            completions: declares("completions"),
            skills: declares("resources") && extends(SKILLS_EXTENSION),
            // The design sketch's servers (ChatGPT's) declare a top-level `events`.
            events: extends(EVENTS_EXTENSION) || declares("events"),
        }
    }
}

impl Upstreams {
    /// The upstreams `(name, prefixed, source)`, under `policy`.
    pub fn new(upstreams: Vec<(String, bool, Arc<Mcp>)>, policy: Policy) -> Self {
        let updates = super::resource_updates::forward(&upstreams);
        let upstreams = upstreams
            .into_iter()
            .map(|upstream| Arc::new(Upstream::new(upstream)))
            .collect();
        Self {
            upstreams: Arc::new(RwLock::new(Arc::new(upstreams))),
            view: policy.view(&Principal::loopback()),
            policy: Arc::new(RwLock::new(Arc::new(policy))),
            updates,
            watched: false,
            list_changes: tokio::sync::broadcast::channel(16).0,
            last_listed: Arc::default(),
            metrics: Arc::default(),
            audit: None,
            own_skills: None,
            streams: events::Streams::default(),
            inbox: Arc::default(),
            event_webhooks: Arc::new(crate::event_webhooks::EventWebhooks::new(None)),
            event_deliveries: Arc::new(crate::event_deliveries::EventDeliveries::new(false, &[])),
        }
    }

    /// Delivers events by webhook to its clients with `event_deliveries`.
    #[must_use]
    pub(crate) fn with_event_deliveries(
        mut self,
        event_deliveries: Arc<crate::event_deliveries::EventDeliveries>,
    ) -> Self {
        self.event_deliveries = event_deliveries;
        self
    }

    /// Receives the webhooks of the sources' event types with `event_webhooks`.
    #[must_use]
    pub(crate) fn with_event_webhooks(
        mut self,
        event_webhooks: Arc<crate::event_webhooks::EventWebhooks>,
    ) -> Self {
        self.event_webhooks = event_webhooks;
        self
    }

    /// Serves the webhooks of `inbox` as events too.
    #[must_use]
    pub(crate) fn with_inbox(mut self, inbox: Arc<crate::webhook_inbox::Inbox>) -> Self {
        self.inbox = inbox;
        self
    }

    /// Serves the skills of `folder` too, as the gateway's own.
    #[must_use]
    pub fn with_own_skills(mut self, folder: Option<Arc<SkillFolder>>) -> Self {
        self.own_skills = folder;
        self
    }

    /// The gateway's own skills' answer for `uri`, when `uri` is theirs.
    async fn own<T>(
        &self,
        ask: impl AsyncFnOnce(&SkillFolder) -> Result<T, Refusal>,
    ) -> Option<Result<T, Refusal>> {
        let own = self.own_skills.as_ref()?;
        match ask(own).await {
            Err(Refusal::NotFound(_) | Refusal::InvalidParams(_)) => None,
            answered => Some(answered),
        }
    }

    /// The upstreams as they are now.
    fn upstreams(&self) -> Arc<Vec<Arc<Upstream>>> {
        Arc::clone(
            &self
                .upstreams
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Serves `upstreams` `(name, prefixed, source)` from now on (a reloaded configuration's),
    /// in every clone: an upstream kept (the same source under the same name) keeps what it was
    /// found to have and its lists; one added is probed and listed, its updates passed on. The
    /// clients are told of the lists that changed.
    pub(crate) async fn replace(&self, upstreams: Vec<(String, bool, Arc<Mcp>)>) {
        let before = self.upstreams();
        let mut added = Vec::new();
        let next: Vec<Arc<Upstream>> = upstreams
            .into_iter()
            .map(|(name, prefixed, mcp)| {
                let kept = before.iter().find(|upstream| {
                    upstream.name == name
                        && upstream.prefixed == prefixed
                        && Arc::ptr_eq(&upstream.mcp, &mcp)
                });
                match kept {
                    Some(kept) => Arc::clone(kept),
                    None => {
                        added.push((name.clone(), prefixed, Arc::clone(&mcp)));
                        Arc::new(Upstream::new((name, prefixed, mcp)))
                    }
                }
            })
            .collect();
        super::resource_updates::forward_to(&self.updates, &added);
        let probed: Vec<Arc<Upstream>> = next
            .iter()
            .filter(|upstream| added.iter().any(|(name, ..)| *name == upstream.name))
            .cloned()
            .collect();
        *self
            .upstreams
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
        join_all(probed.iter().map(|upstream| Self::probe_one(upstream))).await;
        let names: Vec<String> = added.into_iter().map(|(name, ..)| name).collect();
        self.relist(Some(&names)).await;
    }

    /// The policy as it is now.
    fn policy(&self) -> Arc<Policy> {
        Arc::clone(&self.policy.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Serves the upstreams under `policy` from now on (a reloaded configuration's), in every
    /// clone of these upstreams.
    pub(crate) fn set_policy(&self, policy: Policy) {
        *self.policy.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(policy);
    }

    /// Counts each request passed to an upstream (a read, a prompt, a completion, a
    /// subscription) in `metrics` ([`Metrics`]' `upstream_requests`), rather than in metrics of
    /// its own.
    #[must_use]
    pub fn metered(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Records each read and prompt passed to an upstream in `audit` (none: not recorded), as
    /// the asker the server names says ([`Resources::read_resource_for`]).
    #[must_use]
    pub fn audited(mut self, audit: Option<Audit>) -> Self {
        self.audit = audit;
        self
    }

    /// Begins the audit's record of a request of `kind` to `upstream` for `name`, when audited.
    async fn begin(
        &self,
        asker: &CallContext,
        kind: Kind,
        upstream: &Upstream,
        name: &str,
        input: &JsonObject,
    ) -> Option<Open> {
        let audit = self.audit.as_ref()?;
        Some(
            audit
                .begin(Entry {
                    context: asker,
                    kind,
                    source: &upstream.name,
                    name,
                    input,
                })
                .await,
        )
    }

    /// Whether [`Upstreams::relist`] is called at each refresh (`watched`), so that the clients
    /// can be told of the lists that change: `listChanged` advertised for resources and prompts
    /// then only.
    #[must_use]
    pub fn watched(mut self, watched: bool) -> Self {
        self.watched = watched;
        self
    }

    /// Lists the resources, templates and prompts of the upstreams named `sources` again (every
    /// upstream for `None`; an upstream never listed is listed once whatever it is named), and
    /// tells the clients of each list served that differs from the last time's (the first
    /// time, nothing is told: it is the list the clients were served).
    pub async fn relist(&self, sources: Option<&[String]>) {
        let upstreams = self.upstreams();
        let picked = upstreams
            .iter()
            .filter(|upstream| sources.is_none_or(|names| names.contains(&upstream.name)));
        join_all(picked.map(|upstream| {
            // Its event types are listed again when next asked.
            *upstream
                .event_types
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = None;
            upstream.kept.renew(|last| Self::list(upstream, last))
        }))
        .await;
        let offer = self.offer();
        let (resources, templates, prompts) = futures_util::join!(
            async {
                if offer.resources {
                    self.list_resources().await.unwrap_or_default()
                } else {
                    Vec::new()
                }
            },
            async {
                if offer.resources {
                    self.list_resource_templates().await.unwrap_or_default()
                } else {
                    Vec::new()
                }
            },
            async {
                if offer.prompts {
                    self.list_prompts().await.unwrap_or_default()
                } else {
                    Vec::new()
                }
            },
        );
        let listed = (
            json!([resources, templates]).to_string(),
            Value::Array(prompts).to_string(),
        );
        let before = self
            .last_listed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replace(listed.clone());
        let Some(before) = before else {
            return;
        };
        if before.0 != listed.0 {
            tracing::info!("the sources' resources changed");
            let _ = self.list_changes.send(ListChanged::Resources);
        }
        if before.1 != listed.1 {
            tracing::info!("the sources' prompts changed");
            let _ = self.list_changes.send(ListChanged::Prompts);
        }
    }

    /// Asks `upstream` for the lists it has (all at once); a list that fails is `last`'s (and
    /// logged), one it has no method for is empty.
    async fn list(upstream: &Upstream, last: Option<Arc<Listing>>) -> Listing {
        let has = Self::has(upstream);
        let mcp = &upstream.mcp;
        let (resources, templates, prompts, skills) = futures_util::join!(
            asked_if(has.resources, mcp.list_resources()),
            asked_if(has.resources, mcp.list_resource_templates()),
            asked_if(has.prompts, mcp.list_prompts()),
            asked_if(has.skills, async {
                mcp.list_skills().await.map(|skills| {
                    skills
                        .iter()
                        .filter_map(|skill| serde_json::to_value(skill).ok())
                        .collect()
                })
            }),
        );
        let short = std::cell::Cell::new(false);
        let kept = |answer: Option<Result<Vec<Value>, ToolSourceError>>,
                    last: Option<&Vec<Value>>,
                    list: &str| match answer {
            None => Vec::new(),
            Some(Ok(entries)) => entries,
            Some(Err(error)) if matches!(error.reason, Reason::Unsupported { .. }) => Vec::new(),
            Some(Err(error)) => {
                tracing::warn!(
                    source = %upstream.name,
                    "{list} failed, serving the last known one: {error}"
                );
                short.set(short.get() || last.is_none());
                last.cloned().unwrap_or_default()
            }
        };
        let last = last.as_deref();
        Listing {
            resources: kept(
                resources,
                last.map(|last| &last.resources),
                "resources/list",
            ),
            templates: kept(
                templates,
                last.map(|last| &last.templates),
                "resources/templates/list",
            ),
            prompts: kept(prompts, last.map(|last| &last.prompts), "prompts/list"),
            skills: kept(skills, last.map(|last| &last.skills), "skills/list"),
            short: short.get(),
        }
    }

    /// Reads what each upstream declared in its `initialize` answer (all at once); an upstream
    /// spoken to in a way that tells none is asked whether it has resources and prompts, one that
    /// answers `-32601` taken to have none.
    pub async fn probe(&self) {
        join_all(
            self.upstreams()
                .iter()
                .map(|upstream| Self::probe_one(upstream)),
        )
        .await;
    }

    /// The `(source, name)` of every prompt and event type the sources have and of every webhook
    /// the gateway receives: what a policy rule decides beside tools (a rule naming one of them
    /// is not dead). A source that does not answer in time counts as having none.
    pub async fn named(&self) -> Vec<(String, String)> {
        let mut named: Vec<(String, String)> = self
            .inbox
            .event_types()
            .iter()
            .filter_map(|event| event["name"].as_str()?.split_once("__"))
            .map(|(source, name)| (source.to_owned(), name.to_owned()))
            .collect();
        let upstreams = self.upstreams();
        let listed = join_all(upstreams.iter().map(|upstream| async move {
            let has = Self::has(upstream);
            let (prompts, events) = futures_util::join!(
                asked_if(has.prompts, upstream.mcp.list_prompts()),
                asked_if(has.events, Self::event_types(upstream)),
            );
            let prompts = prompts.and_then(Result::ok).unwrap_or_default();
            let prompts = prompts
                .iter()
                .filter_map(|prompt| prompt["name"].as_str().map(str::to_owned));
            let events = events.and_then(Result::ok).unwrap_or_default();
            let events = events.iter().map(|event| event.name.clone());
            prompts
                .chain(events)
                .map(|name| (upstream.name.clone(), name))
                .collect::<Vec<_>>()
        }));
        if let Ok(listed) = tokio::time::timeout(NAMED_WAIT, listed).await {
            named.extend(listed.into_iter().flatten());
        }
        named
    }

    /// Reads what `upstream` declared, or asks it ([`Upstreams::probe`]).
    async fn probe_one(upstream: &Upstream) {
        {
            let has = match upstream.mcp.capabilities().await {
                Ok(Some(capabilities)) => Has::declared(&capabilities),
                Ok(None) | Err(_) => {
                    let (resources, templates, prompts) = futures_util::join!(
                        upstream.mcp.list_resources(),
                        upstream.mcp.list_resource_templates(),
                        upstream.mcp.list_prompts()
                    );
                    let resources = !(lacks(&resources) && lacks(&templates));
                    let prompts = !lacks(&prompts);
                    Has {
                        resources,
                        subscribe: resources,
                        prompts,
                        completions: resources || prompts,
                        // Declared only, where capabilities are told.
                        skills: false,
                        events: false,
                    }
                }
            };
            *upstream.has.lock().unwrap_or_else(PoisonError::into_inner) = has;
        }
    }

    fn has(upstream: &Upstream) -> Has {
        *upstream.has.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn allowed(&self, upstream: &Upstream, name: &str) -> bool {
        self.policy().decide_name(&self.view, &upstream.name, name) != Decision::Block
    }

    fn served_uri(upstream: &Upstream, uri: &str) -> String {
        if upstream.prefixed {
            served_uri(&upstream.name, uri)
        } else {
            uri.to_owned()
        }
    }

    /// The upstream a served URI is of, and its URI there; refused when it climbs (`..`), names
    /// no upstream, or the policy blocks it.
    fn route_uri(&self, served: &str) -> Result<(Arc<Upstream>, String), Refusal> {
        if climbs(served) {
            return Err(Refusal::InvalidParams(format!(
                "The URI {} is refused: it has a `..` segment.",
                cut(served)
            )));
        }
        let upstreams = self.upstreams();
        let with_resources = || {
            upstreams
                .iter()
                .filter(|upstream| Self::has(upstream).resources)
        };
        let found = with_resources()
            .filter(|upstream| upstream.prefixed)
            .find_map(|upstream| Some((upstream, upstream_uri(&upstream.name, served)?)))
            .or_else(|| {
                with_resources()
                    .find(|upstream| !upstream.prefixed)
                    .map(|upstream| (upstream, served.to_owned()))
            });
        match found {
            Some((upstream, uri)) if self.allowed(upstream, &uri) => {
                Ok((Arc::clone(upstream), uri))
            }
            _ => Err(Refusal::NotFound(format!(
                "No resource {} is served.",
                cut(served)
            ))),
        }
    }

    /// The upstream a served prompt name is of, and its name there.
    fn route_prompt(&self, served: &str) -> Result<(Arc<Upstream>, String), Refusal> {
        let upstreams = self.upstreams();
        let with_prompts = || {
            upstreams
                .iter()
                .filter(|upstream| Self::has(upstream).prompts)
        };
        let found = with_prompts()
            .filter(|upstream| upstream.prefixed)
            .find_map(|upstream| Some((upstream, upstream_prompt(&upstream.name, served)?)))
            .map(|(upstream, name)| (upstream, name.to_owned()))
            .or_else(|| {
                with_prompts()
                    .find(|upstream| !upstream.prefixed)
                    .map(|upstream| (upstream, served.to_owned()))
            });
        match found {
            Some((upstream, name)) if self.allowed(upstream, &name) => {
                Ok((Arc::clone(upstream), name))
            }
            _ => Err(Refusal::NotFound(format!(
                "No prompt {} is served.",
                cut(served)
            ))),
        }
    }

    /// Each upstream's kept listing `entries` (of those that have what `has` picks), the entries
    /// the policy allows by `key`, rewritten by `serve`.
    async fn listed(
        &self,
        has: impl Fn(Has) -> bool,
        entries: impl Fn(&Listing) -> &[Value],
        key: &str,
        serve: impl Fn(&Upstream, &str) -> String,
    ) -> Vec<Value> {
        self.listed_as(has, entries, key, serve, |_, _| {}).await
    }

    /// As [`Upstreams::listed`], each entry served further by `serve_entry`.
    async fn listed_as(
        &self,
        has: impl Fn(Has) -> bool,
        entries: impl Fn(&Listing) -> &[Value],
        key: &str,
        serve: impl Fn(&Upstream, &str) -> String,
        serve_entry: impl Fn(&Upstream, &mut Value),
    ) -> Vec<Value> {
        let upstreams = self.upstreams();
        let asked: Vec<_> = upstreams
            .iter()
            .filter(|upstream| has(Self::has(upstream)))
            .collect();
        let listings = join_all(
            asked
                .iter()
                .map(|upstream| upstream.kept.get(|last| Self::list(upstream, last))),
        )
        .await;
        let mut all = Vec::new();
        for (upstream, listing) in asked.into_iter().zip(listings) {
            for entry in entries(&listing) {
                let Some(name) = entry.get(key).and_then(Value::as_str) else {
                    continue;
                };
                if !self.allowed(upstream, name) {
                    continue;
                }
                let served = serve(upstream, name);
                let mut entry = entry.clone();
                entry[key] = Value::String(served);
                serve_entry(upstream, &mut entry);
                all.push(entry);
            }
        }
        all
    }

    /// The URIs of `upstream`'s skill entry's files served, as the entry's own `uri` is. Their
    /// digests and sizes stay as the source wrote them: the files are read through as they are.
    fn serve_skill_files(upstream: &Upstream, skill: &mut Value) {
        let Some(Value::Array(files)) = skill.get_mut("resources") else {
            return;
        };
        for file in files {
            if let Some(Value::String(uri)) = file.get_mut("uri") {
                *uri = Self::served_uri(upstream, uri);
            }
        }
    }

    /// The `uri` of each block of `contents` (a read's contents, a prompt's messages' resources)
    /// served.
    fn serve_uris(upstream: &Upstream, value: &mut Value) {
        if !upstream.prefixed {
            return;
        }
        match value {
            Value::Object(object) => {
                for (key, inner) in object.iter_mut() {
                    match inner {
                        Value::String(uri) if key == "uri" => {
                            *uri = served_uri(&upstream.name, uri);
                        }
                        Value::Object(_) | Value::Array(_) if key != "_meta" => {
                            Self::serve_uris(upstream, inner);
                        }
                        _ => {}
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    Self::serve_uris(upstream, item);
                }
            }
            _ => {}
        }
    }

    fn offer(&self) -> Offer {
        let mut offer = Offer::none();
        let upstreams = self.upstreams();
        let any =
            |pick: fn(Has) -> bool| upstreams.iter().any(|upstream| pick(Self::has(upstream)));
        let own = self.own_skills.is_some();
        if own || any(|has| has.resources) {
            offer = offer.with_resources(any(|has| has.resources && has.subscribe));
        }
        if any(|has| has.prompts) {
            offer = offer.with_prompts();
        }
        if any(|has| has.completions) {
            offer = offer.with_completions();
        }
        if own || any(|has| has.resources && has.skills) {
            offer = offer.with_skills();
        }
        if any(|has| has.events) || !self.inbox.is_empty() {
            offer = offer.with_events();
        }
        offer.with_list_changed(self.watched, self.watched)
    }
}

/// What `list` answers, if it is asked (`has`).
/// How long [`Upstreams::named`] waits for the sources' lists.
const NAMED_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

async fn asked_if<T>(has: bool, list: impl std::future::Future<Output = T>) -> Option<T> {
    if has { Some(list.await) } else { None }
}

/// Whether an answer says the upstream has no such method.
fn lacks<T>(answer: &Result<T, ToolSourceError>) -> bool {
    matches!(answer, Err(error) if matches!(error.reason, Reason::Unsupported { .. }))
}

/// What the client reads of an upstream's failure.
fn refusal(error: &ToolSourceError) -> Refusal {
    match &error.reason {
        Reason::NotFound { description } => Refusal::NotFound(description.clone()),
        Reason::InvalidInput { .. } => Refusal::InvalidParams(error.reason.description().into()),
        Reason::Unsupported { description } => Refusal::Unsupported(description.clone()),
        _ => Refusal::Failed(error.to_string()),
    }
}

/// A served value echoed in a refusal, cut.
fn cut(value: &str) -> String {
    let mut cut: String = value.chars().take(200).collect();
    if cut.len() < value.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

impl Resources for Upstreams {
    fn offer(&self) -> Offer {
        Upstreams::offer(self)
    }

    fn may_subscribe(&self, uri: &str) -> Result<(), Refusal> {
        self.route_uri(uri).map(|_| ())
    }

    fn seen_by(&self, principal: &Principal) -> Option<Arc<dyn Resources>> {
        let policy = self.policy();
        if !policy.is_personal() {
            return None;
        }
        Some(Arc::new(Self {
            view: policy.view(principal),
            ..self.clone()
        }))
    }

    fn updated(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        Some(self.updates.subscribe())
    }

    fn list_changed(&self) -> Option<tokio::sync::broadcast::Receiver<ListChanged>> {
        self.watched.then(|| self.list_changes.subscribe())
    }

    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async {
            let mut listed = match &self.own_skills {
                Some(own) => own.list_resources().await?,
                None => Vec::new(),
            };
            listed.extend(
                self.listed(
                    |has| has.resources,
                    |listing| &listing.resources,
                    "uri",
                    Self::served_uri,
                )
                .await,
            );
            Ok(listed)
        })
    }

    fn list_skills(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async {
            let mut listed = match &self.own_skills {
                Some(own) => own.list_skills().await?,
                None => Vec::new(),
            };
            listed.extend(
                self.listed_as(
                    |has| has.resources && has.skills,
                    |listing| &listing.skills,
                    "uri",
                    Self::served_uri,
                    Self::serve_skill_files,
                )
                .await,
            );
            Ok(listed)
        })
    }

    fn get_skill<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Value, Refusal>> {
        Box::pin(async move {
            if let Some(own) = self.own(async |own| own.get_skill(uri).await).await {
                return own;
            }
            let not_served = || Refusal::InvalidParams(format!("No skill {} is served.", cut(uri)));
            let (upstream, upstream_uri) = self.route_uri(uri).map_err(|_| not_served())?;
            if !Self::has(&upstream).skills {
                return Err(not_served());
            }
            let got = self
                .metrics
                .requested(
                    &upstream.name,
                    "skills/get",
                    upstream.mcp.get_skill(&upstream_uri),
                )
                .await
                .map_err(|error| match error.reason {
                    Reason::NotFound { .. } | Reason::InvalidInput { .. } => not_served(),
                    _ => refusal(&error),
                })?;
            let mut skill =
                serde_json::to_value(&got).map_err(|error| Refusal::Failed(error.to_string()))?;
            if let Some(Value::String(served)) = skill.get_mut("uri") {
                *served = Self::served_uri(&upstream, served);
            }
            Self::serve_skill_files(&upstream, &mut skill);
            Ok(skill)
        })
    }

    fn list_events(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async { Ok(self.served_events().await) })
    }

    fn poll_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(self.served_poll(params, asker))
    }

    fn stream_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventFeed, Refusal>> {
        Box::pin(self.served_stream(params, asker))
    }

    fn subscribe_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(self.served_subscribe(params, asker))
    }

    fn unsubscribe_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            self.event_deliveries
                .unsubscribe(&params, events::authenticated(asker).as_deref())
        })
    }

    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async {
            Ok(self
                .listed(
                    |has| has.resources,
                    |listing| &listing.templates,
                    "uriTemplate",
                    Self::served_uri,
                )
                .await)
        })
    }

    fn read_resource<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move { self.read_resource_for(uri, &CallContext::new()).await })
    }

    fn read_resource_for<'a>(
        &'a self,
        uri: &'a str,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            if let Some(own) = self.own(async |own| own.read_resource(uri).await).await {
                return own;
            }
            let (upstream, uri) = self.route_uri(uri)?;
            let input: JsonObject = [("uri".to_owned(), Value::String(uri.clone()))]
                .into_iter()
                .collect();
            let open = self
                .begin(asker, Kind::ResourceRead, &upstream, &uri, &input)
                .await;
            let read = self
                .metrics
                .requested(
                    &upstream.name,
                    "resources/read",
                    upstream.mcp.read_resource(&uri),
                )
                .await;
            if let Some(open) = open {
                open.end(outcome_label(&read));
            }
            let read = read.map_err(|error| refusal(&error))?;
            let mut read = Value::Object(read);
            if let Some(contents) = read.get_mut("contents") {
                Self::serve_uris(&upstream, contents);
            }
            match read {
                Value::Object(read) => Ok(read),
                _ => Err(Refusal::Failed("the read is no object".into())),
            }
        })
    }

    fn subscribe<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let (upstream, uri) = self.route_uri(uri)?;
            self.metrics
                .requested(
                    &upstream.name,
                    "resources/subscribe",
                    upstream.mcp.subscribe_resource(&uri),
                )
                .await
                .map_err(|error| refusal(&error))
        })
    }

    fn unsubscribe<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let (upstream, uri) = self.route_uri(uri)?;
            self.metrics
                .requested(
                    &upstream.name,
                    "resources/unsubscribe",
                    upstream.mcp.unsubscribe_resource(&uri),
                )
                .await
                .map_err(|error| refusal(&error))
        })
    }

    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async {
            Ok(self
                .listed(
                    |has| has.prompts,
                    |listing| &listing.prompts,
                    "name",
                    |upstream, name| {
                        if upstream.prefixed {
                            served_prompt(&upstream.name, name)
                        } else {
                            name.to_owned()
                        }
                    },
                )
                .await)
        })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: JsonObject,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            self.get_prompt_for(name, arguments, &CallContext::new())
                .await
        })
    }

    fn get_prompt_for<'a>(
        &'a self,
        name: &'a str,
        arguments: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            let (upstream, name) = self.route_prompt(name)?;
            let open = self
                .begin(asker, Kind::PromptGet, &upstream, &name, &arguments)
                .await;
            let got = self
                .metrics
                .requested(
                    &upstream.name,
                    "prompts/get",
                    upstream.mcp.get_prompt(&name, arguments),
                )
                .await;
            if let Some(open) = open {
                open.end(outcome_label(&got));
            }
            let got = got.map_err(|error| refusal(&error))?;
            let mut got = Value::Object(got);
            if let Some(messages) = got.get_mut("messages") {
                Self::serve_uris(&upstream, messages);
            }
            match got {
                Value::Object(got) => Ok(got),
                _ => Err(Refusal::Failed("the prompt is no object".into())),
            }
        })
    }

    fn complete(&self, mut params: JsonObject) -> BoxFuture<'_, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            let reference = params.get("ref").cloned().unwrap_or(Value::Null);
            let (upstream, upstream_ref) = match reference["type"].as_str() {
                Some("ref/prompt") => {
                    let (upstream, name) =
                        self.route_prompt(reference["name"].as_str().unwrap_or_default())?;
                    (upstream, json!({"type": "ref/prompt", "name": name}))
                }
                Some("ref/resource") => {
                    let (upstream, uri) =
                        self.route_uri(reference["uri"].as_str().unwrap_or_default())?;
                    (upstream, json!({"type": "ref/resource", "uri": uri}))
                }
                _ => {
                    return Err(Refusal::InvalidParams(
                        "The ref is neither a ref/prompt nor a ref/resource.".into(),
                    ));
                }
            };
            params.insert("ref".into(), upstream_ref);
            let completed = self.metrics.requested(
                &upstream.name,
                "completion/complete",
                upstream.mcp.complete(params),
            );
            match completed.await {
                Ok(completed) => Ok(completed),
                // An upstream that does not complete suggests nothing.
                Err(error) if matches!(error.reason, Reason::Unsupported { .. }) => Ok(json!({
                    "completion": {"values": [], "hasMore": false}
                })
                .as_object()
                .cloned()
                .unwrap_or_default()),
                Err(error) => Err(refusal(&error)),
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
