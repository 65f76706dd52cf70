//! One test per check.

use serde_json::{Value, json};

use super::*;

fn findings(tools: Value) -> Vec<Finding> {
    audit(tools.as_array().unwrap(), &AuditOptions::default())
}

/// The (check, severity, pointer) of each finding of `check`.
fn of(findings: &[Finding], check: Check) -> Vec<(Severity, String)> {
    findings
        .iter()
        .filter(|f| f.check == check)
        .map(|f| (f.severity, f.pointer.clone()))
        .collect()
}

/// A tool that passes every check.
fn clean(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Does a thing.",
        "inputSchema": {
            "type": "object",
            "properties": {"q": {"type": "string", "description": "What to look for."}},
            "required": ["q"],
            "additionalProperties": false
        }
    })
}

#[test]
fn a_clean_tool_has_no_finding() {
    assert_eq!(findings(json!([clean("search"), clean("get_item")])), []);
}

#[test]
fn malformed_entries_are_reported_not_lost() {
    let found = findings(json!([
        3,
        {"description": "x", "inputSchema": {"type": "object"}},
        {"name": "", "inputSchema": {"type": "object"}},
        {"name": 7, "inputSchema": {"type": "object"}},
        {"name": "a", "description": "x"},
        {"name": "b", "description": "x", "inputSchema": []},
    ]));
    let malformed = of(&found, Check::MalformedTool);
    assert_eq!(malformed.len(), 6, "{found:#?}");
    assert!(malformed.iter().all(|(s, _)| *s == Severity::Error));
    assert_eq!(found[0].tool, "#/tools/0");
    assert_eq!(found[0].pointer, "#");
    let b = found.iter().find(|f| f.tool == "b").unwrap();
    assert_eq!(b.pointer, "#/inputSchema");
}

#[test]
fn duplicate_names_are_errors() {
    let found = findings(json!([clean("a"), clean("a")]));
    assert_eq!(
        of(&found, Check::DuplicateName),
        [(Severity::Error, "#/name".to_owned())]
    );
    assert_eq!(found[0].index, 1);
}

#[test]
fn names_outside_mcp_charset_or_length_are_warned() {
    let long = "x".repeat(129);
    let found = findings(json!([
        clean("get weather"),
        clean("ünï"),
        clean(&long),
        clean("a/b")
    ]));
    let names: Vec<&str> = found
        .iter()
        .filter(|f| f.check == Check::ToolName)
        .map(|f| f.tool.as_str())
        .collect();
    assert_eq!(names, ["get weather", "ünï", long.as_str(), "a/b"]);
    assert!(found[0].message.contains("\" \""), "{}", found[0].message);
    assert!(found[2].message.contains("129 characters"));
}

#[test]
fn names_model_apis_refuse_are_info() {
    let long = "y".repeat(65);
    let found = findings(json!([
        clean("files.read"),
        clean("1st"),
        clean(&long),
        clean("ok-name_1")
    ]));
    let names: Vec<(&str, Severity)> = found
        .iter()
        .filter(|f| f.check == Check::ModelName)
        .map(|f| (f.tool.as_str(), f.severity))
        .collect();
    assert_eq!(
        names,
        [
            ("files.read", Severity::Info),
            ("1st", Severity::Info),
            (long.as_str(), Severity::Info)
        ]
    );
}

#[test]
fn names_that_clash_once_renamed_are_warned() {
    let found = findings(json!([clean("files.read"), clean("files_read")]));
    let clash = found.iter().find(|f| f.check == Check::NameClash).unwrap();
    assert_eq!((clash.severity, clash.index), (Severity::Warning, 1));
    assert!(clash.message.contains("files.read"));
}

#[test]
fn missing_descriptions_are_warned_and_bare_parameters_listed() {
    let mut tool = clean("a");
    tool["description"] = json!("  ");
    tool["inputSchema"]["properties"]["n"] = json!({"type": "integer"});
    tool["inputSchema"]["properties"]["t"] = json!({"type": "integer", "title": "Count"});
    let found = findings(json!([tool]));
    assert_eq!(
        of(&found, Check::Description),
        [(Severity::Warning, "#".to_owned())]
    );
    let bare = found
        .iter()
        .find(|f| f.check == Check::ParameterDescriptions)
        .unwrap();
    assert_eq!(bare.severity, Severity::Info);
    assert!(
        bare.message.starts_with("1 of 3 parameters"),
        "{}",
        bare.message
    );
    assert!(bare.message.contains("\"n\""));
}

#[test]
fn an_input_root_that_is_no_object_is_an_error() {
    let roots = [
        json!({"anyOf": [{"type": "object"}, {"type": "object"}]}),
        json!({"oneOf": [{"type": "object"}]}),
        json!({"type": "string"}),
        json!({"type": ["object", "null"]}),
        json!({"properties": {}}),
        json!({}),
    ];
    for root in roots {
        let mut tool = clean("a");
        tool["inputSchema"] = root.clone();
        let found = findings(json!([tool]));
        assert_eq!(
            of(&found, Check::ObjectRootedInput),
            [(Severity::Error, "#/inputSchema".to_owned())],
            "{root}"
        );
    }
    let mut tool = clean("a");
    tool["inputSchema"] = json!({"anyOf": [{"type": "object"}]});
    let found = findings(json!([tool]));
    assert!(
        found[0].message.contains("bare `anyOf`"),
        "{}",
        found[0].message
    );
}

