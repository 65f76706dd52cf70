//! The main job on embedded defaults: assemble a toolkit under a policy from hand-written tools,
//! and drive it with a scripted model turn, printing what the model is shown and what each call
//! returns.
//!
//! Run it with `cargo run -p toolkit-runtime --example demo`. Nothing to configure, no network.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolkit_runtime::{
    Assembly, CallContext, Decision, FnSource, FnTool, Member, Reason, ToolDefinition,
    approval::ApprovalRequest, approval::Verdict, definition::Annotations, model,
};

/// Lists the notes, optionally only those that mention a word.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListNotes {
    /// Only notes that mention this word.
    word: Option<String>,
}

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

/// Converts an amount between two currencies at a fixed rate.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Convert {
    /// The amount to convert.
    amount: f64,
    /// The currency to convert from.
    from: Currency,
    /// The currency to convert to.
    to: Currency,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
enum Currency {
    #[serde(rename = "EUR")]
    Eur,
    #[serde(rename = "USD")]
    Usd,
}

fn notes_source() -> Result<FnSource, Box<dyn std::error::Error>> {
    let notes = Arc::new(Mutex::new(BTreeMap::from([(
        "groceries".to_owned(),
        "milk, bread, coffee".to_owned(),
    )])));
    let (list, add, delete) = (Arc::clone(&notes), Arc::clone(&notes), notes);
    let source = FnSource::builder("notes")
        .tool(
            FnTool::new("list_notes", move |input: ListNotes| {
                let notes = Arc::clone(&list);
                async move {
                    let notes = notes.lock().map_err(|_| Reason::unknown("poisoned"))?;
                    let found: BTreeMap<_, _> = notes
                        .iter()
                        .filter(|(title, body)| {
                            input
                                .word
                                .as_ref()
                                .is_none_or(|w| title.contains(w) || body.contains(w))
                        })
                        .collect();
                    Ok(json!(found))
                }
            })
            .description("Lists the notes, optionally only those that mention a word.")
            .read_only(),
        )
        .tool(
            FnTool::new("add_note", move |input: AddNote| {
                let notes = Arc::clone(&add);
                async move {
                    let mut notes = notes.lock().map_err(|_| Reason::unknown("poisoned"))?;
                    if notes.contains_key(&input.title) {
                        return Err(Reason::call_failed(format!(
                            "A note is already titled {:?}; choose another title.",
                            input.title
                        )));
                    }
                    notes.insert(input.title.clone(), input.body);
                    Ok(json!({ "added": input.title }))
                }
            })
            .description("Adds a note.")
            .annotations(Annotations {
                read_only: Some(false),
                destructive: Some(false),
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

fn money_source() -> Result<FnSource, Box<dyn std::error::Error>> {
    let source = FnSource::builder("money")
        .tool(
            FnTool::new("convert", |input: Convert| async move {
                let rate = match (input.from, input.to) {
                    (Currency::Eur, Currency::Usd) => 1.08,
                    (Currency::Usd, Currency::Eur) => 1.0 / 1.08,
                    _ => 1.0,
                };
                Ok(json!({ "amount": (input.amount * rate * 100.0).round() / 100.0 }))
            })
            .description("Converts an amount between two currencies at a fixed rate.")
            .read_only(),
        )
        .build()?;
    Ok(source)
}

/// The host's policy: reading is allowed, writing needs a person's approval, destroying is
/// blocked. Hints are a source's claims; a real host decides from what it stored per tool.
fn policy(_source: &str, definition: &ToolDefinition) -> Decision {
    let hints = definition.annotations.hints();
    if hints.read_only {
        Decision::Allow
    } else if hints.destructive {
        Decision::Block
    } else {
        Decision::Approve
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let notes = notes_source()?;
    let money = money_source()?;
    // A host keeps these in its catalog; here they come straight from the sources.
    let (notes_catalog, money_catalog) = (notes.definitions(), money.definitions());
    let members = [
        Member::new(Arc::new(notes), notes_catalog),
        Member::new(Arc::new(money), money_catalog),
    ];
    let toolkit = Assembly::new().toolkit(&members, policy)?;

    println!("== What the model is shown (OpenAI-style `tools`, strict mode off)");
    println!(
        "{}",
        serde_json::to_string_pretty(&model::openai_tools(&toolkit))?
    );

    // The model's turn, scripted: what it calls, in order, with its arguments as JSON text.
    let turn = [
        ("notes__list_notes", r#"{"word": "milk"}"#),
        (
            "notes__add_note",
            r#"{"title": "call", "body": "ring the plumber", "urgent": true}"#,
        ),
        (
            "notes__add_note",
            r#"{"title": "call", "body": "ring the plumber"}"#,
        ),
        (
            "notes__add_note",
            r#"{"title": "groceries", "body": "eggs"}"#,
        ),
        ("notes__delete_note", r#"{"title": "groceries"}"#),
        (
            "money__convert",
            r#"{"amount": 12.5, "from": "EUR", "to": "USD"}"#,
        ),
        (
            "money__convert",
            r#"{"amount": "twelve", "from": "EUR", "to": "GBP"}"#,
        ),
        ("notes__list_notes", "{}"),
    ];
    // The host's side of the conversation: who is asked before a call that needs approval. The
    // person of this demo approves every call they are asked about (a chat host would show the
    // call and wait for a click; `Verdict::decline(reason)` tells the model why not).
    let conversation = CallContext::new().approver(|request: ApprovalRequest| async move {
        println!(
            "   (a person is asked to approve {} with {}: yes)",
            request.tool_name(),
            serde_json::Value::Object(request.input().clone())
        );
        Verdict::Approve
    });
    for (number, (name, arguments)) in turn.into_iter().enumerate() {
        println!("\n== The model calls {name} {arguments}");
        let call = conversation.clone().call_id(format!("call_{number}"));
        let answer = toolkit.answer(name, arguments, &call).await;
        let label = if answer.is_error { "failure" } else { "result" };
        println!("-> {label}: {}", answer.content);
    }
    Ok(())
}
