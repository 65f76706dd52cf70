//! `toolkit-gen call`: one tool run from the command line, its input checked as a model's would
//! be, for every kind of source [`SourceArgs`] names — an OpenAPI document's operation, a GraphQL
//! schema's field or named operation, an MCP server's tool.
//!
//! # `call --openapi DOC --base-url URL [--header 'K: V']... [--timeout-ms N] OPERATION [JSON]`
//!
//! Runs one operation, its input checked as a model's would be: the result JSON on stdout and
//! exit 0, or the failure as `{code, message, retryable, isFailure}` JSON on stdout and exit 1.
//! `--header` values are sent last on every request, over any parameter of the same name, and
//! are never printed. `--credential SCHEME=VAR` gives the credential of one of the document's
//! security schemes from the environment variable `VAR` (see [`credentials`](super::credentials)):
//! each operation carries the credentials of the first of its requirements that they meet.
//! Exits 2, with the problem on stderr, when the document cannot be read or the arguments are
//! wrong.
//!
//! # `call --graphql SCHEMA [--endpoint URL] [--operations FILE]... NAME [JSON]`
//!
//! Runs one tool of a GraphQL schema (a file sent to `--endpoint`, or an endpoint's URL
//! introspected: [`graphql_schema`](super::graphql_schema)), its `selection` checked against
//! the schema first: the result (exit 0) or the failure JSON (exit 1) on stdout; exit 2 when the
//! schema cannot be read or the arguments are wrong.
//!
//! # `call (--mcp-url URL [--header 'K: V']... | --mcp-stdio 'CMD') TOOL [JSON]`
//!
//! Prints the tool's result as JSON and exits 0, or the failure as `{code, message, retryable}`
//! and exits 1. The input is checked against the tool's schema first, as a model's would be.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_runtime::{Failure, ToolSource, Toolkit, ToolkitOptions};

use super::mcp_server::McpServer;
use super::openapi_source::{SourceOf, http_source_of};
use super::source::SourceArgs;

/// The exit code of a document that cannot be read or arguments that are wrong.
const USAGE: u8 = 2;

/// `toolkit-gen call`: runs the tool `name` of the source `source` names, with `input` (JSON
/// text, `{}` when not given; `timeout` bounds a document's operation or a schema's request);
/// writes its result or failure to `out`.
pub fn call(
    source: &SourceArgs,
    timeout: Duration,
    name: &str,
    input: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    if source.graphql.is_some() {
        return graphql(source.graphql_source(timeout), name, input, out, err);
    }
    match source.document(timeout) {
        Some(document) => openapi(
            &OpenApiCall {
                source: document,
                operation: name,
                input,
            },
            out,
            err,
        ),
        None => mcp(&source.mcp_server(), name, input, out),
    }
}

/// What a call of an OpenAPI document's operation takes.
#[derive(Debug)]
struct OpenApiCall<'a> {
    /// The document, where its requests go, and with what.
    source: SourceOf<'a>,
    /// The operation's name.
    operation: &'a str,
    /// The input, as JSON text (`{}` when not given).
    input: Option<&'a str>,
}

