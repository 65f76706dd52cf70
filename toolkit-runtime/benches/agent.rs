//! What an agent loop adds to a tool call: the rig adapter against `Toolkit::call` (goal: ratio
//! ≤ 1.05), and the `execute_tool` span with no subscriber against the same call without it
//! (goal: ≤ 5 %).
//!
//! `cargo bench -p toolkit-runtime --features rig --bench agent -- --warm-up-time 1 --measurement-time 3`
//!
//! Besides criterion's figures, each pair is also timed interleaved (rounds of A then B, the
//! median of the per-round ratios), which a busy machine disturbs far less; that ratio is
//! printed as `paired <name>: <ratio>`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolkit_runtime::{
    CallContext, ToolDefinition, Toolkit, ToolkitOptions, approval::ApprovalRequest,
    approval::Verdict,
};

#[path = "support/issue.rs"]
mod issue;

use issue::{Noop, ten_property_input as input, ten_property_schema as schema};

fn toolkit() -> Toolkit {
    let definition = ToolDefinition::new("create_issue", schema()).expect("a definition");
    Toolkit::from_source(
        Arc::new(Noop("github".to_owned())),
        [definition],
        &ToolkitOptions::default(),
    )
    .expect("a toolkit")
}

/// Times `a` and `b` interleaved, `rounds` rounds of `calls` calls each (their inputs made
/// before the clock starts), and gives the median of the per-round ratios b / a.
fn paired(rounds: usize, calls: usize, mut a: impl FnMut(Value), mut b: impl FnMut(Value)) -> f64 {
    let mut ratios = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let inputs: Vec<Value> = (0..calls).map(|_| input()).collect();
        let started = Instant::now();
        for input in inputs {
            a(input);
        }
        let first = started.elapsed();
        let inputs: Vec<Value> = (0..calls).map(|_| input()).collect();
        let started = Instant::now();
        for input in inputs {
            b(input);
        }
        let second = started.elapsed();
        ratios.push(second.as_secs_f64() / first.as_secs_f64().max(1e-12));
    }
    ratios.sort_by(f64::total_cmp);
    ratios.get(rounds / 2).copied().unwrap_or(f64::NAN)
}

fn rig_adapter(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let toolkit = toolkit();
    let context = CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve });
    let tools = toolkit_runtime::rig::tools(&toolkit, &context);
    let Some(tool) = tools.first() else {
        return;
    };
    // rig's own floor: a dynamic tool that calls the toolkit directly (no approval, no output
    // shaping). What the adapter adds is measured against it; rig's inline execution (its effect
    // bus, the arguments as text and parsed again) is in both.
    let floor = {
        let toolkit = toolkit.clone();
        rig_core::tool::DynamicTool::new(
            rig_core::message::ToolName::new("create_issue").expect("a name"),
            "",
            json!({ "type": "object" }),
            move |arguments| {
                let toolkit = toolkit.clone();
                Box::pin(async move {
                    let value = toolkit
                        .call("create_issue", arguments)
                        .await
                        .unwrap_or(Value::Null);
                    Ok(rig_core::tool::ToolOutput::json(value))
                })
            },
        )
    };
    // The first call compiles the tool's check.
    let _ = runtime.block_on(toolkit.call("create_issue", input()));
    let mut group = c.benchmark_group("agent_call");
    group.bench_function("toolkit_call", |b| {
        b.iter_batched(
            input,
            |input| runtime.block_on(toolkit.call(black_box("create_issue"), input)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("rig_dynamic_tool_execute", |b| {
        b.iter_batched(
            input,
            |input| runtime.block_on(tool.execute(black_box(input))),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("rig_dynamic_tool_floor", |b| {
        b.iter_batched(
            input,
            |input| runtime.block_on(floor.execute(black_box(input))),
            BatchSize::SmallInput,
        )
    });
    group.finish();
    let ratio = paired(
        200,
        200,
        |input| {
            let _ = runtime.block_on(floor.execute(input));
        },
        |input| {
            let _ = runtime.block_on(tool.execute(input));
        },
    );
    println!("paired rig_dynamic_tool_execute / rig_dynamic_tool_floor: {ratio:.3}");
    let ratio = paired(
        200,
        200,
        |input| {
            let _ = runtime.block_on(toolkit.call("create_issue", input));
        },
        |input| {
            let _ = runtime.block_on(tool.execute(input));
        },
    );
    println!("paired rig_dynamic_tool_execute / toolkit_call: {ratio:.3}");
}

fn span_cost(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let toolkit = toolkit();
    let Some(tool) = toolkit.get("create_issue").cloned() else {
        return;
    };
    let _ = runtime.block_on(tool.call(input()));
    let mut group = c.benchmark_group("span_cost_no_subscriber");
    group.bench_function("call_without_span", |b| {
        b.iter_batched(
            input,
            |input| runtime.block_on(tool.call_without_span(black_box(input))),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("call", |b| {
        b.iter_batched(
            input,
            |input| runtime.block_on(tool.call(black_box(input))),
            BatchSize::SmallInput,
        )
    });
    group.finish();
    let ratio = paired(
        1000,
        200,
        |input| {
            let _ = runtime.block_on(tool.call_without_span(input));
        },
        |input| {
            let _ = runtime.block_on(tool.call(input));
        },
    );
    println!("paired call / call_without_span (no subscriber): {ratio:.3}");
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = rig_adapter, span_cost
}
criterion_main!(benches);
