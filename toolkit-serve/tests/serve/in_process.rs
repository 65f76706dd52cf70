//! The server driven in-process by the harness: what is listed and called, exactly.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::{
    Assembly, Decision, FnSource, FnTool, Member, Toolkit, ToolkitOptions, definition::Annotations,
};
use toolkit_serve::McpServer;
use toolkit_serve::testing::{HarnessError, InProcessClient};

use super::demo::{self, Nothing};
use crate::support::{ADDRESS, Scripted};

async fn client() -> InProcessClient {
    let mut client = InProcessClient::start(McpServer::new(demo::toolkit()).name("demo"));
    let initialized = client.initialize().await.unwrap();
    assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
    client
}

fn tool<'a>(listed: &'a Value, name: &str) -> &'a Value {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {listed}"))
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn serve_initialize_advertises_tools_that_change() {
    let mut client = InProcessClient::start(
        McpServer::new(demo::toolkit())
            .name("demo")
            .version("9.9.9")
            .instructions("Be brief."),
    );
    let initialized = client.initialize().await.unwrap();
    let result = &initialized["result"];
    assert_eq!(
        result["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    assert_eq!(
        result["serverInfo"],
        json!({"name": "demo", "version": "9.9.9"})
    );
    assert_eq!(result["instructions"], "Be brief.");
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_lists_every_tool_exactly() {
    let mut client = client().await;
    let listed = client.list_tools().await.unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["echo", "add", "find_thing", "explode", "wipe", "nothing"]
    );
    assert_eq!(
        tool(&listed, "echo"),
        &json!({
            "name": "echo",
            "description": "Answers with the text it is given.",
            "inputSchema": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"text": {"type": "string", "description": "The text to answer with."}},
                "required": ["text"],
                "description": "Answers with the text it is given."
            },
            "annotations": {"title": "Echo", "readOnlyHint": true, "openWorldHint": false}
        })
    );
    // No hint given: no annotations served (the client applies the spec's defaults); no output
    // schema given (a hand-written tool has none), none served. A definition that has one
    // serves it: `mcp::definitions`.
    assert!(tool(&listed, "find_thing").get("annotations").is_none());
    assert!(tool(&listed, "find_thing").get("outputSchema").is_none());
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_tool_that_needs_approval_is_served_destructive_and_runs_when_called() {
    let mut client = client().await;
    let listed = client.list_tools().await.unwrap();
    // Its source says read-only and not destructive; approval overrides both for the client.
    assert_eq!(
        tool(&listed, "wipe")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true})
    );
    let called = client.call("wipe", json!({})).await.unwrap();
    assert_eq!(called["isError"], false);
    assert_eq!(text(&called), "wiped");
    client.close().await.unwrap();
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Path {
    path: String,
}

