//! Property tests over the compiled goldens: values drawn from each fixture tool's own schema
//! that the runtime's input check accepts deserialize into the tool's generated input type — and
//! into its answer type, where the same schema is a tool's `outputSchema` (lenient structs,
//! enums with a catch-all) — and serialize back to the same JSON (numbers compared as numbers).

use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::{Map, Value};
use toolkit_runtime::input::InputCheck;

use crate::common::forms;

/// The strict golden, compiled here too.
#[allow(dead_code, deprecated)]
mod strict {
    include!("golden/forms.rs");
}

/// The answers golden (each fixture schema as an answer's), compiled here.
#[allow(dead_code, deprecated)]
mod answers {
    include!("golden/forms_answers.rs");
}

/// Values of `schema` (references resolved in `root`), `depth` levels at most.
fn values(schema: &Value, root: &Value, depth: u32) -> BoxedStrategy<Value> {
    let Some(map) = schema.as_object() else {
        return Just(Value::Null).boxed();
    };
    // `{}` or a bare nullable object beside a reference is drawn as `null` (what else it allows
    // is kept by an `Other` variant, read in `roundtrip.rs`; beside a reference that requires
    // nothing, Microsoft Graph's nullable reference, it is read as "or null").
    let bare_nullable_object =
        map.len() == 1 && map.get("type") == Some(&serde_json::json!(["object", "null"]));
    if depth == 0 || map.is_empty() || bare_nullable_object {
        return Just(Value::Null).boxed();
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        return values(target, root, depth - 1);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(members)) = map.get(key) {
            let members: Vec<BoxedStrategy<Value>> = members
                .iter()
                .map(|member| {
                    // A member that only constrains takes its parent's shape.
                    let mut merged = map.clone();
                    merged.remove(key);
                    if let Some(member) = member.as_object() {
                        for (k, v) in member {
                            merged.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                    values(&Value::Object(merged), root, depth - 1)
                })
                .collect();
            if !members.is_empty() {
                return Union::new(members).boxed();
            }
        }
    }
    if let Some(constant) = map.get("const") {
        return Just(constant.clone()).boxed();
    }
    if let Some(Value::Array(options)) = map.get("enum")
        && !options.is_empty()
    {
        return proptest::sample::select(options.clone()).boxed();
    }
    let types: Vec<String> = match map.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ if map.contains_key("properties") => vec!["object".to_owned()],
        _ => vec!["string".to_owned()],
    };
    let kinds: Vec<BoxedStrategy<Value>> = types
        .iter()
        .map(|t| one_type(t, map, root, depth))
        .collect();
    Union::new(kinds).boxed()
}

