//! Asking a person about a call: [`Approver`], [`ApprovalRequest`], [`Verdict`].
//!
//! A tool that its policy marks as needing approval ([`Approval`](crate::Approval)) runs, when a
//! model calls it through [`Toolkit::call_with`](crate::Toolkit::call_with) (and so through
//! [`Toolkit::answer`](crate::Toolkit::answer), the rig adapter and a served toolkit given an
//! approver), only once the host's [`Approver`] says so. The approver is asynchronous: a host
//! can ask a person in a chat window and wait for the answer. It answers with a [`Verdict`]:
//!
//! - [`Verdict::Approve`]: the call runs as the model made it;
//! - [`Verdict::Decline`]: the call does not run, and the model reads that a person declined it,
//!   with the person's reason when there is one;
//! - [`Verdict::Edit`]: the call runs with the input the person corrected, once that input is
//!   checked again against the tool's parameters.
//!
//! The person is asked only about a call that could run: its input is checked first. The library
//! keeps nothing between calls. A host that lets a person say "always allow this tool" keeps that
//! itself, in its approver, for as long as its conversation lasts:
//!
//! ```
//! use std::collections::HashSet;
//! use std::sync::{Arc, Mutex};
//! use toolkit_core::{ApprovalRequest, CallContext, Verdict};
//!
//! // The host's memory of one conversation: the tools its person always allows.
//! let always: Arc<Mutex<HashSet<String>>> = Arc::default();
//! let remembered = Arc::clone(&always);
//! let context = CallContext::new().approver(move |request: ApprovalRequest| {
//!     let always = Arc::clone(&remembered);
//!     async move {
//!         let mut always = always.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
//!         if always.contains(request.tool_name()) {
//!             return Verdict::Approve;
//!         }
//!         // Here a real host asks its person and waits; this one's person says
//!         // "yes, and don't ask again about this tool".
//!         always.insert(request.tool_name().to_owned());
//!         Verdict::Approve
//!     }
//! });
//! # let _ = context;
//! ```

use std::fmt;
use std::future::Future;

use crate::text::cut_utf16;
use std::sync::Arc;

use crate::{BoxFuture, CallContext, Failure, JsonObject, ToolDefinition};

/// The most UTF-16 code units of a person's reason that the model reads.
pub const MAX_REASON_LENGTH: usize = 2_000;

/// The code of the failure a model reads when a call was not approved.
pub const APPROVAL_DECLINED: &str = "ApprovalDeclined";

/// A call a person is asked about: the tool, the input the model gave (already checked against
/// the tool's parameters), and the id the model gave the call, when its API has one.
///
/// When the model reaches a tool through another (`tool_call` of a search), the request is about
/// the tool it reaches, with that tool's input: that is what a person decides on, and what a host
/// remembers.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    definition: ToolDefinition,
    origin: Option<(Arc<str>, Arc<str>)>,
    input: JsonObject,
    call_id: Option<String>,
    context: CallContext,
}

impl ApprovalRequest {
    /// A request about a call of the tool of `definition` (of the source and source's tool
    /// `origin`) with `input`.
    #[doc(hidden)]
    pub fn new(
        definition: ToolDefinition,
        origin: Option<(Arc<str>, Arc<str>)>,
        input: JsonObject,
        context: CallContext,
    ) -> Self {
        Self {
            definition,
            origin,
            input,
            call_id: context.id().map(str::to_owned),
            context,
        }
    }

    /// The definition of the tool the call runs, as the model is shown it.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The name the model knows the tool by, such as `github__create_issue`.
    pub fn tool_name(&self) -> &str {
        self.definition.name()
    }

    /// The source the tool comes from and the name that source knows it by, when the tool is a
    /// source's (as every tool of an assembly is).
    pub fn origin(&self) -> Option<(&str, &str)> {
        self.origin
            .as_ref()
            .map(|(source, tool)| (&**source, &**tool))
    }

    /// The input the model gave, checked against the tool's parameters.
    pub fn input(&self) -> &JsonObject {
        &self.input
    }

    /// The id the model gave the call (OpenAI's `tool_call_id`, Anthropic's `tool_use_id`),
    /// when the host said it.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The context the call came with: who asks ([`CallContext::principal`]), and what the
    /// server that serves the call put there (such as the relay to the calling client an
    /// approver asks through).
    pub fn context(&self) -> &CallContext {
        &self.context
    }
}

/// What a call that needed approval ran with: put in the context its source is called with, once
/// a person approved it, so that what records the call (an audit) knows it was asked and how it
/// was answered.
///
/// ```
/// use toolkit_core::approval::Approved;
///
/// let approved = Approved { edited: true };
/// assert!(approved.edited);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Approved {
    /// Whether the person changed the input before approving it.
    pub edited: bool,
}

/// What a person answered about a call.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The call runs as the model made it.
    Approve,
    /// The call does not run. The model reads that a person declined it, with the reason when
    /// there is one (cut to [`MAX_REASON_LENGTH`]).
    Decline {
        /// Why, in the person's words, for the model.
        reason: Option<String>,
    },
    /// The call runs with this input in place of the model's, once it is checked against the
    /// tool's parameters (an input the tool does not take is a failure the model reads, and the
    /// tool does not run).
    Edit(JsonObject),
}

impl Verdict {
    /// A decline with the person's reason, for the model to read.
    ///
    /// ```
    /// use toolkit_core::Verdict;
    ///
    /// let verdict = Verdict::decline("Not on the production database.");
    /// assert!(matches!(verdict, Verdict::Decline { reason: Some(_) }));
    /// ```
    pub fn decline(reason: impl Into<String>) -> Self {
        Self::Decline {
            reason: Some(reason.into()),
        }
    }

    /// What the model reads of a call this verdict stopped.
    #[doc(hidden)]
    pub fn declined(reason: Option<&str>) -> Failure {
        let reason = reason.map(str::trim).filter(|reason| !reason.is_empty());
        let message = match reason {
            Some(reason) => format!(
                "A person declined this call: {}",
                cut_utf16(reason, MAX_REASON_LENGTH)
            ),
            None => "A person declined this call. Do not try it again unchanged.".to_owned(),
        };
        Failure::new(APPROVAL_DECLINED, message, false)
    }
}

/// Asks a person (or anything a host trusts) whether a call may run.
///
/// Any `Fn(ApprovalRequest) -> impl Future<Output = Verdict>` is one:
///
/// ```
/// use toolkit_core::{ApprovalRequest, CallContext, Verdict};
///
/// let context = CallContext::new().approver(|request: ApprovalRequest| async move {
///     if request.tool_name().ends_with("__delete_repo") {
///         Verdict::decline("Repositories are never deleted from here.")
///     } else {
///         Verdict::Approve
///     }
/// });
/// # let _ = context;
/// ```
pub trait Approver: Send + Sync {
    /// The verdict on `request`. Dropping the future (the model's turn ended) drops the question.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Verdict>;
}

impl<F, Fut> Approver for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Verdict> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Verdict> {
        Box::pin(self(request))
    }
}

impl fmt::Debug for dyn Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Approver")
    }
}

/// What the model reads when a call needs approval and nobody can be asked.
#[doc(hidden)]
pub fn nobody_to_ask() -> Failure {
    Failure::new(
        APPROVAL_DECLINED,
        "This tool needs a person's approval, and no one can be asked here. Do not try it again.",
        false,
    )
}
