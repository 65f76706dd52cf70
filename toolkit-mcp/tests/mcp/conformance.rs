//! The conformance suites (the runtime's, feature `conformance`) over the MCP source: rmcp's server stateless and
//! with sessions over Streamable HTTP (behind a gateway that checks a token), and over stdio.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use toolkit_core::BoxFuture;
use toolkit_mcp::Mcp;
use toolkit_runtime::conformance::{self, Check, ClosedPort, Fixture, State, Subject};

use super::quick;
use super::rmcp_peer::{Guard, Peer, serve_guarded};

const SECRET: &str = "mcp-conformance-token-5d1e";

/// A client that carries the token, as a host builds it.
fn client_with_token() -> Result<reqwest::Client, String> {
    let mut headers = HeaderMap::new();
    let token = HeaderValue::from_str(&format!("Bearer {SECRET}")).map_err(|e| e.to_string())?;
    headers.insert(AUTHORIZATION, token);
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .map_err(|e| e.to_string())
}

struct Http {
    subject: &'static str,
    sessions: bool,
}

impl Fixture for Http {
    fn subject(&self) -> &str {
        self.subject
    }

    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
        Box::pin(async move {
            let peer = Peer::standard();
            let dropped = peer.dropped.clone();
            let guard = match state {
                State::Working | State::Unreachable => Guard::Token(SECRET.into()),
                State::Unauthorized => Guard::Status(401),
                State::Unavailable => Guard::Status(503),
            };
            let server = serve_guarded(
                peer,
                self.sessions,
                false,
                "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?,
                guard,
            )
            .await;
            let (url, address, system): (
                reqwest::Url,
                String,
                Box<dyn std::any::Any + Send + Sync>,
            ) = if state == State::Unreachable {
                // Nothing listens there, and nothing can start to while the check runs.
                drop(server);
                let closed = ClosedPort::new().map_err(|e| e.to_string())?;
                let address = closed.address().to_string();
                let url = format!("http://{address}/mcp")
                    .parse()
                    .map_err(|e| format!("{e}"))?;
                (url, address, Box::new(closed))
            } else {
                (
                    server.url.clone(),
                    server.address.to_string(),
                    Box::new(server),
                )
            };
            let client = client_with_token()?;
            Ok(Subject {
                source: Arc::new(Mcp::http_with_options("rmcp", url, client, quick())),
                secret: SECRET.into(),
                address,
                blocking_ended: Arc::new(move || dropped.load(Ordering::SeqCst) > 0),
                discover_asks_system: true,
                system,
            })
        })
    }
}

#[tokio::test]
async fn mcp_conformance_streamable_http_stateless() {
    let fixture = Http {
        subject: "MCP over Streamable HTTP, stateless (rmcp)",
        sessions: false,
    };
    conformance::run(&fixture).await.assert_passed();
}

#[tokio::test]
async fn mcp_conformance_streamable_http_sessions() {
    let fixture = Http {
        subject: "MCP over Streamable HTTP, sessions (rmcp)",
        sessions: true,
    };
    conformance::run(&fixture).await.assert_passed();
}

/// rmcp's server over stdio. A process has no credentials to refuse: `Unauthorized` and
/// `Unavailable` are both a server that exits at once, and the check of refused credentials is
/// not run.
struct Stdio;

impl Fixture for Stdio {
    fn subject(&self) -> &str {
        "MCP over stdio (rmcp)"
    }

    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
        Box::pin(async move {
            use super::processes::rmcp_stdio_peer;
            use toolkit_mcp::StdioCommand;
            static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = COUNT.fetch_add(1, Ordering::SeqCst);
            let dropped_file = std::env::temp_dir().join(format!(
                "toolkit-mcp-conformance-{}-{n}",
                std::process::id()
            ));
            let _ = std::fs::remove_file(&dropped_file);
            let program = match state {
                State::Working => rmcp_stdio_peer().display().to_string(),
                State::Unauthorized | State::Unavailable => "/usr/bin/false".to_owned(),
                State::Unreachable => "/nonexistent/mcp-server".to_owned(),
            };
            let command = StdioCommand::new(&program).env("RMCP_PEER_DROPPED_FILE", &dropped_file);
            let ended = dropped_file.clone();
            Ok(Subject {
                source: Arc::new(Mcp::stdio_with_options("rmcp", command, quick())),
                secret: String::new(),
                address: program,
                blocking_ended: Arc::new(move || ended.exists()),
                discover_asks_system: true,
                system: Box::new(()),
            })
        })
    }
}

#[tokio::test]
async fn mcp_conformance_stdio() {
    let checks: Vec<Check> = Check::ALL
        .iter()
        .copied()
        .filter(|check| *check != Check::RefusedCredentialsAreAuthentication)
        .collect();
    conformance::run_checks(&Stdio, &checks)
        .await
        .assert_passed();
}

/// The TypeScript SDK's server (npm), which checks the token itself, over Streamable HTTP with
/// sessions or over the old HTTP+SSE transport.
struct TypeScript {
    subject: &'static str,
    transport: &'static str,
    path: &'static str,
}

impl Fixture for TypeScript {
    fn subject(&self) -> &str {
        self.subject
    }

    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
        Box::pin(async move {
            use super::processes::{free_port, installed, listening, script};
            static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = COUNT.fetch_add(1, Ordering::SeqCst);
            let ended = std::env::temp_dir()
                .join(format!("toolkit-ts-conformance-{}-{n}", std::process::id()));
            let _ = std::fs::remove_file(&ended);
            let port = free_port();
            let mode = match state {
                State::Working | State::Unreachable => "working",
                State::Unauthorized => "unauthorized",
                State::Unavailable => "unavailable",
            };
            let mut command = tokio::process::Command::new("node");
            command
                .env("NODE_PATH", installed("mcp-npm/node_modules"))
                .arg(script("ts_conformance_peer.cjs"))
                .arg(port.to_string())
                .arg(self.transport)
                .arg(mode)
                .arg(SECRET)
                .arg(&ended);
            let (url, address, system): (
                reqwest::Url,
                String,
                Box<dyn std::any::Any + Send + Sync>,
            ) = if state == State::Unreachable {
                let closed = ClosedPort::new().map_err(|e| e.to_string())?;
                let address = closed.address().to_string();
                let url = format!("http://{address}{}", self.path)
                    .parse()
                    .map_err(|e| format!("{e}"))?;
                (url, address, Box::new(closed))
            } else {
                let server = listening(command, port, "the TypeScript conformance peer").await;
                (
                    server.url(self.path),
                    format!("127.0.0.1:{port}"),
                    Box::new(server),
                )
            };
            let client = client_with_token()?;
            Ok(Subject {
                source: Arc::new(Mcp::http_with_options("ts", url, client, quick())),
                secret: SECRET.into(),
                address,
                blocking_ended: Arc::new(move || ended.exists()),
                discover_asks_system: true,
                system,
            })
        })
    }
}

#[tokio::test]
async fn mcp_conformance_typescript_sdk_sessions() {
    let fixture = TypeScript {
        subject: "MCP over Streamable HTTP, sessions (TypeScript SDK)",
        transport: "sessions",
        path: "/mcp",
    };
    conformance::run(&fixture).await.assert_passed();
}

#[tokio::test]
async fn mcp_conformance_old_http_sse_transport() {
    let fixture = TypeScript {
        subject: "MCP over the old HTTP+SSE transport (TypeScript SDK)",
        transport: "sse",
        path: "/sse",
    };
    conformance::run(&fixture).await.assert_passed();
}
