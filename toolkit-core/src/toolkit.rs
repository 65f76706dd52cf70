//! The tools a model is given: [`Toolkit`], [`Tool`] and [`Approval`].
//!
//! Calling a tool checks the input against the tool's parameters, runs the tool, and gives its
//! JSON or a [`Failure`] — as data, so the turn goes on whatever happened. A panic inside a source
//! is caught, logged, and read by the model as the source having failed. Dropping the future of a
//! call stops the tool's work.
//!
//! [`Toolkit::call`] runs a tool as the host says (it asks no one). [`Toolkit::call_with`] runs a
//! call the model made, with what the host gives with it ([`CallContext`]): a tool that needs
//! approval runs only once the host's [`Approver`](crate::Approver) approves (see
//! [`crate::Verdict`]), and the tool's [`Handler`] is given the context. Each call is an
//! `execute_tool` span ([`crate::telemetry`]).

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures_util::FutureExt as _;
use futures_util::future::Either;
use indexmap::IndexMap;
use serde_json::Value;
use tracing::Instrument as _;

use crate::approval::{ApprovalRequest, Verdict, nobody_to_ask};
use crate::context::CallContext;
use crate::input::InputCheck;
use crate::telemetry;
use crate::text::cut_for_echo;
use crate::{BoxFuture, Failure, JsonObject, Outcome, ToolDefinition, ToolSource};

/// What runs a tool once its input is checked: takes the input object and the call's context
/// (with the tool's name as the model knows it, [`CallContext::tool`]), gives JSON or a failure.
pub type Handler = Arc<
    dyn Fn(JsonObject, CallContext) -> BoxFuture<'static, Result<Value, Failure>> + Send + Sync,
>;

/// What runs a tool that can give, beside its answer, the result its server wrote ([`Outcome`]):
/// a source's tool, or a tool that runs another and passes on what that one gave (a search's
/// `tool_call`). It takes the input, the call's context and whether the caller wants the
/// written result ([`Tool::call_outcome`]; when not, the handler need not keep it).
pub type OutcomeHandler = Arc<
    dyn Fn(JsonObject, CallContext, bool) -> BoxFuture<'static, Outcome<Failure>> + Send + Sync,
>;

/// How a tool runs: a [`Handler`] of its answer, or an [`OutcomeHandler`].
#[derive(Clone)]
enum Runner {
    Answer(Handler),
    Outcome(OutcomeHandler),
}

/// Whether a harness must ask a person before a tool runs.
#[derive(Clone, Default)]
pub enum Approval {
    /// The tool runs when the model calls it.
    #[default]
    Never,
    /// Every call is asked about.
    Always,
    /// Calls are asked about when this says so of their input.
    ByInput(Arc<dyn Fn(&JsonObject) -> bool + Send + Sync>),
    /// The tool runs another tool, which is asked about as that tool's own call (a search's
    /// `tool_call`): this says of the input whether the tool it reaches needs approval, and the
    /// call itself asks no one.
    Delegated(Arc<dyn Fn(&JsonObject) -> bool + Send + Sync>),
}

impl Approval {
    /// Whether a call with `input` must be approved before it runs.
    pub fn is_required(&self, input: &JsonObject) -> bool {
        match self {
            Self::Never => false,
            Self::Always => true,
            Self::ByInput(decide) | Self::Delegated(decide) => decide(input),
        }
    }

    /// Whether some call may need approval (anything but [`Approval::Never`]).
    pub fn may_be_required(&self) -> bool {
        !matches!(self, Self::Never)
    }
}

impl fmt::Debug for Approval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Never => "Never",
            Self::Always => "Always",
            Self::ByInput(_) => "ByInput(..)",
            Self::Delegated(_) => "Delegated(..)",
        })
    }
}

/// One tool of a toolkit: its definition (under the name the model knows), whether it needs
/// approval, and what runs it. Cheap to clone.
#[derive(Clone)]
pub struct Tool {
    inner: Arc<ToolInner>,
}

