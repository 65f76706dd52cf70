//! stdio: the server is a process this source starts, spoken to in newline-delimited JSON-RPC on
//! its stdin and stdout. Its stderr is logs, forwarded to `tracing` and never read as protocol.
//!
//! The process is started when the source first needs it, and again (once per call) when it has
//! died. It is stopped by closing its stdin, then SIGTERM, then SIGKILL, each after a bounded
//! wait, and always waited for, so that it leaves no zombie. On Unix it runs in a process group
//! of its own and the signals go to the group: a server behind `npx -y`, `uvx`, `sh -c` or
//! `docker run -i` is stopped with the program that started it. (Elsewhere only the process
//! started is killed.)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::{FutureExt as _, StreamExt as _};
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt as _;
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

use super::channel::{Pending, Waiting, received};
use super::requests;
use super::subscription::{Heard, Streams};
use super::{Agreed, Fault, Reply, Request, Transport};
use super::{MAX_ANSWERS_IN_FLIGHT, spawn_bounded};
use crate::changes::{Changes, says_a_list_changed};
use crate::jsonrpc::{self, Incoming, Outcome};
use crate::negotiation::{self, Next};
use crate::resources_updated::RESOURCES_UPDATED;
use crate::revision::{self, Revision};
use crate::{Elicitation, McpOptions, StdioCommand};
use toolkit_core::context::ELICITATION_CREATE;
use toolkit_core::{BoxFuture, Reason};

/// The longest line of the server's stderr that is logged whole.
const MAX_LOG_LINE: usize = 64 * 1024;

/// The most lines waiting for the server's stdin. A request waits for room; an answer to a
/// server's request (or a cancellation) that finds none is dropped, so that a server that writes
/// requests without reading its stdin cannot make the source hold answers without end.
const STDIN_QUEUE: usize = 64;

/// The stdio transport.
pub(crate) struct Stdio {
    name: String,
    command: StdioCommand,
    options: McpOptions,
    next_id: Arc<AtomicU64>,
    process: tokio::sync::Mutex<Option<Arc<Process>>>,
    /// Told of each `notifications/tools/list_changed`, whichever process wrote it.
    changes: Arc<Changes>,
    /// The served calls in flight, whose client is asked what the server asks.
    in_flight: Arc<requests::InFlight>,
    /// How many times the process was started.
    starts: AtomicU64,
    /// The calls sent to the server that wait for progress: what its stdout says of progress
    /// goes to them only, whichever process wrote it.
    progress: toolkit_core::progress::Routes,
    /// The long-lived requests in flight (`events/stream`): the notifications that name one go
    /// to it, whichever process wrote them.
    streams: Arc<Streams>,
}

impl std::fmt::Debug for Stdio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stdio")
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

/// A running server process.
struct Process {
    pid: Option<u32>,
    /// Lines for the server's stdin; dropping the sender closes it. Every line goes through one
    /// writer task, so that a call dropped in the middle of a write never leaves half a line on
    /// the server's stdin, and a cancellation can be sent from `Drop`.
    outgoing: Mutex<Option<mpsc::Sender<String>>>,
    pending: Arc<Pending>,
    /// Whether the server speaks the stateless revision, in which it sends no request: any it
    /// sends anyway is left unanswered.
    modern: Arc<AtomicBool>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    settled: Mutex<Option<Agreed>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Process {
    /// Queues `message` for the server's stdin, waiting for room.
    async fn send(&self, message: &Value) -> Result<(), Fault> {
        self.send_line(jsonrpc::line(message)).await
    }

    /// Queues `line`, one JSON-RPC message, for the server's stdin, waiting for room.
    async fn send_line(&self, line: String) -> Result<(), Fault> {
        let sender = self
            .outgoing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match sender {
            Some(sender) if sender.send(line).await.is_ok() => Ok(()),
            _ => Err(Reason::unavailable("the server process has ended").into()),
        }
    }

    /// Queues `message` for the server's stdin if there is room now; drops it otherwise.
    fn send_if_room(&self, message: &Value) {
        let outgoing = self.outgoing.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = outgoing.as_ref() {
            let _ = sender.try_send(jsonrpc::line(message));
        }
    }

    fn is_alive(&self) -> bool {
        !self.pending.is_closed()
    }

    fn settled(&self) -> Option<Agreed> {
        self.settled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The revision settled on, if settled: read on every call, without copying the server's
    /// capabilities as [`Process::settled`] does.
    fn revision(&self) -> Option<Revision> {
        self.settled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|settled| settled.revision.clone())
    }
}

impl Stdio {
    pub(crate) fn new(name: String, command: StdioCommand, options: McpOptions) -> Self {
        Self {
            name,
            command,
            next_id: Arc::new(AtomicU64::new(1)),
            process: tokio::sync::Mutex::new(None),
            changes: Arc::default(),
            in_flight: Arc::new(requests::InFlight::new(&options)),
            options,
            starts: AtomicU64::new(0),
            progress: toolkit_core::progress::Routes::default(),
            streams: Arc::default(),
        }
    }

