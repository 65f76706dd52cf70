//! Integration tests of toolkit-serve, in one binary (one link) with a module per concern.
//!
//! Serving a toolkit as an MCP server: the stdin guard over synthetic stdins (here), and the
//! server itself in-process, as a child process (`toolkit-serve-fixture`, a binary of
//! toolkit-runtime-tests, found beside the test executable), over HTTP and against real clients
//! (modules): rmcp's, the TypeScript and Python SDKs' (their scripts beside these files), and
//! toolkit-mcp's source, with the peers `scripts/install-test-peers` installs.
#![allow(clippy::unwrap_used, clippy::panic)]

#[cfg(feature = "testing")]
mod approval;
// The demo toolkit, shared by path with `toolkit-serve-fixture` and toolkit-mcp's tests.
#[allow(dead_code)]
mod demo;
mod direct_calls;
mod http;
#[cfg(feature = "testing")]
mod in_process;
mod interop;
#[cfg(feature = "testing")]
mod output_schema;
mod pass_through;
#[cfg(feature = "testing")]
mod process;
// Where the peers are and how they start: toolkit-mcp's tests' `processes.rs`, shared by path.
#[path = "../../../toolkit-mcp/tests/mcp/processes.rs"]
mod processes;
mod relay;
// Shared by path with toolkit-mcp's tests.
mod serving;
// Shared with toolkit-core's tests, where it lives.
#[path = "../../../toolkit-core/tests/core/support.rs"]
mod support;

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use toolkit_serve::stdin_guard::{Frame, MAX_LINE_UTF16, Reply, StdinGuard, StdinGuardOptions};

/// `toolkit-serve-fixture` (the demo toolkit served over stdio), a binary of
/// toolkit-runtime-tests, beside this test's executable.
fn fixture() -> std::path::PathBuf {
    processes::peer_binary("toolkit-serve-fixture", "serve-test-peer")
}

/// A stdin that gives exactly one piece per read.
struct Pieces {
    pieces: Vec<Vec<u8>>,
    next: usize,
}

impl Pieces {
    fn new(pieces: Vec<Vec<u8>>) -> Self {
        Self { pieces, next: 0 }
    }

    /// `bytes`, one byte per read.
    fn bytewise(bytes: &[u8]) -> Self {
        Self::new(bytes.iter().map(|byte| vec![*byte]).collect())
    }
}

impl AsyncRead for Pieces {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Some(piece) = self.pieces.get(self.next) {
            assert!(
                piece.len() <= buf.remaining(),
                "a piece larger than the guard's read"
            );
            buf.put_slice(piece);
            self.next += 1;
        }
        Poll::Ready(Ok(()))
    }
}

async fn frames_of(reader: impl AsyncRead + Unpin, options: StdinGuardOptions) -> Vec<Frame> {
    let mut guard = StdinGuard::with_options(reader, options);
    let mut frames = Vec::new();
    while let Some(frame) = guard.next_frame().await.unwrap() {
        frames.push(frame);
    }
    frames
}

async fn frames(stdin: &[u8]) -> Vec<Frame> {
    frames_of(stdin, StdinGuardOptions::default()).await
}

fn message(value: Value) -> Frame {
    Frame::Message(value)
}

const PARSE: Frame = Frame::Reply(Reply::ParseError);
const INVALID: Frame = Frame::Reply(Reply::InvalidRequest);

