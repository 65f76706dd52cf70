//! The resilience layers on an HTTP API's source, against upstreams on 127.0.0.1 that fail the
//! way servers do: one that flaps, one that answers 503 with `Retry-After`, one that hangs, one
//! that is slow, one of two replicas down. Each test reads what the agent would read and counts
//! what the upstream got.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use toolkit_runtime::context::Principal;
use toolkit_runtime::http::HttpSource;
use toolkit_runtime::openapi::{ReadOptions, read_operations};
use toolkit_runtime::resilience::{
    Answered, Breaker, Concurrency, Failover, Layer, Rate, Resilience, Resilient, Retry,
};
use toolkit_runtime::{CallContext, Reason, ToolSource, ToolSourceError};

use crate::support::object;

/// How the upstream answers its next requests.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Ok,
    /// 503 (with `Retry-After` in seconds when set) to the next `n` requests, then 200.
    FailNext(usize, Option<u64>),
    /// 503 to every request.
    Down,
    /// Never answers.
    Hang,
    /// Answers after a while.
    Slow(Duration),
}

/// An upstream API of `GET /items` (read-only) and `POST /items` (not idempotent).
struct Upstream {
    base: String,
    requests: Arc<AtomicUsize>,
    mode: Arc<Mutex<Mode>>,
}

#[derive(Clone)]
struct Shared {
    requests: Arc<AtomicUsize>,
    mode: Arc<Mutex<Mode>>,
}

impl Upstream {
    async fn start(mode: Mode) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shared = Shared {
            requests: Arc::new(AtomicUsize::new(0)),
            mode: Arc::new(Mutex::new(mode)),
        };
        let app = Router::new()
            .route("/items", get(answer).post(answer))
            .with_state(shared.clone());
        tokio::spawn(async move {
            let _ = axum::serve(
                axum::serve::ListenerExt::tap_io(listener, |tcp| {
                    let _ = tcp.set_nodelay(true);
                }),
                app,
            )
            .await;
        });
        Self {
            base,
            requests: shared.requests,
            mode: shared.mode,
        }
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    fn source(&self) -> Arc<dyn ToolSource> {
        let document = json!({
            "openapi": "3.1.0",
            "info": { "title": "items", "version": "1" },
            "paths": { "/items": {
                "get": { "operationId": "listItems", "responses": { "200": { "description": "ok" } } },
                "post": { "operationId": "createItem", "responses": { "200": { "description": "ok" } } }
            } }
        });
        let read = read_operations(&document, &ReadOptions::default()).unwrap();
        Arc::new(
            HttpSource::builder("items", &self.base, reqwest::Client::new())
                .operations(read.operations)
                .build()
                .unwrap(),
        )
    }
}

async fn answer(State(shared): State<Shared>) -> Response {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let mode = *shared.mode.lock().unwrap();
    let unavailable = |retry_after: Option<u64>| {
        let mut headers = HeaderMap::new();
        if let Some(seconds) = retry_after {
            headers.insert("retry-after", seconds.into());
        }
        (StatusCode::SERVICE_UNAVAILABLE, headers, "busy").into_response()
    };
    match mode {
        Mode::Ok => axum::Json(json!({ "items": [] })).into_response(),
        Mode::FailNext(0, _) => axum::Json(json!({ "items": [] })).into_response(),
        Mode::FailNext(n, retry_after) => {
            *shared.mode.lock().unwrap() = Mode::FailNext(n - 1, retry_after);
            unavailable(retry_after)
        }
        Mode::Down => unavailable(None),
        Mode::Hang => std::future::pending().await,
        Mode::Slow(wait) => {
            tokio::time::sleep(wait).await;
            axum::Json(json!({ "items": [] })).into_response()
        }
    }
}

/// `source` wearing `layers`, having listed its tools (as a catalog does).
async fn resilient(source: Arc<dyn ToolSource>, layers: Resilience) -> Arc<Resilient> {
    let resilient = Resilient::new(source, layers).unwrap();
    resilient.discover().await.unwrap();
    Arc::new(resilient)
}

