//! Against a scripted server: what no real server sends on purpose.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::response::Response;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use toolkit_core::{Reason, ToolSource, ToolSourceError};
use toolkit_mcp::Mcp;

use super::scripted::*;
use super::{http, quick};
use crate::support::object;

/// A stateless server that answers tools/call with `call`, and lists one tool `t`.
async fn modern(call: impl Fn(&Recorded) -> Response + Send + Sync + 'static) -> Scripted {
    serve(move |r: Recorded| {
        let response = match r.method() {
            "server/discover" => discovered(&r),
            "tools/list" => tools_page(
                &r,
                json!([{"name": "t", "inputSchema": {"type": "object"}}]),
                None,
            ),
            _ => call(&r),
        };
        async move { response }
    })
    .await
}

async fn call_t(source: &Mcp) -> Result<Value, ToolSourceError> {
    source
        .call("t", object(json!({})), &toolkit_core::CallContext::new())
        .await
}

#[tokio::test]
async fn mcp_wire_statuses_map_to_reasons() {
    type Expected = fn(&Reason) -> bool;
    let cases: [(u16, Expected); 8] = [
        (401, |r| matches!(r, Reason::Authentication { .. })),
        (403, |r| matches!(r, Reason::Authentication { .. })),
        (408, |r| matches!(r, Reason::Unavailable { .. })),
        (
            429,
            |r| matches!(r, Reason::Unavailable { retry_after: Some(d), .. } if *d == Duration::from_secs(7)),
        ),
        (500, |r| matches!(r, Reason::Unavailable { .. })),
        (503, |r| {
            matches!(
                r,
                Reason::Unavailable {
                    retry_after: Some(_),
                    ..
                }
            )
        }),
        (400, |r| matches!(r, Reason::InvalidResponse { .. })),
        (418, |r| matches!(r, Reason::InvalidResponse { .. })),
    ];
    for (code, expected) in cases {
        let server = modern(move |_| {
            let mut response = status(code, "text/html", "<html>nope</html>");
            response
                .headers_mut()
                .insert("retry-after", HeaderValue::from_static("7"));
            response
        })
        .await;
        let failed = call_t(&http(&server.url)).await.unwrap_err();
        assert!(expected(&failed.reason), "HTTP {code}: {failed}");
        assert_eq!(
            failed.is_retryable(),
            matches!(failed.reason, Reason::Unavailable { .. })
        );
    }
}

#[tokio::test]
async fn mcp_wire_refused_credentials_fail_discovery_without_falling_back() {
    let server = serve(|_r| async { status(401, "text/plain", "no") }).await;
    let failed = http(&server.url).discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Authentication { .. }),
        "{failed}"
    );
    assert!(!failed.is_retryable());
    assert!(server.seen_method("initialize").is_empty());
}

#[tokio::test]
async fn mcp_wire_a_server_that_cannot_be_reached_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url: reqwest::Url = format!("http://{}/mcp", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    drop(listener);
    let source = http(&url);
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    let failed = call_t(&source).await.unwrap_err();
    assert!(failed.is_retryable());
}

#[tokio::test]
async fn mcp_wire_answers_that_are_not_mcp_are_invalid() {
    let bodies: Vec<fn(&Recorded) -> Response> = vec![
        |_| status(200, "text/html", "<html>hello</html>"),
        |_| status(200, "application/json", "{not json"),
        |_| json_body(json!({"jsonrpc": "2.0", "id": 9999, "result": {}})),
        |_| json_body(json!([1, 2, 3])),
        |_| status(202, "application/json", ""),
        |_| sse_body("data: not json\n\n"),
        |r| result(r, json!({"content": "not an array"})),
        |r| result(r, json!({"resultType": "task", "content": []})),
    ];
    for body in bodies {
        let server = modern(body).await;
        let failed = call_t(&http(&server.url)).await.unwrap_err();
        assert!(
            matches!(failed.reason, Reason::InvalidResponse { .. }),
            "{failed}"
        );
    }
}

