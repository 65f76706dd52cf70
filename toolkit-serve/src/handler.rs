//! rmcp's [`ServerHandler`] over a [`ServedToolkit`]: `tools/list`, `tools/call` (an MCP
//! source's result passed on as its server wrote it, its progress and logs relayed, what its
//! server asks the client relayed),
//! `logging/setLevel`, and the notifications of a replaced toolkit; `resources/*`, `prompts/*`
//! and `completion/complete` answered by the host's [`Resources`](super::Resources), when it
//! gave some (`resources.rs`).

use std::borrow::Cow;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetSkillRequestParams, GetSkillResult, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProgressToken, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool as McpTool, UnsubscribeRequestParams,
};
#[allow(deprecated)] // logging: deprecated by SEP-2577, still spoken by the session revisions
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize as _;
use serde_json::Value;

use super::asker::{asked_by, principal_of};
use super::client_approval::{Askable, ClientApproval};
use super::failure::{Remediation, echo, message};
use super::progress_queue::ProgressQueue;
use super::relay::ClientRelay;
use super::resources;
use super::served::ServedToolkit;
use super::told::{self, ProgressSent};
use crate::stdio::written_result;
use toolkit_core::context::{Clients, Joined, Relay, Written};
use toolkit_core::{ApprovalRequest, CallContext, Failure, JsonObject, Progress, Verdict};

/// What a server says of itself.
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    /// The revisions served; every one rmcp knows when `None`.
    pub(crate) versions: Option<Vec<ProtocolVersion>>,
}

/// Who is asked about a call of a tool that needs approval.
#[derive(Clone, Debug, Default)]
pub(crate) enum Approval {
    /// Nobody here: every call runs, the client having asked its person (the default).
    #[default]
    Trusted,
    /// The host's own approver ([`McpServer::approver`](super::McpServer::approver)).
    Host(CallContext),
    /// The call's client, through elicitation
    /// ([`McpServer::approval_by_client`](super::McpServer::approval_by_client)).
    ByClient,
}

/// One server's handler; one for each session ([`Handler::for_session`]: they share the served
/// toolkit).
#[derive(Clone, Debug)]
pub(crate) struct Handler {
    pub(crate) toolkit: ServedToolkit,
    pub(crate) identity: Arc<Identity>,
    /// Who is asked about a call of a tool that needs approval.
    pub(crate) approval: Approval,
    /// Told of each verdict ([`McpServer::on_verdict`](super::McpServer::on_verdict)).
    pub(crate) verdicts: Option<super::observed_approver::Verdicts>,
    /// The least severe log the session's client wants (`logging/setLevel`); every log until it
    /// sets one.
    #[allow(deprecated)]
    pub(crate) level: Arc<Mutex<Option<LoggingLevel>>>,
    /// What the host serves beside the tools (resources, prompts, completion).
    pub(crate) resources: resources::Hosted,
    /// What the host does with a client's tasks (`tasks.rs`).
    pub(crate) tasks: super::tasks::Hosted,
    /// The session's resource subscriptions (`resources/subscriptions.rs`).
    pub(crate) subscriptions: Arc<crate::resources::subscriptions::Subscriptions>,
    /// Who is subscribed to each resource, across the server's sessions (`resources/subscribers.rs`).
    pub(crate) subscribers: Arc<crate::resources::subscribers::Subscribers>,
    /// The clients of the server's sessions, when the host gave them.
    pub(crate) clients: Option<Arc<Clients>>,
    /// Set at the session's first `notifications/initialized`: its client among `clients`.
    pub(crate) joined: Arc<OnceLock<Option<Joined>>>,
    /// Set at the session's first `notifications/initialized` (a session that never says it is
    /// closed early: `http/session_owners.rs`).
    pub(crate) initialized: Arc<AtomicBool>,
    /// The tasks this session's client created (`tasks/owners.rs`).
    pub(crate) task_owners: Arc<crate::tasks::owners::TaskOwners>,
    /// Cancelled when the session ends (`http/session_end.rs`).
    pub(crate) ended: Arc<crate::http::session_end::SessionEnd>,
}

