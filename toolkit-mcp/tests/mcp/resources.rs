//! The MCP source's resources, prompts and completion, against
//! `@modelcontextprotocol/server-everything` (npm) over a Streamable HTTP session, the old HTTP+SSE
//! transport and stdio (the stateless revision is spoken to the gateway in
//! `toolkit-gateway/tests/gateway/resources.rs`), and the answer cap on a resource read.

use serde_json::{Value, json};
use tokio::process::Command;
use toolkit_core::Reason;
use toolkit_mcp::{Mcp, StdioCommand};

use super::everything::everything;
use super::processes::{Listening, free_port, listening, script};
use super::quick;
use crate::support::object;

async fn start(transport: &str) -> Listening {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg("-r")
        .arg(script("loopback.cjs"))
        .arg(everything())
        .arg(transport)
        .env("PORT", port.to_string());
    listening(command, port, "server-everything").await
}

const ARCHITECTURE: &str = "demo://resource/static/document/architecture.md";

/// Lists and reads resources and templates, gets and completes a prompt, subscribes.
async fn reads_everything(source: &Mcp) {
    let resources = source.list_resources().await.unwrap();
    let architecture = resources
        .iter()
        .find(|resource| resource["uri"] == ARCHITECTURE)
        .unwrap_or_else(|| panic!("{resources:?}"));
    assert_eq!(architecture["mimeType"], "text/markdown");
    let read = source.read_resource(ARCHITECTURE).await.unwrap();
    let text = read["contents"][0]["text"].as_str().unwrap();
    let on_disk =
        std::fs::read_to_string(everything().parent().unwrap().join("docs/architecture.md"))
            .unwrap();
    assert_eq!(text, on_disk, "the document comes back as written");
    assert_eq!(read["contents"][0]["uri"], ARCHITECTURE);

    let templates = source.list_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|template| template["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );
    let dynamic = source
        .read_resource("demo://resource/dynamic/text/7")
        .await
        .unwrap();
    assert_eq!(
        dynamic["contents"][0]["uri"],
        "demo://resource/dynamic/text/7"
    );

    let missing = source
        .read_resource("demo://resource/static/document/no-such.md")
        .await
        .unwrap_err();
    assert!(
        matches!(missing.reason, Reason::NotFound { .. }),
        "{missing}"
    );

    let prompts = source.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(names.contains(&"simple-prompt"), "{names:?}");
    let prompt = source
        .get_prompt(
            "completable-prompt",
            object(json!({"department": "Sales", "name": "Eve"})),
        )
        .await
        .unwrap();
    let said = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(said.contains("Eve") && said.contains("Sales"), "{said}");

    let completed = source
        .complete(object(json!({
            "ref": {"type": "ref/prompt", "name": "completable-prompt"},
            "argument": {"name": "name", "value": "E"},
            "context": {"arguments": {"department": "Sales"}},
        })))
        .await
        .unwrap();
    assert_eq!(completed["completion"]["values"], json!(["Eve"]));

    source.subscribe_resource(ARCHITECTURE).await.unwrap();
    source.unsubscribe_resource(ARCHITECTURE).await.unwrap();
}

#[tokio::test]
async fn mcp_resources_and_prompts_over_a_streamable_http_session() {
    let server = start("streamableHttp").await;
    let source = Mcp::http_with_options(
        "everything",
        server.url("/mcp"),
        reqwest::Client::new(),
        quick(),
    );
    reads_everything(&source).await;
    source.close().await;
}

/// server-everything over the old HTTP+SSE transport, and the source that speaks to it (keep
/// the server as long as the source).
async fn over_the_old_transport() -> (Listening, Mcp) {
    let server = start("sse").await;
    let source = Mcp::http_with_options(
        "everything",
        server.url("/sse"),
        reqwest::Client::new(),
        quick(),
    );
    (server, source)
}

#[tokio::test]
async fn mcp_resources_and_prompts_over_the_old_http_sse_transport() {
    let (_server, source) = over_the_old_transport().await;
    reads_everything(&source).await;
}

#[tokio::test]
async fn mcp_resources_and_prompts_over_stdio() {
    let command = StdioCommand::new("node").arg(everything()).arg("stdio");
    let source = Mcp::stdio_with_options("everything", command, quick());
    reads_everything(&source).await;
    source.close().await;
}

/// A resource longer than the answer cap is refused as a tool's answer is, and the source goes
/// on reading the ones that fit.
#[tokio::test]
async fn mcp_a_resource_over_the_answer_cap_is_refused() {
    let options = quick()
        // The initialize answer (with the server's instructions) and architecture.md fit;
        // structure.md (12 KB) does not.
        .max_response_bytes(8 * 1024);
    for transport in ["stdio", "sse", "streamableHttp"] {
        let server;
        let source = if transport == "stdio" {
            let command = StdioCommand::new("node").arg(everything()).arg("stdio");
            Mcp::stdio_with_options("everything", command, options.clone())
        } else {
            server = start(transport).await;
            let path = if transport == "sse" { "/sse" } else { "/mcp" };
            Mcp::http_with_options(
                "everything",
                server.url(path),
                reqwest::Client::new(),
                options.clone(),
            )
        };
        let refused = source
            .read_resource("demo://resource/static/document/structure.md")
            .await
            .unwrap_err();
        match &refused.reason {
            Reason::CallFailed { description } => {
                assert!(description.contains("8192 bytes"), "{description}");
            }
            other => panic!("{other:?}"),
        }
        let fits = source.read_resource(ARCHITECTURE).await.unwrap();
        assert!(matches!(fits["contents"][0]["text"], Value::String(_)));
        source.close().await;
    }
}

/// The old HTTP+SSE transport hears `notifications/resources/updated` of a subscribed resource
/// (server-everything sends one at once and every 5 s once its `toggle-subscriber-updates` tool
/// is called), as stdio and a Streamable HTTP session do.
#[tokio::test]
async fn mcp_the_old_http_sse_transport_hears_a_subscribed_resource_updated() {
    use toolkit_core::{CallContext, JsonObject, ToolSource};

    let (_server, source) = over_the_old_transport().await;
    let mut updates = source.resources_updated().expect("a waiter of updates");
    source.subscribe_resource(ARCHITECTURE).await.unwrap();
    source
        .call(
            "toggle-subscriber-updates",
            JsonObject::new(),
            &CallContext::new(),
        )
        .await
        .unwrap();
    let updated = tokio::time::timeout(std::time::Duration::from_secs(12), updates.next())
        .await
        .expect("an update within 12 s");
    assert_eq!(updated.as_deref(), Some(ARCHITECTURE));
    source.unsubscribe_resource(ARCHITECTURE).await.unwrap();
}