#[tokio::test]
async fn mcp_wire_event_streams_with_priming_comments_and_notifications() {
    let server = modern(|r| {
        let id = r.id();
        sse_body(format!(
            ": keep-alive\n\nid: 0\nretry: 3000\ndata: \n\n\
             event: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{}}}}\n\n\
             data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"x\"}}}}\n\n\
             event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\n\
             data: \"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"ok\"}}]}}}}\r\n\r\n"
        ))
    })
    .await;
    let answer = call_t(&http(&server.url)).await.unwrap();
    assert_eq!(answer, json!([{"type": "text", "text": "ok"}]));
}

#[tokio::test]
async fn mcp_wire_a_batch_in_one_event_is_read() {
    let server = modern(|r| {
        let id = r.id();
        sse_body(format!(
            "data: [{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}},{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"structuredContent\":7}}}}]\n\n"
        ))
    })
    .await;
    assert_eq!(call_t(&http(&server.url)).await.unwrap(), json!(7));
}

#[tokio::test]
async fn mcp_wire_streams_that_end_or_break_early_are_unavailable() {
    let ended = modern(|_| {
        sse_body("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
    })
    .await;
    let failed = call_t(&http(&ended.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );

    let broken = modern(|_| {
        then_break(
            "text/event-stream",
            vec![": hello\n\n".into(), "data: {\"jsonrpc\"".into()],
        )
    })
    .await;
    let failed = call_t(&http(&broken.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_wire_garbage_in_an_event_stream_is_invalid() {
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => axum::response::Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(axum::body::Body::from(vec![
                    b'd', b'a', b't', b'a', b':', 0xff, 0xfe, b'\n', b'\n',
                ]))
                .unwrap(),
        }
    })
    .await;
    let failed = call_t(&http(&server.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_wire_a_stall_past_the_timeout_is_unavailable() {
    let options = quick().timeout(Duration::from_millis(200));
    // Stalls after the headers, in the middle of an event stream.
    let server = modern(|_| then_stall("text/event-stream", vec![": waiting\n\n".into()])).await;
    let source = Mcp::http_with_options(
        "peer",
        server.url.clone(),
        reqwest::Client::new(),
        options.clone(),
    );
    let failed = call_t(&source).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    // Stalls before any answer to server/discover: discovery is bounded too.
    let silent = serve(|_r| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        accepted()
    })
    .await;
    let source =
        Mcp::http_with_options("peer", silent.url.clone(), reqwest::Client::new(), options);
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
}

fn huge_body(content_type: &str, prefix: String, total: usize) -> Response {
    let chunk = axum::body::Bytes::from(vec![b'x'; 1024 * 1024]);
    let count = total / chunk.len();
    let stream = futures_util::stream::once(async move {
        Ok::<_, std::io::Error>(axum::body::Bytes::from(prefix))
    })
    .chain(futures_util::StreamExt::map(
        futures_util::stream::iter(0..count),
        move |_| Ok(chunk.clone()),
    ));
    axum::response::Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(axum::body::Body::from_stream(
            futures_util::StreamExt::boxed(stream),
        ))
        .unwrap()
}

use futures_util::StreamExt as _;

#[tokio::test]
async fn mcp_wire_a_hundred_megabyte_answer_is_cut_off() {
    let server = modern(|r| {
        huge_body(
            "application/json",
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"", r.id()),
            100 * 1024 * 1024,
        )
    })
    .await;
    // The default cap (16 MiB), not a test-sized one.
    let source = Mcp::http("peer", server.url.clone(), reqwest::Client::new());
    let failed = call_t(&source).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::CallFailed { .. }),
        "{failed}"
    );
    assert!(failed.model_message().contains("Ask for less"));

    let events =
        modern(|_| huge_body("text/event-stream", "data: ".into(), 100 * 1024 * 1024)).await;
    let source = Mcp::http_with_options(
        "peer",
        events.url.clone(),
        reqwest::Client::new(),
        quick().max_response_bytes(1024 * 1024),
    );
    let failed = call_t(&source).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::CallFailed { .. }),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_wire_a_huge_listing_is_an_invalid_response() {
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => huge_body("application/json", "{\"tools\":[\"".into(), 4 * 1024 * 1024),
        }
    })
    .await;
    let options = quick().max_response_bytes(1024 * 1024);
    let source =
        Mcp::http_with_options("peer", server.url.clone(), reqwest::Client::new(), options);
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_wire_endless_and_repeating_pagination_end() {
    let endless = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => {
                let next = format!(
                    "{}x",
                    r.body["params"]["cursor"].as_str().unwrap_or_default()
                );
                tools_page(&r, json!([]), Some(&next))
            }
        }
    })
    .await;
    let options = quick().max_pages(5);
    let source =
        Mcp::http_with_options("peer", endless.url.clone(), reqwest::Client::new(), options);
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    assert_eq!(endless.seen_method("tools/list").len(), 5);

    let repeating = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => tools_page(&r, json!([]), Some("same")),
        }
    })
    .await;
    let failed = http(&repeating.url).discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    assert_eq!(repeating.seen_method("tools/list").len(), 2);
}

