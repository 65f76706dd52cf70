//! Code mode's costs: a run in a fresh isolate, and a tool call from JavaScript.
//!
//! `cargo bench -p toolkit-runtime --features code --bench code`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolkit_runtime::{CodeRuntime, QuickJs, RunLimits, ToolCall};

fn limits() -> RunLimits {
    RunLimits {
        deadline: Instant::now() + Duration::from_secs(60),
        max_result_length: 50_000,
        max_log_length: 50_000,
    }
}

fn echo() -> ToolCall {
    Arc::new(|_name: String, input: Value| Box::pin(async move { Ok(input) }))
}

fn code(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let isolate = QuickJs::default();
    let tools = ["echo".to_owned()];
    c.bench_function("execute_cold_start", |b| {
        b.iter(|| {
            runtime
                .block_on(isolate.run(black_box("return 1;"), &tools, echo(), limits()))
                .expect("a run")
        })
    });
    // 1,000 sequential tool calls in one run; the figure per call is the time / 1,000.
    let thousand =
        "let n = 0; for (let i = 0; i < 1000; i++) { n += (await tools.echo({i})).i; } return n;";
    c.bench_function("execute_1000_tool_calls", |b| {
        b.iter(|| {
            let output = runtime
                .block_on(isolate.run(black_box(thousand), &tools, echo(), limits()))
                .expect("a run");
            assert_eq!(output.result, json!(499_500));
        })
    });
}

criterion_group!(benches, code);
criterion_main!(benches);
