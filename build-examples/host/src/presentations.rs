//! The end of the demo: the toolkit of the turn shown to a model as a search and as code, then
//! served as an MCP server on 127.0.0.1 and used by an MCP client, as any agent would use it.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolkit_runtime::mcp::Mcp;
use toolkit_runtime::serve::{McpServer, bind_loopback};
use toolkit_runtime::{
    CallContext, ToolDefinition, ToolSource, Toolkit, code::CodeMode, code::CodeModeOptions,
    code::QuickJs, progress::Progress, search::SearchOptions, search::ToolSearch,
};

type Outcome = Result<(), Box<dyn std::error::Error>>;

/// The toolkit as `tool_search` + `tool_call`, then as `execute`, each called as a model would.
pub async fn search_and_code(out: &mut dyn Write, toolkit: &Toolkit) -> Outcome {
    writeln!(
        out,
        "\n== 6. The same toolkit as a search: the model is shown two tools, not {}",
        toolkit.len()
    )?;
    let search = ToolSearch::toolkit(toolkit, &SearchOptions::default());
    let query = json!({ "query": "list the pets", "limit": 2 });
    writeln!(out, "   model  -> tool_search {query}")?;
    let found = search.call("tool_search", query).await?;
    writeln!(out, "   model  <- {}", names_found(&found))?;
    let call = json!({ "name": "petstore__listPets", "input": { "limit": 1 } });
    writeln!(out, "   model  -> tool_call {call}")?;
    writeln!(
        out,
        "   model  <- {}",
        answer(search.call("tool_call", call).await)
    )?;

    writeln!(
        out,
        "\n== 7. As code: one `execute` runs JavaScript that calls the allowed tools"
    )?;
    let code_mode = CodeMode::toolkit(
        toolkit,
        Arc::new(QuickJs::default()),
        &CodeModeOptions::default(),
    );
    let shown: Vec<&str> = code_mode.tools().map(|tool| tool.name()).collect();
    writeln!(
        out,
        "   shown: {shown:?} (the tools that need approval stay outside code)"
    )?;
    let code = "const pets = await tools.petstore__listPets({});\n\
                const notes = await tools.notes__search_notes({ word: 'fish' });\n\
                console.log(`${pets.length} pets`);\n\
                return { pets: pets.map(p => p.name), notes };";
    writeln!(out, "   model  -> execute")?;
    for line in code.lines() {
        writeln!(out, "             {line}")?;
    }
    // The host is told of each tool the code calls while the run goes on (a UI would show it).
    let told: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&told);
    let context = CallContext::new().progress(move |progress| {
        let line = match progress {
            Progress::CallStarted { tool, called } => format!("{tool} calls {called}"),
            Progress::CallEnded {
                called, failure, ..
            } => match failure {
                None => format!("{called} answered"),
                Some(code) => format!("{called} failed ({code})"),
            },
            other => format!("{other:?}"),
        };
        if let Ok(mut told) = sink.lock() {
            told.push(line);
        }
    });
    let run = code_mode
        .call_with("execute", json!({ "code": code }), &context)
        .await;
    for line in told.lock().map(|told| told.clone()).unwrap_or_default() {
        writeln!(out, "   host   <- progress: {line}")?;
    }
    writeln!(out, "   model  <- {}", answer(run))?;
    Ok(())
}

/// The toolkit served over Streamable HTTP on 127.0.0.1, listed and called by an MCP client.
pub async fn serve(out: &mut dyn Write, toolkit: Toolkit) -> Outcome {
    writeln!(
        out,
        "\n== 8. Served as an MCP server, used by an MCP client (any agent could be that client)"
    )?;
    let listener = bind_loopback(0).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let server = McpServer::new(toolkit).name("toolkit-host");
    let serving = tokio::spawn(server.serve_http(listener));
    writeln!(out, "   serving {url}")?;

    let client = Mcp::http("served", url.parse()?, reqwest::Client::new());
    let listed = client.discover().await?;
    writeln!(
        out,
        "   tools/list: {} tools; what a client reads of each:",
        listed.len()
    )?;
    for definition in &listed {
        writeln!(out, "     {:<24} {}", definition.name(), hints(definition))?;
    }
    let input = json!({ "word": "tank" });
    writeln!(out, "   client -> tools/call notes__search_notes {input}")?;
    let called = client
        .call(
            "notes__search_notes",
            input.as_object().cloned().unwrap_or_default(),
            &toolkit_runtime::CallContext::new(),
        )
        .await;
    match called {
        Ok(answer) => writeln!(out, "   client <- {answer}")?,
        Err(failure) => writeln!(out, "   client <- failure: {failure}")?,
    }
    let input = json!({ "petId": 3 });
    writeln!(out, "   client -> tools/call petstore__showPetById {input}")?;
    match client
        .call(
            "petstore__showPetById",
            input.as_object().cloned().unwrap_or_default(),
            &toolkit_runtime::CallContext::new(),
        )
        .await
    {
        Ok(answer) => writeln!(out, "   client <- {answer}")?,
        Err(failure) => {
            let text = failure
                .reason
                .description()
                .replace('\n', "\n             ");
            writeln!(out, "   client <- isError: {text}")?;
        }
    }
    serving.abort();
    Ok(())
}

/// The hints a served tool carries: a tool that needs approval is served as destructive, so a
/// client's own approval flow asks its person.
fn hints(definition: &ToolDefinition) -> &'static str {
    let hints = definition.annotations.hints();
    match (hints.read_only, hints.destructive) {
        (true, _) => "read-only (allowed)",
        (false, true) => "destructive (approve: the client asks its person)",
        (false, false) => "writes (allowed)",
    }
}

fn names_found(found: &Value) -> String {
    let names: Vec<&str> = found
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .collect();
    format!("found {names:?}")
}

fn answer(result: Result<Value, toolkit_runtime::Failure>) -> String {
    match result {
        Ok(value) => value.to_string(),
        Err(failure) => format!("failure {}", failure.to_json()),
    }
}
