//! [`Audited`]: a source whose every call is recorded in the audit.

use std::sync::Arc;

use serde_json::Value;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, ToolDefinition, ToolSource, ToolSourceError,
};
use toolkit_runtime::resilience::{Answered, Layer};

use super::{Audit, Entry, Kind};
use crate::metrics::reason_label;

/// A source whose calls are recorded in `audit`, each allowed or approved as its context says.
pub(crate) struct Audited {
    inner: Arc<dyn ToolSource>,
    audit: Audit,
}

impl Audited {
    pub(crate) fn new(inner: Arc<dyn ToolSource>, audit: Audit) -> Self {
        Self { inner, audit }
    }

    /// The call, recorded; with its server's result as written when `written`.
    async fn recorded(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        let source = self.inner.name();
        let open = self
            .audit
            .begin(Entry {
                context,
                kind: Kind::ToolCall,
                source,
                name: tool,
                input: &input,
            })
            .await;
        let called = self
            .inner
            .call_keeping_written(tool, input, context, written)
            .await;
        let layer = context
            .extension::<Answered>()
            .and_then(Answered::layer)
            .map(Layer::as_str);
        open.end_answered(outcome_label(&called.answer), layer);
        called
    }
}

impl ToolSource for Audited {
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
        Box::pin(async move { self.recorded(tool, input, context, false).await.answer })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(self.recorded(tool, input, context, true))
    }
}

/// The label of `answer`'s outcome in the audit: `ok`, or its failure's reason.
pub(crate) fn outcome_label<T>(answer: &Result<T, ToolSourceError>) -> &'static str {
    match answer {
        Ok(_) => "ok",
        Err(error) => reason_label(error),
    }
}
