//! `toolkit-gen snapshot` and `toolkit-gen call` for MCP servers: the arguments that name a server
//! ([`McpServer`]) and what each command prints.
//!
//! - `toolkit-gen snapshot (--mcp-url URL [--header 'K: V']... | --mcp-stdio 'CMD ARGS') [-o FILE]`
//!   writes the server's tools as a snapshot: `{"server": {name, version}, "protocolVersion": ..,
//!   "tools": [the MCP Tool objects exactly as listed, all pages]}`.
//! - `toolkit-gen call (--mcp-url URL [--header 'K: V']... | --mcp-stdio 'CMD') TOOL ['JSON']`
//!   prints the tool's result as JSON and exits 0, or the failure as `{code, message, retryable}`
//!   and exits 1. The input is checked against the tool's schema first, as a model's would be.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use toolkit_runtime::mcp::{Mcp, StdioCommand};
use toolkit_runtime::{ToolSource, Toolkit, ToolkitOptions};

use super::login::OAuthArgs;

/// Which MCP server to reach: a URL (with the headers its credentials need), or a command that
/// starts a stdio server.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct McpServer {
    /// The URL of a Streamable HTTP (or old HTTP+SSE) MCP server.
    #[arg(long = "mcp-url", value_name = "URL", conflicts_with = "stdio")]
    pub url: Option<String>,
    /// A header sent with every request to the URL, as 'Name: value' (repeatable): where a
    /// credential goes.
    #[arg(long = "header", value_name = "'K: V'")]
    pub headers: Vec<String>,
    /// The command that starts a stdio MCP server, as one string, split as a shell would
    /// ('npx -y @modelcontextprotocol/server-everything stdio').
    #[arg(long = "mcp-stdio", value_name = "CMD")]
    pub stdio: Option<String>,
    /// How to authorize at a URL that asks for it (unless `--header` gives an
    /// `Authorization`).
    #[command(flatten)]
    pub oauth: OAuthArgs,
}

impl McpServer {
    /// The source of the server these arguments name. A URL's requests are authorized with
    /// OAuth when the server asks (see [`OAuthArgs`]), unless `--header` gives an
    /// `Authorization` of its own.
    ///
    /// # Errors
    ///
    /// A message for people when the arguments name no server, or name one badly.
    pub async fn source(&self) -> Result<Mcp, String> {
        match (&self.url, &self.stdio) {
            (Some(url), None) => {
                let url = url
                    .parse()
                    .map_err(|error| format!("--mcp-url is no URL: {error}"))?;
                let headers = headers(&self.headers)?;
                if headers.contains_key(reqwest::header::AUTHORIZATION) {
                    // Redirects only within the server's origin: a header never follows one
                    // elsewhere.
                    let client = toolkit_runtime::http::client_builder()
                        .default_headers(headers)
                        .build()
                        .map_err(|error| format!("the HTTP client could not be built: {error}"))?;
                    return Ok(Mcp::http("mcp", url, client));
                }
                Ok(Mcp::http("mcp", url.clone(), self.oauth.client(&url, headers).await?))
            }
            (None, Some(_)) if !self.headers.is_empty() => {
                Err("--header goes with --mcp-url; a stdio server takes its credentials from its environment".into())
            }
            (None, Some(command)) => {
                let words = shlex::split(command)
                    .ok_or("--mcp-stdio is not a command line (an unclosed quote?)")?;
                let (program, args) = words.split_first().ok_or("--mcp-stdio is empty")?;
                Ok(Mcp::stdio("mcp", StdioCommand::new(program).args(args)))
            }
            _ => Err("name one server: --mcp-url URL or --mcp-stdio 'CMD'".into()),
        }
    }
}

/// `'Name: value'` arguments as default headers; their values are marked sensitive, so that no
/// log shows them.
pub(crate) fn headers(arguments: &[String]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for argument in arguments {
        let (name, value) = argument
            .split_once(':')
            .ok_or_else(|| "a --header is 'Name: value'".to_owned())?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("--header {:?} has no valid header name", name.trim()))?;
        let mut value = HeaderValue::from_str(value.trim())
            .map_err(|_| format!("the value of --header {name} cannot be a header value"))?;
        value.set_sensitive(true);
        map.append(name, value);
    }
    Ok(map)
}

/// The arguments of `toolkit-gen snapshot`.
#[derive(Clone, Debug, clap::Args)]
pub struct SnapshotArgs {
    /// The server.
    #[command(flatten)]
    pub server: McpServer,
    /// Where to write the snapshot (stdout when left out).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The arguments of `toolkit-gen call` for an MCP server.
#[derive(Clone, Debug, clap::Args)]
pub struct CallArgs {
    /// The server.
    #[command(flatten)]
    pub server: McpServer,
    /// The tool, by the name the server lists it under.
    pub tool: String,
    /// The input, a JSON object (`{}` when left out).
    pub input: Option<String>,
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|error| format!("no async runtime: {error}"))
}

/// The snapshot of `server`, as pretty JSON.
///
/// # Errors
///
/// A message for people when the server cannot be listed.
pub async fn snapshot_text(server: &McpServer) -> Result<String, String> {
    let source = server.source().await?;
    let snapshot = source.snapshot().await.map_err(|error| error.to_string());
    source.close().await;
    let mut text = serde_json::to_string_pretty(&snapshot?).map_err(|error| error.to_string())?;
    text.push('\n');
    Ok(text)
}

/// Runs `toolkit-gen snapshot`.
pub fn snapshot(args: &SnapshotArgs) -> ExitCode {
    let text = match runtime().and_then(|runtime| runtime.block_on(snapshot_text(&args.server))) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("toolkit-gen: {message}");
            return ExitCode::FAILURE;
        }
    };
    match &args.output {
        None => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("toolkit-gen: cannot write {}: {error}", path.display());
                ExitCode::FAILURE
            }
        },
    }
}

