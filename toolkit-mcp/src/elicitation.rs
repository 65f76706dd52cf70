//! What a server asks of the host's person while it runs a tool (`elicitation/create`):
//! [`Elicitation`], [`ElicitationRequest`], [`ElicitationAnswer`].
//!
//! A host that can ask its person gives a callback in
//! [`McpOptions::elicitation`](super::McpOptions::elicitation); the source then declares the
//! `elicitation` capability and passes each `elicitation/create` a server sends (on a call's
//! stream, or on the session's standalone stream) to it. A source without one declares nothing,
//! and answers any elicitation that comes anyway at once with `{"action": "decline"}`, so that a
//! server never waits for an answer that cannot come. The stateless revision (2026-07-28) has no
//! server-to-client requests: there nothing is asked.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use toolkit_core::{BoxFuture, JsonObject};

/// What a server asked: `elicitation/create`'s params, as it sent them.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitationRequest {
    params: JsonObject,
}

impl ElicitationRequest {
    /// The request with `params` as the server sent them.
    pub fn new(params: JsonObject) -> Self {
        Self { params }
    }

    /// What the server says to the person (empty when it said nothing).
    pub fn message(&self) -> &str {
        self.params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The schema of the form the person fills in (`requestedSchema`: an object of flat
    /// properties), when the server gave one (a form elicitation).
    pub fn requested_schema(&self) -> Option<&JsonObject> {
        self.params
            .get("requestedSchema")
            .and_then(Value::as_object)
    }

    /// The params as the server sent them, for a host that passes the request on (a gateway to
    /// its own client).
    pub fn params(&self) -> &JsonObject {
        &self.params
    }

    /// The form as its schema fills it in: each property of
    /// [`requested_schema`](Self::requested_schema) that has a `default`, with it (SEP-1034).
    /// A host starts its form with these, and accepts with them when its person leaves them.
    pub fn defaults(&self) -> JsonObject {
        let Some(properties) = self
            .requested_schema()
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object)
        else {
            return Map::new();
        };
        properties
            .iter()
            .filter_map(|(name, schema)| Some((name.clone(), schema.get("default")?.clone())))
            .collect()
    }
}

/// The person's answer to an [`ElicitationRequest`].
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationAnswer {
    /// The person gave the form's content (empty for an elicitation without a form).
    Accept(JsonObject),
    /// The person said no.
    Decline,
    /// The person dismissed the question without choosing.
    Cancel,
}

impl ElicitationAnswer {
    /// The `elicitation/create` result this answer is: `{"action": .., "content": ..}`.
    pub fn to_result(&self) -> JsonObject {
        let value = match self {
            Self::Accept(content) => json!({ "action": "accept", "content": content }),
            Self::Decline => json!({ "action": "decline" }),
            Self::Cancel => json!({ "action": "cancel" }),
        };
        match value {
            Value::Object(object) => object,
            _ => Map::new(),
        }
    }
}

/// What a host gives to answer elicitations: usually a closure
/// `Fn(ElicitationRequest) -> impl Future<Output = ElicitationAnswer>`.
///
/// ```
/// use toolkit_mcp::{Elicitation, ElicitationAnswer, McpOptions};
///
/// // A host with nobody to ask accepts what the form fills in by itself.
/// let options = McpOptions::default().elicitation(Elicitation::new(
///     |request: toolkit_mcp::ElicitationRequest| async move {
///         ElicitationAnswer::Accept(request.defaults())
///     },
/// ));
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct Elicitation(
    Arc<dyn Fn(ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> + Send + Sync>,
);

impl Elicitation {
    /// The callback `answer`, run for each elicitation a server sends.
    pub fn new<F, Fut>(answer: F) -> Self
    where
        F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ElicitationAnswer> + Send + 'static,
    {
        Self(Arc::new(move |request| Box::pin(answer(request))))
    }

    /// Asks the host.
    pub(crate) fn ask(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> {
        (self.0)(request)
    }
}

impl std::fmt::Debug for Elicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Elicitation(..)")
    }
}

impl PartialEq for Elicitation {
    /// The same callback (not merely one that behaves alike).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Elicitation {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_each_propertys_default() {
        let request = ElicitationRequest::new(
            json!({
                "message": "m",
                "requestedSchema": {"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "free": {"type": "string"},
                }},
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        );
        assert_eq!(request.message(), "m");
        assert_eq!(
            Value::Object(request.defaults()),
            json!({"name": "John Doe", "age": 30})
        );
        assert!(ElicitationRequest::new(Map::new()).defaults().is_empty());
    }

    #[test]
    fn answers_are_the_specs_results() {
        assert_eq!(
            Value::Object(ElicitationAnswer::Decline.to_result()),
            json!({"action": "decline"})
        );
        assert_eq!(
            Value::Object(ElicitationAnswer::Accept(Map::new()).to_result()),
            json!({"action": "accept", "content": {}})
        );
    }
}
