//! Fuzzes the emitter: arbitrary JSON Schemas through `toolkit_gen::emit` never panic, and the
//! code written always parses (`syn::parse_file`), one tool at a time and as a module.
//!
//! The input bytes are read two ways: as JSON text when they parse as a JSON object (so a corpus
//! of real schemas seeds it), otherwise as the choices of a small schema builder that only writes
//! the keywords the emitter reads (`type`, `properties`, `enum`, `oneOf`, `$ref`, ...), with
//! awkward names and values, so that most runs reach deep into the emitter.
//!
//! `cargo +nightly fuzz run emit -- -max_total_time=600`
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use toolkit_gen::emit::{EmitOptions, Strictness, input_types, module};
use toolkit_runtime::ToolDefinition;

/// Property names, enum values and tool names the emitter must turn into Rust: keywords, digits,
/// punctuation, case clashes, non-ASCII, empties.
const NAMES: &[&str] = &[
    "id", "type", "self", "Self", "super", "crate", "r#type", "_", "__", "", " ", "0", "1st",
    "-", "+1", "-1", "a-b", "a_b", "aB", "AB", "ab", "A", "a", "ASC", "asc", "Asc", "x-mcp-header",
    "$ref", "StartTime<", "StartTime>", "ünï", "日本", "a.b", "a/b", "a b", "fn", "async", "await",
    "dyn", "try", "union", "Option", "Some", "None", "String", "Value", "Vec", "Box", "extra",
    "Input", "GetPetInput", "null", "true", "false", "default", "serde", "std", "core",
];

const FORMATS: &[&str] = &[
    "int32", "int64", "uint8", "date-time", "uri", "uri-map", "ipv4", "ipv6", "binary", "byte",
    "float", "double", "uuid", "",
];

const TYPES: &[&str] = &[
    "object", "string", "integer", "number", "boolean", "array", "null", "bogus",
];

fn name(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 8)? {
        let s: String = u.arbitrary()?;
        return Ok(s.chars().take(12).collect());
    }
    Ok((*u.choose(NAMES)?).to_owned())
}

fn scalar(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0..=5)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => json!(u.arbitrary::<i64>()?),
        3 => json!(u.arbitrary::<f64>()?.clamp(-1e300, 1e300)),
        4 => json!(u.arbitrary::<u64>()?),
        _ => Value::String(name(u)?),
    })
}

fn ref_target(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=6)? {
        0 => "#".to_owned(),
        1 => format!("#/$defs/{}", name(u)?),
        2 => format!("#/definitions/{}", name(u)?),
        3 => format!("#/properties/{}", name(u)?),
        4 => format!("#/properties/{}/items", name(u)?),
        5 => "https://example.com/schema.json".to_owned(),
        _ => name(u)?,
    })
}

fn schemas(u: &mut Unstructured<'_>, depth: u32) -> Result<Vec<Value>> {
    let count = u.int_in_range(0..=4)?;
    (0..count).map(|_| schema(u, depth + 1)).collect()
}

fn named_schemas(u: &mut Unstructured<'_>, depth: u32) -> Result<Map<String, Value>> {
    let count = u.int_in_range(0..=5)?;
    let mut map = Map::new();
    for _ in 0..count {
        map.insert(name(u)?, schema(u, depth + 1)?);
    }
    Ok(map)
}

