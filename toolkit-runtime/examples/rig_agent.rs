//! A rig agent over an assembled toolkit: hand-written tools under a policy, given to a rig agent
//! as its tools, with a person asked (asynchronously) before the calls that need approval. The
//! completion model is scripted (rig's own scripted model), so nothing reaches the network: it
//! calls the tools as a model would, and what it reads back is printed.
//!
//! Run it with `cargo run -p toolkit-runtime --features rig --example rig_agent`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use rig_agent::AgentBuilder;
use rig_core::message::{Message, ToolResultContent, UserContent};
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolkit_runtime::{
    Assembly, CallContext, Decision, FnSource, FnTool, Member, Reason, ToolDefinition,
    approval::ApprovalRequest, approval::Verdict, definition::Annotations,
};

/// Lists the notes.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListNotes {}

/// Adds a note.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddNote {
    /// The note's title, unique among notes.
    title: String,
    /// What the note says.
    body: String,
}

/// Deletes a note.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteNote {
    /// The title of the note to delete.
    title: String,
}

type Notes = Arc<Mutex<BTreeMap<String, String>>>;

fn notes_source(notes: &Notes) -> Result<FnSource, Box<dyn std::error::Error>> {
    let (list, add, delete) = (Arc::clone(notes), Arc::clone(notes), Arc::clone(notes));
    let source = FnSource::builder("notes")
        .tool(
            FnTool::new("list_notes", move |_: ListNotes| {
                let notes = Arc::clone(&list);
                async move {
                    let notes = notes.lock().map_err(|_| Reason::unknown("poisoned"))?;
                    Ok(json!(*notes))
                }
            })
            .description("Lists the notes.")
            .read_only(),
        )
        .tool(
            FnTool::new("add_note", move |input: AddNote| {
                let notes = Arc::clone(&add);
                async move {
                    let mut notes = notes.lock().map_err(|_| Reason::unknown("poisoned"))?;
                    notes.insert(input.title.clone(), input.body.clone());
                    Ok(json!({ "added": input.title, "body": input.body }))
                }
            })
            .description("Adds a note.")
            .annotations(Annotations {
                read_only: Some(false),
                ..Annotations::default()
            }),
        )
        .tool(
            FnTool::new("delete_note", move |input: DeleteNote| {
                let notes = Arc::clone(&delete);
                async move {
                    let mut notes = notes.lock().map_err(|_| Reason::unknown("poisoned"))?;
                    Ok(json!({ "deleted": notes.remove(&input.title).is_some() }))
                }
            })
            .description("Deletes a note.")
            .annotations(Annotations {
                destructive: Some(true),
                ..Annotations::default()
            }),
        )
        .build()?;
    Ok(source)
}

/// The host's policy: what only reads runs, anything else needs a person's approval.
fn policy(_source: &str, definition: &ToolDefinition) -> Decision {
    if definition.annotations.hints().read_only {
        Decision::Allow
    } else {
        Decision::Approve
    }
}

/// The scripted model: four tool calls, then its answer.
fn scripted_model() -> MockCompletionModel {
    MockCompletionModel::from_turns([
        MockTurn::tool_call("call_1", "notes__list_notes", json!({})),
        // A property the tool does not take: the model reads what the tool accepts.
        MockTurn::tool_call(
            "call_2",
            "notes__add_note",
            json!({ "title": "plumber", "body": "ring him", "urgent": true }),
        ),
        // The person corrects the body before approving.
        MockTurn::tool_call(
            "call_3",
            "notes__add_note",
            json!({ "title": "plumber", "body": "ring him" }),
        ),
        // The person declines, and says why.
        MockTurn::tool_call(
            "call_4",
            "notes__delete_note",
            json!({ "title": "groceries" }),
        ),
        MockTurn::text("Added a note about the plumber; the groceries list stays."),
    ])
}

/// The person at the host's screen, scripted: asked about each call that needs approval.
async fn person(request: ApprovalRequest) -> Verdict {
    match request.tool_name() {
        "notes__add_note" => {
            let mut edited = request.input().clone();
            edited.insert("body".into(), json!("ring the plumber before Friday"));
            Verdict::Edit(edited)
        }
        _ => Verdict::decline("Keep the groceries list; it is shared."),
    }
}

/// Runs the agent, writing what happens to `out`.
pub async fn run(out: &mut dyn Write) -> Result<(), Box<dyn std::error::Error>> {
    let notes: Notes = Arc::new(Mutex::new(BTreeMap::from([(
        "groceries".to_owned(),
        "milk, bread, coffee".to_owned(),
    )])));
    let source = notes_source(&notes)?;
    let definitions = source.definitions();
    let toolkit = Assembly::new().toolkit(&[Member::new(Arc::new(source), definitions)], policy)?;

    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&asked);
    let context = CallContext::new().approver(move |request: ApprovalRequest| {
        if let Ok(mut log) = log.lock() {
            log.push(format!(
                "person <- may {} run with {}?",
                request.tool_name(),
                serde_json::Value::Object(request.input().clone())
            ));
        }
        person(request)
    });

    let model = scripted_model();
    let agent = AgentBuilder::new(model.clone())
        .preamble("You keep the user's notes.")
        .dynamic_tools(toolkit_runtime::rig::tools(&toolkit, &context))
        .build();
    let answer = agent
        .prompt("Note that I must ring the plumber, and tidy up.")
        .max_turns(6)
        .await?;

    writeln!(out, "== The agent is given {} tools", toolkit.len())?;
    for line in asked.lock().map(|log| log.clone()).unwrap_or_default() {
        writeln!(out, "   {line}")?;
    }
    writeln!(out, "== What the model read back")?;
    let requests = model.requests();
    let last = requests
        .last()
        .map(|request| request.chat_history.as_slice())
        .unwrap_or_default();
    for message in last {
        let Message::User { content } = message else {
            continue;
        };
        for item in content {
            if let UserContent::ToolResult(result) = item {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|content| match content {
                        ToolResultContent::Text(text) => Some(text.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let label = if result.is_error { "failure" } else { "result" };
                writeln!(out, "   {} {label}: {}", result.name, text.join(""))?;
            }
        }
    }
    writeln!(out, "== The agent answers\n   {}", answer.output())?;
    let notes = notes.lock().map(|notes| notes.clone()).unwrap_or_default();
    writeln!(out, "== The notes now\n   {}", json!(notes))?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
#[allow(dead_code)]
async fn main() -> ExitCode {
    match run(&mut std::io::stdout()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rig_agent: {error}");
            ExitCode::FAILURE
        }
    }
}
