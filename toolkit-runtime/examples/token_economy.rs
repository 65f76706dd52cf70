//! What a model is shown for GitHub's REST API read as tools, three ways: every tool listed,
//! ToolSearch, and CodeMode — in characters and in estimated tokens (characters / 4, an
//! estimate, not a tokenizer's count).
//!
//! `cargo run --release -p toolkit-runtime --features openapi,code --example token_economy [DOC]`
//! (by default GitHub's description as `scripts/install-test-peers` installs it).

use std::path::PathBuf;
use std::sync::Arc;

use toolkit_runtime::http::HttpSource;
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};
use toolkit_runtime::{
    Assembly, CodeMode, CodeModeOptions, Decision, Member, QuickJs, SearchOptions, ToolSearch,
    Toolkit, model,
};

fn shown(toolkit: &Toolkit) -> usize {
    serde_json::to_string(&model::openai_tools(toolkit)).map_or(0, |tools| tools.chars().count())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/peers/node_modules/@octokit/openapi/generated/api.github.com.json")
        });
    let document = decode_document(&std::fs::read_to_string(&path)?)?;
    let read = read_operations(&document, &ReadOptions::default())?;
    let source = HttpSource::builder("github", "https://api.github.com", reqwest::Client::new())
        .operations(read.operations)
        .build()?;
    let definitions = source.definitions();
    let count = definitions.len();
    let assembled = Assembly::new()
        .toolkit(&[Member::new(Arc::new(source), definitions)], |_, _| {
            Decision::Allow
        })?;
    let search = ToolSearch::toolkit(&assembled, &SearchOptions::default());
    let code = CodeMode::toolkit(
        &assembled,
        Arc::new(QuickJs::default()),
        &CodeModeOptions::default(),
    );

    let every = shown(&assembled);
    println!("GitHub's REST API: {count} tools\n");
    println!("| shown as | characters | est. tokens | vs every tool |");
    println!("| --- | ---: | ---: | ---: |");
    for (label, toolkit) in [
        ("every tool", &assembled),
        ("ToolSearch", &search),
        ("CodeMode", &code),
    ] {
        let characters = shown(toolkit);
        let saved = 100.0 * (1.0 - characters as f64 / every as f64);
        println!(
            "| {label} | {characters} | {} | −{saved:.1} % |",
            characters / 4
        );
    }
    Ok(())
}