struct ToolInner {
    definition: ToolDefinition,
    /// The definition's name, shared with each call's context.
    name: Arc<str>,
    approval: Approval,
    runner: Runner,
    /// The source and the source's name of the tool, for a source's tool.
    origin: Option<(Arc<str>, Arc<str>)>,
    /// Compiled at the first call and kept: building a toolkit of thousands of tools compiles
    /// nothing, and no call compiles twice.
    check: OnceLock<InputCheck>,
}

impl Tool {
    /// A tool with this definition, approval and handler.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use toolkit_core::{Approval, Tool, ToolDefinition};
    ///
    /// let schema = json!({ "type": "object" }).as_object().cloned().unwrap_or_default();
    /// let definition = ToolDefinition::new("now", schema)?;
    /// let tool = Tool::new(definition, Approval::Never, Arc::new(|_input, _context| {
    ///     Box::pin(async { Ok(json!("2026-11-29")) })
    /// }));
    /// assert_eq!(tool.name(), "now");
    /// # Ok::<(), toolkit_core::DefinitionError>(())
    /// ```
    pub fn new(definition: ToolDefinition, approval: Approval, handler: Handler) -> Self {
        Self::from_parts(definition, approval, Runner::Answer(handler), None)
    }

    /// A tool whose handler gives its answer with the result it was made of, as written
    /// ([`Outcome`]): a tool that runs another and passes on what that one gave.
    pub fn with_outcome_handler(
        definition: ToolDefinition,
        approval: Approval,
        handler: OutcomeHandler,
    ) -> Self {
        Self::from_parts(definition, approval, Runner::Outcome(handler), None)
    }

    /// A tool of the source named `source`, which knows it as `tool`.
    #[doc(hidden)]
    pub fn of_source(
        definition: ToolDefinition,
        approval: Approval,
        handler: OutcomeHandler,
        source: &str,
        tool: &str,
    ) -> Self {
        let origin = Some((Arc::from(source), Arc::from(tool)));
        Self::from_parts(definition, approval, Runner::Outcome(handler), origin)
    }

    fn from_parts(
        definition: ToolDefinition,
        approval: Approval,
        runner: Runner,
        origin: Option<(Arc<str>, Arc<str>)>,
    ) -> Self {
        Self {
            inner: Arc::new(ToolInner {
                name: Arc::from(definition.name()),
                definition,
                approval,
                runner,
                origin,
                check: OnceLock::new(),
            }),
        }
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        self.inner.definition.name()
    }

    /// What the model is told about the tool.
    pub fn definition(&self) -> &ToolDefinition {
        &self.inner.definition
    }

    /// Whether a harness asks a person before running the tool.
    pub fn approval(&self) -> &Approval {
        &self.inner.approval
    }

    /// The source the tool comes from and the name that source knows it by, for a tool of a
    /// source ([`Toolkit::from_source`], [`Assembly`](crate::Assembly)).
    pub fn origin(&self) -> Option<(&str, &str)> {
        self.inner
            .origin
            .as_ref()
            .map(|(source, tool)| (&**source, &**tool))
    }

    /// The compiled check of the tool's input.
    pub fn input_check(&self) -> &InputCheck {
        self.inner
            .check
            .get_or_init(|| InputCheck::new(self.inner.definition.input_schema()))
    }

    /// Checks `input` and runs the tool. Asks no one: a host that calls this has decided.
    ///
    /// A panic in the handler is caught and logged; the model reads that the tool failed.
    pub async fn call(&self, input: Value) -> Result<Value, Failure> {
        self.traced(input, &CallContext::hosts_own(), false)
            .await
            .answer
    }

    /// Runs a call the model made: checks `input`, asks `context`'s approver when the tool needs
    /// approval for this input (and checks an input the person edited again), and runs the tool
    /// with `context` (progress, the approval of a tool it reaches, its extensions).
    pub async fn call_with(&self, input: Value, context: &CallContext) -> Result<Value, Failure> {
        self.traced(input, context, false).await.answer
    }

