//! What [`Mcp`]'s server declared of itself: the `capabilities` of its `initialize` answer
//! (or `server/discover`), read once the link is settled.

use serde_json::Value;

use super::source::Mcp;
use toolkit_core::ToolSourceError;

impl Mcp {
    /// The server's `capabilities` as it declared them (`resources` with `subscribe` and
    /// `listChanged`, `prompts`, `completions`, `tasks`, ...), settling the link first if it is
    /// not yet; `None` when the server was spoken to in a way that tells none.
    ///
    /// # Errors
    ///
    /// As [`ToolSource::discover`](toolkit_core::ToolSource::discover), when the server cannot be
    /// reached within the timeout.
    pub async fn capabilities(&self) -> Result<Option<Value>, ToolSourceError> {
        self.bounded(async {
            self.transport
                .settle()
                .await
                .map(|settled| settled.capabilities)
                .map_err(|fault| self.list_fault(fault))
        })
        .await
    }
}
