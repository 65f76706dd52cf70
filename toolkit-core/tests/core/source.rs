//! A source's tools as a toolkit (seed 001 and the `tool-source` tests of seed 000).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::{Toolkit, ToolkitOptions, toolkit::Approval};

use crate::support::{ADDRESS, Scripted, any_object, definition, object};

fn toolkit_of(source: &Arc<Scripted>) -> Toolkit {
    Toolkit::from_source(
        Arc::clone(source) as _,
        Scripted::definitions(),
        &ToolkitOptions::default(),
    )
    .unwrap()
}

#[test]
fn building_contacts_nothing() {
    let source = Scripted::new("s");
    let toolkit = toolkit_of(&source);
    assert_eq!(toolkit.len(), Scripted::definitions().len());
    assert_eq!(source.contacts(), 0);
}

#[test]
fn tools_are_named_as_the_definitions_name_them_in_order() {
    let toolkit = toolkit_of(&Scripted::new("s"));
    let names: Vec<_> = toolkit.definitions().map(|d| d.name().to_owned()).collect();
    let expected: Vec<_> = Scripted::definitions()
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names, expected);
}

#[test]
fn definitions_must_have_distinct_names() {
    let source = Scripted::new("s");
    let twice = vec![
        definition("echo", any_object()),
        definition("echo", any_object()),
    ];
    let error = Toolkit::from_source(source as _, twice, &ToolkitOptions::default()).unwrap_err();
    assert_eq!(error.name, "echo");
}

#[tokio::test]
async fn a_call_reaches_the_source_with_the_input_as_given() {
    let source = Scripted::new("s");
    let toolkit = toolkit_of(&source);
    let input = json!({ "text": "hi", "n": 1.5, "nested": { "a": [1, null] } });
    assert_eq!(toolkit.call("echo", input.clone()).await, Ok(input.clone()));
    let seen = source.seen.lock().unwrap().clone();
    assert_eq!(seen, vec![("echo".to_owned(), object(input))]);
}

#[tokio::test]
async fn a_tool_that_gives_nothing_gives_null() {
    let toolkit = toolkit_of(&Scripted::new("s"));
    assert_eq!(toolkit.call("nothing", json!({})).await, Ok(Value::Null));
}

#[tokio::test]
async fn failures_are_results_the_model_reads() {
    let toolkit = toolkit_of(&Scripted::new("s"));

    let failed = toolkit.call("fail", json!({})).await.unwrap_err();
    assert_eq!(failed.code, "CallFailedError");
    assert_eq!(failed.message, "the tool said no");
    assert!(!failed.retryable);
    assert_eq!(failed.to_json()["isFailure"], json!(true));

    let down = toolkit.call("down", json!({})).await.unwrap_err();
    assert_eq!(down.code, "UnavailableError");
    assert!(down.retryable);

    let denied = toolkit.call("denied", json!({})).await.unwrap_err();
    assert_eq!(denied.code, "AuthenticationError");
    assert!(!denied.retryable);

    for failure in [down, denied] {
        assert!(!failure.message.contains("10.1.2.3"), "{failure}");
        assert!(!failure.to_json().to_string().contains(ADDRESS));
    }
}

#[tokio::test]
async fn an_unknown_tool_is_not_found_and_reaches_no_source() {
    let source = Scripted::new("s");
    let toolkit = toolkit_of(&source);
    let failure = toolkit.call("nope", json!({})).await.unwrap_err();
    assert_eq!(failure.code, "NotFoundError");
    assert_eq!(source.calls(), 0);
}

#[tokio::test]
async fn a_panic_in_a_source_is_read_as_the_source_failing_and_tools_run_again() {
    let toolkit = toolkit_of(&Scripted::new("s"));
    for tool in ["panic", "panic_now"] {
        let failure = toolkit.call(tool, json!({})).await.unwrap_err();
        assert_eq!(failure.code, "UnknownError");
        assert_eq!(failure.message, "The source failed.");
    }
    assert_eq!(
        toolkit.call("echo", json!({ "a": 1 })).await,
        Ok(json!({ "a": 1 }))
    );
}

