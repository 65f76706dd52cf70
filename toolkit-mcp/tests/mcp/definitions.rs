//! What an MCP server lists of a tool reaches the catalog and the served `tools/list` whole: its
//! output schema, title and hints.

use serde_json::{Value, json};
use toolkit_core::{ToolSource, definition::decode_catalog, definition::encode_catalog};

use super::http;
use super::scripted::*;

fn weather() -> Value {
    json!({
        "name": "get_weather",
        "title": "Weather",
        "description": "The weather of a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "outputSchema": {
            "type": "object",
            "properties": {"temperature": {"type": "number"}},
            "required": ["temperature"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": true}
    })
}

async fn listing() -> Scripted {
    serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            "tools/list" => tools_page(
                &r,
                json!([weather(), {"name": "odd", "inputSchema": {}, "outputSchema": "no schema"}]),
                None,
            ),
            _ => result(
                &r,
                json!({"content": [{"type": "text", "text": "{\"temperature\":21.5}"}], "structuredContent": {"temperature": 21.5}}),
            ),
        }
    })
    .await
}

#[tokio::test]
async fn mcp_definitions_keep_the_output_schema_title_and_hints() {
    let server = listing().await;
    let definitions = http(&server.url).discover().await.unwrap();
    let weather_tool = &definitions[0];
    assert_eq!(
        weather_tool
            .output_schema()
            .map(|schema| Value::Object(schema.clone())),
        Some(weather()["outputSchema"].clone())
    );
    assert_eq!(weather_tool.title.as_deref(), Some("Weather"));
    assert_eq!(weather_tool.annotations.read_only, Some(true));
    // An outputSchema that is no object is no schema: the tool is kept, without one.
    assert_eq!(definitions[1].name(), "odd");
    assert!(definitions[1].output_schema().is_none());
    // Stored in a catalog, and read back the same.
    let catalog = encode_catalog(&definitions);
    let stored: Value = serde_json::from_str(&catalog).unwrap();
    assert_eq!(stored[0]["outputSchema"], weather()["outputSchema"]);
    assert!(stored[1].get("outputSchema").is_none());
    assert_eq!(decode_catalog(&catalog).unwrap(), definitions);
}

#[tokio::test]
async fn mcp_definitions_the_served_listing_carries_the_output_schema() {
    use std::sync::Arc;

    use toolkit_core::{Toolkit, ToolkitOptions};
    use toolkit_serve::McpServer;
    use toolkit_serve::testing::InProcessClient;

    let server = listing().await;
    let source = Arc::new(http(&server.url));
    let definitions = source.discover().await.unwrap();
    let toolkit = Toolkit::from_source(source, definitions, &ToolkitOptions::default()).unwrap();
    let mut client = InProcessClient::start(McpServer::new(toolkit).name("front"));
    client.initialize().await.unwrap();
    let listed = client.list_tools().await.unwrap();
    let served = &listed["tools"][0];
    assert_eq!(served["name"], "get_weather");
    assert_eq!(served["outputSchema"], weather()["outputSchema"]);
    // The title stays where the server put it (top level), the hints as they came.
    assert_eq!(served["title"], "Weather");
    assert_eq!(served["annotations"], weather()["annotations"]);
    assert!(listed["tools"][1].get("outputSchema").is_none());
    // The structured answer the schema describes is served as structuredContent.
    let called = client
        .call("get_weather", json!({"city": "Lyon"}))
        .await
        .unwrap();
    assert_eq!(called["structuredContent"], json!({"temperature": 21.5}));
    client.close().await.unwrap();
}