    /// The running, settled process: started if there is none, started again if it died.
    async fn process(&self) -> Result<Arc<Process>, Fault> {
        let mut slot = self.process.lock().await;
        if let Some(process) = slot.as_ref()
            && process.is_alive()
            && process.revision().is_some()
        {
            return Ok(process.clone());
        }
        if let Some(dead) = slot.take() {
            tracing::info!(source = %self.name, "the stdio server has ended; starting it again");
            spawn_bounded(
                self.shutdown_bound(),
                shut_down(dead, self.options.shutdown_wait),
            );
        }
        let process = Arc::new(self.start()?);
        self.starts.fetch_add(1, Ordering::Relaxed);
        *slot = Some(process.clone());
        match self.negotiate(&process).await {
            Ok(settled) => {
                process
                    .modern
                    .store(settled.revision == Revision::Modern, Ordering::Relaxed);
                *process
                    .settled
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(settled);
                Ok(process)
            }
            Err(fault) => {
                slot.take();
                spawn_bounded(
                    self.shutdown_bound(),
                    shut_down(process, self.options.shutdown_wait),
                );
                Err(fault)
            }
        }
    }

    fn shutdown_bound(&self) -> Duration {
        self.options.shutdown_wait * 3 + Duration::from_secs(1)
    }

    /// Starts the process and the tasks that write its stdin and read its stdout and stderr.
    fn start(&self) -> Result<Process, Fault> {
        let mut child = self.command.to_tokio().spawn().map_err(|error| {
            Reason::unavailable(format!("the server process could not be started: {error}"))
        })?;
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(Reason::unknown("the server process has no pipes").into());
        };
        let pending = Arc::new(Pending::new());
        let child = Arc::new(tokio::sync::Mutex::new(Some(child)));
        let (sender, receiver) = mpsc::channel(STDIN_QUEUE);
        let modern = Arc::new(AtomicBool::new(false));
        let writer = tokio::spawn(write_lines(stdin, receiver));
        let reader = tokio::spawn(read_stdout(
            FramedRead::new(
                stdout,
                LinesCodec::new_with_max_length(self.options.max_response_bytes),
            ),
            (pending.clone(), self.progress.clone(), self.streams.clone()),
            (sender.downgrade(), modern.clone(), self.changes.clone()),
            (child.clone(), self.options.shutdown_wait),
            (
                self.options.elicitation.clone(),
                self.options.timeout,
                self.in_flight.clone(),
            ),
        ));
        let name = self.name.clone();
        // stderr is read to its end whatever it holds: a server whose stderr is no longer read
        // dies of a broken pipe at its next log line.
        let logs = tokio::spawn(async move {
            let mut lines = FramedRead::new(stderr, LinesCodec::new_with_max_length(MAX_LOG_LINE));
            while let Some(line) = lines.next().await {
                match line {
                    Ok(line) => {
                        tracing::info!(target: "toolkit_mcp::stderr", source = %name, "{line}");
                    }
                    Err(error) if recoverable(&error) => {
                        tracing::info!(target: "toolkit_mcp::stderr", source = %name, "(a line too long to log, or not UTF-8)");
                        lines = resumed(lines);
                    }
                    Err(_) => break,
                }
            }
        });
        Ok(Process {
            pid,
            outgoing: Mutex::new(Some(sender)),
            pending,
            modern,
            child,
            settled: Mutex::new(None),
            tasks: vec![writer, reader, logs],
        })
    }

