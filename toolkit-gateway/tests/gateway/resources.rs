//! The gateway serves its MCP sources' resources, templates, prompts and completion:
//! `toolkit-gateway --config` in front of npm `@modelcontextprotocol/server-everything` (stdio) as
//! source `everything`, read by the runtime's own client (over stdio, in the revision it settles):
//! every URI and prompt name served under the source (`demo://everything/...`, `everything__...`),
//! the policy's rules applied to them, and a URI that climbs out of its source refused.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolkit_core::Reason;
use toolkit_mcp::{Mcp, StdioCommand};

/// `dist/index.js` of the installed server-everything.
pub(crate) fn everything() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../target/peers/mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// The gateway's configuration file: server-everything as source `everything`, two rules.
fn gateway_config() -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("toolkit-gateway-resources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        r#"
[catalog]
file = "{catalog}"
refresh_seconds = 0

[policy]
default = "allow"
rules = [
  {{ source = "everything", tool = "demo://resource/static/document/structure.md", decision = "block" }},
  {{ source = "everything", tool = "args-prompt", decision = "block" }},
]

[[sources]]
name = "everything"
command = ["node", "{server}", "stdio"]
"#,
        catalog = dir.join("catalog.json").display(),
        server = everything().display()
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    dir.join("toolkit.toml")
}

fn gateway() -> Mcp {
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(gateway_config());
    Mcp::stdio("gateway", command)
}

const ARCHITECTURE: &str = "demo://everything/resource/static/document/architecture.md";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_an_mcp_sources_resources_and_prompts_under_its_name() {
    let gateway = gateway();
    let resources = gateway.list_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(uris.contains(&ARCHITECTURE), "{uris:?}");
    assert!(
        !uris.iter().any(|uri| uri.ends_with("structure.md")),
        "a blocked resource is not listed: {uris:?}"
    );
    assert!(
        uris.iter().all(|uri| uri.starts_with("demo://everything/")),
        "{uris:?}"
    );

    let read = gateway.read_resource(ARCHITECTURE).await.unwrap();
    let on_disk =
        std::fs::read_to_string(everything().parent().unwrap().join("docs/architecture.md"))
            .unwrap();
    assert_eq!(read["contents"][0]["text"], on_disk.as_str());
    assert_eq!(read["contents"][0]["uri"], ARCHITECTURE);
    assert_eq!(read["contents"][0]["mimeType"], "text/markdown");

    let templates = gateway.list_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t["uriTemplate"] == "demo://everything/resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );
    let dynamic = gateway
        .read_resource("demo://everything/resource/dynamic/text/3")
        .await
        .unwrap();
    assert_eq!(
        dynamic["contents"][0]["uri"],
        "demo://everything/resource/dynamic/text/3"
    );

    for refused in [
        "demo://everything/resource/static/document/structure.md",
        "demo://resource/static/document/architecture.md",
        "demo://other/resource/static/document/architecture.md",
    ] {
        let error = gateway.read_resource(refused).await.unwrap_err();
        assert!(
            matches!(error.reason, Reason::NotFound { .. }),
            "{refused}: {error}"
        );
    }
    for climbing in [
        "demo://everything/resource/static/document/../document/architecture.md",
        "demo://everything/resource/%2e%2e/static/document/architecture.md",
    ] {
        let error = gateway.read_resource(climbing).await.unwrap_err();
        assert!(
            error.reason.description().contains("`..`"),
            "{climbing}: {error}"
        );
    }

    let prompts = gateway.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(names.contains(&"everything__simple-prompt"), "{names:?}");
    assert!(
        !names.contains(&"everything__args-prompt"),
        "blocked: {names:?}"
    );
    let prompt = gateway
        .get_prompt(
            "everything__completable-prompt",
            json!({"department": "Sales", "name": "Eve"})
                .as_object()
                .cloned()
                .unwrap(),
        )
        .await
        .unwrap();
    let said = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(said.contains("Eve") && said.contains("Sales"), "{said}");
    let blocked = gateway
        .get_prompt("everything__args-prompt", serde_json::Map::new())
        .await
        .unwrap_err();
    assert!(
        matches!(blocked.reason, Reason::NotFound { .. }),
        "{blocked}"
    );

    let completed = gateway
        .complete(
            json!({
                "ref": {"type": "ref/prompt", "name": "everything__completable-prompt"},
                "argument": {"name": "name", "value": "E"},
                "context": {"arguments": {"department": "Sales"}},
            })
            .as_object()
            .cloned()
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(completed["completion"]["values"], json!(["Eve"]));
    gateway.close().await;
}

/// server-everything tells a subscribed client of its resource at once and every 5 s once its
/// `toggle-subscriber-updates` tool is called: through the gateway, the TypeScript SDK's client
/// (a session revision, `subscriber.cjs`) is told under the served URI.
#[test]
fn a_sources_resource_update_reaches_the_gateway_client_subscribed_to_it() {
    let gateway = gateway_config();
    let modules =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/mcp-npm/node_modules");
    let output = std::process::Command::new("node")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/gateway/subscriber.cjs"
        ))
        .args([ARCHITECTURE, "everything__toggle-subscriber-updates"])
        .args([env!("CARGO_BIN_EXE_toolkit-gateway"), "--config"])
        .arg(&gateway)
        .env("NODE_PATH", modules)
        .output()
        .unwrap();
    let seen: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| json!(String::from_utf8_lossy(&output.stdout)));
    assert!(
        seen.get("error").is_none() && seen.is_object(),
        "{seen}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(seen["capabilities"]["resources"]["subscribe"], true);
    let updated = seen["updated"].as_array().unwrap();
    assert!(!updated.is_empty(), "no update reached the client");
    assert!(updated.iter().all(|uri| uri == ARCHITECTURE), "{updated:?}");
}
