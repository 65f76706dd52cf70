//! The stdio transport against a scripted process: restarts, shutdown, caps, zombies.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::{Mcp, McpOptions, StdioCommand};

use super::quick;
use crate::support::object;

struct Peer {
    _dir: TempDir,
    pidfile: PathBuf,
}

/// A directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn peer(mode: &str, options: McpOptions) -> (Mcp, Peer) {
    peer_by(options, |script, pidfile| {
        StdioCommand::new("python3")
            .arg(script)
            .arg(mode)
            .arg(pidfile)
    })
}

/// A peer started by the command `command` makes of the script's path and the pid file's.
fn peer_by(
    options: McpOptions,
    command: impl FnOnce(&str, &std::path::Path) -> StdioCommand,
) -> (Mcp, Peer) {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("toolkit-mcp-stdio-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("pids");
    let command = command(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/stdio_peer.py"),
        &pidfile,
    );
    (
        Mcp::stdio_with_options("scripted", command, options),
        Peer {
            _dir: TempDir(dir),
            pidfile,
        },
    )
}

fn fast() -> McpOptions {
    quick()
        .discover_wait(Duration::from_millis(300))
        .shutdown_wait(Duration::from_millis(300))
}

impl Peer {
    fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(&self.pidfile)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    fn answers(&self) -> String {
        std::fs::read_to_string(self.pidfile.with_extension("answers")).unwrap_or_default()
    }
}

/// Whether `pid` is gone entirely: neither running nor a zombie waiting to be reaped.
fn gone(pid: u32) -> bool {
    !PathBuf::from(format!("/proc/{pid}")).exists()
}

/// Whether `pid` runs no more: gone, or a zombie (an orphan's is reaped by whoever adopted it,
/// which in a container may be slow to do so).
fn dead(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        // The state follows the command's closing parenthesis.
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X'))
    })
}

