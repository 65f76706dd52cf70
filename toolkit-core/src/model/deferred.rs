//! Deferred loading: every tool in the request, only a search tool in the model's context, and
//! the tools a search finds loaded by the provider's API when it answers.
//!
//! Both providers take the same three steps; this file writes each step's JSON, as the host
//! sends it to the API.
//!
//! 1. The request's `tools` are the search tool, written as any tool, and every other tool marked
//!    deferred: `"defer_loading": true` on an Anthropic tool ([`anthropic_deferred_tools`]), on
//!    a function of OpenAI's Responses API ([`openai_deferred_tools`]), where the search tool is
//!    `{"type": "tool_search", "execution": "client", …}` ([`openai_tool_search`]). Anthropic
//!    leaves a deferred tool out of the model's context altogether; OpenAI still shows its name
//!    and description, and defers its parameters.
//! 2. The model calls the search tool; the host runs it — `ToolSearch::deferring` of
//!    `toolkit-runtime`, whose answer is `{"tools": [{"name", …}], "matched", "available"}`.
//! 3. The host answers with the tools found, by name, and the API loads their definitions
//!    from the request: an Anthropic `tool_result` of `tool_reference` blocks
//!    ([`anthropic_tool_references`]), an OpenAI `tool_search_output` item with the found tools'
//!    definitions ([`openai_tool_search_output`]). The model then calls a found tool as any
//!    other, and [`Toolkit::answer`] runs it.
//!
//! The search tool itself is never deferred: the model must see it. A found name that is not one
//! of the deferred tools is left out (a provider refuses a reference to a tool its request does
//! not defer).
//!
//! The shapes follow Anthropic's Messages API (`ToolParam.defer_loading`,
//! `ToolReferenceBlockParam` in a `ToolResultBlockParam`'s content; the tool search tool's
//! documentation, "custom tool search") and OpenAI's Responses API (`ToolSearchToolParam`,
//! `FunctionToolParam.defer_loading`, the `tool_search_call` / `tool_search_output` items; the
//! tool search guide, "client-executed tool search").
//!
//! ```
//! use serde_json::json;
//! use toolkit_core::{model, Toolkit};
//!
//! # let (search, assembled) = (Toolkit::default(), Toolkit::default());
//! // `search`: `ToolSearch::deferring(&assembled, &SearchOptions::default())`.
//! let mut tools = model::anthropic_tools(&search);
//! tools.extend(model::anthropic_deferred_tools(&assembled));
//! let request = json!({ "model": "claude-sonnet-5", "max_tokens": 1024, "tools": tools });
//!
//! // The model called `tool_search` (tool_use id `toolu_1`) and the search answered:
//! let answer = json!({ "tools": [{ "name": "github__create_issue" }], "matched": 1, "available": 1 });
//! let block = model::anthropic_tool_references("toolu_1", &answer, &assembled);
//! assert_eq!(block["type"], "tool_result");
//! # let _ = request;
//! ```

use serde_json::{Value, json};

use crate::{JsonObject, ToolDefinition, Toolkit};

/// What an Anthropic `tool_result` says when a search found none of the deferred tools.
pub const NOTHING_FOUND: &str = "No tool matched. Search again with other words.";

/// The toolkit as deferred tools of an Anthropic request: each as [`anthropic_tools`] writes
/// it, with `"defer_loading": true`. None is in the model's context until a `tool_reference`
/// names it.
///
/// [`anthropic_tools`]: super::anthropic_tools
///
/// ```
/// # use toolkit_core::{model, Toolkit};
/// # let assembled = Toolkit::default();
/// for tool in model::anthropic_deferred_tools(&assembled) {
///     assert_eq!(tool["defer_loading"], true);
/// }
/// ```
pub fn anthropic_deferred_tools(toolkit: &Toolkit) -> Vec<Value> {
    toolkit
        .definitions()
        .map(|definition| deferred(super::anthropic_tool(definition)))
        .collect()
}

