//! rmcp's [`ServerHandler`] over a [`ServedToolkit`]: `tools/list`, `tools/call`, and the
//! notifications of a replaced toolkit.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool as McpTool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::failure::{Remediation, echo, message};
use super::served::ServedToolkit;
use crate::{CallContext, Failure};

/// What a server says of itself.
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    /// The revisions served; every one rmcp knows when `None`.
    pub(crate) versions: Option<Vec<ProtocolVersion>>,
}

/// One server's handler; cloned for each HTTP session (clones share the served toolkit).
#[derive(Clone, Debug)]
pub(crate) struct Handler {
    pub(crate) toolkit: ServedToolkit,
    pub(crate) identity: std::sync::Arc<Identity>,
    /// The host's own approver, when it asks its person itself (else the client asked).
    pub(crate) approval: Option<CallContext>,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = self.toolkit.served();
        Ok(ListToolsResult::with_all_items(
            served.listing.values().cloned().collect(),
        ))
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
        let served = self.toolkit.served();
        let Some(tool) = served.toolkit.get(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", echo(&request.name)),
                None,
            ));
        };
        let input = Value::Object(request.arguments.unwrap_or_default());
        // A call the client cancels (`notifications/cancelled`, or an HTTP request it dropped)
        // stops: its future is dropped, which stops the tool's work.
        let call = async {
            match &self.approval {
                Some(context) => tool.call_with(input, context).await,
                None => tool.call(input).await,
            }
        };
        let outcome = tokio::select! {
            outcome = call => outcome,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("The call was cancelled.", None));
            }
        };
        let result = match outcome {
            Ok(value) => success(value, any_structure),
            Err(failure) => CallToolResult::error(vec![ContentBlock::text(shaped(&failure))]),
        };
        Ok(result.into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.toolkit.add_peer(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        (requested.tools_list_changed == Some(true))
            .then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.toolkit.changes();
        changes.mark_unchanged();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
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
