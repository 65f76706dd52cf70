//! The `toolkit-serve-fixture` binary as a child process: the probe of a built server, the stdin
//! guard end to end over real stdio, and the crash guard.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;
use toolkit_serve::testing::{HarnessError, ServerProcess, probe};

fn fixture() -> Command {
    let mut command = Command::new(crate::fixture());
    command.env_remove("RUST_LOG").env("RUST_BACKTRACE", "0");
    command
}

const PARSE: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
const INVALID: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;

fn line(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[tokio::test]
async fn serve_probe_of_the_built_fixture_passes() {
    let probe = probe(fixture()).await.unwrap();
    assert!(probe.passed(), "{probe:?}");
    assert_eq!(
        probe.initialize["result"]["serverInfo"],
        json!({"name": "toolkit-serve-fixture", "version": "1.0.0"})
    );
    assert_eq!(probe.tools["tools"].as_array().unwrap().len(), 6);
    assert_eq!(probe.finished.stderr, "");
    assert!(probe.finished.status.success());
}

#[tokio::test]
async fn serve_stdin_guard_end_to_end_over_a_child_process() {
    let mut server = ServerProcess::spawn(fixture()).unwrap();
    // A byte-order mark at the very start is stripped: the handshake reads.
    server
        .send_raw(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n")
        .await
        .unwrap();
    let (initialized, _) = server.read_until_response(&json!(1)).await.unwrap();
    assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
    server
        .send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    // Not JSON, whitespace, a mark in the middle, JSON that is no JSON-RPC message, a batch,
    // then a request, all in one write.
    let mut stdin = Vec::new();
    stdin.extend_from_slice(b"not json\n");
    stdin.extend_from_slice(b" \t\r\n\n");
    stdin.extend_from_slice(
        "\u{FEFF}{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n".as_bytes(),
    );
    stdin.extend_from_slice(b"{\"jsonrpc\":\"2.0\"}\n42\n");
    stdin.extend_from_slice(b"[{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}]\n");
    stdin.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    server.send_raw(&stdin).await.unwrap();
    let (listed, seen) = server.read_until_response(&json!(2)).await.unwrap();
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 6);
    assert_eq!(
        seen,
        [
            line(PARSE),
            line(PARSE),
            line(INVALID),
            line(INVALID),
            line(INVALID)
        ]
    );
    let finished = server.finish().await.unwrap();
    assert!(finished.status.success(), "{finished:?}");
    assert_eq!(finished.stderr, "");
}

#[tokio::test]
async fn serve_a_line_over_16_mi_units_is_answered_once_as_soon_as_it_passes_the_cap() {
    let mut server = ServerProcess::spawn(fixture()).unwrap();
    server.handshake().await.unwrap();
    // 16 Mi + 1 units with no newline yet: the reply comes without waiting for the line to end.
    let long = vec![b'x'; 16 * 1024 * 1024 + 1];
    server.send_raw(&long).await.unwrap();
    assert_eq!(server.next_message().await.unwrap(), line(PARSE));
    // The rest of the line is discarded up to its newline; then serving goes on.
    server.send_raw(&vec![b'y'; 4 * 1024 * 1024]).await.unwrap();
    server
        .send_raw(b"\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"after\"}}}\n")
        .await
        .unwrap();
    let (called, seen) = server.read_until_response(&json!(3)).await.unwrap();
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(called["result"]["content"][0]["text"], "after");
    // A line of exactly the cap is read.
    let at_cap = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{}\"}}}}}}",
        "z".repeat(1_000)
    );
    let padding = 16 * 1024 * 1024 - at_cap.len();
    let at_cap = format!("{}{at_cap}\n", " ".repeat(padding));
    server.send_raw(at_cap.as_bytes()).await.unwrap();
    let (called, seen) = server.read_until_response(&json!(4)).await.unwrap();
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(called["result"]["content"][0]["text"], "z".repeat(1_000));
    let finished = server.finish().await.unwrap();
    assert!(finished.status.success());
}

#[tokio::test]
async fn serve_a_panicking_tool_in_a_child_process_keeps_it_serving() {
    let mut server = ServerProcess::spawn(fixture()).unwrap();
    server.handshake().await.unwrap();
    let exploded = server.call("explode", json!({})).await.unwrap();
    assert_eq!(exploded["isError"], true);
    let echoed = server.call("echo", json!({"text": "alive"})).await.unwrap();
    assert_eq!(echoed["content"][0]["text"], "alive");
    let finished = server.finish().await.unwrap();
    assert!(finished.status.success());
    // The panic is on stderr, on one line (the crash guard's hook), never on stdout.
    assert_eq!(finished.stderr.lines().count(), 1, "{finished:?}");
    assert!(finished.stderr.contains(": the tool broke"), "{finished:?}");
}

#[tokio::test]
async fn serve_a_failure_before_serving_exits_1_with_one_line_on_stderr() {
    let mut command = fixture();
    command.env("FIXTURE_FAIL_START", "1");
    let server = ServerProcess::spawn(command).unwrap();
    let finished = server.finish().await.unwrap();
    assert_eq!(finished.status.code(), Some(1));
    assert_eq!(
        finished.stderr,
        "toolkit-serve-fixture: the toolkit could not be built: FIXTURE_FAIL_START is set\n"
    );
}

#[tokio::test]
async fn serve_a_panic_before_serving_exits_1_with_one_line_on_stderr() {
    let mut command = fixture();
    command.env("FIXTURE_PANIC_START", "1");
    let server = ServerProcess::spawn(command).unwrap();
    let finished = server.finish().await.unwrap();
    assert_eq!(finished.status.code(), Some(1));
    assert_eq!(finished.stderr.lines().count(), 1, "{finished:?}");
    assert!(
        finished
            .stderr
            .starts_with("toolkit-serve-fixture: panicked at "),
        "{finished:?}"
    );
    assert!(
        finished
            .stderr
            .ends_with(": the catalog is corrupt (FIXTURE_PANIC_START is set)\n"),
        "{finished:?}"
    );
}

#[tokio::test]
async fn serve_the_probe_gives_up_on_a_process_that_does_not_end() {
    let mut command = Command::new("sleep");
    command.arg("30");
    let server = ServerProcess::spawn(command)
        .unwrap()
        .timeout(Duration::from_millis(300));
    let finished = server.finish().await;
    assert!(
        matches!(finished, Err(HarnessError::Timeout)),
        "{finished:?}"
    );
}
