//! A host program: the typed sources `typed-tools` generated at build time (the Petstore API and
//! the `tasks` MCP server) and a source discovered at run time (the `notes` MCP server), in one
//! toolkit under a policy, then a scripted model turn through it; the same toolkit shown as a
//! search and as code mode, and served as an MCP server that an MCP client lists and calls.
//!
//! Everything runs in this process on 127.0.0.1: no outside service, no configuration.
//! `cargo run -p toolkit-host`.

mod mcp_servers;
mod petstore;
mod presentations;

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolkit_runtime::mcp::Mcp;
use toolkit_runtime::naming::{DEFAULT_MAX_NAME_LENGTH, tool_name};
use toolkit_runtime::{
    Assembly, CallContext, Decision, Member, ToolDefinition, ToolSource, approval::ApprovalRequest,
    approval::Verdict,
};
use typed_tools::petstore::{ListPetsInput, Petstore, ShowPetByIdInput};
use typed_tools::tasks::{AddTaskInput, ListTasksInput, ListTasksInputStatus, Tasks};

#[tokio::main]
async fn main() -> ExitCode {
    match run(&mut std::io::stdout()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolkit-host: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The policy: what only reads is allowed, what its source marks destructive is never shown,
/// anything else needs a person's approval.
fn policy(_source: &str, definition: &ToolDefinition) -> Decision {
    if definition.annotations.destructive == Some(true) {
        Decision::Block
    } else if definition.annotations.hints().read_only {
        Decision::Allow
    } else {
        Decision::Approve
    }
}

/// What the scripted person answers when asked to approve a call.
fn person_approves(tool: &str) -> bool {
    !tool.starts_with("petstore__")
}

/// Runs the demo, writing what happens to `out`.
async fn run(out: &mut dyn Write) -> Result<(), Box<dyn std::error::Error>> {
    writeln!(out, "== The systems, served in this process")?;
    let petstore_url = petstore::serve().await?;
    let (tasks_url, notes_url) = mcp_servers::serve().await?;
    writeln!(out, "   Petstore (HTTP API)     {petstore_url}")?;
    writeln!(out, "   tasks    (MCP server)   {tasks_url}")?;
    writeln!(out, "   notes    (MCP server)   {notes_url}")?;

    // The host builds the clients; credentials would go in their default headers.
    let http = toolkit_runtime::http::client_builder().build()?;
    let mcp = reqwest::Client::new();

    writeln!(
        out,
        "\n== 1. Typed calls on the sources generated at build time"
    )?;
    let petstore = Petstore::new(&petstore_url, http)?;
    let tasks = Tasks::http(tasks_url, mcp.clone())?;
    // Typed answers (`Vec<Pet>`, `Pet`), written back as the JSON they came as.
    let pets = petstore.list_pets(ListPetsInput { limit: Some(2) }).await?;
    let pets = toolkit_runtime::codegen::serde_json::to_string(&pets)?;
    writeln!(
        out,
        "   petstore.list_pets(ListPetsInput {{ limit: Some(2) }})\n     -> {pets}"
    )?;
    let pet = petstore
        .show_pet_by_id(ShowPetByIdInput {
            pet_id: "3".to_owned(),
        })
        .await?;
    let pet = toolkit_runtime::codegen::serde_json::to_string(&pet)?;
    writeln!(
        out,
        "   petstore.show_pet_by_id(ShowPetByIdInput {{ pet_id: \"3\" }})\n     -> {pet}"
    )?;
    let added = tasks
        .add_task(AddTaskInput {
            title: "Buy a filter for the fish tank".to_owned(),
            due: toolkit_runtime::codegen::Nullable::Absent,
            tags: Some(vec!["home".to_owned()]),
        })
        .await?;
    writeln!(
        out,
        "   tasks.add_task(AddTaskInput {{ title: \"Buy a filter…\", .. }})\n     -> {added}"
    )?;
    let open = tasks
        .list_tasks(ListTasksInput {
            status: Some(ListTasksInputStatus::Open),
            limit: None,
        })
        .await?;
    writeln!(
        out,
        "   tasks.list_tasks(ListTasksInput {{ status: Some(Open), .. }})\n     -> {open}"
    )?;

    writeln!(
        out,
        "\n== 2. The tasks snapshot against the live server (Tasks::verify)"
    )?;
    let drift = tasks.verify().await?;
    for line in drift.to_string().lines() {
        writeln!(out, "   {line}")?;
    }
    writeln!(
        out,
        "   The added tools join the member of the generated source: it calls any tool the server has."
    )?;

    writeln!(
        out,
        "\n== 3. A source discovered at run time (nobody generated code for it)"
    )?;
    let notes = Mcp::http("notes", notes_url, mcp);
    let notes_tools = notes.discover().await?;
    let names: Vec<&str> = notes_tools.iter().map(ToolDefinition::name).collect();
    writeln!(out, "   notes lists {names:?}")?;

    writeln!(
        out,
        "\n== 4. One toolkit, under a policy (read-only: allow; marked destructive: block; else: approve)"
    )?;
    let petstore_tools = petstore.definitions();
    let mut task_tools = tasks.definitions().to_vec();
    task_tools.extend(drift.added.iter().cloned());
    let members = [
        Member::new(Arc::new(petstore), petstore_tools),
        Member::new(Arc::new(tasks), task_tools),
        Member::new(Arc::new(notes), notes_tools),
    ];
    for member in &members {
        for definition in &member.definitions {
            let source = member.source.name();
            let decision = format!("{:?}", policy(source, definition)).to_lowercase();
            writeln!(
                out,
                "   {decision:<8} {}",
                tool_name(source, definition.name(), DEFAULT_MAX_NAME_LENGTH)
            )?;
        }
    }
    let toolkit = Assembly::new().toolkit(&members, policy)?;
    writeln!(out, "   The model is shown {} tools.", toolkit.len())?;

    writeln!(out, "\n== 5. A scripted model turn through the toolkit")?;
    let turn: [(&str, Value); 7] = [
        ("petstore__showPetById", json!({ "petId": "1" })),
        ("petstore__showPetById", json!({ "id": 1 })),
        ("notes__search_notes", json!({ "word": "fish" })),
        (
            "tasks__add_task",
            json!({ "title": "Vet visit", "due": "2026-12-01" }),
        ),
        ("tasks__complete_task", json!({ "id": 2 })),
        (
            "petstore__createPets",
            json!({ "body": { "id": 4, "name": "Kit" } }),
        ),
        ("notes__wipe_notes", json!({})),
    ];
    // The person is asked asynchronously, as a chat host would ask and wait; the decline's reason
    // is what the model reads.
    let asked: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let log = Arc::clone(&asked);
    let conversation = CallContext::new().approver(move |request: ApprovalRequest| {
        let approved = person_approves(request.tool_name());
        if let Ok(mut log) = log.lock() {
            log.push(if approved { "approves" } else { "declines" });
        }
        async move {
            if approved {
                Verdict::Approve
            } else {
                Verdict::decline("Pets are added at the front desk, not by the assistant.")
            }
        }
    });
    for (name, input) in turn {
        writeln!(out, "   model  -> {name} {input}")?;
        let outcome = toolkit.call_with(name, input, &conversation).await;
        for answer in asked
            .lock()
            .map(|mut log| std::mem::take(&mut *log))
            .unwrap_or_default()
        {
            writeln!(out, "   person -> {answer}")?;
        }
        match outcome {
            Ok(answer) => writeln!(out, "   model  <- {answer}")?,
            Err(failure) => writeln!(out, "   model  <- failure {}", failure.to_json())?,
        }
    }

    presentations::search_and_code(out, &toolkit).await?;
    presentations::serve(out, toolkit).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The whole demo runs, and says what a reader of the README is told it says.
    #[tokio::test]
    async fn the_demo_turn_runs() {
        let mut out = Vec::new();
        let ran = super::run(&mut out).await;
        let out = String::from_utf8_lossy(&out);
        assert!(ran.is_ok(), "{ran:?}\n{out}");
        for line in [
            "-> [{\"id\":1,\"name\":\"Rex\",\"tag\":\"dog\"},{\"id\":2,\"name\":\"Tom\",\"tag\":\"cat\"}]",
            "   + complete_task",
            "   approve  tasks__complete_task",
            "   block    notes__wipe_notes",
            "The model is shown 7 tools.",
            "Accepted params at the root: petId.",
            "\"status\":\"done\"",
            "   person -> declines",
            "A person declined this call: Pets are added at the front desk",
            "   host   <- progress: execute calls petstore__listPets",
            "   host   <- progress: notes__search_notes answered",
            "There is no tool named \\\"notes__wipe_notes\\\".",
            "found [\"petstore__listPets\", \"tasks__list_tasks\"]",
            "\"logs\":[\"3 pets\"]",
            "tools/list: 7 tools",
            "tasks__complete_task     destructive (approve: the client asks its person)",
            "client <- {\"notes\":[\"The fish tank needs a new filter.\"]}",
            "expected string, got an integer at /petId",
        ] {
            assert!(out.contains(line), "no {line:?} in\n{out}");
        }
    }
}