#[tokio::test]
async fn mcp_wire_an_empty_cursor_is_a_cursor() {
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => match r.body["params"].get("cursor") {
                None => tools_page(&r, json!([{"name": "a", "inputSchema": {}}]), Some("")),
                Some(_) => tools_page(&r, json!([{"name": "b", "inputSchema": {}}]), None),
            },
        }
    })
    .await;
    let definitions = http(&server.url).discover().await.unwrap();
    assert_eq!(definitions.len(), 2);
    assert_eq!(
        server.seen_method("tools/list")[1].body["params"]["cursor"],
        ""
    );
}

#[tokio::test]
async fn mcp_wire_bad_tools_are_left_out_of_discover() {
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => tools_page(
                &r,
                json!([
                    {"name": "good", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}},
                    {"name": "dup", "inputSchema": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}},
                    {"name": "object", "inputSchema": {"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}},
                    {"name": "deep", "inputSchema": {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}},
                    {"name": "token", "inputSchema": {"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}},
                    {"name": "", "inputSchema": {}},
                    {"name": "noschema"},
                    {"name": "good", "inputSchema": {}}
                ]),
                None,
            ),
        }
    })
    .await;
    let definitions = http(&server.url).discover().await.unwrap();
    let names: Vec<_> = definitions.iter().map(|d| d.name()).collect();
    assert_eq!(names, ["good"]);
}

#[tokio::test]
async fn mcp_wire_stateless_requests_carry_meta_and_headers() {
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            "tools/list" => tools_page(
                &r,
                json!([{"name": "wëird name", "inputSchema": {"type": "object", "properties": {
                    "where": {"type": "object", "properties": {"city": {"type": "string", "x-mcp-header": "City"}}},
                    "n": {"type": "integer", "x-mcp-header": "N"},
                    "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                    "gone": {"type": "string", "x-mcp-header": "Gone"}
                }}}]),
                None,
            ),
            _ => text_result(&r, "ok"),
        }
    })
    .await;
    let source = http(&server.url);
    source.discover().await.unwrap();
    source
        .call(
            "wëird name",
            object(
                json!({"where": {"city": "a\r\nX-Evil: 1"}, "n": 42, "flag": false, "gone": null}),
            ),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    let call = &server.seen_method("tools/call")[0];
    assert_eq!(call.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(call.header("mcp-method"), Some("tools/call"));
    assert_eq!(call.header("mcp-name"), Some("=?base64?d8OraXJkIG5hbWU=?="));
    assert_eq!(
        call.header("mcp-param-city"),
        Some("=?base64?YQ0KWC1FdmlsOiAx?=")
    );
    assert_eq!(call.header("mcp-param-n"), Some("42"));
    assert_eq!(call.header("mcp-param-flag"), Some("false"));
    assert_eq!(call.header("mcp-param-gone"), None);
    assert_eq!(call.header("x-evil"), None);
    assert_eq!(
        call.header("accept"),
        Some("application/json, text/event-stream")
    );
    let meta = &call.body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "toolkit"
    );
    assert_eq!(call.header("mcp-session-id"), None);
}

