//! The isolate that ships: QuickJS, embedded through `rquickjs`.
//!
//! Each run gets a fresh QuickJS runtime on a thread of its own, so a script that spins never
//! holds up the async runtime the host's tools run on. The isolate holds the ECMAScript built-ins,
//! `tools` and `console`, and nothing else: no `fetch`, `require`, `process`, timers, module
//! loading or `WebAssembly`. Its memory is capped (catchably: the code sees an out-of-memory
//! error), its stack is capped (deep recursion is a catchable error), and an interrupt handler
//! stops it at the deadline or when its future is dropped.
//!
//! QuickJS polls the interrupt handler only every so many steps of bytecode, so a loop of heavy
//! built-ins can run on past the deadline before it is stopped. The model never waits for that:
//! the run's future answers `Timeout` at the deadline, and the isolate's thread ends by itself
//! once the handler is polled. A bug in the C engine shares the host's process; where that
//! matters, [`WorkerIsolate`](super::WorkerIsolate) runs each execution in a worker process
//! killed at the deadline, and [`WorkerPool`](super::WorkerPool) starts those workers ahead.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt as _, StreamExt as _};
use rquickjs::function::{Opt, Rest};
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Exception, Function, Object, Promise, Runtime, Value};
use serde_json::Value as Json;

use crate::runtime::{CodeFailure, CodeRuntime, RunLimits, RunOutput, ToolCall};
use toolkit_core::text::utf16_length;
use toolkit_core::{BoxFuture, Failure};

/// Options of the [`QuickJs`] isolate.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct QuickJsOptions {
    /// The most memory one run may allocate, in bytes (64 MiB by default).
    pub memory_limit: usize,
    /// The most stack one run may use, in bytes (512 KiB by default).
    pub stack_limit: usize,
    /// The longest tool result, in bytes of JSON, that code is given (8 MiB by default); a
    /// longer one is an error the code can catch.
    pub max_tool_result_length: usize,
}

impl Default for QuickJsOptions {
    fn default() -> Self {
        Self {
            memory_limit: 64 << 20,
            stack_limit: 512 << 10,
            max_tool_result_length: 8 << 20,
        }
    }
}

/// Builder methods: each sets one field, the others keep their [`Default`] values.
impl QuickJsOptions {
    /// Sets [`memory_limit`](Self::memory_limit).
    #[must_use]
    pub fn memory_limit(mut self, memory_limit: usize) -> Self {
        self.memory_limit = memory_limit;
        self
    }

    /// Sets [`stack_limit`](Self::stack_limit).
    #[must_use]
    pub fn stack_limit(mut self, stack_limit: usize) -> Self {
        self.stack_limit = stack_limit;
        self
    }

    /// Sets [`max_tool_result_length`](Self::max_tool_result_length).
    #[must_use]
    pub fn max_tool_result_length(mut self, max_tool_result_length: usize) -> Self {
        self.max_tool_result_length = max_tool_result_length;
        self
    }
}

/// The QuickJS isolate: a [`CodeRuntime`] that ships with the crate.
#[derive(Clone, Debug, Default)]
pub struct QuickJs {
    options: QuickJsOptions,
}

impl QuickJs {
    /// The isolate with these options.
    pub fn new(options: QuickJsOptions) -> Self {
        Self { options }
    }
}

/// A tool call in flight, which gives its number and its answer.
type InFlight = BoxFuture<'static, (u64, Result<Json, Failure>)>;

/// Sets the flag when the run's future is dropped, so the isolate's interrupt handler stops it.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl CodeRuntime for QuickJs {
    fn run<'a>(
        &'a self,
        code: &'a str,
        tools: &'a [String],
        call: ToolCall,
        limits: RunLimits,
    ) -> BoxFuture<'a, Result<RunOutput, CodeFailure>> {
        Box::pin(async move { self.prepare()?.run(code, tools, call, limits).await })
    }
}

/// What the isolate's thread is given to run, and where the outcome goes.
type Submitted = (Isolate, Finish);

/// A fresh QuickJS runtime and context made ahead of a run, on a thread of their own, waiting
/// for the one run they serve (a worker makes one before its run arrives). Dropped unused, its
/// thread ends.
#[derive(Debug)]
pub(super) struct Prepared {
    submit: std::sync::mpsc::SyncSender<Submitted>,
    options: QuickJsOptions,
}

