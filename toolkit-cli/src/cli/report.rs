//! `toolkit-gen report`: which of an input's operations or tools become tools, and how much of
//! each input the generated code types — for an OpenAPI document, an MCP snapshot or a GraphQL
//! schema.
//!
//! A document or snapshot is read as the generator reads it, with the runtime's own reader
//! ([`toolkit_gen::builder::read_openapi`]), and typed as the generator types it
//! ([`toolkit_gen::builder::openapi_typing`]), so what a script sees is what a host gets.
//!
//! # `report (--openapi DOC | --mcp SNAPSHOT) [--format json|text]`
//!
//! Prints, as JSON (the default; its shape is stable, scripts read it):
//!
//! ```json
//! {
//!   "operations": [{ "name": "listPets", "method": "GET", "path": "/pets", "readOnly": true,
//!                    "typed": false, "untyped": ["#/properties/filter/oneOf"],
//!                    "security": [{ "api_key": [] }] }],
//!   "skipped": [{ "location": "#/paths/~1pets/post", "method": "POST", "path": "/pets",
//!                 "kind": "bodyNotJson", "reason": "the request body is neither JSON nor a form: multipart/form-data" }],
//!   "servers": [{ "url": "https://petstore.example.com/v1" }],
//!   "securitySchemes": { "api_key": { "type": "apiKey", "name": "X-Api-Key", "in": "header" } },
//!   "credentialParameters": [{ "operation": "listPets", "parameter": "X-Api-Key", "in": "header",
//!                              "scheme": "api_key" }],
//!   "summary": { "operations": 1, "skipped": 1, "share": 0.5, "typed": 0, "typedShare": 0.0 }
//! }
//! ```
//!
//! An operation with security requirements lists them as `security` (alternatives, each a map
//! of scheme to scopes, as the document writes them); `credentialParameters` are the parameters
//! left out of the inputs because they carry a scheme's credential (a model never gives one).
//! The text format ends such an operation's line with `needs: key | basic+oauth(read)`.
//!
//! `typed` is true when the operation's whole input has a Rust type in the code `toolkit-gen
//! openapi` writes; `untyped` lists the JSON pointers (into its input schema) that fell back to
//! `serde_json::Value`. With `--mcp SNAPSHOT` (a snapshot, a bare `{"tools": [...]}` result, or a
//! bare array), the same for each tool of the listing:
//! `{"tools": [{"name", "typed", "untyped", hints...}], "summary": {"tools", "typed", "typedShare"}}`.
//!
//! # `report --graphql SCHEMA [--operations FILE]... [--header 'K: V']... [--format json|text]`
//!
//! The tools read from a GraphQL schema ([`graphql_schema`](super::graphql_schema): a file, or
//! an endpoint's URL introspected), one per root query and mutation field or per named
//! operation of `--operations`, with the fields or operations skipped and the problems found:
//! `{"tools": [{"name", "operation", "readOnly", "selection"}], "skipped": [...], "problems":
//! [...]}`; exit 2 when there are problems.
//!
//! Exits 2, with the problem on stderr, when the input cannot be read.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use toolkit_gen::builder::{
    ToolTypes, openapi_typing, read_mcp_snapshot, read_openapi, snapshot_typing,
};
use toolkit_graphql::ReadTools;
use toolkit_runtime::ToolDefinition;
use toolkit_runtime::http::KeyLocation;
use toolkit_runtime::openapi::ReadOperations;

use super::format::Format;
use super::progress::Progress;

/// The exit code of an input that cannot be read.
const USAGE: u8 = 2;

