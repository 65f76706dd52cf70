//! Checking a model's input before the source sees it, and the strict-input report.

use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::{Toolkit, ToolkitOptions, input::InputCheck};

use crate::support::{Scripted, definition, object};

fn search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": { "type": "string" },
            "filter": {
                "type": "object",
                "properties": { "kind": { "const": "tag" }, "tag": { "type": "string" } },
                "additionalProperties": false
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

fn check(schema: Value, input: Value) -> Result<(), String> {
    InputCheck::new(&object(schema))
        .check(&input)
        .map_err(|e| e.report("t"))
}

#[test]
fn the_report_names_every_problem_and_what_each_level_accepts() {
    let report = check(
        search_schema(),
        json!({ "extra": 1, "filter": { "kind": "tag", "tag": "t", "text": "sneaky" } }),
    )
    .unwrap_err();
    assert_eq!(
        report,
        "Invalid parameters for tool 't':\n\
         - unknown property \"extra\" at the root\n\
         - missing required property \"query\" at the root\n\
         - unknown property \"text\" at /filter\n\
         Accepted params at the root: query, filter.\n\
         Accepted params at /filter: kind, tag."
            .replace("\n         ", "\n")
    );
}

#[test]
fn a_mistyped_value_is_named_with_its_path_and_no_accepted_line() {
    let report = check(
        search_schema(),
        json!({ "query": 5, "filter": { "tag": [] } }),
    )
    .unwrap_err();
    assert!(
        report.contains("expected string, got an integer at /query"),
        "{report}"
    );
    assert!(
        report.contains("expected string, got an array at /filter/tag"),
        "{report}"
    );
    assert!(!report.contains("Accepted params"), "{report}");
}

#[test]
fn a_tool_with_no_params_says_so() {
    let schema = json!({ "type": "object", "additionalProperties": false });
    let report = check(schema, json!({ "x": 1 })).unwrap_err();
    assert!(report.ends_with("This tool accepts no params."), "{report}");
}

#[test]
fn a_level_reached_through_a_ref_lists_the_referenced_properties() {
    let schema = json!({
        "type": "object",
        "properties": { "pet": { "$ref": "#/$defs/Pet" } },
        "$defs": {
            "Pet": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "additionalProperties": false
            }
        }
    });
    let report = check(schema, json!({ "pet": { "name": "Rex", "age": 3 } })).unwrap_err();
    assert!(
        report.contains("unknown property \"age\" at /pet"),
        "{report}"
    );
    assert!(
        report.contains("Accepted params at /pet: name."),
        "{report}"
    );
}

#[test]
fn pattern_properties_are_named_as_patterns() {
    let schema = json!({
        "type": "object",
        "properties": { "id": {} },
        "patternProperties": { "^x-": {} },
        "additionalProperties": false
    });
    assert!(check(schema.clone(), json!({ "x-trace": 1 })).is_ok());
    let report = check(schema, json!({ "y": 1 })).unwrap_err();
    assert!(
        report.contains("Accepted params at the root: id; keys matching ^x-."),
        "{report}"
    );
}

#[test]
fn an_open_schema_takes_unknown_properties() {
    let schema = json!({ "type": "object", "properties": { "a": {} } });
    assert!(check(schema, json!({ "b": 1 })).is_ok());
}

#[test]
fn unevaluated_properties_close_a_schema_too() {
    let schema = json!({
        "type": "object",
        "allOf": [{ "properties": { "a": {} } }],
        "unevaluatedProperties": false
    });
    assert!(check(schema.clone(), json!({ "a": 1 })).is_ok());
    let report = check(schema, json!({ "a": 1, "b": 2 })).unwrap_err();
    assert!(
        report.contains("unknown property \"b\" at the root"),
        "{report}"
    );
    assert!(
        report.contains("Accepted params at the root: a."),
        "{report}"
    );
}

#[test]
fn pattern_and_format_are_not_checked() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "code": { "type": "string", "pattern": "^[0-9]+$" },
            "when": { "type": "string", "format": "date-time" },
            "mail": { "type": "string", "format": "email" }
        }
    });
    assert!(
        check(
            schema,
            json!({ "code": "abc", "when": "yesterday", "mail": "nobody" })
        )
        .is_ok()
    );
}

#[test]
fn draft_07_and_2020_12_schemas_are_both_checked() {
    let draft7 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": { "pair": { "type": "array", "items": [{ "type": "string" }, { "type": "integer" }] } }
    });
    assert!(check(draft7.clone(), json!({ "pair": ["a", 1] })).is_ok());
    assert!(check(draft7, json!({ "pair": [1, "a"] })).is_err());
    let modern = json!({
        "type": "object",
        "properties": { "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }] } }
    });
    assert!(check(modern.clone(), json!({ "pair": ["a", 1] })).is_ok());
    assert!(check(modern, json!({ "pair": [1, "a"] })).is_err());
}

