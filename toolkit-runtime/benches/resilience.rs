//! What the resilience layers add to a call: a toolkit's call of a source that answers at once,
//! bare and wearing every layer (a timeout, a concurrency cap with its queue, a rate limit never
//! reached, retries, a circuit breaker), in one run. Issue 41's goal: at most 5 µs more.
//!
//! `cargo bench -p toolkit-runtime --bench resilience --features resilience`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use toolkit_runtime::resilience::{Breaker, Concurrency, Rate, Resilience, Resilient, Retry};
use toolkit_runtime::{ToolDefinition, ToolSource, Toolkit, ToolkitOptions};

#[path = "support/issue.rs"]
mod issue;

use issue::{Noop, ten_property_input, ten_property_schema};

fn toolkit(source: Arc<dyn ToolSource>) -> Toolkit {
    let definition =
        ToolDefinition::new("create_issue", ten_property_schema()).expect("a definition");
    Toolkit::from_source(source, [definition], &ToolkitOptions::default()).expect("a toolkit")
}

fn layers_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let every = Resilience::new()
        .timeout(Duration::from_secs(30))
        .concurrency(Concurrency::new(64))
        .rate(Rate::new(1_000_000_000, Duration::from_secs(1)))
        .rate_per_person(Rate::new(1_000_000_000, Duration::from_secs(1)))
        .retry(Retry::new(3).tools(["create_issue"]))
        .breaker(Breaker::new());
    let worn = |layers: Resilience| -> Arc<dyn ToolSource> {
        Arc::new(Resilient::new(Arc::new(Noop("github".into())), layers).expect("layers"))
    };
    let mut group = c.benchmark_group("resilience");
    for (name, source) in [
        (
            "bare",
            Arc::new(Noop("github".into())) as Arc<dyn ToolSource>,
        ),
        (
            "timeout",
            worn(Resilience::new().timeout(Duration::from_secs(30))),
        ),
        (
            "concurrency",
            worn(Resilience::new().concurrency(Concurrency::new(64))),
        ),
        (
            "rate",
            worn(Resilience::new().rate(Rate::new(1_000_000_000, Duration::from_secs(1)))),
        ),
        (
            "retry",
            worn(Resilience::new().retry(Retry::new(3).tools(["create_issue"]))),
        ),
        ("breaker", worn(Resilience::new().breaker(Breaker::new()))),
        ("every_layer", worn(every)),
    ] {
        let toolkit = toolkit(source);
        // The first call compiles the tool's check; the benchmark measures the calls after it.
        let _ = runtime.block_on(toolkit.call("create_issue", ten_property_input()));
        group.bench_function(name, |b| {
            b.iter_batched(
                ten_property_input,
                |input| runtime.block_on(toolkit.call(black_box("create_issue"), input)),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, layers_overhead);
criterion_main!(benches);
