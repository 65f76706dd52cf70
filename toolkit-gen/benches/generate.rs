//! Generating GitHub's REST description (13 MB, 1,223 operations): the document read by the
//! runtime's reader and the whole module emitted — every operation's input and answer types,
//! the source type, the embedded operations — as `toolkit-gen openapi api.github.com.json -o
//! out.rs` does. Goal: ≤ 1.5 s for the CLI with answers typed, ≥ 99 % of the operations fully
//! typed (cargo-progenitor 0.15.1 panics on this document after 10.2 s).
//!
//! `scripts/install-test-peers && cargo bench -p toolkit-gen --bench generate`
#![allow(clippy::unwrap_used, clippy::panic, clippy::cast_precision_loss)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

use toolkit_gen::emit::{EmitOptions, SourceOptions, openapi_module, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, read_operations};

fn github_description() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/node_modules/@octokit/openapi/generated/api.github.com.json");
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "GitHub's description is missing at {} ({error}): run scripts/install-test-peers",
            path.display()
        )
    })
}

fn generate_github(c: &mut Criterion) {
    let text = github_description();
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let module = openapi_module("api.github.com.json", &read, &EmitOptions::default());
    let typed = module.tools.iter().filter(|t| t.is_typed()).count();
    println!(
        "github: {} operations, {typed} fully typed ({:.2} %), {} bytes of code",
        module.tools.len(),
        module.typed_share() * 100.0,
        module.code.len()
    );
    let whole = openapi_source(
        "api.github.com.json",
        &read,
        &SourceOptions::new("github"),
        &EmitOptions::default(),
    );
    let answers = whole.answers.len();
    let typed_answers = whole.answers.values().filter(|a| a.is_typed()).count();
    println!(
        "github: the whole module (types, source type, embedded operations): {} bytes, {} lines; \
         {typed_answers} of {answers} answer schemas typed ({:.2} %) (types repeating a body: \
         `cargo run --release -p toolkit-gen --example duplicates -- api.github.com.json`)",
        whole.code.len(),
        whole.code.lines().count(),
        typed_answers as f64 * 100.0 / answers.max(1) as f64
    );
    let mut group = c.benchmark_group("generate");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("github (parse + read + emit)", |b| {
        b.iter(|| {
            let document: serde_json::Value = serde_json::from_str(black_box(&text)).unwrap();
            let read = read_operations(&document, &ReadOptions::default()).unwrap();
            openapi_source(
                "api.github.com.json",
                &read,
                &SourceOptions::new("github"),
                &EmitOptions::default(),
            )
        });
    });
    group.bench_function("github (emit only)", |b| {
        b.iter(|| {
            openapi_source(
                "api.github.com.json",
                black_box(&read),
                &SourceOptions::new("github"),
                &EmitOptions::default(),
            )
        });
    });
    group.finish();
}

criterion_group!(benches, generate_github);
criterion_main!(benches);