/// The children of this test process that have exited and were never waited for.
fn zombie_children() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid ...`; the command may hold spaces, so read after the `)`.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest)
                .unwrap_or("")
                .split_whitespace()
                .collect();
            fields.first() == Some(&"Z") && fields.get(1) == Some(&me.as_str())
        })
        .count()
}

async fn eventually(check: impl Fn() -> bool) -> bool {
    for _ in 0..100 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn mcp_stdio_lists_calls_answers_ping_and_leaves_no_process() {
    let (source, peer) = peer("normal", fast());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-06-18");
    assert_eq!(snapshot["server"]["name"], "stdio-peer");
    let answer = source
        .call(
            "echo",
            object(json!({"text": "hi\nthere"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "hi\nthere");
    assert!(eventually(|| peer.answers().contains("\"srv-1\"")).await);
    assert!(
        peer.answers().contains("\"result\": {}"),
        "{}",
        peer.answers()
    );
    let pids = peer.pids();
    assert_eq!(pids.len(), 1);
    source.close().await;
    assert!(
        gone(pids[0]),
        "the server process is still there (or a zombie)"
    );
}

#[tokio::test]
async fn mcp_stdio_a_server_that_dies_is_started_again_once() {
    let (source, peer) = peer("die-after-call", fast());
    assert_eq!(
        source
            .call(
                "echo",
                object(json!({"text": "a"})),
                &toolkit_core::CallContext::new()
            )
            .await
            .unwrap()[0]["text"],
        "a"
    );
    assert!(
        eventually(|| gone(peer.pids()[0])).await,
        "the dead server was not reaped"
    );
    assert_eq!(
        source
            .call(
                "echo",
                object(json!({"text": "b"})),
                &toolkit_core::CallContext::new()
            )
            .await
            .unwrap()[0]["text"],
        "b"
    );
    assert_eq!(peer.pids().len(), 2);
    source.close().await;
    assert!(peer.pids().into_iter().all(gone));
    assert_eq!(zombie_children(), 0);
}

#[tokio::test]
async fn mcp_stdio_a_call_in_flight_when_the_server_dies_is_unavailable() {
    let (source, peer) = peer("die-in-call", fast());
    let failed = source
        .call(
            "echo",
            object(json!({"text": "a"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    drop(source);
    assert!(eventually(|| peer.pids().into_iter().all(gone)).await);
}

/// The resilience layers over a stdio server killed in a call: the retry of a tool the host
/// says is safe to repeat starts the server again and answers; without it, the agent reads the
/// retryable failure.
#[tokio::test]
async fn mcp_stdio_a_server_killed_in_a_call_is_started_again_by_the_retry() {
    use std::sync::Arc;
    use toolkit_runtime::resilience::{Resilience, Resilient, Retry};

    let retry = Retry::new(2)
        .delays(Duration::from_millis(10), Duration::from_millis(100))
        .tools(["echo"]);
    let (source, retried) = peer("die-once", fast());
    let source = Resilient::new(Arc::new(source), Resilience::new().retry(retry)).unwrap();
    let answer = source
        .call(
            "echo",
            object(json!({"text": "again"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "again");
    assert_eq!(retried.pids().len(), 2, "killed once, started again once");
    assert_eq!(source.answers().retries, 1);

    let (source, peer) = peer("die-once", fast());
    let source = Resilient::new(Arc::new(source), Resilience::new()).unwrap();
    let failed = source
        .call(
            "echo",
            object(json!({"text": "once"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(failed.is_retryable(), "{failed}");
    drop(source);
    assert!(eventually(|| peer.pids().into_iter().all(gone)).await);
}

#[tokio::test]
async fn mcp_stdio_a_stubborn_server_is_killed() {
    let (source, peer) = peer("stubborn", fast());
    source.discover().await.unwrap();
    let pid = peer.pids()[0];
    source.close().await;
    assert!(
        gone(pid),
        "the stubborn server outlived SIGTERM and SIGKILL"
    );
}

#[tokio::test]
async fn mcp_stdio_a_stubborn_server_behind_a_shell_is_stopped_with_it() {
    // `sh -c` keeps the shell as the server's parent (a command follows the server's), as
    // `npx -y` and `uvx` do: the shell is the process started, the server its child, and the
    // server ignores both its stdin closing and SIGTERM.
    let (source, peer) = peer_by(fast(), |script, pidfile| {
        StdioCommand::new("sh").arg("-c").arg(format!(
            "python3 '{script}' stubborn '{}'; exit 0",
            pidfile.display()
        ))
    });
    source.discover().await.unwrap();
    let server = peer.pids()[0];
    source.close().await;
    assert!(
        eventually(|| dead(server)).await,
        "the server behind the shell outlived its source"
    );
    // Dropping the source stops it the same way.
    let (source, peer) = peer_by(fast(), |script, pidfile| {
        StdioCommand::new("sh").arg("-c").arg(format!(
            "python3 '{script}' stubborn '{}'; exit 0",
            pidfile.display()
        ))
    });
    source.discover().await.unwrap();
    let server = peer.pids()[0];
    drop(source);
    assert!(
        eventually(|| dead(server)).await,
        "the server behind the shell outlived its dropped source"
    );
}

#[tokio::test]
async fn mcp_stdio_answers_to_a_flood_of_server_requests_are_bounded() {
    // The server writes 20,000 pings without reading its stdin, then reads and counts the
    // answers that reached it. Answers that find the queue to its stdin full are dropped
    // rather than held in memory without end.
    let (source, _peer) = peer("flood", fast());
    source
        .call(
            "echo",
            object(json!({"text": "flood"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    let counted = source
        .call(
            "echo",
            object(json!({"text": "count"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    let answers: u64 = counted[0]["text"].as_str().unwrap().parse().unwrap();
    assert!(answers > 0, "no ping was answered");
    assert!(
        answers < 5_000,
        "{answers} answers were queued for a server that did not read them"
    );
    source.close().await;
}

#[tokio::test]
async fn mcp_stdio_a_dropped_source_stops_its_server() {
    let (source, peer) = peer("stubborn", fast());
    source.discover().await.unwrap();
    let pid = peer.pids()[0];
    drop(source);
    assert!(
        eventually(|| gone(pid)).await,
        "a dropped source left its server running"
    );
}

#[tokio::test]
async fn mcp_stdio_a_line_past_the_cap_fails_the_call() {
    let options = fast().max_response_bytes(1024 * 1024);
    let (source, peer) = peer("huge-line", options);
    let failed = source
        .call(
            "echo",
            object(json!({"text": "huge"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::CallFailed { .. }),
        "{failed}"
    );
    // The same server goes on: the rest of the long line is skipped, the next line is read.
    let answer = source
        .call(
            "echo",
            object(json!({"text": "b"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "b");
    assert_eq!(peer.pids().len(), 1, "the server was started again");
    source.close().await;
}

#[tokio::test]
async fn mcp_stdio_a_program_that_does_not_exist_is_unavailable() {
    let source = Mcp::stdio_with_options(
        "nothing",
        StdioCommand::new("/nonexistent/mcp-server"),
        fast(),
    );
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_stdio_a_server_that_never_answers_is_bounded_by_the_timeout() {
    let options = fast().timeout(Duration::from_millis(200));
    let source = Mcp::stdio_with_options("cat", StdioCommand::new("sleep").arg("30"), options);
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    source.close().await;
}

/// Log lines written by `tracing`, kept for a test.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn mcp_stdio_stderr_goes_to_tracing_and_is_never_read_as_protocol() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .finish();
    // The test's runtime runs on this thread only, so the reading task logs here too.
    let _guard = tracing::subscriber::set_default(subscriber);
    let (source, _peer) = peer("noisy", fast());
    let answer = source
        .call(
            "echo",
            object(json!({"text": "quiet"})),
            &toolkit_core::CallContext::new(),
        )
        .await;
    let logs = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    let answer = answer.unwrap_or_else(|error| panic!("{error}; logs: {logs}"));
    assert_eq!(answer[0]["text"], "quiet");
    source.close().await;
    let logs = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    assert!(logs.contains("got tools/call"), "{logs}");
    assert!(logs.contains("(a line too long to log"), "{logs}");
    assert!(logs.contains("scripted"), "the source is named: {logs}");
}

#[tokio::test]
async fn mcp_stdio_concurrent_calls_each_get_their_own_answer() {
    let (source, _peer) = peer("normal", fast());
    let source = std::sync::Arc::new(source);
    let calls = (0..50).map(|i| {
        let source = source.clone();
        async move {
            let text = format!("call {i}");
            let answer = source
                .call(
                    "echo",
                    object(json!({"text": text})),
                    &toolkit_core::CallContext::new(),
                )
                .await
                .unwrap();
            assert_eq!(answer[0]["text"], text);
        }
    });
    futures_util::future::join_all(calls).await;
    source.close().await;
}

#[tokio::test]
async fn mcp_stdio_a_stateless_server_slow_to_answer_discover_is_still_spoken_to() {
    // discover_wait is 300 ms; the server answers discover after a second, and refuses
    // initialize with -32022 meanwhile.
    let (source, _peer) = peer("slow-modern", fast());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2026-07-28");
    assert_eq!(snapshot["server"]["name"], "slow-peer");
    let answer = source
        .call(
            "echo",
            object(json!({"text": "late"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "late");
    source.close().await;
}
