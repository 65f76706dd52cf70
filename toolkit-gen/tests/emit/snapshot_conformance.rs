//! The generated source of an MCP snapshot (`golden/conformance.rs`, from
//! `fixtures/conformance.json`) runs the conformance suite against rmcp's server on 127.0.0.1,
//! behind a gateway that checks a token; and `verify` reports how the live server differs from
//! the snapshot.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use toolkit_gen::emit::{EmitOptions, SourceOptions, mcp_source};
use toolkit_gen::inputs::read_snapshot;
use toolkit_mcp::codegen::reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use toolkit_runtime::conformance::{self, ClosedPort, Fixture, State, Subject};
use toolkit_runtime::mcp::Aspect;
use toolkit_runtime::{BoxFuture, ToolSource};

use crate::common::here;
use crate::golden::check_golden;

/// The golden, compiled here.
#[allow(dead_code)]
mod generated {
    include!("golden/conformance.rs");
}

const SECRET: &str = "snapshot-conformance-2b7c";

#[test]
fn the_conformance_snapshot_source_matches_its_golden() {
    let definitions = read_snapshot(&here("fixtures/conformance.json")).unwrap();
    let module = mcp_source(
        "fixtures/conformance.json",
        &definitions,
        &SourceOptions::new("conformance"),
        &EmitOptions::default(),
    );
    check_golden("conformance", &module.code);
}

/// rmcp's server of the tools it is given: the three of the suite, and any other it lists
/// answering with its name and arguments.
#[derive(Clone)]
struct Server {
    tools: Arc<Vec<Value>>,
    blocking_ended: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("conformance", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({ "tools": *self.tools }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![ContentBlock::text(
                arguments["text"].as_str().unwrap_or_default().to_owned(),
            )]),
            "failing" => {
                CallToolResult::error(vec![ContentBlock::text("the tool failed on purpose")])
            }
            "blocking" => {
                let _ended = SetOnDrop(Arc::clone(&self.blocking_ended));
                tokio::select! {
                    () = context.ct.cancelled() => {}
                    () = tokio::time::sleep(Duration::from_secs(3600)) => {}
                }
                CallToolResult::success(vec![])
            }
            name if self.tools.iter().any(|tool| tool["name"] == name) => {
                CallToolResult::structured(json!({ "tool": name, "arguments": arguments }))
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown tool: {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

/// Answers every request with `status` when there is one, and refuses requests without the token.
async fn gateway(
    axum::extract::State(status): axum::extract::State<Option<u16>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let token = format!("Bearer {SECRET}");
    let refused = status.or_else(|| {
        let given = request.headers().get("authorization");
        (given.and_then(|v| v.to_str().ok()) != Some(token.as_str())).then_some(401)
    });
    match refused {
        None => next.run(request).await,
        Some(status) => axum::response::Response::builder()
            .status(status)
            .body(axum::body::Body::from("refused by the gateway"))
            .unwrap_or_default(),
    }
}

/// Stops the server when the check ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The server, serving `tools`, at `/mcp` on 127.0.0.1 behind the gateway.
async fn serve(
    tools: Vec<Value>,
    status: Option<u16>,
    blocking_ended: Arc<AtomicBool>,
) -> Result<(String, AbortOnDrop), String> {
    let server = Server {
        tools: Arc::new(tools),
        blocking_ended,
    };
    let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
    let service: StreamableHttpService<Server, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(status, gateway));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            router,
        )
        .await;
    });
    Ok((address.to_string(), AbortOnDrop(task)))
}

fn client() -> Result<toolkit_mcp::codegen::reqwest::Client, String> {
    let mut headers = HeaderMap::new();
    let mut token =
        HeaderValue::from_str(&format!("Bearer {SECRET}")).map_err(|e| e.to_string())?;
    token.set_sensitive(true);
    headers.insert(AUTHORIZATION, token);
    toolkit_mcp::codegen::reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .map_err(|e| e.to_string())
}

fn snapshot_tools() -> Vec<Value> {
    let text = std::fs::read_to_string(here("fixtures/conformance.json")).unwrap();
    let snapshot: Value = serde_json::from_str(&text).unwrap();
    snapshot["tools"].as_array().cloned().unwrap_or_default()
}

struct GeneratedSnapshot;

impl Fixture for GeneratedSnapshot {
    fn subject(&self) -> &str {
        "the MCP snapshot source generated by toolkit-gen (rmcp over Streamable HTTP)"
    }

    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
        Box::pin(async move {
            let blocking_ended = Arc::new(AtomicBool::new(false));
            let status = match state {
                State::Working | State::Unreachable => None,
                State::Unauthorized => Some(401),
                State::Unavailable => Some(503),
            };
            let (mut address, server) =
                serve(snapshot_tools(), status, Arc::clone(&blocking_ended)).await?;
            let mut system: Box<dyn std::any::Any + Send + Sync> = Box::new(server);
            if state == State::Unreachable {
                let closed = ClosedPort::new().map_err(|e| e.to_string())?;
                address = closed.address().to_string();
                system = Box::new(closed);
            }
            let url = format!("http://{address}/mcp")
                .parse()
                .map_err(|e| format!("{e}"))?;
            let source = generated::Conformance::http(url, client()?).map_err(|e| e.to_string())?;
            Ok(Subject {
                source: Arc::new(source),
                secret: SECRET.to_owned(),
                address,
                blocking_ended: Arc::new(move || blocking_ended.load(Ordering::SeqCst)),
                discover_asks_system: false,
                system,
            })
        })
    }
}

#[tokio::test]
async fn the_generated_snapshot_source_conforms() {
    conformance::run(&GeneratedSnapshot).await.assert_passed();
}

#[tokio::test]
async fn verify_reports_how_the_live_server_differs_and_added_tools_stay_callable() {
    let mut tools = snapshot_tools();
    // Since the snapshot: `failing` is gone, `echo` reads differently, `shout` is new.
    tools.retain(|tool| tool["name"] != "failing");
    tools[0]["description"] = json!("Echoes.");
    tools[0]["annotations"] = json!({ "readOnlyHint": false });
    tools.push(json!({
        "name": "shout",
        "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } }
    }));
    let (address, _server) = serve(tools, None, Arc::new(AtomicBool::new(false)))
        .await
        .unwrap();
    let url = format!("http://{address}/mcp").parse().unwrap();
    let source = generated::Conformance::http(url, client().unwrap()).unwrap();
    let drift = source.verify().await.unwrap();
    assert_eq!(drift.added.len(), 1);
    assert_eq!(drift.added[0].name(), "shout");
    assert_eq!(drift.removed, ["failing"]);
    assert_eq!(drift.changed.len(), 1);
    assert_eq!(drift.changed[0].name, "echo");
    assert_eq!(
        drift.changed[0].aspects,
        [Aspect::Description, Aspect::Hints]
    );
    assert_eq!(
        drift.to_string(),
        "+ shout\n- failing\n~ echo: description, hints"
    );
    // `discover` still reports the snapshot; the typed method runs as before.
    assert_eq!(ToolSource::discover(&source).await.unwrap().len(), 3);
    let echoed = source
        .echo(generated::EchoInput {
            text: "typed".to_owned(),
        })
        .await
        .unwrap();
    assert!(echoed.to_string().contains("typed"), "{echoed}");
    // A tool beyond the snapshot is called through the same source, by the name the server has.
    let input = json!({ "text": "hi" }).as_object().cloned().unwrap();
    let shouted = ToolSource::call(
        &source,
        "shout",
        input,
        &toolkit_runtime::CallContext::new(),
    )
    .await
    .unwrap();
    assert_eq!(shouted["tool"], "shout");
}
