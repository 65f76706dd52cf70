//! An upstream's `tools/call` result served as its server wrote it: [`WrittenResults`], the
//! service around the server's handler.
//!
//! rmcp's handler answers a call with its typed `CallToolResult`, whose content blocks hold
//! numbers as floats (`annotations.priority` is an `f32`: an upstream's `1` would reach the
//! client as `1.0`) and drop what rmcp's types have no field for. The handler still makes that
//! result (rmcp checks and shapes it), and [`keep`]s the upstream's JSON beside it; this service
//! then serves the JSON in its place, shaped for the client's revision as rmcp shapes its own
//! (`resultType: "complete"` only from 2026-07-28).
//!
//! Over stdio. rmcp's Streamable HTTP service (3.11) takes nothing but a `ServerHandler`, which
//! has no way to answer a call with other than the typed result: over HTTP, [`keep`] leaves the
//! result, shaped the same way, in the HTTP request's slot, and the layer around the service
//! writes it into the answer (`http/written_http.rs`).

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientNotification, ClientRequest, CustomResult, ProtocolVersion, ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, Service};
use serde_json::Value;

use crate::http::as_written::AsWritten;
use crate::tool_calls::written_for;
use toolkit_core::JsonObject;

/// A service (the server's handler), serving an upstream's result as it was written.
#[derive(Clone, Debug)]
pub(crate) struct WrittenResults<S>(pub(crate) S);

/// Where the handler leaves the upstream's JSON of one call (in the request's extensions).
#[derive(Clone, Debug, Default)]
struct Slot(Arc<Mutex<Option<JsonObject>>>);

/// Keeps `result`, an upstream's result as written, to be served in place of the typed result
/// the call answers with: in this service's slot (stdio), or shaped for the client in the slot of
/// the HTTP request the call came in ([`AsWritten`]).
pub(crate) fn keep(context: &RequestContext<RoleServer>, result: JsonObject) {
    if let Some(Slot(slot)) = context.extensions.get::<Slot>() {
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
    } else if let Some(kept) = AsWritten::of(context)
        && let Some(result) = written_for(result, current(context))
    {
        kept.result(&context.id, result);
    }
}

/// Whether the call's client speaks the revision 2026-07-28 or a later one.
fn current(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

impl<S: Service<RoleServer>> Service<RoleServer> for WrittenResults<S> {
    async fn handle_request(
        &self,
        request: ClientRequest,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        if !matches!(request, ClientRequest::CallToolRequest(_)) {
            return self.0.handle_request(request, context).await;
        }
        let current = current(&context);
        let slot = Slot::default();
        context.extensions.insert(slot.clone());
        let answer = self.0.handle_request(request, context).await?;
        let kept = slot.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        Ok(match (answer, kept) {
            (ServerResult::CallToolResult(typed), Some(written)) => {
                match written_for(written, current) {
                    Some(written) => {
                        ServerResult::CustomResult(CustomResult(Value::Object(written)))
                    }
                    None => ServerResult::CallToolResult(typed),
                }
            }
            (answer, _) => answer,
        })
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.handle_notification(notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        Service::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Service::supported_protocol_versions(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_result_is_shaped_for_the_clients_revision() {
        let written = object(json!({"content": [], "resultType": "complete"}));
        assert_eq!(
            written_for(written.clone(), false),
            Some(object(json!({"content": []})))
        );
        assert_eq!(
            written_for(written, true).unwrap()["resultType"],
            "complete"
        );
        let bare = object(json!({"content": []}));
        assert_eq!(written_for(bare, true).unwrap()["resultType"], "complete");
        let listed = object(json!({"content": [], "structuredContent": [1]}));
        assert_eq!(written_for(listed.clone(), false), None);
        assert!(written_for(listed, true).is_some());
    }
}
