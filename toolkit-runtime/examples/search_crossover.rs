//! Where search with deferred loading starts to pay: for toolkits of growing size, the tokens of
//! showing every tool's definition against those of a search tool, the search and the tools it
//! loads, and how often the search finds the right tool. Prints the Markdown table of
//! `docs/search-and-code-mode.md` and the crossover that is `SEARCH_THRESHOLD`'s default.
//!
//! `cargo run --release -p toolkit-runtime --example search_crossover [CORPUS_DIR]`
//! (by default `../shared/corpus` beside the checkout).
//!
//! - Tokens: OpenAI's `o200k_base` (`tiktoken-rs`) over the JSON a request carries, of the first
//!   N tools of LiveMCPBench (`mcp/livemcpbench-tools.json`: the `tools/list` of 70 real MCP
//!   servers, 527 tools with their input schemas), named `server__tool` as an assembly names
//!   them, whole servers at a time as a host connects them: the mean over 50 random orders of
//!   the servers.
//! - Recall: MetaTool's labelled queries (`search/`, the test half: odd rows), over N of its 199
//!   tools (25 random draws, pooled) — and past 199, all of them among the first N − 199
//!   LiveMCPBench tools as distractors. Recall@5 is what a default search (limit 5) loads.
//! - One task (a request that needs one tool), counting only what differs: every definition is
//!   in both of its requests (the call, then the answer to the result): `2·E`. Search takes a
//!   request more: `3·U + 2·(q + L)`, where `U` is what is shown up front (Anthropic: the search
//!   tool; OpenAI: the search tool and each deferred function's name and description), `q` the
//!   search's call and answer, `L` the definitions of the 5 tools it loads. A search that misses
//!   (1 − recall@5 of them) costs another: `+ U + 3·(q + L)`.
//!
//! The crossover is the fewest tools from which search costs less for every larger toolkit of
//! the corpus. What this leaves out, on search's side: that a model picks the right tool less
//! often among many (Anthropic: past 30–50 tools) — so the crossover is, if anything, late.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_runtime::search::{SearchIndex, SearchOptions, ToolSearch};
use toolkit_runtime::{
    JsonObject, Tool, ToolDefinition, Toolkit, model, naming, toolkit::Approval,
};

