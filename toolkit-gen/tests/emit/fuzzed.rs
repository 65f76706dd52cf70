//! What `cargo fuzz run emit` found, kept as tests.

use serde_json::json;
use toolkit_gen::emit::{EmitOptions, SourceOptions, input_types, mcp_source, module};
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

/// Text-direction controls (a description written to read other than it compiles) are refused by
/// rustc in comments and literals: the generated code must hold none, raw (found in review).
#[test]
fn text_direction_controls_never_reach_the_code_raw() {
    let schema = json!({
        "type": "object",
        "properties": {
            "file\u{202E}txt": {"type": "string", "description": "safe\u{202E}exe.txt"},
            "mode": {"enum": ["a\u{2066}b", "c"]}
        }
    });
    let definition = ToolDefinition::new(
        "open\u{2067}",
        schema.as_object().cloned().unwrap_or_default(),
    )
    .map(|d| d.with_description("opens\u{202A} a file"));
    let definitions: Vec<ToolDefinition> = definition.into_iter().collect();
    let emitted = mcp_source(
        "t.json",
        &definitions,
        &SourceOptions::new("t"),
        &EmitOptions::default(),
    );
    syn::parse_file(&emitted.code).unwrap_or_else(|e| panic!("{e}\n{}", emitted.code));
    let raw: Vec<char> = emitted
        .code
        .chars()
        .filter(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
        .collect();
    assert!(raw.is_empty(), "{raw:?} in\n{}", emitted.code);
    assert!(
        emitted.code.contains("\\u202e"),
        "the embedded JSON escapes it"
    );
}
