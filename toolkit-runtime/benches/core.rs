//! The runtime core's costs: calling a tool (input check + dispatch) and assembling a toolkit.
//!
//! `cargo bench -p toolkit-runtime --bench core`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolkit_runtime::{Assembly, Decision, Member, ToolDefinition, Toolkit, ToolkitOptions};

#[path = "support/issue.rs"]
mod issue;

use issue::{Noop, ten_property_input, ten_property_schema};

fn call_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let definition =
        ToolDefinition::new("create_issue", ten_property_schema()).expect("a definition");
    let toolkit = Toolkit::from_source(
        Arc::new(Noop("github".into())),
        [definition],
        &ToolkitOptions::default(),
    )
    .expect("a toolkit");
    // The first call compiles the tool's check; the benchmark measures the calls after it.
    let _ = runtime.block_on(toolkit.call("create_issue", ten_property_input()));
    c.bench_function("toolkit_call_10_properties", |b| {
        b.iter_batched(
            ten_property_input,
            |input| runtime.block_on(toolkit.call(black_box("create_issue"), input)),
            BatchSize::SmallInput,
        )
    });
    c.bench_function("toolkit_call_invalid_input_report", |b| {
        b.iter_batched(
            || json!({ "owner": 1, "extra": true }),
            |input| runtime.block_on(toolkit.call(black_box("create_issue"), input)),
            BatchSize::SmallInput,
        )
    });
}

fn assembly_of_ten_thousand(c: &mut Criterion) {
    let schema = ten_property_schema();
    let members: Vec<Member> = (0..50)
        .map(|s| {
            let definitions = (0..200)
                .map(|t| {
                    ToolDefinition::new(format!("tool_number_{t}"), schema.clone())
                        .expect("a definition")
                        .with_description(format!("Does thing {t} of service {s}."))
                })
                .collect();
            Member::new(Arc::new(Noop(format!("service_{s}"))), definitions)
        })
        .collect();
    c.bench_function("assembly_10000_definitions_50_sources", |b| {
        b.iter(|| {
            Assembly::new()
                .toolkit(black_box(&members), |_, _| Decision::Allow)
                .expect("no clash")
        })
    });
}

/// What compiling one tool's check costs: why a toolkit compiles each at its tool's first call
/// rather than when it is built (10,000 of these would be most of an assembly's budget).
fn check_compile(c: &mut Criterion) {
    let schema = ten_property_schema();
    c.bench_function("input_check_compile_10_properties", |b| {
        b.iter(|| toolkit_runtime::input::InputCheck::new(black_box(&schema)))
    });
}

criterion_group!(
    benches,
    call_overhead,
    assembly_of_ten_thousand,
    check_compile
);
criterion_main!(benches);