/// The sizes the table shows (the crossover's own rows are added).
const SIZES: [usize; 8] = [5, 10, 25, 50, 100, 200, 400, 527];
/// The sizes recall is measured at, and read between.
const RECALL_SIZES: [usize; 17] = [
    1, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 199, 250, 300, 400, 527,
];
/// How many tools a search loads (`SearchOptions`' default limit).
const LOADED: usize = 5;
/// Random draws of MetaTool's tools for each size below 199.
const DRAWS: u64 = 25;
/// Random orders of LiveMCPBench's servers the tokens are averaged over.
const ORDERS: u64 = 50;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let corpus = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"));
    let servers = livemcpbench(&corpus)?;
    let live: Vec<ToolDefinition> = servers.iter().flatten().cloned().collect();
    let (metatool, queries) = metatool(&corpus)?;
    let bpe = tiktoken_rs::o200k_base()?;
    let tokens = |value: &Value| bpe.encode_ordinary(&value.to_string()).len();

    // Each tool's definition, as each provider's request writes it, and what OpenAI still shows of
    // a deferred function (its name and description).
    let every_tool = toolkit(live.clone())?;
    let anthropic: Vec<usize> = model::anthropic_tools(&every_tool)
        .iter()
        .map(&tokens)
        .collect();
    let openai: Vec<usize> = model::openai_responses_tools(&every_tool)
        .iter()
        .map(&tokens)
        .collect();
    let shown_deferred: Vec<usize> = live
        .iter()
        .map(|d| {
            tokens(&json!({ "name": d.name(), "description": d.description.as_deref().unwrap_or_default() }))
        })
        .collect();
    let sizes: Vec<usize> = servers.iter().map(Vec::len).collect();
    let (anthropic, openai, shown_deferred) = (
        prefix_means(&sizes, &anthropic),
        prefix_means(&sizes, &openai),
        prefix_means(&sizes, &shown_deferred),
    );
    let search = ToolSearch::deferring(&every_tool, &SearchOptions::default());
    let search_anthropic = tokens(&json!(model::anthropic_tools(&search)));
    let search_definition = search.definitions().next().ok_or("no search tool")?.clone();
    let search_openai = tokens(&model::openai_tool_search(&search_definition));
    // The search's call (the model's query) and its answer without the loaded definitions.
    let query = queries
        .iter()
        .map(|(query, _)| tokens(&json!({ "query": query })))
        .sum::<usize>() as f64
        / queries.len() as f64;
    let five = json!({ "tools": live.iter().take(LOADED).map(|d| json!({ "name": d.name() })).collect::<Vec<_>>() });
    let answer_anthropic = tokens(&model::anthropic_tool_references(
        "toolu_01",
        &five,
        &every_tool,
    )) as f64;
    let mut output = model::openai_tool_search_output("call_01", &five, &every_tool);
    output["tools"] = json!([]);
    let answer_openai = tokens(&output) as f64;

    let recall = recall(&metatool, &live, &queries);
    let recall_at = |n: usize| interpolate(&recall, n);

    let cost = |n: usize| Cost::new(n, &anthropic, &openai, &shown_deferred, recall_at(n).1);
    let costs: Vec<Cost> = (1..=live.len())
        .map(|n| {
            cost(n).with(
                search_anthropic as f64,
                search_openai as f64,
                query,
                answer_anthropic,
                answer_openai,
            )
        })
        .collect();
    let crossover = |pays: &dyn Fn(&Cost) -> bool| {
        let last_not = costs.iter().rposition(|cost| !pays(cost));
        last_not.map_or(1, |i| i + 2)
    };
    let anthropic_crossover = crossover(&|c| c.search_anthropic < c.every_anthropic);
    let openai_crossover = crossover(&|c| c.search_openai < c.every_openai);

    println!(
        "LiveMCPBench: {} tools of {} MCP servers (tokens), {:.0} tokens a definition on average; \
         MetaTool: {} tools, {} test queries (recall). Tokens: `o200k_base`.",
        live.len(),
        servers.len(),
        anthropic[live.len()] / live.len() as f64,
        metatool.len(),
        queries.len()
    );
    println!(
        "Up front: the search tool {search_anthropic} tokens (Anthropic), {search_openai} \
         (OpenAI); a search's call {query:.0} and answer {answer_anthropic:.0} / {answer_openai:.0} \
         without the loaded definitions.\n"
    );
    println!(
        "| tools | every definition | search tool + {LOADED} loaded | recall@1 | recall@{LOADED} | \
         one task, every tool (Anthropic) | one task, search (Anthropic) | one task, every tool \
         (OpenAI) | one task, search (OpenAI) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut rows: Vec<usize> = SIZES.to_vec();
    rows.extend([
        anthropic_crossover - 1,
        anthropic_crossover,
        openai_crossover - 1,
        openai_crossover,
    ]);
    rows.retain(|&n| (1..=live.len()).contains(&n));
    rows.sort_unstable();
    rows.dedup();
    for n in rows {
        let c = &costs[n - 1];
        let (at1, at5) = recall_at(n);
        println!(
            "| {n} | {:.0} | {:.0} | {at1:.3} | {at5:.3} | {:.0} | {:.0} | {:.0} | {:.0} |",
            c.every_definition,
            c.search_and_loaded,
            c.every_anthropic,
            c.search_anthropic,
            c.every_openai,
            c.search_openai
        );
    }
    println!(
        "\nCrossover: search costs less from {anthropic_crossover} tools on (Anthropic) and from \
         {openai_crossover} on (OpenAI), for every larger toolkit of the corpus."
    );
    println!("\nRecall measured at:\n");
    println!("| tools | recall@1 | recall@{LOADED} | queries |");
    println!("| ---: | ---: | ---: | ---: |");
    for point in &recall {
        println!(
            "| {} | {:.3} | {:.3} | {} |",
            point.tools, point.at1, point.at5, point.queries
        );
    }
    Ok(())
}

