//! The hardened isolate: each run in a worker process that is killed at the deadline.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::mpsc;

use crate::quickjs::{QuickJsOptions, longer_than, tool_result_too_large};
use crate::runtime::{CodeFailure, CodeRuntime, RunLimits, RunOutput, ToolCall};
use toolkit_core::{BoxFuture, Failure};

/// How long past the deadline a worker may take to say it timed out before it is killed.
const GRACE: Duration = Duration::from_millis(100);
/// The longest line a worker may write (a result is capped far below this).
pub(super) const MAX_LINE: usize = 64 << 20;

/// Runs each execution in a worker process started for it.
///
/// [`QuickJs`](super::QuickJs) shares the host's process: a bug in the C engine would take the
/// host down with it, and a loop of heavy built-ins keeps its thread busy a while past the
/// deadline. [`WorkerIsolate`] runs each execution in a process of its own — any program whose
/// `main` calls [`serve_worker`](super::serve_worker) — and speaks to it in JSON lines over its
/// standard input and output. The tools still run in the host: the worker asks for each call,
/// and the host answers. At the deadline, or when the run's future is dropped, the process is
/// killed; a process that dies is a `CodeError` the model reads, and the host goes on.
///
/// A worker starts with an empty environment (the host's credentials stay in the host), plus the
/// variables given with [`WorkerIsolate::env`]. Its lines are read at most 64 MiB at a time (a
/// longer one kills it). The run is written to it under the deadline, and the host's answers to
/// its calls by a task of their own, so a worker that stops reading never holds the run past
/// its deadline.
///
/// [`WorkerPool`](super::WorkerPool) starts workers ahead of the runs that need them.
///
/// The protocol, one JSON object a line:
///
/// - host → worker: `{"run": {"code", "tools", "timeoutMs", "maxResultLength", "maxLogLength"}}`,
///   then `{"answer": {"id", "ok": value}}` or `{"answer": {"id", "failure": {code, message,
///   retryable}}}` for each call;
/// - worker → host: `{"ready": {}}` once it can run, `{"started": {}}` once it has read the run
///   (before any of its code runs), `{"call": {"id", "name", "input"}}` for each tool call, then
///   one `{"done": {"ok": {"result", "logs"}}}` or `{"done": {"error": {"kind", "message",
///   "logs", "length"}}}`.
#[derive(Clone, Debug)]
pub struct WorkerIsolate {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    max_tool_result_length: usize,
}

impl WorkerIsolate {
    /// Workers started as `program` (with no arguments yet, and an empty environment).
    ///
    /// ```no_run
    /// use toolkit_code::WorkerIsolate;
    /// let isolate = WorkerIsolate::new("toolkit-gen").arg("quickjs-worker");
    /// ```
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
            max_tool_result_length: QuickJsOptions::default().max_tool_result_length,
        }
    }

    /// The longest tool result, in bytes of JSON, sent to a worker (8 MiB by default, as
    /// [`QuickJsOptions`]); a longer one reaches the code as a `ResultTooLarge` error it can
    /// catch, and never crosses the pipe.
    #[must_use]
    pub fn max_tool_result_length(mut self, max: usize) -> Self {
        self.max_tool_result_length = max;
        self
    }

    /// Adds an argument to the worker's command line.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets one variable of the worker's environment, which is otherwise empty: nothing of the
    /// host's environment reaches a worker unless it is given here.
    ///
    /// ```no_run
    /// use toolkit_code::WorkerIsolate;
    /// let isolate = WorkerIsolate::new("toolkit-gen").arg("quickjs-worker").env("LANG", "C.UTF-8");
    /// ```
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Starts one worker process, waiting for its run.
    pub(super) fn start(&self) -> Result<Worker, CodeFailure> {
        let mut child = tokio::process::Command::new(resolve(&self.program))
            .args(&self.args)
            .env_clear()
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| crashed(format!("The isolate's process could not start: {error}.")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(crashed("The isolate's process has no pipes.".to_owned()));
        };
        Ok(Worker {
            child,
            stdin,
            stdout,
            max_tool_result_length: self.max_tool_result_length,
        })
    }
}

/// `program` as the host's `PATH` finds it, when it is a bare name: the worker's own environment
/// is empty, so its `PATH` cannot be what finds it.
fn resolve(program: &OsString) -> OsString {
    let bare = std::path::Path::new(program).components().count() == 1
        && !std::path::Path::new(program).is_absolute();
    if !bare {
        return program.clone();
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|directory| directory.join(program))
        .find(|candidate| candidate.is_file())
        .map_or_else(|| program.clone(), std::path::PathBuf::into_os_string)
}

