//! A toolkit as model APIs take it, and a model's tool call fed back.
//!
//! [`openai_tools`] and [`anthropic_tools`] give the `tools` array of an OpenAI-style (function
//! calling) and an Anthropic-style request. Strict mode is off: a source's parameters may leave
//! properties optional, which strict mode refuses. [`Toolkit::answer`] runs a call the model made
//! (its tool's name and its arguments as JSON text) and gives the text to send back.
//!
//! Above [`SEARCH_THRESHOLD`](crate::SEARCH_THRESHOLD) tools (17, measured; see
//! [`PresentationRule`](crate::PresentationRule)), a host shows the model a search tool and lets
//! the provider load the tools it finds: [`anthropic_deferred_tools`] and
//! [`anthropic_tool_references`] write Anthropic's `defer_loading` / `tool_reference` shapes,
//! [`openai_deferred_tools`], [`openai_tool_search`] and [`openai_tool_search_output`] OpenAI's
//! Responses API's (`deferred.rs`).
//!
//! A skill loaded from an MCP server (its `LoadedSkill`'s `Display` is its text) or any other
//! instructions go to the model as [`anthropic_instructions`] (a `system` block) or
//! [`openai_instructions`] (a `developer` message).
//!
//! ```
//! # use toolkit_core::{model, Toolkit};
//! # let toolkit = Toolkit::default();
//! let request = serde_json::json!({
//!     "model": "gpt-5",
//!     "tools": model::openai_tools(&toolkit),
//!     "messages": [{ "role": "user", "content": "What is due this week?" }],
//! });
//! ```

mod deferred;

use serde_json::{Value, json};

pub use deferred::{
    NOTHING_FOUND, anthropic_deferred_tools, anthropic_tool_references, openai_deferred_tools,
    openai_responses_tools, openai_tool_search, openai_tool_search_call, openai_tool_search_output,
};

use crate::text::cut_utf16;
use crate::{CallContext, Failure, JsonObject, ToolDefinition, Toolkit};

/// The toolkit as the `tools` of an OpenAI-style request: function tools, strict mode off.
pub fn openai_tools(toolkit: &Toolkit) -> Vec<Value> {
    toolkit
        .definitions()
        .map(|definition| {
            json!({
                "type": "function",
                "function": {
                    "name": definition.name(),
                    "description": definition.description.as_deref().unwrap_or_default(),
                    "parameters": definition.input_schema(),
                    "strict": false,
                }
            })
        })
        .collect()
}

/// The toolkit as the `tools` of an Anthropic-style request.
pub fn anthropic_tools(toolkit: &Toolkit) -> Vec<Value> {
    toolkit.definitions().map(anthropic_tool).collect()
}

/// One tool of an Anthropic-style request.
fn anthropic_tool(definition: &ToolDefinition) -> Value {
    json!({
        "name": definition.name(),
        "description": definition.description.as_deref().unwrap_or_default(),
        "input_schema": definition.input_schema(),
    })
}

/// Instructions (a loaded skill's text, say) as a block of an Anthropic-style request's `system`.
///
/// ```
/// # use toolkit_core::model;
/// let skill = "Skill pdf: Reading PDFs.\n\nUse pdftotext first.";
/// let request = serde_json::json!({
///     "model": "claude-sonnet-4-5",
///     "system": [model::anthropic_instructions(skill)],
///     "messages": [{ "role": "user", "content": "Summarise report.pdf" }],
/// });
/// assert_eq!(request["system"][0]["text"], skill);
/// ```
pub fn anthropic_instructions(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// Instructions (a loaded skill's text, say) as a `developer` message of an OpenAI-style
/// request, put before the person's.
///
/// ```
/// # use toolkit_core::model;
/// let skill = "Skill pdf: Reading PDFs.";
/// let messages = [
///     model::openai_instructions(skill),
///     serde_json::json!({ "role": "user", "content": "Summarise report.pdf" }),
/// ];
/// assert_eq!(messages[0]["role"], "developer");
/// ```
pub fn openai_instructions(text: &str) -> Value {
    json!({ "role": "developer", "content": text })
}

/// What goes back to the model for one tool call: the text of the result, and whether it is a
/// failure (Anthropic's `is_error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The result's JSON, or the failure's `{code, message, retryable, isFailure}`, as text.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
}

impl Answer {
    /// What goes back for a call's outcome.
    pub fn of(outcome: Result<Value, Failure>) -> Self {
        match outcome {
            Ok(value) => Self {
                content: value.to_string(),
                is_error: false,
            },
            Err(failure) => Self {
                content: failure.to_json().to_string(),
                is_error: true,
            },
        }
    }
}

/// The answer as a person reads it: the content, after `error: ` when the call failed.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{Failure, model::Answer};
///
/// assert_eq!(Answer::of(Ok(json!({"id": 1}))).to_string(), r#"{"id":1}"#);
/// let failed = Answer::of(Err(Failure::not_found("There is no tool named \"x\".")));
/// assert!(failed.to_string().starts_with(r#"error: {"code":"NotFoundError""#));
/// ```
impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_error {
            f.write_str("error: ")?;
        }
        f.write_str(&self.content)
    }
}

impl Toolkit {
    /// Runs a call a model made — the tool's name and its arguments as JSON text (empty text is
    /// `{}`) — and gives what to send back. It is [`Toolkit::call_with`]: a tool that needs
    /// approval for this input runs only once `context`'s approver approves (asked only once the
    /// input is known to be valid); a declined call is a failure the model reads, with the
    /// person's reason.
    ///
    /// ```
    /// use toolkit_core::{ApprovalRequest, CallContext, Toolkit, Verdict};
    ///
    /// # let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # runtime.block_on(async {
    /// let toolkit = Toolkit::default();
    /// let context = CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve });
    /// let answer = toolkit.answer("nope", "{}", &context.clone().call_id("call_1")).await;
    /// assert!(answer.is_error);
    /// assert!(answer.content.contains("NotFoundError"));
    /// # });
    /// ```
    pub async fn answer(&self, name: &str, arguments: &str, context: &CallContext) -> Answer {
        let input: Value = if arguments.trim().is_empty() {
            Value::Object(JsonObject::new())
        } else {
            match serde_json::from_str(arguments) {
                Ok(input) => input,
                Err(error) => {
                    return Answer::of(Err(Failure::invalid_input(cut_utf16(
                        &format!("The arguments are not JSON: {error}."),
                        2000,
                    ))));
                }
            }
        };
        Answer::of(self.call_with(name, input, context).await)
    }
}
