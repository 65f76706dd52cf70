//! The worker's side of [`WorkerIsolate`](super::WorkerIsolate): [`serve_worker`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::oneshot;

use crate::quickjs::{QuickJs, QuickJsOptions};
use crate::runtime::{CodeFailure, RunLimits, ToolCall};
use crate::worker::{Done, FromWorker, ToWorker, encode};
use toolkit_core::Failure;

/// The calls a worker has asked the host for, by number, each with where its answer goes.
type Waiting = HashMap<u64, oneshot::Sender<Result<Value, Failure>>>;

/// The worker's side, over standard input and output: reads one run, runs it in a [`QuickJs`]
/// isolate with `options`, asks the host for each tool call, and writes the outcome. For the
/// `main` of a worker program, inside a Tokio runtime (a current-thread one does):
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
///     let served = runtime.map(|runtime| {
///         runtime.block_on(toolkit_code::serve_worker(toolkit_code::QuickJsOptions::default()))
///     });
///     match served {
///         Ok(Ok(())) => std::process::ExitCode::SUCCESS,
///         Ok(Err(error)) | Err(error) => {
///             eprintln!("worker: {error}");
///             std::process::ExitCode::FAILURE
///         }
///     }
/// }
/// ```
///
/// # Errors
///
/// When standard input holds no run or standard output cannot be written.
pub async fn serve_worker(options: QuickJsOptions) -> std::io::Result<()> {
    let (input, output) = worker_stdio();
    serve_worker_on(options, input, output).await
}

/// The worker's standard input, as [`serve_worker_on`] reads it.
pub type WorkerInput = Box<dyn AsyncRead + Unpin + Send>;
/// The worker's standard output, as [`serve_worker_on`] writes it.
pub type WorkerOutput = Box<dyn AsyncWrite + Unpin + Send>;

/// The worker's standard input and output, as [`serve_worker`] uses them: on Unix, when they
/// are pipes (as [`WorkerIsolate`](super::WorkerIsolate) starts a worker) and the runtime has
/// its I/O driver, pipes the runtime polls; else Tokio's `stdin` and `stdout`, which read and
/// write on its blocking threads — a hand-off on every line of a run, and a thread started for
/// the first write while a read waits. For a worker program that wraps them before calling
/// [`serve_worker_on`]; call it inside the worker's Tokio runtime.
pub fn worker_stdio() -> (WorkerInput, WorkerOutput) {
    #[cfg(unix)]
    if let Some((input, output)) = pipes() {
        return (Box::new(input), Box::new(output));
    }
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}

/// Standard input and output as pipes the runtime polls, when they are pipes.
#[cfg(unix)]
fn pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd as _;
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let input = tokio::net::unix::pipe::Receiver::from_file(std::fs::File::from(input)).ok()?;
    let output = tokio::net::unix::pipe::Sender::from_file(std::fs::File::from(output)).ok()?;
    Some((input, output))
}

/// [`serve_worker`] over any pipe: the run and the host's answers are read from `input`, the
/// calls and the outcome written to `output`.
///
/// # Errors
///
/// When `input` holds no run or `output` cannot be written.
pub async fn serve_worker_on<I, O>(
    options: QuickJsOptions,
    input: I,
    output: O,
) -> std::io::Result<()>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    // The isolate's thread, runtime and context are made while the run is on its way.
    let prepared = QuickJs::new(options).prepare();
    let mut output = output;
    output.write_all(&encode(&FromWorker::Ready {})).await?;
    output.flush().await?;
    let mut lines = BufReader::new(input).lines();
    let Some(first) = lines.next_line().await? else {
        return Err(std::io::Error::other("no run was given"));
    };
    let Ok(ToWorker::Run(job)) = serde_json::from_str::<ToWorker>(&first) else {
        return Err(std::io::Error::other("the first line is no run"));
    };
    output.write_all(&encode(&FromWorker::Started {})).await?;
    output.flush().await?;
    let output = Arc::new(tokio::sync::Mutex::new(output));
    let waiting: Arc<Mutex<Waiting>> = Arc::default();
    let next = Arc::new(AtomicU64::new(0));
    let call: ToolCall = {
        let (output, waiting) = (Arc::clone(&output), Arc::clone(&waiting));
        Arc::new(move |name: String, input: Value| {
            let (output, waiting, next) =
                (Arc::clone(&output), Arc::clone(&waiting), Arc::clone(&next));
            Box::pin(async move {
                let gone = || Failure::new("UnknownError", "The host is gone.", false);
                let id = next.fetch_add(1, Ordering::SeqCst);
                let (answer, answered) = oneshot::channel();
                if let Ok(mut waiting) = waiting.lock() {
                    waiting.insert(id, answer);
                }
                let request = encode(&FromWorker::Call { id, name, input });
                let mut output = output.lock().await;
                if output.write_all(&request).await.is_err() || output.flush().await.is_err() {
                    return Err(gone());
                }
                drop(output);
                answered.await.unwrap_or_else(|_| Err(gone()))
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
    let outcome = match prepared {
        Ok(prepared) => prepared.run(&job.code, &job.tools, call, limits).await,
        Err(failure) => Err(failure),
    };
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
    let mut output = output.lock().await;
    output.write_all(&encode(&FromWorker::Done(done))).await?;
    output.flush().await?;
    reader.abort();
    Ok(())
}