#[tokio::test]
async fn serve_annotations_follow_the_policy_and_blocked_tools_are_absent() {
    let files = FnSource::builder("files")
        .tool(FnTool::new("read", |input: Path| async move { Ok(input.path) }).read_only())
        .tool(
            FnTool::new("write", |_: Path| async move { Ok("written") }).annotations(Annotations {
                destructive: Some(false),
                idempotent: Some(true),
                ..Annotations::default()
            }),
        )
        .tool(FnTool::new(
            "delete",
            |_: Path| async move { Ok("deleted") },
        ))
        .build()
        .unwrap();
    let definitions = files.definitions();
    let members = [Member::new(Arc::new(files), definitions)];
    let toolkit = Assembly::new()
        .toolkit(&members, |_, definition| match definition.name() {
            "read" => Decision::Allow,
            "write" => Decision::Approve,
            _ => Decision::Block,
        })
        .unwrap();
    let mut client = InProcessClient::start(McpServer::new(toolkit));
    client.initialize().await.unwrap();
    let listed = client.list_tools().await.unwrap();
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2, "{listed}");
    assert_eq!(
        tool(&listed, "files__read")["annotations"],
        json!({"readOnlyHint": true})
    );
    assert_eq!(
        tool(&listed, "files__write")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true})
    );
    let blocked = client
        .call("files__delete", json!({"path": "/"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&blocked, HarnessError::Rpc(error) if error["code"] == -32602),
        "{blocked}"
    );
    // The approved tool runs when the client calls it (the client asked its person).
    let written = client
        .call("files__write", json!({"path": "/a"}))
        .await
        .unwrap();
    assert_eq!(text(&written), "written");
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_call_answers_text_and_structured_content() {
    let mut client = client().await;
    let added = client.call("add", json!({"a": 1, "b": 2.5})).await.unwrap();
    assert_eq!(
        added,
        json!({
            "content": [{"type": "text", "text": "{\"sum\":3.5}"}],
            "structuredContent": {"sum": 3.5},
            "isError": false
        })
    );
    // A string is its own text; before 2026-07-28 structured content must be an object.
    let echoed = client.call("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(
        echoed,
        json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
    );
    let nothing = client.call("nothing", json!({})).await.unwrap();
    assert_eq!(
        nothing,
        json!({"content": [{"type": "text", "text": "null"}], "isError": false})
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_the_stateless_revision_needs_no_initialize() {
    let mut client = InProcessClient::stateless(McpServer::new(demo::toolkit()));
    let discovered = client.request("server/discover", json!({})).await.unwrap();
    let versions = discovered["result"]["supportedVersions"]
        .as_array()
        .unwrap();
    assert!(versions.contains(&json!("2026-07-28")), "{discovered}");
    assert!(versions.contains(&json!("2025-11-25")), "{discovered}");
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed["resultType"], "complete");
    assert_eq!(listed["tools"].as_array().unwrap().len(), 6);
    let echoed = client.call("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(
        echoed,
        json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "hi"}],
            "structuredContent": "hi",
            "isError": false
        })
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_bad_input_is_refused_before_the_handler_naming_every_problem() {
    let mut client = client().await;
    let refused = client
        .call("add", json!({"a": "one", "c": 3}))
        .await
        .unwrap();
    assert_eq!(refused["isError"], true);
    let report = text(&refused);
    assert!(
        report.starts_with("Invalid parameters for tool 'add':"),
        "{report}"
    );
    assert!(report.contains("unknown property \"c\""), "{report}");
    assert!(
        report.contains("missing required property \"b\""),
        "{report}"
    );
    assert!(
        report.contains("expected number, got a string at /a"),
        "{report}"
    );
    assert!(
        report.ends_with("Accepted params at the root: a, b."),
        "{report}"
    );
    let none = client.call("nothing", json!({"x": 1})).await.unwrap();
    assert!(
        text(&none).ends_with("This tool accepts no params."),
        "{none}"
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_panicking_tool_is_a_result_and_serving_goes_on() {
    let mut client = client().await;
    let exploded = client.call("explode", json!({})).await.unwrap();
    assert_eq!(
        exploded,
        json!({"content": [{"type": "text", "text": "The source failed."}], "isError": true})
    );
    let echoed = client
        .call("echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "still here");
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_failure_folds_its_remediation_and_cuts_the_echo() {
    let mut client = client().await;
    let missing = client
        .call("find_thing", json!({"id": "missing-id"}))
        .await
        .unwrap();
    assert_eq!(missing["isError"], true);
    assert_eq!(
        text(&missing),
        "No thing \"missing-id\". List the ids first. Try list_things."
    );
    let long_id = "😀".repeat(150);
    let cut = client
        .call("find_thing", json!({"id": long_id}))
        .await
        .unwrap();
    let expected = format!(
        "No thing \"{}…\". List the ids first. Try list_things.",
        "😀".repeat(100)
    );
    assert_eq!(text(&cut), expected);
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_an_unknown_tool_is_a_protocol_error_with_its_name_cut() {
    let mut client = client().await;
    let name = "x".repeat(1_000);
    let error = client.call(&name, json!({})).await.unwrap_err();
    let HarnessError::Rpc(error) = error else {
        panic!("{error}")
    };
    assert_eq!(error["code"], -32602);
    let message = error["message"].as_str().unwrap();
    assert_eq!(message, format!("Unknown tool: {}…", "x".repeat(200)));
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_failing_source_never_shows_its_address() {
    let source = Scripted::new("inner");
    let toolkit =
        Toolkit::from_source(source, Scripted::definitions(), &ToolkitOptions::default()).unwrap();
    let mut client = InProcessClient::start(McpServer::new(toolkit));
    client.initialize().await.unwrap();
    for name in ["down", "denied", "fail", "panic", "panic_now"] {
        let result = client.call(name, json!({})).await.unwrap();
        assert_eq!(result["isError"], true, "{name}: {result}");
        let shown = result.to_string();
        assert!(!shown.contains("10.1.2.3"), "{name}: {shown}");
        assert!(!shown.contains(ADDRESS), "{name}: {shown}");
    }
    let echoed = client.call("echo", json!({"k": 1})).await.unwrap();
    assert_eq!(echoed["structuredContent"], json!({"k": 1}));
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_replace_swaps_the_toolkit_and_tells_a_session_client() {
    let server = McpServer::new(demo::toolkit());
    let handle = server.toolkit_handle();
    let mut client = InProcessClient::start(server);
    client.initialize().await.unwrap();
    assert_eq!(
        client.list_tools().await.unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        6
    );

    let smaller = FnSource::builder("s")
        .tool(FnTool::new("only", |_: Nothing| async {
            Ok("the only tool")
        }))
        .build()
        .unwrap();
    let definitions = smaller.definitions();
    handle.replace(
        Toolkit::from_source(Arc::new(smaller), definitions, &ToolkitOptions::default()).unwrap(),
    );
    let notified = client.next_message().await.unwrap();
    assert_eq!(
        notified,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed["tools"][0]["name"], "only");
    assert_eq!(listed["tools"].as_array().unwrap().len(), 1);
    assert_eq!(handle.current().len(), 1);
    let called = client.call("only", json!({})).await.unwrap();
    assert_eq!(text(&called), "the only tool");
    let gone = client.call("echo", json!({"text": "x"})).await.unwrap_err();
    assert!(matches!(gone, HarnessError::Rpc(_)), "{gone}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_replace_tells_a_stateless_client_that_listens() {
    let server = McpServer::new(demo::toolkit());
    let handle = server.toolkit_handle();
    let mut client = InProcessClient::stateless(server);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    client
        .send(&json!({
            "jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}
        }))
        .await
        .unwrap();
    let acknowledged = client.next_message().await.unwrap();
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    handle.replace(Toolkit::default());
    let notified = client.next_message().await.unwrap();
    assert_eq!(
        notified["method"], "notifications/tools/list_changed",
        "{notified}"
    );
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed["tools"], json!([]));
}

#[tokio::test]
async fn serve_lines_the_server_cannot_use_are_answered_in_process() {
    let mut client = client().await;
    client
        .send_raw(
            b"not json\n[1,2]\n  \n{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/list\"}\n",
        )
        .await
        .unwrap();
    assert_eq!(
        client.next_message().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
    );
    assert_eq!(
        client.next_message().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}})
    );
    let listed = client.next_message().await.unwrap();
    assert_eq!(listed["id"], 41);
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 6);
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_notification_before_initialize_does_not_stop_the_server() {
    let mut client = InProcessClient::start(McpServer::new(demo::toolkit()));
    client
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .unwrap();
    client
        .send(&json!({"jsonrpc": "2.0", "id": 5, "result": {}}))
        .await
        .unwrap();
    let initialized = client.initialize().await.unwrap();
    assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        client.list_tools().await.unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_two_servers_in_one_process_share_nothing() {
    let other = FnSource::builder("other")
        .tool(FnTool::new("other_tool", |_: Nothing| async {
            Ok("other")
        }))
        .build()
        .unwrap();
    let definitions = other.definitions();
    let other =
        Toolkit::from_source(Arc::new(other), definitions, &ToolkitOptions::default()).unwrap();
    let first = McpServer::new(demo::toolkit()).name("first");
    let first_handle = first.toolkit_handle();
    let mut first = InProcessClient::start(first);
    let mut second = InProcessClient::start(McpServer::new(other).name("second"));
    let one = first.initialize().await.unwrap();
    let two = second.initialize().await.unwrap();
    assert_eq!(one["result"]["serverInfo"]["name"], "first");
    assert_eq!(two["result"]["serverInfo"]["name"], "second");
    assert_eq!(
        first.list_tools().await.unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert_eq!(
        second.list_tools().await.unwrap()["tools"][0]["name"],
        "other_tool"
    );
    // Replacing one server's toolkit leaves the other's alone, and tells only its own client.
    first_handle.replace(Toolkit::default());
    assert_eq!(
        first.next_message().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(
        second.list_tools().await.unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(second.take_seen().is_empty());
    first.close().await.unwrap();
    second.close().await.unwrap();
}

#[tokio::test]
async fn serve_the_harness_gives_up_after_its_timeout() {
    let mut client =
        InProcessClient::start(McpServer::new(demo::toolkit())).timeout(Duration::from_millis(200));
    client.initialize().await.unwrap();
    // A notification gets no answer: waiting for one ends at the timeout.
    client
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .unwrap();
    let waited = client.next_message().await.unwrap_err();
    assert!(matches!(waited, HarnessError::Timeout), "{waited}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_client_that_does_not_read_holds_the_server_back_and_loses_nothing() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    const LINES: usize = 60_000;
    let (client, served) = tokio::io::duplex(64 * 1024);
    let (served_in, served_out) = tokio::io::split(served);
    let serving = tokio::spawn(McpServer::new(demo::toolkit()).serve_io(served_in, served_out));
    let (reader, mut writer) = tokio::io::split(client);
    // About 5 MB of replies, far more than the pipe and the server's output queue hold.
    let writing = tokio::spawn(async move {
        writer
            .write_all(&b"not json\n".repeat(LINES))
            .await
            .unwrap();
        writer
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}\n")
            .await
            .unwrap();
        writer.shutdown().await.unwrap();
    });
    // Nobody reads the replies: the server stops reading, so the writer cannot finish.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!writing.is_finished());
    // Once the client reads, every reply comes, in order, and nothing is lost.
    let mut lines = tokio::io::BufReader::new(reader).lines();
    let mut replies = 0;
    while let Some(line) = lines.next_line().await.unwrap() {
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == "last" {
            break;
        }
        assert_eq!(message["error"]["code"], -32700, "{message}");
        replies += 1;
    }
    assert_eq!(replies, LINES);
    writing.await.unwrap();
    serving.await.unwrap().unwrap();
}

#[tokio::test]
async fn serve_the_line_cap_can_be_lowered_and_is_answered_once() {
    use toolkit_serve::stdin_guard::StdinGuardOptions;
    let server = McpServer::new(demo::toolkit())
        .stdin_guard(StdinGuardOptions::default().max_line_utf16(200));
    let mut client = InProcessClient::start(server);
    client.initialize().await.unwrap();
    let mut long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{}\"}}}}}}\n",
        "x".repeat(500)
    );
    long.push_str("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n");
    client.send_raw(long.as_bytes()).await.unwrap();
    assert_eq!(
        client.next_message().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
    );
    assert_eq!(
        client.next_message().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 8, "result": {}})
    );
    client.close().await.unwrap();
}

#[test]
fn serve_replace_outside_a_runtime_still_takes_effect() {
    let server = McpServer::new(demo::toolkit());
    let handle = server.toolkit_handle();
    assert_eq!(handle.current().len(), 6);
    handle.replace(Toolkit::default());
    assert!(handle.current().is_empty());
    assert!(server.toolkit_handle().current().is_empty());
}

#[tokio::test]
async fn serve_a_call_the_client_cancels_stops_the_tool() {
    use std::sync::atomic::Ordering;
    let source = Scripted::new("inner");
    let toolkit = Toolkit::from_source(
        source.clone(),
        Scripted::definitions(),
        &ToolkitOptions::default(),
    )
    .unwrap();
    let mut client = InProcessClient::start(McpServer::new(toolkit));
    client.initialize().await.unwrap();
    client
        .send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "block", "arguments": {}}}))
        .await
        .unwrap();
    for _ in 0..500 {
        if source.started.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(source.started.load(Ordering::SeqCst));
    assert!(!source.dropped.load(Ordering::SeqCst));
    client
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "no longer needed"}}))
        .await
        .unwrap();
    for _ in 0..500 {
        if source.dropped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        source.dropped.load(Ordering::SeqCst),
        "the tool's work was not stopped"
    );
    // Serving goes on.
    let echoed = client.call("echo", json!({"k": 2})).await.unwrap();
    assert_eq!(echoed["structuredContent"], json!({"k": 2}));
    client.close().await.unwrap();
}

