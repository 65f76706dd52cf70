//! Worker processes started ahead of the runs that need them: [`WorkerPool`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::runtime::{CodeFailure, CodeRuntime, RunLimits, RunOutput, ToolCall};
use crate::worker::{Failed, Worker, WorkerIsolate, reap};
use toolkit_core::BoxFuture;

/// How long a worker started ahead may take to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// How many workers a run takes and finds dead before it gives up.
const MAX_DEAD_TAKEN: usize = 3;

/// Options of a [`WorkerPool`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct PoolOptions {
    /// The most worker processes alive at once (8 by default, at least 1).
    pub size: usize,
    /// How many workers are kept started and waiting for a run (2 by default, at most `size`).
    pub idle: usize,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self { size: 8, idle: 2 }
    }
}

/// Builder methods: each sets one field, the others keep their [`Default`] values.
impl PoolOptions {
    /// Sets [`size`](Self::size).
    #[must_use]
    pub fn size(mut self, size: usize) -> Self {
        self.size = size;
        self
    }

    /// Sets [`idle`](Self::idle).
    #[must_use]
    pub fn idle(mut self, idle: usize) -> Self {
        self.idle = idle;
        self
    }
}

/// A [`CodeRuntime`] that runs each execution in a worker process started ahead.
///
/// A [`WorkerIsolate`] starts a process per run, and a process start costs milliseconds. A pool
/// keeps `idle` workers started and waiting, so a run takes one that is ready. Each worker still
/// serves exactly one run and is killed after it — no state crosses runs — and another is started
/// in its place, in the background, once that run is over. At most `size` worker processes exist
/// at once (waiting, running, or being killed): a run that finds none waiting and the pool full
/// waits for one.
///
/// A worker that died while it waited (killed from outside, say) is seen when it is taken, or
/// when it ends before it says it read the run, and replaced, so the run that takes it does not
/// fail; a worker killed at a run's deadline, or crashed by its code, fails only that run.
///
/// ```no_run
/// # async fn host() {
/// use toolkit_code::{PoolOptions, WorkerIsolate, WorkerPool};
/// let pool = WorkerPool::new(
///     WorkerIsolate::new("toolkit-gen").arg("quickjs-worker"),
///     PoolOptions::default().size(16).idle(4),
/// );
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct WorkerPool {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    isolate: WorkerIsolate,
    idle: usize,
    /// One permit per worker process that may be alive.
    slots: Arc<Semaphore>,
    /// Workers started and waiting, each holding its permit.
    ready: Mutex<VecDeque<Waiting>>,
    /// Workers being started in the background.
    starting: Mutex<usize>,
}

#[derive(Debug)]
struct Waiting {
    worker: Worker,
    _slot: OwnedSemaphorePermit,
}

impl WorkerPool {
    /// A pool of workers started as `isolate` says. Inside a Tokio runtime the idle workers are
    /// started at once; otherwise on the first run.
    pub fn new(isolate: WorkerIsolate, options: PoolOptions) -> Self {
        let size = options.size.max(1);
        let pool = Self {
            shared: Arc::new(Shared {
                isolate,
                idle: options.idle.min(size),
                slots: Arc::new(Semaphore::new(size)),
                ready: Mutex::new(VecDeque::new()),
                starting: Mutex::new(0),
            }),
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            refill(&pool.shared);
        }
        pool
    }

    /// How many workers are started and waiting for a run now.
    pub fn waiting(&self) -> usize {
        self.shared.ready.lock().map_or(0, |ready| ready.len())
    }