/// The `tool_result` block that answers the model's search (`tool_use_id` is the id of its
/// `tool_use`): a `{"type": "tool_reference", "tool_name": …}` block for each tool of
/// `answer["tools"]` that `deferred` holds, best first, and the API loads those tools'
/// definitions. When it holds none, a text block says so ([`NOTHING_FOUND`]).
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{model, FnSource, FnTool, JsonObject, Toolkit, ToolkitOptions};
/// # use std::sync::Arc;
///
/// let tools = FnSource::builder("weather")
///     .tool(FnTool::new("forecast", |_: JsonObject| async { Ok("rain") }))
///     .build()?;
/// let definitions = tools.definitions();
/// let deferred = Toolkit::from_source(Arc::new(tools), definitions, &ToolkitOptions::default())?;
///
/// let answer = json!({ "tools": [{ "name": "forecast" }], "matched": 1, "available": 1 });
/// assert_eq!(
///     model::anthropic_tool_references("toolu_01", &answer, &deferred),
///     json!({
///         "type": "tool_result",
///         "tool_use_id": "toolu_01",
///         "content": [{ "type": "tool_reference", "tool_name": "forecast" }]
///     })
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn anthropic_tool_references(tool_use_id: &str, answer: &Value, deferred: &Toolkit) -> Value {
    let references: Vec<Value> = found(answer, deferred)
        .map(|definition| json!({ "type": "tool_reference", "tool_name": definition.name() }))
        .collect();
    let content = if references.is_empty() {
        vec![json!({ "type": "text", "text": NOTHING_FOUND })]
    } else {
        references
    };
    json!({ "type": "tool_result", "tool_use_id": tool_use_id, "content": content })
}

/// The toolkit as function tools of an OpenAI Responses request, loaded up front:
/// `{"type": "function", "name", "description", "parameters", "strict": false}` (the Responses
/// API's flat shape; [`openai_tools`] writes Chat Completions').
///
/// [`openai_tools`]: super::openai_tools
pub fn openai_responses_tools(toolkit: &Toolkit) -> Vec<Value> {
    toolkit.definitions().map(openai_function).collect()
}

/// The toolkit as deferred function tools of an OpenAI Responses request: each as
/// [`openai_responses_tools`] writes it, with `"defer_loading": true`. The model sees each one's
/// name and description, and its parameters once a `tool_search_output` loads it.
pub fn openai_deferred_tools(toolkit: &Toolkit) -> Vec<Value> {
    toolkit
        .definitions()
        .map(|definition| deferred(openai_function(definition)))
        .collect()
}

/// The search tool of an OpenAI Responses request, run by the host:
/// `{"type": "tool_search", "execution": "client", "description", "parameters"}`, from the search
/// tool's definition (its description and input schema). The model's call of it is a
/// `tool_search_call` item ([`openai_tool_search_call`]).
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{model, ToolDefinition};
///
/// let schema = json!({ "type": "object", "properties": { "query": { "type": "string" } } });
/// let search = ToolDefinition::new("tool_search", schema.as_object().cloned().unwrap_or_default())?
///     .with_description("Finds tools by what they do.");
/// assert_eq!(
///     model::openai_tool_search(&search),
///     json!({
///         "type": "tool_search",
///         "execution": "client",
///         "description": "Finds tools by what they do.",
///         "parameters": schema
///     })
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn openai_tool_search(search: &ToolDefinition) -> Value {
    json!({
        "type": "tool_search",
        "execution": "client",
        "description": search.description.as_deref().unwrap_or_default(),
        "parameters": search.input_schema(),
    })
}

/// The `call_id` and the arguments of a `tool_search_call` item the model gave, to run the search
/// with; `None` for any other item. Arguments written as JSON text are read too; none, or
/// arguments that are no JSON object, are `{}`.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::model;
///
/// let item = json!({
///     "type": "tool_search_call",
///     "id": "tsc_1",
///     "call_id": "call_1",
///     "execution": "client",
///     "status": "completed",
///     "arguments": { "query": "weather forecast" }
/// });
/// let (call_id, arguments) = model::openai_tool_search_call(&item).unwrap_or_default();
/// assert_eq!(call_id, "call_1");
/// assert_eq!(arguments["query"], "weather forecast");
/// ```
pub fn openai_tool_search_call(item: &Value) -> Option<(String, JsonObject)> {
    if item.get("type").and_then(Value::as_str) != Some("tool_search_call") {
        return None;
    }
    let call_id = item.get("call_id").and_then(Value::as_str)?.to_owned();
    let arguments = match item.get("arguments") {
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_default(),
        _ => JsonObject::new(),
    };
    Some((call_id, arguments))
}

