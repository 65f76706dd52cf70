//! The toolkit as rig tools: the example runs, and a rig agent's calls behave (input checked,
//! approval asked, failures read) exactly as the OpenAI-style adapter's.

use std::sync::{Arc, Mutex};

use rig_agent::AgentBuilder;
use rig_core::message::{Message, ToolResultContent, UserContent};
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use serde_json::{Value, json};
use toolkit_runtime::{
    CallContext, Toolkit, ToolkitOptions, approval::ApprovalRequest, approval::Verdict,
    search::SearchOptions, search::ToolSearch,
};

use crate::support::{Scripted, definition, object};

#[allow(dead_code, clippy::unwrap_used)]
#[path = "../../../toolkit-runtime/examples/rig_agent.rs"]
mod example;

#[tokio::test]
async fn the_rig_example_runs() {
    let mut out = Vec::new();
    let ran = example::run(&mut out).await;
    let out = String::from_utf8_lossy(&out);
    assert!(ran.is_ok(), "{ran:?}\n{out}");
    for line in [
        "== The agent is given 3 tools",
        "person <- may notes__add_note run with {\"title\":\"plumber\",\"body\":\"ring him\"}?",
        "person <- may notes__delete_note run with {\"title\":\"groceries\"}?",
        "notes__list_notes result: {\"groceries\":\"milk, bread, coffee\"}",
        "notes__add_note failure: {\"code\":\"InvalidInputError\"",
        "Accepted params at the root: title, body.",
        "notes__add_note result: {\"added\":\"plumber\",\"body\":\"ring the plumber before Friday\"}",
        "notes__delete_note failure: {\"code\":\"ApprovalDeclined\",\"message\":\"A person declined this call: Keep the groceries list; it is shared.\"",
        "Added a note about the plumber; the groceries list stays.",
        "{\"groceries\":\"milk, bread, coffee\",\"plumber\":\"ring the plumber before Friday\"}",
    ] {
        assert!(out.contains(line), "no {line:?} in\n{out}");
    }
    // The person was asked about the valid calls only.
    assert_eq!(out.matches("person <- ").count(), 2, "{out}");
}

/// `echo` (needs approval), `down` (unavailable, naming an address), `fail`, `nothing`.
fn toolkit(source: &Arc<Scripted>) -> Toolkit {
    let closed = json!({
        "type": "object",
        "properties": { "text": { "type": "string" } },
        "additionalProperties": false
    });
    Toolkit::from_source(
        Arc::clone(source) as _,
        vec![
            definition("echo", closed),
            definition("down", json!({ "type": "object" })),
            definition("fail", json!({ "type": "object" })),
            definition("nothing", json!({ "type": "object" })),
        ],
        &ToolkitOptions::default().needs_approval(|d| d.name() == "echo"),
    )
    .unwrap()
}

/// The person: declines `{text: "no"}` with a reason, edits `{text: "edit"}`, approves the rest.
fn person() -> CallContext {
    CallContext::new().approver(|request: ApprovalRequest| async move {
        match request.input().get("text").and_then(Value::as_str) {
            Some("no") => Verdict::decline("Not that one."),
            Some("edit") => Verdict::Edit(object(json!({ "text": "edited" }))),
            _ => Verdict::Approve,
        }
    })
}

/// What the model read back for each call, in order: (tool, text, is_error).
fn read_back(model: &MockCompletionModel) -> Vec<(String, String, bool)> {
    let requests = model.requests();
    let Some(last) = requests.last() else {
        return Vec::new();
    };
    let mut results = Vec::new();
    for message in &last.chat_history {
        let Message::User { content } = message else {
            continue;
        };
        for item in content {
            if let UserContent::ToolResult(result) = item {
                let text: String = result
                    .content
                    .iter()
                    .filter_map(|content| match content {
                        ToolResultContent::Text(text) => Some(text.text.clone()),
                        _ => None,
                    })
                    .collect();
                results.push((result.name.to_string(), text, result.is_error));
            }
        }
    }
    results
}

#[tokio::test]
async fn approval_and_failures_behave_with_rig_as_with_the_openai_style_adapter() {
    let calls = [
        ("echo", json!({ "text": "hi" })),
        ("echo", json!({ "text": "no" })),
        ("echo", json!({ "text": "edit" })),
        ("echo", json!({ "txt": "hi" })),
        ("down", json!({})),
        ("fail", json!({})),
        ("nothing", json!({})),
    ];
    // The OpenAI-style adapter, on its own source.
    let openai_source = Scripted::new("s");
    let openai = toolkit(&openai_source);
    let mut expected = Vec::new();
    for (name, input) in &calls {
        let answer = openai.answer(name, &input.to_string(), &person()).await;
        expected.push(((*name).to_owned(), answer.content, answer.is_error));
    }

    // A rig agent, whose scripted model makes the same calls, on a source of its own.
    let rig_source = Scripted::new("s");
    let mut turns: Vec<MockTurn> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| MockTurn::tool_call(format!("call_{i}"), *name, input.clone()))
        .collect();
    turns.push(MockTurn::text("done"));
    let model = MockCompletionModel::from_turns(turns);
    let agent = AgentBuilder::new(model.clone())
        .dynamic_tools(toolkit_runtime::rig::tools(
            &toolkit(&rig_source),
            &person(),
        ))
        .build();
    let response = agent.prompt("go").max_turns(calls.len() + 2).await.unwrap();
    assert_eq!(response.output(), "done");

    assert_eq!(read_back(&model), expected);
    // The same calls reached each source: the declined one and the refused input never did.
    assert_eq!(rig_source.calls(), openai_source.calls());
    assert_eq!(rig_source.calls(), 5);
    assert_eq!(
        *rig_source.seen.lock().unwrap(),
        *openai_source.seen.lock().unwrap()
    );
    // And no failure the model read names the source's address.
    for (_, text, _) in read_back(&model) {
        assert!(!text.contains(crate::support::ADDRESS), "{text}");
    }
}

#[tokio::test]
async fn a_search_and_its_approval_reach_rig_unchanged() {
    let source = Scripted::new("s");
    let search = ToolSearch::toolkit(&toolkit(&source), &SearchOptions::default());
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = Arc::clone(&asked);
    let context = CallContext::new().approver(move |request: ApprovalRequest| {
        record.lock().unwrap().push(request.tool_name().to_owned());
        async { Verdict::decline("No.") }
    });
    let tools = toolkit_runtime::rig::tools(&search, &context);
    let names: Vec<String> = tools.iter().map(|tool| tool.name().to_string()).collect();
    assert_eq!(names, ["tool_search", "tool_call"]);
    let refused = tools[1]
        .execute(json!({ "name": "echo", "input": { "text": "hi" } }))
        .await
        .unwrap_err();
    assert_eq!(
        refused.kind(),
        rig_core::tool::ToolErrorKind::PermissionDenied
    );
    assert_eq!(refused.code(), Some("ApprovalDeclined"));
    assert!(
        refused
            .model_output()
            .render()
            .contains("A person declined this call: No.")
    );
    assert_eq!(*asked.lock().unwrap(), ["echo"]);
    assert_eq!(source.calls(), 0);
}
