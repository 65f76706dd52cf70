//! Asking a person, asynchronously: approve, decline with a reason, approve an edited input; a
//! host that remembers "always allow"; a search's `tool_call` asked about the tool it reaches.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_runtime::{
    CallContext, Toolkit, ToolkitOptions, approval::APPROVAL_DECLINED, approval::ApprovalRequest,
    approval::MAX_REASON_LENGTH, approval::Verdict, search::SearchOptions, search::ToolSearch,
};

use crate::support::{Scripted, definition, object};

/// `echo` (needs approval; takes `{ text: string }`, closed) and `free` (needs none).
fn toolkit(source: &Arc<Scripted>) -> Toolkit {
    let schema = json!({
        "type": "object",
        "properties": { "text": { "type": "string" } },
        "required": ["text"],
        "additionalProperties": false
    });
    Toolkit::from_source(
        Arc::clone(source) as _,
        vec![
            definition("echo", schema),
            definition("nothing", json!({ "type": "object" })),
        ],
        &ToolkitOptions::default().needs_approval(|d| d.name() == "echo"),
    )
    .unwrap()
}

/// A context whose approver counts its questions and answers `verdict` after a wait (as a person
/// does).
fn answering(verdict: Verdict) -> (CallContext, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    let context = CallContext::new().approver(move |_: ApprovalRequest| {
        count.fetch_add(1, Ordering::SeqCst);
        let verdict = verdict.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            verdict
        }
    });
    (context, asked)
}

#[tokio::test]
async fn an_approved_call_runs_once_the_person_answers() {
    let source = Scripted::new("s");
    let (context, asked) = answering(Verdict::Approve);
    let answer = toolkit(&source)
        .call_with("echo", json!({ "text": "hi" }), &context)
        .await;
    assert_eq!(answer, Ok(json!({ "text": "hi" })));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(source.calls(), 1);
}

#[tokio::test]
async fn a_declined_call_runs_nothing_and_the_model_reads_the_reason() {
    let source = Scripted::new("s");
    let (context, _) = answering(Verdict::decline("  Not on a Sunday.  "));
    let failure = toolkit(&source)
        .call_with("echo", json!({ "text": "hi" }), &context)
        .await
        .unwrap_err();
    assert_eq!(failure.code, APPROVAL_DECLINED);
    assert_eq!(
        failure.message,
        "A person declined this call: Not on a Sunday."
    );
    assert!(!failure.retryable);
    assert_eq!(source.calls(), 0);

    // No reason, an empty one, and one too long to pass on whole.
    for (reason, expected) in [
        (None, "Do not try it again unchanged.".to_owned()),
        (
            Some("   ".to_owned()),
            "Do not try it again unchanged.".to_owned(),
        ),
        (Some("x".repeat(MAX_REASON_LENGTH * 2)), "…".to_owned()),
    ] {
        let (context, _) = answering(Verdict::Decline { reason });
        let failure = toolkit(&source)
            .call_with("echo", json!({ "text": "hi" }), &context)
            .await
            .unwrap_err();
        assert!(failure.message.ends_with(&expected), "{}", failure.message);
        assert!(failure.message.chars().count() < MAX_REASON_LENGTH + 50);
    }
    assert_eq!(source.calls(), 0);
}

#[tokio::test]
async fn an_edited_input_is_checked_again_and_then_runs() {
    let source = Scripted::new("s");
    let (context, _) = answering(Verdict::Edit(object(json!({ "text": "corrected" }))));
    let answer = toolkit(&source)
        .call_with("echo", json!({ "text": "wrong" }), &context)
        .await;
    assert_eq!(answer, Ok(json!({ "text": "corrected" })));
    assert_eq!(
        source.seen.lock().unwrap()[0].1,
        object(json!({ "text": "corrected" }))
    );

    // An edit the tool does not take: nothing runs, the model reads why.
    let (context, _) = answering(Verdict::Edit(object(json!({ "txt": 1 }))));
    let failure = toolkit(&source)
        .call_with("echo", json!({ "text": "wrong" }), &context)
        .await
        .unwrap_err();
    assert_eq!(failure.code, "InvalidInputError");
    assert!(
        failure.message.starts_with("A person changed the input"),
        "{}",
        failure.message
    );
    assert!(
        failure
            .message
            .contains("Accepted params at the root: text."),
        "{}",
        failure.message
    );
    assert_eq!(source.calls(), 1);
}