    /// Runs a call the model made as [`Tool::call_with`] does, and gives beside the answer the
    /// result its server wrote, when the tool's source made the answer of one ([`Outcome`]): what
    /// a server that serves the tool passes on.
    pub async fn call_outcome(&self, input: Value, context: &CallContext) -> Outcome<Failure> {
        self.traced(input, context, true).await
    }

    /// [`Tool::call`] without its span: what a call cost before spans, for the benchmark that
    /// holds their cost to 5 %. Not for use.
    #[doc(hidden)]
    pub async fn call_without_span(&self, input: Value) -> Result<Value, Failure> {
        self.checked(input, &CallContext::hosts_own(), false)
            .await
            .answer
    }

    /// The call inside its span, with its outcome and duration recorded; with its server's
    /// result as written when `written`.
    async fn traced(&self, input: Value, context: &CallContext, written: bool) -> Outcome<Failure> {
        let span = telemetry::tool_call(self.name(), self.origin(), context.id());
        if span.is_disabled() {
            // No subscriber wants the span: the call as it is, with nothing to record.
            return self.checked(input, context, written).await;
        }
        let started = telemetry::started(&span);
        let outcome = self
            .checked(input, context, written)
            .instrument(span.clone())
            .await;
        telemetry::record_outcome(&span, started, &outcome.answer);
        outcome
    }

    async fn checked(
        &self,
        input: Value,
        context: &CallContext,
        written: bool,
    ) -> Outcome<Failure> {
        if let Err(invalid) = self.input_check().check(&input) {
            return Err(Failure::invalid_input(invalid.report(self.name()))).into();
        }
        let Value::Object(input) = input else {
            // The check above refuses anything but an object.
            return Err(Failure::invalid_input("The input must be a JSON object.")).into();
        };
        let asks = match &self.inner.approval {
            _ if context.is_hosts_own() => false,
            Approval::Never | Approval::Delegated(_) => false,
            approval => approval.is_required(&input),
        };
        if asks {
            let (approved, edited) = match self.ask(input, context).await {
                Ok(asked) => asked,
                Err(failure) => return Err(failure).into(),
            };
            let context = context
                .clone()
                .with_extension(crate::approval::Approved { edited });
            return self.run(approved, &context, written).await;
        }
        self.run(input, context, written).await
    }

    /// Asks the context's approver about a call with `input`, and gives the input to run with
    /// (and whether the person changed it).
    async fn ask(
        &self,
        input: JsonObject,
        context: &CallContext,
    ) -> Result<(JsonObject, bool), Failure> {
        let span = tracing::Span::current();
        let Some(approver) = context.approver_ref() else {
            span.record("toolkit.approval", "declined");
            return Err(nobody_to_ask());
        };
        let request = ApprovalRequest::new(
            self.inner.definition.clone(),
            self.inner.origin.clone(),
            input.clone(),
            context.clone(),
        );
        let asked = std::panic::catch_unwind(AssertUnwindSafe(|| approver.approve(request)));
        let verdict = match asked {
            Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
            Err(panic) => Err(panic),
        };
        let verdict = verdict.unwrap_or_else(|panic| {
            tracing::error!(
                tool = self.name(),
                panic = panic_message(panic.as_ref()),
                "the approver panicked; the call is declined"
            );
            Verdict::Decline { reason: None }
        });
        match verdict {
            Verdict::Approve => {
                span.record("toolkit.approval", "approved");
                Ok((input, false))
            }
            Verdict::Decline { reason } => {
                span.record("toolkit.approval", "declined");
                Err(Verdict::declined(reason.as_deref()))
            }
            Verdict::Edit(edited) => {
                span.record("toolkit.approval", "edited");
                let edited = Value::Object(edited);
                if let Err(invalid) = self.input_check().check(&edited) {
                    return Err(Failure::invalid_input(format!(
                        "A person changed the input of this call, and the tool does not take the \
                         changed input; the tool did not run. {}",
                        invalid.report(self.name())
                    )));
                }
                match edited {
                    Value::Object(edited) => Ok((edited, true)),
                    _ => Err(Failure::invalid_input("The input must be a JSON object.")),
                }
            }
        }
    }

