//! Code mode at API scale: the tools' declarations found by search instead of listed up front.
//!
//! Declaring every tool in `execute`'s description costs as much as listing the tools, which for
//! an API of a thousand operations is hundreds of thousands of tokens. With
//! [`Declarations::Search`], `execute`'s description stays a few hundred tokens however many
//! tools there are, and a second tool, `search_tools`, gives the TypeScript declarations of the
//! tools that match a query (ranked by the toolkit's [`SearchIndex`]), or of tools the model
//! names. `execute` may call any callable tool, found or not.
//!
//! [`Declarations::Auto`] (the default) declares every tool in `execute` while that declaration
//! is at most [`EVERY_DECLARATION_LIMIT`] characters, and searches past it.

use std::sync::Arc;

use serde_json::{Value, json};

use super::declarations::declare_tools;
use crate::search::MAX_SEARCH_LIMIT;
use crate::search::SearchIndex;
use toolkit_core::{Failure, JsonObject, Tool, ToolDefinition, Toolkit};

/// The longest declaration of every tool that [`Declarations::Auto`] puts in `execute`'s
/// description: 20,000 characters, about 5,000 tokens. Past it, the model searches.
pub const EVERY_DECLARATION_LIMIT: usize = 20_000;

/// How many declarations a search gives when it does not say.
const DEFAULT_LIMIT: usize = 5;

/// How code mode tells the model which tools its code may call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Declarations {
    /// [`Every`](Self::Every) while the declaration of every tool is at most
    /// [`EVERY_DECLARATION_LIMIT`] characters, else [`Search`](Self::Search).
    #[default]
    Auto,
    /// Every callable tool declared in `execute`'s description, as the seed does.
    Every,
    /// `execute` with a short description and `search_tools`, which gives the declarations of
    /// the tools that match a query or that the model names.
    Search,
}

/// The callable tools, with their index, shared by `search_tools`.
#[derive(Debug)]
pub(super) struct Catalog {
    tools: Vec<Tool>,
    index: SearchIndex,
}

impl Catalog {
    /// The catalog of `callable`, ranked by `index` (made of `callable`'s definitions).
    pub(super) fn new(callable: &Toolkit, index: SearchIndex) -> Self {
        Self {
            tools: callable.tools().cloned().collect(),
            index,
        }
    }

    /// Answers `search_tools({ query?, names?, limit? })`.
    pub(super) fn search(&self, input: &JsonObject) -> Result<Value, Failure> {
        let query = input.get("query").and_then(Value::as_str);
        let names: Vec<&str> = match input.get("names") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            Some(_) => return Err(Failure::invalid_input("`names` is a list of tool names.")),
        };
        if query.is_none() && names.is_empty() {
            return Err(Failure::invalid_input(
                "Give a `query` (words for what the tools should do) or `names` (tools' names).",
            ));
        }
        let limit = input
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_LIMIT, |limit| {
                usize::try_from(limit).unwrap_or(MAX_SEARCH_LIMIT)
            })
            .clamp(1, MAX_SEARCH_LIMIT);
        let mut chosen: Vec<&Tool> = Vec::new();
        let mut unknown = Vec::new();
        for name in names.iter().take(MAX_SEARCH_LIMIT) {
            match self.tools.iter().find(|tool| tool.name() == *name) {
                Some(tool) if !chosen.iter().any(|c| c.name() == tool.name()) => chosen.push(tool),
                Some(_) => {}
                None => unknown.push(toolkit_core::text::cut_for_echo(name)),
            }
        }
        let mut matched = chosen.len();
        if let Some(query) = query {
            let found = self.index.search(query, limit);
            matched = found.matched;
            for tool in found.tools.iter().filter_map(|&i| self.tools.get(i)) {
                if !chosen.iter().any(|c| c.name() == tool.name()) {
                    chosen.push(tool);
                }
            }
        }
        let mut answer = json!({
            "declarations": declare_tools(chosen.iter().copied()),
            "matched": matched,
            "available": self.tools.len(),
        });
        if !unknown.is_empty() {
            answer["unknown"] = json!(unknown);
        }
        Ok(answer)
    }
}

/// `execute`'s description when the tools are found by search.
pub(super) fn execute_description(callable: &Toolkit) -> String {
    let mut sources: Vec<(&str, usize)> = Vec::new();
    for tool in callable.tools() {
        let source = tool
            .name()
            .split_once("__")
            .map_or("", |(source, _)| source);
        match sources.iter_mut().find(|(name, _)| *name == source) {
            Some((_, count)) => *count += 1,
            None => sources.push((source, 1)),
        }
    }
    let sources: Vec<String> = sources
        .iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, count)| format!("{name} ({count})"))
        .collect();
    let from = if sources.is_empty() {
        String::new()
    } else {
        format!(" from {}", sources.join(", "))
    };
    format!(
        "Runs JavaScript (not TypeScript: type annotations are a syntax error) as the body of an \
         async function, and gives back {{ result, logs }}: what the code returns, as JSON, and \
         what it logged with console.log. {count} tools{from} are callable as \
         `await tools.<name>(input)`; find their names and input types with search_tools first \
         (one search can serve several steps). A tool that fails throws an Error with its \
         message, code and retryable. Use one run to call several tools, read their results in \
         code, and return only what is needed. Nothing else is reachable: no fetch, require, \
         timers or modules.",
        count = callable.len()
    )
}

/// The definition of `search_tools`.
pub(super) fn search_definition() -> ToolDefinition {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words for what the tools should do, such as `list issues with a label`."
            },
            "names": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Names of tools whose declarations you want, found or known before."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
                "description": format!("How many tools the query finds (default {DEFAULT_LIMIT}, at most {MAX_SEARCH_LIMIT}).")
            }
        },
        "additionalProperties": false
    });
    let schema = match schema {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let mut definition = ToolDefinition::builtin(
        "search_tools",
        "Finds the tools that execute's code can call. Give a `query` (what the tools should do), \
         `names` (tools you know), or both; returns `declarations`, TypeScript that declares each \
         tool found as `tools.<name>(input)` with its description, input type and (where \
         known) output type, best match first, with `matched` and `available` (how many tools \
         match and exist).",
        schema,
    );
    definition.annotations.read_only = Some(true);
    definition.annotations.open_world = Some(false);
    definition
}

/// Whether `callable` is declared whole in `execute` under `declarations`.
pub(super) fn declares_every_tool(declarations: Declarations, every: &str) -> bool {
    match declarations {
        Declarations::Every => true,
        Declarations::Search => false,
        Declarations::Auto => every.chars().count() <= EVERY_DECLARATION_LIMIT,
    }
}

/// The `search_tools` tool over `catalog`.
pub(super) fn search_tool(catalog: Arc<Catalog>) -> Tool {
    Tool::new(
        search_definition(),
        toolkit_core::Approval::Never,
        Arc::new(move |input: JsonObject, _| {
            let answer = catalog.search(&input);
            Box::pin(async move { answer })
        }),
    )
}
