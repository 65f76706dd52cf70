//! rmcp's transport over a byte stream read through the [`StdinGuard`]: every line the guard
//! answers itself is answered on the output stream, in order with the server's own messages.
//!
//! Output goes through one writer task, so a reply and a response are never interleaved within
//! a line and a reply survives a `receive` that rmcp drops half-way (its service loop polls
//! `receive` inside a `select!`).

use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{GetExtensions as _, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, mpsc};

use crate::stdin_guard::{Frame, StdinGuard};
use crate::tasks::{Renamed, TaskDialect};

/// How many lines may wait for the writer before a sender waits for room.
const OUTPUT_QUEUE: usize = 256;

/// What a guarded input keeps across the rmcp services that read it in turn: the guard, and the
/// first read error (serving then ends with it).
pub(crate) struct Input<R> {
    guard: StdinGuard<R>,
    pub(crate) error: Option<io::Error>,
    pub(crate) ended: bool,
}

impl<R> Input<R> {
    pub(crate) fn new(guard: StdinGuard<R>) -> Self {
        Self {
            guard,
            error: None,
            ended: false,
        }
    }
}

/// The writer end: lines to write, each without its newline.
pub(crate) type Output = mpsc::Sender<String>;

/// Starts the task that writes every line sent on the returned [`Output`] to `writer`, flushing
/// whenever no line waits; the task ends when every sender is gone, with the first write error.
pub(crate) fn spawn_writer<W>(mut writer: W) -> (Output, tokio::task::JoinHandle<io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sender, mut lines) = mpsc::channel::<String>(OUTPUT_QUEUE);
    let task = tokio::spawn(async move {
        while let Some(line) = lines.recv().await {
            write_line(&mut writer, &line).await?;
            while let Ok(line) = lines.try_recv() {
                write_line(&mut writer, &line).await?;
            }
            writer.flush().await?;
        }
        writer.flush().await
    });
    (sender, task)
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &mut W, line: &str) -> io::Result<()> {
    writer.write_all(line.as_bytes()).await?;
    writer.write_all(b"\n").await
}

/// One rmcp transport over the shared input and output.
pub(crate) struct GuardedTransport<R> {
    input: Arc<Mutex<Input<R>>>,
    output: Output,
    /// A reply that found the output queue full, sent before anything is read.
    pending: Option<String>,
    /// What the session's client speaks of tasks (`tasks.rs`).
    dialect: Arc<std::sync::Mutex<TaskDialect>>,
}

impl<R> GuardedTransport<R> {
    /// A transport of a host that passes tasks through (`tasks`) or not.
    pub(crate) fn new(input: Arc<Mutex<Input<R>>>, output: Output, tasks: bool) -> Self {
        Self {
            input,
            output,
            pending: None,
            dialect: Arc::new(std::sync::Mutex::new(TaskDialect::new(tasks))),
        }
    }

    /// Queues `line` for the writer without waiting; a full queue keeps it in `pending`.
    fn queue(&mut self, line: String) {
        if let Err(mpsc::error::TrySendError::Full(line)) = self.output.try_send(line) {
            self.pending = Some(line);
        }
    }
}

impl<R> Transport<RoleServer> for GuardedTransport<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        let mut dialect = self
            .dialect
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let line = if dialect.waits() {
            serde_json::to_value(&item).and_then(|mut message| {
                dialect.outgoing(&mut message);
                serde_json::to_string(&message)
            })
        } else {
            serde_json::to_string(&item)
        };
        drop(dialect);
        async move {
            let line = line.map_err(io::Error::other)?;
            output
                .send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the output is closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.pending.is_some() {
                // Room first, then the line: dropped while waiting, the reply stays pending.
                match self.output.reserve().await {
                    Ok(permit) => {
                        if let Some(line) = self.pending.take() {
                            permit.send(line);
                        }
                    }
                    Err(_) => return None,
                }
            }
            let mut input = self.input.lock().await;
            if input.ended {
                return None;
            }
            let frame = match input.guard.next_frame().await {
                Ok(Some(frame)) => frame,
                Ok(None) => {
                    input.ended = true;
                    return None;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    tracing::error!(%error, "reading the input failed; serving ends");
                    input.ended = true;
                    input.error = Some(error);
                    return None;
                }
            };
            drop(input);
            match frame {
                Frame::Reply(reply) => self.queue(reply.line().to_owned()),
                Frame::Message(mut value) => {
                    let renamed = self
                        .dialect
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .incoming(&mut value);
                    match answer_or_message(value) {
                        Ok(mut message) => {
                            if renamed && let JsonRpcMessage::Request(request) = &mut message {
                                request.request.extensions_mut().insert(Renamed);
                            }
                            return Some(message);
                        }
                        Err(Some(reply)) => self.queue(reply),
                        Err(None) => {}
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A framed message as rmcp reads it, or the reply to give when rmcp cannot read it (`None`
/// when nothing is to be said: a notification or a response that is no MCP message).
fn answer_or_message(value: Value) -> Result<RxJsonRpcMessage<RoleServer>, Option<String>> {
    let batch = value.is_array();
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned();
    let has_method = value.get("method").is_some_and(Value::is_string);
    let version_ok = value.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
        Ok(message) => Ok(message),
        Err(error) => {
            tracing::debug!(%error, "a message the server cannot read");
            if batch {
                return Err(Some(error_line(Value::Null, -32600, "Invalid Request")));
            }
            match id {
                // A notification is never answered; nor is a response.
                None => Err(None),
                Some(_) if !has_method => Err(None),
                Some(id) if !version_ok => Err(Some(error_line(id, -32600, "Invalid Request"))),
                Some(id) => Err(Some(error_line(id, -32602, "Invalid params"))),
            }
        }
    }
}

fn error_line(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}
