//! `toolkit-gen report` and `toolkit-gen call`: an OpenAPI document as the runtime reads it, and
//! one of its operations run from the command line.
//!
//! Both read the document with the runtime's own reader
//! ([`toolkit_runtime::openapi::read_operations`]), so what a script sees is what a host gets.
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
//! # `call --openapi DOC --base-url URL [--header 'K: V']... [--timeout-ms N] OPERATION [JSON]`
//!
//! Runs one operation, its input checked as a model's would be: the result JSON on stdout and
//! exit 0, or the failure as `{code, message, retryable, isFailure}` JSON on stdout and exit 1.
//! `--header` values are sent last on every request, over any parameter of the same name, and
//! are never printed. `--credential SCHEME=VAR` gives the credential of one of the document's
//! security schemes from the environment variable `VAR` (see [`credentials`](super::credentials)):
//! each operation carries the credentials of the first of its requirements that they meet.
//!
//! Either exits 2, with the problem on stderr, when the document cannot be read or the
//! arguments are wrong.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_runtime::http::{HeaderClient, HttpSource, KeyLocation, client_builder};
use toolkit_runtime::openapi::ReadOperations;
use toolkit_runtime::{Failure, ToolDefinition, Toolkit, ToolkitOptions};

use super::progress::Progress;
use toolkit_gen::emit::{EmitOptions, ToolTypes, input_types, module_typing};

/// The exit code of a document that cannot be read or arguments that are wrong.
const USAGE: u8 = 2;

/// How `report` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON object, for scripts.
    #[default]
    Json,
    /// Lines for people.
    Text,
}

/// What `report` reads.
#[derive(Clone, Copy, Debug)]
pub enum ReportInput<'a> {
    /// An OpenAPI document.
    OpenApi(&'a Path),
    /// An MCP snapshot.
    Mcp(&'a Path),
}

/// `toolkit-gen report`: writes the operations read and the skipped ones (or the tools of an MCP
/// snapshot), each with how much of its input is typed, to `out`.
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
            let read = match toolkit_gen::inputs::read_openapi_for_module(file) {
                Ok((_, read)) => read,
                Err(problems) => {
                    let problem = toolkit_gen::inputs::describe(file, &problems);
                    let _ = writeln!(err, "toolkit-gen: {problem}");
                    return ExitCode::from(USAGE);
                }
            };
            let definitions: Vec<&ToolDefinition> =
                read.operations.iter().map(|o| &o.definition).collect();
            let progress = Progress::new(definitions.len() as u64, "typing");
            let types = module_typing(&definitions, &read.defs, &EmitOptions::default(), |tool| {
                progress.step_with(tool);
            });
            progress.finish();
            match format {
                Format::Json => writeln!(out, "{}", report_json(&read, &types)),
                Format::Text => write_text(&read, &types, out),
            }
        }
        ReportInput::Mcp(file) => {
            let definitions = match super::generate::read_snapshot(file) {
                Ok(definitions) => definitions,
                Err(problem) => {
                    let _ = writeln!(err, "toolkit-gen: {problem}");
                    return ExitCode::from(USAGE);
                }
            };
            let borrowed: Vec<&ToolDefinition> = definitions.iter().collect();
            let types = typing(&borrowed);
            match format {
                Format::Json => writeln!(out, "{}", mcp_report_json(&definitions, &types)),
                Format::Text => write_mcp_text(&definitions, &types, out),
            }
        }
    };
    if written.is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// What the emitter makes of each tool's input (as `toolkit-gen openapi` and `mcp` write it),
/// under a progress bar when there are many.
pub fn typing(definitions: &[&ToolDefinition]) -> Vec<ToolTypes> {
    let progress = Progress::new(definitions.len() as u64, "typing");
    let options = EmitOptions::default();
    let types = definitions
        .iter()
        .map(|definition| {
            let schema = Value::Object(definition.input_schema().clone());
            let emitted = input_types(definition.name(), &schema, &options);
            progress.step_with(definition.name());
            ToolTypes {
                tool: definition.name().to_owned(),
                root_type: emitted.root_type,
                untyped: emitted.untyped,
            }
        })
        .collect();
    progress.finish();
    types
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

/// What `toolkit-gen call` takes.
#[derive(Debug)]
pub struct CallArgs<'a> {
    /// The document, where its requests go, and with what.
    pub source: SourceOf<'a>,
    /// The operation's name.
    pub operation: &'a str,
    /// The input, as JSON text (`{}` when not given).
    pub input: Option<&'a str>,
}

