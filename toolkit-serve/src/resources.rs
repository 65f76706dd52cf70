//! What a server serves beside its tools: [`Resources`] — resources, resource templates, prompts
//! and completion — given by the host ([`McpServer::resources`](super::McpServer::resources)),
//! and how the handler answers `resources/*`, `prompts/*` and `completion/complete` with it.
//!
//! A host (the gateway) passes its upstreams' answers on as they wrote them, as JSON; here they
//! become rmcp's types, an entry rmcp cannot read left out of its listing (and logged) rather than
//! failing the whole listing.
//!
//! Its parts: the session clients told the host's lists changed ([`list_changes`]); a
//! session's resource subscriptions ([`subscriptions`]) and who is subscribed to each URI across
//! sessions ([`subscribers`]); a host's own skills folder ([`skill_folder`]); URIs over 4 KiB
//! refused wherever one enters ([`uri_bound`]).

pub(crate) mod list_changes;
pub(crate) mod skill_folder;
pub(crate) mod subscribers;
pub(crate) mod subscriptions;
pub(crate) mod uri_bound;

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    GetSkillRequestParams, GetSkillResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, Prompt, ReadResourceRequestParams, ReadResourceResult,
    Resource, ResourceTemplate, SKILLS_EXTENSION_ID, Skill,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use toolkit_core::context::Principal;
use toolkit_core::{BoxFuture, CallContext, JsonObject};

/// What a server offers beside its tools, as its capabilities say (`resources`, with
/// `subscribe`; `prompts`; `completions`): a method of what is not offered is `-32601`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Offer {
    /// `resources/list`, `resources/templates/list`, `resources/read`.
    pub resources: bool,
    /// `resources/subscribe` and `resources/unsubscribe`.
    pub subscribe: bool,
    /// `prompts/list`, `prompts/get`.
    pub prompts: bool,
    /// `completion/complete`.
    pub completions: bool,
    /// `resources.listChanged`: the host tells when its resources change
    /// ([`Resources::list_changed`]).
    pub resources_list_changed: bool,
    /// `prompts.listChanged`: the host tells when its prompts change
    /// ([`Resources::list_changed`]).
    pub prompts_list_changed: bool,
    /// `skills/list` and `skills/get` (the skills extension, SEP-2640, declared under
    /// `capabilities.extensions`): the skills' files are among the resources.
    pub skills: bool,
    /// `events/list` and `events/poll` (the events extension, SEP-3415, declared under
    /// `capabilities.extensions`).
    pub events: bool,
}

impl Offer {
    /// Nothing offered.
    pub fn none() -> Self {
        Self::default()
    }

    /// With resources (`subscribe` too when `subscribe`).
    #[must_use]
    pub fn with_resources(mut self, subscribe: bool) -> Self {
        self.resources = true;
        self.subscribe = subscribe;
        self
    }

    /// With prompts.
    #[must_use]
    pub fn with_prompts(mut self) -> Self {
        self.prompts = true;
        self
    }

    /// With skills ([`Resources::list_skills`], [`Resources::get_skill`]); offered only with
    /// resources, which serve their files.
    #[must_use]
    pub fn with_skills(mut self) -> Self {
        self.skills = true;
        self
    }

    /// With events ([`Resources::list_events`], [`Resources::poll_events`]).
    #[must_use]
    pub fn with_events(mut self) -> Self {
        self.events = true;
        self
    }

    /// With completion.
    #[must_use]
    pub fn with_completions(mut self) -> Self {
        self.completions = true;
        self
    }

    /// Telling when the resources change (`resources`) and when the prompts do (`prompts`):
    /// `listChanged` advertised for those offered already (call it after
    /// [`Offer::with_resources`] and [`Offer::with_prompts`]). The host is to tell each change
    /// on [`Resources::list_changed`].
    #[must_use]
    pub fn with_list_changed(mut self, resources: bool, prompts: bool) -> Self {
        self.resources_list_changed = resources && self.resources;
        self.prompts_list_changed = prompts && self.prompts;
        self
    }
}

/// Which list of the host's changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListChanged {
    /// The resources or resource templates (`notifications/resources/list_changed`).
    Resources,
    /// The prompts (`notifications/prompts/list_changed`).
    Prompts,
}

