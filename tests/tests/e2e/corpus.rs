//! The core over the tools of 70 real MCP servers (527 tools, `shared/corpus/mcp`): every input
//! schema a real server lists is stored, compiled into a check (or held to an object), and named
//! for a model.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use toolkit_runtime::naming::tool_name;
use toolkit_runtime::{
    Assembly, BoxFuture, Decision, JsonObject, Member, Reason, ToolDefinition, ToolSource,
    ToolSourceError, assembly::AssemblyError, definition::decode_catalog,
    definition::encode_catalog, input::InputCheck,
};

fn corpus() -> Vec<(String, Vec<ToolDefinition>)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/mcp/livemcpbench-tools.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the corpus is missing at {}: {e}", path.display()));
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut servers = Vec::new();
    for entry in entries {
        for (server, listed) in entry["tools"].as_object().unwrap() {
            let tools = listed["tools"].as_array().unwrap();
            let definitions = tools
                .iter()
                .map(|tool| toolkit_runtime::mcp::tool_definition(tool).unwrap())
                .collect();
            servers.push((server.clone(), definitions));
        }
    }
    servers
}

struct Offline(String);

impl ToolSource for Offline {
    fn name(&self) -> &str {
        &self.0
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async {
            Err(ToolSourceError::new(
                &self.0,
                Reason::unavailable("offline"),
            ))
        })
    }

    fn call<'a>(
        &'a self,
        _: &'a str,
        _: JsonObject,
        _: &'a toolkit_runtime::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async {
            Err(ToolSourceError::new(
                &self.0,
                Reason::unavailable("offline"),
            ))
        })
    }
}

#[test]
fn every_real_tool_is_stored_and_read_back_unchanged() {
    let servers = corpus();
    let all: Vec<ToolDefinition> = servers.iter().flat_map(|(_, d)| d.clone()).collect();
    assert_eq!(all.len(), 527);
    let stored = encode_catalog(&all);
    assert_eq!(decode_catalog(&stored).unwrap(), all);
    assert_eq!(encode_catalog(&decode_catalog(&stored).unwrap()), stored);
}

#[test]
fn every_real_schema_compiles_into_a_full_check() {
    let incomplete: Vec<String> = corpus()
        .iter()
        .flat_map(|(server, definitions)| {
            definitions
                .iter()
                .filter(|d| !InputCheck::new(d.input_schema()).is_complete())
                .map(move |d| format!("{server}/{}", d.name()))
        })
        .collect();
    assert!(
        incomplete.is_empty(),
        "held only to an object: {incomplete:?}"
    );
}

#[test]
fn seventy_real_servers_assemble_into_model_safe_names() {
    let members: Vec<Member> = corpus()
        .into_iter()
        .map(|(server, definitions)| Member::new(Arc::new(Offline(server)), definitions))
        .collect();
    match Assembly::new().toolkit(&members, |_, _| Decision::Allow) {
        Ok(toolkit) => {
            assert_eq!(toolkit.len(), 527);
            for definition in toolkit.definitions() {
                let name = definition.name();
                assert!(name.len() <= 64, "{name}");
                assert!(
                    name.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                    "{name}"
                );
            }
        }
        // Real servers may share a name after the charset rule; each clash is then reported.
        Err(AssemblyError::NameClash(clash)) => {
            for c in clash.clashes {
                for t in c.tools {
                    assert_eq!(tool_name(&t.source, &t.tool, 64), c.name);
                }
            }
        }
        Err(other) => panic!("{other}"),
    }
}