    /// Sends a request to `process` in `revision` and waits for its answer; the notifications that
    /// name it go to `heard`, if given, until then.
    async fn exchange(
        &self,
        process: &Process,
        revision: &Revision,
        method: &str,
        params: Map<String, Value>,
        heard: Option<Heard>,
    ) -> Result<Outcome, Fault> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let params = match revision {
            Revision::Modern => revision::with_modern_meta(params),
            Revision::Session { .. } => params,
        };
        let _route = heard.map(|heard| self.streams.open(id, heard));
        let receiver = process.pending.wait_for(id)?;
        let mut waiting = Waiting {
            pending: &process.pending,
            id,
            done: false,
            on_cancel: |id| process.send_if_room(&jsonrpc::cancelled(id)),
        };
        let line = jsonrpc::request_line(id, method, &params);
        if let Err(fault) = process.send_line(line).await {
            waiting.done = true;
            process.pending.forget(id);
            return Err(fault);
        }
        let answer = received(receiver).await;
        waiting.done = true;
        answer
    }

    /// `server/discover` with a bounded wait, then `initialize` if the server is not modern.
    async fn negotiate(&self, process: &Process) -> Result<Agreed, Fault> {
        let probe = self.exchange(
            process,
            &Revision::Modern,
            "server/discover",
            Map::new(),
            None,
        );
        let mut silent = false;
        let next = match tokio::time::timeout(self.options.discover_wait, probe).await {
            Ok(Ok(Ok(result))) => negotiation::after_discovered(&result)?,
            Ok(Ok(Err(error))) => negotiation::after_refusal(&error)?,
            Ok(Err(fault)) => return Err(fault),
            // No answer in time: some servers of the session revisions never answer it.
            Err(_) => {
                silent = true;
                negotiation::after_silence()
            }
        };
        let version = match next {
            Next::Modern(settled) => return Ok(settled),
            Next::Initialize(version) => version,
        };
        let revision = Revision::Session { version };
        let outcome = self
            .exchange(
                process,
                &revision,
                "initialize",
                revision::initialize_params(version, &self.options),
                None,
            )
            .await?;
        // A server that was only slow to start (its discover answer came after the wait) and
        // speaks the stateless revision alone refuses `initialize` with -32022: ask it again,
        // without the bounded wait this time.
        if silent
            && matches!(&outcome, Err(error) if error.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION)
        {
            let again = self
                .exchange(
                    process,
                    &Revision::Modern,
                    "server/discover",
                    Map::new(),
                    None,
                )
                .await?;
            if let Ok(result) = again
                && let Next::Modern(settled) = negotiation::after_discovered(&result)?
            {
                return Ok(settled);
            }
        }
        let settled = negotiation::after_initialize(outcome)?;
        process
            .send(&jsonrpc::notification(
                "notifications/initialized",
                Map::new(),
            ))
            .await?;
        Ok(settled)
    }

    async fn send(&self, request: Request) -> Result<Reply, Fault> {
        // stdio ties no request of the server to a call: the client of the one served call in
        // flight is asked.
        // A task's `tasks/result` is where its server asks what the call needs.
        let _in_flight = if matches!(request.method, "tools/call" | "tasks/result") {
            self.in_flight
                .enter(requests::relay_of(&self.options, &request.context))
        } else {
            None
        };
        let process = self.process().await?;
        let revision = process.revision().unwrap_or(Revision::Session {
            version: revision::SESSION_REVISIONS[0],
        });
        let params = match revision {
            Revision::Modern => {
                crate::input_required::declared(request.params, &self.options, &request.context)
            }
            Revision::Session { .. } => request.params,
        };
        // A subscription's notifications (`events/stream`) go to where its context says.
        let heard = request.context.extension::<Heard>().cloned();
        let outcome = self
            .exchange(&process, &revision, request.method, params, heard)
            .await?;
        Ok(Reply { outcome, revision })
    }

    /// Stops the process, if one runs, and waits for it.
    pub(crate) async fn close(&self) {
        let process = self.process.lock().await.take();
        if let Some(process) = process {
            shut_down(process, self.options.shutdown_wait).await;
        }
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        if let Some(process) = self.process.get_mut().take() {
            spawn_bounded(
                self.shutdown_bound(),
                shut_down(process, self.options.shutdown_wait),
            );
        }
    }
}

