//! [`Mcp`]'s resources: `resources/list`, `resources/templates/list`, `resources/read`,
//! `resources/subscribe` and `resources/unsubscribe`, over every transport the source has.

use serde_json::{Map, Value, json};

use super::resources_updated::ResourcesUpdated;
use super::source::Mcp;
use toolkit_core::{JsonObject, Reason, ToolSourceError};

impl Mcp {
    /// The server's resources as it lists them (every page of `resources/list`): objects with
    /// `uri`, `name` and what else the server wrote (`mimeType`, `_meta`, ...).
    ///
    /// # Errors
    ///
    /// [`Unsupported`](Reason::Unsupported) when the server has no resources (`-32601`), else as
    /// [`ToolSource::discover`](toolkit_core::ToolSource::discover).
    pub async fn list_resources(&self) -> Result<Vec<Value>, ToolSourceError> {
        self.every_page("resources/list", "resources").await
    }

    /// The server's resource templates (every page of `resources/templates/list`): objects with
    /// `uriTemplate`, `name` and what else the server wrote.
    ///
    /// # Errors
    ///
    /// As [`Mcp::list_resources`].
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, ToolSourceError> {
        self.every_page("resources/templates/list", "resourceTemplates")
            .await
    }

    /// The result of `resources/read` for `uri`, as the server wrote it (`contents`, each with
    /// its `uri`, `mimeType` and `text` or `blob`, and `_meta`): an MCP App's
    /// `text/html;profile=mcp-app` document comes back byte for byte.
    ///
    /// # Errors
    ///
    /// A resource the server does not have (`-32002`, `-32602`) is
    /// [`NotFound`](Reason::NotFound); an answer larger than
    /// [`max_response_bytes`](super::McpOptions::max_response_bytes) is refused as a tool's
    /// answer is ([`CallFailed`](Reason::CallFailed)); a server without resources is
    /// [`Unsupported`](Reason::Unsupported); else as a call fails.
    pub async fn read_resource(&self, uri: &str) -> Result<JsonObject, ToolSourceError> {
        let result = self
            .ask("resources/read", with_uri(uri), |cap| {
                Reason::call_failed(format!(
                    "The resource is more than {cap} bytes, more than can be read here."
                ))
            })
            .await?;
        match result.get("contents") {
            Some(Value::Array(_)) => Ok(result),
            _ => Err(self.error(Reason::invalid_response(
                "a resources/read result without a `contents` array",
            ))),
        }
    }

    /// Asks the server to tell of changes to `uri` (`resources/subscribe`, of the session
    /// revisions).
    ///
    /// # Errors
    ///
    /// As [`Mcp::read_resource`].
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ToolSourceError> {
        self.ask("resources/subscribe", with_uri(uri), too_large)
            .await
            .map(drop)
    }

    /// Asks the server to stop telling of changes to `uri` (`resources/unsubscribe`).
    ///
    /// # Errors
    ///
    /// As [`Mcp::read_resource`].
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ToolSourceError> {
        self.ask("resources/unsubscribe", with_uri(uri), too_large)
            .await
            .map(drop)
    }
}

/// The params `{uri}`.
pub(super) fn with_uri(uri: &str) -> JsonObject {
    let mut params = Map::new();
    params.insert("uri".into(), json!(uri));
    params
}

/// The reason of an answer over the cap to a request that carries no content.
pub(super) fn too_large(cap: usize) -> Reason {
    Reason::invalid_response(format!("the server answered with more than {cap} bytes"))
}

impl Mcp {
    /// A waiter for the resources the server says changed (after a
    /// [`subscribe_resource`](Mcp::subscribe_resource)), where its transport hears the server
    /// unasked; `None` where it does not.
    pub fn resources_updated(&self) -> Option<ResourcesUpdated> {
        self.transport.resources_updated()
    }
}
