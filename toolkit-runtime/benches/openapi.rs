//! Reading GitHub's REST description (13 MB, 1,223 operations) into operations, JSON parse
//! included. Goal: ≤ 300 ms (openapi-mcp-generator takes 1.67 s on this machine class, FastMCP
//! 8.8 s; progenitor panics on it).
//!
//! `scripts/install-test-peers && cargo bench -p toolkit-runtime --all-features --bench openapi`
#![allow(clippy::unwrap_used, clippy::panic)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
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

fn read_github(c: &mut Criterion) {
    let text = github_description();
    let mut group = c.benchmark_group("openapi");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("read_operations/github (parse + read)", |b| {
        b.iter(|| {
            let document: serde_json::Value = serde_json::from_str(black_box(&text)).unwrap();
            let read = read_operations(&document, &ReadOptions::default()).unwrap();
            assert_eq!(read.operations.len() + read.skipped.len(), 1_223);
            read
        });
    });
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    group.bench_function("read_operations/github (read only)", |b| {
        b.iter(|| read_operations(black_box(&document), &ReadOptions::default()).unwrap());
    });
    group.finish();
}

criterion_group!(benches, read_github);
criterion_main!(benches);
