//! OAuth on the command line and in the gateway, against the authorization servers of the
//! official MCP conformance suite (npm `@modelcontextprotocol/conformance`, installed by
//! `scripts/install-test-peers`), which runs a command with the server's URL appended:
//!
//! - `toolkit-gen login --mcp-url URL`, with `BROWSER` set to `curl`, which follows the
//!   authorization URL as a user's browser would and brings the redirect back to the command's
//!   loopback listener;
//! - `toolkit-gen serve`, whose source authorizes with client credentials (a secret, or a
//!   private key's JWT), as the scenario's context gives them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// What one scenario's run left: the suite's checks, and the command's output.
struct Run {
    scenario: &'static str,
    checks: Vec<Value>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Whether the check `key` succeeded and none failed.
    fn passed(&self, key: &str) -> bool {
        self.checks
            .iter()
            .any(|check| check["id"] == key && check["status"] == "SUCCESS")
            && !self.checks.iter().any(|check| check["status"] == "FAILURE")
    }
}

/// Runs each `(scenario, command)` at once under `root`, with `BROWSER` set to `browser`.
fn run_suite(root: &Path, runs: &[(&'static str, OsString)], browser: &str) -> Vec<Run> {
    let suite = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/peers/mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    ));
    assert!(
        suite.exists(),
        "{} is missing: run scripts/install-test-peers",
        suite.display()
    );
    let children: Vec<_> = runs
        .iter()
        .enumerate()
        .map(|(index, (scenario, command))| {
            Command::new("node")
                .arg(&suite)
                .args(["client", "--scenario", scenario, "--command"])
                .arg(command)
                .arg("-o")
                .arg(root.join(format!("out-{index}")))
                .env("BROWSER", browser)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        child.wait().unwrap();
    }
    runs.iter()
        .enumerate()
        .map(|(index, (scenario, _))| {
            let files = walk(&root.join(format!("out-{index}")));
            let read = |name: &str| {
                files
                    .iter()
                    .find(|path| path.ends_with(name))
                    .and_then(|path| std::fs::read_to_string(path).ok())
                    .unwrap_or_default()
            };
            Run {
                scenario,
                checks: serde_json::from_str(&read("checks.json")).unwrap_or_default(),
                stdout: read("stdout.txt"),
                stderr: read("stderr.txt"),
            }
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
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

fn fresh(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("toolkit-gen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    root
}

#[test]
fn login_authorizes_through_a_browser_and_keeps_the_tokens_owner_only() {
    let root = fresh("login");
    let scenarios = [
        ("auth/metadata-default", "prm-pathbased-requested"),
        (
            "auth/token-endpoint-auth-basic",
            "token-endpoint-auth-method",
        ),
        ("auth/2025-03-26-oauth-endpoint-fallback", "token-request"),
    ];
    let store = |index: usize| root.join(format!("store-{index}/tokens.json"));
    let runs: Vec<_> = scenarios
        .iter()
        .enumerate()
        .map(|(index, (scenario, _))| {
            let command = format!(
                "{} login --token-store {} --mcp-url",
                env!("CARGO_BIN_EXE_toolkit-gen"),
                store(index).display()
            );
            (*scenario, OsString::from(command))
        })
        .collect();
    let done = run_suite(&root, &runs, "curl --silent --location --output /dev/null");
    let mut wrong = Vec::new();
    for (index, (run, (_, key))) in done.iter().zip(&scenarios).enumerate() {
        if !run.passed(key) {
            wrong.push(format!("{}: {:?} {}", run.scenario, run.checks, run.stderr));
            continue;
        }
        assert!(run.stdout.starts_with("authorized at "), "{}", run.stdout);
        let kept: Value =
            serde_json::from_str(&std::fs::read_to_string(store(index)).unwrap()).unwrap();
        let token = kept["grants"]
            .as_object()
            .and_then(|grants| grants.values().next())
            .and_then(|grant| grant["access_token"].as_str())
            .unwrap_or_default()
            .to_owned();
        assert!(!token.is_empty(), "{kept}");
        assert!(!run.stdout.contains(&token) && !run.stderr.contains(&token));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store(index))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{}", run.scenario);
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A script the suite runs: it writes a gateway configuration whose one source is the scenario's
/// server (its URL the script's last argument), authorized with client credentials from the
/// scenario's context, and runs the gateway over stdio until its standard input ends (at once:
/// the gateway lists the source's tools at start, which asks for a token).
fn gateway_script(dir: &Path, oauth: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let script = dir.join("gateway.sh");
    let text = format!(
        r#"#!/bin/sh
set -e
context() {{ python3 -c 'import json,os,sys; print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"]).get(sys.argv[1], ""))' "$1"; }}
CC_ID=$(context client_id)
export CC_SECRET="$(context client_secret)"
export CC_KEY="$(context private_key_pem)"
for last; do :; done
# The issuer the secret or key is for, as the server's protected resource metadata names it.
ISSUER=$(python3 -c '
import json, sys, urllib.parse, urllib.request
url = urllib.parse.urlsplit(sys.argv[1])
for path in ("/.well-known/oauth-protected-resource" + url.path, "/.well-known/oauth-protected-resource"):
    try:
        with urllib.request.urlopen(url.scheme + "://" + url.netloc + path) as answer:
            print(json.load(answer)["authorization_servers"][0])
            break
    except Exception:
        pass
' "$last")
cat > "{dir}/toolkit.toml" <<EOF
[policy]
default = "allow"
[catalog]
refresh_seconds = 0
[[sources]]
name = "cc"
url = "$last"
oauth = {{ client_credentials = true, client_id = "$CC_ID", issuer = "$ISSUER", {oauth} }}
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
    let root = fresh("machine");
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
    let runs: Vec<_> = scenarios
        .iter()
        .enumerate()
        .map(|(index, (scenario, _, oauth))| {
            let script = gateway_script(&root.join(format!("gateway-{index}")), oauth);
            (*scenario, script.into_os_string())
        })
        .collect();
    let done = run_suite(&root, &runs, "");
    let mut wrong = Vec::new();
    for (run, (_, key, _)) in done.iter().zip(&scenarios) {
        if !run.passed(key) {
            wrong.push(format!("{}: {:?} {}", run.scenario, run.checks, run.stderr));
        }
        assert!(!run.stderr.contains("BEGIN PRIVATE KEY"), "{}", run.stderr);
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(wrong.is_empty(), "{wrong:#?}");
}
