//! Who sent a message, as the host's HTTP layer put it in the request's extensions: its
//! [`Principal`], its MCP [`Session`] and the bearer token it presented ([`SubjectToken`]), and a
//! [`CallContext`] that carries them to the call it asks for.

use toolkit_core::CallContext;
use toolkit_core::context::{Principal, Session, SubjectToken};

/// The bearer token the sender of the message whose context has `extensions` presented, when
/// the host checked one and put it in the HTTP request's extensions.
fn subject_token_of(extensions: &rmcp::model::Extensions) -> Option<SubjectToken> {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<SubjectToken>())
        .cloned()
}

/// Who sent the message whose context has `extensions`: the principal the host put in the HTTP
/// request's extensions, else the one person of a server without authentication (stdio, or
/// HTTP on loopback).
pub(crate) fn principal_of(extensions: &rmcp::model::Extensions) -> Principal {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
        .unwrap_or_else(Principal::loopback)
}

/// The MCP session of the message whose context has `extensions`: the `Mcp-Session-Id` of its
/// HTTP request, when it has one (none for a stateless request, nor on stdio).
pub(crate) fn session_of(extensions: &rmcp::model::Extensions) -> Option<Session> {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
        .map(Session::new)
}

/// `context` with who sent the message whose context has `extensions`: its principal, and its
/// session when it has one.
pub(crate) fn asked_by(context: CallContext, extensions: &rmcp::model::Extensions) -> CallContext {
    let context = context.with_extension(principal_of(extensions));
    let context = match session_of(extensions) {
        Some(session) => context.with_extension(session),
        None => context,
    };
    // The token the person presented, for a source that acts on their behalf.
    match subject_token_of(extensions) {
        Some(token) => context.with_extension(token),
        None => context,
    }
}
