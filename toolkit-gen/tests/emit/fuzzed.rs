//! What `cargo fuzz run emit` found, kept as tests.

use serde_json::json;
use toolkit_gen::emit::{EmitOptions, input_types, module};
use toolkit_runtime::ToolDefinition;

/// A lone `\r` in a description stayed inside a `///` line, where rustc refuses a bare CR
/// (`crash-7136156812e420bda77621b1eda567a2ce2105f3`).
#[test]
fn a_lone_carriage_return_in_a_description_is_a_line_break() {
    let schema = json!({
        "type": "object",
        "description": "first\rsecond\r\nthird",
        "properties": {
            "a": {"type": "string", "description": "one\rtwo"},
            "b": {"enum": ["x", "y"], "title": "t\r"}
        }
    });
    let emitted = input_types("t", &schema, &EmitOptions::default());
    syn::parse_file(&emitted.code).unwrap_or_else(|e| panic!("{e}\n{}", emitted.code));
    assert!(!emitted.code.contains('\r'));
    assert!(
        emitted.code.contains("/// one\n    /// two\n"),
        "{}",
        emitted.code
    );

    let definition = ToolDefinition::new("t", schema.as_object().cloned().unwrap_or_default())
        .map(|d| d.with_description("tool\rdescription"));
    let definitions: Vec<ToolDefinition> = definition.into_iter().collect();
    let emitted = module("t.json", &definitions, &EmitOptions::default());
    syn::parse_file(&emitted.code).unwrap_or_else(|e| panic!("{e}\n{}", emitted.code));
    assert!(!emitted.code.contains('\r'));
}