/// Why a request of [`Resources`] is refused, as its client reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No such resource or prompt (`-32002` for a resource, as the spec says; `-32602` for a
    /// prompt).
    NotFound(String),
    /// The request's params are refused (`-32602`).
    InvalidParams(String),
    /// The method is not served (`-32601`).
    Unsupported(String),
    /// Anything else, such as an upstream that did not answer (`-32603`).
    Failed(String),
    /// An extension's own error, its code and `data` as the extension defines them (the events
    /// extension's `-32023` to `-32027`).
    Coded {
        /// The JSON-RPC error code.
        code: i32,
        /// The message.
        message: String,
        /// The error's `data`.
        data: Option<Value>,
    },
}

/// The resources, resource templates, prompts and completion a server serves beside its tools,
/// each answer as the MCP result writes it (JSON). Every method is asked at each request (the
/// host may change what it serves live); [`Resources::offer`] at each `initialize` and
/// `server/discover`.
pub trait Resources: std::fmt::Debug + Send + Sync + 'static {
    /// What is served, for the capabilities.
    fn offer(&self) -> Offer;

    /// The `resources` of `resources/list`.
    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>>;

    /// The `resourceTemplates` of `resources/templates/list`.
    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>>;

    /// The result of `resources/read` for `uri` (`contents`).
    fn read_resource<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<JsonObject, Refusal>>;

    /// The result of `resources/read` for `uri`, asked by the caller `asker` describes (its
    /// [`Principal`](toolkit_core::context::Principal) and, in a session, its
    /// [`Session`](toolkit_core::context::Session)): what a server calls. By default
    /// [`Resources::read_resource`], for a host that does not care who asks.
    fn read_resource_for<'a>(
        &'a self,
        uri: &'a str,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        let _ = asker;
        self.read_resource(uri)
    }

    /// `resources/subscribe` for `uri`.
    fn subscribe<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>>;

    /// `resources/unsubscribe` for `uri`.
    fn unsubscribe<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>>;

    /// The `prompts` of `prompts/list`.
    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>>;

    /// The result of `prompts/get` for `name` with `arguments` (`messages`).
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: JsonObject,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>>;

    /// The result of `prompts/get` for `name` with `arguments`, asked by the caller `asker`
    /// describes (as [`Resources::read_resource_for`]): what a server calls. By default
    /// [`Resources::get_prompt`].
    fn get_prompt_for<'a>(
        &'a self,
        name: &'a str,
        arguments: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        let _ = asker;
        self.get_prompt(name, arguments)
    }

    /// The result of `completion/complete` for its params as written (`completion`).
    fn complete(&self, params: JsonObject) -> BoxFuture<'_, Result<JsonObject, Refusal>>;

    /// The `skills` of `skills/list`: each skill's entry (`uri`, `frontmatter`, `resources`)
    /// when [`Resources::offer`] offers skills. None by default.
    fn list_skills(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// The `skill` of `skills/get` for the skill whose `SKILL.md` is `uri`;
    /// [`Refusal::InvalidParams`] for a skill not served. Refused by default.
    fn get_skill<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Value, Refusal>> {
        Box::pin(async move { Err(Refusal::InvalidParams(format!("No skill {uri} is served."))) })
    }

    /// The `events` of `events/list`: each event type (`name`, `description`, `inputSchema`,
    /// `payloadSchema`, `delivery`) when [`Resources::offer`] offers events. None by default.
    fn list_events(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// The result of `events/poll` for its params as written (`name`, `arguments`, `cursor`,
    /// …), asked by the caller `asker` describes. Refused by default.
    fn poll_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        let _ = (params, asker);
        Box::pin(async { Err(Refusal::Unsupported("events/poll is not served".into())) })
    }

    /// A push subscription for `events/stream` with its params as written (`name`,
    /// `arguments`, `cursor`, …): the notifications to send the client (`notifications/events/*`,
    /// each its method and params), in order, until the channel closes; the server adds the
    /// subscription's id to each and closes the request then, or when the client cancels it
    /// (dropping the receiver, which the host takes as the end of the subscription). Refused by
    /// default.
    fn stream_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventFeed, Refusal>> {
        let _ = (params, asker);
        Box::pin(async { Err(Refusal::Unsupported("events/stream is not served".into())) })
    }

    /// The result of `events/subscribe` for its params as written (`name`, `arguments`,
    /// `delivery` with the callback's `url` and `secret`, `cursor`, `ttlMs`), asked by the caller
    /// `asker` describes: the host delivers the events to the callback, signed. Refused by
    /// default.
    fn subscribe_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        let _ = (params, asker);
        Box::pin(async {
            Err(Refusal::Unsupported(
                "events/subscribe is not served".into(),
            ))
        })
    }

    /// The result of `events/unsubscribe` for its params as written (`name`, `arguments`,
    /// `delivery.url`): the asker's webhook subscription ended. Refused by default.
    fn unsubscribe_events<'a>(
        &'a self,
        params: JsonObject,
        asker: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        let _ = (params, asker);
        Box::pin(async {
            Err(Refusal::Unsupported(
                "events/unsubscribe is not served".into(),
            ))
        })
    }

    /// The URIs (as served) the host's resources change, for the sessions subscribed to them
    /// (`notifications/resources/updated`); `None` (the default) when the host tells none.
    fn updated(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        None
    }

    /// Whether the resource `uri` (as served) may be subscribed to here: `Err` with the refusal
    /// otherwise (one these resources do not serve, to the person [`Resources::seen_by`] says).
    /// Every URI by default.
    fn may_subscribe(&self, uri: &str) -> Result<(), Refusal> {
        let _ = uri;
        Ok(())
    }

    /// What `principal` is shown of these resources, templates and prompts, and may read and
    /// get, when it depends on who they are (a gateway's policy naming people); `None` (the
    /// default): the same as everyone.
    fn seen_by(&self, principal: &Principal) -> Option<Arc<dyn Resources>> {
        let _ = principal;
        None
    }

    /// The host's lists that change ([`ListChanged`]), for the clients
    /// told of them (`notifications/resources/list_changed`, `notifications/prompts/list_changed`)
    /// when [`Resources::offer`] says so; `None` (the default) when the host tells none.
    fn list_changed(&self) -> Option<tokio::sync::broadcast::Receiver<ListChanged>> {
        None
    }
}