impl Transport for Stdio {
    fn request(&self, request: Request) -> BoxFuture<'_, Result<Reply, Fault>> {
        Box::pin(self.send(request))
    }

    fn settle(&self) -> BoxFuture<'_, Result<Agreed, Fault>> {
        Box::pin(async {
            let process = self.process().await?;
            process
                .settled()
                .ok_or_else(|| Reason::unavailable("the server process has ended").into())
        })
    }

    fn connection(&self) -> u64 {
        self.starts.load(Ordering::Relaxed)
    }

    fn marks_apply(&self, _era: &Revision) -> bool {
        // Headers are an HTTP matter; a stdio client takes tools as they are.
        false
    }

    fn progress(&self) -> &toolkit_core::progress::Routes {
        &self.progress
    }

    fn tools_changed(&self) -> Option<crate::ToolsChanged> {
        Some(self.changes.subscribe())
    }

    fn resources_updated(&self) -> Option<crate::ResourcesUpdated> {
        Some(self.changes.resources())
    }

    fn task_statuses(&self) -> Option<crate::TaskStatuses> {
        Some(self.changes.task_statuses())
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(Stdio::close(self))
    }

    fn notify(&self, method: &'static str) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // The process there is: none is started to be told.
            let process = self.process.lock().await.clone();
            let Some(process) = process.filter(|process| process.is_alive()) else {
                return;
            };
            if process
                .revision()
                .is_some_and(|revision| revision != Revision::Modern)
                && process
                    .send(&jsonrpc::notification(method, Map::new()))
                    .await
                    .is_err()
            {
                tracing::debug!(method, "the stdio server could not be told");
            }
        })
    }
}

/// Writes each line given to the server's stdin; ends (closing stdin) when every sender is gone.
async fn write_lines(mut stdin: ChildStdin, mut lines: mpsc::Receiver<String>) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Reads the server's stdout: answers go to whoever waits, a server's requests are answered.
async fn read_stdout(
    mut lines: FramedRead<tokio::process::ChildStdout, LinesCodec>,
    (pending, progress, streams): (Arc<Pending>, toolkit_core::progress::Routes, Arc<Streams>),
    (outgoing, modern, changes): (mpsc::WeakSender<String>, Arc<AtomicBool>, Arc<Changes>),
    (child, wait): (Arc<tokio::sync::Mutex<Option<Child>>>, Duration),
    (elicitation, timeout, in_flight): (Option<Elicitation>, Duration, Arc<requests::InFlight>),
) {
    // Room for the host's answers in flight; pings and refusals are answered at once.
    let answering = Arc::new(tokio::sync::Semaphore::new(MAX_ANSWERS_IN_FLIGHT));
    while let Some(line) = lines.next().await {
        let line = match line {
            Ok(line) => line,
            Err(error) if recoverable(&error) => {
                if matches!(error, LinesCodecError::MaxLineLengthExceeded) {
                    // A line past the cap cannot be read to tell whose answer it is: those
                    // waiting are told the answer was too large rather than left to the timeout.
                    pending.fail_all(&Fault::TooLarge);
                } else {
                    tracing::debug!("the stdio server wrote a line that is not UTF-8");
                }
                // A codec that failed ends its stream; a new one goes on after the bad line (the
                // rest of a long line is skipped), so the server's stdout is always read.
                lines = resumed(lines);
                continue;
            }
            Err(error) => {
                tracing::debug!(%error, "reading the stdio server's stdout failed");
                break;
            }
        };
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            tracing::debug!("the stdio server wrote a line that is not JSON");
            continue;
        };
        for message in Incoming::from_json(value, &progress) {
            match message {
                Incoming::Response { id, outcome } => pending.answer(&id, Ok(outcome)),
                Incoming::Request { .. } if modern.load(Ordering::Relaxed) => {
                    tracing::debug!(
                        "the stdio server sent a request, which the stateless revision has none of; left unanswered"
                    );
                }
                Incoming::Request(request) => {
                    let send = move |outgoing: &mpsc::WeakSender<String>, answer: Value| {
                        if let Some(sender) = outgoing.upgrade()
                            && sender.try_send(answer.to_string()).is_err()
                        {
                            tracing::debug!(
                                "the stdio server's stdin is full; an answer to its request is dropped"
                            );
                        }
                    };
                    let relay = in_flight.only();
                    let waits = requests::relays(&relay, &request.method)
                        || (elicitation.is_some() && request.method == ELICITATION_CREATE);
                    if waits {
                        let Ok(permit) = answering.clone().try_acquire_owned() else {
                            tracing::debug!(
                                "too many answers to the server in flight; one is dropped"
                            );
                            continue;
                        };
                        let host = elicitation.clone();
                        let outgoing = outgoing.clone();
                        spawn_bounded(timeout, async move {
                            let _permit = permit;
                            if let Some(answer) = requests::answer(request, host, relay).await {
                                send(&outgoing, answer);
                            }
                        });
                    } else if let Some(Some(answer)) =
                        // Nothing to wait for: answered now.
                        requests::answer(request, None, None).now_or_never()
                    {
                        send(&outgoing, answer);
                    }
                }
                Incoming::Notification { method, .. } if says_a_list_changed(&method) => {
                    changes.tell()
                }
                Incoming::Notification { method, params } if method == RESOURCES_UPDATED => {
                    changes.resource_updated(params.as_ref());
                }
                Incoming::Notification { method, params }
                    if method == crate::task_statuses::TASK_STATUS =>
                {
                    changes.task_status(params.as_ref());
                }
                // Anything else goes to the long-lived request it names, if one waits.
                Incoming::Notification { method, params } => {
                    streams.deliver(&method, params.as_ref());
                }
            }
        }
    }
    pending.close("the server process ended");
    // A server whose stdout ended has exited, or soon will: reap it, so that it leaves no zombie
    // while nothing else waits for it.
    let mut child = child.lock().await;
    if let Some(running) = child.as_mut()
        && tokio::time::timeout(wait, running.wait()).await.is_ok()
    {
        child.take();
    }
}

