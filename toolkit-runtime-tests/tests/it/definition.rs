//! Definitions as catalog data (seed 003 and the `tool-definition` tests of seed 000).

use serde_json::{Value, json};
use toolkit_runtime::{
    ToolDefinition, definition::Annotations, definition::decode_catalog, definition::encode_catalog,
};

use crate::support::{definition, object};

#[test]
fn the_json_form_is_the_catalog_format_with_silent_hints_left_out() {
    let definition = definition(
        "list_pets",
        json!({ "type": "object", "properties": { "limit": { "type": "integer" } } }),
    )
    .with_description("Lists pets.")
    .with_annotations(Annotations {
        read_only: Some(true),
        ..Annotations::default()
    });
    assert_eq!(
        serde_json::to_value(&definition).unwrap(),
        json!({
            "name": "list_pets",
            "description": "Lists pets.",
            "inputSchema": { "type": "object", "properties": { "limit": { "type": "integer" } } },
            "annotations": { "readOnly": true }
        })
    );
}

#[test]
fn every_hint_round_trips_under_its_catalog_name() {
    let json = json!({
        "name": "t",
        "inputSchema": {},
        "annotations": {
            "title": "T", "readOnly": false, "destructive": false, "idempotent": true, "openWorld": false
        }
    });
    let definition: ToolDefinition = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(definition.annotations.idempotent, Some(true));
    assert_eq!(serde_json::to_value(&definition).unwrap(), json);
}

#[test]
fn encoding_is_byte_stable_through_a_round_trip() {
    let catalog = r#"[{"name":"b","inputSchema":{"type":"object","properties":{"z":{},"a":{}}},"annotations":{"openWorld":false,"readOnly":true}},{"name":"a","description":"d","inputSchema":{}}]"#;
    let once = encode_catalog(&decode_catalog(catalog).unwrap());
    let twice = encode_catalog(&decode_catalog(&once).unwrap());
    assert_eq!(once, twice);
    assert_eq!(once, encode_catalog(&decode_catalog(catalog).unwrap()));
}

#[test]
fn a_definition_without_annotations_reads_as_silent() {
    let definition: ToolDefinition =
        serde_json::from_value(json!({ "name": "t", "inputSchema": {} })).unwrap();
    assert_eq!(definition.annotations, Annotations::default());
}

#[test]
fn hints_have_the_documented_defaults() {
    let hints = Annotations::default().hints();
    assert!(!hints.read_only);
    assert!(hints.destructive);
    assert!(!hints.idempotent);
    assert!(hints.open_world);
    let writer = Annotations {
        destructive: Some(false),
        idempotent: Some(true),
        ..Annotations::default()
    };
    assert!(!writer.hints().destructive);
    assert!(writer.hints().idempotent);
    let reader = Annotations {
        read_only: Some(true),
        idempotent: Some(true),
        ..Annotations::default()
    };
    assert!(!reader.hints().destructive);
    assert!(
        !reader.hints().idempotent,
        "only a writer can be idempotent"
    );
}

#[test]
fn a_catalog_names_every_entry_that_is_no_definition() {
    let catalog = json!([
        { "name": "ok", "inputSchema": {} },
        { "name": "", "inputSchema": {} },
        { "name": "listed", "inputSchema": "not a schema" },
        { "name": "arrays", "inputSchema": [] },
        { "inputSchema": {} },
        42
    ]);
    let error = decode_catalog(&catalog.to_string()).unwrap_err();
    let problems = error.problems();
    assert_eq!(problems.len(), 5, "{problems:#?}");
    assert!(problems[0].starts_with("catalog entry 1:"));
    assert!(problems[0].contains("name must not be empty"));
    assert!(problems[1].starts_with("catalog entry 2 (\"listed\"):"));
    assert!(problems[1].contains("inputSchema must be a JSON object"));
    assert!(problems[2].starts_with("catalog entry 3 (\"arrays\"):"));
    assert!(problems[3].starts_with("catalog entry 4:") && problems[3].contains("name"));
    assert!(problems[4].starts_with("catalog entry 5:"));
}

#[test]
fn an_output_schema_is_stored_and_read_back_and_must_be_an_object() {
    let catalog = json!([{
        "name": "get_weather",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}}
    }]);
    let definitions = decode_catalog(&catalog.to_string()).unwrap();
    assert_eq!(
        definitions[0].output_schema(),
        catalog[0]["outputSchema"].as_object()
    );
    let stored: Value = serde_json::from_str(&encode_catalog(&definitions)).unwrap();
    assert_eq!(stored[0]["outputSchema"], catalog[0]["outputSchema"]);
    assert_eq!(decode_catalog(&stored.to_string()).unwrap(), definitions);
    // A null one is none; anything else that is no object is refused, as an input schema is.
    let null = json!([{"name": "a", "inputSchema": {}, "outputSchema": null}]);
    assert!(
        decode_catalog(&null.to_string()).unwrap()[0]
            .output_schema()
            .is_none()
    );
    let bad = json!([{"name": "a", "inputSchema": {}, "outputSchema": "text"}]);
    let error = decode_catalog(&bad.to_string()).unwrap_err();
    assert!(
        error.problems()[0].contains("outputSchema, when there is one, must be a JSON object"),
        "{error}"
    );
}