/// The host's resources of a server, or none.
pub(crate) type Hosted = Option<Arc<dyn Resources>>;

/// What the client reads of a refusal, for a request about a resource (`resource`) or not.
pub(crate) fn error(refusal: Refusal, resource: bool) -> ErrorData {
    match refusal {
        Refusal::NotFound(words) if resource => ErrorData::resource_not_found(words, None),
        Refusal::NotFound(words) | Refusal::InvalidParams(words) => {
            ErrorData::invalid_params(words, None)
        }
        Refusal::Unsupported(words) => {
            ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, words, None)
        }
        Refusal::Failed(words) => ErrorData::internal_error(words, None),
        Refusal::Coded {
            code,
            message,
            data,
        } => ErrorData::new(rmcp::model::ErrorCode(code), message, data),
    }
}

/// The host's resources when they offer what `offered` picks, else `-32601` for `method`.
fn offering<'a>(
    hosted: &'a Hosted,
    offered: impl Fn(Offer) -> bool,
    method: &str,
) -> Result<&'a dyn Resources, ErrorData> {
    match hosted {
        Some(resources) if offered(resources.offer()) => Ok(resources.as_ref()),
        _ => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("{method} is not served"),
            None,
        )),
    }
}

/// Each entry as rmcp's type; one it cannot read is left out (and logged).
fn entries<T: DeserializeOwned>(items: Vec<Value>, what: &str) -> Vec<T> {
    items
        .into_iter()
        .filter_map(|item| match serde_json::from_value(item) {
            Ok(entry) => Some(entry),
            Err(error) => {
                tracing::warn!(%error, "a {what} is left out of the listing");
                None
            }
        })
        .collect()
}

/// A result as rmcp's type, or a failure naming `method`.
fn result<T: DeserializeOwned>(result: JsonObject, method: &str) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(result)).map_err(|error| {
        ErrorData::internal_error(
            format!("the answer to {method} cannot be served: {error}"),
            None,
        )
    })
}

/// `resources/list`.
pub(crate) async fn list_resources(hosted: &Hosted) -> Result<ListResourcesResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.resources, "resources/list")?;
    let items = resources
        .list_resources()
        .await
        .map_err(|refusal| error(refusal, true))?;
    Ok(ListResourcesResult::with_all_items(entries::<Resource>(
        items, "resource",
    )))
}