impl ServerHandler for Handler {
    #[allow(deprecated)] // logging: see the import
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        resources::advertise(&self.resources, &mut capabilities);
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.identity.name.clone(),
            self.identity.version.clone(),
        ));
        match &self.identity.instructions {
            Some(instructions) => info.with_instructions(instructions.clone()),
            None => info,
        }
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match &self.identity.versions {
            Some(versions) => Cow::Owned(versions.clone()),
            None => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = self.toolkit.served_to(&principal_of(&context.extensions));
        let mut listed =
            ListToolsResult::with_all_items(served.listing.values().cloned().collect());
        self.hint(&mut listed.ttl_ms, &mut listed.cache_scope);
        Ok(listed)
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        // rmcp checks a call's `Mcp-Param-*` headers against the tool it gets here.
        self.toolkit.served().listing.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let any_structure = context
            .protocol_version()
            .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let principal = principal_of(&context.extensions);
        let served = self.toolkit.served_to(&principal);
        let Some(tool) = served.toolkit.get(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", echo(&request.name)),
                None,
            ));
        };
        let input = Value::Object(request.arguments.unwrap_or_default());
        // A client that gave a progress token is told the call's progress (an upstream server's,
        // the tools a code-mode run calls) as `notifications/progress`; every client is told the
        // logs an upstream server writes on the call's stream, from the level it set.
        let token = context.meta.get_progress_token();
        // Each report would carry a copy of it (and over HTTP keep one): a long one is refused.
        if token.as_ref().is_some_and(told::too_long) {
            return Err(ErrorData::invalid_params(
                format!(
                    "The progress token is longer than {} bytes of JSON.",
                    told::MAX_TOKEN_BYTES
                ),
                None,
            ));
        }
        // Bounded while the client does not read it (`progress_queue.rs`).
        let progress = ProgressQueue::default();
        let written = Arc::new(Written::default());
        // What an upstream asks while the call runs goes to this client, until the call ends.
        let stop = context.ct.child_token();
        let _stop_when_done = stop.clone().drop_guard();
        let relay: Arc<dyn Relay> = Arc::new(ClientRelay::new(
            context.peer.clone(),
            context.id.clone(),
            stop,
        ));
        let peer_info = context.peer.peer_info();
        let askable = Askable::of(
            context.protocol_version().as_ref(),
            peer_info.as_ref().map(|info| &info.capabilities),
        );
        let call_context = asked_by(
            self.call_context(progress.clone(), Arc::clone(&written), relay, askable),
            &context.extensions,
        );
        // A call the client cancels (`notifications/cancelled`, or an HTTP request it dropped)
        // stops: its future is dropped, which stops the tool's work.
        let call = tool.call_with(input, &call_context);
        tokio::pin!(call);
        let mut told = ProgressSent::default();
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                event = progress.next() => {
                    self.tell(&context, token.as_ref(), &mut told, &event).await;
                }
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("The call was cancelled.", None));
                }
            }
        };
        // What was told while the answer was being made goes before it.
        while let Some(event) = progress.try_next() {
            self.tell(&context, token.as_ref(), &mut told, &event).await;
        }
        if let Some((result, as_written)) = written.take_for(&outcome).and_then(as_written) {
            written_result::keep(&context, as_written);
            return Ok(result.into());
        }
        let result = match outcome {
            Ok(value) => match served
                .outputs
                .get(request.name.as_ref())
                .map(|check| check.check(&value))
            {
                Some(Err(text)) => CallToolResult::error(vec![ContentBlock::text(text)]),
                Some(Ok(())) | None => success(value, any_structure),
            },
            Err(failure) => CallToolResult::error(vec![ContentBlock::text(shaped(&failure))]),
        };
        Ok(result.into())
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner) = Some(request.level);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut listed = resources::list_resources(&self.resources_to(&context)).await?;
        self.hint(&mut listed.ttl_ms, &mut listed.cache_scope);
        Ok(listed)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut listed = resources::list_resource_templates(&self.resources_to(&context)).await?;
        self.hint(&mut listed.ttl_ms, &mut listed.cache_scope);
        Ok(listed)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let asker = asked_by(CallContext::new(), &context.extensions);
        resources::read_resource(&self.resources_to(&context), &request, &asker)
            .await
            .map(Into::into)
    }

    #[allow(deprecated)] // resources/subscribe: spoken by the session revisions
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // What the person may not read, they are not told of either.
        if let Some(seen) = self.resources_to(&context)
            && let Err(refusal) = seen.may_subscribe(&request.uri)
        {
            return Err(resources::error(refusal, true));
        }
        self.subscriptions
            .subscribe(&request.uri, &context.peer)
            .await
    }

    #[allow(deprecated)] // resources/unsubscribe: spoken by the session revisions
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.unsubscribe(&request.uri).await
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let mut listed = resources::list_skills(&self.resources_to(&context)).await?;
        self.hint_always(&mut listed.ttl_ms, &mut listed.cache_scope);
        Ok(listed)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let mut got = resources::get_skill(&self.resources_to(&context), &request).await?;
        self.hint_always(&mut got.ttl_ms, &mut got.cache_scope);
        Ok(got)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut listed = resources::list_prompts(&self.resources_to(&context)).await?;
        self.hint(&mut listed.ttl_ms, &mut listed.cache_scope);
        Ok(listed)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let asker = asked_by(CallContext::new(), &context.extensions);
        resources::get_prompt(&self.resources_to(&context), request, &asker)
            .await
            .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        resources::complete(&self.resources_to(&context), &request).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // Over HTTP, the layer keeps what the session speaks of tasks until the session ends.
        if let Some(kept) = crate::http::as_written::AsWritten::of(&context) {
            kept.session_end(self.ended.token(), Arc::clone(&self.initialized));
        }
        self.declare_sketch_events(&context);
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, ErrorData> {
        self.declare_sketch_events(&context);
        Ok(rmcp::model::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method.starts_with("events/") {
            let asker = asked_by(CallContext::new(), &context.extensions);
            let hosted = self.resources_to(&context);
            if request.method == "events/stream" {
                return resources::stream_events(&hosted, request.params, &asker, &context)
                    .await
                    .map(CustomResult::new);
            }
            if let Some(answered) =
                resources::events(&hosted, &request.method, request.params.clone(), &asker).await
            {
                return answered.map(CustomResult::new);
            }
        }
        match super::tasks::answer(
            self,
            &self.toolkit,
            &self.tasks,
            &self.task_owners,
            &self.ended.token(),
            &request,
            context,
        )
        .await
        {
            Some(answered) => answered,
            None => Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            )),
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.initialized.store(true, Ordering::Release);
        let mut first = false;
        self.joined.get_or_init(|| {
            first = true;
            let principal = principal_of(&context.extensions);
            self.clients.as_ref().map(|clients| {
                clients.join(
                    Arc::new(ClientRelay::for_session(
                        context.peer.clone(),
                        self.ended.token(),
                    )),
                    principal,
                )
            })
        });
        // A client that says it again starts nothing twice.
        if !first {
            return;
        }
        crate::resources::list_changes::tell(
            &self.resources,
            context.peer.clone(),
            self.ended.token(),
        );
        self.toolkit.add_peer(context.peer);
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if let Some(clients) = &self.clients {
            clients.roots_changed();
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        crate::resources::subscriptions::accepted(requested, &self.resources)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        crate::resources::subscriptions::listen(
            &self.toolkit,
            &self.resources,
            &self.subscribers,
            context,
        )
        .await;
        Ok(())
    }
}