/// A started worker process and its pipes.
#[derive(Debug)]
pub(super) struct Worker {
    pub(super) child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    max_tool_result_length: usize,
}

impl Worker {
    /// Runs one execution on this worker, then kills it (a worker serves one run) and reaps it
    /// in the background, calling `reaped` once it is gone.
    pub(super) async fn run(
        self,
        code: &str,
        tools: &[String],
        call: ToolCall,
        limits: RunLimits,
        reaped: impl FnOnce() + Send + 'static,
    ) -> Result<RunOutput, Failed> {
        let Worker {
            mut child,
            stdin,
            stdout,
            max_tool_result_length,
        } = self;
        let outcome = drive(
            &mut child,
            stdin,
            stdout,
            Run {
                code,
                tools,
                call,
                limits,
                max_tool_result_length,
            },
        )
        .await;
        reap(child, reaped);
        outcome
    }
}

impl Worker {
    /// Waits until the worker says it is ready (at most `timeout`): whether it did.
    pub(super) async fn ready(&mut self, timeout: Duration) -> bool {
        let mut line = Vec::new();
        let read = async {
            let mut byte = [0u8; 1];
            // Byte by byte, so that nothing past the line is taken from the run's reader.
            while line.len() < 64 {
                match self.stdout.read(&mut byte).await {
                    Ok(1) if byte[0] == b'\n' => return true,
                    Ok(1) => line.push(byte[0]),
                    _ => return false,
                }
            }
            false
        };
        tokio::time::timeout(timeout, read).await.unwrap_or(false)
            && matches!(serde_json::from_slice(&line), Ok(FromWorker::Ready {}))
    }
}

/// Kills a worker and waits for it in the background, so that it never stays a zombie; then
/// calls `reaped`.
pub(super) fn reap(mut child: Child, reaped: impl FnOnce() + Send + 'static) {
    let _ = child.start_kill();
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn(async move {
                let _ = child.wait().await;
                reaped();
            });
        }
        // Tokio's own reaper collects it when no runtime is left to wait on.
        Err(_) => {
            drop(child);
            reaped();
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum ToWorker {
    Run(Job),
    Answer(Answer),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Job {
    pub(super) code: String,
    pub(super) tools: Vec<String>,
    pub(super) timeout_ms: u64,
    pub(super) max_result_length: usize,
    pub(super) max_log_length: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Answer {
    pub(super) id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) ok: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) failure: Option<Failure>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum FromWorker {
    /// Said once the worker's isolate is made, before its run is given.
    Ready {},
    /// Said once the run is read, before any of its code runs.
    Started {},
    Call {
        id: u64,
        name: String,
        input: Value,
    },
    Done(Done),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum Done {
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
            self.start()?
                .run(code, tools, call, limits, || ())
                .await
                .map_err(CodeFailure::from)
        })
    }
}

/// How a run on one worker failed.
#[derive(Debug)]
pub(super) enum Failed {
    /// The worker ended before it read the run: none of the code ran, so another worker may
    /// take the run (a worker can die while it waits, however it was checked when taken).
    Untaken(CodeFailure),
    /// The run failed once the worker had it.
    Run(CodeFailure),
}

impl From<Failed> for CodeFailure {
    fn from(failed: Failed) -> Self {
        match failed {
            Failed::Untaken(failure) | Failed::Run(failure) => failure,
        }
    }
}

/// What the task that reads a worker's output sees.
enum Line {
    Read(Vec<u8>),
    TooLong,
    End,
}

/// Aborts a task when dropped: the reader and writer of a run end with it.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What one run asks of its worker.
struct Run<'a> {
    code: &'a str,
    tools: &'a [String],
    call: ToolCall,
    limits: RunLimits,
    max_tool_result_length: usize,
}