#[test]
fn open_object_levels_are_reported_at_the_chosen_severity() {
    let mut tool = clean("a");
    tool["inputSchema"]["properties"]["filter"] = json!({
        "type": "object",
        "description": "A filter.",
        "properties": {"tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}
    });
    tool["inputSchema"]["properties"]["labels"] = json!({
        "type": "object",
        "description": "Labels.",
        "additionalProperties": {"type": "string"}
    });
    let found = findings(json!([tool.clone()]));
    assert_eq!(
        of(&found, Check::ClosedInput),
        [
            (Severity::Info, "#/inputSchema/properties/filter".to_owned()),
            (
                Severity::Info,
                "#/inputSchema/properties/filter/properties/tags/items".to_owned()
            ),
            (Severity::Info, "#/inputSchema/properties/labels".to_owned()),
        ]
    );
    assert!(found[2].message.contains("record"));
    let strict = AuditOptions::default().closed_input(Severity::Warning);
    let found = audit(&[tool.clone()], &strict);
    assert!(
        of(&found, Check::ClosedInput)
            .iter()
            .all(|(s, _)| *s == Severity::Warning)
    );
    let off = AuditOptions::default().closed_input(None);
    assert!(of(&audit(&[tool], &off), Check::ClosedInput).is_empty());
}

#[test]
fn required_names_a_level_does_not_declare_are_warned() {
    let mut tool = clean("a");
    tool["inputSchema"]["required"] = json!(["q", "qq"]);
    tool["inputSchema"]["properties"]["p"] = json!({
        "description": "p", "allOf": [{"type": "object", "required": ["x"]}, {"properties": {"x": {}}}]
    });
    let found = findings(json!([tool]));
    assert_eq!(
        of(&found, Check::RequiredUnknown),
        [(Severity::Warning, "#/inputSchema/required".to_owned())]
    );
    assert!(found[0].message.contains("\"qq\""));
}

#[test]
fn an_input_schema_the_runtime_cannot_compile_is_warned() {
    let mut tool = clean("a");
    tool["inputSchema"]["properties"]["q"]["$ref"] = json!("#/$defs/nowhere");
    let found = findings(json!([tool]));
    assert_eq!(
        of(&found, Check::InputSchema),
        [(Severity::Warning, "#/inputSchema".to_owned())]
    );
}

#[test]
fn output_roots_that_are_no_object_are_errors_with_the_fix() {
    let mut tool = clean("a");
    tool["outputSchema"] =
        json!({"anyOf": [{"type": "object", "properties": {"a": {}}}, {"properties": {"b": {}}}]});
    let found = findings(json!([tool.clone()]));
    assert_eq!(
        of(&found, Check::ObjectRootedOutput),
        [(Severity::Error, "#/outputSchema".to_owned())]
    );
    assert!(found[0].message.contains("add `type: \"object\"`"));
    tool["outputSchema"] = json!({"oneOf": [{"type": "object"}, {"type": "string"}]});
    let found = findings(json!([tool.clone()]));
    assert!(
        found[0].message.contains("object envelope"),
        "{}",
        found[0].message
    );
    tool["outputSchema"] = json!({"type": "array"});
    assert_eq!(
        of(&findings(json!([tool.clone()])), Check::ObjectRootedOutput).len(),
        1
    );
    tool["outputSchema"] = json!({"type": "object", "anyOf": []});
    assert!(findings(json!([tool])).is_empty());
}

#[test]
fn invalid_header_marks_are_errors_and_doubtful_ones_warnings() {
    let mut tool = clean("a");
    tool["inputSchema"]["properties"] = json!({
        "region": {"type": "string", "description": "r", "x-mcp-header": "Region"},
        "zone": {"type": "string", "description": "z", "x-mcp-header": "region"},
        "tags": {"type": "array", "description": "t", "items": {"type": "string", "x-mcp-header": "Tag"}},
        "bad": {"type": "string", "description": "b", "x-mcp-header": "Bad Name"},
        "ratio": {"type": "number", "description": "n", "x-mcp-header": "Ratio"},
        "any": {"description": "a", "x-mcp-header": "Any"},
    });
    tool["inputSchema"]["required"] = json!([]);
    let found = findings(json!([tool]));
    assert_eq!(
        of(&found, Check::McpHeader),
        [
            (
                Severity::Error,
                "#/inputSchema/properties/tags/items/x-mcp-header".to_owned()
            ),
            (
                Severity::Error,
                "#/inputSchema/properties/bad/x-mcp-header".to_owned()
            ),
            (
                Severity::Error,
                "#/inputSchema/properties/zone/x-mcp-header".to_owned()
            ),
            (
                Severity::Warning,
                "#/inputSchema/properties/ratio/x-mcp-header".to_owned()
            ),
            (
                Severity::Warning,
                "#/inputSchema/properties/any/x-mcp-header".to_owned()
            ),
        ],
        "{found:#?}"
    );
}

#[test]
fn tasks_and_hints_are_checked() {
    let mut tool = clean("a");
    tool["execution"] = json!({"taskSupport": "required"});
    tool["annotations"] =
        json!({"readOnlyHint": true, "destructiveHint": true, "openWorldHint": "yes"});
    let found = findings(json!([tool]));
    assert_eq!(
        of(&found, Check::TaskRequired),
        [(Severity::Warning, "#/execution/taskSupport".to_owned())]
    );
    assert_eq!(
        of(&found, Check::Hints),
        [
            (Severity::Warning, "#/annotations/openWorldHint".to_owned()),
            (Severity::Info, "#/annotations/destructiveHint".to_owned()),
        ]
    );
}

#[test]
fn listings_in_every_shape_are_read() {
    let tool = clean("a");
    for listing in [
        json!([tool]),
        json!({"tools": [tool]}),
        json!({"server": "s", "protocolVersion": "2025-06-18", "tools": [tool]}),
    ] {
        assert_eq!(tools_of(&listing).map(<[Value]>::len), Some(1));
    }
    assert!(tools_of(&json!({"tool": []})).is_none());
    assert!(tools_of(&json!("x")).is_none());
}

#[test]
fn definitions_are_audited_as_the_tools_they_serve_as() {
    let schema = json!({"anyOf": [{"type": "object"}]});
    let definition = ToolDefinition::new("a.b", schema.as_object().cloned().unwrap()).unwrap();
    let found = audit_definitions(&[definition], &AuditOptions::default());
    let checks: Vec<Check> = found.iter().map(|f| f.check).collect();
    assert_eq!(
        checks,
        [
            Check::ModelName,
            Check::Description,
            Check::ObjectRootedInput,
            Check::ClosedInput
        ]
    );
}

#[test]
fn the_report_counts_by_severity() {
    let found = findings(json!([clean("a"), {"name": "b", "inputSchema": {"type": "object"}}]));
    let summary = Summary::of(2, &found);
    assert_eq!((summary.clean, summary.warnings), (1, 1));
    assert_eq!(
        summary.worst(),
        Some(Severity::Info).max(Some(Severity::Warning))
    );
    let value = to_json(2, &found);
    assert_eq!(value["summary"]["tools"], 2);
    assert_eq!(value["findings"][0]["check"], "description");
    let text = text(2, &found);
    assert!(text.starts_with("warning[description] b #: "), "{text}");
    assert!(
        text.ends_with("2 tools audited, 1 clean: 0 errors, 1 warnings, 1 info\n"),
        "{text}"
    );
}

mod arbitrary {
    //! Arbitrary listings never make the audit panic, and every finding points into its tool.

    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::super::*;

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-zA-Z0-9 ./:-]{0,8}".prop_map(Value::String),
        ]
    }

    fn schema() -> impl Strategy<Value = Value> {
        let keys = prop_oneof![
            Just("type"),
            Just("properties"),
            Just("required"),
            Just("items"),
            Just("anyOf"),
            Just("oneOf"),
            Just("allOf"),
            Just("additionalProperties"),
            Just("patternProperties"),
            Just("x-mcp-header"),
            Just("$ref"),
            Just("$defs"),
            Just("description"),
            Just("enum"),
        ];
        scalar().prop_recursive(5, 96, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner.clone()), 0..6).prop_map(|entries| {
                    let map: Map<String, Value> = entries
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect();
                    Value::Object(map)
                }),
                prop::collection::vec(("[a-z.-]{0,4}", inner), 0..4)
                    .prop_map(|entries| { Value::Object(entries.into_iter().collect()) }),
            ]
        })
    }

    fn tool() -> impl Strategy<Value = Value> {
        (
            prop_oneof!["[a-zA-Z0-9_. /ü-]{0,140}".prop_map(Value::String), scalar()],
            prop::option::of(scalar()),
            schema(),
            prop::option::of(schema()),
            prop::option::of(schema()),
        )
            .prop_map(|(name, description, input, output, annotations)| {
                let mut tool = json!({"name": name, "inputSchema": input});
                if let Some(description) = description {
                    tool["description"] = description;
                }
                if let Some(output) = output {
                    tool["outputSchema"] = output;
                }
                if let Some(annotations) = annotations {
                    tool["annotations"] = annotations;
                }
                tool
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_audit_never_panics(tools in prop::collection::vec(prop_oneof![tool(), schema()], 0..6)) {
            let findings = audit(&tools, &AuditOptions::default());
            for finding in &findings {
                prop_assert!(finding.index < tools.len());
                prop_assert!(finding.pointer.starts_with('#'));
            }
            let summary = Summary::of(tools.len(), &findings);
            prop_assert!(summary.clean <= tools.len());
        }
    }
}
