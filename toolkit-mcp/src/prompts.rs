//! [`Mcp`]'s prompts and completion: `prompts/list`, `prompts/get` and `completion/complete`,
//! over every transport the source has.

use serde_json::{Map, Value, json};

use super::resources::too_large;
use super::source::Mcp;
use toolkit_core::{JsonObject, Reason, ToolSourceError};

impl Mcp {
    /// The server's prompts as it lists them (every page of `prompts/list`): objects with
    /// `name`, `arguments` and what else the server wrote.
    ///
    /// # Errors
    ///
    /// [`Unsupported`](Reason::Unsupported) when the server has no prompts (`-32601`), else as
    /// [`ToolSource::discover`](toolkit_core::ToolSource::discover).
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ToolSourceError> {
        self.every_page("prompts/list", "prompts").await
    }

    /// The result of `prompts/get` for the prompt `name` with `arguments`, as the server wrote
    /// it (`description`, `messages`).
    ///
    /// # Errors
    ///
    /// A prompt the server does not have, or arguments it refuses (`-32602`), is
    /// [`NotFound`](Reason::NotFound); an answer larger than
    /// [`max_response_bytes`](super::McpOptions::max_response_bytes) is
    /// [`CallFailed`](Reason::CallFailed), as a tool's answer is.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<JsonObject, ToolSourceError> {
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), Value::Object(arguments));
        let result = self
            .ask("prompts/get", params, |cap| {
                Reason::call_failed(format!(
                    "The prompt is more than {cap} bytes, more than can be read here."
                ))
            })
            .await?;
        match result.get("messages") {
            Some(Value::Array(_)) => Ok(result),
            _ => Err(self.error(Reason::invalid_response(
                "a prompts/get result without a `messages` array",
            ))),
        }
    }

    /// The result of `completion/complete` for `params` as the spec writes them (`ref`, a
    /// `ref/prompt` by `name` or a `ref/resource` by `uri`; `argument` `{name, value}`; and
    /// `context.arguments`), as the server wrote it (`completion.values`, `total`, `hasMore`).
    ///
    /// # Errors
    ///
    /// [`Unsupported`](Reason::Unsupported) when the server does not complete (`-32601`), else
    /// as [`Mcp::get_prompt`].
    pub async fn complete(&self, params: JsonObject) -> Result<JsonObject, ToolSourceError> {
        let result = self.ask("completion/complete", params, too_large).await?;
        match result.get("completion") {
            Some(Value::Object(_)) => Ok(result),
            _ => Err(self.error(Reason::invalid_response(
                "a completion/complete result without a `completion` object",
            ))),
        }
    }
}