/// A custom request's params as an object, `_meta` left out (none: an empty object).
pub(crate) fn params_object(params: Option<Value>) -> Result<JsonObject, ErrorData> {
    let mut params = match params {
        Some(Value::Object(params)) => params,
        None | Some(Value::Null) => JsonObject::new(),
        Some(_) => return Err(ErrorData::invalid_params("params must be an object", None)),
    };
    params.remove("_meta");
    Ok(params)
}

/// What a push subscription sends its client: each notification's method and params.
pub type EventFeed = tokio::sync::mpsc::Receiver<(String, JsonObject)>;

/// The `_meta` key that ties a push notification to its subscription (the request's id).
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `events/stream`: the host's feed sent to the client as notifications, each tied to the
/// request's id, until the feed ends or the client cancels the request; then the request's empty
/// result.
pub(crate) async fn stream_events(
    hosted: &Hosted,
    params: Option<Value>,
    asker: &CallContext,
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> Result<Value, ErrorData> {
    let resources = offering(hosted, |offer| offer.events, "events/stream")?;
    let params = params_object(params)?;
    let mut feed = resources
        .stream_events(params, asker)
        .await
        .map_err(|refusal| error(refusal, false))?;
    let id = serde_json::to_value(&context.id).unwrap_or(Value::Null);
    loop {
        let next = tokio::select! {
            () = context.ct.cancelled() => break,
            next = feed.recv() => next,
        };
        let Some((method, mut params)) = next else {
            break;
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(meta) = meta {
            meta.insert(SUBSCRIPTION_ID.to_owned(), id.clone());
        }
        let notification = rmcp::model::ServerNotification::CustomNotification(
            rmcp::model::CustomNotification::new(method, Some(Value::Object(params))),
        );
        if context.peer.send_notification(notification).await.is_err() {
            break;
        }
    }
    Ok(serde_json::json!({ "resultType": "complete" }))
}

/// The events extension's identifier (SEP-3415).
pub const EVENTS_EXTENSION: &str = "io.modelcontextprotocol/events";

/// `events/list`, `events/poll`, `events/subscribe` and `events/unsubscribe`, answered for the
/// host's events, or `None` for another method.
pub(crate) async fn events(
    hosted: &Hosted,
    method: &str,
    params: Option<Value>,
    asker: &CallContext,
) -> Option<Result<Value, ErrorData>> {
    if !matches!(
        method,
        "events/list" | "events/poll" | "events/subscribe" | "events/unsubscribe"
    ) {
        return None;
    }
    let resources = match offering(hosted, |offer| offer.events, method) {
        Ok(resources) => resources,
        Err(error) => return Some(Err(error)),
    };
    let params = match params_object(params) {
        Ok(params) => params,
        Err(error) => return Some(Err(error)),
    };
    let answered = match method {
        "events/list" => resources
            .list_events()
            .await
            .map(|events| serde_json::json!({ "events": events, "resultType": "complete" })),
        "events/poll" => resources
            .poll_events(params, asker)
            .await
            .map(Value::Object),
        "events/subscribe" => resources
            .subscribe_events(params, asker)
            .await
            .map(Value::Object),
        _ => resources
            .unsubscribe_events(params, asker)
            .await
            .map(Value::Object),
    };
    Some(answered.map_err(|refusal| error(refusal, false)))
}

/// `skills/list`: every skill in one page; an entry that is no loadable skill is left out (and
/// logged).
pub(crate) async fn list_skills(hosted: &Hosted) -> Result<ListSkillsResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.skills, "skills/list")?;
    let items = resources
        .list_skills()
        .await
        .map_err(|refusal| error(refusal, false))?;
    let skills = entries::<Skill>(items, "skill")
        .into_iter()
        .filter(|skill| match skill.validate() {
            Ok(()) => true,
            Err(problem) => {
                tracing::warn!(uri = %skill.uri, %problem, "a skill is left out of the listing");
                false
            }
        })
        .collect();
    Ok(ListSkillsResult::with_all_items(skills))
}

