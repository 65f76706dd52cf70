//! A prefixed MCP source's tool results with the URIs of their resources served as the gateway
//! serves its resources: [`ResultUris`].
//!
//! The gateway serves a prefixed source's resources under URIs of its own
//! ([`served_uri`](super::served_names::served_uri)); a result's resource link
//! (`{"type": "resource_link", "uri"}`) or embedded resource (`{"type": "resource", "resource":
//! {"uri"}}`) names the upstream's URI, which a client reading it back through the gateway
//! could not read. So those two URIs of each content block are served as the resource is, in
//! the answer and in the result passed on as written ([`Outcome::edit_blocks`]); nothing else of
//! a result changes (structured content is data, whatever its keys).

use std::sync::Arc;

use serde_json::Value;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, ToolDefinition, ToolSource, ToolSourceError,
};

use super::served_names::served_uri;

/// The source `inner`, whose results' resource URIs are served under `source`'s name.
pub(crate) struct ResultUris {
    inner: Arc<dyn ToolSource>,
}

impl ResultUris {
    /// `inner`, its results' URIs served under its name.
    pub(crate) fn new(inner: Arc<dyn ToolSource>) -> Self {
        Self { inner }
    }

    /// The inner source's call, its blocks' URIs served (in the answer, and in the result as
    /// written when `written`).
    async fn served(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        let mut outcome = self
            .inner
            .call_keeping_written(tool, input, context, written)
            .await;
        let source = self.inner.name();
        outcome.edit_blocks(|blocks| serve_blocks(source, blocks));
        outcome
    }
}

impl ToolSource for ResultUris {
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
        Box::pin(async move { self.served(tool, input, context, false).await.answer })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(self.served(tool, input, context, true))
    }
}

/// The URIs of `blocks`' resource links and embedded resources, served under `source`.
fn serve_blocks(source: &str, blocks: &mut [Value]) {
    for block in blocks {
        let uri = match block.get("type").and_then(Value::as_str) {
            Some("resource_link") => block.get_mut("uri"),
            Some("resource") => block
                .get_mut("resource")
                .and_then(|resource| resource.get_mut("uri")),
            _ => None,
        };
        if let Some(Value::String(uri)) = uri {
            *uri = served_uri(source, uri);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn links_and_embedded_resources_are_served_and_nothing_else() {
        let mut blocks = vec![
            json!({"type": "text", "text": "see", "uri": "demo://text"}),
            json!({"type": "resource_link", "uri": "demo://resource/1", "name": "one"}),
            json!({"type": "resource", "resource": {"uri": "file:///tmp/a", "text": "a"}}),
            json!({"type": "resource_link", "uri": 7}),
            json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
        ];
        serve_blocks("everything", &mut blocks);
        assert_eq!(
            blocks,
            vec![
                json!({"type": "text", "text": "see", "uri": "demo://text"}),
                json!({"type": "resource_link", "uri": "demo://everything/resource/1", "name": "one"}),
                json!({"type": "resource", "resource": {"uri": "file://everything//tmp/a", "text": "a"}}),
                json!({"type": "resource_link", "uri": 7}),
                json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
            ]
        );
    }
}
