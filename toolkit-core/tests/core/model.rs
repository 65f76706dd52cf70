//! A toolkit as model APIs take it, and a model's calls fed back.

use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::{
    CallContext, Toolkit, ToolkitOptions, approval::ApprovalRequest, approval::Verdict, model,
};

use crate::support::{Scripted, definition};

/// A host whose person approves every call.
fn approving() -> CallContext {
    CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve })
}

fn toolkit() -> Toolkit {
    let schema = json!({
        "type": "object",
        "properties": { "text": { "type": "string" } },
        "required": ["text"]
    });
    let definitions = vec![
        definition("echo", schema.clone()).with_description("Says it back."),
        definition("fail", schema),
    ];
    Toolkit::from_source(
        Scripted::new("s") as _,
        definitions,
        &ToolkitOptions::default().needs_approval(|d| d.name() == "fail"),
    )
    .unwrap()
}

#[test]
fn openai_tools_are_functions_with_strict_mode_off() {
    let tools = model::openai_tools(&toolkit());
    assert_eq!(
        tools[0],
        json!({
            "type": "function",
            "function": {
                "name": "echo",
                "description": "Says it back.",
                "parameters": {
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"]
                },
                "strict": false
            }
        })
    );
}

#[test]
fn anthropic_tools_carry_the_input_schema() {
    let tools = model::anthropic_tools(&toolkit());
    assert_eq!(tools[1]["name"], "fail");
    assert_eq!(tools[1]["description"], "");
    assert_eq!(tools[1]["input_schema"]["required"], json!(["text"]));
}

#[tokio::test]
async fn a_call_is_answered_with_json_text() {
    let answer = toolkit()
        .answer("echo", r#"{"text":"hi"}"#, &approving())
        .await;
    assert!(!answer.is_error);
    assert_eq!(
        serde_json::from_str::<Value>(&answer.content).unwrap(),
        json!({ "text": "hi" })
    );
}

#[tokio::test]
async fn arguments_that_are_not_json_are_a_failure_the_model_reads() {
    for arguments in [
        "{",
        "[1",
        "nul",
        &format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
    ] {
        let answer = toolkit().answer("echo", arguments, &approving()).await;
        assert!(answer.is_error);
        let failure: Value = serde_json::from_str(&answer.content).unwrap();
        assert_eq!(failure["code"], "InvalidInputError");
        assert!(
            failure["message"]
                .as_str()
                .unwrap()
                .starts_with("The arguments are not JSON")
        );
    }
}

#[tokio::test]
async fn empty_arguments_are_an_empty_object() {
    let answer = toolkit().answer("echo", "", &approving()).await;
    assert!(answer.is_error);
    assert!(
        answer
            .content
            .contains("missing required property \\\"text\\\""),
        "{}",
        answer.content
    );
}

#[tokio::test]
async fn a_declined_approval_runs_nothing() {
    let source = Scripted::new("s");
    let toolkit = Toolkit::from_source(
        Arc::clone(&source) as _,
        vec![definition("echo", json!({ "type": "object" }))],
        &ToolkitOptions::default().needs_approval(|_| true),
    )
    .unwrap();
    let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = Arc::clone(&asked);
    let declining = CallContext::new().approver(move |request: ApprovalRequest| {
        seen.store(
            request.tool_name() == "echo",
            std::sync::atomic::Ordering::SeqCst,
        );
        async { Verdict::Decline { reason: None } }
    });
    let answer = toolkit.answer("echo", "{}", &declining).await;
    assert!(asked.load(std::sync::atomic::Ordering::SeqCst));
    assert!(answer.is_error && answer.content.contains("ApprovalDeclined"));
    assert_eq!(source.calls(), 0);
    let approved = toolkit.answer("echo", "{}", &approving()).await;
    assert!(!approved.is_error);
}