/// `toolkit-gen call`: runs one operation and writes its result or failure to `out`.
pub fn call(args: &CallArgs<'_>, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    match prepare(args) {
        Ok((toolkit, input, hint)) => {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    let _ = writeln!(err, "toolkit-gen: cannot start a runtime: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let outcome = runtime.block_on(toolkit.call(args.operation, input));
            let (value, code) = match outcome {
                Ok(value) => (value, ExitCode::SUCCESS),
                Err(failure) => {
                    // What the model reads says only that credentials were refused: the person
                    // running the command is told which are missing and how to give them.
                    if let Some(hint) = hint.filter(|_| failure.code == "AuthenticationError") {
                        let _ = writeln!(err, "toolkit-gen: {hint}");
                    }
                    (failure.to_json(), ExitCode::FAILURE)
                }
            };
            if writeln!(out, "{value}").is_err() {
                return ExitCode::FAILURE;
            }
            code
        }
        Err(Prepared::Usage(problem)) => {
            let _ = writeln!(err, "toolkit-gen: {problem}");
            ExitCode::from(USAGE)
        }
        Err(Prepared::Failure(failure)) => {
            let _ = writeln!(out, "{}", failure.to_json());
            ExitCode::FAILURE
        }
    }
}

/// What an HTTP source of a document's operations is made of (`call` and `execute`).
#[derive(Debug)]
pub struct SourceOf<'a> {
    /// The document.
    pub file: &'a Path,
    /// Where requests go.
    pub base_url: &'a str,
    /// `Name: value` headers sent last on every request.
    pub headers: &'a [String],
    /// `SCHEME=VAR` credentials (see [`credentials`](super::credentials)).
    pub credentials: &'a [String],
    /// Origins besides the API's whose `tokenUrl` may receive a client secret.
    pub token_origins: &'a [String],
    /// How long an operation may take.
    pub timeout: Duration,
}

/// The source of the document's operations, sent to the base URL with the headers, each
/// operation carrying the credentials its security requirements name.
///
/// # Errors
///
/// A message for people when the document cannot be read, or an argument is wrong.
pub fn http_source(of: &SourceOf<'_>) -> Result<HttpSource, String> {
    http_source_of(of, None).map(|(source, _)| source)
}

/// As [`http_source`], with `only` the operation of that name when given (none when the
/// document has no such operation): the document is read with its schemas held once, and only
/// the operations kept get copies of the entries they reach, so running one operation of a
/// large document costs that operation, not the document's operations times its schemas.
///
/// With `only`, also what to tell a person when that operation needs a credential that none of
/// the `--credential`s gives ([`credential_hint`]).
fn http_source_of(
    of: &SourceOf<'_>,
    only: Option<&str>,
) -> Result<(HttpSource, Option<String>), String> {
    let mut read = toolkit_gen::inputs::read_openapi_for_module(of.file)
        .map(|(_, read)| read)
        .map_err(|problems| toolkit_gen::inputs::describe(of.file, &problems))?;
    if let Some(only) = only {
        read.operations.retain(|operation| operation.name() == only);
    }
    read.operations = toolkit_runtime::http::standing_alone(read.operations, &read.defs)
        .map_err(|error| format!("{}: {error}", of.file.display()))?;
    let hint = only.and_then(|only| {
        let wanted = read.security.requirements.get(only)?;
        credential_hint(only, wanted, of.credentials)
    });
    let credentials = super::credentials::credentials(
        of.credentials,
        of.token_origins,
        &read.security.schemes,
        of.base_url,
    )?;
    let client = client_builder()
        .build()
        .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
    let headers = super::mcp::headers(of.headers)?;
    HttpSource::builder("api", of.base_url, HeaderClient::new(client, headers))
        .operations(read.operations)
        .security(
            read.security.schemes,
            read.security.requirements,
            credentials,
        )
        .timeout(of.timeout)
        .build()
        .map(|source| (source, hint))
        .map_err(|error| error.to_string())
}