/// A host's resources that serve nothing but subscriptions: what it was asked to subscribe to
/// and unsubscribe from, the updates it tells (`updates`), and the changes of its lists
/// (`lists`).
#[derive(Debug)]
struct Subscribable {
    updates: tokio::sync::broadcast::Sender<String>,
    lists: tokio::sync::broadcast::Sender<toolkit_serve::ListChanged>,
    asked: std::sync::Mutex<Vec<String>>,
}

impl Subscribable {
    fn new() -> Self {
        Self {
            updates: tokio::sync::broadcast::channel(16).0,
            lists: tokio::sync::broadcast::channel(16).0,
            asked: std::sync::Mutex::default(),
        }
    }

    /// Waits (bounded) until `listeners` wait for the changes of the lists.
    async fn listened(&self, listeners: usize) {
        for _ in 0..200 {
            if self.lists.receiver_count() >= listeners {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("nobody listens for the lists' changes");
    }
}

impl toolkit_serve::Resources for Subscribable {
    fn offer(&self) -> toolkit_serve::Offer {
        toolkit_serve::Offer::none()
            .with_resources(true)
            .with_prompts()
            .with_list_changed(true, true)
    }
    fn list_resources(
        &self,
    ) -> toolkit_core::BoxFuture<'_, Result<Vec<Value>, toolkit_serve::Refusal>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn list_resource_templates(
        &self,
    ) -> toolkit_core::BoxFuture<'_, Result<Vec<Value>, toolkit_serve::Refusal>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn read_resource<'a>(
        &'a self,
        uri: &'a str,
    ) -> toolkit_core::BoxFuture<'a, Result<toolkit_core::JsonObject, toolkit_serve::Refusal>> {
        Box::pin(async move { Err(toolkit_serve::Refusal::NotFound(uri.to_owned())) })
    }
    fn subscribe<'a>(
        &'a self,
        uri: &'a str,
    ) -> toolkit_core::BoxFuture<'a, Result<(), toolkit_serve::Refusal>> {
        self.asked.lock().unwrap().push(format!("subscribe {uri}"));
        Box::pin(async { Ok(()) })
    }
    fn unsubscribe<'a>(
        &'a self,
        uri: &'a str,
    ) -> toolkit_core::BoxFuture<'a, Result<(), toolkit_serve::Refusal>> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("unsubscribe {uri}"));
        Box::pin(async { Ok(()) })
    }
    fn list_prompts(
        &self,
    ) -> toolkit_core::BoxFuture<'_, Result<Vec<Value>, toolkit_serve::Refusal>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        _arguments: toolkit_core::JsonObject,
    ) -> toolkit_core::BoxFuture<'a, Result<toolkit_core::JsonObject, toolkit_serve::Refusal>> {
        Box::pin(async move { Err(toolkit_serve::Refusal::NotFound(name.to_owned())) })
    }
    fn complete(
        &self,
        _params: toolkit_core::JsonObject,
    ) -> toolkit_core::BoxFuture<'_, Result<toolkit_core::JsonObject, toolkit_serve::Refusal>> {
        Box::pin(async { Err(toolkit_serve::Refusal::Unsupported("no".into())) })
    }
    fn updated(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        Some(self.updates.subscribe())
    }
    fn list_changed(&self) -> Option<tokio::sync::broadcast::Receiver<toolkit_serve::ListChanged>> {
        Some(self.lists.subscribe())
    }
}

