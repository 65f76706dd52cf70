//! Fixtures shared by the emitter's tests.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use toolkit_runtime::ToolDefinition;
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};

/// A path under `tests/emit/`.
pub fn here(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/emit")
        .join(path)
}

/// The shared corpus (`../shared/corpus` beside the workspace).
pub fn corpus(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(path)
}

/// `cargo` for a crate a test writes under the target directory (its command line to follow):
/// one target directory for them all, so the runtime is built once, and no debug information,
/// which for a generated module of a large document is gigabytes on a disk that CI shares.
pub fn nested_cargo() -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("emit-compile/target"),
        )
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env("CARGO_INCREMENTAL", "0");
    command
}

/// The fixture tools that exercise every schema form.
pub fn forms() -> Vec<ToolDefinition> {
    let text = std::fs::read_to_string(here("fixtures/forms.json")).unwrap();
    toolkit_runtime::definition::decode_catalog(&text).unwrap()
}

/// The fixture tools with each one's input schema as its `outputSchema` (and no input): every
/// schema form as an answer's type.
pub fn forms_as_answers() -> Vec<ToolDefinition> {
    forms()
        .into_iter()
        .map(|definition| {
            let input = serde_json::json!({ "type": "object" });
            ToolDefinition::new(definition.name(), input.as_object().cloned().unwrap())
                .unwrap()
                .with_output_schema(definition.input_schema().clone())
        })
        .collect()
}

/// The tools of every server of `livemcpbench-tools.json`, by server.
pub fn mcp_servers() -> Vec<(String, Vec<ToolDefinition>)> {
    let path = corpus("mcp/livemcpbench-tools.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the corpus is missing at {}: {e}", path.display()));
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut servers = Vec::new();
    for entry in entries {
        for (server, listed) in entry["tools"].as_object().unwrap() {
            let definitions = listed["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| {
                    let schema = tool["inputSchema"].as_object().cloned().unwrap_or_default();
                    let definition =
                        ToolDefinition::new(tool["name"].as_str().unwrap(), schema).unwrap();
                    match tool["description"].as_str() {
                        Some(description) => definition.with_description(description),
                        None => definition,
                    }
                })
                .collect();
            servers.push((server.clone(), definitions));
        }
    }
    servers
}

/// Every OpenAPI document of the corpus: its file name and the definitions the runtime's reader
/// makes of its operations.
pub fn openapi_documents() -> Vec<(String, Vec<ToolDefinition>)> {
    let mut names: Vec<String> = std::fs::read_dir(corpus("openapi"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json") || name.ends_with(".yaml") || name.ends_with(".yml"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(corpus(&format!("openapi/{name}"))).unwrap();
            let document = decode_document(&text).unwrap();
            let read = read_operations(&document, &ReadOptions::default()).unwrap();
            let definitions = read.operations.into_iter().map(|o| o.definition).collect();
            (name, definitions)
        })
        .collect()
}