#[tokio::test]
async fn dropping_a_call_stops_the_source_s_work() {
    let source = Scripted::new("s");
    let toolkit = toolkit_of(&source);
    let call = toolkit.call("block", json!({}));
    let outcome = tokio::time::timeout(Duration::from_millis(50), call).await;
    assert!(outcome.is_err(), "the blocking tool answered");
    assert!(source.started.load(Ordering::SeqCst));
    assert!(
        source.dropped.load(Ordering::SeqCst),
        "the source's work went on"
    );
}

#[tokio::test]
async fn calls_that_run_together_each_get_their_own_answer() {
    let toolkit = toolkit_of(&Scripted::new("s"));
    let calls = (0..100).map(|i| {
        let toolkit = toolkit.clone();
        tokio::spawn(async move { (i, toolkit.call("echo", json!({ "i": i })).await) })
    });
    for call in calls {
        let (i, answer) = call.await.unwrap();
        assert_eq!(answer, Ok(json!({ "i": i })));
    }
}

#[test]
fn needs_approval_marks_the_tools_it_names() {
    let options =
        ToolkitOptions::default().needs_approval(|definition| definition.name() == "fail");
    let toolkit =
        Toolkit::from_source(Scripted::new("s") as _, Scripted::definitions(), &options).unwrap();
    let input = object(json!({}));
    assert!(toolkit.get("fail").unwrap().approval().is_required(&input));
    assert!(matches!(
        toolkit.get("echo").unwrap().approval(),
        Approval::Never
    ));
}

/// A source whose server writes a result beside each answer, as an MCP source's does, and which
/// counts how often it was asked to keep it.
struct Writing {
    kept: std::sync::atomic::AtomicUsize,
}

impl toolkit_core::ToolSource for Writing {
    fn name(&self) -> &str {
        "w"
    }

    fn discover(
        &self,
    ) -> toolkit_core::BoxFuture<
        '_,
        Result<Vec<toolkit_core::ToolDefinition>, toolkit_core::ToolSourceError>,
    > {
        Box::pin(async { Ok(vec![definition("image", any_object())]) })
    }

    fn call<'a>(
        &'a self,
        _tool: &'a str,
        _input: toolkit_core::JsonObject,
        _context: &'a toolkit_core::CallContext,
    ) -> toolkit_core::BoxFuture<'a, Result<Value, toolkit_core::ToolSourceError>> {
        Box::pin(async { Ok(json!([{"type": "text", "text": "an image"}])) })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: toolkit_core::JsonObject,
        context: &'a toolkit_core::CallContext,
    ) -> toolkit_core::BoxFuture<'a, toolkit_core::Outcome<toolkit_core::ToolSourceError>> {
        self.kept.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            toolkit_core::Outcome {
                answer: self.call(tool, input, context).await,
                written: Some(object(json!({
                    "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]
                }))),
            }
        })
    }
}

#[tokio::test]
async fn a_server_is_given_the_result_as_written_and_a_host_only_the_answer() {
    let source = Arc::new(Writing {
        kept: Default::default(),
    });
    let toolkit = Toolkit::from_source(
        Arc::clone(&source) as _,
        vec![definition("image", any_object())],
        &ToolkitOptions::default(),
    )
    .unwrap();
    let context = toolkit_core::CallContext::new();
    // A host's call: the answer alone, and the source is not asked to keep what it was made of.
    let answer = toolkit.call_with("image", json!({}), &context).await;
    assert_eq!(answer, Ok(json!([{"type": "text", "text": "an image"}])));
    assert_eq!(source.kept.load(Ordering::SeqCst), 0);
    // A server's call: the answer with the result as written.
    let outcome = toolkit.call_outcome("image", json!({}), &context).await;
    assert_eq!(outcome.answer, answer);
    assert_eq!(
        outcome.written.unwrap()["content"][0]["type"],
        json!("image")
    );
    assert_eq!(source.kept.load(Ordering::SeqCst), 1);
    // A call that does not run (an input the tool does not take) has nothing written.
    let refused = toolkit.call_outcome("image", json!(3), &context).await;
    assert!(refused.answer.is_err());
    assert_eq!(refused.written, None);
}