#[tokio::test]
async fn serve_a_hosts_list_changes_are_told_to_a_session_client_and_a_listening_one() {
    use toolkit_serve::ListChanged;

    let host = Arc::new(Subscribable::new());
    let mut session =
        InProcessClient::start(McpServer::new(demo::toolkit()).resources(host.clone()));
    let initialized = session.initialize().await.unwrap();
    let capabilities = &initialized["result"]["capabilities"];
    assert_eq!(
        capabilities["resources"]["listChanged"], true,
        "{capabilities}"
    );
    assert_eq!(
        capabilities["prompts"]["listChanged"], true,
        "{capabilities}"
    );
    host.listened(1).await;
    host.lists.send(ListChanged::Prompts).unwrap();
    let notified = session.next_message().await.unwrap();
    assert_eq!(
        notified["method"], "notifications/prompts/list_changed",
        "{notified}"
    );
    host.lists.send(ListChanged::Resources).unwrap();
    let notified = session.next_message().await.unwrap();
    assert_eq!(
        notified["method"], "notifications/resources/list_changed",
        "{notified}"
    );
    session.close().await.unwrap();

    let mut listening =
        InProcessClient::stateless(McpServer::new(demo::toolkit()).resources(host.clone()));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    listening
        .send(&json!({
            "jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
            "params": {"notifications": {"resourcesListChanged": true}, "_meta": meta}
        }))
        .await
        .unwrap();
    let acknowledged = listening.next_message().await.unwrap();
    assert_eq!(
        acknowledged["params"]["notifications"]["resourcesListChanged"], true,
        "{acknowledged}"
    );
    host.listened(1).await;
    // Prompts were not asked for: only the resources' change is told.
    host.lists.send(ListChanged::Prompts).unwrap();
    host.lists.send(ListChanged::Resources).unwrap();
    let notified = listening.next_message().await.unwrap();
    assert_eq!(
        notified["method"], "notifications/resources/list_changed",
        "{notified}"
    );
}