/// The `tool_search_output` item that answers the model's `tool_search_call` (`call_id` is its
/// `call_id`): the definitions of the tools of `answer["tools"]` that `deferred` holds, best
/// first, as [`openai_deferred_tools`] wrote them in the request, and the API loads them.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{model, FnSource, FnTool, JsonObject, Toolkit, ToolkitOptions};
/// # use std::sync::Arc;
///
/// let tools = FnSource::builder("weather")
///     .tool(FnTool::new("forecast", |_: JsonObject| async { Ok("rain") }))
///     .build()?;
/// let definitions = tools.definitions();
/// let deferred = Toolkit::from_source(Arc::new(tools), definitions, &ToolkitOptions::default())?;
///
/// let answer = json!({ "tools": [{ "name": "forecast" }], "matched": 1, "available": 1 });
/// let output = model::openai_tool_search_output("call_1", &answer, &deferred);
/// assert_eq!(output["type"], "tool_search_output");
/// assert_eq!(output["execution"], "client");
/// assert_eq!(output["tools"], json!(model::openai_deferred_tools(&deferred)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn openai_tool_search_output(call_id: &str, answer: &Value, deferred: &Toolkit) -> Value {
    let tools: Vec<Value> = found(answer, deferred)
        .map(|definition| self::deferred(openai_function(definition)))
        .collect();
    json!({
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "tools": tools,
    })
}

/// The definitions, in `deferred`, of the tools a search's answer names, in its order, each once.
fn found<'a>(answer: &'a Value, deferred: &'a Toolkit) -> impl Iterator<Item = &'a ToolDefinition> {
    let mut seen = std::collections::HashSet::new();
    answer
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .filter(move |name| seen.insert(*name))
        .filter_map(|name| deferred.get(name).map(crate::Tool::definition))
}

/// A Responses API function tool.
fn openai_function(definition: &ToolDefinition) -> Value {
    json!({
        "type": "function",
        "name": definition.name(),
        "description": definition.description.as_deref().unwrap_or_default(),
        "parameters": definition.input_schema(),
        "strict": false,
    })
}

