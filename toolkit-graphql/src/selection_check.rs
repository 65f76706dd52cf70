//! [`SelectionCheck`]: a [`ToolSource`] around the one that sends schema-mode tools (the
//! runtime's `HttpSource`), which validates a `selection` the model wrote against the schema
//! before any request.
//!
//! Why a wrapper and not a hook in the request template: the template is data (stored in a
//! catalog, embedded by the generator), and its fill, in toolkit-openapi, parses no GraphQL;
//! validating needs the schema and apollo-compiler at call time, which this crate has and the
//! runtime need not. The arrows stay: this crate names only the core's `ToolSource`, never the
//! runtime. Without the wrapper a selection still cannot leave its field (the fill refuses
//! braces that do not pair) and the server validates it; with it, an invalid one is refused here,
//! with the compiler's words, and no request is made.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use apollo_compiler::ExecutableDocument;
use serde_json::Value;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, Reason, ToolDefinition, ToolSource,
    ToolSourceError,
};
use toolkit_openapi::operations::{GraphqlRequest, Operation};

use crate::problem::Problem;
use crate::schema::GraphqlSchema;

/// A source whose GraphQL tools' `selection`s are validated against a schema before the inner
/// source sends them.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use toolkit_core::{CallContext, FnSource, ToolSource};
/// use toolkit_graphql::{GraphqlSchema, ReadOptions, SelectionCheck, read_schema_tools};
///
/// let schema = GraphqlSchema::read("type Query { user: User } type User { name: String }", "s.graphql")?;
/// let read = read_schema_tools(&schema, &ReadOptions::default());
/// # let inner: Arc<dyn ToolSource> = Arc::new(FnSource::builder("api").build()?);
/// let checked = SelectionCheck::new(inner, &schema, &read.operations);
/// let input = serde_json::json!({ "selection": "nope" }).as_object().cloned().unwrap_or_default();
/// let refused = futures_lite_block_on(checked.call("user", input, &CallContext::default()));
/// # fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let waker = std::task::Waker::noop();
/// #     let mut f = std::pin::pin!(f);
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut std::task::Context::from_waker(&waker)) { return v; } }
/// # }
/// assert!(refused.unwrap_err().model_message().contains("nope"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SelectionCheck {
    inner: Arc<dyn ToolSource>,
    schema: GraphqlSchema,
    /// The GraphQL request of each tool that takes a selection, by name.
    requests: HashMap<String, GraphqlRequest>,
}

impl fmt::Debug for SelectionCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectionCheck")
            .field("source", &self.inner.name())
            .field("tools", &self.requests.len())
            .finish_non_exhaustive()
    }
}

impl SelectionCheck {
    /// `inner`, the source that sends `operations`, with their selections checked against
    /// `schema`.
    pub fn new(
        inner: Arc<dyn ToolSource>,
        schema: &GraphqlSchema,
        operations: &[Operation],
    ) -> Self {
        let requests = operations
            .iter()
            .filter_map(|operation| {
                let graphql = operation.request.graphql.as_ref()?;
                graphql.selection.as_ref()?;
                Some((operation.name().to_owned(), graphql.clone()))
            })
            .collect();
        Self {
            inner,
            schema: schema.clone(),
            requests,
        }
    }

    /// The model's message when `input`'s selection for `tool` does not validate.
    fn check(&self, tool: &str, input: &JsonObject) -> Result<(), String> {
        let Some(request) = self.requests.get(tool) else {
            return Ok(());
        };
        let Some(place) = &request.selection else {
            return Ok(());
        };
        let Some(Value::String(selection)) = input.get(&place.property) else {
            return Ok(());
        };
        let query = request.query_for(Some(selection))?;
        match ExecutableDocument::parse_and_validate(
            self.schema.schema(),
            query,
            "selection.graphql",
        ) {
            Ok(_) => Ok(()),
            Err(invalid) => {
                let problems = Problem::from_diagnostics("selection", &invalid.errors);
                let words: Vec<&str> = problems
                    .iter()
                    .map(|problem| problem.message.as_str())
                    .collect();
                Err(format!(
                    "The property {:?} does not fit the schema: {}",
                    place.property,
                    words.join("; ")
                ))
            }
        }
    }
}

impl ToolSource for SelectionCheck {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        self.inner.discover()
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        if let Err(message) = self.check(tool, &input) {
            let error = ToolSourceError::new(self.inner.name(), Reason::invalid_input(message));
            return Box::pin(async move { Err(error) });
        }
        self.inner.call(tool, input, context)
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        if let Err(message) = self.check(tool, &input) {
            let error = ToolSourceError::new(self.inner.name(), Reason::invalid_input(message));
            return Box::pin(async move { Outcome::from(Err(error)) });
        }
        self.inner.call_outcome(tool, input, context)
    }
}
