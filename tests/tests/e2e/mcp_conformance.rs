//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance@0.1.16`, installed
//! by `scripts/install-test-peers`) against our client, `scripts/mcp-conformance-client`: the
//! suite's mock servers are the real peers. Each scenario's checks are read from the suite's
//! `checks.json`; a scenario passes when its key check succeeded and no check failed or warned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The `auth` suite (all 14), the 2025-03-26 back-compat suite, the draft suite and the client
/// credentials extension, with the check that shows each did its work.
const PASSING: &[(&str, &str)] = &[
    ("auth/metadata-default", "prm-pathbased-requested"),
    ("auth/metadata-var1", "token-request"),
    ("auth/metadata-var2", "token-request"),
    ("auth/metadata-var3", "token-request"),
    ("auth/basic-cimd", "cimd-client-id-used"),
    (
        "auth/scope-from-www-authenticate",
        "scope-from-www-authenticate",
    ),
    (
        "auth/scope-from-scopes-supported",
        "scope-from-scopes-supported",
    ),
    (
        "auth/scope-omitted-when-undefined",
        "scope-omitted-when-undefined",
    ),
    ("auth/scope-step-up", "scope-step-up-escalation"),
    ("auth/scope-retry-limit", "scope-retry-limit"),
    (
        "auth/token-endpoint-auth-basic",
        "token-endpoint-auth-method",
    ),
    (
        "auth/token-endpoint-auth-post",
        "token-endpoint-auth-method",
    ),
    (
        "auth/token-endpoint-auth-none",
        "token-endpoint-auth-method",
    ),
    ("auth/pre-registration", "pre-registration-auth"),
    ("auth/2025-03-26-oauth-metadata-backcompat", "token-request"),
    ("auth/2025-03-26-oauth-endpoint-fallback", "token-request"),
    ("auth/resource-mismatch", "valid-bearer-token-absent-or-any"),
    ("auth/offline-access-scope", "token-request"),
    ("auth/offline-access-not-supported", "token-request"),
    // The client credentials extension (SEP-1046): `OAuthClient::machine`.
    (
        "auth/client-credentials-basic",
        "client-credentials-basic-auth",
    ),
    (
        "auth/client-credentials-jwt",
        "client-credentials-jwt-verified",
    ),
    ("tools_call", "tool-add-numbers"),
    // `initialize` has no check of its own: a run with no failure or warning passes.
    ("initialize", ""),
    ("sse-retry", "client-sse-last-event-id"),
    // The elicitation comes on the session's standalone stream; the client's callback accepts
    // the schema's defaults.
    (
        "elicitation-sep1034-client-defaults",
        "client-elicitation-sep1034-boolean-default",
    ),
];

/// Scenarios that fail today, each with why. A scenario that starts passing fails this test:
/// move it to `PASSING`.
const FAILING_TODAY: &[(&str, &str)] = &[
    // FIXME: cross-app access (an identity provider's ID token exchanged for an authorization
    // grant, RFC 8693 then RFC 7523) is not implemented.
    (
        "auth/cross-app-access-complete-flow",
        "extension not implemented",
    ),
];

fn workspace() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn suite() -> PathBuf {
    let path = workspace().join(
        "target/peers/mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js",
    );
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// Each scenario's checks under `dir` (`<dir>/<scenario>-<24-character time>/checks.json`).
fn results(dir: &Path, into: &mut BTreeMap<String, Vec<Value>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let checks = path.join("checks.json");
        if checks.exists() {
            let relative = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let name = relative[..relative.len() - 25].to_owned();
            let parsed: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&checks).unwrap()).unwrap();
            into.insert(name, parsed);
        } else if path.is_dir() {
            // `auth/…` scenarios are in a folder `auth`.
            let mut nested = BTreeMap::new();
            results(&path, &mut nested);
            let prefix = entry.file_name().to_string_lossy().into_owned();
            for (name, checks) in nested {
                into.insert(format!("{prefix}/{name}"), checks);
            }
        }
    }
}

/// Whether `checks` show a passed scenario: `key` succeeded (the resource-mismatch scenario
/// passes by the client not authorizing, so any run without failure counts), nothing failed or
/// warned.
fn passed(checks: &[Value], key: &str) -> bool {
    let status = |check: &Value| check["status"].as_str().unwrap_or("").to_owned();
    // The resumption's delay is measured on the wall clock: 700–1000 ms (a loaded machine, the
    // suites running at once) is a warning, not a failure of the client.
    let bad = checks.iter().any(|check| match status(check).as_str() {
        "FAILURE" => true,
        "WARNING" => check["id"] != "client-sse-retry-timing",
        _ => false,
    });
    let key_done = key.is_empty()
        || key == "valid-bearer-token-absent-or-any"
        || checks
            .iter()
            .any(|check| check["id"] == key && status(check) == "SUCCESS");
    !checks.is_empty() && !bad && key_done
}

