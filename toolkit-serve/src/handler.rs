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
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool as McpTool,
    UnsubscribeRequestParams,
};
#[allow(deprecated)] // logging: deprecated by SEP-2577, still spoken by the session revisions
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::asker::{asked_by, principal_of, session_of};
use super::relay::ClientRelay;
use super::resources;
use super::served::ServedToolkit;
use crate::stdio::written_result;
use crate::tool_calls::{Answered, Approval, ToolCalls};
use toolkit_core::CallContext;
use toolkit_core::context::{Clients, Joined};

/// What a server says of itself.
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    /// The revisions served; every one rmcp knows when `None`.
    pub(crate) versions: Option<Vec<ProtocolVersion>>,
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
    /// Over HTTP, where the session's plain calls are answered once its client is initialized
    /// (`http/direct_calls.rs`).
    pub(crate) direct: Option<Arc<crate::http::direct_calls::DirectSessions>>,
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
        match self.calls().call(request, &context).await? {
            Answered::Typed(result) => Ok(result.into()),
            Answered::Written { typed, json } => {
                written_result::keep(&context, json);
                Ok(typed.into())
            }
        }
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
        if let Some(direct) = &self.direct
            && let Some(session) = session_of(&context.extensions)
        {
            direct.join(
                session.id(),
                self.calls(),
                context.peer.clone(),
                self.ended.token(),
            );
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
    /// What this session's `tools/call` runs with.
    pub(crate) fn calls(&self) -> ToolCalls {
        ToolCalls {
            toolkit: self.toolkit.clone(),
            approval: self.approval.clone(),
            verdicts: self.verdicts.clone(),
            level: Arc::clone(&self.level),
        }
    }

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
}
