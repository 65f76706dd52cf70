//! `toolkit-gen report --graphql SCHEMA` and `call --graphql SCHEMA --endpoint URL`: a GraphQL
//! schema (SDL or introspection JSON) read into tools by `toolkit-graphql`, one per root field
//! (or, with `--operations FILE`, one per named operation of the files), sent by the runtime's
//! HTTP source with their `selection`s checked against the schema first.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_graphql::{
    GraphqlSchema, OperationDocument, ReadOptions, ReadTools, SelectionCheck,
    read_operation_documents, read_schema_tools,
};
use toolkit_runtime::http::{HeaderClient, HttpSource, client_builder};
use toolkit_runtime::{ToolSource, Toolkit, ToolkitOptions};

use super::openapi::Format;

/// The exit code of wrong arguments or input.
const USAGE: u8 = 2;

/// The tools of the schema at `schema`: of its root fields, or of the named operations of
/// `operations` when any are given.
///
/// # Errors
///
/// A message for people: a file that cannot be read, a schema that does not validate (each
/// problem at its file, line and column).
pub fn read(schema: &Path, operations: &[PathBuf]) -> Result<(GraphqlSchema, ReadTools), String> {
    let text = std::fs::read_to_string(schema)
        .map_err(|error| format!("cannot read {}: {error}", schema.display()))?;
    let schema = GraphqlSchema::read(&text, &schema.display().to_string())
        .map_err(|error| error.to_string())?;
    let options = ReadOptions::default();
    if operations.is_empty() {
        let read = read_schema_tools(&schema, &options);
        return Ok((schema, read));
    }
    let mut documents = Vec::with_capacity(operations.len());
    for file in operations {
        let text = std::fs::read_to_string(file)
            .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
        documents.push(OperationDocument::new(file.display().to_string(), text));
    }
    let read = read_operation_documents(&schema, &documents, &options);
    Ok((schema, read))
}

/// `report --graphql`: the tools read, the skipped fields or operations and the problems.
pub fn report(
    schema: &Path,
    operations: &[PathBuf],
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let read = match read(schema, operations) {
        Ok((_, read)) => read,
        Err(problem) => {
            let _ = writeln!(err, "toolkit-gen: {problem}");
            return ExitCode::from(USAGE);
        }
    };
    let written = match format {
        Format::Json => writeln!(out, "{}", report_json(&read)),
        Format::Text => report_text(&read, out),
    };
    if written.is_err() {
        return ExitCode::FAILURE;
    }
    if read.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(USAGE)
    }
}

/// The report as one JSON object: `tools` (name, kind, hints), `skipped`, `problems`.
pub fn report_json(read: &ReadTools) -> Value {
    let tools: Vec<Value> = read
        .operations
        .iter()
        .map(|operation| {
            let annotations = &operation.definition.annotations;
            json!({
                "name": operation.name(),
                "operation": operation.request.graphql.as_ref().map(|graphql| &graphql.operation_name),
                "readOnly": annotations.read_only == Some(true),
                "selection": operation.request.graphql.as_ref().is_some_and(|graphql| graphql.selection.is_some()),
            })
        })
        .collect();
    json!({
        "tools": tools,
        "skipped": read.skipped.iter().map(|skipped| json!({
            "location": skipped.location,
            "reason": skipped.reason.to_string(),
        })).collect::<Vec<_>>(),
        "problems": read.problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

fn report_text(read: &ReadTools, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{} tools, {} skipped, {} problems",
        read.operations.len(),
        read.skipped.len(),
        read.problems.len()
    )?;
    for operation in &read.operations {
        let kind = if operation.definition.annotations.read_only == Some(true) {
            "query"
        } else {
            "mutation"
        };
        writeln!(out, "  {} ({kind})", operation.name())?;
    }
    for skipped in &read.skipped {
        writeln!(out, "skipped {}: {}", skipped.location, skipped.reason)?;
    }
    for problem in &read.problems {
        writeln!(out, "problem {problem}")?;
    }
    Ok(())
}

/// The source of a schema's tools: the runtime's HTTP source to `endpoint` (with `headers` on
/// every request), its selections checked against the schema first.
///
/// # Errors
///
/// A message for people when the schema cannot be read or an argument is wrong.
pub fn source(
    schema: &Path,
    operations: &[PathBuf],
    endpoint: &str,
    headers: &[String],
    timeout: Duration,
) -> Result<Arc<dyn ToolSource>, String> {
    let (schema, read) = read(schema, operations)?;
    if let Some(problem) = read.problems.first() {
        return Err(problem.to_string());
    }
    let client = client_builder()
        .build()
        .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
    let headers = super::mcp::headers(headers)?;
    let http = HttpSource::builder("api", endpoint, HeaderClient::new(client, headers))
        .operations(read.operations.clone())
        .timeout(timeout)
        .build()
        .map_err(|error| error.to_string())?;
    Ok(Arc::new(SelectionCheck::new(
        Arc::new(http),
        &schema,
        &read.operations,
    )))
}

/// `call --graphql SCHEMA --endpoint URL NAME INPUT`: runs one tool, writing its result (exit 0)
/// or its failure JSON (exit 1) to `out`.
pub fn call(
    source: Result<Arc<dyn ToolSource>, String>,
    name: &str,
    input: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let prepared = source.and_then(|source| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| format!("cannot start a runtime: {error}"))?;
        let toolkit = runtime.block_on(async {
            let definitions = source
                .discover()
                .await
                .map_err(|error| format!("the tools cannot be listed: {error}"))?;
            Toolkit::from_source(source, definitions, &ToolkitOptions::default())
                .map_err(|error| error.to_string())
        })?;
        Ok((runtime, toolkit))
    });
    let (runtime, toolkit) = match prepared {
        Ok(prepared) => prepared,
        Err(problem) => {
            let _ = writeln!(err, "toolkit-gen: {problem}");
            return ExitCode::from(USAGE);
        }
    };
    let input = match input.map(serde_json::from_str::<Value>) {
        None => json!({}),
        Some(Ok(input)) => input,
        Some(Err(error)) => {
            let failure =
                toolkit_runtime::Failure::invalid_input(format!("The input is not JSON: {error}"));
            let _ = writeln!(out, "{}", failure.to_json());
            return ExitCode::FAILURE;
        }
    };
    let (value, code) = match runtime.block_on(toolkit.call(name, input)) {
        Ok(value) => (value, ExitCode::SUCCESS),
        Err(failure) => (failure.to_json(), ExitCode::FAILURE),
    };
    if writeln!(out, "{value}").is_err() {
        return ExitCode::FAILURE;
    }
    code
}