/// `lines` able to read again after a decoding error (a `FramedRead` ends its stream at one),
/// with what it had read and the codec's state, which skips the rest of a line too long.
fn resumed<R: tokio::io::AsyncRead>(lines: FramedRead<R, LinesCodec>) -> FramedRead<R, LinesCodec> {
    let parts = lines.into_parts();
    let mut fresh = FramedRead::new(parts.io, parts.codec);
    fresh.read_buffer_mut().extend_from_slice(&parts.read_buf);
    fresh
}

/// Whether reading goes on after `error`: a line too long, or not UTF-8 (which the codec has
/// consumed), but not a failure to read the pipe.
fn recoverable(error: &LinesCodecError) -> bool {
    match error {
        LinesCodecError::MaxLineLengthExceeded => true,
        LinesCodecError::Io(error) => error.kind() == std::io::ErrorKind::InvalidData,
    }
}

/// Closes the process's stdin, waits; then SIGTERM, waits; then SIGKILL; and reaps it.
async fn shut_down(process: Arc<Process>, wait: Duration) {
    process
        .outgoing
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    process.pending.close("the source was closed");
    let child = process.child.lock().await.take();
    if let Some(mut child) = child {
        if tokio::time::timeout(wait, child.wait()).await.is_err() {
            signal_group(process.pid, Stop::Terminate);
            if tokio::time::timeout(wait, child.wait()).await.is_err() {
                signal_group(process.pid, Stop::Kill);
                let _ = child.kill().await;
            }
        }
        // The server may have ended and left processes it started (which kept its group):
        // they go with it.
        signal_group(process.pid, Stop::Kill);
    }
    for task in &process.tasks {
        task.abort();
    }
}

/// How a server's process group is told to stop.
#[derive(Clone, Copy, Debug)]
enum Stop {
    /// SIGTERM.
    Terminate,
    /// SIGKILL.
    Kill,
}

/// Signals the process group of the server `pid` (it leads its own group: see
/// [`StdioCommand`]), so that every process it started gets the signal too.
#[cfg(unix)]
fn signal_group(pid: Option<u32>, stop: Stop) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let signal = match stop {
        Stop::Terminate => Signal::SIGTERM,
        Stop::Kill => Signal::SIGKILL,
    };
    // A pid of 0 or 1 would name the caller's group or every process: never signalled.
    if let Some(pid) = pid
        .and_then(|pid| i32::try_from(pid).ok())
        .filter(|pid| *pid > 1)
    {
        let _ = killpg(Pid::from_raw(pid), signal);
    }
}

/// Without process groups, the process itself is killed by `Child::kill` alone.
#[cfg(not(unix))]
fn signal_group(_pid: Option<u32>, _stop: Stop) {}
