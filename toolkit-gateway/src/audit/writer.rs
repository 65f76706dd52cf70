//! The audit's writer: one thread that takes every record from an unbounded channel, writes each
//! batch to every sink (the file, standard output) and flushes it, and keeps what a sink could
//! not write to try again ([`RETRY`]), saying so in the gateway's readiness meanwhile. The calls
//! never wait on it, but for room: at most [`MAX_UNWRITTEN`](super::MAX_UNWRITTEN) records may
//! be unwritten at once (the room is given back as records are written).

use std::collections::VecDeque;
use std::io::{self, Write as _};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, oneshot};

use crate::Readiness;

/// How long the writer waits after a batch before it takes the next.
const LINGER: Duration = Duration::from_millis(2);

/// How long the writer waits before trying a failed sink again.
pub(crate) const RETRY: Duration = Duration::from_secs(1);

/// How long the writer waits before trying a failed sink again while the gateway stops.
const RETRY_FINISHING: Duration = Duration::from_millis(100);

/// The most records taken from the channel for one batch.
const MAX_BATCH: usize = 4_096;

/// Where records are written.
pub(crate) trait Sink: Send {
    /// The sink, for messages (the file's path).
    fn name(&self) -> String;

    /// Writes `lines` in order (each without its newline) and flushes them: how many were
    /// written whole, and the failure that stopped the rest.
    fn write(&mut self, lines: &[Arc<str>]) -> (usize, Option<io::Error>);

    /// Makes what was written durable (at the end).
    fn sync(&mut self) {}
}

/// Standard output, as JSON lines.
#[derive(Debug)]
pub(crate) struct Stdout;

impl Sink for Stdout {
    fn name(&self) -> String {
        "standard output".to_owned()
    }

    fn write(&mut self, lines: &[Arc<str>]) -> (usize, Option<io::Error>) {
        let mut batch = Vec::new();
        for line in lines {
            batch.extend_from_slice(line.as_bytes());
            batch.push(b'\n');
        }
        let mut out = io::stdout().lock();
        match out.write_all(&batch).and_then(|()| out.flush()) {
            Ok(()) => (lines.len(), None),
            Err(error) => (0, Some(error)),
        }
    }
}

/// What the writer is sent.
#[derive(Debug)]
pub(crate) enum Message {
    /// A record, as its JSON line.
    Line(Arc<str>),
    /// Write everything sent before, and answer how many records could not be written by
    /// `deadline` (written to standard error instead).
    Finish {
        deadline: Instant,
        answer: oneshot::Sender<usize>,
    },
}

/// A sink and what it has still to write.
struct Queue {
    sink: Box<dyn Sink>,
    pending: VecDeque<Arc<str>>,
    /// Why it failed last, while it fails.
    failing: Option<String>,
}

/// The writer's state, on its thread.
pub(crate) struct Writer {
    queues: Vec<Queue>,
    room: Arc<Semaphore>,
    readiness: Readiness,
    /// Records received, and given back room for (written by every sink).
    received: usize,
    released: usize,
    finishing: Vec<(Instant, oneshot::Sender<usize>)>,
}

impl Writer {
    pub(crate) fn new(
        sinks: Vec<Box<dyn Sink>>,
        room: Arc<Semaphore>,
        readiness: Readiness,
    ) -> Self {
        Self {
            queues: sinks
                .into_iter()
                .map(|sink| Queue {
                    sink,
                    pending: VecDeque::new(),
                    failing: None,
                })
                .collect(),
            room,
            readiness,
            received: 0,
            released: 0,
            finishing: Vec::new(),
        }
    }

