//! Arbitrary schemas — made of the keywords the emitter reads, nested, with references that land
//! anywhere or nowhere — never make it panic, and what it writes always parses.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolkit_gen::emit::{EmitOptions, Strictness, input_types};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!(null)),
        Just(json!({})),
        Just(json!({ "type": "string" })),
        Just(json!({ "type": "integer", "format": "uint32" })),
        Just(json!({ "type": ["number", "null"] })),
        Just(json!({ "type": "frob" })),
        Just(json!({ "type": "null" })),
        Just(json!({ "not": {} })),
        Just(json!({ "required": ["a"] })),
        Just(json!({ "format": "ipv4" })),
        prop::collection::vec(
            prop_oneof![
                "[a-zA-Z+\\-/ <>.]{0,6}".prop_map(Value::String),
                Just(Value::Null),
                any::<i32>().prop_map(Value::from),
            ],
            0..5
        )
        .prop_map(|values| json!({ "enum": values })),
        "[a-z]{0,3}".prop_map(|s| json!({ "const": s })),
        prop_oneof![
            Just("#"),
            Just("#/$defs/A"),
            Just("#/properties/a"),
            Just("#/properties/a/items"),
            Just("#/nowhere"),
            Just("other.json#/x"),
        ]
        .prop_map(|r| json!({ "$ref": r })),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        let names = prop_oneof![
            Just("a".to_owned()),
            Just("type".to_owned()),
            Just("self".to_owned()),
            Just("".to_owned()),
            Just("A-b".to_owned()),
            "[a-zA-Z0-9_<>+\\-]{1,5}",
        ];
        prop_oneof![
            (
                prop::collection::vec((names.clone(), inner.clone()), 0..5),
                prop::collection::vec(names, 0..3),
                prop_oneof![
                    Just(None),
                    Just(Some(json!(false))),
                    Just(Some(json!(true)))
                ],
            )
                .prop_map(|(properties, required, additional)| {
                    let mut map = Map::new();
                    map.insert("type".to_owned(), json!("object"));
                    map.insert(
                        "properties".to_owned(),
                        Value::Object(properties.into_iter().collect()),
                    );
                    map.insert("required".to_owned(), json!(required));
                    if let Some(additional) = additional {
                        map.insert("additionalProperties".to_owned(), additional);
                    }
                    Value::Object(map)
                }),
            inner
                .clone()
                .prop_map(|items| json!({ "type": "array", "items": items })),
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|items| json!({ "prefixItems": items })),
            inner
                .clone()
                .prop_map(|values| json!({ "type": "object", "additionalProperties": values })),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|m| json!({ "oneOf": m })),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|m| json!({ "anyOf": m })),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|m| json!({ "allOf": m })),
            (inner.clone(), inner).prop_map(|(root, a)| {
                let mut root = match root {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                root.insert("$defs".to_owned(), json!({ "A": a }));
                Value::Object(root)
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_schema_emits_code_that_parses(schema in schema(), follow in any::<bool>()) {
        let options = EmitOptions {
            strictness: if follow { Strictness::FollowSchema } else { Strictness::Strict },
            ..EmitOptions::default()
        };
        let emitted = input_types("arbitrary tool", &schema, &options);
        let parsed = syn::parse_file(&emitted.code);
        prop_assert!(parsed.is_ok(), "{schema}\n{}", emitted.code);
        prop_assert!(
            emitted.untyped.iter().all(|u| !u.reason.contains("bug")),
            "{schema}: {:?}", emitted.untyped
        );
        prop_assert_eq!(emitted.root_type.as_str(), "ArbitraryToolInput");
        // Same input, same bytes.
        prop_assert_eq!(input_types("arbitrary tool", &schema, &options), emitted);
    }
}