fn one_type(t: &str, map: &Map<String, Value>, root: &Value, depth: u32) -> BoxedStrategy<Value> {
    match t {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => (0i64..1000).prop_map(Value::from).boxed(),
        "number" => (-1000.0f64..1000.0).prop_map(Value::from).boxed(),
        "array" => match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(items)), _) | (None, Some(Value::Array(items))) => items
                .iter()
                .map(|item| values(item, root, depth - 1))
                .collect::<Vec<_>>()
                .prop_map(Value::Array)
                .boxed(),
            (_, Some(items)) => proptest::collection::vec(values(items, root, depth - 1), 0..3)
                .prop_map(Value::Array)
                .boxed(),
            _ => Just(Value::Array(Vec::new())).boxed(),
        },
        "object" => {
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let properties: Vec<(String, bool, BoxedStrategy<Value>)> = map
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| {
                    properties
                        .iter()
                        .map(|(name, schema)| {
                            (
                                name.clone(),
                                required.contains(&name.as_str()),
                                values(schema, root, depth - 1),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            properties
                .into_iter()
                .map(|(name, required, strategy)| {
                    let present = if required {
                        Just(true).boxed()
                    } else {
                        any::<bool>().boxed()
                    };
                    (Just(name), present, strategy)
                })
                .collect::<Vec<_>>()
                .prop_map(|entries| {
                    Value::Object(
                        entries
                            .into_iter()
                            .filter(|(_, present, _)| *present)
                            .map(|(name, _, value)| (name, value))
                            .collect(),
                    )
                })
                .boxed()
        }
        _ => "[a-z]{0,4}".prop_map(Value::from).boxed(),
    }
}

/// `a` and `b` are the same JSON, numbers compared by value (`2` and `2.0` alike).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Reads `value` as a `T` and writes it back.
fn through<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// Reads `value` as the tool's input type and writes it back.
fn round_trip(tool: &str, value: &Value) -> Option<Result<Value, String>> {
    Some(match tool {
        "object_basics" => through::<strict::ObjectBasicsInput>(value),
        "enums" => through::<strict::EnumsInput>(value),
        "consts_and_nulls" => through::<strict::ConstsAndNullsInput>(value),
        "tuples" => through::<strict::TuplesInput>(value),
        "maps" => through::<strict::MapsInput>(value),
        "refs" => through::<strict::RefsInput>(value),
        "unions" => through::<strict::UnionsInput>(value),
        "all_of" => through::<strict::AllOfInput>(value),
        "open" => through::<strict::OpenInput>(value),
        "mixed_unions" => through::<strict::MixedUnionsInput>(value),
        "more_unions" => through::<strict::MoreUnionsInput>(value),
        _ => return None,
    })
}

/// Reads `value` as the tool's answer type and writes it back.
fn answer_round_trip(tool: &str, value: &Value) -> Option<Result<Value, String>> {
    Some(match tool {
        "object_basics" => through::<answers::ObjectBasicsAnswer>(value),
        "enums" => through::<answers::EnumsAnswer>(value),
        "consts_and_nulls" => through::<answers::ConstsAndNullsAnswer>(value),
        "tuples" => through::<answers::TuplesAnswer>(value),
        "maps" => through::<answers::MapsAnswer>(value),
        "refs" => through::<answers::RefsAnswer>(value),
        "unions" => through::<answers::UnionsAnswer>(value),
        "all_of" => through::<answers::AllOfAnswer>(value),
        "open" => through::<answers::OpenAnswer>(value),
        "mixed_unions" => through::<answers::MixedUnionsAnswer>(value),
        "more_unions" => through::<answers::MoreUnionsAnswer>(value),
        _ => return None,
    })
}

/// A fixture tool's name and a value drawn from its schema.
fn drawn() -> impl Strategy<Value = (String, Value)> {
    let tools: Vec<BoxedStrategy<(String, Value)>> = forms()
        .into_iter()
        .map(|definition| {
            let schema = Value::Object(definition.input_schema().clone());
            let name = definition.name().to_owned();
            values(&schema, &schema, 8)
                .prop_map(move |value| (name.clone(), value))
                .boxed()
        })
        .collect();
    Union::new(tools)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn values_of_each_schema_round_trip_through_its_type((tool, value) in drawn()) {
        let definitions = forms();
        let definition = definitions.iter().find(|d| d.name() == tool).unwrap();
        // Only what the schema accepts (a drawn value may miss a bound or a `oneOf`).
        prop_assume!(InputCheck::new(definition.input_schema()).check(&value).is_ok());
        let back = round_trip(&tool, &value).unwrap();
        let back = back.map_err(|e| TestCaseError::fail(format!("{tool}: {e}: {value}")))?;
        prop_assert!(same(&back, &value), "{tool}: {value} came back as {back}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn values_of_each_schema_round_trip_through_its_answer_type((tool, value) in drawn()) {
        let definitions = forms();
        let definition = definitions.iter().find(|d| d.name() == tool).unwrap();
        prop_assume!(InputCheck::new(definition.input_schema()).check(&value).is_ok());
        let back = answer_round_trip(&tool, &value).unwrap();
        let back = back.map_err(|e| TestCaseError::fail(format!("{tool}: {e}: {value}")))?;
        prop_assert!(same(&back, &value), "{tool}: {value} came back as {back}");
    }
}