#[test]
fn the_replies_are_the_exact_json_rpc_lines() {
    assert_eq!(
        Reply::ParseError.line(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
    );
    assert_eq!(
        Reply::InvalidRequest.line(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#
    );
    assert_eq!(MAX_LINE_UTF16, 16 * 1024 * 1024);
    assert_eq!(StdinGuardOptions::default().max_line_utf16, MAX_LINE_UTF16);
}

#[tokio::test]
async fn serve_messages_come_through_one_per_line() {
    let stdin = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n";
    assert_eq!(
        frames(stdin).await,
        [
            message(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
            message(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        ]
    );
}

#[tokio::test]
async fn serve_a_line_of_json_whitespace_is_ignored() {
    let stdin = b"\n \n\t\r\n\r\n   \t \n{\"method\":\"m\"}\n\n";
    assert_eq!(frames(stdin).await, [message(json!({"method": "m"}))]);
    assert_eq!(frames(b"").await, []);
    assert_eq!(frames(b" \t").await, []);
}

#[tokio::test]
async fn serve_a_line_that_is_not_json_is_answered_and_reading_goes_on() {
    let stdin =
        b"not json\n{\"method\":\"m\"\n{\"method\":\"m\"} trailing\n\x0B\n{\"method\":\"m\"}\n";
    assert_eq!(
        frames(stdin).await,
        [PARSE, PARSE, PARSE, PARSE, message(json!({"method": "m"}))]
    );
}

#[tokio::test]
async fn serve_json_nested_too_deep_is_a_parse_error_not_a_crash() {
    let deep = format!("{}\n{{\"method\":\"m\"}}\n", "[".repeat(100_000));
    assert_eq!(
        frames(deep.as_bytes()).await,
        [PARSE, message(json!({"method": "m"}))]
    );
}

#[tokio::test]
async fn serve_json_that_is_no_json_rpc_message_is_an_invalid_request() {
    for line in [
        "1",
        "\"text\"",
        "null",
        "true",
        "{}",
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"method":1}"#,
        r#"{"method":null,"id":null}"#,
        r#"{"method":{"name":"m"}}"#,
        r#"{"id":null}"#,
        r#"{"id":null,"result":{}}"#,
    ] {
        let stdin = format!("{line}\n{{\"method\":\"m\"}}\n");
        assert_eq!(
            frames(stdin.as_bytes()).await,
            [INVALID, message(json!({"method": "m"}))],
            "{line}"
        );
    }
}

#[tokio::test]
async fn serve_arrays_responses_and_odd_requests_go_to_the_server() {
    for value in [
        json!([]),
        json!([{"method": "m"}]),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": "a", "error": {"code": 1, "message": "x"}}),
        json!({"method": 5, "id": 2}),
        json!({"method": "m", "id": null}),
        json!({"method": "m"}),
    ] {
        let stdin = format!("{value}\n");
        assert_eq!(
            frames(stdin.as_bytes()).await,
            [message(value.clone())],
            "{value}"
        );
    }
}

#[tokio::test]
async fn serve_the_last_line_needs_no_newline() {
    assert_eq!(
        frames(b"{\"method\":\"m\"}").await,
        [message(json!({"method": "m"}))]
    );
    assert_eq!(
        frames(b"{\"method\":\"m\"}\nnope").await,
        [message(json!({"method": "m"})), PARSE]
    );
}

#[tokio::test]
async fn serve_a_byte_order_mark_is_stripped_only_at_the_start() {
    let bom = "\u{FEFF}";
    let stdin = format!("{bom}{{\"method\":\"a\"}}\n{bom}{{\"method\":\"b\"}}\n");
    assert_eq!(
        frames(stdin.as_bytes()).await,
        [message(json!({"method": "a"})), PARSE]
    );
    // A newline first: the mark that follows is not at the start of the stream.
    let stdin = format!("\n{bom}{{\"method\":\"a\"}}\n");
    assert_eq!(frames(stdin.as_bytes()).await, [PARSE]);
    // Only one mark is stripped.
    let stdin = format!("{bom}{bom}{{\"method\":\"a\"}}\n");
    assert_eq!(frames(stdin.as_bytes()).await, [PARSE]);
    // A mark alone is an empty line.
    assert_eq!(frames(bom.as_bytes()).await, []);
}

#[tokio::test]
async fn serve_a_byte_order_mark_split_across_reads_is_stripped() {
    let pieces = vec![
        b"\xEF".to_vec(),
        b"\xBB".to_vec(),
        b"\xBF{\"method\":\"a\"}\n".to_vec(),
    ];
    let frames = frames_of(Pieces::new(pieces), StdinGuardOptions::default()).await;
    assert_eq!(frames, [message(json!({"method": "a"}))]);
    let stdin = "\u{FEFF}{\"method\":\"a\"}\n";
    let frames = frames_of(
        Pieces::bytewise(stdin.as_bytes()),
        StdinGuardOptions::default(),
    )
    .await;
    assert_eq!(frames, [message(json!({"method": "a"}))]);
}

#[tokio::test]
async fn serve_a_character_split_across_reads_is_decoded_whole() {
    let stdin = "{\"method\":\"é€😀\"}\n{\"method\":\"ok\"}\n";
    let expected = [
        message(json!({"method": "é€😀"})),
        message(json!({"method": "ok"})),
    ];
    let bytewise = frames_of(
        Pieces::bytewise(stdin.as_bytes()),
        StdinGuardOptions::default(),
    );
    assert_eq!(bytewise.await, expected);
    // Split at every byte of the emoji in two reads.
    let bytes = stdin.as_bytes();
    let emoji = stdin.find('😀').unwrap();
    for cut in emoji + 1..emoji + 4 {
        let pieces = vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()];
        let split = frames_of(Pieces::new(pieces), StdinGuardOptions::default()).await;
        assert_eq!(split, expected, "cut at {cut}");
    }
}

#[tokio::test]
async fn serve_invalid_utf8_becomes_the_replacement_character() {
    let stdin = b"{\"method\":\"a\xFFb\"}\n{\"method\":\"c\xE2\x82\"}\n{\"method\":\"d\xE2\x82";
    let expected = [
        message(json!({"method": "a\u{FFFD}b"})),
        message(json!({"method": "c\u{FFFD}"})),
        PARSE, // the string is cut off by the end of the stream
    ];
    assert_eq!(frames(stdin).await, expected);
    let bytewise = frames_of(Pieces::bytewise(stdin), StdinGuardOptions::default()).await;
    assert_eq!(bytewise, expected);
    // A sequence cut off by a newline is replaced; the newline still ends the line.
    assert_eq!(
        frames(b"\xE2\x82\n{\"method\":\"m\"}\n").await,
        [PARSE, message(json!({"method": "m"}))]
    );
}

fn capped(max_line_utf16: usize) -> StdinGuardOptions {
    StdinGuardOptions::default().max_line_utf16(max_line_utf16)
}

#[tokio::test]
async fn serve_a_line_at_the_cap_is_kept_and_one_over_is_answered_once() {
    let at_cap = r#"{"method":"abcde"}"#; // 18 units
    let over = r#"{"method":"abcdef"}"#; // 19 units
    let stdin = format!("{at_cap}\n{over}\n{at_cap}\n");
    let frames = frames_of(stdin.as_bytes(), capped(18)).await;
    assert_eq!(
        frames,
        [
            message(json!({"method": "abcde"})),
            PARSE,
            message(json!({"method": "abcde"}))
        ]
    );
}

#[tokio::test]
async fn serve_the_cap_counts_utf16_code_units() {
    // 13 chars, 15 units: '😀' is a surrogate pair (and 4 bytes).
    let line = r#"{"method":"😀"}"#;
    assert_eq!(line.encode_utf16().count(), 15);
    let stdin = format!("{line}\n");
    assert_eq!(
        frames_of(stdin.as_bytes(), capped(15)).await,
        [message(json!({"method": "😀"}))]
    );
    // 13 chars would fit a cap of 14; 15 units do not.
    assert_eq!(frames_of(stdin.as_bytes(), capped(14)).await, [PARSE]);
}

#[tokio::test]
async fn serve_a_long_line_over_many_reads_gets_one_reply() {
    let mut stdin = vec![b'x'; 10_000];
    stdin.extend_from_slice(b"\n{\"method\":\"m\"}\n");
    let pieces = stdin.chunks(7).map(<[u8]>::to_vec).collect();
    let frames = frames_of(Pieces::new(pieces), capped(100)).await;
    assert_eq!(frames, [PARSE, message(json!({"method": "m"}))]);
    // Without a newline before the end of the stream: still one reply.
    let frames = frames_of(&[b'x'; 10_000][..], capped(100)).await;
    assert_eq!(frames, [PARSE]);
}

#[tokio::test]
async fn serve_a_character_cut_off_by_the_cap_does_not_leak_into_the_next_line() {
    let pieces = vec![
        b"xxxxxxxxxxxxxxxxxxxx\xE2".to_vec(),
        b"\x82\xACxx\n".to_vec(),
        b"{\"method\":\"m\"}\n".to_vec(),
    ];
    let frames = frames_of(Pieces::new(pieces), capped(14)).await;
    assert_eq!(frames, [PARSE, message(json!({"method": "m"}))]);
}

#[tokio::test]
async fn serve_the_reply_comes_as_soon_as_the_line_passes_the_cap() {
    let (mut client, server) = tokio::io::duplex(1024);
    let mut guard = StdinGuard::with_options(server, capped(100));
    // 200 units and no newline yet, the writer still open: the reply does not wait.
    client.write_all(&[b'x'; 200]).await.unwrap();
    assert_eq!(guard.next_frame().await.unwrap(), Some(PARSE));
    client.write_all(&[b'y'; 500]).await.unwrap();
    client
        .write_all(b"yyy\n{\"method\":\"m\"}\n")
        .await
        .unwrap();
    drop(client);
    assert_eq!(
        guard.next_frame().await.unwrap(),
        Some(message(json!({"method": "m"})))
    );
    assert_eq!(guard.next_frame().await.unwrap(), None);
}

/// A stdin of one line of `length` bytes of `x`, then `after`, produced chunk by chunk from one
/// static block: the line itself is never in memory.
struct LongLine {
    left: u64,
    after: &'static [u8],
}

static BLOCK: [u8; 1 << 16] = [b'x'; 1 << 16];

impl AsyncRead for LongLine {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.left > 0 {
            let size = buf.remaining().min(BLOCK.len());
            let size = usize::try_from(self.left).map_or(size, |left| left.min(size));
            buf.put_slice(&BLOCK[..size]);
            self.left -= size as u64;
        } else {
            let size = buf.remaining().min(self.after.len());
            buf.put_slice(&self.after[..size]);
            self.after = &self.after[size..];
        }
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn serve_a_one_gibibyte_line_is_answered_once_and_serving_goes_on() {
    let started = Instant::now();
    let stdin = LongLine {
        left: 1 << 30,
        after: b"\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n",
    };
    let frames = frames_of(stdin, StdinGuardOptions::default()).await;
    assert_eq!(
        frames,
        [
            PARSE,
            message(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
        ]
    );
    eprintln!("1 GiB line framed in {:?}", started.elapsed());
}

/// A stdin that fails once between two reads.
struct FailsOnce {
    reads: Vec<std::io::Result<Vec<u8>>>,
}

impl AsyncRead for FailsOnce {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.reads.is_empty() {
            return Poll::Ready(Ok(()));
        }
        match self.reads.remove(0) {
            Ok(bytes) => {
                buf.put_slice(&bytes);
                Poll::Ready(Ok(()))
            }
            Err(error) => Poll::Ready(Err(error)),
        }
    }
}

#[tokio::test]
async fn serve_a_read_error_is_given_back_and_nothing_read_is_lost() {
    let reads = vec![
        Ok(b"{\"method\":\"a\"}\n{\"meth".to_vec()),
        Err(std::io::Error::other("stdin hiccup")),
        Ok(b"od\":\"b\"}\n".to_vec()),
    ];
    let mut guard = StdinGuard::new(FailsOnce { reads });
    assert_eq!(
        guard.next_frame().await.unwrap(),
        Some(message(json!({"method": "a"})))
    );
    let error = guard.next_frame().await.unwrap_err();
    assert_eq!(error.to_string(), "stdin hiccup");
    assert_eq!(
        guard.next_frame().await.unwrap(),
        Some(message(json!({"method": "b"})))
    );
    assert_eq!(guard.next_frame().await.unwrap(), None);
}