/// A stateless server that refuses (-32020) a call without the header its current marks ask for.
async fn marking(header: Arc<std::sync::Mutex<&'static str>>) -> Scripted {
    serve(move |r: Recorded| {
        let header = *header.lock().unwrap();
        async move {
            match r.method() {
                "server/discover" => discovered(&r),
                "tools/list" => tools_page(
                    &r,
                    json!([{"name": "t", "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": header}}}}]),
                    None,
                ),
                _ => match r.header(&format!("mcp-param-{header}")) {
                    Some("eu") => text_result(&r, "routed"),
                    _ => rpc_error(&r, 400, -32020, "Header mismatch", None),
                },
            }
        }
    })
    .await
}

#[tokio::test]
async fn mcp_wire_header_mismatch_lists_again_and_retries_once_with_changed_marks() {
    let header = Arc::new(std::sync::Mutex::new("Region"));
    let server = marking(header.clone()).await;
    let source = http(&server.url);
    source.discover().await.unwrap();
    assert_eq!(call_region(&source).await.unwrap()[0]["text"], "routed");
    // The server changes its tools: the mark is now `Zone`.
    *header.lock().unwrap() = "Zone";
    assert_eq!(call_region(&source).await.unwrap()[0]["text"], "routed");
    let calls = server.seen_method("tools/call");
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[1].header("mcp-param-region"), Some("eu"));
    assert_eq!(calls[2].header("mcp-param-zone"), Some("eu"));
    assert_eq!(server.seen_method("tools/list").len(), 2);
}

async fn call_region(source: &Mcp) -> Result<Value, ToolSourceError> {
    source
        .call(
            "t",
            object(json!({"region": "eu"})),
            &toolkit_core::CallContext::new(),
        )
        .await
}