    /// Runs the handler on a checked input, with `context`: a model's call as this tool's, a
    /// host's own call as the context it came with (a code-mode run's calls stay the run's).
    async fn run(
        &self,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<Failure> {
        let context = if context.is_hosts_own() {
            context.clone()
        } else {
            context.clone().running(&self.inner.name)
        };
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| match &self.inner.runner {
            Runner::Answer(handler) => Either::Left(handler(input, context).map(Outcome::from)),
            Runner::Outcome(handler) => Either::Right(handler(input, context, written)),
        }));
        let outcome = match started {
            Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
            Err(panic) => Err(panic),
        };
        outcome.unwrap_or_else(|panic| {
            tracing::error!(
                tool = self.name(),
                panic = panic_message(panic.as_ref()),
                "a tool panicked; the model reads that it failed"
            );
            Err(Failure::new("UnknownError", "The source failed.", false)).into()
        })
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("definition", &self.inner.definition)
            .field("approval", &self.inner.approval)
            .field("origin", &self.origin())
            .finish_non_exhaustive()
    }
}

/// What a panic said, as text.
#[doc(hidden)]
pub fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic with no message")
}

/// The tools a model is given, in order, by name.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolkit_core::{Approval, Tool, ToolDefinition, Toolkit};
///
/// # tokio_test_block(async {
/// let schema = json!({
///     "type": "object",
///     "properties": { "text": { "type": "string" } },
///     "required": ["text"],
///     "additionalProperties": false
/// });
/// let definition = ToolDefinition::new("shout", schema.as_object().cloned().unwrap_or_default()).unwrap();
/// let shout = Tool::new(definition, Approval::Never, Arc::new(|input, _context| {
///     Box::pin(async move {
///         let text = input["text"].as_str().unwrap_or_default().to_uppercase();
///         Ok(json!(text))
///     })
/// }));
/// let toolkit = Toolkit::from_tools([shout]).unwrap();
///
/// assert_eq!(toolkit.call("shout", json!({ "text": "hi" })).await, Ok(json!("HI")));
/// let failure = toolkit.call("shout", json!({ "txt": "hi" })).await.unwrap_err();
/// assert_eq!(failure.code, "InvalidInputError");
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Toolkit {
    tools: IndexMap<String, Tool>,
}

/// Two tools of one toolkit that would share a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateName {
    /// The name they share.
    pub name: String,
}

impl fmt::Display for DuplicateName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "two tools are named {:?}", self.name)
    }
}

impl std::error::Error for DuplicateName {}

/// Says of a definition whether its tool needs approval.
type NeedsApproval = Arc<dyn Fn(&ToolDefinition) -> bool + Send + Sync>;

/// Options of [`Toolkit::from_source`].
#[derive(Clone, Default)]
pub struct ToolkitOptions {
    needs_approval: Option<NeedsApproval>,
}

impl ToolkitOptions {
    /// Marks the tools for which `decide` says `true` as needing approval before each call.
    #[must_use]
    pub fn needs_approval(
        mut self,
        decide: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.needs_approval = Some(Arc::new(decide));
        self
    }
}

impl fmt::Debug for ToolkitOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolkitOptions")
            .field("needs_approval", &self.needs_approval.is_some())
            .finish()
    }
}

impl Toolkit {
    /// A toolkit of these tools, in this order.
    ///
    /// # Errors
    ///
    /// [`DuplicateName`] when two tools share a name.
    pub fn from_tools(tools: impl IntoIterator<Item = Tool>) -> Result<Self, DuplicateName> {
        let mut map = IndexMap::new();
        for tool in tools {
            let name = tool.name().to_owned();
            if map.insert(name.clone(), tool).is_some() {
                return Err(DuplicateName { name });
            }
        }
        Ok(Self { tools: map })
    }

