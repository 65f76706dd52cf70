//! An HTTP source's call against a loopback server, beside a bare `reqwest` call to the same
//! server in the same run; goal: the source's call costs ≤ 1.10 × the bare call.
//!
//! Both fetch `GET /items/{id}?fields=…` and parse the JSON answer; the source also fills its
//! template, checks the answer's origin and status, and reads the body under its cap. The ratio
//! of the two medians (of criterion's samples, each a mean over its iterations) is printed at the
//! end; run it on a quiet machine, since other work on the cores moves both.
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

/// The time per iteration of each sample criterion took of each bench, for the ratio.
static SAMPLES: Mutex<[Vec<f64>; 2]> = Mutex::new([Vec::new(), Vec::new()]);

fn record(index: usize, elapsed: Duration, iterations: u64) {
    if iterations > 0 {
        SAMPLES.lock().unwrap()[index].push(elapsed.as_secs_f64() / iterations as f64);
    }
}

/// The median of `samples` (0 for none).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/items/{id}",
        axum::routing::get(|Path(id): Path<String>| async move {
            Json(json!({"id": id, "name": "Rex", "tags": ["a", "b", "c"], "owner": {"login": "octocat"}}))
        }),
    );
    runtime.spawn(async move { axum::serve(listener, app).await });

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
    let mut group = c.benchmark_group("http");
    group.bench_function("bare reqwest call", |b| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            for _ in 0..iterations {
                let value: Value = runtime.block_on(async {
                    let response = client.get(black_box(&url)).send().await.unwrap();
                    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
                });
                black_box(value);
            }
            let elapsed = start.elapsed();
            record(0, elapsed, iterations);
            elapsed
        });
    });
    group.bench_function("http source call", |b| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            for _ in 0..iterations {
                let value = runtime
                    .block_on(source.call("get_item", black_box(input.clone())))
                    .unwrap();
                black_box(value);
            }
            let elapsed = start.elapsed();
            record(1, elapsed, iterations);
            elapsed
        });
    });
    group.finish();
    c.final_summary();

    let mut samples = SAMPLES.lock().unwrap();
    let bare = median(&mut samples[0]);
    let ours = median(&mut samples[1]);
    if bare > 0.0 && ours > 0.0 {
        println!(
            "http source call / bare reqwest call = {:.3} ({:.1} µs / {:.1} µs, medians of the samples)",
            ours / bare,
            ours * 1e6,
            bare * 1e6
        );
    }
}