#[tokio::test]
async fn mcp_wire_header_mismatch_with_nothing_to_change_is_not_retried() {
    let server = modern(|r| rpc_error(r, 400, -32020, "Header mismatch", None)).await;
    let failed = call_t(&http(&server.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    assert_eq!(server.seen_method("tools/call").len(), 1);
    assert_eq!(server.seen_method("tools/list").len(), 1);
}

#[tokio::test]
async fn mcp_wire_input_required_is_answered_and_sent_back_a_bounded_number_of_times() {
    let server = modern(|r| match r.body["params"]["requestState"].as_str() {
        None => result(
            r,
            json!({"resultType": "input_required", "requestState": "s1"}),
        ),
        Some("s1") => result(
            r,
            json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]}),
        ),
        Some(_) => rpc_error(r, 200, -32602, "bad state", None),
    })
    .await;
    assert_eq!(call_t(&http(&server.url)).await.unwrap()[0]["text"], "done");

    let forever = modern(|r| {
        result(
            r,
            json!({"resultType": "input_required", "requestState": "again"}),
        )
    })
    .await;
    let failed = call_t(&http(&forever.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    // The first call and 8 rounds (`input_required_rounds`).
    assert_eq!(forever.seen_method("tools/call").len(), 9);

    // Asked an elicitation with no host callback: declined, sent back under its key, each round.
    let asks = modern(|r| {
        result(r, json!({"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create", "params": {}}}}))
    })
    .await;
    let failed = call_t(&http(&asks.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    let calls = asks.seen_method("tools/call");
    assert_eq!(calls.len(), 9);
    assert_eq!(calls[0].body["params"].get("inputResponses"), None);
    assert_eq!(
        calls[1].body["params"]["inputResponses"],
        json!({"q": {"action": "decline"}})
    );
    assert_eq!(calls[1].body["params"].get("requestState"), None);
}

#[tokio::test]
async fn mcp_wire_json_rpc_errors_of_a_call() {
    let server = modern(|r| match r.body["params"]["arguments"]["case"].as_str() {
        Some("unknown") => rpc_error(r, 200, -32602, "Unknown tool: gone", None),
        Some("invalid") => rpc_error(r, 200, -32602, "count must be positive", None),
        Some("missing-file") => rpc_error(r, 200, -32602, "File not found: notes.txt", None),
        Some("missing-method") => rpc_error(r, 404, -32601, "Method not found", None),
        _ => rpc_error(r, 200, -32603, "internal at 10.0.0.7", None),
    })
    .await;
    let source = http(&server.url);
    let context = toolkit_core::CallContext::new();
    let call = |case: &'static str| source.call("t", object(json!({"case": case})), &context);
    // A tool the server does not list (the source lists it to know, never having listed).
    let unknown = source
        .call(
            "gone",
            object(json!({"case": "unknown"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(unknown.reason, Reason::NotFound { .. }),
        "{unknown}"
    );
    assert_eq!(server.seen_method("tools/list").len(), 1);
    assert_eq!(
        call("invalid").await.unwrap_err().reason,
        Reason::invalid_input("count must be positive")
    );
    // A listed tool's -32602 is about its input, whatever its words say: the model reads them.
    assert_eq!(
        call("missing-file").await.unwrap_err().reason,
        Reason::invalid_input("File not found: notes.txt")
    );
    assert!(matches!(
        call("missing-method").await.unwrap_err().reason,
        Reason::NotFound { .. }
    ));
    let internal = call("internal").await.unwrap_err();
    assert!(matches!(internal.reason, Reason::Unknown { .. }));
    assert!(!internal.model_message().contains("10.0.0.7"));
}

/// A server of the session revisions: discover is refused (as `status`), sessions are numbered,
/// and `expire` says whether a call with the given session is refused as a dead session.
async fn sessions(
    discover_refusal: fn(&Recorded) -> Response,
    expire: impl Fn(&str) -> Option<Response> + Send + Sync + 'static,
) -> Scripted {
    let count = Arc::new(AtomicUsize::new(0));
    serve(move |r: Recorded| {
        let response = match (r.http_method.as_str(), r.method()) {
            ("DELETE", _) => status(202, "text/plain", ""),
            (_, "server/discover") => discover_refusal(&r),
            (_, "initialize") => {
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                let version = r.body["params"]["protocolVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                initialized(&r, &version, Some(&format!("s{n}")))
            }
            (_, "notifications/initialized") | (_, "notifications/cancelled") => accepted(),
            (_, method) => {
                let session = r.header("mcp-session-id").unwrap_or_default().to_owned();
                match expire(&session) {
                    Some(refusal) => refusal,
                    None if method == "tools/list" => {
                        tools_page(&r, json!([{"name": "t", "inputSchema": {}}]), None)
                    }
                    None if method == "tools/call" && r.body["params"]["name"] == "slow" => {
                        return futures_util::future::Either::Left(async {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            accepted()
                        });
                    }
                    None => text_result(&r, &session),
                }
            }
        };
        futures_util::future::Either::Right(async move { response })
    })
    .await
}

#[tokio::test]
async fn mcp_wire_a_session_ended_mid_use_is_begun_again_once() {
    // 404, as the specification has it.
    let server = sessions(
        |r| rpc_error(r, 404, -32601, "Method not found", None),
        |session| {
            (session == "s1").then(|| status(404, "text/plain", "Not Found: Session not found"))
        },
    )
    .await;
    let source = http(&server.url);
    assert_eq!(call_t(&source).await.unwrap()[0]["text"], "s2");
    assert_eq!(server.seen_method("initialize").len(), 2);
    assert_eq!(
        server.seen_method("initialize")[0].body["params"]["protocolVersion"],
        "2025-11-25"
    );
    assert_eq!(call_t(&source).await.unwrap()[0]["text"], "s2");
    let call = &server.seen_method("tools/call")[1];
    assert_eq!(call.header("mcp-protocol-version"), Some("2025-11-25"));
    // No stateless `_meta` in a session: only the progress token (progress keeps a call alive).
    let meta = call.body["params"]["_meta"].as_object().unwrap();
    assert_eq!(meta.keys().collect::<Vec<_>>(), ["progressToken"]);

    // 400 naming the session, as server-everything answers.
    let server = sessions(|_| status(400, "application/json", ""), |session| {
        (session == "s1").then(|| {
            status(400, "application/json", r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#)
        })
    })
    .await;
    assert_eq!(call_t(&http(&server.url)).await.unwrap()[0]["text"], "s2");

    // A server that ends every session: begun again once, then unavailable.
    let server = sessions(
        |_| status(405, "text/plain", ""),
        |_| Some(status(404, "text/plain", "")),
    )
    .await;
    let failed = call_t(&http(&server.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    assert_eq!(server.seen_method("initialize").len(), 2);
}

#[tokio::test]
async fn mcp_wire_a_dropped_source_ends_its_session_and_a_dropped_call_is_cancelled() {
    let server = sessions(
        |r| rpc_error(r, 200, -32601, "Method not found", None),
        |_| None,
    )
    .await;
    let source = http(&server.url);
    call_t(&source).await.unwrap();
    let context = toolkit_core::CallContext::new();
    let slow = source.call("slow", object(json!({})), &context);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), slow)
            .await
            .is_err()
    );
    assert!(
        server
            .wait_until(|seen| seen.iter().any(|r| r.method() == "notifications/cancelled"))
            .await
    );
    let cancelled = &server.seen_method("notifications/cancelled")[0];
    assert_eq!(cancelled.header("mcp-session-id"), Some("s1"));
    let slow_id = server
        .seen()
        .iter()
        .find(|r| r.body["params"]["name"] == "slow")
        .unwrap()
        .id();
    assert_eq!(cancelled.body["params"]["requestId"], slow_id);

    drop(source);
    assert!(
        server
            .wait_until(|seen| seen.iter().any(|r| r.http_method == "DELETE"))
            .await
    );
    let delete = server
        .seen()
        .into_iter()
        .find(|r| r.http_method == "DELETE")
        .unwrap();
    assert_eq!(delete.header("mcp-session-id"), Some("s1"));
}

#[tokio::test]
async fn mcp_wire_versions_are_chosen_from_what_the_server_lists() {
    // -32022 lists the versions spoken: a session in the newest of ours.
    let server = sessions(
        |r| {
            rpc_error(
                r,
                400,
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": ["2024-11-05", "2025-03-26"], "requested": "2026-07-28"})),
            )
        },
        |_| None,
    )
    .await;
    let snapshot = http(&server.url).snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-03-26");
    assert_eq!(
        server.seen_method("initialize")[0].body["params"]["protocolVersion"],
        "2025-03-26"
    );

    // A DiscoverResult listing only session revisions, as a narrowed rmcp answers.
    let server = sessions(
        |r| {
            result(
                r,
                json!({"supportedVersions": ["2024-11-05", "2025-06-18"], "capabilities": {}}),
            )
        },
        |_| None,
    )
    .await;
    let snapshot = http(&server.url).snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-06-18");

    // None we speak.
    let server = sessions(
        |r| result(r, json!({"supportedVersions": ["2031-01-01"]})),
        |_| None,
    )
    .await;
    let failed = http(&server.url).discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unsupported { .. }),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_wire_a_ping_on_the_stream_is_answered_and_other_requests_refused() {
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => rpc_error(&r, 404, -32601, "Method not found", None),
            "initialize" => initialized(&r, "2025-06-18", Some("abc")),
            "tools/call" => sse_body(format!(
                "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}}\n\n\
                 event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"p2\",\"method\":\"sampling/createMessage\",\"params\":{{}}}}\n\n\
                 event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[]}}}}\n\n",
                r.id()
            )),
            _ => accepted(),
        }
    })
    .await;
    let source = http(&server.url);
    assert_eq!(call_t(&source).await.unwrap(), json!([]));
    let answered = |id: &'static str| {
        move |seen: &[Recorded]| {
            seen.iter()
                .any(|r| r.body["id"] == id && r.body.get("method").is_none())
        }
    };
    assert!(server.wait_until(answered("p1")).await);
    assert!(server.wait_until(answered("p2")).await);
    let seen = server.seen();
    let pong = seen.iter().find(|r| r.body["id"] == "p1").unwrap();
    assert_eq!(pong.body["result"], json!({}));
    assert_eq!(pong.header("mcp-session-id"), Some("abc"));
    let refusal = seen.iter().find(|r| r.body["id"] == "p2").unwrap();
    assert_eq!(refusal.body["error"]["code"], -32601);
}

#[tokio::test]
async fn mcp_wire_no_failure_a_model_reads_names_the_url_or_a_credential() {
    const SECRET: &str = "sk-very-secret-token";
    let mut headers = HeaderMap::new();
    headers.insert(
        AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {SECRET}")).unwrap(),
    );
    let client = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap();
    let scripts: Vec<fn(&Recorded) -> Response> = vec![
        |_| status(401, "text/plain", "bad token sk-very-secret-token"),
        |_| status(500, "text/plain", "sk-very-secret-token"),
        |_| status(400, "text/plain", "sk-very-secret-token"),
        |_| status(200, "text/html", "sk-very-secret-token"),
        |r| {
            rpc_error(
                r,
                200,
                -32603,
                "sk-very-secret-token at http://127.0.0.1",
                None,
            )
        },
        |_| sse_body("data: sk-very-secret-token\n\n"),
    ];
    for script in scripts {
        let server = modern(script).await;
        let source = Mcp::http_with_options("peer", server.url.clone(), client.clone(), quick());
        let failed = call_t(&source).await.unwrap_err();
        let read = failed.to_failure().to_json().to_string();
        let port = server.url.port().unwrap().to_string();
        assert!(!read.contains(SECRET), "{read}");
        assert!(
            !read.contains("127.0.0.1") && !read.contains(&port),
            "{read}"
        );
        // The token was sent, by the client the host built.
        assert!(
            server
                .seen()
                .iter()
                .all(|r| r.header("authorization") == Some("Bearer sk-very-secret-token"))
        );
    }
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url: reqwest::Url =
            format!("http://{}/mcp?key={SECRET}", listener.local_addr().unwrap())
                .parse()
                .unwrap();
        drop(listener);
        Mcp::http_with_options("peer", url, client, quick())
    };
    let failed = call_t(&refused).await.unwrap_err();
    let read = failed.to_failure().to_json().to_string();
    assert!(
        !read.contains(SECRET) && !read.contains("127.0.0.1"),
        "{read}"
    );
    assert!(!failed.reason.description().contains(SECRET), "{failed}");
}

#[tokio::test]
async fn mcp_wire_a_huge_refusal_body_is_not_read_whole() {
    let server = modern(|_| {
        let mut response = huge_body("application/json", "{\"error\":".into(), 64 * 1024 * 1024);
        *response.status_mut() = axum::http::StatusCode::BAD_REQUEST;
        response
    })
    .await;
    let failed = call_t(&http(&server.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
}