impl Handler {
    /// Puts the server's caching hints on a result whose hints the extension requires (a
    /// skills list, a skill): the host's when it said how long its lists stay fresh, else none
    /// kept (`ttlMs` 0) and for the asker only.
    fn hint_always(&self, ttl_ms: &mut Option<u64>, scope: &mut Option<rmcp::model::CacheScope>) {
        self.hint(ttl_ms, scope);
        if ttl_ms.is_none() {
            *ttl_ms = Some(0);
            *scope = Some(rmcp::model::CacheScope::Private);
        }
    }

    /// Puts the server's caching hints on a list it answers (SEP-2549), when the host said how
    /// long its lists stay fresh ([`ServedToolkit::cache_for`]): `private` while each person is
    /// served their own view, so that no cache hands one person's list to another.
    fn hint(&self, ttl_ms: &mut Option<u64>, scope: &mut Option<rmcp::model::CacheScope>) {
        if let Some(ttl) = self.toolkit.ttl_ms() {
            *ttl_ms = Some(ttl);
            *scope = Some(if self.toolkit.is_personal() {
                rmcp::model::CacheScope::Private
            } else {
                rmcp::model::CacheScope::Public
            });
        }
    }

    /// A handler for one more session: the same served toolkit and server-wide subscribers, a
    /// log level, subscriptions and end of its own.
    pub(crate) fn for_session(&self) -> Self {
        let ended = Arc::new(crate::http::session_end::SessionEnd::default());
        Self {
            level: Arc::default(),
            subscriptions: Arc::new(crate::resources::subscriptions::Subscriptions::new(
                Arc::clone(&self.subscribers),
                self.resources.clone(),
                ended.token(),
            )),
            joined: Arc::default(),
            initialized: Arc::default(),
            task_owners: Arc::default(),
            ended,
            ..self.clone()
        }
    }

