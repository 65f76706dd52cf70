//! How well tool search finds the right tool: recall@1, @5 and @10 on MetaTool (199 tools, 20,614
//! queries each labelled with the one tool that answers it), for each ranking of `SearchIndex`
//! and, in the same run, for plain BM25 (Okapi, k1 = 1.2, b = 0.75, over the lowercase words of
//! each tool's name and description, no stemming) as the baseline; with each one's median time
//! per query.
//!
//! The queries are split in two by their row (even rows the development half, odd rows the test
//! half), and every figure is given for each: whatever was tuned was tuned on the development
//! half, and the test half says how well that holds.
//!
//! `cargo run --release -p toolkit-runtime --example search_eval [CORPUS_DIR]`
//! (by default `../shared/corpus/search` beside the checkout). With `SEARCH_EVAL_MISSES=N` it also
//! prints N queries of the development half that the default ranking missed at 5, with what it
//! found instead.
//!
//! With `--features search-embeddings` it also ranks with the hybrid index
//! (`SearchIndex::hybrid`) over the model in `SEARCH_EVAL_MODEL` (by default all-MiniLM-L6-v2
//! where `scripts/install-test-peers` puts it), and says how long embedding the tools took; and
//! with static vectors distilled from that model (`StaticEmbedder::distill`, saved beside its
//! directory as `*.static.safetensors` and read from there the next time).
//! `SEARCH_EVAL_STATIC_ONLY=1` leaves the transformer's ranking out (minutes; the static one
//! takes seconds). With `SEARCH_EVAL_MARGINS=1` it prints instead, for each half, how recall@5
//! and the share of queries a hybrid index ranks on words alone move with its confident margin
//! (`SearchIndex::with_confident_margin`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use toolkit_runtime::{JsonObject, ToolDefinition, search::Ranking, search::SearchIndex};

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
    let names: Vec<&str> = definitions.iter().map(ToolDefinition::name).collect();
    let bm25 = Bm25::new(&definitions);
    let indices: Vec<(&str, SearchIndex)> = [
        (
            "seed's plain match on words (`Ranking::Words`)",
            Ranking::Words,
        ),
        (
            "fielded BM25F (`Ranking::Relevance`, default)",
            Ranking::Relevance,
        ),
    ]
    .into_iter()
    .map(|(label, ranking)| (label, SearchIndex::with_ranking(&definitions, ranking)))
    .collect();
    #[cfg(feature = "search-embeddings")]
    let indices = {
        let mut indices = indices;
        let directory = std::env::var_os("SEARCH_EVAL_MODEL")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/peers/all-minilm-l6-v2")
            });
        let embedder = std::sync::Arc::new(toolkit_runtime::search::Embedder::load(&directory)?);
        let started = Instant::now();
        let hybrid = SearchIndex::hybrid(&definitions, std::sync::Arc::clone(&embedder))?;
        println!(
            "hybrid index of {} tools built in {:.0} ms (every tool embedded once)",
            definitions.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        if std::env::var_os("SEARCH_EVAL_MARGINS").is_some() {
            let hybrid = hybrid.with_confident_margin(f32::INFINITY);
            margins(&queries, &names, &SearchIndex::new(&definitions), &hybrid);
            return Ok(());
        }
        // The transformer ranks a query in milliseconds: 20,614 of them take minutes.
        if std::env::var_os("SEARCH_EVAL_STATIC_ONLY").is_none() {
            indices.push((
                "hybrid: BM25F + all-MiniLM-L6-v2 (`SearchIndex::hybrid`)",
                hybrid,
            ));
        }
        // Static vectors distilled from the same model, kept in a file between runs.
        let distilled = directory.with_extension("static.safetensors");
        let distilled = match toolkit_runtime::search::StaticEmbedder::load(&distilled) {
            Ok(model) => model,
            Err(_) => {
                let started = Instant::now();
                let model = toolkit_runtime::search::StaticEmbedder::distill(&embedder)?;
                model.save(&distilled)?;
                println!(
                    "static vectors distilled in {:.1} s into {}",
                    started.elapsed().as_secs_f64(),
                    distilled.display()
                );
                model
            }
        };
        indices.push((
            "hybrid: BM25F + static vectors distilled from it (`StaticEmbedder`)",
            SearchIndex::hybrid(&definitions, distilled)?,
        ));
        indices
    };
    let default = SearchIndex::new(&definitions);
    for (half, parity) in [("development", 0), ("test", 1)] {
        let queries: Vec<(String, String)> = queries
            .iter()
            .enumerate()
            .filter(|(row, _)| row % 2 == parity)
            .map(|(_, labelled)| labelled.clone())
            .collect();
        println!();
        println!("{half} half: {} queries", queries.len());
        println!();
        println!("| ranking | recall@1 | recall@5 | recall@10 | p50 per query |");
        println!("| --- | ---: | ---: | ---: | ---: |");
        report("plain BM25 (baseline)", &queries, &names, |query| {
            bm25.search(query, 10)
        });
        for (label, index) in &indices {
            report(label, &queries, &names, |query| {
                index.search(query, 10).tools
            });
        }
    }
    let misses: usize = std::env::var("SEARCH_EVAL_MISSES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if misses > 0 {
        let index = &default;
        println!();
        // From the development half only.
        for (query, tool) in queries
            .iter()
            .step_by(2)
            .filter(|(query, tool)| {
                !index
                    .search(query, 5)
                    .tools
                    .iter()
                    .any(|&i| names[i] == tool.as_str())
            })
            .take(misses)
        {
            let found: Vec<&str> = index
                .search(query, 3)
                .tools
                .iter()
                .map(|&i| names[i])
                .collect();
            println!("{tool}\t{query}\t{found:?}");
        }
    }
    Ok(())
}

