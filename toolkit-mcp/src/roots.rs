//! [`Mcp`] told that its client's roots changed: `notifications/roots/list_changed`.

use super::source::Mcp;

/// The notification a client sends when its roots changed.
pub(crate) const ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";

impl Mcp {
    /// Tells the server that the roots of the client it serves changed
    /// (`notifications/roots/list_changed`), on the connection there is, so that a server that
    /// asks for roots asks again (see [`McpOptions::clients`](super::McpOptions::clients)).
    /// Nothing is sent when the source is not connected (no connection is made to tell it) or
    /// speaks the stateless revision, which sends no such notification; a server that cannot
    /// be told is logged, not failed.
    pub async fn roots_changed(&self) {
        self.transport.notify(ROOTS_LIST_CHANGED).await;
    }
}
