//! An MCP server's `notifications/progress` told to the host of the call, and the spans of an
//! MCP source (discovery, each request, the call) with the transport and revision.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use toolkit_core::{CallContext, ToolSource, Toolkit, ToolkitOptions, progress::Progress};
use toolkit_mcp::{Mcp, McpOptions, StdioCommand};

use super::quick;
use super::rmcp_peer::{Peer, serve};
use crate::span_capture::{Spans, assert_nothing_secret, capturing};

const SECRET: &str = "Bearer s3cret-t0ken";

fn peer() -> Peer {
    Peer::new(vec![json!({
        "name": "progressing",
        "description": "Takes a while, and says how far it is.",
        "inputSchema": { "type": "object" }
    })])
}

/// A source whose client carries a credential, as a host's does.
fn source(url: &reqwest::Url) -> Mcp {
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_static(SECRET));
    let client = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap();
    Mcp::http_with_options("peer", url.clone(), client, quick())
}

#[tokio::test]
async fn mcp_progress_reaches_the_host_that_asked_for_it() {
    for sessions in [false, true] {
        let server = serve(peer(), sessions, false).await;
        let source = Arc::new(source(&server.url));
        let definitions = source.discover().await.unwrap();
        let toolkit = Toolkit::from_source(
            Arc::clone(&source) as _,
            definitions,
            &ToolkitOptions::default(),
        )
        .unwrap();

        let told: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let sink = Arc::clone(&told);
        let context =
            CallContext::new().progress(move |progress| sink.lock().unwrap().push(progress));
        let answer = toolkit
            .call_with("progressing", json!({}), &context)
            .await
            .unwrap();
        assert_eq!(
            answer,
            json!([{ "type": "text", "text": "asked for progress: true" }])
        );
        let told = told.lock().unwrap().clone();
        assert_eq!(
            told,
            [1.0, 2.0]
                .into_iter()
                .map(|step| Progress::Reported {
                    tool: "progressing".to_owned(),
                    // rmcp's server writes its f64s as `1.0`: they stay so.
                    progress: serde_json::Number::from_f64(step).unwrap(),
                    total: serde_json::Number::from_f64(2.0),
                    message: Some(format!("step {step} of 2")),
                })
                .collect::<Vec<_>>(),
            "sessions: {sessions}"
        );

        // With no callback, progress is asked for all the same (it keeps the call alive past
        // its timeout), and told to no one.
        let answer = toolkit
            .call_with("progressing", json!({}), &CallContext::new())
            .await
            .unwrap();
        assert_eq!(
            answer,
            json!([{ "type": "text", "text": "asked for progress: true" }])
        );
        // Unless progress may not keep it alive: then it is not asked for.
        let options = quick().max_call_time(quick().timeout);
        let unextended =
            Mcp::http_with_options("peer", server.url.clone(), reqwest::Client::new(), options);
        let answer = unextended
            .call(
                "progressing",
                serde_json::Map::new(),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(
            answer,
            json!([{ "type": "text", "text": "asked for progress: false" }])
        );
    }
}

#[test]
fn mcp_spans_name_the_transport_and_revision_and_nothing_secret() {
    let spans = Spans::default();
    capturing(&spans, async {
        let server = serve(peer(), false, false).await;
        let source = Arc::new(source(&server.url));
        let definitions = source.discover().await.unwrap();
        let toolkit = Toolkit::from_source(
            Arc::clone(&source) as _,
            definitions,
            &ToolkitOptions::default(),
        )
        .unwrap();
        let answer = toolkit
            .call_with("progressing", json!({}), &CallContext::new().call_id("c1"))
            .await;
        assert!(answer.is_ok(), "{answer:?}");
        let missing = toolkit.call("nope", Value::Null).await;
        assert!(missing.is_err());
        let _ = source
            .call(
                "nope",
                serde_json::Map::new(),
                &toolkit_core::CallContext::new(),
            )
            .await;
    });
    let discovered = spans.named("discover");
    assert_eq!(discovered.len(), 1, "{:?}", spans.all());
    assert_eq!(discovered[0].field("toolkit.source"), Some("peer"));
    assert_eq!(discovered[0].field("toolkit.tools"), Some("1"));
    assert_eq!(discovered[0].field("toolkit.outcome"), Some("ok"));

    let requests = spans.named("mcp.request");
    let methods: Vec<_> = requests
        .iter()
        .map(|r| r.field("mcp.method.name"))
        .collect();
    assert_eq!(
        methods,
        [Some("tools/list"), Some("tools/call"), Some("tools/call")]
    );
    assert_eq!(requests[0].parent.as_deref(), Some("discover"));
    assert_eq!(requests[1].parent.as_deref(), Some("execute_tool"));
    for request in &requests {
        assert_eq!(request.field("mcp.transport"), Some("streamable-http"));
        assert_eq!(request.field("mcp.protocol.version"), Some("2026-07-28"));
        assert_eq!(request.field("toolkit.source"), Some("peer"));
    }
    assert_eq!(requests[1].field("gen_ai.tool.name"), Some("progressing"));
    assert_eq!(requests[1].field("toolkit.outcome"), Some("ok"));
    assert_eq!(requests[2].field("gen_ai.tool.name"), Some("nope"));

    let calls = spans.named("execute_tool");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].field("gen_ai.tool.call.id"), Some("c1"));
    assert_eq!(calls[0].field("toolkit.source"), Some("peer"));
    assert_eq!(calls[0].field("mcp.transport"), Some("streamable-http"));
    assert_eq!(calls[0].field("mcp.protocol.version"), Some("2026-07-28"));
    assert_eq!(calls[0].field("toolkit.outcome"), Some("ok"));
    assert_nothing_secret(&spans, &[SECRET, "s3cret", "/mcp"]);
}