fn failure(code: &str, message: &str, retryable: bool) -> Value {
    json!({"code": code, "message": message, "retryable": retryable})
}

/// What `toolkit-gen call` prints, and whether the call succeeded: the tool's result, or the
/// failure as `{code, message, retryable}` (what a model would read).
pub async fn call_outcome(server: &McpServer, tool: &str, input: Option<&str>) -> (Value, bool) {
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
            .map_err(|error| {
                toolkit_runtime::Failure::new("InvalidResponseError", error.to_string(), false)
            })?;
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

/// Runs `toolkit-gen call` for an MCP server.
pub fn call(args: &CallArgs) -> ExitCode {
    let (printed, succeeded) = match runtime() {
        Ok(runtime) => runtime.block_on(call_outcome(
            &args.server,
            &args.tool,
            args.input.as_deref(),
        )),
        Err(message) => (failure("UnknownError", &message, false), false),
    };
    println!("{printed}");
    if succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use futures_util::FutureExt as _;

    use super::*;

    fn scripted(dir: &std::path::Path) -> McpServer {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../toolkit-runtime-tests/tests/it/mcp/stdio_peer.py"
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
    async fn a_snapshot_holds_the_server_its_version_and_its_tools() {
        let dir = temp_dir("snapshot");
        let text = snapshot_text(&scripted(&dir)).await.unwrap();
        let snapshot: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            snapshot["server"],
            json!({"name": "stdio-peer", "version": "0.1"})
        );
        assert_eq!(snapshot["protocolVersion"], "2025-06-18");
        assert_eq!(snapshot["tools"][0]["name"], "echo");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_call_prints_the_result_or_the_failure() {
        let dir = temp_dir("call");
        let server = scripted(&dir);
        let (printed, ok) = call_outcome(&server, "echo", Some(r#"{"text": "hi"}"#)).await;
        assert!(ok);
        assert_eq!(printed, json!([{"type": "text", "text": "hi"}]));
        let (printed, ok) = call_outcome(&server, "echo", Some(r#"{"text": 5}"#)).await;
        assert!(!ok);
        assert_eq!(printed["code"], "InvalidInputError");
        let (printed, ok) = call_outcome(&server, "nope", None).await;
        assert!(!ok);
        assert_eq!(printed["code"], "NotFoundError");
        let (printed, ok) = call_outcome(&server, "echo", Some("{nope")).await;
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
        let (printed, ok) = call_outcome(&server, "echo", None).await;
        assert!(!ok);
        assert_eq!(printed["code"], "UnavailableError");
        assert_eq!(printed["retryable"], true);
        assert!(
            !printed.to_string().contains("secret-token")
                && !printed.to_string().contains("127.0.0.1")
        );
    }

    /// The subcommands as `cli.rs` wires them.
    #[derive(Debug, clap::Parser)]
    struct Wired {
        #[command(subcommand)]
        command: WiredCommand,
    }

    #[derive(Debug, clap::Subcommand)]
    enum WiredCommand {
        Snapshot(SnapshotArgs),
        Call(CallArgs),
    }

    #[test]
    fn the_arguments_parse_as_documented() {
        use clap::{CommandFactory as _, Parser as _};
        Wired::command().debug_assert();
        let parsed = Wired::try_parse_from([
            "toolkit-gen",
            "snapshot",
            "--mcp-url",
            "http://127.0.0.1:1/mcp",
            "--header",
            "Authorization: Bearer x",
            "-o",
            "tools.json",
        ])
        .unwrap();
        let WiredCommand::Snapshot(args) = parsed.command else {
            panic!()
        };
        assert_eq!(args.server.headers, ["Authorization: Bearer x"]);
        assert_eq!(
            args.output.as_deref(),
            Some(std::path::Path::new("tools.json"))
        );
        let parsed = Wired::try_parse_from([
            "toolkit-gen",
            "call",
            "--mcp-stdio",
            "node s.js",
            "echo",
            "{}",
        ])
        .unwrap();
        let WiredCommand::Call(args) = parsed.command else {
            panic!()
        };
        assert_eq!(
            (args.tool.as_str(), args.input.as_deref()),
            ("echo", Some("{}"))
        );
        // A URL and a command cannot both be given; a header needs a URL.
        assert!(
            Wired::try_parse_from([
                "toolkit-gen",
                "snapshot",
                "--mcp-stdio",
                "x",
                "--mcp-url",
                "http://a"
            ])
            .is_err()
        );
        let parsed = Wired::try_parse_from([
            "toolkit-gen",
            "snapshot",
            "--mcp-stdio",
            "x",
            "--header",
            "a: b",
        ])
        .unwrap();
        let WiredCommand::Snapshot(args) = parsed.command else {
            panic!()
        };
        assert!(args.server.source().now_or_never().unwrap().is_err());
    }

    #[test]
    fn bad_arguments_are_told() {
        assert!(
            McpServer::default()
                .source()
                .now_or_never()
                .unwrap()
                .is_err()
        );
        assert!(headers(&["no colon".into()]).is_err());
        assert!(headers(&["Bad Name: x".into()]).is_err());
        assert!(
            headers(&["X-Ok: fine".into()])
                .unwrap()
                .get("x-ok")
                .unwrap()
                .is_sensitive()
        );
        let unclosed = McpServer {
            stdio: Some("node 'x".into()),
            ..McpServer::default()
        };
        assert!(unclosed.source().now_or_never().unwrap().is_err());
    }
}