impl QuickJs {
    /// Starts the thread of one run, which makes its runtime and context at once.
    pub(super) fn prepare(&self) -> Result<Prepared, CodeFailure> {
        let (submit, submitted) = std::sync::mpsc::sync_channel::<Submitted>(1);
        let options = self.options.clone();
        std::thread::Builder::new()
            .name("toolkit-quickjs".into())
            // Room for QuickJS's own stack cap, with a margin for the host's frames.
            .stack_size(self.options.stack_limit + (4 << 20))
            .spawn(move || {
                let made = fresh(&options);
                let Ok((isolate, mut finish)) = submitted.recv() else {
                    return;
                };
                let outcome = match made {
                    Ok((runtime, context)) => {
                        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            isolate.run(&runtime, &context, &mut finish)
                        }));
                        ran.unwrap_or_else(|_| {
                            // A panic (the host's runtime shutting down under a wait, say) left
                            // the run's objects alive, and freeing a runtime that holds objects
                            // aborts the process: it is leaked instead.
                            std::mem::forget(context);
                            std::mem::forget(runtime);
                            Err(CodeFailure::Error {
                                message: "The isolate stopped unexpectedly.".to_owned(),
                                logs: Vec::new(),
                            })
                        })
                    }
                    Err(message) => Err(CodeFailure::Error {
                        message,
                        logs: Vec::new(),
                    }),
                };
                let _ = finish.send(outcome);
            })
            .map_err(|error| CodeFailure::Error {
                message: format!("The isolate could not be started: {error}."),
                logs: Vec::new(),
            })?;
        Ok(Prepared {
            submit,
            options: self.options.clone(),
        })
    }
}

/// A runtime with the options' caps, and a context with the ECMAScript built-ins.
fn fresh(options: &QuickJsOptions) -> Result<(Runtime, Context), String> {
    let runtime = Runtime::new().map_err(|e| format!("The isolate could not start: {e}."))?;
    runtime.set_memory_limit(options.memory_limit);
    runtime.set_max_stack_size(options.stack_limit);
    let context =
        Context::full(&runtime).map_err(|e| format!("The isolate could not start: {e}."))?;
    Ok((runtime, context))
}

impl Prepared {
    /// Runs `code` on the prepared runtime; see [`CodeRuntime::run`].
    pub(super) async fn run(
        self,
        code: &str,
        tools: &[String],
        call: ToolCall,
        limits: RunLimits,
    ) -> Result<RunOutput, CodeFailure> {
        let stopped = || CodeFailure::Error {
            message: "The isolate stopped unexpectedly.".to_owned(),
            logs: Vec::new(),
        };
        let Ok(host) = tokio::runtime::Handle::try_current() else {
            return Err(CodeFailure::Error {
                message: "Code mode runs inside a Tokio runtime.".to_owned(),
                logs: Vec::new(),
            });
        };
        let (finish, finished) = tokio::sync::oneshot::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let _cancel = CancelOnDrop(Arc::clone(&cancelled));
        let isolate = Isolate {
            code: code.to_owned(),
            tools: tools.to_vec(),
            call,
            host,
            cancelled,
            limits,
            options: self.options,
        };
        if self.submit.send((isolate, finish)).is_err() {
            return Err(stopped());
        }
        finished.await.unwrap_or_else(|_| Err(stopped()))
    }
}

/// One run, as the isolate's thread holds it.
struct Isolate {
    code: String,
    tools: Vec<String>,
    call: ToolCall,
    /// The host's async runtime: tool calls are polled on the isolate's thread within it, so a
    /// call that is ready at once costs no hop between threads.
    host: tokio::runtime::Handle,
    cancelled: Arc<AtomicBool>,
    limits: RunLimits,
    options: QuickJsOptions,
}

/// The tool calls of a run: those in flight, and answers not yet given to the code.
#[derive(Default)]
struct Calls {
    in_flight: FuturesUnordered<InFlight>,
    ready: Vec<(u64, Result<Json, Failure>)>,
}

impl Calls {
    /// Starts `call`: polls it (with every call in flight) once, so that it is under way before
    /// the code waits for it, as a call the code never awaits must be, and a call that answers
    /// at once costs no wait.
    fn start(&mut self, call: InFlight) {
        self.in_flight.push(call);
        while let Some(Some(answer)) = self.in_flight.next().now_or_never() {
            self.ready.push(answer);
        }
    }
}

