//! One check per requirement of the suites.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use serde_json::{Value, json};

use super::{Fixture, State, Subject};
use toolkit_core::{
    Assembly, BoxFuture, CallContext, Decision, Failure, JsonObject, Member, Reason,
    ToolDefinition, ToolSource, ToolSourceError, Toolkit, ToolkitOptions,
};
use toolkit_core::{decode_catalog, encode_catalog};

/// How long one check may take before it counts as hung.
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);
/// How long after a call is dropped its work must have ended.
const STOP_BOUND: Duration = Duration::from_secs(5);
/// How many calls run together in the concurrency check.
const CONCURRENT_CALLS: usize = 50;

/// A requirement the suites hold a source to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Check {
    /// Lists definitions a catalog can store as JSON, under distinct names, the same each time.
    ListsStorableDefinitions,
    /// Runs a tool by the name it lists and returns JSON.
    RunsAToolByItsName,
    /// Calls that run together each get their own answer.
    ConcurrentCallsGetTheirOwnAnswers,
    /// A tool that reports failure is `CallFailed`, naming the source.
    ReportedFailureIsCallFailed,
    /// [`ToolSource::call_outcome`] answers as [`ToolSource::call`] does (a source that gives
    /// its server's result as written, or a wrapper that forwards it, changes nothing else).
    OutcomeAnswersAsCall,
    /// A tool the source does not have is an error of the source, not a panic or a defect.
    UnknownToolIsAnErrorOfTheSource,
    /// Tools run again after a failure.
    RunsAgainAfterAFailure,
    /// A call whose future is dropped stops its work.
    DroppedCallStops,
    /// Refused credentials are `Authentication`, not retryable — for `discover` too.
    RefusedCredentialsAreAuthentication,
    /// A system that says it is down is `Unavailable`, retryable — for `discover` too.
    DownIsUnavailable,
    /// A system that cannot be reached is `Unavailable`, retryable — for `discover` too.
    UnreachableIsUnavailable,
    /// Nothing a model reads carries the system's secret or address.
    TellsAModelNoSecretOrAddress,
    /// Read by a model through a toolkit as results, an input the parameters refuse never
    /// reaching the source.
    ReadThroughAToolkit,
    /// Assembled by an [`Assembly`], a call reaches the tool by its assembled name.
    AssembledByAnAssembly,
}

impl Check {
    /// Every check, in order.
    pub const ALL: &'static [Check] = &[
        Check::ListsStorableDefinitions,
        Check::RunsAToolByItsName,
        Check::ConcurrentCallsGetTheirOwnAnswers,
        Check::ReportedFailureIsCallFailed,
        Check::OutcomeAnswersAsCall,
        Check::UnknownToolIsAnErrorOfTheSource,
        Check::RunsAgainAfterAFailure,
        Check::DroppedCallStops,
        Check::RefusedCredentialsAreAuthentication,
        Check::DownIsUnavailable,
        Check::UnreachableIsUnavailable,
        Check::TellsAModelNoSecretOrAddress,
        Check::ReadThroughAToolkit,
        Check::AssembledByAnAssembly,
    ];

    /// The requirement, as a failure names it.
    pub fn requirement(self) -> &'static str {
        match self {
            Self::ListsStorableDefinitions => {
                "lists definitions a catalog can store, under distinct names, the same each time"
            }
            Self::RunsAToolByItsName => "runs a tool by the name it lists and returns JSON",
            Self::ConcurrentCallsGetTheirOwnAnswers => {
                "calls that run together each get their own answer"
            }
            Self::ReportedFailureIsCallFailed => "a tool that reports failure is CallFailed",
            Self::OutcomeAnswersAsCall => "answers through call_outcome as through call",
            Self::UnknownToolIsAnErrorOfTheSource => {
                "a tool it does not have is an error of the source"
            }
            Self::RunsAgainAfterAFailure => "runs tools again after a failure",
            Self::DroppedCallStops => "a call that is interrupted stops",
            Self::RefusedCredentialsAreAuthentication => {
                "refused credentials are Authentication, not retryable"
            }
            Self::DownIsUnavailable => "a system that is down is Unavailable, retryable",
            Self::UnreachableIsUnavailable => {
                "a system that cannot be reached is Unavailable, retryable"
            }
            Self::TellsAModelNoSecretOrAddress => "tells a model no credential and no address",
            Self::ReadThroughAToolkit => "is read by a model through a toolkit as results",
            Self::AssembledByAnAssembly => "is assembled by an Assembly",
        }
    }
}

/// Runs `check`, catching a panic and bounding its time.
pub(super) async fn run(fixture: &dyn Fixture, check: Check) -> Result<(), String> {
    let checked = AssertUnwindSafe(run_unguarded(fixture, check)).catch_unwind();
    match tokio::time::timeout(CHECK_TIMEOUT, checked).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(_)) => Err("the check panicked (the source or the fixture panicked)".to_owned()),
        Err(_) => Err(format!("the check hung for {CHECK_TIMEOUT:?}")),
    }
}