/// One run's conversation with its worker, until the worker is done, dies, or the deadline.
async fn drive(
    child: &mut Child,
    mut stdin: ChildStdin,
    stdout: ChildStdout,
    run: Run<'_>,
) -> Result<RunOutput, Failed> {
    let Run {
        code,
        tools,
        call,
        limits,
        max_tool_result_length: max,
    } = run;
    let timeout = limits.deadline.saturating_duration_since(Instant::now());
    let job = ToWorker::Run(Job {
        code: code.to_owned(),
        tools: tools.to_vec(),
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        max_result_length: limits.max_result_length,
        max_log_length: limits.max_log_length,
    });
    let deadline = tokio::time::Instant::from_std(limits.deadline + GRACE);
    // The run is written here, not handed to a task: a worker that said it is ready reads it
    // at once, and one that does not is cut off at the deadline. (A worker that is gone
    // already is seen on its output, below, as one that ended.)
    let written = tokio::time::timeout_at(deadline, stdin.write_all(&encode(&job))).await;
    if written.is_err() {
        return Err(Failed::Run(CodeFailure::Timeout { logs: Vec::new() }));
    }
    // Whether the worker has read the run: until it says so, none of the code has run.
    let mut started = false;
    let mut stdin = Some(stdin);
    // Answers to the worker's calls go through a task of their own, started at the first: a
    // worker that stops reading fills its pipe and blocks that task, never this loop, which
    // keeps watching the deadline.
    let mut outbox: Option<(mpsc::UnboundedSender<Vec<u8>>, AbortOnDrop)> = None;
    // The worker's lines are read here, a line at a time into `pending`, which keeps a line
    // read in part when another branch wins.
    let mut reader = BufReader::new(stdout);
    let mut pending = Vec::new();
    let mut calls = FuturesUnordered::new();
    loop {
        tokio::select! {
            line = read_line(&mut reader, &mut pending, MAX_LINE) => {
                let line = match line {
                    Line::Read(line) => line,
                    Line::TooLong => {
                        return Err(Failed::Run(crashed(format!(
                            "The isolate's process wrote a line of more than {MAX_LINE} bytes."
                        ))));
                    }
                    Line::End => {
                        let status = tokio::time::timeout(GRACE, child.wait())
                            .await
                            .ok()
                            .and_then(Result::ok)
                            .map(|status| format!(" ({status})"))
                            .unwrap_or_default();
                        if !started {
                            return Err(Failed::Untaken(crashed(format!(
                                "The isolate's process ended before it read the run{status}."
                            ))));
                        }
                        return Err(Failed::Run(crashed(format!(
                            "The isolate's process ended without an answer{status}; the code may have crashed it."
                        ))));
                    }
                };
                match serde_json::from_slice::<FromWorker>(&line) {
                    Ok(FromWorker::Call { id, name, input }) => {
                        let answer = call(name, input);
                        calls.push(async move { (id, answer.await) });
                    }
                    Ok(FromWorker::Done(done)) => return finish(done).map_err(Failed::Run),
                    Ok(FromWorker::Ready {}) => {}
                    Ok(FromWorker::Started {}) => started = true,
                    Err(_) => return Err(Failed::Run(crashed("The isolate's process said something unreadable.".to_owned()))),
                }
            }
            Some((id, answer)) = calls.next(), if !calls.is_empty() => {
                let answer = match answer {
                    Ok(value) if longer_than(&value, max) => {
                        Answer { id, ok: None, failure: Some(tool_result_too_large(max)) }
                    }
                    Ok(value) => Answer { id, ok: Some(value), failure: None },
                    Err(failure) => Answer { id, ok: None, failure: Some(failure) },
                };
                let (outbox, _) = outbox.get_or_insert_with(|| {
                    let (outbox, mut to_write) = mpsc::unbounded_channel::<Vec<u8>>();
                    let mut stdin = stdin.take();
                    let writer = tokio::spawn(async move {
                        while let Some(line) = to_write.recv().await {
                            let Some(stdin) = stdin.as_mut() else { break };
                            if stdin.write_all(&line).await.is_err() {
                                break;
                            }
                        }
                    });
                    (outbox, AbortOnDrop(writer))
                });
                // A worker that is gone is seen on its output.
                let _ = outbox.send(encode(&ToWorker::Answer(answer)));
            }
            () = tokio::time::sleep_until(deadline) => {
                return Err(Failed::Run(CodeFailure::Timeout { logs: Vec::new() }));
            }
        }
    }
}

/// Reads one line of at most `max` bytes (its newline not counted), into `pending` first:
/// a read cancelled part way (another branch of the run's loop won) keeps what it read there,
/// and the next call goes on from it.
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    pending: &mut Vec<u8>,
    max: usize,
) -> Line {
    let limit =
        u64::try_from(max.saturating_add(1).saturating_sub(pending.len())).unwrap_or(u64::MAX);
    let read = reader.take(limit).read_until(b'\n', pending).await;
    match read {
        Err(_) => Line::End,
        Ok(_) if pending.last() == Some(&b'\n') => {
            pending.pop();
            Line::Read(std::mem::take(pending))
        }
        Ok(_) if pending.len() > max => Line::TooLong,
        Ok(0) if pending.is_empty() => Line::End,
        // The last line, with no newline: the worker ended after it.
        Ok(_) => Line::Read(std::mem::take(pending)),
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

/// `message` as one line of JSON.
pub(super) fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}
