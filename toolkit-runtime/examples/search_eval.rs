//! How well tool search finds the right tool: recall@1 and recall@5 on MetaTool (199 tools,
//! 20,614 queries each labelled with the one tool that answers it), for each ranking.
//!
//! `cargo run --release -p toolkit-runtime --example search_eval [CORPUS_DIR]`
//! (by default `../shared/corpus/search` beside the checkout).

use std::path::PathBuf;

use toolkit_runtime::{JsonObject, Ranking, SearchIndex, ToolDefinition};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let directory = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/search")
        });
    let tools: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(directory.join("plugin_des.json"))?)?;
    let definitions = tools
        .iter()
        .map(|(name, description)| {
            let description = description.as_str().unwrap_or_default();
            ToolDefinition::new(name.clone(), JsonObject::new())
                .map(|d| d.with_description(description))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut labelled = csv::Reader::from_path(directory.join("all_clean_data.csv"))?;
    let queries = labelled
        .records()
        .map(|record| {
            let record = record?;
            Ok((record[0].to_owned(), record[1].to_owned()))
        })
        .collect::<Result<Vec<(String, String)>, csv::Error>>()?;

    println!(
        "MetaTool: {} tools, {} labelled queries",
        definitions.len(),
        queries.len()
    );
    println!();
    println!("| ranking | recall@1 | recall@5 |");
    println!("| --- | --- | --- |");
    for (label, ranking) in [
        (
            "seed's plain match on words (`Ranking::Words`)",
            Ranking::Words,
        ),
        (
            "BM25F + stemming (`Ranking::Relevance`, default)",
            Ranking::Relevance,
        ),
    ] {
        let index = SearchIndex::with_ranking(&definitions, ranking);
        let (mut at1, mut at5) = (0usize, 0usize);
        for (query, tool) in &queries {
            let found = index.search(query, 5);
            let names: Vec<&str> = found.tools.iter().map(|&i| definitions[i].name()).collect();
            at1 += usize::from(names.first() == Some(&tool.as_str()));
            at5 += usize::from(names.contains(&tool.as_str()));
        }
        let total = queries.len() as f64;
        println!(
            "| {label} | {:.3} | {:.3} |",
            at1 as f64 / total,
            at5 as f64 / total
        );
    }
    Ok(())
}
