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
//! For a provider that loads tools on demand (Anthropic's `tool_reference`, OpenAI's
//! `tool_search_output`), [`ToolSearch::deferring`] gives `tool_search` alone: the model calls
//! what it finds directly, and `toolkit_runtime::model` writes the deferred shapes.
//! [`PresentationRule`] says when: above [`SEARCH_THRESHOLD`] tools (17, measured).
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
/// When to switch search on: the rule, its measured default, and its two answers.
pub use toolkit_core::{Presentation, PresentationRule, SEARCH_THRESHOLD};

use toolkit_core::Approval;
use toolkit_core::{CallContext, Failure, JsonObject, Outcome, Tool, ToolDefinition, Toolkit};

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
        let search = search_tool(
            &presented,
            options,
            "Finds tools by what they do. Returns, best first, each tool's name, description and \
             inputSchema, with `matched` (how many tools match) and `available` (how many there \
             are). Run a tool it finds with tool_call.",
        );
        let call = {
            let runner = Arc::clone(&presented);
            let approver = Arc::clone(&presented);
            Tool::with_outcome_handler(
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
                Arc::new(
                    move |mut input: JsonObject, context: CallContext, written: bool| {
                        let presented = Arc::clone(&runner);
                        Box::pin(async move {
                            let name = match input.remove("name") {
                                Some(Value::String(name)) => name,
                                _ => {
                                    return Outcome::from(Err(Failure::invalid_input(
                                        "Give the tool's name.",
                                    )));
                                }
                            };
                            let arguments = input.remove("input").unwrap_or_else(|| json!({}));
                            // A model's call (with the host's context) asks about the called
                            // tool; a host's own call asks no one. What the called tool gave
                            // is this call's, its server's result as written with it.
                            if written {
                                presented.call_outcome(&name, arguments, &context).await
                            } else {
                                Outcome::from(presented.call_with(&name, arguments, &context).await)
                            }
                        })
                    },
                ),
            )
        };
        // The two names differ.
        Toolkit::from_tools([search, call]).unwrap_or_default()
    }

    /// The toolkit of `tool_search` alone over `presented`, for a model whose provider loads the
    /// tools a search finds (deferred loading): the request also carries every tool of
    /// `presented`, deferred, and the host answers the model's search with the found tools'
    /// names, which the model then calls directly. `tool_search` gives the same answer as
    /// [`ToolSearch::toolkit`]'s; its description says the tools it finds can be called.
    /// `toolkit_runtime::model` writes the request's tools and the answer
    /// (`anthropic_deferred_tools` and `anthropic_tool_references`; `openai_tool_search`,
    /// `openai_deferred_tools` and `openai_tool_search_output`).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_runtime::{model, search::SearchOptions, search::ToolSearch, Toolkit};
    ///
    /// # let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    /// # let assembled = Toolkit::default();
    /// let search = ToolSearch::deferring(&assembled, &SearchOptions::default());
    /// let mut tools = model::anthropic_tools(&search);
    /// tools.extend(model::anthropic_deferred_tools(&assembled));
    ///
    /// // The model's `tool_use` of `tool_search`, id `toolu_1`:
    /// let answer = runtime.block_on(search.call("tool_search", json!({ "query": "open an issue" })));
    /// let answer = answer.map_err(|failure| failure.message)?;
    /// let result = model::anthropic_tool_references("toolu_1", &answer, &assembled);
    /// assert_eq!(result["tool_use_id"], "toolu_1");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn deferring(presented: &Toolkit, options: &SearchOptions) -> Toolkit {
        let search = search_tool(
            &Arc::new(presented.clone()),
            options,
            "Finds tools by what they do and loads them: returns, best first, the tools that \
             match, which you can then call by name. Search again with other words when none fits.",
        );
        Toolkit::from_tools([search]).unwrap_or_default()
    }
}

