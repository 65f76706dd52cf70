//! The hardened isolate: each run in a worker process that is killed at the deadline.
//!
//! [`QuickJs`](super::QuickJs) shares the host's process: a bug in the C engine would take the
//! host down with it, and a loop of heavy built-ins keeps its thread busy a while past the
//! deadline. [`WorkerIsolate`] runs each execution in a process of its own — any program that
//! calls [`serve_worker`] (`toolkit-gen quickjs-worker` does) — and speaks to it in JSON lines over
//! its standard input and output. The tools still run in the host: the worker asks for each call,
//! and the host answers. At the deadline, or when the run's future is dropped, the process is
//! killed; a process that dies is a `CodeError` the model reads, and the host goes on.
//!
//! The protocol, one JSON object a line:
//!
//! - host → worker: `{"run": {"code", "tools", "timeoutMs", "maxResultLength", "maxLogLength"}}`,
//!   then `{"answer": {"id", "ok": value}}` or `{"answer": {"id", "failure": {code, message,
//!   retryable}}}` for each call;
//! - worker → host: `{"call": {"id", "name", "input"}}` for each tool call, then one
//!   `{"done": {"ok": {"result", "logs"}}}` or `{"done": {"error": {"kind", "message", "logs",
//!   "length"}}}`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::oneshot;

use super::quickjs::{QuickJs, QuickJsOptions};
use super::runtime::{CodeFailure, CodeRuntime, RunLimits, RunOutput, ToolCall};
use crate::{BoxFuture, Failure};

/// How long past the deadline a worker may take to say it timed out before it is killed.
const GRACE: Duration = Duration::from_millis(100);
/// The longest line a worker may write (a result is capped far below this).
const MAX_LINE: usize = 64 << 20;

/// Runs each execution in a worker process; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct WorkerIsolate {
    program: OsString,
    args: Vec<OsString>,
}