/// Where the isolate's thread sends the run's outcome; closed when the run's future is dropped.
type Finish = tokio::sync::oneshot::Sender<Result<RunOutput, CodeFailure>>;

/// What ended a wait for the tool calls in flight.
enum Wait {
    Answered(Option<(u64, Result<Json, Failure>)>),
    Dropped,
    Late,
}

/// What the code logged, within its budget.
#[derive(Default)]
struct Logs {
    lines: Vec<String>,
    length: usize,
    cut: bool,
}

impl Logs {
    fn room(&self, max: usize) -> bool {
        !self.cut && self.length < max
    }

    fn push(&mut self, line: String, max: usize) {
        if !self.room(max) {
            return;
        }
        self.length += utf16_length(&line);
        if self.length > max {
            self.cut = true;
            self.lines
                .push(format!("… (logs past {max} characters were dropped)"));
        } else {
            self.lines.push(line);
        }
    }
}

/// The resolve and reject functions of the tool calls in flight, by number.
type Pending<'js> = Rc<RefCell<HashMap<u64, (Function<'js>, Function<'js>)>>>;

impl Isolate {
    fn run(
        self,
        runtime: &Runtime,
        context: &Context,
        finish: &mut Finish,
    ) -> Result<RunOutput, CodeFailure> {
        let (cancelled, deadline) = (Arc::clone(&self.cancelled), self.limits.deadline);
        runtime.set_interrupt_handler(Some(Box::new(move || {
            cancelled.load(Ordering::Relaxed) || Instant::now() >= deadline
        })));
        let _entered = self.host.enter();
        context.with(|ctx| self.run_in(&ctx, finish))
    }

    fn stopped(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || Instant::now() >= self.limits.deadline
    }