/// `call --openapi`: runs one operation and writes its result or failure to `out`.
fn openapi(args: &OpenApiCall<'_>, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
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

/// Why a call did not start.
enum Prepared {
    /// The arguments or the document are wrong.
    Usage(String),
    /// The call fails as a model would read it (an input that is not JSON).
    Failure(Failure),
}

fn prepare(args: &OpenApiCall<'_>) -> Result<(Toolkit, Value, Option<String>), Prepared> {
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

/// `call --graphql SCHEMA --endpoint URL NAME INPUT`: runs one tool, writing its result (exit 0)
/// or its failure JSON (exit 1) to `out`.
fn graphql(
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
            let failure = Failure::invalid_input(format!("The input is not JSON: {error}"));
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

fn failure(code: &str, message: &str, retryable: bool) -> Value {
    json!({"code": code, "message": message, "retryable": retryable})
}

/// What `call` of an MCP server's tool prints, and whether the call succeeded: the tool's result,
/// or the failure as `{code, message, retryable}` (what a model would read).
async fn mcp_outcome(server: &McpServer, tool: &str, input: Option<&str>) -> (Value, bool) {
    let input: Value = match input.map(serde_json::from_str).transpose() {
        Ok(input) => input.unwrap_or_else(|| json!({})),
        Err(error) => {
            let message = format!("The input is not JSON: {error}");
            return (failure("InvalidInputError", &message, false), false);
        }
    };
    let source = match server.source().await {
        Ok(source) => Arc::new(source),
        Err(message) => return (failure("UsageError", &message, false), false),
    };
    let outcome = async {
        let definitions = source
            .discover()
            .await
            .map_err(|error| error.to_failure())?;
        let toolkit = Toolkit::from_source(source.clone(), definitions, &ToolkitOptions::default())
            .map_err(|error| Failure::new("InvalidResponseError", error.to_string(), false))?;
        toolkit.call(tool, input).await
    }
    .await;
    source.close().await;
    match outcome {
        Ok(result) => (result, true),
        Err(failed) => (
            failure(&failed.code, &failed.message, failed.retryable),
            false,
        ),
    }
}

/// `call --mcp-url` or `--mcp-stdio`: runs the tool and writes its result or failure to `out`.
fn mcp(server: &McpServer, tool: &str, input: Option<&str>, out: &mut dyn Write) -> ExitCode {
    let (printed, succeeded) = match runtime() {
        Ok(runtime) => runtime.block_on(mcp_outcome(server, tool, input)),
        Err(message) => (failure("UnknownError", &message, false), false),
    };
    if writeln!(out, "{printed}").is_err() {
        return ExitCode::FAILURE;
    }
    if succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|error| format!("no async runtime: {error}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use axum::extract::Request;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    use super::*;
    use crate::cli::fixtures::{self, PETSTORE, petstore};
    use crate::cli::login::OAuthArgs;

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
        let file = fixtures::File::new("secured.yaml", &secured);
        let args = |credentials| OpenApiCall {
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
        assert_eq!(openapi(&args(&[]), &mut out, &mut err), ExitCode::FAILURE);
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
        assert_eq!(
            openapi(&args(&given), &mut out, &mut err),
            ExitCode::SUCCESS
        );
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
        let args = |input| OpenApiCall {
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
            openapi(&args(Some(r#"{"petId": 1}"#)), &mut out, &mut err),
            ExitCode::SUCCESS
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&out).unwrap(),
            json!({"id": 1, "name": "Rex"})
        );
        assert_eq!(seen.lock().unwrap().as_slice(), ["k-123"]);

        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            openapi(&args(Some(r#"{"petId": 2}"#)), &mut out, &mut err),
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
            openapi(&args(Some(r#"{"petId": "x"}"#)), &mut out, &mut err),
            ExitCode::FAILURE
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&out).unwrap()["code"],
            "InvalidInputError"
        );

        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            openapi(&args(Some("{not json")), &mut out, &mut err),
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
    }

    #[test]
    fn call_refuses_bad_arguments_on_stderr() {
        let file = petstore();
        let headers = ["no colon".to_owned()];
        let args = OpenApiCall {
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
        assert_eq!(openapi(&args, &mut out, &mut err), ExitCode::from(USAGE));
        assert!(String::from_utf8(err).unwrap().contains("is 'Name: value'"));
    }

    fn scripted(dir: &Path) -> McpServer {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../toolkit-mcp/tests/mcp/stdio_peer.py"
        );
        McpServer {
            stdio: Some(format!(
                "python3 '{script}' normal '{}'",
                dir.join("pids").display()
            )),
            ..McpServer::default()
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("toolkit-gen-mcp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn a_call_prints_the_result_or_the_failure() {
        let dir = temp_dir("call");
        let server = scripted(&dir);
        let (printed, ok) = mcp_outcome(&server, "echo", Some(r#"{"text": "hi"}"#)).await;
        assert!(ok);
        assert_eq!(printed, json!([{"type": "text", "text": "hi"}]));
        let (printed, ok) = mcp_outcome(&server, "echo", Some(r#"{"text": 5}"#)).await;
        assert!(!ok);
        assert_eq!(printed["code"], "InvalidInputError");
        let (printed, ok) = mcp_outcome(&server, "nope", None).await;
        assert!(!ok);
        assert_eq!(printed["code"], "NotFoundError");
        let (printed, ok) = mcp_outcome(&server, "echo", Some("{nope")).await;
        assert!(!ok);
        assert_eq!(printed["code"], "InvalidInputError");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_server_that_cannot_be_reached_is_a_retryable_failure_naming_nothing() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        drop(listener);
        let server = McpServer {
            url: Some(url),
            headers: vec!["Authorization: Bearer secret-token".into()],
            stdio: None,
            oauth: OAuthArgs::default(),
        };
        let (printed, ok) = mcp_outcome(&server, "echo", None).await;
        assert!(!ok);
        assert_eq!(printed["code"], "UnavailableError");
        assert_eq!(printed["retryable"], true);
        assert!(
            !printed.to_string().contains("secret-token")
                && !printed.to_string().contains("127.0.0.1")
        );
    }
}