/// What `report` reads.
#[derive(Clone, Copy, Debug)]
pub enum ReportInput<'a> {
    /// An OpenAPI document.
    OpenApi(&'a Path),
    /// An MCP snapshot.
    Mcp(&'a Path),
    /// A GraphQL schema: a file, or an endpoint's URL introspected with `headers`; its root
    /// fields are the tools, or the named operations of `operations` when any are given.
    Graphql {
        /// The schema.
        schema: &'a Path,
        /// Files of named operations.
        operations: &'a [PathBuf],
        /// `Name: value` headers sent with the introspection.
        headers: &'a [String],
    },
}

/// `toolkit-gen report`: writes the operations read and the skipped ones (or the tools of an MCP
/// snapshot or a GraphQL schema), each with how much of its input is typed, to `out`.
pub fn report(
    input: ReportInput<'_>,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let written = match input {
        ReportInput::OpenApi(file) => {
            // Read as the generator reads, each schema naming its entries held once: a report
            // prints no schema, and copies per operation grow with operations times schemas
            // (Microsoft Graph beta: 10 GB, and operations skipped over the copy budget).
            let read = match read_openapi(file) {
                Ok(read) => read,
                Err(error) => {
                    let _ = writeln!(err, "toolkit-gen: {error}");
                    return ExitCode::from(USAGE);
                }
            };
            let progress = Progress::new(read.operations.len() as u64, "typing");
            let types = openapi_typing(&read, |tool| progress.step_with(tool));
            progress.finish();
            match format {
                Format::Json => writeln!(out, "{}", report_json(&read, &types)),
                Format::Text => write_text(&read, &types, out),
            }
        }
        ReportInput::Mcp(file) => {
            let definitions = match read_mcp_snapshot(file) {
                Ok(definitions) => definitions,
                Err(error) => {
                    let _ = writeln!(err, "toolkit-gen: {error}");
                    return ExitCode::from(USAGE);
                }
            };
            let progress = Progress::new(definitions.len() as u64, "typing");
            let types = snapshot_typing(&definitions, |tool| progress.step_with(tool));
            progress.finish();
            match format {
                Format::Json => writeln!(out, "{}", mcp_report_json(&definitions, &types)),
                Format::Text => write_mcp_text(&definitions, &types, out),
            }
        }
        ReportInput::Graphql {
            schema,
            operations,
            headers,
        } => return graphql_report(schema, operations, headers, format, out, err),
    };
    if written.is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// `typed` and `untyped` of one tool, added to its report `entry`.
fn add_typing(entry: &mut Value, types: Option<&ToolTypes>) {
    if let Some(types) = types {
        entry["typed"] = Value::Bool(types.is_typed());
        entry["untyped"] = types
            .untyped
            .iter()
            .map(|untyped| Value::String(untyped.pointer.clone()))
            .collect();
    }
}

/// How many of `types` are fully typed, and their share (1 when there are none).
fn typed_count(types: &[ToolTypes]) -> (usize, f64) {
    let typed = types.iter().filter(|t| t.is_typed()).count();
    #[allow(clippy::cast_precision_loss)]
    let share = if types.is_empty() {
        1.0
    } else {
        typed as f64 / types.len() as f64
    };
    (typed, share)
}

/// The hints of a definition, in the report's names.
fn add_hints(entry: &mut Value, definition: &ToolDefinition) {
    let annotations = &definition.annotations;
    for (key, hint) in [
        ("readOnly", annotations.read_only),
        ("idempotent", annotations.idempotent),
        ("destructive", annotations.destructive),
    ] {
        if let Some(hint) = hint {
            entry[key] = Value::Bool(hint);
        }
    }
}

/// The report as JSON: `operations` (each with `typed` and `untyped` from `types`, in the order
/// of the operations), `skipped`, `servers` and `summary`.
pub fn report_json(read: &ReadOperations, types: &[ToolTypes]) -> Value {
    let operations: Vec<Value> = read
        .operations
        .iter()
        .enumerate()
        .map(|(index, operation)| {
            let mut entry = json!({
                "name": operation.name(),
                "method": operation.request.method,
                "path": operation.request.path,
            });
            add_hints(&mut entry, &operation.definition);
            add_typing(&mut entry, types.get(index));
            if let Some(requirements) = read
                .security
                .requirements
                .get(operation.name())
                .filter(|requirements| !requirements.is_empty())
            {
                entry["security"] = json!(requirements);
            }
            entry
        })
        .collect();
    let skipped: Vec<Value> = read
        .skipped
        .iter()
        .map(|skipped| {
            json!({
                "location": skipped.location,
                "method": skipped.method,
                "path": skipped.path,
                "kind": skipped.reason.kind(),
                "reason": skipped.reason.to_string(),
            })
        })
        .collect();
    let (typed, typed_share) = typed_count(types);
    json!({
        "operations": operations,
        "skipped": skipped,
        "servers": read.servers,
        "securitySchemes": read.security.schemes,
        "credentialParameters": read.security.credential_parameters,
        "summary": {
            "operations": read.operations.len(),
            "skipped": read.skipped.len(),
            "share": read.share(),
            "typed": typed,
            "typedShare": typed_share,
        },
    })
}

/// The report of an MCP snapshot as JSON: `tools` (each with its hints, `typed` and `untyped`)
/// and `summary`.
pub fn mcp_report_json(definitions: &[ToolDefinition], types: &[ToolTypes]) -> Value {
    let tools: Vec<Value> = definitions
        .iter()
        .enumerate()
        .map(|(index, definition)| {
            let mut entry = json!({ "name": definition.name() });
            add_hints(&mut entry, definition);
            add_typing(&mut entry, types.get(index));
            entry
        })
        .collect();
    let (typed, typed_share) = typed_count(types);
    json!({
        "tools": tools,
        "summary": {
            "tools": definitions.len(),
            "typed": typed,
            "typedShare": typed_share,
        },
    })
}

fn write_typed_line(types: &[ToolTypes], noun: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let (typed, share) = typed_count(types);
    writeln!(
        out,
        "{typed} of {} {noun} fully typed ({:.1} %)",
        types.len(),
        share * 100.0
    )
}

fn untyped_suffix(types: Option<&ToolTypes>) -> String {
    match types {
        Some(types) if !types.is_typed() => format!("  [{} untyped]", types.untyped.len()),
        _ => String::new(),
    }
}

fn write_untyped(types: &[ToolTypes], out: &mut dyn Write) -> std::io::Result<()> {
    if types.iter().all(ToolTypes::is_typed) {
        return Ok(());
    }
    writeln!(out, "untyped (serde_json::Value):")?;
    for tool in types {
        for untyped in &tool.untyped {
            writeln!(out, "  {}: {untyped}", tool.tool)?;
        }
    }
    Ok(())
}

fn write_text(
    read: &ReadOperations,
    types: &[ToolTypes],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{} operations read, {} skipped ({:.1} % read)",
        read.operations.len(),
        read.skipped.len(),
        read.share() * 100.0
    )?;
    write_typed_line(types, "operations", out)?;
    for (index, operation) in read.operations.iter().enumerate() {
        writeln!(
            out,
            "  {:<7} {}  {}{}{}",
            operation.request.method,
            operation.request.path,
            operation.name(),
            untyped_suffix(types.get(index)),
            needs_suffix(read, operation.name())
        )?;
    }
    if !read.security.credential_parameters.is_empty() {
        writeln!(out, "credential parameters (not model inputs):")?;
        for parameter in &read.security.credential_parameters {
            writeln!(
                out,
                "  {}: {} ({}) carries {}'s credential",
                parameter.operation,
                parameter.parameter,
                match parameter.location {
                    KeyLocation::Header => "header",
                    KeyLocation::Query => "query",
                    KeyLocation::Cookie => "cookie",
                },
                parameter.scheme
            )?;
        }
    }
    if !read.skipped.is_empty() {
        writeln!(out, "skipped:")?;
        for skipped in &read.skipped {
            writeln!(out, "  {}: {}", skipped.location, skipped.reason)?;
        }
    }
    write_untyped(types, out)?;
    for server in &read.servers {
        writeln!(out, "server (not used): {}", server.url)?;
    }
    Ok(())
}