/// The tokens of one task at one size.
#[derive(Debug, Default)]
struct Cost {
    every_definition: f64,
    openai_definitions: f64,
    shown_deferred: f64,
    loaded_anthropic: f64,
    loaded_openai: f64,
    recall: f64,
    search_and_loaded: f64,
    every_anthropic: f64,
    search_anthropic: f64,
    every_openai: f64,
    search_openai: f64,
}

impl Cost {
    /// At `n` tools, from the mean tokens of the first n tools (index n).
    fn new(n: usize, anthropic: &[f64], openai: &[f64], shown: &[f64], recall: f64) -> Self {
        let sum = |tokens: &[f64]| tokens[n];
        let loaded = |tokens: &[f64]| sum(tokens) / n as f64 * n.min(LOADED) as f64;
        Self {
            every_definition: sum(anthropic),
            openai_definitions: sum(openai),
            shown_deferred: sum(shown),
            loaded_anthropic: loaded(anthropic),
            loaded_openai: loaded(openai),
            recall,
            ..Self::default()
        }
    }

    fn with(
        mut self,
        search_anthropic: f64,
        search_openai: f64,
        query: f64,
        answer_anthropic: f64,
        answer_openai: f64,
    ) -> Self {
        let task = |up_front: f64, searched: f64| {
            3.0 * up_front + 2.0 * searched + (1.0 - self.recall) * (up_front + 3.0 * searched)
        };
        self.search_and_loaded = search_anthropic + self.loaded_anthropic;
        self.every_anthropic = 2.0 * self.every_definition;
        self.search_anthropic = task(
            search_anthropic,
            query + answer_anthropic + self.loaded_anthropic,
        );
        self.every_openai = 2.0 * self.openai_definitions;
        self.search_openai = task(
            search_openai + self.shown_deferred,
            query + answer_openai + self.loaded_openai,
        );
        self
    }
}

/// Recall at one size.
#[derive(Debug)]
struct Recall {
    tools: usize,
    at1: f64,
    at5: f64,
    queries: usize,
}

/// Recall@1 and @5 at each of `RECALL_SIZES`: MetaTool's queries over draws of its tools, and
/// past its 199 tools, over all of them among LiveMCPBench's.
fn recall(
    metatool: &[ToolDefinition],
    live: &[ToolDefinition],
    queries: &[(String, String)],
) -> Vec<Recall> {
    let mut points = Vec::new();
    for &size in &RECALL_SIZES {
        let draws: Vec<Vec<ToolDefinition>> = if size < metatool.len() {
            (0..DRAWS)
                .map(|draw| sample(metatool, size, draw))
                .collect()
        } else {
            let extra = size - metatool.len();
            vec![
                metatool
                    .iter()
                    .chain(live.iter().take(extra))
                    .cloned()
                    .collect(),
            ]
        };
        let (mut at1, mut at5, mut total) = (0usize, 0usize, 0usize);
        for tools in &draws {
            let index = SearchIndex::new(tools);
            let names: Vec<&str> = tools.iter().map(ToolDefinition::name).collect();
            for (query, label) in queries {
                if !names.contains(&label.as_str()) {
                    continue;
                }
                total += 1;
                let found = index.search(query, LOADED).tools;
                let rank = found.iter().position(|&i| names[i] == label.as_str());
                at1 += usize::from(rank == Some(0));
                at5 += usize::from(rank.is_some());
            }
        }
        let total_f = total.max(1) as f64;
        points.push(Recall {
            tools: size,
            at1: at1 as f64 / total_f,
            at5: at5 as f64 / total_f,
            queries: total,
        });
    }
    points
}

/// Recall@1 and @5 at `n` tools, read linearly between the sizes measured.
fn interpolate(points: &[Recall], n: usize) -> (f64, f64) {
    let after = points
        .iter()
        .position(|p| p.tools >= n)
        .unwrap_or(points.len() - 1);
    let high = &points[after];
    if after == 0 || high.tools == n {
        return (high.at1, high.at5);
    }
    let low = &points[after - 1];
    let t = (n - low.tools) as f64 / (high.tools - low.tools) as f64;
    (
        low.at1 + t * (high.at1 - low.at1),
        low.at5 + t * (high.at5 - low.at5),
    )
}

