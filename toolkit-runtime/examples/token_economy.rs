//! What a model is shown up front for GitHub's REST API read as tools, four ways — every tool
//! listed, `ToolSearch`, code mode declaring every tool, and code mode with `search_tools` — in
//! characters and in tokens counted with OpenAI's `o200k_base` tokenizer (`tiktoken-rs`), as
//! the OpenAI-style `tools` array a request carries. Then what one search costs when the model
//! runs it. Prints the Markdown of `docs/performance.md`'s token table.
//!
//! `cargo run --release -p toolkit-runtime --features openapi,code,http --example token_economy [DOC]`
//! (by default GitHub's description as `scripts/install-test-peers` installs it).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use toolkit_runtime::http::HttpSource;
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};
use toolkit_runtime::{
    Assembly, Decision, Member, Toolkit, code::CodeMode, code::CodeModeOptions, code::Declarations,
    code::QuickJs, model, search::SearchOptions, search::ToolSearch,
};

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
    let code = |declarations| {
        let options = CodeModeOptions::default().declarations(declarations);
        CodeMode::toolkit(&assembled, Arc::new(QuickJs::default()), &options)
    };
    let search = ToolSearch::toolkit(&assembled, &SearchOptions::default());
    let every_declared = code(Declarations::Every);
    let searched = code(Declarations::Search);
    let automatic = code(Declarations::Auto);
    let bpe = tiktoken_rs::o200k_base()?;
    let tokens = |text: &str| bpe.encode_ordinary(text).len();
    let shown = |toolkit: &Toolkit| serde_json::to_string(&model::openai_tools(toolkit));

    let every = tokens(&shown(&assembled)?);
    println!(
        "GitHub's REST API (`@octokit/openapi`): {count} tools. Tokens: `o200k_base` \
         (tiktoken-rs), of the OpenAI-style `tools` array.\n"
    );
    println!("| shown up front as | tools | characters | tokens | vs every tool |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (label, toolkit) in [
        ("every tool", &assembled),
        ("`ToolSearch` (`tool_search` + `tool_call`)", &search),
        (
            "code mode, every tool declared (`Declarations::Every`)",
            &every_declared,
        ),
        (
            "code mode with `search_tools` (`Declarations::Search`)",
            &searched,
        ),
    ] {
        let text = shown(toolkit)?;
        let counted = tokens(&text);
        let saved = 100.0 * (1.0 - counted as f64 / every as f64);
        println!(
            "| {label} | {} | {} | {counted} | −{saved:.1} % |",
            toolkit.len(),
            text.chars().count()
        );
    }
    let chosen = if automatic.get("search_tools").is_some() {
        "search"
    } else {
        "every tool declared"
    };
    println!("\n`Declarations::Auto` (the default) chooses: {chosen}.\n");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    println!("What one `search_tools` answer costs (default limit 5):\n");
    println!("| query | tokens |");
    println!("| --- | ---: |");
    for query in [
        "list repository issues with a label",
        "create a comment on an issue",
        "merge a pull request",
    ] {
        let answer = runtime.block_on(searched.call("search_tools", json!({ "query": query })));
        let answer = answer.map_err(|failure| failure.message)?;
        println!("| {query} | {} |", tokens(&answer.to_string()));
    }
    Ok(())
}
