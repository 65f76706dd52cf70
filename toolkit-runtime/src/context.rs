//! What a host gives with a model's call: [`CallContext`] — who approves, where progress goes,
//! and the id the model gave the call.
//!
//! While a call runs, its context is in scope for the tool's own work (as a task-local value is,
//! but with no runtime needed): a search's `tool_call` asks the host's approver about the tool it
//! reaches, an MCP source asks its server for progress only when the host wants it, and the code
//! of a code-mode run reports each tool it calls.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::{Approver, Progress};

/// Where the host is told of a call's progress.
pub(crate) type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// What a host gives with a model's call: the [`Approver`] asked about a call that needs
/// approval, the callback told of its [`Progress`], and the id the model gave the call.
///
/// Cheap to clone: a host builds one for a conversation and gives it (or a clone with the call's
/// id) with each call. With no approver, a call that needs approval does not run: the model reads
/// that no one could be asked.
///
/// ```
/// use toolkit_runtime::{ApprovalRequest, CallContext, Verdict};
///
/// let conversation = CallContext::new()
///     .approver(|request: ApprovalRequest| async move {
///         println!("may {} run with {:?}?", request.tool_name(), request.input());
///         Verdict::Approve
///     })
///     .progress(|progress| eprintln!("{progress:?}"));
/// let this_call = conversation.clone().call_id("call_abc123");
/// # let _ = this_call;
/// ```
#[derive(Clone, Default)]
pub struct CallContext {
    approver: Option<Arc<dyn Approver>>,
    progress: Option<ProgressSink>,
    call_id: Option<String>,
    /// Where an MCP source leaves its server's result as written (a server passing it on).
    #[cfg(feature = "serve")]
    pub(crate) written: Option<Arc<crate::serve::Written>>,
    /// Where an MCP source sends what its server asks of the call's client (a server relaying
    /// it to the client of the call it serves).
    #[cfg(feature = "serve")]
    pub(crate) relay: Option<Arc<crate::serve::Relay>>,
}

impl CallContext {
    /// A context with no approver, no progress callback and no call id.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks `approver` about each call that needs approval.
    #[must_use]
    pub fn approver(self, approver: impl Approver + 'static) -> Self {
        self.shared_approver(Arc::new(approver))
    }

    /// Asks `approver` (shared with other contexts) about each call that needs approval.
    #[must_use]
    pub fn shared_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Tells `progress` how the call comes along (see [`Progress`]).
    #[must_use]
    pub fn progress(mut self, progress: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// The id the model gave the call (OpenAI's `tool_call_id`, Anthropic's `tool_use_id`): in
    /// the approval request and the call's span (`gen_ai.tool.call.id`).
    #[must_use]
    pub fn call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }

    pub(crate) fn approver_ref(&self) -> Option<&Arc<dyn Approver>> {
        self.approver.as_ref()
    }

    pub(crate) fn id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    #[cfg_attr(not(any(feature = "mcp", feature = "code")), allow(dead_code))]
    pub(crate) fn progress_sink(&self) -> Option<&ProgressSink> {
        self.progress.as_ref()
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("approver", &self.approver.is_some())
            .field("progress", &self.progress.is_some())
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

/// The call whose tool is running: its context, and the tool's name as the model knows it.
pub(crate) struct Scope {
    pub(crate) context: CallContext,
    #[cfg_attr(not(any(feature = "mcp", feature = "code")), allow(dead_code))]
    pub(crate) tool: Arc<str>,
}

impl Scope {
    /// The same scope, where no source leaves its server's result: the tools a code-mode run
    /// calls answer the code, not the client of a server.
    #[cfg(feature = "code")]
    fn without_written(&self) -> Self {
        #[allow(unused_mut)]
        let mut context = self.context.clone();
        #[cfg(feature = "serve")]
        {
            context.written = None;
        }
        Self {
            context,
            tool: Arc::clone(&self.tool),
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Scope>>> = const { RefCell::new(None) };
}

/// The call in scope on this thread, if any.
pub(crate) fn current() -> Option<Arc<Scope>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// A future that runs with `scope` in scope: set while it is polled, the one before put back
/// after (also when the poll panics).
pub(crate) struct InScope<F> {
    scope: Option<Arc<Scope>>,
    future: F,
}

impl<F> InScope<F> {
    pub(crate) fn new(scope: Option<Arc<Scope>>, future: F) -> Self {
        Self { scope, future }
    }
}

/// Puts back the scope that was current before a poll.
struct Restore(Option<Arc<Scope>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|current| *current.borrow_mut() = previous);
    }
}

impl<F: Future + Unpin> Future for InScope<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let previous = CURRENT.with(|current| current.replace(this.scope.clone()));
        let _restore = Restore(previous);
        Pin::new(&mut this.future).poll(cx)
    }
}

/// The call in scope and the span of a code-mode run, carried to the tool calls its code makes
/// (which the isolate starts on a thread of its own): each runs in that scope and span, and is
/// told to the host as [`Progress::CallStarted`] and [`Progress::CallEnded`].
#[cfg(feature = "code")]
#[derive(Clone)]
pub(crate) struct Carried {
    scope: Option<Arc<Scope>>,
    span: tracing::Span,
    /// The subscriber of the run's thread (a thread's own default is not the isolate's).
    dispatch: tracing::Dispatch,
    calls: Arc<std::sync::atomic::AtomicUsize>,
}

#[cfg(feature = "code")]
impl Carried {
    /// The scope and span of the run being polled.
    pub(crate) fn current() -> Self {
        Self {
            scope: current().map(|scope| Arc::new(scope.without_written())),
            span: tracing::Span::current(),
            dispatch: tracing::dispatcher::get_default(tracing::Dispatch::clone),
            calls: Arc::default(),
        }
    }

    /// How many tools the code called.
    pub(crate) fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `call` (the code's call of the tool `called`) in the run's scope and span.
    pub(crate) fn call(
        &self,
        called: String,
        call: crate::BoxFuture<'static, Result<serde_json::Value, crate::Failure>>,
    ) -> crate::BoxFuture<'static, Result<serde_json::Value, crate::Failure>> {
        use tracing::Instrument as _;
        use tracing::instrument::WithSubscriber as _;
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let reported = async move {
            crate::progress::report(|tool| Progress::CallStarted {
                tool: tool.to_owned(),
                called: called.clone(),
            });
            let started = std::time::Instant::now();
            let outcome = call.await;
            crate::progress::report(|tool| Progress::CallEnded {
                tool: tool.to_owned(),
                called,
                failure: outcome.as_ref().err().map(|failure| failure.code.clone()),
                duration: started.elapsed(),
            });
            outcome
        };
        Box::pin(InScope::new(
            self.scope.clone(),
            Box::pin(
                reported
                    .instrument(self.span.clone())
                    .with_subscriber(self.dispatch.clone()),
            ),
        ))
    }
}
