//! The conformance suites over hand-written tools, and the suites' own proof that they can fail:
//! a deliberately broken source fails the matching check, and only that one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolkit_runtime::conformance::{self, Check, Fixture, State, Subject};
use toolkit_runtime::{
    BoxFuture, FnSource, FnTool, JsonObject, Reason, ToolDefinition, ToolSource, ToolSourceError,
};

const SECRET: &str = "tk-live-0c8f2e6b51";
const ADDRESS: &str = "https://tools.internal.example:9443";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Echo {
    /// What to say back.
    text: String,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// How a broken source is broken.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Breakage {
    None,
    LeaksItsToken,
    PanicsOnAnUnknownTool,
    IgnoresDrop,
    CallsA401Unavailable,
    /// Its `call_outcome` answers otherwise than its `call` (a wrapper that edits one only).
    OutcomeDiffers,
}

/// The system behind hand-written tools: a service that checks a token and may be down.
fn refusal(state: State) -> Option<Reason> {
    match state {
        State::Working => None,
        State::Unauthorized => Some(Reason::authentication(format!(
            "{ADDRESS} refused token {SECRET}"
        ))),
        State::Unavailable => Some(Reason::unavailable(format!("{ADDRESS} answered 503"))),
        State::Unreachable => Some(Reason::unavailable(format!("connect to {ADDRESS} refused"))),
    }
}

fn hand_written(state: State, ended: Arc<AtomicBool>) -> FnSource {
    FnSource::builder("handwritten")
        .tool(
            FnTool::new("echo", move |input: Echo| async move {
                match refusal(state) {
                    Some(reason) => Err(reason),
                    None => Ok(json!({ "text": input.text })),
                }
            })
            .description("Answers with the text it is given."),
        )
        .tool(FnTool::new("failing", move |_: Echo| async move {
            Err::<Value, _>(
                refusal(state)
                    .unwrap_or_else(|| Reason::call_failed("The failing tool failed, as it does.")),
            )
        }))
        .tool(FnTool::new("blocking", move |_: Echo| {
            let ended = Arc::clone(&ended);
            async move {
                let _guard = SetOnDrop(ended);
                std::future::pending::<()>().await;
                Ok(Value::Null)
            }
        }))
        .build()
        .unwrap()
}

/// The hand-written source, broken as asked.
struct Broken {
    inner: FnSource,
    breakage: Breakage,
    state: State,
    ended: Arc<AtomicBool>,
}

impl ToolSource for Broken {
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
        context: &'a toolkit_runtime::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        match (self.breakage, tool) {
            (Breakage::LeaksItsToken, "failing") => Box::pin(async move {
                Err(ToolSourceError::new(
                    self.name(),
                    Reason::call_failed(format!("failed with token {SECRET}")),
                ))
            }),
            (Breakage::PanicsOnAnUnknownTool, "no_such_tool_here") => panic!("no such tool"),
            (Breakage::IgnoresDrop, "blocking") => {
                let ended = Arc::clone(&self.ended);
                // The work is detached from the call: dropping the call does not stop it.
                tokio::spawn(async move {
                    let _guard = SetOnDrop(ended);
                    std::future::pending::<()>().await;
                });
                Box::pin(std::future::pending())
            }
            (Breakage::CallsA401Unavailable, _) if self.state == State::Unauthorized => {
                Box::pin(async move {
                    Err(ToolSourceError::new(
                        self.name(),
                        Reason::unavailable("401"),
                    ))
                })
            }
            _ => self.inner.call(tool, input, context),
        }
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a toolkit_runtime::CallContext,
    ) -> BoxFuture<'a, toolkit_runtime::Outcome<ToolSourceError>> {
        if self.breakage == Breakage::OutcomeDiffers {
            return Box::pin(async { Ok(Value::String("edited".into())).into() });
        }
        Box::pin(async move { self.call(tool, input, context).await.into() })
    }
}

struct HandWritten(Breakage);

impl Fixture for HandWritten {
    fn subject(&self) -> &str {
        "hand-written tools (schemars)"
    }

    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
        Box::pin(async move {
            let ended = Arc::new(AtomicBool::new(false));
            let inner = hand_written(state, Arc::clone(&ended));
            let source = Broken {
                inner,
                breakage: self.0,
                state,
                ended: Arc::clone(&ended),
            };
            Ok(Subject {
                source: Arc::new(source),
                secret: SECRET.to_owned(),
                address: ADDRESS.to_owned(),
                blocking_ended: Arc::new(move || ended.load(Ordering::SeqCst)),
                discover_asks_system: false,
                system: Box::new(()),
            })
        })
    }
}

#[tokio::test]
async fn hand_written_tools_conform() {
    conformance::run(&HandWritten(Breakage::None))
        .await
        .assert_passed();
}

#[tokio::test]
async fn each_broken_source_fails_its_check_and_only_it() {
    for (breakage, check) in [
        (Breakage::LeaksItsToken, Check::TellsAModelNoSecretOrAddress),
        (
            Breakage::PanicsOnAnUnknownTool,
            Check::UnknownToolIsAnErrorOfTheSource,
        ),
        (Breakage::IgnoresDrop, Check::DroppedCallStops),
        (
            Breakage::CallsA401Unavailable,
            Check::RefusedCredentialsAreAuthentication,
        ),
        (Breakage::OutcomeDiffers, Check::OutcomeAnswersAsCall),
    ] {
        let report = conformance::run(&HandWritten(breakage)).await;
        assert_eq!(
            report.failed(),
            [check],
            "{breakage:?}: {:#?}",
            report.outcomes
        );
    }
}

#[tokio::test]
async fn a_failed_report_names_the_requirement_and_the_subject() {
    let report = conformance::run_checks(
        &HandWritten(Breakage::IgnoresDrop),
        &[Check::DroppedCallStops],
    )
    .await;
    let panic = std::panic::catch_unwind(|| report.assert_passed()).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with("hand-written tools (schemars) does not conform:"),
        "{message}"
    );
    assert!(
        message.contains("a call that is interrupted stops"),
        "{message}"
    );
}
