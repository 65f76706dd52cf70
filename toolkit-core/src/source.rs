//! The one shape of every kind of source: [`ToolSource`].
//!
//! A tool source is a system that tells which tools it has and runs them: an MCP server, an HTTP
//! API, a set of hand-written functions. [`Toolkit::from_source`](crate::Toolkit::from_source)
//! builds from one the toolkit a model calls; [`Assembly`](crate::Assembly) builds one toolkit
//! from many.

use serde_json::Value;

use crate::{BoxFuture, CallContext, JsonObject, Outcome, ToolDefinition, ToolSourceError};

/// What every kind of tool source implements: its name, the tools it has now, and how to run one.
///
/// The trait is object-safe: sources are shared as `Arc<dyn ToolSource>`. Dropping a future it
/// returns must stop the work it started (abort the request, end the process's wait).
///
/// # Examples
///
/// A source of one tool that answers with its input:
///
/// ```
/// use serde_json::{json, Value};
/// use toolkit_core::{BoxFuture, CallContext, JsonObject, Reason, ToolDefinition, ToolSource, ToolSourceError};
///
/// struct Echo;
///
/// impl ToolSource for Echo {
///     fn name(&self) -> &str {
///         "echo"
///     }
///
///     fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
///         Box::pin(async {
///             let schema = json!({ "type": "object" }).as_object().cloned().unwrap_or_default();
///             Ok(vec![ToolDefinition::new("echo", schema).map_err(|e| {
///                 ToolSourceError::new("echo", Reason::invalid_response(e.to_string()))
///             })?])
///         })
///     }
///
///     fn call<'a>(&'a self, tool: &'a str, input: JsonObject, _context: &'a CallContext)
///         -> BoxFuture<'a, Result<Value, ToolSourceError>> {
///         Box::pin(async move {
///             match tool {
///                 "echo" => Ok(Value::Object(input)),
///                 _ => Err(ToolSourceError::new("echo", Reason::not_found(format!("no tool {tool}")))),
///             }
///         })
///     }
/// }
/// ```
pub trait ToolSource: Send + Sync + 'static {
    /// Names the source, such as `github`. Its failures carry the name, and an assembly tells its
    /// tools apart from other sources' by it.
    fn name(&self) -> &str;

    /// Asks the source which tools it has now. This is for the catalog a host refreshes; building
    /// a toolkit never calls it.
    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>>;

    /// Runs the tool `tool` (as `discover` names it) with `input`, an object that matches the
    /// tool's parameters, and returns what the tool answers.
    ///
    /// `context` is what the call carries: where its progress goes, the name the model knows the
    /// tool by, and [`Extensions`](crate::context::Extensions) a server that serves the call
    /// shares with the source (what it relays). A source that needs none of it
    /// ignores it.
    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>>;

    /// Runs the tool as [`call`](Self::call) does, and gives beside the answer the result its
    /// server wrote, when the answer was made of one ([`Outcome`]), for a server that passes it
    /// on (the gateway).
    ///
    /// By default `call`'s answer, with nothing written. An MCP source gives its server's result.
    /// A source that wraps another must forward the inner source's (else a server that serves
    /// the wrapper passes on only the answer), editing it as it edits the answer, or dropping it
    /// when the answer is no longer the result's; its `answer` is what `call` would give.
    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(async move { Outcome::from(self.call(tool, input, context).await) })
    }
}

impl dyn ToolSource {
    /// [`call_outcome`](ToolSource::call_outcome) when `written`, else [`call`](ToolSource::call)'s
    /// answer with nothing written: what a source that wraps another runs, so that the inner
    /// source keeps its server's result only for a caller that passes it on.
    pub async fn call_keeping_written(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        if written {
            self.call_outcome(tool, input, context).await
        } else {
            Outcome::from(self.call(tool, input, context).await)
        }
    }
}
