//! OAuth on the command line and in the gateway, against the authorization servers of the
//! official MCP conformance suite (npm `@modelcontextprotocol/conformance`, installed by
//! `scripts/install-test-peers`), which runs a command with the server's URL appended:
//!
//! - `toolkit-gen login --mcp-url URL`, with `BROWSER` set to `curl`, which follows the
//!   authorization URL as a user's browser would and brings the redirect back to the command's
//!   loopback listener;
//! - `toolkit-gen serve`, whose source authorizes with client credentials (a secret, or a
//!   private key's JWT), as the scenario's context gives them.

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

/// A script the suite runs: it writes a gateway configuration whose one source is the scenario's
/// server (its URL the script's last argument), authorized with client credentials from the
/// scenario's context, and runs the gateway over stdio until its standard input ends (at once:
/// the gateway lists the source's tools at start, which asks for a token).
fn gateway_script(dir: &std::path::Path, oauth: &str) -> PathBuf {
    let script = dir.join("gateway.sh");
    let text = format!(
        r#"#!/bin/sh
set -e
context() {{ python3 -c 'import json,os,sys; print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"]).get(sys.argv[1], ""))' "$1"; }}
CC_ID=$(context client_id)
export CC_SECRET="$(context client_secret)"
export CC_KEY="$(context private_key_pem)"
for last; do :; done
cat > "{dir}/toolkit.toml" <<EOF
[policy]
default = "allow"
[catalog]
refresh_seconds = 0
[[sources]]
name = "cc"
url = "$last"
oauth = {{ client_credentials = true, client_id = "$CC_ID", {oauth} }}
EOF
exec "{bin}" serve --config "{dir}/toolkit.toml" < /dev/null
"#,
        dir = dir.display(),
        bin = env!("CARGO_BIN_EXE_toolkit-gen"),
    );
    std::fs::write(&script, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    script
}

#[test]
fn a_gateway_source_authorizes_with_client_credentials() {
    let suite = suite();
    let root = std::env::temp_dir().join(format!("toolkit-gen-machine-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let scenarios = [
        (
            "auth/client-credentials-basic",
            "client-credentials-basic-auth",
            r#"client_secret_env = "CC_SECRET""#,
        ),
        (
            "auth/client-credentials-jwt",
            "client-credentials-jwt-verified",
            r#"private_key_env = "CC_KEY", signing_algorithm = "ES256""#,
        ),
    ];
    let children: Vec<_> = scenarios
        .iter()
        .enumerate()
        .map(|(index, (scenario, _, oauth))| {
            let dir = root.join(format!("gateway-{index}"));
            std::fs::create_dir_all(&dir).unwrap();
            let script = gateway_script(&dir, oauth);
            Command::new("node")
                .arg(&suite)
                .args(["client", "--command"])
                .arg(&script)
                .args(["--scenario", scenario])
                .arg("-o")
                .arg(root.join(format!("out-{index}")))
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
    for (index, (scenario, key, _)) in scenarios.iter().enumerate() {
        let out = root.join(format!("out-{index}"));
        let checks = checks(&out);
        let passed = checks
            .iter()
            .any(|check| check["id"] == *key && check["status"] == "SUCCESS");
        let failed = checks.iter().any(|check| check["status"] == "FAILURE");
        let stderr = walk(&out)
            .into_iter()
            .find(|path| path.ends_with("stderr.txt"))
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_default();
        if !passed || failed {
            wrong.push(format!("{scenario}: {checks:?} {stderr}"));
        }
        assert!(!stderr.contains("BEGIN PRIVATE KEY"), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(wrong.is_empty(), "{wrong:#?}");
}