#[test]
fn the_official_conformance_suite_passes_its_auth_scenarios() {
    let suite = suite();
    let client = workspace().join("scripts/mcp-conformance-client");
    let out = std::env::temp_dir().join(format!("toolkit-conformance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    // The suites run their scenarios concurrently, and the runs below run at once.
    let mut runs: Vec<(String, Vec<&str>)> = ["auth", "backcompat", "draft", "extensions"]
        .into_iter()
        .map(|name| (name.to_owned(), vec!["--suite", name]))
        .collect();
    for scenario in [
        "initialize",
        "tools_call",
        "sse-retry",
        "elicitation-sep1034-client-defaults",
    ] {
        runs.push((scenario.to_owned(), vec!["--scenario", scenario]));
    }
    let children: Vec<_> = runs
        .iter()
        .map(|(name, selection)| {
            Command::new("node")
                .arg(&suite)
                .arg("client")
                .arg("--command")
                .arg(&client)
                .args(selection)
                .arg("-o")
                .arg(out.join(name))
                .env(
                    "MCP_CONFORMANCE_CLIENT",
                    env!("CARGO_BIN_EXE_mcp-conformance-client"),
                )
                .env("RUST_LOG", "warn")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        child.wait().unwrap();
    }
    let mut all = BTreeMap::new();
    for (name, _) in &runs {
        results(&out.join(name), &mut all);
    }
    let mut wrong = Vec::new();
    for (scenario, key) in PASSING {
        match all.get(*scenario) {
            Some(checks) if passed(checks, key) => {}
            Some(checks) => {
                let failed: Vec<_> = checks
                    .iter()
                    .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
                    .map(|c| format!("{}: {}", c["id"], c["description"]))
                    .collect();
                wrong.push(format!("{scenario} should pass: {failed:?}"));
            }
            None => wrong.push(format!("{scenario} did not run")),
        }
    }
    for (scenario, why) in FAILING_TODAY {
        match all.get(*scenario) {
            Some(checks)
                if checks.is_empty() || !passed(checks, "valid-bearer-token-absent-or-any") => {}
            Some(_) => wrong.push(format!("{scenario} passes now ({why}): move it to PASSING")),
            None => wrong.push(format!("{scenario} did not run")),
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The suite's server scenarios (its client against ours): the gateway (`toolkit-gen serve`) in
/// front of an upstream of the TypeScript SDK with the suite's test tools, served under their own
/// names (`scripts/mcp-conformance-server`). These pass through the gateway as they pass against
/// the upstream alone; each passes when it has checks and none failed or warned.
const SERVER_PASSING: &[&str] = &[
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "json-schema-2020-12",
    "server-sse-multiple-streams",
    "server-sse-polling",
    "dns-rebinding-protection",
    // The upstream's resources, template, prompts and completion, served by the gateway.
    "completion-complete",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
];

/// Server scenarios that fail through the gateway today, each with why. A scenario that starts
/// passing fails this test: move it to `SERVER_PASSING`.
const SERVER_FAILING_TODAY: &[(&str, &str)] = &[];

/// Stops the conformance server script (SIGTERM: it stops the gateway and the upstream) on drop.
struct Script(std::process::Child);

impl Drop for Script {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let _ = self.0.wait();
    }
}

#[test]
fn the_official_conformance_suite_passes_through_the_gateway() {
    let suite = suite();
    let generator = workspace().join("target/debug/toolkit-gen");
    assert!(
        generator.exists(),
        "{} is missing: cargo build -p toolkit-cli",
        generator.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _script = Script(
        Command::new(workspace().join("scripts/mcp-conformance-server"))
            .arg(port.to_string())
            .env("TOOLKIT_GEN", &generator)
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://localhost:{port}/mcp");
    // Ready when the gateway answers (its start lists the upstream's tools first).
    let ready = (0..300).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(ready, "the gateway did not listen on {port}");
    let out =
        std::env::temp_dir().join(format!("toolkit-conformance-server-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new("node")
        .arg(&suite)
        .args(["server", "--url", &url, "--suite", "all", "-o"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let _ = status;
    let mut all = BTreeMap::new();
    results(&out, &mut all);
    let all: BTreeMap<String, Vec<Value>> = all
        .into_iter()
        .map(|(name, checks)| {
            // `server-<scenario>`, and the scenario's name may begin with `server-` too.
            let scenario = name.strip_prefix("server-").unwrap_or(&name).to_owned();
            (scenario, checks)
        })
        .collect();
    let mut wrong = Vec::new();
    for scenario in SERVER_PASSING {
        match all.get(*scenario) {
            Some(checks) if passed(checks, "") => {}
            Some(checks) => {
                let failed: Vec<_> = checks
                    .iter()
                    .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
                    .map(|c| format!("{}: {} {}", c["id"], c["description"], c["errorMessage"]))
                    .collect();
                wrong.push(format!("{scenario} should pass: {failed:?}"));
            }
            None => wrong.push(format!("{scenario} did not run")),
        }
    }
    for (scenario, why) in SERVER_FAILING_TODAY {
        match all.get(*scenario) {
            Some(checks) if !passed(checks, "") => {}
            Some(_) => wrong.push(format!(
                "{scenario} passes now ({why}): move it to SERVER_PASSING"
            )),
            None => wrong.push(format!("{scenario} did not run")),
        }
    }
    let listed = SERVER_PASSING.len() + SERVER_FAILING_TODAY.len();
    if all.len() != listed {
        wrong.push(format!(
            "{} scenarios ran, {listed} are listed: {:?}",
            all.len(),
            all.keys().collect::<Vec<_>>()
        ));
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(wrong.is_empty(), "{wrong:#?}");
}
