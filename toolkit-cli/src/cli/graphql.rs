//! `toolkit-gen report --graphql SCHEMA` and `call --graphql SCHEMA --endpoint URL`: a GraphQL
//! schema (SDL or introspection JSON, or an endpoint's URL whose schema is introspected) read
//! into tools by `toolkit-graphql`, one per root field
//! (or, with `--operations FILE`, one per named operation of the files), sent by the runtime's
//! HTTP source with their `selection`s checked against the schema first.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_graphql::{
    GraphqlSchema, MAX_SCHEMA_LENGTH, OperationDocument, ReadOptions, ReadTools,
    read_operation_documents, read_schema_tools,
};
use toolkit_runtime::graphql::{GraphqlSource, introspect};
use toolkit_runtime::http::{DEFAULT_TIMEOUT, HeaderClient, client_builder};
use toolkit_runtime::{ToolSource, Toolkit, ToolkitOptions};

use super::openapi::Format;

/// The exit code of wrong arguments or input.
const USAGE: u8 = 2;

/// The URL `schema` is, when it is one (`http://` or `https://`): the endpoint whose own schema
/// is introspected.
fn schema_url(schema: &Path) -> Option<&str> {
    schema
        .to_str()
        .filter(|text| text.starts_with("http://") || text.starts_with("https://"))
}

/// The schema at `schema`: a file (SDL or introspection JSON), or the endpoint at that URL
/// introspected with `headers` on the request.
fn schema(schema: &Path, headers: &[String], timeout: Duration) -> Result<GraphqlSchema, String> {
    let Some(url) = schema_url(schema) else {
        let text = std::fs::read_to_string(schema)
            .map_err(|error| format!("cannot read {}: {error}", schema.display()))?;
        return GraphqlSchema::read(&text, &schema.display().to_string())
            .map_err(|error| error.to_string());
    };
    let client = HeaderClient::new(
        client_builder()
            .build()
            .map_err(|error| format!("cannot build an HTTP client: {error}"))?,
        super::mcp::headers(headers)?,
    );
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start a runtime: {error}"))?
        .block_on(introspect(&client, url, MAX_SCHEMA_LENGTH, timeout))
        .map_err(|reason| reason.description().to_owned())
}

/// The operation documents of `files`.
fn documents(files: &[PathBuf]) -> Result<Vec<OperationDocument>, String> {
    files
        .iter()
        .map(|file| {
            std::fs::read_to_string(file)
                .map(|text| OperationDocument::new(file.display().to_string(), text))
                .map_err(|error| format!("cannot read {}: {error}", file.display()))
        })
        .collect()
}

/// The tools of the schema at `schema` (a file, or an endpoint's URL introspected with
/// `headers`): of its root fields, or of the named operations of `operations` when any are
/// given.
///
/// # Errors
///
/// A message for people: a file that cannot be read, an endpoint that cannot be introspected, a
/// schema that does not validate (each problem at its file, line and column).
pub fn read(
    schema: &Path,
    operations: &[PathBuf],
    headers: &[String],
) -> Result<(GraphqlSchema, ReadTools), String> {
    let schema = self::schema(schema, headers, DEFAULT_TIMEOUT)?;
    let options = ReadOptions::default();
    if operations.is_empty() {
        let read = read_schema_tools(&schema, &options);
        return Ok((schema, read));
    }
    let read = read_operation_documents(&schema, &documents(operations)?, &options);
    Ok((schema, read))
}

/// `report --graphql`: the tools read, the skipped fields or operations and the problems.
pub fn report(
    schema: &Path,
    operations: &[PathBuf],
    headers: &[String],
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let read = match read(schema, operations, headers) {
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

/// The source of a schema's tools (a file, or an endpoint's URL introspected at the first
/// listing): the runtime's GraphQL source sending to `endpoint` (the schema's URL when not
/// given), with `headers` on every request, its selections checked against the schema first.
///
/// # Errors
///
/// A message for people when the schema cannot be read or an argument is wrong.
pub fn source(
    schema: &Path,
    operations: &[PathBuf],
    endpoint: Option<&str>,
    headers: &[String],
    timeout: Duration,
) -> Result<Arc<dyn ToolSource>, String> {
    let url = schema_url(schema);
    let endpoint = match (endpoint, url) {
        (Some(endpoint), Some(url)) if endpoint != url => {
            return Err(format!(
                "--endpoint {endpoint} is not the introspected {url}: give a schema file to send \
                 elsewhere"
            ));
        }
        (Some(endpoint), _) | (None, Some(endpoint)) => endpoint,
        (None, None) => return Err("--endpoint URL is needed beside a schema file".to_owned()),
    };
    let client = client_builder()
        .build()
        .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
    let client = HeaderClient::new(client, super::mcp::headers(headers)?);
    let mut source = GraphqlSource::builder("api", endpoint, client)
        .documents(documents(operations)?)
        .timeout(timeout);
    if url.is_none() {
        source = source.schema(self::schema(schema, headers, timeout)?);
    }
    let source = source.build().map_err(|error| error.to_string())?;
    Ok(Arc::new(source))
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
