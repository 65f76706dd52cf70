//! [`Audited`]: a source whose every call is recorded in the audit.

use std::sync::Arc;

use serde_json::Value;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, ToolDefinition, ToolSource, ToolSourceError,
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
        Box::pin(async move {
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
            let answer = self.inner.call(tool, input, context).await;
            let layer = context
                .extension::<Answered>()
                .and_then(Answered::layer)
                .map(Layer::as_str);
            open.end_answered(outcome(&answer), layer);
            answer
        })
    }
}

/// The outcome of `answer`: `ok`, or its failure's reason.
pub(crate) fn outcome<T>(answer: &Result<T, ToolSourceError>) -> &'static str {
    match answer {
        Ok(_) => "ok",
        Err(error) => reason_label(error),
    }
}