/// Calls `tool` as `person` (when given); what the agent reads, and the layer that answered.
async fn call(
    source: &Resilient,
    tool: &str,
    person: Option<&str>,
) -> (Result<Value, ToolSourceError>, Option<Layer>) {
    let answered = Answered::new();
    let mut context = CallContext::new().with_extension(answered.clone());
    if let Some(person) = person {
        context = context.with_extension(Principal::token(person));
    }
    let answer = source.call(tool, object(json!({})), &context).await;
    (answer, answered.layer())
}

fn retry_after(error: &ToolSourceError) -> Option<Duration> {
    match &error.reason {
        Reason::Unavailable { retry_after, .. } => *retry_after,
        _ => None,
    }
}

#[tokio::test]
async fn a_flapping_upstream_is_retried_only_where_a_retry_is_safe() {
    let upstream = Upstream::start(Mode::FailNext(2, None)).await;
    let layers = Resilience::new()
        .retry(Retry::new(3).delays(Duration::from_millis(10), Duration::from_millis(50)));
    let items = resilient(upstream.source(), layers).await;

    let (listed, layer) = call(&items, "listItems", None).await;
    assert!(listed.is_ok(), "{listed:?}");
    assert_eq!((upstream.requests(), layer), (3, None));
    assert_eq!(items.answers().retries, 2);

    // The same failure of a call that is not safe to repeat reaches the agent after one request.
    upstream.set(Mode::FailNext(1, None));
    let (created, _) = call(&items, "createItem", None).await;
    assert!(created.as_ref().is_err_and(ToolSourceError::is_retryable));
    assert_eq!(upstream.requests(), 4);
}

#[tokio::test]
async fn retry_after_is_waited_when_short_and_handed_to_the_agent_when_long() {
    let upstream = Upstream::start(Mode::FailNext(1, Some(1))).await;
    let layers = Resilience::new()
        .retry(Retry::new(2).delays(Duration::from_millis(10), Duration::from_secs(2)));
    let items = resilient(upstream.source(), layers).await;
    let started = Instant::now();
    let (listed, _) = call(&items, "listItems", None).await;
    assert!(listed.is_ok(), "{listed:?}");
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(upstream.requests(), 2);

    upstream.set(Mode::FailNext(1, Some(30)));
    let (listed, _) = call(&items, "listItems", None).await;
    let error = listed.unwrap_err();
    assert_eq!(retry_after(&error), Some(Duration::from_secs(30)));
    assert_eq!(
        upstream.requests(),
        3,
        "a wait over max_delay is not waited"
    );
}

#[tokio::test]
async fn an_open_breaker_answers_at_once_and_closes_after_its_probe() {
    let upstream = Upstream::start(Mode::Down).await;
    let breaker = Breaker::new()
        .minimum_calls(4)
        .failure_rate(0.5)
        .window(Duration::from_secs(10))
        .open_for(Duration::from_millis(500))
        .half_open_calls(1);
    let items = resilient(upstream.source(), Resilience::new().breaker(breaker)).await;
    for _ in 0..4 {
        let (created, layer) = call(&items, "createItem", None).await;
        assert!(created.is_err());
        assert_eq!(layer, None, "the source answered");
    }
    assert_eq!(upstream.requests(), 4);

    let started = Instant::now();
    let (refused, layer) = call(&items, "createItem", None).await;
    let error = refused.unwrap_err();
    assert!(error.is_retryable());
    assert_eq!(layer, Some(Layer::Breaker));
    assert!(retry_after(&error).is_some());
    assert!(started.elapsed() < Duration::from_millis(100));
    assert_eq!(upstream.requests(), 4, "an open breaker sends nothing");

    upstream.set(Mode::Ok);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (probe, _) = call(&items, "createItem", None).await;
    assert!(probe.is_ok(), "{probe:?}");
    let (after, _) = call(&items, "createItem", None).await;
    assert!(after.is_ok(), "{after:?}");
    assert_eq!(upstream.requests(), 6);
    let breakers = items
        .answers()
        .by_layer
        .into_iter()
        .find(|(layer, _)| *layer == Layer::Breaker);
    assert_eq!(breakers, Some((Layer::Breaker, 1)));
}