#[tokio::test]
async fn no_one_is_asked_about_an_input_that_could_not_run() {
    let source = Scripted::new("s");
    let (context, asked) = answering(Verdict::Approve);
    let failure = toolkit(&source)
        .call_with("echo", json!({ "txt": "hi" }), &context)
        .await
        .unwrap_err();
    assert_eq!(failure.code, "InvalidInputError");
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    // A tool that needs none is not asked about either.
    let answer = toolkit(&source)
        .call_with("nothing", json!({}), &context)
        .await;
    assert_eq!(answer, Ok(Value::Null));
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn with_no_approver_a_call_that_needs_approval_does_not_run() {
    let source = Scripted::new("s");
    let failure = toolkit(&source)
        .call_with("echo", json!({ "text": "hi" }), &CallContext::new())
        .await
        .unwrap_err();
    assert_eq!(failure.code, APPROVAL_DECLINED);
    assert!(failure.message.contains("no one can be asked"));
    assert_eq!(source.calls(), 0);
    // The host's own call asks no one: it has decided.
    assert!(
        toolkit(&source)
            .call("echo", json!({ "text": "hi" }))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_panicking_approver_declines() {
    let source = Scripted::new("s");
    #[allow(clippy::unreachable)]
    let context = CallContext::new().approver(|request: ApprovalRequest| async move {
        if request.tool_name() == "echo" {
            panic!("the approval window crashed");
        }
        Verdict::Approve
    });
    let failure = toolkit(&source)
        .call_with("echo", json!({ "text": "hi" }), &context)
        .await
        .unwrap_err();
    assert_eq!(failure.code, APPROVAL_DECLINED);
    assert_eq!(source.calls(), 0);
}

#[tokio::test]
async fn a_host_remembers_always_allow_without_the_library_keeping_anything() {
    let source = Scripted::new("s");
    let toolkit = toolkit(&source);
    // The host's memory for this conversation; its person says "always allow" the first time.
    let always: Arc<Mutex<HashSet<String>>> = Arc::default();
    let asked = Arc::new(AtomicUsize::new(0));
    let (memory, count) = (Arc::clone(&always), Arc::clone(&asked));
    let conversation = CallContext::new().approver(move |request: ApprovalRequest| {
        let (memory, count) = (Arc::clone(&memory), Arc::clone(&count));
        async move {
            let mut memory = memory.lock().unwrap();
            if !memory.contains(request.tool_name()) {
                count.fetch_add(1, Ordering::SeqCst);
                memory.insert(request.tool_name().to_owned());
            }
            Verdict::Approve
        }
    });
    for (id, text) in [("call_1", "a"), ("call_2", "b"), ("call_3", "c")] {
        let call = conversation.clone().call_id(id);
        let answer = toolkit
            .answer("echo", &json!({ "text": text }).to_string(), &call)
            .await;
        assert!(!answer.is_error, "{}", answer.content);
    }
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(source.calls(), 3);
    // Another conversation (another context) starts with nothing remembered: the library kept
    // nothing.
    let (fresh, fresh_asked) = answering(Verdict::Approve);
    let _ = toolkit
        .call_with("echo", json!({ "text": "d" }), &fresh)
        .await;
    assert_eq!(fresh_asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_request_carries_the_tool_its_origin_and_the_call_id() {
    let source = Scripted::new("s");
    type Seen = (String, Option<(String, String)>, Value, Option<String>);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let record = Arc::clone(&seen);
    let context = CallContext::new()
        .approver(move |request: ApprovalRequest| {
            record.lock().unwrap().push((
                request.tool_name().to_owned(),
                request.origin().map(|(s, t)| (s.to_owned(), t.to_owned())),
                Value::Object(request.input().clone()),
                request.call_id().map(str::to_owned),
            ));
            async { Verdict::Approve }
        })
        .call_id("toolu_01");
    let _ = toolkit(&source)
        .call_with("echo", json!({ "text": "hi" }), &context)
        .await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [(
            "echo".to_owned(),
            Some(("s".to_owned(), "echo".to_owned())),
            json!({ "text": "hi" }),
            Some("toolu_01".to_owned())
        )]
    );
}

#[tokio::test]
async fn a_search_asks_about_the_tool_it_reaches_with_that_tool_s_input() {
    let source = Scripted::new("s");
    let search = ToolSearch::toolkit(&toolkit(&source), &SearchOptions::default());
    let names: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let record = Arc::clone(&names);
    let context = CallContext::new().approver(move |request: ApprovalRequest| {
        record.lock().unwrap().push((
            request.tool_name().to_owned(),
            Value::Object(request.input().clone()),
        ));
        async { Verdict::Edit(object(json!({ "text": "edited" }))) }
    });
    let answer = search
        .call_with(
            "tool_call",
            json!({ "name": "echo", "input": { "text": "hi" } }),
            &context,
        )
        .await;
    assert_eq!(answer, Ok(json!({ "text": "edited" })));
    assert_eq!(
        names.lock().unwrap().clone(),
        [("echo".to_owned(), json!({ "text": "hi" }))]
    );
    // A tool that needs none through tool_call: no one asked.
    let answer = search
        .call_with(
            "tool_call",
            json!({ "name": "nothing", "input": {} }),
            &context,
        )
        .await;
    assert_eq!(answer, Ok(Value::Null));
    assert_eq!(names.lock().unwrap().len(), 1);
    // The inner input is checked before anyone is asked.
    let failure = search
        .call_with(
            "tool_call",
            json!({ "name": "echo", "input": { "txt": 1 } }),
            &context,
        )
        .await
        .unwrap_err();
    assert_eq!(failure.code, "InvalidInputError");
    assert_eq!(names.lock().unwrap().len(), 1);
}