#[test]
fn garbage_is_one_clear_error() {
    for garbage in [
        "",
        "{",
        "not json",
        "{\"name\":\"x\"}",
        "\u{0}\u{1}",
        "[1,2,",
    ] {
        let error = decode_catalog(garbage).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the catalog is not a JSON array"),
            "{garbage:?}: {error}"
        );
    }
}

#[test]
fn ten_thousand_levels_of_nesting_are_refused_without_overflow() {
    let depth = 10_000;
    let schema = format!(
        "{}{}",
        "{\"a\":".repeat(depth),
        "{}".to_owned() + &"}".repeat(depth)
    );
    let catalog = format!("[{{\"name\":\"deep\",\"inputSchema\":{schema}}}]");
    let error = decode_catalog(&catalog).unwrap_err();
    assert!(error.to_string().contains("recursion limit"), "{error}");
}

#[test]
fn ten_megabyte_strings_are_read_whole() {
    let description = "d".repeat(10 * 1024 * 1024);
    let catalog = json!([{ "name": "big", "description": description, "inputSchema": {} }]);
    let definitions = decode_catalog(&catalog.to_string()).unwrap();
    assert_eq!(
        definitions[0].description.as_ref().map(String::len),
        Some(10 * 1024 * 1024)
    );
}

#[test]
fn a_new_definition_refuses_an_empty_name() {
    assert!(ToolDefinition::new("", object(json!({}))).is_err());
    let definition = ToolDefinition::new("t", object(json!({ "type": "object" }))).unwrap();
    assert_eq!(definition.input_schema()["type"], Value::from("object"));
}

/// An MCP server's tool with everything a listing may say of it (server-everything's and
/// server-filesystem's form).
fn listed_tool() -> Value {
    json!({
        "name": "read_file",
        "title": "Read File",
        "description": "Reads a file.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"content": {"type": "string"}}},
        "annotations": {"title": "Reader", "readOnlyHint": true, "openWorldHint": false},
        "execution": {"taskSupport": "forbidden"},
        "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        "_meta": {"example.com/owner": "files", "count": 12_345_678_901_234_567_890_u64}
    })
}

#[test]
fn an_mcp_tool_keeps_its_title_execution_icons_and_meta_where_it_put_them() {
    let definition = toolkit_runtime::mcp::tool_definition(&listed_tool()).unwrap();
    assert_eq!(definition.title.as_deref(), Some("Read File"));
    assert_eq!(definition.annotations.title.as_deref(), Some("Reader"));
    assert_eq!(
        definition.execution(),
        Some(&object(json!({"taskSupport": "forbidden"})))
    );
    assert_eq!(definition.icons().unwrap().len(), 1);
    assert_eq!(definition.meta().unwrap()["example.com/owner"], "files");
    // A catalog holds all of it, the same bytes after a round trip, a big number's digits kept.
    let encoded = encode_catalog(std::slice::from_ref(&definition));
    let decoded = decode_catalog(&encoded).unwrap();
    assert_eq!(decoded, [definition]);
    assert_eq!(encode_catalog(&decoded), encoded);
    assert!(encoded.contains("12345678901234567890"), "{encoded}");
    assert!(encoded.contains(r#""title":"Read File""#), "{encoded}");
}

#[test]
fn an_mcp_tool_whose_title_is_no_string_is_left_out_saying_so() {
    for (key, title) in [
        ("title", json!(7)),
        ("annotations", json!({"title": ["x"]})),
    ] {
        let mut tool = listed_tool();
        tool[key] = title;
        let problem = toolkit_runtime::mcp::tool_definition(&tool).unwrap_err();
        assert!(problem.contains("is no string"), "{problem}");
    }
}

#[test]
fn a_catalog_entry_whose_execution_icons_or_meta_is_not_of_its_kind_is_named() {
    for (key, value, said) in [
        (
            "execution",
            json!("forbidden"),
            "a tool's execution must be a JSON object",
        ),
        ("icons", json!({}), "a tool's icons must be a JSON array"),
        ("_meta", json!([]), "a tool's _meta must be a JSON object"),
    ] {
        let mut entry = json!({"name": "t", "inputSchema": {}});
        entry[key] = value;
        let error = decode_catalog(&json!([entry]).to_string()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("catalog entry 0 (\"t\"): {said}")
        );
    }
}