/// `  needs: a | b+c(scope)` for an operation with security requirements: the alternatives, each
/// the schemes it names with their scopes; empty without.
fn needs_suffix(read: &ReadOperations, operation: &str) -> String {
    let Some(requirements) = read.security.requirements.get(operation) else {
        return String::new();
    };
    let alternatives: Vec<String> = requirements
        .iter()
        .map(|requirement| {
            if requirement.is_empty() {
                return "none".to_owned();
            }
            let schemes: Vec<String> = requirement
                .iter()
                .map(|(scheme, scopes)| {
                    if scopes.is_empty() {
                        scheme.clone()
                    } else {
                        format!("{scheme}({})", scopes.join(" "))
                    }
                })
                .collect();
            schemes.join("+")
        })
        .collect();
    if alternatives.is_empty() {
        String::new()
    } else {
        format!("  needs: {}", alternatives.join(" | "))
    }
}

fn write_mcp_text(
    definitions: &[ToolDefinition],
    types: &[ToolTypes],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "{} tools", definitions.len())?;
    write_typed_line(types, "tools", out)?;
    for (index, definition) in definitions.iter().enumerate() {
        writeln!(
            out,
            "  {}{}",
            definition.name(),
            untyped_suffix(types.get(index))
        )?;
    }
    write_untyped(types, out)
}

