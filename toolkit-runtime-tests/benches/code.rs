//! Code mode's costs: a run in a fresh isolate — in process (`QuickJs`), in a worker process
//! started for it (`WorkerIsolate`), and in a worker started ahead (`WorkerPool`) — and a tool
//! call from JavaScript.
//!
//! `cargo bench -p toolkit-runtime-tests --features code-test-worker --bench code`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolkit_runtime::{
    code::CodeRuntime, code::PoolOptions, code::QuickJs, code::RunLimits, code::ToolCall,
    code::WorkerIsolate, code::WorkerPool,
};

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
    let worker = WorkerIsolate::new(env!("CARGO_BIN_EXE_toolkit-code-worker"));
    c.bench_function("execute_worker_process_per_run", |b| {
        b.iter(|| {
            runtime
                .block_on(worker.run(black_box("return 1;"), &tools, echo(), limits()))
                .expect("a run")
        })
    });
    let pool = runtime.block_on(async {
        WorkerPool::new(worker.clone(), PoolOptions::default().size(8).idle(4))
    });
    // A run's latency when workers wait for it, as between a model's turns: before each timed
    // run the pool is let refill (untimed), so that starting replacements in the background
    // neither competes with the run nor makes this a measure of how fast processes start.
    c.bench_function("execute_worker_pool", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                while pool.waiting() < 4 {
                    std::thread::sleep(Duration::from_micros(200));
                }
                let started = Instant::now();
                runtime
                    .block_on(pool.run(black_box("return 1;"), &tools, echo(), limits()))
                    .expect("a run");
                total += started.elapsed();
            }
            total
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
