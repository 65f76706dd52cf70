//! `toolkit-gen snapshot` and `toolkit-gen call` against MCP servers, run as a user runs them:
//! a scripted stdio server (toolkit-runtime's test peer) and a closed port.

use std::path::PathBuf;

use crate::support::run;
use serde_json::{Value, json};

/// A directory of this test's own, and the `--mcp-stdio` command of the scripted peer in it.
fn peer(name: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("toolkit-gen-mcp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolkit-mcp/tests/mcp/stdio_peer.py"
    );
    let command = format!("python3 '{script}' normal '{}'", dir.join("pids").display());
    (dir, command)
}

#[test]
fn snapshot_writes_the_servers_tools_to_a_file() {
    let (dir, command) = peer("snapshot");
    let out = dir.join("tools.json");
    let (code, stdout, stderr) = run(&[
        "snapshot",
        "--mcp-stdio",
        &command,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    let snapshot: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        snapshot["server"],
        json!({"name": "stdio-peer", "version": "0.1"})
    );
    assert_eq!(snapshot["protocolVersion"], "2025-06-18");
    assert_eq!(snapshot["tools"][0]["name"], "echo");
}

#[test]
fn call_prints_the_result_and_exits_0_or_the_failure_and_exits_1() {
    let (dir, command) = peer("call");
    let (code, stdout, _) = run(&["call", "--mcp-stdio", &command, "echo", r#"{"text":"hi"}"#]);
    assert_eq!(code, 0, "{stdout}");
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed, json!([{"type": "text", "text": "hi"}]));

    let (code, stdout, _) = run(&["call", "--mcp-stdio", &command, "echo", r#"{"text":5}"#]);
    assert_eq!(code, 1, "{stdout}");
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["code"], "InvalidInputError");
    assert_eq!(printed["retryable"], false);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_server_that_cannot_be_reached_fails_without_naming_it_or_the_credential() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let header = "Authorization: Bearer cli-secret-token";
    let (code, stdout, _) = run(&["call", "--mcp-url", &url, "--header", header, "echo"]);
    assert_eq!(code, 1);
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["code"], "UnavailableError");
    assert_eq!(printed["retryable"], true);
    assert!(
        !stdout.contains("cli-secret-token") && !stdout.contains("127.0.0.1"),
        "{stdout}"
    );

    let (code, stdout, stderr) = run(&["snapshot", "--mcp-url", &url, "--header", header]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(!stderr.contains("cli-secret-token"), "{stderr}");
}