/// What a person is told when `operation` needs a credential of one of the requirements
/// `wanted` and the `--credential SCHEME=VAR`s `given` meet none of them: the schemes it takes,
/// and the flag (or the gateway's key) that gives one. `None` when one is met or none is needed.
fn credential_hint(
    operation: &str,
    wanted: &[toolkit_runtime::http::SecurityRequirement],
    given: &[String],
) -> Option<String> {
    let given: Vec<&str> = given
        .iter()
        .filter_map(|pair| pair.split_once('=').map(|(scheme, _)| scheme.trim()))
        .collect();
    let met = |requirement: &toolkit_runtime::http::SecurityRequirement| {
        requirement
            .keys()
            .all(|scheme| given.contains(&scheme.as_str()))
    };
    if wanted.is_empty() || wanted.iter().any(met) {
        return None;
    }
    let schemes: Vec<String> = wanted
        .iter()
        .map(|requirement| {
            requirement
                .keys()
                .map(|scheme| format!("`{scheme}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        })
        .collect();
    let first = wanted.first()?.keys().next()?;
    Some(format!(
        "`{operation}` needs a credential of the security scheme {}, and none was given: pass \
         `--credential {first}=VARIABLE` (VARIABLE: the environment variable that holds it); in \
         the gateway, the source's `credentials = {{ {first} = \"VARIABLE\" }}`",
        schemes.join(", or ")
    ))
}

/// Why a call did not start.
enum Prepared {
    /// The arguments or the document are wrong.
    Usage(String),
    /// The call fails as a model would read it (an input that is not JSON).
    Failure(Failure),
}

fn prepare(args: &CallArgs<'_>) -> Result<(Toolkit, Value, Option<String>), Prepared> {
    let (source, hint) =
        http_source_of(&args.source, Some(args.operation)).map_err(Prepared::Usage)?;
    let source = Arc::new(source);
    let toolkit = Toolkit::from_source(
        source.clone(),
        source.definitions(),
        &ToolkitOptions::default(),
    )
    .map_err(|error| Prepared::Usage(error.to_string()))?;
    let input = match args.input {
        None => json!({}),
        Some(text) => serde_json::from_str(text).map_err(|error| {
            Prepared::Failure(Failure::invalid_input(format!(
                "The input is not JSON: {error}"
            )))
        })?,
    };
    Ok((toolkit, input, hint))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use std::sync::Mutex;

    use axum::extract::Request;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    use super::*;

    const PETSTORE: &str = r#"
openapi: 3.0.3
info: {title: Pets, version: "1"}
servers: [{url: "https://petstore.example.com/v1"}]
paths:
  /pets/{petId}:
    get:
      operationId: showPetById
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      responses:
        200: {description: ok}
    post:
      operationId: uploadPhoto
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      requestBody:
        content:
          multipart/form-data: {schema: {type: object}}
      responses:
        200: {description: ok}
"#;

    fn petstore() -> tempfile_like::File {
        tempfile_like::File::new("petstore.yaml", PETSTORE)
    }

    /// A file in the target directory's temp space, removed when dropped.
    mod tempfile_like {
        use std::path::{Path, PathBuf};

        pub struct File(PathBuf);

        impl File {
            pub fn new(name: &str, text: &str) -> Self {
                let dir = std::env::temp_dir().join(format!(
                    "toolkit-gen-test-{}-{}",
                    std::process::id(),
                    std::thread::current()
                        .name()
                        .unwrap_or("t")
                        .replace("::", "_")
                ));
                std::fs::create_dir_all(&dir).unwrap();
                let path = dir.join(name);
                std::fs::write(&path, text).unwrap();
                Self(path)
            }

            pub fn path(&self) -> &Path {
                &self.0
            }
        }

        impl Drop for File {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }

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

        let swagger =
            tempfile_like::File::new("swagger.json", r#"{"swagger": "1.2", "paths": {}}"#);
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

        let document = tempfile_like::File::new(
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

    /// A server on 127.0.0.1 answering `/v1/pets/{id}`, recording the `x-api-key` it got.
    fn server(seen: Arc<Mutex<Vec<String>>>) -> (tokio::runtime::Runtime, String) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(move |request: Request| {
            let seen = Arc::clone(&seen);
            async move {
                let key = request
                    .headers()
                    .get("x-api-key")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                seen.lock().unwrap().push(key);
                match request.uri().path() {
                    "/v1/pets/1" => axum::Json(json!({"id": 1, "name": "Rex"})).into_response(),
                    _ => (StatusCode::NOT_FOUND, "no such pet").into_response(),
                }
            }
        });
        runtime.spawn(async move {
            let _ = axum::serve(toolkit_runtime::serve::without_delay(listener), app).await;
        });
        (runtime, base)
    }

    #[test]
    fn a_call_with_no_credential_tells_the_person_which_scheme_and_how_to_give_it() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (_runtime, base) = server(Arc::clone(&seen));
        let secured = PETSTORE.replace(
            "paths:",
            "components:\n  securitySchemes:\n    api_key: {type: apiKey, in: header, name: X-Api-Key}\n\
             security: [{api_key: []}]\npaths:",
        );
        let file = tempfile_like::File::new("secured.yaml", &secured);
        let args = |credentials| CallArgs {
            source: SourceOf {
                file: file.path(),
                base_url: &base,
                headers: &[],
                credentials,
                token_origins: &[],
                timeout: Duration::from_secs(5),
            },
            operation: "showPetById",
            input: Some(r#"{"petId": 1}"#),
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(call(&args(&[]), &mut out, &mut err), ExitCode::FAILURE);
        let failure: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(failure["code"], "AuthenticationError");
        let told = String::from_utf8(err).unwrap();
        assert!(
            told.contains("`showPetById` needs a credential of the security scheme `api_key`")
                && told.contains("--credential api_key=VARIABLE")
                && told.contains("credentials = { api_key = \"VARIABLE\" }"),
            "{told}"
        );
        assert!(seen.lock().unwrap().is_empty(), "nothing was sent");

        // Given, the hint is not printed (and the call goes out with it).
        // A variable every process has stands for the credential's.
        let given = ["api_key=PATH".to_owned()];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(call(&args(&given), &mut out, &mut err), ExitCode::SUCCESS);
        assert!(err.is_empty());
        assert_eq!(
            seen.lock().unwrap().as_slice(),
            [std::env::var("PATH").unwrap()]
        );
    }

    #[test]
    fn call_prints_the_result_or_the_failure_and_exits_accordingly() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (_runtime, base) = server(Arc::clone(&seen));
        let file = petstore();
        let headers = ["X-Api-Key: k-123".to_owned()];
        let args = |input| CallArgs {
            source: SourceOf {
                file: file.path(),
                base_url: &base,
                headers: &headers,
                credentials: &[],
                token_origins: &[],
                timeout: Duration::from_secs(5),
            },
            operation: "showPetById",
            input,
        };

        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            call(&args(Some(r#"{"petId": 1}"#)), &mut out, &mut err),
            ExitCode::SUCCESS
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&out).unwrap(),
            json!({"id": 1, "name": "Rex"})
        );
        assert_eq!(seen.lock().unwrap().as_slice(), ["k-123"]);

        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            call(&args(Some(r#"{"petId": 2}"#)), &mut out, &mut err),
            ExitCode::FAILURE
        );
        let failure: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(failure["code"], "CallFailedError");
        assert_eq!(
            failure["message"],
            "The API answered 404 Not Found: no such pet"
        );
        assert_eq!(failure["retryable"], json!(false));

        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            call(&args(Some(r#"{"petId": "x"}"#)), &mut out, &mut err),
            ExitCode::FAILURE
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&out).unwrap()["code"],
            "InvalidInputError"
        );

        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            call(&args(Some("{not json")), &mut out, &mut err),
            ExitCode::FAILURE
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&out).unwrap()["code"],
            "InvalidInputError"
        );
        assert_eq!(seen.lock().unwrap().len(), 2, "refused inputs sent nothing");
        assert!(!String::from_utf8_lossy(&out).contains("k-123"));
    }

    #[test]
    fn the_command_line_parses_as_documented() {
        use clap::Parser as _;

        use crate::cli::{Cli, Command};

        let cli = Cli::try_parse_from([
            "toolkit-gen",
            "call",
            "--openapi",
            "api.yaml",
            "--base-url",
            "https://api.example.com",
            "--header",
            "Authorization: Bearer t",
            "--header",
            "X-Key: k",
            "getPet",
            r#"{"id": 1}"#,
        ])
        .unwrap();
        let Command::Call {
            source,
            timeout_ms,
            name,
            input,
        } = cli.command
        else {
            panic!("not a call");
        };
        assert_eq!(source.openapi.as_deref(), Some(Path::new("api.yaml")));
        assert_eq!(source.base_url.as_deref(), Some("https://api.example.com"));
        assert_eq!(source.headers, ["Authorization: Bearer t", "X-Key: k"]);
        assert_eq!(timeout_ms, 30_000);
        assert_eq!(name, "getPet");
        assert_eq!(input.as_deref(), Some(r#"{"id": 1}"#));

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

    #[test]
    fn call_refuses_bad_arguments_on_stderr() {
        let file = petstore();
        let headers = ["no colon".to_owned()];
        let args = CallArgs {
            source: SourceOf {
                file: file.path(),
                base_url: "http://127.0.0.1:9",
                headers: &headers,
                credentials: &[],
                token_origins: &[],
                timeout: Duration::from_secs(1),
            },
            operation: "showPetById",
            input: None,
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(call(&args, &mut out, &mut err), ExitCode::from(USAGE));
        assert!(String::from_utf8(err).unwrap().contains("is 'Name: value'"));
    }
}
