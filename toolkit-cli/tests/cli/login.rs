//! `toolkit-gen login --mcp-url URL` against the authorization servers of the official MCP
//! conformance suite (npm `@modelcontextprotocol/conformance`, installed by
//! `scripts/install-test-peers`): the suite runs the command with the server's URL appended, and
//! `BROWSER` is `curl`, which follows the authorization URL as a user's browser would and brings
//! the redirect back to the command's loopback listener.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

fn suite() -> PathBuf {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/peers/mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    ));
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// The checks of the one scenario run under `dir`.
fn checks(dir: &std::path::Path) -> Vec<Value> {
    for entry in walk(dir) {
        if entry.ends_with("checks.json") {
            return serde_json::from_str(&std::fs::read_to_string(entry).unwrap()).unwrap();
        }
    }
    Vec::new()
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn login_authorizes_through_a_browser_and_keeps_the_tokens_owner_only() {
    let suite = suite();
    let root = std::env::temp_dir().join(format!("toolkit-gen-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let scenarios = [
        ("auth/metadata-default", "prm-pathbased-requested"),
        (
            "auth/token-endpoint-auth-basic",
            "token-endpoint-auth-method",
        ),
        ("auth/2025-03-26-oauth-endpoint-fallback", "token-request"),
    ];
    let children: Vec<_> = scenarios
        .iter()
        .enumerate()
        .map(|(index, (scenario, _))| {
            let store = root.join(format!("store-{index}/tokens.json"));
            let command = format!(
                "{} login --token-store {} --mcp-url",
                env!("CARGO_BIN_EXE_toolkit-gen"),
                store.display()
            );
            Command::new("node")
                .arg(&suite)
                .args(["client", "--command", &command, "--scenario", scenario])
                .arg("-o")
                .arg(root.join(format!("out-{index}")))
                .env("BROWSER", "curl --silent --location --output /dev/null")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        child.wait().unwrap();
    }
    let mut wrong = Vec::new();
    for (index, (scenario, key)) in scenarios.iter().enumerate() {
        let out = root.join(format!("out-{index}"));
        let checks = checks(&out);
        let failed: Vec<_> = checks
            .iter()
            .filter(|check| check["status"] == "FAILURE")
            .map(|check| format!("{}: {}", check["id"], check["errorMessage"]))
            .collect();
        let key_passed = checks
            .iter()
            .any(|check| check["id"] == *key && check["status"] == "SUCCESS");
        if !key_passed || !failed.is_empty() {
            let stderr = walk(&out)
                .into_iter()
                .find(|path| path.ends_with("stderr.txt"))
                .and_then(|path| std::fs::read_to_string(path).ok())
                .unwrap_or_default();
            wrong.push(format!("{scenario}: {failed:?} {stderr}"));
            continue;
        }
        let stdout = walk(&out)
            .into_iter()
            .find(|path| path.ends_with("stdout.txt"))
            .map(|path| std::fs::read_to_string(path).unwrap())
            .unwrap_or_default();
        assert!(stdout.starts_with("authorized at "), "{stdout}");
        let store = root.join(format!("store-{index}/tokens.json"));
        let kept = std::fs::read_to_string(&store).unwrap();
        let kept: Value = serde_json::from_str(&kept).unwrap();
        let token = kept["grants"]
            .as_object()
            .and_then(|grants| grants.values().next())
            .and_then(|grant| grant["access_token"].as_str())
            .unwrap_or_default()
            .to_owned();
        assert!(!token.is_empty(), "{kept}");
        assert!(!stdout.contains(&token));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&store).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{scenario}");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(wrong.is_empty(), "{wrong:#?}");
}