/// A source whose calls time out after `timeout` without progress, and live at most `max`.
fn slow_source(url: &reqwest::Url, timeout: Duration, max: Duration) -> Mcp {
    let options = quick().timeout(timeout).max_call_time(max);
    Mcp::http_with_options("peer", url.clone(), reqwest::Client::new(), options)
}

fn slow_peer() -> Peer {
    Peer::new(vec![json!({
        "name": "slow",
        "description": "Takes a while, reporting progress after each step.",
        "inputSchema": { "type": "object" }
    })])
}

#[tokio::test]
async fn mcp_progress_keeps_a_call_alive_past_its_timeout() {
    for sessions in [false, true] {
        let server = serve(slow_peer(), sessions, false).await;
        let source = slow_source(
            &server.url,
            Duration::from_millis(400),
            Duration::from_secs(30),
        );
        // Ten steps of 100 ms: 1 s in all, more than twice the timeout, with progress after each.
        let started = Instant::now();
        let answer = source
            .call(
                "slow",
                json!({"every_ms": 100, "steps": 10})
                    .as_object()
                    .cloned()
                    .unwrap(),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(answer, json!([{ "type": "text", "text": "done" }]));
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "sessions: {sessions}"
        );
    }
}

#[tokio::test]
async fn mcp_without_progress_a_call_times_out() {
    let server = serve(slow_peer(), false, false).await;
    let source = slow_source(
        &server.url,
        Duration::from_millis(400),
        Duration::from_secs(30),
    );
    source.discover().await.unwrap();
    // One step of 3 s: no progress before the 400 ms are up.
    let started = Instant::now();
    let error = source
        .call(
            "slow",
            json!({"every_ms": 3000, "steps": 1})
                .as_object()
                .cloned()
                .unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.reason.code(), "UnavailableError", "{error}");
    assert!(
        error.to_string().contains("did not answer within 400ms"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_millis(2_500));
}

#[tokio::test]
async fn mcp_progress_keeps_a_call_alive_up_to_the_hard_maximum() {
    let server = serve(slow_peer(), false, false).await;
    let source = slow_source(
        &server.url,
        Duration::from_millis(400),
        Duration::from_millis(1_000),
    );
    source.discover().await.unwrap();
    // Progress every 100 ms for 4 s: alive past the timeout, ended at the hard maximum.
    let started = Instant::now();
    let error = source
        .call(
            "slow",
            json!({"every_ms": 100, "steps": 40})
                .as_object()
                .cloned()
                .unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(error.reason.code(), "UnavailableError", "{error}");
    assert!(
        error
            .to_string()
            .contains("kept reporting progress but did not answer within 1s"),
        "{error}"
    );
    assert!(took >= Duration::from_millis(950), "{took:?}");
    assert!(took < Duration::from_millis(3_000), "{took:?}");
}

/// A stdio source started from `progress_peer.py` in `mode`, its files in `folder`.
fn progress_peer(mode: &str, folder: &std::path::Path, options: McpOptions) -> Mcp {
    let command = StdioCommand::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/mcp/progress_peer.py"
        ))
        .arg(mode)
        .arg(folder);
    Mcp::stdio_with_options(mode, command, options)
}

/// A malicious server that learns the progress token of a call to another source (out of
/// band: the worst case) writes progress with it while the call waits: the call's host hears
/// none of it, and the call is not kept alive past its timeout.
#[tokio::test]
async fn mcp_progress_forged_by_another_source_reaches_no_call_and_keeps_none_alive() {
    let folder = std::env::temp_dir().join(format!(
        "toolkit-progress-forged-{}-{}",
        std::process::id(),
        line!()
    ));
    std::fs::create_dir_all(&folder).unwrap();
    let token = folder.join("token");
    let fast = || {
        quick()
            .discover_wait(Duration::from_millis(300))
            .shutdown_wait(Duration::from_millis(300))
    };
    // Forgery would keep the call alive until its hard maximum, and no further.
    let victim = progress_peer(
        "holding",
        &folder,
        fast()
            .timeout(Duration::from_secs(2))
            .max_call_time(Duration::from_secs(6)),
    );
    let forger = progress_peer("forging", &folder, fast().timeout(Duration::from_secs(40)));
    victim.discover().await.unwrap();
    forger.discover().await.unwrap();

    let told: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&told);
    let context = CallContext::new().progress(move |progress| sink.lock().unwrap().push(progress));
    let held = async {
        let held = victim.call("hold", serde_json::Map::new(), &context).await;
        // The forger stops once the call it forges into has ended.
        std::fs::remove_file(&token).unwrap();
        held
    };
    let unasked = CallContext::new();
    let forged = forger.call("forge", serde_json::Map::new(), &unasked);
    let (held, forged) = tokio::join!(held, forged);
    let _ = std::fs::remove_dir_all(&folder);

    let forged = forged.unwrap();
    let count: u32 = forged[0]["text"]
        .as_str()
        .and_then(|text| text.strip_prefix("forged "))
        .and_then(|count| count.parse().ok())
        .unwrap();
    assert!(count >= 1, "{forged}");
    assert_eq!(
        *told.lock().unwrap(),
        [],
        "forged progress reached the call"
    );
    let error = held.unwrap_err();
    assert_eq!(error.reason.code(), "UnavailableError", "{error}");
    assert!(
        error.to_string().contains("did not answer within 2s")
            && !error.to_string().contains("kept reporting progress"),
        "{error}"
    );
}