    fn run_in<'js>(&self, ctx: &Ctx<'js>, finish: &mut Finish) -> Result<RunOutput, CodeFailure> {
        let logs = Rc::new(RefCell::new(Logs::default()));
        let pending: Pending<'js> = Rc::default();
        let calls: Rc<RefCell<Calls>> = Rc::default();
        let outcome = self.steps(ctx, &logs, &pending, &calls, finish);
        // Calls the code did not await are dropped, which stops them. The resolvers of calls
        // still in flight are JavaScript values held from Rust: let them go before the runtime
        // is freed, which requires every object to be collectable.
        calls.borrow_mut().in_flight.clear();
        pending.borrow_mut().clear();
        ctx.run_gc();
        outcome
    }

    fn steps<'js>(
        &self,
        ctx: &Ctx<'js>,
        logs: &Rc<RefCell<Logs>>,
        pending: &Pending<'js>,
        calls: &Rc<RefCell<Calls>>,
        finish: &mut Finish,
    ) -> Result<RunOutput, CodeFailure> {
        let fail = |message: String, logs: &Rc<RefCell<Logs>>| {
            let logs = std::mem::take(&mut logs.borrow_mut().lines);
            if self.stopped() {
                CodeFailure::Timeout { logs }
            } else {
                CodeFailure::Error { message, logs }
            }
        };
        if let Err(error) = self.install(ctx, logs, pending, calls) {
            return Err(fail(describe(ctx, error), logs));
        }
        let wrapped = format!("(async () => {{\n{}\n}})()", self.code);
        let promise: Promise<'js> = match ctx.eval(wrapped) {
            Ok(promise) => promise,
            Err(error) => return Err(fail(describe(ctx, error), logs)),
        };
        loop {
            while ctx.execute_pending_job() {
                if self.stopped() {
                    return Err(fail(String::new(), logs));
                }
            }
            let ready = std::mem::take(&mut calls.borrow_mut().ready);
            if !ready.is_empty() {
                for (id, answer) in ready {
                    self.settle(ctx, pending, id, answer);
                }
                continue;
            }
            match promise.state() {
                PromiseState::Resolved => break,
                PromiseState::Rejected => {
                    let error = promise
                        .result::<Value<'js>>()
                        .and_then(Result::err)
                        .unwrap_or(rquickjs::Error::Exception);
                    return Err(fail(describe(ctx, error), logs));
                }
                PromiseState::Pending => {}
            }
            if calls.borrow().in_flight.is_empty() {
                return Err(fail(
                    "The code awaits something that never comes: nothing it waits for is in flight \
                     (there are no timers here; await the tools' promises)."
                        .to_owned(),
                    logs,
                ));
            }
            let deadline = tokio::time::Instant::from_std(self.limits.deadline);
            // No code runs while it waits: the calls are taken out, and put back after.
            let mut in_flight = std::mem::take(&mut calls.borrow_mut().in_flight);
            let next = self.host.block_on(async {
                tokio::select! {
                    answered = in_flight.next() => Wait::Answered(answered),
                    () = finish.closed() => Wait::Dropped,
                    () = tokio::time::sleep_until(deadline) => Wait::Late,
                }
            });
            calls.borrow_mut().in_flight = in_flight;
            match next {
                Wait::Answered(Some((id, answer))) => self.settle(ctx, pending, id, answer),
                Wait::Answered(None) => {}
                Wait::Late => {
                    return Err(CodeFailure::Timeout {
                        logs: std::mem::take(&mut logs.borrow_mut().lines),
                    });
                }
                Wait::Dropped => return Err(fail("The run was stopped.".to_owned(), logs)),
            }
        }
        let value = match promise.result::<Value<'js>>() {
            Some(Ok(value)) => value,
            Some(Err(error)) => return Err(fail(describe(ctx, error), logs)),
            None => return Err(fail("The code's promise did not settle.".to_owned(), logs)),
        };
        let text = match ctx.json_stringify(value) {
            Ok(Some(text)) => text.to_string().unwrap_or_default(),
            Ok(None) => "null".to_owned(),
            Err(error) => {
                let message = format!(
                    "The code returned something that is not JSON: {}",
                    describe(ctx, error)
                );
                return Err(fail(message, logs));
            }
        };
        let logs = std::mem::take(&mut logs.borrow_mut().lines);
        let length = utf16_length(&text);
        if length > self.limits.max_result_length {
            return Err(CodeFailure::ResultTooLarge { length, logs });
        }
        let result = serde_json::from_str(&text).unwrap_or(Json::Null);
        Ok(RunOutput { result, logs })
    }

    /// Puts `console` and `tools` in the global scope, both frozen.
    fn install<'js>(
        &self,
        ctx: &Ctx<'js>,
        logs: &Rc<RefCell<Logs>>,
        pending: &Pending<'js>,
        calls: &Rc<RefCell<Calls>>,
    ) -> rquickjs::Result<()> {
        let globals = ctx.globals();
        let console = Object::new(ctx.clone())?;
        for level in ["log", "info", "warn", "error", "debug"] {
            let logs = Rc::clone(logs);
            let max = self.limits.max_log_length;
            let log = Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, parts: Rest<Value<'js>>| {
                    if !logs.borrow().room(max) {
                        return;
                    }
                    let line: Vec<String> =
                        parts.0.into_iter().map(|part| show(&ctx, part)).collect();
                    logs.borrow_mut().push(line.join(" "), max);
                },
            )?;
            console.set(level, log)?;
        }
        let tools = Object::new(ctx.clone())?;
        let next = Rc::new(Cell::new(0u64));
        for tool in &self.tools {
            let (name, pending, next) = (tool.clone(), Rc::clone(pending), Rc::clone(&next));
            let (tool_call, calls) = (Arc::clone(&self.call), Rc::clone(calls));
            let call = Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, input: Opt<Value<'js>>| -> rquickjs::Result<Promise<'js>> {
                    let input = match input.0 {
                        None => Json::Object(serde_json::Map::new()),
                        Some(value) if value.is_undefined() => Json::Object(serde_json::Map::new()),
                        Some(value) => {
                            let text = ctx.json_stringify(value)?;
                            let text = text.map(|t| t.to_string()).transpose()?.unwrap_or_default();
                            serde_json::from_str(&text).map_err(|_| {
                                Exception::throw_type(&ctx, "A tool's input must be JSON.")
                            })?
                        }
                    };
                    let (promise, resolve, reject) = ctx.promise()?;
                    let id = next.get();
                    next.set(id + 1);
                    let answer = tool_call(name.clone(), input);
                    pending.borrow_mut().insert(id, (resolve, reject));
                    calls
                        .borrow_mut()
                        .start(Box::pin(async move { (id, answer.await) }));
                    Ok(promise)
                },
            )?;
            tools.set(tool.as_str(), call)?;
        }
        globals.set("console", console)?;
        globals.set("tools", tools)?;
        ctx.eval::<(), _>(
            "Object.freeze(globalThis.tools); Object.freeze(globalThis.console);\
             for (const name of ['tools', 'console']) {\
               Object.defineProperty(globalThis, name, { writable: false, configurable: false });\
             }",
        )
    }

    /// Settles the promise of tool call `id` with the host's answer.
    fn settle<'js>(
        &self,
        ctx: &Ctx<'js>,
        pending: &Pending<'js>,
        id: u64,
        answer: Result<Json, Failure>,
    ) {
        let Some((resolve, reject)) = pending.borrow_mut().remove(&id) else {
            return;
        };
        let max = self.options.max_tool_result_length;
        let value = answer.and_then(|value| {
            if longer_than(&value, max) {
                return Err(tool_result_too_large(max));
            }
            let text = value.to_string();
            ctx.json_parse(text)
                .map_err(|error| Failure::new("CodeError", describe(ctx, error), false))
        });
        let settled = match value {
            Ok(value) => resolve.call::<_, ()>((value,)),
            Err(failure) => {
                error_of(ctx, &failure).and_then(|error| reject.call::<_, ()>((error,)))
            }
        };
        if let Err(error) = settled {
            tracing::debug!(%error, "a tool call's promise could not be settled");
        }
    }
}