async fn run_unguarded(fixture: &dyn Fixture, check: Check) -> Result<(), String> {
    match check {
        Check::ListsStorableDefinitions => lists_storable_definitions(fixture).await,
        Check::RunsAToolByItsName => runs_a_tool_by_its_name(fixture).await,
        Check::ConcurrentCallsGetTheirOwnAnswers => concurrent_calls(fixture).await,
        Check::ReportedFailureIsCallFailed => reported_failure(fixture).await,
        Check::OutcomeAnswersAsCall => outcome_answers_as_call(fixture).await,
        Check::UnknownToolIsAnErrorOfTheSource => unknown_tool(fixture).await,
        Check::RunsAgainAfterAFailure => runs_again(fixture).await,
        Check::DroppedCallStops => dropped_call_stops(fixture).await,
        Check::RefusedCredentialsAreAuthentication => {
            refused(fixture, State::Unauthorized, "AuthenticationError", false).await
        }
        Check::DownIsUnavailable => {
            refused(fixture, State::Unavailable, "UnavailableError", true).await
        }
        Check::UnreachableIsUnavailable => {
            refused(fixture, State::Unreachable, "UnavailableError", true).await
        }
        Check::TellsAModelNoSecretOrAddress => tells_no_secret(fixture).await,
        Check::ReadThroughAToolkit => read_through_a_toolkit(fixture).await,
        Check::AssembledByAnAssembly => assembled(fixture).await,
    }
}

fn input(text: &str) -> JsonObject {
    let mut input = JsonObject::new();
    input.insert("text".to_owned(), Value::String(text.to_owned()));
    input
}

fn says(answer: &Value, text: &str) -> bool {
    answer.to_string().contains(text)
}

async fn definitions(subject: &Subject) -> Result<Vec<ToolDefinition>, String> {
    let definitions = subject
        .source
        .discover()
        .await
        .map_err(|error| format!("discover failed: {error}"))?;
    for tool in ["echo", "failing", "blocking"] {
        if !definitions.iter().any(|d| d.name() == tool) {
            return Err(format!("discover lists no tool named {tool:?}"));
        }
    }
    Ok(definitions)
}

fn expect_source(subject: &Subject, error: &ToolSourceError) -> Result<(), String> {
    if error.source == subject.source.name() {
        Ok(())
    } else {
        Err(format!(
            "the error names the source {:?}, not {:?}",
            error.source,
            subject.source.name()
        ))
    }
}

async fn lists_storable_definitions(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    let first = definitions(&subject).await?;
    let stored = encode_catalog(&first);
    let read =
        decode_catalog(&stored).map_err(|e| format!("the catalog cannot be read back: {e}"))?;
    if read != first {
        return Err("the definitions are not the same once stored and read back".to_owned());
    }
    let mut names = HashSet::new();
    if let Some(twice) = first.iter().find(|d| !names.insert(d.name())) {
        return Err(format!("two definitions are named {:?}", twice.name()));
    }
    let second = definitions(&subject).await?;
    if encode_catalog(&second) != stored {
        return Err("discover lists other definitions the second time".to_owned());
    }
    Ok(())
}

async fn runs_a_tool_by_its_name(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    definitions(&subject).await?;
    let answer = subject
        .source
        .call("echo", input("conformance-echo-7f3a"), &CallContext::new())
        .await
        .map_err(|error| format!("echo failed: {error}"))?;
    if says(&answer, "conformance-echo-7f3a") {
        Ok(())
    } else {
        Err(format!(
            "echo answered without the text it was given: {answer}"
        ))
    }
}

async fn concurrent_calls(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    definitions(&subject).await?;
    let calls = (0..CONCURRENT_CALLS).map(|i| {
        let source = Arc::clone(&subject.source);
        async move {
            let text = format!("call-{i}-of-many");
            let answer = source.call("echo", input(&text), &CallContext::new()).await;
            (text, answer)
        }
    });
    for (text, answer) in futures_util::future::join_all(calls).await {
        match answer {
            Ok(answer) if says(&answer, &text) => {}
            Ok(answer) => return Err(format!("the call with {text:?} was answered {answer}")),
            Err(error) => {
                return Err(format!(
                    "a call of {CONCURRENT_CALLS} together failed: {error}"
                ));
            }
        }
    }
    Ok(())
}

async fn reported_failure(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    definitions(&subject).await?;
    match subject
        .source
        .call("failing", input("x"), &CallContext::new())
        .await
    {
        Ok(answer) => Err(format!("failing answered {answer}")),
        Err(error) => {
            expect_source(&subject, &error)?;
            match error.reason {
                Reason::CallFailed { .. } => Ok(()),
                other => Err(format!(
                    "failing failed as {}, not CallFailedError",
                    other.code()
                )),
            }
        }
    }
}

