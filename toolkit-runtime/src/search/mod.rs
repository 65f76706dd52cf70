//! Presenting many tools as two: [`ToolSearch`].
//!
//! `tool_search({ query, limit? })` finds tools by what they do and returns for each its name,
//! description and input schema, with `matched` (how many match) and `available` (how many there
//! are), so a model knows when a search cut its matches short. `tool_call({ name, input })` runs a
//! tool as the presented toolkit does when a model calls it directly: the input checked, the tool
//! run, a failure given as a result; a name that is no tool is `NotFoundError`.
//!
//! A blocked tool is not in the presented toolkit, so it can be neither found nor called. A tool
//! that needs approval needs it through `tool_call`: `tool_call`'s approval is
//! [`Approval::Delegated`] to the called tool's own, about the input the model gave, and a call
//! made with [`Toolkit::call_with`] asks the host's approver about the called tool (its name, its
//! input), as it asks about any other call. `tool_search` runs nothing and needs none.
//!
//! ```
//! # use toolkit_runtime::{search::SearchOptions, search::ToolSearch, Toolkit};
//! # let assembled = Toolkit::default();
//! let toolkit = ToolSearch::toolkit(&assembled, &SearchOptions::default());
//! let names: Vec<_> = toolkit.tools().map(|tool| tool.name()).collect();
//! assert_eq!(names, ["tool_search", "tool_call"]);
//! ```

#[cfg(feature = "search-embeddings")]
mod embedder;
mod index;
#[cfg(feature = "search-embeddings")]
mod semantic;
#[cfg(feature = "search-embeddings")]
mod static_embedder;
#[cfg(feature = "search-embeddings")]
mod wordpiece;
mod words;

use std::sync::Arc;

use serde_json::{Value, json};

#[cfg(feature = "search-embeddings")]
pub use embedder::{Embedder, EmbedderError, MAX_EMBEDDED_TOKENS, MAX_KEPT_VECTORS};
pub use index::{CONFIDENT_MARGIN, Found, MAX_QUERY_CHARS, Ranking, SearchIndex};
#[cfg(feature = "search-embeddings")]
pub use semantic::MeaningModel;
#[cfg(feature = "search-embeddings")]
pub use static_embedder::StaticEmbedder;

use crate::{Approval, CallContext, Failure, JsonObject, Tool, ToolDefinition, Toolkit};

/// The most tools one search returns, whatever it asks for.
pub const MAX_SEARCH_LIMIT: usize = 20;

/// Options of [`ToolSearch::toolkit`], set one by one from the defaults.
///
/// ```
/// use toolkit_runtime::{search::Ranking, search::SearchOptions};
///
/// let options = SearchOptions::default().limit(3).ranking(Ranking::Relevance);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SearchOptions {
    limit: usize,
    ranking: Ranking,
    #[cfg(feature = "search-embeddings")]
    meaning: Option<MeaningModel>,
}

impl SearchOptions {
    /// How many tools a search returns when it does not say: 5 by default, at most 20.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// How the tools that match are ranked.
    #[must_use]
    pub fn ranking(mut self, ranking: Ranking) -> Self {
        self.ranking = ranking;
        self
    }

    /// A model of meaning (feature `search-embeddings`): with one, the index is
    /// [`SearchIndex::hybrid`] (words and meaning; the ranking is then `Relevance`'s); with
    /// none (the default), words alone.
    #[cfg(feature = "search-embeddings")]
    #[must_use]
    pub fn meaning(mut self, meaning: Option<MeaningModel>) -> Self {
        self.meaning = meaning;
        self
    }
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            limit: 5,
            ranking: Ranking::default(),
            #[cfg(feature = "search-embeddings")]
            meaning: None,
        }
    }
}

/// Presents a toolkit as two tools, `tool_search` and `tool_call`.
#[derive(Clone, Copy, Debug)]
pub struct ToolSearch;

