//! rmcp's [`ServerHandler`] over a [`ServedToolkit`]: `tools/list`, `tools/call`, and the
//! notifications of a replaced toolkit.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool as McpTool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::failure::{Remediation, echo, message};
use super::served::ServedToolkit;
use crate::{ApprovalRequest, CallContext, Failure, Progress, Verdict};

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
        // A client that gave a progress token is told the call's progress (an upstream server's,
        // the tools a code-mode run calls) as `notifications/progress`.
        let token = context.meta.get_progress_token();
        let (sender, mut progress) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        let call_context = self.call_context(token.is_some().then_some(sender));
        // A call the client cancels (`notifications/cancelled`, or an HTTP request it dropped)
        // stops: its future is dropped, which stops the tool's work.
        let call = async {
            match &call_context {
                Some(call_context) => tool.call_with(input, call_context).await,
                None => tool.call(input).await,
            }
        };
        tokio::pin!(call);
        let mut told = 0u32;
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                Some(event) = progress.recv(), if token.is_some() => {
                    if let Some(token) = &token {
                        told += 1;
                        notify(&context, token, told, &event).await;
                    }
                }
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("The call was cancelled.", None));
                }
            }
        };
        // What was told while the answer was being made goes before it.
        if let Some(token) = &token {
            while let Ok(event) = progress.try_recv() {
                told += 1;
                notify(&context, token, told, &event).await;
            }
        }
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

impl Handler {
    /// What a call runs with: the host's own approver (else every call approved: the client
    /// asked its person), and a progress callback when the client asked for progress.
    fn call_context(
        &self,
        progress: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
    ) -> Option<CallContext> {
        let context = match (&self.approval, &progress) {
            (Some(approval), _) => approval.clone(),
            (None, Some(_)) => {
                CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve })
            }
            (None, None) => return None,
        };
        Some(match progress {
            Some(sender) => context.progress(move |event| {
                let _ = sender.send(event);
            }),
            None => context,
        })
    }
}

/// Tells the client of one piece of a call's progress: the count so far, and what happened.
async fn notify(
    context: &RequestContext<RoleServer>,
    token: &ProgressToken,
    told: u32,
    event: &Progress,
) {
    let message = match event {
        Progress::Reported {
            progress,
            total,
            message,
            ..
        } => message.clone().unwrap_or_else(|| match total {
            Some(total) => format!("{progress} of {total}"),
            None => format!("{progress}"),
        }),
        Progress::CallStarted { called, .. } => format!("calls {called}"),
        Progress::CallEnded {
            called, failure, ..
        } => match failure {
            None => format!("{called} answered"),
            Some(code) => format!("{called} failed ({code})"),
        },
    };
    let mut note = ProgressNotificationParam::new(token.clone(), f64::from(told));
    note.message = Some(message);
    if let Err(error) = context.peer.notify_progress(note).await {
        tracing::debug!(%error, "the client could not be told of progress");
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