/// `skills/get`.
pub(crate) async fn get_skill(
    hosted: &Hosted,
    request: &GetSkillRequestParams,
) -> Result<GetSkillResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.skills, "skills/get")?;
    crate::resources::uri_bound::checked(&request.uri)?;
    let skill = resources
        .get_skill(&request.uri)
        .await
        .map_err(|refusal| error(refusal, false))?;
    let skill: Skill = serde_json::from_value(skill).map_err(|problem| {
        ErrorData::internal_error(format!("the skill cannot be served: {problem}"), None)
    })?;
    Ok(GetSkillResult::new(skill))
}

/// `resources/templates/list`.
pub(crate) async fn list_resource_templates(
    hosted: &Hosted,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.resources, "resources/templates/list")?;
    let items = resources
        .list_resource_templates()
        .await
        .map_err(|refusal| error(refusal, true))?;
    Ok(ListResourceTemplatesResult::with_all_items(entries::<
        ResourceTemplate,
    >(
        items,
        "resource template",
    )))
}

/// `resources/read`.
pub(crate) async fn read_resource(
    hosted: &Hosted,
    request: &ReadResourceRequestParams,
    asker: &CallContext,
) -> Result<ReadResourceResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.resources, "resources/read")?;
    crate::resources::uri_bound::checked(&request.uri)?;
    let read = resources
        .read_resource_for(&request.uri, asker)
        .await
        .map_err(|refusal| error(refusal, true))?;
    result(read, "resources/read")
}

/// The host's resources when they offer `subscribe`, else `-32601` for `method`
/// (`resources/subscribe`, `resources/unsubscribe`).
pub(crate) fn subscribing<'a>(
    hosted: &'a Hosted,
    method: &str,
) -> Result<&'a dyn Resources, ErrorData> {
    offering(hosted, |offer| offer.subscribe, method)
}

/// `prompts/list`.
pub(crate) async fn list_prompts(hosted: &Hosted) -> Result<ListPromptsResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.prompts, "prompts/list")?;
    let items = resources
        .list_prompts()
        .await
        .map_err(|refusal| error(refusal, false))?;
    Ok(ListPromptsResult::with_all_items(entries::<Prompt>(
        items, "prompt",
    )))
}

/// `prompts/get`.
pub(crate) async fn get_prompt(
    hosted: &Hosted,
    request: GetPromptRequestParams,
    asker: &CallContext,
) -> Result<GetPromptResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.prompts, "prompts/get")?;
    let got = resources
        .get_prompt_for(&request.name, request.arguments.unwrap_or_default(), asker)
        .await
        .map_err(|refusal| error(refusal, false))?;
    result(got, "prompts/get")
}

/// `completion/complete`.
pub(crate) async fn complete(
    hosted: &Hosted,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let resources = offering(hosted, |offer| offer.completions, "completion/complete")?;
    if let rmcp::model::Reference::Resource(reference) = &request.r#ref {
        crate::resources::uri_bound::checked(&reference.uri)?;
    }
    let Ok(Value::Object(mut params)) = serde_json::to_value(request) else {
        return Err(ErrorData::invalid_params(
            "the completion/complete params cannot be read",
            None,
        ));
    };
    params.remove("_meta");
    let completed = resources
        .complete(params)
        .await
        .map_err(|refusal| error(refusal, false))?;
    result(completed, "completion/complete")
}

/// The capabilities of `hosted`'s offer, added to `capabilities`.
pub(crate) fn advertise(hosted: &Hosted, capabilities: &mut rmcp::model::ServerCapabilities) {
    let Some(resources) = hosted else {
        return;
    };
    let offer = resources.offer();
    if offer.resources {
        let mut capability = rmcp::model::ResourcesCapability::default();
        capability.subscribe = offer.subscribe.then_some(true);
        capability.list_changed = offer.resources_list_changed.then_some(true);
        capabilities.resources = Some(capability);
    }
    if offer.prompts {
        let mut capability = rmcp::model::PromptsCapability::default();
        capability.list_changed = offer.prompts_list_changed.then_some(true);
        capabilities.prompts = Some(capability);
    }
    if offer.completions {
        capabilities.completions = Some(JsonObject::new());
    }
    if offer.events {
        capabilities
            .extensions
            .get_or_insert_default()
            .insert(EVENTS_EXTENSION.to_owned(), JsonObject::new());
    }
    if offer.skills && offer.resources {
        capabilities
            .extensions
            .get_or_insert_default()
            .insert(SKILLS_EXTENSION_ID.to_owned(), JsonObject::new());
    }
}