    /// Over HTTP, has the answer to the request of `context` (an `initialize` or a
    /// `server/discover`) declare events at the top level of its capabilities too, when the host
    /// serves them (see `http/as_written.rs`).
    fn declare_sketch_events(&self, context: &RequestContext<RoleServer>) {
        let serves = self
            .resources
            .as_ref()
            .is_some_and(|resources| resources.offer().events);
        if serves && let Some(kept) = crate::http::as_written::AsWritten::of(context) {
            kept.held().sketch_events = true;
        }
    }

    /// The resources and prompts served to the sender of the request of `context`.
    fn resources_to(&self, context: &RequestContext<RoleServer>) -> resources::Hosted {
        let hosted = self.resources.as_ref()?;
        let principal = principal_of(&context.extensions);
        Some(
            hosted
                .seen_by(&principal)
                .unwrap_or_else(|| Arc::clone(hosted)),
        )
    }

    /// What a call runs with: its approver ([`Approval`]), the progress callback, the slot for
    /// an upstream's result, and the relay of what an upstream asks the client (and of what the
    /// approver asks it: what it can be asked is `askable`).
    fn call_context(
        &self,
        progress: ProgressQueue,
        written: Arc<Written>,
        relay: Arc<dyn Relay>,
        askable: Askable,
    ) -> CallContext {
        let context = match &self.approval {
            Approval::Host(approval) => approval.clone(),
            Approval::ByClient => CallContext::new().approver(ClientApproval { askable }),
            Approval::Trusted => {
                CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve })
            }
        };
        let context = match (&self.verdicts, context.approver_ref()) {
            (Some(verdicts), Some(approver)) => {
                let observed =
                    super::observed_approver::Observed::new(Arc::clone(approver), verdicts.clone());
                context.shared_approver(Arc::new(observed))
            }
            _ => context,
        };
        context
            .with_extension(written)
            .with_extension(relay)
            .progress(move |event| progress.push(event))
    }

    /// Tells the client of one event of a call: progress when it gave a token, a log when its
    /// level lets it through.
    async fn tell(
        &self,
        context: &RequestContext<RoleServer>,
        token: Option<&ProgressToken>,
        told: &mut ProgressSent,
        event: &Progress,
    ) {
        if let Progress::Logged {
            level,
            logger,
            data,
            ..
        } = event
        {
            self.log(context, level, logger.as_deref(), data).await;
        } else if let Some(token) = token {
            told::notify(context, token, told, event).await;
        }
    }

    /// Passes on an upstream's log, unless it is less severe than the client's level.
    #[allow(deprecated)]
    async fn log(
        &self,
        context: &RequestContext<RoleServer>,
        level: &str,
        logger: Option<&str>,
        data: &Value,
    ) {
        let Ok(level) = serde_json::from_value::<LoggingLevel>(Value::String(level.to_owned()))
        else {
            return;
        };
        let least = *self.level.lock().unwrap_or_else(PoisonError::into_inner);
        if least.is_some_and(|least| severity(level) < severity(least)) {
            return;
        }
        let mut note = LoggingMessageNotificationParam::new(level, data.clone());
        note.logger = logger.map(str::to_owned);
        if let Err(error) = context.peer.notify_logging_message(note).await {
            tracing::debug!(%error, "the client could not be told of a log");
        }
    }
}

