//! Tool search over 1,000 and 10,000 tools: building the index, and one search.
//!
//! `cargo bench -p toolkit-runtime --bench search`
//!
//! With `--features search-embeddings`, the hybrid index too (all-MiniLM-L6-v2 where
//! `scripts/install-test-peers` puts it): embedding one query, and one hybrid search at 1,000
//! tools. (Not at 10,000: embedding 10,000 tools takes minutes on two cores; a hybrid search
//! costs the query's embedding, a dot product per tool and the ranking on words, so the
//! difference from 1,000 tools is that of the word ranking plus 9,000 dot products.)

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolkit_runtime::{ToolDefinition, search::SearchIndex};

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

#[cfg(feature = "search-embeddings")]
fn hybrid(c: &mut Criterion) {
    use std::sync::Arc;
    let directory =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/all-minilm-l6-v2");
    let embedder = Arc::new(
        toolkit_runtime::search::Embedder::load(directory).expect("scripts/install-test-peers"),
    );
    let query = "create an invoice for a customer";
    c.bench_function("embed_query", |b| {
        b.iter(|| embedder.embed(black_box(query)))
    });
    let definitions = tools(1_000);
    let started = std::time::Instant::now();
    let index = SearchIndex::hybrid(&definitions, Arc::clone(&embedder)).expect("the tools embed");
    eprintln!(
        "hybrid index of 1000 tools built in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    c.bench_function("hybrid_tool_search_1000_tools", |b| {
        b.iter(|| index.search(black_box(query), 5))
    });
    // Static vectors distilled from the same model (kept beside it by `search_eval` or the
    // tests; distilled here otherwise, about 30 s).
    let kept = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/all-minilm-l6-v2.static.safetensors");
    let distilled = Arc::new(
        toolkit_runtime::search::StaticEmbedder::load(&kept)
            .or_else(|_| toolkit_runtime::search::StaticEmbedder::distill(&embedder))
            .expect("the model distils"),
    );
    c.bench_function("embed_query_static", |b| {
        b.iter(|| distilled.embed(black_box(query)))
    });
    let definitions = tools(10_000);
    for count in [1_000, 10_000] {
        let index = SearchIndex::hybrid(&definitions[..count], Arc::clone(&distilled))
            .expect("the tools embed");
        c.bench_function(&format!("static_hybrid_tool_search_{count}_tools"), |b| {
            b.iter(|| index.search(black_box(query), 5))
        });
    }
}

#[cfg(not(feature = "search-embeddings"))]
criterion_group!(benches, search);
#[cfg(feature = "search-embeddings")]
criterion_group!(benches, search, hybrid);
criterion_main!(benches);