#[tokio::test]
async fn serve_a_client_that_says_initialized_twice_hears_each_change_once() {
    use toolkit_serve::ListChanged;

    let host = Arc::new(Subscribable::new());
    let server = McpServer::new(demo::toolkit()).resources(host.clone());
    let handle = server.toolkit_handle();
    let mut session = InProcessClient::start(server);
    session.initialize().await.unwrap();
    session
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .unwrap();
    // A ping answered: the second `initialized` was read before it.
    session
        .send(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}))
        .await
        .unwrap();
    assert_eq!(session.next_message().await.unwrap()["id"], "ping");
    host.listened(1).await;
    assert_eq!(
        host.lists.receiver_count(),
        1,
        "one listener for one session"
    );
    host.lists.send(ListChanged::Prompts).unwrap();
    handle.replace(Toolkit::default());
    // Every message until a ping's answer, asked once both changes were told.
    let mut told = vec![
        session.next_message().await.unwrap(),
        session.next_message().await.unwrap(),
    ];
    session
        .send(&json!({"jsonrpc": "2.0", "id": "after", "method": "ping"}))
        .await
        .unwrap();
    loop {
        let message = session.next_message().await.unwrap();
        if message["id"] == "after" {
            break;
        }
        told.push(message);
    }
    let mut methods: Vec<&str> = told.iter().filter_map(|m| m["method"].as_str()).collect();
    methods.sort_unstable();
    assert_eq!(
        methods,
        [
            "notifications/prompts/list_changed",
            "notifications/tools/list_changed"
        ],
        "{told:?}"
    );
    session.close().await.unwrap();
}

