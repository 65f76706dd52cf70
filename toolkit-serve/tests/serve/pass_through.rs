//! A served MCP source passes its server's results on as written: an upstream of the TypeScript
//! SDK (`content_peer.cjs`, sessions, SSE answers) behind our MCP source, served by `McpServer`
//! over Streamable HTTP, called by rmcp's client — content blocks of every kind, structured
//! content, `isError`, `_meta`, the output schema and title in `tools/list`, progress with the
//! client's own token and the upstream's values, and logs from the level the client set.

#![allow(deprecated)] // logging: deprecated by SEP-2577, still spoken by the session revisions

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, NumberOrString,
    ProgressNotificationParam, ProgressToken, RequestMetaObject, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolkit_core::{ToolSource, Toolkit, ToolkitOptions};
use toolkit_mcp::{Mcp, McpOptions};
use toolkit_serve::McpServer;

use super::serving::{Serving, upstream};
use crate::processes::Listening;

/// What the client heard besides answers.
#[derive(Debug)]
enum Heard {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

#[derive(Clone)]
struct Hearing(mpsc::UnboundedSender<Heard>);

impl ClientHandler for Hearing {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Progress(params));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Log(params));
    }
}

/// The upstream as a source, its tools under their own names, served.
async fn served(upstream: &Listening) -> Serving {
    let source = Arc::new(Mcp::http_with_options(
        "up",
        upstream.url("/mcp"),
        reqwest::Client::new(),
        McpOptions::default().timeout(Duration::from_secs(10)),
    ));
    let definitions = source.discover().await.unwrap();
    let toolkit =
        Toolkit::from_source(source, definitions, &ToolkitOptions::default()).expect("names");
    Serving::start(McpServer::new(toolkit).name("gateway")).await
}

async fn call(
    client: &RunningService<RoleClient, Hearing>,
    name: &'static str,
    meta: Option<RequestMetaObject>,
) -> Value {
    let mut params = CallToolRequestParams::new(name);
    params.meta = meta;
    serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap()
}

#[tokio::test]
async fn serve_pass_through_blocks_structure_errors_progress_and_logs() {
    let upstream = upstream().await;
    let serving = served(&upstream).await;
    let (sender, mut heard) = mpsc::unbounded_channel();
    let client = Hearing(sender)
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();

    // Listing: the output schema, the title and the 2020-12 input schema as written.
    let tools = client.list_all_tools().await.unwrap();
    let tools = serde_json::to_value(tools).unwrap();
    let tool = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    let structured = tool("test_structured_content");
    assert_eq!(
        structured["outputSchema"]["required"],
        json!(["temperature", "conditions"])
    );
    assert_eq!(structured["annotations"]["readOnlyHint"], true);
    let schema = tool("json_schema_2020_12_tool")["inputSchema"].clone();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema["$defs"]["address"].is_object());

    // Blocks of every kind, as the upstream wrote them (no JSON text of the blocks).
    let image = call(&client, "test_image_content", None).await;
    assert_eq!(image["content"][0]["type"], "image");
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    assert!(image.get("structuredContent").is_none(), "{image}");
    assert_eq!(image["content"].as_array().unwrap().len(), 1);
    let audio = call(&client, "test_audio_content", None).await;
    assert_eq!(audio["content"][0]["type"], "audio");
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    let embedded = call(&client, "test_embedded_resource", None).await;
    assert_eq!(
        embedded["content"][0],
        json!({
            "type": "resource",
            "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."},
            "annotations": {"audience": ["user"], "priority": 0.5}
        })
    );
    let link = call(&client, "test_resource_link", None).await;
    assert_eq!(
        link["content"][0],
        json!({"type": "resource_link", "uri": "test://linked", "name": "Linked", "mimeType": "text/plain", "_meta": {"example.com/kept": 1}})
    );
    let mixed = call(&client, "test_multiple_content_types", None).await;
    let kinds: Vec<&str> = mixed["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);

    // Structured content and the result's _meta, kept.
    let weather = call(&client, "test_structured_content", None).await;
    assert_eq!(
        weather["structuredContent"],
        json!({"temperature": 22.5, "conditions": "Sunny"})
    );
    assert_eq!(weather["_meta"]["example.com/source"], "content_peer");

    // isError: a result, not a JSON-RPC error, the tool's words first.
    let failed = call(&client, "test_error_handling", None).await;
    assert_eq!(failed["isError"], true);
    assert_eq!(
        failed["content"][0]["text"],
        "This tool intentionally returns an error for testing"
    );

    // Progress: the client's token (rmcp's client makes its request id the token), the
    // upstream's values, before the answer.
    let token = ProgressToken(NumberOrString::Number(7));
    let answered = call(
        &client,
        "test_tool_with_progress",
        Some(RequestMetaObject::with_progress_token(token.clone())),
    )
    .await;
    assert!(answered["content"][0]["text"].is_string(), "{answered}");
    let mut progress = Vec::new();
    let mut tokens = Vec::new();
    while let Ok(Heard::Progress(note)) = heard.try_recv() {
        tokens.push(note.progress_token);
        progress.push((note.progress, note.total, note.message));
    }
    tokens.dedup();
    assert_eq!(tokens.len(), 1, "one token: {tokens:?}");
    assert_eq!(
        progress,
        [0.0, 50.0, 100.0].map(|step| (
            step,
            Some(100.0),
            Some(format!("Completed step {step} of 100"))
        ))
    );

    // Logs: every one until the client sets a level; from then on, none below it.
    let _ = call(&client, "test_tool_with_logging", None).await;
    let logs = drain_logs(&mut heard);
    assert_eq!(logs.len(), 4, "{logs:?}");
    assert_eq!(logs[0].data, "Tool execution started");
    assert_eq!(logs[3].logger.as_deref(), Some("peer"));
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    let _ = call(&client, "test_tool_with_logging", None).await;
    let logs = drain_logs(&mut heard);
    assert_eq!(logs.len(), 3, "{logs:?}");
    assert!(logs.iter().all(|log| log.level == LoggingLevel::Info));

    client.cancel().await.unwrap();
    serving.stop().await.unwrap();
}

/// The logs heard by now (they came before the answers that were awaited).
fn drain_logs(heard: &mut mpsc::UnboundedReceiver<Heard>) -> Vec<LoggingMessageNotificationParam> {
    let mut logs = Vec::new();
    while let Ok(note) = heard.try_recv() {
        if let Heard::Log(log) = note {
            logs.push(log);
        }
    }
    logs
}

#[tokio::test]
async fn serve_pass_through_a_call_without_arguments() {
    // No `arguments` at all: forwarded as an empty object, the text block as written (not the
    // JSON text of the blocks).
    let upstream = upstream().await;
    let serving = served(&upstream).await;
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();
    let text = client
        .call_tool(CallToolRequestParams::new("test_simple_text"))
        .await
        .unwrap();
    let text = serde_json::to_value(text).unwrap();
    assert_eq!(
        text["content"],
        json!([{"type": "text", "text": "This is a simple text response for testing."}])
    );
    tokio::time::timeout(Duration::from_secs(5), client.cancel())
        .await
        .unwrap()
        .unwrap();
    serving.stop().await.unwrap();
}