/// `report --graphql`: the tools read, the skipped fields or operations and the problems.
fn graphql_report(
    schema: &Path,
    operations: &[PathBuf],
    headers: &[String],
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let read = match super::graphql_schema::read(schema, operations, headers) {
        Ok((_, read)) => read,
        Err(problem) => {
            let _ = writeln!(err, "toolkit-gen: {problem}");
            return ExitCode::from(USAGE);
        }
    };
    let written = match format {
        Format::Json => writeln!(out, "{}", graphql_report_json(&read)),
        Format::Text => write_graphql_text(&read, out),
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

/// The report of a GraphQL schema as one JSON object: `tools` (name, kind, hints), `skipped`,
/// `problems`.
pub fn graphql_report_json(read: &ReadTools) -> Value {
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

fn write_graphql_text(read: &ReadTools, out: &mut dyn Write) -> std::io::Result<()> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::cli::fixtures::{self, petstore};

    #[test]
    fn report_prints_operations_and_skipped_as_json() {
        let file = petstore();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = report(
            ReportInput::OpenApi(file.path()),
            Format::Json,
            &mut out,
            &mut err,
        );
        assert_eq!(code, ExitCode::SUCCESS);
        let report: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            report["operations"],
            json!([{"name": "showPetById", "method": "GET", "path": "/pets/{petId}", "readOnly": true, "typed": true, "untyped": []}])
        );
        assert_eq!(
            report["skipped"][0]["location"],
            "#/paths/~1pets~1{petId}/post"
        );
        assert_eq!(report["skipped"][0]["kind"], "bodyNotJson");
        assert_eq!(
            report["servers"][0]["url"],
            "https://petstore.example.com/v1"
        );
        assert_eq!(report["summary"]["share"], json!(0.5));
    }

    #[test]
    fn report_prints_text_for_people_and_refuses_what_is_not_openapi() {
        let file = petstore();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        report(
            ReportInput::OpenApi(file.path()),
            Format::Text,
            &mut out,
            &mut err,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("1 operations read, 1 skipped (50.0 % read)"),
            "{text}"
        );
        assert!(
            text.contains(
                "#/paths/~1pets~1{petId}/post: the request body is neither JSON nor a form"
            )
        );

        let swagger = fixtures::File::new("swagger.json", r#"{"swagger": "1.2", "paths": {}}"#);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = report(
            ReportInput::OpenApi(swagger.path()),
            Format::Json,
            &mut out,
            &mut err,
        );
        assert_eq!(code, ExitCode::from(USAGE));
        assert!(out.is_empty());
        assert!(String::from_utf8(err).unwrap().contains("Swagger 1.2"));
    }

    #[test]
    fn report_reads_a_discovery_document_given_as_discovery() {
        use clap::Parser as _;

        use crate::cli::{Cli, Command};

        let document = fixtures::File::new(
            "pubsub.json",
            r#"{"discoveryVersion": "v1", "rootUrl": "https://pubsub.googleapis.com/", "servicePath": "",
                "resources": {"topics": {"methods": {
                    "get": {"id": "pubsub.projects.topics.get", "httpMethod": "GET", "path": "v1/{+topic}",
                            "parameters": {"topic": {"type": "string", "location": "path", "required": true}}},
                    "upload": {"id": "pubsub.projects.topics.upload", "httpMethod": "POST", "path": "v1/{+topic}",
                            "parameters": {"topic": {"type": "string", "location": "path", "required": true}},
                            "mediaUpload": {"accept": ["image/*"], "protocols": {"simple": {"path": "/upload/v1/{+topic}"}}}}
                }}}}"#,
        );
        let cli = Cli::try_parse_from([
            "toolkit-gen",
            "report",
            "--discovery",
            &document.path().to_string_lossy(),
        ])
        .unwrap();
        let Command::Report { openapi, .. } = cli.command else {
            panic!("not a report");
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        report(
            ReportInput::OpenApi(openapi.as_deref().unwrap()),
            Format::Text,
            &mut out,
            &mut err,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("2 operations read, 1 skipped"),
            "{text}{}",
            String::from_utf8_lossy(&err)
        );
        assert!(
            text.contains("#/resources/topics/methods/upload/mediaUpload"),
            "{text}"
        );
        for args in [
            &[
                "toolkit-gen",
                "call",
                "--discovery",
                "d.json",
                "--base-url",
                "http://x",
                "t",
            ][..],
            &[
                "toolkit-gen",
                "crate",
                "--discovery",
                "d.json",
                "--name",
                "d",
                "-o",
                "out",
            ],
            &["toolkit-gen", "discovery", "d.json"],
        ] {
            Cli::try_parse_from(args).unwrap_or_else(|error| panic!("{args:?}: {error}"));
        }
    }

    #[test]
    fn the_command_line_parses_as_documented() {
        use clap::Parser as _;

        use crate::cli::{Cli, Command};

        let cli = Cli::try_parse_from([
            "toolkit-gen",
            "report",
            "--openapi",
            "a.json",
            "--format",
            "text",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Command::Report {
                format: Format::Text,
                ..
            }
        ));
        let cli = Cli::try_parse_from(["toolkit-gen", "report", "--openapi", "a.json"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Report {
                format: Format::Json,
                ..
            }
        ));
    }
}