/// How severe a log level is: `debug` 0 to `emergency` 7.
#[allow(deprecated)]
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The `_meta` keys of a result that describe the server that wrote it, not the tool's answer:
/// an upstream's are not passed on (the served call's client has the serving server's own).
const ABOUT_THE_SERVER: [&str; 1] = ["io.modelcontextprotocol/serverInfo"];

/// An upstream's result as written, as rmcp's result and as the JSON served in its place
/// ([`written_result`]); `None` when rmcp cannot read it (a block of a kind it does not know),
/// and the call is answered as any other. An upstream of a session revision writes no
/// `resultType`: it is `complete` (rmcp strips it again for such a client). What `_meta` says of
/// the upstream itself ([`ABOUT_THE_SERVER`]) is left out, and `_meta` with it when nothing else
/// is in it.
fn as_written(mut result: JsonObject) -> Option<(CallToolResult, JsonObject)> {
    if let Some(Value::Object(meta)) = result.get_mut("_meta") {
        for key in ABOUT_THE_SERVER {
            meta.remove(key);
        }
        if meta.is_empty() {
            result.remove("_meta");
        }
    }
    // Read from a borrow: the JSON is served as it is.
    let result = Value::Object(result);
    let mut typed = CallToolResult::deserialize(&result).ok()?;
    typed
        .result_type
        .get_or_insert(rmcp::model::ResultType::COMPLETE);
    match result {
        Value::Object(result) => Some((typed, result)),
        _ => None,
    }
}

/// A tool's answer as a result: the JSON as text (a string as itself), and as structured
/// content when the revision takes it (any value from 2026-07-28, an object before).
fn success(value: Value, any_structure: bool) -> CallToolResult {
    let text = match &value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    if !value.is_null() && (any_structure || value.is_object()) {
        result.structured_content = Some(value);
    }
    result
}

/// What a client reads of a failed call: the failure's message, shaped as seed 002 says (parts
/// trimmed, empty ones dropped; the runtime has already cut every echoed value).
pub(crate) fn shaped(failure: &Failure) -> String {
    let text = message(&failure.message, &Remediation::default());
    if text.is_empty() {
        "The tool failed.".to_owned()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn written(value: Value) -> Value {
        let (result, _) = as_written(value.as_object().cloned().unwrap()).unwrap();
        serde_json::to_value(result).unwrap()
    }

    #[test]
    fn an_upstreams_server_info_is_not_passed_on_and_the_rest_of_meta_is() {
        let info = json!({"name": "upstream", "version": "1"});
        let alone = written(json!({
            "content": [], "_meta": {"io.modelcontextprotocol/serverInfo": info}
        }));
        assert_eq!(alone.get("_meta"), None);
        let beside = written(json!({
            "content": [], "_meta": {"io.modelcontextprotocol/serverInfo": info, "trace": 7}
        }));
        assert_eq!(beside["_meta"], json!({"trace": 7}));
    }

    #[test]
    fn a_number_beyond_f64_keeps_its_digits() {
        let result = written(json!({
            "content": [{"type": "text", "text": "12345678901234567890"}],
            "structuredContent": {"id": 12_345_678_901_234_567_890_u64, "count": 1}
        }));
        assert_eq!(
            serde_json::to_string(&result["structuredContent"]).unwrap(),
            r#"{"id":12345678901234567890,"count":1}"#
        );
    }
}