/// For each half, how recall@5 and the share of queries ranked on words alone (the query not
/// embedded) move with the confident margin of a hybrid index: each query ranked once on words and
/// once by the hybrid (`hybrid` embeds every query), then each margin read off those.
#[cfg(feature = "search-embeddings")]
fn margins(
    queries: &[(String, String)],
    names: &[&str],
    words: &SearchIndex,
    hybrid: &SearchIndex,
) {
    let hit = |found: Vec<usize>, tool: &str| found.iter().take(5).any(|&i| names[i] == tool);
    for (half, parity) in [("development", 0), ("test", 1)] {
        let rows: Vec<(f32, bool, bool)> = queries
            .iter()
            .enumerate()
            .filter(|(row, _)| row % 2 == parity)
            .map(|(_, (query, tool))| {
                (
                    words.word_margin(query),
                    hit(words.search(query, 5).tools, tool),
                    hit(hybrid.search(query, 5).tools, tool),
                )
            })
            .collect();
        println!();
        println!("{half} half: {} queries", rows.len());
        println!("| confident margin | ranked on words alone | recall@5 |");
        println!("| ---: | ---: | ---: |");
        for margin in [
            1.0,
            1.1,
            1.2,
            1.3,
            1.5,
            1.75,
            2.0,
            2.5,
            3.0,
            4.0,
            f32::INFINITY,
        ] {
            let (mut alone, mut hits) = (0usize, 0usize);
            for &(found_margin, by_words, by_both) in &rows {
                let words_alone = found_margin >= margin;
                alone += usize::from(words_alone);
                hits += usize::from(if words_alone { by_words } else { by_both });
            }
            let total = rows.len().max(1) as f64;
            println!(
                "| {margin} | {:.3} | {:.3} |",
                alone as f64 / total,
                hits as f64 / total
            );
        }
    }
}

/// Prints one row: recall at 1, 5 and 10, and the median time of one search.
fn report(
    label: &str,
    queries: &[(String, String)],
    names: &[&str],
    search: impl Fn(&str) -> Vec<usize>,
) {
    let (mut at1, mut at5, mut at10) = (0usize, 0usize, 0usize);
    let mut times = Vec::with_capacity(queries.len());
    for (query, tool) in queries {
        let started = Instant::now();
        let found = search(query);
        times.push(started.elapsed());
        let rank = found.iter().position(|&i| names[i] == tool.as_str());
        at1 += usize::from(rank.is_some_and(|r| r < 1));
        at5 += usize::from(rank.is_some_and(|r| r < 5));
        at10 += usize::from(rank.is_some_and(|r| r < 10));
    }
    times.sort_unstable();
    let p50 = times.get(times.len() / 2).copied().unwrap_or_default();
    let total = queries.len() as f64;
    println!(
        "| {label} | {:.3} | {:.3} | {:.3} | {:.1} µs |",
        at1 as f64 / total,
        at5 as f64 / total,
        at10 as f64 / total,
        p50.as_secs_f64() * 1e6
    );
}

/// Okapi BM25 over each tool's name and description as one bag of lowercase words: the baseline.
struct Bm25 {
    documents: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    average: f64,
    frequency: HashMap<String, f64>,
}

impl Bm25 {
    fn new(definitions: &[ToolDefinition]) -> Self {
        let documents: Vec<HashMap<String, f64>> = definitions
            .iter()
            .map(|definition| {
                let text = format!(
                    "{} {}",
                    definition.name(),
                    definition.description.as_deref().unwrap_or_default()
                );
                let mut counts = HashMap::new();
                for word in words(&text) {
                    *counts.entry(word).or_insert(0.0) += 1.0;
                }
                counts
            })
            .collect();
        let lengths: Vec<f64> = documents.iter().map(|d| d.values().sum()).collect();
        let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        let mut frequency = HashMap::new();
        for document in &documents {
            for word in document.keys() {
                *frequency.entry(word.clone()).or_insert(0.0) += 1.0;
            }
        }
        Self {
            documents,
            lengths,
            average,
            frequency,
        }
    }

    fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let (k1, b, n) = (1.2, 0.75, self.documents.len() as f64);
        let query = words(query);
        let mut scores: Vec<(usize, f64)> = self
            .documents
            .iter()
            .enumerate()
            .map(|(i, document)| {
                let score = query
                    .iter()
                    .filter_map(|word| {
                        let tf = *document.get(word)?;
                        let df = self.frequency.get(word).copied().unwrap_or(0.0);
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        let norm = 1.0 - b + b * self.lengths[i] / self.average;
                        Some(idf * tf * (k1 + 1.0) / (tf + k1 * norm))
                    })
                    .sum();
                (i, score)
            })
            .filter(|(_, score)| *score > 0.0)
            .collect();
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scores.into_iter().take(limit).map(|(i, _)| i).collect()
    }
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}
