//! What a call carries: [`CallContext`] — who approves, where progress goes, the id the model gave
//! the call, and typed [`Extensions`] for what a source and the server serving its call share.
//!
//! The context is passed, never found: a host gives it with a model's call
//! ([`Toolkit::call_with`](crate::Toolkit::call_with)), the toolkit gives it to the tool's
//! handler, and a source's [`ToolSource::call`](crate::ToolSource::call) receives it. A search's
//! `tool_call` asks the host's approver about the tool it reaches through it, an MCP source asks
//! its server for progress only when the host wants it, and a server passes through it what it
//! relays ([`Relay`]).

mod clients;
mod extensions;
mod principal;
mod relay;
mod session;
mod subject_token;

use std::fmt;
use std::sync::Arc;

pub use clients::{Clients, Joined};
pub use extensions::Extensions;
pub use principal::Principal;
pub use relay::{
    ELICITATION_COMPLETE, ELICITATION_CREATE, ROOTS_LIST, Relay, Relayed, SAMPLING_CREATE,
};
pub use session::Session;
pub use subject_token::SubjectToken;

use crate::progress::ProgressSink;
use crate::{Approver, Progress};

/// What a host gives with a model's call: the [`Approver`] asked about a call that needs
/// approval, the callback told of its [`Progress`], the id the model gave the call, and typed
/// [`Extensions`].
///
/// Cheap to clone: a host builds one for a conversation and gives it (or a clone with the call's
/// id) with each call. With no approver, a call that needs approval does not run: the model reads
/// that no one could be asked.
///
/// ```
/// use toolkit_core::{ApprovalRequest, CallContext, Verdict};
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
    /// The tool being run, by the name the model knows it (set by the toolkit that runs it).
    tool: Option<Arc<str>>,
    /// A host's own call: no one is asked about it, nor about a tool it reaches.
    hosts_own: bool,
    extensions: Extensions,
}

impl CallContext {
    /// A context with no approver, no progress callback, no call id and no extensions.
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

    /// Carries `value` to the sources the call reaches (one value of each type; a later one
    /// replaces it). See [`Extensions`].
    #[must_use]
    pub fn with_extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The same context without the extension of type `T`.
    #[must_use]
    pub fn without_extension<T: Send + Sync + 'static>(mut self) -> Self {
        self.extensions.remove::<T>();
        self
    }

    /// The extension of type `T` the call carries, if any.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// The extensions the call carries.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The id the model gave the call, if the host said.
    pub fn id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The tool being run, by the name the model knows it, once a toolkit runs the call.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// Who made the call, when a server that knows it serves the call (see [`Principal`]).
    pub fn principal(&self) -> Option<&Principal> {
        self.extension::<Principal>()
    }

    /// The bearer token the person behind the call presented to the server serving it, when the
    /// server passes it on (see [`SubjectToken`]).
    pub fn subject_token(&self) -> Option<&SubjectToken> {
        self.extension::<SubjectToken>()
    }

    /// The MCP session the call came in, when a server that serves sessions serves the call
    /// (see [`Session`]).
    pub fn session(&self) -> Option<&Session> {
        self.extension::<Session>()
    }

    /// The relay to the client of the served call, when a server serves it (see [`Relay`]).
    pub fn relay(&self) -> Option<&Arc<dyn Relay>> {
        self.extension::<Arc<dyn Relay>>()
    }

    /// The context of a host's own call ([`Toolkit::call`](crate::Toolkit::call)): asks no one.
    #[doc(hidden)]
    pub fn hosts_own() -> Self {
        Self {
            hosts_own: true,
            ..Self::default()
        }
    }

    /// The same context, as a host's own call: the calls a code-mode run makes ask no one.
    #[doc(hidden)]
    pub fn into_hosts_own(mut self) -> Self {
        self.hosts_own = true;
        self
    }

    /// Whether this is a host's own call, which asks no one.
    #[doc(hidden)]
    pub fn is_hosts_own(&self) -> bool {
        self.hosts_own
    }

    /// The same context, running the tool named `tool`.
    #[doc(hidden)]
    pub fn running(mut self, tool: &Arc<str>) -> Self {
        self.tool = Some(Arc::clone(tool));
        self
    }

    /// Who approves the calls of this context, if anyone.
    #[doc(hidden)]
    pub fn approver_ref(&self) -> Option<&Arc<dyn Approver>> {
        self.approver.as_ref()
    }

    /// Where the progress of this context's calls goes, if anywhere.
    #[doc(hidden)]
    pub fn progress_sink(&self) -> Option<&ProgressSink> {
        self.progress.as_ref()
    }

    /// Tells the host of the call, if it asked for progress, what `progress` says of the tool
    /// being run.
    #[doc(hidden)]
    pub fn report(&self, progress: impl FnOnce(&str) -> Option<Progress>) {
        if let Some(sink) = &self.progress
            && let Some(progress) = progress(self.tool().unwrap_or_default())
        {
            sink(progress);
        }
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("approver", &self.approver.is_some())
            .field("progress", &self.progress.is_some())
            .field("call_id", &self.call_id)
            .field("tool", &self.tool)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}
