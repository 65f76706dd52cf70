//! Tool search over 1,000 and 10,000 tools: building the index, and one search.
//!
//! `cargo bench -p toolkit-runtime --bench search`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolkit_runtime::{SearchIndex, ToolDefinition};

const VERBS: [&str; 10] = [
    "create", "list", "get", "update", "delete", "search", "send", "sync", "archive", "export",
];
const NOUNS: [&str; 20] = [
    "issue",
    "pull_request",
    "repository",
    "invoice",
    "customer",
    "message",
    "channel",
    "file",
    "folder",
    "calendar_event",
    "contact",
    "deal",
    "ticket",
    "order",
    "product",
    "shipment",
    "payment",
    "report",
    "user",
    "webhook",
];

/// `count` tools of 50 services, named and described as real ones are, each with three
/// parameters.
fn tools(count: usize) -> Vec<ToolDefinition> {
    (0..count)
        .map(|i| {
            let (verb, noun) = (VERBS[i % 10], NOUNS[(i / 10) % 20]);
            let schema = json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": format!("The {noun}'s identifier.") },
                    "limit": { "type": "integer", "description": "How many to return." },
                    "cursor": { "type": "string", "description": "Where the last page ended." }
                }
            });
            ToolDefinition::new(
                format!("service{}__{verb}_{noun}_{}", i % 50, i / 200),
                schema.as_object().cloned().unwrap_or_default(),
            )
            .expect("a definition")
            .with_description(format!(
                "{verb} a {} in service {} of the workspace, version {}.",
                noun.replace('_', " "),
                i % 50,
                i / 200
            ))
        })
        .collect()
}

fn search(c: &mut Criterion) {
    let definitions = tools(10_000);
    c.bench_function("search_index_build_10000_tools", |b| {
        b.iter(|| SearchIndex::new(black_box(&definitions)))
    });
    for count in [1_000, 10_000] {
        let index = SearchIndex::new(&definitions[..count]);
        c.bench_function(&format!("tool_search_{count}_tools"), |b| {
            b.iter(|| index.search(black_box("create an invoice for a customer"), 5))
        });
    }
}

criterion_group!(benches, search);
criterion_main!(benches);
