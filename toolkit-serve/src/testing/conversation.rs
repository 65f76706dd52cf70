//! A JSON-RPC conversation over a pair of byte streams: what the in-process client and the
//! process probe share.

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// How long the harness waits for a message before [`HarnessError::Timeout`]: 10 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The revision a harness speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revision {
    /// A session revision (such as `2025-11-25`): `initialize` first, then requests.
    Session(String),
    /// The stateless revision 2026-07-28: no `initialize`, every request carries its `_meta`.
    Stateless,
}

impl Default for Revision {
    fn default() -> Self {
        Self::Session("2025-11-25".to_owned())
    }
}

/// Why the harness could not get an answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum HarnessError {
    /// Nothing came within the timeout.
    Timeout,
    /// The server's output ended.
    Closed,
    /// The server wrote a line that is not JSON.
    NotJson(String),
    /// The server answered with a JSON-RPC error (the whole `error` object).
    Rpc(Value),
    /// Reading or writing the streams failed, or the process could not be run.
    Io(std::io::Error),
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("no answer within the timeout"),
            Self::Closed => f.write_str("the server's output ended"),
            Self::NotJson(line) => write!(f, "the server wrote a line that is not JSON: {line}"),
            Self::Rpc(error) => write!(f, "the server answered with an error: {error}"),
            Self::Io(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for HarnessError {}

impl From<std::io::Error> for HarnessError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

/// One side of a JSON-RPC conversation.
pub(crate) struct Conversation<W, R> {
    writer: Option<W>,
    reader: BufReader<R>,
    pub(crate) timeout: Duration,
    pub(crate) revision: Revision,
    next_id: u64,
    /// Messages read while waiting for a response that were not it.
    pub(crate) seen: Vec<Value>,
}

impl<W, R> Conversation<W, R>
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    pub(crate) fn new(writer: W, reader: R, revision: Revision) -> Self {
        Self {
            writer: Some(writer),
            reader: BufReader::new(reader),
            timeout: DEFAULT_TIMEOUT,
            revision,
            next_id: 1,
            seen: Vec::new(),
        }
    }

    pub(crate) async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), HarnessError> {
        let writer = self.writer.as_mut().ok_or(HarnessError::Closed)?;
        writer.write_all(bytes).await?;
        writer.flush().await?;
        Ok(())
    }

    pub(crate) async fn send(&mut self, message: &Value) -> Result<(), HarnessError> {
        let mut line = message.to_string();
        line.push('\n');
        self.send_raw(line.as_bytes()).await
    }

    /// Closes the writing side (the server's stdin ends).
    pub(crate) async fn close_input(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            // A half of a split stream closes its side only when shut down.
            let _ = writer.shutdown().await;
        }
    }

    /// The next message the server writes.
    pub(crate) async fn next_message(&mut self) -> Result<Value, HarnessError> {
        let mut line = String::new();
        loop {
            line.clear();
            let read = tokio::time::timeout(self.timeout, self.reader.read_line(&mut line))
                .await
                .map_err(|_| HarnessError::Timeout)??;
            if read == 0 {
                return Err(HarnessError::Closed);
            }
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            return serde_json::from_str(trimmed)
                .map_err(|_| HarnessError::NotJson(trimmed.to_owned()));
        }
    }

    /// Reads until the response with `id`; what comes before it is kept in `seen`.
    pub(crate) async fn response(&mut self, id: &Value) -> Result<Value, HarnessError> {
        loop {
            let message = self.next_message().await?;
            let is_response = message.get("method").is_none()
                && (message.get("result").is_some() || message.get("error").is_some());
            if is_response && message.get("id") == Some(id) {
                return Ok(message);
            }
            self.seen.push(message);
        }
    }

    /// Sends the request `method` with `params` (and, on the stateless revision, its `_meta`)
    /// and gives the whole response.
    pub(crate) async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Value, HarnessError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let mut params = match params {
            Value::Object(params) => params,
            _ => Map::new(),
        };
        if self.revision == Revision::Stateless {
            params.insert("_meta".to_owned(), stateless_meta());
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        self.response(&id).await
    }

    /// The result of `tools/list`, exactly as served.
    pub(crate) async fn list_tools(&mut self) -> Result<Value, HarnessError> {
        self.result("tools/list", serde_json::json!({})).await
    }

    /// The result of `tools/call` of `name` with `arguments`, exactly as served.
    pub(crate) async fn call(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Result<Value, HarnessError> {
        let params = serde_json::json!({"name": name, "arguments": arguments});
        self.result("tools/call", params).await
    }

    /// The result of the request `method`, or its error as [`HarnessError::Rpc`].
    pub(crate) async fn result(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Value, HarnessError> {
        let mut response = self.request(method, params).await?;
        if let Some(error) = response.get_mut("error") {
            return Err(HarnessError::Rpc(error.take()));
        }
        Ok(response
            .get_mut("result")
            .map(Value::take)
            .unwrap_or_default())
    }

    /// `initialize` in `version`, then `notifications/initialized`; the whole response.
    pub(crate) async fn initialize(&mut self, version: &str) -> Result<Value, HarnessError> {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "toolkit-harness", "version": env!("CARGO_PKG_VERSION")}
        });
        let response = self.request("initialize", params).await?;
        if response.get("result").is_some() {
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await?;
        }
        Ok(response)
    }
}

fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "toolkit-harness", "version": env!("CARGO_PKG_VERSION")}
    })
}