/// The failure code reads for a tool result longer than `max` bytes of JSON.
pub(super) fn tool_result_too_large(max: usize) -> Failure {
    Failure::new(
        "ResultTooLarge",
        format!(
            "The tool's result is more than the {max} bytes of JSON code is given. Ask the tool \
             for less."
        ),
        false,
    )
}

/// Whether `value`'s JSON has more than `max` bytes, found without writing it (a tool may answer
/// a hundred megabytes): strings and keys by their length, everything else by a small bound.
pub(super) fn longer_than(value: &Json, max: usize) -> bool {
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        total += match value {
            Json::String(text) => text.len() + 2,
            Json::Array(items) => {
                stack.extend(items);
                items.len() + 2
            }
            Json::Object(map) => {
                stack.extend(map.values());
                map.keys().map(|key| key.len() + 4).sum::<usize>() + 2
            }
            _ => 24,
        };
        if total > max {
            return true;
        }
    }
    false
}

/// The JavaScript error a tool's failure is: its message, with `code` and `retryable`.
fn error_of<'js>(ctx: &Ctx<'js>, failure: &Failure) -> rquickjs::Result<Value<'js>> {
    let error = Exception::from_message(ctx.clone(), &failure.message)?;
    error.set("code", failure.code.as_str())?;
    error.set("retryable", failure.retryable)?;
    Ok(error.into_value())
}

/// A value as `console.log` shows it: strings as they are, anything else as JSON.
fn show<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> String {
    if let Some(text) = value.as_string() {
        return text.to_string().unwrap_or_default();
    }
    if let Some(error) = value.as_exception() {
        return error.message().unwrap_or_default();
    }
    match ctx.json_stringify(value) {
        Ok(Some(text)) => text.to_string().unwrap_or_default(),
        Ok(None) => "undefined".to_owned(),
        Err(_) => {
            let _ = ctx.catch();
            "[a value with no JSON form]".to_owned()
        }
    }
}

/// What the code threw, as a message: an error's name, message and stack, or the value shown.
fn describe<'js>(ctx: &Ctx<'js>, error: rquickjs::Error) -> String {
    if !matches!(error, rquickjs::Error::Exception) {
        return error.to_string();
    }
    let thrown = ctx.catch();
    if let Some(exception) = thrown.as_exception() {
        let name: Option<String> = exception.get("name").ok();
        let mut text = format!(
            "{}: {}",
            name.unwrap_or_else(|| "Error".to_owned()),
            exception.message().unwrap_or_default()
        );
        if let Some(stack) = exception.stack().filter(|stack| !stack.trim().is_empty()) {
            text.push('\n');
            text.push_str(stack.trim_end());
        }
        return text;
    }
    format!("Uncaught {}", show(ctx, thrown))
}
