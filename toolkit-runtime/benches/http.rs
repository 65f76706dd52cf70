//! An HTTP source's call against a loopback server, beside a bare `reqwest` call to the same
//! server in the same run; goal: the source's call costs ≤ 1.10 × the bare call.
//!
//! Both fetch `GET /items/{id}?fields=…` and parse the JSON answer; the source also fills its
//! template, checks the answer's origin and status, and reads the body under its cap.
//!
//! Every iteration of both benches makes both calls, one after the other (which goes first
//! alternates), and times each; the
//! ratio printed at the end is the median, over all of criterion's samples, of the sample's source
//! time over its bare time. Pairing the two calls in time keeps other work on the machine (which
//! moves both) out of the ratio; criterion's own figures for each bench time only its call.
//!
//! `cargo bench -p toolkit-runtime --all-features --bench http`
#![allow(clippy::unwrap_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::Path;
use criterion::Criterion;
use serde_json::{Value, json};
use toolkit_runtime::http::{HttpSource, Location, Operation, RequestTemplate, client_builder};
use toolkit_runtime::{ToolDefinition, ToolSource};

/// Of each sample criterion took: the source's time over the bare call's, both over the same
/// iterations.
static RATIOS: Mutex<Vec<f64>> = Mutex::new(Vec::new());

fn record(bare: Duration, ours: Duration) {
    if !bare.is_zero() {
        RATIOS
            .lock()
            .unwrap()
            .push(ours.as_secs_f64() / bare.as_secs_f64());
    }
}

/// The median of `samples` (0 for none).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    // The server runs on a runtime of its own; both calls are made on a current-thread runtime,
    // as a host awaits a tool call inside its runtime (a call from outside one would also pay
    // tokio's cross-thread wake-up of its timer driver for the source's timeout).
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = server
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/items/{id}",
        axum::routing::get(|Path(id): Path<String>| async move {
            Json(json!({"id": id, "name": "Rex", "tags": ["a", "b", "c"], "owner": {"login": "octocat"}}))
        }),
    );
    server.spawn(async move {
        axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            app,
        )
        .await
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let client = client_builder().build().unwrap();
    let schema = json!({"type": "object", "properties": {"id": {"type": "string"}, "fields": {"type": "string"}}});
    let operation = Operation::new(
        ToolDefinition::new("get_item", schema.as_object().cloned().unwrap()).unwrap(),
        RequestTemplate::new("GET", "/items/{id}")
            .parameter("id", Location::Path, "id")
            .parameter("fields", Location::Query, "fields"),
    );
    let source = HttpSource::builder("bench", &base, client.clone())
        .operation(operation)
        .build()
        .unwrap();
    let input = json!({"id": "42", "fields": "name,tags"})
        .as_object()
        .cloned()
        .unwrap();
    let url = format!("{base}/items/42?fields=name%2Ctags");

    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(8));
    let bare = || {
        runtime.block_on(async {
            let response = client.get(black_box(&url)).send().await.unwrap();
            let value: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
            black_box(value);
        });
    };
    let ours = || {
        let value = runtime
            .block_on(source.call(
                "get_item",
                black_box(input.clone()),
                &toolkit_runtime::CallContext::new(),
            ))
            .unwrap();
        black_box(value);
    };
    // Both calls in every iteration, each timed: (bare, ours).
    let both = |iterations: u64| {
        let (mut bare_time, mut ours_time) = (Duration::ZERO, Duration::ZERO);
        for iteration in 0..iterations {
            // Which goes first alternates, so that neither pays for its place.
            let first = Instant::now();
            if iteration % 2 == 0 {
                bare()
            } else {
                ours()
            }
            let second = Instant::now();
            if iteration % 2 == 0 {
                ours()
            } else {
                bare()
            }
            let (one, two) = (second - first, second.elapsed());
            let (bare_one, ours_one) = if iteration % 2 == 0 {
                (one, two)
            } else {
                (two, one)
            };
            bare_time += bare_one;
            ours_time += ours_one;
        }
        record(bare_time, ours_time);
        (bare_time, ours_time)
    };
    let mut group = c.benchmark_group("http");
    group.bench_function("bare reqwest call", |b| b.iter_custom(|n| both(n).0));
    group.bench_function("http source call", |b| b.iter_custom(|n| both(n).1));
    group.finish();
    c.final_summary();

    let mut ratios = RATIOS.lock().unwrap();
    let count = ratios.len();
    println!(
        "http source call / bare reqwest call = {:.3} (median of {count} paired samples)",
        median(&mut ratios)
    );
}