    /// A toolkit of tools already keyed by their distinct names.
    #[doc(hidden)]
    pub fn from_named(tools: IndexMap<String, Tool>) -> Self {
        Self { tools }
    }

    /// The toolkit of exactly these definitions of `source`: one tool per definition, named as
    /// the definition names it, which calls the source when the model calls it.
    ///
    /// Building contacts nothing: the definitions come from the caller (who has them from a
    /// catalog), and the source is reached only when the model calls a tool.
    ///
    /// # Errors
    ///
    /// [`DuplicateName`] when two definitions share a name.
    pub fn from_source(
        source: Arc<dyn ToolSource>,
        definitions: impl IntoIterator<Item = ToolDefinition>,
        options: &ToolkitOptions,
    ) -> Result<Self, DuplicateName> {
        let tools = definitions.into_iter().map(|definition| {
            let approval = match &options.needs_approval {
                Some(decide) if decide(&definition) => Approval::Always,
                _ => Approval::Never,
            };
            let handler = source_handler(Arc::clone(&source), definition.name());
            let tool = definition.name().to_owned();
            Tool::of_source(definition, approval, handler, source.name(), &tool)
        });
        Self::from_tools(tools)
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    /// The tools, in order.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &Tool> {
        self.tools.values()
    }

    /// The tools' definitions, in order: what a model is shown.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.tools.values().map(Tool::definition)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there is no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Calls the tool `name` with `input` as a model's call does: checks the input, runs the
    /// tool, and gives its JSON or what the model reads of its failure. A name that is no tool
    /// is a `NotFoundError` failure.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, Failure> {
        match self.tools.get(name) {
            Some(tool) => tool.call(input).await,
            None => Err(no_tool(name, self.tools.keys())),
        }
    }

    /// Calls the tool `name` with `input` as the model made the call, with what the host gives
    /// with it: as [`Toolkit::call`], but a tool that needs approval for this input runs only once
    /// `context`'s approver approves (asked only once the input is known to be valid; an input
    /// the person edited is checked again), and progress goes to `context`'s callback.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use toolkit_core::{Approval, ApprovalRequest, CallContext, Tool, ToolDefinition, Toolkit, Verdict};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let schema = json!({ "type": "object", "properties": { "path": { "type": "string" } } });
    /// let definition = ToolDefinition::new("delete", schema.as_object().cloned().unwrap_or_default()).unwrap();
    /// let delete = Tool::new(definition, Approval::Always, Arc::new(|input, _context| {
    ///     Box::pin(async move { Ok(json!({ "deleted": input["path"] })) })
    /// }));
    /// let toolkit = Toolkit::from_tools([delete]).unwrap();
    ///
    /// // The person keeps the call away from /etc, and says why.
    /// let context = CallContext::new().approver(|request: ApprovalRequest| async move {
    ///     match request.input().get("path").and_then(|path| path.as_str()) {
    ///         Some(path) if path.starts_with("/etc") => Verdict::decline("Not under /etc."),
    ///         Some(_) => Verdict::Approve,
    ///         None => Verdict::Edit(json!({ "path": "/tmp/scratch" }).as_object().cloned().unwrap_or_default()),
    ///     }
    /// });
    /// let declined = toolkit.call_with("delete", json!({ "path": "/etc/hosts" }), &context).await;
    /// assert_eq!(declined.unwrap_err().message, "A person declined this call: Not under /etc.");
    /// let edited = toolkit.call_with("delete", json!({}), &context).await;
    /// assert_eq!(edited, Ok(json!({ "deleted": "/tmp/scratch" })));
    /// # });
    /// ```
    pub async fn call_with(
        &self,
        name: &str,
        input: Value,
        context: &CallContext,
    ) -> Result<Value, Failure> {
        match self.tools.get(name) {
            Some(tool) => tool.call_with(input, context).await,
            None => Err(no_tool(name, self.tools.keys())),
        }
    }

    /// Calls the tool `name` as [`Toolkit::call_with`] does, and gives beside the answer the
    /// result its server wrote, when the answer was made of one ([`Tool::call_outcome`]).
    pub async fn call_outcome(
        &self,
        name: &str,
        input: Value,
        context: &CallContext,
    ) -> Outcome<Failure> {
        match self.tools.get(name) {
            Some(tool) => tool.call_outcome(input, context).await,
            None => Err(no_tool(name, self.tools.keys())).into(),
        }
    }
}

