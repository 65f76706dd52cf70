//! [`InProcessClient`]: a built server driven in-process, over an in-memory pipe.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

use super::conversation::{Conversation, HarnessError, Revision};
use crate::{McpServer, ServeError};

/// How many bytes the in-memory pipe holds each way.
const PIPE_SIZE: usize = 1 << 20;

/// A client of a [`McpServer`] served in-process by [`McpServer::serve_io`] over an in-memory
/// pipe: it reads exactly what a real client over stdio reads.
///
/// ```
/// use serde_json::json;
/// use toolkit_serve::McpServer;
/// use toolkit_serve::testing::InProcessClient;
/// use toolkit_core::{FnSource, FnTool, Toolkit, ToolkitOptions};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nothing {}
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let clock = FnSource::builder("clock")
///     .tool(FnTool::new("now", |_: Nothing| async { Ok("22:00") }).read_only())
///     .build()?;
/// let definitions = clock.definitions();
/// let toolkit = Toolkit::from_source(std::sync::Arc::new(clock), definitions, &ToolkitOptions::default())?;
///
/// let mut client = InProcessClient::start(McpServer::new(toolkit));
/// client.initialize().await?;
/// let listed = client.list_tools().await?;
/// assert_eq!(listed["tools"][0]["name"], "now");
/// let called = client.call("now", json!({})).await?;
/// assert_eq!(called["content"][0]["text"], "22:00");
/// client.close().await?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct InProcessClient {
    conversation: Conversation<WriteHalf<DuplexStream>, ReadHalf<DuplexStream>>,
    serving: JoinHandle<Result<(), ServeError>>,
}

impl InProcessClient {
    /// Starts serving `server` in-process and gives a client of the session revision
    /// `2025-11-25` (call [`InProcessClient::initialize`] first). Needs a Tokio runtime.
    pub fn start(server: McpServer) -> Self {
        Self::start_with(server, Revision::default())
    }

    /// Starts serving `server` in-process and gives a client of the stateless revision
    /// 2026-07-28: no `initialize`, every request carries its `_meta`.
    pub fn stateless(server: McpServer) -> Self {
        Self::start_with(server, Revision::Stateless)
    }

    /// Starts serving `server` in-process and gives a client of `revision`.
    pub fn start_with(server: McpServer, revision: Revision) -> Self {
        let (client, served) = tokio::io::duplex(PIPE_SIZE);
        let (served_in, served_out) = tokio::io::split(served);
        let serving = tokio::spawn(server.serve_io(served_in, served_out));
        let (reader, writer) = tokio::io::split(client);
        Self {
            conversation: Conversation::new(writer, reader, revision),
            serving,
        }
    }

    /// How long to wait for each message ([`DEFAULT_TIMEOUT`](super::DEFAULT_TIMEOUT) unless
    /// set).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.conversation.timeout = timeout;
        self
    }

    /// `initialize` in the client's session revision, then `notifications/initialized`; the
    /// whole response. On the stateless revision, `initialize` is sent in `2026-07-28`, which
    /// the server answers with its newest session revision.
    ///
    /// # Errors
    ///
    /// [`HarnessError`] when no response comes.
    pub async fn initialize(&mut self) -> Result<Value, HarnessError> {
        let version = match &self.conversation.revision {
            Revision::Session(version) => version.clone(),
            Revision::Stateless => "2026-07-28".to_owned(),
        };
        self.conversation.initialize(&version).await
    }

    /// `initialize` asking for `version`, then `notifications/initialized` when it succeeded;
    /// the whole response (to read the negotiated `protocolVersion`).
    ///
    /// # Errors
    ///
    /// [`HarnessError`] when no response comes.
    pub async fn initialize_with(&mut self, version: &str) -> Result<Value, HarnessError> {
        self.conversation.initialize(version).await
    }

    /// The result of `tools/list`, exactly as served.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Rpc`] when the server answers with an error; others when none comes.
    pub async fn list_tools(&mut self) -> Result<Value, HarnessError> {
        self.conversation.list_tools().await
    }

    /// The result of `tools/call` of `name` with `arguments`, exactly as served.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Rpc`] when the server answers with an error (an unknown tool); others
    /// when none comes.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<Value, HarnessError> {
        self.conversation.call(name, arguments).await
    }

    /// Sends the request `method` with `params` and gives the whole response, result or error.
    ///
    /// # Errors
    ///
    /// [`HarnessError`] when no response comes.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, HarnessError> {
        self.conversation.request(method, params).await
    }

    /// Sends `message` as one line, as it is.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Io`] when the pipe is closed.
    pub async fn send(&mut self, message: &Value) -> Result<(), HarnessError> {
        self.conversation.send(message).await
    }

    /// Sends `bytes` verbatim: the way to put malformed input on the server's stdin.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Io`] when the pipe is closed.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), HarnessError> {
        self.conversation.send_raw(bytes).await
    }

    /// The next message the server writes (one kept from an earlier wait first).
    ///
    /// # Errors
    ///
    /// [`HarnessError::Timeout`] when none comes in time, [`HarnessError::Closed`] when the
    /// server's output ended.
    pub async fn next_message(&mut self) -> Result<Value, HarnessError> {
        if !self.conversation.seen.is_empty() {
            return Ok(self.conversation.seen.remove(0));
        }
        self.conversation.next_message().await
    }

    /// The messages read while waiting for responses that were not them (notifications, such
    /// as `notifications/tools/list_changed`), in order; they stay until taken.
    pub fn take_seen(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.conversation.seen)
    }

    /// Ends the server's input and waits until serving ends.
    ///
    /// # Errors
    ///
    /// The server's [`ServeError`] as [`HarnessError::Io`], or [`HarnessError::Timeout`].
    pub async fn close(mut self) -> Result<(), HarnessError> {
        self.conversation.close_input().await;
        match tokio::time::timeout(self.conversation.timeout, &mut self.serving).await {
            Err(_) => {
                self.serving.abort();
                Err(HarnessError::Timeout)
            }
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(error))) => Err(HarnessError::Io(std::io::Error::other(error))),
            Ok(Err(error)) => Err(HarnessError::Io(std::io::Error::other(error))),
        }
    }
}

impl Drop for InProcessClient {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

impl fmt::Debug for InProcessClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InProcessClient")
            .field("revision", &self.conversation.revision)
            .finish_non_exhaustive()
    }
}