#[tokio::test]
async fn a_hanging_upstream_is_timed_out_retryably() {
    let upstream = Upstream::start(Mode::Hang).await;
    let layers = Resilience::new().timeout(Duration::from_millis(200));
    let items = resilient(upstream.source(), layers).await;
    let started = Instant::now();
    let (created, layer) = call(&items, "createItem", None).await;
    assert!(created.is_err_and(|error| error.is_retryable()));
    assert_eq!(layer, Some(Layer::Timeout));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn no_request_goes_beyond_the_rate_and_one_person_spends_none_of_another() {
    let upstream = Upstream::start(Mode::Ok).await;
    let layers = Resilience::new()
        .rate(Rate::new(4, Duration::from_secs(60)))
        .rate_per_person(Rate::new(2, Duration::from_secs(60)));
    let items = resilient(upstream.source(), layers).await;
    let mut alice = Vec::new();
    for _ in 0..5 {
        alice.push(call(&items, "listItems", Some("alice")).await);
    }
    assert_eq!(alice.iter().filter(|(answer, _)| answer.is_ok()).count(), 2);
    let (refused, layer) = &alice[4];
    assert_eq!(*layer, Some(Layer::RatePerPerson));
    let wait = retry_after(refused.as_ref().unwrap_err()).unwrap();
    assert!(wait > Duration::from_secs(20) && wait <= Duration::from_secs(30));

    // Alice's refused calls took nothing of everyone's rate: bob has his two.
    for _ in 0..2 {
        let (answer, _) = call(&items, "listItems", Some("bob")).await;
        assert!(answer.is_ok(), "{answer:?}");
    }
    let (over, layer) = call(&items, "listItems", Some("carol")).await;
    assert!(over.is_err());
    assert_eq!(layer, Some(Layer::Rate));
    assert_eq!(upstream.requests(), 4);
}

#[tokio::test]
async fn the_queue_takes_what_it_can_hold_and_refuses_the_rest_at_once() {
    let upstream = Upstream::start(Mode::Slow(Duration::from_millis(400))).await;
    let layers = Resilience::new().concurrency(
        Concurrency::new(1)
            .queue(1)
            .max_wait(Duration::from_millis(100)),
    );
    let items = resilient(upstream.source(), layers).await;
    let running = tokio::spawn({
        let items = Arc::clone(&items);
        async move { call(&items, "listItems", None).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let waiting = tokio::spawn({
        let items = Arc::clone(&items);
        async move { call(&items, "listItems", None).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (refused, layer) = call(&items, "listItems", None).await;
    assert!(refused.is_err_and(|error| error.is_retryable()));
    assert_eq!(layer, Some(Layer::Queue));
    let (waited, layer) = waiting.await.unwrap();
    assert!(waited.is_err());
    assert_eq!(layer, Some(Layer::Queue));
    let (ran, _) = running.await.unwrap();
    assert!(ran.is_ok(), "{ran:?}");
    assert_eq!(upstream.requests(), 1);
}

#[tokio::test]
async fn failover_goes_to_the_healthy_replica_and_ejects_the_down_one() {
    let (down, up) = (
        Upstream::start(Mode::Down).await,
        Upstream::start(Mode::Ok).await,
    );
    let both = Failover::new(vec![down.source(), up.source()]).unwrap();
    let layers = Resilience::new()
        .retry(Retry::new(2).delays(Duration::from_millis(10), Duration::from_millis(50)));
    let items = resilient(Arc::new(both), layers).await;
    let listed_by = down.requests();
    let (listed, _) = call(&items, "listItems", None).await;
    assert!(listed.is_ok(), "{listed:?}");
    assert_eq!((down.requests() - listed_by, up.requests()), (1, 1));

    // The down replica is out: a call that is not safe to repeat goes to the healthy one first.
    let (created, _) = call(&items, "createItem", None).await;
    assert!(created.is_ok(), "{created:?}");
    assert_eq!((down.requests() - listed_by, up.requests()), (1, 2));
}

/// A TCP proxy on 127.0.0.1 in front of `target` that holds every chunk the server sends for
/// `delay` (a loaded upstream); its port, and how many connections it accepted.
async fn delaying_proxy(target: u16, delay: Duration) -> (u16, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = client.set_nodelay(true);
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await else {
                    return;
                };
                let _ = server.set_nodelay(true);
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_server, mut to_server) = server.into_split();
                let upstream =
                    tokio::spawn(
                        async move { tokio::io::copy(&mut from_client, &mut to_server).await },
                    );
                let mut chunk = vec![0; 16 * 1024];
                while let Ok(read) = from_server.read(&mut chunk).await {
                    if read == 0 {
                        break;
                    }
                    tokio::time::sleep(delay).await;
                    if to_client.write_all(&chunk[..read]).await.is_err() {
                        break;
                    }
                }
                upstream.abort();
            });
        }
    });
    (port, accepted)
}

/// Prism (`prism mock --errors`, the real mock server) made slow by a delaying proxy: attempts
/// longer than the timeout are cut and counted by the breaker, which then answers at once without
/// a connection; with a timeout the upstream can meet, Prism's answer reaches the agent.
#[tokio::test]
async fn a_slow_prism_is_timed_out_and_then_broken_off() {
    let document = json!({
        "openapi": "3.1.0",
        "info": { "title": "items", "version": "1" },
        "paths": { "/items": { "get": {
            "operationId": "listItems",
            "responses": { "200": { "description": "ok", "content": { "application/json": {
                "schema": { "type": "object", "properties": { "count": { "type": "integer", "example": 3 } },
                            "required": ["count"] } } } } }
        } } }
    });
    let file = std::env::temp_dir().join(format!("toolkit-slow-prism-{}.json", std::process::id()));
    std::fs::write(&file, document.to_string()).unwrap();
    let prism = crate::peers::start_prism(&file).await;
    let (port, connections) = delaying_proxy(prism.port, Duration::from_millis(400)).await;
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let source = || -> Arc<dyn ToolSource> {
        Arc::new(
            HttpSource::builder(
                "items",
                format!("http://127.0.0.1:{port}"),
                reqwest::Client::new(),
            )
            .operations(read.operations.clone())
            .build()
            .unwrap(),
        )
    };
    let breaker = Breaker::new()
        .minimum_calls(3)
        .failure_rate(0.5)
        .window(Duration::from_secs(10))
        .open_for(Duration::from_secs(30));
    let layers = Resilience::new()
        .timeout(Duration::from_millis(150))
        .breaker(breaker);
    let items = resilient(source(), layers).await;
    for _ in 0..3 {
        let (answer, layer) = call(&items, "listItems", None).await;
        assert!(
            answer.as_ref().is_err_and(ToolSourceError::is_retryable),
            "{answer:?}"
        );
        assert_eq!(layer, Some(Layer::Timeout), "{answer:?}");
    }
    let before = connections.load(Ordering::SeqCst);
    let started = Instant::now();
    let (answer, layer) = call(&items, "listItems", None).await;
    assert!(answer.is_err());
    assert_eq!(layer, Some(Layer::Breaker));
    assert!(started.elapsed() < Duration::from_millis(100));
    assert_eq!(
        connections.load(Ordering::SeqCst),
        before,
        "the open breaker connects nowhere"
    );

    let patient = resilient(source(), Resilience::new().timeout(Duration::from_secs(5))).await;
    let (answer, layer) = call(&patient, "listItems", None).await;
    assert_eq!(answer.unwrap()["count"], 3);
    assert_eq!(layer, None);
    let _ = std::fs::remove_file(&file);
}
