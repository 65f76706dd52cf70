//! The source over the tools of 70 real MCP servers (527 tools, `shared/corpus/mcp`), served as
//! paged `tools/list` answers: every tool comes through, as the server wrote it, and each can be
//! called by its name (`Mcp-Name` carries names a header cannot hold as they are).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::ToolSource;

use super::http;
use super::scripted::*;
use crate::support::object;

fn real_tools() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/mcp/livemcpbench-tools.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the corpus is missing at {}: {e}", path.display()));
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut tools = Vec::new();
    for entry in entries {
        for listed in entry["tools"].as_object().unwrap().values() {
            tools.extend(listed["tools"].as_array().unwrap().iter().cloned());
        }
    }
    tools
}

#[tokio::test]
async fn mcp_corpus_real_tool_listings_come_through_whole() {
    let tools = Arc::new(real_tools());
    assert!(tools.len() >= 500, "{} tools", tools.len());
    let served = tools.clone();
    let server = serve(move |r: Recorded| {
        let tools = served.clone();
        async move {
            match r.method() {
                "server/discover" => discovered(&r),
                "tools/list" => {
                    let start: usize = r.body["params"]["cursor"]
                        .as_str()
                        .map_or(0, |c| c.parse().unwrap());
                    let end = (start + 50).min(tools.len());
                    let next = (end < tools.len()).then(|| end.to_string());
                    tools_page(
                        &r,
                        Value::Array(tools[start..end].to_vec()),
                        next.as_deref(),
                    )
                }
                _ => result(
                    &r,
                    json!({"structuredContent": {
                        "name": r.body["params"]["name"], "mcpName": r.header("mcp-name")
                    }}),
                ),
            }
        }
    })
    .await;
    let source = http(&server.url);
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(
        snapshot["tools"],
        Value::Array(tools.to_vec()),
        "the snapshot is the listing as written"
    );

    let definitions = source.discover().await.unwrap();
    // Names repeat across servers in the corpus; one source lists each name once.
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(definitions.len(), names.len());
    for definition in &definitions {
        let tool = tools
            .iter()
            .find(|t| t["name"] == definition.name())
            .unwrap();
        assert_eq!(
            Value::Object(definition.input_schema().clone()),
            tool["inputSchema"]
        );
        assert_eq!(
            definition.description.as_deref(),
            tool["description"].as_str()
        );
        let answer = source
            .call(
                definition.name(),
                object(json!({})),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(answer["name"], definition.name());
        let sent = answer["mcpName"].as_str().unwrap();
        if sent.starts_with("=?base64?") {
            assert!(!definition.name().is_ascii() || definition.name().trim() != definition.name());
        } else {
            assert_eq!(sent, definition.name());
        }
    }
}