async fn outcome_answers_as_call(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    definitions(&subject).await?;
    let text = "conformance-outcome-5c1d";
    let outcome = subject
        .source
        .call_outcome("echo", input(text), &CallContext::new())
        .await;
    match outcome.answer {
        Ok(answer) if says(&answer, text) => {}
        Ok(answer) => {
            return Err(format!(
                "echo through call_outcome answered without the text it was given: {answer}"
            ));
        }
        Err(error) => return Err(format!("echo through call_outcome failed: {error}")),
    }
    let failed = subject
        .source
        .call_outcome("failing", input("x"), &CallContext::new())
        .await;
    match failed.answer {
        Err(error) if matches!(error.reason, Reason::CallFailed { .. }) => {
            expect_source(&subject, &error)
        }
        Err(error) => Err(format!(
            "failing through call_outcome failed as {}, not CallFailedError",
            error.reason.code()
        )),
        Ok(answer) => Err(format!("failing through call_outcome answered {answer}")),
    }
}

async fn unknown_tool(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    definitions(&subject).await?;
    let context = CallContext::new();
    let call = AssertUnwindSafe(
        subject
            .source
            .call("no_such_tool_here", input("x"), &context),
    )
    .catch_unwind();
    match call.await {
        Err(_) => Err("calling a tool the source does not have panicked".to_owned()),
        Ok(Ok(answer)) => Err(format!("a tool the source does not have answered {answer}")),
        Ok(Err(error)) => {
            expect_source(&subject, &error)?;
            match error.reason {
                Reason::Unknown { .. } => {
                    Err("a tool it does not have is an Unknown defect".to_owned())
                }
                _ => Ok(()),
            }
        }
    }
}

async fn runs_again(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    definitions(&subject).await?;
    let _ = subject
        .source
        .call("failing", input("x"), &CallContext::new())
        .await;
    match subject
        .source
        .call("echo", input("after-failure"), &CallContext::new())
        .await
    {
        Ok(answer) if says(&answer, "after-failure") => Ok(()),
        Ok(answer) => Err(format!("echo after a failure answered {answer}")),
        Err(error) => Err(format!("echo after a failure failed: {error}")),
    }
}