/// How alike (Jaro-Winkler, 0 to 1, which favours a shared start) a name must be to a tool's
/// to be offered in its place: a mistyped source or a letter off (`petstore__getPetById` for
/// `petstore3__getPetById`: 0.99, `list_issue` for `list_issues`), not another word
/// (`search_notes` for `notes__search_notes`: 0.71).
const NEAR: f64 = 0.85;

/// The most tool names offered in place of one that is none.
const MAX_OFFERED: usize = 3;

/// What the model reads when it calls a name that is no tool: the names of `known` nearest to
/// it, when some are near.
fn no_tool<'a>(name: &str, known: impl Iterator<Item = &'a String>) -> Failure {
    let name = cut_for_echo(name);
    let mut near: Vec<(f64, &str)> = known
        .map(|tool| (strsim::jaro_winkler(&name, tool), tool.as_str()))
        .filter(|(likeness, _)| *likeness >= NEAR)
        .collect();
    near.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut message = format!("There is no tool named {name:?}.");
    if !near.is_empty() {
        let offered: Vec<String> = near
            .iter()
            .take(MAX_OFFERED)
            .map(|(_, tool)| format!("{tool:?}"))
            .collect();
        message.push_str(&format!(" Did you mean {}?", offered.join(", ")));
    }
    Failure::not_found(message)
}

/// The handler of a source's tool: calls the source by the name it knows the tool by, and
/// gives the result its server wrote with the answer.
#[doc(hidden)]
pub fn source_handler(source: Arc<dyn ToolSource>, name: &str) -> OutcomeHandler {
    let name: Arc<str> = Arc::from(name);
    Arc::new(move |input, context, written| {
        let source = Arc::clone(&source);
        let name = Arc::clone(&name);
        Box::pin(async move {
            let outcome = source
                .call_keeping_written(&name, input, &context, written)
                .await;
            outcome.map_err(|error| {
                tracing::debug!(source = %error.source, tool = %name, %error, "a tool call failed");
                error.to_failure()
            })
        })
    })
}

impl<'a> IntoIterator for &'a Toolkit {
    type Item = &'a Tool;
    type IntoIter = indexmap::map::Values<'a, String, Tool>;

    fn into_iter(self) -> Self::IntoIter {
        self.tools.values()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::no_tool;

    #[test]
    fn a_name_that_is_no_tool_is_told_the_nearest_ones() {
        let known: Vec<String> = [
            "petstore3__getPetById",
            "petstore3__addPet",
            "petstore3__getPetsByTag",
            "notes__search_notes",
        ]
        .map(str::to_owned)
        .to_vec();
        let failure = no_tool("petstore__getPetById", known.iter());
        assert_eq!(failure.code, "NotFoundError");
        assert!(
            failure.message.starts_with(
                "There is no tool named \"petstore__getPetById\". Did you mean \"petstore3__getPetById\""
            ),
            "{}",
            failure.message
        );
        assert!(!failure.message.contains("notes__"), "{}", failure.message);
        // Nothing near: the plain sentence.
        let failure = no_tool("weather", known.iter());
        assert_eq!(failure.message, "There is no tool named \"weather\".");
    }
}
