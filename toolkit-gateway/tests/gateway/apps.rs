//! An MCP App through the gateway: `toolkit-gateway --config` in front of a tiny App server of
//! the TypeScript SDK (`app_server.cjs`, source `apps`), read by the SDK's client as an App host
//! reads it (`app_host.cjs`): the tool lists with its `_meta.ui.resourceUri` rewritten under the
//! source (`ui://apps/clock/app.html`), and reading that URI gives the `text/html;profile=mcp-app`
//! document and its `_meta.ui` exactly as the server wrote them; and the gateway advertises the
//! capabilities the App server declared (resources without `subscribe`, no prompts, no completion).
//! The same for an App written with npm `@modelcontextprotocol/ext-apps`' own server helpers on the
//! v2 SDK (`ext_apps_server.mjs`).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn here(file: &str) -> String {
    format!("{}/tests/gateway/{file}", env!("CARGO_MANIFEST_DIR"))
}

fn node_modules() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/mcp-npm/node_modules");
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-peers",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// The installed `@modelcontextprotocol/ext-apps` and the v2 SDK packages.
fn ext_apps_modules() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/ext-apps-npm/node_modules");
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-peers",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// What the App host reads of the server `command` starts.
fn hosted(command: &[&str]) -> Value {
    let output = Command::new("node")
        .arg(here("app_host.cjs"))
        .args(command)
        .env("NODE_PATH", node_modules())
        // What the gateway's configuration passes on to the App server it starts.
        .env("APPS_NODE_PATH", node_modules())
        .env("EXT_APPS_MODULES", ext_apps_modules())
        .output()
        .unwrap();
    let read: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&output.stdout).into_owned()));
    assert!(read.is_object(), "the host printed no JSON: {read}");
    assert!(read.get("error").is_none(), "{read}");
    read
}

#[test]
fn an_mcp_app_works_through_the_gateway() {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-apps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = here("app_server.cjs");
    let config = format!(
        "[catalog]\nfile = \"{}\"\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\n\
         [[sources]]\nname = \"apps\"\ncommand = [\"node\", \"{server}\"]\nenv = {{ NODE_PATH = \"APPS_NODE_PATH\" }}\n",
        dir.join("catalog.json").display()
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    let config = dir.join("toolkit.toml").to_string_lossy().into_owned();
    let generator = env!("CARGO_BIN_EXE_toolkit-gateway");
    let direct = hosted(&["node", &server]);
    let through = hosted(&[generator, "--config", &config]);
    let tool = &through["tools"][0];
    assert_eq!(tool["name"], "apps__show-clock");
    assert_eq!(
        tool["_meta"]["ui"]["resourceUri"],
        "ui://apps/clock/app.html"
    );
    assert_eq!(tool["_meta"]["ui/resourceUri"], "ui://apps/clock/app.html");
    assert_eq!(
        tool["_meta"]["ui"]["visibility"],
        direct["tools"][0]["_meta"]["ui"]["visibility"]
    );
    let served = &through["reads"]["ui://apps/clock/app.html"]["contents"][0];
    let written = &direct["reads"]["ui://clock/app.html"]["contents"][0];
    assert_eq!(served["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        served["text"], written["text"],
        "the document comes back unchanged"
    );
    assert_eq!(served["_meta"], written["_meta"]);
    assert_eq!(served["uri"], "ui://apps/clock/app.html");
    assert_eq!(through["resources"][0]["uri"], "ui://apps/clock/app.html");
    assert_eq!(
        through["resources"][0]["_meta"],
        direct["resources"][0]["_meta"]
    );
    // The gateway advertises what its one upstream declared at `initialize` (`resources`, no
    // `subscribe`, no `prompts`, no `completions`), not what a probe would infer.
    let declared = &direct["capabilities"];
    let advertised = &through["capabilities"];
    assert_eq!(declared["resources"], serde_json::json!({}), "{declared}");
    assert!(advertised["resources"].is_object(), "{advertised}");
    assert_eq!(
        advertised["resources"].get("subscribe"),
        None,
        "{advertised}"
    );
    for lacking in ["prompts", "completions"] {
        assert_eq!(declared.get(lacking), None, "{declared}");
        assert_eq!(advertised.get(lacking), None, "{advertised}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The App of `@modelcontextprotocol/ext-apps`' own server helpers (`ext_apps_server.mjs`, the
/// package's weather example, on the v2 SDK) through the gateway, read by the v1 SDK's client.
#[test]
fn an_ext_apps_app_works_through_the_gateway() {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-ext-apps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = here("ext_apps_server.mjs");
    let config = format!(
        "[catalog]\nfile = \"{}\"\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\n\
         [[sources]]\nname = \"weather\"\ncommand = [\"node\", \"{server}\"]\nenv = {{ EXT_APPS_MODULES = \"EXT_APPS_MODULES\" }}\n",
        dir.join("catalog.json").display()
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    let config = dir.join("toolkit.toml").to_string_lossy().into_owned();
    let direct = hosted(&["node", &server]);
    let through = hosted(&[env!("CARGO_BIN_EXE_toolkit-gateway"), "--config", &config]);
    let tool = &through["tools"][0];
    assert_eq!(tool["name"], "weather__get-weather");
    assert_eq!(
        tool["_meta"]["ui"]["resourceUri"],
        "ui://weather/weather/view.html"
    );
    let served = &through["reads"]["ui://weather/weather/view.html"]["contents"][0];
    let written = &direct["reads"]["ui://weather/view.html"]["contents"][0];
    assert_eq!(served["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(served["text"], written["text"], "{served}");
    assert_eq!(served["uri"], "ui://weather/weather/view.html");
    assert_eq!(
        through["resources"][0]["mimeType"],
        direct["resources"][0]["mimeType"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