/// `size` of `tools`, drawn without repeats by a seeded shuffle.
fn sample(tools: &[ToolDefinition], size: usize, seed: u64) -> Vec<ToolDefinition> {
    shuffled(tools.len(), seed ^ ((size as u64) << 32))[..size]
        .iter()
        .map(|&i| tools[i].clone())
        .collect()
}

/// 0..n in an order shuffled from `seed` (Fisher–Yates over SplitMix64).
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..order.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// At each n (0 to every tool), the mean over `ORDERS` random orders of the servers of the
/// tokens of the first n tools; `tokens` is per tool in file order, `servers` how many tools
/// each server has, in file order.
fn prefix_means(servers: &[usize], tokens: &[usize]) -> Vec<f64> {
    let starts: Vec<usize> = servers
        .iter()
        .scan(0, |start, &len| {
            let this = *start;
            *start += len;
            Some(this)
        })
        .collect();
    let mut sums = vec![0.0; tokens.len() + 1];
    for order in 0..ORDERS {
        let mut total = 0usize;
        let mut n = 0usize;
        for server in shuffled(servers.len(), order + 1) {
            for &t in &tokens[starts[server]..starts[server] + servers[server]] {
                total += t;
                n += 1;
                sums[n] += total as f64;
            }
        }
    }
    sums.iter().map(|sum| sum / ORDERS as f64).collect()
}

/// LiveMCPBench's tools by server, in file order, named `server__tool`, each name once.
fn livemcpbench(
    corpus: &std::path::Path,
) -> Result<Vec<Vec<ToolDefinition>>, Box<dyn std::error::Error>> {
    let servers: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(
        corpus.join("mcp/livemcpbench-tools.json"),
    )?)?;
    let mut by_server: Vec<Vec<ToolDefinition>> = Vec::new();
    let mut names = std::collections::HashSet::new();
    for entry in &servers {
        let Some(listed) = entry.get("tools").and_then(Value::as_object) else {
            continue;
        };
        for (server, listing) in listed {
            let mut definitions = Vec::new();
            for tool in listing
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let name = naming::tool_name(server, name, 64);
                if !names.insert(name.clone()) {
                    continue;
                }
                let schema = tool
                    .get("inputSchema")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let mut definition = ToolDefinition::new(name, schema)?;
                if let Some(description) = tool.get("description").and_then(Value::as_str) {
                    definition = definition.with_description(description);
                }
                definitions.push(definition);
            }
            if !definitions.is_empty() {
                by_server.push(definitions);
            }
        }
    }
    Ok(by_server)
}

/// MetaTool's tools (name and description) and its test half's queries with their tools.
#[allow(clippy::type_complexity)]
fn metatool(
    corpus: &std::path::Path,
) -> Result<(Vec<ToolDefinition>, Vec<(String, String)>), Box<dyn std::error::Error>> {
    let directory = corpus.join("search");
    let tools: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(directory.join("plugin_des.json"))?)?;
    let definitions = tools
        .iter()
        .map(|(name, description)| {
            ToolDefinition::new(name.clone(), JsonObject::new())
                .map(|d| d.with_description(description.as_str().unwrap_or_default()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut labelled = csv::Reader::from_path(directory.join("all_clean_data.csv"))?;
    let mut queries = Vec::new();
    for (row, record) in labelled.records().enumerate() {
        let record = record?;
        if row % 2 == 1 {
            queries.push((record[0].to_owned(), record[1].to_owned()));
        }
    }
    Ok((definitions, queries))
}

/// A toolkit of `definitions` whose tools do nothing (only their definitions are read here).
fn toolkit(definitions: Vec<ToolDefinition>) -> Result<Toolkit, Box<dyn std::error::Error>> {
    let tools = definitions.into_iter().map(|definition| {
        Tool::new(
            definition,
            Approval::Never,
            Arc::new(|_, _| Box::pin(async { Ok(Value::Null) })),
        )
    });
    Ok(Toolkit::from_tools(tools)?)
}
