//! [`ServerProcess`] and [`probe`]: a built server binary driven over its stdio.

use std::fmt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncReadExt as _;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::conversation::{Conversation, HarnessError, Revision};

/// A server binary running as a child process, spoken to over its stdin and stdout; its stderr
/// is collected. The process is killed if this is dropped before [`ServerProcess::finish`].
pub struct ServerProcess {
    child: Child,
    conversation: Conversation<ChildStdin, ChildStdout>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

/// How a server process ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it wrote on stderr (lossily decoded).
    pub stderr: String,
}

impl ServerProcess {
    /// Starts `command` with piped stdio, speaking the session revision `2025-11-25`.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Io`] when the process cannot be started.
    pub fn spawn(mut command: Command) -> Result<Self, HarnessError> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(HarnessError::Closed);
        };
        let stderr = child.stderr.take().map(|mut stderr| {
            tokio::spawn(async move {
                let mut bytes = Vec::new();
                let _ = stderr.read_to_end(&mut bytes).await;
                bytes
            })
        });
        Ok(Self {
            child,
            conversation: Conversation::new(stdin, stdout, Revision::default()),
            stderr,
        })
    }

    /// How long to wait for each message, and for the process to end after its stdin closes
    /// ([`DEFAULT_TIMEOUT`](super::DEFAULT_TIMEOUT) unless set).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.conversation.timeout = timeout;
        self
    }

    /// The revision later requests speak ([`Revision::Stateless`] adds `_meta` to each).
    #[must_use]
    pub fn revision(mut self, revision: Revision) -> Self {
        self.conversation.revision = revision;
        self
    }

    /// `initialize` (id 1 when it is the first request) in `2025-11-25`, then
    /// `notifications/initialized`; the whole response.
    ///
    /// # Errors
    ///
    /// [`HarnessError`] when no response comes.
    pub async fn handshake(&mut self) -> Result<Value, HarnessError> {
        self.conversation.initialize("2025-11-25").await
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
    /// [`HarnessError::Rpc`] when the server answers with an error; others when none comes.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<Value, HarnessError> {
        self.conversation.call(name, arguments).await
    }

    /// Sends the request `method` with `params`; the whole response.
    ///
    /// # Errors
    ///
    /// [`HarnessError`] when no response comes.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, HarnessError> {
        self.conversation.request(method, params).await
    }

    /// Writes `bytes` to the server's stdin verbatim.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Io`] when stdin is closed.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), HarnessError> {
        self.conversation.send_raw(bytes).await
    }

    /// The next message on the server's stdout (one kept from an earlier wait first).
    ///
    /// # Errors
    ///
    /// [`HarnessError::Timeout`] or [`HarnessError::Closed`].
    pub async fn next_message(&mut self) -> Result<Value, HarnessError> {
        if !self.conversation.seen.is_empty() {
            return Ok(self.conversation.seen.remove(0));
        }
        self.conversation.next_message().await
    }

    /// Reads until the response with `id`; gives it and every message read before it.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Timeout`] or [`HarnessError::Closed`].
    pub async fn read_until_response(
        &mut self,
        id: &Value,
    ) -> Result<(Value, Vec<Value>), HarnessError> {
        let response = self.conversation.response(id).await?;
        Ok((response, std::mem::take(&mut self.conversation.seen)))
    }

    /// Closes the server's stdin and waits for it to end (killing it after the timeout); its
    /// exit status and stderr.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Timeout`] when it did not end in time (it is killed).
    pub async fn finish(mut self) -> Result<Finished, HarnessError> {
        self.conversation.close_input().await;
        let status = match tokio::time::timeout(self.conversation.timeout, self.child.wait()).await
        {
            Ok(status) => status?,
            Err(_) => {
                let _ = self.child.kill().await;
                return Err(HarnessError::Timeout);
            }
        };
        let stderr = match self.stderr.take() {
            Some(task) => task.await.unwrap_or_default(),
            None => Vec::new(),
        };
        Ok(Finished {
            status,
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        })
    }
}

impl fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerProcess")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

/// What [`probe`] saw of a server binary.
#[derive(Debug)]
pub struct Probe {
    /// The whole response to `initialize`.
    pub initialize: Value,
    /// The result of `tools/list`.
    pub tools: Value,
    /// How the process ended once its stdin closed.
    pub finished: Finished,
}

impl Probe {
    /// Whether the server did what a packed install must: answered `initialize` without an
    /// error, listed its tools, wrote nothing on stderr, and exited 0 when its stdin closed.
    pub fn passed(&self) -> bool {
        self.initialize.get("error").is_none()
            && self.initialize.get("result").is_some()
            && self.tools.get("tools").is_some_and(Value::is_array)
            && self.finished.stderr.is_empty()
            && self.finished.status.success()
    }
}

/// Starts `command`, does the handshake, lists the tools, closes stdin and waits for the exit.
///
/// # Errors
///
/// [`HarnessError`] when the process cannot be started, or does not answer or end in time.
pub async fn probe(command: Command) -> Result<Probe, HarnessError> {
    let mut process = ServerProcess::spawn(command)?;
    let initialize = process.handshake().await?;
    let tools = process.list_tools().await?;
    let finished = process.finish().await?;
    Ok(Probe {
        initialize,
        tools,
        finished,
    })
}