/// One schema: a bool now and then, otherwise an object with a handful of keywords.
fn schema(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    if depth > 6 || u.is_empty() {
        return Ok(json!({ "type": *u.choose(TYPES)? }));
    }
    if u.ratio(1, 16)? {
        return Ok(Value::Bool(u.arbitrary()?));
    }
    let mut object = Map::new();
    let keywords = u.int_in_range(0..=5)?;
    for _ in 0..keywords {
        let (key, value) = match u.int_in_range(0..=24)? {
            0 | 1 => ("type", Value::String((*u.choose(TYPES)?).to_owned())),
            2 => {
                let count = u.int_in_range(1..=3)?;
                let types: Result<Vec<Value>> = (0..count)
                    .map(|_| Ok(Value::String((*u.choose(TYPES)?).to_owned())))
                    .collect();
                ("type", Value::Array(types?))
            }
            3 | 4 => ("properties", Value::Object(named_schemas(u, depth)?)),
            5 => {
                let count = u.int_in_range(0..=3)?;
                let required: Result<Vec<Value>> =
                    (0..count).map(|_| Ok(Value::String(name(u)?))).collect();
                ("required", Value::Array(required?))
            }
            6 => {
                let count = u.int_in_range(0..=5)?;
                let values: Result<Vec<Value>> = (0..count).map(|_| scalar(u)).collect();
                ("enum", Value::Array(values?))
            }
            7 => ("const", scalar(u)?),
            8 => ("oneOf", Value::Array(schemas(u, depth)?)),
            9 => ("anyOf", Value::Array(schemas(u, depth)?)),
            10 => ("allOf", Value::Array(schemas(u, depth)?)),
            11 => ("items", schema(u, depth + 1)?),
            12 => ("prefixItems", Value::Array(schemas(u, depth)?)),
            13 => ("items", Value::Array(schemas(u, depth)?)),
            14 => ("$ref", Value::String(ref_target(u)?)),
            15 => ("$defs", Value::Object(named_schemas(u, depth)?)),
            16 => ("definitions", Value::Object(named_schemas(u, depth)?)),
            17 => (
                "additionalProperties",
                if u.arbitrary()? {
                    Value::Bool(u.arbitrary()?)
                } else {
                    schema(u, depth + 1)?
                },
            ),
            18 => ("nullable", Value::Bool(u.arbitrary()?)),
            19 => ("format", Value::String((*u.choose(FORMATS)?).to_owned())),
            20 => ("description", Value::String(u.arbitrary()?)),
            21 => ("not", schema(u, depth + 1)?),
            22 => (
                "discriminator",
                json!({ "propertyName": name(u)?, "mapping": { name(u)?: ref_target(u)? } }),
            ),
            23 => ("patternProperties", Value::Object(named_schemas(u, depth)?)),
            _ => ("default", scalar(u)?),
        };
        object.insert(key.to_owned(), value);
    }
    Ok(Value::Object(object))
}

/// The schema and the options the input stands for.
fn input(data: &[u8]) -> Option<(Value, EmitOptions, String)> {
    if data.first() == Some(&b'{') {
        let value: Value = serde_json::from_slice(data).ok()?;
        return Some((value, EmitOptions::default(), "tool".to_owned()));
    }
    let mut u = Unstructured::new(data);
    let strictness = if u.arbitrary().ok()? {
        Strictness::Strict
    } else {
        Strictness::FollowSchema
    };
    let tool = name(&mut u).ok()?;
    let mut root = schema(&mut u, 0).ok()?;
    // Most tool inputs are objects: root most of the generated ones there.
    if let Value::Object(object) = &mut root {
        if u.ratio(3, 4).unwrap_or(false) {
            object.insert("type".into(), json!("object"));
        }
    }
    let options = EmitOptions {
        strictness,
        ..EmitOptions::default()
    };
    Some((root, options, tool))
}

fuzz_target!(|data: &[u8]| {
    let Some((schema, options, tool)) = input(data) else {
        return;
    };
    let emitted = input_types(&tool, &schema, &options);
    if let Err(error) = syn::parse_file(&emitted.code) {
        panic!("the code for {schema} does not parse: {error}\n{}", emitted.code);
    }
    for untyped in &emitted.untyped {
        assert!(
            !untyped.reason.contains("does not parse"),
            "the emitter reported its own code unparsable for {schema}: {untyped}"
        );
    }
    // The same schema twice in a module (type names must stay apart), under two tool names.
    if let Value::Object(input_schema) = schema {
        let definitions: Vec<ToolDefinition> = [tool.as_str(), "tool_2"]
            .into_iter()
            .filter_map(|name| ToolDefinition::new(name, input_schema.clone()).ok())
            .collect();
        let emitted = module("fuzz.json", &definitions, &options);
        if let Err(error) = syn::parse_file(&emitted.code) {
            panic!("the module does not parse: {error}\n{}", emitted.code);
        }
        assert_eq!(emitted.tools.len(), definitions.len());
    }
});