    /// Writes what `messages` brings until every sender is gone, then what is left; after each
    /// batch it lingers [`LINGER`] so that the next is a batch too.
    pub(crate) fn run(mut self, messages: &Receiver<Message>) {
        loop {
            let waiting = self.queues.iter().any(|queue| !queue.pending.is_empty());
            let first = if waiting {
                let retry = if self.finishing.is_empty() {
                    RETRY
                } else {
                    RETRY_FINISHING
                };
                match messages.recv_timeout(retry) {
                    Ok(message) => Some(message),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match messages.recv() {
                    Ok(message) => Some(message),
                    Err(_) => break,
                }
            };
            let mut taken = 0;
            let mut next = first;
            while let Some(message) = next {
                self.take(message);
                taken += 1;
                // Empty, or every sender gone (seen at the next wait).
                next = if taken < MAX_BATCH {
                    messages.try_recv().ok()
                } else {
                    None
                };
            }
            self.write();
            self.answer_finishing(false);
            // Records that come meanwhile wait a moment and are written together: a sender then
            // finds the writer awake and wakes no thread, and the file is written a few hundred
            // times a second, not once a record.
            if self.finishing.is_empty() {
                std::thread::sleep(LINGER);
            }
        }
        self.write();
        self.answer_finishing(true);
        for queue in &mut self.queues {
            queue.sink.sync();
        }
    }

    fn take(&mut self, message: Message) {
        match message {
            Message::Line(line) => {
                self.received += 1;
                for queue in &mut self.queues {
                    queue.pending.push_back(Arc::clone(&line));
                }
            }
            Message::Finish { deadline, answer } => self.finishing.push((deadline, answer)),
        }
    }

    /// Writes each sink's pending records, gives back the room of those every sink wrote, and
    /// says in the readiness whether a sink fails.
    fn write(&mut self) {
        for queue in &mut self.queues {
            if queue.pending.is_empty() {
                continue;
            }
            let (written, failure) = queue.sink.write(queue.pending.make_contiguous());
            queue.pending.drain(..written.min(queue.pending.len()));
            match failure {
                Some(error) => {
                    let problem = format!(
                        "the audit records cannot be written to {}: {error}",
                        queue.sink.name()
                    );
                    if queue.failing.as_ref() != Some(&problem) {
                        tracing::error!(
                            kept = queue.pending.len(),
                            "{problem}; they are kept and tried again every {}s",
                            RETRY.as_secs()
                        );
                    }
                    queue.failing = Some(problem);
                }
                None => {
                    if queue.failing.take().is_some() {
                        tracing::info!(
                            "the audit records are written to {} again",
                            queue.sink.name()
                        );
                    }
                }
            }
        }
        let unwritten = self
            .queues
            .iter()
            .map(|queue| queue.pending.len())
            .max()
            .unwrap_or(0);
        let done = self.received.saturating_sub(unwritten);
        if done > self.released {
            self.room.add_permits(done - self.released);
            self.released = done;
        }
        self.readiness
            .set_audit(self.queues.iter().find_map(|queue| queue.failing.clone()));
    }

    /// Answers those waiting for the records to be written: when they are, or when their
    /// deadline passed (or `now`), the records left written to standard error, the last place
    /// left.
    fn answer_finishing(&mut self, now: bool) {
        if self.finishing.is_empty() {
            return;
        }
        let unwritten = self
            .queues
            .iter()
            .map(|queue| queue.pending.len())
            .max()
            .unwrap_or(0);
        let late = now
            || self
                .finishing
                .iter()
                .any(|(deadline, _)| Instant::now() >= *deadline);
        if unwritten > 0 && !late {
            return;
        }
        if unwritten > 0 {
            let mut err = io::stderr().lock();
            for queue in &mut self.queues {
                let _ = writeln!(
                    err,
                    "{} audit records could not be written to {}; here they are:",
                    queue.pending.len(),
                    queue.sink.name()
                );
                for line in queue.pending.drain(..) {
                    let _ = writeln!(err, "{line}");
                }
            }
        }
        for queue in &mut self.queues {
            queue.sink.sync();
        }
        for (_, answer) in self.finishing.drain(..) {
            let _ = answer.send(unwritten);
        }
    }
}