impl ToolSearch {
    /// The toolkit of `tool_search` and `tool_call` over `presented`. The search index is built
    /// here, once.
    pub fn toolkit(presented: &Toolkit, options: &SearchOptions) -> Toolkit {
        let presented = Arc::new(presented.clone());
        let index = Arc::new(index(
            &presented,
            options.ranking,
            #[cfg(feature = "search-embeddings")]
            options.meaning.as_ref(),
        ));
        let default_limit = options.limit.clamp(1, MAX_SEARCH_LIMIT);
        let search = {
            let presented = Arc::clone(&presented);
            Tool::new(
                search_definition(default_limit),
                Approval::Never,
                Arc::new(move |input: JsonObject, _| {
                    let answer = search(&presented, &index, &input, default_limit);
                    Box::pin(async move { answer })
                }),
            )
        };
        let call = {
            let runner = Arc::clone(&presented);
            let approver = Arc::clone(&presented);
            Tool::new(
                call_definition(),
                Approval::Delegated(Arc::new(move |input: &JsonObject| {
                    let (Some(name), Some(Value::Object(arguments))) = (
                        input.get("name").and_then(Value::as_str),
                        input.get("input"),
                    ) else {
                        return false;
                    };
                    approver
                        .get(name)
                        .is_some_and(|tool| tool.approval().is_required(arguments))
                })),
                Arc::new(move |mut input: JsonObject, context: CallContext| {
                    let presented = Arc::clone(&runner);
                    Box::pin(async move {
                        let name = match input.remove("name") {
                            Some(Value::String(name)) => name,
                            _ => return Err(Failure::invalid_input("Give the tool's name.")),
                        };
                        let arguments = input.remove("input").unwrap_or_else(|| json!({}));
                        // A model's call (with the host's context) asks about the called tool;
                        // a host's own call asks no one.
                        presented.call_with(&name, arguments, &context).await
                    })
                }),
            )
        };
        // The two names differ.
        Toolkit::from_tools([search, call]).unwrap_or_default()
    }
}

/// The index a search presentation ranks `presented` with (`tool_search`, code mode's
/// `search_tools`): hybrid when given a model (on words alone, with a warning, if the model fails
/// on the tools' text), else on words by `ranking`.
pub(crate) fn index(
    presented: &Toolkit,
    ranking: Ranking,
    #[cfg(feature = "search-embeddings")] meaning: Option<&MeaningModel>,
) -> SearchIndex {
    #[cfg(feature = "search-embeddings")]
    if let Some(model) = meaning {
        match SearchIndex::hybrid(presented.definitions(), model.clone()) {
            Ok(index) => return index,
            Err(error) => tracing::warn!(%error, "tool search ranks on words alone"),
        }
    }
    SearchIndex::with_ranking(presented.definitions(), ranking)
}

fn search(
    presented: &Toolkit,
    index: &SearchIndex,
    input: &JsonObject,
    default_limit: usize,
) -> Result<Value, Failure> {
    let query = input
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let limit = input
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(default_limit, |limit| {
            usize::try_from(limit).unwrap_or(MAX_SEARCH_LIMIT)
        })
        .clamp(1, MAX_SEARCH_LIMIT);
    let found = index.search(query, limit);
    let definitions: Vec<&ToolDefinition> = presented.definitions().collect();
    let tools: Vec<Value> = found
        .tools
        .iter()
        .filter_map(|&tool| definitions.get(tool))
        .map(|definition| {
            json!({
                "name": definition.name(),
                "description": definition.description.as_deref().unwrap_or_default(),
                "inputSchema": definition.input_schema(),
            })
        })
        .collect();
    Ok(json!({ "tools": tools, "matched": found.matched, "available": found.available }))
}

fn search_definition(default_limit: usize) -> ToolDefinition {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "maxLength": MAX_QUERY_CHARS,
                "description": "Words for what the tool should do, such as `create issue`. No words lists the tools in order."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
                "description": format!("How many tools to return (default {default_limit}, at most {MAX_SEARCH_LIMIT}).")
            }
        },
        "required": ["query"],
        "additionalProperties": false
    });
    fixed_definition(
        "tool_search",
        schema,
        "Finds tools by what they do. Returns, best first, each tool's name, description and \
         inputSchema, with `matched` (how many tools match) and `available` (how many there are). \
         Run a tool it finds with tool_call.",
        true,
    )
}

fn call_definition() -> ToolDefinition {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "The tool's name, as tool_search gave it." },
            "input": { "type": "object", "description": "The tool's input, matching its inputSchema." }
        },
        "required": ["name", "input"],
        "additionalProperties": false
    });
    fixed_definition(
        "tool_call",
        schema,
        "Runs a tool that tool_search found, by its name, with an input that matches its \
         inputSchema, and gives what the tool gives.",
        false,
    )
}

fn fixed_definition(
    name: &'static str,
    schema: Value,
    description: &str,
    read_only: bool,
) -> ToolDefinition {
    let schema = match schema {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let mut definition = ToolDefinition::builtin(name, description, schema);
    if read_only {
        definition.annotations.read_only = Some(true);
        definition.annotations.open_world = Some(false);
    }
    definition
}
