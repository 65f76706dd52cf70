//! A session's `tools/call`, the same whichever way it reached the server: [`ToolCalls`], what
//! a call needs of its session's handler, shared by rmcp's handler (`handler.rs`) and the calls
//! served past rmcp's session worker (`http/direct_calls.rs`); and [`Answered`], the one form of
//! its answer — rmcp's typed result, or an upstream's result as its server wrote it.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ProgressToken, ProtocolVersion,
};
#[allow(deprecated)] // logging: deprecated by SEP-2577, still spoken by the session revisions
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize as _;
use serde_json::Value;

use crate::asker::{asked_by, principal_of};
use crate::client_approval::{Askable, ClientApproval};
use crate::failure::{Remediation, echo, message};
use crate::progress_queue::ProgressQueue;
use crate::relay::ClientRelay;
use crate::served::ServedToolkit;
use crate::told::{self, ProgressSent};
use toolkit_core::context::Relay;
use toolkit_core::{ApprovalRequest, CallContext, Failure, JsonObject, Progress, Verdict};

/// Who is asked about a call of a tool that needs approval.
#[derive(Clone, Debug, Default)]
pub(crate) enum Approval {
    /// Nobody here: every call runs, the client having asked its person (the default).
    #[default]
    Trusted,
    /// The host's own approver ([`McpServer::approver`](crate::McpServer::approver)).
    Host(CallContext),
    /// The call's client, through elicitation
    /// ([`McpServer::approval_by_client`](crate::McpServer::approval_by_client)).
    ByClient,
}

/// What one session's calls run with: the served toolkit, who approves, who hears the verdicts,
/// and the log level its client set. Cloned from the session's handler
/// ([`Handler::calls`](crate::handler::Handler::calls)); it holds nothing that keeps the session
/// alive.
#[derive(Clone, Debug)]
pub(crate) struct ToolCalls {
    pub(crate) toolkit: ServedToolkit,
    /// Who is asked about a call of a tool that needs approval.
    pub(crate) approval: Approval,
    /// Told of each verdict ([`McpServer::on_verdict`](crate::McpServer::on_verdict)).
    pub(crate) verdicts: Option<crate::observed_approver::Verdicts>,
    /// The least severe log the session's client wants (`logging/setLevel`).
    #[allow(deprecated)]
    pub(crate) level: Arc<Mutex<Option<LoggingLevel>>>,
}

/// A call's answer, in one of its two forms.
#[derive(Debug)]
pub(crate) enum Answered {
    /// The result made here (a tool's value, a failure, an output that broke its schema).
    Typed(CallToolResult),
    /// An upstream's result as its server wrote it (`json`), with rmcp's reading of it
    /// (`typed`), for a path that can only answer rmcp's type.
    Written {
        typed: CallToolResult,
        json: JsonObject,
    },
}

impl ToolCalls {
    /// Calls the tool `request` names for the client of `context`: its progress and logs told
    /// on the way, what its upstream asks relayed to that client, and a call the client cancels
    /// (`context.ct`) stopped.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answered, ErrorData> {
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
            self.call_context(progress.clone(), relay, askable),
            &context.extensions,
        );
        // A call the client cancels (`notifications/cancelled`, or an HTTP request it dropped)
        // stops: its future is dropped, which stops the tool's work.
        let call = tool.call_outcome(input, &call_context);
        tokio::pin!(call);
        let mut told = ProgressSent::default();
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                event = progress.next() => {
                    self.tell(context, token.as_ref(), &mut told, &event).await;
                }
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("The call was cancelled.", None));
                }
            }
        };
        // What was told while the answer was being made goes before it.
        while let Some(event) = progress.try_next() {
            self.tell(context, token.as_ref(), &mut told, &event).await;
        }
        if let Some((typed, json)) = outcome.written.and_then(as_written) {
            return Ok(Answered::Written { typed, json });
        }
        let result = match outcome.answer {
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
        Ok(Answered::Typed(result))
    }

    /// What a call runs with: its approver ([`Approval`]), the progress callback, and the relay
    /// of what an upstream asks the client (and of what the approver asks it: what it can be
    /// asked is `askable`).
    fn call_context(
        &self,
        progress: ProgressQueue,
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
                    crate::observed_approver::Observed::new(Arc::clone(approver), verdicts.clone());
                context.shared_approver(Arc::new(observed))
            }
            _ => context,
        };
        context
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

/// An upstream's result shaped for a client of the revision 2026-07-28 on (`current`) or of an
/// earlier one, as rmcp shapes its typed result: `resultType` is `complete` unless the upstream
/// said otherwise, and an earlier client gets none of `complete`. `None` when the typed result is
/// to be served instead: structured content that is no object, which an earlier client cannot
/// take (rmcp moves it into the content).
pub(crate) fn written_for(mut result: JsonObject, current: bool) -> Option<JsonObject> {
    if current {
        result
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".to_owned()));
        return Some(result);
    }
    if result.get("resultType").and_then(Value::as_str) == Some("complete") {
        result.remove("resultType");
    }
    match result.get("structuredContent") {
        None | Some(Value::Object(_) | Value::Null) => Some(result),
        Some(_) => None,
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