    /// Takes a waiting worker that is still alive, or starts one when none waits.
    async fn take(&self) -> Result<(Worker, OwnedSemaphorePermit), CodeFailure> {
        for _ in 0..MAX_DEAD_TAKEN {
            let waiting = self
                .shared
                .ready
                .lock()
                .ok()
                .and_then(|mut ready| ready.pop_front());
            // A worker's replacement starts once its run is over, not beside it: starting a
            // process takes the CPU the run needs. Only a pool left with none waiting starts
            // more now.
            if waiting.is_none() || self.waiting() == 0 {
                refill(&self.shared);
            }
            let (mut worker, slot) = match waiting {
                Some(Waiting { worker, _slot }) => (worker, _slot),
                None => {
                    let slot = Arc::clone(&self.shared.slots)
                        .acquire_owned()
                        .await
                        .map_err(|_| CodeFailure::Error {
                            message: "The pool of isolates is closed.".to_owned(),
                            logs: Vec::new(),
                        })?;
                    (self.shared.isolate.start()?, slot)
                }
            };
            match worker.child.try_wait() {
                Ok(None) => return Ok((worker, slot)),
                // Dead while it waited: replaced, and the run takes another.
                _ => reap(worker.child, move || drop(slot)),
            }
        }
        Err(CodeFailure::Error {
            message: "The isolate's processes end as soon as they start.".to_owned(),
            logs: Vec::new(),
        })
    }
}

/// Starts workers in the background until `idle` of them wait (or the pool is full).
fn refill(shared: &Arc<Shared>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    loop {
        let Ok(mut starting) = shared.starting.lock() else {
            return;
        };
        let ready = shared.ready.lock().map_or(0, |ready| ready.len());
        if ready + *starting >= shared.idle {
            return;
        }
        let Ok(slot) = Arc::clone(&shared.slots).try_acquire_owned() else {
            return;
        };
        *starting += 1;
        drop(starting);
        let shared = Arc::clone(shared);
        // Starting a process blocks (fork and exec): on a thread of its own, not on one that
        // runs the host's tasks, a run's among them. The worker waits in the pool once it says
        // it is ready.
        handle.spawn(async move {
            let isolate = shared.isolate.clone();
            let started = tokio::task::spawn_blocking(move || isolate.start()).await;
            let started = match started {
                Ok(Ok(mut worker)) => {
                    if worker.ready(READY_TIMEOUT).await {
                        Some(worker)
                    } else {
                        tracing::debug!("a worker of the pool did not say it was ready");
                        reap(worker.child, || ());
                        None
                    }
                }
                // A program that cannot start is reported by the run that starts one itself.
                Ok(Err(error)) => {
                    tracing::debug!(%error, "a worker of the pool could not start");
                    None
                }
                Err(_) => None,
            };
            if let Ok(mut starting) = shared.starting.lock() {
                *starting = starting.saturating_sub(1);
            }
            if let Some(worker) = started
                && let Ok(mut ready) = shared.ready.lock()
            {
                ready.push_back(Waiting {
                    worker,
                    _slot: slot,
                });
            }
        });
    }
}

impl CodeRuntime for WorkerPool {
    fn run<'a>(
        &'a self,
        code: &'a str,
        tools: &'a [String],
        call: ToolCall,
        limits: RunLimits,
    ) -> BoxFuture<'a, Result<RunOutput, CodeFailure>> {
        Box::pin(async move {
            let mut untaken = None;
            for _ in 0..MAX_DEAD_TAKEN {
                let (worker, slot) = self.take().await?;
                let shared = Arc::clone(&self.shared);
                // Once the worker is killed and reaped, its place goes to a new one.
                let reaped = move || {
                    drop(slot);
                    refill(&shared);
                };
                match worker
                    .run(code, tools, Arc::clone(&call), limits, reaped)
                    .await
                {
                    // Dead before it read the run (killed as it was taken): nothing ran, and
                    // another worker takes the run.
                    Err(Failed::Untaken(failure)) => untaken = Some(failure),
                    outcome => return outcome.map_err(CodeFailure::from),
                }
            }
            Err(untaken.unwrap_or_else(|| CodeFailure::Error {
                message: "The isolate's processes end as soon as they start.".to_owned(),
                logs: Vec::new(),
            }))
        })
    }
}