async fn dropped_call_stops(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    definitions(&subject).await?;
    let context = CallContext::new();
    let call = subject.source.call("blocking", input("x"), &context);
    if let Ok(answer) = tokio::time::timeout(Duration::from_millis(300), call).await {
        return Err(format!("blocking answered: {answer:?}"));
    }
    let dropped = Instant::now();
    while !(subject.blocking_ended)() {
        if dropped.elapsed() > STOP_BOUND {
            return Err(format!(
                "the blocking call's work went on {STOP_BOUND:?} after it was dropped"
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

async fn refused(
    fixture: &dyn Fixture,
    state: State,
    code: &str,
    retryable: bool,
) -> Result<(), String> {
    let subject = fixture.source(state).await?;
    let judge = |what: &str, outcome: Result<String, ToolSourceError>| -> Result<(), String> {
        match outcome {
            Ok(answer) => Err(format!(
                "{what} succeeded against a system that is {state:?}: {answer}"
            )),
            Err(error) => {
                expect_source(&subject, &error)?;
                if error.reason.code() != code {
                    return Err(format!(
                        "{what} failed as {}, not {code}",
                        error.reason.code()
                    ));
                }
                if error.is_retryable() != retryable {
                    return Err(format!(
                        "{what}'s {code} says retryable = {}",
                        error.is_retryable()
                    ));
                }
                Ok(())
            }
        }
    };
    if subject.discover_asks_system {
        let listed = subject
            .source
            .discover()
            .await
            .map(|d| format!("{} tools", d.len()));
        judge("discover", listed)?;
    }
    let called = subject
        .source
        .call("echo", input("x"), &CallContext::new())
        .await
        .map(|a| a.to_string());
    judge("a call", called)
}

/// Every string a model can read of the source, through a toolkit and an assembly.
async fn model_readable(subject: &Subject, definitions: &[ToolDefinition]) -> Vec<String> {
    let mut seen = vec![encode_catalog(definitions)];
    let direct = Toolkit::from_source(
        Arc::clone(&subject.source),
        definitions.to_vec(),
        &ToolkitOptions::default(),
    );
    let assembled = Assembly::new().toolkit(
        &[Member::new(
            Arc::clone(&subject.source),
            definitions.to_vec(),
        )],
        |_, _| Decision::Allow,
    );
    let toolkits: Vec<Toolkit> = [direct.ok(), assembled.ok()]
        .into_iter()
        .flatten()
        .collect();
    for toolkit in &toolkits {
        seen.extend(
            toolkit
                .definitions()
                .map(|d| serde_json::to_string(d).unwrap_or_default()),
        );
        for tool in toolkit.tools() {
            if tool.name().ends_with("blocking") {
                continue;
            }
            let outcome = toolkit.call(tool.name(), json!({ "text": "hello" })).await;
            seen.push(read(&outcome));
        }
        seen.push(read(&toolkit.call("no_such_tool_here", json!({})).await));
    }
    seen
}

fn read(outcome: &Result<Value, Failure>) -> String {
    match outcome {
        Ok(value) => value.to_string(),
        Err(failure) => failure.to_json().to_string(),
    }
}

async fn tells_no_secret(fixture: &dyn Fixture) -> Result<(), String> {
    let working = fixture.source(State::Working).await?;
    let catalog = definitions(&working).await?;
    let mut seen = model_readable(&working, &catalog).await;
    let mut secrets = vec![
        (working.secret.clone(), "its secret"),
        (working.address.clone(), "its address"),
    ];
    for state in [State::Unauthorized, State::Unavailable, State::Unreachable] {
        let subject = fixture.source(state).await?;
        seen.extend(model_readable(&subject, &catalog).await);
        secrets.push((subject.secret.clone(), "its secret"));
        secrets.push((subject.address.clone(), "its address"));
    }
    for (secret, what) in secrets {
        if secret.len() < 4 {
            continue;
        }
        if let Some(text) = seen.iter().find(|text| text.contains(&secret)) {
            let at = text.find(&secret).unwrap_or_default();
            let around = &text[text.floor_char_boundary(at.saturating_sub(40))
                ..text.ceil_char_boundary((at + secret.len() + 40).min(text.len()))];
            return Err(format!("a model reads {what} ({secret:?}) in: …{around}…"));
        }
    }
    Ok(())
}

/// Counts the calls that reach the source under test.
struct Counting {
    inner: Arc<dyn ToolSource>,
    calls: AtomicUsize,
}

impl ToolSource for Counting {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        self.inner.discover()
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a toolkit_core::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.call(tool, input, context)
    }
}

async fn read_through_a_toolkit(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    let catalog = definitions(&subject).await?;
    let counting = Arc::new(Counting {
        inner: Arc::clone(&subject.source),
        calls: AtomicUsize::new(0),
    });
    let toolkit = Toolkit::from_source(
        Arc::clone(&counting) as _,
        catalog,
        &ToolkitOptions::default(),
    )
    .map_err(|error| format!("the definitions make no toolkit: {error}"))?;
    match toolkit
        .call("echo", json!({ "text": "through-a-toolkit" }))
        .await
    {
        Ok(answer) if says(&answer, "through-a-toolkit") => {}
        other => return Err(format!("echo through a toolkit gave {other:?}")),
    }
    match toolkit.call("failing", json!({ "text": "x" })).await {
        Err(failure) if failure.code == "CallFailedError" => {}
        other => {
            return Err(format!(
                "failing through a toolkit gave {other:?}, not a CallFailedError result"
            ));
        }
    }
    let before = counting.calls.load(Ordering::SeqCst);
    match toolkit.call("echo", json!({ "text": 12 })).await {
        Err(failure) if failure.code == "InvalidInputError" => {}
        other => {
            return Err(format!(
                "echo with a number for its text gave {other:?}, not InvalidInputError"
            ));
        }
    }
    if counting.calls.load(Ordering::SeqCst) != before {
        return Err("an input the parameters do not allow reached the source".to_owned());
    }
    match toolkit.call("no_such_tool_here", json!({})).await {
        Err(failure) if failure.code == "NotFoundError" => Ok(()),
        other => Err(format!("a tool that is not there gave {other:?}")),
    }
}

async fn assembled(fixture: &dyn Fixture) -> Result<(), String> {
    let subject = fixture.source(State::Working).await?;
    let catalog = definitions(&subject).await?;
    let members = [Member::new(Arc::clone(&subject.source), catalog)];
    let toolkit = Assembly::new()
        .toolkit(&members, |_, d| {
            if d.name() == "blocking" {
                Decision::Block
            } else {
                Decision::Allow
            }
        })
        .map_err(|error| format!("the assembly failed: {error}"))?;
    let echo = toolkit_core::naming::tool_name(subject.source.name(), "echo", 64);
    match toolkit.call(&echo, json!({ "text": "assembled" })).await {
        Ok(answer) if says(&answer, "assembled") => {}
        other => return Err(format!("{echo} gave {other:?}")),
    }
    let blocking = toolkit_core::naming::tool_name(subject.source.name(), "blocking", 64);
    if toolkit.get(&blocking).is_some() {
        return Err("a blocked tool is in the assembled toolkit".to_owned());
    }
    Ok(())
}