/// `tool_search` over `presented`, described by `description`; its index is built here, once.
fn search_tool(presented: &Arc<Toolkit>, options: &SearchOptions, description: &str) -> Tool {
    let index = index(
        presented,
        options.ranking,
        #[cfg(feature = "search-embeddings")]
        options.meaning.as_ref(),
    );
    let default_limit = options.limit.clamp(1, MAX_SEARCH_LIMIT);
    let presented = Arc::clone(presented);
    Tool::new(
        fixed_definition(
            "tool_search",
            search_schema(default_limit),
            description,
            true,
        ),
        Approval::Never,
        Arc::new(move |input: JsonObject, _| {
            let answer = search(&presented, &index, &input, default_limit);
            Box::pin(async move { answer })
        }),
    )
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

/// `tool_search`'s input schema.
fn search_schema(default_limit: usize) -> Value {
    json!({
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
    })
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::{SearchOptions, ToolSearch};
    use toolkit_core::Approval;
    use toolkit_core::{JsonObject, Tool, ToolDefinition, Toolkit, model};

    /// `tool_call` passes on what the tool it runs gave: the result as written for a server that
    /// asks for it, the answer alone for a host.
    #[tokio::test]
    async fn tool_call_passes_on_the_result_as_written() {
        let written =
            json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]});
        let image = {
            let written = written.as_object().cloned();
            Tool::with_outcome_handler(
                ToolDefinition::new("image", JsonObject::new()).unwrap(),
                Approval::Never,
                Arc::new(move |_, _, keep| {
                    let written = written.clone().filter(|_| keep);
                    Box::pin(async move {
                        toolkit_core::Outcome {
                            answer: Ok(json!([{"type": "text", "text": "an image"}])),
                            written,
                        }
                    })
                }),
            )
        };
        let search = ToolSearch::toolkit(
            &Toolkit::from_tools([image]).unwrap(),
            &SearchOptions::default(),
        );
        let input = json!({"name": "image", "input": {}});
        let context = toolkit_core::CallContext::new();
        let outcome = search
            .call_outcome("tool_call", input.clone(), &context)
            .await;
        assert_eq!(outcome.written.map(Value::Object), Some(written));
        assert_eq!(
            outcome.answer,
            Ok(json!([{"type": "text", "text": "an image"}]))
        );
        let answer = search.call_with("tool_call", input, &context).await;
        assert_eq!(answer, outcome.answer);
        // A tool that is not there: nothing written.
        let missing = json!({"name": "nothing", "input": {}});
        let outcome = search.call_outcome("tool_call", missing, &context).await;
        assert!(outcome.answer.is_err());
        assert_eq!(outcome.written, None);
    }

    fn assembled() -> Toolkit {
        Toolkit::from_tools(
            [
                ("github__create_issue", "Opens an issue in a repository."),
                (
                    "github__list_pulls",
                    "Lists the pull requests of a repository.",
                ),
                ("weather__forecast", "Tells the weather to come."),
            ]
            .map(|(name, description)| {
                Tool::new(
                    ToolDefinition::new(name, JsonObject::new())
                        .unwrap()
                        .with_description(description),
                    Approval::Never,
                    Arc::new(|_, _| Box::pin(async { Ok(Value::Null) })),
                )
            }),
        )
        .unwrap()
    }

    /// `tool_search` alone, whose answer the deferred shapes turn into the found tools by name.
    #[test]
    fn a_deferring_search_feeds_both_providers_answers() {
        let assembled = assembled();
        let search = ToolSearch::deferring(&assembled, &SearchOptions::default());
        let names: Vec<&str> = search.tools().map(Tool::name).collect();
        assert_eq!(names, ["tool_search"]);
        let definition = search.definitions().next().unwrap();
        assert!(definition.annotations.hints().read_only);
        let description = definition.description.as_deref().unwrap();
        assert!(!description.contains("tool_call"), "{description}");
        let plain = ToolSearch::toolkit(&assembled, &SearchOptions::default());
        assert_eq!(
            plain
                .get("tool_search")
                .unwrap()
                .definition()
                .input_schema(),
            definition.input_schema()
        );

        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let answer = runtime
            .block_on(search.call("tool_search", json!({ "query": "open an issue" })))
            .unwrap();
        assert_eq!(answer["tools"][0]["name"], "github__create_issue");
        let references = model::anthropic_tool_references("toolu_1", &answer, &assembled);
        assert_eq!(
            references["content"][0],
            json!({ "type": "tool_reference", "tool_name": "github__create_issue" })
        );
        let output = model::openai_tool_search_output("call_1", &answer, &assembled);
        assert_eq!(output["tools"][0]["name"], "github__create_issue");
        assert_eq!(output["tools"][0]["defer_loading"], true);
        assert_eq!(
            model::openai_tool_search(definition)["parameters"],
            json!(definition.input_schema())
        );
    }
}
