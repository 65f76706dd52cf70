//! What the hardened isolate costs: one code-mode run in a `toolkit-gen quickjs-worker` process,
//! beside the same run in the in-process isolate.
//!
//! `cargo bench -p toolkit-cli --bench worker`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use toolkit_runtime::{CodeRuntime, QuickJs, RunLimits, ToolCall, WorkerIsolate};

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

fn isolates(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let tools = ["echo".to_owned()];
    let code = "return (await tools.echo({n: 1})).n;";
    let worker = WorkerIsolate::new(env!("CARGO_BIN_EXE_toolkit-gen")).arg("quickjs-worker");
    let in_process = QuickJs::default();
    let mut group = c.benchmark_group("execute_one_tool_call");
    group.bench_function("in_process_quickjs", |b| {
        b.iter(|| runtime.block_on(in_process.run(black_box(code), &tools, echo(), limits())))
    });
    group.bench_function("worker_process", |b| {
        b.iter(|| runtime.block_on(worker.run(black_box(code), &tools, echo(), limits())))
    });
    group.finish();
}

criterion_group!(benches, isolates);
criterion_main!(benches);
