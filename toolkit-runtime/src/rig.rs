//! A toolkit as [rig](https://docs.rs/rig-core) tools (feature `rig`, rig-core 0.44).
//!
//! [`tools`] gives one [`DynamicTool`] per tool of a toolkit — every tool of an assembly, or a
//! presentation of it ([`ToolSearch`](crate::search::ToolSearch)'s two tools, [`CodeMode`]'s `execute`)
//! — for a rig agent (`AgentBuilder::dynamic_tools`). A call goes through the toolkit exactly as
//! [`Toolkit::answer`] does: the input checked against the tool's JSON Schema, the host's
//! [`Approver`](toolkit_core::Approver) asked about a call that needs approval, progress told to the
//! host, and an `execute_tool` span. What the model reads is the same text too: the tool's JSON,
//! or the failure's `{code, message, retryable, isFailure}`, which rig gets as a failed result
//! (a declined approval as a refusal) so its hooks and telemetry see it failed.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolkit_runtime::{approval::ApprovalRequest, CallContext, Tool, ToolDefinition, Toolkit, approval::Verdict, toolkit::Approval};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let schema = json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] });
//! let definition = ToolDefinition::new("weather", schema.as_object().cloned().unwrap_or_default()).unwrap();
//! let weather = Tool::new(definition, Approval::Never, Arc::new(|input, _context| {
//!     Box::pin(async move { Ok(json!({ "city": input["city"], "sky": "clear" })) })
//! }));
//! let toolkit = Toolkit::from_tools([weather]).unwrap();
//!
//! let context = CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve });
//! let tools = toolkit_runtime::rig::tools(&toolkit, &context);
//! // An agent takes them: `AgentBuilder::new(model).dynamic_tools(tools).build()`.
//! let answer = tools[0].execute(json!({ "city": "Oslo" })).await.unwrap();
//! assert_eq!(answer.render(), r#"{"city":"Oslo","sky":"clear"}"#);
//! let refused = tools[0].execute(json!({})).await.unwrap_err();
//! assert!(refused.model_output().render().contains("InvalidInputError"));
//! # });
//! ```
//!
//! [`CodeMode`]: https://docs.rs/toolkit-runtime/latest/toolkit_runtime/struct.CodeMode.html

use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolErrorKind, ToolExecutionError, ToolOutput};
use serde_json::Value;

use toolkit_core::approval::APPROVAL_DECLINED;
use toolkit_core::model::Answer;
use toolkit_core::{CallContext, Failure, Tool, Toolkit};

/// Every tool of `toolkit`, in order, as a rig [`DynamicTool`] whose calls go through the
/// toolkit with `context` (its approver and progress callback).
pub fn tools(toolkit: &Toolkit, context: &CallContext) -> Vec<DynamicTool> {
    toolkit
        .tools()
        .filter_map(|tool| self::tool(tool, context))
        .collect()
}

/// One tool as a rig [`DynamicTool`] whose calls go through it with `context`; `None` for a
/// tool with an empty name (which no definition has).
pub fn tool(tool: &Tool, context: &CallContext) -> Option<DynamicTool> {
    let definition = tool.definition();
    let name = ToolName::new(definition.name()).ok()?;
    let description = definition.description.clone().unwrap_or_default();
    let parameters = Value::Object(definition.input_schema().clone());
    let (tool, context) = (tool.clone(), context.clone());
    Some(DynamicTool::new(
        name,
        description,
        parameters,
        move |arguments| {
            let (tool, context) = (tool.clone(), context.clone());
            Box::pin(async move { rig_outcome(tool.call_with(arguments, &context).await) })
        },
    ))
}

/// A call's outcome as rig takes it: the text the OpenAI-style adapter sends back, as the output
/// or as the failure's model output.
fn rig_outcome(outcome: Result<Value, Failure>) -> Result<ToolOutput, ToolExecutionError> {
    match outcome {
        Ok(value) => Ok(ToolOutput::text(Answer::of(Ok(value)).content)),
        Err(failure) => Err(rig_error(failure)),
    }
}

/// A failure as a rig error: its kind from the failure's code, the model's text unchanged.
fn rig_error(failure: Failure) -> ToolExecutionError {
    let error = if failure.code == APPROVAL_DECLINED {
        ToolExecutionError::refused(failure.message.clone())
    } else {
        let kind = match failure.code.as_str() {
            "InvalidInputError" => ToolErrorKind::InvalidArgs,
            "NotFoundError" => ToolErrorKind::NotFound,
            "AuthenticationError" => ToolErrorKind::PermissionDenied,
            "UnavailableError" => ToolErrorKind::Network,
            "Timeout" => ToolErrorKind::Timeout,
            _ => ToolErrorKind::Other,
        };
        ToolExecutionError::new(kind, failure.message.clone())
    };
    let code = failure.code.clone();
    let retryable = failure.retryable;
    let text = Answer::of(Err(failure)).content;
    error
        .with_code(code)
        .with_retryable(retryable)
        .with_model_output(ToolOutput::text(text))
}