/// The tool with `"defer_loading": true`.
fn deferred(mut tool: Value) -> Value {
    if let Value::Object(fields) = &mut tool {
        fields.insert("defer_loading".to_owned(), Value::Bool(true));
    }
    tool
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::{Approval, Tool};

    fn tool(name: &str, description: &str, schema: Value) -> Tool {
        let definition = ToolDefinition::new(name, schema.as_object().cloned().unwrap())
            .unwrap()
            .with_description(description);
        Tool::new(
            definition,
            Approval::Never,
            Arc::new(|_, _| Box::pin(async { Ok(Value::Null) })),
        )
    }

    fn weather() -> Toolkit {
        Toolkit::from_tools([
            tool(
                "get_weather",
                "Get the weather at a specific location",
                json!({
                    "type": "object",
                    "properties": {
                        "location": { "type": "string" },
                        "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] }
                    },
                    "required": ["location"]
                }),
            ),
            tool(
                "search_files",
                "Search through files in the workspace",
                json!({
                    "type": "object",
                    "properties": { "query": { "type": "string" } },
                    "required": ["query"]
                }),
            ),
        ])
        .unwrap()
    }

    /// Anthropic's documented deferred tool: its `ToolParam` with `defer_loading`.
    #[test]
    fn anthropic_deferred_tools_are_tool_params_with_defer_loading() {
        assert_eq!(
            anthropic_deferred_tools(&weather()),
            [
                json!({
                    "name": "get_weather",
                    "description": "Get the weather at a specific location",
                    "input_schema": {
                        "type": "object",
                        "properties": {
                            "location": { "type": "string" },
                            "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] }
                        },
                        "required": ["location"]
                    },
                    "defer_loading": true
                }),
                json!({
                    "name": "search_files",
                    "description": "Search through files in the workspace",
                    "input_schema": {
                        "type": "object",
                        "properties": { "query": { "type": "string" } },
                        "required": ["query"]
                    },
                    "defer_loading": true
                }),
            ]
        );
    }

    /// Anthropic's documented answer of a custom search: a `tool_result` whose content is
    /// `tool_reference` blocks only, in the search's order, each naming a deferred tool.
    #[test]
    fn anthropic_references_name_the_found_deferred_tools_in_order() {
        let answer = json!({
            "tools": [
                { "name": "search_files", "description": "…", "inputSchema": {} },
                { "name": "tool_call" },
                { "name": "get_weather" },
                { "name": "search_files" },
                { "description": "no name" }
            ],
            "matched": 3,
            "available": 2
        });
        assert_eq!(
            anthropic_tool_references("toolu_01ABC", &answer, &weather()),
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_01ABC",
                "content": [
                    { "type": "tool_reference", "tool_name": "search_files" },
                    { "type": "tool_reference", "tool_name": "get_weather" }
                ]
            })
        );
    }

    #[test]
    fn anthropic_references_to_nothing_say_so_in_text() {
        for answer in [
            json!({ "tools": [], "matched": 0, "available": 2 }),
            json!({ "tools": [{ "name": "not_deferred" }] }),
            json!({ "code": "InvalidInputError" }),
        ] {
            assert_eq!(
                anthropic_tool_references("toolu_1", &answer, &weather()),
                json!({
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{ "type": "text", "text": NOTHING_FOUND }]
                })
            );
        }
    }

    /// OpenAI's `FunctionToolParam` (Responses) with `defer_loading`.
    #[test]
    fn openai_deferred_tools_are_responses_functions_with_defer_loading() {
        let tools = openai_deferred_tools(&weather());
        assert_eq!(
            tools[0],
            json!({
                "type": "function",
                "name": "get_weather",
                "description": "Get the weather at a specific location",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "location": { "type": "string" },
                        "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] }
                    },
                    "required": ["location"]
                },
                "strict": false,
                "defer_loading": true
            })
        );
        let loaded = openai_responses_tools(&weather());
        let mut expected = tools[1].clone();
        expected.as_object_mut().unwrap().remove("defer_loading");
        assert_eq!(loaded[1], expected);
    }

    /// OpenAI's client-executed `ToolSearchToolParam`, and the `tool_search_output` input item
    /// (`type`, `call_id`, `execution`, `tools`) with the loaded definitions as the request wrote
    /// them.
    #[test]
    fn openai_tool_search_and_its_output() {
        let search = ToolDefinition::new(
            "tool_search",
            json!({
                "type": "object",
                "properties": { "query": { "type": "string" } },
                "required": ["query"]
            })
            .as_object()
            .cloned()
            .unwrap(),
        )
        .unwrap()
        .with_description("Finds tools.");
        assert_eq!(
            openai_tool_search(&search),
            json!({
                "type": "tool_search",
                "execution": "client",
                "description": "Finds tools.",
                "parameters": {
                    "type": "object",
                    "properties": { "query": { "type": "string" } },
                    "required": ["query"]
                }
            })
        );
        let answer = json!({ "tools": [{ "name": "get_weather" }, { "name": "nope" }] });
        let deferred = weather();
        assert_eq!(
            openai_tool_search_output("call_abc", &answer, &deferred),
            json!({
                "type": "tool_search_output",
                "call_id": "call_abc",
                "execution": "client",
                "tools": [openai_deferred_tools(&deferred)[0].clone()]
            })
        );
        assert_eq!(
            openai_tool_search_output("call_abc", &json!({}), &deferred)["tools"],
            json!([])
        );
    }

    #[test]
    fn openai_tool_search_calls_are_read_whatever_their_arguments() {
        let call = |arguments: Value| {
            json!({ "type": "tool_search_call", "call_id": "call_1", "execution": "client",
                    "arguments": arguments })
        };
        let query = json!({ "query": "weather" }).as_object().cloned().unwrap();
        assert_eq!(
            openai_tool_search_call(&call(json!({ "query": "weather" }))),
            Some(("call_1".to_owned(), query.clone()))
        );
        assert_eq!(
            openai_tool_search_call(&call(json!(r#"{"query":"weather"}"#))),
            Some(("call_1".to_owned(), query))
        );
        assert_eq!(
            openai_tool_search_call(&call(json!("not json"))),
            Some(("call_1".to_owned(), JsonObject::new()))
        );
        assert_eq!(
            openai_tool_search_call(&json!({ "type": "function_call", "call_id": "call_1" })),
            None
        );
        assert_eq!(
            openai_tool_search_call(&json!({ "type": "tool_search_call" })),
            None
        );
    }
}