impl WorkerIsolate {
    /// Workers started as `program` (with no arguments yet).
    ///
    /// ```no_run
    /// use toolkit_runtime::WorkerIsolate;
    /// let isolate = WorkerIsolate::new("toolkit-gen").arg("quickjs-worker");
    /// ```
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// Adds an argument to the worker's command line.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum ToWorker {
    Run(Job),
    Answer(Answer),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Job {
    code: String,
    tools: Vec<String>,
    timeout_ms: u64,
    max_result_length: usize,
    max_log_length: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ok: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<Failure>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum FromWorker {
    Call { id: u64, name: String, input: Value },
    Done(Done),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Done {
    Ok {
        result: Value,
        logs: Vec<String>,
    },
    Error {
        kind: String,
        #[serde(default)]
        message: String,
        #[serde(default)]
        logs: Vec<String>,
        #[serde(default)]
        length: usize,
    },
}

fn crashed(message: String) -> CodeFailure {
    CodeFailure::Error {
        message,
        logs: Vec::new(),
    }
}

impl CodeRuntime for WorkerIsolate {
    fn run<'a>(
        &'a self,
        code: &'a str,
        tools: &'a [String],
        call: ToolCall,
        limits: RunLimits,
    ) -> BoxFuture<'a, Result<RunOutput, CodeFailure>> {
        Box::pin(async move {
            let mut child = tokio::process::Command::new(&self.program)
                .args(&self.args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .map_err(|error| {
                    crashed(format!("The isolate's process could not start: {error}."))
                })?;
            let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(crashed("The isolate's process has no pipes.".to_owned()));
            };
            let timeout = limits.deadline.saturating_duration_since(Instant::now());
            let job = ToWorker::Run(Job {
                code: code.to_owned(),
                tools: tools.to_vec(),
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                max_result_length: limits.max_result_length,
                max_log_length: limits.max_log_length,
            });
            let mut lines = BufReader::new(stdout).lines();
            let mut calls = FuturesUnordered::new();
            let deadline = tokio::time::Instant::from_std(limits.deadline + GRACE);
            // A worker that is gone already is seen on its output, below, as one that ended.
            let _ = write_line(&mut stdin, &job).await;
            loop {
                tokio::select! {
                    line = lines.next_line() => {
                        let line = match line {
                            Ok(Some(line)) if line.len() <= MAX_LINE => line,
                            Ok(Some(_)) => return Err(crashed("The isolate's process wrote too much.".to_owned())),
                            Ok(None) | Err(_) => {
                                let status = child.wait().await.map(|s| s.to_string()).unwrap_or_default();
                                return Err(crashed(format!(
                                    "The isolate's process ended without an answer ({status}); the code may have crashed it."
                                )));
                            }
                        };
                        match serde_json::from_str::<FromWorker>(&line) {
                            Ok(FromWorker::Call { id, name, input }) => {
                                let answer = call(name, input);
                                calls.push(async move { (id, answer.await) });
                            }
                            Ok(FromWorker::Done(done)) => return finish(done),
                            Err(_) => return Err(crashed("The isolate's process said something unreadable.".to_owned())),
                        }
                    }
                    Some((id, answer)) = calls.next(), if !calls.is_empty() => {
                        let answer = match answer {
                            Ok(value) => Answer { id, ok: Some(value), failure: None },
                            Err(failure) => Answer { id, ok: None, failure: Some(failure) },
                        };
                        // A worker that is gone is seen on its output.
                        let _ = write_line(&mut stdin, &ToWorker::Answer(answer)).await;
                    }
                    () = tokio::time::sleep_until(deadline) => {
                        let _ = child.kill().await;
                        return Err(CodeFailure::Timeout { logs: Vec::new() });
                    }
                }
            }
        })
    }
}

fn finish(done: Done) -> Result<RunOutput, CodeFailure> {
    match done {
        Done::Ok { result, logs } => Ok(RunOutput { result, logs }),
        Done::Error {
            kind,
            message,
            logs,
            length,
        } => Err(match kind.as_str() {
            "timeout" => CodeFailure::Timeout { logs },
            "tooLarge" => CodeFailure::ResultTooLarge { length, logs },
            _ => CodeFailure::Error { message, logs },
        }),
    }
}

async fn write_line<W: tokio::io::AsyncWrite + Unpin, T: Serialize>(
    to: &mut W,
    message: &T,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    to.write_all(&line).await?;
    to.flush().await
}

/// The calls a worker has asked the host for, by number, each with where its answer goes.
type Waiting = HashMap<u64, oneshot::Sender<Result<Value, Failure>>>;

/// The worker's side: reads one run from standard input, runs it in a [`QuickJs`] isolate with
/// `options`, asks the host for each tool call, and writes the outcome. For the `main` of a
/// worker program, inside a Tokio runtime.
///
/// # Errors
///
/// When standard input holds no run or standard output cannot be written.
pub async fn serve_worker(options: QuickJsOptions) -> std::io::Result<()> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let Some(first) = lines.next_line().await? else {
        return Err(std::io::Error::other("no run was given"));
    };
    let Ok(ToWorker::Run(job)) = serde_json::from_str::<ToWorker>(&first) else {
        return Err(std::io::Error::other("the first line is no run"));
    };
    let stdout = Arc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
    let waiting: Arc<Mutex<Waiting>> = Arc::default();
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let call: ToolCall = {
        let (stdout, waiting) = (Arc::clone(&stdout), Arc::clone(&waiting));
        Arc::new(move |name: String, input: Value| {
            let (stdout, waiting, next) =
                (Arc::clone(&stdout), Arc::clone(&waiting), Arc::clone(&next));
            Box::pin(async move {
                let id = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let (answer, answered) = oneshot::channel();
                if let Ok(mut waiting) = waiting.lock() {
                    waiting.insert(id, answer);
                }
                let request = FromWorker::Call { id, name, input };
                let written = write_line(&mut *stdout.lock().await, &request).await;
                if written.is_err() {
                    return Err(Failure::new("UnknownError", "The host is gone.", false));
                }
                answered.await.unwrap_or_else(|_| {
                    Err(Failure::new("UnknownError", "The host is gone.", false))
                })
            })
        })
    };
    // Answers from the host, each to the call waiting for it.
    let reader = tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(ToWorker::Answer(answer)) = serde_json::from_str::<ToWorker>(&line) {
                let waiter = waiting.lock().ok().and_then(|mut w| w.remove(&answer.id));
                let outcome = match (answer.ok, answer.failure) {
                    (_, Some(failure)) => Err(failure),
                    (ok, None) => Ok(ok.unwrap_or(Value::Null)),
                };
                if let Some(waiter) = waiter {
                    let _ = waiter.send(outcome);
                }
            }
        }
    });
    let limits = RunLimits {
        deadline: Instant::now() + Duration::from_millis(job.timeout_ms),
        max_result_length: job.max_result_length,
        max_log_length: job.max_log_length,
    };
    let outcome = QuickJs::new(options)
        .run(&job.code, &job.tools, call, limits)
        .await;
    let done = match outcome {
        Ok(output) => Done::Ok {
            result: output.result,
            logs: output.logs,
        },
        Err(CodeFailure::Error { message, logs }) => Done::Error {
            kind: "error".into(),
            message,
            logs,
            length: 0,
        },
        Err(CodeFailure::Timeout { logs }) => Done::Error {
            kind: "timeout".into(),
            message: String::new(),
            logs,
            length: 0,
        },
        Err(CodeFailure::ResultTooLarge { length, logs }) => Done::Error {
            kind: "tooLarge".into(),
            message: String::new(),
            logs,
            length,
        },
    };
    write_line(&mut *stdout.lock().await, &FromWorker::Done(done)).await?;
    reader.abort();
    Ok(())
}