#[test]
fn a_schema_that_cannot_be_compiled_holds_the_input_only_to_being_an_object() {
    for schema in [
        json!({ "type": "object", "properties": { "a": { "$ref": "https://example.com/other.json" } } }),
        json!({ "type": "no-such-type" }),
        json!({ "type": "object", "minLength": "three" }),
    ] {
        let input_check = InputCheck::new(&object(schema.clone()));
        assert!(!input_check.is_complete(), "{schema}");
        assert!(input_check.check(&json!({ "a": 1 })).is_ok());
        assert!(input_check.check(&json!([1])).is_err());
    }
}

#[test]
fn a_cyclic_schema_checks_nested_input() {
    let schema = json!({
        "type": "object",
        "properties": { "tree": { "$ref": "#/$defs/Node" } },
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": { "type": "integer" },
                    "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } }
                },
                "additionalProperties": false
            }
        }
    });
    let good = json!({ "tree": { "value": 1, "children": [{ "value": 2, "children": [] }] } });
    assert!(check(schema.clone(), good).is_ok());
    let bad = json!({ "tree": { "value": 1, "children": [{ "value": "two", "x": 0 }] } });
    let report = check(schema, bad).unwrap_err();
    assert!(report.contains("at /tree/children/0/value"), "{report}");
    assert!(
        report.contains("Accepted params at /tree/children/0: value, children."),
        "{report}"
    );
}

#[test]
fn non_object_inputs_are_refused_with_a_clear_error() {
    let schema = json!({ "type": "object" });
    for (input, kind) in [
        (json!(null), "null"),
        (json!(true), "a boolean"),
        (json!(3), "an integer"),
        (json!(3.5), "a number"),
        (json!("text"), "a string"),
        (json!([1]), "an array"),
    ] {
        let report = check(schema.clone(), input).unwrap_err();
        assert!(
            report.contains(&format!("must be a JSON object, not {kind}")),
            "{report}"
        );
    }
}

#[test]
fn ten_thousand_levels_of_input_are_refused_without_overflow() {
    // Built by hand: `json!` would serialize (and so recurse into) the value it nests.
    let mut deep = json!({});
    for _ in 0..10_000 {
        let mut level = serde_json::Map::new();
        level.insert("a".to_owned(), deep);
        deep = Value::Object(level);
    }
    let input_check = InputCheck::new(&object(json!({ "type": "object" })));
    let report = input_check.check(&deep).unwrap_err().to_string();
    assert!(report.contains("nested deeper than 128 levels"), "{report}");
    // Dropping a deep value recursively could overflow a test thread's stack: take it apart.
    let mut stack = vec![deep];
    while let Some(mut value) = stack.pop() {
        if let Some(object) = value.as_object_mut() {
            stack.extend(std::mem::take(object).into_iter().map(|(_, v)| v));
        }
    }
}

#[test]
fn a_ten_megabyte_value_is_echoed_cut() {
    let schema = json!({
        "type": "object",
        "properties": { "choice": { "enum": ["a", "b"] }, "n": { "type": "integer" } },
        "additionalProperties": false
    });
    let huge = "x".repeat(10 * 1024 * 1024);
    let report = check(
        schema,
        json!({ "choice": huge.clone(), "n": huge.clone(), huge.clone(): 1 }),
    )
    .unwrap_err();
    assert!(report.len() < 2_000, "the report is {} bytes", report.len());
    assert!(report.contains('…'));
}

#[tokio::test]
async fn an_input_the_parameters_do_not_allow_never_reaches_the_source() {
    let source = Scripted::new("s");
    let strict = definition("echo", search_schema());
    let toolkit = Toolkit::from_source(
        Arc::clone(&source) as _,
        [strict],
        &ToolkitOptions::default(),
    )
    .unwrap();
    let failure = toolkit
        .call("echo", json!({ "query": "q", "x": 1 }))
        .await
        .unwrap_err();
    assert_eq!(failure.code, "InvalidInputError");
    assert!(!failure.retryable);
    assert!(
        failure
            .message
            .starts_with("Invalid parameters for tool 'echo':")
    );
    assert_eq!(source.calls(), 0);
    assert!(toolkit.call("echo", json!({ "query": "q" })).await.is_ok());
    assert_eq!(source.calls(), 1);
}

#[test]
fn draft_04_boolean_bounds_are_read_as_the_numbers_they_mean() {
    let schema = json!({
        "type": "object",
        "properties": {
            "page": { "type": "integer", "minimum": 0, "exclusiveMinimum": true },
            "ratio": { "type": "number", "maximum": 1, "exclusiveMaximum": false },
            "exclusiveMinimum": { "type": "string" }
        }
    });
    let input_check = InputCheck::new(&object(schema));
    assert!(input_check.is_complete());
    assert!(
        input_check
            .check(&json!({ "page": 1, "ratio": 1, "exclusiveMinimum": "x" }))
            .is_ok()
    );
    assert!(input_check.check(&json!({ "page": 0 })).is_err());
    assert!(input_check.check(&json!({ "ratio": 1.5 })).is_err());
    assert!(
        input_check
            .check(&json!({ "exclusiveMinimum": 1 }))
            .is_err()
    );
}