#[tokio::test]
async fn serve_a_stateless_client_that_listens_for_a_resource_hears_its_updates_only() {
    let host = Arc::new(Subscribable::new());
    let server = McpServer::new(demo::toolkit()).resources(host.clone());
    let mut client = InProcessClient::stateless(server);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    client
        .send(&json!({
            "jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": ["demo://a"]}, "_meta": meta}
        }))
        .await
        .unwrap();
    let acknowledged = client.next_message().await.unwrap();
    assert_eq!(
        acknowledged["params"]["notifications"]["resourceSubscriptions"],
        json!(["demo://a"]),
        "{acknowledged}"
    );
    // The host is asked to subscribe before updates are told; wait for it (bounded).
    for _ in 0..100 {
        if !host.asked.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(*host.asked.lock().unwrap(), ["subscribe demo://a"]);
    host.updates.send("demo://b".into()).unwrap();
    host.updates.send("demo://a".into()).unwrap();
    let notified = client.next_message().await.unwrap();
    assert_eq!(
        notified["method"], "notifications/resources/updated",
        "{notified}"
    );
    assert_eq!(notified["params"]["uri"], "demo://a", "{notified}");
}

/// SEP-2549's caching hints on `tools/list` (and the resources and prompts lists beside): none
/// until the host says how long its lists stay fresh; then `ttlMs` and `cacheScope` `public`,
/// `private` once each person is served a view of their own (no cache may hand one person's list
/// to another), or when the host says so.
#[tokio::test]
async fn serve_tools_list_says_how_long_it_stays_fresh_and_whose_it_is() {
    struct EveryoneTheSame;
    impl toolkit_serve::Views for EveryoneTheSame {
        fn key(&self, _: &toolkit_core::context::Principal) -> String {
            String::new()
        }
        fn toolkit(&self, _: &str) -> Toolkit {
            demo::toolkit()
        }
    }

    let server = McpServer::new(demo::toolkit()).name("demo");
    let handle = server.toolkit_handle();
    let mut client = InProcessClient::start(server);
    client.initialize().await.unwrap();
    let listed = client.list_tools().await.unwrap();
    assert!(listed.get("ttlMs").is_none(), "{listed}");

    handle.cache_for(Duration::from_secs(60));
    let listed = client.list_tools().await.unwrap();
    assert_eq!(
        (&listed["ttlMs"], &listed["cacheScope"]),
        (&json!(60_000), &json!("public"))
    );

    handle.replace_views(Arc::new(EveryoneTheSame));
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed["cacheScope"], "private", "a view is its person's");

    // The resources and prompts served beside say the same.
    let server = McpServer::new(demo::toolkit()).resources(Arc::new(Subscribable::new()));
    server.toolkit_handle().cache_for(Duration::from_secs(30));
    let mut client = InProcessClient::start(server);
    client.initialize().await.unwrap();
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let listed = client.request(method, json!({})).await.unwrap();
        let result = &listed["result"];
        assert_eq!(
            (&result["ttlMs"], &result["cacheScope"]),
            (&json!(30_000), &json!("public")),
            "{method}: {listed}"
        );
    }

    let server = McpServer::new(demo::toolkit());
    server
        .toolkit_handle()
        .cache_privately_for(Duration::from_secs(5));
    let mut client = InProcessClient::stateless(server);
    let listed = client.list_tools().await.unwrap();
    assert_eq!(
        (&listed["ttlMs"], &listed["cacheScope"]),
        (&json!(5_000), &json!("private"))
    );
    client.close().await.unwrap();
}
